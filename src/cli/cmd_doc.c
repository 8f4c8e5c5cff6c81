/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_doc.c - the installed documentation, made from what `help` prints: `vramfit help --man
 * [COMMAND]` writes the man page vramfit(1) or vramfit-COMMAND(1) in roff (the options of
 * estimate, pick and explain from the library's option table, vf_options), and `vramfit help
 * --complete WHAT [COMMAND]` lists words for the shell completions (completions/): commands,
 * a command's flags, catalog models, cards and engines, one per line.
 */
#include "cli.h"
#include "version.h"

#include <stdio.h>
#include <string.h>

static const char *const commands[] = {"estimate", "pick",     "inspect", "catalog",
                                       "explain",  "serve",    "smi",     "top",
                                       "run",      "exporter", "help"};
#define N_COMMANDS (sizeof commands / sizeof commands[0])

/* s as roff text: backslashes escaped, a line that would start a request made literal. */
static void roff(FILE *f, const char *s, size_t n)
{
    bool bol = true;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (bol && (c == '.' || c == '\''))
            fputs("\\&", f);
        if (c == '\\')
            fputs("\\e", f);
        else if (c == '-')
            fputs("\\-", f);
        else
            fputc(c, f);
        bol = c == '\n';
    }
}

/* One option as a tagged paragraph: its spellings, its value, its help. */
static void man_option(FILE *f, const char *name, const char *const *aliases, const char *arg,
                       bool optional, const char *help)
{
    fputs(".TP\n.B ", f);
    roff(f, name, strlen(name));
    for (size_t k = 0; aliases && aliases[k]; k++) {
        fputs(", ", f);
        roff(f, aliases[k], strlen(aliases[k]));
    }
    if (arg) {
        fputs(optional ? " [\\fI" : " \\fI", f);
        roff(f, arg, strlen(arg));
        fputs(optional ? "\\fR]" : "\\fR", f);
    }
    fputc('\n', f);
    roff(f, help, strlen(help));
    fputc('\n', f);
}

/* The OPTIONS section: the command line's flags ("  --data-dir DIR   read ...", one a line),
 * then every option of the library's table for vfcmd. */
static void man_options(FILE *f, const struct cli_help_parts *p)
{
    fputs(".SH OPTIONS\n", f);
    for (const char *l = p->cli_flags; *l;) {
        const char *end = strchr(l, '\n');
        size_t len = end ? (size_t)(end - l) : strlen(l);
        char line[160];
        snprintf(line, sizeof line, "%.*s", (int)len, l);
        char *name = line + strspn(line, " "), *help = strstr(name, "  ");
        if (help) {
            *help = 0;
            help += strspn(help + 1, " ") + 1;
            char *arg = strchr(name, ' ');
            if (arg)
                *arg++ = 0;
            man_option(f, name, NULL, arg, false, help);
        }
        l += len + (end != NULL);
    }
    size_t n;
    const struct vf_option *t = vf_options(&n);
    for (size_t i = 0; i < n; i++)
        if (t[i].cmds & p->vfcmd)
            man_option(f, t[i].name, t[i].aliases, t[i].arg, t[i].bare != NULL, t[i].help);
}

/* A man page: NAME, SYNOPSIS (the help's usage line), DESCRIPTION (the rest of the help as
 * printed), for the table's commands OPTIONS and the text after them, and the other pages. */
static int man_page(const char *cmd)
{
    struct cli_help_parts parts;
    bool table = cmd && cli_help_parts(cmd, &parts);
    const char *text = table ? parts.intro : cli_help_text(cmd);
    if (!text) {
        cli_error("no man page for '%s'", cmd ? cmd : "");
        return EXIT_USAGE;
    }
    FILE *f = stdout;
    char title[64];
    snprintf(title, sizeof title, "%s%s", cmd ? "vramfit-" : "vramfit", cmd ? cmd : "");
    fprintf(f, ".TH %s 1 \"%s\" \"vramfit %s\" \"vramfit manual\"\n", title, VF_CATALOG_DATE,
            VF_VERSION);
    fputs(".SH NAME\n", f);
    roff(f, title, strlen(title));
    if (cmd)
        fprintf(f, " \\- the vramfit %s command\n", cmd);
    else
        fputs(" \\- will it fit on the GPU, and what is the cheapest card it fits on\n", f);
    /* the usage line is the synopsis; the text after it, as printed, the description */
    const char *usage = strstr(text, "usage: ");
    const char *after = usage ? strchr(usage, '\n') : NULL;
    if (usage && after) {
        fputs(".SH SYNOPSIS\n.nf\n", f);
        roff(f, usage + 7, (size_t)(after + 1 - (usage + 7)));
        fputs(".fi\n", f);
        text = after + 1 + (after[1] == '\n');
    }
    fputs(".SH DESCRIPTION\n.nf\n", f);
    roff(f, text, strlen(text));
    fputs(".fi\n", f);
    if (table) {
        man_options(f, &parts);
        fputs(".SH NOTES\n.nf\n", f);
        roff(f, parts.outro + (parts.outro[0] == '\n'),
             strlen(parts.outro) - (parts.outro[0] == '\n'));
        fputs(".fi\n", f);
    }
    fputs(".SH SEE ALSO\n", f);
    if (cmd)
        fputs(".BR vramfit (1)\n", f);
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (!cmd || strcmp(cmd, commands[i]))
            fprintf(f, ".BR vramfit-%s (1)\n", commands[i]);
    return fflush(f) == EOF ? EXIT_ERR : EXIT_YES;
}

/* The flags a command's help lists: each word that starts a help line with '-'. */
static void help_flags(const char *cmd)
{
    const char *t = cli_help_text(cmd);
    for (const char *l = t; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        const char *p = l + strspn(l, " ");
        if (*p != '-' || p == l)
            continue;
        /* "--ctx N; also -c" prints --ctx; the aliases come from the table below */
        size_t n = strcspn(p, " ,\n");
        printf("%.*s\n", (int)n, p);
    }
    struct cli_help_parts p;
    size_t n;
    const struct vf_option *o = vf_options(&n);
    for (size_t i = 0; cli_help_parts(cmd, &p) && i < n; i++)
        for (size_t k = 0; (o[i].cmds & p.vfcmd) && o[i].aliases && o[i].aliases[k]; k++)
            printf("%s\n", o[i].aliases[k]);
    puts("--help");
}

static int complete(int argc, char **argv)
{
    const char *what = argc > 0 ? argv[0] : "";
    if (!strcmp(what, "commands")) {
        for (size_t i = 0; i < N_COMMANDS; i++)
            puts(commands[i]);
    } else if (!strcmp(what, "flags") && argc > 1 && cli_help_text(argv[1])) {
        help_flags(argv[1]);
    } else if (!strcmp(what, "engines")) {
        size_t n;
        const struct vf_engine *const *e = vf_engines(&n);
        for (size_t i = 0; i < n; i++)
            puts(e[i]->name);
    } else if (!strcmp(what, "models") || !strcmp(what, "gpus")) {
        struct vf_catalog *c = cli_catalog(NULL);
        if (!c)
            return EXIT_ERR;
        for (size_t i = 0; what[0] == 'm' && i < c->n_models; i++)
            printf("%s\n", c->models[i].alias ? c->models[i].alias : c->models[i].id);
        for (size_t i = 0; what[0] == 'g' && i < c->n_gpus; i++)
            puts(c->gpus[i].id);
        vf_catalog_close(c);
    } else {
        cli_error("help --complete: commands, flags COMMAND, models, gpus or engines");
        return EXIT_USAGE;
    }
    return fflush(stdout) == EOF ? EXIT_ERR : EXIT_YES;
}

int cli_doc(int argc, char **argv)
{
    if (!strcmp(argv[0], "--man"))
        return argc > 2 ? (cli_error("help --man takes one command"), EXIT_USAGE)
                        : man_page(argc > 1 ? argv[1] : NULL);
    return complete(argc - 1, argv + 1);
}
