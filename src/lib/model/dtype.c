/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dtype.c - storage types of weights and KV cache: their names, their exact block sizes
 * (VF_DTYPE_MAP, checked against ggml's type traits), and the parsers of --weights/--quant
 * and --kv-dtype. Byte sizes are exact rationals: block_bytes per block_elems elements.
 */
#include "internal.h"

#include <stdio.h>
#include <string.h>

struct dtype_info {
    const char *name;
    uint32_t elems;
    uint32_t bytes;
};

/* Index = enum vf_dtype. VF_DT_DEFAULT sizes as 16-bit: "the model's own" is bf16/fp16 for
 * every model we know, and a caller that needs exactness resolves DEFAULT first. */
static const struct dtype_info dtypes[VF_DT__COUNT] = {[VF_DT_DEFAULT] = {"default", 1, 2},
#define VF__DT_INFO(id, nm, be, bb) [VF_DT_##id] = {nm, be, bb},
                                                       VF_DTYPE_MAP(VF__DT_INFO)
#undef VF__DT_INFO
};

const char *vf_dtype_name(enum vf_dtype t)
{
    if ((unsigned)t >= VF_DT__COUNT)
        return "unknown";
    return dtypes[t].name;
}

void vf_dtype_block(enum vf_dtype t, uint32_t *elems, uint32_t *bytes)
{
    uint32_t e = 0, b = 0;
    if ((unsigned)t < VF_DT__COUNT) {
        e = dtypes[t].elems;
        b = dtypes[t].bytes;
    }
    if (elems)
        *elems = e;
    if (bytes)
        *bytes = b;
}

/* F-W-02 for one run of n elements: ceil(n / block_elems) * block_bytes. */
uint64_t vf_dtype_bytes(enum vf_dtype t, uint64_t n)
{
    if ((unsigned)t >= VF_DT__COUNT || n == VF_UNKNOWN)
        return VF_UNKNOWN;
    return vf__sat_mul(vf__div_ceil(n, dtypes[t].elems), dtypes[t].bytes);
}

/* ------------------------------------------------------------ --weights parser */

/* llama.cpp's file types (include/llama.h enum llama_ftype) and the ggml type each one is
 * built on (src/llama-quant.cpp llama_ftype_get_default_type). As a --quant these names
 * mean the recipe, not the bare type: "Q6_K" is LLAMA_FTYPE_MOSTLY_Q6_K. */
static const struct ftype_info {
    const char *name;
    int ftype;
    enum vf_dtype base;
} ftypes[] = {
    {"Q4_0", 2, VF_DT_Q4_0},        {"Q4_1", 3, VF_DT_Q4_1},      {"Q8_0", 7, VF_DT_Q8_0},
    {"Q5_0", 8, VF_DT_Q5_0},        {"Q5_1", 9, VF_DT_Q5_1},      {"Q2_K", 10, VF_DT_Q2_K},
    {"Q3_K_S", 11, VF_DT_Q3_K},     {"Q3_K_M", 12, VF_DT_Q3_K},   {"Q3_K_L", 13, VF_DT_Q3_K},
    {"Q4_K_S", 14, VF_DT_Q4_K},     {"Q4_K_M", 15, VF_DT_Q4_K},   {"Q5_K_S", 16, VF_DT_Q5_K},
    {"Q5_K_M", 17, VF_DT_Q5_K},     {"Q6_K", 18, VF_DT_Q6_K},     {"IQ2_XXS", 19, VF_DT_IQ2_XXS},
    {"IQ2_XS", 20, VF_DT_IQ2_XS},   {"Q2_K_S", 21, VF_DT_Q2_K},   {"IQ3_XS", 22, VF_DT_IQ3_S},
    {"IQ3_XXS", 23, VF_DT_IQ3_XXS}, {"IQ1_S", 24, VF_DT_IQ1_S},   {"IQ4_NL", 25, VF_DT_IQ4_NL},
    {"IQ3_S", 26, VF_DT_IQ3_S},     {"IQ3_M", 27, VF_DT_IQ3_S},   {"IQ2_S", 28, VF_DT_IQ2_XS},
    {"IQ2_M", 29, VF_DT_IQ2_S},     {"IQ4_XS", 30, VF_DT_IQ4_XS}, {"IQ1_M", 31, VF_DT_IQ1_M},
    {"TQ1_0", 36, VF_DT_TQ1_0},     {"TQ2_0", 37, VF_DT_TQ2_0},   {"MXFP4_MOE", 38, VF_DT_MXFP4},
};

/* The plain names. "f16"/"bf16" are also llama.cpp ftypes (1, 32); as a --weights they
 * mean the plain 16-bit storage, which differs from the GGUF F16 recipe only in the norms
 * (16-bit here, F32 in a GGUF file): a few hundred KB on an 8B model. */
static const struct plain_info {
    const char *name;
    const char *canon;
    enum vf_quant_kind kind;
    enum vf_dtype dtype;
    uint32_t group;
} plains[] = {
    {"fp32", "fp32", VF_QK_PLAIN, VF_DT_F32, 0},
    {"f32", "fp32", VF_QK_PLAIN, VF_DT_F32, 0},
    {"bf16", "bf16", VF_QK_PLAIN, VF_DT_BF16, 0},
    {"fp16", "fp16", VF_QK_PLAIN, VF_DT_F16, 0},
    {"f16", "fp16", VF_QK_PLAIN, VF_DT_F16, 0},
    {"fp8", "fp8", VF_QK_PLAIN, VF_DT_FP8, 0},
    {"int8", "int8", VF_QK_PLAIN, VF_DT_INT8, 0},
    /* bitsandbytes LLM.int8 (load_in_8bit): int8 bytes, named so engines that treat it
     * apart (diffusers cannot move it between devices) can tell */
    {"bnb-int8", "bnb-int8", VF_QK_PLAIN, VF_DT_INT8, 0},
    {"llm.int8", "bnb-int8", VF_QK_PLAIN, VF_DT_INT8, 0},
    {"int4", "int4", VF_QK_PLAIN, VF_DT_INT4, 0},
    {"awq", "awq", VF_QK_AWQ, VF_DT_INT4, 128},
    {"gptq", "gptq", VF_QK_GPTQ, VF_DT_INT4, 128},
    {"nf4", "nf4", VF_QK_NF4, VF_DT_NF4, 64},
    {"mxfp4", "mxfp4", VF_QK_PLAIN, VF_DT_MXFP4, 0},
    {"nvfp4", "nvfp4", VF_QK_PLAIN, VF_DT_NVFP4, 0},
};

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static void set_name(struct vf_quant *q, const char *name, bool upper)
{
    size_t i = 0;
    for (; name[i] && i + 1 < sizeof q->name; i++) {
        char c = name[i];
        if (upper && c >= 'a' && c <= 'z')
            c = (char)(c - 'a' + 'A');
        q->name[i] = c;
    }
    q->name[i] = '\0';
}

/*
 * Parses a weight storage scheme (DESIGN section 8 --weights). Order of lookup: the plain
 * names, then llama.cpp ftype names (so "Q8_0" is the ftype), then bare GGUF type names
 * ("q4_k" = every linear weight at Q4_K). On success *out is fully set; on failure it is
 * untouched and err says what is accepted.
 */
enum vf_err vf_quant_parse(const char *s, struct vf_quant *out, struct vf_error *err)
{
    if (!s || !out)
        return vf__errf(err, VF_EINVAL, "no weight format given");
    struct vf_quant q;
    memset(&q, 0, sizeof q);
    for (size_t i = 0; i < ARRAY_LEN(plains); i++) {
        if (vf__strcasecmp(s, plains[i].name) == 0) {
            q.kind = plains[i].kind;
            q.dtype = plains[i].dtype;
            q.group = plains[i].group;
            set_name(&q, plains[i].canon, false);
            *out = q;
            return VF_OK;
        }
    }
    for (size_t i = 0; i < ARRAY_LEN(ftypes); i++) {
        if (vf__strcasecmp(s, ftypes[i].name) == 0) {
            q.kind = VF_QK_GGUF_FTYPE;
            q.dtype = ftypes[i].base;
            q.ftype = ftypes[i].ftype;
            set_name(&q, ftypes[i].name, true);
            *out = q;
            return VF_OK;
        }
    }
    for (int t = VF_DT_Q4_0; t < VF_DT__COUNT; t++) {
        if (vf__strcasecmp(s, dtypes[t].name) == 0) {
            q.kind = VF_QK_PLAIN;
            q.dtype = (enum vf_dtype)t;
            set_name(&q, dtypes[t].name, false);
            *out = q;
            return VF_OK;
        }
    }
    return vf__errf(
        err, VF_EINVAL,
        "unknown weight format '%.64s' (accepted: fp32, bf16, fp16, fp8, int8, bnb-int8, int4, "
        "awq, gptq, nf4, mxfp4, nvfp4, or a GGUF type such as Q4_K_M, Q8_0, IQ4_XS, "
        "q4_k)",
        s);
}

/* ------------------------------------------------------------ --kv-dtype parser */

static const struct kv_info {
    const char *name;
    enum vf_dtype dtype;
} kvs[] = {
    {"fp16", VF_DT_F16},  {"f16", VF_DT_F16},      {"bf16", VF_DT_BF16},
    {"fp8", VF_DT_FP8},   {"fp8_e4m3", VF_DT_FP8}, {"fp8_e5m2", VF_DT_FP8},
    {"q8_0", VF_DT_Q8_0}, {"q4_0", VF_DT_Q4_0},    {"q4_1", VF_DT_Q4_1},
    {"q5_0", VF_DT_Q5_0}, {"q5_1", VF_DT_Q5_1},    {"iq4_nl", VF_DT_IQ4_NL},
    {"f32", VF_DT_F32},   {"fp32", VF_DT_F32},     {"auto", VF_DT_DEFAULT},
};

/* Parses a KV cache storage type; "auto" is VF_DT_DEFAULT (the engine decides). */
enum vf_err vf_kv_dtype_parse(const char *s, enum vf_dtype *out, struct vf_error *err)
{
    if (!s || !out)
        return vf__errf(err, VF_EINVAL, "no KV cache type given");
    for (size_t i = 0; i < ARRAY_LEN(kvs); i++) {
        if (vf__strcasecmp(s, kvs[i].name) == 0) {
            *out = kvs[i].dtype;
            return VF_OK;
        }
    }
    return vf__errf(err, VF_EINVAL,
                    "unknown KV cache type '%.64s' (accepted: fp16, bf16, fp8, fp8_e4m3, "
                    "fp8_e5m2, q8_0, q4_0, q4_1, q5_0, q5_1, iq4_nl, f32, auto)",
                    s);
}
