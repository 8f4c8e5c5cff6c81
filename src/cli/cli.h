/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cli.h - what the subcommands of the vramfit CLI share: exit codes, error printing, the
 * parsed workload flags. The CLI uses nothing of the library but include/vramfit.h.
 */
#ifndef VRAMFIT_CLI_H
#define VRAMFIT_CLI_H

#include "vramfit.h"

#include <stdio.h>

enum {
    EXIT_YES = 0,   /* answered yes / found */
    EXIT_ERR = 1,   /* an error */
    EXIT_USAGE = 2, /* bad flags or arguments */
    EXIT_NO = 3     /* answered no: does not fit, nothing found */
};

/* Prints "vramfit: error: <msg>" (and the hint) to stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The same for a bad argument: its JSON form's code is bad_request. */
void cli_bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints a usage error naming the command and returns EXIT_USAGE. */
int cli_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints a library error and returns the exit code it maps to. */
int cli_lib_error(const struct vf_error *err);

/* The command running now ("estimate"), for usage errors the library reports. */
extern const char *cli_cmd;
/* --json was given: errors are also written as {"error": {...}} on stdout. */
extern bool cli_json;

/* Options of estimate, pick and explain: the workload from the library's option table
 * (vf_workload_set), and what only the command line has. */
struct cli_opts {
    struct vf_workload w;
    const char *positional; /* estimate, pick: the model; explain: the log */
    const char *data_dir;
    bool json, ascii, help;
    char joined[64]; /* a two-word value ("block-swap 20") */
};

/* Parses argv[1..] (argv[0] is the subcommand) for vfcmd (VF_CMD_*): the table's options in
 * every spelling, "--x=v" or "--x v", an engine's flags, its OLLAMA_* environment.
 * Returns 0, or the exit code of a usage error already printed. */
int cli_parse_opts(const char *cmd, int argc, char **argv, unsigned vfcmd, struct cli_opts *o);

/* What estimate and pick share: the options, the catalog, an arena and the answer. */
struct cli_answer {
    struct cli_opts o;
    struct vf_catalog *cat;
    struct vf_arena *a;
    struct vf_answer *ans;
};
/* Parses the options of cmd (VF_CMD_*), prints --help, opens the catalog and the arena.
 * Returns -1 when the command goes on, else its exit code (help printed, or an error). */
int cli_answer_begin(const char *cmd, unsigned vfcmd, int argc, char **argv, struct cli_answer *r);
void cli_answer_end(struct cli_answer *r);

/* The pieces of the help of a command whose options the library's table holds: the text
 * before them, the command line's own flags, the table's command (VF_CMD_*), the text after;
 * false for the other commands (their help is one text). */
struct cli_help_parts {
    const char *intro, *cli_flags;
    unsigned vfcmd;
    const char *outro;
};
bool cli_help_parts(const char *cmd, struct cli_help_parts *out);

/* `help --man [COMMAND]` and `help --complete WHAT [COMMAND]` (cmd_doc.c); argv[0] is the
 * flag. */
int cli_doc(int argc, char **argv);

/* The catalog (embedded, or --data-dir / VRAMFIT_DATA_DIR); prints the error itself. */
struct vf_catalog *cli_catalog(const char *data_dir);
/* The same, reading only VF_CATALOG_* `parts`. */
struct vf_catalog *cli_catalog_parts(const char *data_dir, unsigned parts);

/* An arena (vf_arena_open(0)); NULL with "out of memory" printed when it cannot be had. */
struct vf_arena *cli_arena(void);

/* Issue 28: is the locale's character set other than UTF-8 (LC_ALL, else LC_CTYPE, else LANG,
 * as setlocale() reads them; none set is the POSIX locale, ASCII)? Then the text is ASCII, as
 * --ascii makes it. */
bool cli_locale_ascii(void);

/* Writes text to stdout; returns EXIT_ERR when it could not. */
int cli_print(const char *text);

int cmd_estimate(int argc, char **argv);
int cmd_pick(int argc, char **argv);
int cmd_catalog(int argc, char **argv);
int cmd_inspect(int argc, char **argv);
int cmd_explain(int argc, char **argv);
int cmd_help(int argc, char **argv);
int cmd_serve(int argc, char **argv);    /* runs vramfit-serve */
int cmd_exporter(int argc, char **argv); /* runs vramfit-serve --metrics-only */
/* explain --follow (follow.c): argv as cmd_explain has it. */
int cli_explain_follow(int argc, char **argv);
/* The OOM spool folder (spool.c): `given` (--oom-spool), else VRAMFIT_OOM_SPOOL, else NULL. */
const char *cli_spool_dir(const char *given);
/* Leaves one explanation (explain --json text) of `count` errors in dir; -1 with it said. */
int cli_spool_write(const char *dir, const char *json, uint64_t count);
int cmd_smi(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_run(int argc, char **argv);

/* The help text of a subcommand (NULL for an unknown one). */
const char *cli_help_text(const char *cmd);

#endif
