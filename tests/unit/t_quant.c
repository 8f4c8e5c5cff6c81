/* SPDX-License-Identifier: Apache-2.0 */
/*
 * t_quant.c - unit tests of dtype.c and quant.c: ggml block sizes, the --weights and
 * --kv-dtype parsers, and the weight storage formulas F-W-01..F-W-09 on hand-built models
 * (no config reader involved). Every expected number is derived in a comment.
 */
#include "th.h"

#include "internal.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ model builder */

#define MAXG 2048

struct mb {
    struct vf_model m;
    struct vf_tgroup g[MAXG];
};

/* n_tensors tensors of out x in elements, quantization blocks along `in`. */
static void add(struct mb *b, enum vf_tclass c, int layer, uint64_t out, uint64_t in,
                uint32_t ntens)
{
    assert_true(b->m.n_groups < MAXG);
    struct vf_tgroup *g = &b->g[b->m.n_groups++];
    g->cls = c;
    g->layer = layer;
    g->n_params = out * in * ntens;
    g->row_elems = in;
    g->n_tensors = ntens;
    b->m.params += g->n_params;
}

/* A 1-D group (norms, biases): n elements in n_tensors vectors. */
static void add1d(struct mb *b, enum vf_tclass c, int layer, uint64_t n, uint32_t ntens)
{
    struct vf_tgroup *g = &b->g[b->m.n_groups++];
    g->cls = c;
    g->layer = layer;
    g->n_params = n;
    g->row_elems = n;
    g->n_tensors = ntens;
    b->m.params += n;
}

struct dense_shape {
    uint32_t layers, hidden, heads, kv_heads, head_dim, ffn;
    uint64_t vocab;
    bool tied, qkv_bias, qk_norm;
};

/* A Llama/Qwen-style dense decoder, tensor by tensor as its checkpoint stores it. */
static struct mb *dense(const struct dense_shape *s)
{
    struct mb *b = calloc(1, sizeof *b);
    assert_non_null(b);
    struct vf_model *m = &b->m;
    m->groups = b->g;
    m->n_layers = s->layers;
    m->hidden = s->hidden;
    m->intermediate = s->ffn;
    m->n_heads = s->heads;
    m->n_kv_heads = s->kv_heads;
    m->head_dim = s->head_dim;
    m->vocab = s->vocab;
    m->tied_embeddings = s->tied;
    m->attn = VF_ATTN_GQA;
    m->native_dtype = VF_DT_BF16;
    uint64_t h = s->hidden, q = (uint64_t)s->heads * s->head_dim;
    uint64_t kv = (uint64_t)s->kv_heads * s->head_dim;
    add(b, VF_T_TOKEN_EMBD, -1, s->vocab, h, 1);
    if (!s->tied)
        add(b, VF_T_OUTPUT, -1, s->vocab, h, 1);
    add1d(b, VF_T_NORM, -1, h, 1);
    for (int i = 0; i < (int)s->layers; i++) {
        add(b, VF_T_ATTN_Q, i, q, h, 1);
        add(b, VF_T_ATTN_K, i, kv, h, 1);
        add(b, VF_T_ATTN_V, i, kv, h, 1);
        add(b, VF_T_ATTN_O, i, h, q, 1);
        add(b, VF_T_FFN_GATE, i, s->ffn, h, 1);
        add(b, VF_T_FFN_UP, i, s->ffn, h, 1);
        add(b, VF_T_FFN_DOWN, i, h, s->ffn, 1);
        add1d(b, VF_T_NORM, i, 2 * h, 2);
        if (s->qk_norm)
            add1d(b, VF_T_NORM, i, 2 * (uint64_t)s->head_dim, 2);
        if (s->qkv_bias)
            add1d(b, VF_T_BIAS, i, q + 2 * kv, 3);
    }
    return b;
}

/* meta-llama/Llama-3.1-8B: 32 layers, hidden 4096, 32/8 heads of 128, ffn 14336, vocab
 * 128256, untied. Params: embd + output 2 x 525,336,576; per layer q 16,777,216 + k, v
 * 4,194,304 + o 16,777,216 + gate, up, down 58,720,256 + norms 8,192 = 218,112,000;
 * final norm 4,096: 1,050,673,152 + 32 x 218,112,000 + 4,096 = 8,030,261,248. */
static const struct dense_shape llama31_8b = {32,    4096,   32,    8,     128,
                                              14336, 128256, false, false, false};
/* Qwen/Qwen3-8B: 36 layers, hidden 4096, 32/8 heads of 128, ffn 12288, vocab 151936,
 * untied, q_norm/k_norm. 8,190,735,360 params (= GGUF general total of the HF card). */
static const struct dense_shape qwen3_8b = {36,    4096,   32,    8,     128,
                                            12288, 151936, false, false, true};
/* Qwen/Qwen3-0.6B: 28 layers, hidden 1024, 16/8 heads of 128, ffn 3072, tied. */
static const struct dense_shape qwen3_06b = {28, 1024, 16, 8, 128, 3072, 151936, true, false, true};
/* Qwen/Qwen2.5-7B: 28 layers, hidden 3584, 28/4 heads of 128, ffn 18944, vocab 152064,
 * untied, q/k/v biases. */
static const struct dense_shape qwen25_7b = {28,    3584,   28,    4,    128,
                                             18944, 152064, false, true, false};
/* Qwen2.5-32B (deepseek-r1:32b distill): 64 layers, hidden 5120, 40/8 heads, ffn 27648. */
static const struct dense_shape qwen25_32b = {64,    5120,   40,    8,    128,
                                              27648, 152064, false, true, false};

static struct vf_quant parse(const char *s)
{
    struct vf_quant q;
    struct vf_error e;
    memset(&q, 0, sizeof q);
    assert_int_equal(vf_quant_parse(s, &q, &e), VF_OK);
    return q;
}

static uint64_t wbytes(const struct dense_shape *s, const char *scheme)
{
    struct mb *b = dense(s);
    struct vf_quant q = parse(scheme);
    uint64_t r = vf_model_weight_bytes(&b->m, &q);
    free(b);
    return r;
}

/* |a - b| / b <= ppm / 1e6 */
static void assert_close_ppm(uint64_t a, uint64_t b, uint64_t ppm)
{
    uint64_t d = a > b ? a - b : b - a;
    if (d * 1000000ull > b * ppm)
        fail_msg("%llu vs %llu: off by %llu (more than %llu ppm)", (unsigned long long)a,
                 (unsigned long long)b, (unsigned long long)d, (unsigned long long)ppm);
}

/* ------------------------------------------------------------ dtypes */

/* Block sizes from ggml/src/ggml-common.h (block_* structs and their static_asserts,
 * llama.cpp @ 01243c58), QK_K = 256, ggml_half = 2 bytes. */
static void test_dtype_blocks(void **state)
{
    (void)state;
    static const struct {
        enum vf_dtype t;
        const char *name;
        uint32_t elems, bytes;
    } want[] = {
        {VF_DT_F32, "fp32", 1, 4},
        {VF_DT_F16, "fp16", 1, 2},
        {VF_DT_BF16, "bf16", 1, 2},
        {VF_DT_FP8, "fp8", 1, 1},
        {VF_DT_INT8, "int8", 1, 1},
        {VF_DT_INT4, "int4", 2, 1},
        {VF_DT_NF4, "nf4", 2, 1},
        {VF_DT_MXFP4, "mxfp4", 32, 1 + 32 / 2},   /* block_mxfp4: e8m0 + qs[16] */
        {VF_DT_NVFP4, "nvfp4", 16, 1 + 16 / 2},   /* ggml: 64 elems, 4 + 32 = 36 B; 9/16 */
        {VF_DT_Q4_0, "q4_0", 32, 2 + 32 / 2},     /* d + qs[16] */
        {VF_DT_Q4_1, "q4_1", 32, 2 * 2 + 32 / 2}, /* d, m + qs[16] */
        {VF_DT_Q5_0, "q5_0", 32, 2 + 4 + 32 / 2}, /* d + qh[4] + qs[16] */
        {VF_DT_Q5_1, "q5_1", 32, 2 * 2 + 4 + 32 / 2},
        {VF_DT_Q8_0, "q8_0", 32, 2 + 32},
        {VF_DT_Q8_1, "q8_1", 32, 2 * 2 + 32},
        {VF_DT_Q2_K, "q2_k", 256, 2 * 2 + 256 / 16 + 256 / 4},
        {VF_DT_Q3_K, "q3_k", 256, 2 + 256 / 4 + 256 / 8 + 12},
        {VF_DT_Q4_K, "q4_k", 256, 2 * 2 + 12 + 256 / 2},
        {VF_DT_Q5_K, "q5_k", 256, 2 * 2 + 12 + 256 / 2 + 256 / 8},
        {VF_DT_Q6_K, "q6_k", 256, 2 + 256 / 16 + 3 * 256 / 4},
        {VF_DT_Q8_K, "q8_k", 256, 4 + 256 + 256 / 16 * 2},
        {VF_DT_IQ2_XXS, "iq2_xxs", 256, 2 + 256 / 8 * 2},
        {VF_DT_IQ2_XS, "iq2_xs", 256, 2 + 256 / 8 * 2 + 256 / 32},
        {VF_DT_IQ2_S, "iq2_s", 256, 2 + 256 / 4 + 256 / 16},
        {VF_DT_IQ3_XXS, "iq3_xxs", 256, 2 + 3 * (256 / 8)},
        {VF_DT_IQ3_S, "iq3_s", 256, 2 + 13 * (256 / 32) + 256 / 64},
        {VF_DT_IQ1_S, "iq1_s", 256, 2 + 256 / 8 + 256 / 16},
        {VF_DT_IQ1_M, "iq1_m", 256, 256 / 8 + 256 / 16 + 256 / 32},
        {VF_DT_IQ4_NL, "iq4_nl", 32, 2 + 32 / 2},
        {VF_DT_IQ4_XS, "iq4_xs", 256, 2 + 2 + 256 / 64 + 256 / 2},
        {VF_DT_TQ1_0, "tq1_0", 256, 2 + 256 / 64 + (256 - 4 * 256 / 64) / 5},
        {VF_DT_TQ2_0, "tq2_0", 256, 2 + 256 / 4},
    };
    assert_int_equal(sizeof want / sizeof want[0], VF_DT__COUNT - 1);
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        uint32_t e = 0, b = 0;
        vf_dtype_block(want[i].t, &e, &b);
        assert_string_equal(vf_dtype_name(want[i].t), want[i].name);
        assert_int_equal(e, want[i].elems);
        assert_int_equal(b, want[i].bytes);
    }
    assert_string_equal(vf_dtype_name(VF_DT_DEFAULT), "default");
    assert_string_equal(vf_dtype_name((enum vf_dtype)999), "unknown");
    uint32_t e = 7, b = 7;
    vf_dtype_block((enum vf_dtype)999, &e, &b);
    assert_int_equal(e, 0);
    assert_int_equal(b, 0);
    vf_dtype_block(VF_DT_Q4_K, NULL, NULL); /* NULL outputs are allowed */
}

/* F-W-02: ceil(n / block_elems) * block_bytes. */
static void test_dtype_bytes(void **state)
{
    (void)state;
    assert_u64(vf_dtype_bytes(VF_DT_Q4_K, 0), 0);
    assert_u64(vf_dtype_bytes(VF_DT_Q4_K, 1), 144); /* one partial block */
    assert_u64(vf_dtype_bytes(VF_DT_Q4_K, 256), 144);
    assert_u64(vf_dtype_bytes(VF_DT_Q4_K, 257), 288);
    assert_u64(vf_dtype_bytes(VF_DT_INT4, 3), 2); /* 1.5 B rounds up */
    assert_u64(vf_dtype_bytes(VF_DT_F16, 3), 6);
    assert_u64(vf_dtype_bytes(VF_DT_Q8_0, 4096), 128 * 34);
    assert_u64(vf_dtype_bytes(VF_DT_MXFP4, 2880), 90 * 17);
    assert_u64(vf_dtype_bytes(VF_DT_DEFAULT, 10), 20); /* DEFAULT sizes as 16-bit */
    assert_u64(vf_dtype_bytes(VF_DT_F32, UINT64_MAX / 2), VF_UNKNOWN);
    assert_u64(vf_dtype_bytes(VF_DT_F32, VF_UNKNOWN), VF_UNKNOWN);
    assert_u64(vf_dtype_bytes((enum vf_dtype)999, 1), VF_UNKNOWN);
}

/* ------------------------------------------------------------ parsers */

static void test_quant_parse_accepts(void **state)
{
    (void)state;
    static const struct {
        const char *in;
        enum vf_quant_kind kind;
        enum vf_dtype dtype;
        int ftype;
        uint32_t group;
        const char *name;
    } ok[] = {
        {"fp32", VF_QK_PLAIN, VF_DT_F32, 0, 0, "fp32"},
        {"F32", VF_QK_PLAIN, VF_DT_F32, 0, 0, "fp32"},
        {"BF16", VF_QK_PLAIN, VF_DT_BF16, 0, 0, "bf16"},
        {"fp16", VF_QK_PLAIN, VF_DT_F16, 0, 0, "fp16"},
        {"F16", VF_QK_PLAIN, VF_DT_F16, 0, 0, "fp16"},
        {"fp8", VF_QK_PLAIN, VF_DT_FP8, 0, 0, "fp8"},
        {"INT8", VF_QK_PLAIN, VF_DT_INT8, 0, 0, "int8"},
        {"int4", VF_QK_PLAIN, VF_DT_INT4, 0, 0, "int4"},
        {"AWQ", VF_QK_AWQ, VF_DT_INT4, 0, 128, "awq"},
        {"gptq", VF_QK_GPTQ, VF_DT_INT4, 0, 128, "gptq"},
        {"nf4", VF_QK_NF4, VF_DT_NF4, 0, 64, "nf4"},
        {"mxfp4", VF_QK_PLAIN, VF_DT_MXFP4, 0, 0, "mxfp4"},
        {"NVFP4", VF_QK_PLAIN, VF_DT_NVFP4, 0, 0, "nvfp4"},
        /* llama.cpp ftypes (include/llama.h LLAMA_FTYPE_MOSTLY_*) */
        {"q4_k_m", VF_QK_GGUF_FTYPE, VF_DT_Q4_K, 15, 0, "Q4_K_M"},
        {"Q4_K_S", VF_QK_GGUF_FTYPE, VF_DT_Q4_K, 14, 0, "Q4_K_S"},
        {"Q5_K_M", VF_QK_GGUF_FTYPE, VF_DT_Q5_K, 17, 0, "Q5_K_M"},
        {"Q5_K_S", VF_QK_GGUF_FTYPE, VF_DT_Q5_K, 16, 0, "Q5_K_S"},
        {"Q3_K_S", VF_QK_GGUF_FTYPE, VF_DT_Q3_K, 11, 0, "Q3_K_S"},
        {"Q3_K_M", VF_QK_GGUF_FTYPE, VF_DT_Q3_K, 12, 0, "Q3_K_M"},
        {"Q3_K_L", VF_QK_GGUF_FTYPE, VF_DT_Q3_K, 13, 0, "Q3_K_L"},
        {"Q2_K", VF_QK_GGUF_FTYPE, VF_DT_Q2_K, 10, 0, "Q2_K"},
        {"Q2_K_S", VF_QK_GGUF_FTYPE, VF_DT_Q2_K, 21, 0, "Q2_K_S"},
        {"q6_k", VF_QK_GGUF_FTYPE, VF_DT_Q6_K, 18, 0, "Q6_K"},
        {"q8_0", VF_QK_GGUF_FTYPE, VF_DT_Q8_0, 7, 0, "Q8_0"},
        {"Q4_0", VF_QK_GGUF_FTYPE, VF_DT_Q4_0, 2, 0, "Q4_0"},
        {"Q4_1", VF_QK_GGUF_FTYPE, VF_DT_Q4_1, 3, 0, "Q4_1"},
        {"Q5_0", VF_QK_GGUF_FTYPE, VF_DT_Q5_0, 8, 0, "Q5_0"},
        {"Q5_1", VF_QK_GGUF_FTYPE, VF_DT_Q5_1, 9, 0, "Q5_1"},
        {"IQ2_XXS", VF_QK_GGUF_FTYPE, VF_DT_IQ2_XXS, 19, 0, "IQ2_XXS"},
        {"IQ2_XS", VF_QK_GGUF_FTYPE, VF_DT_IQ2_XS, 20, 0, "IQ2_XS"},
        {"IQ2_S", VF_QK_GGUF_FTYPE, VF_DT_IQ2_XS, 28, 0, "IQ2_S"}, /* built on IQ2_XS */
        {"IQ2_M", VF_QK_GGUF_FTYPE, VF_DT_IQ2_S, 29, 0, "IQ2_M"},  /* built on IQ2_S */
        {"IQ3_XXS", VF_QK_GGUF_FTYPE, VF_DT_IQ3_XXS, 23, 0, "IQ3_XXS"},
        {"IQ3_XS", VF_QK_GGUF_FTYPE, VF_DT_IQ3_S, 22, 0, "IQ3_XS"},
        {"IQ3_S", VF_QK_GGUF_FTYPE, VF_DT_IQ3_S, 26, 0, "IQ3_S"},
        {"iq3_m", VF_QK_GGUF_FTYPE, VF_DT_IQ3_S, 27, 0, "IQ3_M"},
        {"IQ4_NL", VF_QK_GGUF_FTYPE, VF_DT_IQ4_NL, 25, 0, "IQ4_NL"},
        {"iq4_xs", VF_QK_GGUF_FTYPE, VF_DT_IQ4_XS, 30, 0, "IQ4_XS"},
        {"IQ1_S", VF_QK_GGUF_FTYPE, VF_DT_IQ1_S, 24, 0, "IQ1_S"},
        {"IQ1_M", VF_QK_GGUF_FTYPE, VF_DT_IQ1_M, 31, 0, "IQ1_M"},
        {"TQ1_0", VF_QK_GGUF_FTYPE, VF_DT_TQ1_0, 36, 0, "TQ1_0"},
        {"TQ2_0", VF_QK_GGUF_FTYPE, VF_DT_TQ2_0, 37, 0, "TQ2_0"},
        {"mxfp4_moe", VF_QK_GGUF_FTYPE, VF_DT_MXFP4, 38, 0, "MXFP4_MOE"},
        /* bare GGUF types that are no ftype: PLAIN of that type */
        {"q4_k", VF_QK_PLAIN, VF_DT_Q4_K, 0, 0, "q4_k"},
        {"Q5_K", VF_QK_PLAIN, VF_DT_Q5_K, 0, 0, "q5_k"},
        {"q3_k", VF_QK_PLAIN, VF_DT_Q3_K, 0, 0, "q3_k"},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        struct vf_quant q = parse(ok[i].in);
        assert_int_equal(q.kind, ok[i].kind);
        assert_int_equal(q.dtype, ok[i].dtype);
        assert_int_equal(q.ftype, ok[i].ftype);
        assert_int_equal(q.group, ok[i].group);
        assert_int_equal(q.classes, 0);
        assert_string_equal(q.name, ok[i].name);
    }
}

static void test_quant_parse_rejects(void **state)
{
    (void)state;
    static const char *bad[] = {"q4km", "", "Q4_K_X", "int3", "bf16 ", "gguf", "default"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct vf_quant q;
        struct vf_error e;
        memset(&q, 0x5a, sizeof q);
        memset(&e, 0, sizeof e);
        assert_int_equal(vf_quant_parse(bad[i], &q, &e), VF_EINVAL);
        assert_int_equal(e.code, VF_EINVAL);
        assert_non_null(strstr(e.msg, "unknown weight format '"));
        assert_non_null(strstr(e.msg, bad[i]));
        assert_non_null(strstr(e.msg,
                               "accepted: fp32, bf16, fp16, fp8, int8, bnb-int8, int4, awq, gptq, "
                               "nf4, mxfp4, nvfp4, or a GGUF type such as Q4_K_M"));
        assert_int_equal(((unsigned char *)&q)[0], 0x5a); /* untouched */
    }
    struct vf_error e;
    assert_int_equal(vf_quant_parse("q4km", NULL, NULL), VF_EINVAL);
    assert_int_equal(vf_quant_parse(NULL, NULL, &e), VF_EINVAL);
    struct vf_quant q;
    assert_int_equal(vf_quant_parse("q4km", &q, NULL), VF_EINVAL); /* err may be NULL */
}

static void test_kv_dtype_parse(void **state)
{
    (void)state;
    static const struct {
        const char *in;
        enum vf_dtype t;
    } ok[] = {
        {"fp16", VF_DT_F16},  {"F16", VF_DT_F16},      {"bf16", VF_DT_BF16},
        {"fp8", VF_DT_FP8},   {"FP8_E4M3", VF_DT_FP8}, {"fp8_e5m2", VF_DT_FP8},
        {"q8_0", VF_DT_Q8_0}, {"Q4_0", VF_DT_Q4_0},    {"q4_1", VF_DT_Q4_1},
        {"q5_0", VF_DT_Q5_0}, {"q5_1", VF_DT_Q5_1},    {"iq4_nl", VF_DT_IQ4_NL},
        {"f32", VF_DT_F32},   {"fp32", VF_DT_F32},     {"auto", VF_DT_DEFAULT},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        enum vf_dtype t = VF_DT__COUNT;
        assert_int_equal(vf_kv_dtype_parse(ok[i].in, &t, NULL), VF_OK);
        assert_int_equal(t, ok[i].t);
    }
    struct vf_error e;
    enum vf_dtype t = VF_DT_Q8_0;
    assert_int_equal(vf_kv_dtype_parse("q4_k", &t, &e), VF_EINVAL);
    assert_int_equal(t, VF_DT_Q8_0);
    assert_non_null(strstr(e.msg, "unknown KV cache type 'q4_k'"));
    assert_non_null(strstr(e.msg, "q8_0"));
    assert_int_equal(vf_kv_dtype_parse(NULL, &t, &e), VF_EINVAL);
}

/* ------------------------------------------------------------ plain schemes */

static void test_llama_plain(void **state)
{
    (void)state;
    struct mb *b = dense(&llama31_8b);
    assert_u64(b->m.params, 8030261248ull);
    free(b);
    /* F-W-03: 2 B x 8,030,261,248 */
    assert_u64(wbytes(&llama31_8b, "bf16"), 16060522496ull);
    assert_u64(wbytes(&llama31_8b, "fp16"), 16060522496ull);
    /* F-W-03: 4 B x 8,030,261,248 */
    assert_u64(wbytes(&llama31_8b, "fp32"), 32121044992ull);
    /*
     * F-W-04a fp8: the 224 linear tensors (7 x 32 layers) hold 32 x (2 x 16,777,216 +
     * 2 x 4,194,304 + 3 x 58,720,256) = 6,979,321,856 params at 1 B, plus 224 x 4 B of
     * per-tensor scales; embd + output + norms = 1,050,939,392 params stay at 2 B:
     * 6,979,321,856 + 896 + 2,101,878,784 = 9,081,201,536.
     */
    assert_u64(wbytes(&llama31_8b, "fp8"), 9081201536ull);
    /* F-W-04b int8: 1 B/param + 4 B per output row. Rows per layer: q 4096 + k 1024 +
     * v 1024 + o 4096 + gate 14336 + up 14336 + down 4096 = 43,008; x 32 = 1,376,256 rows
     * x 4 B = 5,505,024. */
    assert_u64(wbytes(&llama31_8b, "int8"), 6979321856ull + 5505024ull + 2101878784ull);
    /* F-W-04c int4: 0.5 B/param + 2 B per 128 inputs per row = n/2 + n/64:
     * 3,489,660,928 + 109,051,904 = 3,598,712,832, + 2,101,878,784. */
    assert_u64(wbytes(&llama31_8b, "int4"), 3598712832ull + 2101878784ull);
    /* F-W-04d mxfp4: 17 B per 32 = 6,979,321,856 / 32 x 17 = 3,707,764,736. */
    assert_u64(wbytes(&llama31_8b, "mxfp4"), 3707764736ull + 2101878784ull);
    /* F-W-04e nvfp4: 9 B per 16 = 3,925,868,544, + 224 x 4 B global scales. */
    assert_u64(wbytes(&llama31_8b, "nvfp4"), 3925868544ull + 896u + 2101878784ull);
    /* a bare GGUF type: linears at Q4_K (144 B / 256): 3,925,868,544 */
    assert_u64(wbytes(&llama31_8b, "q4_k"), 3925868544ull + 2101878784ull);
}

static void test_llama_awq_gptq_nf4(void **state)
{
    (void)state;
    /*
     * F-W-05 AWQ g128: per linear n/2 (qweight) + in/128 x out x 2 (fp16 scales) +
     * in/128 x out / 2 (packed zeros) = n x (1/2 + 2.5/128):
     * 3,489,660,928 + 54,525,952 x 2.5 = 3,625,975,808; rest 2,101,878,784 at 16 bit.
     */
    assert_u64(wbytes(&llama31_8b, "awq"), 5727854592ull);
    /* GPTQ adds g_idx, int32 per input element per tensor: per layer 6 tensors with in
     * 4096 (q, k, v, o, gate, up) and down with 14336: (6 x 4096 + 14336) x 4 = 155,648;
     * x 32 = 4,980,736. */
    assert_u64(wbytes(&llama31_8b, "gptq"), 5727854592ull + 4980736ull);
    /*
     * F-W-06 NF4, per tensor of n_t: n_t/2 + n_t/64 (uint8 absmax per 64) + 4 x
     * ceil(n_t/64/256) (fp32 per 256 absmax) + 68 (fp32 offset + 16-entry fp32 code).
     * Every n_t here is a multiple of 16384, so summed over the 224 linears:
     * 3,489,660,928 + 109,051,904 + 6,979,321,856 / 16384 x 4 (= 1,703,936) + 224 x 68
     * (= 15,232) = 3,600,432,000; embd, output and norms stay 16-bit: 2,101,878,784.
     */
    assert_u64(wbytes(&llama31_8b, "nf4"), 3600432000ull + 2101878784ull);
    assert_u64(wbytes(&llama31_8b, "nf4"), 5702310784ull);
}

/* ------------------------------------------------------------ GGUF recipes */

/*
 * F-W-08 Q4_K_M on the Llama-3.1-8B shape:
 *   token_embd Q4_K (untied, no special case): 525,336,576 / 256 x 144 = 295,501,824
 *   output Q6_K: 525,336,576 / 256 x 210 = 430,940,160
 *   per layer all Q4_K: (16,777,216 x 2 + 4,194,304 x 2 + 58,720,256 x 3) / 256 x 144
 *     = 122,683,392; attn_v and ffn_down move to Q6_K on the 16 use_more_bits layers
 *     (i < 4, i >= 28, (i - 4) % 3 == 2: 6, 9, ..., 27) for + 1,081,344 + 15,138,816
 *   layers: 32 x 122,683,392 + 16 x 16,220,160 = 4,185,391,104
 *   norms F32: (32 x 8,192 + 4,096) x 4 = 1,064,960
 *   total 4,912,898,048.
 */
static void test_llama_q4_k_m(void **state)
{
    (void)state;
    assert_u64(wbytes(&llama31_8b, "Q4_K_M"), 4912898048ull);
    struct mb *b = dense(&llama31_8b);
    struct vf_quant q = parse("Q4_K_M");
    /* layer 0 uses more bits: 122,683,392 + 16,220,160 + 32,768 (norms F32) */
    assert_u64(vf_model_layer_weight_bytes(&b->m, &q, 0), 138936320ull);
    /* layer 4: (4 - 4) % 3 == 0, plain Q4_K */
    assert_u64(vf_model_layer_weight_bytes(&b->m, &q, 4), 122683392ull + 32768u);
    assert_u64(vf_model_layer_weight_bytes(&b->m, &q, 6), 138936320ull);
    /* outside the layers: embd + output + final norm 16,384 */
    assert_u64(vf_model_layer_weight_bytes(&b->m, &q, -1), 295501824ull + 430940160ull + 16384u);
    assert_u64(vf_model_layer_weight_bytes(&b->m, &q, 99), 0);
    /* the layers and the rest add up to the whole (F-W-01) */
    uint64_t sum = vf_model_layer_weight_bytes(&b->m, &q, -1);
    for (int i = 0; i < 32; i++)
        sum += vf_model_layer_weight_bytes(&b->m, &q, i);
    assert_u64(sum, vf_model_weight_bytes(&b->m, &q));
    free(b);
}

/* F-W-08 Q8_0: every 2-D tensor at Q8_0 (output stays Q8_0), norms F32:
 * (8,030,261,248 - 266,240) / 32 x 34 + 266,240 x 4 = 8,531,869,696 + 1,064,960. */
static void test_llama_q8_0(void **state)
{
    (void)state;
    assert_u64(wbytes(&llama31_8b, "Q8_0"), 8532934656ull);
    /* Q6_K: all 2-D at Q6_K: 8,029,995,008 / 256 x 210 + 1,064,960 */
    assert_u64(wbytes(&llama31_8b, "Q6_K"), 6588170240ull);
    /* Q5_K_M: base Q5_K (176), output Q6_K, attn_v/ffn_down Q6_K on the 16 layers */
    assert_u64(wbytes(&llama31_8b, "Q5_K_M"), 5725151232ull);
    /* Q4_K_S: attn_v Q5_K on i < 4, ffn_down Q5_K on i < 32/8 = 4; output Q6_K:
     * 4,912,898,048 - 16 x 16,220,160 + 4 x (4,194,304 + 58,720,256) / 256 x 32
     * = 4,653,375,488 + 31,457,280 = 4,684,832,768 */
    assert_u64(wbytes(&llama31_8b, "Q4_K_S"), 4684832768ull);
    /* F16 ftype = plain fp16 here (norms 16-bit) */
    assert_u64(wbytes(&llama31_8b, "F16"), 16060522496ull);
}

/*
 * Published GGUF files (file = tensor data + header; the header holds the tokenizer).
 * The residual file - estimate is the same for every quantization of one model, which
 * is what a header is: 5,956,4xx B for the Qwen 151k-token tokenizer, 7,835,968 B for the
 * Llama-3 128k-token one (256k merges). We check the weight bytes to within 0.5 % of the
 * file and the residual to within a few KB of the header.
 */
static void check_published(const struct dense_shape *s, const char *ft, uint64_t file,
                            uint64_t header)
{
    uint64_t est = wbytes(s, ft);
    assert_true(est < file);
    assert_close_ppm(est, file, 5000);        /* within 0.5 % of the file */
    assert_close_ppm(est + header, file, 20); /* and the residual is the header */
}

static void test_published_gguf(void **state)
{
    (void)state;
    /* Qwen/Qwen3-8B-GGUF @ 7c41481f, Qwen3-8B-Q4_K_M.gguf: 5,027,783,488 B (sha256
     * d98cdcbd...5785). Estimate 5,021,827,072 (-0.118 %). Other files of the same repo
     * (HF siblings listing): Q5_0 5,720,761,152, Q5_K_M 5,851,112,224, Q6_K 6,725,899,040,
     * Q8_0 8,709,518,144. Header = Q8_0 file - estimate = 5,956,416 B. */
    const uint64_t qwen_hdr = 5956416ull;
    check_published(&qwen3_8b, "Q4_K_M", 5027783488ull, qwen_hdr);
    check_published(&qwen3_8b, "Q5_0", 5720761152ull, qwen_hdr);
    check_published(&qwen3_8b, "Q5_K_M", 5851112224ull, qwen_hdr);
    check_published(&qwen3_8b, "Q6_K", 6725899040ull, qwen_hdr);
    check_published(&qwen3_8b, "Q8_0", 8709518144ull, qwen_hdr);
    assert_u64(wbytes(&qwen3_8b, "Q8_0"), 8709518144ull - qwen_hdr);
    /* Qwen/Qwen2.5-7B-Instruct-GGUF qwen2.5-7b-instruct-q4_k_m.gguf: 4,683,074,336 B
     * (HF tree API listing). Estimate 4,677,120,000 (-0.127 %), residual 5,954,336. */
    check_published(&qwen25_7b, "Q4_K_M", 4683074336ull, 5954336ull);
    /* unsloth/Qwen3-0.6B-GGUF @ 50968a44, Qwen3-0.6B-Q4_K_M.gguf: 396,705,472 B. Tied
     * embeddings: token_embd takes output's Q6_K. The 6 MB header is 1.5 % of this small
     * file, so only the residual check applies: 390,753,280 + 5,956,416 = 396,709,696. */
    uint64_t est = wbytes(&qwen3_06b, "Q4_K_M");
    assert_u64(est, 390753280ull);
    assert_close_ppm(est + qwen_hdr, 396705472ull, 20);
    /* Ollama library llama3.1:8b (Q4_K_M, quantized with llama.cpp): 4,920,734,016 B.
     * Estimate 4,912,898,048 (-0.159 %); residual 7,835,968 = the Llama-3 tokenizer. */
    check_published(&llama31_8b, "Q4_K_M", 4920734016ull, 7835968ull);
}

/* llama.cpp's own load log, ollama/ollama#9221 (64-layer Qwen2 32B Q4_K_M, all offloaded):
 * CPU model buffer 417.66 MiB + CUDA0 model buffer 18508.35 MiB = 18926.01 MiB. The model
 * buffers are the tensor data, so the estimate must match to the printed 0.01 MiB. */
static void test_llamacpp_model_buffer(void **state)
{
    (void)state;
    uint64_t est = wbytes(&qwen25_32b, "Q4_K_M");
    assert_u64(est, 19845357568ull); /* 18926.0078 MiB */
    uint64_t printed = 1892601ull;   /* centi-MiB */
    uint64_t ours = (est * 100 + (1u << 19)) >> 20;
    assert_true(ours + 1 >= printed && ours <= printed + 1);
}

/* F-W-09: k-quant rows not divisible by 256 fall back to 32-blocks, else F16. */
static void test_gguf_fallback(void **state)
{
    (void)state;
    struct mb *b =
        dense(&(struct dense_shape){8, 2880, 64, 8, 64, 2880, 1000, false, false, false});
    struct vf_quant q = parse("Q4_K_M");
    /* attn_q of layer 4 (8 layers: more bits on 0, 7, and (i-1)%3==2: 3, 6): 4096 x 2880,
     * Q4_K -> Q5_0: 4096 rows x 90 blocks x 22 B */
    const struct vf_tgroup *gq = NULL, *gv = NULL, *out = NULL;
    for (size_t i = 0; i < b->m.n_groups; i++) {
        const struct vf_tgroup *g = &b->g[i];
        if (g->layer == 4 && g->cls == VF_T_ATTN_Q)
            gq = g;
        if (g->layer == 0 && g->cls == VF_T_ATTN_V)
            gv = g;
        if (g->cls == VF_T_OUTPUT)
            out = g;
    }
    assert_u64(vf__quant_group_bytes(&b->m, &q, gq), 4096u * 90 * 22);
    /* attn_v of layer 0 wants Q6_K -> Q8_0: 512 rows x 90 x 34 */
    assert_u64(vf__quant_group_bytes(&b->m, &q, gv), 512u * 90 * 34);
    /* output: 2880 % 256 != 0 -> Q8_0 directly: 1000 x 90 x 34 */
    assert_u64(vf__quant_group_bytes(&b->m, &q, out), 1000u * 90 * 34);
    free(b);
    /* rows of 100 elements: not even a 32-multiple -> F16 */
    struct mb *c = dense(&(struct dense_shape){1, 100, 1, 1, 100, 100, 10, false, false, false});
    assert_u64(vf__quant_group_bytes(&c->m, &q, &c->g[3]), 100u * 100 * 2); /* attn_q */
    free(c);
}

/* F-W-08 for GQA >= 4 and the low-bit recipes (Qwen2.5-7B: 28/4 heads, n_gqa = 7). */
static void test_gguf_low_bit(void **state)
{
    (void)state;
    struct mb *b = dense(&qwen25_7b);
    const struct vf_tgroup *v = NULL, *emb = NULL, *down0 = NULL;
    for (size_t i = 0; i < b->m.n_groups; i++) {
        if (b->g[i].layer == 10 && b->g[i].cls == VF_T_ATTN_V)
            v = &b->g[i];
        if (b->g[i].cls == VF_T_TOKEN_EMBD)
            emb = &b->g[i];
        if (b->g[i].layer == 0 && b->g[i].cls == VF_T_FFN_DOWN)
            down0 = &b->g[i];
    }
    /* attn_v: 512 x 3584 = 1,835,008 elems = 7,168 blocks of 256 */
    struct vf_quant q = parse("Q2_K");
    assert_u64(vf__quant_group_bytes(&b->m, &q, v), 7168u * 144); /* gqa >= 4 -> Q4_K */
    q = parse("IQ2_XXS");
    assert_u64(vf__quant_group_bytes(&b->m, &q, v), 7168u * 144);           /* Q4_K */
    assert_u64(vf__quant_group_bytes(&b->m, &q, emb), 152064ull * 14 * 84); /* Q2_K */
    /* ffn_down 3584 x 18944: 265,216 blocks; first eighth (i < 3) at Q2_K */
    assert_u64(vf__quant_group_bytes(&b->m, &q, down0), 265216ull * 84);
    q = parse("IQ4_XS");
    assert_u64(vf__quant_group_bytes(&b->m, &q, v), 7168u * 176);         /* gqa >= 4 -> Q5_K */
    assert_u64(vf__quant_group_bytes(&b->m, &q, down0), 265216ull * 176); /* no imatrix */
    q = parse("Q3_K_M");
    assert_u64(vf__quant_group_bytes(&b->m, &q, v), 7168u * 144); /* i_wv >= 2 -> Q4_K */
    q = parse("IQ2_M");
    assert_u64(vf__quant_group_bytes(&b->m, &q, emb), 152064ull * 14 * 110); /* IQ3_S */
    q = parse("TQ1_0");
    assert_u64(vf__quant_group_bytes(&b->m, &q, emb), 152064ull * 14 * 144); /* Q4_K */
    /* the bias and norms are F32 in every recipe: 4608 x 4 */
    assert_u64(vf__quant_group_bytes(&b->m, &q, &b->g[3 + 8]), 4608u * 4);
    assert_int_equal(b->g[3 + 8].cls, VF_T_BIAS);
    free(b);
}

/* ------------------------------------------------------------ MoE: gpt-oss, DeepSeek */

/* gpt-oss-20b-shaped: 24 layers, hidden 2880, 64 heads x 64, 8 kv heads, 32 experts of
 * 2880 (gate, up, down), router 32 x 2880, vocab 201088, untied, attention sinks. */
static struct mb *gpt_oss(void)
{
    struct mb *b = calloc(1, sizeof *b);
    assert_non_null(b);
    struct vf_model *m = &b->m;
    m->groups = b->g;
    m->n_layers = 24;
    m->hidden = 2880;
    m->n_heads = 64;
    m->n_kv_heads = 8;
    m->head_dim = 64;
    m->n_experts = 32;
    m->n_experts_used = 4;
    m->attn = VF_ATTN_GQA;
    m->native_dtype = VF_DT_BF16;
    m->native.kind = VF_QK_PLAIN;
    m->native.dtype = VF_DT_MXFP4;
    m->native.classes =
        (1u << VF_T_FFN_GATE_EXP) | (1u << VF_T_FFN_UP_EXP) | (1u << VF_T_FFN_DOWN_EXP);
    add(b, VF_T_TOKEN_EMBD, -1, 201088, 2880, 1);
    add(b, VF_T_OUTPUT, -1, 201088, 2880, 1);
    add1d(b, VF_T_NORM, -1, 2880, 1);
    for (int i = 0; i < 24; i++) {
        add(b, VF_T_ATTN_Q, i, 4096, 2880, 1);
        add(b, VF_T_ATTN_K, i, 512, 2880, 1);
        add(b, VF_T_ATTN_V, i, 512, 2880, 1);
        add(b, VF_T_ATTN_O, i, 2880, 4096, 1);
        add(b, VF_T_FFN_GATE_EXP, i, 2880, 2880, 32);
        add(b, VF_T_FFN_UP_EXP, i, 2880, 2880, 32);
        add(b, VF_T_FFN_DOWN_EXP, i, 2880, 2880, 32);
        add(b, VF_T_ROUTER, i, 32, 2880, 1);
        add1d(b, VF_T_NORM, i, 2 * 2880, 2);
        add1d(b, VF_T_BIAS, i, 64, 1);
    }
    return b;
}

static void test_gpt_oss_mxfp4(void **state)
{
    (void)state;
    struct mb *b = gpt_oss();
    /*
     * Native MXFP4 on the experts only (F-W-04d with a class mask):
     * experts per layer 3 x 32 x 2880 x 2880 = 796,262,400 elems / 32 x 17 = 423,014,400;
     * x 24 = 10,152,345,600. Everything else bf16: embd + output 2 x 579,133,440;
     * per layer attn 4096x2880 x 2 + 512x2880 x 2 = 26,542,080, router 92,160,
     * norms 5,760, sinks 64 = 26,640,064; x 24 = 639,361,536; final norm 2,880:
     * (1,158,266,880 + 639,361,536 + 2,880) x 2 = 3,595,262,592.
     */
    assert_u64(vf_model_weight_bytes(&b->m, NULL), 10152345600ull + 3595262592ull);
    struct vf_quant native = {0};
    assert_u64(vf_model_weight_bytes(&b->m, &native), 10152345600ull + 3595262592ull);
    /* MXFP4_MOE GGUF: experts MXFP4 (same bytes), every other 2-D tensor Q8_0
     * (2880 = 90 blocks of 32): (1,158,266,880 + 24 x 26,542,080) / 32 x 34
     * = 1,230,658,560 + 676,823,040; router, norms, sinks F32:
     * 24 x (92,160 + 5,760 + 64) x 4 + 2,880 x 4 = 9,406,464 + 11,520. */
    struct vf_quant q = parse("MXFP4_MOE");
    assert_u64(vf_model_weight_bytes(&b->m, &q),
               10152345600ull + 1230658560ull + 676823040ull + 9406464ull + 11520u);
    /* bf16 for the whole model: 2 B x every param */
    q = parse("bf16");
    assert_u64(vf_model_weight_bytes(&b->m, &q), 2 * b->m.params);
    free(b);
}

/* F-W-07: DeepSeek-V3 FP8 with 128x128 fp32 block scales (weight_scale_inv). */
static void test_fp8_block(void **state)
{
    (void)state;
    struct mb *b = calloc(1, sizeof *b);
    assert_non_null(b);
    b->m.groups = b->g;
    b->m.attn = VF_ATTN_MLA;
    b->m.n_layers = 61;
    b->m.n_experts = 256;
    b->m.native_dtype = VF_DT_BF16;
    b->m.native.kind = VF_QK_FP8_BLOCK;
    b->m.native.dtype = VF_DT_FP8;
    add(b, VF_T_ATTN_Q, 3, 24576, 1536, 1); /* q_b_proj */
    add(b, VF_T_ATTN_K, 3, 576, 7168, 1);   /* kv_a_proj_with_mqa */
    add(b, VF_T_FFN_GATE_EXP, 3, 2048, 7168, 256);
    add(b, VF_T_ROUTER, 3, 256, 7168, 1);
    add(b, VF_T_TOKEN_EMBD, -1, 129280, 7168, 1);
    add1d(b, VF_T_NORM, 3, 7168, 1);
    /* q_b: 37,748,736 B + 192 x 12 scales x 4 = 9,216 */
    assert_u64(vf__quant_group_bytes(&b->m, NULL, &b->g[0]), 37748736ull + 9216u);
    /* kv_a: 4,128,768 B + ceil(576/128) = 5 x 56 = 280 scales x 4 = 1,120 */
    assert_u64(vf__quant_group_bytes(&b->m, NULL, &b->g[1]), 4128768ull + 1120u);
    /* 256 experts of 2048 x 7168: 3,758,096,384 B + 256 x 16 x 56 x 4 = 917,504 */
    assert_u64(vf__quant_group_bytes(&b->m, NULL, &b->g[2]), 3758096384ull + 917504ull);
    /* the router (gate), embeddings and norms stay bf16 */
    assert_u64(vf__quant_group_bytes(&b->m, NULL, &b->g[3]), 256u * 7168 * 2);
    assert_u64(vf__quant_group_bytes(&b->m, NULL, &b->g[4]), 129280ull * 7168 * 2);
    assert_u64(vf__quant_group_bytes(&b->m, NULL, &b->g[5]), 7168u * 2);
    free(b);
}

/* ------------------------------------------------------------ edges */

static void test_edges(void **state)
{
    (void)state;
    struct vf_quant q = parse("bf16");
    assert_u64(vf_model_weight_bytes(NULL, &q), VF_UNKNOWN);
    struct vf_model empty;
    memset(&empty, 0, sizeof empty);
    assert_u64(vf_model_weight_bytes(&empty, &q), VF_UNKNOWN); /* no groups: unknown */
    assert_u64(vf_model_layer_weight_bytes(&empty, &q, 0), 0);
    assert_u64(vf__quant_group_bytes(&empty, &q, NULL), VF_UNKNOWN);
    /* overflow saturates to VF_UNKNOWN */
    struct mb *b = calloc(1, sizeof *b);
    assert_non_null(b);
    b->m.groups = b->g;
    add(b, VF_T_ATTN_Q, 0, (uint64_t)1 << 31, (uint64_t)1 << 31, 1); /* 2^62 params */
    add(b, VF_T_ATTN_Q, 1, (uint64_t)1 << 31, (uint64_t)1 << 31, 1);
    assert_u64(vf_model_weight_bytes(&b->m, &q), VF_UNKNOWN);
    q = parse("fp32");
    assert_u64(vf__quant_group_bytes(&b->m, &q, &b->g[0]), VF_UNKNOWN);
    q = parse("Q4_K_M");
    assert_true(vf__quant_group_bytes(&b->m, &q, &b->g[0]) != VF_UNKNOWN); /* 2^62 x 9/16 */
    assert_u64(vf_model_weight_bytes(&b->m, &q), 2 * 9 * ((uint64_t)1 << 58));
    /* an unset native scheme is the checkpoint's torch_dtype */
    b->m.n_groups = 0;
    b->m.params = 0;
    add(b, VF_T_ATTN_Q, 0, 8, 16, 1);
    b->m.native_dtype = VF_DT_F32;
    assert_u64(vf_model_weight_bytes(&b->m, NULL), 8 * 16 * 4);
    b->m.native_dtype = VF_DT_DEFAULT;
    assert_u64(vf_model_weight_bytes(&b->m, NULL), 8 * 16 * 2);
    /* row_elems 0: the whole tensor is one row */
    b->g[0].row_elems = 0;
    memset(&q, 0, sizeof q);
    q.kind = VF_QK_PLAIN;
    q.dtype = VF_DT_Q4_0;
    assert_u64(vf_model_weight_bytes(&b->m, &q), 4 * 18);
    /* GGUF recipes keep a 1-row tensor as it is in the source file: F32 */
    q = parse("Q4_0");
    assert_u64(vf_model_weight_bytes(&b->m, &q), 128 * 4);
    free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dtype_blocks),
        cmocka_unit_test(test_dtype_bytes),
        cmocka_unit_test(test_quant_parse_accepts),
        cmocka_unit_test(test_quant_parse_rejects),
        cmocka_unit_test(test_kv_dtype_parse),
        cmocka_unit_test(test_llama_plain),
        cmocka_unit_test(test_llama_awq_gptq_nf4),
        cmocka_unit_test(test_llama_q4_k_m),
        cmocka_unit_test(test_llama_q8_0),
        cmocka_unit_test(test_published_gguf),
        cmocka_unit_test(test_llamacpp_model_buffer),
        cmocka_unit_test(test_gguf_fallback),
        cmocka_unit_test(test_gguf_low_bit),
        cmocka_unit_test(test_gpt_oss_mxfp4),
        cmocka_unit_test(test_fp8_block),
        cmocka_unit_test(test_edges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
