/*
 * cmd_estimate.c - `vramfit estimate MODEL [flags]`: the memory breakdown of a workload
 * and, with --gpu, whether it fits and the largest context and users that do.
 * Exit 0 when it fits (or no card was given), 3 when it does not.
 */
#include "cli.h"

#include <string.h>

int cmd_estimate(int argc, char **argv)
{
    struct cli_opts o;
    int rc = cli_parse_opts("estimate", argc, argv, CLI_OPT_CARD, &o);
    if (rc)
        return rc;
    if (o.help)
        return cli_print(cli_help_text("estimate"));
    struct vf_catalog *cat = cli_catalog(o.data_dir);
    if (!cat)
        return EXIT_ERR;
    struct vf_arena *a = vf_arena_open(0);
    struct vf_error err = {0};
    struct vf_model m;
    struct vf_estimate e;
    struct vf_fit fit;
    struct cli_card card = {0};
    rc = EXIT_ERR;
    if (!a)
        goto out;
    if (vf_model_resolve(a, cat, o.model, &m, &err)) {
        rc = cli_lib_error(&err);
        goto out;
    }
    if (!o.task_set)
        o.w.task = m.task;
    cli_default_engine(&o, &m);
    if (o.gpu) {
        if ((rc = cli_resolve_card(a, cat, &o, &card)))
            goto out;
        o.w.gpus = card.count;
        o.w.usable_bytes = card.usable_bytes;
    } else if (o.gpus) {
        o.w.gpus = o.gpus;
    }
    if (vf_estimate(a, &m, &o.w, &e, &err)) {
        rc = cli_lib_error(&err);
        /* a split the engine cannot do answers "does not fit on these cards" */
        if (err.code == VF_EUNSUPPORTED && o.w.gpus > 1)
            rc = EXIT_NO;
        goto out;
    }
    cli_note_flags(a, &o, &e);
    if (o.gpu && vf_fit(a, &m, &o.w, card.name, card.usable_bytes, card.count, &fit, &err)) {
        rc = cli_lib_error(&err);
        goto out;
    }
    if (o.gpu)
        fit.gpu = card.label;
    struct vf_render_opts ro = {.ascii = o.ascii, .catalog = cat};
    if (o.json) {
        if (o.gpu)
            fit.gpu = card.name;
        rc = cli_print(vf_render_estimate_json(a, &e, o.gpu ? &fit : NULL));
    } else {
        rc = cli_print(vf_render_estimate_text(a, &e, o.gpu ? &fit : NULL, &ro));
    }
    if (!rc && o.gpu && !fit.fits)
        rc = EXIT_NO;
out:
    vf_arena_close(a);
    cli_catalog_close(cat);
    return rc;
}
