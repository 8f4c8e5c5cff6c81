/* SPDX-License-Identifier: Apache-2.0 */
/*
 * oom_reader.c - feeds a file descriptor to the OOM scanner (issue 29): a regular file through
 * a mapped window that slides forward (the pages behind the scanner are unmapped, so memory
 * stays one window however large the log), anything that cannot be mapped (a pipe, a
 * terminal, stdin) through read() into one buffer. The scanner reads the mapped bytes where
 * they lie: no copy per chunk. Reusable for a log that grows (the offset says where to go on).
 */
#define _GNU_SOURCE /* MAP_POPULATE, sigsetjmp */
#include "oom.h"

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define READ_CHUNK ((size_t)1 << 20) /* the read() buffer of an unmappable input */
#define FEED       ((size_t)1 << 20) /* mapped bytes fed to the scanner at a time */

static enum vf_err io_error(struct vf_error *err, const char *what, const char *name,
                            uint64_t offset)
{
    return vf__errf(err, VF_EIO, "cannot %s '%s' at byte %llu: %s", what, name ? name : "-",
                    (unsigned long long)offset, strerror(errno));
}

void (*vf__oom_reader_mapped)(int fd, uint64_t base, size_t len);

/*
 * A file cut short while a window of it is mapped (truncated by another process: a log
 * rotated by copy and truncate) makes the scanner's next read of a page past the new end
 * fault with SIGBUS. The reader catches it: its handler (put in place before a file's windows
 * are read, when another has taken its place) jumps back to the window's read when this
 * thread is reading a window, and leaves any other SIGBUS to the handler it replaced (by
 * default: the process ends, as it would have). The read ends with an error.
 */
static _Thread_local sigjmp_buf *window_jump;
static struct sigaction bus_before;
static pthread_mutex_t bus_lock = PTHREAD_MUTEX_INITIALIZER;

static void on_bus(int sig, siginfo_t *si, void *uc)
{
    if (window_jump)
        siglongjmp(*window_jump, 1);
    if (bus_before.sa_flags & SA_SIGINFO) {
        bus_before.sa_sigaction(sig, si, uc);
        return;
    }
    if (bus_before.sa_handler != SIG_DFL && bus_before.sa_handler != SIG_IGN) {
        bus_before.sa_handler(sig);
        return;
    }
    signal(SIGBUS, SIG_DFL); /* the fault happens again on return, now with the default */
}

/* Whether on_bus handles SIGBUS (put in place if another handler took its place). */
static bool bus_guard(void)
{
    struct sigaction cur, sa;
    bool ok = false;
    pthread_mutex_lock(&bus_lock);
    if (!sigaction(SIGBUS, NULL, &cur)) {
        ok = (cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_bus;
        if (!ok) {
            memset(&sa, 0, sizeof sa);
            sa.sa_sigaction = on_bus;
            sa.sa_flags = SA_SIGINFO;
            sigemptyset(&sa.sa_mask);
            bus_before = cur;
            ok = !sigaction(SIGBUS, &sa, NULL);
        }
    }
    pthread_mutex_unlock(&bus_lock);
    return ok;
}

/* Feeds map[skip..len) to the scanner; *cut: the file was cut short under it (the read stopped
 * at a page that is no longer there). */
static enum vf_err feed_window(struct vf_oom_scan *s, const char *map, size_t skip, size_t len,
                               bool *cut, struct vf_error *err)
{
    sigjmp_buf jump;
    *cut = false;
    if (sigsetjmp(jump, 1)) {
        window_jump = NULL;
        *cut = true;
        return VF_EIO;
    }
    window_jump = &jump;
    enum vf_err rc = VF_OK;
    /* in pieces that stay in the cache (L2) between the scanner's passes over a hit's lines;
     * each feed normalises the last 4 KiB of its lines (the tail): 1 MiB pieces, not 256 KiB,
     * took that from 1.6 % of a progress-bar log's bytes to 0.4 % */
    for (size_t at = skip; at < len && !rc; at += FEED)
        rc = vf_oom_scan_feed(s, map + at, len - at < FEED ? len - at : FEED, err);
    window_jump = NULL;
    return rc;
}

/* read() until the end of the input, from *offset (counted, not sought). */
static enum vf_err feed_reads(struct vf_oom_scan *s, int fd, uint64_t *offset, const char *name,
                              struct vf_error *err)
{
    char *buf = vf__malloc(READ_CHUNK);
    if (!buf)
        return vf__errf(err, VF_ENOMEM, "oom scan: out of memory (read buffer)");
    enum vf_err rc = VF_OK;
    for (;;) {
        ssize_t got = read(fd, buf, READ_CHUNK);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            rc = io_error(err, "read", name, *offset);
            break;
        }
        if (!got || (rc = vf_oom_scan_feed(s, buf, (size_t)got, err)) != VF_OK)
            break;
        *offset += (uint64_t)got;
    }
    vf__free(buf);
    return rc;
}

enum vf_err vf__oom_scan_fd_window(struct vf_oom_scan *s, int fd, uint64_t *offset, size_t window,
                                   const char *name, struct vf_error *err)
{
    if (!s || fd < 0 || !offset)
        return vf__errf(err, VF_EINVAL, "oom scan: bad arguments");
    struct stat st;
    long page = sysconf(_SC_PAGESIZE);
    if (fstat(fd, &st) || !S_ISREG(st.st_mode))
        return feed_reads(s, fd, offset, name, err);
    if (page <= 0 || window < (size_t)page || !st.st_size) {
        /* no window to map, or a file whose size says nothing (/proc): read from *offset */
        if (lseek(fd, (off_t)*offset, SEEK_SET) < 0)
            return io_error(err, "seek", name, *offset);
        return feed_reads(s, fd, offset, name, err);
    }
    window -= window % (size_t)page;
    if (!bus_guard()) { /* no guard against a file cut short: read() it */
        if (lseek(fd, (off_t)*offset, SEEK_SET) < 0)
            return io_error(err, "seek", name, *offset);
        return feed_reads(s, fd, offset, name, err);
    }
    uint64_t size = (uint64_t)st.st_size;
    while (*offset < size) {
        /* a log cut short meanwhile (rotated by copy and truncate) is read to its new end:
         * a mapped page past the end would fault (the window left is the only exposure) */
        if (!fstat(fd, &st) && (uint64_t)st.st_size < size)
            size = (uint64_t)st.st_size;
        if (*offset >= size)
            break;
        uint64_t base = *offset - *offset % (uint64_t)page;
        size_t len = size - base < window ? (size_t)(size - base) : window;
        int flags = MAP_PRIVATE;
#ifdef MAP_POPULATE
        flags |= MAP_POPULATE; /* the window's pages in one call, not one fault each */
#endif
        char *map = mmap(NULL, len, PROT_READ, flags, fd, (off_t)base);
        if (map == MAP_FAILED) {
            if (base == 0 && lseek(fd, (off_t)*offset, SEEK_SET) >= 0)
                return feed_reads(s, fd, offset, name, err); /* a file that cannot be mapped */
            return io_error(err, "map", name, *offset);
        }
        if (vf__oom_reader_mapped)
            vf__oom_reader_mapped(fd, base, len);
        bool cut;
        enum vf_err rc = feed_window(s, map, (size_t)(*offset - base), len, &cut, err);
        munmap(map, len);
        if (cut) {
            uint64_t now = !fstat(fd, &st) ? (uint64_t)st.st_size : 0;
            return vf__errf(err, VF_EIO,
                            "cannot read '%s': it was cut short to %llu bytes while its bytes "
                            "%llu..%llu were read (truncated by another process?)",
                            name ? name : "-", (unsigned long long)now, (unsigned long long)base,
                            (unsigned long long)(base + len));
        }
        if (rc)
            return rc;
        *offset = base + len;
    }
    return VF_OK;
}

enum vf_err vf_oom_scan_fd(struct vf_oom_scan *s, int fd, uint64_t *offset, const char *name,
                           struct vf_error *err)
{
    return vf__oom_scan_fd_window(s, fd, offset, VF_OOM_MAP_WINDOW, name, err);
}
