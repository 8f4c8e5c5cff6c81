/* SPDX-License-Identifier: Apache-2.0 */
/*
 * follow.c - following logs as `tail -F` does, for `vramfit explain --follow` and `vramfit
 * exporter --follow`: each poll reads what each file gained, across rotation and truncation,
 * and hands every new out-of-memory error to the public explain call (vf_answer_explain_text)
 * with the lines before it as context. How a log is scanned is the scanner's business (oom/);
 * this module only decides which bytes are new and which are context.
 *
 * Per file, one buffer of FOLLOW_BUF bytes: [context: whole lines already seen][new bytes]
 * [a line not ended yet]. New whole lines are explained together with the context; events in
 * the context alone were counted before (or, for what the file held when first opened, are
 * never counted) and are subtracted. Then the context becomes the last VF_FOLLOW_CONTEXT bytes
 * of whole lines. Memory per file is bounded whatever the log writes.
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define FOLLOW_CHUNK ((size_t)1 << 20) /* new bytes explained at once, at most */
#define FOLLOW_BUF   (VF_FOLLOW_CONTEXT + FOLLOW_CHUNK)

struct follow_file {
    const char *path;
    int fd; /* -1: not open (not there yet, or rotated away and not back) */
    dev_t dev;
    ino_t ino;
    uint64_t off;          /* bytes of the open file read */
    struct timespec mtime; /* its modification time when `off` was its size */
    char *buf;             /* FOLLOW_BUF bytes */
    size_t ctx;            /* context bytes at the start of buf (whole lines) */
    size_t len;            /* bytes held: context, new, the unfinished line */
    bool seen_once; /* opened before: a file opened now is new (rotation), all of it counted */
};

struct vf_follow {
    struct follow_file f[VF_FOLLOW_MAX_FILES];
    size_t n;
};

enum vf_err vf_follow_open(struct vf_follow **out, const char *const *paths, size_t n,
                           struct vf_error *err)
{
    *out = NULL;
    if (!n || n > VF_FOLLOW_MAX_FILES)
        return vf__errf(err, VF_EUSAGE, "follow: %zu files; 1 to %d can be followed", n,
                        VF_FOLLOW_MAX_FILES);
    struct vf_follow *f = vf__malloc(sizeof *f);
    if (!f)
        return vf__errf(err, VF_ENOMEM, "follow: out of memory");
    memset(f, 0, sizeof *f);
    for (size_t i = 0; i < n; i++) {
        f->f[i].path = paths[i];
        f->f[i].fd = -1;
        if (!(f->f[i].buf = vf__malloc(FOLLOW_BUF))) {
            f->n = i;
            vf_follow_close(f);
            return vf__errf(err, VF_ENOMEM, "follow: out of memory");
        }
    }
    f->n = n;
    *out = f;
    return VF_OK;
}

void vf_follow_close(struct vf_follow *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < f->n; i++) {
        if (f->f[i].fd >= 0)
            close(f->f[i].fd);
        vf__free(f->f[i].buf);
    }
    vf__free(f);
}

/* Events in text (a whole number of lines), counted by the scanner; 0 when it fails. */
static uint64_t events_in(struct vf_arena *a, const char *text, size_t len)
{
    struct vf_oom_scan *s;
    const struct vf_oom_event *ev;
    const struct vf_oom_context *ctx;
    size_t kept;
    uint64_t total = 0;
    if (!len || vf_oom_scan_open(a, &s, NULL) || vf_oom_scan_feed(s, text, len, NULL) ||
        vf_oom_scan_finish(s, &ev, &kept, &total, &ctx, NULL))
        return 0;
    return total;
}

struct poll_ctx {
    const struct vf_catalog *c;
    struct vf_workload *w;
    void (*hit)(void *ud, const struct vf_follow_hit *h);
    void *ud;
    struct vf_error *err;
    enum vf_err rc; /* the first explain error of this poll */
};

/* The whole lines after the context (all of the held bytes when `all`, or when the buffer is
 * full without a line end): explained when `count`, then the context moves on. */
static void take_lines(struct follow_file *f, struct poll_ctx *p, bool all, bool count)
{
    size_t end = f->len;
    if (!all && f->len < FOLLOW_BUF) {
        while (end > f->ctx && f->buf[end - 1] != '\n')
            end--;
    }
    if (end == f->ctx)
        return;
    if (count) {
        struct vf_arena *a = vf_arena_open(0);
        struct vf_workload w = *p->w;
        struct vf_explain x;
        struct vf_error e = {0};
        if (!a) {
            if (!p->rc)
                p->rc = vf__errf(p->err, VF_ENOMEM, "follow: out of memory");
        } else if (vf_answer_explain_text(a, p->c, &w, f->buf, end, &x, &e)) {
            if (!p->rc) {
                p->rc = e.code;
                if (p->err)
                    *p->err = e;
                vf__err_prefix(p->err, "%s", f->path);
            }
        } else if (x.n_events) {
            uint64_t old = events_in(a, f->buf, f->ctx);
            struct vf_follow_hit h = {f->path, &x, x.n_total > old ? x.n_total - old : 0};
            if (h.n_new)
                p->hit(p->ud, &h);
        }
        vf_arena_close(a);
    }
    /* the new context: the last VF_FOLLOW_CONTEXT bytes of [0, end), from a line's start */
    size_t start = 0;
    if (end > VF_FOLLOW_CONTEXT) {
        start = end - VF_FOLLOW_CONTEXT;
        while (start < end && f->buf[start - 1] != '\n')
            start++;
    }
    memmove(f->buf, f->buf + start, f->len - start);
    f->ctx = end - start;
    f->len -= start;
}

/* Reads fd to its end into f's buffer, explaining whole lines as the buffer fills. */
static void drain(struct follow_file *f, struct poll_ctx *p, bool count)
{
    for (;;) {
        ssize_t got = read(f->fd, f->buf + f->len, FOLLOW_BUF - f->len);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        f->len += (size_t)got;
        f->off += (uint64_t)got;
        if (f->len == FOLLOW_BUF)
            take_lines(f, p, false, count);
    }
    take_lines(f, p, false, count);
}

/* Opens f's path; the first time, its last VF_FOLLOW_CONTEXT bytes become the context (what
 * the file held before is never counted). False when it is not there (yet). */
static bool open_file(struct follow_file *f, struct poll_ctx *p)
{
    int fd = open(f->path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
        return false;
    if (fstat(fd, &st)) {
        close(fd);
        return false;
    }
    f->fd = fd;
    f->dev = st.st_dev;
    f->ino = st.st_ino;
    f->off = 0;
    f->len = f->ctx; /* an unfinished line of the file before is dropped */
    if (f->seen_once)
        return true;
    f->seen_once = true;
    if (S_ISREG(st.st_mode) && (uint64_t)st.st_size > VF_FOLLOW_CONTEXT) {
        f->off = (uint64_t)st.st_size - VF_FOLLOW_CONTEXT;
        if (lseek(fd, (off_t)f->off, SEEK_SET) < 0)
            f->off = 0;
    }
    bool mid_line = f->off > 0;
    drain(f, p, false);
    if (!fstat(fd, &st) && (uint64_t)st.st_size == f->off)
        f->mtime = st.st_mtim;
    if (mid_line) { /* the first line read was cut by the seek */
        char *nl = memchr(f->buf, '\n', f->ctx);
        size_t drop = nl ? (size_t)(nl - f->buf) + 1 : f->ctx;
        memmove(f->buf, f->buf + drop, f->len - drop);
        f->ctx -= drop;
        f->len -= drop;
    }
    return true;
}

/* What the open file gained: from its start when it was truncated (smaller than what was
 * read, or as large but written since: cut and written again to the same size between two
 * polls); its modification time noted when all of it is read. */
static void read_new(struct follow_file *f, struct poll_ctx *p)
{
    struct stat st;
    if (!fstat(f->fd, &st) && S_ISREG(st.st_mode) &&
        ((uint64_t)st.st_size < f->off ||
         ((uint64_t)st.st_size == f->off && f->off &&
          (st.st_mtim.tv_sec != f->mtime.tv_sec || st.st_mtim.tv_nsec != f->mtime.tv_nsec)))) {
        lseek(f->fd, 0, SEEK_SET);
        f->off = 0;
        f->len = f->ctx;
    }
    drain(f, p, true);
    if (!fstat(f->fd, &st) && (uint64_t)st.st_size == f->off)
        f->mtime = st.st_mtim;
}

/* One file: truncated or grown (read_new), or rotated (the path names another file: the old
 * one is read to its end, then the new one from its start). */
static void poll_file(struct follow_file *f, struct poll_ctx *p)
{
    if (f->fd < 0 && !open_file(f, p))
        return;
    read_new(f, p);
    struct stat now;
    if (stat(f->path, &now) || (now.st_dev == f->dev && now.st_ino == f->ino))
        return; /* the same file, or the path is gone for now: keep reading what is open */
    take_lines(f, p, true, true); /* the old file's last line, even without its newline */
    close(f->fd);
    f->fd = -1;
    if (open_file(f, p))
        read_new(f, p);
}

enum vf_err vf_follow_poll(struct vf_follow *f, const struct vf_catalog *c, struct vf_workload *w,
                           void (*hit)(void *ud, const struct vf_follow_hit *h), void *ud,
                           struct vf_error *err)
{
    struct poll_ctx p = {c, w, hit, ud, err, VF_OK};
    for (size_t i = 0; i < f->n; i++)
        poll_file(&f->f[i], &p);
    return p.rc;
}
