/*
 * t_explain.c - vf_explain(): causes, evidence numbers, fix order and computed savings, on
 * events built by hand (the scanner is tested on its own).
 */
#include "th.h"

#define GiB(x) ((uint64_t)((x)*1073741824.0))

static struct vf_oom_event ev_base(const char *tool, const char *source)
{
    struct vf_oom_event e = {0};
    e.pattern = "test";
    e.tool = tool;
    e.source = source;
    e.backend = "cuda";
    e.device = 0;
    e.requested_bytes = e.total_bytes = e.free_bytes = e.allocated_bytes = VF_UNKNOWN;
    e.reserved_bytes = e.reserved_unallocated_bytes = e.non_pytorch_bytes = VF_UNKNOWN;
    e.step = VF_UNKNOWN;
    e.line = 1;
    return e;
}

static struct vf_oom_context ctx_base(void)
{
    struct vf_oom_context c = {0};
    c.ctx_tokens = c.batch = c.first_step = c.last_step = VF_UNKNOWN;
    return c;
}

static struct vf_explain run(const struct vf_oom_event *e, const struct vf_oom_context *c)
{
    struct vf_explain x;
    struct vf_error err = {0};
    struct vf_explain_opts o = {.catalog = th_cat};
    assert_int_equal(vf_explain(th_arena, e, 1, 1, c, &o, &x, &err), VF_OK);
    return x;
}

static bool has_evidence(const struct vf_explain *x, const char *s)
{
    for (size_t i = 0; i < x->diagnosis.n_evidence; i++)
        if (strstr(x->diagnosis.evidence[i], s))
            return true;
    return false;
}

/* The guide's message: 2 GiB asked, 1.12 free of 23.65, 20.10 allocated, 1.31 cached.
 * 20.10 / 23.65 = 85.0 % >= 80 %: too large; 1.31 < 2.00 and 5.5 % < 10 %: frag minor. */
static void test_pytorch_22(void **state)
{
    (void)state;
    struct vf_oom_event e = ev_base("pytorch", "pytorch");
    e.requested_bytes = GiB(2.0);
    e.total_bytes = GiB(23.65);
    e.free_bytes = GiB(1.12);
    e.allocated_bytes = GiB(20.10);
    e.reserved_unallocated_bytes = GiB(1.31);
    struct vf_oom_context c = ctx_base();
    struct vf_explain x = run(&e, &c);
    assert_string_equal(x.diagnosis.cause, "workload_too_large");
    assert_int_equal(x.diagnosis.n_secondary, 0);
    /* 2.00 - 1.12 = 0.88 GiB, printed as 901.12 MiB */
    assert_true(has_evidence(&x, "shortfall = requested 2.00 GiB - free 1.12 GiB = 901.12 MiB"));
    assert_true(has_evidence(&x, "1.31 GiB = 5.5 % of the card"));
    assert_true(has_evidence(&x, "85.0 % of the card"));
    /* training fixes in the guide's order; no model: savings unknown, the model missing */
    assert_string_equal(x.fixes[0].title, "smaller micro-batch, same effective batch");
    assert_string_equal(x.fixes[1].command, "gradient_checkpointing=True");
    assert_u64(x.fixes[0].saves_bytes, VF_UNKNOWN);
    assert_non_null(strstr(x.fixes[0].missing, "pass --model"));
    /* no estimate: the bigger card by rule b, usable > 23.65 + 0.88 GiB */
    assert_non_null(x.bigger_card);
    assert_true(x.bigger_card->usable_bytes > GiB(24.5));
    assert_non_null(vf_render_explain_json(th_arena, &x));
    assert_non_null(vf_render_explain_text(th_arena, &x, NULL));
}

/* Another process holds 20 GiB of 23.65 (84.6 %): other_process, and killing it saves 20. */
static void test_other_process(void **state)
{
    (void)state;
    struct vf_oom_event e = ev_base("pytorch", "pytorch");
    e.requested_bytes = GiB(1.0);
    e.total_bytes = GiB(23.65);
    e.free_bytes = GiB(0.5);
    e.allocated_bytes = GiB(2.0);
    e.reserved_unallocated_bytes = 0;
    e.procs[0].pid = 1234;
    e.procs[0].bytes = GiB(20.0);
    e.n_procs = 1;
    struct vf_oom_context c = ctx_base();
    struct vf_explain x = run(&e, &c);
    assert_string_equal(x.diagnosis.cause, "other_process");
    assert_true(has_evidence(&x, "PID 1234 20.00 GiB"));
    assert_string_equal(x.fixes[0].command, "nvidia-smi; ps aux | grep python; kill 1234");
    assert_u64(x.fixes[0].saves_bytes, GiB(20.0));
    assert_null(x.bigger_card);
}

/* vLLM max seq len with the model known: savings are estimate(before) - estimate(after). */
static void test_vllm_known(void **state)
{
    (void)state;
    struct vf_oom_event e = ev_base("vllm", "vllm");
    e.total_bytes = GiB(23.65);
    e.text = "ValueError: The model's max seq len (131072) is larger than the maximum number of "
             "tokens that can be stored in KV cache (43232).";
    struct vf_oom_context c = ctx_base();
    c.model = "meta-llama/Llama-3.1-8B-Instruct";
    c.ctx_tokens = 131072;
    struct vf_explain x = run(&e, &c);
    assert_string_equal(x.diagnosis.cause, "kv_cache");
    assert_string_equal(x.fixes[0].command, "--gpu-memory-utilization 0.95");
    assert_string_equal(x.fixes[1].command, "--max-model-len 65536");
    assert_string_equal(x.fixes[2].command, "--kv-cache-dtype fp8");
    /* recompute each saving with the estimator directly */
    struct vf_model m = th_model("meta-llama/Llama-3.1-8B-Instruct");
    struct vf_workload w = {.engine = "vllm", .ctx_tokens = 131072, .usable_bytes = GiB(23.65)};
    struct vf_estimate before, after;
    struct vf_error err = {0};
    assert_int_equal(vf_estimate(th_arena, &m, &w, &before, &err), VF_OK);
    w.ctx_tokens = 65536;
    assert_int_equal(vf_estimate(th_arena, &m, &w, &after, &err), VF_OK);
    assert_u64(x.fixes[1].saves_bytes, before.total_bytes - after.total_bytes);
    /* 128k tokens x 128 KiB = 16 GiB of KV at bf16; half of it at 64k */
    assert_true(x.fixes[1].saves_bytes >= GiB(7.9));
    w.ctx_tokens = 131072;
    w.kv_dtype = VF_DT_FP8;
    assert_int_equal(vf_estimate(th_arena, &m, &w, &after, &err), VF_OK);
    assert_u64(x.fixes[2].saves_bytes, before.total_bytes - after.total_bytes);
    /* 0.95 - 0.90 of 23.65 GiB more budget */
    assert_true(x.fixes[0].saves_bytes > GiB(1.18) && x.fixes[0].saves_bytes < GiB(1.19));
}

/* A training run that failed after 900 steps: a leak, with loss.item() first. */
static void test_leak(void **state)
{
    (void)state;
    struct vf_oom_event e = ev_base("pytorch", "pytorch");
    e.requested_bytes = GiB(0.5);
    e.total_bytes = GiB(23.65);
    e.free_bytes = GiB(0.2);
    e.allocated_bytes = GiB(15.0);
    e.reserved_unallocated_bytes = GiB(0.1);
    e.step = 900;
    struct vf_oom_context c = ctx_base();
    struct vf_explain x = run(&e, &c);
    assert_string_equal(x.diagnosis.cause, "leak");
    assert_true(has_evidence(&x, "ran 900 steps"));
    assert_string_equal(x.fixes[0].command, "total_loss += loss.item()");
    assert_null(x.bigger_card);
}

static void test_not_vram_host_ram(void **state)
{
    (void)state;
    struct vf_oom_event e = ev_base("vllm", "triton");
    e.requested_bytes = 66560;
    e.total_bytes = 65536;
    e.text = "out of resource: shared memory, Required: 66560, Hardware limit: 65536.";
    struct vf_oom_context c = ctx_base();
    struct vf_explain x = run(&e, &c);
    assert_string_equal(x.diagnosis.cause, "not_vram");
    assert_int_equal(x.diagnosis.n_secondary, 0);
    assert_int_equal(x.n_fixes, 1);
    assert_null(x.bigger_card);

    struct vf_oom_event k = ev_base("pytorch", "linux");
    k.backend = "cpu";
    k.text = "Out of memory: Killed process 410126 (python)";
    x = run(&k, &c);
    assert_string_equal(x.diagnosis.cause, "host_ram");
    assert_null(x.bigger_card);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pytorch_22),        cmocka_unit_test(test_other_process),
        cmocka_unit_test(test_vllm_known),        cmocka_unit_test(test_leak),
        cmocka_unit_test(test_not_vram_host_ram),
    };
    return cmocka_run_group_tests(tests, th_setup, th_teardown);
}
