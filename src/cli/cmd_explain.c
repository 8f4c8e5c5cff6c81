/*
 * cmd_explain.c - `vramfit explain [FILE|-] [--tool T] [--model M] [--json]`: reads a log of
 * any size in 1 MiB chunks through the streaming scanner (never whole), then diagnoses the
 * last out-of-memory error and prints the fixes. Exit 0 explained, 3 none found, 1, 2.
 */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK ((size_t)1 << 20)

int cmd_explain(int argc, char **argv)
{
    /* explain's own flags; the rest are the workload flags of estimate (--seq, --batch,
     * --method, --gpus, ...), parsed by cli_parse_opts with the log path as its positional */
    const char *tool = NULL, *model = NULL;
    char **rest = calloc((size_t)argc + 2, sizeof *rest);
    if (!rest) {
        cli_error("out of memory");
        return EXIT_ERR;
    }
    int nr = 0;
    bool positional = false;
    rest[nr++] = argv[0];
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            free(rest);
            return cli_print(cli_help_text("explain"));
        }
        if (!strcmp(argv[i], "--tool") && i + 1 < argc)
            tool = argv[++i];
        else if (!strcmp(argv[i], "--model") && i + 1 < argc)
            model = argv[++i];
        else {
            positional |= argv[i][0] != '-' || !strcmp(argv[i], "-");
            rest[nr++] = argv[i];
        }
    }
    if (!positional) /* no log named: stdin */
        rest[nr++] = "-";
    struct cli_opts o;
    int prc = cli_parse_opts("explain", nr, rest, CLI_OPT_COUNT, &o);
    free(rest);
    if (prc)
        return prc;
    bool json = o.json;
    const char *path = o.model, *data_dir = o.data_dir;
    if (o.gpus)
        o.w.gpus = o.gpus;
    bool is_stdin = !path || !strcmp(path, "-");
    const struct cli_capture *cap = cli_capturing();
    FILE *f = !is_stdin            ? fopen(path, "rb")
              : cap && cap->has_in ? fmemopen((void *)cap->in, cap->in_len ? cap->in_len : 1, "rb")
                                   : stdin;
    if (!f) {
        cli_error("cannot open '%s': %s", path, strerror(errno));
        return EXIT_ERR;
    }
    struct vf_catalog *cat = cli_catalog(data_dir);
    struct vf_arena *a = vf_arena_open(0);
    char *buf = malloc(CHUNK);
    struct vf_error err = {0};
    struct vf_oom_scan *scan = NULL;
    int rc = EXIT_ERR;
    if (!cat || !a || !buf)
        goto out;
    if (vf_oom_scan_open(a, &scan, &err)) {
        rc = cli_lib_error(&err);
        goto out;
    }
    size_t n;
    while ((n = fread(buf, 1, CHUNK, f)) > 0) {
        if (vf_oom_scan_feed(scan, buf, n, &err)) {
            rc = cli_lib_error(&err);
            goto out;
        }
    }
    if (ferror(f)) {
        cli_error("cannot read '%s': %s", is_stdin ? "-" : path, strerror(errno));
        goto out;
    }
    const struct vf_oom_event *events = NULL;
    const struct vf_oom_context *ctx = NULL;
    size_t n_kept = 0;
    uint64_t n_total = 0;
    if (vf_oom_scan_finish(scan, &events, &n_kept, &n_total, &ctx, &err)) {
        rc = cli_lib_error(&err);
        goto out;
    }
    struct vf_oom_context c2 = {0};
    if (ctx)
        c2 = *ctx;
    else
        c2.ctx_tokens = c2.batch = c2.first_step = c2.last_step = VF_UNKNOWN;
    if (model)
        c2.model = model;
    struct vf_explain_opts eo = {.tool = tool, .catalog = cat, .workload = &o.w};
    struct vf_explain x;
    if (vf_explain(a, events, n_kept, n_total, &c2, &eo, &x, &err)) {
        rc = cli_lib_error(&err);
        goto out;
    }
    if (!x.n_events) {
        if (json) {
            rc = cli_print(vf_render_explain_json(a, &x));
        } else {
            fprintf(stderr,
                    "vramfit: no out-of-memory error found in %s (looked for: CUDA/HIP/MPS/XPU "
                    "out of memory, vLLM KV cache and utilization errors, llama.cpp/Ollama "
                    "buffer failures, cuBLAS/cuDNN/NCCL alloc failures, TensorFlow/JAX "
                    "RESOURCE_EXHAUSTED, Triton shared memory, the Linux OOM killer)\n",
                    is_stdin ? "stdin" : path);
            rc = EXIT_YES;
        }
        if (rc == EXIT_YES)
            rc = EXIT_NO;
        goto out;
    }
    struct vf_render_opts ro = {.catalog = cat};
    rc = cli_print(json ? vf_render_explain_json(a, &x) : vf_render_explain_text(a, &x, &ro));
out:
    free(buf);
    if (!is_stdin)
        fclose(f);
    vf_arena_close(a);
    cli_catalog_close(cat);
    return rc;
}
