/* SPDX-License-Identifier: Apache-2.0 */
/*
 * t_gguf.c - unit tests of the GGUF reader (read_gguf.c) on fixtures written by
 * tests/helpers/mkgguf.c into a temporary folder: every ggml type's bytes (F-W-10, ggml.c
 * type_traits / ggml-common.h), GGUF v1-v3, refused inputs (big-endian, legacy magic,
 * truncation, huge claimed counts under a small arena, bad offsets; each message asserted with
 * its byte offset), nested arrays, a 150k-token vocabulary that is skipped, alignment, split
 * models, and the mapping of llama-, qwen3moe-, deepseek2- (MLA), gemma3- (sliding) and
 * hybrid-style (per-layer head_count_kv, ssm.*) metadata to struct vf_model.
 */
#include "th.h"

#include "read/read_gguf.h"

#include "../helpers/mkgguf.c"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[64];

static const char *fixture(const char *name)
{
    static char path[4][256];
    static int k;
    k = (k + 1) % 4;
    snprintf(path[k], sizeof path[k], "%s/%s", dir, name);
    return path[k];
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/t_gguf.XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* Reads the writer's bytes with an arena of `limit` bytes (0: default). */
static enum vf_err read_mem(const struct mkg *w, size_t limit, struct vf_arena **a,
                            struct vf_gguf *g, struct vf_error *err)
{
    struct vf_reader r;
    *a = vf_arena_open(limit);
    assert_non_null(*a);
    vf_reader_mem(&r, w->p, w->n, "x.gguf");
    memset(err, 0, sizeof *err);
    return vf_gguf_read(*a, &r, g, err);
}

/* Expects the read to fail with code and a message containing each of the texts. */
static void expect_error(const struct mkg *w, size_t limit, enum vf_err code, const char *t1,
                         const char *t2)
{
    struct vf_arena *a;
    struct vf_gguf g;
    struct vf_error err;
    enum vf_err rc = read_mem(w, limit, &a, &g, &err);
    if (rc != code || !strstr(err.msg, t1) || (t2 && !strstr(err.msg, t2)))
        fail_msg("rc %d (want %d): '%s' (want '%s' and '%s')", rc, code, err.msg, t1, t2 ? t2 : "");
    vf_arena_close(a);
}

/* ------------------------------------------------------------ F-W-10: every type */

/* Bytes per block from ggml.c type_traits (type_size = sizeof(block_x) in ggml-common.h). */
static const struct {
    uint32_t id, blck, bytes;
    const char *name;
} ggml_ref[] = {
    {0, 1, 4, "F32"},         {1, 1, 2, "F16"},         {2, 32, 18, "Q4_0"},
    {3, 32, 20, "Q4_1"},      {6, 32, 22, "Q5_0"},      {7, 32, 24, "Q5_1"},
    {8, 32, 34, "Q8_0"},      {9, 32, 36, "Q8_1"},      {10, 256, 84, "Q2_K"},
    {11, 256, 110, "Q3_K"},   {12, 256, 144, "Q4_K"},   {13, 256, 176, "Q5_K"},
    {14, 256, 210, "Q6_K"},   {15, 256, 292, "Q8_K"},   {16, 256, 66, "IQ2_XXS"},
    {17, 256, 74, "IQ2_XS"},  {18, 256, 98, "IQ3_XXS"}, {19, 256, 50, "IQ1_S"},
    {20, 32, 18, "IQ4_NL"},   {21, 256, 110, "IQ3_S"},  {22, 256, 82, "IQ2_S"},
    {23, 256, 136, "IQ4_XS"}, {24, 1, 1, "I8"},         {25, 1, 2, "I16"},
    {26, 1, 4, "I32"},        {27, 1, 8, "I64"},        {28, 1, 8, "F64"},
    {29, 256, 56, "IQ1_M"},   {30, 1, 2, "BF16"},       {34, 256, 54, "TQ1_0"},
    {35, 256, 66, "TQ2_0"},   {39, 32, 17, "MXFP4"},    {40, 64, 36, "NVFP4"},
    {41, 128, 18, "Q1_0"},    {42, 64, 18, "Q2_0"},
};

static void one_tensor(struct mkg *w, uint32_t type, uint64_t ne0, uint64_t ne1)
{
    struct mkg_t t = {"blk.0.ffn_down.weight", 2, {ne0, ne1}, type};
    memset(w, 0, sizeof *w);
    mkg_header(w, 3, 1, 1);
    mkg_kv_str(w, "general.architecture", "llama");
    mkg_tensors(w, &t, 1, 32, false);
}

static void test_type_sizes(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof ggml_ref / sizeof ggml_ref[0]; i++) {
        uint32_t b, s, wb, ws;
        const char *name;
        assert_true(vf__ggml_type((int)ggml_ref[i].id, &name, &b, &s));
        assert_string_equal(name, ggml_ref[i].name);
        assert_int_equal(b, ggml_ref[i].blck);
        assert_int_equal(s, ggml_ref[i].bytes);
        assert_true(mkg_type(ggml_ref[i].id, &wb, &ws)); /* the writer's own derivation */
        assert_int_equal(wb, b);
        assert_int_equal(ws, s);

        /* F-W-10 through a file: 3 rows of 2 blocks */
        struct mkg w;
        struct vf_arena *a;
        struct vf_gguf g;
        struct vf_error err;
        one_tensor(&w, ggml_ref[i].id, 2 * b, 3);
        if (read_mem(&w, 0, &a, &g, &err))
            fail_msg("%s: %s", name, err.msg);
        assert_u64(g.tensors[0].bytes, 3 * 2 * (uint64_t)s);
        assert_u64(g.weight_bytes, 3 * 2 * (uint64_t)s);
        assert_u64(g.tensors[0].n_elems, 3 * 2 * (uint64_t)b);
        assert_int_equal(g.tensors[0].layer, 0);
        assert_int_equal(g.tensors[0].cls, VF_T_FFN_DOWN);
        vf_arena_close(a);
        mkg_free(&w);
    }
    /* the VF_DT mirror of the types it has agrees with ggml */
    for (int t = 0; t < vf__ggml_type_count(); t++) {
        uint32_t b, s, db, ds;
        enum vf_dtype d = vf__ggml_type_dtype(t);
        if (d == VF_DT_DEFAULT || !vf__ggml_type(t, NULL, &b, &s))
            continue;
        vf_dtype_block(d, &db, &ds);
        assert_int_equal(db, b);
        assert_int_equal(ds, s);
    }
    struct mkg w;
    one_tensor(&w, 31, 64, 1); /* Q4_0_4_4: removed */
    expect_error(&w, 0, VF_EUNSUPPORTED, "type 31 (Q4_0_4_4) at byte ", "removed");
    mkg_free(&w);
    one_tensor(&w, 43, 64, 1);
    expect_error(&w, 0, VF_EUNSUPPORTED, "tensor 'blk.0.ffn_down.weight' has unknown ggml type 43",
                 NULL);
    mkg_free(&w);
    one_tensor(&w, 12, 100, 1); /* Q4_K rows of 100: not whole blocks */
    expect_error(&w, 0, VF_EFORMAT, "rows of 100 elements at byte 69", "block size 256");
    mkg_free(&w);
}

/* ------------------------------------------------------------ versions and refusals */

static void small_file(struct mkg *w, unsigned version)
{
    struct mkg_t ts[] = {{"token_embd.weight", 2, {64, 100}, 1},
                         {"blk.0.attn_q.weight", 2, {64, 64}, 8}};
    memset(w, 0, sizeof *w);
    mkg_header(w, version, 2, 3);
    mkg_kv_str(w, "general.architecture", "llama");
    mkg_kv_u32(w, "llama.block_count", 1);
    mkg_kv_u64(w, "llama.embedding_length", 64);
    mkg_tensors(w, ts, 2, 32, true);
}

static void test_versions(void **state)
{
    (void)state;
    for (unsigned v = 1; v <= 3; v++) {
        struct mkg w;
        struct vf_arena *a;
        struct vf_gguf g;
        struct vf_error err;
        uint64_t x;
        small_file(&w, v);
        if (read_mem(&w, 0, &a, &g, &err))
            fail_msg("v%u: %s", v, err.msg);
        assert_int_equal(g.version, v);
        assert_u64(g.n_tensors, 2);
        assert_string_equal(g.arch, "llama");
        assert_true(vf_gguf_get_u64(&g, "llama.embedding_length", -1, &x));
        assert_u64(x, 64);
        assert_u64(g.weight_bytes, 64 * 100 * 2 + 64 * 64 / 32 * 34);
        assert_u64(g.header_bytes % 32, 0);
        vf_arena_close(a);
        mkg_free(&w);
    }
}

static void test_refusals(void **state)
{
    (void)state;
    struct mkg w = {0};
    /* big-endian: the version reads byte-swapped */
    w.big = true;
    mkg_header(&w, 3, 0, 0);
    expect_error(&w, 0, VF_EUNSUPPORTED,
                 "gguf: cannot read 'x.gguf': version field 0x03000000 at byte 4", "big-endian");
    mkg_free(&w);
    /* legacy GGML (uint32 magic 'ggml' little-endian) */
    mkg_bytes(&w, "lmgg\x01\0\0\0", 8);
    expect_error(&w, 0, VF_EUNSUPPORTED,
                 "gguf: cannot read 'x.gguf': bad magic 'GGML' at offset 0 (legacy GGML file?",
                 NULL);
    mkg_free(&w);
    mkg_bytes(&w, "PK\x03\x04zzzz", 8);
    expect_error(&w, 0, VF_EFORMAT, "bad magic 'PK\\x03\\x04' at offset 0 (not a GGUF file)", NULL);
    mkg_free(&w);
    mkg_bytes(&w, "GG", 2);
    expect_error(&w, 0, VF_EFORMAT, "file is 2 bytes, too short", NULL);
    mkg_free(&w);
    mkg_header(&w, 4, 0, 0);
    expect_error(&w, 0, VF_EUNSUPPORTED, "GGUF version 4 at byte 4", NULL);
    mkg_free(&w);

    /* truncated inside the tensor infos; header-only (no data) is fine */
    small_file(&w, 3);
    w.n = 180;
    expect_error(&w, 0, VF_EFORMAT, "file ends at byte 180 inside the tensor infos", "truncated");
    w.n = 40;
    expect_error(&w, 0, VF_EFORMAT, "file ends at byte 40 inside the metadata", NULL);
    mkg_free(&w);
    {
        struct mkg_t t = {"output.weight", 2, {64, 64}, 0};
        struct vf_arena *a;
        struct vf_gguf g;
        struct vf_error err;
        mkg_header(&w, 3, 1, 1);
        mkg_kv_str(&w, "general.architecture", "llama");
        mkg_tensors(&w, &t, 1, 32, false); /* header only: 16 KiB of weights absent */
        assert_int_equal(read_mem(&w, 0, &a, &g, &err), VF_OK);
        assert_u64(g.weight_bytes, 64 * 64 * 4);
        assert_u64(g.header_bytes, w.n);
        vf_arena_close(a);
        mkg_free(&w);
    }

    /* data offsets that are not where gguf.cpp puts them; duplicates */
    mkg_header(&w, 3, 2, 0);
    mkg_tensor_info(&w, "a.weight", 1, (uint64_t[]){8}, 0, 0);
    mkg_tensor_info(&w, "b.weight", 1, (uint64_t[]){8}, 0, 64);
    expect_error(&w, 0, VF_EFORMAT, "tensor 'b.weight' at byte 64 has data offset 64, expected 32",
                 NULL);
    mkg_free(&w);
    mkg_header(&w, 3, 2, 0);
    mkg_tensor_info(&w, "a.weight", 1, (uint64_t[]){8}, 0, 0);
    mkg_tensor_info(&w, "a.weight", 1, (uint64_t[]){8}, 0, 32);
    expect_error(&w, 0, VF_EFORMAT, "duplicate tensor 'a.weight' at byte 64", NULL);
    mkg_free(&w);
    mkg_header(&w, 3, 0, 2);
    mkg_kv_u32(&w, "k", 1);
    mkg_kv_u32(&w, "k", 2);
    expect_error(&w, 0, VF_EFORMAT, "duplicate key 'k' at byte 41", NULL);
    mkg_free(&w);
    mkg_header(&w, 3, 0, 1);
    mkg_key(&w, "k", 13);
    expect_error(&w, 0, VF_EFORMAT, "key 'k' has unknown value type 13 at byte 24", NULL);
    mkg_free(&w);
    mkg_header(&w, 3, 0, 1);
    mkg_kv_u32(&w, "general.alignment", 48);
    expect_error(&w, 0, VF_EFORMAT, "general.alignment at byte 24 must be a u32 power of two",
                 NULL);
    mkg_free(&w);
}

/* Claimed sizes far beyond the file: refused before any allocation (a 64 KiB arena). */
static void test_huge_claims(void **state)
{
    (void)state;
    struct mkg w = {0};
    mkg_header(&w, 3, (uint64_t)1 << 40, 0);
    expect_error(&w, 65536, VF_ELIMIT, "header claims 2^40 tensors at byte 8", NULL);
    mkg_free(&w);
    mkg_header(&w, 3, 0, (uint64_t)1 << 33);
    expect_error(&w, 65536, VF_ELIMIT, "header claims 2^33 metadata pairs at byte 16", NULL);
    mkg_free(&w);
    mkg_header(&w, 3, 0, 1);
    mkg_key(&w, "tokenizer.ggml.scores", MKG_ARRAY);
    mkg_arr_head(&w, MKG_F32, (uint64_t)1 << 31);
    expect_error(&w, 65536, VF_EFORMAT,
                 "array of f32 elements claims 2147483648 elements at byte 57", "(file is 69 B)");
    mkg_free(&w);
    mkg_header(&w, 3, 0, 1);
    mkg_key(&w, "general.name", MKG_STRING);
    mkg_len(&w, (uint64_t)1 << 50);
    expect_error(&w, 65536, VF_EFORMAT, "file ends at byte 56 inside the metadata", NULL);
    mkg_free(&w);
    mkg_header(&w, 3, 0, 1);
    mkg_len(&w, (uint64_t)1 << 20); /* a key of 1 MiB */
    expect_error(&w, 65536, VF_ELIMIT, "metadata key of 1048576 bytes at byte 24 exceeds the limit",
                 NULL);
    mkg_free(&w);
    mkg_header(&w, 3, 1, 0);
    mkg_tensor_info(&w, "blk.3.ffn_down.weight", 2, (uint64_t[]){(uint64_t)1 << 31, 1 << 30}, 0, 0);
    expect_error(&w, 65536, VF_ELIMIT,
                 "tensor 'blk.3.ffn_down.weight' claims 2^61 elements at byte 24 (file is", NULL);
    mkg_free(&w);
    mkg_header(&w, 3, 1, 0);
    mkg_tensor_info(&w, "t", 5, (uint64_t[]){1, 1, 1, 1, 1}, 0, 0);
    expect_error(&w, 65536, VF_EFORMAT, "tensor 't' has 5 dimensions at byte 24", NULL);
    mkg_free(&w);
    /* arrays nested past the limit */
    mkg_header(&w, 3, 0, 1);
    mkg_key(&w, "deep", MKG_ARRAY);
    for (int i = 0; i < 10; i++)
        mkg_arr_head(&w, MKG_ARRAY, 1);
    expect_error(&w, 65536, VF_ELIMIT, "arrays nested deeper than 8", NULL);
    mkg_free(&w);
}

static void test_nested_arrays(void **state)
{
    (void)state;
    struct mkg w = {0};
    struct vf_arena *a;
    struct vf_gguf g;
    struct vf_error err;
    uint64_t n, v;
    const char *s;
    mkg_header(&w, 3, 0, 4);
    mkg_key(&w, "nested", MKG_ARRAY);
    mkg_arr_head(&w, MKG_ARRAY, 2);
    mkg_arr_head(&w, MKG_U32, 2);
    mkg_uint(&w, 1, 4);
    mkg_uint(&w, 2, 4);
    mkg_arr_head(&w, MKG_STRING, 1);
    mkg_str(&w, "x");
    mkg_kv_arr_i32(&w, "ints", 3, (int32_t[]){4, -5, 6});
    mkg_key(&w, "all", MKG_ARRAY); /* one of every scalar type */
    mkg_arr_head(&w, MKG_ARRAY, 11);
    static const uint32_t types[] = {0, 1, 2, 3, 4, 5, 6, 7, 10, 11, 12};
    static const unsigned sizes[] = {1, 1, 2, 2, 4, 4, 4, 1, 8, 8, 8};
    for (int i = 0; i < 11; i++) {
        mkg_arr_head(&w, types[i], 1);
        mkg_uint(&w, 1, sizes[i]);
    }
    mkg_kv_str(&w, "after", "ok");
    if (read_mem(&w, 0, &a, &g, &err))
        fail_msg("%s", err.msg);
    assert_true(vf_gguf_get_array_len(&g, "nested", &n));
    assert_u64(n, 2);
    assert_true(vf_gguf_get_u64(&g, "ints", 2, &v));
    assert_u64(v, 6);
    assert_false(vf_gguf_get_u64(&g, "ints", 1, &v)); /* negative */
    assert_false(vf_gguf_get_u64(&g, "ints", 3, &v)); /* past the end */
    assert_true(vf_gguf_get_str(&g, "after", &s));
    assert_string_equal(s, "ok");
    assert_false(vf_gguf_get_str(&g, "ints", &s));
    vf_arena_close(a);
    mkg_free(&w);
}

/* A 150k-token vocabulary is skipped while streaming: a 1 MiB arena is enough. */
static void test_big_vocab(void **state)
{
    (void)state;
    struct mkg w = {0};
    struct vf_arena *a;
    struct vf_gguf g;
    struct vf_error err;
    struct vf_model m;
    char tok[32];
    mkg_header(&w, 3, 0, 5);
    mkg_kv_str(&w, "general.architecture", "qwen2");
    mkg_kv_u32(&w, "qwen2.block_count", 2);
    mkg_kv_u32(&w, "qwen2.embedding_length", 128);
    mkg_key(&w, "tokenizer.ggml.tokens", MKG_ARRAY);
    mkg_arr_head(&w, MKG_STRING, 151936);
    for (int i = 0; i < 151936; i++) {
        snprintf(tok, sizeof tok, "token-number-%d", i);
        mkg_str(&w, tok);
    }
    mkg_key(&w, "tokenizer.ggml.token_type", MKG_ARRAY);
    mkg_arr_head(&w, MKG_I32, 151936);
    mkg_bytes(&w, NULL, 151936 * 4);
    assert_true(w.n > 4u << 20);
    if (read_mem(&w, 1u << 20, &a, &g, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(vf_model_from_gguf(a, &g, "q.gguf", &m, &err), VF_OK);
    assert_u64(m.vocab, 151936);
    vf_arena_close(a);
    /* a reader that does not know its size streams through the same way */
    {
        struct vf_reader r;
        a = vf_arena_open(1u << 20);
        vf_reader_mem(&r, w.p, w.n, "x.gguf");
        r.size = VF_UNKNOWN;
        assert_int_equal(vf_gguf_read(a, &r, &g, &err), VF_OK);
        vf_arena_close(a);
    }
    mkg_free(&w);
}

static void test_alignment(void **state)
{
    (void)state;
    struct mkg w = {0};
    struct vf_arena *a;
    struct vf_gguf g;
    struct vf_error err;
    struct mkg_t ts[] = {{"output_norm.weight", 1, {24}, 0}, {"output.weight", 2, {32, 3}, 8}};
    mkg_header(&w, 3, 2, 1);
    mkg_kv_u32(&w, "general.alignment", 64);
    mkg_tensors(&w, ts, 2, 64, true);
    if (read_mem(&w, 0, &a, &g, &err))
        fail_msg("%s", err.msg);
    assert_u64(g.alignment, 64);
    assert_u64(g.header_bytes % 64, 0);
    assert_u64(g.tensors[1].offset, 128); /* 96 bytes padded to 128 */
    assert_u64(g.weight_bytes, 96 + 3 * 34);
    vf_arena_close(a);
    mkg_free(&w);
}

/* ------------------------------------------------------------ split files */

static void write_part(unsigned no, unsigned count, unsigned split_no, const char *tname)
{
    struct mkg w = {0};
    struct mkg_t t = {tname, 2, {64, 8}, 1};
    char name[64];
    mkg_header(&w, 3, 1, no == 1 ? 5 : 3);
    if (no == 1) {
        mkg_kv_str(&w, "general.architecture", "llama");
        mkg_kv_u32(&w, "llama.block_count", 2);
    }
    mkg_key(&w, "split.no", MKG_U16);
    mkg_uint(&w, split_no, 2);
    mkg_key(&w, "split.count", MKG_U16);
    mkg_uint(&w, count, 2);
    mkg_kv_i32(&w, "split.tensors.count", 3);
    mkg_tensors(&w, &t, 1, 32, false);
    snprintf(name, sizeof name, "m-%05u-of-%05u.gguf", no, count);
    assert_int_equal(mkg_save(&w, fixture(name)), 0);
    mkg_free(&w);
}

static void test_split(void **state)
{
    (void)state;
    struct vf_arena *a = vf_arena_open(0);
    struct vf_gguf g;
    struct vf_error err = {0};
    write_part(1, 3, 0, "token_embd.weight");
    write_part(2, 3, 1, "blk.0.attn_q.weight");
    write_part(3, 3, 2, "blk.1.attn_q.weight");
    if (vf__gguf_read_split(a, fixture("m-00002-of-00003.gguf"), &g, &err))
        fail_msg("%s", err.msg);
    assert_u64(g.n_tensors, 3);
    assert_u64(g.weight_bytes, 3 * 64 * 8 * 2);
    assert_int_equal(g.split_count, 3);
    assert_string_equal(g.arch, "llama");
    assert_string_equal(g.tensors[2].name, "blk.1.attn_q.weight");
    /* a part alone, under another name, is refused */
    rename(fixture("m-00001-of-00003.gguf"), fixture("m.gguf"));
    assert_int_equal(vf__gguf_read_split(a, fixture("m.gguf"), &g, &err), VF_EFORMAT);
    assert_non_null(strstr(err.msg, "part 1 of a split model (split.count 3)"));
    assert_int_equal(vf__gguf_read_split(a, fixture("m-00003-of-00003.gguf"), &g, &err), VF_ENOENT);
    assert_non_null(strstr(err.msg, "m-00001-of-00003.gguf"));
    write_part(1, 3, 0, "blk.0.attn_q.weight"); /* the same tensor in two parts */
    assert_int_equal(vf__gguf_read_split(a, fixture("m-00001-of-00003.gguf"), &g, &err),
                     VF_EFORMAT);
    assert_non_null(strstr(err.msg, "tensor 'blk.0.attn_q.weight' is in two parts"));
    write_part(1, 3, 1, "token_embd.weight"); /* wrong split.no */
    assert_int_equal(vf__gguf_read_split(a, fixture("m-00001-of-00003.gguf"), &g, &err),
                     VF_EFORMAT);
    assert_non_null(strstr(err.msg, "split.no 1, split.count 3, but the name says part 1 of 3"));
    vf_arena_close(a);
}

/* ------------------------------------------------------------ architecture mapping */

/* A decoder's tensors, llama.cpp names: attention (plain, or MLA), dense or MoE FFN. */
struct arch_spec {
    uint32_t layers, hidden, heads, kv_heads, head_dim, ff, vocab;
    uint32_t experts, expert_ff, shexp_ff, dense_first;
    bool mla, tied;
    uint32_t q_lora, kv_lora, rope, nope, v_mla;
    uint32_t type;      /* of the 2-D weights */
    const uint8_t *ssm; /* per layer: 1 = mamba mixer instead of attention */
};

static size_t add_t(struct mkg_t *ts, size_t n, char names[][64], const char *name, uint32_t type,
                    uint32_t nd, uint64_t d0, uint64_t d1, uint64_t d2)
{
    snprintf(names[n], 64, "%s", name);
    ts[n] = (struct mkg_t){names[n], nd, {d0, d1, d2}, type};
    return n + 1;
}

static size_t arch_tensors(const struct arch_spec *s, struct mkg_t *ts, char names[][64])
{
    size_t n = 0;
    char b[64];
    uint64_t h = s->hidden, q = (uint64_t)s->heads * s->head_dim;
    uint64_t kv = (uint64_t)s->kv_heads * s->head_dim;
    n = add_t(ts, n, names, "token_embd.weight", s->type, 2, h, s->vocab, 0);
    for (uint32_t l = 0; l < s->layers; l++) {
#define T(suffix, type, nd, a, c, d) \
    (snprintf(b, sizeof b, "blk.%u." suffix, l), n = add_t(ts, n, names, b, type, nd, a, c, d))
        T("attn_norm.weight", 0, 1, h, 0, 0);
        if (s->ssm && s->ssm[l]) {
            T("ssm_in.weight", s->type, 2, h, 2 * h, 0);
            T("ssm_conv1d.weight", 0, 2, 4, 2 * h, 0);
            T("ssm_out.weight", s->type, 2, h, h, 0);
            continue;
        }
        if (s->mla) {
            uint64_t qk = (uint64_t)s->nope + s->rope;
            T("attn_q_a.weight", s->type, 2, h, s->q_lora, 0);
            T("attn_q_a_norm.weight", 0, 1, s->q_lora, 0, 0);
            T("attn_q_b.weight", s->type, 2, s->q_lora, s->heads * qk, 0);
            T("attn_kv_a_mqa.weight", s->type, 2, h, s->kv_lora + s->rope, 0);
            T("attn_kv_a_norm.weight", 0, 1, s->kv_lora, 0, 0);
            T("attn_kv_b.weight", s->type, 2, s->kv_lora, s->heads * (s->nope + s->v_mla), 0);
            T("attn_output.weight", s->type, 2, (uint64_t)s->heads * s->v_mla, h, 0);
        } else {
            T("attn_q.weight", s->type, 2, h, q, 0);
            T("attn_k.weight", s->type, 2, h, kv, 0);
            T("attn_v.weight", s->type, 2, h, kv, 0);
            T("attn_output.weight", s->type, 2, q, h, 0);
        }
        T("ffn_norm.weight", 0, 1, h, 0, 0);
        if (s->experts && l >= s->dense_first) {
            T("ffn_gate_inp.weight", 0, 2, h, s->experts, 0);
            T("ffn_gate_exps.weight", s->type, 3, h, s->expert_ff, s->experts);
            T("ffn_up_exps.weight", s->type, 3, h, s->expert_ff, s->experts);
            T("ffn_down_exps.weight", s->type, 3, s->expert_ff, h, s->experts);
            if (s->shexp_ff) {
                T("ffn_gate_shexp.weight", s->type, 2, h, s->shexp_ff, 0);
                T("ffn_up_shexp.weight", s->type, 2, h, s->shexp_ff, 0);
                T("ffn_down_shexp.weight", s->type, 2, s->shexp_ff, h, 0);
            }
        } else {
            T("ffn_gate.weight", s->type, 2, h, s->ff, 0);
            T("ffn_up.weight", s->type, 2, h, s->ff, 0);
            T("ffn_down.weight", s->type, 2, s->ff, h, 0);
        }
#undef T
    }
    n = add_t(ts, n, names, "output_norm.weight", 0, 1, h, 0, 0);
    if (!s->tied)
        n = add_t(ts, n, names, "output.weight", s->type, 2, h, s->vocab, 0);
    return n;
}

/* Writes header + tensor infos for spec s with `extra` metadata (written by kvfn, n_extra
 * pairs) and maps it; returns the arena (caller closes). */
static struct vf_arena *map_model(const char *arch, const struct arch_spec *s,
                                  void (*kvfn)(struct mkg *w), uint64_t n_extra, struct vf_model *m,
                                  struct vf_gguf *g)
{
    static struct mkg_t ts[4096];
    static char names[4096][64];
    struct mkg w = {0};
    struct vf_arena *a;
    struct vf_error err;
    char k[128];
    size_t n = arch_tensors(s, ts, names);
    mkg_header(&w, 3, n, 5 + n_extra);
    mkg_kv_str(&w, "general.architecture", arch);
    mkg_kv_u32(&w, "general.file_type", 15);
    snprintf(k, sizeof k, "%s.block_count", arch);
    mkg_kv_u32(&w, k, s->layers);
    snprintf(k, sizeof k, "%s.embedding_length", arch);
    mkg_kv_u32(&w, k, s->hidden);
    snprintf(k, sizeof k, "%s.context_length", arch);
    mkg_kv_u32(&w, k, 32768);
    kvfn(&w);
    mkg_tensors(&w, ts, n, 32, false);
    if (read_mem(&w, 0, &a, g, &err) || vf_model_from_gguf(a, g, "m.gguf", m, &err))
        fail_msg("%s: %s", arch, err.msg);
    mkg_free(&w);
    /* the groups hold every tensor's exact bytes */
    uint64_t sum = 0, params = 0;
    for (size_t i = 0; i < m->n_groups; i++) {
        sum += m->groups[i].stored_bytes;
        params += m->groups[i].n_params;
    }
    assert_u64(sum, g->weight_bytes);
    assert_u64(m->exact_weight_bytes, g->weight_bytes);
    assert_u64(vf_model_weight_bytes(m, NULL), g->weight_bytes);
    assert_u64(params, m->params);
    assert_int_equal(m->provenance, VF_PROV_EXACT);
    return a;
}

static void kv_llama(struct mkg *w)
{
    mkg_kv_u32(w, "llama.attention.head_count", 32);
    mkg_kv_u32(w, "llama.attention.head_count_kv", 8);
    mkg_kv_u32(w, "llama.feed_forward_length", 1024);
    mkg_kv_u32(w, "llama.vocab_size", 1000);
}

static void test_map_llama(void **state)
{
    (void)state;
    struct arch_spec s = {.layers = 4,
                          .hidden = 512,
                          .heads = 32,
                          .kv_heads = 8,
                          .head_dim = 16,
                          .ff = 1024,
                          .vocab = 1000,
                          .type = 12};
    struct vf_model m;
    struct vf_gguf g;
    struct vf_arena *a = map_model("llama", &s, kv_llama, 4, &m, &g);
    assert_string_equal(m.model_type, "llama");
    assert_int_equal(m.n_layers, 4);
    assert_int_equal(m.n_heads, 32);
    assert_int_equal(m.n_kv_heads, 8);
    assert_int_equal(m.head_dim, 16);
    assert_int_equal(m.attn, VF_ATTN_GQA);
    assert_u64(m.vocab, 1000);
    assert_u64(m.max_ctx_tokens, 32768);
    assert_false(m.tied_embeddings);
    assert_int_equal(m.native.kind, VF_QK_GGUF_FTYPE);
    assert_int_equal(m.native.ftype, 15);
    assert_string_equal(m.native.name, "Q4_K_M");
    assert_u64(m.params, m.params_active);
    /* F-KV-01: 4 layers x 8 heads x (16 + 16) x 2 bytes */
    assert_u64(vf_model_kv_bytes_per_token(&m, VF_DT_F16), 4 * 8 * 32 * 2);
    /* one group per class and layer; layer 2's attn_q: 512 x 512 */
    bool found = false;
    for (size_t i = 0; i < m.n_groups; i++)
        if (m.groups[i].layer == 2 && m.groups[i].cls == VF_T_ATTN_Q) {
            assert_u64(m.groups[i].n_params, 512 * 512);
            assert_u64(m.groups[i].row_elems, 512);
            assert_u64(m.groups[i].stored_bytes, 512 * 2 * 144);
            found = true;
        }
    assert_true(found);
    assert_int_equal(m.groups[0].cls, VF_T_TOKEN_EMBD);
    vf_arena_close(a);
}

static void kv_qwen3moe(struct mkg *w)
{
    mkg_kv_u32(w, "qwen3moe.attention.head_count", 16);
    mkg_kv_u32(w, "qwen3moe.attention.head_count_kv", 4);
    mkg_kv_u32(w, "qwen3moe.attention.key_length", 64);
    mkg_kv_u32(w, "qwen3moe.attention.value_length", 64);
    mkg_kv_u32(w, "qwen3moe.expert_count", 16);
    mkg_kv_u32(w, "qwen3moe.expert_used_count", 4);
    mkg_kv_u32(w, "qwen3moe.expert_feed_forward_length", 256);
}

static void test_map_qwen3moe(void **state)
{
    (void)state;
    struct arch_spec s = {.layers = 3,
                          .hidden = 256,
                          .heads = 16,
                          .kv_heads = 4,
                          .head_dim = 64,
                          .vocab = 512,
                          .experts = 16,
                          .expert_ff = 256,
                          .type = 8,
                          .tied = true};
    struct vf_model m;
    struct vf_gguf g;
    struct vf_arena *a = map_model("qwen3moe", &s, kv_qwen3moe, 7, &m, &g);
    assert_string_equal(m.model_type, "qwen3_moe");
    assert_int_equal(m.n_experts, 16);
    assert_int_equal(m.n_experts_used, 4);
    assert_int_equal(m.moe_intermediate, 256);
    assert_true(m.tied_embeddings);
    assert_u64(m.vocab, 512); /* from token_embd's rows */
    /* F-PAR-02: 3 layers x 3 expert tensors x 256 x 256 x (16 - 4) inactive */
    assert_u64(m.params - m.params_active, 3 * 3 * 256 * 256 * 12);
    for (size_t i = 0; i < m.n_groups; i++)
        if (m.groups[i].cls == VF_T_FFN_UP_EXP)
            assert_int_equal(m.groups[i].n_tensors, 16);
    vf_arena_close(a);
}

static void kv_deepseek2(struct mkg *w)
{
    mkg_kv_u32(w, "deepseek2.attention.head_count", 8);
    mkg_kv_u32(w, "deepseek2.attention.head_count_kv", 1);
    mkg_kv_u32(w, "deepseek2.attention.key_length", 576);
    mkg_kv_u32(w, "deepseek2.attention.value_length", 512);
    mkg_kv_u32(w, "deepseek2.attention.key_length_mla", 192);
    mkg_kv_u32(w, "deepseek2.attention.value_length_mla", 128);
    mkg_kv_u32(w, "deepseek2.attention.q_lora_rank", 256);
    mkg_kv_u32(w, "deepseek2.attention.kv_lora_rank", 512);
    mkg_kv_u32(w, "deepseek2.rope.dimension_count", 64);
    mkg_kv_u32(w, "deepseek2.expert_count", 8);
    mkg_kv_u32(w, "deepseek2.expert_used_count", 2);
    mkg_kv_u32(w, "deepseek2.expert_shared_count", 1);
    mkg_kv_u32(w, "deepseek2.leading_dense_block_count", 1);
    mkg_kv_u32(w, "deepseek2.expert_feed_forward_length", 256);
    mkg_kv_u32(w, "deepseek2.feed_forward_length", 1024);
    mkg_kv_u32(w, "deepseek2.expert_gating_func", 2);
}

static void test_map_deepseek2(void **state)
{
    (void)state;
    struct arch_spec s = {.layers = 3,
                          .hidden = 512,
                          .heads = 8,
                          .vocab = 256,
                          .ff = 1024,
                          .experts = 8,
                          .expert_ff = 256,
                          .shexp_ff = 256,
                          .dense_first = 1,
                          .mla = true,
                          .q_lora = 256,
                          .kv_lora = 512,
                          .rope = 64,
                          .nope = 128,
                          .v_mla = 128,
                          .type = 8};
    struct vf_model m;
    struct vf_gguf g;
    struct vf_arena *a = map_model("deepseek2", &s, kv_deepseek2, 16, &m, &g);
    assert_string_equal(m.model_type, "deepseek_v3");
    assert_int_equal(m.attn, VF_ATTN_MLA);
    assert_int_equal(m.kv_lora_rank, 512);
    assert_int_equal(m.q_lora_rank, 256);
    assert_int_equal(m.qk_rope_dim, 64);
    assert_int_equal(m.qk_nope_dim, 128);
    assert_int_equal(m.v_head_dim_mla, 128);
    assert_int_equal(m.first_k_dense, 1);
    assert_int_equal(m.n_shared_experts, 1);
    /* F-KV-02: one latent row of 512 + 64 per layer at 16 bits */
    assert_u64(vf_model_kv_bytes_per_token(&m, VF_DT_F16), 3 * 576 * 2);
    vf_arena_close(a);
}

static void kv_gemma3(struct mkg *w)
{
    mkg_kv_u32(w, "gemma3.attention.head_count", 4);
    mkg_kv_u32(w, "gemma3.attention.head_count_kv", 1);
    mkg_kv_u32(w, "gemma3.attention.key_length", 256);
    mkg_kv_u32(w, "gemma3.attention.value_length", 256);
    mkg_kv_u32(w, "gemma3.attention.sliding_window", 512);
    mkg_kv_u32(w, "gemma3.feed_forward_length", 512);
}

static void test_map_gemma3(void **state)
{
    (void)state;
    struct arch_spec s = {.layers = 12,
                          .hidden = 256,
                          .heads = 4,
                          .kv_heads = 1,
                          .head_dim = 256,
                          .ff = 512,
                          .vocab = 256,
                          .type = 1,
                          .tied = true};
    struct vf_model m;
    struct vf_gguf g;
    struct vf_arena *a = map_model("gemma3", &s, kv_gemma3, 6, &m, &g);
    assert_int_equal(m.attn, VF_ATTN_MQA);
    assert_int_equal(m.sliding_window, 512);
    /* llama.cpp set_swa_pattern(6): layers 5 and 11 are global */
    for (uint32_t i = 0; i < 12; i++)
        assert_int_equal(m.layer_kind[i], i % 6 == 5 ? VF_LAYER_ATTN_FULL : VF_LAYER_ATTN_SLIDING);
    /* F-KV-04: 2 full layers x 4096 + 10 sliding x 512 tokens, 1 head x 512 x 2 B */
    assert_u64(vf_model_kv_bytes(&m, VF_DT_F16, 4096, true), (2 * 4096 + 10 * 512) * 1024ull);
    vf_arena_close(a);
}

static const uint8_t hybrid_ssm[6] = {1, 1, 0, 1, 1, 0};

static void kv_hybrid(struct mkg *w)
{
    mkg_kv_u32(w, "granitehybrid.attention.head_count", 8);
    mkg_kv_arr_u32(w, "granitehybrid.attention.head_count_kv", 6, (uint32_t[]){0, 0, 2, 0, 0, 4});
    mkg_kv_u32(w, "granitehybrid.feed_forward_length", 512);
    mkg_kv_u32(w, "granitehybrid.ssm.conv_kernel", 4);
    mkg_kv_u32(w, "granitehybrid.ssm.inner_size", 512);
    mkg_kv_u32(w, "granitehybrid.ssm.state_size", 128);
    mkg_kv_u32(w, "granitehybrid.ssm.group_count", 1);
}

static void test_map_hybrid(void **state)
{
    (void)state;
    struct arch_spec s = {.layers = 6,
                          .hidden = 256,
                          .heads = 8,
                          .kv_heads = 4,
                          .head_dim = 32,
                          .ff = 512,
                          .vocab = 256,
                          .type = 0,
                          .ssm = hybrid_ssm};
    struct vf_model m;
    struct vf_gguf g;
    struct vf_arena *a = map_model("granitehybrid", &s, kv_hybrid, 7, &m, &g);
    assert_string_equal(m.model_type, "granitemoehybrid");
    assert_non_null(m.layer_kv_heads);
    for (uint32_t i = 0; i < 6; i++)
        assert_int_equal(m.layer_kind[i], hybrid_ssm[i] ? VF_LAYER_RECURRENT : VF_LAYER_ATTN_FULL);
    assert_int_equal(m.layer_kv_heads[2], 2);
    assert_int_equal(m.layer_kv_heads[5], 4);
    /* F-KV-01 per layer: (2 + 4) heads x (32 + 32) x 2 B */
    assert_u64(vf_model_kv_bytes_per_token(&m, VF_DT_F16), 6 * 64 * 2);
    /* F-KV-05: 4 layers x (512 x 128 + (512 + 2 x 128) x 3) x 2 B */
    assert_u64(m.recurrent_state_bytes, 4ull * (512 * 128 + 768 * 3) * 2);
    vf_arena_close(a);
}

static void test_map_errors(void **state)
{
    (void)state;
    struct mkg w = {0};
    struct vf_arena *a;
    struct vf_gguf g;
    struct vf_model m;
    struct vf_error err;
    mkg_header(&w, 3, 0, 1);
    mkg_kv_u32(&w, "general.file_type", 1);
    assert_int_equal(read_mem(&w, 0, &a, &g, &err), VF_OK);
    assert_int_equal(vf_model_from_gguf(a, &g, "m.gguf", &m, &err), VF_EFORMAT);
    assert_string_equal(err.msg, "gguf: 'm.gguf': no general.architecture");
    vf_arena_close(a);
    mkg_free(&w);
    mkg_header(&w, 3, 0, 3);
    mkg_kv_str(&w, "general.architecture", "llama");
    mkg_kv_u32(&w, "llama.block_count", 1u << 20);
    mkg_kv_u32(&w, "llama.embedding_length", 64);
    assert_int_equal(read_mem(&w, 0, &a, &g, &err), VF_OK);
    assert_int_equal(vf_model_from_gguf(a, &g, "m.gguf", &m, &err), VF_ELIMIT);
    assert_non_null(strstr(err.msg, "llama.block_count 1048576 exceeds the limit 1024"));
    vf_arena_close(a);
    mkg_free(&w);
}

/* Writes the fuzz seeds when VRAMFIT_WRITE_CORPUS names a folder (not part of a run). */
static void test_corpus(void **state)
{
    (void)state;
    const char *out = getenv("VRAMFIT_WRITE_CORPUS");
    char p[512];
    struct mkg w = {0};
    if (!out)
        return;
    for (unsigned v = 1; v <= 3; v++) {
        small_file(&w, v);
        w.n = 400; /* header, a little data */
        snprintf(p, sizeof p, "%s/small-v%u.gguf", out, v);
        assert_int_equal(mkg_save(&w, p), 0);
        mkg_free(&w);
    }
    mkg_header(&w, 3, 0, 2);
    mkg_key(&w, "nested", MKG_ARRAY);
    mkg_arr_head(&w, MKG_ARRAY, 2);
    mkg_arr_head(&w, MKG_U32, 1);
    mkg_uint(&w, 7, 4);
    mkg_arr_head(&w, MKG_STRING, 1);
    mkg_str(&w, "s");
    mkg_kv_arr_i32(&w, "llama.attention.head_count_kv", 2, (int32_t[]){0, 4});
    snprintf(p, sizeof p, "%s/nested.gguf", out);
    assert_int_equal(mkg_save(&w, p), 0);
    mkg_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_type_sizes),    cmocka_unit_test(test_versions),
        cmocka_unit_test(test_refusals),      cmocka_unit_test(test_huge_claims),
        cmocka_unit_test(test_nested_arrays), cmocka_unit_test(test_big_vocab),
        cmocka_unit_test(test_alignment),     cmocka_unit_test(test_split),
        cmocka_unit_test(test_map_llama),     cmocka_unit_test(test_map_qwen3moe),
        cmocka_unit_test(test_map_deepseek2), cmocka_unit_test(test_map_gemma3),
        cmocka_unit_test(test_map_hybrid),    cmocka_unit_test(test_map_errors),
        cmocka_unit_test(test_corpus),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
