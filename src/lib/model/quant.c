/* SPDX-License-Identifier: Apache-2.0 */
/*
 * quant.c - weight storage math: the bytes of every tensor group of a model under a
 * storage scheme (plain dtypes, AWQ/GPTQ, NF4, FP8 block scales, llama.cpp GGUF file-type
 * recipes). Formulas F-W-01..F-W-09, docs/FORMULAS.md section "Weights". Everything is exact
 * integer arithmetic on uint64_t; an overflow gives VF_UNKNOWN.
 */
#include "internal.h"

#include <pthread.h>

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ geometry */

/* A tensor group as quantization sees it: n_tensors tensors of `rows` rows of `row` elements
 * (row = the input dimension the blocks run along). */
struct geom {
    uint64_t n;     /* elements in the group */
    uint64_t row;   /* elements per row */
    uint64_t rows;  /* rows in the whole group */
    uint64_t ntens; /* tensors (>= 1) */
    uint64_t out;   /* rows per tensor (the output dimension) */
};

static struct geom geom_of(const struct vf_tgroup *g)
{
    struct geom x;
    x.n = g->n_params;
    x.ntens = g->n_tensors ? g->n_tensors : 1;
    x.row = g->row_elems;
    if (x.row == 0 || x.row > x.n)
        x.row = x.n / x.ntens ? x.n / x.ntens : 1;
    x.rows = vf__div_ceil(x.n, x.row);
    x.out = vf__div_ceil(x.rows, x.ntens);
    return x;
}

/* F-W-02: rows x ceil(row / block_elems) x block_bytes. */
static uint64_t block_bytes(enum vf_dtype t, const struct geom *x)
{
    return vf__sat_mul(x->rows, vf_dtype_bytes(t, x->row));
}

static uint64_t block_elems_of(enum vf_dtype t)
{
    uint32_t e, b;
    vf_dtype_block(t, &e, &b);
    return e ? e : 1;
}

/* ------------------------------------------------------------ class sets */

#define CLS(c) (1u << (c))

/* Linear weights inside the layers: what vLLM / transformers / AutoAWQ quantize. */
static const uint32_t linear_classes =
    CLS(VF_T_ATTN_Q) | CLS(VF_T_ATTN_K) | CLS(VF_T_ATTN_V) | CLS(VF_T_ATTN_QKV) | CLS(VF_T_ATTN_O) |
    CLS(VF_T_FFN_GATE) | CLS(VF_T_FFN_UP) | CLS(VF_T_FFN_DOWN) | CLS(VF_T_FFN_GATE_EXP) |
    CLS(VF_T_FFN_UP_EXP) | CLS(VF_T_FFN_DOWN_EXP) | CLS(VF_T_FFN_GATE_SHEXP) |
    CLS(VF_T_FFN_UP_SHEXP) | CLS(VF_T_FFN_DOWN_SHEXP) | CLS(VF_T_SSM);

static bool in_set(const struct vf_quant *q, enum vf_tclass c)
{
    uint32_t set = q->classes ? q->classes : linear_classes;
    return (unsigned)c < 32 && (set & CLS(c)) != 0;
}

/* The model's own 16-bit (or 32-bit) type, for what a quantizing scheme leaves alone. */
static enum vf_dtype hi_dtype(const struct vf_model *m)
{
    switch (m->native_dtype) {
    case VF_DT_F16:
    case VF_DT_BF16:
    case VF_DT_F32:
        return m->native_dtype;
    default:
        return VF_DT_BF16;
    }
}

/* ------------------------------------------------------------ F-W-03/04: plain */

static uint64_t plain_bytes(const struct vf_model *m, const struct vf_quant *q,
                            const struct vf_tgroup *g, const struct geom *x)
{
    enum vf_dtype t = q->dtype;
    if (t == VF_DT_DEFAULT)
        t = hi_dtype(m);
    /* F-W-03: a 16/32-bit scheme stores every tensor, norms included, at that type. */
    if (t == VF_DT_F32 || t == VF_DT_F16 || t == VF_DT_BF16)
        return block_bytes(t, x);
    if (!in_set(q, g->cls))
        return block_bytes(hi_dtype(m), x);
    switch (t) {
    case VF_DT_FP8: /* F-W-04a: 1 B/param + one fp32 per-tensor scale */
        return vf__sat_add(x->n, vf__sat_mul(4, x->ntens));
    case VF_DT_INT8: /* F-W-04b: 1 B/param + one fp32 scale per output row */
        return vf__sat_add(x->n, vf__sat_mul(4, x->rows));
    case VF_DT_INT4: /* F-W-04c: 0.5 B/param + fp16 scale per 128 inputs per row */
        return vf__sat_add(block_bytes(VF_DT_INT4, x),
                           vf__sat_mul(x->rows, vf__sat_mul(vf__div_ceil(x->row, 128), 2)));
    case VF_DT_NVFP4: /* F-W-04e: 9 B per 16 elements + fp32 global scale per tensor */
        return vf__sat_add(block_bytes(VF_DT_NVFP4, x), vf__sat_mul(4, x->ntens));
    default: /* F-W-04d MXFP4 (17 B / 32), F-W-04f bare GGUF block types */
        return block_bytes(t, x);
    }
}

/* ------------------------------------------------------------ F-W-05: AWQ / GPTQ */

/*
 * Per quantized linear of in = row, out = rows per tensor, groups G = ceil(in / group):
 *   qweight int32 [in, out/8] (AWQ) or [in/8, out] (GPTQ)   = 0.5 B/param
 *   scales  fp16  [G, out]                                   = 2 B per group per row
 *   qzeros  int32 [G, out/8]                                 = 0.5 B per group per row
 *   g_idx   int32 [in]                                       (GPTQ only)
 */
static uint64_t awq_gptq_bytes(const struct vf_model *m, const struct vf_quant *q,
                               const struct vf_tgroup *g, const struct geom *x)
{
    if (!in_set(q, g->cls))
        return block_bytes(hi_dtype(m), x);
    uint64_t grp = q->group ? q->group : 128;
    uint64_t ng = vf__div_ceil(x->row, grp);
    uint64_t per, qw, sc, zp, gi = 0;
    if (q->kind == VF_QK_AWQ)
        qw = vf__sat_mul(x->row, vf__sat_mul(vf__div_ceil(x->out, 8), 4));
    else
        qw = vf__sat_mul(vf__div_ceil(x->row, 8), vf__sat_mul(x->out, 4));
    sc = vf__sat_mul(ng, vf__sat_mul(x->out, 2));
    zp = vf__sat_mul(ng, vf__sat_mul(vf__div_ceil(x->out, 8), 4));
    if (q->kind == VF_QK_GPTQ)
        gi = vf__sat_mul(x->row, 4);
    per = vf__sat_add(vf__sat_add(qw, sc), vf__sat_add(zp, gi));
    return vf__sat_mul(per, x->ntens);
}

/* ------------------------------------------------------------ F-W-06: NF4 */

/*
 * bitsandbytes NF4 with double quantization, per tensor of n_t elements (blocks run over
 * the flattened tensor): packed 4-bit data ceil(n_t/2), one uint8 absmax per block of 64,
 * one fp32 second-level scale per 256 absmax values, plus the fp32 offset and the 16-entry
 * fp32 NF4 code kept with each tensor's quant state (68 B).
 */
static uint64_t nf4_bytes(const struct vf_model *m, const struct vf_quant *q,
                          const struct vf_tgroup *g, const struct geom *x)
{
    if (!in_set(q, g->cls))
        return block_bytes(hi_dtype(m), x);
    uint64_t blk = q->group ? q->group : 64;
    uint64_t nt = vf__div_ceil(x->n, x->ntens);
    uint64_t nblk = vf__div_ceil(nt, blk);
    uint64_t per = vf__sat_add(vf__div_ceil(nt, 2), nblk);
    per = vf__sat_add(per, vf__sat_mul(vf__div_ceil(nblk, 256), 4));
    per = vf__sat_add(per, 68);
    return vf__sat_mul(per, x->ntens);
}

/* ------------------------------------------------------------ F-W-07: FP8 block */

/* DeepSeek-V3: e4m3 weights, one fp32 scale_inv per 128x128 block of each tensor. */
static uint64_t fp8_block_bytes(const struct vf_model *m, const struct vf_quant *q,
                                const struct vf_tgroup *g, const struct geom *x)
{
    if (!in_set(q, g->cls))
        return block_bytes(hi_dtype(m), x);
    uint64_t blk = q->group ? q->group : 128;
    uint64_t scales = vf__sat_mul(vf__div_ceil(x->out, blk), vf__div_ceil(x->row, blk));
    return vf__sat_add(x->n, vf__sat_mul(vf__sat_mul(scales, 4), x->ntens));
}

/* ------------------------------------------------------------ F-W-08/09: GGUF recipes */

/* LLAMA_FTYPE_* numbers used below (include/llama.h). */
enum {
    FT_F32 = 0,
    FT_F16 = 1,
    FT_Q4_0 = 2,
    FT_Q4_1 = 3,
    FT_Q8_0 = 7,
    FT_Q5_0 = 8,
    FT_Q5_1 = 9,
    FT_Q2_K = 10,
    FT_Q3_K_S = 11,
    FT_Q3_K_M = 12,
    FT_Q3_K_L = 13,
    FT_Q4_K_S = 14,
    FT_Q4_K_M = 15,
    FT_Q5_K_S = 16,
    FT_Q5_K_M = 17,
    FT_Q6_K = 18,
    FT_IQ2_XXS = 19,
    FT_IQ2_XS = 20,
    FT_Q2_K_S = 21,
    FT_IQ3_XS = 22,
    FT_IQ3_XXS = 23,
    FT_IQ1_S = 24,
    FT_IQ4_NL = 25,
    FT_IQ3_S = 26,
    FT_IQ3_M = 27,
    FT_IQ2_S = 28,
    FT_IQ2_M = 29,
    FT_IQ4_XS = 30,
    FT_IQ1_M = 31,
    FT_BF16 = 32,
    FT_TQ1_0 = 36,
    FT_TQ2_0 = 37,
    FT_MXFP4_MOE = 38
};

/* The ggml type an ftype is built on; VF_DT_DEFAULT for an ftype we do not know. */
static enum vf_dtype ftype_base(int ft)
{
    switch (ft) {
    case FT_F32:
        return VF_DT_F32;
    case FT_F16:
        return VF_DT_F16;
    case FT_BF16:
        return VF_DT_BF16;
    case FT_Q4_0:
        return VF_DT_Q4_0;
    case FT_Q4_1:
        return VF_DT_Q4_1;
    case FT_Q5_0:
        return VF_DT_Q5_0;
    case FT_Q5_1:
        return VF_DT_Q5_1;
    case FT_Q8_0:
        return VF_DT_Q8_0;
    case FT_MXFP4_MOE:
        return VF_DT_MXFP4;
    case FT_Q2_K:
    case FT_Q2_K_S:
        return VF_DT_Q2_K;
    case FT_Q3_K_S:
    case FT_Q3_K_M:
    case FT_Q3_K_L:
        return VF_DT_Q3_K;
    case FT_Q4_K_S:
    case FT_Q4_K_M:
        return VF_DT_Q4_K;
    case FT_Q5_K_S:
    case FT_Q5_K_M:
        return VF_DT_Q5_K;
    case FT_Q6_K:
        return VF_DT_Q6_K;
    case FT_TQ1_0:
        return VF_DT_TQ1_0;
    case FT_TQ2_0:
        return VF_DT_TQ2_0;
    case FT_IQ2_XXS:
        return VF_DT_IQ2_XXS;
    case FT_IQ2_XS:
    case FT_IQ2_S:
        return VF_DT_IQ2_XS;
    case FT_IQ2_M:
        return VF_DT_IQ2_S;
    case FT_IQ3_XXS:
        return VF_DT_IQ3_XXS;
    case FT_IQ1_S:
        return VF_DT_IQ1_S;
    case FT_IQ1_M:
        return VF_DT_IQ1_M;
    case FT_IQ4_NL:
        return VF_DT_IQ4_NL;
    case FT_IQ4_XS:
        return VF_DT_IQ4_XS;
    case FT_IQ3_XS:
    case FT_IQ3_S:
    case FT_IQ3_M:
        return VF_DT_IQ3_S;
    default:
        return VF_DT_DEFAULT;
    }
}

/* llama.cpp's tensor categories, by the GGUF tensor name each class becomes. */
enum cat { C_EMBD, C_OUTPUT, C_Q, C_K, C_V, C_QKV, C_KV_B, C_O, C_UP, C_GATE, C_DOWN, C_OTHER };

static enum cat cat_of(const struct vf_model *m, enum vf_tclass c)
{
    bool mla = m->attn == VF_ATTN_MLA;
    switch (c) {
    case VF_T_TOKEN_EMBD:
        return C_EMBD;
    case VF_T_OUTPUT:
        return C_OUTPUT;
    case VF_T_ATTN_Q:
        return mla ? C_OTHER : C_Q; /* attn_q_a / attn_q_b */
    case VF_T_ATTN_K:
        return mla ? C_OTHER : C_K; /* attn_kv_a_mqa */
    case VF_T_ATTN_V:
        return mla ? C_KV_B : C_V; /* attn_kv_b */
    case VF_T_ATTN_QKV:
        return C_QKV;
    case VF_T_ATTN_O:
        return C_O;
    case VF_T_FFN_GATE:
    case VF_T_FFN_GATE_EXP:
    case VF_T_FFN_GATE_SHEXP:
        return C_GATE;
    case VF_T_FFN_UP:
    case VF_T_FFN_UP_EXP:
    case VF_T_FFN_UP_SHEXP:
        return C_UP;
    case VF_T_FFN_DOWN:
    case VF_T_FFN_DOWN_EXP:
    case VF_T_FFN_DOWN_SHEXP:
        return C_DOWN;
    default:
        return C_OTHER;
    }
}

static bool is_attn_v(enum cat c)
{
    return c == C_V || c == C_QKV || c == C_KV_B;
}

static bool is_expert(enum vf_tclass c)
{
    return c == VF_T_FFN_GATE_EXP || c == VF_T_FFN_UP_EXP || c == VF_T_FFN_DOWN_EXP;
}

/* What llama.cpp's recipe reads from the model besides the tensor itself. */
struct recipe_ctx {
    int ft;
    int n_layer;
    int n_expert;
    uint32_t gqa; /* n_head / n_head_kv */
    bool falcon;
    bool is_70b;    /* LLM_TYPE_70B: 80 layers with GQA */
    bool tied;      /* no output tensor: token_embd doubles as output */
    bool imatrix;   /* assumed present only where the ftype cannot be made without one */
    int i_wv, n_wv; /* this tensor's index among the attn_v-like tensors, and their count */
    int i_down;     /* this ffn_down's layer (MoE) or its index among the ffn_down tensors */
};

/* llama.cpp's "use_more_bits": the first and last eighth of the layers and every third. */
static bool more_bits(int i, int n)
{
    return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2;
}

static bool ft_in(int ft, const int *set, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (set[i] == ft)
            return true;
    return false;
}
#define FT_IN(ft, ...) \
    ft_in((ft), (const int[]){__VA_ARGS__}, sizeof((const int[]){__VA_ARGS__}) / sizeof(int))

/* F-W-08, output.weight (and token_embd.weight when it doubles as the output): Q6_K, Q5_K
 * for the smallest IQ ftypes, Q8_0 for MXFP4_MOE, Falcon and rows the base type cannot
 * block; a Q8_0 base stays. */
static enum vf_dtype pick_output(const struct recipe_ctx *r, uint64_t row, enum vf_dtype t)
{
    const int ft = r->ft;
    if (ft == FT_MXFP4_MOE)
        return VF_DT_Q8_0;
    if (r->falcon || row % block_elems_of(t) != 0)
        return VF_DT_Q8_0;
    if (FT_IN(ft, FT_IQ2_XXS, FT_IQ2_XS, FT_IQ3_XXS, FT_IQ1_S, FT_IQ2_S, FT_IQ2_M, FT_IQ1_M))
        return VF_DT_Q5_K;
    return t != VF_DT_Q8_0 ? VF_DT_Q6_K : t;
}

/* F-W-08, token_embd.weight of a model with its own output: lower for the 1-3-bit IQ and
 * ternary ftypes, else the base type t. */
static enum vf_dtype pick_embd(int ft, enum vf_dtype t)
{
    if (FT_IN(ft, FT_IQ2_XXS, FT_IQ2_XS, FT_IQ1_S, FT_IQ1_M))
        return VF_DT_Q2_K;
    if (FT_IN(ft, FT_IQ2_S, FT_IQ2_M, FT_IQ3_XXS))
        return VF_DT_IQ3_S;
    if (FT_IN(ft, FT_TQ1_0, FT_TQ2_0))
        return VF_DT_Q4_K;
    return t;
}

/* F-W-08 for the 1- and 2-bit IQ ftypes (IQ1_S/M, IQ2_XXS/XS/S/M): attn_v, attn_k of
 * 8-expert models, the first eighth of ffn_down and attn_output get more bits. */
static enum vf_dtype pick_low_iq(const struct recipe_ctx *r, enum cat c, enum vf_dtype t)
{
    const int ft = r->ft;
    bool iq2s = ft == FT_IQ2_S || ft == FT_IQ2_M;
    if (is_attn_v(c)) {
        if (r->gqa >= 4 || r->n_expert >= 4)
            return VF_DT_Q4_K;
        return iq2s ? VF_DT_IQ3_S : VF_DT_Q2_K;
    }
    if (r->n_expert == 8 && c == C_K)
        return VF_DT_Q4_K;
    if (c == C_DOWN)
        return r->i_down < r->n_layer / 8 ? (iq2s ? VF_DT_IQ3_S : VF_DT_Q2_K) : t;
    if (c == C_O) {
        if (r->n_expert == 8)
            return VF_DT_Q5_K;
        if (ft == FT_IQ1_S || ft == FT_IQ1_M)
            return VF_DT_IQ2_XXS;
        if (iq2s)
            return VF_DT_IQ3_S;
    }
    return t;
}

/* F-W-08, attn_v (and attn_qkv, attn_kv_b) of the other ftypes: by GQA ratio, by the
 * tensor's rank i_wv among the n_wv of them (use_more_bits), 70B and 8-expert rules. */
static enum vf_dtype pick_attn_v(const struct recipe_ctx *r, enum vf_dtype t)
{
    const int ft = r->ft, i = r->i_wv, nv = r->n_wv;
    if (ft == FT_Q2_K)
        t = r->gqa >= 4 ? VF_DT_Q4_K : VF_DT_Q3_K;
    else if (ft == FT_Q2_K_S && r->gqa >= 4)
        t = VF_DT_Q4_K;
    else if (ft == FT_IQ3_XXS)
        t = r->gqa >= 4 ? VF_DT_Q4_K : !r->imatrix ? VF_DT_IQ3_S : VF_DT_IQ3_XXS;
    else if ((ft == FT_IQ3_XS || ft == FT_IQ3_S) && r->gqa >= 4)
        t = VF_DT_Q4_K;
    else if (ft == FT_IQ3_M)
        t = VF_DT_Q4_K;
    else if (ft == FT_Q3_K_M)
        t = i < 2 ? VF_DT_Q5_K : VF_DT_Q4_K;
    else if (ft == FT_Q3_K_L)
        t = VF_DT_Q5_K;
    else if ((ft == FT_IQ4_NL || ft == FT_IQ4_XS) && r->gqa >= 4)
        t = VF_DT_Q5_K;
    else if ((ft == FT_Q4_K_M || ft == FT_Q5_K_M) && more_bits(i, nv))
        t = VF_DT_Q6_K;
    else if (ft == FT_Q4_K_S && i < 4)
        t = VF_DT_Q5_K;
    if (r->is_70b && (t == VF_DT_Q3_K || t == VF_DT_Q4_K))
        t = VF_DT_Q5_K;
    if (r->n_expert == 8)
        t = VF_DT_Q8_0;
    return t;
}

/* F-W-08, ffn_down of the other ftypes: by its index i_down (the layer for MoE) among the
 * n_layer layers (first eighth or sixteenth, use_more_bits), Falcon and imatrix rules. */
static enum vf_dtype pick_down(const struct recipe_ctx *r, enum vf_dtype t)
{
    const int ft = r->ft, n = r->n_layer, i = r->i_down;
    if (ft == FT_Q2_K)
        return VF_DT_Q3_K;
    if (ft == FT_Q2_K_S)
        return i < n / 8 ? VF_DT_Q4_K : t;
    if (ft == FT_IQ3_XXS && !r->imatrix)
        return i < n / 8 ? VF_DT_Q4_K : VF_DT_Q3_K;
    if (ft == FT_Q3_K_M) {
        if (i < n / 16)
            return VF_DT_Q5_K;
        return !r->falcon || more_bits(i, n) ? VF_DT_Q4_K : VF_DT_Q3_K;
    }
    if (ft == FT_IQ3_M && (i < n / 8 || (r->n_expert == 8 && more_bits(i, n))))
        return VF_DT_Q4_K;
    if (ft == FT_Q3_K_L)
        return r->falcon ? VF_DT_Q4_K : VF_DT_Q5_K;
    if (ft == FT_Q4_K_M) {
        if (r->falcon)
            return i < n / 16 ? VF_DT_Q6_K : more_bits(i, n) ? VF_DT_Q5_K : VF_DT_Q4_K;
        return more_bits(i, n) ? VF_DT_Q6_K : t;
    }
    if (i < n / 8 && (ft == FT_IQ4_NL || ft == FT_IQ4_XS) && !r->imatrix)
        return VF_DT_Q5_K;
    if (ft == FT_Q5_K_M && more_bits(i, n))
        return VF_DT_Q6_K;
    if (ft == FT_Q4_K_S && !r->falcon && i < n / 8)
        return VF_DT_Q5_K;
    if ((ft == FT_Q4_0 || ft == FT_Q5_0) && r->imatrix && i < n / 8)
        return ft == FT_Q4_0 ? VF_DT_Q4_1 : VF_DT_Q5_1;
    return t;
}

/* F-W-08, attn_output of the other ftypes: Falcon, 8-expert and low-bit rules. */
static enum vf_dtype pick_attn_o(const struct recipe_ctx *r, enum vf_dtype t)
{
    const int ft = r->ft;
    if (r->falcon)
        return ft == FT_Q3_K_L ? VF_DT_Q4_K : t;
    if (r->n_expert == 8) {
        if (FT_IN(ft, FT_Q2_K, FT_IQ3_XS, FT_IQ3_XXS, FT_Q3_K_S, FT_Q3_K_M, FT_IQ4_NL, FT_Q4_K_S,
                  FT_Q4_K_M, FT_IQ3_S, FT_IQ3_M, FT_IQ4_XS))
            return VF_DT_Q5_K;
        return t;
    }
    if (ft == FT_Q2_K)
        return VF_DT_Q3_K;
    if (ft == FT_IQ3_XXS)
        return VF_DT_IQ3_S;
    if (ft == FT_Q3_K_M || ft == FT_IQ3_M)
        return VF_DT_Q4_K;
    if (ft == FT_Q3_K_L)
        return VF_DT_Q5_K;
    return t;
}

/*
 * F-W-08: the type llama-quantize gives a quantizable tensor of category c, row length
 * `row`, in layer `layer`, under recipe r, starting from the ftype's base type t. Learned
 * from llama.cpp src/llama-quant.cpp (llama_tensor_get_type_impl), written anew; the
 * branch order matters and follows that function's (the pick_* steps above are its
 * branches, in the order taken here).
 */
static enum vf_dtype gguf_pick(const struct recipe_ctx *r, enum cat c, enum vf_tclass cls,
                               uint64_t row, int layer, enum vf_dtype t)
{
    const int ft = r->ft;
    const int n = r->n_layer;
    if (c == C_OUTPUT || (r->tied && c == C_EMBD))
        return pick_output(r, row, t);
    if (ft == FT_MXFP4_MOE)
        return is_expert(cls) ? VF_DT_MXFP4 : VF_DT_Q8_0;
    if (c == C_EMBD)
        return pick_embd(ft, t);
    if (FT_IN(ft, FT_IQ2_XXS, FT_IQ2_XS, FT_IQ1_S, FT_IQ2_S, FT_IQ2_M, FT_IQ1_M))
        return pick_low_iq(r, c, t);
    if (is_attn_v(c))
        return pick_attn_v(r, t);
    if (c == C_K) {
        if (r->n_expert == 8)
            return VF_DT_Q8_0;
        if (ft == FT_IQ3_XS)
            return VF_DT_IQ3_XXS;
        if (ft == FT_IQ3_XXS)
            return VF_DT_IQ2_S;
        return t;
    }
    if (c == C_Q) {
        if (ft == FT_IQ3_XS)
            return VF_DT_IQ3_XXS;
        if (ft == FT_IQ3_XXS)
            return VF_DT_IQ2_S;
        return t;
    }
    if (c == C_DOWN)
        return pick_down(r, t);
    if (c == C_O)
        return pick_attn_o(r, t);
    if ((c == C_GATE || c == C_UP) && ft == FT_IQ3_XS && layer >= n / 8 && layer < 7 * n / 8)
        return VF_DT_IQ3_XXS;
    return t;
}

/*
 * F-W-09: a type whose block does not divide the row falls back to a 32-block type
 * (llama.cpp tensor_type_fallback), and to F16 when even that does not divide.
 */
static enum vf_dtype gguf_fallback(enum vf_dtype t, uint64_t row)
{
    if (t == VF_DT_F32 || t == VF_DT_F16 || t == VF_DT_BF16)
        return t;
    if (row % block_elems_of(t) == 0)
        return t;
    enum vf_dtype f;
    switch (t) {
    case VF_DT_IQ1_S:
    case VF_DT_IQ1_M:
    case VF_DT_IQ2_XXS:
    case VF_DT_IQ2_XS:
    case VF_DT_IQ2_S:
    case VF_DT_IQ3_XXS:
    case VF_DT_IQ3_S:
    case VF_DT_IQ4_XS:
        f = VF_DT_IQ4_NL;
        break;
    case VF_DT_Q2_K:
    case VF_DT_Q3_K:
    case VF_DT_TQ1_0:
    case VF_DT_TQ2_0:
        f = VF_DT_Q4_0;
        break;
    case VF_DT_Q4_K:
        f = VF_DT_Q5_0;
        break;
    case VF_DT_Q5_K:
        f = VF_DT_Q5_1;
        break;
    case VF_DT_Q6_K:
        f = VF_DT_Q8_0;
        break;
    default:
        f = VF_DT_F16;
        break; /* llama.cpp refuses; F16 is what a user would do */
    }
    return row % block_elems_of(f) == 0 ? f : VF_DT_F16;
}

/* Fills the recipe context for group g (counting its rank among its kind in model order). */
static void recipe_init(const struct vf_model *m, const struct vf_quant *q,
                        const struct vf_tgroup *g, struct recipe_ctx *r)
{
    memset(r, 0, sizeof *r);
    r->ft = q->ftype;
    r->n_layer = (int)m->n_layers;
    r->n_expert = (int)m->n_experts;
    r->gqa = m->n_kv_heads ? m->n_heads / m->n_kv_heads : 1;
    r->falcon = m->model_type && strcmp(m->model_type, "falcon") == 0;
    r->is_70b = m->n_layers == 80 && m->n_kv_heads && m->n_kv_heads < m->n_heads;
    r->imatrix = FT_IN(q->ftype, FT_IQ1_S, FT_IQ1_M, FT_IQ2_XXS, FT_IQ2_XS, FT_IQ2_S, FT_IQ2_M,
                       FT_IQ3_XXS, FT_IQ3_XS, FT_Q2_K_S);
    r->tied = true;
    int down_rank = 0;
    for (size_t i = 0; i < m->n_groups; i++) {
        const struct vf_tgroup *o = &m->groups[i];
        enum cat oc = cat_of(m, o->cls);
        /* GGUF orders tensors by layer, then by name; the class order matches the names. */
        bool before = o->layer < g->layer || (o->layer == g->layer && o->cls < g->cls);
        if (o->cls == VF_T_OUTPUT)
            r->tied = false;
        if (is_attn_v(oc)) {
            r->n_wv++;
            if (before)
                r->i_wv++;
        }
        if (oc == C_DOWN && before)
            down_rank++;
    }
    r->i_down = r->n_expert > 1 ? (int)g->layer : down_rank;
}

static uint64_t gguf_bytes(const struct vf_model *m, const struct vf_quant *q,
                           const struct vf_tgroup *g, const struct geom *x,
                           const struct recipe_ctx *pre)
{
    enum vf_dtype base = ftype_base(q->ftype);
    if (base == VF_DT_DEFAULT)
        base = q->dtype != VF_DT_DEFAULT ? q->dtype : VF_DT_F16;
    /* 1-D tensors and routers are never quantized; convert_hf_to_gguf writes them F32. */
    if (g->cls == VF_T_NORM || g->cls == VF_T_BIAS || g->cls == VF_T_ROUTER || x->rows <= 1)
        return block_bytes(VF_DT_F32, x);
    enum vf_dtype t = base;
    if (base != VF_DT_F32 && base != VF_DT_F16 && base != VF_DT_BF16) {
        struct recipe_ctx r;
        if (pre)
            r = *pre;
        else
            recipe_init(m, q, g, &r);
        t = gguf_pick(&r, cat_of(m, g->cls), g->cls, x->row, (int)g->layer, base);
        t = gguf_fallback(t, x->row);
    }
    return block_bytes(t, x);
}

/* ------------------------------------------------------------ entry points */

/* Is q the checkpoint's own storage (NULL, VF_QK_NATIVE, or a copy of m->native)? Then the
 * bytes the files store are the answer when they were read. */
static bool is_native(const struct vf_model *m, const struct vf_quant *q)
{
    if (!q || q->kind == VF_QK_NATIVE)
        return true;
    const struct vf_quant *n = &m->native;
    return q->kind == n->kind && q->dtype == n->dtype && q->ftype == n->ftype &&
           q->group == n->group && q->classes == n->classes && !strcmp(q->name, n->name);
}

/* vf__quant_group_bytes with the recipe context of g already known (NULL: compute it). */
static uint64_t group_bytes(const struct vf_model *m, const struct vf_quant *q,
                            const struct vf_tgroup *g, const struct recipe_ctx *pre)
{
    if (!m || !g || g->n_params == VF_UNKNOWN || g->row_elems == VF_UNKNOWN)
        return VF_UNKNOWN;
    if (g->n_params == 0)
        return 0;
    /* F-W-01: a group read from a file has its exact stored size under the native scheme */
    if (g->stored_bytes && is_native(m, q))
        return g->stored_bytes;
    struct geom x = geom_of(g);
    struct vf_quant plain;
    if (!q || q->kind == VF_QK_NATIVE) {
        q = &m->native;
        if (q->kind == VF_QK_NATIVE) { /* an unset native: the checkpoint's torch_dtype */
            memset(&plain, 0, sizeof plain);
            plain.kind = VF_QK_PLAIN;
            plain.dtype = hi_dtype(m);
            q = &plain;
        }
    }
    switch (q->kind) {
    case VF_QK_PLAIN:
        return plain_bytes(m, q, g, &x);
    case VF_QK_AWQ:
    case VF_QK_GPTQ:
        return awq_gptq_bytes(m, q, g, &x);
    case VF_QK_NF4:
        return nf4_bytes(m, q, g, &x);
    case VF_QK_FP8_BLOCK:
        return fp8_block_bytes(m, q, g, &x);
    case VF_QK_GGUF_FTYPE:
        return gguf_bytes(m, q, g, &x, pre);
    default:
        return VF_UNKNOWN;
    }
}

uint64_t vf__quant_group_bytes(const struct vf_model *m, const struct vf_quant *q,
                               const struct vf_tgroup *g)
{
    return group_bytes(m, q, g, NULL);
}

/* A group's place in GGUF file order: by layer, then by class. */
struct file_pos {
    int32_t layer;
    int cls;
    size_t idx;
};
static int by_file_order(const void *pa, const void *pb)
{
    const struct file_pos *a = pa, *b = pb;
    if (a->layer != b->layer)
        return a->layer < b->layer ? -1 : 1;
    return a->cls - b->cls;
}

/* Sorts o by_file_order, stably, in about n steps: a counting sort by layer (the layers
 * span at most VF_MAX_LAYERS + 1 values, -1 for the tensors outside them), then an
 * insertion sort of each layer's few groups by class. Layers out of that range, or no
 * memory, go through qsort (glibc's is a stable merge sort too). */
static void file_order(struct file_pos *o, size_t n)
{
    enum { SPAN = VF_MAX_LAYERS + 2 }; /* layer -1 .. VF_MAX_LAYERS */
    size_t *start = NULL;
    struct file_pos *tmp = NULL;
    bool in_range = true;
    for (size_t i = 0; i < n && in_range; i++)
        in_range = o[i].layer >= -1 && o[i].layer < SPAN - 1;
    if (in_range) {
        start = vf__malloc((SPAN + 1) * sizeof *start);
        tmp = vf__malloc(n * sizeof *tmp);
    }
    if (!start || !tmp) {
        vf__free(start);
        vf__free(tmp);
        qsort(o, n, sizeof *o, by_file_order);
        return;
    }
    memset(start, 0, (SPAN + 1) * sizeof *start);
    for (size_t i = 0; i < n; i++)
        start[o[i].layer + 2]++;
    for (size_t b = 1; b <= SPAN; b++)
        start[b] += start[b - 1];
    for (size_t i = 0; i < n; i++)
        tmp[start[o[i].layer + 1]++] = o[i];
    for (size_t i = 0; i < n; i++) {
        struct file_pos x = tmp[i];
        size_t j = i;
        for (; j > 0 && tmp[j - 1].layer == x.layer && tmp[j - 1].cls > x.cls; j--)
            tmp[j] = tmp[j - 1];
        tmp[j] = x;
    }
    memcpy(o, tmp, n * sizeof *o);
    vf__free(start);
    vf__free(tmp);
}

/*
 * The recipe context of every group in one pass (recipe_init is O(groups) per group, which
 * made a 1000-group model cost a million steps per estimate). Returns NULL when the scheme
 * is no GGUF recipe or memory is short; the caller then uses the per-group path.
 */
static struct recipe_ctx *recipe_all(const struct vf_model *m, const struct vf_quant *q)
{
    const struct vf_quant *eff = (!q || q->kind == VF_QK_NATIVE) ? &m->native : q;
    if (eff->kind != VF_QK_GGUF_FTYPE || m->n_groups == 0 || m->n_groups > VF_MAX_MODEL_GROUPS)
        return NULL;
    struct recipe_ctx *all = vf__malloc(m->n_groups * sizeof *all);
    struct file_pos *order = vf__malloc(m->n_groups * sizeof *order);
    if (!all || !order) {
        vf__free(all);
        vf__free(order);
        return NULL;
    }
    struct recipe_ctx base;
    recipe_init(m, eff, &m->groups[0], &base); /* the model-wide fields */
    for (size_t i = 0; i < m->n_groups; i++)
        order[i] = (struct file_pos){m->groups[i].layer, (int)m->groups[i].cls, i};
    file_order(order, m->n_groups);
    int i_wv = 0, down_rank = 0;
    for (size_t k = 0; k < m->n_groups; k++) {
        const struct vf_tgroup *g = &m->groups[order[k].idx];
        enum cat c = cat_of(m, g->cls);
        struct recipe_ctx *r = &all[order[k].idx];
        *r = base;
        r->i_wv = i_wv;
        r->i_down = r->n_expert > 1 ? (int)g->layer : down_rank;
        if (is_attn_v(c))
            i_wv++;
        if (c == C_DOWN)
            down_rank++;
    }
    vf__free(order);
    return all;
}

/* ------------------------------------------------- the solver's memo (issue 15) */

/* The key a storage is remembered under: every native spelling computes the same bytes
 * (group_bytes, recipe_all), so they share one. */
static struct vf_quant memo_key(const struct vf_quant *q)
{
    struct vf_quant key = {.kind = VF_QK_NATIVE};
    if (q && q->kind != VF_QK_NATIVE)
        key = *q;
    return key;
}

static bool same_key(const struct vf_quant *k, const struct vf_quant *key)
{
    return k->kind == key->kind && k->dtype == key->dtype && k->ftype == key->ftype &&
           k->group == key->group && k->classes == key->classes &&
           !strncmp(k->name, key->name, sizeof k->name);
}

struct vf__memo_weights *vf__memo_weights(const struct vf_model *m, const struct vf_quant *q)
{
    struct vf__memo *memo = m ? m->memo : NULL;
    if (!memo || memo->owner != m)
        return NULL;
    struct vf_quant key = memo_key(q);
    for (size_t i = 0; i < memo->n_w; i++)
        if (same_key(&memo->w[i].q, &key))
            return &memo->w[i];
    if (memo->n_w == VF__MEMO_QUANTS)
        return NULL;
    struct vf__memo_weights *slot = &memo->w[memo->n_w++];
    *slot = (struct vf__memo_weights){.q = key};
    return slot;
}

struct vf__shared {
    pthread_mutex_t lock;
    struct vf_quant q[VF__SHARED_QUANTS];
    uint64_t total[VF__SHARED_QUANTS];
    size_t n;
};

struct vf__shared *vf__shared_new(struct vf_arena *a)
{
    struct vf__shared *s = vf_arena_alloc(a, sizeof *s);
    if (s && pthread_mutex_init(&s->lock, NULL))
        s = NULL;
    return s;
}

void vf__shared_free(struct vf__shared *s)
{
    if (s)
        pthread_mutex_destroy(&s->lock);
}

bool vf__shared_get(struct vf__shared *s, const struct vf_quant *q, uint64_t *total)
{
    struct vf_quant key = memo_key(q);
    bool found = false;
    pthread_mutex_lock(&s->lock);
    for (size_t i = 0; i < s->n && !found; i++)
        if ((found = same_key(&s->q[i], &key)))
            *total = s->total[i];
    pthread_mutex_unlock(&s->lock);
    return found;
}

void vf__shared_put(struct vf__shared *s, const struct vf_quant *q, uint64_t total)
{
    struct vf_quant key = memo_key(q);
    pthread_mutex_lock(&s->lock);
    bool found = false;
    for (size_t i = 0; i < s->n && !found; i++)
        found = same_key(&s->q[i], &key);
    if (!found && s->n < VF__SHARED_QUANTS) { /* two requests may both have computed it */
        s->q[s->n] = key;
        s->total[s->n++] = total;
    }
    pthread_mutex_unlock(&s->lock);
}

/* The per-layer sums of vf_model_layer_weight_bytes in one pass, at [layer + 1], each summed
 * in group order as that function sums it; false (nothing kept) when the layers are out of
 * the expected range or memory is short. */
static bool memo_layers(const struct vf_model *m, const struct vf_quant *q,
                        struct vf__memo_weights *slot)
{
    int32_t top = -1;
    for (size_t i = 0; i < m->n_groups; i++) {
        if (m->groups[i].layer < -1 || m->groups[i].layer > VF_MAX_LAYERS)
            return false;
        if (m->groups[i].layer > top)
            top = m->groups[i].layer;
    }
    size_t n = (size_t)top + 2;
    uint64_t *sum = vf_arena_alloc(m->memo->a, n * sizeof *sum);
    if (!sum)
        return false;
    struct recipe_ctx *pre = recipe_all(m, q);
    for (size_t i = 0; i < m->n_groups; i++) {
        uint64_t *s = &sum[m->groups[i].layer + 1];
        *s = vf__sat_add(*s, group_bytes(m, q, &m->groups[i], pre ? &pre[i] : NULL));
    }
    vf__free(pre);
    slot->layer = sum;
    slot->n_layer = n;
    m->memo->n_weight_sums++;
    return true;
}

/* F-W-01: the sum over the model's tensor groups; VF_UNKNOWN when there are none. */
uint64_t vf_model_weight_bytes(const struct vf_model *m, const struct vf_quant *q)
{
    /* F-W-01: the files' own total when they were read (it includes tensors no architecture
     * group holds, such as a vision tower) */
    if (m && m->exact_weight_bytes && is_native(m, q) && m->exact_weight_bytes != VF_UNKNOWN)
        return m->exact_weight_bytes;
    if (!m || !m->groups || m->n_groups == 0)
        return VF_UNKNOWN;
    struct vf__memo_weights *slot = vf__memo_weights(m, q);
    if (slot && slot->has_total)
        return slot->total;
    uint64_t sum = 0;
    if (!m->shared || !vf__shared_get(m->shared, q, &sum)) {
        struct recipe_ctx *pre = recipe_all(m, q);
        for (size_t i = 0; i < m->n_groups; i++)
            sum = vf__sat_add(sum, group_bytes(m, q, &m->groups[i], pre ? &pre[i] : NULL));
        vf__free(pre);
        if (m->shared)
            vf__shared_put(m->shared, q, sum);
    }
    if (slot) {
        slot->total = sum;
        slot->has_total = true;
        m->memo->n_weight_sums++;
    }
    return sum;
}

/* F-W-01 restricted to one layer (-1: the tensors outside the layers). */
uint64_t vf_model_layer_weight_bytes(const struct vf_model *m, const struct vf_quant *q,
                                     int32_t layer)
{
    if (!m || (!m->groups && m->n_groups))
        return VF_UNKNOWN;
    struct vf__memo_weights *slot = vf__memo_weights(m, q);
    if (slot && (slot->layer || memo_layers(m, q, slot)))
        return layer >= -1 && (size_t)(layer + 1) < slot->n_layer ? slot->layer[layer + 1] : 0;
    struct recipe_ctx *pre = recipe_all(m, q);
    uint64_t sum = 0;
    for (size_t i = 0; i < m->n_groups; i++)
        if (m->groups[i].layer == layer)
            sum = vf__sat_add(sum, group_bytes(m, q, &m->groups[i], pre ? &pre[i] : NULL));
    vf__free(pre);
    return sum;
}

unsigned vf_quant_bits(const struct vf_quant *q)
{
    switch (q->kind) {
    case VF_QK_AWQ:
    case VF_QK_GPTQ:
    case VF_QK_NF4:
        return 4;
    case VF_QK_FP8_BLOCK:
        return 8;
    default:
        break;
    }
    uint32_t elems, bytes;
    vf_dtype_block(q->dtype == VF_DT_DEFAULT ? VF_DT_BF16 : q->dtype, &elems, &bytes);
    return elems ? bytes * 8 / elems : 16;
}
