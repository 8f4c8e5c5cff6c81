/* SPDX-License-Identifier: Apache-2.0 */
/*
 * t_options.c - the option table and vf_workload_set (src/lib/engine/options.c): every kind parses
 * and refuses what it must, every spelling reaches the same field, the HTTP spelling (no
 * dashes, '_' = '-') matches, engine flags select their engine or name it, values cannot
 * turn into a model or a flag, the cross-option rules of vf_workload_finish, suggestions,
 * and the table itself (no spelling used twice, help lists every option).
 */
#include "th.h"

/* Sets one option on a fresh workload for cmd; returns the error code. */
static enum vf_err set1(struct vf_workload *w, unsigned cmd, const char *name, const char *value,
                        struct vf_error *err)
{
    vf_workload_init(w, cmd);
    memset(err, 0, sizeof *err);
    return vf_workload_set(w, name, value, err);
}

static void test_every_spelling_of_ctx(void **state)
{
    (void)state;
    static const char *const names[] = {
        "--ctx", "--max-model-len", "--num-ctx",     "--num_ctx", "--context",
        "ctx",   "max_model_len",   "max-model-len", "num_ctx",   "context"};
    struct vf_workload w;
    struct vf_error err;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        assert_int_equal(set1(&w, VF_CMD_ESTIMATE, names[i], "32k", &err), VF_OK);
        assert_u64(w.ctx_tokens, 32768); /* 32 x 1024 (vf_parse_tokens) */
        assert_string_equal(w.ctx_flag, names[i]);
    }
    /* a command-line spelling must match exactly: one dash less is not --ctx */
    assert_int_equal(set1(&w, VF_CMD_ESTIMATE, "-ctx", "32k", &err), VF_EUSAGE);
    assert_int_equal(set1(&w, VF_CMD_ESTIMATE, "--ctx", "32kb", &err), VF_EUSAGE);
    assert_non_null(strstr(err.msg, "--ctx: bad token count '32kb'"));
    assert_int_equal(set1(&w, VF_CMD_ESTIMATE, "--ctx", "0", &err), VF_EUSAGE);
    assert_int_equal(set1(&w, VF_CMD_ESTIMATE, "--ctx", NULL, &err), VF_EUSAGE);
    assert_non_null(strstr(err.msg, "needs a value"));
}

static void test_kinds(void **state)
{
    (void)state;
    struct vf_workload w;
    struct vf_error err;
    /* count with a range: --batch 1..65536 */
    assert_int_equal(set1(&w, VF_CMD_ESTIMATE, "--batch", "65536", &err), VF_OK);
    assert_int_equal(w.train.batch, 65536);
    assert_int_equal(w.diffusion.batch, 65536);
    assert_int_equal(set1(&w, VF_CMD_ESTIMATE, "--batch", "65537", &err), VF_EUSAGE);
    assert_string_equal(err.msg, "--batch: expected a batch size from 1 to 65536");
    assert_int_equal(set1(&w, VF_CMD_ESTIMATE, "--batch", "0", &err), VF_EUSAGE);
    /* an optional value: --chunked-ce alone is 8 chunks (F-TRAIN-18), with a value that */
    assert_int_equal(set1(&w, VF_CMD_ESTIMATE, "--chunked-ce", NULL, &err), VF_OK);
    assert_int_equal(w.train.ce_chunks, 8);
    assert_int_equal(set1(&w, VF_CMD_ESTIMATE, "--chunked-ce", "16", &err), VF_OK);
    assert_int_equal(w.train.ce_chunks, 16);
    /* an enum through vf_train_set */
    assert_int_equal(set1(&w, VF_CMD_ESTIMATE, "--optim", "paged_adamw_8bit", &err), VF_OK);
    assert_int_equal(w.train.optimizer, VF_OPT_PAGED_ADAMW8BIT);
    assert_int_equal(set1(&w, VF_CMD_ESTIMATE, "--method", "magic", &err), VF_EUSAGE);
    assert_non_null(strstr(err.msg, "--method: "));
    /* a precision */
    assert_int_equal(set1(&w, VF_CMD_ESTIMATE, "quant", "Q4_K_M", &err), VF_OK);
    assert_int_equal(w.weights.kind, VF_QK_GGUF_FTYPE);
    /* a resolution preset and WxH */
    assert_int_equal(set1(&w, VF_CMD_ESTIMATE, "--res", "720p", &err), VF_OK);
    assert_int_equal(w.diffusion.width, 1280);
    assert_int_equal(w.diffusion.height, 720);
    assert_int_equal(set1(&w, VF_CMD_ESTIMATE, "res", "640x480x2", &err), VF_EUSAGE);
    /* a two-word value */
    assert_int_equal(set1(&w, VF_CMD_ESTIMATE, "--offload", "block-swap 20", &err), VF_OK);
    assert_int_equal(w.diffusion.offload, VF_DOFF_BLOCK_SWAP);
    assert_int_equal(w.diffusion.block_swap, 20);
    assert_int_equal(set1(&w, VF_CMD_ESTIMATE, "--offload", "block-swap", &err), VF_EUSAGE);
    assert_int_equal(set1(&w, VF_CMD_ESTIMATE, "--offload", "optimizer", &err), VF_OK);
    assert_int_equal(w.train.offload, VF_OFFLOAD_OPTIMIZER);
    /* a list: each --fx adds a rate (0.92 = 920000 micro) */
    vf_workload_init(&w, VF_CMD_PICK);
    assert_int_equal(vf_workload_set(&w, "--fx", "USD=0.92", &err), VF_OK);
    assert_int_equal(vf_workload_set(&w, "fx", "GBP=1.17", &err), VF_OK);
    assert_int_equal(w.pick.n_fx, 2);
    assert_string_equal(w.pick.fx[1].from, "GBP");
    assert_u64(w.pick.fx[0].micro, 920000);
}

/* An on/off option takes no value but an on/off word: a path or a flag cannot slip through
 * it (the injection issue 14 found through the server). */
static void test_flags_take_no_other_value(void **state)
{
    (void)state;
    struct vf_workload w;
    struct vf_error err;
    static const char *const on[] = {NULL, "", "1", "true", "on", "yes"};
    for (size_t i = 0; i < sizeof on / sizeof on[0]; i++) {
        assert_int_equal(set1(&w, VF_CMD_ESTIMATE, "force", on[i], &err), VF_OK);
        assert_true(w.force);
    }
    assert_int_equal(set1(&w, VF_CMD_ESTIMATE, "force", "off", &err), VF_OK);
    assert_false(w.force);
    static const char *const bad[] = {"/some/local/file.gguf", "--help", "llama-3.1-8b", "2"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(set1(&w, VF_CMD_ESTIMATE, "force", bad[i], &err), VF_EUSAGE);
        assert_null(w.model);
        assert_non_null(strstr(err.msg, "on/off"));
    }
    /* names the table does not have: help, data-dir, json are the CLI's, not options */
    static const char *const none[] = {"help", "--help", "data-dir", "json", "listen", "h"};
    for (size_t i = 0; i < sizeof none / sizeof none[0]; i++)
        assert_int_equal(set1(&w, VF_CMD_ESTIMATE, none[i], "x", &err), VF_EUSAGE);
}

static void test_commands_scope(void **state)
{
    (void)state;
    struct vf_workload w;
    struct vf_error err;
    /* --gpu is estimate's; --hours is pick's; --tool is explain's */
    assert_int_equal(set1(&w, VF_CMD_ESTIMATE, "--gpu", "rtx-4090", &err), VF_OK);
    assert_int_equal(set1(&w, VF_CMD_PICK, "--gpu", "rtx-4090", &err), VF_EUSAGE);
    assert_string_equal(err.msg, "'--gpu' is not an option of this command");
    assert_int_equal(set1(&w, VF_CMD_PICK, "--hours", "2.5", &err), VF_OK);
    assert_true(w.hours == 2.5);
    assert_int_equal(set1(&w, VF_CMD_ESTIMATE, "--hours", "2.5", &err), VF_EUSAGE);
    assert_int_equal(set1(&w, VF_CMD_EXPLAIN, "--tool", "vllm", &err), VF_OK);
    assert_string_equal(w.tool, "vllm");
    assert_int_equal(set1(&w, VF_CMD_EXPLAIN, "--gpus", "2", &err), VF_OK);
    assert_int_equal(w.gpus_asked, 2);
}

/* DESIGN section 8: an engine's flag without --engine selects it; with another engine it is
 * an error naming its engine; a spelling two engines share needs --engine. */
static void test_engine_flags(void **state)
{
    (void)state;
    struct vf_workload w;
    struct vf_error err;
    assert_int_equal(set1(&w, VF_CMD_ESTIMATE, "--gpu-memory-utilization", "0.8", &err), VF_OK);
    assert_string_equal(w.engine, "vllm");
    assert_string_equal(w.engine_by, "--gpu-memory-utilization");
    assert_string_equal(vf_engine_opt(&w.opts, "--gpu-memory-utilization"), "0.8");
    /* the HTTP spelling of llama.cpp's -ngl */
    assert_int_equal(set1(&w, VF_CMD_ESTIMATE, "ngl", "20", &err), VF_OK);
    assert_string_equal(w.engine, "llama.cpp");
    assert_string_equal(vf_engine_opt(&w.opts, "-ngl"), "20");
    /* with another engine */
    vf_workload_init(&w, VF_CMD_ESTIMATE);
    assert_int_equal(vf_workload_set(&w, "--engine", "vllm", &err), VF_OK);
    assert_int_equal(vf_workload_set(&w, "-ngl", "20", &err), VF_EUSAGE);
    assert_string_equal(err.msg, "'-ngl' is a flag of llama.cpp, not of vllm (--engine llama.cpp)");
    /* --engine after another engine's flag */
    assert_int_equal(set1(&w, VF_CMD_ESTIMATE, "-ngl", "20", &err), VF_OK);
    assert_int_equal(vf_workload_set(&w, "--engine", "ollama", &err), VF_EUSAGE);
    assert_non_null(strstr(err.msg, "a flag of llama.cpp, not of ollama"));
    /* --dtype is vLLM's and transformers' */
    assert_int_equal(set1(&w, VF_CMD_ESTIMATE, "--dtype", "bfloat16", &err), VF_EUSAGE);
    assert_non_null(strstr(err.msg, "say which with --engine"));
    vf_workload_init(&w, VF_CMD_ESTIMATE);
    assert_int_equal(vf_workload_set(&w, "--engine", "transformers", &err), VF_OK);
    assert_int_equal(vf_workload_set(&w, "--dtype", "bfloat16", &err), VF_OK);
    assert_string_equal(vf_engine_opt(&w.opts, "--torch-dtype"), "bfloat16");
    /* llama.cpp's --flash-attn is -fa, not training's flash attention */
    vf_workload_init(&w, VF_CMD_ESTIMATE);
    assert_int_equal(vf_workload_set(&w, "--engine", "llama.cpp", &err), VF_OK);
    assert_int_equal(vf_workload_set(&w, "--flash-attn", "off", &err), VF_OK);
    assert_string_equal(vf_engine_opt(&w.opts, "-fa"), "off");
    assert_false(w.train.no_flash_attn);
    /* an engine flag without a value takes none */
    assert_int_equal(set1(&w, VF_CMD_ESTIMATE, "--enforce-eager", NULL, &err), VF_OK);
    assert_string_equal(vf_engine_opt(&w.opts, "--enforce-eager"), "");
    assert_int_equal(set1(&w, VF_CMD_ESTIMATE, "--enforce-eager", "/etc/passwd", &err), VF_EUSAGE);
}

static void test_finish(void **state)
{
    (void)state;
    struct vf_workload w;
    struct vf_error err = {0};
    /* llama.cpp's -c 16384 over -np 4 slots: 4096 tokens per sequence */
    vf_workload_init(&w, VF_CMD_ESTIMATE);
    assert_int_equal(vf_workload_set(&w, "-c", "16384", &err), VF_OK);
    assert_int_equal(vf_workload_set(&w, "-np", "4", &err), VF_OK);
    assert_int_equal(vf_workload_finish(&w, &err), VF_OK);
    assert_u64(w.ctx_tokens, 4096);
    assert_u64(w.users, 4);
    assert_string_equal(w.ctx_flag, "-c");
    /* -c and --ctx */
    vf_workload_init(&w, VF_CMD_ESTIMATE);
    assert_int_equal(vf_workload_set(&w, "-c", "16384", &err), VF_OK);
    assert_int_equal(vf_workload_set(&w, "--ctx", "4096", &err), VF_OK);
    assert_int_equal(vf_workload_finish(&w, &err), VF_EUSAGE);
    /* --users and -np disagree */
    vf_workload_init(&w, VF_CMD_ESTIMATE);
    assert_int_equal(vf_workload_set(&w, "--users", "2", &err), VF_OK);
    assert_int_equal(vf_workload_set(&w, "-np", "4", &err), VF_OK);
    assert_int_equal(vf_workload_finish(&w, &err), VF_EUSAGE);
    assert_string_equal(err.msg, "--users 2 and -np 4 disagree");
    /* -ctk q8_0 with -ctv f16: K and V apart (issue 21; engines other than llama.cpp refuse) */
    vf_workload_init(&w, VF_CMD_ESTIMATE);
    assert_int_equal(vf_workload_set(&w, "-ctk", "q8_0", &err), VF_OK);
    assert_int_equal(vf_workload_set(&w, "-ctv", "f16", &err), VF_OK);
    assert_int_equal(vf_workload_finish(&w, &err), VF_OK);
    assert_int_equal(w.kv_dtype, VF_DT_Q8_0);
    assert_int_equal(w.kv_dtype_v, VF_DT_F16);
    /* -ctv like -ctk is no difference */
    vf_workload_init(&w, VF_CMD_ESTIMATE);
    assert_int_equal(vf_workload_set(&w, "-ctv", "f16", &err), VF_OK);
    assert_int_equal(vf_workload_finish(&w, &err), VF_OK);
    assert_int_equal(w.kv_dtype_v, VF_DT_DEFAULT);
}

static void test_suggestions(void **state)
{
    (void)state;
    const char *near[3];
    assert_int_equal(vf_option_suggest("--ctxx", VF_CMD_ESTIMATE, near, 3), 1);
    assert_string_equal(near[0], "--ctx");
    assert_true(vf_option_suggest("--wieghts", VF_CMD_ESTIMATE, near, 3) >= 1);
    assert_string_equal(near[0], "--weights");
    assert_int_equal(vf_option_suggest("--frobnicate", VF_CMD_ESTIMATE, near, 3), 0);
    struct vf_workload w;
    struct vf_error err;
    assert_int_equal(set1(&w, VF_CMD_ESTIMATE, "--ctxx", "4k", &err), VF_EUSAGE);
    assert_string_equal(err.msg, "unknown flag '--ctxx' (did you mean --ctx?)");
}

/* The table: no spelling names two options (ours, or ours and an engine's outside the
 * tasks rule), and the help of each command lists each of its options. */
static void test_table(void **state)
{
    (void)state;
    size_t n;
    const struct vf_option *t = vf_options(&n);
    assert_true(n >= 45);
    for (size_t i = 0; i < n; i++) {
        const char *sp[10] = {t[i].name};
        size_t ns = 1;
        for (size_t k = 0; t[i].aliases && t[i].aliases[k]; k++)
            sp[ns++] = t[i].aliases[k];
        for (size_t k = 0; k < ns; k++)
            for (size_t j = 0; j < n; j++) {
                if (j == i)
                    continue;
                assert_false(!strcmp(sp[k], t[j].name));
                for (size_t m = 0; t[j].aliases && t[j].aliases[m]; m++)
                    assert_false(!strcmp(sp[k], t[j].aliases[m]));
            }
        assert_non_null(t[i].help);
    }
    struct vf_arena *a = vf_arena_open(0);
    static const unsigned cmds[] = {VF_CMD_ESTIMATE, VF_CMD_PICK, VF_CMD_EXPLAIN};
    for (size_t c = 0; c < 3; c++) {
        const char *help = vf_options_help(a, cmds[c]);
        assert_non_null(help);
        for (size_t i = 0; i < n; i++) {
            if (!(t[i].cmds & cmds[c]) || (!strcmp(t[i].name, "--model") && c != 2))
                continue;
            char needle[64];
            snprintf(needle, sizeof needle, "  %s", t[i].name);
            assert_non_null(strstr(help, needle));
        }
    }
    vf_arena_close(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_spelling_of_ctx),
        cmocka_unit_test(test_kinds),
        cmocka_unit_test(test_flags_take_no_other_value),
        cmocka_unit_test(test_commands_scope),
        cmocka_unit_test(test_engine_flags),
        cmocka_unit_test(test_finish),
        cmocka_unit_test(test_suggestions),
        cmocka_unit_test(test_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
