/*
 * t_llamacpp.c - the llama.cpp estimator (est_llamacpp.c): buffers per device against the
 * closed forms of docs/FORMULAS-llamacpp.md (F-LCPP-nn), numbers derived in comments.
 */
#include "th.h"

#define MIB (1ULL << 20)

static struct vf_estimate run(const char *model, struct vf_workload *w, enum vf_err want)
{
    struct vf_model m = th_model(model);
    struct vf_estimate e;
    struct vf_error err = {0};
    memset(&e, 0, sizeof e);
    w->engine = "llama.cpp";
    enum vf_err rc = vf_estimate(th_arena, &m, w, &e, &err);
    if (rc != want)
        fail_msg("rc %d: %s", rc, err.msg);
    return e;
}

/* Bytes of component `name` on device dev (0 when absent). */
static uint64_t comp_on(const struct vf_estimate *e, const char *name, int dev)
{
    for (size_t i = 0; i < e->n_components; i++)
        if (!strcmp(e->components[i].name, name) && e->components[i].device == dev)
            return e->components[i].bytes;
    return 0;
}

static void opt(struct vf_workload *w, const char *k, const char *v)
{
    w->opts.key[w->opts.n] = k;
    w->opts.value[w->opts.n++] = v;
}

/* Llama 3.1 8B, -c 8192, f16 KV, every layer on CUDA0. */
static void test_full_offload(void **s)
{
    (void)s;
    struct vf_workload w = {.ctx_tokens = 8192, .users = 1};
    struct vf_estimate e = run("llama-3.1-8b", &w, VF_OK);
    /* F-LCPP-04: 32 layers x 8192 cells x (K 8 x 128 + V 8 x 128) x 2 B = 1 GiB */
    assert_u64(comp_on(&e, "kv_buffer", 0), 1ULL << 30);
    /* F-LCPP-02: token_embd 128256 x 4096 x 2 B stays on the CPU */
    assert_u64(comp_on(&e, "model_buffer", VF_DEV_HOST), 1050673152ULL);
    /* F-LCPP-07: logits of one token per sequence: 128256 x 4 B */
    assert_u64(comp_on(&e, "output_buffer", VF_DEV_HOST), 513024);
    /* F-LCPP-06, FA on: output point 2E + logits, minus E on a GPU, + 28 B x 512 inputs:
     * E = 4096 x 512 x 4 = 8 MiB, logits = 128256 x 512 x 4 = 250.5 MiB -> 258.5 MiB */
    assert_u64(comp_on(&e, "compute_buffer", 0), 258 * MIB + MIB / 2 + 14336);
    /* F-LCPP-06 host: E + the f32 mask 8192 x 512 x 4 = 8 + 16 MiB, + inputs */
    assert_u64(comp_on(&e, "compute_buffer", VF_DEV_HOST), 24 * MIB + 14336);
    /* the peak: the sum on CUDA0 with the CUDA context */
    assert_u64(e.total_bytes, comp_on(&e, "model_buffer", 0) + (1ULL << 30) +
                                  comp_on(&e, "compute_buffer", 0) + 466 * MIB);
}

/* F-LCPP-03: -c 1000 pads to 1024 cells; -c 8192 -np 4 gives 4 streams of 2048. */
static void test_padding_streams(void **s)
{
    (void)s;
    struct vf_workload w = {.ctx_tokens = 1000, .users = 1};
    struct vf_estimate e = run("llama-3.1-8b", &w, VF_OK);
    assert_u64(comp_on(&e, "kv_buffer", 0), 1024ULL * 32 * 2048 * 2);
    struct vf_workload w4 = {.ctx_tokens = 2048, .users = 4};
    e = run("llama-3.1-8b", &w4, VF_OK);
    assert_u64(comp_on(&e, "kv_buffer", 0), 1ULL << 30);
    /* F-LCPP-07: 4 sequences of logits */
    assert_u64(comp_on(&e, "output_buffer", VF_DEV_HOST), 4 * 513024);
}

/* F-LCPP-06, FA off: the attention point mask + 5E + 2Ekv + KQ dominates at 8192:
 * KQ = 8192 x 512 x 32 x 4 = 512 MiB, mask 16 MiB, 5E = 40 MiB, 2Ekv = 2 x 1024 x 2048 = 4
 * MiB; a GPU keeps one E less: 572 - 8 = 564 MiB, + 20 B x 512 inputs. */
static void test_compute_fa_off(void **s)
{
    (void)s;
    struct vf_workload w = {.ctx_tokens = 8192, .users = 1};
    opt(&w, "-fa", "off");
    struct vf_estimate e = run("llama-3.1-8b", &w, VF_OK);
    assert_u64(comp_on(&e, "compute_buffer", 0), 564 * MIB + 10240);
}

/* F-LCPP-01: a quantized V cache without flash attention is refused, as llama.cpp does. */
static void test_quant_v_needs_fa(void **s)
{
    (void)s;
    struct vf_workload w = {.ctx_tokens = 8192, .users = 1, .kv_dtype = VF_DT_Q8_0};
    opt(&w, "-fa", "off");
    run("llama-3.1-8b", &w, VF_EINVAL);
    struct vf_workload w2 = {.ctx_tokens = 8192, .users = 1, .kv_dtype = VF_DT_Q8_0};
    struct vf_estimate e = run("llama-3.1-8b", &w2, VF_OK);
    /* q8_0: 34 B per 32 elements: 1 GiB x 34/64 */
    assert_u64(comp_on(&e, "kv_buffer", 0), (1ULL << 30) / 64 * 34);
}

/* F-LCPP-12: a quantized cache is Hadamard-rotated (K and V types quantized, head size 128 a
 * multiple of 64): attn_inp_k_rot is 128 x 128 f32 (the largest power of two dividing 128) =
 * 64 KiB, attn_inp_v_rot 64 x 64 f32 = 16 KiB, both graph inputs. The rotations move the
 * residual stream: output point 3E + logits (not 2E), FFN point mask + 3E + 3F (not 4E).
 * Llama 3.1 8B -c 8192 q8_0, FA on, on CUDA0 (one E less): 2E + logits = 16 + 250.5 MiB
 * beats mask 8 + 2E 16 + 3F 3 x 14336 x 512 x 4 = 84 MiB; + 28 x 512 + 80 KiB inputs.
 * The same config with an f16 cache (no rotation) is 258.5 MiB + 14,336 B (test 1). */
static void test_kv_rotation(void **s)
{
    (void)s;
    struct vf_workload w = {.ctx_tokens = 8192, .users = 1, .kv_dtype = VF_DT_Q8_0};
    struct vf_estimate e = run("llama-3.1-8b", &w, VF_OK);
    assert_u64(comp_on(&e, "compute_buffer", 0), 266 * MIB + MIB / 2 + 14336 + 81920);
    /* host: E + the f32 mask 8 + 16 MiB, + the same inputs */
    assert_u64(comp_on(&e, "compute_buffer", VF_DEV_HOST), 24 * MIB + 14336 + 81920);
    /* q4_0 rotates the same way: the compute buffer does not depend on the quant type */
    struct vf_workload w4 = {.ctx_tokens = 8192, .users = 1, .kv_dtype = VF_DT_Q4_0};
    struct vf_estimate e4 = run("llama-3.1-8b", &w4, VF_OK);
    assert_u64(comp_on(&e4, "compute_buffer", 0), comp_on(&e, "compute_buffer", 0));
}

/* F-LCPP-02: -ngl 16 of 32: layers 17..31 on the GPU (i_gpu_start = 33 - 16 = 17), the
 * output layer too; layers 0..16 and their KV on the CPU. */
static void test_partial(void **s)
{
    (void)s;
    struct vf_workload w = {.ctx_tokens = 8192, .users = 1};
    opt(&w, "-ngl", "16");
    struct vf_estimate e = run("llama-3.1-8b", &w, VF_OK);
    assert_u64(comp_on(&e, "kv_buffer", 0), (1ULL << 30) / 32 * 15);
    assert_u64(comp_on(&e, "kv_buffer", VF_DEV_HOST), (1ULL << 30) / 32 * 17);
}

/* F-LCPP-02: two GPUs split the 33 offloaded layers (32 + output) at 0.5: layer il goes to
 * GPU 0 while il / 33 < 0.5, i.e. layers 0..16 (17), GPU 1 gets 17..31 (15) + output. */
static void test_two_gpus(void **s)
{
    (void)s;
    struct vf_workload w = {.ctx_tokens = 8192, .users = 1, .gpus = 2};
    struct vf_estimate e = run("llama-3.1-8b", &w, VF_OK);
    assert_u64(comp_on(&e, "kv_buffer", 0), (1ULL << 30) / 32 * 17);
    assert_u64(comp_on(&e, "kv_buffer", 1), (1ULL << 30) / 32 * 15);
    assert_true(comp_on(&e, "compute_buffer", 1) > comp_on(&e, "compute_buffer", 0));
}

/* --cpu: nothing on a GPU; a card gives fixes in llama.cpp's flags. */
static void test_cpu_and_fixes(void **s)
{
    (void)s;
    struct vf_workload w = {.ctx_tokens = 8192, .users = 1};
    opt(&w, "--cpu", NULL);
    struct vf_estimate e = run("llama-3.1-8b", &w, VF_OK);
    assert_u64(e.total_bytes, 0);
    assert_true(e.host_bytes > (16ULL << 30));
    struct vf_workload w2 = {.ctx_tokens = 131072, .users = 1, .usable_bytes = 23ULL << 30};
    e = run("llama-3.1-8b", &w2, VF_OK);
    assert_true(e.n_fixes >= 2);
    assert_non_null(strstr(e.fixes[0], "-c "));
}

/* measured-public.jsonl ollama-9221 (a 64-layer Qwen2 32B Q4_K_M, -c 8192 -np 4, FA off, one
 * unified cache as that build had): CPU model buffer 417.66 MiB, CUDA0 18508.35 MiB, KV
 * 2048.00 MiB, CUDA_Host compute 26.01 MiB exactly; CUDA0 compute 696.00 MiB measured,
 * 700.01 MiB ours (F-LCPP-06: KQ 640 + mask 16 + 5E 50 + 2Ekv 4 - E 10 MiB, +0.6 %). */
static void test_measured_9221(void **s)
{
    (void)s;
    struct vf_workload w = {.ctx_tokens = 2048, .users = 4};
    vf_quant_parse("Q4_K_M", &w.weights, NULL);
    opt(&w, "-fa", "off");
    opt(&w, "--kv-unified", NULL);
    struct vf_estimate e = run("deepseek-r1-distill-qwen-32b", &w, VF_OK);
    assert_u64((comp_on(&e, "model_buffer", VF_DEV_HOST) * 100 + MIB / 2) / MIB, 41766);
    assert_u64((comp_on(&e, "model_buffer", 0) * 100 + MIB / 2) / MIB, 1850835);
    assert_u64(comp_on(&e, "kv_buffer", 0), 2048 * MIB);
    assert_u64((comp_on(&e, "compute_buffer", VF_DEV_HOST) * 100 + MIB / 2) / MIB, 2601);
    uint64_t c = comp_on(&e, "compute_buffer", 0);
    assert_true(c > 696 * MIB && c < 696 * MIB + 696 * MIB / 100);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_full_offload),   cmocka_unit_test(test_padding_streams),
        cmocka_unit_test(test_compute_fa_off), cmocka_unit_test(test_quant_v_needs_fa),
        cmocka_unit_test(test_partial),        cmocka_unit_test(test_two_gpus),
        cmocka_unit_test(test_cpu_and_fixes),  cmocka_unit_test(test_measured_9221),
        cmocka_unit_test(test_kv_rotation),
    };
    return cmocka_run_group_tests(tests, th_setup, th_teardown);
}
