/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_explain.c - `vramfit explain [FILE|-] [--tool T] [--model M] [workload flags] [--json]`:
 * reads a log of any size in 1 MiB chunks through the library's streaming scanner (never
 * whole), then diagnoses the last out-of-memory error and prints the fixes.
 * Exit 0 explained, 3 none found, 1, 2.
 */
#include "cli.h"

#include <errno.h>
#include <string.h>

struct source {
    FILE *f;
    const char *name;
};

static enum vf_err read_file(void *ud, char *buf, size_t cap, size_t *got, struct vf_error *err)
{
    struct source *s = ud;
    *got = fread(buf, 1, cap, s->f);
    if (!*got && ferror(s->f)) {
        err->code = VF_EIO;
        snprintf(err->msg, sizeof err->msg, "cannot read '%s': %s", s->name, strerror(errno));
        return VF_EIO;
    }
    return VF_OK;
}

int cmd_explain(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--follow"))
            return cli_explain_follow(argc, argv);
    struct cli_opts o;
    int rc = cli_parse_opts("explain", argc, argv, VF_CMD_EXPLAIN, &o);
    if (rc)
        return rc;
    if (o.help)
        return cli_print(cli_help_text("explain"));
    const char *path = o.positional;
    bool is_stdin = !path || !strcmp(path, "-");
    struct source src = {is_stdin ? stdin : fopen(path, "rb"), is_stdin ? "-" : path};
    if (!src.f) {
        cli_error("cannot open '%s': %s", path, strerror(errno));
        return EXIT_ERR;
    }
    struct vf_catalog *cat = cli_catalog(o.data_dir);
    struct vf_arena *a = cat ? cli_arena() : NULL;
    struct vf_error err = {0};
    struct vf_explain x;
    rc = EXIT_ERR;
    if (!cat || !a) {
        /* the error is printed */
    } else if (vf_answer_explain(a, cat, &o.w, read_file, &src, &x, &err)) {
        rc = cli_lib_error(&err);
    } else if (!x.n_events && !o.json && !(x.ctx && x.ctx->n_symptoms)) {
        fprintf(stderr,
                "vramfit: no out-of-memory error found in %s (looked for: CUDA/HIP/MPS/XPU "
                "out of memory, vLLM KV cache and utilization errors, llama.cpp/Ollama "
                "buffer failures, cuBLAS/cuDNN/NCCL alloc failures, TensorFlow/JAX "
                "RESOURCE_EXHAUSTED, Triton shared memory, the Linux OOM killer)\n",
                is_stdin ? "stdin" : path);
        rc = EXIT_NO;
    } else {
        struct vf_render_opts ro = {.catalog = cat};
        rc = cli_print(o.json ? vf_render_explain_json(a, &x) : vf_render_explain_text(a, &x, &ro));
        if (!rc && !x.n_events)
            rc = EXIT_NO;
    }
    if (!is_stdin)
        fclose(src.f);
    vf_arena_close(a);
    if (cat)
        vf_catalog_close(cat);
    return rc;
}
