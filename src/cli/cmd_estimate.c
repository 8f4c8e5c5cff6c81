/*
 * cmd_estimate.c - `vramfit estimate MODEL [flags]`: the memory breakdown of a workload
 * and, with --gpu, whether it fits and the largest context and users that do.
 * Exit 0 when it fits (or no card was given), 3 when it does not.
 */
#include "cli.h"

int cmd_estimate(int argc, char **argv)
{
    struct cli_opts o;
    int rc = cli_parse_opts("estimate", argc, argv, VF_CMD_ESTIMATE, &o);
    if (rc)
        return rc;
    if (o.help)
        return cli_print(cli_help_text("estimate"));
    struct vf_catalog *cat = cli_catalog(o.data_dir);
    if (!cat)
        return EXIT_ERR;
    struct vf_arena *a = vf_arena_open(0);
    struct vf_answer *ans = a ? vf_arena_alloc(a, sizeof *ans) : NULL;
    struct vf_error err = {0};
    rc = EXIT_ERR;
    if (!ans) {
        cli_error("out of memory");
    } else if (vf_answer_estimate(a, cat, &o.w, ans, &err)) {
        rc = cli_lib_error(&err);
        /* a split the engine cannot do answers "does not fit on these cards" */
        if (err.code == VF_EUNSUPPORTED && o.w.gpus > 1)
            rc = EXIT_NO;
    } else {
        struct vf_fit *fit = ans->has_fit ? &ans->fit : NULL;
        struct vf_render_opts ro = {.ascii = o.ascii, .catalog = cat};
        if (fit)
            fit->gpu = o.json ? ans->card.name : ans->card.label;
        rc = cli_print(o.json ? vf_render_estimate_json(a, &ans->est, fit)
                              : vf_render_estimate_text(a, &ans->est, fit, &ro));
        if (!rc && !ans->yes)
            rc = EXIT_NO;
    }
    vf_arena_close(a);
    vf_catalog_close(cat);
    return rc;
}
