/*
 * out.c - where the commands' output goes: stdout and stderr, or, while a thread captures
 * (vramfit serve runs the same commands for its JSON API), that thread's buffers, with the
 * library error code kept for the HTTP status. Also the catalog the server shares.
 */
#include "cli.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static _Thread_local struct cli_capture *cap;
static struct vf_catalog *shared_catalog;

void cli_capture_begin(struct cli_capture *c)
{
    memset(c, 0, sizeof *c);
    cap = c;
}

void cli_capture_begin_input(struct cli_capture *c, const char *in, size_t len)
{
    cli_capture_begin(c);
    c->in = in;
    c->in_len = len;
    c->has_in = true;
}

void cli_capture_end(struct cli_capture *c)
{
    if (cap == c)
        cap = NULL;
    free(c->out);
    c->out = NULL;
}

const struct cli_capture *cli_capturing(void)
{
    return cap;
}

void cli_set_shared_catalog(struct vf_catalog *c)
{
    shared_catalog = c;
}

struct vf_catalog *cli_shared_catalog(void)
{
    return shared_catalog;
}

void cli_catalog_close(struct vf_catalog *c)
{
    if (c && c != shared_catalog)
        vf_catalog_close(c);
}

/* Appends to the capture's output; false when it cannot grow (the cap is its limit). */
static bool cap_append(const char *text, size_t n)
{
    if (cap->out_len + n + 1 > cap->out_cap) {
        size_t want = (cap->out_len + n + 1) * 2;
        if (want > CLI_CAPTURE_MAX)
            return false;
        char *p = realloc(cap->out, want);
        if (!p)
            return false;
        cap->out = p;
        cap->out_cap = want;
    }
    memcpy(cap->out + cap->out_len, text, n);
    cap->out_len += n;
    cap->out[cap->out_len] = '\0';
    return true;
}

static void verr(const char *prefix, const char *fmt, va_list ap)
{
    if (cap) {
        if (!cap->err[0])
            vsnprintf(cap->err, sizeof cap->err, fmt, ap);
        return;
    }
    fputs(prefix, stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

void cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    verr("vramfit: error: ", fmt, ap);
    va_end(ap);
}

int cli_usage(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (cap) {
        cap->usage = true;
        verr("", fmt, ap);
    } else {
        fprintf(stderr, "vramfit %s: ", cmd);
        vfprintf(stderr, fmt, ap);
        fprintf(stderr, "\n  'vramfit %s --help' lists the flags\n", cmd);
    }
    va_end(ap);
    return EXIT_USAGE;
}

int cli_lib_error(const struct vf_error *err)
{
    if (cap)
        cap->lib_code = err->code;
    cli_error("%s", err->msg[0] ? err->msg : vf_strerror(err->code));
    switch (err->code) {
    case VF_EINVAL:
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
    if (cap) {
        if (!cap_append(text, strlen(text))) {
            cli_error("the output is over the limit of %d bytes", CLI_CAPTURE_MAX);
            return EXIT_ERR;
        }
        return EXIT_YES;
    }
    if (fputs(text, stdout) == EOF || fflush(stdout) == EOF) {
        cli_error("cannot write the output");
        return EXIT_ERR;
    }
    return EXIT_YES;
}
