/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_explain.c - `vramfit explain [FILE|-] [--tool T] [--model M] [workload flags] [--json]`:
 * reads a log of any size through the library's streaming scanner (a file through a sliding
 * mapped window, stdin or a pipe in reads; never whole), then diagnoses the last out-of-memory
 * error and prints the fixes. Exit 0 explained, 3 none found, 1, 2.
 */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

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
    int fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY);
    if (fd < 0) {
        cli_bad("cannot open '%s': %s", path, strerror(errno));
        return errno == ENOENT ? EXIT_USAGE : EXIT_ERR; /* a log that is not there: bad argument */
    }
    struct vf_catalog *cat = cli_catalog(o.data_dir);
    struct vf_arena *a = cat ? cli_arena() : NULL;
    struct vf_error err = {0};
    struct vf_explain x;
    rc = EXIT_ERR;
    if (!cat || !a) {
        /* the error is printed */
    } else if (vf_answer_explain_fd(a, cat, &o.w, fd, is_stdin ? "-" : path, &x, &err)) {
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
        struct vf_render_opts ro = {.ascii = o.ascii, .catalog = cat};
        rc = cli_print(o.json ? vf_render_explain_json(a, &x) : vf_render_explain_text(a, &x, &ro));
        if (!rc && !x.n_events)
            rc = EXIT_NO;
    }
    if (!is_stdin)
        close(fd);
    vf_arena_close(a);
    if (cat)
        vf_catalog_close(cat);
    return rc;
}
