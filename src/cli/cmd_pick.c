/*
 * cmd_pick.c - `vramfit pick MODEL [flags]`: every offer of the catalog that fits the
 * workload, cheapest first in one currency, with what the short cards would need.
 * Exit 0 when some offer fits, 3 when none does.
 */
#include "cli.h"

int cmd_pick(int argc, char **argv)
{
    struct cli_opts o;
    int rc = cli_parse_opts("pick", argc, argv, VF_CMD_PICK, &o);
    if (rc)
        return rc;
    if (o.help)
        return cli_print(cli_help_text("pick"));
    struct vf_catalog *cat = cli_catalog(o.data_dir);
    if (!cat)
        return EXIT_ERR;
    struct vf_arena *a = vf_arena_open(0);
    struct vf_answer *ans = a ? vf_arena_alloc(a, sizeof *ans) : NULL;
    struct vf_error err = {0};
    rc = EXIT_ERR;
    if (!ans) {
        cli_error("out of memory");
    } else if (vf_answer_pick(a, cat, &o.w, ans, &err)) {
        rc = cli_lib_error(&err);
    } else {
        struct vf_render_opts ro = {.ascii = o.ascii, .catalog = cat};
        rc =
            cli_print(o.json ? vf_render_pick_json(a, &ans->est, &ans->pick, &o.w)
                             : vf_render_pick_text(a, &ans->est, &ans->pick, &o.w, o.w.hours, &ro));
        if (!rc && !ans->yes)
            rc = EXIT_NO;
    }
    vf_arena_close(a);
    vf_catalog_close(cat);
    return rc;
}
