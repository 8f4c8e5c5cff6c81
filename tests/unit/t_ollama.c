/* SPDX-License-Identifier: Apache-2.0 */
/*
 * t_ollama.c - the Ollama estimator (est_ollama.c) scored against the ollama rows of
 * shared/reference/measured-public.jsonl (F-OLL-nn, docs/FORMULAS.md, Ollama section).
 */
#include "th.h"

#include "internal.h"
#include "engine/est_ollama.h"

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

/* Bytes of component `name` on device dev (VF_DEV_HOST for the host); fails when absent. */
static uint64_t comp_on(const struct vf_estimate *e, const char *name, int dev)
{
    for (size_t i = 0; i < e->n_components; i++)
        if (!strcmp(e->components[i].name, name) && e->components[i].device == dev)
            return e->components[i].bytes;
    fail_msg("no component %s on device %d", name, dev);
    return 0;
}

static const char *extra_text(const struct vf_estimate *e, const char *key)
{
    for (size_t i = 0; i < e->n_extras; i++)
        if (!strcmp(e->extras[i].key, key))
            return e->extras[i].text;
    fail_msg("no extra %s", key);
    return NULL;
}

/*
 * F-OLL-04: Llama 3.1 70B at Q4_K_M, num_ctx 8192, on 24 GiB (25,769,803,776 B): 44 of the 81
 * layer slots (80 blocks + output) on the GPU. Derivation (H 8192, KV heads 8 x 128 = 1024,
 * I 28672, V 128256; Q4_K 144 B, Q5_K 176 B, Q6_K 210 B per 256):
 * - F-W-08 per block: q, o 2 x 37,748,736; k 4,718,592; gate, up 2 x 132,120,576; norms
 *   65,536; attn_v Q5_K (70B rule) 5,767,168, ffn_down Q4_K 132,120,576 = 482,410,496 B, or,
 *   where use_more_bits(i, 80) (i < 10, i >= 70, (i - 10) mod 3 = 2), attn_v and ffn_down
 *   Q6_K (6,881,280 + 192,675,840) = 544,079,872 B. Output: Q6_K 861,880,320 + norm 32,768.
 * - F-LCPP-02, ngl 44: i_gpu_start = 81 - 44 = 37: blocks 37..79 (43; 21 of them more-bits:
 *   70..79 and 39, 42, ..., 69) + output = 22 x 482,410,496 + 21 x 544,079,872 + 861,913,088
 *   = 22,900,621,312 B. KV (F-LCPP-04) 43 x 8192 x 2048 x 2 B = 1376 MiB. Compute (F-LCPP-06,
 *   FA on, output slot on the GPU): 2E + logits - E = 16 + 250.5 MiB + 28 x 512 =
 *   279,459,840 B. + 466 MiB CUDA + 457 MiB minimum: 25,590,757,376 <= 24 GiB (170.75 MiB
 *   left).
 * - ngl 45 adds block 36 ((36 - 10) mod 3 = 2: 544,079,872 B) and its 32 MiB of KV:
 *   26,168,391,680 B > 24 GiB, so 44 is the largest.
 */
static void test_partial_offload(void **s)
{
    (void)s;
    struct vf_workload w = {.ctx_tokens = 8192, .usable_bytes = 24 * GIB};
    vf_quant_parse("Q4_K_M", &w.weights, NULL);
    struct vf_estimate e = run("llama-3.1-70b", &w);
    assert_u64(extra(&e, "layers_model"), 81);
    assert_u64(extra(&e, "layers_offload"), 44);
    assert_u64(comp_on(&e, "model_buffer", 0), 22900621312ULL);
    assert_u64(comp_on(&e, "kv_buffer", 0), 1376 * MIB);
    /* F-LCPP-13 (issue 21): the runner's CUDA0 also runs the 37 CPU blocks (512-token ubatch),
     * copying their largest weight, block 0's Q6_K ffn_down 192,675,840 B, at the FFN point:
     * mask 8 + 4E 64 + 3F 3 x 28672 x 512 x 4 = 168 MiB, - E 16 = 224 MiB + 183.75 MiB + 28 x 512
     * = 427,571,200 B: gpu_bytes_used 25,590,757,376 + 148,111,360 = 25,738,868,736 B, less
     * llama.cpp's 466 MiB context (one CUDA context: Ollama's 457 MiB MinimumMemory is it):
     * 25,738,868,736 - 488,636,416 = 25,250,232,320 B; block 36 (544,079,872 B + 32 MiB KV)
     * would need about 25,827,866,624 B > 24 GiB (25,769,803,776), so 44 layers still */
    assert_u64(comp_on(&e, "compute_buffer", 0), 427571200ULL);
    assert_u64(extra(&e, "gpu_bytes_used"), 25250232320ULL);
    /* the other 37 blocks' KV stay on the host: 80 x 32 MiB in all (F-OLL-05's kv_bytes) */
    assert_u64(comp_on(&e, "kv_buffer", VF_DEV_HOST), 37 * 32 * MIB);
    assert_u64(extra(&e, "kv_bytes"), 80 * 32 * MIB);
    /* F-OLL-05: GPU 22,900,621,312 + 1376 MiB + 279,459,840 = 24,622,921,728 B of 45,476,345,856
     * (host: weights 42,512,531,456 - 22,900,621,312 = 19,611,910,144 + KV 1184 MiB): 54 % */
    assert_u64(comp_on(&e, "model_buffer", VF_DEV_HOST), 19611910144ULL);
    assert_string_equal(extra_text(&e, "processor"), "46%/54% CPU/GPU");
    /* F-OLL-06: the weights alone (42.5 GB) exceed the card, so no num_ctx fits; f16 KV */
    assert_u64(e.n_fixes, 2);
    assert_string_equal(e.fixes[0],
                        "no num_ctx keeps every layer on the GPU: a smaller quant or card");
    assert_string_equal(e.fixes[1],
                        "OLLAMA_FLASH_ATTENTION=1 OLLAMA_KV_CACHE_TYPE=q8_0: halves the KV cache");
}

/*
 * F-OLL-08 (issue 21): memory.go's planner (ollama@0.11.6) on measured-public.jsonl
 * ollama-pr12000 (gemma3:12b Q4_K_M, num_ctx 8192, 11.1 GiB free). Gemma 3 12B: E 3840, 16
 * heads of 256, 8 KV heads, vocab 262208 (config; the GGUF has 262144), window 1024, 48 blocks.
 * - KV: 8 global blocks x 8192 cells + 40 sliding x (1 x 1024 + 512) cells, x (256 + 256) x 8
 *   x 2 B = 1,040,187,392 B (992 MiB, measured 992.0 MiB).
 * - graph.full = max(4 x 512 x (E + V), 4 x 512 x (2 + ctx + 16 ctx + 2E + 2 x 256 x 16))
 *   = 2048 x 266048 = 544,866,304 B (measured 519.5 MiB: 262144 tokens give 544,735,232).
 * - graph.partial = 4 E 512 + E V 105/128 + 4 V 512 = 7,864,320 + 825,955,200 + 537,001,984 =
 *   1,370,821,504 B (Go's other term, 4 x 512 x (2E + 1 + 2 x 256 x 16 + 17 ctx) + ..., is
 *   smaller; measured 1.3 GiB).
 * - 48 of 49 layers on the GPU (measured 48): the projector goes with the output layer
 *   (0.7.1 on) and does not fit.
 */
static void test_memgo_row(void **s)
{
    (void)s;
    struct vf_workload w = {.ctx_tokens = 8192, .usable_bytes = 11 * GIB + GIB / 10};
    vf_quant_parse("Q4_K_M", &w.weights, NULL);
    w.engine_version = "0.11.6";
    struct vf_estimate e = run("gemma-3-12b", &w);
    assert_u64(extra(&e, "kv_bytes"), 1040187392ULL);
    assert_u64(extra(&e, "graph_full_bytes"), 544866304ULL);
    assert_u64(extra(&e, "graph_partial_bytes"), 1370821504ULL);
    assert_u64(extra(&e, "layers_offload"), 48);
    /* from 0.11.11 the runner's own buffers: all 49 layers fit (F-OLL-04) */
    w.engine_version = "0.11.11";
    e = run("gemma-3-12b", &w);
    assert_u64(extra(&e, "layers_offload"), 49);
}

/* F-OLL-09: the default num_ctx and num_parallel by release: 2048 and 4 (else 1) before 0.6.7,
 * 4096 and 2 before 0.9.7, 4096 and 1 before 0.15.5; no card: the default parallel stays. */
static void test_eras(void **s)
{
    (void)s;
    struct vf_workload w = {.engine_version = "0.5.2"};
    struct vf_estimate e = run("llama-3.1-8b", &w);
    assert_u64(extra(&e, "num_ctx"), 2048);
    assert_u64(extra(&e, "num_parallel"), 4);
    w.engine_version = "0.9.2";
    e = run("llama-3.1-8b", &w);
    assert_u64(extra(&e, "num_ctx"), 4096);
    assert_u64(extra(&e, "num_parallel"), 2);
    w.engine_version = "0.12.0";
    e = run("llama-3.1-8b", &w);
    assert_u64(extra(&e, "num_ctx"), 4096);
    assert_u64(extra(&e, "num_parallel"), 1);
}

/* F-FIT-07 (issue 21): Llama 3.1 70B Q4_K_M at num_ctx 8192 on a 24 GiB card runs with 44 of
 * 81 layers on the GPU (test_partial_offload): vf_fit answers yes with the spill, host bytes
 * 19,611,910,144 B of weights + 37 x 32 MiB of KV = 20,853,424,128 B (of which the weights:
 * e.spill.host_weight_bytes). The slowdown is the offload speed model's (F-SPD-17, issue 24),
 * checked by the golden ollama-70b-4090-json. */
static void test_spill(void **s)
{
    (void)s;
    struct vf_workload w = {.ctx_tokens = 8192, .usable_bytes = 24 * GIB, .engine = "ollama"};
    vf_quant_parse("Q4_K_M", &w.weights, NULL);
    struct vf_model m = th_model("llama-3.1-70b");
    struct vf_fit f;
    struct vf_error err = {0};
    assert_int_equal(vf_fit(th_arena, &m, &w, "24GiB", 24 * GIB, 1, &f, &err), VF_OK);
    assert_true(f.fits);
    assert_true(f.spill.on);
    assert_int_equal(f.spill.gpu_layers, 44);
    assert_int_equal(f.spill.cpu_layers, 37);
    assert_u64(f.spill.host_bytes, 20853424128ULL);
}

/* F-OLL-10 (issue 21): Ollama's layout (llm/server.go v0.15.5 assignLayers, findBestFit,
 * greedyFit) on sizes given by hand, GPUs sorted largest first. */
static void test_layout(void **s)
{
    (void)s;
    uint32_t count[2];
    uint64_t ten[10] = {10, 10, 10, 10, 10, 10, 10, 10, 10, 10};
    /* 5 layers of 10 B on 100 + 100 B: one GPU holds all 50 B: as few GPUs as hold them */
    uint64_t big[2] = {100, 100};
    assert_int_equal(vf__oll_layout(ten, 5, big, 2, count), 5);
    assert_int_equal(count[0], 5);
    assert_int_equal(count[1], 0);
    /* 10 layers on 60 + 50 B: no one GPU; both, the last layers on the last GPU. A factor
     * below 1 holds floor(60f / 10) + floor(50f / 10) <= 9 layers, so the factor stays 1:
     * GPU 1 takes layers 9-5 (50 B), GPU 0 layers 4-0 */
    uint64_t cap[2] = {60, 50};
    assert_int_equal(vf__oll_layout(ten, 10, cap, 2, count), 10);
    assert_int_equal(count[0], 5);
    assert_int_equal(count[1], 5);
    /* balanced: 4 layers on 100 + 100 B fit on GPU 0 alone (4 at factor 0.4) */
    assert_int_equal(vf__oll_layout(ten, 4, big, 2, count), 4);
    assert_int_equal(count[0], 4);
    /* 5 layers of 10 B and an output layer of 25 B on 30 + 20 B: the output fits only on GPU 0
     * and then nothing else does (1 placed); the second pass leaves the output to the CPU:
     * GPU 1 (20 B) takes layers 4, 3, GPU 0 (30 B) layers 2-0: 5 placed */
    uint64_t sz[6] = {10, 10, 10, 10, 10, 25}, small[2] = {30, 20};
    assert_int_equal(vf__oll_layout(sz, 6, small, 2, count), 5);
    assert_int_equal(count[0], 3);
    assert_int_equal(count[1], 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gemma3_row), cmocka_unit_test(test_default_ctx),
        cmocka_unit_test(test_parallel),   cmocka_unit_test(test_partial_offload),
        cmocka_unit_test(test_memgo_row),  cmocka_unit_test(test_eras),
        cmocka_unit_test(test_spill),      cmocka_unit_test(test_layout),
    };
    return cmocka_run_group_tests(tests, th_setup, th_teardown);
}
