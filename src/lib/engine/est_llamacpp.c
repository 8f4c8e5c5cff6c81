/* SPDX-License-Identifier: Apache-2.0 */
/*
 * est_llamacpp.c - llama.cpp (llama-server / llama-cli) inference memory, buffer by buffer
 * and device by device, as llama.cpp itself allocates it: model buffers (layers placed by
 * -ngl and -ts, token embeddings on the CPU), KV buffers (cells padded to 256, sliding
 * layers capped, per stream), compute buffers (the graph reserve, calibrated on the CPU
 * oracle), the logits output buffer and the CUDA context. Fixes solve -c, -ngl, the KV
 * type, --n-cpu-moe and what --fit would choose. Formulas F-LCPP-01..12 in
 * docs/FORMULAS.md.
 */
#include "est_llamacpp.h"
#include "engine/terms.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LCPP_VERSION "as in node-llama-cpp 3.21.1 (2026, with KV rotation)"
#define MIB          (1ULL << 20)
/* F-LCPP-03: llama.cpp pads the context and each stream's cells to 256 */
#define LCPP_PAD 256
/* F-LCPP-11: --fit's default margin per device and smallest context (--fit-ctx) */
#define LCPP_FIT_MARGIN (1024ULL << 20)
#define LCPP_FIT_CTX    4096
/* F-LCPP-13: ggml-cuda offloads an op whose weight is in host memory when its batch is at least
 * this many tokens (ggml_backend_cuda_device_offload_op; GGML_OP_OFFLOAD_MIN_BATCH) */
#define LCPP_OFFLOAD_MIN_BATCH 32
/* F-LCPP-14: the first build that offloads the output layer first (PR 18148, merged 2025-12-17;
 * b7045 is of 2025-11-13 and b7551 of 2025-12-27: the number is interpolated between them) */
#define LCPP_B_OUTPUT_FIRST 7440
/* F-LCPP-14: the first build with a KV stream per sequence (PR 14363 "high-throughput mode"):
 * b5913, the build whose seq_to_stream assert llama.cpp issue 14847 reports as absent from
 * b5912. Before it every slot attended the one shared (unified) cache. */
#define LCPP_B_STREAMS 5913
#define STR_(x)        #x
#define STR(x)         STR_(x)

static uint64_t pad_up(uint64_t v, uint64_t p)
{
    return vf__sat_mul(vf__div_ceil(v, p), p);
}

/* Layer split: one layer per GPU at least. */
static bool lcpp_can_split(const struct vf_model *m, const struct vf_workload *w, uint32_t n,
                           const char **why)
{
    (void)w;
    *why = NULL;
    if (n <= 1 || (n <= m->n_layers && n <= VF_LCPP_MAX_GPUS))
        return true;
    *why = n > VF_LCPP_MAX_GPUS ? "vramfit models at most 16 GPUs for llama.cpp"
                                : "llama.cpp splits by layers: more GPUs than layers";
    return false;
}

/* The layer kind of l (full attention when the model says nothing). */
static enum vf_layer_kind kind_of(const struct vf_model *m, uint32_t l)
{
    return m->layer_kind ? (enum vf_layer_kind)m->layer_kind[l] : VF_LAYER_ATTN_FULL;
}

/* F-LCPP-04: bytes one KV cell of layer l takes: K rows of n_embd_k_gqa elements and V
 * rows of n_embd_v_gqa, each a ggml row of its type (blocks rounded up). MLA caches the
 * latent + rope key only (the V of the graph is a view of it). */
static uint64_t cell_bytes(const struct vf_model *m, const struct vf_lcpp_cfg *c, uint32_t l)
{
    enum vf_layer_kind k = kind_of(m, l);
    if (k != VF_LAYER_ATTN_FULL && k != VF_LAYER_ATTN_SLIDING)
        return 0;
    if (m->attn == VF_ATTN_MLA)
        return vf_dtype_bytes(c->tk, (uint64_t)m->kv_lora_rank + m->qk_rope_dim);
    uint64_t heads = m->layer_kv_heads ? m->layer_kv_heads[l] : m->n_kv_heads;
    if (!heads)
        heads = m->n_heads;
    uint64_t hk = m->head_dim, hv = m->head_dim_v ? m->head_dim_v : m->head_dim;
    if (k == VF_LAYER_ATTN_SLIDING && m->head_dim_swa) { /* issue 21: key_length_swa */
        hk = m->head_dim_swa;
        hv = m->head_dim_v_swa ? m->head_dim_v_swa : hk;
    }
    return vf__sat_add(vf_dtype_bytes(c->tk, heads * hk), vf_dtype_bytes(c->tv, heads * hv));
}

/* F-LCPP-05: the fixed state of a recurrent layer, f32, for every sequence. */
static uint64_t state_bytes(const struct vf_model *m, const struct vf_lcpp_cfg *c, uint32_t l)
{
    if (kind_of(m, l) != VF_LAYER_RECURRENT || !m->recurrent_state_bytes)
        return 0;
    uint32_t n_rec = 0;
    for (uint32_t i = 0; i < m->n_layers; i++)
        n_rec += kind_of(m, i) == VF_LAYER_RECURRENT;
    if (!n_rec) /* cannot be: layer l is one */
        return 0;
    /* recurrent_state_bytes is at 16 bits for all recurrent layers: llama.cpp keeps f32 */
    return vf__sat_mul(vf__div_ceil(vf__sat_mul(m->recurrent_state_bytes, 2), n_rec), c->n_seq);
}

static bool is_expert(enum vf_tclass cls)
{
    return cls == VF_T_FFN_GATE_EXP || cls == VF_T_FFN_UP_EXP || cls == VF_T_FFN_DOWN_EXP;
}

/* Routed-expert bytes of layer l (what --cpu-moe / --n-cpu-moe keep on the CPU). */
static uint64_t expert_bytes(const struct vf_model *m, const struct vf_quant *q, uint32_t l)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < m->n_groups; i++) {
        const struct vf_tgroup *g = &m->groups[i];
        if (g->layer == (int32_t)l && is_expert(g->cls))
            sum = vf__sat_add(sum, vf__quant_group_bytes(m, q, g));
    }
    return sum;
}

/* Bytes of the non-layer groups of class cls (token_embd, output, norms). */
static uint64_t global_bytes(const struct vf_model *m, const struct vf_quant *q, enum vf_tclass cls)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < m->n_groups; i++)
        if (m->groups[i].layer < 0 && m->groups[i].cls == cls)
            sum = vf__sat_add(sum, vf__quant_group_bytes(m, q, &m->groups[i]));
    return sum;
}

/* F-LCPP-02: the device of layer il (il == n_layers: the output layer), -1 = the CPU.
 * llama.cpp offloads the last ngl of the n_layers+1 layers (before PR 18148: the last ngl
 * repeating layers, the output layer only when ngl > n_layers); layer il goes to the first GPU
 * whose cumulative -ts fraction exceeds (il - i_gpu_start) / offloaded. */
static int layer_device(const struct vf_model *m, const struct vf_lcpp_cfg *c, uint32_t il)
{
    if (c->n_gpus == 0 || c->ngl <= 0)
        return -1;
    int64_t n = (int64_t)m->n_layers;
    int64_t first = c->output_last ? n - c->ngl : n + 1 - c->ngl; /* F-LCPP-14 */
    int64_t start = first > 0 ? first : 0;
    int64_t act = c->ngl < n + 1 ? c->ngl : n + 1;
    if ((int64_t)il < start || (int64_t)il - start >= act)
        return -1;
    double total = 0, cum = 0;
    for (uint32_t g = 0; g < c->n_gpus; g++)
        total += c->split[g];
    double pos = (double)((int64_t)il - start) / (double)act;
    for (uint32_t g = 0; g < c->n_gpus; g++) {
        cum += total > 0 ? c->split[g] / total : 1.0 / c->n_gpus;
        if (cum > pos)
            return (int)g;
    }
    return (int)c->n_gpus - 1;
}

/* The FFN width one token passes through (dense, or the experts used + shared). */
static uint64_t ffn_width(const struct vf_model *m)
{
    uint64_t ffn = m->intermediate;
    if (m->n_experts) {
        uint64_t moe =
            (uint64_t)m->moe_intermediate * m->n_experts_used +
            (uint64_t)(m->shared_intermediate ? m->shared_intermediate : m->moe_intermediate) *
                m->n_shared_experts;
        if (moe > ffn)
            ffn = moe;
    }
    return ffn;
}

/*
 * F-LCPP-06: the compute buffer of one device, from the graph reserve of one ubatch of
 * nt tokens (calibrated on the CPU oracle, docs/FORMULAS.md, llama.cpp "Accuracy").
 * Per-token f32 rows: E = n_embd, Ekv = n_embd_k_gqa, F = the FFN width, and the
 * attention scores KQ = n_kv x nt x n_head x 4 (FA off) with the mask n_kv x nt (f32 without
 * FA, f16 with it). The allocator's high-water mark is the largest of three points:
 *   FA off: attention  mask + 5E + 2Ekv + KQ
 *           FFN        mask + 3E + 2Ekv + 3F
 *           output     mask + 5E + 2Ekv + logits (the logits land where KQ was)
 *   FA on:  FFN        mask + 4E + 3F;  output  2E + logits
 *           with a rotated quantized cache (F-LCPP-12): FFN mask + 3E + 3F; output 3E + logits
 * plus the graph inputs (positions, ids, out_ids): 20 B (FA off) or 28 B (FA on) per token,
 * and the rotation matrices (F-LCPP-12).
 * A GPU keeps one E less (the token embeddings are looked up on the CPU).
 */
struct graph_terms {
    uint64_t attn, ffn, out, inputs, e, mask;
};

/*
 * F-LCPP-12: llama.cpp's Hadamard rotation of a quantized KV cache (PR 21038, on by default
 * since April 2026; LLAMA_ATTN_ROT_DISABLE turns it off). llama_kv_cache sets attn_rot_k when
 * the K type is quantized and n_embd_head_k % 64 == 0 (attn_rot_v likewise for V). The graph
 * then multiplies Q and K by an nrot x nrot f32 input attn_inp_k_rot before the cache write
 * and attention (nrot = the largest power of two dividing the K head size), V by a 64 x 64
 * attn_inp_v_rot before the write and the attention output by it again. These are graph nodes
 * (ggml_mul_mat), not kernel internals: every backend, CUDA included, allocates them. Returns
 * the bytes of the two rotation matrices (0: no rotation).
 */
static uint64_t rot_input_bytes(const struct vf_model *m, const struct vf_lcpp_cfg *c)
{
    uint32_t be, bb;
    uint64_t bytes = 0;
    uint64_t hk = m->attn == VF_ATTN_MLA ? (uint64_t)m->kv_lora_rank + m->qk_rope_dim : m->head_dim;
    uint64_t hv = m->head_dim_v ? m->head_dim_v : m->head_dim;
    vf_dtype_block(c->tk, &be, &bb);
    if (be > 1 && hk && hk % 64 == 0) {
        uint64_t nrot = 64;
        while (hk % (nrot * 2) == 0)
            nrot *= 2;
        bytes = vf__sat_add(bytes, nrot * nrot * 4);
    }
    vf_dtype_block(c->tv, &be, &bb);
    if (be > 1 && hv && hv % 64 == 0 && m->attn != VF_ATTN_MLA)
        bytes = vf__sat_add(bytes, 64 * 64 * 4);
    return bytes;
}

static struct graph_terms graph_terms(const struct vf_model *m, const struct vf_lcpp_cfg *c,
                                      const struct vf_lcpp_plan *p)
{
    struct graph_terms t = {0};
    uint64_t nt = c->n_ubatch < p->n_ctx ? c->n_ubatch : p->n_ctx;
    uint64_t u = vf__sat_mul(nt, 4);
    uint64_t e = vf__sat_mul(m->hidden, u);
    uint64_t kv_heads = m->n_kv_heads ? m->n_kv_heads : m->n_heads;
    uint64_t ekv = m->attn == VF_ATTN_MLA
                       ? vf__sat_mul((uint64_t)m->kv_lora_rank + m->qk_rope_dim, u)
                       : vf__sat_mul(kv_heads * m->head_dim, u);
    uint64_t f = vf__sat_mul(ffn_width(m), u);
    uint64_t logits = vf__sat_mul(m->vocab, u);
    bool has_full = false, has_swa = false;
    for (uint32_t l = 0; l < m->n_layers; l++) {
        has_full |= kind_of(m, l) == VF_LAYER_ATTN_FULL;
        has_swa |= kind_of(m, l) == VF_LAYER_ATTN_SLIDING;
    }
    uint64_t n_kv = has_full ? p->cells : has_swa ? p->swa_cells : 0;
    uint64_t mask_cells = (has_full ? p->cells : 0) + (has_swa ? p->swa_cells : 0);
    uint64_t mask = vf__sat_mul(vf__sat_mul(mask_cells, nt), c->flash_attn ? 2 : 4);
    uint64_t kq = vf__sat_mul(vf__sat_mul(vf__sat_mul(n_kv, nt), m->n_heads), 4);
    uint64_t e5kv2 = vf__sat_add(vf__sat_mul(e, 5), vf__sat_mul(ekv, 2));
    if (!c->flash_attn) {
        t.attn = vf__sat_add(vf__sat_add(mask, e5kv2), kq);
        t.ffn = vf__sat_add(vf__sat_add(mask, vf__sat_mul(e, 3)),
                            vf__sat_add(vf__sat_mul(ekv, 2), vf__sat_mul(f, 3)));
        t.out = vf__sat_add(vf__sat_add(mask, e5kv2), logits);
        t.inputs = vf__sat_mul(nt, 20);
    } else {
        /* F-LCPP-12: the Q/K/V/output rotations of a quantized cache shift the residual
         * stream by one E: the FFN point keeps one E less, the logits land one E higher.
         * Oracle: q8_0/q4_0 at 4096..32768 cells exact to the byte at the FFN point, +44 KiB
         * (the inputs, freed by then) at the output point, on three synthetic models. */
        uint64_t rot = rot_input_bytes(m, c);
        t.attn = 0;
        t.ffn = vf__sat_add(vf__sat_add(mask, vf__sat_mul(e, rot ? 3 : 4)), vf__sat_mul(f, 3));
        t.out = vf__sat_add(vf__sat_mul(e, rot ? 3 : 2), logits);
        t.inputs = vf__sat_add(vf__sat_mul(nt, 28), rot);
    }
    t.e = e;
    t.mask = vf__sat_mul(vf__sat_mul(mask_cells, nt), 4); /* the f32 mask the CPU builds */
    return t;
}

/* F-LCPP-03/04: the context padded to 256 and split into streams (without --kv-unified each
 * of the n_seq streams gets n_ctx/n_seq cells, padded to 256 again), and the cells of full and
 * sliding layers per stream (sliding: n_swa x (n_seq when unified) + n_ubatch, padded).
 * VF_ERANGE when the context is over the limit. */
static enum vf_err plan_cells(const struct vf_model *m, const struct vf_lcpp_cfg *c,
                              struct vf_lcpp_plan *p, struct vf_error *err)
{
    uint64_t n_seq = c->n_seq ? c->n_seq : 1;
    p->n_ctx = pad_up(c->n_ctx ? c->n_ctx : 1, LCPP_PAD);
    if (c->kv_unified) {
        p->n_ctx_seq = p->n_ctx;
        p->n_stream = 1;
    } else {
        p->n_ctx_seq = pad_up(p->n_ctx / n_seq ? p->n_ctx / n_seq : 1, LCPP_PAD);
        p->n_ctx = vf__sat_mul(p->n_ctx_seq, n_seq);
        p->n_stream = n_seq;
    }
    if (p->n_ctx == VF_UNKNOWN || p->n_ctx > VF_MAX_CTX_TOKENS * 2)
        return vf__errf(err, VF_ERANGE, "llama.cpp: context of %llu tokens is over the limit",
                        (unsigned long long)c->n_ctx);
    p->cells = p->n_ctx_seq;
    p->swa_cells = p->cells;
    if (m->sliding_window && !c->swa_full) {
        uint64_t s = (uint64_t)m->sliding_window * (c->kv_unified ? n_seq : 1) + c->n_ubatch;
        p->swa_cells = pad_up(s < p->cells ? s : p->cells, LCPP_PAD);
    }
    return VF_OK;
}

/* F-LCPP-02/04/05: the model and KV buffers of each device. The CPU keeps token_embd and what
 * is not offloaded; the GPU that holds the output layer keeps output + output_norm (a copy of
 * token_embd when the embeddings are tied); each layer's KV cells and recurrent state stay
 * with its weights. VF_ERANGE when the weights are unknown or a sum overflows. */
static enum vf_err plan_buffers(const struct vf_model *m, const struct vf_lcpp_cfg *c,
                                struct vf_lcpp_plan *p, struct vf_error *err)
{
    const struct vf_quant *q = c->q;
    uint64_t total_w = vf_model_weight_bytes(m, q);
    if (total_w == VF_UNKNOWN)
        return vf__errf(err, VF_ERANGE, "llama.cpp: weights of '%s' unknown or overflow", m->id);
    uint64_t on_gpus = 0;
    for (uint32_t l = 0; l <= m->n_layers; l++) {
        int d = layer_device(m, c, l);
        uint64_t w, kvb = 0;
        if (l == m->n_layers) {
            w = vf__sat_add(global_bytes(m, q, VF_T_OUTPUT), global_bytes(m, q, VF_T_NORM));
            if (d >= 0) {
                p->output_on_gpu = true;
                if (!global_bytes(m, q, VF_T_OUTPUT)) /* tied: duplicated on the GPU */
                    total_w = vf__sat_add(total_w, global_bytes(m, q, VF_T_TOKEN_EMBD));
                w = vf__sat_add(
                    w, global_bytes(m, q, VF_T_OUTPUT) ? 0 : global_bytes(m, q, VF_T_TOKEN_EMBD));
            }
        } else {
            w = vf_model_layer_weight_bytes(m, q, (int32_t)l);
            uint64_t cells = kind_of(m, l) == VF_LAYER_ATTN_SLIDING ? p->swa_cells : p->cells;
            kvb = vf__sat_add(vf__sat_mul(vf__sat_mul(cell_bytes(m, c, l), cells), p->n_stream),
                              state_bytes(m, c, l));
            if (d >= 0 && l < c->n_cpu_moe)
                w -= expert_bytes(m, q, l) <= w ? expert_bytes(m, q, l) : w;
        }
        if (d < 0) {
            p->host_kv = vf__sat_add(p->host_kv, kvb);
            if (l < m->n_layers)
                p->layers_host++;
            continue;
        }
        p->model[d] = vf__sat_add(p->model[d], w);
        p->kv[d] = vf__sat_add(p->kv[d], kvb);
        on_gpus = vf__sat_add(on_gpus, w);
        if (l < m->n_layers)
            p->layers_gpu[d]++;
    }
    p->host_model = total_w > on_gpus ? total_w - on_gpus : 0;
    if (p->host_kv == VF_UNKNOWN || on_gpus == VF_UNKNOWN)
        return vf__errf(err, VF_ERANGE, "llama.cpp: buffer sizes overflow 64 bits");
    return VF_OK;
}

/*
 * F-LCPP-13: weights in host memory copied into a GPU's compute buffer. With a batch of at
 * least 32 tokens ggml-cuda takes the ops whose weights stay in host memory (the layers left on
 * the CPU by -ngl, the experts kept there by --n-cpu-moe / -ot, the output matrix when the output
 * layer is not offloaded): ggml_backend_sched copies the weight into the compute buffer of the
 * GPU that runs the op and starts a new split at each such weight, so one copy is live at a time.
 * copy[g]: the largest weight tensor a layer op on GPU g copies (the CPU's layers run on the
 * first GPU); *out_copy: the output matrix (token_embd when tied) when the output stays on the CPU.
 * A folded group of dense tensors counts one tensor's share; the routed experts of a layer are one
 * 3-D tensor per projection.
 */
static void host_copies(const struct vf_model *m, const struct vf_lcpp_cfg *c,
                        const struct vf_lcpp_plan *p, uint64_t *copy, uint64_t *out_copy)
{
    *out_copy = 0;
    for (size_t i = 0; i < m->n_groups; i++) {
        const struct vf_tgroup *gr = &m->groups[i];
        if (gr->layer < 0 || (uint32_t)gr->layer >= m->n_layers)
            continue;
        int d = layer_device(m, c, (uint32_t)gr->layer);
        bool exp = is_expert(gr->cls);
        if (d >= 0 && !(exp && (uint32_t)gr->layer < c->n_cpu_moe))
            continue;
        uint64_t b = vf__quant_group_bytes(m, c->q, gr);
        if (!exp && gr->n_tensors > 1)
            b /= gr->n_tensors;
        int g = d >= 0 ? d : 0;
        copy[g] = b > copy[g] ? b : copy[g];
    }
    if (!p->output_on_gpu) {
        *out_copy = global_bytes(m, c->q, VF_T_OUTPUT);
        if (!*out_copy)
            *out_copy = global_bytes(m, c->q, VF_T_TOKEN_EMBD);
    }
}

/* F-LCPP-06/13: the compute buffer of each device from the graph terms: a GPU with layers the
 * layer peak, the GPU with the output layer the output point too, one E less (the CPU looks
 * up the embeddings); the CPU its layers' or the output's peak, and with layers on a GPU the
 * embeddings and the mask it builds; each plus the graph inputs. With op offload (F-LCPP-13) the
 * first GPU runs the CPU's layers and output too, each point with the weight copy it needs, and
 * the CPU keeps the embeddings and the mask only. */
static void plan_compute(const struct vf_model *m, const struct vf_lcpp_cfg *c,
                         struct vf_lcpp_plan *p)
{
    struct graph_terms t = graph_terms(m, c, p);
    uint64_t layer_peak = t.attn > t.ffn ? t.attn : t.ffn;
    uint64_t copy[VF_LCPP_MAX_GPUS] = {0}, out_copy = 0;
    bool offload = c->n_gpus && c->n_ubatch >= LCPP_OFFLOAD_MIN_BATCH && !c->no_op_offload;
    if (offload)
        host_copies(m, c, p, copy, &out_copy);
    bool any_gpu_layer = false;
    for (uint32_t g = 0; g < c->n_gpus; g++) {
        bool host_ops = offload && g == 0 && (p->layers_host || !p->output_on_gpu);
        if (!p->layers_gpu[g] && !(p->output_on_gpu && g == c->n_gpus - 1) && !host_ops)
            continue;
        any_gpu_layer = true;
        uint64_t peak =
            p->layers_gpu[g] || (host_ops && p->layers_host) ? vf__sat_add(layer_peak, copy[g]) : 0;
        if (p->output_on_gpu && layer_device(m, c, m->n_layers) == (int)g)
            peak = peak > t.out ? peak : t.out;
        if (host_ops && !p->output_on_gpu && vf__sat_add(t.out, out_copy) > peak)
            peak = vf__sat_add(t.out, out_copy);
        peak = peak > t.e ? peak - t.e : peak;
        p->compute[g] = vf__sat_add(peak, t.inputs);
    }
    uint64_t hp = p->layers_host && !offload ? layer_peak : 0;
    if (!p->output_on_gpu && !offload)
        hp = hp > t.out ? hp : t.out;
    if (any_gpu_layer) /* the CPU looks up the embeddings and builds the mask */
        hp = hp > vf__sat_add(t.e, t.mask) ? hp : vf__sat_add(t.e, t.mask);
    p->host_compute = vf__sat_add(hp, t.inputs);
}

enum vf_err vf__lcpp_plan(const struct vf_model *m, const struct vf_lcpp_cfg *c,
                          struct vf_lcpp_plan *p, struct vf_error *err)
{
    enum vf_err rc;
    memset(p, 0, sizeof *p);
    if (c->n_gpus > VF_LCPP_MAX_GPUS)
        return vf__errf(err, VF_ERANGE, "llama.cpp: at most %d GPUs", VF_LCPP_MAX_GPUS);
    if (!m->n_layers || m->n_layers > VF_MAX_LAYERS)
        return vf__errf(err, VF_EUNSUPPORTED, "llama.cpp: '%s' has no layers", m->id);
    uint32_t bt, bv;
    vf_dtype_block(c->tv, &bt, &bv);
    /* F-LCPP-01: llama_init_from_model refuses a quantized V without flash attention (-fa
     * auto turns it on) and, for MLA models, K and V of different types (its messages) */
    if (bt > 1 && !c->flash_attn)
        return vf__errf(err, VF_EINVAL,
                        "llama.cpp: quantized V cache requires flash_attn to be enabled (-ctv %s "
                        "needs -fa on or auto)",
                        vf_dtype_name(c->tv));
    if (m->attn == VF_ATTN_MLA && c->tk != c->tv)
        return vf__errf(err, VF_EINVAL,
                        "llama.cpp: model does not support different K (%s) and V (%s) cache types",
                        vf_dtype_name(c->tk), vf_dtype_name(c->tv));
    if ((rc = plan_cells(m, c, p, err)) || (rc = plan_buffers(m, c, p, err)))
        return rc;
    plan_compute(m, c, p);
    /* F-LCPP-07: the output buffer holds the logits of one token per sequence (f32), in
     * host memory */
    p->host_output = vf__term_logits(c->n_seq ? c->n_seq : 1, m->vocab, 4);
    return VF_OK;
}

uint64_t vf__lcpp_gpu_peak(const struct vf_lcpp_cfg *c, const struct vf_lcpp_plan *p)
{
    uint64_t best = 0;
    for (uint32_t g = 0; g < c->n_gpus; g++) {
        uint64_t s = vf__sat_add(vf__sat_add(p->model[g], p->kv[g]),
                                 vf__sat_add(p->compute[g], p->output[g]));
        s = vf__sat_add(s, VF_LCPP_CUDA_OVERHEAD);
        if (s > best)
            best = s;
    }
    return best;
}

uint64_t vf__lcpp_layer_bytes(const struct vf_model *m, const struct vf_lcpp_cfg *c,
                              const struct vf_lcpp_plan *p, uint32_t l)
{
    const struct vf_quant *q = c->q;
    if (l > m->n_layers)
        return 0;
    if (l == m->n_layers) /* the output layer as a GPU holds it (tied: the embeddings again) */
        return vf__sat_add(
            vf__sat_add(global_bytes(m, q, VF_T_OUTPUT), global_bytes(m, q, VF_T_NORM)),
            global_bytes(m, q, VF_T_OUTPUT) ? 0 : global_bytes(m, q, VF_T_TOKEN_EMBD));
    uint64_t cells = kind_of(m, l) == VF_LAYER_ATTN_SLIDING ? p->swa_cells : p->cells;
    uint64_t kvb = vf__sat_add(vf__sat_mul(vf__sat_mul(cell_bytes(m, c, l), cells), p->n_stream),
                               state_bytes(m, c, l));
    return vf__sat_add(vf_model_layer_weight_bytes(m, q, (int32_t)l), kvb);
}

void vf__lcpp_spill(const struct vf_model *m, const struct vf_lcpp_cfg *c,
                    const struct vf_lcpp_plan *p, struct vf_estimate *e)
{
    uint32_t all = m->n_layers + 1;
    uint32_t gpu = c->ngl < 0 ? 0 : c->ngl > (int64_t)all ? all : (uint32_t)c->ngl;
    /* the token embeddings stay in host memory with every layer offloaded: not a spill */
    if (!c->n_gpus || !gpu || (gpu == all && !c->n_cpu_moe))
        return;
    e->spill.runs = true;
    e->spill.gpu_layers = gpu;
    e->spill.cpu_layers = all - gpu;
    e->spill.host_bytes = vf__sat_add(p->host_model, p->host_kv);
    e->spill.host_weight_bytes = p->host_model;
    for (uint32_t g = 0; g < c->n_gpus && g < VF_LCPP_MAX_GPUS; g++)
        e->spill.gpu_weight_bytes = vf__sat_add(e->spill.gpu_weight_bytes, p->model[g]);
}

/* ------------------------------------------------------------------ flags */

static enum vf_err parse_u64(const char *flag, const char *v, uint64_t lo, uint64_t hi,
                             uint64_t *out, struct vf_error *err)
{
    char *end;
    if (!v || !*v)
        return vf__errf(err, VF_EINVAL, "llama.cpp: %s needs a number", flag);
    unsigned long long x = strtoull(v, &end, 10);
    if (*end || v[0] == '-' || x < lo || x > hi)
        return vf__errf(err, VF_EINVAL, "llama.cpp: %s '%s': expected a number from %llu to %llu",
                        flag, v, (unsigned long long)lo, (unsigned long long)hi);
    *out = x;
    return VF_OK;
}

/* F-LCPP-14: the build asked (--engine llama.cpp@bNNNN); without one the newest rules. Builds
 * before LCPP_B_OUTPUT_FIRST offload the output layer last. */
static enum vf_err read_version(const struct vf_workload *w, struct vf_lcpp_cfg *c,
                                struct vf_error *err)
{
    const char *ver = w->engine_version; /* --engine llama.cpp@bNNNN, --engine-version */
    if (!ver)
        return VF_OK;
    const char *v = ver[0] == 'b' || ver[0] == 'B' ? ver + 1 : ver;
    char *end;
    unsigned long b = strtoul(v, &end, 10);
    if (end == v || *end || b == 0 || b > 1000000)
        return vf__errf(err, VF_EINVAL,
                        "llama.cpp@%s: expected a build number such as llama.cpp@b6895", ver);
    c->build = (uint32_t)b;
    c->output_last = b < LCPP_B_OUTPUT_FIRST;
    c->shared_kv = b < LCPP_B_STREAMS;
    return VF_OK;
}

/* F-LCPP-11: --fit on|off, --fit-target MiB (the margin per device), --fit-ctx N. */
static enum vf_err read_fit(const struct vf_engine_opts *o, struct vf_lcpp_cfg *c,
                            struct vf_error *err)
{
    const char *v;
    enum vf_err rc;
    uint64_t x;
    c->fit_margin = LCPP_FIT_MARGIN;
    c->fit_ctx = LCPP_FIT_CTX;
    if ((v = vf_engine_opt(o, "--fit"))) {
        if (!*v || !strcmp(v, "on") || !strcmp(v, "1"))
            c->fit = true;
        else if (strcmp(v, "off") && strcmp(v, "0"))
            return vf__errf(err, VF_EINVAL, "llama.cpp: --fit '%s': expected on or off", v);
    }
    if ((v = vf_engine_opt(o, "--fit-target"))) {
        if ((rc = parse_u64("--fit-target", v, 0, 1u << 24, &x, err)))
            return rc;
        c->fit_margin = x << 20;
    }
    if ((v = vf_engine_opt(o, "--fit-ctx"))) {
        if ((rc = parse_u64("--fit-ctx", v, 1, VF_MAX_CTX_TOKENS, &x, err)))
            return rc;
        c->fit_ctx = x;
    }
    return VF_OK;
}

/* F-LCPP-01: the workload and the flags into llama.cpp's settings; *ngl_auto when -ngl was
 * "auto" (then --fit would decide). */
static enum vf_err read_cfg(const struct vf_model *m, const struct vf_workload *w,
                            struct vf_lcpp_cfg *c, bool *ngl_auto, struct vf_error *err)
{
    const struct vf_engine_opts *o = &w->opts;
    const char *v;
    uint64_t x;
    enum vf_err rc;
    memset(c, 0, sizeof *c);
    *ngl_auto = false;
    if ((rc = read_version(w, c, err)))
        return rc;
    c->n_gpus = w->gpus ? w->gpus : 1;
    if (vf_engine_opt(o, "--cpu"))
        c->n_gpus = 0;
    c->n_seq = w->users ? w->users : 1;
    uint64_t ctx = vf__term_ctx(m, w);
    if (ctx > VF_MAX_CTX_TOKENS || c->n_seq > VF_MAX_USERS)
        return vf__errf(err, VF_ERANGE, "llama.cpp: context or sequences over the limit");
    c->n_ctx = ctx * c->n_seq;
    c->q = vf__term_storage(w);
    c->tk = c->tv = w->kv_dtype == VF_DT_DEFAULT ? VF_DT_F16 : w->kv_dtype;
    if (w->kv_dtype_v != VF_DT_DEFAULT) /* -ctv apart from -ctk */
        c->tv = w->kv_dtype_v;
    c->n_batch = 2048;
    c->n_ubatch = 512;
    if ((v = vf_engine_opt(o, "-b")) && (rc = parse_u64("-b", v, 1, 1u << 20, &c->n_batch, err)))
        return rc;
    if ((v = vf_engine_opt(o, "-ub")) && (rc = parse_u64("-ub", v, 1, 1u << 20, &c->n_ubatch, err)))
        return rc;
    if (c->n_ubatch > c->n_batch)
        c->n_ubatch = c->n_batch; /* llama.cpp: n_ubatch = min(n_batch, n_ubatch) */
    c->flash_attn = true;         /* auto: on where the backend supports it */
    if ((v = vf_engine_opt(o, "-fa"))) {
        if (!strcmp(v, "off") || !strcmp(v, "0") || !strcmp(v, "false"))
            c->flash_attn = false;
        else if (strcmp(v, "on") && strcmp(v, "auto") && strcmp(v, "1") && strcmp(v, "true") &&
                 strcmp(v, ""))
            return vf__errf(err, VF_EINVAL, "llama.cpp: -fa '%s': expected on, off or auto", v);
    }
    c->kv_unified = vf_engine_opt(o, "--kv-unified") != NULL || c->shared_kv;
    c->swa_full = vf_engine_opt(o, "--swa-full") != NULL;
    c->no_mmap = vf_engine_opt(o, "--no-mmap") != NULL;
    c->no_op_offload = vf_engine_opt(o, "--no-op-offload") != NULL;
    if (vf_engine_opt(o, "--cpu-moe"))
        c->n_cpu_moe = m->n_layers;
    if ((v = vf_engine_opt(o, "--n-cpu-moe"))) {
        if ((rc = parse_u64("--n-cpu-moe", v, 0, m->n_layers, &x, err)))
            return rc;
        c->n_cpu_moe = (uint32_t)x;
    }
    c->ngl = (int64_t)m->n_layers + 1;
    if ((rc = read_fit(o, c, err)))
        return rc;
    if ((v = vf_engine_opt(o, "-ngl"))) {
        if (!strcmp(v, "auto") || !strcmp(v, "-1") || !strcmp(v, "all")) {
            *ngl_auto = !strcmp(v, "auto");
            c->fit = c->fit || *ngl_auto; /* -ngl auto: --fit decides */
        } else {
            if ((rc = parse_u64("-ngl", v, 0, 1u << 20, &x, err)))
                return rc;
            c->ngl = x > (uint64_t)m->n_layers + 1 ? (int64_t)m->n_layers + 1 : (int64_t)x;
        }
    }
    if ((v = vf_engine_opt(o, "-ts"))) {
        uint32_t n = 0;
        const char *s = v;
        while (*s) {
            char *end;
            double d = strtod(s, &end);
            if (end == s || d < 0 || n == VF_LCPP_MAX_GPUS)
                return vf__errf(err, VF_EINVAL,
                                "llama.cpp: -ts '%s': expected weights per GPU such as 3,1", v);
            c->split[n++] = d;
            s = *end == ',' || *end == '/' ? end + 1 : end;
            if (*end && *end != ',' && *end != '/')
                return vf__errf(err, VF_EINVAL, "llama.cpp: -ts '%s': expected 3,1", v);
        }
        if (c->n_gpus && n > c->n_gpus)
            return vf__errf(err, VF_EINVAL, "llama.cpp: -ts gives %u weights for %u GPUs", n,
                            c->n_gpus);
        c->split_ts = true;
    }
    /* F-LCPP-15 (issue 21): without -ts, llama_model::load_tensors splits the layers in
     * proportion to each device's free memory (src/llama-model.cpp, "default split, by free
     * memory"), read once the CUDA context exists: a --gpu A,B mix's usable bytes less it */
    for (uint32_t g = 0; c->n_gpus && g < w->n_mix && g < VF_LCPP_MAX_GPUS; g++) {
        c->mix[c->n_mix++] = w->mix_usable[g];
        if (!c->split_ts)
            c->split[g] = w->mix_usable[g] > VF_LCPP_CUDA_OVERHEAD
                              ? (double)(w->mix_usable[g] - VF_LCPP_CUDA_OVERHEAD)
                              : 0;
    }
    return VF_OK;
}

/* ------------------------------------------------------------------ estimate */

static const char *dev_name(char *buf, size_t cap, int g)
{
    snprintf(buf, cap, "CUDA%d", g);
    return buf;
}

static char *mib(char *buf, size_t cap, uint64_t b)
{
    snprintf(buf, cap, "%.2f", (double)b / (double)MIB);
    return buf;
}

/* The GPU peak of cfg (VF_UNKNOWN when llama.cpp refuses it). */
static uint64_t peak_of(const struct vf_model *m, const struct vf_lcpp_cfg *c)
{
    struct vf_lcpp_plan p;
    if (vf__lcpp_plan(m, c, &p, NULL))
        return VF_UNKNOWN;
    return vf__lcpp_gpu_peak(c, &p);
}

/* F-FIT-08 for llama.cpp's own choices (--fit, the fixes): the need of cfg against a budget.
 * One kind of card: the peak. A --gpu A,B mix: the smallest card plus the largest shortfall
 * over the devices, each against its own usable bytes, so need <= usable - margin exactly when
 * every device keeps the margin free. */
static uint64_t need_of(const struct vf_model *m, const struct vf_lcpp_cfg *c)
{
    struct vf_lcpp_plan p;
    if (!c->n_mix)
        return peak_of(m, c);
    if (vf__lcpp_plan(m, c, &p, NULL))
        return VF_UNKNOWN;
    __int128 worst = INT64_MIN;
    uint64_t least = UINT64_MAX;
    for (uint32_t g = 0; g < c->n_mix && g < c->n_gpus; g++) {
        uint64_t d =
            vf__sat_add(vf__sat_add(p.model[g], p.kv[g]), vf__sat_add(p.compute[g], p.output[g]));
        d = vf__sat_add(d, VF_LCPP_CUDA_OVERHEAD);
        __int128 x = (__int128)d - c->mix[g];
        worst = x > worst ? x : worst;
        least = c->mix[g] < least ? c->mix[g] : least;
    }
    __int128 t = (__int128)least + worst;
    return t < 0 ? 0 : t >= (__int128)VF_UNKNOWN ? VF_UNKNOWN - 1 : (uint64_t)t;
}

struct solve_ctx {
    const struct vf_model *m;
    struct vf_lcpp_cfg c;
    uint64_t budget;
    int what; /* 0: ctx per sequence, 1: ngl, 2: n_cpu_moe (monotone decreasing: inverted) */
};

static bool solve_pred(uint64_t v, void *ud)
{
    struct solve_ctx *s = ud;
    struct vf_lcpp_cfg c = s->c;
    if (s->what == 0)
        c.n_ctx = v * (c.n_seq ? c.n_seq : 1);
    else if (s->what == 1)
        c.ngl = (int64_t)v;
    else
        c.n_cpu_moe = s->m->n_layers - (uint32_t)v;
    return need_of(s->m, &c) <= s->budget;
}

/* What --fit chose (F-LCPP-11). */
struct fit_choice {
    int step;  /* 0 nothing changed, 1 context lowered, 2 experts to the CPU, 3 -ngl */
    bool fits; /* the choice keeps the margin */
    struct vf_lcpp_cfg c;
};

/*
 * F-LCPP-11: what llama_params_fit chooses for one GPU of `usable` bytes with `margin` bytes
 * kept free: the settings as given when they fit; else a context lowered (only when -c was not
 * given, not below --fit-ctx, a multiple of 256 x streams); else, at that context, all layers
 * stay on the GPU and the routed experts of as few layers as needed go to host memory (MoE;
 * llama.cpp overflows the last layers, the same bytes as --n-cpu-moe for uniform layers); else
 * fewer layers (-ngl).
 */
static struct fit_choice fit_choose(const struct vf_model *m, const struct vf_lcpp_cfg *c,
                                    uint64_t usable, uint64_t margin, uint64_t fit_ctx,
                                    bool ctx_fixed)
{
    struct fit_choice f = {.c = *c};
    uint64_t n_seq = c->n_seq ? c->n_seq : 1;
    struct solve_ctx s = {.m = m, .c = *c, .budget = usable > margin ? usable - margin : 0};
    if (need_of(m, c) <= s.budget) {
        f.fits = true;
        return f;
    }
    uint64_t asked = c->n_ctx / n_seq, lo = fit_ctx / n_seq ? fit_ctx / n_seq : 1;
    if (!ctx_fixed && lo < asked) {
        f.step = 1;
        s.what = 0;
        uint64_t ft = vf_bisect(lo, asked, solve_pred, &s);
        if (ft >= lo && ft != (uint64_t)-1) {
            uint64_t tot = ft * n_seq / (LCPP_PAD * n_seq) * (LCPP_PAD * n_seq);
            f.c.n_ctx = tot >= lo * n_seq ? tot : lo * n_seq;
            f.fits = true;
            return f;
        }
        f.c.n_ctx = lo * n_seq;
    }
    s.c = f.c;
    if (m->n_experts && f.c.n_cpu_moe < m->n_layers) {
        s.what = 2;
        uint64_t keep = vf_bisect(0, m->n_layers, solve_pred, &s);
        if (keep != (uint64_t)-1 && keep <= m->n_layers) {
            f.step = 2;
            f.c.n_cpu_moe = m->n_layers - (uint32_t)keep;
            f.fits = true;
            return f;
        }
        s.c.n_cpu_moe = f.c.n_cpu_moe = m->n_layers;
    }
    s.what = 1;
    uint64_t nl = vf_bisect(0, (uint64_t)m->n_layers + 1, solve_pred, &s);
    f.step = 3;
    f.c.ngl = nl == (uint64_t)-1 ? 0 : (int64_t)nl;
    f.fits = nl != (uint64_t)-1;
    return f;
}

/* F-LCPP-11: the fix of --fit on (1024 MiB margin) for a card of `usable` bytes. */
static void fit_fix(struct vf_arena *a, const struct vf_model *m, const struct vf_lcpp_cfg *c,
                    uint64_t usable, struct vf_estimate *e)
{
    if (usable <= LCPP_FIT_MARGIN)
        return;
    struct fit_choice f = fit_choose(m, c, usable, LCPP_FIT_MARGIN, LCPP_FIT_CTX, false);
    if (f.step == 0)
        vf__fix(a, e, "--fit on: keeps -c %llu and every layer on the GPU (1024 MiB margin)",
                (unsigned long long)c->n_ctx);
    else if (f.step == 1)
        vf__fix(a, e, "--fit on: would choose -c %llu with every layer on the GPU",
                (unsigned long long)f.c.n_ctx);
    else if (f.step == 2)
        vf__fix(a, e,
                "--fit on: would choose -c %llu with every layer on the GPU and the routed "
                "experts of %u layers in host memory (runs with spill)",
                (unsigned long long)f.c.n_ctx, f.c.n_cpu_moe);
    else
        vf__fix(a, e, "--fit on: would choose -c %llu -ngl %llu (1024 MiB margin per GPU)",
                (unsigned long long)f.c.n_ctx, (unsigned long long)f.c.ngl);
}

/* F-LCPP-10/11: the flags that make it fit a card of `usable` bytes. */
static void add_fixes(struct vf_arena *a, const struct vf_model *m, const struct vf_lcpp_cfg *c,
                      uint64_t usable, struct vf_estimate *e)
{
    char b1[32];
    struct solve_ctx s = {.m = m, .c = *c, .budget = usable};
    uint64_t n_seq = c->n_seq ? c->n_seq : 1;
    uint64_t max_ctx =
        m->max_ctx_tokens && m->max_ctx_tokens != VF_UNKNOWN ? m->max_ctx_tokens : 131072;
    bool fits = need_of(m, c) <= usable;

    /* largest -c */
    s.what = 0;
    uint64_t t = vf_bisect(1, max_ctx, solve_pred, &s);
    uint64_t tot = t * n_seq / LCPP_PAD * LCPP_PAD;
    if (t >= 1)
        vf__fix(a, e, "-c %llu%s: the largest context that fits (%s per sequence)",
                (unsigned long long)(tot ? tot : t * n_seq),
                n_seq > 1 ? " (over the -np slots)" : "", vf_format_tokens(b1, sizeof b1, t));
    else
        vf__fix(a, e, "-c: no context fits with every layer on the GPU");
    if (fits && t >= 1 && m->n_experts == 0)
        goto fit;

    /* largest -ngl */
    s.what = 1;
    s.c = *c;
    uint64_t n = vf_bisect(0, (uint64_t)m->n_layers + 1, solve_pred, &s);
    if (n != (uint64_t)-1 && n <= m->n_layers && (int64_t)n < c->ngl) {
        struct vf_lcpp_cfg cc = *c;
        cc.ngl = (int64_t)n;
        struct vf_lcpp_plan p;
        if (!vf__lcpp_plan(m, &cc, &p, NULL))
            vf__fix(
                a, e, "-ngl %llu: %u of %u layers on the CPU (%s in host memory, slower)",
                (unsigned long long)n, p.layers_host, m->n_layers,
                vf_format_bytes(b1, sizeof b1,
                                vf__sat_add(vf__sat_add(p.host_model, p.host_kv), p.host_compute),
                                VF_FMT_IEC));
    }
    /* an 8-bit KV cache (needs flash attention for V) */
    uint32_t be, bb;
    vf_dtype_block(c->tk, &be, &bb);
    if (be == 1) {
        struct vf_lcpp_cfg cc = *c;
        cc.tk = cc.tv = VF_DT_Q8_0;
        cc.flash_attn = true;
        uint64_t pk = peak_of(m, &cc), nd = need_of(m, &cc);
        if (pk != VF_UNKNOWN)
            vf__fix(a, e, "-ctk q8_0 -ctv q8_0 -fa on: %s on the %sGPU (%s)",
                    vf_format_bytes(b1, sizeof b1, pk, VF_FMT_IEC), c->n_mix ? "most loaded " : "",
                    nd <= usable ? "fits" : "still short");
    }
    /* experts of the first N layers on the CPU */
    if (m->n_experts && c->n_cpu_moe < m->n_layers) {
        s.what = 2;
        s.c = *c;
        uint64_t keep = vf_bisect(0, m->n_layers, solve_pred, &s); /* layers keeping experts */
        if (keep != (uint64_t)-1 && keep <= m->n_layers) {
            uint32_t ncm = m->n_layers - (uint32_t)keep;
            if (ncm > c->n_cpu_moe)
                vf__fix(a, e, "--n-cpu-moe %u: the routed experts of %u layers in host memory", ncm,
                        ncm);
        }
    }
fit:
    fit_fix(a, m, c, usable, e);
}

/* The assumptions of where the layers and experts went (F-LCPP-02). */
static void lcpp_assume_layers(struct vf_arena *a, const struct vf_model *m,
                               const struct vf_lcpp_cfg *c, const struct vf_lcpp_plan *p,
                               bool ngl_auto, struct vf_estimate *e)
{
    if (c->n_gpus == 0)
        vf__assume(a, e, "--cpu: every buffer on the CPU backend, no GPU memory");
    else if (c->ngl <= (int64_t)m->n_layers)
        vf__assume(a, e,
                   "-ngl %lld: %u layers on the CPU, the last %lld of the %u layers on the GPU "
                   "(the output layer counts as one)",
                   (long long)c->ngl, p->layers_host, (long long)c->ngl, m->n_layers + 1);
    else
        vf__assume(a, e,
                   "every layer and the output layer on the GPU%s (-ngl %s); "
                   "token embeddings stay on the CPU",
                   c->n_gpus > 1 ? "s" : "", ngl_auto ? "auto" : "all");
    if (c->n_gpus > 1)
        vf__assume(a, e,
                   "layers split over %u GPUs %s (-sm layer); pipeline-parallel copies of "
                   "the compute buffer not modelled",
                   c->n_gpus,
                   c->split_ts       ? "by -ts"
                   : c->split[0] > 0 ? "in proportion to each one's free memory (llama.cpp's "
                                       "default without -ts, F-LCPP-15)"
                                     : "evenly");
    if (c->n_cpu_moe)
        vf__assume(a, e, "routed experts of the first %u layers on the CPU (--n-cpu-moe)",
                   c->n_cpu_moe);
    if (m->attn == VF_ATTN_MLA)
        vf__assume(a, e, "MLA: the cache holds the latent + rope key only");
}

/* The assumptions of an estimate: the settings llama.cpp resolved (F-LCPP-01..05), where the
 * layers went, the runtime overhead (F-LCPP-09) and the memory-mapped weights. */
static void lcpp_assume(struct vf_arena *a, const struct vf_model *m, const struct vf_workload *w,
                        const struct vf_lcpp_cfg *c, const struct vf_lcpp_plan *p, bool ngl_auto,
                        struct vf_estimate *e)
{
    char b1[32];
    vf__assume(a, e,
               "engine llama.cpp %s: model, KV, compute and output buffers per device as "
               "llama.cpp allocates them (F-LCPP-01..09)",
               LCPP_VERSION);
    if (c->build)
        vf__assume(a, e, "llama.cpp@b%u: %s%s", c->build,
                   c->output_last ? "-ngl offloads the output layer after every repeating layer "
                                    "(before PR 18148, F-LCPP-14)"
                                  : "the output layer offloaded first (PR 18148 on, F-LCPP-14)",
                   c->shared_kv ? "; one KV cache shared by every slot (before PR 14363)" : "");
    bool known = m->max_ctx_tokens && m->max_ctx_tokens != VF_UNKNOWN;
    if (!w->ctx_tokens && c->n_ctx / c->n_seq == vf__term_ctx(m, w))
        vf__assume(a, e, "context %s tokens per sequence: %s (-c)",
                   vf_format_tokens(b1, sizeof b1, c->n_ctx / c->n_seq),
                   known ? "the model's training context" : "the training context is unknown");
    if (p->n_ctx != c->n_ctx)
        vf__assume(a, e, "-c %llu padded to %llu (256 cells per stream)",
                   (unsigned long long)c->n_ctx, (unsigned long long)p->n_ctx);
    vf__assume(a, e, "-fa %s, -b %llu -ub %llu, K %s / V %s, %llu KV stream%s of %llu cells",
               c->flash_attn ? "on" : "off", (unsigned long long)c->n_batch,
               (unsigned long long)c->n_ubatch, vf_dtype_name(c->tk), vf_dtype_name(c->tv),
               (unsigned long long)p->n_stream, p->n_stream > 1 ? "s" : "",
               (unsigned long long)p->cells);
    if (m->sliding_window && p->swa_cells < p->cells)
        vf__assume(a, e,
                   "sliding-window layers keep %llu cells (window x streams + ubatch; "
                   "--swa-full for all)",
                   (unsigned long long)p->swa_cells);
    lcpp_assume_layers(a, m, c, p, ngl_auto, e);
    if (c->n_gpus)
        vf__assume(a, e,
                   "runtime overhead %s per GPU (CUDA context; llama.cpp's breakdown "
                   "calls it unaccounted)",
                   vf_format_bytes(b1, sizeof b1, VF_LCPP_CUDA_OVERHEAD, VF_FMT_IEC));
    if (c->n_gpus && !c->no_mmap && p->host_model)
        vf__assume(a, e, "the CPU's share of the weights is memory-mapped (--no-mmap to read it)");
}

uint64_t vf__lcpp_components(struct vf_estimate *e, const struct vf_lcpp_cfg *c,
                             const struct vf_lcpp_plan *p, uint64_t overhead, const char *note)
{
    static const char *const host_name[] = {"model_buffer", "kv_buffer", "compute_buffer",
                                            "output_buffer"};
    uint64_t host_bytes[] = {p->host_model, p->host_kv, p->host_compute, p->host_output};
    uint64_t host = 0;
    struct vf_component *x;
    for (uint32_t g = 0; g < c->n_gpus; g++) {
        if ((x = vf__add_component(e, "model_buffer", p->model[g], NULL, NULL)))
            x->device = (int)g;
        if ((x = vf__add_component(e, "kv_buffer", p->kv[g], NULL, NULL)))
            x->device = (int)g;
        if ((x = vf__add_component(e, "compute_buffer", p->compute[g], NULL, NULL)))
            x->device = (int)g;
    }
    if (c->n_gpus)
        vf__add_component(e, "runtime_overhead", overhead, NULL, note);
    for (size_t i = 0; i < 4; i++) {
        if (!host_bytes[i] && i != 3 && c->n_gpus)
            continue;
        if ((x = vf__add_component(e, host_name[i], host_bytes[i], NULL, NULL)))
            x->device = VF_DEV_HOST;
        host = vf__sat_add(host, host_bytes[i]);
    }
    return host;
}

/* The engine results (JSON "llamacpp"). */
static void lcpp_extras(const struct vf_model *m, const struct vf_lcpp_cfg *c,
                        const struct vf_lcpp_plan *p, struct vf_estimate *e)
{
    e->extra_name = "llamacpp";
    vf__extra_u64(e, "n_ctx", p->n_ctx);
    vf__extra_u64(e, "n_ctx_seq", p->n_ctx_seq);
    vf__extra_u64(e, "n_ubatch", c->n_ubatch);
    vf__extra_u64(e, "n_gpu_layers", c->n_gpus ? (uint64_t)c->ngl : 0);
    vf__extra_bool(e, "flash_attn", c->flash_attn);
    vf__extra_u64(e, "kv_cells", vf__sat_mul(p->cells, p->n_stream));
    if (m->sliding_window)
        vf__extra_u64(e, "kv_cells_swa", vf__sat_mul(p->swa_cells, p->n_stream));
}

/* F-LCPP-08: llama.cpp's own log lines of the buffers. */
static void lcpp_lines(struct vf_arena *a, const struct vf_lcpp_cfg *c,
                       const struct vf_lcpp_plan *p, struct vf_estimate *e)
{
    char b1[32], dn[16];
    for (uint32_t g = 0; g < c->n_gpus && g < 2; g++)
        vf__line(a, e, "load_tensors: %s model buffer size = %s MiB",
                 dev_name(dn, sizeof dn, (int)g), mib(b1, sizeof b1, p->model[g]));
    vf__line(a, e, "load_tensors: %s model buffer size = %s MiB",
             c->n_gpus && !c->no_mmap ? "CPU_Mapped" : "CPU", mib(b1, sizeof b1, p->host_model));
    for (uint32_t g = 0; g < c->n_gpus && g < 2; g++)
        vf__line(a, e, "llama_kv_cache: %s KV buffer size = %s MiB",
                 dev_name(dn, sizeof dn, (int)g), mib(b1, sizeof b1, p->kv[g]));
    if (!c->n_gpus || p->host_kv)
        vf__line(a, e, "llama_kv_cache: CPU KV buffer size = %s MiB",
                 mib(b1, sizeof b1, p->host_kv));
    for (uint32_t g = 0; g < c->n_gpus && g < 1; g++)
        vf__line(a, e, "sched_reserve: %s compute buffer size = %s MiB",
                 dev_name(dn, sizeof dn, (int)g), mib(b1, sizeof b1, p->compute[g]));
    vf__line(a, e, "sched_reserve: %s compute buffer size = %s MiB",
             c->n_gpus ? "CUDA_Host" : "CPU", mib(b1, sizeof b1, p->host_compute));
    vf__line(a, e, "llama_context: %s output buffer size = %s MiB", c->n_gpus ? "CUDA_Host" : "CPU",
             mib(b1, sizeof b1, p->host_output));
}

/* F-LCPP-11: what --fit chose (step -1: --fit off or no card). */
static void fit_assume(struct vf_arena *a, const struct vf_model *m, const struct vf_lcpp_cfg *c,
                       const struct vf_lcpp_plan *p, const struct fit_choice *f,
                       struct vf_estimate *e)
{
    char b1[32], b2[32];
    if (f->step < 0) {
        if (c->fit)
            vf__assume(a, e, "--fit on without a card (--gpu): the settings as given");
        return;
    }
    vf_format_bytes(b1, sizeof b1, c->fit_margin, VF_FMT_IEC);
    if (f->step == 0)
        vf__assume(a, e, "--fit on: the settings fit with %s free per GPU; nothing changed", b1);
    else if (f->step == 1)
        vf__assume(a, e, "--fit on: llama.cpp lowers the context to -c %llu (%s free per GPU)",
                   (unsigned long long)c->n_ctx, b1);
    else
        vf__assume(a, e,
                   "--fit on: llama.cpp chooses -c %llu -ngl %lld%s%u%s: runs with spill, %s of "
                   "weights in host memory%s",
                   (unsigned long long)c->n_ctx, (long long)c->ngl,
                   f->step == 2 ? " and the routed experts of " : "",
                   f->step == 2 ? c->n_cpu_moe : 0, f->step == 2 ? " layers on the CPU" : "",
                   vf_format_bytes(b2, sizeof b2, p->host_model, VF_FMT_IEC),
                   f->fits ? "" : " (still short of the margin)");
    (void)m;
}

/* F-KV-01 with K and V apart (-ctk/-ctv): the bytes one token adds to every layer's cells. */
static void lcpp_kv_per_token(const struct vf_model *m, const struct vf_lcpp_cfg *c,
                              struct vf_estimate *e)
{
    vf__term_kv_per_token(m, c->tk, e);
    if (c->tv == c->tk)
        return;
    uint64_t sum = 0;
    for (uint32_t l = 0; l < m->n_layers; l++)
        sum = vf__sat_add(sum, cell_bytes(m, c, l));
    e->kv_bytes_per_token = sum;
    e->kv_dtype_v = c->tv;
}

static enum vf_err lcpp_estimate(struct vf_arena *a, const struct vf_model *m,
                                 const struct vf_workload *w, struct vf_estimate *e,
                                 struct vf_error *err)
{
    struct vf_lcpp_cfg c;
    struct vf_lcpp_plan p;
    bool ngl_auto;
    enum vf_err rc;
    if (m->task != VF_TASK_INFER || m->pipeline)
        return vf__errf(err, VF_EUNSUPPORTED, "llama.cpp estimates LLM inference only");
    if ((rc = read_cfg(m, w, &c, &ngl_auto, err)) ||
        (rc = vf__term_check_split(m, w, &vf__engine_llamacpp, c.n_gpus, false, err)))
        return rc;
    struct fit_choice f = {.step = -1};
    if (c.fit && c.n_gpus && w->usable_bytes && w->usable_bytes != VF_UNKNOWN) {
        f = fit_choose(m, &c, w->usable_bytes, c.fit_margin, c.fit_ctx, w->ctx_tokens != 0);
        c = f.c;
    }
    if ((rc = vf__lcpp_plan(m, &c, &p, err)))
        return rc;

    vf__term_begin(m, &vf__engine_llamacpp, e);
    e->gpus = c.n_gpus ? c.n_gpus : 1;
    e->users = c.n_seq;
    e->ctx_tokens = p.n_ctx_seq;
    if ((rc = vf__term_weights(m, c.q, e, err)))
        return rc;
    lcpp_kv_per_token(m, &c, e);
    lcpp_assume(a, m, w, &c, &p, ngl_auto, e);
    fit_assume(a, m, &c, &p, &f, e);
    if (f.step >= 2) /* --fit / -ngl auto moved layers or experts to the CPU: runs with spill */
        vf__lcpp_spill(m, &c, &p, e);
    e->host_bytes =
        vf__lcpp_components(e, &c, &p, VF_LCPP_CUDA_OVERHEAD, "CUDA context + cuBLAS, per GPU");
    e->total_bytes = c.n_gpus ? vf__lcpp_gpu_peak(&c, &p) : 0; /* F-LCPP-09 */
    lcpp_extras(m, &c, &p, e);
    lcpp_lines(a, &c, &p, e);
    if (c.n_gpus && w->usable_bytes && w->usable_bytes != VF_UNKNOWN)
        add_fixes(a, m, &c, w->usable_bytes, e);
    return VF_OK;
}

static const struct vf_engine_flag lcpp_flags[] = {
    {"-ngl", "--n-gpu-layers", true, "layers on the GPU: a number, all or auto (default all)"},
    {"-fa", "--flash-attn", true, "flash attention: on, off or auto (default auto = on)"},
    {"-b", "--batch-size", true, "logical batch (default 2048)"},
    {"-ub", "--ubatch-size", true, "physical batch the graph is reserved for (default 512)"},
    {"--kv-unified", "-kvu", false, "one KV stream shared by all -np slots"},
    {"--swa-full", NULL, false, "full-size cache for sliding-window layers"},
    {"--cpu-moe", "-cmoe", false, "keep every routed expert on the CPU"},
    {"--n-cpu-moe", "-ncmoe", true, "keep the routed experts of the first N layers on the CPU"},
    {"--no-mmap", NULL, false, "read the CPU's weights instead of mapping them"},
    {"--no-op-offload", "-nopo", false,
     "run the CPU's layers on the CPU (no weight copies to the GPU for large batches)"},
    {"-ts", "--tensor-split", true, "share of layers per GPU, such as 3,1"},
    {"--fit", "-fit", true,
     "on: llama.cpp lowers the context, then moves experts or layers to the CPU until the card "
     "keeps --fit-target free (needs --gpu)"},
    {"--fit-target", "-fitt", true, "MiB --fit keeps free per device (default 1024)"},
    {"--fit-ctx", "-fitc", true, "the smallest context --fit lowers to (default 4096)"},
    {"--cpu", NULL, false, "everything on the CPU backend (what the CPU oracle measures)"},
    {NULL, NULL, false, NULL},
};

/* F-LCPP-14: the builds where a rule changed ('vramfit help engines'; the version check of
 * engine/estimate.c compares the numbers: b5913 > b1) */
static const struct vf_engine_rule lcpp_rules[] = {
    {"b1", "shared KV",
     "the -np slots share one unified KV cache (every slot's cells attended); the output layer "
     "offloaded last",
     "llama.cpp before PR 14363"},
    {"b" STR(LCPP_B_STREAMS), "KV streams",
     "a KV stream per sequence unless --kv-unified (high-throughput mode)",
     "PR 14363, first in b5913 (llama.cpp issue 14847: its seq_to_stream is not in b5912)"},
    {"b" STR(LCPP_B_OUTPUT_FIRST), "output first", "the output layer offloaded first with -ngl",
     "PR 18148 (build number interpolated between b7045 and b7551)"},
    {NULL, NULL, NULL, NULL},
};

const struct vf_engine vf__engine_llamacpp = {
    .name = "llama.cpp",
    .version = LCPP_VERSION,
    .tasks = 1u << VF_TASK_INFER,
    .can_split = lcpp_can_split,
    .estimate = lcpp_estimate,
    .flags = lcpp_flags,
    .rules = lcpp_rules,
};
