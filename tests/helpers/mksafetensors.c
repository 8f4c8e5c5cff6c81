/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mksafetensors.c - a tiny safetensors writer for tests and fuzz seeds: an 8-byte length,
 * a JSON header padded with spaces to 8 bytes (as the reference writer pads it), then zero
 * data (a sparse file on disk). It has its own dtype table so that the writer and the reader
 * (src/lib/read/read_safetensors.c) cannot share one mistake. Sharded folders get a
 * model.safetensors.index.json; raw variants write any length prefix and header text, for
 * malformed files. Tests #include this file; `cc -DMKSAFETENSORS_MAIN` builds a program
 * that writes the fuzz seeds: mksafetensors DIR.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct mkst_tensor {
    const char *name;
    const char *dtype;
    unsigned n_dims;
    uint64_t shape[8];
};

/* Data bytes of one tensor; UINT64_MAX for a dtype the writer does not know. */
uint64_t mkst_bytes(const char *dtype, const uint64_t *shape, unsigned n_dims);
/* The padded header text (malloc'd) for tensors laid out in order; *data_len gets the data
 * section's size. format: __metadata__.format, or NULL for no __metadata__. */
char *mkst_header(const struct mkst_tensor *t, size_t n, const char *format, uint64_t *data_len);
/* A file: len_prefix (the 8-byte length), header_len bytes of header, data_len zero bytes. */
int mkst_write_raw(const char *path, uint64_t len_prefix, const char *header, size_t header_len,
                   uint64_t data_len);
/* A well-formed file of tensors t. Returns 0, or -1 (errno set). */
int mkst_write(const char *path, const struct mkst_tensor *t, size_t n, const char *format);
/* The same in memory (malloc'd), *len its length. */
unsigned char *mkst_build_raw(uint64_t len_prefix, const char *header, size_t header_len,
                              uint64_t data_len, size_t *len);
unsigned char *mkst_build(const struct mkst_tensor *t, size_t n, const char *format, size_t *len);
/* DIR/model.safetensors.index.json mapping names[i] to files[i]; total_size UINT64_MAX: none. */
int mkst_write_index(const char *dir, const char *const *names, const char *const *files, size_t n,
                     uint64_t total_size);
/* A folder of k shards (model-0000i-of-0000k.safetensors, consecutive slices of t) with its
 * index; total_size is the data bytes. */
int mkst_write_sharded(const char *dir, const struct mkst_tensor *t, size_t n, size_t k);

static unsigned mkst_bits(const char *d)
{
    static const struct {
        const char *name;
        unsigned bits;
    } tab[] = {{"F64", 64},    {"I64", 64},    {"U64", 64},        {"C64", 64},
               {"F32", 32},    {"I32", 32},    {"U32", 32},        {"F16", 16},
               {"BF16", 16},   {"I16", 16},    {"U16", 16},        {"F8_E4M3", 8},
               {"F8_E5M2", 8}, {"F8_E8M0", 8}, {"F8_E4M3FNUZ", 8}, {"F8_E5M2FNUZ", 8},
               {"I8", 8},      {"U8", 8},      {"BOOL", 8},        {"F6_E2M3", 6},
               {"F6_E3M2", 6}, {"F4", 4}};
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
        if (strcmp(tab[i].name, d) == 0)
            return tab[i].bits;
    return 0;
}

uint64_t mkst_bytes(const char *dtype, const uint64_t *shape, unsigned n_dims)
{
    uint64_t n = 1;
    unsigned bits = mkst_bits(dtype);
    for (unsigned i = 0; i < n_dims; i++)
        n *= shape[i];
    return bits ? n * bits / 8 : UINT64_MAX;
}

/* Appends printf text to a growing buffer. */
struct mkst_buf {
    char *p;
    size_t n, cap;
};
static void mkst_put(struct mkst_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void mkst_put(struct mkst_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (b->n + (size_t)k + 1 > b->cap) {
        b->cap = (b->n + (size_t)k + 1) * 2;
        b->p = realloc(b->p, b->cap);
    }
    va_start(ap, fmt);
    vsnprintf(b->p + b->n, b->cap - b->n, fmt, ap);
    va_end(ap);
    b->n += (size_t)k;
}

char *mkst_header(const struct mkst_tensor *t, size_t n, const char *format, uint64_t *data_len)
{
    struct mkst_buf b = {0};
    uint64_t off = 0;

    mkst_put(&b, "{");
    if (format)
        mkst_put(&b, "\"__metadata__\":{\"format\":\"%s\"}%s", format, n ? "," : "");
    for (size_t i = 0; i < n; i++) {
        uint64_t sz = mkst_bytes(t[i].dtype, t[i].shape, t[i].n_dims);
        if (sz == UINT64_MAX)
            sz = 0; /* an unknown dtype (malformed variants) holds no data */
        mkst_put(&b, "%s\"%s\":{\"dtype\":\"%s\",\"shape\":[", i ? "," : "", t[i].name, t[i].dtype);
        for (unsigned d = 0; d < t[i].n_dims; d++)
            mkst_put(&b, "%s%llu", d ? "," : "", (unsigned long long)t[i].shape[d]);
        mkst_put(&b, "],\"data_offsets\":[%llu,%llu]}", (unsigned long long)off,
                 (unsigned long long)(off + sz));
        off += sz;
    }
    mkst_put(&b, "}");
    while (b.n % 8)
        mkst_put(&b, " ");
    if (data_len)
        *data_len = off;
    return b.p;
}

int mkst_write_raw(const char *path, uint64_t len_prefix, const char *header, size_t header_len,
                   uint64_t data_len)
{
    unsigned char pre[8];
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    for (int i = 0; i < 8; i++)
        pre[i] = (unsigned char)(len_prefix >> (8 * i));
    int bad = fwrite(pre, 1, 8, f) != 8 || fwrite(header, 1, header_len, f) != header_len;
    bad |= fflush(f) != 0;
    /* zero data without writing it: a sparse file */
    bad |= ftruncate(fileno(f), (off_t)(8 + header_len + data_len)) != 0;
    bad |= fclose(f) != 0;
    return bad ? -1 : 0;
}

int mkst_write(const char *path, const struct mkst_tensor *t, size_t n, const char *format)
{
    uint64_t data;
    char *h = mkst_header(t, n, format, &data);
    int rc = mkst_write_raw(path, strlen(h), h, strlen(h), data);
    free(h);
    return rc;
}

unsigned char *mkst_build_raw(uint64_t len_prefix, const char *header, size_t header_len,
                              uint64_t data_len, size_t *len)
{
    size_t n = 8 + header_len + (size_t)data_len;
    unsigned char *p = calloc(1, n);
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(len_prefix >> (8 * i));
    memcpy(p + 8, header, header_len);
    *len = n;
    return p;
}

unsigned char *mkst_build(const struct mkst_tensor *t, size_t n, const char *format, size_t *len)
{
    uint64_t data;
    char *h = mkst_header(t, n, format, &data);
    unsigned char *p = mkst_build_raw(strlen(h), h, strlen(h), data, len);
    free(h);
    return p;
}

int mkst_write_index(const char *dir, const char *const *names, const char *const *files, size_t n,
                     uint64_t total_size)
{
    struct mkst_buf b = {0}, path = {0};
    mkst_put(&b, "{\n  \"metadata\": {");
    if (total_size != UINT64_MAX)
        mkst_put(&b, "\"total_size\": %llu", (unsigned long long)total_size);
    mkst_put(&b, "},\n  \"weight_map\": {\n");
    for (size_t i = 0; i < n; i++)
        mkst_put(&b, "    \"%s\": \"%s\"%s\n", names[i], files[i], i + 1 < n ? "," : "");
    mkst_put(&b, "  }\n}\n");
    mkst_put(&path, "%s/model.safetensors.index.json", dir);
    FILE *f = fopen(path.p, "wb");
    int bad = !f || fwrite(b.p, 1, b.n, f) != b.n;
    if (f)
        bad |= fclose(f) != 0;
    free(b.p);
    free(path.p);
    return bad ? -1 : 0;
}

int mkst_write_sharded(const char *dir, const struct mkst_tensor *t, size_t n, size_t k)
{
    const char **names = calloc(n ? n : 1, sizeof *names);
    const char **files = calloc(n ? n : 1, sizeof *files);
    char **owned = calloc(k, sizeof *owned);
    uint64_t total = 0;
    int rc = 0;

    for (size_t s = 0, at = 0; s < k; s++) {
        size_t cnt = n / k + (s < n % k);
        struct mkst_buf file = {0}, path = {0};
        mkst_put(&file, "model-%05zu-of-%05zu.safetensors", s + 1, k);
        mkst_put(&path, "%s/%s", dir, file.p);
        rc |= mkst_write(path.p, t + at, cnt, "pt");
        for (size_t i = at; i < at + cnt; i++) {
            names[i] = t[i].name;
            files[i] = file.p;
            total += mkst_bytes(t[i].dtype, t[i].shape, t[i].n_dims);
        }
        owned[s] = file.p;
        free(path.p);
        at += cnt;
    }
    rc |= mkst_write_index(dir, names, files, n, total);
    for (size_t s = 0; s < k; s++)
        free(owned[s]);
    free(owned);
    free(names);
    free(files);
    return rc;
}

#ifdef MKSAFETENSORS_MAIN
/* Writes the fuzz seeds (each under 10 KB) into argv[1]. */
int main(int argc, char **argv)
{
    static const struct mkst_tensor every[] = {
        {"a.f64", "F64", 1, {2}},      {"a.f32", "F32", 2, {2, 2}},   {"a.f16", "F16", 1, {3}},
        {"a.bf16", "BF16", 1, {3}},    {"a.e4m3", "F8_E4M3", 1, {5}}, {"a.e5m2", "F8_E5M2", 1, {5}},
        {"a.e8m0", "F8_E8M0", 1, {5}}, {"a.f6", "F6_E2M3", 1, {4}},   {"a.f4", "F4", 1, {6}},
        {"a.i64", "I64", 1, {1}},      {"a.i32", "I32", 1, {1}},      {"a.i16", "I16", 1, {1}},
        {"a.i8", "I8", 1, {1}},        {"a.u64", "U64", 1, {1}},      {"a.u32", "U32", 1, {1}},
        {"a.u16", "U16", 1, {1}},      {"a.u8", "U8", 1, {1}},        {"a.bool", "BOOL", 1, {1}},
    };
    static const struct mkst_tensor llama[] = {
        {"model.embed_tokens.weight", "BF16", 2, {16, 8}},
        {"model.layers.0.input_layernorm.weight", "BF16", 1, {8}},
        {"model.layers.0.self_attn.q_proj.weight", "BF16", 2, {8, 8}},
        {"model.layers.0.self_attn.k_proj.weight", "BF16", 2, {4, 8}},
        {"model.layers.0.mlp.down_proj.weight", "BF16", 2, {8, 16}},
        {"model.norm.weight", "BF16", 1, {8}},
        {"lm_head.weight", "BF16", 2, {16, 8}},
    };
    static const struct mkst_tensor gptq[] = {
        {"model.layers.3.self_attn.q_proj.qweight", "I32", 2, {4, 32}},
        {"model.layers.3.self_attn.q_proj.qzeros", "I32", 2, {1, 4}},
        {"model.layers.3.self_attn.q_proj.scales", "F16", 2, {1, 32}},
        {"model.layers.3.self_attn.q_proj.g_idx", "I32", 1, {32}},
    };
    static const struct mkst_tensor mxfp4[] = {
        {"model.layers.0.mlp.experts.gate_up_proj_blocks", "U8", 4, {2, 8, 1, 16}},
        {"model.layers.0.mlp.experts.gate_up_proj_scales", "U8", 3, {2, 8, 1}},
        {"model.layers.0.mlp.experts.gate_up_proj_bias", "BF16", 2, {2, 8}},
        {"model.layers.0.mlp.router.weight", "BF16", 2, {2, 8}},
        {"model.layers.0.self_attn.sinks", "BF16", 1, {4}},
    };
    const char *bad = "{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,12]}}";
    char p[4096];
    int rc = 0;

    if (argc != 2) {
        fprintf(stderr, "usage: mksafetensors DIR\n");
        return 2;
    }
    snprintf(p, sizeof p, "%s/every-dtype.safetensors", argv[1]);
    rc |= mkst_write(p, every, sizeof every / sizeof every[0], "pt");
    snprintf(p, sizeof p, "%s/llama-tiny.safetensors", argv[1]);
    rc |= mkst_write(p, llama, sizeof llama / sizeof llama[0], "pt");
    snprintf(p, sizeof p, "%s/gptq.safetensors", argv[1]);
    rc |= mkst_write(p, gptq, sizeof gptq / sizeof gptq[0], NULL);
    snprintf(p, sizeof p, "%s/mxfp4.safetensors", argv[1]);
    rc |= mkst_write(p, mxfp4, sizeof mxfp4 / sizeof mxfp4[0], "pt");
    snprintf(p, sizeof p, "%s/bad-size.safetensors", argv[1]);
    rc |= mkst_write_raw(p, strlen(bad), bad, strlen(bad), 12);
    return rc ? 1 : 0;
}
#endif
