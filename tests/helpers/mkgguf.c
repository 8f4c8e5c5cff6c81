/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mkgguf.c - a tiny GGUF writer for the tests and the fuzz corpus: any version 1-3 (either
 * byte order, to test that big-endian files are refused), every metadata value type including
 * nested arrays, tensor infos of any ggml type with their offsets laid out as gguf.cpp wants,
 * header-only files or files with (zero) data, and any deliberate damage a test wants (the
 * caller writes raw bytes where it likes). Its ggml type table is written from the block
 * structs of ggml-common.h, field by field, independently of the reader's table, so a writer
 * and a reader cannot share one mistake. Include it into a test: #include "../helpers/mkgguf.c".
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    MKG_U8 = 0,
    MKG_I8,
    MKG_U16,
    MKG_I16,
    MKG_U32,
    MKG_I32,
    MKG_F32,
    MKG_BOOL,
    MKG_STRING,
    MKG_ARRAY,
    MKG_U64,
    MKG_I64,
    MKG_F64
};

struct mkg {
    unsigned char *p;
    size_t n, cap;
    unsigned version; /* 1: 32-bit counts and lengths */
    bool big;         /* write numbers big-endian (a v3 big-endian file) */
};

void mkg_bytes(struct mkg *w, const void *d, size_t n)
{
    if (w->n + n > w->cap) {
        size_t cap = w->cap ? w->cap : 4096;
        while (cap < w->n + n)
            cap *= 2;
        w->p = realloc(w->p, cap);
        if (!w->p)
            abort();
        w->cap = cap;
    }
    if (d)
        memcpy(w->p + w->n, d, n);
    else
        memset(w->p + w->n, 0, n);
    w->n += n;
}

void mkg_uint(struct mkg *w, uint64_t v, unsigned size)
{
    unsigned char b[8];
    for (unsigned i = 0; i < size; i++)
        b[w->big ? size - 1 - i : i] = (unsigned char)(v >> (8 * i));
    mkg_bytes(w, b, size);
}

/* A count or length: u32 in v1, u64 after. */
void mkg_len(struct mkg *w, uint64_t v)
{
    mkg_uint(w, v, w->version == 1 ? 4 : 8);
}

void mkg_str(struct mkg *w, const char *s)
{
    mkg_len(w, strlen(s));
    mkg_bytes(w, s, strlen(s));
}

/* Magic, version, tensor count, pair count. */
void mkg_header(struct mkg *w, unsigned version, uint64_t n_tensors, uint64_t n_kv)
{
    w->version = version;
    mkg_bytes(w, "GGUF", 4);
    mkg_uint(w, version, 4);
    mkg_len(w, n_tensors);
    mkg_len(w, n_kv);
}

void mkg_key(struct mkg *w, const char *key, uint32_t type)
{
    mkg_str(w, key);
    mkg_uint(w, type, 4);
}

void mkg_kv_u32(struct mkg *w, const char *key, uint32_t v)
{
    mkg_key(w, key, MKG_U32);
    mkg_uint(w, v, 4);
}

void mkg_kv_i32(struct mkg *w, const char *key, int32_t v)
{
    mkg_key(w, key, MKG_I32);
    mkg_uint(w, (uint32_t)v, 4);
}

void mkg_kv_u64(struct mkg *w, const char *key, uint64_t v)
{
    mkg_key(w, key, MKG_U64);
    mkg_uint(w, v, 8);
}

void mkg_kv_f32(struct mkg *w, const char *key, float f)
{
    uint32_t v;
    memcpy(&v, &f, 4);
    mkg_key(w, key, MKG_F32);
    mkg_uint(w, v, 4);
}

void mkg_kv_bool(struct mkg *w, const char *key, bool b)
{
    mkg_key(w, key, MKG_BOOL);
    mkg_uint(w, b, 1);
}

void mkg_kv_str(struct mkg *w, const char *key, const char *s)
{
    mkg_key(w, key, MKG_STRING);
    mkg_str(w, s);
}

/* The element type and count of an array value; the caller writes the elements. */
void mkg_arr_head(struct mkg *w, uint32_t elem_type, uint64_t n)
{
    mkg_uint(w, elem_type, 4);
    mkg_len(w, n);
}

void mkg_kv_arr_u32(struct mkg *w, const char *key, size_t n, const uint32_t *v)
{
    mkg_key(w, key, MKG_ARRAY);
    mkg_arr_head(w, MKG_U32, n);
    for (size_t i = 0; i < n; i++)
        mkg_uint(w, v[i], 4);
}

void mkg_kv_arr_i32(struct mkg *w, const char *key, size_t n, const int32_t *v)
{
    mkg_key(w, key, MKG_ARRAY);
    mkg_arr_head(w, MKG_I32, n);
    for (size_t i = 0; i < n; i++)
        mkg_uint(w, (uint32_t)v[i], 4);
}

/* ggml's types as ggml-common.h declares their blocks (QK_K = 256, K_SCALE_SIZE = 12). */
bool mkg_type(uint32_t t, uint32_t *blck, uint32_t *bytes)
{
    const uint32_t QK = 256, h = 2; /* ggml_half */
    uint32_t b = 0, s = 0;
    switch (t) {
    case 0:
        b = 1, s = 4;
        break; /* F32 */
    case 1:
        b = 1, s = h;
        break; /* F16 */
    case 2:
        b = 32, s = h + 32 / 2;
        break; /* block_q4_0 */
    case 3:
        b = 32, s = 2 * h + 32 / 2;
        break; /* block_q4_1 */
    case 6:
        b = 32, s = h + 4 + 32 / 2;
        break; /* block_q5_0: d, qh[4], qs */
    case 7:
        b = 32, s = 2 * h + 4 + 32 / 2;
        break; /* block_q5_1 */
    case 8:
        b = 32, s = h + 32;
        break; /* block_q8_0 */
    case 9:
        b = 32, s = 2 * h + 32;
        break; /* block_q8_1: d, s, qs */
    case 10:
        b = QK, s = QK / 16 + QK / 4 + 2 * h;
        break; /* block_q2_K */
    case 11:
        b = QK, s = QK / 8 + QK / 4 + 12 + h;
        break; /* block_q3_K */
    case 12:
        b = QK, s = 2 * h + 12 + QK / 2;
        break; /* block_q4_K */
    case 13:
        b = QK, s = 2 * h + 12 + QK / 8 + QK / 2;
        break; /* block_q5_K */
    case 14:
        b = QK, s = QK / 2 + QK / 4 + QK / 16 + h;
        break; /* block_q6_K */
    case 15:
        b = QK, s = 4 + QK + QK / 16 * 2;
        break; /* block_q8_K: float d */
    case 16:
        b = QK, s = h + QK / 8 * 2;
        break; /* block_iq2_xxs */
    case 17:
        b = QK, s = h + QK / 8 * 2 + QK / 32;
        break; /* block_iq2_xs */
    case 18:
        b = QK, s = h + 3 * QK / 8;
        break; /* block_iq3_xxs */
    case 19:
        b = QK, s = h + QK / 8 + QK / 32 * 2;
        break; /* block_iq1_s */
    case 20:
        b = 32, s = h + 32 / 2;
        break; /* block_iq4_nl */
    case 21:
        b = QK, s = h + QK / 4 + QK / 32 + QK / 8 + QK / 64;
        break; /* block_iq3_s */
    case 22:
        b = QK, s = h + QK / 4 + QK / 32 + QK / 32;
        break; /* block_iq2_s */
    case 23:
        b = QK, s = h + 2 + QK / 64 + QK / 2;
        break; /* block_iq4_xs */
    case 24:
        b = 1, s = 1;
        break; /* I8 */
    case 25:
        b = 1, s = 2;
        break; /* I16 */
    case 26:
        b = 1, s = 4;
        break; /* I32 */
    case 27:
        b = 1, s = 8;
        break; /* I64 */
    case 28:
        b = 1, s = 8;
        break; /* F64 */
    case 29:
        b = QK, s = QK / 8 + QK / 16 + QK / 32;
        break; /* block_iq1_m (no d) */
    case 30:
        b = 1, s = 2;
        break; /* BF16 */
    case 34:
        b = QK, s = (QK - 4 * QK / 64) / 5 + QK / 64 + h;
        break; /* block_tq1_0 */
    case 35:
        b = QK, s = QK / 4 + h;
        break; /* block_tq2_0 */
    case 39:
        b = 32, s = 1 + 32 / 2;
        break; /* block_mxfp4: e8m0, qs */
    case 40:
        b = 64, s = 64 / 16 + 64 / 2;
        break; /* block_nvfp4 */
    case 41:
        b = 128, s = h + 128 / 8;
        break; /* block_q1_0 */
    case 42:
        b = 64, s = h + 64 / 4;
        break; /* block_q2_0 */
    default:
        return false;
    }
    *blck = b;
    *bytes = s;
    return true;
}

/* ggml_nbytes of a tensor whose rows are whole blocks. */
uint64_t mkg_tensor_bytes(uint32_t type, uint32_t nd, const uint64_t *dims)
{
    uint32_t b, s;
    uint64_t n = 1;
    if (!mkg_type(type, &b, &s))
        return 0;
    for (uint32_t i = 0; i < nd; i++)
        n *= dims[i];
    return n / b * s;
}

struct mkg_t {
    const char *name;
    uint32_t nd;
    uint64_t dims[4];
    uint32_t type;
};

void mkg_tensor_info(struct mkg *w, const char *name, uint32_t nd, const uint64_t *dims,
                     uint32_t type, uint64_t offset)
{
    mkg_str(w, name);
    mkg_uint(w, nd, 4);
    for (uint32_t i = 0; i < nd; i++)
        mkg_len(w, dims[i]);
    mkg_uint(w, type, 4);
    mkg_uint(w, offset, 8);
}

void mkg_align(struct mkg *w, uint64_t align)
{
    while (w->n % align)
        mkg_bytes(w, NULL, 1);
}

/*
 * Tensor infos with offsets laid out as gguf.cpp requires (in order, each padded to align),
 * then padding to the data start; with `data`, zero bytes for the whole data section.
 * Returns the data section's size.
 */
uint64_t mkg_tensors(struct mkg *w, const struct mkg_t *ts, size_t n, uint64_t align, bool data)
{
    uint64_t off = 0;
    for (size_t i = 0; i < n; i++) {
        mkg_tensor_info(w, ts[i].name, ts[i].nd, ts[i].dims, ts[i].type, off);
        off += (mkg_tensor_bytes(ts[i].type, ts[i].nd, ts[i].dims) + align - 1) / align * align;
    }
    mkg_align(w, align);
    if (data)
        mkg_bytes(w, NULL, (size_t)off);
    return off;
}

int mkg_save(const struct mkg *w, const char *path)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t k = fwrite(w->p, 1, w->n, f);
    return fclose(f) == 0 && k == w->n ? 0 : -1;
}

void mkg_free(struct mkg *w)
{
    free(w->p);
    memset(w, 0, sizeof *w);
}
