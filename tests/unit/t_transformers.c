/* SPDX-License-Identifier: Apache-2.0 */
/*
 * t_transformers.c - the transformers inference estimator (engine "transformers",
 * F-HF-01..12): Llama 3.1 8B generate() on one card (every component derived by hand), the
 * logits of the whole prompt vs logits_to_keep=1, eager attention's score matrix, the static
 * cache, the decode-phase peak, bitsandbytes weights, accelerate's device_map="auto" split of
 * Llama 3.1 70B over two H100s, the fixes and the flags' errors. Every expected number is
 * derived in a comment with its formula ID (docs/FORMULAS.md).
 */
#include "th.h"

#include <stdio.h>
#include <string.h>

#include "internal.h"

/* A workload for engine transformers with the flags given as "key", "value" pairs (value NULL
 * for a switch), terminated by a NULL key. */
static struct vf_workload wl(uint64_t ctx, uint64_t users, uint32_t gpus, uint64_t usable,
                             const char *const *kv)
{
    struct vf_workload w;
    memset(&w, 0, sizeof w);
    w.task = VF_TASK_INFER;
    w.engine = "transformers";
    w.ctx_tokens = ctx;
    w.users = users;
    w.gpus = gpus;
    w.usable_bytes = usable;
    for (size_t i = 0; kv && kv[2 * i]; i++) {
        w.opts.key[i] = kv[2 * i];
        w.opts.value[i] = kv[2 * i + 1];
        w.opts.n = i + 1;
    }
    return w;
}

static struct vf_estimate est(const struct vf_model *m, const struct vf_workload *w)
{
    struct vf_estimate e;
    struct vf_error err = {0};
    if (vf_estimate(th_arena, m, w, &e, &err))
        fail_msg("%s", err.msg);
    return e;
}

static const char *extra_text(const struct vf_estimate *e, const char *key)
{
    for (size_t i = 0; i < e->n_extras; i++)
        if (!strcmp(e->extras[i].key, key))
            return e->extras[i].text;
    fail_msg("no extra %s", key);
    return NULL;
}

static uint64_t extra_u64(const struct vf_estimate *e, const char *key)
{
    for (size_t i = 0; i < e->n_extras; i++)
        if (!strcmp(e->extras[i].key, key))
            return e->extras[i].u64;
    fail_msg("no extra %s", key);
    return 0;
}

static bool has_fix(const struct vf_estimate *e, const char *needle)
{
    for (size_t i = 0; i < e->n_fixes; i++)
        if (strstr(e->fixes[i], needle))
            return true;
    return false;
}

/*
 * Llama 3.1 8B (h 4096, I 14336, 32 heads, 8 KV heads, head_dim 128, vocab 128256, 32 layers,
 * 8,030,261,248 params, bf16), --ctx 4096 --users 4, no card:
 *   F-HF-02: prompt = 4096 - 256 = 3840, T = 4 x 3840 = 15,360 prefill tokens; the cache ends
 *     at 4095 tokens.
 *   F-HF-01: weights 8,030,261,248 x 2 = 16,060,522,496.
 *   F-HF-03: KV per token 32 x 8 x (128 + 128) x 2 = 131,072; prefill phase (dynamic cache):
 *     131,072 x 3840 x 4 = 2,013,265,920.
 *   F-HF-05: layer peak per token = max(MLP (2 x 4096 + 3 x 14336) x 2 = 102,400,
 *     attention (2 x 4096 + 4 x 4096 + 2 x 1024) x 2 = 53,248, norm 4096 x 2 + 8 x 4096 =
 *     40,960) = 102,400; + cos/sin 2 x 128 x 2 = 512 + hidden copy 4096 x 2 = 8,192:
 *     15,360 x 111,104 = 1,706,557,440.
 *   F-HF-08: logits 4 x 1 x 128,256 x 2 + 4 x 128,256 x 4 = 1,026,048 + 2,052,096 = 3,078,144.
 *   F-HF-11: 419,430,400 + 33,554,432 + 8,519,680 + (1,709,635,584 / 100) x 5 = 85,481,775
 *     -> 546,986,287.
 *   F-HF-10: prefill total 16,060,522,496 + 2,013,265,920 + 1,706,557,440 + 3,078,144 +
 *     546,986,287 = 20,330,410,287 (decode: KV 4095 tokens 2,146,959,360 + small < prefill).
 */
static void llama8b_default(void **state)
{
    (void)state;
    struct vf_model m = th_model("llama-3.1-8b");
    struct vf_workload w = wl(4096, 4, 1, 0, NULL);
    struct vf_estimate e = est(&m, &w);
    assert_string_equal(e.engine, "transformers");
    assert_u64(e.weights_bytes, 16060522496ULL);
    assert_u64(e.kv_bytes_per_token, 131072);
    assert_u64(th_component(&e, "weights"), 16060522496ULL);
    assert_u64(th_component(&e, "kv_cache"), 2013265920ULL);
    assert_u64(th_component(&e, "activations"), 1706557440ULL);
    assert_u64(th_component(&e, "logits"), 3078144ULL);
    assert_u64(th_component(&e, "runtime_overhead"), 546986287ULL);
    assert_u64(e.total_bytes, 20330410287ULL);
    assert_string_equal(e.extra_name, "transformers");
    assert_u64(extra_u64(&e, "prompt_tokens"), 3840);
    assert_u64(extra_u64(&e, "max_new_tokens"), 256);
    assert_u64(extra_u64(&e, "batch"), 4);
    assert_string_equal(extra_text(&e, "cache"), "dynamic");
    assert_string_equal(extra_text(&e, "attn_implementation"), "sdpa");
    assert_string_equal(extra_text(&e, "peak_phase"), "prefill");
    assert_int_equal(e.n_fixes, 0);
}

/*
 * F-HF-08, the worked example: logits for every prompt position (--logits-to-keep 0, a plain
 * forward or generate() before 4.45): 4 x 3840 x 128,256 x 2 (bf16) = 3,940,024,320 + the fp32
 * copy of the last row 2,052,096 = 3,942,076,416 (3.67 GiB). The fp32 form
 * (transformers < 4.46 upcast with logits.float()): 4 x 3840 x 128,256 x 4 = 7,880,048,640
 * (7.34 GiB), on top of the bf16 tensor while it is upcast. generate() at 4.57 keeps 1 row.
 */
static void logits_whole_prompt(void **state)
{
    (void)state;
    struct vf_model m = th_model("llama-3.1-8b");
    const char *kv[] = {"--logits-to-keep", "0", NULL};
    struct vf_workload w = wl(4096, 4, 1, 0, kv);
    struct vf_estimate e = est(&m, &w);
    assert_u64(th_component(&e, "logits"), 3942076416ULL);
    /* the same run on a card it does not fit: logits_to_keep=1 is offered and saves
     * 3,942,076,416 - 3,078,144 plus the 5 % slack on the difference */
    w.usable_bytes = 21ULL << 30; /* 22,548,578,304 */
    e = est(&m, &w);
    assert_true(e.total_bytes > w.usable_bytes);
    assert_true(has_fix(&e, "logits_to_keep=1"));
}

/*
 * F-HF-06 eager attention, same run: the scores b x heads x p x p = 4 x 32 x 3840^2 at 10 B
 * (bf16: matmul out 2 + softmax's fp32 copy 4 + fp32 out 4) = 18,874,368,000; the additive
 * mask 4 x 3840^2 x 2 = 117,964,800; repeat_kv's K and V 2 x 4 x 32 x 3840 x 128 x 2 =
 * 251,658,240; the residual and input 15,360 x 2 x 4096 x 2 = 251,658,240: 19,495,649,280 >
 * the MLP peak 1,572,864,000; + cos/sin and the hidden copy 15,360 x 8,704 = 133,693,440:
 * 19,629,342,720.
 */
static void eager_scores(void **state)
{
    (void)state;
    struct vf_model m = th_model("llama-3.1-8b");
    const char *kv[] = {"--attn-implementation", "eager", NULL};
    struct vf_workload w = wl(4096, 4, 1, 0, kv);
    struct vf_estimate e = est(&m, &w);
    assert_u64(th_component(&e, "activations"), 19629342720ULL);
    assert_string_equal(extra_text(&e, "attn_implementation"), "eager");

    /* F-HF-12 on a 24 GiB card: sdpa is offered, with the bytes of a re-run at sdpa */
    w.usable_bytes = 24ULL << 30;
    e = est(&m, &w);
    assert_true(has_fix(&e, "attn_implementation=\"sdpa\""));
    assert_true(has_fix(&e, "load_in_4bit"));
    assert_true(has_fix(&e, "over 2 GPUs"));
}

/*
 * F-HF-03 static cache: allocated up front at max_cache_len = max_length - 1 = 4095 tokens:
 * 131,072 x 4095 x 4 = 2,146,959,360 already in the prefill.
 */
static void static_cache(void **state)
{
    (void)state;
    struct vf_model m = th_model("llama-3.1-8b");
    const char *kv[] = {"--cache", "static", NULL};
    struct vf_workload w = wl(4096, 4, 1, 0, kv);
    struct vf_estimate e = est(&m, &w);
    assert_u64(th_component(&e, "kv_cache"), 2146959360ULL);
    assert_string_equal(extra_text(&e, "cache"), "static");
}

/*
 * F-HF-07 the decode phase: a 96-token prompt and 4000 new tokens, 1 sequence: the prefill
 * holds 96 tokens of cache, the decode end 4095: 131,072 x 4095 = 536,739,840, the larger
 * phase, plus torch.cat's copy of one layer's K at 4095 tokens (in activations).
 */
static void decode_peak(void **state)
{
    (void)state;
    struct vf_model m = th_model("llama-3.1-8b");
    const char *kv[] = {"--max-new-tokens", "4000", NULL};
    struct vf_workload w = wl(4096, 1, 1, 0, kv);
    struct vf_estimate e = est(&m, &w);
    assert_u64(extra_u64(&e, "prompt_tokens"), 96);
    assert_string_equal(extra_text(&e, "peak_phase"), "decode");
    assert_u64(th_component(&e, "kv_cache"), 536739840ULL);
    /* F-HF-07, the decode transient of 1 token: the layer peak (F-HF-05, the MLP: (2 x 4096 +
     * 3 x 14336) x 2 B = 102,400) + sdpa without a mask, nothing more (F-HF-06) + torch.cat's
     * copy of one layer's K, 8 x 128 x 2 B x 4095 = 8,386,560: 8,488,960 */
    assert_u64(th_component(&e, "activations"), 8488960ULL);
}

/* F-HF-01 bitsandbytes: the weights are the nf4 / int8 schemes of F-W-06 / F-W-04b. */
static void bnb_weights(void **state)
{
    (void)state;
    struct vf_model m = th_model("llama-3.1-8b");
    struct vf_quant q;
    const char *k4[] = {"--load-in-4bit", NULL, NULL};
    struct vf_workload w = wl(4096, 1, 1, 0, k4);
    struct vf_estimate e = est(&m, &w);
    assert_int_equal(vf_quant_parse("nf4", &q, NULL), VF_OK);
    assert_u64(th_component(&e, "weights"), vf_model_weight_bytes(&m, &q));
    assert_string_equal(extra_text(&e, "torch_dtype"), "float16"); /* bnb's dtype override */
    const char *k8[] = {"--load-in-8bit", NULL, NULL};
    w = wl(4096, 1, 1, 0, k8);
    e = est(&m, &w);
    assert_int_equal(vf_quant_parse("int8", &q, NULL), VF_OK);
    assert_u64(th_component(&e, "weights"), vf_model_weight_bytes(&m, &q));
}

/*
 * F-HF-09 device_map="auto", Llama 3.1 70B bf16 on 2 x H100 SXM (85,061,533,696 B usable):
 *   layer = 2 x (64 x 128 x 8192 x 2 + 2 x 8 x 128 x 8192 + 3 x 8192 x 28672 + 2 x 8192) =
 *     1,711,308,800; embed = lm_head = 128,256 x 8192 x 2 = 2,101,346,304; total
 *     141,107,412,992.
 *   per_gpu = 141,107,412,992 / 2 + 1.25 x 1,711,308,800 = 72,692,842,496 (< free
 *     85,061,533,696 - 419,430,400); GPU 0 keeps the largest module (2,101,346,304) free:
 *     cap 70,591,496,192 -> embed + 40 layers = 70,553,698,304 (41 would be 72,265,007,104).
 *   GPU 1: 40 layers + norm 16,384 + lm_head = 70,553,714,688.
 */
static void device_map_70b(void **state)
{
    (void)state;
    struct vf_model m = th_model("llama-3.1-70b");
    struct vf_workload w = wl(8192, 2, 2, 85061533696ULL, NULL);
    struct vf_estimate e = est(&m, &w);
    uint64_t w0 = 0, w1 = 0;
    for (size_t i = 0; i < e.n_components; i++) {
        const struct vf_component *c = &e.components[i];
        if (!strcmp(c->name, "weights") && c->device == 0)
            w0 = c->bytes;
        if (!strcmp(c->name, "weights") && c->device == 1)
            w1 = c->bytes;
    }
    assert_u64(w0, 70553698304ULL);
    assert_u64(w1, 70553714688ULL);
    assert_int_equal(e.n_lines, 1);
    assert_non_null(strstr(e.lines[0], "0: model.embed_tokens, model.layers.0-39"));
    assert_non_null(strstr(e.lines[0], "1: model.layers.40-79, model.norm, lm_head"));
    /* the most loaded GPU is the one with lm_head and its logits */
    assert_u64(e.total_bytes, vf__gpu_total(&e, 1));
    assert_true(vf__gpu_total(&e, 1) >= vf__gpu_total(&e, 0));
}

/* F-HF-12: the prompt fix is the largest prompt that fits: a re-run at it fits, one more
 * token does not. */
static void prompt_fix_is_largest(void **state)
{
    (void)state;
    struct vf_model m = th_model("llama-3.1-8b");
    const char *kv[] = {"--attn-implementation", "eager", NULL};
    uint64_t usable = 25393692672ULL; /* RTX 4090, 23.65 GiB */
    struct vf_workload w = wl(4096, 4, 1, usable, kv);
    struct vf_estimate e = est(&m, &w);
    assert_true(e.n_fixes > 0);
    unsigned long long p = 0, ctx = 0;
    assert_int_equal(sscanf(e.fixes[0], "prompt of at most %llu tokens (--ctx %llu", &p, &ctx), 2);
    assert_u64(ctx, p + 256);
    struct vf_workload w2 = wl(ctx, 4, 1, 0, kv);
    assert_true(est(&m, &w2).total_bytes <= usable);
    w2.ctx_tokens = ctx + 1;
    assert_true(est(&m, &w2).total_bytes > usable);
}

static void flag_errors(void **state)
{
    (void)state;
    struct vf_model m = th_model("llama-3.1-8b");
    struct vf_estimate e;
    struct vf_error err = {0};
    const char *bad[] = {"--attn-implementation", "xformers", NULL};
    struct vf_workload w = wl(4096, 1, 1, 0, bad);
    assert_int_equal(vf_estimate(th_arena, &m, &w, &e, &err), VF_EINVAL);
    assert_non_null(strstr(err.msg, "sdpa, eager or flash_attention_2"));
    const char *both[] = {"--load-in-8bit", NULL, "--load-in-4bit", NULL, NULL};
    w = wl(4096, 1, 1, 0, both);
    assert_int_equal(vf_estimate(th_arena, &m, &w, &e, &err), VF_EINVAL);
    const char *cuda[] = {"--device-map", "cuda", NULL};
    w = wl(4096, 1, 2, 0, cuda);
    assert_int_equal(vf_estimate(th_arena, &m, &w, &e, &err), VF_EINVAL);
    const char *dt[] = {"--torch-dtype", "float8", NULL};
    w = wl(4096, 1, 1, 0, dt);
    assert_int_equal(vf_estimate(th_arena, &m, &w, &e, &err), VF_EINVAL);
    const struct vf_engine *eng = vf_engine_find("transformers");
    const char *why = NULL;
    assert_false(eng->can_split(&m, NULL, 33, &why));
    assert_non_null(why);
    assert_true(eng->can_split(&m, NULL, 32, &why));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(llama8b_default), cmocka_unit_test(logits_whole_prompt),
        cmocka_unit_test(eager_scores),    cmocka_unit_test(static_cache),
        cmocka_unit_test(decode_peak),     cmocka_unit_test(bnb_weights),
        cmocka_unit_test(device_map_70b),  cmocka_unit_test(prompt_fix_is_largest),
        cmocka_unit_test(flag_errors),
    };
    return cmocka_run_group_tests(tests, th_setup, th_teardown);
}
