/* SPDX-License-Identifier: Apache-2.0 */
/*
 * t_safetensors.c - unit tests of the safetensors reader (read_safetensors.c) on fixtures
 * written by tests/helpers/mksafetensors.c into a mkdtemp folder: every dtype's size
 * (F-W-11), the packed-storage rule (F-W-12), layer and class of HF names (F-W-13), sharded
 * folders, malformed files (each error message asserted), bounded allocation on claimed
 * sizes, and the merge of exact sizes into a model read from config.json (F-W-14).
 */
#include "th.h"

#include "read/read_safetensors.h"

#include "../helpers/mksafetensors.c"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define N(a) (sizeof(a) / sizeof((a)[0]))

static char tmpdir[] = "/tmp/t_safetensors.XXXXXX";

static int setup(void **state)
{
    (void)state;
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
    char cmd[256];
    (void)state;
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

/* A fresh sub-folder of the fixture folder. */
static const char *subdir(const char *name)
{
    static char p[512];
    snprintf(p, sizeof p, "%s/%s", tmpdir, name);
    assert_int_equal(mkdir(p, 0700), 0);
    return p;
}

/* Reads a memory image; returns the code, message in *err. */
static enum vf_err read_mem(struct vf_arena *a, const void *buf, size_t len,
                            struct vf_safetensors *st, struct vf_error *err)
{
    struct vf_reader r;
    vf_reader_mem(&r, buf, len, "x.safetensors");
    return vf_safetensors_read(a, &r, st, err);
}

/* Reads a file written by the helper. */
static enum vf_err read_path(struct vf_arena *a, const char *path, struct vf_safetensors *st,
                             struct vf_error *err)
{
    struct vf_reader r;
    enum vf_err rc = vf_reader_open_file(&r, path, err);
    if (rc)
        return rc;
    rc = vf_safetensors_read(a, &r, st, err);
    vf_reader_close(&r);
    return rc;
}

static const struct vf_tensor_info *find_tensor(const struct vf_safetensors *st, const char *name)
{
    for (size_t i = 0; i < st->n_tensors; i++)
        if (strcmp(st->tensors[i].name, name) == 0)
            return &st->tensors[i];
    fail_msg("no tensor %s", name);
    return NULL;
}

/* Every dtype of the format, sizes by the writer's own table; F4 and F6 packed. */
static void test_dtype_sizes(void **state)
{
    static const struct {
        const char *dtype;
        unsigned bits;
    } dt[] = {{"F64", 64},        {"F32", 32},       {"F16", 16},    {"BF16", 16},   {"F8_E4M3", 8},
              {"F8_E5M2", 8},     {"F8_E8M0", 8},    {"F6_E2M3", 6}, {"F6_E3M2", 6}, {"F4", 4},
              {"I64", 64},        {"I32", 32},       {"I16", 16},    {"I8", 8},      {"U64", 64},
              {"U32", 32},        {"U16", 16},       {"U8", 8},      {"BOOL", 8},    {"C64", 64},
              {"F8_E4M3FNUZ", 8}, {"F8_E5M2FNUZ", 8}};
    struct mkst_tensor t[N(dt)];
    char names[N(dt)][32];
    (void)state;
    for (size_t i = 0; i < N(dt); i++) {
        snprintf(names[i], sizeof names[i], "t.%s", dt[i].dtype);
        t[i] = (struct mkst_tensor){names[i], dt[i].dtype, 2, {3, 8}};
        assert_int_equal(vf__st_dtype_bits(dt[i].dtype), dt[i].bits);
    }
    assert_int_equal(vf__st_dtype_bits("Q4_K"), 0);

    size_t len;
    unsigned char *buf = mkst_build(t, N(t), "pt", &len);
    struct vf_arena *a = vf_arena_open(0);
    struct vf_safetensors st;
    struct vf_error err = {0};
    if (read_mem(a, buf, len, &st, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(st.n_tensors, N(dt));
    assert_string_equal(st.metadata_format, "pt");
    uint64_t sum = 0, off = 8 + st.header_len;
    for (size_t i = 0; i < N(dt); i++) {
        const struct vf_tensor_info *x = find_tensor(&st, names[i]);
        assert_u64(x->bytes, 24 * dt[i].bits / 8); /* F4: 12 bytes, F6: 18 */
        assert_u64(x->bytes, mkst_bytes(dt[i].dtype, t[i].shape, 2));
        assert_u64(x->n_elems, 24);
        assert_string_equal(x->st_dtype, dt[i].dtype);
        assert_int_equal(x->ggml_type, -1);
        assert_int_equal(x->n_dims, 2);
        assert_u64(x->dims[1], 8);
        sum += x->bytes;
    }
    /* in file order, offsets in the file */
    for (size_t i = 0; i < st.n_tensors; i++) {
        assert_u64(st.tensors[i].offset, off);
        off += st.tensors[i].bytes;
    }
    assert_u64(off, len);
    assert_u64(st.weight_bytes, sum);
    assert_u64(st.params, 24 * N(dt));
    assert_u64(vf__safetensors_dtype_params(&st, "BF16"), 24);
    free(buf);
    vf_arena_close(a);
}

/*
 * F-W-12: GPTQ qweight I32 [in/8, out] holds 8 parameters per element; qzeros,
 * scales, g_idx are metadata (bytes, no parameters). AWQ packs along out: [in, out/8].
 * gpt-oss MXFP4 *_blocks U8 [E, rows, blocks, 16] hold 2 per element; *_scales are not
 * parameters.
 */
static void test_packed(void **state)
{
    static const struct mkst_tensor t[] = {
        /* GPTQ, 4096 x 4096, group 128 */
        {"model.layers.0.self_attn.q_proj.qweight", "I32", 2, {512, 4096}},
        {"model.layers.0.self_attn.q_proj.qzeros", "I32", 2, {32, 512}},
        {"model.layers.0.self_attn.q_proj.scales", "F16", 2, {32, 4096}},
        {"model.layers.0.self_attn.q_proj.g_idx", "I32", 1, {4096}},
        /* AWQ, 4096 -> 1024 */
        {"model.layers.0.self_attn.k_proj.qweight", "I32", 2, {4096, 128}},
        {"model.layers.0.self_attn.k_proj.qzeros", "I32", 2, {32, 128}},
        {"model.layers.0.self_attn.k_proj.scales", "F16", 2, {32, 1024}},
        /* gpt-oss-20b layer 0 experts: 32 x 5760 x 2880 in MXFP4 blocks of 32 */
        {"model.layers.0.mlp.experts.gate_up_proj_blocks", "U8", 4, {32, 5760, 90, 16}},
        {"model.layers.0.mlp.experts.gate_up_proj_scales", "U8", 3, {32, 5760, 90}},
        {"model.layers.0.mlp.experts.gate_up_proj_bias", "BF16", 2, {32, 5760}},
        /* a plain tensor */
        {"model.norm.weight", "BF16", 1, {4096}},
    };
    char path[512];
    struct vf_arena *a = vf_arena_open(0);
    struct vf_safetensors st;
    struct vf_error err = {0};
    (void)state;

    snprintf(path, sizeof path, "%s/packed.safetensors", tmpdir);
    assert_int_equal(mkst_write(path, t, N(t), "pt"), 0);
    if (read_path(a, path, &st, &err))
        fail_msg("%s", err.msg);
    assert_u64(find_tensor(&st, t[0].name)->n_elems, 4096ull * 4096);
    assert_u64(find_tensor(&st, t[0].name)->bytes, 4096ull * 4096 / 2);
    assert_u64(find_tensor(&st, t[1].name)->n_elems, 32ull * 4096);
    assert_u64(find_tensor(&st, t[2].name)->n_elems, 32ull * 4096);
    assert_u64(find_tensor(&st, t[4].name)->n_elems, 4096ull * 1024);
    assert_u64(find_tensor(&st, t[7].name)->n_elems, 32ull * 5760 * 2880);
    assert_u64(find_tensor(&st, t[7].name)->bytes, 32ull * 5760 * 2880 / 2);
    assert_u64(find_tensor(&st, t[8].name)->n_elems, 32ull * 5760 * 90);
    assert_false(vf__st_is_param(t[1].name));
    assert_false(vf__st_is_param(t[2].name));
    assert_false(vf__st_is_param(t[3].name));
    assert_false(vf__st_is_param(t[8].name));
    assert_true(vf__st_is_param(t[9].name));
    assert_false(vf__st_is_param("model.layers.0.self_attn.q_proj.weight_scale_inv"));
    assert_false(vf__st_is_param("model.layers.0.mlp.down_proj.weight.absmax"));

    uint64_t p = 4096ull * 4096 + 4096ull * 1024 + 32ull * 5760 * 2880 + 32 * 5760 + 4096;
    assert_u64(st.params, p);
    assert_u64(vf__safetensors_dtype_params(&st, "I32"), 4096ull * 4096 + 4096ull * 1024);
    assert_u64(vf__safetensors_dtype_params(&st, "U8"), 32ull * 5760 * 2880);
    assert_u64(vf__safetensors_dtype_params(&st, "F16"), 0);
    uint64_t bytes = 0;
    for (size_t i = 0; i < N(t); i++)
        bytes += mkst_bytes(t[i].dtype, t[i].shape, t[i].n_dims);
    assert_u64(st.weight_bytes, bytes);
    vf_arena_close(a);
}

/* ModelOpt NVFP4 and bitsandbytes 4-bit: a U8 weight is packed when its sibling says so. */
static void test_packed_siblings(void **state)
{
    static const struct mkst_tensor t[] = {
        {"model.layers.1.mlp.up_proj.weight", "U8", 2, {14336, 2048}},
        {"model.layers.1.mlp.up_proj.weight_scale", "F8_E4M3", 2, {14336, 256}},
        {"model.layers.1.mlp.up_proj.weight_scale_2", "F32", 0, {0}},
        {"model.layers.1.mlp.down_proj.weight", "U8", 2, {100, 1}},
        {"model.layers.1.mlp.down_proj.weight.quant_state.bitsandbytes__nf4", "U8", 1, {64}},
        {"model.layers.1.mlp.gate_proj.weight", "U8", 2, {10, 10}}, /* plain U8 */
    };
    char path[512];
    struct vf_arena *a = vf_arena_open(0);
    struct vf_safetensors st;
    struct vf_error err = {0};
    (void)state;

    snprintf(path, sizeof path, "%s/nvfp4.safetensors", tmpdir);
    assert_int_equal(mkst_write(path, t, N(t), NULL), 0);
    if (read_path(a, path, &st, &err))
        fail_msg("%s", err.msg);
    assert_u64(find_tensor(&st, t[0].name)->n_elems, 14336ull * 4096);
    assert_u64(find_tensor(&st, t[2].name)->n_elems, 1); /* a scalar: shape [] */
    assert_u64(find_tensor(&st, t[3].name)->n_elems, 200);
    assert_u64(find_tensor(&st, t[5].name)->n_elems, 100);
    assert_u64(st.params, 14336ull * 4096 + 200 + 100);
    vf_arena_close(a);
}

/* F-W-13: layer and class from Hugging Face names. */
static void test_classify(void **state)
{
    static const struct {
        const char *name;
        int32_t layer;
        enum vf_tclass cls;
    } c[] = {
        {"model.embed_tokens.weight", -1, VF_T_TOKEN_EMBD},
        {"lm_head.weight", -1, VF_T_OUTPUT},
        {"model.norm.weight", -1, VF_T_NORM},
        {"model.layers.0.input_layernorm.weight", 0, VF_T_NORM},
        {"model.layers.31.post_attention_layernorm.weight", 31, VF_T_NORM},
        {"model.layers.3.self_attn.q_proj.weight", 3, VF_T_ATTN_Q},
        {"model.layers.3.self_attn.k_proj.weight", 3, VF_T_ATTN_K},
        {"model.layers.3.self_attn.v_proj.weight", 3, VF_T_ATTN_V},
        {"model.layers.3.self_attn.o_proj.weight", 3, VF_T_ATTN_O},
        {"model.layers.3.self_attn.q_norm.weight", 3, VF_T_NORM},
        {"model.layers.3.self_attn.q_proj.bias", 3, VF_T_BIAS},
        {"model.layers.3.self_attn.q_proj.qweight", 3, VF_T_ATTN_Q},
        {"model.layers.3.self_attn.q_proj.scales", 3, VF_T_ATTN_Q},
        {"model.layers.2.self_attn.qkv_proj.weight", 2, VF_T_ATTN_QKV},
        {"model.layers.4.mlp.gate_proj.weight", 4, VF_T_FFN_GATE},
        {"model.layers.4.mlp.up_proj.weight", 4, VF_T_FFN_UP},
        {"model.layers.4.mlp.down_proj.weight", 4, VF_T_FFN_DOWN},
        {"model.layers.4.mlp.gate_up_proj.weight", 4, VF_T_FFN_UP},
        {"model.layers.5.block_sparse_moe.experts.7.w1.weight", 5, VF_T_FFN_GATE_EXP},
        {"model.layers.5.block_sparse_moe.experts.7.w3.weight", 5, VF_T_FFN_UP_EXP},
        {"model.layers.5.block_sparse_moe.experts.7.w2.weight", 5, VF_T_FFN_DOWN_EXP},
        {"model.layers.5.block_sparse_moe.gate.weight", 5, VF_T_ROUTER},
        {"model.layers.6.mlp.experts.12.gate_proj.weight", 6, VF_T_FFN_GATE_EXP},
        {"model.layers.6.mlp.experts.12.down_proj.weight_scale_inv", 6, VF_T_FFN_DOWN_EXP},
        {"model.layers.6.mlp.shared_experts.up_proj.weight", 6, VF_T_FFN_UP_SHEXP},
        {"model.layers.6.mlp.shared_expert.down_proj.weight", 6, VF_T_FFN_DOWN_SHEXP},
        {"model.layers.6.mlp.shared_expert_gate.weight", 6, VF_T_ROUTER},
        {"model.layers.6.mlp.gate.weight", 6, VF_T_ROUTER},
        {"model.layers.6.mlp.gate.e_score_correction_bias", 6, VF_T_BIAS},
        {"model.layers.7.mlp.router.weight", 7, VF_T_ROUTER},
        {"model.layers.7.mlp.router.bias", 7, VF_T_BIAS},
        {"model.layers.7.mlp.experts.gate_up_proj_blocks", 7, VF_T_FFN_UP_EXP},
        {"model.layers.7.mlp.experts.down_proj_scales", 7, VF_T_FFN_DOWN_EXP},
        {"model.layers.7.mlp.experts.down_proj_bias", 7, VF_T_BIAS},
        {"model.layers.7.self_attn.sinks", 7, VF_T_BIAS},
        {"model.layers.8.self_attn.q_a_proj.weight", 8, VF_T_ATTN_Q},
        {"model.layers.8.self_attn.q_a_layernorm.weight", 8, VF_T_NORM},
        {"model.layers.8.self_attn.q_b_proj.weight", 8, VF_T_ATTN_Q},
        {"model.layers.8.self_attn.kv_a_proj_with_mqa.weight", 8, VF_T_ATTN_K},
        {"model.layers.8.self_attn.kv_b_proj.weight", 8, VF_T_ATTN_V},
        {"backbone.layers.9.mixer.in_proj.weight", 9, VF_T_SSM},
        {"backbone.layers.9.mixer.conv1d.weight", 9, VF_T_SSM},
        {"backbone.layers.9.mixer.conv1d.bias", 9, VF_T_BIAS},
        {"backbone.layers.9.mixer.A_log", 9, VF_T_SSM},
        {"backbone.layers.9.mixer.D", 9, VF_T_SSM},
        {"backbone.layers.9.mixer.dt_bias", 9, VF_T_SSM},
        {"backbone.layers.9.mixer.norm.weight", 9, VF_T_NORM},
        {"backbone.layers.9.mixer.out_proj.weight", 9, VF_T_SSM},
        {"backbone.layers.10.mixer.o_proj.weight", 10, VF_T_ATTN_O},
        {"backbone.embeddings.weight", -1, VF_T_TOKEN_EMBD},
        {"model.layers.11.linear_attn.in_proj_qkvz.weight", 11, VF_T_SSM},
        {"transformer.h.12.attn.c_attn.weight", 12, VF_T_ATTN_QKV},
        {"transformer.h.12.attn.c_proj.weight", 12, VF_T_ATTN_O},
        {"transformer.h.12.mlp.c_fc.weight", 12, VF_T_FFN_UP},
        {"transformer.h.12.mlp.c_proj.weight", 12, VF_T_FFN_DOWN},
        {"transformer.h.12.ln_1.weight", 12, VF_T_NORM},
        {"transformer.wte.weight", -1, VF_T_TOKEN_EMBD},
        {"blocks.13.attn.out_proj.weight", 13, VF_T_ATTN_O},
        {"language_model.model.layers.14.feed_forward.experts.gate_up_proj", 14, VF_T_FFN_UP_EXP},
        {"vision_tower.vision_model.encoder.layers.0.self_attn.q_proj.weight", -1, VF_T_OTHER},
        {"multi_modal_projector.linear_1.weight", -1, VF_T_OTHER},
        {"mtp.layers.0.self_attn.q_proj.weight", -1, VF_T_OTHER},
        {"model.rotary_emb.inv_freq", -1, VF_T_OTHER},
        {"model.layers.x.mlp.up_proj.weight", -1, VF_T_FFN_UP},
        {"", -1, VF_T_OTHER},
    };
    (void)state;
    for (size_t i = 0; i < N(c); i++) {
        int32_t l;
        enum vf_tclass k;
        vf__st_classify(c[i].name, &l, &k);
        if (l != c[i].layer || k != c[i].cls)
            fail_msg("%s: layer %d class %s, expected %d %s", c[i].name, l, vf_tclass_name(k),
                     c[i].layer, vf_tclass_name(c[i].cls));
    }
}

/* 10 tensors over 3 shards with an index. */
static const struct mkst_tensor shard_t[] = {
    {"model.embed_tokens.weight", "BF16", 2, {64, 16}},
    {"model.layers.0.input_layernorm.weight", "BF16", 1, {16}},
    {"model.layers.0.self_attn.q_proj.weight", "BF16", 2, {16, 16}},
    {"model.layers.0.mlp.up_proj.weight", "BF16", 2, {32, 16}},
    {"model.layers.1.input_layernorm.weight", "F32", 1, {16}},
    {"model.layers.1.self_attn.q_proj.qweight", "I32", 2, {2, 16}},
    {"model.layers.1.self_attn.q_proj.scales", "F16", 2, {1, 16}},
    {"model.layers.1.mlp.up_proj.weight", "F8_E4M3", 2, {32, 16}},
    {"model.norm.weight", "BF16", 1, {16}},
    {"lm_head.weight", "BF16", 2, {64, 16}},
};

static void test_sharded(void **state)
{
    const char *dir = subdir("sharded");
    struct vf_arena *a = vf_arena_open(0);
    struct vf_safetensors st;
    struct vf__st_index info;
    struct vf_error err = {0};
    uint64_t bytes = 0;
    (void)state;

    for (size_t i = 0; i < N(shard_t); i++)
        bytes += mkst_bytes(shard_t[i].dtype, shard_t[i].shape, shard_t[i].n_dims);
    assert_int_equal(mkst_write_sharded(dir, shard_t, N(shard_t), 3), 0);
    if (vf__safetensors_read_index_ex(a, dir, &st, &info, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(st.n_tensors, N(shard_t));
    assert_int_equal(info.n_shards, 3);
    assert_int_equal(info.n_mapped, N(shard_t));
    assert_u64(info.total_size, bytes);
    assert_u64(st.weight_bytes, bytes);
    assert_u64(st.params, 64 * 16 * 2 + 16 * 3 + 256 + 512 * 2 + 256);
    assert_string_equal(st.metadata_format, "pt");
    assert_true(st.header_len > 0 && st.header_len % 8 == 0);
    /* shard order, then file order */
    assert_string_equal(st.tensors[0].name, "model.embed_tokens.weight");
    assert_string_equal(st.tensors[N(shard_t) - 1].name, "lm_head.weight");
    assert_int_equal(find_tensor(&st, "model.layers.1.mlp.up_proj.weight")->layer, 1);

    /* the plain entry point agrees */
    struct vf_safetensors st2;
    if (vf__safetensors_read_index(a, dir, &st2, &err))
        fail_msg("%s", err.msg);
    assert_u64(st2.weight_bytes, bytes);
    vf_arena_close(a);
}

/* Index faults: a weight_map entry missing from its shard, in another shard, a tensor in two
 * shards, a shard outside the folder, a missing shard, no index. */
static void test_index_errors(void **state)
{
    struct vf_arena *a = vf_arena_open(0);
    struct vf_safetensors st;
    struct vf_error err = {0};
    const char *s1 = "model-00001-of-00003.safetensors", *s2 = "model-00002-of-00003.safetensors";
    const char *names[N(shard_t) + 1], *files[N(shard_t) + 1];
    char dir[512];
    (void)state;

    strcpy(dir, subdir("missing"));
    assert_int_equal(mkst_write_sharded(dir, shard_t, N(shard_t), 3), 0);
    for (size_t i = 0; i < N(shard_t); i++) {
        names[i] = shard_t[i].name;
        files[i] = i < 4 ? s1 : i < 7 ? s2 : "model-00003-of-00003.safetensors";
    }
    names[N(shard_t)] = "model.layers.9.mlp.up_proj.weight";
    files[N(shard_t)] = s2;
    assert_int_equal(mkst_write_index(dir, names, files, N(shard_t) + 1, UINT64_MAX), 0);
    assert_int_equal(vf__safetensors_read_index(a, dir, &st, &err), VF_EFORMAT);
    assert_non_null(strstr(err.msg, "weight_map puts tensor 'model.layers.9.mlp.up_proj.weight' "
                                    "in 'model-00002-of-00003.safetensors', which does not hold "
                                    "it"));
    assert_int_equal(st.n_tensors, 0);

    /* in another shard than the index says */
    files[0] = s2;
    assert_int_equal(mkst_write_index(dir, names, files, N(shard_t), UINT64_MAX), 0);
    assert_int_equal(vf__safetensors_read_index(a, dir, &st, &err), VF_EFORMAT);
    assert_non_null(strstr(err.msg, "tensor 'model.embed_tokens.weight' in "
                                    "'model-00002-of-00003.safetensors', which does not hold it "
                                    "(it is in 'model-00001-of-00003.safetensors')"));

    /* a tensor in two shards */
    strcpy(dir, subdir("dup"));
    assert_int_equal(mkst_write_sharded(dir, shard_t, 2, 2), 0);
    char p[600];
    snprintf(p, sizeof p, "%s/model-00002-of-00002.safetensors", dir);
    assert_int_equal(mkst_write(p, shard_t, 2, "pt"), 0);
    assert_int_equal(vf__safetensors_read_index(a, dir, &st, &err), VF_EFORMAT);
    assert_non_null(strstr(err.msg, "tensor 'model.embed_tokens.weight' is in both "
                                    "'model-00001-of-00002.safetensors' and "
                                    "'model-00002-of-00002.safetensors'"));

    /* a shard outside the folder */
    names[0] = "w";
    files[0] = "../model.safetensors";
    assert_int_equal(mkst_write_index(dir, names, files, 1, 10), 0);
    assert_int_equal(vf__safetensors_read_index(a, dir, &st, &err), VF_EFORMAT);
    assert_non_null(strstr(err.msg, "weight_map entry 'w' names '../model.safetensors', not a "
                                    "file of the folder"));

    /* a missing shard */
    files[0] = "model-00009-of-00009.safetensors";
    assert_int_equal(mkst_write_index(dir, names, files, 1, 10), 0);
    assert_int_equal(vf__safetensors_read_index(a, dir, &st, &err), VF_ENOENT);
    assert_non_null(strstr(err.msg, "model-00009-of-00009.safetensors"));

    /* no index; a bad total_size */
    assert_int_equal(vf__safetensors_read_index(a, tmpdir, &st, &err), VF_ENOENT);
    assert_non_null(strstr(err.msg, "model.safetensors.index.json"));
    snprintf(p, sizeof p, "%s/model.safetensors.index.json", dir);
    FILE *f = fopen(p, "w");
    fputs("{\"metadata\":{\"total_size\":-5},\"weight_map\":{}}", f);
    fclose(f);
    assert_int_equal(vf__safetensors_read_index(a, dir, &st, &err), VF_EFORMAT);
    assert_non_null(strstr(err.msg, "metadata.total_size is not a non-negative whole number"));
    vf_arena_close(a);
}

/* A raw image: len_prefix, header text, data_len zero bytes; returns the code. */
static enum vf_err raw(uint64_t len_prefix, const char *header, uint64_t data_len,
                       struct vf_error *err)
{
    size_t len;
    unsigned char *buf = mkst_build_raw(len_prefix, header, strlen(header), data_len, &len);
    struct vf_arena *a = vf_arena_open(0);
    struct vf_safetensors st;
    enum vf_err rc = read_mem(a, buf, len, &st, err);
    if (rc)
        assert_int_equal(st.n_tensors, 0);
    vf_arena_close(a);
    free(buf);
    return rc;
}

/* The header text itself as the length says. */
static enum vf_err hdr(const char *header, uint64_t data_len, struct vf_error *err)
{
    return raw(strlen(header), header, data_len, err);
}

static void expect(enum vf_err rc, enum vf_err want, const struct vf_error *err, const char *sub)
{
    if (rc != want || !strstr(err->msg, sub))
        fail_msg("got %s '%s', expected %s with '%s'", vf_err_name(rc), err->msg, vf_err_name(want),
                 sub);
}

static void test_malformed(void **state)
{
    struct vf_error e = {0};
    (void)state;

    /* too short for the length */
    {
        struct vf_arena *a = vf_arena_open(0);
        struct vf_safetensors st;
        expect(read_mem(a, "\x10\0\0", 3, &st, &e), VF_EFORMAT, &e,
               "'x.safetensors': 3 bytes is too short for the 8-byte header length at offset 0");
        vf_arena_close(a);
    }
    expect(raw(100000001, "{}", 0, &e), VF_ELIMIT, &e,
           "header length 100000001 at offset 0 exceeds the format's limit of 100000000 bytes");
    expect(raw(5000, "{}      ", 92, &e), VF_EFORMAT, &e,
           "header length 5000 at offset 0 runs past the end of the 108-byte file");
    /* not JSON: jansson's message and the file byte (8 + its position) */
    expect(hdr("{\"a\": [1, 2,, 3]}", 0, &e), VF_EFORMAT, &e,
           "header is not JSON: unexpected token near ',' at byte 20");
    expect(hdr("[1, 2]  ", 0, &e), VF_EFORMAT, &e, "header at byte 8 is not a JSON object");
    expect(hdr("{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
               "\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,16]}}",
               16, &e),
           VF_EFORMAT, &e, "duplicate object key");
    /* data_offsets */
    expect(hdr("{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 4, &e),
           VF_EFORMAT, &e,
           "tensor 'w': data_offsets [0, 8] end past the data section (4 bytes from byte 62 of "
           "a 66-byte file)");
    expect(hdr("{\"w\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,12]}}", 12, &e),
           VF_EFORMAT, &e,
           "tensor 'w': data_offsets [0, 12] hold 12 bytes, shape [2, 3] of F32 "
           "needs 24");
    expect(hdr("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
               "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}",
               12, &e),
           VF_EFORMAT, &e, "tensor 'b': data_offsets [4, 12] overlap tensor 'a' [0, 8]");
    expect(hdr("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
               "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[12,20]}}",
               20, &e),
           VF_EFORMAT, &e,
           "tensor 'b': data_offsets [12, 20] leave bytes 8..12 of the data section unused");
    expect(hdr("{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,0]}}", 8, &e),
           VF_EFORMAT, &e, "tensor 'w': data_offsets [8, 0] end before they begin");
    expect(hdr("{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0]}}", 8, &e), VF_EFORMAT,
           &e, "tensor 'w': data_offsets is not two non-negative integers");
    expect(hdr("{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 9, &e),
           VF_EFORMAT, &e, "the tensors end at byte 70, the file at byte 71 (trailing bytes)");
    /* shapes */
    expect(hdr("{\"w\":{\"dtype\":\"U8\",\"shape\":[4294967296,4294967296,2],"
               "\"data_offsets\":[0,0]}}",
               0, &e),
           VF_ERANGE, &e,
           "tensor 'w': shape [4294967296, 4294967296, 2] has more elements than 64 bits hold");
    expect(hdr("{\"w\":{\"dtype\":\"F64\",\"shape\":[2305843009213693952],"
               "\"data_offsets\":[0,0]}}",
               0, &e),
           VF_ERANGE, &e, "tensor 'w': shape [2305843009213693952] of F64 is more bytes");
    expect(hdr("{\"w\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1,1,1,1,1],\"data_offsets\":[0,4]}}",
               4, &e),
           VF_ELIMIT, &e, "tensor 'w': 9 dimensions exceed the limit of 8");
    expect(hdr("{\"w\":{\"dtype\":\"F32\",\"shape\":[-2],\"data_offsets\":[0,4]}}", 4, &e),
           VF_EFORMAT, &e, "tensor 'w': shape[0] is not a non-negative integer");
    expect(hdr("{\"w\":{\"dtype\":\"F4\",\"shape\":[3],\"data_offsets\":[0,1]}}", 1, &e),
           VF_EFORMAT, &e, "tensor 'w': 3 elements of F4 are not a whole number of bytes");
    /* dtypes, entries, metadata */
    expect(hdr("{\"w\":{\"dtype\":\"Q4\",\"shape\":[2],\"data_offsets\":[0,1]}}", 1, &e),
           VF_EUNSUPPORTED, &e, "tensor 'w': unknown dtype 'Q4'");
    expect(hdr("{\"w\":{\"shape\":[2],\"data_offsets\":[0,1]}}", 1, &e), VF_EFORMAT, &e,
           "tensor 'w': dtype is missing or not a string");
    expect(hdr("{\"w\":[1]}", 0, &e), VF_EFORMAT, &e, "tensor 'w': entry is not an object");
    expect(hdr("{\"__metadata__\":{\"format\":1}}", 0, &e), VF_EFORMAT, &e,
           "__metadata__ value 'format' is not a string");
    /* a header with only metadata, and an empty one, are valid */
    assert_int_equal(hdr("{\"__metadata__\":{\"format\":\"pt\"}}", 0, &e), VF_OK);
    assert_int_equal(hdr("{}      ", 0, &e), VF_OK);
}

/* An allocator that records the largest single request. */
static size_t biggest;
static void *count_malloc(size_t n, void *ud)
{
    (void)ud;
    if (n > biggest)
        biggest = n;
    return malloc(n);
}
static void *count_realloc(void *p, size_t n, void *ud)
{
    (void)ud;
    if (n > biggest)
        biggest = n;
    return realloc(p, n);
}
static void count_free(void *p, void *ud)
{
    (void)ud;
    free(p);
}

/* A memory source that does not tell its size (as a streamed download). */
static enum vf_err unsized_read(void *ud, uint64_t off, void *buf, size_t n, size_t *got,
                                struct vf_error *err)
{
    struct vf_reader *inner = ud;
    return inner->read(inner->ud, off, buf, n, got, err);
}

/* Claimed sizes cost nothing: a small arena and a counting allocator see no allocation
 * proportional to a claimed header length, shape or offset. */
static void test_bounded_alloc(void **state)
{
    struct vf_allocator hook = {count_malloc, count_realloc, count_free, NULL};
    struct vf_error e = {0};
    struct vf_safetensors st;
    size_t len;
    (void)state;

    vf_set_allocator(&hook);
    struct vf_arena *a = vf_arena_open(16 << 10);
    unsigned char *buf = mkst_build_raw(90000000, "{}", 2, 190, &len);
    biggest = 0;
    expect(read_mem(a, buf, len, &st, &e), VF_EFORMAT, &e, "runs past the end");
    assert_true(biggest < 4096);

    /* unknown size: the buffer grows only as bytes arrive */
    struct vf_reader inner, r;
    vf_reader_mem(&inner, buf, len, "stream");
    r = inner;
    r.read = unsized_read;
    r.ud = &inner;
    r.size = VF_UNKNOWN;
    biggest = 0;
    expect(vf_safetensors_read(a, &r, &st, &e), VF_EFORMAT, &e,
           "header ends at byte 200, its length says 90000008 (truncated file?)");
    assert_true(biggest <= ((size_t)1 << 20) + 1);
    free(buf);

    /* a shape of 2^40 elements in a tiny file */
    const char *h = "{\"w\":{\"dtype\":\"BF16\",\"shape\":[1099511627776],"
                    "\"data_offsets\":[0,2199023255552]}}";
    buf = mkst_build_raw(strlen(h), h, strlen(h), 0, &len);
    biggest = 0;
    expect(read_mem(a, buf, len, &st, &e), VF_EFORMAT, &e, "end past the data section");
    assert_true(biggest < 70000);
    free(buf);
    vf_arena_close(a);
    vf_set_allocator(NULL);
}

/* ------------------------------------------------------------ merge into a model */

static struct vf_catalog *catalog(void)
{
    static struct vf_catalog *c;
    struct vf_error err = {0};
    if (!c && vf_catalog_open(&c, NULL, &err))
        fail_msg("%s", err.msg);
    return c;
}

static struct vf_arena *load(const char *alias, struct vf_model *m)
{
    struct vf_arena *a = vf_arena_open(0);
    struct vf_error err = {0};
    const struct vf_catalog_model *cm = vf_catalog_model(catalog(), alias);
    size_t len;
    assert_non_null(cm);
    const char *text = vf_catalog_file(a, catalog(), cm->file, &len, &err);
    if (!text || vf_model_from_config(a, text, len, cm->file, m, &err))
        fail_msg("%s: %s", cm->file, err.msg);
    return a;
}

/* Synthetic tensors in one arena-free table. */
struct tset {
    struct vf_tensor_info t[400];
    char names[400][96];
    size_t n;
};

static void add_t(struct tset *s, const char *name, unsigned bits, uint64_t d0, uint64_t d1)
{
    assert_true(s->n < N(s->t));
    struct vf_tensor_info *t = &s->t[s->n];
    snprintf(s->names[s->n], sizeof s->names[0], "%s", name);
    memset(t, 0, sizeof *t);
    t->name = s->names[s->n];
    t->n_dims = d1 ? 2 : 1;
    t->dims[0] = d0;
    t->dims[1] = d1;
    t->n_elems = d0 * (d1 ? d1 : 1);
    t->bytes = t->n_elems * bits / 8;
    t->st_dtype = bits == 16 ? "BF16" : "U8";
    t->ggml_type = -1;
    vf__st_classify(name, &t->layer, &t->cls);
    s->n++;
}

/* Llama 3.1 8B's 291 tensors under their HF names, BF16. */
static void llama8b(struct tset *s)
{
    char n[96];
    s->n = 0;
    add_t(s, "model.embed_tokens.weight", 16, 128256, 4096);
    for (int l = 0; l < 32; l++) {
        static const struct {
            const char *name;
            uint64_t d0, d1;
        } per[] = {
            {"input_layernorm.weight", 4096, 0},     {"self_attn.q_proj.weight", 4096, 4096},
            {"self_attn.k_proj.weight", 1024, 4096}, {"self_attn.v_proj.weight", 1024, 4096},
            {"self_attn.o_proj.weight", 4096, 4096}, {"post_attention_layernorm.weight", 4096, 0},
            {"mlp.gate_proj.weight", 14336, 4096},   {"mlp.up_proj.weight", 14336, 4096},
            {"mlp.down_proj.weight", 4096, 14336},
        };
        for (size_t k = 0; k < N(per); k++) {
            snprintf(n, sizeof n, "model.layers.%d.%s", l, per[k].name);
            add_t(s, n, 16, per[k].d0, per[k].d1);
        }
    }
    add_t(s, "model.norm.weight", 16, 4096, 0);
    add_t(s, "lm_head.weight", 16, 128256, 4096);
}

/* F-W-14: Llama 3.1 8B from config.json + exact BF16 tensors = 2 x 8,030,261,248 bytes. */
static void test_apply_llama(void **state)
{
    static struct tset s;
    struct vf_model m;
    struct vf_error err = {0};
    struct vf_quant native = {0}; /* VF_QK_NATIVE: the groups' stored bytes */
    struct vf_arena *a = load("llama-3.1-8b", &m);
    (void)state;

    llama8b(&s);
    assert_int_equal(s.n, 291);
    if (vf__model_apply_tensors(&m, s.t, s.n, &err))
        fail_msg("%s", err.msg);
    uint64_t stored = 0, params = 0;
    for (size_t i = 0; i < m.n_groups; i++) {
        if (m.groups[i].n_params && !m.groups[i].stored_bytes)
            fail_msg("group %s layer %d got no tensor", vf_tclass_name(m.groups[i].cls),
                     m.groups[i].layer);
        assert_u64(m.groups[i].stored_bytes, 2 * m.groups[i].n_params);
        stored += m.groups[i].stored_bytes;
        params += m.groups[i].n_params;
    }
    assert_u64(params, 8030261248ull);
    assert_u64(stored, 16060522496ull);
    assert_u64(m.exact_weight_bytes, 16060522496ull);
    assert_u64(vf_model_weight_bytes(&m, &native), 16060522496ull);
    assert_int_equal(m.provenance, VF_PROV_EXACT);
    assert_ptr_equal(m.tensors, s.t);
    assert_int_equal(m.n_tensors, 291);
    vf_arena_close(a);
}

/* Tensors with no group: a vision tower is loaded (counted), an MTP layer, a tied lm_head
 * and rotary buffers are not. */
static void test_apply_extras(void **state)
{
    static struct tset s;
    struct vf_model m;
    struct vf_error err = {0};
    struct vf_arena *a = load("llama-3.1-8b", &m);
    (void)state;

    llama8b(&s);
    add_t(&s, "vision_tower.vision_model.encoder.layers.0.self_attn.q_proj.weight", 16, 1024, 1024);
    add_t(&s, "model.layers.32.self_attn.q_proj.weight", 16, 4096, 4096); /* MTP/next-n */
    add_t(&s, "mtp.layers.0.mlp.up_proj.weight", 16, 100, 100);
    add_t(&s, "model.rotary_emb.inv_freq", 16, 64, 0);
    if (vf__model_apply_tensors(&m, s.t, s.n, &err))
        fail_msg("%s", err.msg);
    assert_u64(m.exact_weight_bytes, 16060522496ull + 2 * 1024 * 1024);

    /* tied embeddings: lm_head in the file is not loaded */
    m.tied_embeddings = true;
    if (vf__model_apply_tensors(&m, s.t, s.n, &err))
        fail_msg("%s", err.msg);
    assert_u64(m.exact_weight_bytes, 16060522496ull + 2 * 1024 * 1024 - 2ull * 128256 * 4096);
    vf_arena_close(a);

    struct vf_model empty = {0};
    assert_int_equal(vf__model_apply_tensors(&empty, s.t, s.n, &err), VF_EINVAL);
}

/* A fused gate_up_proj (gpt-oss MXFP4 experts) is spread over the gate and up groups. */
static void test_apply_fused(void **state)
{
    static struct tset s;
    struct vf_model m;
    struct vf_error err = {0};
    struct vf_arena *a = load("gpt-oss-20b", &m);
    (void)state;

    s.n = 0;
    add_t(&s, "model.layers.0.mlp.experts.gate_up_proj_blocks", 8, 32ull * 5760, 1440);
    if (vf__model_apply_tensors(&m, s.t, s.n, &err))
        fail_msg("%s", err.msg);
    uint64_t gate = 0, up = 0;
    for (size_t i = 0; i < m.n_groups; i++) {
        if (m.groups[i].layer == 0 && m.groups[i].cls == VF_T_FFN_GATE_EXP)
            gate = m.groups[i].stored_bytes;
        if (m.groups[i].layer == 0 && m.groups[i].cls == VF_T_FFN_UP_EXP)
            up = m.groups[i].stored_bytes;
    }
    assert_u64(gate, 32ull * 5760 * 1440 / 2);
    assert_u64(up, 32ull * 5760 * 1440 / 2);
    assert_u64(m.exact_weight_bytes, 32ull * 5760 * 1440);
    vf_arena_close(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dtype_sizes),     cmocka_unit_test(test_packed),
        cmocka_unit_test(test_packed_siblings), cmocka_unit_test(test_classify),
        cmocka_unit_test(test_sharded),         cmocka_unit_test(test_index_errors),
        cmocka_unit_test(test_malformed),       cmocka_unit_test(test_bounded_alloc),
        cmocka_unit_test(test_apply_llama),     cmocka_unit_test(test_apply_extras),
        cmocka_unit_test(test_apply_fused),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
