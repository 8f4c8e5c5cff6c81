/* SPDX-License-Identifier: Apache-2.0 */
/* How fast an LLM runs on a card (issue 23, docs/FORMULAS.md F-SPD-01..05, 07): a roofline of
 * memory bandwidth and tensor throughput, with efficiencies held constant across cards. */
#include "internal.h"

#include <math.h>
#include <string.h>

/* F-SPD-04: the efficiencies, one per engine class, never per card or row. See FORMULAS.md
 * for the rows each rests on (bench/accuracy-speed.py, calibration half). */
#ifndef ETA_BW_GGUF
#define ETA_BW_GGUF 0.92
#endif
#ifndef ETA_C_GGUF
#define ETA_C_GGUF 0.16
#endif
/* llama.cpp's 16-bit prefill runs cuBLAS GEMMs, not its own MMQ kernels: a kernel family of
 * its own, calibrated apart on the same half of the cards. */
#ifndef ETA_C_GGUF16
#define ETA_C_GGUF16 0.45
#endif
#ifndef ETA_BW_SERVER
#define ETA_BW_SERVER 0.90
#endif
#ifndef ETA_C_SERVER
#define ETA_C_SERVER 0.70
#endif
/* F-SPD-01: llama.cpp's matrix-vector kernels (ggml-cuda mmvq.cu / dmmv.cu, b2899: one warp
 * per row, each thread one vec_dot of a few 4-byte loads per loop step) keep few bytes in
 * flight per SM, so their rate is bounded per SM and clock cycle as well as by the memory:
 * bytes per SM-cycle, calibrated. */
#ifndef K_SM_GGUF
#define K_SM_GGUF 5.75
#endif
/* The same bound of the 16-bit weights' kernel (b2899: dequantize_mul_mat_vec on F16 rows, a
 * loop of its own with its own loads per thread), calibrated apart on the same half. */
#ifndef K_SM_GGUF16
#define K_SM_GGUF16 6.35
#endif
/* F-SPD-01: llama.cpp's fixed cost per layer and generated token (kernel launches and
 * synchronisation, which do not shrink with a faster card), seconds; and per hand-over
 * between two cards of a layer split (--split-mode layer: the hidden state is copied and the
 * next card waits for it). */
#ifndef TAU_LAYER_GGUF
#define TAU_LAYER_GGUF 50e-6
#endif
#ifndef TAU_SPLIT_GGUF
#define TAU_SPLIT_GGUF 400e-6
#endif
/* F-SPD-07: the power density (board power per SM and GHz of boost clock) at which a card holds
 * its boost clock under tensor load: the RTX 4090's, 450 W / (128 SMs x 2.52 GHz) (gpus.tsv),
 * the least dense card whose prefill rows reach the same share of its datasheet rate as the
 * denser ones (8B F16 pp512: 45 % on the RTX 4090 and on the A40). */
#define POWER_DENSITY_FULL (450.0 / (128 * 2.52))

/* F-SPD-05: the range, from the leave-one-GPU-out error quantiles (10 %, 90 %). */
#define RANGE_LO 0.80
#define RANGE_HI 1.20

/* GB/s of the card's PCIe slot (also solve/speed_*.c, issue 24): one PCIe lane per generation (gen
 * 3: ~0.985 GB/s, doubling each generation). */
double vf__pcie_gbps(const struct vf_gpu_spec *g)
{
    if (!g->pcie_gen || !g->pcie_lanes)
        return 16.0; /* gen 3 x16, the slowest slot a data-centre card sits in */
    double lane = 0.985;
    for (int k = 3; k < g->pcie_gen && k < 9; k++)
        lane *= 2;
    for (int k = g->pcie_gen; k < 3; k++)
        lane /= 2;
    return lane * g->pcie_lanes;
}

/* F-SPD-07: the share of its boost clock an NVIDIA card holds under a sustained tensor load.
 * Below POWER_DENSITY_FULL watts per SM-GHz the board's power limit binds first, and the clock
 * drops until the power fits: dynamic power goes as C x V^2 x f with the voltage following the
 * clock, so f ~ P^(1/3). 1 where the card's power, SMs or clock is unknown, and for other
 * vendors (a CU is not an SM; no anchor). */
double vf__power_share(const struct vf_gpu_spec *g)
{
    if (!g->tdp_w || !g->sms || !g->boost_mhz || !g->vendor || strcmp(g->vendor, "NVIDIA"))
        return 1.0;
    double density = g->tdp_w / (g->sms * g->boost_mhz / 1000.0);
    return vf__cbrt_share(density / POWER_DENSITY_FULL);
}

static bool has(const char *w, const char *s)
{
    return w && strstr(w, s);
}

/* Are the weights stored at 16 bits or more (no quantized kernel)? */
static bool sixteen_bits(const char *w)
{
    return !strcmp(w, "F16") || !strcmp(w, "BF16") || !strcmp(w, "f16") || !strcmp(w, "fp16") ||
           !strcmp(w, "bf16") || !strcmp(w, "F32") || !strcmp(w, "fp32");
}

/* The tensor precision the matmuls run at and its dense rate (TFLOPS). */
static double tensor_rate(const struct vf_gpu_spec *g, const struct vf_speed_in *in,
                          const char **prec)
{
    const char *w = in->weights ? in->weights : "";
    bool sixteen = sixteen_bits(w);
    if (in->gguf && !sixteen) { /* llama.cpp's quantized matmuls: int8 MMQ */
        *prec = "int8";
        return g->tflops_int8;
    }
    if (in->gguf) { /* cuBLAS fp16 GEMM, FP16 accumulate */
        *prec = "fp16";
        return g->tflops_fp16;
    }
    if ((has(w, "fp4") || has(w, "FP4")) && g->tflops_fp4 > 0) {
        *prec = "fp4";
        return g->tflops_fp4;
    }
    if ((has(w, "fp4") || has(w, "FP4") || has(w, "fp8") || has(w, "FP8")) && g->tflops_fp8 > 0) {
        *prec = "fp8";
        return g->tflops_fp8;
    }
    if (!strcmp(w, "int8") && g->tflops_int8 > 0) {
        *prec = "int8";
        return g->tflops_int8;
    }
    *prec = "bf16"; /* 16-bit, and weight-only 4-bit (AWQ, GPTQ) dequantized to 16 bits */
    return g->tflops_bf16;
}

struct roof {
    const struct vf_speed_in *in;
    double bw, flops, link; /* bytes/s, FLOP/s (achievable, all cards), link bytes/s */
    uint32_t n;
    double fixed; /* llama.cpp's fixed seconds per token (layers, hand-overs) */
    double pcie;  /* bytes/s of the card's PCIe slot: llama.cpp's layer-split hand-overs */
};

/* Share of the weights one decode step reads with b sequences: MoE experts are read when
 * some sequence routes to them, 1 - (1 - k/E)^b of them (F-SPD-01). */
static double weight_share(const struct vf_speed_in *in, double b)
{
    if (in->n_experts <= in->n_experts_used || !in->n_experts_used ||
        in->params <= in->params_active)
        return 1.0;
    double e = in->n_experts, k = in->n_experts_used;
    double pe = (double)(in->params - in->params_active) / (e - k);
    double shared = (double)in->params - e * pe;
    double touched = 1.0 - vf__powi(1.0 - k / e, (uint64_t)b);
    return (shared + e * pe * touched) / (double)in->params;
}

/* Attention FLOPs of one token at a context of l tokens: QK^T and AV, 2 x 2 per element. */
static double attn_flops(const struct vf_speed_in *in, double l)
{
    return 4.0 * in->n_layers * (double)in->n_heads * in->head_dim * l;
}

/* Seconds of one decode step of b sequences at a context of l (F-SPD-01); *fixed gets the
 * part that does not depend on the card's bandwidth or compute. */
static double step_s(const struct roof *r, double b, double l, bool *compute_bound, double *fixed)
{
    const struct vf_speed_in *in = r->in;
    double bytes =
        (double)in->weights_bytes * weight_share(in, b) + b * (double)in->kv_bytes_per_token * l;
    double mem = bytes / r->bw;
    double cmp = b * (2.0 * (double)in->params_active + attn_flops(in, l)) / r->flops;
    if (compute_bound)
        *compute_bound = cmp > mem;
    double comm = r->fixed;
    if (r->n > 1 && !in->gguf) /* two all-reduces per layer of b x hidden 16-bit values, ring */
        comm = 2.0 * in->n_layers * 2.0 * (r->n - 1) / r->n * b * in->hidden * 2.0 / r->link;
    if (fixed)
        *fixed = comm;
    return (mem > cmp ? mem : cmp) + comm;
}

/* Seconds to prefill b prompts of p tokens: compute bound, never faster than one read of
 * the weights (F-SPD-02). llama.cpp's layer split hands the batch's hidden state on at each
 * boundary between two cards: ggml keeps it in F32, so b x p x hidden x 4 bytes cross the PCIe
 * slot, after the same synchronisation as a decode hand-over (TAU_SPLIT_GGUF). */
static double prefill_s(const struct roof *r, double b, double p)
{
    const struct vf_speed_in *in = r->in;
    double flops = b * (2.0 * (double)in->params_active * p + attn_flops(in, p / 2.0) * p);
    double cmp = flops / r->flops;
    double mem = (double)in->weights_bytes * weight_share(in, b * p) / r->bw;
    double hand = 0;
    if (in->gguf && in->gpus > 1 && r->pcie > 0)
        hand = (in->gpus - 1) * (TAU_SPLIT_GGUF + b * p * (double)in->hidden * 4.0 / r->pcie);
    return (cmp > mem ? cmp : mem) + hand;
}

void vf_speed_llm(const struct vf_gpu_spec *g, const struct vf_speed_in *in, struct vf_speed *out)
{
    memset(out, 0, sizeof *out);
    double rate = tensor_rate(g, in, &out->prec);
    if (!g->bandwidth_gbps || rate <= 0 || !in->params_active || !in->weights_bytes) {
        out->why = !g->bandwidth_gbps ? "the card's memory bandwidth is unknown"
                   : rate <= 0        ? "the card's tensor throughput at this precision is unknown"
                                      : "the model's size is unknown";
        return;
    }
    out->eta_bw = in->gguf ? ETA_BW_GGUF : ETA_BW_SERVER;
    out->eta_compute = !in->gguf                    ? ETA_C_SERVER
                       : !strcmp(out->prec, "fp16") ? ETA_C_GGUF16
                                                    : ETA_C_GGUF;
    /* llama.cpp splits by layers (--split-mode layer): a token passes the cards one after
     * the other, so one sequence runs at one card's speed (F-SPD-01). */
    struct roof r = {in, 0, 0, 0, in->gpus && !in->gguf ? in->gpus : 1, 0, 0};
    r.bw = g->bandwidth_gbps * 1e9 * out->eta_bw * r.n;
    if (in->gguf) {
        double k = sixteen_bits(in->weights ? in->weights : "") ? K_SM_GGUF16 : K_SM_GGUF;
        double sm_bw = k * g->sms * g->boost_mhz * 1e6;
        if (sm_bw > 0 && sm_bw < r.bw) /* the kernels' per-SM bound binds (F-SPD-01) */
            r.bw = sm_bw;
        r.fixed =
            in->n_layers * TAU_LAYER_GGUF + (in->gpus > 1 ? in->gpus - 1 : 0) * TAU_SPLIT_GGUF;
    }
    out->bw_gbps = r.bw / 1e9;
    out->power_share = vf__power_share(g);
    r.flops = rate * 1e12 * out->eta_compute * out->power_share * r.n;
    r.pcie = vf__pcie_gbps(g) * 1e9;
    r.link = g->nvlink_gbps > 0 ? g->nvlink_gbps / 2.0 * 1e9 : r.pcie;
    double users = in->users ? (double)in->users : 1.0;
    double b = in->max_users && (double)in->max_users < users ? (double)in->max_users : users;
    if (b < 1)
        b = 1;
    double p = in->in_tokens ? (double)in->in_tokens : 1.0;
    double o = in->out_tokens ? (double)in->out_tokens : 1.0;
    double l = p + o / 2.0; /* the mean context while the answer is written */
    out->batch = (uint64_t)b;
    out->gpus = in->gpus ? in->gpus : 1;
    out->known = true;
    out->decode_tps = 1.0 / step_s(&r, b, l, &out->compute_bound, &out->decode_fixed_s);
    out->prefill_tps = p / prefill_s(&r, 1, p);
    out->serving_tps = b * o / (prefill_s(&r, b, p) + o * step_s(&r, b, l, NULL, NULL));
    out->decode_lo = out->decode_tps * RANGE_LO;
    out->decode_hi = out->decode_tps * RANGE_HI;
    out->prefill_lo = out->prefill_tps * RANGE_LO;
    out->prefill_hi = out->prefill_tps * RANGE_HI;
    out->serving_lo = out->serving_tps * RANGE_LO;
    out->serving_hi = out->serving_tps * RANGE_HI;
}

void vf__speed_of(const struct vf_model *m, const struct vf_workload *w, const char *engine,
                  const struct vf_quant *q, uint64_t weights_bytes, uint64_t kv_per_token,
                  uint64_t ctx_tokens, const struct vf_gpu_spec *g, struct vf_fit *f)
{
    memset(&f->speed, 0, sizeof f->speed);
    /* short of the asked users, the engine batches the sequences that fit (F-SPD-03) */
    if (!f->fits && (f->max_users == 0 || f->max_users == VF_UNKNOWN)) {
        f->speed.why = "does not fit this card (offload speed is not modelled yet)";
        return;
    }
    uint64_t ctx = ctx_tokens ? ctx_tokens : 4096;
    struct vf_speed_in in = {
        .params = m->params,
        .params_active = m->params_active ? m->params_active : m->params,
        .n_experts = m->n_experts,
        .n_experts_used = m->n_experts_used,
        .n_layers = m->n_layers,
        .n_heads = m->n_heads,
        .head_dim = m->head_dim,
        .hidden = m->hidden,
        .weights_bytes = weights_bytes,
        .kv_bytes_per_token = kv_per_token,
        .weights = q->name,
        .gguf = q->kind == VF_QK_GGUF_FTYPE ||
                (engine && (!strcmp(engine, "llama.cpp") || !strcmp(engine, "ollama"))),
        .gpus = f->count,
        .users = w->users,
        .max_users = f->max_users == VF_UNKNOWN ? 0 : f->max_users,
        .in_tokens = w->in_tokens ? w->in_tokens : (ctx < 4096 ? ctx : 4096),
        .out_tokens = w->out_tokens ? w->out_tokens : 512,
    };
    vf_speed_llm(g, &in, &f->speed);
}
