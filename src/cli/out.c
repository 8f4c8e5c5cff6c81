/* SPDX-License-Identifier: Apache-2.0 */
/*
 * out.c - where the commands' output goes: stdout and stderr, with the prefixes and hints of
 * the CLI's messages and the exit code each library error maps to.
 */
#include "cli.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

const char *cli_cmd = "vramfit";
bool cli_json;

/* Under --json the first error is also {"error": {...}} on stdout (DESIGN section 8), the
 * same document the HTTP API answers with; stderr keeps the message for people. */
static void json_error(const char *code, const char *msg, const char *hint)
{
    static bool done;
    if (!cli_json || done)
        return;
    done = true;
    struct vf_arena *a = vf_arena_open(0);
    const char *doc = a ? vf_render_error_json(a, code, msg, hint) : NULL;
    if (doc) {
        fputs(doc, stdout);
        fflush(stdout);
    }
    vf_arena_close(a);
}

/* A message with the code of its JSON form. */
static void error_as(const char *code, const char *fmt, va_list ap)
{
    char msg[VF_ERROR_MSG_MAX];
    vsnprintf(msg, sizeof msg, fmt, ap);
    fprintf(stderr, "vramfit: error: %s\n", msg);
    json_error(code, msg, NULL);
}

struct vf_arena *cli_arena(void)
{
    struct vf_arena *a = vf_arena_open(0);
    if (!a)
        cli_error("out of memory");
    return a;
}

void cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    error_as("failed", fmt, ap);
    va_end(ap);
}

void cli_bad(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    error_as("bad_request", fmt, ap);
    va_end(ap);
}

int cli_usage(const char *cmd, const char *fmt, ...)
{
    char msg[VF_ERROR_MSG_MAX], hint[96];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(hint, sizeof hint, "'vramfit %s --help' lists the flags", cmd);
    fprintf(stderr, "vramfit %s: %s\n  %s\n", cmd, msg, hint);
    json_error("bad_request", msg, hint);
    return EXIT_USAGE;
}

static void lib_error_as(const char *code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void lib_error_as(const char *code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    error_as(code, fmt, ap);
    va_end(ap);
}

int cli_lib_error(const struct vf_error *err)
{
    const char *msg = err->msg[0] ? err->msg : vf_strerror(err->code);
    if (err->code == VF_EUSAGE)
        return cli_usage(cli_cmd, "%s", msg);
    lib_error_as(vf_err_api_code(err->code, NULL), "%s", msg);
    switch (err->code) {
    case VF_EINVAL:
    case VF_ENOENT: /* issue 28: an unknown model, a file that is not there: a bad argument */
        return EXIT_USAGE;
    case VF_ENODEV:
        return EXIT_NO;
    default:
        return EXIT_ERR;
    }
}

int cli_print(const char *text)
{
    if (!text) {
        cli_error("out of memory");
        return EXIT_ERR;
    }
    if (fputs(text, stdout) == EOF || fflush(stdout) == EOF) {
        cli_error("cannot write the output");
        return EXIT_ERR;
    }
    return EXIT_YES;
}

bool cli_locale_ascii(void)
{
    const char *v = getenv("LC_ALL");
    if (!v || !*v)
        v = getenv("LC_CTYPE");
    if (!v || !*v)
        v = getenv("LANG");
    if (!v || !*v)
        return true; /* no locale: POSIX's, whose charset is ASCII */
    char low[64];
    size_t n = 0;
    for (; v[n] && n + 1 < sizeof low; n++)
        low[n] = (char)tolower((unsigned char)v[n]);
    low[n] = 0;
    return !strstr(low, "utf-8") && !strstr(low, "utf8");
}
