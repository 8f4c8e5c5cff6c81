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
/* Prints a usage error naming the command and returns EXIT_USAGE. */
int cli_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints a library error and returns the exit code it maps to. */
int cli_lib_error(const struct vf_error *err);

/* Flags shared by estimate and pick (DESIGN section 8: ours first, engines' spellings too). */
struct cli_opts {
    const char *model;
    struct vf_workload w;
    const char *gpu; /* --gpu CARD|SIZE|local */
    uint32_t gpus;   /* --gpus N, 0 = not given */
    const char *data_dir;
    const char *currency;
    struct vf_pick_opts pick; /* --currency, --fx */
    double hours;
    bool json, ascii, help;
    const char *ctx_flag;        /* the spelling that set the context, for the assumptions */
    uint64_t llamacpp_total_ctx; /* -c as llama.cpp means it: ctx x users */
    const char *ctv;             /* -ctv value, must match -ctk */
    bool task_set;               /* --task given; else the model's own task */
};

/* Parses argv[1..] (argv[0] is the subcommand). `allow` is a bit set of CLI_OPT_*.
 * Returns 0, or the exit code of a usage error already printed. */
#define CLI_OPT_CARD  1u /* --gpu, --gpus */
#define CLI_OPT_PRICE 2u /* --hours, --currency */
#define CLI_OPT_COUNT 4u /* --gpus alone */
int cli_parse_opts(const char *cmd, int argc, char **argv, unsigned allow, struct cli_opts *o);

/* The catalog (embedded, or --data-dir / VRAMFIT_DATA_DIR); prints the error itself. */
struct vf_catalog *cli_catalog(const char *data_dir);

/* Resolves --gpu into a card name, its usable bytes and the count. */
struct cli_card {
    const char *name;  /* catalog id, the raw size as given, or the local device */
    const char *label; /* what to print: "RTX 4090 24 GB" */
    uint64_t usable_bytes;
    uint32_t count;
    const char *note; /* local: what was subtracted */
};
int cli_resolve_card(struct vf_arena *a, const struct vf_catalog *c, const struct cli_opts *o,
                     struct cli_card *out);

/* Picks the engine a model's format implies when --engine was not given (.gguf: llama.cpp). */
void cli_default_engine(struct cli_opts *o, const struct vf_model *m);

/* Adds to e's assumptions what the CLI decided from the flags' spellings (llama.cpp -c). */
void cli_note_flags(struct vf_arena *a, const struct cli_opts *o, struct vf_estimate *e);

/* Writes text to stdout (or the capture); returns EXIT_ERR when it could not. */
int cli_print(const char *text);

/*
 * Capturing a command's output on this thread (vramfit serve): cli_print appends to `out`,
 * errors keep the first message in `err` (without the "vramfit: error:" prefix), usage errors
 * set `usage`, library errors their code. A command reading "-" reads `in` instead of stdin.
 */
#define CLI_CAPTURE_MAX (64 << 20)
struct cli_capture {
    char *out;
    size_t out_len, out_cap;
    char err[VF_ERROR_MSG_MAX];
    bool usage;
    enum vf_err lib_code;
    const char *in;
    size_t in_len;
    bool has_in;
};
void cli_capture_begin(struct cli_capture *c);
void cli_capture_begin_input(struct cli_capture *c, const char *in, size_t len);
void cli_capture_end(struct cli_capture *c);
const struct cli_capture *cli_capturing(void);

/* One catalog shared by every command while the server runs (cli_catalog returns it). */
void cli_set_shared_catalog(struct vf_catalog *c);
struct vf_catalog *cli_shared_catalog(void);
/* Closes a catalog cli_catalog returned (not the shared one). */
void cli_catalog_close(struct vf_catalog *c);

int cmd_estimate(int argc, char **argv);
int cmd_pick(int argc, char **argv);
int cmd_catalog(int argc, char **argv);
int cmd_inspect(int argc, char **argv);
int cmd_explain(int argc, char **argv);
int cmd_help(int argc, char **argv);
int cmd_serve(int argc, char **argv); /* src/server/serve.c */
int cmd_smi(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_run(int argc, char **argv);

/* The help text of a subcommand (NULL for an unknown one). */
const char *cli_help_text(const char *cmd);

#endif
