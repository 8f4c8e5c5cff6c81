/* SPDX-License-Identifier: Apache-2.0 */
/*
 * follow.c - `vramfit explain --follow FILE... [--oom-spool DIR] [flags]`: watches the logs as
 * tail -F does (the library's vf_follow: rotation and truncation) and prints the explanation
 * of each new out-of-memory error as it is written (text, or --json), until SIGINT/SIGTERM;
 * with a spool folder each explanation is also left there for `vramfit exporter`. What the
 * files held at the start is context, never reported.
 */
#include "cli.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FOLLOW_POLL_MS 500

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

struct follow_out {
    const struct cli_opts *o;
    const struct vf_catalog *cat;
    const char *spool;
};

static void on_hit(void *ud, const struct vf_follow_hit *h)
{
    const struct follow_out *fo = ud;
    struct vf_arena *a = vf_arena_open(0);
    if (!a)
        return;
    const char *json = vf_render_explain_json(a, h->x);
    struct vf_render_opts ro = {.catalog = fo->cat};
    if (!fo->o->json)
        printf("==> %s: %llu new out-of-memory error%s <==\n", h->path,
               (unsigned long long)h->n_new, h->n_new == 1 ? "" : "s");
    fputs(fo->o->json ? json : vf_render_explain_text(a, h->x, &ro), stdout);
    fflush(stdout);
    if (fo->spool && json)
        cli_spool_write(fo->spool, json, h->n_new);
    vf_arena_close(a);
}

int cli_explain_follow(int argc, char **argv)
{
    /* --follow FILE... and --oom-spool DIR are ours; the rest is explain's */
    const char *files[VF_FOLLOW_MAX_FILES], *spool = NULL;
    size_t n = 0;
    char **rest = calloc((size_t)argc + 1, sizeof *rest);
    int n_rest = 0;
    if (!rest) {
        cli_error("out of memory");
        return EXIT_ERR;
    }
    for (int i = 0; i < argc; i++) {
        if (i > 0 && !strcmp(argv[i], "--oom-spool") && i + 1 < argc) {
            spool = argv[++i];
        } else if (i > 0 && !strcmp(argv[i], "--follow")) {
            for (; i + 1 < argc && argv[i + 1][0] != '-' && n < VF_FOLLOW_MAX_FILES; n++)
                files[n] = argv[++i];
        } else {
            rest[n_rest++] = argv[i];
        }
    }
    struct cli_opts o;
    int rc = cli_parse_opts("explain", n_rest, rest, VF_CMD_EXPLAIN, &o);
    if (!rc && !o.help && (!n || o.positional))
        rc = cli_usage("explain", "--follow FILE...: %s",
                       n ? "the logs come after --follow" : "which log? (--follow FILE)");
    if (rc || o.help) {
        free(rest);
        return rc ? rc : cli_print(cli_help_text("explain"));
    }
    struct vf_catalog *cat = cli_catalog(o.data_dir);
    struct vf_follow *f = NULL;
    struct vf_error err = {0};
    if (!cat || vf_follow_open(&f, files, n, &err)) {
        rc = cat ? cli_lib_error(&err) : EXIT_ERR;
    } else {
        struct follow_out fo = {&o, cat, cli_spool_dir(spool)};
        signal(SIGINT, on_signal);
        signal(SIGTERM, on_signal);
        while (!stop) {
            err = (struct vf_error){0};
            if (vf_follow_poll(f, cat, &o.w, on_hit, &fo, &err))
                cli_lib_error(&err);
            struct timespec t = {0, FOLLOW_POLL_MS * 1000000L};
            nanosleep(&t, NULL);
        }
    }
    vf_follow_close(f);
    if (cat)
        vf_catalog_close(cat);
    free(rest);
    return rc;
}
