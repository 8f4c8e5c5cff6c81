/* SPDX-License-Identifier: Apache-2.0 */
/*
 * t_speed.c - the throughput model (docs/FORMULAS.md F-SPD-01..05, F-SPD-07) on a made-up card, its
 * expected tokens/s derived by hand in the comments from the constants of speed.c.
 */
#include "th.h"
#include "internal.h"

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
    in.in_tokens = 1; /* one token of prompt, 512 of answer: a decode run */
    in.out_tokens = 512;
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
    vf_speed_llm(&g, &in, &s);
    assert_true(s.known);
    assert_string_equal(s.prec, "int8"); /* llama.cpp's quantized matmuls (MMQ) */
    /* F-SPD-01: context l = 1 + 512/2 = 257; bytes = 4e9 + 131072 x 257 = 4033685504;
     * / (1000e9 x 0.92) = 4.384441 ms (the card states no SMs: no per-SM bound); + 32 layers
     * x 50 us = 1.6 ms -> 5.984441 ms: 167.100 tokens/s (compute: 16.13e9 FLOP / (500e12 x
     * 0.16) = 0.20 ms, not binding) */
    near(s.decode_tps, 167.100);
    assert_false(s.compute_bound);
    near(s.decode_fixed_s, 1.6e-3);
    /* the range F-SPD-05: x 0.80 .. x 1.20 */
    near(s.decode_lo, 167.100 * 0.80);
    near(s.decode_hi, 167.100 * 1.20);
    in.in_tokens = 512;
    in.out_tokens = 1;
    vf_speed_llm(&g, &in, &s);
    /* F-SPD-02: 2 x 8e9 x 512 = 8.192e12 + attention 4 x 32 x 4096 x 256 x 512 = 6.872e10
     * -> 8.26072e12 FLOP / (500e12 x 0.16) = 103.259 ms (weights once: 4.3 ms) -> 4958.4 t/s */
    near(s.prefill_tps, 4958.4);
    /* layer split: two cards run one prompt no faster (llama.cpp --split-mode layer), and the
     * one boundary hands on 512 x 4096 x 4 B = 8388608 B of F32 hidden state over PCIe 4 x16
     * (0.985 x 2 x 16 = 31.52 GB/s: 0.266136 ms) after 400 us: 103.259 + 0.666136 = 103.925 ms
     * -> 4926.6 t/s */
    in.gpus = 2;
    vf_speed_llm(&g, &in, &s);
    near(s.prefill_tps, 4926.6);
    in.gpus = 1;
    /* 16-bit GGUF: cuBLAS fp16 (FP16 accumulate), its own efficiency 0.45:
     * 8.26072e12 / (250e12 x 0.45) = 73.429 ms -> 6972.8 t/s */
    in.weights = "F16";
    vf_speed_llm(&g, &in, &s);
    assert_string_equal(s.prec, "fp16");
    near(s.prefill_tps, 6972.8);
}

/* F-SPD-01: llama.cpp's kernels are bounded per SM and cycle; a layer split adds a hand-over. */
static void gguf_per_sm_bound_and_split(void **state)
{
    (void)state;
    struct vf_gpu_spec g = card();
    g.sms = 100; /* 100 SMs at 1 GHz */
    g.boost_mhz = 1000;
    struct vf_speed_in in = dense();
    struct vf_speed s;
    vf_speed_llm(&g, &in, &s);
    /* 5.75 B/SM-cycle x 100 SMs x 1e9 cycles/s = 575 GB/s < 0.92 x 1000 GB/s: it binds;
     * 4033685504 B / 575e9 = 7.015105 ms + 1.6 ms = 8.615105 ms -> 116.076 tokens/s */
    near(s.bw_gbps, 575);
    near(s.decode_tps, 116.076);
    /* two cards of a layer split: + 1 hand-over x 400 us = 9.015105 ms -> 110.925 tokens/s */
    in.gpus = 2;
    vf_speed_llm(&g, &in, &s);
    near(s.decode_fixed_s, 2.0e-3);
    near(s.decode_tps, 110.925);
    /* 16-bit weights run their own kernel: 6.35 B/SM-cycle x 100 x 1e9 = 635 GB/s; the F16
     * model is 4e9 B here too (made up): 4033685504 / 635e9 = 6.352261 ms + 2.0 ms (32 layers
     * and the hand-over) = 8.352261 ms -> 119.728 tokens/s */
    in.weights = "F16";
    vf_speed_llm(&g, &in, &s);
    near(s.bw_gbps, 635);
    near(s.decode_tps, 119.728);
    in.weights = "Q4_K_M";
    /* a fast core against a slow memory: 5.75 x 100 x 3e9 = 1725 GB/s > 920: memory binds */
    g.boost_mhz = 3000;
    in.gpus = 1;
    vf_speed_llm(&g, &in, &s);
    near(s.bw_gbps, 920);
    near(s.decode_tps, 167.100);
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

/* F-SPD-07: below the RTX 4090's power density an NVIDIA card's tensor rate is its clock held
 * at the power limit, f ~ P^(1/3); memory-bound decode does not change. */
static void power_limited_clock(void **state)
{
    (void)state;
    struct vf_gpu_spec g = card();
    struct vf_speed_in in = dense();
    struct vf_speed full, held;
    in.in_tokens = 512;
    in.out_tokens = 1;
    vf_speed_llm(&g, &in, &full); /* no vendor, SMs or power: the whole boost clock */
    near(full.power_share, 1.0);
    near(full.prefill_tps, 4958.4); /* gguf_decode_and_prefill's figure */
    /* RTX 6000 Ada's figures (gpus.tsv): 300 W / (142 SMs x 2.505 GHz) = 0.843384 W per
     * SM-GHz against the RTX 4090's 450 / (128 x 2.52) = 1.395089: (0.604534)^(1/3) = 0.845553
     * of the boost clock; the prompt is compute bound, so 4958.4 x 0.845553 = 4192.6 t/s */
    g.vendor = "NVIDIA";
    g.sms = 142;
    g.boost_mhz = 2505;
    g.tdp_w = 300;
    vf_speed_llm(&g, &in, &held);
    near(held.power_share, 0.845553);
    near(held.prefill_tps, 4192.6);
    /* decode reads memory at 0.92 x 1000 GB/s (gguf_decode_and_prefill), the same with or without
     * the power limit (the per-SM bound 5.75 x 142 x 2.505e9 = 2045 GB/s does not bind) */
    in.in_tokens = 1;
    in.out_tokens = 512;
    vf_speed_llm(&g, &in, &held);
    near(held.decode_tps, 167.100);
    /* at the RTX 4090's own density, and above it, the whole clock */
    g.sms = 128;
    g.boost_mhz = 2520;
    g.tdp_w = 450;
    vf_speed_llm(&g, &in, &held);
    near(held.power_share, 1.0);
    g.tdp_w = 700;
    vf_speed_llm(&g, &in, &held);
    near(held.power_share, 1.0);
    /* another vendor: a CU is not an SM, no anchor */
    g.vendor = "AMD";
    g.tdp_w = 100;
    vf_speed_llm(&g, &in, &held);
    near(held.power_share, 1.0);
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

/* F-SPD-17: a prompt with 1 GB of layers in host memory (the test card: PCIe 4 x16 =
 * 16 x 0.985 x 2 = 31.52 GB/s x 0.91 TLP = 28.683 GB/s; host 100 GB/s x ETA_HOST 0.54 = 54 GB/s;
 * the card's decode read 1000 x 0.92 = 920 GB/s). All-GPU prefill 1000 tokens/s by hand. */
static double prompt_tps(double p)
{
    struct vf_gpu_spec g = card();
    struct vf_model m = {0};
    m.params = 8000000000ULL;    /* no vocab: the token embedding is not taken off */
    static struct vf_estimate e; /* large: not on the stack */
    memset(&e, 0, sizeof e);
    e.task = VF_TASK_INFER;
    e.weights_bytes = 4000000000ULL;
    e.components[0] = (struct vf_component){
        .name = "model_buffer", .bytes = 1000000000ULL, .device = VF_DEV_HOST};
    e.n_components = 1;
    e.host_bytes = e.components[0].bytes;
    struct vf_workload w = {0};
    w.in_tokens = (uint64_t)p;
    w.host_gbps = 100;
    struct vf_speed sp = {0};
    sp.known = true;
    sp.decode_tps = 100;
    sp.prefill_tps = 1000;
    sp.eta_bw = 0.92;
    struct vf_job_speed j;
    vf__job_speed(NULL, &g, &m, &e, &w, 1, &sp, &j);
    return sp.prefill_tps;
}

static void offload_prompt_regimes(void **state)
{
    (void)state;
    /* 971 tokens: micro-batches of 512 and 459, both >= 32 (ggml-cuda's offload_op): the
     * layers cross the slot twice: 0.971 s + 2 x 1e9 / 28.683e9 = 0.971 + 0.069728 s ->
     * 971 / 1.040728 = 933.0 tokens/s */
    near(prompt_tps(971), 933.0);
    /* 544 = 512 + 32: the 32-token tail is offloaded too: 0.544 + 0.069728 -> 886.4 */
    near(prompt_tps(544), 886.4);
    /* 20 tokens: under 32, the CPU runs its layers, read once at the host's bandwidth less
     * what the card would have spent on them: 0.020 + 1e9 / 54e9 - 1e9 / 920e9 =
     * 0.020 + 0.0185185 - 0.0010870 = 0.0374315 s -> 534.3 tokens/s (a copy would be 274.3) */
    near(prompt_tps(20), 534.3);
    /* 530 = 512 + 18: one copy and the 18-token tail on the CPU: 0.530 + 0.034864 + 0.0174315
     * = 0.5822955 s -> 910.2 tokens/s */
    near(prompt_tps(530), 910.2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gguf_decode_and_prefill),
        cmocka_unit_test(gguf_per_sm_bound_and_split),
        cmocka_unit_test(server_batch_and_moe),
        cmocka_unit_test(power_limited_clock),
        cmocka_unit_test(unknown_card),
        cmocka_unit_test(offload_prompt_regimes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
