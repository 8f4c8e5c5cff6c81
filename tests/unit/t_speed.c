/* SPDX-License-Identifier: Apache-2.0 */
/*
 * t_speed.c - the throughput model (docs/FORMULAS.md F-SPD-01..05) on a made-up card, its
 * expected tokens/s derived by hand in the comments from the constants of speed.c.
 */
#include "th.h"

#include <math.h>
#include <string.h>

/* A card of round figures: 1000 GB/s, 250 TFLOPS fp16/bf16, 500 fp8/int8, PCIe 4 x16. */
static struct vf_gpu_spec card(void)
{
    struct vf_gpu_spec g = {0};
    g.id = "test-card";
    g.bandwidth_gbps = 1000;
    g.tflops_fp16 = g.tflops_bf16 = 250;
    g.tflops_fp8 = g.tflops_int8 = 500;
    g.pcie_gen = 4;
    g.pcie_lanes = 16;
    g.nvlink_gbps = 0;
    return g;
}

/* A dense 8e9-parameter model, 32 layers of 32 heads x 128, 4 GB of weights, 128 KiB KV/token. */
static struct vf_speed_in dense(void)
{
    struct vf_speed_in in = {0};
    in.params = in.params_active = 8000000000ULL;
    in.n_layers = 32;
    in.n_heads = 32;
    in.head_dim = 128;
    in.hidden = 4096;
    in.weights_bytes = 4000000000ULL;
    in.kv_bytes_per_token = 131072;
    in.weights = "Q4_K_M";
    in.gguf = true;
    in.users = 1;
    return in;
}

static void near(double got, double want)
{
    if (fabs(got - want) > want * 1e-3)
        fail_msg("got %.3f, expected %.3f", got, want);
}

static void gguf_decode_and_prefill(void **state)
{
    (void)state;
    struct vf_gpu_spec g = card();
    struct vf_speed_in in = dense();
    struct vf_speed s;
    in.in_tokens = 1;
    in.out_tokens = 512;
    vf_speed_llm(&g, &in, &s);
    assert_true(s.known);
    assert_string_equal(s.prec, "int8"); /* llama.cpp's quantized matmuls (MMQ) */
    /* F-SPD-01: context l = 1 + 512/2 = 257; bytes = 4e9 + 131072 x 257 = 4033685504;
     * / (1000e9 x 0.80) = 5.042107 ms; + 32 layers x 90 us = 2.88 ms -> 7.922107 ms:
     * 126.229 tokens/s (compute: 16.13e9 FLOP / (500e12 x 0.17) = 0.19 ms, not binding) */
    near(s.decode_tps, 126.229);
    assert_false(s.compute_bound);
    /* the range F-SPD-05: x 0.80 .. x 1.20 */
    near(s.decode_lo, 126.229 * 0.80);
    near(s.decode_hi, 126.229 * 1.20);
    in.in_tokens = 512;
    in.out_tokens = 1;
    vf_speed_llm(&g, &in, &s);
    /* F-SPD-02: 2 x 8e9 x 512 = 8.192e12 + attention 4 x 32 x 4096 x 256 x 512 = 6.872e10
     * -> 8.26072e12 FLOP / (500e12 x 0.17) = 97.185 ms (weights once: 5 ms) -> 5268.3 t/s */
    near(s.prefill_tps, 5268.3);
    /* layer split: two cards run one sequence no faster (llama.cpp --split-mode layer) */
    in.gpus = 2;
    vf_speed_llm(&g, &in, &s);
    near(s.prefill_tps, 5268.3);
    /* 16-bit GGUF: cuBLAS fp16 (FP16 accumulate), its own efficiency 0.45:
     * 8.26072e12 / (250e12 x 0.45) = 73.429 ms -> 6972.8 t/s */
    in.weights = "F16";
    vf_speed_llm(&g, &in, &s);
    assert_string_equal(s.prec, "fp16");
    near(s.prefill_tps, 6972.8);
}

static void server_batch_and_moe(void **state)
{
    (void)state;
    struct vf_gpu_spec g = card();
    struct vf_speed_in in = dense();
    struct vf_speed s;
    in.gguf = false;
    in.weights = "fp8";
    in.users = 64;
    in.max_users = 32;
    in.in_tokens = 1;
    in.out_tokens = 2;
    vf_speed_llm(&g, &in, &s);
    assert_string_equal(s.prec, "fp8");
    assert_u64(s.batch, 32); /* min(users, the sequences that fit) */
    /* F-SPD-01 at b = 32, l = 2: bytes 4e9 + 32 x 131072 x 2 = 4008388608 / (1000e9 x 0.90)
     * = 4.453765 ms; compute 32 x (16e9 + 4 x 32 x 4096 x 2) / (500e12 x 0.70) = 1.462818 ms;
     * memory binds: 1 / 4.453765 ms = 224.53 tokens/s per sequence */
    near(s.decode_tps, 224.53);
    /* MoE at one sequence reads the active share: 30e9 total, 3e9 active, 8 of 128 experts:
     * expert 0.225e9 each, shared 1.2e9; (1.2e9 + 28.8e9 x 8/128) / 30e9 = 0.1 of 40e9 B */
    in.params = 30000000000ULL;
    in.params_active = 3000000000ULL;
    in.n_experts = 128;
    in.n_experts_used = 8;
    in.weights_bytes = 40000000000ULL;
    in.users = 1;
    in.max_users = 0;
    vf_speed_llm(&g, &in, &s);
    /* bytes 4e9 + 131072 x 2 = 4000262144 / 900e9 = 4.444736 ms -> 224.98 tokens/s */
    near(s.decode_tps, 224.98);
}

static void unknown_card(void **state)
{
    (void)state;
    struct vf_gpu_spec g = card();
    struct vf_speed_in in = dense();
    struct vf_speed s;
    g.tflops_int8 = 0;
    vf_speed_llm(&g, &in, &s);
    assert_false(s.known);
    assert_non_null(strstr(s.why, "tensor throughput"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gguf_decode_and_prefill),
        cmocka_unit_test(server_batch_and_moe),
        cmocka_unit_test(unknown_card),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
