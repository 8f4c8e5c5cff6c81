/*
 * t_ollama.c - the Ollama estimator (est_ollama.c) scored against the ollama rows of
 * shared/reference/measured-public.jsonl (F-OLL-nn, docs/FORMULAS-ollama.md).
 */
#include "th.h"

#define MIB (1ULL << 20)
#define GIB (1ULL << 30)

static struct vf_estimate run(const char *model, struct vf_workload *w)
{
    struct vf_model m = th_model(model);
    struct vf_estimate e;
    struct vf_error err = {0};
    memset(&e, 0, sizeof e);
    w->engine = "ollama";
    if (vf_estimate(th_arena, &m, w, &e, &err))
        fail_msg("%s", err.msg);
    return e;
}

static uint64_t extra(const struct vf_estimate *e, const char *key)
{
    for (size_t i = 0; i < e->n_extras; i++)
        if (!strcmp(e->extras[i].key, key))
            return e->extras[i].u64;
    fail_msg("no extra %s", key);
    return 0;
}

/* ollama-10341-gemma3-12b-q4km-3060: num_ctx 2048, 11.5 GiB available: memory.required.kv
 * 608.0 MiB, layers.offload 49 of 49. F-OLL-02 + F-LCPP-04: 8 global layers x 2048 cells +
 * 40 sliding layers x pad(1024 + 512, 256) = 1536 cells, x 8 heads x 256 x 2 (K, V) x 2 B =
 * (16384 + 61440) x 8192 B = 608 MiB. */
static void test_gemma3_row(void **s)
{
    (void)s;
    struct vf_workload w = {.ctx_tokens = 2048, .usable_bytes = 11 * GIB + GIB / 2};
    vf_quant_parse("Q4_K_M", &w.weights, NULL);
    struct vf_estimate e = run("gemma-3-12b", &w);
    assert_u64(extra(&e, "kv_bytes"), 608 * MIB);
    assert_u64(extra(&e, "layers_offload"), 49);
    assert_u64(extra(&e, "layers_model"), 49);
}

/* F-OLL-01: num_ctx by VRAM when not given: 4096 under 23 GiB, 32768 from 23 GiB. */
static void test_default_ctx(void **s)
{
    (void)s;
    struct vf_workload w = {.usable_bytes = 12 * GIB};
    struct vf_estimate e = run("llama-3.1-8b", &w);
    assert_u64(extra(&e, "num_ctx"), 4096);
    struct vf_workload w2 = {.usable_bytes = 24 * GIB};
    e = run("llama-3.1-8b", &w2);
    assert_u64(extra(&e, "num_ctx"), 32768);
}

/* F-OLL-02: num_parallel 4 x num_ctx 2048 = 8192 cells: Llama 3.1 8B f16 KV = 1 GiB. */
static void test_parallel(void **s)
{
    (void)s;
    struct vf_workload w = {.ctx_tokens = 2048};
    w.opts.key[0] = "OLLAMA_NUM_PARALLEL";
    w.opts.value[0] = "4";
    w.opts.n = 1;
    struct vf_estimate e = run("llama-3.1-8b", &w);
    assert_u64(extra(&e, "num_parallel"), 4);
    assert_u64(extra(&e, "kv_bytes"), GIB);
}

/* F-OLL-04: a 70B at Q4_K_M on a 24 GiB card spills layers to the CPU. */
static void test_partial_offload(void **s)
{
    (void)s;
    struct vf_workload w = {.ctx_tokens = 8192, .usable_bytes = 24 * GIB};
    vf_quant_parse("Q4_K_M", &w.weights, NULL);
    struct vf_estimate e = run("llama-3.1-70b", &w);
    uint64_t n = extra(&e, "layers_offload");
    assert_true(n > 30 && n < 60);
    assert_true(e.n_fixes >= 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gemma3_row),
        cmocka_unit_test(test_default_ctx),
        cmocka_unit_test(test_parallel),
        cmocka_unit_test(test_partial_offload),
    };
    return cmocka_run_group_tests(tests, th_setup, th_teardown);
}
