/*
 * t_train.c - the training estimator (engine "pytorch", F-TRAIN-01..10): the ZeRO paper's
 * worked example, the guide's 16 bytes per parameter and its QLoRA sentences, LoRA trainable
 * parameters, the QLoRA base, gradient checkpointing and ZeRO-3 sharding. Every expected
 * number is derived in a comment with its formula ID.
 */
#include "th.h"

#include <string.h>

#include "internal.h"

/* weights + gradients + optimizer states + master copy on one GPU */
static uint64_t states(const struct vf_estimate *e)
{
    return th_component(e, "weights") + th_component(e, "gradients") +
           th_component(e, "optimizer_states") + th_component(e, "master_weights");
}

static struct vf_estimate train(const struct vf_model *m, struct vf_workload w)
{
    struct vf_estimate e;
    struct vf_error err = {0};
    w.task = VF_TASK_TRAIN;
    if (vf_estimate(th_arena, m, &w, &e, &err))
        fail_msg("%s", err.msg);
    return e;
}

/*
 * A synthetic dense model of `layers` layers of `per_layer` parameters each (one bf16 tensor
 * group per layer), the shape the ZeRO paper's accounting assumes: only the parameter count
 * matters to the model states.
 */
static struct vf_model synthetic(uint32_t layers, uint64_t per_layer)
{
    struct vf_model m;
    memset(&m, 0, sizeof m);
    m.id = "synthetic";
    m.task = VF_TASK_INFER;
    m.n_layers = layers;
    m.hidden = 1024;
    m.native_dtype = VF_DT_BF16;
    m.groups = vf_arena_alloc(th_arena, layers * sizeof *m.groups);
    assert_non_null(m.groups);
    for (uint32_t l = 0; l < layers; l++)
        m.groups[l] = (struct vf_tgroup){.cls = VF_T_OTHER,
                                         .layer = (int32_t)l,
                                         .n_params = per_layer,
                                         .row_elems = 1000,
                                         .n_tensors = 1};
    m.n_groups = layers;
    m.params = m.params_active = (uint64_t)layers * per_layer;
    return m;
}

/*
 * The ZeRO paper's worked example (Rajbhandari et al. 2020, Figure 1): 7.5B parameters,
 * N_d = 64, K = 12: 120 / 31.4 / 16.6 / 1.9 GB for stages 0/1/2/3. Synthetic model: 1000
 * layers of 7.5M = 7.5e9 parameters.
 *   F-TRAIN-01: weights 2P = 15e9, gradients 2P = 15e9, master 4P = 30e9;
 *   F-TRAIN-02: AdamW 8P = 60e9 (with the master copy, the paper's K = 12);
 *   F-TRAIN-03: stage 0: 15 + 15 + 30 + 60 = 120e9;
 *     stage 1: 15e9 + 15e9 + (30e9 + 60e9) / 64 = 30e9 + 1,406,250,000 = 31,406,250,000;
 *     stage 2: 15e9 + (15e9 + 30e9 + 60e9) / 64 = 15e9 + 1,640,625,000 = 16,640,625,000;
 *     stage 3: 120e9 / 64 = 1,875,000,000, plus the gathered layer (DeepSpeed's
 *       largest_layer_memory, 4 B x 7.5M = 30,000,000: bf16 weights + bf16 gradients)
 *       = 1,905,000,000, still the paper's "1.9 GB".
 */
static void zero_paper(void **state)
{
    (void)state;
    struct vf_model m = synthetic(1000, 7500000);
    assert_u64(m.params, 7500000000ULL);
    struct vf_workload w = {.gpus = 64, .train = {.method = VF_TRAIN_FULL}};

    w.train.zero = VF_ZERO_0;
    struct vf_estimate e = train(&m, w);
    assert_u64(th_component(&e, "weights"), 15000000000ULL);
    assert_u64(th_component(&e, "gradients"), 15000000000ULL);
    assert_u64(th_component(&e, "master_weights"), 30000000000ULL);
    assert_u64(th_component(&e, "optimizer_states"), 60000000000ULL);
    assert_u64(states(&e), 120000000000ULL);

    w.train.zero = VF_ZERO_1;
    e = train(&m, w);
    assert_u64(states(&e), 31406250000ULL); /* 31.4 GB */

    w.train.zero = VF_ZERO_2;
    e = train(&m, w);
    assert_u64(states(&e), 16640625000ULL); /* 16.6 GB */

    w.train.zero = VF_ZERO_3;
    e = train(&m, w);
    assert_u64(states(&e) - 30000000ULL, 1875000000ULL);
    assert_u64(states(&e), 1905000000ULL);                  /* 1.9 GB */
    assert_u64((states(&e) + 50000000) / 100000000, 19ULL); /* rounds to 1.9 GB */

    /* AUTO on several GPUs is ZeRO-3 (FSDP full shard) */
    w.train.zero = VF_ZERO_AUTO;
    e = train(&m, w);
    assert_u64(states(&e), 1905000000ULL);
    assert_int_equal(e.train.zero, VF_ZERO_3);
}

/*
 * The guide: "a full fine-tune with AdamW in mixed precision needs about 16 bytes per
 * parameter before activations: 2 weights, 2 gradients, 4 fp32 master copy, 8 optimizer
 * states; a 7B is about 112 GB" (F-TRAIN-01/02):
 *   synthetic 7B (700 layers x 10M): 16 x 7e9 = 112e9;
 *   Llama 3.1 8B: 16 x 8,030,261,248 = 128,484,179,968 (the guide row's "80 GB and more").
 */
static void guide_16_bytes(void **state)
{
    (void)state;
    struct vf_model m7 = synthetic(700, 10000000);
    struct vf_estimate e = train(&m7, (struct vf_workload){0});
    assert_u64(states(&e), 112000000000ULL);

    struct vf_model m = th_model("llama-3.1-8b");
    e = train(&m, (struct vf_workload){.ctx_tokens = 2048});
    assert_u64(m.params, 8030261248ULL);
    assert_u64(e.trainable_params, 8030261248ULL);
    assert_u64(th_component(&e, "weights"), 2 * 8030261248ULL);
    assert_u64(th_component(&e, "gradients"), 2 * 8030261248ULL);
    assert_u64(th_component(&e, "master_weights"), 4 * 8030261248ULL);
    assert_u64(th_component(&e, "optimizer_states"), 8 * 8030261248ULL);
    assert_u64(states(&e), 128484179968ULL);
    /* and no 80 GB card holds it (H100: 79.22 GiB usable) */
    assert_true(e.total_bytes > 85061533696ULL);
}

/*
 * F-TRAIN-02, the other optimizers on Llama 3.1 8B (every tensor a multiple of 256 elements
 * and at least 4096 of them):
 *   8-bit AdamW: 2P + 2 x 4 B x P/256 = 16,060,522,496 + 250,945,664 = 16,311,468,160;
 *   SGD with momentum: 4P = 32,121,044,992.
 */
static void optimizers(void **state)
{
    (void)state;
    struct vf_model m = th_model("llama-3.1-8b");
    struct vf_workload w = {.train = {.optimizer = VF_OPT_ADAMW8BIT}};
    struct vf_estimate e = train(&m, w);
    assert_u64(th_component(&e, "optimizer_states"), 16311468160ULL);
    w.train.optimizer = VF_OPT_SGD;
    e = train(&m, w);
    assert_u64(th_component(&e, "optimizer_states"), 32121044992ULL);
    assert_string_equal(vf_optimizer_name(VF_OPT_ADAMW8BIT), "adamw8bit");
    assert_string_equal(vf_train_method_name(VF_TRAIN_QLORA), "qlora");
}

/*
 * F-TRAIN-04: LoRA r = 16 on every linear layer of Llama 3.1 8B (h 4096, I 14336, 8 KV heads
 * x 128 = 1024): r x (d_in + d_out) per tensor, per layer
 *   q 16 x (4096 + 4096) = 131,072     k 16 x (4096 + 1024) = 81,920
 *   v 16 x (4096 + 1024) =  81,920     o 16 x (4096 + 4096) = 131,072
 *   gate, up 16 x (4096 + 14336) = 294,912 each; down 16 x (14336 + 4096) = 294,912
 *   = 1,310,720 per layer; x 32 layers = 41,943,040 (PEFT prints the same for Llama 3 8B).
 * Adapters fp32: weights 4 B, gradients 4 B (167,772,160), AdamW 8 B (335,544,320), no
 * master copy; the base stays bf16: 16,060,522,496 + 167,772,160 = 16,228,294,656.
 */
static void lora_params(void **state)
{
    (void)state;
    struct vf_model m = th_model("llama-3.1-8b");
    struct vf_estimate e = train(&m, (struct vf_workload){.train = {.method = VF_TRAIN_LORA}});
    assert_u64(e.trainable_params, 41943040ULL);
    assert_int_equal(e.train.lora_rank, 16);
    assert_u64(e.weights_bytes, 16060522496ULL);
    assert_u64(th_component(&e, "weights"), 16228294656ULL);
    assert_u64(th_component(&e, "gradients"), 167772160ULL);
    assert_u64(th_component(&e, "optimizer_states"), 335544320ULL);
    assert_u64(th_component(&e, "master_weights"), 0);

    /* r = 8: half of it */
    e = train(&m, (struct vf_workload){.train = {.method = VF_TRAIN_LORA, .lora_rank = 8}});
    assert_u64(e.trainable_params, 20971520ULL);
}

/*
 * F-TRAIN-05 / F-W-06: the QLoRA base of Llama 3.1 8B in NF4. Per tensor of n elements:
 * n/2 + n/64 (uint8 absmax) + 4 x ceil(n/64/256) + 68:
 *   q, o (16,777,216):   8,388,608 + 262,144 + 4,096 + 68 =  8,654,916
 *   k, v (4,194,304):    2,097,152 +  65,536 + 1,024 + 68 =  2,163,780
 *   gate, up, down (58,720,256): 29,360,128 + 917,504 + 14,336 + 68 = 30,292,036
 *   per layer 2 x 8,654,916 + 2 x 2,163,780 + 3 x 30,292,036 = 112,513,500; x 32 = 3,600,432,000
 *   bf16 rest: (2 x 525,336,576 + 65 x 4096) x 2 = 2,101,878,784
 *   = 5,702,310,784 B (5.31 GiB).
 * The dequantization buffer: the largest linear in bf16, 58,720,256 x 2 = 117,440,512.
 */
static void qlora_base(void **state)
{
    (void)state;
    struct vf_model m = th_model("llama-3.1-8b");
    struct vf_estimate e = train(&m, (struct vf_workload){.train = {.method = VF_TRAIN_QLORA}});
    assert_u64(e.weights_bytes, 5702310784ULL);
    assert_int_equal(e.weights.kind, VF_QK_NF4);
    assert_u64(e.trainable_params, 41943040ULL);
    assert_u64(th_component(&e, "weights"), 5702310784ULL + 167772160ULL + 117440512ULL);
}

/*
 * F-TRAIN-06/07 on Llama 3.1 8B, seq 2048 x batch 1. Per token per layer:
 *   norms 2 x (4 x 4096 + 4) = 32,776 (fp32 inputs + rstd)
 *   attention 2h + 2q + 2kv + 2kv + 2o + 4nh = 8192 + 8192 + 2048 + 2048 + 8192 + 128 = 28,800
 *   SwiGLU MLP 2h + 8I = 8192 + 114,688 = 122,880
 *   = 184,456; final norm + lm_head input 4 x 4096 + 4 + 2 x 4096 = 24,580.
 * Without checkpointing: 32 x 184,456 + 24,580 = 5,927,172 B/token x 2048 = 12,138,848,256.
 * With it: 32 x 2 x 4096 + 184,456 + 24,580 = 471,180 B/token x 2048 = 964,976,640.
 * F-TRAIN-08 logits: 2048 x 128,256 x 12 = 3,152,019,456 either way.
 */
static void checkpointing(void **state)
{
    (void)state;
    struct vf_model m = th_model("llama-3.1-8b");
    struct vf_workload w = {.ctx_tokens = 2048};
    struct vf_estimate e = train(&m, w);
    assert_u64(th_component(&e, "activations"), 12138848256ULL);
    assert_u64(th_component(&e, "logits"), 3152019456ULL);
    uint64_t before = e.total_bytes;
    w.train.grad_checkpointing = true;
    e = train(&m, w);
    assert_u64(th_component(&e, "activations"), 964976640ULL);
    assert_u64(th_component(&e, "logits"), 3152019456ULL);
    assert_true(e.total_bytes < before);
    /* activations scale with batch x sequence */
    w.train.batch = 2;
    e = train(&m, w);
    assert_u64(th_component(&e, "activations"), 2 * 964976640ULL);
    assert_u64(e.users, 2);
}

/*
 * F-TRAIN-03: ZeRO-3 over 8 GPUs (the default on several cards) divides every model state
 * of Llama 3.1 8B by 8 and adds the largest gathered unit, the 525,336,576-parameter
 * embedding in bf16 (1,050,673,152 B > a layer's 436,224,000), to weights and gradients:
 *   weights, gradients 16,060,522,496 / 8 + 1,050,673,152 = 3,058,238,464 each
 *   master 32,121,044,992 / 8 = 4,015,130,624; AdamW 64,242,089,984 / 8 = 8,030,261,248.
 * Activations are per GPU (data parallel): not divided.
 */
static void zero3_8gpus(void **state)
{
    (void)state;
    struct vf_model m = th_model("llama-3.1-8b");
    struct vf_estimate one = train(&m, (struct vf_workload){.ctx_tokens = 2048});
    struct vf_estimate e = train(&m, (struct vf_workload){.ctx_tokens = 2048, .gpus = 8});
    assert_u64(th_component(&e, "weights"), 3058238464ULL);
    assert_u64(th_component(&e, "gradients"), 3058238464ULL);
    assert_u64(th_component(&e, "master_weights"), 4015130624ULL);
    assert_u64(th_component(&e, "optimizer_states"), 8030261248ULL);
    assert_u64(th_component(&e, "activations"), th_component(&one, "activations"));
    assert_int_equal(e.gpus, 8);
    assert_true(e.total_bytes < one.total_bytes / 3);
    /* ZeRO-0 (plain DDP) on 8 GPUs holds everything on each */
    e = train(&m,
              (struct vf_workload){.ctx_tokens = 2048, .gpus = 8, .train = {.zero = VF_ZERO_0}});
    assert_u64(e.total_bytes, one.total_bytes);
}

/*
 * The guide: "an 8B trains with QLoRA in 10-16 GB, a 70B needs about 48 GB" (with gradient
 * checkpointing, as QLoRA recipes run; seq 2048, batch 1). F-TRAIN-10 totals:
 *   8B: 5.31 GiB NF4 + adapter states 0.6 GiB + 0.9 GiB activations + 2.9 GiB logits +
 *       overhead = 11.3 GB;
 *   70B: 37.9 GiB NF4 + 207M adapter params x 16 B + 3.3 GiB activations + 2.9 GiB logits
 *       + overhead = 50.8 GB (within 10 % of 48 GB).
 */
static void guide_qlora(void **state)
{
    (void)state;
    struct vf_model m = th_model("llama-3.1-8b");
    struct vf_workload w = {.ctx_tokens = 2048,
                            .train = {.method = VF_TRAIN_QLORA, .grad_checkpointing = true}};
    struct vf_estimate e = train(&m, w);
    assert_true(e.total_bytes >= 10000000000ULL && e.total_bytes <= 16000000000ULL);
    struct vf_model m70 = th_model("llama-3.1-70b");
    e = train(&m70, w);
    assert_true(e.total_bytes >= 43200000000ULL && e.total_bytes <= 52800000000ULL);
}

/* Defaults are said, knobs out of range and unmodelled storage are errors. */
static void defaults_and_errors(void **state)
{
    (void)state;
    struct vf_model m = th_model("llama-3.1-8b");
    struct vf_estimate e = train(&m, (struct vf_workload){0});
    assert_u64(e.ctx_tokens, 2048);
    assert_u64(e.users, 1);
    assert_string_equal(e.engine, "pytorch");
    assert_int_equal(e.task, VF_TASK_TRAIN);
    assert_int_equal(e.n_components, 7);
    assert_u64(e.total_bytes, vf__gpu_total(&e, 0));
    bool said = false;
    for (size_t i = 0; i < e.n_assumptions; i++)
        said |= strstr(e.assumptions[i], "2048 tokens") != NULL;
    assert_true(said);

    struct vf_error err = {0};
    struct vf_workload w = {.task = VF_TASK_TRAIN, .train = {.method = VF_TRAIN_FULL}};
    assert_int_equal(vf_quant_parse("nf4", &w.weights, &err), VF_OK);
    assert_int_equal(vf_estimate(th_arena, &m, &w, &e, &err), VF_EUNSUPPORTED);
    w.train.method = VF_TRAIN_LORA; /* LoRA on a frozen NF4 base is QLoRA by another name */
    assert_int_equal(vf_estimate(th_arena, &m, &w, &e, &err), VF_OK);
    assert_u64(e.weights_bytes, 5702310784ULL);
    w = (struct vf_workload){.task = VF_TASK_TRAIN, .train = {.batch = 1}};
    w.ctx_tokens = VF_MAX_CTX_TOKENS + 1;
    assert_int_equal(vf_estimate(th_arena, &m, &w, &e, &err), VF_ERANGE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(zero_paper),          cmocka_unit_test(guide_16_bytes),
        cmocka_unit_test(optimizers),          cmocka_unit_test(lora_params),
        cmocka_unit_test(qlora_base),          cmocka_unit_test(checkpointing),
        cmocka_unit_test(zero3_8gpus),         cmocka_unit_test(guide_qlora),
        cmocka_unit_test(defaults_and_errors),
    };
    return cmocka_run_group_tests(tests, th_setup, th_teardown);
}
