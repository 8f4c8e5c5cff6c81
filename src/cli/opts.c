/* SPDX-License-Identifier: Apache-2.0 */
/*
 * opts.c - the command line of estimate, pick and explain over the library's option table
 * (vf_workload_set: every option, every engine's spelling, DESIGN section 8); what only a
 * command line has: the positional argument, --json, --ascii, --help, --data-dir, values in
 * the next argument, and an engine's OLLAMA_* environment.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

struct vf_catalog *cli_catalog(const char *data_dir)
{
    return cli_catalog_parts(data_dir, VF_CATALOG_ALL);
}

struct vf_catalog *cli_catalog_parts(const char *data_dir, unsigned parts)
{
    if (!data_dir)
        data_dir = getenv("VRAMFIT_DATA_DIR");
    struct vf_catalog *c = NULL;
    struct vf_error err = {0};
    if (vf_catalog_open_parts(&c, data_dir, parts, &err)) {
        cli_lib_error(&err);
        return NULL;
    }
    return c;
}

/* Applies one option; prints the error. */
static int set(const char *cmd, struct cli_opts *o, const char *name, const char *val)
{
    struct vf_error err = {0};
    if (vf_workload_set(&o->w, name, val, &err))
        return cli_usage(cmd, "%s", err.msg);
    return 0;
}

/* "--x=v": the name apart in buf, the value after '='; NULL when there is none. */
static const char *split_inline(const char *arg, char *buf, size_t cap)
{
    const char *eq = strchr(arg, '=');
    size_t n = eq ? (size_t)(eq - arg) : strlen(arg);
    if (n >= cap)
        n = cap - 1;
    memcpy(buf, arg, n);
    buf[n] = 0;
    return eq ? eq + 1 : NULL;
}

/* An engine flag spelled without dashes on the command line ("num_ctx=8192",
 * "OLLAMA_KV_CACHE_TYPE=q8_0")? Only these words are options rather than the positional. */
static bool bare_engine_flag(const char *name)
{
    const struct vf_engine_flag *ef = NULL;
    size_t n;
    const struct vf_engine *const *all = vf_engines(&n);
    for (size_t i = 0; i < n && !ef; i++)
        for (const struct vf_engine_flag *f = all[i]->flags; f && f->name && !ef; f++)
            if (f->name[0] != '-' && !strcmp(f->name, name))
                ef = f;
    return ef != NULL;
}

int cli_parse_opts(const char *cmd, int argc, char **argv, unsigned vfcmd, struct cli_opts *o)
{
    memset(o, 0, sizeof *o);
    o->ascii = cli_locale_ascii();
    vf_workload_init(&o->w, vfcmd);
    int rc;
    /* the engine first: which spellings are its own flags depends on it */
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        if (!strcmp(argv[i], "--engine") && i + 1 < argc)
            v = argv[i + 1];
        else if (!strncmp(argv[i], "--engine=", 9))
            v = argv[i] + 9;
        if (v && (rc = set(cmd, o, "--engine", v)))
            return rc;
    }
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        char name[64];
        const char *val = split_inline(arg, name, sizeof name);
        if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
            o->help = true;
            continue;
        }
        if (!strcmp(arg, "--json") || !strcmp(arg, "--ascii")) {
            *(arg[2] == 'j' ? &o->json : &o->ascii) = true;
            continue;
        }
        if (!strcmp(name, "--data-dir")) {
            if (!val && i + 1 >= argc)
                return cli_usage(cmd, "flag '--data-dir' needs a value");
            o->data_dir = val ? val : argv[++i];
            continue;
        }
        bool option = (arg[0] == '-' && arg[1]) || (val && bare_engine_flag(name));
        if (!option) {
            if (o->positional)
                return cli_usage(cmd, "one %s at a time: '%s' and '%s'",
                                 vfcmd == VF_CMD_EXPLAIN ? "log" : "model", o->positional, arg);
            o->positional = arg;
            continue;
        }
        if (!strcmp(name, "--engine")) { /* applied above */
            i += !val;
            continue;
        }
        const struct vf_engine_flag *ef = NULL;
        const struct vf_option *opt = vf_workload_option(&o->w, name, &ef, NULL);
        if (opt && !val) {
            bool takes = ef ? ef->takes_value : opt->kind != VF_KIND_FLAG;
            if (takes && !ef && opt->bare) {
                /* an optional value: the next argument when it is one */
                if (i + 1 < argc && vf_option_accepts(&o->w, opt, argv[i + 1]))
                    val = argv[++i];
            } else if (takes) {
                if (i + 1 >= argc)
                    return cli_usage(cmd, "flag '%s' needs a value", name);
                val = argv[++i];
            }
            /* a two-word value: "--offload block-swap 20" */
            if (opt->two_words && val && i + 1 < argc && argv[i + 1][0] >= '0' &&
                argv[i + 1][0] <= '9' && !strcmp(val, "block-swap")) {
                snprintf(o->joined, sizeof o->joined, "%s %.20s", val, argv[++i]);
                val = o->joined;
            }
        }
        if ((rc = set(cmd, o, name, val)))
            return rc;
    }
    /* Ollama's environment variables, unless a flag gave them */
    const struct vf_engine *e = o->w.engine ? vf_engine_find(o->w.engine) : NULL;
    for (const struct vf_engine_flag *f = e ? e->flags : NULL; f && f->name; f++) {
        const char *env = strncmp(f->name, "OLLAMA_", 7) ? NULL : getenv(f->name);
        if (env && !vf_engine_opt(&o->w.opts, f->name) && (rc = set(cmd, o, f->name, env)))
            return rc;
    }
    if (vfcmd != VF_CMD_EXPLAIN && o->positional) {
        if (o->w.model)
            return cli_usage(cmd, "one model at a time: '%s' and '%s'", o->w.model, o->positional);
        o->w.model = o->positional;
    }
    struct vf_error err = {0};
    if (vf_workload_finish(&o->w, &err))
        return cli_usage(cmd, "%s", err.msg);
    if (!o->help && vfcmd != VF_CMD_EXPLAIN && !o->w.model)
        return cli_usage(cmd, "which model? (a catalog id such as llama-3.1-8b)");
    return 0;
}

int cli_answer_begin(const char *cmd, unsigned vfcmd, int argc, char **argv, struct cli_answer *r)
{
    memset(r, 0, sizeof *r);
    int rc = cli_parse_opts(cmd, argc, argv, vfcmd, &r->o);
    if (rc)
        return rc;
    if (r->o.help)
        return cli_print(cli_help_text(cmd));
    /* an estimate without a card reads neither the card table nor prices: the first is for
     * the card's fit and speed, the second for its euros per result (issues 15, 24) */
    unsigned parts = vfcmd == VF_CMD_ESTIMATE && !r->o.w.gpu ? VF_CATALOG_MODELS : VF_CATALOG_ALL;
    if (!(r->cat = cli_catalog_parts(r->o.data_dir, parts)))
        return EXIT_ERR;
    r->a = cli_arena();
    r->ans = r->a ? vf_arena_alloc(r->a, sizeof *r->ans) : NULL;
    if (!r->ans) {
        if (r->a)
            cli_error("out of memory");
        return EXIT_ERR;
    }
    return -1;
}

void cli_answer_end(struct cli_answer *r)
{
    vf_arena_close(r->a);
    vf_catalog_close(r->cat);
    r->a = NULL;
    r->cat = NULL;
}
