/* SPDX-License-Identifier: Apache-2.0 */
/*
 * read_gguf.c - the GGUF reader: metadata and tensor infos of llama.cpp model
 * files (versions 1-3, little-endian), streamed through a struct vf_reader in
 * 64 KiB chunks; the weights are never read, so a header-only or truncated file
 * works as well as the whole model. Large arrays (tokenizer vocabularies) are
 * skipped while streaming with only their length kept. The input is hostile:
 * every count, length and offset is checked against the limits of read_gguf.h
 * and against the bytes really there before anything is allocated for it, and
 * every error names the byte offset.
 *
 * The reader returns the parsed header (struct vf_gguf with its metadata pairs and
 * tensor infos); model/model_gguf.c turns it into a struct vf_model.
 */
#include "read_gguf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK 65536u

/* Sizes and names of the metadata value types (gguf.cpp GGUF_TYPE_SIZE, GGUF_TYPE_NAME). */
static const uint8_t type_size[VF_GGUF_TYPE_COUNT] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
static const char *const type_names[VF_GGUF_TYPE_COUNT] = {
    "u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool", "string", "array", "u64", "i64", "f64"};

/* ------------------------------------------------------------ ggml types */

struct ggml_type_info {
    const char *name;
    uint32_t blck, bytes; /* 0/0: removed from GGUF */
    enum vf_dtype dt;
};

/*
 * ggml/include/ggml.h enum ggml_type and ggml/src/ggml.c type_traits
 * (blck_size, type_size = sizeof(block_*) from ggml-common.h). Ids 4, 5 (Q4_2,
 * Q4_3), 31-33 (Q4_0_4_4 ...) and 36-38 (IQ4_NL_4_4 ...) were removed and are
 * refused by gguf.cpp.
 */
static const struct ggml_type_info ggml_types[] = {
    [0] = {"F32", 1, 4, VF_DT_F32},
    [1] = {"F16", 1, 2, VF_DT_F16},
    [2] = {"Q4_0", 32, 18, VF_DT_Q4_0},
    [3] = {"Q4_1", 32, 20, VF_DT_Q4_1},
    [4] = {"Q4_2", 0, 0, VF_DT_DEFAULT},
    [5] = {"Q4_3", 0, 0, VF_DT_DEFAULT},
    [6] = {"Q5_0", 32, 22, VF_DT_Q5_0},
    [7] = {"Q5_1", 32, 24, VF_DT_Q5_1},
    [8] = {"Q8_0", 32, 34, VF_DT_Q8_0},
    [9] = {"Q8_1", 32, 36, VF_DT_Q8_1},
    [10] = {"Q2_K", 256, 84, VF_DT_Q2_K},
    [11] = {"Q3_K", 256, 110, VF_DT_Q3_K},
    [12] = {"Q4_K", 256, 144, VF_DT_Q4_K},
    [13] = {"Q5_K", 256, 176, VF_DT_Q5_K},
    [14] = {"Q6_K", 256, 210, VF_DT_Q6_K},
    [15] = {"Q8_K", 256, 292, VF_DT_Q8_K},
    [16] = {"IQ2_XXS", 256, 66, VF_DT_IQ2_XXS},
    [17] = {"IQ2_XS", 256, 74, VF_DT_IQ2_XS},
    [18] = {"IQ3_XXS", 256, 98, VF_DT_IQ3_XXS},
    [19] = {"IQ1_S", 256, 50, VF_DT_IQ1_S},
    [20] = {"IQ4_NL", 32, 18, VF_DT_IQ4_NL},
    [21] = {"IQ3_S", 256, 110, VF_DT_IQ3_S},
    [22] = {"IQ2_S", 256, 82, VF_DT_IQ2_S},
    [23] = {"IQ4_XS", 256, 136, VF_DT_IQ4_XS},
    [24] = {"I8", 1, 1, VF_DT_DEFAULT},
    [25] = {"I16", 1, 2, VF_DT_DEFAULT},
    [26] = {"I32", 1, 4, VF_DT_DEFAULT},
    [27] = {"I64", 1, 8, VF_DT_DEFAULT},
    [28] = {"F64", 1, 8, VF_DT_DEFAULT},
    [29] = {"IQ1_M", 256, 56, VF_DT_IQ1_M},
    [30] = {"BF16", 1, 2, VF_DT_BF16},
    [31] = {"Q4_0_4_4", 0, 0, VF_DT_DEFAULT},
    [32] = {"Q4_0_4_8", 0, 0, VF_DT_DEFAULT},
    [33] = {"Q4_0_8_8", 0, 0, VF_DT_DEFAULT},
    [34] = {"TQ1_0", 256, 54, VF_DT_TQ1_0},
    [35] = {"TQ2_0", 256, 66, VF_DT_TQ2_0},
    [36] = {"IQ4_NL_4_4", 0, 0, VF_DT_DEFAULT},
    [37] = {"IQ4_NL_4_8", 0, 0, VF_DT_DEFAULT},
    [38] = {"IQ4_NL_8_8", 0, 0, VF_DT_DEFAULT},
    [39] = {"MXFP4", 32, 17, VF_DT_MXFP4},
    /* ggml's NVFP4 is 4 UE4M3 scales + 32 bytes of E2M1 per 64 elements, no
     * per-tensor scale: not the layout of VF_DT_NVFP4 (9 B per 16), so it has
     * no VF_DT equivalent. */
    [40] = {"NVFP4", 64, 36, VF_DT_DEFAULT},
    [41] = {"Q1_0", 128, 18, VF_DT_DEFAULT},
    [42] = {"Q2_0", 64, 18, VF_DT_DEFAULT},
};

#define N_GGML_TYPES ((int)(sizeof(ggml_types) / sizeof(ggml_types[0])))

bool vf__ggml_type(int t, const char **name, uint32_t *blck, uint32_t *bytes)
{
    const struct ggml_type_info *ti = t >= 0 && t < N_GGML_TYPES ? &ggml_types[t] : NULL;
    if (name)
        *name = ti ? ti->name : NULL;
    if (blck)
        *blck = ti ? ti->blck : 0;
    if (bytes)
        *bytes = ti ? ti->bytes : 0;
    return ti && ti->blck != 0;
}

enum vf_dtype vf__ggml_type_dtype(int t)
{
    return t >= 0 && t < N_GGML_TYPES ? ggml_types[t].dt : VF_DT_DEFAULT;
}

int vf__ggml_type_count(void)
{
    return N_GGML_TYPES;
}

/* llama.cpp include/llama.h enum llama_ftype. */
static const char *const ftype_names[] = {
    [0] = "F32",      [1] = "F16",      [2] = "Q4_0",       [3] = "Q4_1",    [7] = "Q8_0",
    [8] = "Q5_0",     [9] = "Q5_1",     [10] = "Q2_K",      [11] = "Q3_K_S", [12] = "Q3_K_M",
    [13] = "Q3_K_L",  [14] = "Q4_K_S",  [15] = "Q4_K_M",    [16] = "Q5_K_S", [17] = "Q5_K_M",
    [18] = "Q6_K",    [19] = "IQ2_XXS", [20] = "IQ2_XS",    [21] = "Q2_K_S", [22] = "IQ3_XS",
    [23] = "IQ3_XXS", [24] = "IQ1_S",   [25] = "IQ4_NL",    [26] = "IQ3_S",  [27] = "IQ3_M",
    [28] = "IQ2_S",   [29] = "IQ2_M",   [30] = "IQ4_XS",    [31] = "IQ1_M",  [32] = "BF16",
    [36] = "TQ1_0",   [37] = "TQ2_0",   [38] = "MXFP4_MOE",
};

const char *vf__gguf_ftype_name(int ft)
{
    if (ft < 0)
        return NULL;
    ft &= ~1024; /* LLAMA_FTYPE_GUESSED */
    if (ft >= (int)(sizeof(ftype_names) / sizeof(ftype_names[0])))
        return NULL;
    return ftype_names[ft];
}

/* ------------------------------------------------------------ the byte stream
 */

struct stream {
    struct vf_reader *r;
    const char *name;
    uint64_t size; /* VF_UNKNOWN when the reader does not know */
    uint64_t pos;  /* offset of the next byte */
    unsigned char *buf;
    uint64_t base; /* buf holds bytes [base, base + len) */
    size_t len;
    uint32_t version;
    const char *where; /* what is being read, for "file ends inside ..." */
    struct vf_error *err;
};

/* "2^61" for large powers of two, digits otherwise. */
static const char *count_text(char *buf, size_t cap, uint64_t n)
{
    if (n >= ((uint64_t)1 << 32) && (n & (n - 1)) == 0)
        snprintf(buf, cap, "2^%d", __builtin_ctzll(n));
    else
        snprintf(buf, cap, "%llu", (unsigned long long)n);
    return buf;
}

/* Sets the error "gguf: cannot read 'NAME': MSG" and returns code. */
static enum vf_err fail(struct stream *st, enum vf_err code, const char *fmt, ...) VF__PRINTF(3, 4);
static enum vf_err fail(struct stream *st, enum vf_err code, const char *fmt, ...)
{
    char msg[VF_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return vf__errf(st->err, code, "gguf: cannot read '%s': %s", st->name, msg);
}

/* " (file is 4.10 GiB)" or "" when the size is unknown. */
static const char *file_is(const struct stream *st, char *buf, size_t cap)
{
    char b[32];
    if (st->size == VF_UNKNOWN)
        return "";
    snprintf(buf, cap, " (file is %s)", vf_format_bytes(b, sizeof b, st->size, VF_FMT_IEC));
    return buf;
}

static enum vf_err eof(struct stream *st, uint64_t at)
{
    return fail(st, VF_EFORMAT, "file ends at byte %llu inside the %s (truncated header)",
                (unsigned long long)at, st->where);
}

/* Bytes left in the file from pos, or VF_UNKNOWN. */
static uint64_t remaining(const struct stream *st)
{
    if (st->size == VF_UNKNOWN)
        return VF_UNKNOWN;
    return st->size > st->pos ? st->size - st->pos : 0;
}

/* Can n more bytes be read from pos (the header limit and, when known, the file
 * size)? */
static enum vf_err need(struct stream *st, uint64_t n)
{
    uint64_t end;
    bool over = !vf__add_u64(st->pos, n, &end);
    if (st->size != VF_UNKNOWN && (over || end > st->size))
        return eof(st, st->size);
    if (over || end > VF_GGUF_MAX_HEADER_BYTES)
        return fail(st, VF_ELIMIT, "header exceeds the limit of %llu MiB at byte %llu",
                    (unsigned long long)(VF_GGUF_MAX_HEADER_BYTES >> 20),
                    (unsigned long long)st->pos);
    return VF_OK;
}

/* Reads n bytes into dst (buffered). */
static enum vf_err get(struct stream *st, void *dst, size_t n)
{
    unsigned char *d = dst;
    enum vf_err rc = need(st, n);
    if (rc)
        return rc;
    while (n > 0) {
        if (st->pos < st->base || st->pos >= st->base + st->len) {
            size_t got = 0;
            st->base = st->pos;
            st->len = 0;
            rc = st->r->read(st->r->ud, st->pos, st->buf, CHUNK, &got, st->err);
            if (rc)
                return rc;
            if (got == 0)
                return eof(st, st->pos);
            st->len = got;
        }
        size_t off = (size_t)(st->pos - st->base), k = st->len - off;
        if (k > n)
            k = n;
        memcpy(d, st->buf + off, k);
        d += k;
        n -= k;
        st->pos += k;
    }
    return VF_OK;
}

/* Skips n bytes (no read when the file size is known: only the bounds are
 * checked). */
static enum vf_err skip(struct stream *st, uint64_t n)
{
    enum vf_err rc = need(st, n);
    if (rc)
        return rc;
    if (st->size == VF_UNKNOWN && n > 0) {
        /* a reader of unknown size: the last byte must be there */
        unsigned char c;
        st->pos += n - 1;
        return get(st, &c, 1);
    }
    st->pos += n;
    return VF_OK;
}

static uint64_t le(const unsigned char *p, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = n; i-- > 0;)
        v = v << 8 | p[i];
    return v;
}

static enum vf_err get_u32(struct stream *st, uint32_t *out)
{
    unsigned char b[4];
    enum vf_err rc = get(st, b, 4);
    *out = (uint32_t)le(b, 4);
    return rc;
}

static enum vf_err get_u64(struct stream *st, uint64_t *out)
{
    unsigned char b[8];
    enum vf_err rc = get(st, b, 8);
    *out = le(b, 8);
    return rc;
}

/* A count or length: uint32 in GGUF v1, uint64 from v2 on. */
static enum vf_err get_len(struct stream *st, uint64_t *out)
{
    uint32_t v;
    if (st->version >= 2)
        return get_u64(st, out);
    enum vf_err rc = get_u32(st, &v);
    *out = v;
    return rc;
}

/*
 * Reads a string: kept in arena a (NUL-terminated) when a is non-NULL and it is
 * at most max bytes, else skipped (*out = NULL; over max is an error when
 * too_long_is_error). *len gets the length. `what` names it in messages.
 */
static enum vf_err get_str(struct stream *st, struct vf_arena *a, uint64_t max, bool error_if_long,
                           const char *what, const char **out, uint64_t *len)
{
    uint64_t at = st->pos, n;
    enum vf_err rc = get_len(st, &n);
    if (rc)
        return rc;
    *out = NULL;
    if (len)
        *len = n;
    if (n > max && error_if_long) {
        char nb[32];
        return fail(st, VF_ELIMIT, "%s of %s bytes at byte %llu exceeds the limit of %llu", what,
                    count_text(nb, sizeof nb, n), (unsigned long long)at, (unsigned long long)max);
    }
    if (!a || n > max)
        return skip(st, n);
    if ((rc = need(st, n)))
        return rc; /* before allocating: the bytes must be there */
    char *s = vf_arena_alloc(a, (size_t)n + 1);
    if (!s)
        return fail(st, VF_ENOMEM, "out of memory for a %s of %llu bytes at byte %llu", what,
                    (unsigned long long)n, (unsigned long long)at);
    if ((rc = get(st, s, (size_t)n)))
        return rc;
    s[n] = '\0';
    *out = s;
    return VF_OK;
}

/* Decodes one fixed-size scalar of type t from b. */
static union vf_gguf_num decode(uint32_t t, const unsigned char *b)
{
    union vf_gguf_num v;
    uint64_t raw = le(b, type_size[t]);
    switch (t) {
    case VF_GGUF_I8:
        v.i = (int8_t)raw;
        break;
    case VF_GGUF_I16:
        v.i = (int16_t)raw;
        break;
    case VF_GGUF_I32:
        v.i = (int32_t)raw;
        break;
    case VF_GGUF_I64:
        v.i = (int64_t)raw;
        break;
    case VF_GGUF_F32: {
        float f;
        uint32_t r32 = (uint32_t)raw;
        memcpy(&f, &r32, 4);
        v.f = f;
        break;
    }
    case VF_GGUF_F64:
        memcpy(&v.f, &raw, 8);
        break;
    default:
        v.u = raw;
        break;
    }
    return v;
}

static enum vf_err read_value(struct stream *st, struct vf_arena *a, uint32_t t, unsigned depth,
                              struct vf_gguf_kv *kv);

/*
 * Reads an array value (element type and count, then the elements). Kept in kv
 * (when non-NULL) if short enough; otherwise skipped, with only kv->n set.
 * Claimed counts are checked against the bytes left before anything is
 * allocated or looped over.
 */
static enum vf_err read_array(struct stream *st, struct vf_arena *a, unsigned depth,
                              struct vf_gguf_kv *kv)
{
    uint64_t at = st->pos, n, min_bytes;
    uint32_t et;
    enum vf_err rc;
    char nb[32], fb[48];

    if (depth >= VF_GGUF_MAX_DEPTH)
        return fail(st, VF_ELIMIT, "arrays nested deeper than %u at byte %llu", VF_GGUF_MAX_DEPTH,
                    (unsigned long long)at);
    if ((rc = get_u32(st, &et)) || (rc = get_len(st, &n)))
        return rc;
    if (et >= VF_GGUF_TYPE_COUNT)
        return fail(st, VF_EFORMAT, "array of unknown value type %u at byte %llu", et,
                    (unsigned long long)at);
    if (n > VF_GGUF_MAX_ARRAY_LEN)
        return fail(st, VF_ELIMIT, "array claims %s elements at byte %llu (limit %s)",
                    count_text(nb, sizeof nb, n), (unsigned long long)at,
                    count_text(fb, sizeof fb, VF_GGUF_MAX_ARRAY_LEN));
    /* every element takes at least this many bytes: a string its length, an array
     * its element type and count */
    uint64_t per = type_size[et]          ? type_size[et]
                   : et == VF_GGUF_STRING ? (st->version >= 2 ? 8 : 4)
                                          : (st->version >= 2 ? 12 : 8);
    if (!vf__mul_u64(n, per, &min_bytes) ||
        (remaining(st) != VF_UNKNOWN && min_bytes > remaining(st)))
        return fail(st, VF_EFORMAT, "array of %s %s claims %s elements at byte %llu%s",
                    type_names[et], et == VF_GGUF_ARRAY ? "values" : "elements",
                    count_text(nb, sizeof nb, n), (unsigned long long)at,
                    file_is(st, fb, sizeof fb));
    if (kv) {
        kv->elem_type = et;
        kv->n = n;
    }
    if (type_size[et]) {
        if (!kv || !a || n > VF_GGUF_MAX_ARRAY_KEPT)
            return skip(st, min_bytes);
        kv->arr = vf_arena_alloc(a, (size_t)(n ? n : 1) * sizeof(union vf_gguf_num));
        if (!kv->arr)
            return fail(st, VF_ENOMEM, "out of memory for an array at byte %llu",
                        (unsigned long long)at);
        for (uint64_t i = 0; i < n; i++) {
            unsigned char b[8];
            if ((rc = get(st, b, type_size[et])))
                return rc;
            kv->arr[i] = decode(et, b);
        }
        kv->kept = true;
        return VF_OK;
    }
    if (et == VF_GGUF_STRING && kv && a && n <= VF_GGUF_MAX_STR_ARRAY_KEPT) {
        kv->strs = vf_arena_alloc(a, (size_t)(n ? n : 1) * sizeof(char *));
        if (!kv->strs)
            return fail(st, VF_ENOMEM, "out of memory for an array at byte %llu",
                        (unsigned long long)at);
        for (uint64_t i = 0; i < n; i++)
            if ((rc = get_str(st, a, VF_GGUF_MAX_STRING, true, "string", &kv->strs[i], NULL)))
                return rc;
        kv->kept = true;
        return VF_OK;
    }
    /* skipped element by element: the loop is bounded by the bytes really there
     */
    for (uint64_t i = 0; i < n; i++)
        if ((rc = read_value(st, NULL, et, depth + 1, NULL)))
            return rc;
    return VF_OK;
}

/* Reads one value of type t; kept in kv when kv and a are non-NULL. */
static enum vf_err read_value(struct stream *st, struct vf_arena *a, uint32_t t, unsigned depth,
                              struct vf_gguf_kv *kv)
{
    enum vf_err rc;
    if (t == VF_GGUF_ARRAY)
        return read_array(st, a, depth, kv);
    if (t == VF_GGUF_STRING) {
        const char *s;
        uint64_t n;
        if ((rc = get_str(st, kv ? a : NULL, VF_GGUF_MAX_STRING, false, "string", &s, &n)))
            return rc;
        if (kv) {
            kv->s = s;
            kv->n = n;
            kv->kept = s != NULL;
        }
        return VF_OK;
    }
    unsigned char b[8];
    if ((rc = get(st, b, type_size[t])))
        return rc;
    if (kv) {
        kv->v = decode(t, b);
        kv->kept = true;
    }
    return VF_OK;
}

/* ------------------------------------------------------------ growable scratch
 * vectors */

struct vec {
    void *p;
    size_t n, cap, elem;
};

/* A pointer to a new zeroed element, NULL when out of memory. */
static void *vec_push(struct vec *v)
{
    if (v->n == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 16;
        void *p = vf__realloc(v->p, cap * v->elem);
        if (!p)
            return NULL;
        v->p = p;
        v->cap = cap;
    }
    void *e = (char *)v->p + v->n++ * v->elem;
    memset(e, 0, v->elem);
    return e;
}

/* Copies the vector into the arena (NULL when empty or out of memory). */
static void *vec_keep(struct vf_arena *a, const struct vec *v)
{
    if (v->n == 0)
        return NULL;
    void *p = vf_arena_alloc(a, v->n * v->elem);
    if (p)
        memcpy(p, v->p, v->n * v->elem);
    return p;
}

/* ------------------------------------------------------------ tensor names */

static bool starts(const char *s, const char *p)
{
    return strncmp(s, p, strlen(p)) == 0;
}

static bool ends(const char *s, size_t n, const char *suf)
{
    size_t k = strlen(suf);
    return n >= k && memcmp(s + n - k, suf, k) == 0;
}

static const struct {
    const char *base;
    enum vf_tclass cls;
} class_names[] = {
    {"token_embd", VF_T_TOKEN_EMBD},
    {"output", VF_T_OUTPUT},
    {"attn_q", VF_T_ATTN_Q},
    {"attn_q_a", VF_T_ATTN_Q},
    {"attn_q_b", VF_T_ATTN_Q},
    {"attn_k", VF_T_ATTN_K},
    {"attn_kv_a_mqa", VF_T_ATTN_K},
    {"attn_v", VF_T_ATTN_V},
    {"attn_kv_b", VF_T_ATTN_V},
    {"attn_k_b", VF_T_ATTN_V},
    {"attn_v_b", VF_T_ATTN_V},
    {"attn_qkv", VF_T_ATTN_QKV},
    {"attn_output", VF_T_ATTN_O},
    {"attn_sinks", VF_T_BIAS},
    {"ffn_gate", VF_T_FFN_GATE},
    {"ffn_up", VF_T_FFN_UP},
    {"ffn_down", VF_T_FFN_DOWN},
    {"ffn_gate_exps", VF_T_FFN_GATE_EXP},
    {"ffn_up_exps", VF_T_FFN_UP_EXP},
    {"ffn_gate_up_exps", VF_T_FFN_UP_EXP},
    {"ffn_down_exps", VF_T_FFN_DOWN_EXP},
    {"ffn_gate_shexp", VF_T_FFN_GATE_SHEXP},
    {"ffn_up_shexp", VF_T_FFN_UP_SHEXP},
    {"ffn_down_shexp", VF_T_FFN_DOWN_SHEXP},
    {"ffn_gate_inp", VF_T_ROUTER},
    {"ffn_gate_inp_shexp", VF_T_ROUTER},
    {"exp_probs_b", VF_T_BIAS},
};

/* See read_gguf.h. */
void vf__gguf_classify(const char *name, int32_t *layer, enum vf_tclass *cls, bool *expert_each)
{
    const char *base = name;
    *layer = -1;
    *cls = VF_T_OTHER;
    *expert_each = false;
    if (starts(name, "blk.") && name[4] >= '0' && name[4] <= '9') {
        uint32_t l = 0;
        const char *p = name + 4;
        while (*p >= '0' && *p <= '9' && l <= VF_MAX_LAYERS)
            l = l * 10 + (uint32_t)(*p++ - '0');
        if (*p == '.' && l < VF_MAX_LAYERS) {
            *layer = (int32_t)l;
            base = p + 1;
        }
    }
    size_t n = strlen(base);
    bool bias = ends(base, n, ".bias");
    if (ends(base, n, ".weight"))
        n -= 7;
    else if (bias)
        n -= 5;
    /* old per-expert names: ffn_gate.7 */
    size_t k = n;
    while (k > 0 && base[k - 1] >= '0' && base[k - 1] <= '9')
        k--;
    bool numbered = k < n && k > 0 && base[k - 1] == '.';
    size_t stem = numbered ? k - 1 : n;
    char b[VF_GGUF_MAX_NAME];
    if (stem >= sizeof b)
        return;
    memcpy(b, base, stem);
    b[stem] = '\0';
    if (strcmp(b, "norm") == 0 || strstr(b, "_norm") || strstr(b, "norm_")) {
        *cls = VF_T_NORM;
        return;
    }
    if (bias) {
        *cls = VF_T_BIAS;
        return;
    }
    if (starts(b, "ssm_")) {
        *cls = VF_T_SSM;
        return;
    }
    for (size_t i = 0; i < sizeof class_names / sizeof class_names[0]; i++) {
        if (strcmp(b, class_names[i].base) == 0) {
            *cls = class_names[i].cls;
            break;
        }
    }
    if (numbered && (*cls == VF_T_FFN_GATE || *cls == VF_T_FFN_UP || *cls == VF_T_FFN_DOWN)) {
        *cls = *cls == VF_T_FFN_GATE ? VF_T_FFN_GATE_EXP
               : *cls == VF_T_FFN_UP ? VF_T_FFN_UP_EXP
                                     : VF_T_FFN_DOWN_EXP;
        *expert_each = true;
    }
}

/* ------------------------------------------------------------ the header */

static int by_name(const void *pa, const void *pb)
{
    const struct vf_tensor_info *const *a = pa, *const *b = pb;
    return strcmp((*a)->name, (*b)->name);
}

static int by_key(const void *pa, const void *pb)
{
    const struct vf_gguf_kv *const *a = pa, *const *b = pb;
    return strcmp((*a)->key, (*b)->key);
}

/* See read_gguf.h. */
const struct vf_gguf_kv *vf__gguf_find(const struct vf_gguf *g, const char *key)
{
    if (!g || !g->kv || !key)
        return NULL;
    for (uint64_t i = 0; i < g->n_kv; i++)
        if (strcmp(g->kv[i].key, key) == 0)
            return &g->kv[i];
    return NULL;
}

/* The magic at offset 0: "GGUF", else a clear refusal. */
static enum vf_err check_magic(struct stream *st, const unsigned char m[4])
{
    /* llama.cpp's formats before GGUF, as their uint32 magic lies in the file */
    static const struct {
        char bytes[5], name[5];
    } legacy[] = {{"lmgg", "GGML"}, {"fmgg", "GGMF"}, {"tjgg", "GGJT"}, {"algg", "GGLA"},
                  {"GGML", "GGML"}, {"GGMF", "GGMF"}, {"GGJT", "GGJT"}, {"GGLA", "GGLA"}};
    char shown[20];
    size_t k = 0;
    if (memcmp(m, "GGUF", 4) == 0)
        return VF_OK;
    for (int i = 0; i < 4; i++) {
        if (m[i] >= 0x20 && m[i] < 0x7f && m[i] != '\'' && m[i] != '\\')
            shown[k++] = (char)m[i];
        else
            k += (size_t)snprintf(shown + k, sizeof shown - k, "\\x%02x", m[i]);
    }
    shown[k] = '\0';
    if (memcmp(m, "FUGG", 4) == 0)
        return fail(st, VF_EUNSUPPORTED,
                    "bad magic '%s' at offset 0 (a big-endian GGUF file? only "
                    "little-endian "
                    "files are supported)",
                    shown);
    for (size_t i = 0; i < sizeof legacy / sizeof legacy[0]; i++)
        if (memcmp(m, legacy[i].bytes, 4) == 0)
            return fail(st, VF_EUNSUPPORTED,
                        "bad magic '%s' at offset 0 (legacy GGML file? convert it to "
                        "GGUF with "
                        "llama.cpp)",
                        legacy[i].name);
    return fail(st, VF_EFORMAT, "bad magic '%s' at offset 0 (not a GGUF file)", shown);
}

/* Reads the metadata pairs into kvs (scratch). */
static enum vf_err read_kvs(struct stream *st, struct vf_arena *a, uint64_t n_kv, struct vec *kvs)
{
    enum vf_err rc;
    st->where = "metadata";
    for (uint64_t i = 0; i < n_kv; i++) {
        uint64_t at = st->pos;
        struct vf_gguf_kv *kv = vec_push(kvs);
        uint32_t t;
        if (!kv)
            return fail(st, VF_ENOMEM, "out of memory at byte %llu", (unsigned long long)at);
        kv->offset = at;
        if ((rc = get_str(st, a, VF_GGUF_MAX_KEY, true, "metadata key", &kv->key, NULL)))
            return rc;
        if ((rc = get_u32(st, &t)))
            return rc;
        if (t >= VF_GGUF_TYPE_COUNT)
            return fail(st, VF_EFORMAT, "key '%s' has unknown value type %u at byte %llu", kv->key,
                        t, (unsigned long long)at);
        kv->type = t;
        if ((rc = read_value(st, a, t, 0, kv)))
            return rc;
    }
    /* duplicate keys (gguf.cpp refuses them too) */
    const struct vf_gguf_kv **idx = vf__malloc((kvs->n ? kvs->n : 1) * sizeof *idx);
    if (!idx)
        return fail(st, VF_ENOMEM, "out of memory");
    for (size_t i = 0; i < kvs->n; i++)
        idx[i] = (const struct vf_gguf_kv *)kvs->p + i;
    qsort(idx, kvs->n, sizeof *idx, by_key);
    for (size_t i = 1; i < kvs->n; i++) {
        if (strcmp(idx[i - 1]->key, idx[i]->key) == 0) {
            const struct vf_gguf_kv *d = idx[i - 1]->offset > idx[i]->offset ? idx[i - 1] : idx[i];
            rc = fail(st, VF_EFORMAT, "duplicate key '%s' at byte %llu", d->key,
                      (unsigned long long)d->offset);
            break;
        }
    }
    vf__free(idx);
    return rc;
}

/*
 * Reads one tensor info into t: name, dims, type, offset; F-W-10 bytes. `at` is
 * its offset in the file (for messages).
 */
static enum vf_err read_tensor(struct stream *st, struct vf_arena *a, struct vf_tensor_info *t)
{
    uint64_t at = st->pos, len;
    uint32_t nd, type;
    enum vf_err rc;
    char nb[32], fb[48];

    if ((rc = get_str(st, a, VF_GGUF_MAX_NAME - 1, true, "tensor name", &t->name, &len)))
        return rc;
    if (len == 0)
        return fail(st, VF_EFORMAT, "tensor with an empty name at byte %llu",
                    (unsigned long long)at);
    if ((rc = get_u32(st, &nd)))
        return rc;
    if (nd > VF_GGUF_MAX_DIMS)
        return fail(st, VF_EFORMAT, "tensor '%s' has %u dimensions at byte %llu (at most %u)",
                    t->name, nd, (unsigned long long)at, VF_GGUF_MAX_DIMS);
    t->n_dims = nd;
    uint64_t n = 1;
    bool over = false;
    for (uint32_t j = 0; j < nd; j++) {
        uint64_t d;
        if ((rc = get_len(st, &d)))
            return rc;
        t->dims[j] = d;
        if (d > (uint64_t)INT64_MAX || !vf__mul_u64(n, d, &n))
            over = true;
    }
    if (over || n > VF_GGUF_MAX_TENSOR_ELEMS)
        return fail(st, VF_ELIMIT, "tensor '%s' claims %s elements at byte %llu%s", t->name,
                    over ? "more than 2^64" : count_text(nb, sizeof nb, n), (unsigned long long)at,
                    file_is(st, fb, sizeof fb));
    t->n_elems = n;
    if ((rc = get_u32(st, &type)))
        return rc;
    const char *tn;
    uint32_t blck, bytes;
    if (!vf__ggml_type((int)type, &tn, &blck, &bytes)) {
        if (tn)
            return fail(st, VF_EUNSUPPORTED,
                        "tensor '%s' has type %u (%s) at byte %llu, which ggml removed from "
                        "GGUF (re-convert the model)",
                        t->name, type, tn, (unsigned long long)at);
        return fail(st, VF_EUNSUPPORTED,
                    "tensor '%s' has unknown ggml type %u at byte %llu (known: 0..%d)", t->name,
                    type, (unsigned long long)at, N_GGML_TYPES - 1);
    }
    t->ggml_type = (int)type;
    uint64_t ne0 = nd ? t->dims[0] : 1;
    if (ne0 % blck)
        return fail(st, VF_EFORMAT,
                    "tensor '%s' of type %s has rows of %llu elements at byte %llu, not a "
                    "multiple of the block size %u",
                    t->name, tn, (unsigned long long)ne0, (unsigned long long)at, blck);
    /* F-W-10: bytes = rows x ceil(ne0 / blck) x type_size (ne0 is a multiple of
     * blck) */
    t->bytes = n / blck * bytes;
    if ((rc = get_u64(st, &t->offset)))
        return rc;
    t->st_dtype = NULL;
    bool each;
    vf__gguf_classify(t->name, &t->layer, &t->cls, &each);
    return VF_OK;
}

/* ------------------------------------------------------------ vf_gguf_read */

/*
 * The fixed start of a header: the magic, the version (1-3; a byte-swapped one is a
 * big-endian file) into st->version, then the counts of tensors and metadata pairs, each
 * within its limit (VF_GGUF_MAX_TENSORS, VF_GGUF_MAX_KV). Errors name the byte offset.
 */
static enum vf_err read_preamble(struct stream *st, uint64_t *n_tensors, uint64_t *n_kv)
{
    unsigned char magic[4];
    enum vf_err rc;
    char nb[32];

    if (st->size != VF_UNKNOWN && st->size < 4)
        return fail(st, VF_EFORMAT, "file is %llu bytes, too short for a GGUF header",
                    (unsigned long long)st->size);
    if ((rc = get(st, magic, 4)) || (rc = check_magic(st, magic)))
        return rc;
    if ((rc = get_u32(st, &st->version)))
        return rc;
    if (st->version != 0 && (st->version & 0xffffu) == 0)
        return fail(st, VF_EUNSUPPORTED,
                    "version field 0x%08x at byte 4 looks byte-swapped: a big-endian "
                    "GGUF file "
                    "(only little-endian files are supported)",
                    st->version);
    if (st->version < 1 || st->version > 3)
        return fail(st, VF_EUNSUPPORTED, "GGUF version %u at byte 4 (known: 1, 2, 3)", st->version);
    if ((rc = get_len(st, n_tensors)) || (rc = get_len(st, n_kv)))
        return rc;
    if (*n_tensors > VF_GGUF_MAX_TENSORS)
        return fail(st, VF_ELIMIT, "header claims %s tensors at byte 8 (limit %u)",
                    count_text(nb, sizeof nb, *n_tensors), VF_GGUF_MAX_TENSORS);
    if (*n_kv > VF_GGUF_MAX_KV)
        return fail(st, VF_ELIMIT, "header claims %s metadata pairs at byte %u (limit %u)",
                    count_text(nb, sizeof nb, *n_kv), st->version >= 2 ? 16u : 12u, VF_GGUF_MAX_KV);
    return VF_OK;
}

/* general.alignment among the pairs kvs: a u32 power of two up to VF_GGUF_MAX_ALIGNMENT
 * (gguf.cpp), 32 when absent; VF_EFORMAT naming the pair's offset otherwise. */
static enum vf_err read_alignment(struct stream *st, const struct vec *kvs, uint64_t *out)
{
    *out = 32;
    for (size_t i = 0; i < kvs->n; i++) {
        const struct vf_gguf_kv *kv = (const struct vf_gguf_kv *)kvs->p + i;
        if (strcmp(kv->key, "general.alignment") != 0)
            continue;
        if (kv->type != VF_GGUF_U32 || kv->v.u == 0 || (kv->v.u & (kv->v.u - 1)) ||
            kv->v.u > VF_GGUF_MAX_ALIGNMENT)
            return fail(st, VF_EFORMAT,
                        "general.alignment at byte %llu must be a u32 power of two up "
                        "to %llu",
                        (unsigned long long)kv->offset, (unsigned long long)VF_GGUF_MAX_ALIGNMENT);
        *out = kv->v.u;
    }
    return VF_OK;
}

/* Reads n tensor infos (F-W-10 bytes each) into ts (scratch), the byte offset of each in
 * the file into offs (for messages). */
static enum vf_err read_tensors(struct stream *st, struct vf_arena *a, uint64_t n, struct vec *ts,
                                struct vec *offs)
{
    enum vf_err rc;
    st->where = "tensor infos";
    for (uint64_t i = 0; i < n; i++) {
        uint64_t *o = vec_push(offs);
        struct vf_tensor_info *t = vec_push(ts);
        if (!o || !t)
            return fail(st, VF_ENOMEM, "out of memory at byte %llu", (unsigned long long)st->pos);
        *o = st->pos;
        if ((rc = read_tensor(st, a, t)))
            return rc;
    }
    return VF_OK;
}

/*
 * The data layout of the tensors ts (gguf.cpp): laid out in order from offset 0, each
 * padded to the alignment, names unique. *sum gets their bytes (F-W-10), which must not
 * overflow. Errors name the tensor and its info's offset in offs.
 */
static enum vf_err check_layout(struct stream *st, uint64_t alignment, const struct vec *ts,
                                const struct vec *offs, uint64_t *sum)
{
    const struct vf_tensor_info *tv = ts->p;
    const uint64_t *at = offs->p;
    uint64_t expect = 0;
    char fb[48];

    *sum = 0;
    for (size_t i = 0; i < ts->n; i++) {
        uint64_t padded;
        if (tv[i].offset != expect)
            return fail(st, VF_EFORMAT,
                        "tensor '%s' at byte %llu has data offset %llu, expected %llu", tv[i].name,
                        (unsigned long long)at[i], (unsigned long long)tv[i].offset,
                        (unsigned long long)expect);
        if (!vf__add_u64(tv[i].bytes, alignment - 1, &padded) ||
            !vf__add_u64(expect, padded / alignment * alignment, &expect) ||
            !vf__add_u64(*sum, tv[i].bytes, sum))
            return fail(st, VF_ELIMIT, "tensor '%s' at byte %llu: data size overflows%s",
                        tv[i].name, (unsigned long long)at[i], file_is(st, fb, sizeof fb));
    }
    const struct vf_tensor_info **idx = vf__malloc((ts->n ? ts->n : 1) * sizeof *idx);
    if (!idx)
        return fail(st, VF_ENOMEM, "out of memory");
    for (size_t i = 0; i < ts->n; i++)
        idx[i] = &tv[i];
    qsort(idx, ts->n, sizeof *idx, by_name);
    enum vf_err rc = VF_OK;
    for (size_t i = 1; i < ts->n; i++) {
        if (strcmp(idx[i - 1]->name, idx[i]->name) == 0) {
            const struct vf_tensor_info *d = idx[i - 1] > idx[i] ? idx[i - 1] : idx[i];
            rc = fail(st, VF_EFORMAT, "duplicate tensor '%s' at byte %llu", d->name,
                      (unsigned long long)at[d - tv]);
            break;
        }
    }
    vf__free(idx);
    return rc;
}

/* Moves the pairs kvs and tensors ts into arena a as out's, and reads the general.* and
 * split.* keys the rest of the library asks for. */
static enum vf_err keep(struct stream *st, struct vf_arena *a, const struct vec *kvs,
                        const struct vec *ts, struct vf_gguf *out)
{
    uint64_t v;
    out->n_kv = kvs->n;
    out->n_tensors = ts->n;
    out->kv = vec_keep(a, kvs);
    out->tensors = vec_keep(a, ts);
    if ((kvs->n && !out->kv) || (ts->n && !out->tensors))
        return fail(st, VF_ENOMEM, "out of memory");
    out->file_type =
        vf_gguf_get_u64(out, "general.file_type", -1, &v) && v <= INT32_MAX ? (int)v : -1;
    vf_gguf_get_str(out, "general.architecture", &out->arch);
    vf_gguf_get_str(out, "general.name", &out->name);
    out->split_count =
        vf_gguf_get_u64(out, "split.count", -1, &v) && v <= UINT32_MAX ? (uint32_t)v : 1;
    out->split_no = vf_gguf_get_u64(out, "split.no", -1, &v) && v <= UINT32_MAX ? (uint32_t)v : 0;
    return VF_OK;
}

/* See the public contract: the preamble, the metadata pairs, the tensor infos, then the
 * checks of the data layout; *out is zeroed on an error. */
enum vf_err vf_gguf_read(struct vf_arena *a, struct vf_reader *r, struct vf_gguf *out,
                         struct vf_error *err)
{
    struct stream st = {.r = r, .err = err, .where = "header"};
    struct vec kvs = {.elem = sizeof(struct vf_gguf_kv)};
    struct vec ts = {.elem = sizeof(struct vf_tensor_info)};
    struct vec offs = {.elem = sizeof(uint64_t)};
    uint64_t n_tensors, n_kv, data_start;
    enum vf_err rc;

    if (!a || !r || !r->read || !out)
        return vf__errf(err, VF_EINVAL, "gguf: no arena, reader or output given");
    memset(out, 0, sizeof *out);
    st.name = r->name ? r->name : "(memory)";
    st.size = r->size;
    st.buf = vf__malloc(CHUNK);
    if (!st.buf)
        return fail(&st, VF_ENOMEM, "out of memory");

    if ((rc = read_preamble(&st, &n_tensors, &n_kv)))
        goto out;
    out->version = st.version;
    if ((rc = read_kvs(&st, a, n_kv, &kvs)) || (rc = read_alignment(&st, &kvs, &out->alignment)) ||
        (rc = read_tensors(&st, a, n_tensors, &ts, &offs)))
        goto out;
    /* the data section starts at the next multiple of the alignment */
    if (!vf__add_u64(st.pos, out->alignment - 1, &data_start)) {
        rc = fail(&st, VF_ERANGE, "header size overflows");
        goto out;
    }
    out->header_bytes = data_start / out->alignment * out->alignment;
    if ((rc = check_layout(&st, out->alignment, &ts, &offs, &out->weight_bytes)))
        goto out;
    rc = keep(&st, a, &kvs, &ts, out);
out:
    vf__free(kvs.p);
    vf__free(ts.p);
    vf__free(offs.p);
    vf__free(st.buf);
    if (rc)
        memset(out, 0, sizeof *out);
    return rc;
}

/* ------------------------------------------------------------ lookups */

static bool is_int(uint32_t t)
{
    return t == VF_GGUF_U8 || t == VF_GGUF_I8 || t == VF_GGUF_U16 || t == VF_GGUF_I16 ||
           t == VF_GGUF_U32 || t == VF_GGUF_I32 || t == VF_GGUF_U64 || t == VF_GGUF_I64;
}

static bool is_signed(uint32_t t)
{
    return t == VF_GGUF_I8 || t == VF_GGUF_I16 || t == VF_GGUF_I32 || t == VF_GGUF_I64;
}

/* See read_gguf.h. */
bool vf__gguf_as_u64(uint32_t t, union vf_gguf_num v, uint64_t *out)
{
    if (t == VF_GGUF_BOOL) {
        *out = v.u != 0;
        return true;
    }
    if (!is_int(t) || (is_signed(t) && v.i < 0))
        return false;
    *out = v.u;
    return true;
}

/*
 * A scalar integer, or element `layer` of a kept integer array (layer >= 0).
 * Negative values, floats and strings are "another type".
 */
bool vf_gguf_get_u64(const struct vf_gguf *g, const char *key, int layer, uint64_t *out)
{
    const struct vf_gguf_kv *kv = vf__gguf_find(g, key);
    uint64_t v;
    if (!kv || !kv->kept)
        return false;
    if (kv->type == VF_GGUF_ARRAY) {
        if (layer < 0 || !kv->arr || (uint64_t)layer >= kv->n ||
            !vf__gguf_as_u64(kv->elem_type, kv->arr[layer], &v))
            return false;
    } else if (!vf__gguf_as_u64(kv->type, kv->v, &v)) {
        return false;
    }
    if (out)
        *out = v;
    return true;
}

bool vf_gguf_get_str(const struct vf_gguf *g, const char *key, const char **out)
{
    const struct vf_gguf_kv *kv = vf__gguf_find(g, key);
    if (!kv || kv->type != VF_GGUF_STRING || !kv->s)
        return false;
    if (out)
        *out = kv->s;
    return true;
}

bool vf_gguf_get_array_len(const struct vf_gguf *g, const char *key, uint64_t *out)
{
    const struct vf_gguf_kv *kv = vf__gguf_find(g, key);
    if (!kv || kv->type != VF_GGUF_ARRAY)
        return false;
    if (out)
        *out = kv->n;
    return true;
}

/* ------------------------------------------------------------ split models */

/* Parses "...-00001-of-00003.gguf": the prefix length, part number and count.
 */
static bool split_name(const char *path, size_t *prefix, unsigned *no, unsigned *count)
{
    size_t n = strlen(path);
    const char *s;
    if (n < 20)
        return false;
    s = path + n - 20;
    for (int i = 0; i < 20; i++) {
        bool digit = (i >= 1 && i <= 5) || (i >= 10 && i <= 14);
        if (digit ? !(s[i] >= '0' && s[i] <= '9') : false)
            return false;
    }
    if (s[0] != '-' || strncmp(s + 6, "-of-", 4) != 0 || strcmp(s + 15, ".gguf") != 0)
        return false;
    *no = (unsigned)atoi(s + 1);
    *count = (unsigned)atoi(s + 10);
    *prefix = n - 20;
    return *no >= 1 && *count >= 1 && *no <= *count;
}

static enum vf_err read_path(void *ud, struct vf_arena *a, const char *path, struct vf_gguf *g,
                             struct vf_error *err)
{
    (void)ud;
    struct vf_reader r;
    enum vf_err rc = vf_reader_open_file(&r, path, err);
    if (rc) {
        vf__err_prefix(err, "gguf");
        return rc;
    }
    rc = vf_gguf_read(a, &r, g, err);
    vf_reader_close(&r);
    return rc;
}

enum vf_err vf__gguf_read_split(struct vf_arena *a, const char *path, struct vf_gguf *out,
                                struct vf_error *err)
{
    return vf__gguf_read_split_with(a, path, read_path, NULL, out, err);
}

enum vf_err vf__gguf_read_split_with(struct vf_arena *a, const char *path,
                                     enum vf_err (*read_part)(void *ud, struct vf_arena *a,
                                                              const char *name, struct vf_gguf *g,
                                                              struct vf_error *err),
                                     void *ud, struct vf_gguf *out, struct vf_error *err)
{
    size_t prefix;
    unsigned no, count;
    enum vf_err rc;

    if (!a || !path || !out)
        return vf__errf(err, VF_EINVAL, "gguf: no arena, path or output given");
    if (!split_name(path, &prefix, &no, &count)) {
        if ((rc = read_part(ud, a, path, out, err)))
            return rc;
        if (out->split_count > 1)
            return vf__errf(err, VF_EFORMAT,
                            "gguf: cannot read '%s': it is part %u of a split model (split.count "
                            "%u) but is not named PREFIX-%05u-of-%05u.gguf",
                            path, out->split_no + 1, out->split_count, out->split_no + 1,
                            out->split_count);
        return VF_OK;
    }
    if (count > VF_GGUF_MAX_SPLITS)
        return vf__errf(err, VF_ELIMIT, "gguf: cannot read '%s': %u parts exceed the limit of %u",
                        path, count, VF_GGUF_MAX_SPLITS);

    struct vf_gguf *parts = vf__malloc(count * sizeof *parts);
    if (!parts)
        return vf__errf(err, VF_ENOMEM, "gguf: out of memory");
    uint64_t total = 0, bytes = 0;
    rc = VF_OK;
    for (unsigned i = 0; i < count && !rc; i++) {
        char *p = vf_arena_printf(a, "%.*s-%05u-of-%05u.gguf", (int)prefix, path, i + 1, count);
        if (!p) {
            rc = vf__errf(err, VF_ENOMEM, "gguf: out of memory");
            break;
        }
        if ((rc = read_part(ud, a, p, &parts[i], err)))
            break;
        if (parts[i].split_count != count || parts[i].split_no != i)
            rc = vf__errf(err, VF_EFORMAT,
                          "gguf: cannot read '%s': split.no %u, split.count %u, but the name "
                          "says part %u of %u",
                          p, parts[i].split_no, parts[i].split_count, i + 1, count);
        else if (!vf__add_u64(total, parts[i].n_tensors, &total) ||
                 !vf__add_u64(bytes, parts[i].weight_bytes, &bytes) ||
                 total > (uint64_t)VF_GGUF_MAX_TENSORS * 4)
            rc = vf__errf(err, VF_ELIMIT, "gguf: cannot read '%s': too many tensors in all parts",
                          p);
    }
    struct vf_tensor_info *all = NULL;
    const struct vf_tensor_info **idx = NULL;
    if (!rc && total) {
        all = vf_arena_alloc(a, (size_t)total * sizeof *all);
        idx = vf__malloc((size_t)total * sizeof *idx);
        if (!all || !idx)
            rc = vf__errf(err, VF_ENOMEM, "gguf: out of memory for %llu tensors",
                          (unsigned long long)total);
    }
    if (!rc && total) {
        size_t k = 0;
        for (unsigned i = 0; i < count; i++)
            for (uint64_t j = 0; j < parts[i].n_tensors; j++) {
                idx[k] = &all[k];
                all[k++] = parts[i].tensors[j];
            }
        qsort(idx, k, sizeof *idx, by_name);
        for (size_t i = 1; i < k && !rc; i++)
            if (strcmp(idx[i - 1]->name, idx[i]->name) == 0)
                rc =
                    vf__errf(err, VF_EFORMAT, "gguf: cannot read '%s': tensor '%s' is in two parts",
                             path, idx[i]->name);
    }
    if (!rc) {
        *out = parts[0];
        out->tensors = all;
        out->n_tensors = total;
        out->weight_bytes = bytes;
    }
    vf__free(idx);
    vf__free(parts);
    return rc;
}
