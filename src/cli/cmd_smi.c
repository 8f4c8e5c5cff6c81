/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_smi.c - `vramfit smi [--json] [--ascii]`: the GPUs, their memory and every process
 * holding it, named even inside a container, with one line per GPU saying who holds the
 * memory and how to free it. Exit 0; 1 with a one-line reason when no GPU is found.
 */
#include "cli.h"

#include <string.h>

int cmd_smi(int argc, char **argv)
{
    bool json = false, ascii = cli_locale_ascii();
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
            return cli_print(cli_help_text("smi"));
        if (!strcmp(argv[i], "--json"))
            json = true;
        else if (!strcmp(argv[i], "--ascii"))
            ascii = true;
        else
            return cli_usage("smi", "unexpected '%s' (smi [--json] [--ascii])", argv[i]);
    }
    struct vf_arena *a = cli_arena();
    if (!a)
        return EXIT_ERR;
    struct vf_gpu_snapshot s;
    struct vf_error err = {0};
    int rc;
    if (vf_gpu_snapshot(a, &s, &err)) {
        cli_lib_error(&err); /* the reason, and its code for the API */
        rc = EXIT_ERR;
    } else {
        struct vf_render_opts ro = {.ascii = ascii};
        rc = cli_print(json ? vf_render_gpus_json(a, &s) : vf_render_gpus_text(a, &s, &ro));
    }
    vf_arena_close(a);
    return rc;
}
