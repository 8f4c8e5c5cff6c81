/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_estimate.c - `vramfit estimate MODEL [flags]`: the memory breakdown of a workload
 * and, with --gpu, whether it fits and the largest context and users that do.
 * Exit 0 when it fits (or no card was given), 3 when it does not.
 */
#include "cli.h"

int cmd_estimate(int argc, char **argv)
{
    struct cli_answer r;
    int rc = cli_answer_begin("estimate", VF_CMD_ESTIMATE, argc, argv, &r);
    if (rc >= 0) {
        cli_answer_end(&r);
        return rc;
    }
    struct vf_answer *ans = r.ans;
    struct vf_error err = {0};
    if (vf_answer_estimate(r.a, r.cat, &r.o.w, ans, &err)) {
        rc = cli_lib_error(&err);
        /* a split the engine cannot do answers "does not fit on these cards" */
        if (err.code == VF_EUNSUPPORTED && r.o.w.gpus > 1)
            rc = EXIT_NO;
    } else {
        struct vf_fit *fit = ans->has_fit ? &ans->fit : NULL;
        struct vf_render_opts ro = {.ascii = r.o.ascii, .catalog = r.cat};
        if (fit)
            fit->gpu = r.o.json ? ans->card.name : ans->card.label;
        for (uint32_t i = 0; fit && !r.o.json && i < fit->n_devs && i < ans->card.n_mix; i++)
            fit->devs[i].gpu = ans->card.mix[i].label; /* issue 21: --gpu A,B */
        rc = cli_print(r.o.json ? vf_render_estimate_json(r.a, &ans->est, fit)
                                : vf_render_estimate_text(r.a, &ans->est, fit, &ro));
        if (!rc && !ans->yes)
            rc = EXIT_NO;
    }
    cli_answer_end(&r);
    return rc;
}
