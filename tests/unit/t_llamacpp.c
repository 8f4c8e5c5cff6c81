/* SPDX-License-Identifier: Apache-2.0 */
/*
 * t_llamacpp.c - the llama.cpp estimator (est_llamacpp.c): buffers per device against the
 * closed forms of docs/FORMULAS.md (F-LCPP-nn), numbers derived in comments.
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

/* issue 21: -ctk/-ctv apart. K q8_0 + V f16 on Llama 3.1 8B: 32 layers x 8 KV heads x
 * (136 B + 256 B) = 100352 B per token; at 8192 cells 784 MiB (1 GiB x 392/512). A quantized V
 * with an f16 K still needs flash attention; an MLA model refuses the mix (llama.cpp's
 * llama_init_from_model: "model does not support different K and V cache types"). */
static void test_mixed_kv(void **s)
{
    (void)s;
    struct vf_workload w = {
        .ctx_tokens = 8192, .users = 1, .kv_dtype = VF_DT_Q8_0, .kv_dtype_v = VF_DT_F16};
    struct vf_estimate e = run("llama-3.1-8b", &w, VF_OK);
    assert_u64(e.kv_bytes_per_token, 100352);
    assert_u64(comp_on(&e, "kv_buffer", 0), 784 * MIB);
    assert_int_equal(e.kv_dtype, VF_DT_Q8_0);
    assert_int_equal(e.kv_dtype_v, VF_DT_F16);
    struct vf_workload w2 = {.ctx_tokens = 8192, .users = 1, .kv_dtype_v = VF_DT_Q4_0};
    opt(&w2, "-fa", "off");
    run("llama-3.1-8b", &w2, VF_EINVAL);
    struct vf_workload w3 = {
        .ctx_tokens = 4096, .users = 1, .kv_dtype = VF_DT_Q8_0, .kv_dtype_v = VF_DT_F16};
    run("deepseek-v3", &w3, VF_EINVAL);
    /* other engines keep one type */
    struct vf_model m = th_model("llama-3.1-8b");
    struct vf_workload w4 = {.ctx_tokens = 4096, .users = 1, .kv_dtype_v = VF_DT_Q8_0};
    struct vf_estimate e4;
    assert_int_equal(vf_estimate(th_arena, &m, &w4, &e4, NULL), VF_EINVAL);
}

/* F-LCPP-13/14: llama.cpp's fit-params README (b6895, Qwen3-30B-A3B F16, -c 4096 -ngl 48 and
 * 34 layers' experts on the CPU): CUDA0 compute 898 MiB. Before PR 18148 -ngl 48 of 48 layers
 * leaves the output layer on the CPU; ggml-cuda takes the output matmul (512 tokens >= 32) and
 * copies output.weight: 151936 x 2048 x 2 B = 593.5 MiB, + logits 151936 x 512 x 4 B = 296.75
 * MiB + E 4 MiB + 28 B x 512 inputs = 894.26 MiB (-0.4 %). --no-op-offload: no copy, the CPU
 * computes the output (logits + 2E) and CUDA0 keeps its layers' FFN point only. */
static void test_host_weight_copy(void **s)
{
    (void)s;
    struct vf_workload w = {
        .ctx_tokens = 4096, .users = 1, .engine = "llama.cpp", .engine_version = "b6895"};
    opt(&w, "-ngl", "48");
    opt(&w, "--n-cpu-moe", "34");
    struct vf_model m = th_model("qwen3-30b-a3b");
    struct vf_quant q;
    assert_int_equal(vf_quant_parse("F16", &q, NULL), VF_OK);
    w.weights = q;
    struct vf_estimate e;
    assert_int_equal(vf_estimate(th_arena, &m, &w, &e, NULL), VF_OK);
    uint64_t want = 151936ULL * 2048 * 2 + 151936ULL * 512 * 4 + 2048ULL * 512 * 4 + 28 * 512;
    assert_u64(comp_on(&e, "compute_buffer", 0), want);
    assert_u64(comp_on(&e, "kv_buffer", 0), 384 * MIB);
    opt(&w, "--no-op-offload", "");
    assert_int_equal(vf_estimate(th_arena, &m, &w, &e, NULL), VF_OK);
    assert_true(comp_on(&e, "compute_buffer", 0) < 100 * MIB);
    /* the newest rules: -ngl 48 puts the output layer on the GPU and layer 0 on the CPU */
    w.engine_version = NULL;
    w.opts.n = 2;
    assert_int_equal(vf_estimate(th_arena, &m, &w, &e, NULL), VF_OK);
    assert_u64(comp_on(&e, "kv_buffer", 0), 376 * MIB);
}

/* F-LCPP-11: --fit on with a card and no -c lowers the context to --fit-ctx 4096 first, then
 * (MoE) keeps every layer on the GPU and moves the experts of as few layers as needed: the
 * chosen settings are what is estimated, and they fit (with the 1024 MiB margin). */
static void test_fit_on(void **s)
{
    (void)s;
    struct vf_model m = th_model("qwen3-30b-a3b");
    struct vf_workload w = {.users = 1, .engine = "llama.cpp", .usable_bytes = 25394413568ULL};
    assert_int_equal(vf_quant_parse("F16", &w.weights, NULL), VF_OK);
    opt(&w, "--fit", "on");
    struct vf_estimate e;
    assert_int_equal(vf_estimate(th_arena, &m, &w, &e, NULL), VF_OK);
    assert_u64(e.ctx_tokens, 4096);
    assert_true(e.total_bytes + (1024 * MIB) <= w.usable_bytes);
    assert_true(e.host_bytes > 30 * (1ULL << 30)); /* experts spilled */
    /* -ngl auto means the same */
    struct vf_workload w2 = w;
    w2.opts.n = 0;
    opt(&w2, "-ngl", "auto");
    struct vf_estimate e2;
    assert_int_equal(vf_estimate(th_arena, &m, &w2, &e2, NULL), VF_OK);
    assert_u64(e2.total_bytes, e.total_bytes);
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
 * GPU 0 while il / 33 < 0.5, i.e. layers 0..16 (17), GPU 1 gets 17..31 (15) + output.
 * F-LCPP-06, FA on, nt 512: E = 8 MiB, F = 14336 x 512 x 4 = 28 MiB, mask 8192 x 512 x 2 B =
 * 8 MiB, logits 250.5 MiB. GPU 0 (layers only): FFN point mask + 4E + 3F = 124 MiB, one E
 * less = 116 MiB; GPU 1 (the output slot): max(124, 2E + logits = 266.5) - E = 258.5 MiB;
 * each + 28 B x 512 = 14,336 B of inputs. */
static void test_two_gpus(void **s)
{
    (void)s;
    struct vf_workload w = {.ctx_tokens = 8192, .users = 1, .gpus = 2};
    struct vf_estimate e = run("llama-3.1-8b", &w, VF_OK);
    assert_u64(comp_on(&e, "kv_buffer", 0), (1ULL << 30) / 32 * 17);
    assert_u64(comp_on(&e, "kv_buffer", 1), (1ULL << 30) / 32 * 15);
    assert_u64(comp_on(&e, "compute_buffer", 0), 116 * MIB + 14336);
    assert_u64(comp_on(&e, "compute_buffer", 1), 258 * MIB + MIB / 2 + 14336);
}

/*
 * --cpu: nothing on a GPU, every buffer in host memory: the weights 2 B x 8,030,261,248 =
 * 16,060,522,496 (F-W-03), KV 1 GiB (F-LCPP-04), compute (F-LCPP-06, host with the layers
 * and the output: max(FFN 124 MiB, output 2E + logits 266.5 MiB) + 28 x 512 inputs =
 * 279,459,840) and output 513,024 (F-LCPP-07): 17,414,237,184 B.
 *
 * A card gives fixes in llama.cpp's flags (F-LCPP-10). -c 131072 on 23 GiB (24,696,061,952):
 * CUDA0 holds the weights less token_embd, 16,060,522,496 - 1,050,673,152 = 15,009,849,344,
 * the compute buffer 258.5 MiB + 14,336 = 271,071,232 (the output point wins while the FA
 * mask c x 512 x 2 B stays under 150.5 MiB) and 466 MiB (F-LCPP-09); what is left,
 * 8,926,504,960 B, holds 68,103 cells of 131,072 B: -c 68096, the multiple of 256 below
 * (F-LCPP-03). -ngl: each block is 218,112,000 x 2 B = 436,224,000 plus 512 MiB of KV at
 * 131072 cells, the output slot 1,050,681,344; -ngl 24 (23 blocks + output):
 * 11,083,833,344 + 23 x 512 MiB + 271,071,232 + 466 MiB = 24,191,571,968 fits, -ngl 25 adds
 * 973,094,912 and does not: 9 of 32 blocks on the CPU. q8_0 KV (34/64 of 16 GiB =
 * 9,126,805,504) with the rotated compute buffer 266.5 MiB + 14,336 + 81,920 (F-LCPP-12):
 * 24,904,833,024 B = 23.19 GiB, still short. Then --fit (F-LCPP-11).
 */
static void test_cpu_and_fixes(void **s)
{
    (void)s;
    struct vf_workload w = {.ctx_tokens = 8192, .users = 1};
    opt(&w, "--cpu", NULL);
    struct vf_estimate e = run("llama-3.1-8b", &w, VF_OK);
    assert_u64(e.total_bytes, 0);
    assert_u64(e.host_bytes, 17414237184ULL);
    assert_u64(comp_on(&e, "compute_buffer", VF_DEV_HOST), 279459840ULL);
    struct vf_workload w2 = {.ctx_tokens = 131072, .users = 1, .usable_bytes = 23ULL << 30};
    e = run("llama-3.1-8b", &w2, VF_OK);
    assert_u64(e.n_fixes, 4);
    assert_string_equal(e.fixes[0], "-c 68096: the largest context that fits (68096 per sequence)");
    assert_non_null(strstr(e.fixes[1], "-ngl 24: 9 of 32 layers on the CPU"));
    assert_string_equal(e.fixes[2],
                        "-ctk q8_0 -ctv q8_0 -fa on: 23.19 GiB on the GPU (still short)");
    assert_non_null(strstr(e.fixes[3], "--fit on: "));
}

/* measured-public.jsonl ollama-9221 (a 64-layer Qwen2 32B Q4_K_M, -c 8192 -np 4, FA off, one
 * unified cache as that build had): CPU model buffer 417.66 MiB, CUDA0 18508.35 MiB, KV
 * 2048.00 MiB, CUDA_Host compute 26.01 MiB exactly; CUDA0 compute 696.00 MiB measured,
 * 700.01 MiB ours (F-LCPP-06, nt 512, 40 heads, hidden 5120, 8 KV heads x 128: KQ 8192 x 512
 * x 40 x 4 = 640 + mask 8192 x 512 x 4 = 16 + 5E 50 + 2Ekv 4 - E 10 MiB = 700 MiB, + 20 B x
 * 512 inputs = 734,013,440 B; +0.6 % over the measured 696 MiB). */
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
    assert_u64(c, 700 * MIB + 10240);
    /* and within 1 % of the measured 696.00 MiB (the accuracy the row is scored at) */
    assert_true(c > 696 * MIB && c < 696 * MIB + 696 * MIB / 100);
    /* F-LCPP-14 (issue 21): a build of that time (the log's llama_new_context_with_model is
     * before b5913) shares one cache by default: the same plan without --kv-unified */
    struct vf_workload w2 = {
        .ctx_tokens = 2048, .users = 4, .engine = "llama.cpp", .engine_version = "b4500"};
    w2.weights = w.weights;
    opt(&w2, "-fa", "off");
    struct vf_model m = th_model("deepseek-r1-distill-qwen-32b");
    struct vf_estimate e2;
    assert_int_equal(vf_estimate(th_arena, &m, &w2, &e2, NULL), VF_OK);
    assert_u64(comp_on(&e2, "compute_buffer", 0), c);
    /* the newest rules split it in 4 streams of 2048 cells: attention over 2048, not 8192 */
    w2.engine_version = NULL;
    assert_int_equal(vf_estimate(th_arena, &m, &w2, &e2, NULL), VF_OK);
    assert_true(comp_on(&e2, "compute_buffer", 0) < c);
    /* a build that is not a number */
    w2.engine_version = "bxyz";
    assert_int_equal(vf_estimate(th_arena, &m, &w2, &e2, NULL), VF_EINVAL);
}

/* F-LCPP-15 (issue 21): --gpu 24GiB,8GiB, no -ts: llama.cpp splits the 16 + 1 layers of Llama
 * 3.2 1B (bf16, every layer 60,821,504 params = 121,643,008 B) by free memory, (24 GiB - 466
 * MiB) : (8 GiB - 466 MiB) = 24110 : 7726 MiB, GPU 0's share 0.75732: layer il goes there while
 * il / 17 < 0.75732, il <= 12: 13 layers = 1,581,359,104 B. GPU 1: layers 13-15 (364,929,024 B)
 * + the output layer, tied: the embeddings again 128256 x 2048 x 2 = 525,336,576 B + the
 * output norm 4096 B: 890,269,696 B. An even split would give 9 and 8 layers. */
static void test_mix_split(void **s)
{
    (void)s;
    struct vf_workload w = {.ctx_tokens = 4096, .gpus = 2, .usable_bytes = 8ULL << 30};
    w.n_mix = 2;
    w.mix_usable[0] = 24ULL << 30;
    w.mix_usable[1] = 8ULL << 30;
    struct vf_estimate e = run("llama-3.2-1b", &w, VF_OK);
    assert_u64(comp_on(&e, "model_buffer", 0), 1581359104ULL);
    assert_u64(comp_on(&e, "model_buffer", 1), 890269696ULL);
    opt(&w, "-ts", "1,1"); /* -ts overrides: 17 x 0.5 = 8.5, layers 0-8 on GPU 0 */
    e = run("llama-3.2-1b", &w, VF_OK);
    assert_u64(comp_on(&e, "model_buffer", 0), 9 * 121643008ULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_full_offload),     cmocka_unit_test(test_padding_streams),
        cmocka_unit_test(test_compute_fa_off),   cmocka_unit_test(test_quant_v_needs_fa),
        cmocka_unit_test(test_partial),          cmocka_unit_test(test_two_gpus),
        cmocka_unit_test(test_cpu_and_fixes),    cmocka_unit_test(test_measured_9221),
        cmocka_unit_test(test_kv_rotation),      cmocka_unit_test(test_mixed_kv),
        cmocka_unit_test(test_host_weight_copy), cmocka_unit_test(test_fit_on),
        cmocka_unit_test(test_mix_split),
    };
    return cmocka_run_group_tests(tests, th_setup, th_teardown);
}
