/* SPDX-License-Identifier: Apache-2.0 */
/*
 * t_resolve.c - unit tests of vf_model_resolve (model.c) on fixtures written into a mkdtemp
 * folder: a Hugging Face snapshot folder (config.json + a header-only model.safetensors, then
 * the same sharded in three with its index, one shard named), the HF cache layout models--ORG--NAME
 * with refs/main, a config.json or a .safetensors named directly, a lone .safetensors, a GGUF file
 * and a split GGUF set, folders that hold two GGUF models or nothing, the hub through the
 * loopback server of tests/helpers/hubserver.c (hf:ORG/NAME, bare ORG/NAME, GGUF-only repos,
 * a named file, gated and missing repos), and unknown references. Never touches the internet.
 *
 * The safetensors model is Llama 3.2 1B (the catalog's config), every tensor in BF16:
 *   embed_tokens 128256 x 2048                                   =   262,668,288
 *   per layer: q 2048x2048 + k 512x2048 + v 512x2048 + o 2048x2048 =  10,485,760
 *              gate, up 8192x2048 + down 2048x8192                  =  50,331,648
 *              input/post-attention norms 2 x 2048                  =       4,096
 *              one layer                                            =  60,821,504
 *   16 layers                                                      =   973,144,064
 *   final norm                                                     =         2,048
 *   total                                                          = 1,235,814,400
 * (the catalog's published count); tied embeddings, so no lm_head tensor, and the weights are
 * 2 bytes each: 2,471,628,800 B, in 1 + 16 x 9 + 1 = 146 tensors.
 *
 * The GGUF model is a tiny llama in Q4_K_M-like types (Q4_K 144 B and Q6_K 210 B per 256
 * elements, F32 norms): hidden 256, 4 heads / 2 KV heads of 64, FFN 512, vocab 1000, L layers:
 *   token_embd Q4_K 256x1000  256,000 params  1000 blocks x 144 = 144,000 B
 *   output_norm F32 256           256 params                        1,024 B
 *   output Q6_K 256x1000      256,000 params  1000 blocks x 210 = 210,000 B
 *   per layer: attn_norm, ffn_norm F32 256 (2 x 1,024 B); attn_q, attn_output Q4_K 256x256
 *   (256 blocks: 2 x 36,864 B); attn_k Q4_K 256x128 (18,432 B); attn_v Q6_K 256x128
 *   (128 x 210 = 26,880 B); ffn_gate, ffn_up Q4_K 256x512 (2 x 73,728 B); ffn_down Q6_K
 *   512x256 (512 x 210 = 107,520 B): 590,336 params, 376,064 B
 * so params(L) = 512,256 + 590,336 L and bytes(L) = 355,024 + 376,064 L:
 *   L = 2: 1,692,928 params, 1,107,152 B;  L = 1: 1,102,592 params, 731,088 B.
 */
#include "th.h"

#include "../helpers/hubserver.c"
#include "../helpers/mkgguf.c"
#include "../helpers/mksafetensors.c"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define L1B_PARAMS    1235814400ull
#define L1B_BYTES     2471628800ull
#define L1B_TENSORS   146
#define L1B_LAYERS    16
#define GG_PARAMS(L)  (512256ull + 590336ull * (L))
#define GG_BYTES(L)   (355024ull + 376064ull * (L))
#define GG_TENSORS(L) (3 + 9 * (L))
#define CACHE_REV     "0123456789abcdef0123456789abcdef01234567"

static struct hubserver srv;
static struct vf_catalog *cat;
static char root[256]; /* mkdtemp: local fixtures, fx/ (the hub's repos), cache-N/, hfhome/ */
static int cache_count;
static char *l1b_config; /* the catalog's models/llama-3.2-1b.json */
static size_t l1b_config_len;

/* ------------------------------------------------------------------ fixtures */

/* root/rel, in one of four rotating buffers. */
static const char *at(const char *rel)
{
    static char path[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(path[k], sizeof path[k], "%s/%s", root, rel);
    return path[k];
}

/* Makes the folders of root/rel (rel ends in a file name, or in '/' for a folder). */
static void mkdirs(const char *rel)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    for (char *q = p + strlen(root) + 1; (q = strchr(q, '/')); q++) {
        *q = 0;
        mkdir(p, 0700);
        *q = '/';
    }
}

static void write_file(const char *rel, const void *data, size_t len)
{
    mkdirs(rel);
    FILE *f = fopen(at(rel), "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

static void write_config(const char *dir)
{
    char rel[512];
    snprintf(rel, sizeof rel, "%s/config.json", dir);
    write_file(rel, l1b_config, l1b_config_len);
}

/* The 146 tensors of Llama 3.2 1B, HF names and [out, in] shapes, all BF16. */
static size_t l1b_tensors(struct mkst_tensor *t, char names[][64])
{
    static const struct {
        const char *suffix;
        unsigned nd;
        uint64_t d0, d1;
    } layer[] = {
        {"input_layernorm.weight", 1, 2048, 0},     {"self_attn.q_proj.weight", 2, 2048, 2048},
        {"self_attn.k_proj.weight", 2, 512, 2048},  {"self_attn.v_proj.weight", 2, 512, 2048},
        {"self_attn.o_proj.weight", 2, 2048, 2048}, {"post_attention_layernorm.weight", 1, 2048, 0},
        {"mlp.gate_proj.weight", 2, 8192, 2048},    {"mlp.up_proj.weight", 2, 8192, 2048},
        {"mlp.down_proj.weight", 2, 2048, 8192},
    };
    size_t n = 0;
    snprintf(names[n], 64, "model.embed_tokens.weight");
    t[n] = (struct mkst_tensor){names[n], "BF16", 2, {128256, 2048}};
    n++;
    for (int l = 0; l < L1B_LAYERS; l++)
        for (size_t i = 0; i < sizeof layer / sizeof layer[0]; i++) {
            snprintf(names[n], 64, "model.layers.%d.%s", l, layer[i].suffix);
            t[n] = (struct mkst_tensor){names[n], "BF16", layer[i].nd, {layer[i].d0, layer[i].d1}};
            n++;
        }
    snprintf(names[n], 64, "model.norm.weight");
    t[n] = (struct mkst_tensor){names[n], "BF16", 1, {2048}};
    return n + 1;
}

static struct mkst_tensor l1b[L1B_TENSORS];
static char l1b_names[L1B_TENSORS][64];

/* dir/config.json + dir/model.safetensors (header, then a 2.47 GB hole). */
static void write_l1b_folder(const char *dir)
{
    char rel[512];
    write_config(dir);
    snprintf(rel, sizeof rel, "%s/model.safetensors", dir);
    assert_int_equal(mkst_write(at(rel), l1b, L1B_TENSORS, "pt"), 0);
}

/* The tiny GGUF llama of `layers` layers (see the header comment) into ts/names. */
static size_t gg_tensors(uint32_t layers, struct mkg_t *ts, char names[][64])
{
    static const struct {
        const char *suffix;
        uint32_t nd;
        uint64_t d0, d1;
        uint32_t type;
    } layer[] = {
        {"attn_norm.weight", 1, 256, 0, 0},      {"attn_q.weight", 2, 256, 256, 12},
        {"attn_k.weight", 2, 256, 128, 12},      {"attn_v.weight", 2, 256, 128, 14},
        {"attn_output.weight", 2, 256, 256, 12}, {"ffn_norm.weight", 1, 256, 0, 0},
        {"ffn_gate.weight", 2, 256, 512, 12},    {"ffn_up.weight", 2, 256, 512, 12},
        {"ffn_down.weight", 2, 512, 256, 14},
    };
    size_t n = 0;
    snprintf(names[n], 64, "token_embd.weight");
    ts[n] = (struct mkg_t){names[n], 2, {256, 1000}, 12};
    n++;
    for (uint32_t l = 0; l < layers; l++)
        for (size_t i = 0; i < sizeof layer / sizeof layer[0]; i++) {
            snprintf(names[n], 64, "blk.%u.%s", l, layer[i].suffix);
            ts[n] =
                (struct mkg_t){names[n], layer[i].nd, {layer[i].d0, layer[i].d1}, layer[i].type};
            n++;
        }
    snprintf(names[n], 64, "output_norm.weight");
    ts[n] = (struct mkg_t){names[n], 1, {256}, 0};
    n++;
    snprintf(names[n], 64, "output.weight");
    ts[n] = (struct mkg_t){names[n], 2, {256, 1000}, 14};
    return n + 1;
}

#define GG_META_KV 10

static void gg_meta(struct mkg *w, const char *name, uint32_t layers)
{
    mkg_kv_str(w, "general.architecture", "llama");
    mkg_kv_str(w, "general.name", name);
    mkg_kv_u32(w, "general.file_type", 15); /* MOSTLY_Q4_K_M */
    mkg_kv_u32(w, "llama.block_count", layers);
    mkg_kv_u32(w, "llama.context_length", 4096);
    mkg_kv_u32(w, "llama.embedding_length", 256);
    mkg_kv_u32(w, "llama.feed_forward_length", 512);
    mkg_kv_u32(w, "llama.attention.head_count", 4);
    mkg_kv_u32(w, "llama.attention.head_count_kv", 2);
    mkg_kv_u32(w, "llama.vocab_size", 1000);
}

/* A header-only GGUF of the tiny llama at root/rel. */
static void write_gguf(const char *rel, const char *name, uint32_t layers)
{
    static struct mkg_t ts[64];
    static char names[64][64];
    struct mkg w = {0};
    size_t n = gg_tensors(layers, ts, names);
    mkdirs(rel);
    mkg_header(&w, 3, n, GG_META_KV);
    gg_meta(&w, name, layers);
    mkg_tensors(&w, ts, n, 32, false);
    assert_int_equal(mkg_save(&w, at(rel)), 0);
    mkg_free(&w);
}

/* The 2-layer tiny llama split in two: part 1 token_embd + layer 0, part 2 the rest. */
static void write_gguf_split(const char *prefix)
{
    static struct mkg_t ts[64];
    static char names[64][64];
    size_t n = gg_tensors(2, ts, names), cut = 1 + 9;
    for (unsigned part = 1; part <= 2; part++) {
        struct mkg w = {0};
        char rel[512];
        size_t lo = part == 1 ? 0 : cut, hi = part == 1 ? cut : n;
        mkg_header(&w, 3, hi - lo, (part == 1 ? GG_META_KV : 0) + 3);
        if (part == 1)
            gg_meta(&w, "tiny-split", 2);
        mkg_key(&w, "split.no", MKG_U16);
        mkg_uint(&w, part - 1, 2);
        mkg_key(&w, "split.count", MKG_U16);
        mkg_uint(&w, 2, 2);
        mkg_kv_i32(&w, "split.tensors.count", (int32_t)n);
        mkg_tensors(&w, ts + lo, hi - lo, 32, false);
        snprintf(rel, sizeof rel, "%s-%05u-of-00002.gguf", prefix, part);
        mkdirs(rel);
        assert_int_equal(mkg_save(&w, at(rel)), 0);
        mkg_free(&w);
    }
}

static void rm_rf(const char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "t_resolve: cannot remove %s\n", dir);
}

/* Points the environment at the loopback hub with a fresh cache and no token. */
static void fresh_env(void)
{
    char p[512];
    snprintf(p, sizeof p, "%s/cache-%d", root, ++cache_count);
    setenv("XDG_CACHE_HOME", p, 1);
    snprintf(p, sizeof p, "%s/hfhome", root);
    setenv("HF_HOME", p, 1);
    setenv("HF_ENDPOINT", srv.url, 1);
    unsetenv("HF_TOKEN");
    unsetenv("HF_TOKEN_PATH");
    setenv("NO_PROXY", "127.0.0.1", 1);
    setenv("no_proxy", "127.0.0.1", 1);
}

static int setup(void **state)
{
    (void)state;
    struct vf_error err = {0};
    snprintf(root, sizeof root, "/tmp/t_resolve.XXXXXX");
    if (!mkdtemp(root) || vf_catalog_open(&cat, NULL, &err))
        return -1;
    const struct vf_catalog_model *cm = vf_catalog_model(cat, "llama-3.2-1b");
    struct vf_arena *a = vf_arena_open(0);
    const char *text = cm ? vf_catalog_file(a, cat, cm->file, &l1b_config_len, &err) : NULL;
    l1b_config = text ? malloc(l1b_config_len) : NULL;
    if (!l1b_config)
        return -1;
    memcpy(l1b_config, text, l1b_config_len);
    vf_arena_close(a);
    if (l1b_tensors(l1b, l1b_names) != L1B_TENSORS)
        return -1;

    /* the hub's repos */
    write_l1b_folder("fx/org/tiny");
    write_config("fx/org/sharded");
    if (mkst_write_sharded(at("fx/org/sharded"), l1b, L1B_TENSORS, 3))
        return -1;
    write_gguf("fx/org/ggufonly/tiny-Q4_K_M.gguf", "tiny", 2);
    write_gguf("fx/org/twogguf/a.gguf", "a", 2);
    write_gguf("fx/org/twogguf/b.gguf", "b", 1);
    write_gguf_split("fx/org/split/tiny");
    write_file("fx/org/gated/.gated", "", 0);
    write_config("fx/org/gated");
    mkdirs("hfhome/");
    return hubserver_start(&srv, at("fx"), "hf_test_secret_token", 0);
}

static int teardown(void **state)
{
    (void)state;
    hubserver_stop(&srv);
    rm_rf(root);
    free(l1b_config);
    vf_catalog_close(cat);
    return 0;
}

static int each(void **state)
{
    (void)state;
    fresh_env();
    return 0;
}

/* Resolves ref and fails the test with the library's message on error. */
static void resolve_ok(struct vf_arena *a, const char *ref, struct vf_model *m)
{
    struct vf_error err = {0};
    if (vf_model_resolve(a, cat, ref, m, &err))
        fail_msg("%s: %s", ref, err.msg);
}

static enum vf_err resolve_err(const char *ref, struct vf_error *err)
{
    struct vf_arena *a = vf_arena_open(0);
    struct vf_model m;
    memset(err, 0, sizeof *err);
    enum vf_err rc = vf_model_resolve(a, cat, ref, &m, err);
    vf_arena_close(a);
    return rc;
}

/* The safetensors Llama 3.2 1B with its config: architecture and exact bytes. */
static void check_l1b(const struct vf_model *m)
{
    assert_int_equal(m->provenance, VF_PROV_EXACT);
    assert_int_equal(m->n_layers, L1B_LAYERS);
    assert_int_equal(m->hidden, 2048);
    assert_true(m->tied_embeddings);
    assert_u64(m->params, L1B_PARAMS);
    assert_u64(m->exact_weight_bytes, L1B_BYTES);
    assert_u64(m->exact_weight_bytes, 2 * m->params);
    assert_non_null(m->tensors);
    assert_int_equal(m->n_tensors, L1B_TENSORS);
    /* the native scheme counts the bytes read from the headers */
    assert_u64(vf_model_weight_bytes(m, NULL), L1B_BYTES);
}

/* The tiny GGUF llama of `layers` layers, read from its header. */
static void check_gguf(const struct vf_model *m, uint32_t layers)
{
    assert_int_equal(m->provenance, VF_PROV_EXACT);
    assert_string_equal(m->model_type, "llama");
    assert_int_equal(m->n_layers, layers);
    assert_int_equal(m->n_heads, 4);
    assert_int_equal(m->n_kv_heads, 2);
    assert_int_equal(m->head_dim, 64);
    assert_u64(m->vocab, 1000);
    assert_u64(m->params, GG_PARAMS(layers));
    assert_u64(m->exact_weight_bytes, GG_BYTES(layers));
    assert_non_null(m->tensors);
    assert_int_equal(m->n_tensors, GG_TENSORS(layers));
    uint64_t sum = 0;
    for (size_t i = 0; i < m->n_tensors; i++)
        sum += m->tensors[i].bytes;
    assert_u64(sum, GG_BYTES(layers));
    assert_string_equal(m->native.name, "Q4_K_M");
}

/* ------------------------------------------------------------------ local folders */

/* 1. A snapshot folder: config.json + model.safetensors. */
static void test_folder(void **state)
{
    (void)state;
    struct vf_arena *a = vf_arena_open(0);
    struct vf_model m;
    write_l1b_folder("one");
    resolve_ok(a, at("one"), &m);
    check_l1b(&m);
    assert_string_equal(m.source, at("one"));
    /* no lm_head tensor: the output class is absent from the tensors read */
    for (size_t i = 0; i < m.n_tensors; i++)
        assert_int_not_equal(m.tensors[i].cls, VF_T_OUTPUT);
    vf_arena_close(a);
}

/* 2. The same in three shards with model.safetensors.index.json. */
static void test_sharded(void **state)
{
    (void)state;
    struct vf_arena *a = vf_arena_open(0);
    struct vf_model m;
    write_config("sharded");
    /* 146 tensors in 3 shards: 49 + 49 + 48 */
    assert_int_equal(mkst_write_sharded(at("sharded"), l1b, L1B_TENSORS, 3), 0);
    resolve_ok(a, at("sharded"), &m);
    check_l1b(&m);
    /* the shards were read, not a lone file: a tensor of the last shard is there */
    assert_string_equal(m.tensors[L1B_TENSORS - 1].name, "model.norm.weight");
    vf_arena_close(a);
}

/* 2b. One shard named, with config.json and the index beside it: the whole set, as a split
 * GGUF is read whole from any of its parts. */
static void test_named_shard(void **state)
{
    (void)state;
    struct vf_arena *a = vf_arena_open(0);
    struct vf_model m;
    write_config("shard");
    assert_int_equal(mkst_write_sharded(at("shard"), l1b, L1B_TENSORS, 3), 0);
    /* today: shard 1's 49 tensors alone, 1,144,041,472 B, with provenance EXACT */
    resolve_ok(a, at("shard/model-00001-of-00003.safetensors"), &m);
    check_l1b(&m);
    vf_arena_close(a);
}

/* 3. The HF cache layout: refs/main names the snapshot; another snapshot is not used. */
static void test_hf_cache(void **state)
{
    (void)state;
    struct vf_arena *a = vf_arena_open(0);
    struct vf_model m;
    write_l1b_folder("hub/models--org--tiny/snapshots/" CACHE_REV);
    /* an older snapshot with the config alone: resolving it would give provenance CONFIG */
    write_config("hub/models--org--tiny/snapshots/fedcba9876543210fedcba9876543210fedcba98");
    write_file("hub/models--org--tiny/refs/main", CACHE_REV "\n", strlen(CACHE_REV) + 1);
    resolve_ok(a, at("hub/models--org--tiny"), &m);
    check_l1b(&m);
    assert_string_equal(m.source, at("hub/models--org--tiny/snapshots/" CACHE_REV));
    vf_arena_close(a);
}

/* 4. config.json named (the weights beside it merged), a .safetensors named with a config
 * beside it, and a lone .safetensors (no architecture, exact parameters and bytes). */
static void test_named_files(void **state)
{
    (void)state;
    struct vf_arena *a = vf_arena_open(0);
    struct vf_model m;
    write_l1b_folder("named");
    resolve_ok(a, at("named/config.json"), &m);
    check_l1b(&m);
    resolve_ok(a, at("named/model.safetensors"), &m);
    check_l1b(&m);

    mkdirs("lone/");
    assert_int_equal(mkst_write(at("lone/model.safetensors"), l1b, L1B_TENSORS, "pt"), 0);
    resolve_ok(a, at("lone/model.safetensors"), &m);
    assert_int_equal(m.provenance, VF_PROV_EXACT);
    assert_int_equal(m.n_layers, 0);
    assert_u64(m.params, L1B_PARAMS);
    assert_u64(m.params_active, L1B_PARAMS);
    assert_u64(m.exact_weight_bytes, L1B_BYTES);
    assert_int_equal(m.n_tensors, L1B_TENSORS);
    /* the groups hold every tensor: one per class and layer, 1 embedding + 16 layers x 8
     * classes (norm: both norms in one; q, k, v, o, gate, up, down) + the final norm = 130 */
    uint64_t params = 0, bytes = 0;
    for (size_t i = 0; i < m.n_groups; i++) {
        params += m.groups[i].n_params;
        bytes += m.groups[i].stored_bytes;
    }
    assert_u64(params, L1B_PARAMS);
    assert_u64(bytes, L1B_BYTES);
    assert_int_equal(m.n_groups, 130);
    vf_arena_close(a);
}

/* 5. A .gguf file, and a split set from its first part. */
static void test_gguf(void **state)
{
    (void)state;
    struct vf_arena *a = vf_arena_open(0);
    struct vf_model m;
    write_gguf("gguf/tiny-Q4_K_M.gguf", "tiny", 2);
    resolve_ok(a, at("gguf/tiny-Q4_K_M.gguf"), &m);
    check_gguf(&m, 2);
    assert_string_equal(m.source, at("gguf/tiny-Q4_K_M.gguf"));

    write_gguf_split("split/tiny");
    resolve_ok(a, at("split/tiny-00001-of-00002.gguf"), &m);
    check_gguf(&m, 2);
    /* a folder holding only the split set resolves to it, counted once */
    resolve_ok(a, at("split"), &m);
    check_gguf(&m, 2);
    /* a folder with one .gguf (and a vision projector, which is not the model) */
    write_gguf("onegguf/tiny.gguf", "tiny", 1);
    write_gguf("onegguf/mmproj-tiny-f16.gguf", "proj", 2);
    resolve_ok(a, at("onegguf"), &m);
    check_gguf(&m, 1);
    vf_arena_close(a);
}

/* 6. A folder of two GGUF models names both; a folder of neither is not a model. */
static void test_folder_errors(void **state)
{
    (void)state;
    struct vf_error err;
    write_gguf("two/a.gguf", "a", 2);
    write_gguf("two/b.gguf", "b", 1);
    assert_int_equal(resolve_err(at("two"), &err), VF_EINVAL);
    assert_non_null(strstr(err.msg, "holds several GGUF models ("));
    assert_non_null(strstr(err.msg, "a.gguf"));
    assert_non_null(strstr(err.msg, "b.gguf"));
    assert_non_null(strstr(err.msg, "): name one"));

    write_file("empty/README.md", "# nothing\n", 10);
    assert_int_equal(resolve_err(at("empty"), &err), VF_ENOENT);
    assert_non_null(strstr(err.msg, "has no config.json and no .gguf file"));
    assert_non_null(strstr(err.msg, at("empty")));
}

/* 6b. A FIFO named x.gguf, x.safetensors or x.json (no writer: an open without O_NONBLOCK
 * waits forever; the first two are read by the reader, config.json whole by vf__read_file)
 * and a character device are refused before a byte is read, naming the file and what it is.
 * alarm(): a regression that blocks kills the test binary instead of hanging. */
static void test_special_files(void **state)
{
    (void)state;
    struct vf_error err;
    mkdirs("special/");
    assert_int_equal(mkfifo(at("special/x.gguf"), 0600), 0);
    assert_int_equal(mkfifo(at("special/x.safetensors"), 0600), 0);
    assert_int_equal(mkfifo(at("special/x.json"), 0600), 0);
    alarm(10);
    assert_int_equal(resolve_err(at("special/x.gguf"), &err), VF_EIO);
    assert_non_null(strstr(err.msg, "x.gguf': a FIFO, not a regular file"));
    assert_int_equal(resolve_err(at("special/x.safetensors"), &err), VF_EIO);
    assert_non_null(strstr(err.msg, "x.safetensors': a FIFO, not a regular file"));
    assert_int_equal(resolve_err(at("special/x.json"), &err), VF_EIO);
    assert_non_null(strstr(err.msg, "x.json': a FIFO, not a regular file"));
    alarm(0);
    struct vf_reader r;
    assert_int_equal(vf_reader_open_file(&r, "/dev/zero", &err), VF_EIO);
    assert_string_equal(err.msg, "cannot read '/dev/zero': a character device, not a regular file");
    assert_int_equal(r.fd, -1);
}

/* ------------------------------------------------------------------ the hub */

static unsigned long long hub_bytes(void)
{
    return atomic_load(&srv.bytes);
}

/* 7a. hf:org/tiny and a bare org/tiny: config.json + model.safetensors's header only; then
 * hf:org/sharded, the three shards of test_sharded with their index. */
static void test_hub_safetensors(void **state)
{
    (void)state;
    struct vf_arena *a = vf_arena_open(0);
    struct vf_model m;
    unsigned long long before = hub_bytes();
    resolve_ok(a, "hf:org/tiny", &m);
    check_l1b(&m);
    assert_string_equal(m.id, "org/tiny");
    /* the listing, config.json and one first range of 64 KiB (the ~16 KB header fits in it):
     * under 128 KiB of a 2.47 GB file */
    unsigned long long got = hub_bytes() - before;
    assert_true(got > 0);
    assert_true(got < 128 * 1024);

    /* bare ORG/NAME, not in the catalog, in a fresh cache so that the hub is asked again */
    fresh_env();
    before = hub_bytes();
    resolve_ok(a, "org/tiny", &m);
    check_l1b(&m);
    assert_true(hub_bytes() - before < 128 * 1024);

    /* three shards through the index: one first range of 64 KiB each, under 256 KiB */
    before = hub_bytes();
    resolve_ok(a, "hf:org/sharded", &m);
    check_l1b(&m);
    assert_true(hub_bytes() - before < 256 * 1024);
    vf_arena_close(a);
}

/* 7b. GGUF repos: one file, two files (name one), a named file. */
static void test_hub_gguf(void **state)
{
    (void)state;
    struct vf_arena *a = vf_arena_open(0);
    struct vf_model m;
    struct vf_error err;
    resolve_ok(a, "hf:org/ggufonly", &m);
    check_gguf(&m, 2);
    assert_string_equal(m.id, "org/ggufonly");

    assert_int_equal(resolve_err("hf:org/twogguf", &err), VF_EINVAL);
    assert_non_null(strstr(err.msg, "hub: 'org/twogguf' holds 2 GGUF files and no config.json: "
                                    "name one, e.g. hf:org/twogguf/"));

    resolve_ok(a, "hf:org/twogguf/b.gguf", &m);
    check_gguf(&m, 1); /* b has one layer, a two */
    resolve_ok(a, "hf:org/twogguf/a.gguf", &m);
    check_gguf(&m, 2);

    /* a split set on the hub is one model, read whole from its parts' headers, whether the
     * repo or its first part is named */
    resolve_ok(a, "hf:org/split", &m);
    check_gguf(&m, 2);
    resolve_ok(a, "hf:org/split/tiny-00001-of-00002.gguf", &m);
    check_gguf(&m, 2);
    vf_arena_close(a);
}

/* 7c. A gated repo without a token, a missing repo. */
static void test_hub_errors(void **state)
{
    (void)state;
    struct vf_error err;
    assert_int_equal(resolve_err("hf:org/gated", &err), VF_EIO);
    assert_non_null(strstr(err.msg, "'org/gated' is gated: 401 from"));
    assert_non_null(strstr(err.msg, "HF_TOKEN"));

    assert_int_equal(resolve_err("hf:org/missing", &err), VF_ENOENT);
    assert_non_null(strstr(err.msg, "'org/missing' not found (404 from"));
    /* bare, too: not in the catalog, not a path, so the hub is asked */
    assert_int_equal(resolve_err("org/missing", &err), VF_ENOENT);
    assert_non_null(strstr(err.msg, "not found (404"));
}

/* ------------------------------------------------------------------ references */

/* 8. An unknown name gets suggestions; a missing file is "no such file". */
static void test_unknown(void **state)
{
    (void)state;
    struct vf_error err;
    assert_int_equal(resolve_err("llama-3-70b", &err), VF_ENOENT);
    assert_non_null(strstr(err.msg, "unknown model 'llama-3-70b'"));
    assert_non_null(strstr(err.msg, "did you mean: "));
    assert_non_null(strstr(err.msg, "llama-3.1-70b"));

    assert_int_equal(resolve_err("nope.gguf", &err), VF_ENOENT);
    assert_non_null(strstr(err.msg, "cannot open 'nope.gguf': no such file"));
    assert_int_equal(resolve_err(at("nope/model.safetensors"), &err), VF_ENOENT);
    assert_non_null(strstr(err.msg, "no such file"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_folder, each),
        cmocka_unit_test_setup(test_sharded, each),
        cmocka_unit_test_setup(test_named_shard, each),
        cmocka_unit_test_setup(test_hf_cache, each),
        cmocka_unit_test_setup(test_named_files, each),
        cmocka_unit_test_setup(test_gguf, each),
        cmocka_unit_test_setup(test_folder_errors, each),
        cmocka_unit_test_setup(test_special_files, each),
        cmocka_unit_test_setup(test_hub_safetensors, each),
        cmocka_unit_test_setup(test_hub_gguf, each),
        cmocka_unit_test_setup(test_hub_errors, each),
        cmocka_unit_test_setup(test_unknown, each),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
