/* SPDX-License-Identifier: Apache-2.0 */
/*
 * read_safetensors.c - the safetensors reader: the 8-byte little-endian header length, the
 * JSON header (parsed with jansson once its length has been checked against the format's cap
 * and the file), every tensor's dtype, shape and data offsets checked the way the reference
 * implementation checks them (sizes match, the data section is covered without holes or
 * overlaps), exact bytes (F-W-11) and logical parameters per tensor (packed 4-bit storage
 * unpacked, quantization metadata apart, F-W-12), the tensor's layer and class from its
 * Hugging Face name (F-W-13); sharded folders through model.safetensors.index.json; and the
 * merge of these exact sizes into a model read from config.json (F-W-14). Only headers are
 * read, never the weights.
 *
 * Hostile input: every count, length and offset from the file is checked arithmetic; the
 * header is allocated only after its length is checked against the cap and the file size
 * (or, when the size is unknown, grown as bytes really arrive); errors name the file, the
 * byte offset or the tensor.
 */
#include "read_safetensors.h"

#include <assert.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Header bytes read per request when the source's size is unknown. */
#define ST_READ_CHUNK ((size_t)1 << 20)
/* Name components the classifier looks at (deeper names keep their first and last ones). */
#define ST_MAX_COMPS 32

/* ------------------------------------------------------------------ dtypes */

/* The dtypes of the reference implementation's Dtype enum (safetensors/src/tensor.rs), with
 * their bit sizes; F4 and F6 are sub-byte, packed without padding. */
static const struct {
    const char *name;
    unsigned bits;
} st_dtypes[] = {
    {"BOOL", 8},        {"F4", 4},      {"F6_E2M3", 6}, {"F6_E3M2", 6}, {"U8", 8},
    {"I8", 8},          {"F8_E5M2", 8}, {"F8_E4M3", 8}, {"F8_E8M0", 8}, {"F8_E4M3FNUZ", 8},
    {"F8_E5M2FNUZ", 8}, {"I16", 16},    {"U16", 16},    {"F16", 16},    {"BF16", 16},
    {"I32", 32},        {"U32", 32},    {"F32", 32},    {"C64", 64},    {"F64", 64},
    {"I64", 64},        {"U64", 64},
};
#define N_DTYPES (sizeof(st_dtypes) / sizeof(st_dtypes[0]))

/* Index of dtype in st_dtypes, or -1. */
static int dtype_index(const char *dtype)
{
    for (size_t i = 0; dtype && i < N_DTYPES; i++)
        if (strcmp(st_dtypes[i].name, dtype) == 0)
            return (int)i;
    return -1;
}

unsigned vf__st_dtype_bits(const char *dtype)
{
    int i = dtype_index(dtype);
    return i < 0 ? 0 : st_dtypes[i].bits;
}

/* ------------------------------------------------------------ tensor names */

/* A tensor name split at its dots (not copied). */
struct comps {
    const char *p[ST_MAX_COMPS];
    size_t len[ST_MAX_COMPS];
    size_t n;
};

static void split(const char *name, struct comps *c)
{
    c->n = 0;
    for (const char *s = name;;) {
        const char *dot = strchr(s, '.');
        size_t len = dot ? (size_t)(dot - s) : strlen(s);
        /* past the limit the last slot keeps being overwritten: it ends as the last one */
        size_t i = c->n < ST_MAX_COMPS ? c->n++ : ST_MAX_COMPS - 1;
        c->p[i] = s;
        c->len[i] = len;
        if (!dot)
            break;
        s = dot + 1;
    }
}

/* Component i is exactly w. */
static bool eq(const struct comps *c, size_t i, const char *w)
{
    return i < c->n && c->len[i] == strlen(w) && memcmp(c->p[i], w, c->len[i]) == 0;
}

/* Component i is w or w followed by '_' and a suffix (down_proj_blocks, in_proj_qkvz). */
static bool word(const struct comps *c, size_t i, const char *w)
{
    size_t k = strlen(w);
    return i < c->n && c->len[i] >= k && memcmp(c->p[i], w, k) == 0 &&
           (c->len[i] == k || c->p[i][k] == '_');
}

static bool starts(const struct comps *c, size_t i, const char *w)
{
    size_t k = strlen(w);
    return i < c->n && c->len[i] >= k && memcmp(c->p[i], w, k) == 0;
}

static bool ends(const struct comps *c, size_t i, const char *w)
{
    size_t k = strlen(w);
    return i < c->n && c->len[i] >= k && memcmp(c->p[i] + c->len[i] - k, w, k) == 0;
}

static bool contains(const struct comps *c, size_t i, const char *w)
{
    size_t k = strlen(w);
    for (size_t j = 0; i < c->n && j + k <= c->len[i]; j++)
        if (memcmp(c->p[i] + j, w, k) == 0)
            return true;
    return false;
}

/* Some component is exactly w. */
static bool has(const struct comps *c, const char *w)
{
    for (size_t i = 0; i < c->n; i++)
        if (eq(c, i, w))
            return true;
    return false;
}

/* A vision or audio tower, or the projector into the language model. */
static bool tower(const struct comps *c)
{
    static const char *const pre[] = {"vision", "visual", "audio", "speech", "image_", NULL};
    static const char *const exact[] = {
        "multi_modal_projector", "mm_projector", "multimodal_projector", "vpm", "resampler", NULL};
    for (size_t i = 0; i < c->n; i++) {
        for (const char *const *w = pre; *w; w++)
            if (starts(c, i, *w))
                return true;
        for (const char *const *w = exact; *w; w++)
            if (eq(c, i, *w))
                return true;
    }
    return false;
}

/* The parent of component i is one of the attention module names. */
static bool under_attention(const struct comps *c, size_t i)
{
    return i > 0 && (eq(c, i - 1, "self_attn") || eq(c, i - 1, "attn") ||
                     eq(c, i - 1, "attention") || eq(c, i - 1, "self_attention"));
}

/* The parent of component i is a recurrent mixer (Mamba, gated DeltaNet). */
static bool under_mixer(const struct comps *c, size_t i)
{
    return i > 0 && (eq(c, i - 1, "mixer") || eq(c, i - 1, "mamba") ||
                     eq(c, i - 1, "linear_attn") || eq(c, i - 1, "ssm"));
}

/* F-W-13: the class of a language-model tensor from its module names. */
static enum vf_tclass tclass(const struct comps *c)
{
    size_t last = c->n - 1;
    bool lbias = eq(c, last, "bias");

    for (size_t i = 0; i < c->n; i++)
        if (contains(c, i, "norm") || starts(c, i, "ln_") || eq(c, i, "ln"))
            return VF_T_NORM; /* weights and biases of every norm */
    for (size_t i = 0; i < c->n; i++) {
        bool ssm = eq(c, i, "A_log") || eq(c, i, "D") || eq(c, i, "dt_bias") ||
                   eq(c, i, "conv1d") || eq(c, i, "x_proj") || eq(c, i, "dt_proj") ||
                   word(c, i, "in_proj") || (eq(c, i, "out_proj") && under_mixer(c, i));
        if (ssm)
            return lbias && i != last ? VF_T_BIAS : VF_T_SSM;
    }
    if (lbias || ends(c, last, "_bias") || eq(c, last, "sinks"))
        return VF_T_BIAS; /* linear and router biases, attention sinks */
    for (size_t i = 0; i < c->n; i++) {
        if (eq(c, i, "embed_tokens") || eq(c, i, "wte") || eq(c, i, "word_embeddings") ||
            eq(c, i, "embed_in") || eq(c, i, "tok_embeddings") || eq(c, i, "embeddings") ||
            eq(c, i, "embedding"))
            return VF_T_TOKEN_EMBD;
        if (eq(c, i, "lm_head") || eq(c, i, "embed_out"))
            return VF_T_OUTPUT;
    }
    if (c->n == 2 && eq(c, 0, "output"))
        return VF_T_OUTPUT; /* Meta's original layout: output.weight */

    bool exp = has(c, "experts");
    bool sh = has(c, "shared_expert") || has(c, "shared_experts");
    for (size_t i = 0; i < c->n; i++) {
        int k = -1; /* 0 gate, 1 up, 2 down */
        /* gate_up_proj (fused, Phi-3, gpt-oss, Llama 4 experts) is filed as up; the model
         * merge spreads it over the gate and up groups when the layer has both */
        if (word(c, i, "gate_up_proj") || word(c, i, "up_proj") || eq(c, i, "w3") ||
            eq(c, i, "c_fc") || eq(c, i, "fc1") || eq(c, i, "dense_h_to_4h"))
            k = 1;
        else if (word(c, i, "gate_proj") || eq(c, i, "w1"))
            k = 0;
        else if (word(c, i, "down_proj") || eq(c, i, "w2") || eq(c, i, "fc2") ||
                 eq(c, i, "dense_4h_to_h") || (eq(c, i, "c_proj") && i > 0 && eq(c, i - 1, "mlp")))
            k = 2;
        if (k < 0)
            continue;
        if (exp)
            return (enum vf_tclass)(VF_T_FFN_GATE_EXP + k);
        if (sh)
            return (enum vf_tclass)(VF_T_FFN_GATE_SHEXP + k);
        return (enum vf_tclass)(VF_T_FFN_GATE + k);
    }
    for (size_t i = 0; i < c->n; i++)
        if (eq(c, i, "gate") || eq(c, i, "router") || eq(c, i, "shared_expert_gate"))
            return VF_T_ROUTER;
    for (size_t i = 0; i < c->n; i++) {
        if (word(c, i, "qkv_proj") || eq(c, i, "query_key_value") || eq(c, i, "c_attn") ||
            eq(c, i, "W_pack") || eq(c, i, "Wqkv"))
            return VF_T_ATTN_QKV;
        if (word(c, i, "q_proj") || word(c, i, "q_a_proj") || word(c, i, "q_b_proj") ||
            eq(c, i, "wq") || eq(c, i, "query"))
            return VF_T_ATTN_Q;
        if (word(c, i, "k_proj") || word(c, i, "kv_a_proj_with_mqa") || eq(c, i, "wk") ||
            eq(c, i, "key"))
            return VF_T_ATTN_K;
        if (word(c, i, "v_proj") || word(c, i, "kv_b_proj") || eq(c, i, "wv") || eq(c, i, "value"))
            return VF_T_ATTN_V;
        if (word(c, i, "o_proj") || eq(c, i, "wo") || eq(c, i, "out_proj") ||
            ((eq(c, i, "dense") || eq(c, i, "c_proj")) && under_attention(c, i)))
            return VF_T_ATTN_O;
    }
    return VF_T_OTHER;
}

/* Component i is a decimal layer number (at most 9 digits); sets *out. */
static bool layer_number(const struct comps *c, size_t i, int32_t *out)
{
    if (i >= c->n || c->len[i] == 0 || c->len[i] > 9)
        return false;
    int32_t v = 0;
    for (size_t j = 0; j < c->len[i]; j++) {
        char ch = c->p[i][j];
        if (ch < '0' || ch > '9')
            return false;
        v = v * 10 + (ch - '0');
    }
    *out = v;
    return true;
}

void vf__st_classify(const char *name, int32_t *layer, enum vf_tclass *cls)
{
    struct comps c;

    *layer = -1;
    *cls = VF_T_OTHER;
    if (!name || !*name)
        return;
    split(name, &c);
    if (tower(&c) || has(&c, "mtp"))
        return;
    for (size_t i = 0; i + 1 < c.n; i++)
        if ((eq(&c, i, "layers") || eq(&c, i, "layer") || eq(&c, i, "h") || eq(&c, i, "blocks")) &&
            layer_number(&c, i + 1, layer))
            break;
    *cls = tclass(&c);
}

bool vf__st_is_param(const char *name)
{
    static const char *const meta[] = {"scales",
                                       "qzeros",
                                       "g_idx",
                                       "weight_scale",
                                       "weight_scale_inv",
                                       "weight_scale_2",
                                       "input_scale",
                                       "weight_zero_point",
                                       "input_zero_point",
                                       "weight_shape",
                                       "absmax",
                                       "quant_map",
                                       "nested_absmax",
                                       "nested_quant_map",
                                       "SCB",
                                       "weight_format",
                                       "inv_freq",
                                       NULL};
    struct comps c;

    if (!name || !*name)
        return false;
    split(name, &c);
    size_t last = c.n - 1;
    for (const char *const *w = meta; *w; w++)
        if (eq(&c, last, *w))
            return false;
    return !ends(&c, last, "_scales") && !ends(&c, last, "_global_scale") &&
           !has(&c, "quant_state");
}

uint64_t vf__safetensors_dtype_params(const struct vf_safetensors *st, const char *dtype)
{
    uint64_t sum = 0;
    for (size_t i = 0; st && dtype && i < st->n_tensors; i++) {
        const struct vf_tensor_info *t = &st->tensors[i];
        if (t->st_dtype && strcmp(t->st_dtype, dtype) == 0 && vf__st_is_param(t->name))
            sum = vf__sat_add(sum, t->n_elems);
    }
    return sum;
}

/* ------------------------------------------------------------ the header */

/* One parse, for messages. */
struct st_ctx {
    struct vf_arena *a;
    const char *name; /* the file, for messages */
    json_t *root;
    struct vf_error *err;
};

/* Has the header an entry `name` + `suffix` whose dtype is `dtype` (NULL: any)? */
static bool sibling(const struct st_ctx *x, const char *name, size_t keep, const char *suffix,
                    const char *dtype)
{
    char buf[512];
    if (keep + strlen(suffix) >= sizeof buf)
        return false;
    memcpy(buf, name, keep);
    strcpy(buf + keep, suffix);
    json_t *e = json_object_get(x->root, buf);
    if (!e || !json_is_object(e))
        return false;
    const char *d = json_string_value(json_object_get(e, "dtype"));
    return !dtype || (d && strcmp(d, dtype) == 0);
}

/*
 * F-W-12: logical values per stored element. 4-bit values packed eight to an I32 in AutoGPTQ
 * and AutoAWQ (qweight, qzeros) and in compressed-tensors pack-quantized (weight_packed),
 * two to a U8 in gpt-oss MXFP4 (*_blocks), compressed-tensors NVFP4 (weight_packed),
 * ModelOpt NVFP4 (a U8 weight with an F8_E4M3 weight_scale beside it) and bitsandbytes 4-bit
 * (a U8 weight with a quant_state beside it). Everything else: one.
 */
static unsigned packed_factor(const struct st_ctx *x, const char *name, const char *dtype)
{
    struct comps c;
    split(name, &c);
    size_t last = c.n - 1;
    bool i32 = strcmp(dtype, "I32") == 0, u8 = strcmp(dtype, "U8") == 0;

    if (i32 && (eq(&c, last, "qweight") || eq(&c, last, "qzeros") || eq(&c, last, "weight_packed")))
        return 8;
    if (u8 && (ends(&c, last, "_blocks") || eq(&c, last, "weight_packed")))
        return 2;
    if (u8 && eq(&c, last, "weight")) {
        size_t keep = (size_t)(c.p[last] - name); /* "x.q_proj." */
        if (sibling(x, name, keep, "weight_scale", "F8_E4M3") ||
            sibling(x, name, strlen(name), ".quant_state.bitsandbytes__nf4", NULL) ||
            sibling(x, name, strlen(name), ".quant_state.bitsandbytes__fp4", NULL))
            return 2;
    }
    return 1;
}

/* Reads a non-negative JSON integer. */
static bool uint_of(const json_t *v, uint64_t *out)
{
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        return false;
    *out = (uint64_t)json_integer_value(v);
    return true;
}

/* "[2, 3]" for messages (truncated with "..." past the buffer). */
static const char *shape_text(char *buf, size_t cap, const struct vf_tensor_info *t)
{
    size_t k = (size_t)snprintf(buf, cap, "[");
    for (uint32_t d = 0; d < t->n_dims && k < cap; d++)
        k += (size_t)snprintf(buf + k, cap - k, "%s%llu", d ? ", " : "",
                              (unsigned long long)t->dims[d]);
    if (k < cap)
        snprintf(buf + k, cap - k, "]");
    return buf;
}

#define ULL(v) ((unsigned long long)(v))

/*
 * One tensor entry `name` of the header into *t: dtype, shape, data_offsets checked and
 * sizes computed. t->offset is the begin offset in the data section; *end receives the end.
 */
static enum vf_err read_tensor(const struct st_ctx *x, const char *name, const json_t *v,
                               struct vf_tensor_info *t, uint64_t *end)
{
    const char *f = x->name;
    char sb[160];

    if (!json_is_object(v))
        return vf__errf(x->err, VF_EFORMAT,
                        "safetensors: cannot read '%s': tensor '%.200s': entry is not an object", f,
                        name);
    const json_t *jd = json_object_get(v, "dtype"), *js = json_object_get(v, "shape");
    const json_t *jo = json_object_get(v, "data_offsets");
    const char *dt = json_string_value(jd);
    int di = dtype_index(dt);
    if (!dt)
        return vf__errf(x->err, VF_EFORMAT,
                        "safetensors: cannot read '%s': tensor '%.200s': dtype is missing or "
                        "not a string",
                        f, name);
    if (di < 0)
        return vf__errf(x->err, VF_EUNSUPPORTED,
                        "safetensors: cannot read '%s': tensor '%.200s': unknown dtype '%.40s' "
                        "(known: F64 F32 F16 BF16 F8_E4M3 F8_E5M2 F8_E8M0 F6_E2M3 F6_E3M2 F4 "
                        "I64..I8 U64..U8 BOOL C64)",
                        f, name, dt);
    if (!json_is_array(js))
        return vf__errf(x->err, VF_EFORMAT,
                        "safetensors: cannot read '%s': tensor '%.200s': shape is missing or "
                        "not an array",
                        f, name);
    if (json_array_size(js) > VF_ST_MAX_DIMS)
        return vf__errf(x->err, VF_ELIMIT,
                        "safetensors: cannot read '%s': tensor '%.200s': %zu dimensions exceed "
                        "the limit of %d",
                        f, name, json_array_size(js), VF_ST_MAX_DIMS);
    memset(t, 0, sizeof *t);
    t->ggml_type = -1;
    t->st_dtype = st_dtypes[di].name;
    t->n_dims = (uint32_t)json_array_size(js);
    uint64_t elems = 1;
    bool empty = false;
    for (uint32_t d = 0; d < t->n_dims; d++) {
        if (!uint_of(json_array_get(js, d), &t->dims[d]))
            return vf__errf(x->err, VF_EFORMAT,
                            "safetensors: cannot read '%s': tensor '%.200s': shape[%u] is not "
                            "a non-negative integer",
                            f, name, d);
        empty |= t->dims[d] == 0;
    }
    for (uint32_t d = 0; d < t->n_dims && !empty; d++) {
        if (!vf__mul_u64(elems, t->dims[d], &elems))
            return vf__errf(x->err, VF_ERANGE,
                            "safetensors: cannot read '%s': tensor '%.200s': shape %s has more "
                            "elements than 64 bits hold",
                            f, name, shape_text(sb, sizeof sb, t));
    }
    if (empty)
        elems = 0; /* a zero dimension: no elements, however large the others */
    uint64_t bits, begin, stop;
    if (!vf__mul_u64(elems, st_dtypes[di].bits, &bits))
        return vf__errf(x->err, VF_ERANGE,
                        "safetensors: cannot read '%s': tensor '%.200s': shape %s of %s is more "
                        "bytes than 64 bits hold",
                        f, name, shape_text(sb, sizeof sb, t), dt);
    if (bits % 8)
        return vf__errf(x->err, VF_EFORMAT,
                        "safetensors: cannot read '%s': tensor '%.200s': %llu elements of %s "
                        "are not a whole number of bytes",
                        f, name, ULL(elems), dt);
    if (!json_is_array(jo) || json_array_size(jo) != 2 || !uint_of(json_array_get(jo, 0), &begin) ||
        !uint_of(json_array_get(jo, 1), &stop))
        return vf__errf(x->err, VF_EFORMAT,
                        "safetensors: cannot read '%s': tensor '%.200s': data_offsets is not "
                        "two non-negative integers",
                        f, name);
    if (stop < begin)
        return vf__errf(x->err, VF_EFORMAT,
                        "safetensors: cannot read '%s': tensor '%.200s': data_offsets [%llu, "
                        "%llu] end before they begin",
                        f, name, ULL(begin), ULL(stop));
    t->bytes = bits / 8;
    if (stop - begin != t->bytes)
        return vf__errf(x->err, VF_EFORMAT,
                        "safetensors: cannot read '%s': tensor '%.200s': data_offsets [%llu, "
                        "%llu] hold %llu bytes, shape %s of %s needs %llu",
                        f, name, ULL(begin), ULL(stop), ULL(stop - begin),
                        shape_text(sb, sizeof sb, t), dt, ULL(t->bytes));
    if (!vf__mul_u64(elems, packed_factor(x, name, dt), &t->n_elems))
        return vf__errf(x->err, VF_ERANGE,
                        "safetensors: cannot read '%s': tensor '%.200s': element count "
                        "overflows",
                        f, name);
    t->name = vf_arena_strdup(x->a, name);
    if (!t->name)
        return vf__errf(x->err, VF_ENOMEM, "safetensors: cannot read '%s': out of memory", f);
    vf__st_classify(name, &t->layer, &t->cls);
    t->offset = begin;
    *end = stop;
    return VF_OK;
}

/* __metadata__: a string-to-string map (the reference refuses anything else). */
static enum vf_err read_metadata(const struct st_ctx *x, const json_t *v, const char **format)
{
    const char *k;
    json_t *e;

    if (!json_is_object(v))
        return vf__errf(x->err, VF_EFORMAT,
                        "safetensors: cannot read '%s': __metadata__ is not an object", x->name);
    json_object_foreach((json_t *)v, k, e)
    {
        if (!json_is_string(e))
            return vf__errf(x->err, VF_EFORMAT,
                            "safetensors: cannot read '%s': __metadata__ value '%.100s' is not a "
                            "string",
                            x->name, k);
    }
    const char *fmt = json_string_value(json_object_get(v, "format"));
    if (fmt && !(*format = vf_arena_strdup(x->a, fmt)))
        return vf__errf(x->err, VF_ENOMEM, "safetensors: cannot read '%s': out of memory", x->name);
    return VF_OK;
}

/* File order: by begin offset, then end (zero-size tensors first), then name. */
static int by_offset(const void *pa, const void *pb)
{
    const struct vf_tensor_info *a = pa, *b = pb;
    uint64_t ea = a->offset + a->bytes, eb = b->offset + b->bytes;
    if (a->offset != b->offset)
        return a->offset < b->offset ? -1 : 1;
    if (ea != eb)
        return ea < eb ? -1 : 1;
    return strcmp(a->name, b->name);
}

/*
 * Reads the n header bytes after the length prefix into a NUL-terminated heap buffer
 * (vf__free it). With a known size, n has been checked against it and is allocated at once;
 * with an unknown size the buffer grows as bytes arrive, so a false length costs nothing.
 */
static enum vf_err read_text(struct vf_reader *r, const char *f, uint64_t n, char **out,
                             struct vf_error *err)
{
    size_t cap = r->size != VF_UNKNOWN || n < ST_READ_CHUNK ? (size_t)n : ST_READ_CHUNK;
    size_t have = 0;
    char *buf = vf__malloc(cap + 1);

    if (!buf)
        return vf__errf(err, VF_ENOMEM,
                        "safetensors: cannot read '%s': out of memory for a %llu-byte header", f,
                        ULL(n));
    while (have < n) {
        if (have == cap) {
            size_t ncap = cap > (size_t)n / 2 ? (size_t)n : cap * 2;
            char *nb = vf__realloc(buf, ncap + 1);
            if (!nb) {
                vf__free(buf);
                return vf__errf(err, VF_ENOMEM,
                                "safetensors: cannot read '%s': out of memory for a %llu-byte "
                                "header",
                                f, ULL(n));
            }
            buf = nb;
            cap = ncap;
        }
        size_t got = 0;
        enum vf_err rc = r->read(r->ud, 8 + (uint64_t)have, buf + have, cap - have, &got, err);
        if (rc) {
            vf__free(buf);
            vf__err_prefix(err, "safetensors");
            return rc;
        }
        if (got == 0) {
            vf__free(buf);
            return vf__errf(err, VF_EFORMAT,
                            "safetensors: cannot read '%s': header ends at byte %llu, its "
                            "length says %llu (truncated file?)",
                            f, ULL(8 + (uint64_t)have), ULL(8 + n));
        }
        have += got;
    }
    buf[n] = 0;
    *out = buf;
    return VF_OK;
}

/*
 * Checks the tensors sorted by offset cover the data section exactly (as the reference
 * does: no hole, no overlap, the last one ends where the file ends when its size is known)
 * and turns their offsets into file offsets.
 */
static enum vf_err check_layout(const struct st_ctx *x, struct vf_safetensors *out,
                                uint64_t data_start, uint64_t size)
{
    const char *f = x->name;
    uint64_t pos = 0;

    for (size_t i = 0; i < out->n_tensors; i++) {
        struct vf_tensor_info *t = &out->tensors[i];
        uint64_t end = t->offset + t->bytes; /* checked: stop - begin == bytes */
        if (t->offset != pos) {
            const struct vf_tensor_info *p = i ? &out->tensors[i - 1] : NULL;
            if (t->offset < pos)
                return vf__errf(x->err, VF_EFORMAT,
                                "safetensors: cannot read '%s': tensor '%.200s': data_offsets "
                                "[%llu, %llu] overlap tensor '%.200s' [%llu, %llu]",
                                f, t->name, ULL(t->offset), ULL(end), p->name, ULL(p->offset),
                                ULL(p->offset + p->bytes));
            return vf__errf(x->err, VF_EFORMAT,
                            "safetensors: cannot read '%s': tensor '%.200s': data_offsets "
                            "[%llu, %llu] leave bytes %llu..%llu of the data section unused",
                            f, t->name, ULL(t->offset), ULL(end), ULL(pos), ULL(t->offset));
        }
        pos = end;
        if (size != VF_UNKNOWN && pos > size - data_start)
            return vf__errf(x->err, VF_EFORMAT,
                            "safetensors: cannot read '%s': tensor '%.200s': data_offsets "
                            "[%llu, %llu] end past the data section (%llu bytes from byte %llu "
                            "of a %llu-byte file)",
                            f, t->name, ULL(t->offset), ULL(end), ULL(size - data_start),
                            ULL(data_start), ULL(size));
    }
    if (size != VF_UNKNOWN && pos != size - data_start)
        return vf__errf(x->err, VF_EFORMAT,
                        "safetensors: cannot read '%s': the tensors end at byte %llu, the file "
                        "at byte %llu (%s)",
                        f, ULL(data_start + pos), ULL(size),
                        pos < size - data_start ? "trailing bytes" : "truncated file?");
    for (size_t i = 0; i < out->n_tensors; i++) {
        struct vf_tensor_info *t = &out->tensors[i];
        if (!vf__add_u64(t->offset, data_start, &t->offset))
            return vf__errf(x->err, VF_ERANGE,
                            "safetensors: cannot read '%s': tensor '%.200s': offset overflows", f,
                            t->name);
    }
    out->weight_bytes = pos;
    return VF_OK;
}

/* The JSON header (root) into *out. */
static enum vf_err read_entries(struct st_ctx *x, struct vf_safetensors *out, uint64_t data_start,
                                uint64_t size)
{
    const char *key;
    json_t *v;
    size_t n = json_object_size(x->root), k = 0;
    enum vf_err rc;

    if (n > VF_ST_MAX_TENSORS)
        return vf__errf(x->err, VF_ELIMIT,
                        "safetensors: cannot read '%s': %zu header entries exceed the limit of "
                        "%zu tensors",
                        x->name, n, VF_ST_MAX_TENSORS);
    out->tensors = vf_arena_alloc(x->a, (n ? n : 1) * sizeof *out->tensors);
    if (!out->tensors)
        return vf__errf(x->err, VF_ENOMEM,
                        "safetensors: cannot read '%s': out of memory for %zu "
                        "tensors",
                        x->name, n);
    json_object_foreach(x->root, key, v)
    {
        if (strcmp(key, "__metadata__") == 0) {
            if ((rc = read_metadata(x, v, &out->metadata_format)))
                return rc;
            continue;
        }
        uint64_t end;
        if ((rc = read_tensor(x, key, v, &out->tensors[k], &end)))
            return rc;
        k++;
    }
    out->n_tensors = k;
    qsort(out->tensors, k, sizeof *out->tensors, by_offset);
    if ((rc = check_layout(x, out, data_start, size)))
        return rc;
    out->params = 0;
    for (size_t i = 0; i < k; i++)
        if (vf__st_is_param(out->tensors[i].name) &&
            !vf__add_u64(out->params, out->tensors[i].n_elems, &out->params))
            return vf__errf(x->err, VF_ERANGE,
                            "safetensors: cannot read '%s': parameter count overflows", x->name);
    return VF_OK;
}

/*
 * Reads a safetensors header from r (see vramfit.h). Checks, in order: 8 bytes for the
 * length; the length within VF_ST_MAX_HEADER_BYTES and within the file; the header is a JSON
 * object (jansson's message and the file byte of the error); per tensor dtype, shape and
 * data_offsets; the data section covered exactly. On error *out is zeroed.
 */
enum vf_err vf_safetensors_read(struct vf_arena *a, struct vf_reader *r, struct vf_safetensors *out,
                                struct vf_error *err)
{
    unsigned char pre[8];
    size_t got = 0;
    uint64_t n = 0;
    enum vf_err rc;

    if (!a || !r || !r->read || !out)
        return vf__errf(err, VF_EINVAL, "safetensors: no arena, reader or output given");
    memset(out, 0, sizeof *out);
    const char *f = r->name ? r->name : "(input)";
    if (r->size != VF_UNKNOWN && r->size < 8)
        return vf__errf(err, VF_EFORMAT,
                        "safetensors: cannot read '%s': %llu bytes is too short for the 8-byte "
                        "header length at offset 0",
                        f, ULL(r->size));
    if ((rc = r->read(r->ud, 0, pre, 8, &got, err))) {
        vf__err_prefix(err, "safetensors");
        return rc;
    }
    if (got < 8)
        return vf__errf(err, VF_EFORMAT,
                        "safetensors: cannot read '%s': %zu bytes is too short for the 8-byte "
                        "header length at offset 0",
                        f, got);
    for (int i = 7; i >= 0; i--)
        n = n << 8 | pre[i];
    if (n > VF_ST_MAX_HEADER_BYTES)
        return vf__errf(err, VF_ELIMIT,
                        "safetensors: cannot read '%s': header length %llu at offset 0 exceeds "
                        "the format's limit of %llu bytes (not a safetensors file?)",
                        f, ULL(n), ULL(VF_ST_MAX_HEADER_BYTES));
    if (r->size != VF_UNKNOWN && n > r->size - 8)
        return vf__errf(err, VF_EFORMAT,
                        "safetensors: cannot read '%s': header length %llu at offset 0 runs past "
                        "the end of the %llu-byte file (truncated file?)",
                        f, ULL(n), ULL(r->size));

    char *text = NULL;
    if ((rc = read_text(r, f, n, &text, err)))
        return rc;
    /* jansson's position counts the bytes it consumed: the last one is the offending byte */
    json_error_t jerr;
    struct st_ctx x = {.a = a, .name = f, .err = err};
    x.root = json_loadb(text, (size_t)n, JSON_REJECT_DUPLICATES, &jerr);
    vf__free(text);
    if (!x.root && vf__json_nomem(&jerr))
        return vf__errf(err, VF_ENOMEM, "safetensors: out of memory reading '%s'", f);
    if (!x.root)
        return vf__errf(err, VF_EFORMAT,
                        "safetensors: cannot read '%s': header is not JSON: %s at byte %llu", f,
                        jerr.text, ULL(7 + (uint64_t)(jerr.position > 0 ? jerr.position : 1)));
    if (!json_is_object(x.root)) {
        json_decref(x.root);
        return vf__errf(err, VF_EFORMAT,
                        "safetensors: cannot read '%s': header at byte 8 is not a JSON object", f);
    }
    out->header_len = n;
    rc = read_entries(&x, out, 8 + n, r->size);
    json_decref(x.root);
    if (rc)
        memset(out, 0, sizeof *out);
    return rc;
}

/* ------------------------------------------------------------ sharded folders */

/* One weight_map entry, and its place among the merged tensors. */
struct map_ent {
    const char *name;
    const char *shard;
    size_t shard_no;
};

/* A merged tensor's name and shard, sorted by name for lookups. */
struct name_ent {
    const char *name;
    size_t shard_no;
};

static int by_str(const void *pa, const void *pb)
{
    return strcmp(*(const char *const *)pa, *(const char *const *)pb);
}

/* Lookups by name (the names are distinct once checked). */
static int by_name(const void *pa, const void *pb)
{
    return strcmp(((const struct name_ent *)pa)->name, ((const struct name_ent *)pb)->name);
}

/* Sorting: by name, then shard, so a duplicate is reported in shard order. */
static int by_name_shard(const void *pa, const void *pb)
{
    const struct name_ent *a = pa, *b = pb;
    int c = strcmp(a->name, b->name);
    if (c)
        return c;
    return a->shard_no < b->shard_no ? -1 : a->shard_no > b->shard_no;
}

/* A shard name must be a plain file name in the folder. */
static bool plain_file_name(const char *s)
{
    return *s && *s != '.' && !strchr(s, '/') && !strchr(s, '\\');
}

/* Reads index text (parsed root) into the weight_map entries and the distinct shards. */
static enum vf_err read_map(struct vf_arena *a, const char *path, json_t *root,
                            struct map_ent **ents, size_t *n_ents, const char ***shards,
                            size_t *n_shards, uint64_t *total, struct vf_error *err)
{
    json_t *wm = json_object_get(root, "weight_map"), *meta = json_object_get(root, "metadata");
    const char *key;
    json_t *v;

    *total = VF_UNKNOWN;
    if (meta && json_is_object(meta)) {
        json_t *ts = json_object_get(meta, "total_size");
        double d = json_is_real(ts) ? json_real_value(ts) : -1;
        if (ts && !json_is_null(ts) && !uint_of(ts, total)) {
            if (!(d >= 0 && d < 1.8e19 && (double)(uint64_t)d == d))
                return vf__errf(err, VF_EFORMAT,
                                "safetensors: cannot read '%s': metadata.total_size is not a "
                                "non-negative whole number",
                                path);
            *total = (uint64_t)d;
        }
    }
    if (!wm || !json_is_object(wm))
        return vf__errf(err, VF_EFORMAT, "safetensors: cannot read '%s': no weight_map object",
                        path);
    size_t n = json_object_size(wm), k = 0;
    if (n == 0)
        return vf__errf(err, VF_EFORMAT, "safetensors: cannot read '%s': weight_map is empty",
                        path);
    if (n > VF_ST_MAX_TENSORS)
        return vf__errf(err, VF_ELIMIT,
                        "safetensors: cannot read '%s': %zu weight_map entries exceed the limit "
                        "of %zu",
                        path, n, VF_ST_MAX_TENSORS);
    struct map_ent *e = vf_arena_alloc(a, n * sizeof *e);
    const char **s = vf_arena_alloc(a, n * sizeof *s);
    if (!e || !s)
        return vf__errf(err, VF_ENOMEM, "safetensors: cannot read '%s': out of memory", path);
    json_object_foreach(wm, key, v)
    {
        const char *file = json_string_value(v);
        if (!file || !plain_file_name(file))
            return vf__errf(err, VF_EFORMAT,
                            "safetensors: cannot read '%s': weight_map entry '%.200s' names "
                            "%s'%.200s', not a file of the folder",
                            path, key, file ? "" : "no file ", file ? file : "");
        e[k].name = vf_arena_strdup(a, key);
        e[k].shard = vf_arena_strdup(a, file);
        if (!e[k].name || !e[k].shard)
            return vf__errf(err, VF_ENOMEM, "safetensors: cannot read '%s': out of memory", path);
        s[k] = e[k].shard;
        k++;
    }
    qsort(s, n, sizeof *s, by_str);
    size_t ns = 0;
    for (size_t i = 0; i < n; i++)
        if (ns == 0 || strcmp(s[ns - 1], s[i]) != 0)
            s[ns++] = s[i];
    if (ns > VF_ST_MAX_SHARDS)
        return vf__errf(err, VF_ELIMIT,
                        "safetensors: cannot read '%s': %zu shard files exceed the limit of %zu",
                        path, ns, VF_ST_MAX_SHARDS);
    for (size_t i = 0; i < n; i++) {
        const char **hit = bsearch(&e[i].shard, s, ns, sizeof *s, by_str);
        e[i].shard_no = (size_t)(hit - s);
    }
    *ents = e;
    *n_ents = n;
    *shards = s;
    *n_shards = ns;
    return VF_OK;
}

/* Reads every shard's header and merges them into *out. */
static enum vf_err read_shards(struct vf_arena *a, const char *dir, const char **shards, size_t ns,
                               struct vf_safetensors *out, struct name_ent **names,
                               struct vf_error *err)
{
    struct vf_safetensors *st = vf_arena_alloc(a, ns * sizeof *st);
    size_t total = 0;
    enum vf_err rc;

    if (!st)
        return vf__errf(err, VF_ENOMEM, "safetensors: out of memory for %zu shards", ns);
    for (size_t i = 0; i < ns; i++) {
        struct vf_reader r;
        const char *path = vf_arena_printf(a, "%s/%s", dir, shards[i]);
        if (!path)
            return vf__errf(err, VF_ENOMEM, "safetensors: out of memory");
        if ((rc = vf_reader_open_file(&r, path, err))) {
            vf__err_prefix(err, "safetensors: shard of '%s/%s'", dir, VF_ST_INDEX_NAME);
            return rc;
        }
        rc = vf_safetensors_read(a, &r, &st[i], err);
        vf_reader_close(&r);
        if (rc)
            return rc;
        total += st[i].n_tensors; /* each <= VF_ST_MAX_TENSORS, ns <= VF_ST_MAX_SHARDS */
        if (total > VF_ST_MAX_TENSORS)
            return vf__errf(err, VF_ELIMIT,
                            "safetensors: '%s': the shards hold more than %zu tensors", dir,
                            VF_ST_MAX_TENSORS);
        if (!vf__add_u64(out->weight_bytes, st[i].weight_bytes, &out->weight_bytes) ||
            !vf__add_u64(out->params, st[i].params, &out->params))
            return vf__errf(err, VF_ERANGE, "safetensors: '%s': byte count overflows", dir);
        out->header_len += st[i].header_len; /* each <= 10^8 */
        if (!out->metadata_format)
            out->metadata_format = st[i].metadata_format;
    }
    out->tensors = vf_arena_alloc(a, (total ? total : 1) * sizeof *out->tensors);
    *names = vf_arena_alloc(a, (total ? total : 1) * sizeof **names);
    if (!out->tensors || !*names)
        return vf__errf(err, VF_ENOMEM, "safetensors: out of memory for %zu tensors", total);
    for (size_t i = 0; i < ns; i++)
        for (size_t j = 0; j < st[i].n_tensors; j++) {
            (*names)[out->n_tensors] = (struct name_ent){st[i].tensors[j].name, i};
            out->tensors[out->n_tensors++] = st[i].tensors[j];
        }
    return VF_OK;
}

enum vf_err vf__safetensors_read_index_ex(struct vf_arena *a, const char *dir,
                                          struct vf_safetensors *out, struct vf__st_index *info,
                                          struct vf_error *err)
{
    char *text = NULL;
    size_t len, n_ents = 0, ns = 0;
    struct map_ent *ents = NULL;
    const char **shards = NULL;
    struct name_ent *names = NULL;
    uint64_t total = VF_UNKNOWN;
    json_error_t jerr;
    enum vf_err rc;

    if (!a || !dir || !out)
        return vf__errf(err, VF_EINVAL, "safetensors: no arena, folder or output given");
    memset(out, 0, sizeof *out);
    const char *path = vf_arena_printf(a, "%s/%s", dir, VF_ST_INDEX_NAME);
    if (!path)
        return vf__errf(err, VF_ENOMEM, "safetensors: out of memory");
    if ((rc = vf__read_file(a, path, VF_ST_MAX_INDEX_BYTES, &text, &len, err))) {
        vf__err_prefix(err, "safetensors");
        return rc;
    }
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root && vf__json_nomem(&jerr))
        return vf__errf(err, VF_ENOMEM, "safetensors: out of memory reading '%s'", path);
    if (!root)
        return vf__errf(err, VF_EFORMAT, "safetensors: cannot read '%s': not JSON: %s at byte %d",
                        path, jerr.text, jerr.position);
    rc = json_is_object(root)
             ? read_map(a, path, root, &ents, &n_ents, &shards, &ns, &total, err)
             : vf__errf(err, VF_EFORMAT, "safetensors: cannot read '%s': not a JSON object", path);
    json_decref(root);
    if (!rc)
        rc = read_shards(a, dir, shards, ns, out, &names, err);
    if (rc) {
        memset(out, 0, sizeof *out);
        return rc;
    }

    /* every tensor in one shard only; every weight_map entry in the shard it names */
    qsort(names, out->n_tensors, sizeof *names, by_name_shard);
    for (size_t i = 1; i < out->n_tensors; i++)
        if (strcmp(names[i - 1].name, names[i].name) == 0) {
            rc = vf__errf(err, VF_EFORMAT,
                          "safetensors: '%s': tensor '%.200s' is in both '%s' and '%s'", dir,
                          names[i].name, shards[names[i - 1].shard_no], shards[names[i].shard_no]);
            memset(out, 0, sizeof *out);
            return rc;
        }
    for (size_t i = 0; i < n_ents; i++) {
        struct name_ent key = {ents[i].name, 0};
        const struct name_ent *hit = bsearch(&key, names, out->n_tensors, sizeof *names, by_name);
        if (!hit || hit->shard_no != ents[i].shard_no) {
            rc = vf__errf(err, VF_EFORMAT,
                          "safetensors: cannot read '%s': weight_map puts tensor '%.200s' in "
                          "'%s', which does not hold it%s%s%s",
                          path, ents[i].name, ents[i].shard, hit ? " (it is in '" : "",
                          hit ? shards[hit->shard_no] : "", hit ? "')" : "");
            memset(out, 0, sizeof *out);
            return rc;
        }
    }
    if (info) {
        info->total_size = total;
        info->n_shards = ns;
        info->n_mapped = n_ents;
    }
    return VF_OK;
}

enum vf_err vf__safetensors_read_index(struct vf_arena *a, const char *dir,
                                       struct vf_safetensors *out, struct vf_error *err)
{
    return vf__safetensors_read_index_ex(a, dir, out, NULL, err);
}

/* ------------------------------------------------------------ merge into a model */

/* x * num / den without intermediate overflow (den > 0, num <= den). */
static uint64_t share(uint64_t x, uint64_t num, uint64_t den)
{
    return (uint64_t)((unsigned __int128)x * num / den);
}

/* Is t a tensor the engines skip when loading (see the contract in read_safetensors.h)? */
static bool skipped(const struct vf_model *m, const struct vf_tensor_info *t)
{
    struct comps c;
    split(t->name ? t->name : "", &c);
    if (has(&c, "mtp") || has(&c, "inv_freq"))
        return true;
    if (t->layer >= 0 && (uint32_t)t->layer >= m->n_layers)
        return true;
    return t->cls == VF_T_OUTPUT && m->tied_embeddings;
}

/* Is t a fused tensor: gate_up_proj (filed as up), or qkv? */
static bool fused_gate_up(const struct vf_tensor_info *t)
{
    return t->name && strstr(t->name, "gate_up_proj") &&
           (t->cls == VF_T_FFN_UP || t->cls == VF_T_FFN_UP_EXP || t->cls == VF_T_FFN_UP_SHEXP);
}

/* For every layer l in [-1, n_layers), the range [lo[l+1], hi[l+1]) of m->groups that holds
 * all its groups (groups are sorted by layer, but the range is right either way). */
static void layer_ranges(const struct vf_model *m, size_t *lo, size_t *hi)
{
    for (uint32_t l = 0; l <= m->n_layers; l++) {
        lo[l] = m->n_groups;
        hi[l] = 0;
    }
    for (size_t i = 0; i < m->n_groups; i++) {
        int32_t l = m->groups[i].layer;
        if (l < -1 || l >= (int32_t)m->n_layers)
            continue;
        size_t b = (size_t)(l + 1);
        if (lo[b] == m->n_groups)
            lo[b] = i;
        hi[b] = i + 1;
    }
    for (uint32_t l = 0; l <= m->n_layers; l++)
        if (lo[l] > hi[l])
            lo[l] = hi[l];
}

/* The group of class cls in [lo, hi) with row length row, else the first of class cls;
 * NULL when none. */
static struct vf_tgroup *find(struct vf_model *m, size_t lo, size_t hi, int32_t l,
                              enum vf_tclass cls, uint64_t row)
{
    struct vf_tgroup *first = NULL;
    for (size_t i = lo; i < hi; i++) {
        struct vf_tgroup *g = &m->groups[i];
        if (g->layer != l || g->cls != cls || g->n_params == 0)
            continue;
        if (g->row_elems == row)
            return g;
        if (!first)
            first = g;
    }
    return first;
}

enum vf_err vf__model_apply_tensors(struct vf_model *m, const struct vf_tensor_info *t, size_t n,
                                    struct vf_error *err)
{
    uint64_t loaded = 0, sum = 0;
    /* per-layer group ranges, computed once: [0] is layer -1 */
    static_assert(VF_MAX_LAYERS < 4096, "apply: layer table on the stack");
    size_t lo[VF_MAX_LAYERS + 1], hi[VF_MAX_LAYERS + 1];

    if (!m || (n && !t) || !m->groups || m->n_groups == 0 || m->n_layers > VF_MAX_LAYERS)
        return vf__errf(err, VF_EINVAL, "safetensors: no model groups or tensors to merge");
    for (size_t i = 0; i < m->n_groups; i++)
        m->groups[i].stored_bytes = 0;
    layer_ranges(m, lo, hi);

    for (size_t i = 0; i < n; i++) {
        const struct vf_tensor_info *x = &t[i];
        if (!vf__add_u64(sum, x->bytes, &sum))
            return vf__errf(err, VF_ERANGE, "safetensors: tensor bytes overflow 64 bits");
        if (skipped(m, x))
            continue;
        if (!vf__add_u64(loaded, x->bytes, &loaded))
            return vf__errf(err, VF_ERANGE, "safetensors: tensor bytes overflow 64 bits");
        size_t b = (size_t)(x->layer + 1);
        uint64_t row = x->n_dims ? x->dims[x->n_dims - 1] : 1;
        struct vf_tgroup *g = find(m, lo[b], hi[b], x->layer, x->cls, row);
        struct vf_tgroup *parts[3] = {NULL, NULL, NULL};
        size_t np = 0;

        /* a fused tensor whose layer has separate groups is spread over them */
        if (fused_gate_up(x)) {
            enum vf_tclass gate = (enum vf_tclass)(x->cls - 1);
            parts[0] = find(m, lo[b], hi[b], x->layer, gate, 0);
            parts[1] = find(m, lo[b], hi[b], x->layer, x->cls, 0);
            np = parts[0] && parts[1] ? 2 : 0;
        } else if (x->cls == VF_T_ATTN_QKV && !g) {
            parts[0] = find(m, lo[b], hi[b], x->layer, VF_T_ATTN_Q, 0);
            parts[1] = find(m, lo[b], hi[b], x->layer, VF_T_ATTN_K, 0);
            parts[2] = find(m, lo[b], hi[b], x->layer, VF_T_ATTN_V, 0);
            np = parts[0] && parts[1] && parts[2] ? 3 : 0;
        }
        if (np) {
            uint64_t den = 0, left = x->bytes;
            for (size_t k = 0; k < np; k++)
                den = vf__sat_add(den, parts[k]->n_params);
            for (size_t k = 0; k < np; k++) {
                uint64_t s = k + 1 == np ? left : share(x->bytes, parts[k]->n_params, den);
                left -= s;
                parts[k]->stored_bytes = vf__sat_add(parts[k]->stored_bytes, s);
            }
            continue;
        }
        if (g)
            g->stored_bytes = vf__sat_add(g->stored_bytes, x->bytes);
        /* else: counted apart (vision tower, projector, unmatched tensor): loaded */
    }

    /* a group that got nothing while a sibling of its class and layer did: fold it in */
    for (size_t i = 0; i < m->n_groups; i++) {
        struct vf_tgroup *g = &m->groups[i];
        if (g->stored_bytes || g->n_params == 0 || g->layer < -1 ||
            g->layer >= (int32_t)m->n_layers)
            continue;
        size_t b = (size_t)(g->layer + 1);
        for (size_t j = lo[b]; j < hi[b]; j++) {
            struct vf_tgroup *h = &m->groups[j];
            if (h != g && h->layer == g->layer && h->cls == g->cls && h->stored_bytes) {
                h->n_params = vf__sat_add(h->n_params, g->n_params);
                h->n_tensors += g->n_tensors;
                g->n_params = 0;
                g->n_tensors = 0;
                break;
            }
        }
    }
    m->exact_weight_bytes = loaded;
    m->tensors = t;
    m->n_tensors = n;
    m->provenance = VF_PROV_EXACT;
    return VF_OK;
}
