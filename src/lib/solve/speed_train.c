/* SPDX-License-Identifier: Apache-2.0 */
/* How fast a model trains on a card (issue 24, docs/FORMULAS.md F-SPD-15): 6 x params FLOPs
 * per token (+ the recomputed forward under checkpointing; adapters skip the weight
 * gradients), the optimizer step at memory bandwidth, ZeRO/FSDP traffic on the card's link,
 * and what offload or paging moves over PCIe, per step of batch x seq tokens per card. */
#include "internal.h"

#include <string.h>

/* F-SPD-14: the share of the dense bf16 tensor rate a training step's matmuls reach, one for
 * every card; calibrated on the 4 public torchtune rows of 2 cards (bench/accuracy-speed-kinds.py;
 * few). Still high for an MFU: the A6000 LoRA row alone needs 0.94 of the datasheet's rate
 * (bench/README.md). */
#ifndef ETA_TRAIN
#define ETA_TRAIN 0.88
#endif
/* F-SPD-15: the share of the memory bandwidth a memory-bound pass reaches (the optimizer
 * step, 4-bit dequantization): the LLM decode's server efficiency (F-SPD-04, issue 23). */
#define ETA_BW_PASS 0.90
/* F-SPD-15: bytes per parameter of one NF4 dequantization pass: read 0.5 (4-bit) + write 2 +
 * read 2 (bf16) (bitsandbytes/torchao dequantize before the matmul). */
#define NF4_PASS_BYTES 4.5

static double comp_bytes(const struct vf_estimate *e, const char *name, int dev_host)
{
    double b = 0;
    for (size_t i = 0; i < e->n_components; i++) {
        const struct vf_component *c = &e->components[i];
        if (strcmp(c->name, name))
            continue;
        if (dev_host < 0 || (dev_host == 1) == (c->device == VF_DEV_HOST))
            b += (double)c->bytes;
    }
    return b;
}

/* FLOPs per trained token: forward 2 x active params + attention 4 x layers x heads x
 * head_dim x seq / 2 (causal); backward twice that for full training, once (the activation
 * gradients only) for adapters; one more forward under full recomputation. The input
 * embedding is a row lookup, not a matmul: its vocab x hidden parameters do no FLOPs unless
 * the output head shares them (tied embeddings). */
static double flops_per_token(const struct vf_model *m, const struct vf_train_opts *t, double seq)
{
    double p = (double)(m->params_active ? m->params_active : m->params);
    double embed = (double)m->vocab * (double)m->hidden;
    if (!m->tied_embeddings && embed < p)
        p -= embed;
    double fwd = 2.0 * p + 4.0 * m->n_layers * (double)m->n_heads * m->head_dim * seq / 2.0;
    bool adapters = t->method == VF_TRAIN_LORA || t->method == VF_TRAIN_QLORA;
    double mult = adapters ? 2.0 : 3.0;
    if (t->grad_checkpointing == VF_GC_FULL || t->grad_checkpointing == VF_GC_OFFLOAD)
        mult += 1.0;
    return fwd * mult;
}

/* Bytes over the card's link per step: ZeRO-3/FSDP full shard gathers the 16-bit weights
 * twice and reduce-scatters the gradients (3 x 2 B x params); data parallel or ZeRO-1/2
 * all-reduce the gradients (2 x 2 B x trainable), a ring's (n - 1) / n of it each. */
static double comm_bytes(const struct vf_model *m, const struct vf_estimate *e, double n)
{
    if (n < 2)
        return 0;
    const struct vf_train_opts *t = &e->train;
    bool shard = t->zero == VF_ZERO_3 || t->fsdp == VF_FSDP_FULL_SHARD ||
                 t->fsdp == VF_FSDP_HYBRID_SHARD ||
                 (t->zero == VF_ZERO_AUTO && t->fsdp == VF_FSDP_NONE);
    double ring = (n - 1) / n;
    if (shard)
        return 3.0 * 2.0 * (double)m->params * ring;
    return 2.0 * 2.0 * (double)e->trainable_params * ring;
}

/* Seconds per step that offload and paging add (F-SPD-15): DeepSpeed's optimizer offload
 * sends the 16-bit gradients out and the updated weights back (4 B per trainable param) and
 * runs the step on the host's memory (its state bytes read and written); parameter offload
 * also gathers the weights over PCIe in forward and backward (2 x 2 B x params); a paged
 * optimizer moves the states that do not fit the card out and back each step. */
static double offload_step(const struct vf_model *m, const struct vf_estimate *e,
                           const struct vf_workload *w, double pcie, double host)
{
    const struct vf_train_opts *t = &e->train;
    double s = 0, states_host = comp_bytes(e, "optimizer_states", 1);
    if (t->offload == VF_OFFLOAD_OPTIMIZER || t->offload == VF_OFFLOAD_PARAMS)
        s += 4.0 * (double)e->trainable_params / pcie + 2.0 * states_host / host;
    if (t->offload == VF_OFFLOAD_PARAMS)
        s += 2.0 * 2.0 * (double)m->params / pcie;
    if (t->optimizer == VF_OPT_PAGED_ADAMW8BIT && w->usable_bytes &&
        w->usable_bytes != VF_UNKNOWN) {
        double over = (double)e->total_bytes + states_host - (double)w->usable_bytes;
        if (over > 0)
            s += 2.0 * (over < states_host ? over : states_host) / pcie;
    }
    return s;
}

void vf__speed_train(const struct vf_gpu_spec *g, const struct vf_model *m,
                     const struct vf_estimate *e, const struct vf_workload *w, uint32_t n,
                     struct vf_job_speed *out)
{
    memset(out, 0, sizeof *out);
    /* the 16-bit rate at the clock the card holds under its power limit (F-SPD-07) */
    double rate = (g->tflops_bf16 > 0 ? g->tflops_bf16 : g->tflops_fp16 / 2.0) * vf__power_share(g);
    if (rate <= 0 || !g->bandwidth_gbps || !m->params || m->pipeline) {
        out->why = m->pipeline  ? "a denoiser's training speed is not modelled"
                   : rate <= 0  ? "the card's 16-bit tensor throughput is unknown"
                   : !m->params ? "the model's size is unknown"
                                : "the card's memory bandwidth is unknown";
        return;
    }
    const struct vf_train_opts *t = &e->train;
    double cards = n ? n : 1;
    double seq = e->ctx_tokens ? (double)e->ctx_tokens : 2048.0;
    double tokens = (t->batch ? t->batch : 1) * seq; /* per card and step */
    out->eta = ETA_TRAIN;
    out->prec = "bf16";
    out->compute_s = tokens * flops_per_token(m, t, seq) / (rate * 1e12 * out->eta);
    double bw = g->bandwidth_gbps * 1e9 * ETA_BW_PASS;
    /* the optimizer step reads and writes the states on the card, reads the gradients and
     * writes the weights it trains */
    double step = (2.0 * comp_bytes(e, "optimizer_states", 0) + comp_bytes(e, "gradients", 0) +
                   2.0 * comp_bytes(e, "master_weights", 0) + 2.0 * (double)e->trainable_params) /
                  bw;
    if (t->method == VF_TRAIN_QLORA) {
        double passes = t->grad_checkpointing == VF_GC_FULL ? 3.0 : 2.0;
        step += passes * NF4_PASS_BYTES * (double)m->params / bw;
    }
    double link = (g->nvlink_gbps > 0 ? g->nvlink_gbps / 2.0 : vf__pcie_gbps(g)) * 1e9;
    out->comm_s = comm_bytes(m, e, cards) / link;
    double pcie = vf__pcie_gbps(g) * 1e9 * VF_PCIE_TLP;
    out->offload_s = offload_step(m, e, w, pcie, vf__host_bw(w) * 1e9);
    /* FSDP overlaps its gathers with compute: the step waits for the longer of the two */
    double base = (out->compute_s > out->comm_s ? out->compute_s : out->comm_s) + step;
    double sec = base + out->offload_s;
    out->tokens_per_s = tokens / sec;
    out->slowdown = sec / base;
    /* per result: a million tokens over all the cards */
    double scale = 1e6 / (tokens * cards);
    out->seconds = sec * scale;
    out->compute_s *= scale;
    out->comm_s *= scale;
    out->offload_s *= scale;
    out->lo = out->seconds * VF_SPEED_RANGE_LO;
    out->hi = out->seconds * VF_SPEED_RANGE_HI;
    out->result = "1M tokens";
    out->known = true;
}
