/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_catalog.c - `vramfit catalog models|gpus|prices [--json]`: the built-in data (prices: each
 * offer with where it comes from, built-in or the --data-dir's prices.tsv).
 */
#include "cli.h"

#include <string.h>

int cmd_catalog(int argc, char **argv)
{
    bool json = false, gpus = false, prices = false, which = false;
    const char *data_dir = NULL, *q = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
            return cli_print(cli_help_text("catalog"));
        if (!strcmp(argv[i], "--json")) {
            json = true;
        } else if (!strcmp(argv[i], "--data-dir") && i + 1 < argc) {
            data_dir = argv[++i];
        } else if (!strncmp(argv[i], "--data-dir=", 11)) {
            data_dir = argv[i] + 11;
        } else if ((!strcmp(argv[i], "--search") || !strcmp(argv[i], "--q")) && i + 1 < argc) {
            q = argv[++i];
        } else if (!which && (!strcmp(argv[i], "models") || !strcmp(argv[i], "gpus") ||
                              !strcmp(argv[i], "prices"))) {
            gpus = !strcmp(argv[i], "gpus");
            prices = !strcmp(argv[i], "prices");
            which = true;
        } else {
            return cli_usage("catalog", "unexpected '%s' (catalog models|gpus|prices [--json])",
                             argv[i]);
        }
    }
    if (!which)
        return cli_usage("catalog", "which part? 'models', 'gpus' or 'prices'");
    struct vf_catalog *c = cli_catalog(data_dir);
    if (!c)
        return EXIT_ERR;
    struct vf_arena *a = cli_arena();
    struct vf_catalog view;
    struct vf_error err = {0};
    if (!a || vf_catalog_search(a, c, gpus ? NULL : q, &view, &err)) {
        int erc = a ? cli_lib_error(&err) : EXIT_ERR;
        vf_arena_close(a);
        vf_catalog_close(c);
        return erc;
    }
    int rc = cli_print(prices ? (json ? vf_render_prices_json(a, c) : vf_render_prices_text(a, c))
                       : json ? vf_render_catalog_json(a, &view, gpus)
                              : vf_render_catalog_text(a, &view, gpus));
    vf_arena_close(a);
    vf_catalog_close(c);
    return rc;
}
