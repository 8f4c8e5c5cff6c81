/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_inspect.c - `vramfit inspect MODEL [--json]`: what a model holds: architecture,
 * parameters (total, active), weight bytes, KV cache per token, context, and where each
 * number came from.
 */
#include "cli.h"

#include <string.h>

int cmd_inspect(int argc, char **argv)
{
    bool json = false, ascii = cli_locale_ascii();
    const char *model = NULL, *data_dir = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
            return cli_print(cli_help_text("inspect"));
        if (!strcmp(argv[i], "--json"))
            json = true;
        else if (!strcmp(argv[i], "--ascii"))
            ascii = true;
        else if (!strcmp(argv[i], "--data-dir") && i + 1 < argc)
            data_dir = argv[++i];
        else if (argv[i][0] == '-' && argv[i][1])
            return cli_usage("inspect", "unknown flag '%s'", argv[i]);
        else if (!model)
            model = argv[i];
        else
            return cli_usage("inspect", "one model at a time: '%s' and '%s'", model, argv[i]);
    }
    if (!model)
        return cli_usage("inspect", "which model? (a catalog id such as llama-3.1-8b)");
    struct vf_catalog *cat = cli_catalog(data_dir);
    if (!cat)
        return EXIT_ERR;
    struct vf_arena *a = cli_arena();
    struct vf_error err = {0};
    struct vf_model m;
    int rc = EXIT_ERR;
    if (a && vf_model_resolve(a, cat, model, &m, &err)) {
        rc = cli_lib_error(&err);
    } else if (a) {
        struct vf_render_opts ro = {.ascii = ascii, .catalog = cat};
        rc = cli_print(json ? vf_render_inspect_json(a, &m) : vf_render_inspect_text(a, &m, &ro));
    }
    vf_arena_close(a);
    vf_catalog_close(cat);
    return rc;
}
