/* SPDX-License-Identifier: Apache-2.0 */
/*
 * t_model.c - unit tests of the config.json reader, the parameter count (F-PAR-01/02),
 * the tensor groups and the KV cache (F-KV-01..05), on the catalog files in data/models/
 * and against the numbers of tests/fixtures/reference/models-llm.json (a copy of the
 * project's shared/reference/; a missing copy fails).
 */
#include "th.h"

#include "internal.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

/* The embedded catalog, opened once. */
static struct vf_catalog *catalog(void)
{
    static struct vf_catalog *c;
    struct vf_error err = {0};
    if (!c && vf_catalog_open(&c, NULL, &err))
        fail_msg("%s", err.msg);
    return c;
}

/* Reads the catalog's config file of model `alias` with the config reader, as a user's
 * config.json would be read (arena *a stays open for the caller). */
static struct vf_arena *load(const char *alias, struct vf_model *m)
{
    struct vf_arena *a = vf_arena_open(0);
    struct vf_error err = {0};
    const struct vf_catalog_model *cm = vf_catalog_model(catalog(), alias);
    size_t len;

    assert_non_null(a);
    if (!cm)
        fail_msg("no catalog model %s", alias);
    const char *text = vf_catalog_file(a, catalog(), cm->file, &len, &err);
    if (!text || vf_model_from_config(a, text, len, cm->file, m, &err)) {
        fprintf(stderr, "%s: %s\n", cm->file, err.msg);
        fail();
    }
    return a;
}

/* Parses an inline config and returns its error code, message in *err. */
static enum vf_err parse_text(const char *text, struct vf_error *err)
{
    struct vf_arena *a = vf_arena_open(0);
    struct vf_model m;
    enum vf_err rc = vf_model_from_config(a, text, strlen(text), "x/config.json", &m, err);
    vf_arena_close(a);
    return rc;
}

/* F-PAR-01: exact HF safetensors totals. */
static void test_exact_counts(void **state)
{
    static const struct {
        const char *alias;
        uint64_t params;
    } cases[] = {
        /* 32 x 218,112,000 per layer + 2 x 128256 x 4096 embed/head + 4096 final norm */
        {"llama-3.1-8b", 8030261248ull},
        {"llama-3.2-1b", 1235814400ull},                  /* tied embeddings, head_dim 64 */
        {"gemma-3-1b", 999885952ull},                     /* 4 norms/layer + q/k norms, tied */
        {"deepseek-r1-distill-qwen-32b", 32763876352ull}, /* qwen2: q/k/v biases */
    };
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct vf_model m;
        struct vf_arena *a = load(cases[i].alias, &m);
        assert_u64(m.params, cases[i].params);
        assert_u64(m.params_active, cases[i].params);
        assert_int_equal(m.provenance, VF_PROV_CONFIG);
        vf_arena_close(a);
    }
}

/* F-KV-01: 2 (K,V) x layers x kv_heads x head_dim x 2 bytes. */
static void test_kv_guide(void **state)
{
    struct vf_model m;
    struct vf_arena *a;
    (void)state;
    a = load("llama-3.1-8b", &m); /* 2 x 32 x 8 x 128 x 2 = 131072 */
    assert_u64(vf_model_kv_bytes_per_token(&m, VF_DT_DEFAULT), 131072);
    /* q8_0: 128 elements = 4 blocks of 34 bytes; 2 x 32 x 8 x 136 = 69632 */
    assert_u64(vf_model_kv_bytes_per_token(&m, VF_DT_Q8_0), 69632);
    /* q4_0: 4 blocks of 18 bytes; 2 x 32 x 8 x 72 = 36864 */
    assert_u64(vf_model_kv_bytes_per_token(&m, VF_DT_Q4_0), 36864);
    assert_u64(vf_model_kv_bytes_per_token(&m, VF_DT_FP8), 65536);
    vf_arena_close(a);
    a = load("qwen3-32b", &m); /* 2 x 64 x 8 x 128 x 2 = 262144 */
    assert_u64(vf_model_kv_bytes_per_token(&m, VF_DT_BF16), 262144);
    vf_arena_close(a);
    a = load("llama-3.1-70b", &m); /* 2 x 80 x 8 x 128 x 2 = 327680 */
    assert_u64(vf_model_kv_bytes_per_token(&m, VF_DT_DEFAULT), 327680);
    vf_arena_close(a);
}

/* F-KV-02: MLA caches 61 x (512 + 64) x 2 = 70272 bytes per token. */
static void test_kv_mla(void **state)
{
    struct vf_model m;
    struct vf_arena *a = load("deepseek-v3", &m);
    (void)state;
    assert_int_equal(m.attn, VF_ATTN_MLA);
    assert_u64(vf_model_kv_bytes_per_token(&m, VF_DT_DEFAULT), 70272);
    assert_int_equal(m.native.kind, VF_QK_FP8_BLOCK);
    assert_int_equal(m.native.dtype, VF_DT_FP8);
    vf_arena_close(a);
}

/* The alias of the catalog model with HF id `id`; NULL when none. */
static const char *alias_of(const char *id, char *buf, size_t cap)
{
    const struct vf_catalog_model *cm = vf_catalog_model(catalog(), id);
    if (!cm || !cm->alias)
        return NULL;
    snprintf(buf, cap, "%s", cm->alias);
    return buf;
}

/* models.tsv's params_ref (the published exact count) agrees with the count computed from
 * each config (F-PAR-01). */
static void test_params_ref(void **state)
{
    (void)state;
    struct vf_catalog *c = catalog();
    size_t checked = 0;
    for (size_t i = 0; i < c->n_models; i++) {
        if (c->models[i].params_ref == VF_UNKNOWN)
            continue;
        struct vf_model m;
        struct vf_arena *a = load(c->models[i].alias, &m);
        if (m.params != c->models[i].params_ref)
            fail_msg("%s: %llu params computed, %llu published", c->models[i].id,
                     (unsigned long long)m.params, (unsigned long long)c->models[i].params_ref);
        checked++;
        vf_arena_close(a);
    }
    /* the five rows of data/models.tsv with a params_ref: Llama-3.1-8B, Llama-3.2-1B,
     * gemma-3-1b, R1-Distill-Qwen-32B and Llama-2-7b (the others say '?') */
    assert_int_equal(checked, 5);
}

/* F-PAR-01, F-PAR-02, F-KV-01/02 against every model of the reference list. */
static void test_reference(void **state)
{
    json_error_t je;
    json_t *ref = json_load_file(TH_REFERENCE "models-llm.json", 0, &je);
    size_t i, checked = 0, bad = 0;
    json_t *r;
    (void)state;
    if (!ref)
        fail_msg("fixture %s: %s", TH_REFERENCE "models-llm.json", je.text);
    json_array_foreach(ref, i, r)
    {
        const char *id = json_string_value(json_object_get(r, "id"));
        json_t *pt = json_object_get(r, "params_total_computed");
        json_t *pa = json_object_get(r, "params_active_computed");
        json_t *kv = json_object_get(json_object_get(r, "kv_cache_derived"),
                                     "bytes_per_token_16bit_all_layers");
        char buf[128];
        const char *alias = alias_of(id, buf, sizeof(buf));
        struct vf_model m;
        if (!alias) {
            printf("# no catalog file for %s\n", id);
            bad++;
            continue;
        }
        struct vf_arena *a = load(alias, &m);
        uint64_t kvb = vf_model_kv_bytes_per_token(&m, VF_DT_DEFAULT);
        if (json_is_integer(pt) && (uint64_t)json_integer_value(pt) != m.params) {
            printf("# %s: params %llu, reference %lld\n", id, (unsigned long long)m.params,
                   (long long)json_integer_value(pt));
            bad++;
        }
        if (json_is_integer(pa) && (uint64_t)json_integer_value(pa) != m.params_active) {
            printf("# %s: active %llu, reference %lld\n", id, (unsigned long long)m.params_active,
                   (long long)json_integer_value(pa));
            bad++;
        }
        if (json_is_integer(kv) && (uint64_t)json_integer_value(kv) != kvb) {
            printf("# %s: kv/token %llu, reference %lld\n", id, (unsigned long long)kvb,
                   (long long)json_integer_value(kv));
            bad++;
        }
        /* the groups add up to the total */
        uint64_t sum = 0;
        for (size_t g = 0; g < m.n_groups; g++)
            sum += m.groups[g].n_params;
        assert_u64(sum, m.params);
        checked++;
        vf_arena_close(a);
    }
    json_decref(ref);
    assert_int_equal(checked, 37);
    assert_int_equal(bad, 0);
}

/* Tensor groups: classes, layers, row lengths. */
static void test_groups(void **state)
{
    struct vf_model m;
    struct vf_arena *a = load("gpt-oss-20b", &m);
    uint64_t exp = 0, sum = 0;
    (void)state;
    assert_int_equal(m.groups[0].cls, VF_T_TOKEN_EMBD);
    assert_int_equal(m.groups[0].layer, -1);
    assert_int_equal(m.groups[m.n_groups - 1].cls, VF_T_OUTPUT);
    for (size_t g = 0; g < m.n_groups; g++) {
        const struct vf_tgroup *t = &m.groups[g];
        sum += t->n_params;
        if (t->cls == VF_T_FFN_DOWN_EXP) {
            assert_int_equal(t->n_tensors, 32);
            assert_u64(t->row_elems, 2880); /* moe intermediate: the input of down */
            exp += t->n_params;
        }
    }
    assert_u64(sum, m.params);
    assert_u64(exp, 24ull * 32 * 2880 * 2880);
    assert_int_equal(m.native.dtype, VF_DT_MXFP4);
    assert_int_equal(m.native.classes,
                     1u << VF_T_FFN_GATE_EXP | 1u << VF_T_FFN_UP_EXP | 1u << VF_T_FFN_DOWN_EXP);
    assert_string_equal(vf_tclass_name(VF_T_FFN_DOWN_EXP), "ffn_down_exps");
    vf_arena_close(a);
}

/* F-LAY-01: layer kinds of sliding and hybrid models. */
static void test_layer_kinds(void **state)
{
    struct vf_model m;
    struct vf_arena *a = load("gemma-3-1b", &m);
    (void)state;
    for (uint32_t i = 0; i < m.n_layers; i++)
        assert_int_equal(m.layer_kind[i], (i == 5 || i == 11 || i == 17 || i == 23)
                                              ? VF_LAYER_ATTN_FULL
                                              : VF_LAYER_ATTN_SLIDING);
    assert_int_equal(m.sliding_window, 512);
    assert_null(m.layer_kv_heads);
    /*
     * F-KV-03 at 32768 tokens, capped: per layer per token 2 x 1 x 256 x 2 = 1024 bytes;
     * 4 global layers x 32768 + 22 sliding layers x 512 = 131072 + 11264 = 142336 token
     * slots -> 142336 x 1024 = 145752064 bytes. Uncapped: 26 x 32768 x 1024 = 872415232.
     */
    assert_u64(vf_model_kv_bytes(&m, VF_DT_DEFAULT, 32768, true), 145752064ull);
    assert_u64(vf_model_kv_bytes(&m, VF_DT_DEFAULT, 32768, false), 872415232ull);
    assert_u64(vf_model_kv_bytes(&m, VF_DT_DEFAULT, 100, true), 26ull * 100 * 1024);
    vf_arena_close(a);

    a = load("gpt-oss-20b", &m); /* layer_types: sliding on even layers, window 128 */
    for (uint32_t i = 0; i < m.n_layers; i++)
        assert_int_equal(m.layer_kind[i], i % 2 ? VF_LAYER_ATTN_FULL : VF_LAYER_ATTN_SLIDING);
    assert_int_equal(m.sliding_window, 128);
    vf_arena_close(a);

    a = load("nemotron-h-8b", &m); /* M recurrent, * attention at 7 18 29 40, - MLP */
    uint32_t nm = 0, nmlp = 0;
    for (uint32_t i = 0; i < m.n_layers; i++) {
        nm += m.layer_kind[i] == VF_LAYER_RECURRENT;
        nmlp += m.layer_kind[i] == VF_LAYER_MLP_ONLY;
    }
    assert_int_equal(nm, 24);
    assert_int_equal(nmlp, 24);
    assert_int_equal(m.layer_kind[7], VF_LAYER_ATTN_FULL);
    assert_int_equal(m.layer_kind[40], VF_LAYER_ATTN_FULL);
    assert_u64(m.params, 8100852736ull);
    /* F-KV-01: 4 x 2 x 8 x 128 x 2 = 16384 */
    assert_u64(vf_model_kv_bytes_per_token(&m, VF_DT_DEFAULT), 16384);
    /* F-KV-05: 24 x (1048576 ssm + 30720 conv) x 2 bytes = 51806208 */
    assert_u64(m.recurrent_state_bytes, 51806208ull);
    vf_arena_close(a);

    a = load("qwen3-next-80b-a3b", &m); /* full attention every 4th layer */
    for (uint32_t i = 0; i < m.n_layers; i++)
        assert_int_equal(m.layer_kind[i], (i + 1) % 4 ? VF_LAYER_RECURRENT : VF_LAYER_ATTN_FULL);
    /* F-KV-01: 12 x 2 x 2 x 256 x 2 = 24576 */
    assert_u64(vf_model_kv_bytes_per_token(&m, VF_DT_DEFAULT), 24576);
    /* F-PAR-01 (no reference value; our own derivation, see FORMULAS.md): non-embedding
     * 79674391296 - 2 x 151936 x 2048 = 79.05e9, the model card's "79B non-embedding" */
    assert_u64(m.params, 79674391296ull);
    /* F-KV-05: 36 x (524288 + 24576) x 2 = 39518208 */
    assert_u64(m.recurrent_state_bytes, 39518208ull);
    vf_arena_close(a);

    a = load("qwen2.5-7b", &m); /* sliding_window ignored: use_sliding_window false */
    assert_int_equal(m.sliding_window, 0);
    for (uint32_t i = 0; i < m.n_layers; i++)
        assert_int_equal(m.layer_kind[i], VF_LAYER_ATTN_FULL);
    vf_arena_close(a);
}

#define BASE "\"hidden_size\": 4096, \"intermediate_size\": 14336, \"vocab_size\": 128256, "

/* Parses an inline config into *m in arena *a (the caller closes it). */
static struct vf_arena *parse_model(const char *text, struct vf_model *m)
{
    struct vf_arena *a = vf_arena_open(0);
    struct vf_error err = {0};
    if (vf_model_from_config(a, text, strlen(text), "x/config.json", m, &err))
        fail_msg("%s", err.msg);
    return a;
}

/* quantization_config of llm-compressor checkpoints (compressed-tensors) and a multimodal
 * config whose decoder sits in text_config. */
static void test_quant_configs(void **state)
{
    (void)state;
    struct vf_model m;
#define LLAMA2L                                                                          \
    "\"model_type\": \"llama\", \"num_hidden_layers\": 2, \"num_attention_heads\": 32, " \
    "\"num_key_value_heads\": 8, \"max_position_embeddings\": 8192, "
    struct vf_arena *a = parse_model(
        "{" BASE LLAMA2L "\"quantization_config\": {\"quant_method\": \"compressed-tensors\", "
        "\"config_groups\": {\"group_0\": {\"targets\": [\"Linear\"], \"weights\": "
        "{\"num_bits\": 8, \"type\": \"float\", \"strategy\": \"channel\"}}}}}",
        &m);
    assert_int_equal(m.native.dtype, VF_DT_FP8);
    assert_string_equal(m.native.name, "fp8");
    vf_arena_close(a);
    a = parse_model("{" BASE LLAMA2L "\"quantization_config\": {\"quant_method\": "
                    "\"compressed-tensors\", \"config_groups\": {\"g\": {\"weights\": "
                    "{\"num_bits\": 4, \"type\": \"int\", \"group_size\": 32}}}}}",
                    &m);
    assert_int_equal(m.native.kind, VF_QK_AWQ);
    assert_int_equal(m.native.group, 32);
    vf_arena_close(a);
    struct vf_error err;
    assert_int_equal(parse_text("{" BASE LLAMA2L "\"quantization_config\": {\"quant_method\": "
                                "\"compressed-tensors\", \"config_groups\": {}}}",
                                &err),
                     VF_EFORMAT);
    assert_non_null(strstr(err.msg, "no config_groups.*.weights"));
    /* text_config: the decoder of a vision-language model; the vision tower's weights come
     * from the safetensors headers when they are read (F-W-11) */
    a = parse_model("{\"model_type\": \"llava\", \"vision_config\": {\"hidden_size\": 1024}, "
                    "\"text_config\": {" BASE LLAMA2L "\"torch_dtype\": \"bfloat16\"}}",
                    &m);
    assert_u64(m.n_layers, 2);
    assert_u64(m.n_kv_heads, 8);
    /* F-KV-01: 2 x 2 layers x 8 x 128 x 2 B */
    assert_u64(vf_model_kv_bytes_per_token(&m, VF_DT_DEFAULT), 8192);
    vf_arena_close(a);
#undef LLAMA2L
}

static void test_malformed(void **state)
{
    struct vf_error err;
    (void)state;
    assert_int_equal(parse_text("{\"hidden_size\": 4096,\n  oops}", &err), VF_EFORMAT);
    assert_non_null(strstr(err.msg, "x/config.json"));
    assert_non_null(strstr(err.msg, "line 2 column"));

    assert_int_equal(parse_text("{" BASE "\"num_attention_heads\": 32}", &err), VF_EFORMAT);
    assert_non_null(strstr(err.msg, "missing num_hidden_layers"));

    assert_int_equal(
        parse_text("{" BASE "\"num_hidden_layers\": 2, \"num_attention_heads\": 0}", &err),
        VF_EFORMAT);
    assert_non_null(strstr(err.msg, "num_attention_heads must be at least 1"));

    assert_int_equal(parse_text("{" BASE "\"num_hidden_layers\": 2, \"num_attention_heads\": 32,"
                                " \"num_key_value_heads\": 0}",
                                &err),
                     VF_EFORMAT);
    assert_string_equal(err.msg, "config: 'x/config.json': num_key_value_heads 0 must divide "
                                 "num_attention_heads 32");
    assert_int_equal(parse_text("{" BASE "\"num_hidden_layers\": 2, \"num_attention_heads\": 32,"
                                " \"num_key_value_heads\": 5}",
                                &err),
                     VF_EFORMAT);
    assert_non_null(strstr(err.msg, "num_key_value_heads 5 must divide"));

    assert_int_equal(parse_text("{\"hidden_size\": 1e12, \"num_hidden_layers\": 2}", &err),
                     VF_ELIMIT);
    assert_non_null(strstr(err.msg, "hidden_size"));
    assert_int_equal(parse_text("{\"hidden_size\": 4096, \"num_hidden_layers\": 100000}", &err),
                     VF_ELIMIT);
    assert_non_null(strstr(err.msg, "num_hidden_layers 100000 exceeds"));
    assert_int_equal(parse_text("{\"hidden_size\": -3, \"num_hidden_layers\": 2}", &err),
                     VF_EFORMAT);
    assert_int_equal(parse_text("{\"hidden_size\": \"big\", \"num_hidden_layers\": 2}", &err),
                     VF_EFORMAT);
    assert_non_null(strstr(err.msg, "hidden_size is not a number"));
    assert_int_equal(parse_text("[1, 2]", &err), VF_EFORMAT);
    assert_int_equal(parse_text("{" BASE "\"num_hidden_layers\": 2, \"num_attention_heads\": 32,"
                                " \"hybrid_override_pattern\": \"M\"}",
                                &err),
                     VF_EFORMAT);
    assert_non_null(strstr(err.msg, "hybrid_override_pattern"));
    assert_int_equal(parse_text("{" BASE "\"num_hidden_layers\": 2, \"num_attention_heads\": 32,"
                                " \"quantization_config\": {\"quant_method\": \"hqq\"}}",
                                &err),
                     VF_EUNSUPPORTED);
}

/* Unknown model types with standard keys read as llama-like decoders; text_config nests. */
static void test_lenient(void **state)
{
    struct vf_arena *a = vf_arena_open(0);
    struct vf_model m;
    struct vf_error err;
    static const char nested[] =
        "{\"model_type\": \"wrapper\", \"text_config\": {\"model_type\": \"llama\", " BASE
        "\"num_hidden_layers\": 32, \"num_attention_heads\": 32, \"num_key_value_heads\": 8,"
        " \"tie_word_embeddings\": false}, \"torch_dtype\": \"float16\"}";
    (void)state;
    assert_int_equal(vf_model_from_config(a, nested, strlen(nested), "n.json", &m, &err), VF_OK);
    assert_u64(m.params, 8030261248ull); /* the Llama-3.1-8B dims, F-PAR-01 */
    assert_int_equal(m.native_dtype, VF_DT_F16);
    assert_string_equal(m.id, "n.json");
    assert_string_equal(vf_attn_kind_name(m.attn), "GQA");
    assert_string_equal(vf_provenance_name(m.provenance), "config");
    vf_arena_close(a);
}

/* Issue 21's catalog families (configs cited in data/models.tsv), F-KV-01/02/05 at 16 bits:
 * GLM-4.7: 92 layers x 2 (K, V) x 8 heads x 128 x 2 B = 376,832 B/token.
 * GLM-4.7-Flash (MLA): 47 layers x (kv_lora_rank 512 + rope 64) x 2 B = 54,144 B/token.
 * Qwen3.5-397B-A17B: 15 full layers x 2 x 2 heads x 256 x 2 B = 30,720 B/token; its 45 Gated
 * DeltaNet layers: (64 x 128 x 128 + (2 x 16 x 128 + 64 x 128) x 3) x 45 x 2 B = 97,689,600 B
 * of state per sequence; the 60 layers as layer_types says (every 4th full).
 * Command R v01 (no GQA): 40 layers x 2 x 64 heads x 128 x 2 B = 1,310,720 B/token. */
static void test_issue21_families(void **state)
{
    (void)state;
    struct vf_model m;
    struct vf_arena *a = load("glm-4.7", &m);
    assert_u64(vf_model_kv_bytes_per_token(&m, VF_DT_DEFAULT), 376832);
    vf_arena_close(a);
    a = load("glm-4.7-flash", &m);
    assert_u64(vf_model_kv_bytes_per_token(&m, VF_DT_DEFAULT), 54144);
    vf_arena_close(a);
    a = load("qwen3.5-397b-a17b", &m);
    assert_u64(vf_model_kv_bytes_per_token(&m, VF_DT_DEFAULT), 30720);
    assert_u64(m.recurrent_state_bytes, 97689600);
    assert_int_equal(m.n_layers, 60);
    assert_int_equal(m.layer_kind[3], VF_LAYER_ATTN_FULL);
    assert_int_equal(m.layer_kind[4], VF_LAYER_RECURRENT);
    vf_arena_close(a);
    a = load("command-r-v01", &m);
    assert_u64(vf_model_kv_bytes_per_token(&m, VF_DT_DEFAULT), 1310720);
    vf_arena_close(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_counts),     cmocka_unit_test(test_kv_guide),
        cmocka_unit_test(test_kv_mla),           cmocka_unit_test(test_reference),
        cmocka_unit_test(test_groups),           cmocka_unit_test(test_layer_kinds),
        cmocka_unit_test(test_malformed),        cmocka_unit_test(test_lenient),
        cmocka_unit_test(test_params_ref),       cmocka_unit_test(test_quant_configs),
        cmocka_unit_test(test_issue21_families),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
