/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_pick.c - `vramfit pick MODEL [flags]`: every offer of the catalog that fits the
 * workload, cheapest first in one currency, with what the short cards would need.
 * Exit 0 when some offer fits, 3 when none does.
 */
#include "cli.h"

int cmd_pick(int argc, char **argv)
{
    struct cli_answer r;
    int rc = cli_answer_begin("pick", VF_CMD_PICK, argc, argv, &r);
    if (rc >= 0) {
        cli_answer_end(&r);
        return rc;
    }
    struct vf_answer *ans = r.ans;
    struct vf_error err = {0};
    if (vf_answer_pick(r.a, r.cat, &r.o.w, ans, &err)) {
        rc = cli_lib_error(&err);
    } else {
        struct vf_render_opts ro = {.ascii = r.o.ascii, .catalog = r.cat};
        rc = cli_print(
            r.o.json ? vf_render_pick_json(r.a, &ans->est, &ans->pick, &r.o.w)
                     : vf_render_pick_text(r.a, &ans->est, &ans->pick, &r.o.w, r.o.w.hours, &ro));
        if (!rc && !ans->yes)
            rc = EXIT_NO;
    }
    cli_answer_end(&r);
    return rc;
}
