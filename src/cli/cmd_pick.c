/*
 * cmd_pick.c - `vramfit pick MODEL [flags]`: every offer of the catalog that fits the
 * workload, cheapest first in one currency, with what the short cards would need.
 * Exit 0 when some offer fits, 3 when none does.
 */
#include "cli.h"

int cmd_pick(int argc, char **argv)
{
    struct cli_opts o;
    int rc = cli_parse_opts("pick", argc, argv, CLI_OPT_PRICE | CLI_OPT_COUNT, &o);
    if (rc)
        return rc;
    if (o.help)
        return cli_print(cli_help_text("pick"));
    o.w.gpus = o.gpus;
    struct vf_catalog *cat = cli_catalog(o.data_dir);
    if (!cat)
        return EXIT_ERR;
    struct vf_arena *a = vf_arena_open(0);
    struct vf_error err = {0};
    struct vf_model m;
    struct vf_estimate e;
    struct vf_pick p;
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
    if (vf_estimate(a, &m, &o.w, &e, &err) || vf_pick(a, cat, &m, &o.w, &o.pick, &p, &err)) {
        rc = cli_lib_error(&err);
        goto out;
    }
    cli_note_flags(a, &o, &e);
    struct vf_render_opts ro = {.ascii = o.ascii, .catalog = cat};
    if (o.json)
        rc = cli_print(vf_render_pick_json(a, &e, &p, &o.w));
    else
        rc = cli_print(vf_render_pick_text(a, &e, &p, &o.w, o.hours, &ro));
    if (!rc && !p.n_rows && !p.n_other && !p.n_unpriced)
        rc = EXIT_NO;
out:
    vf_arena_close(a);
    cli_catalog_close(cat);
    return rc;
}
