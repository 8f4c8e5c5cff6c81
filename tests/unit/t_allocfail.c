/* SPDX-License-Identifier: Apache-2.0 */
/*
 * t_allocfail.c - every allocation failure of the library ends in a clear message, never in a
 * crash, a silent exit or a wrong answer (issue 17). The binary links the CLI's objects (all
 * but main.o) and runs each command line of `cases` in a forked child, in-process, through
 * the library's allocator hook (vf_set_allocator):
 *
 *   1. once with no failure, counting the allocations (N) and keeping stdout, stderr and the
 *      exit status: the reference;
 *   2. then once for each n in 1..N with the n-th allocation (malloc or realloc) failing and
 *      every other one served.
 *
 * A failed run passes when the child was not killed by a signal and either exits 1 with a
 * "vramfit: error: " message on stderr, or prints the reference's stdout and stderr byte for
 * byte with the reference's exit status (the failure was absorbed). Anything else (exit 1
 * with nothing said, exit 0 or 3 with another answer, a crash) fails, named by command line
 * and n. Every command line must allocate at least once (N > 0), so the test cannot pass by
 * exercising nothing. jansson's allocations go through the hook too (arena.c), so JSON output
 * is covered value by value. 19 command lines, N from 4 (catalog gpus) to 792 (catalog models
 * --json), 4,675 failing runs in all: about 5 s of CPU (the children are forks, no exec).
 * When this test was written it found 6 commands exiting 1 with no message (an arena that
 * could not be opened), every --json document coming out short of the values jansson could
 * not allocate (exit 0), and a .safetensors named directly losing its config.json (exit 0,
 * "architecture unknown") when the copy of its folder's name failed.
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include "th.h"

#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../src/cli/cli.h"

/* The allocator: counts every malloc and realloc; the fail_at-th (1-based) returns NULL. */
struct counter {
    long calls, fail_at;
};

static void *count_malloc(size_t n, void *ud)
{
    struct counter *c = ud;
    return ++c->calls == c->fail_at ? NULL : malloc(n);
}

static void *count_realloc(void *p, size_t n, void *ud)
{
    struct counter *c = ud;
    return ++c->calls == c->fail_at ? NULL : realloc(p, n);
}

static void count_free(void *p, void *ud)
{
    (void)ud;
    free(p);
}

/* One command line: the command function and its argv (argv[0] the command's name). */
struct cmdcase {
    int (*fn)(int argc, char **argv);
    const char *argv[16];
};

#define OOM "tests/fixtures/oom/"
static const struct cmdcase cases[] = {
    {cmd_estimate, {"estimate", "llama-3.1-8b"}},
    {cmd_estimate, {"estimate", "llama-3.1-8b", "--ctx", "32k", "--gpu", "rtx-4090", "--json"}},
    {cmd_estimate,
     {"estimate", "llama-3.1-8b", "--task", "train", "--method", "qlora", "--gpu", "rtx-4090"}},
    {cmd_estimate, {"estimate", "llama-3.1-70b", "--engine", "vllm", "--gpu", "h100-80gb:4"}},
    {cmd_estimate, {"estimate", "flux1-dev", "--gpu", "rtx-4090"}},
    {cmd_estimate, {"estimate", "tests/fixtures/models/tiny-q4km.gguf", "--json"}},
    {cmd_estimate, {"estimate", "tests/fixtures/models/tiny-st"}},
    {cmd_pick, {"pick", "llama-3.1-70b", "--quant", "Q4_K_M", "--ctx", "32k"}},
    {cmd_pick, {"pick", "llama-3.1-8b", "--gpus", "8", "--json"}},
    {cmd_explain, {"explain", OOM "pytorch-2.2.log"}},
    {cmd_explain, {"explain", OOM "llamacpp-alloc-buffer.log", "--json"}},
    {cmd_inspect, {"inspect", "llama-3.1-8b"}},
    {cmd_inspect, {"inspect", "tests/fixtures/models/tiny-st"}},
    {cmd_inspect, {"inspect", "tests/fixtures/models/tiny-st/model.safetensors"}},
    {cmd_inspect, {"inspect", "tests/fixtures/models/tiny-st/config.json", "--json"}},
    {cmd_inspect, {"inspect", "tests/fixtures/models/tiny-q4km.gguf", "--json"}},
    {cmd_catalog, {"catalog", "models", "--json"}},
    {cmd_catalog, {"catalog", "gpus"}},
    {cmd_smi, {"smi", "--json"}},
};
#define N_CASES (sizeof cases / sizeof cases[0])

/* What one run left: its exit (or the signal that killed it), stdout, stderr, allocations. */
struct outcome {
    int rc, sig;
    long calls;
    char *out, *err;
    size_t out_len, err_len;
};

static char tmpdir[64];

/* The whole of file path (malloc'd, NUL-terminated); its length in *len. */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    assert_non_null(buf);
    for (size_t k; (k = fread(buf + n, 1, cap - n - 1, f)) > 0;) {
        n += k;
        if (cap - n - 1 == 0) {
            buf = realloc(buf, cap *= 2);
            assert_non_null(buf);
        }
    }
    fclose(f);
    buf[n] = '\0';
    *len = n;
    return buf;
}

/* Runs case c in a child with the fail_at-th allocation failing (0: none); its outcome. */
static struct outcome run_case(const struct cmdcase *c, long fail_at)
{
    /* the child's count comes back through a shared page */
    struct counter *shared =
        mmap(NULL, sizeof *shared, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    assert_true(shared != MAP_FAILED);
    *shared = (struct counter){0, fail_at};
    char out[128], err[128];
    snprintf(out, sizeof out, "%s/out", tmpdir);
    snprintf(err, sizeof err, "%s/err", tmpdir);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int fo = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int fe = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fo < 0 || fe < 0 || dup2(fo, 1) < 0 || dup2(fe, 2) < 0)
            _exit(99);
        struct vf_allocator al = {count_malloc, count_realloc, count_free, shared};
        vf_set_allocator(&al);
        char *argv[16] = {0};
        int argc = 0;
        for (; c->argv[argc]; argc++)
            argv[argc] = (char *)c->argv[argc];
        cli_cmd = argv[0]; /* what main() sets before calling the command */
        for (int k = 1; k < argc; k++)
            cli_json |= !strcmp(argv[k], "--json");
        int rc = c->fn(argc, argv);
        fflush(NULL);
        _exit(rc);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    struct outcome o = {.rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1,
                        .sig = WIFSIGNALED(st) ? WTERMSIG(st) : 0,
                        .calls = shared->calls};
    munmap(shared, sizeof *shared);
    o.out = slurp(out, &o.out_len);
    o.err = slurp(err, &o.err_len);
    return o;
}

static void free_outcome(struct outcome *o)
{
    free(o->out);
    free(o->err);
}

/* The command line of c as one string, for the failure messages. */
static const char *line_of(const struct cmdcase *c)
{
    static char buf[512];
    buf[0] = '\0';
    for (int i = 0; c->argv[i]; i++)
        snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s", i ? " " : "", c->argv[i]);
    return buf;
}

/* Is failed run o acceptable against the reference? Why not, in *why. */
static bool acceptable(const struct outcome *ref, const struct outcome *o, const char **why)
{
    bool same = o->rc == ref->rc && o->out_len == ref->out_len && o->err_len == ref->err_len &&
                !memcmp(o->out, ref->out, o->out_len) && !memcmp(o->err, ref->err, o->err_len);
    if (o->sig)
        *why = "killed by a signal";
    else if (same)
        return true;
    else if (o->rc == 1 && strstr(o->err, "vramfit: error: "))
        return true;
    else if (o->rc == 1)
        *why = "exit 1 without a 'vramfit: error: ' message";
    else
        *why = "another answer than the run without a failure";
    return false;
}

/* Case i: the reference, then every allocation failing in turn. */
static void fail_each(void **state)
{
    const struct cmdcase *c = *state;
    struct outcome ref = run_case(c, 0);
    if (ref.sig || ref.calls == 0)
        fail_msg("%s: the reference run %s", line_of(c),
                 ref.sig ? "was killed by a signal" : "allocated nothing");
    int bad = 0;
    for (long n = 1; n <= ref.calls; n++) {
        struct outcome o = run_case(c, n);
        const char *why = NULL;
        if (!acceptable(&ref, &o, &why)) {
            bad++;
            print_message("%s: allocation %ld of %ld failing: %s (exit %d, signal %d)\n"
                          "  stderr: %.300s\n  stdout: %.300s\n",
                          line_of(c), n, ref.calls, why, o.rc, o.sig, o.err, o.out);
        }
        free_outcome(&o);
    }
    print_message("# %s: %ld allocations, %d failures\n", line_of(c), ref.calls, bad);
    free_outcome(&ref);
    assert_int_equal(bad, 0);
}

static int group_setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/t_allocfail.XXXXXX");
    if (!mkdtemp(tmpdir))
        return -1;
    /* smi reads the fake backend's table; nothing reads the user's catalog or the network */
    setenv("VRAMFIT_GPU_BACKEND", "fake", 1);
    setenv("VRAMFIT_FAKE_GPUS", "tests/fixtures/gpus/two-4090.tsv", 1);
    unsetenv("VRAMFIT_DATA_DIR");
    setenv("HF_HUB_OFFLINE", "1", 1);
    setenv("LC_ALL", "C", 1);
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    char p[128];
    snprintf(p, sizeof p, "%s/out", tmpdir);
    unlink(p);
    snprintf(p, sizeof p, "%s/err", tmpdir);
    unlink(p);
    rmdir(tmpdir);
    return 0;
}

int main(void)
{
    struct CMUnitTest tests[N_CASES];
    static char names[N_CASES][512];
    for (size_t i = 0; i < N_CASES; i++) {
        snprintf(names[i], sizeof names[i], "%s", line_of(&cases[i]));
        tests[i] = (struct CMUnitTest){
            .name = names[i], .test_func = fail_each, .initial_state = (void *)&cases[i]};
    }
    return _cmocka_run_group_tests("allocfail", tests, N_CASES, group_setup, group_teardown);
}
