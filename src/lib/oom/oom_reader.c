/* SPDX-License-Identifier: Apache-2.0 */
/*
 * oom_reader.c - feeds a file descriptor to the OOM scanner (issue 29): a regular file through
 * a mapped window that slides forward (the pages behind the scanner are unmapped, so memory
 * stays one window however large the log), anything that cannot be mapped (a pipe, a
 * terminal, stdin) through read() into one buffer. The scanner reads the mapped bytes where
 * they lie: no copy per chunk. Reusable for a log that grows (the offset says where to go on).
 */
#define _GNU_SOURCE /* MAP_POPULATE */
#include "oom.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define READ_CHUNK ((size_t)1 << 20)   /* the read() buffer of an unmappable input */
#define FEED       ((size_t)256 << 10) /* mapped bytes fed to the scanner at a time */

static enum vf_err io_error(struct vf_error *err, const char *what, const char *name,
                            uint64_t offset)
{
    return vf__errf(err, VF_EIO, "cannot %s '%s' at byte %llu: %s", what, name ? name : "-",
                    (unsigned long long)offset, strerror(errno));
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
        size_t skip = (size_t)(*offset - base);
        enum vf_err rc = VF_OK;
        /* in pieces that stay in the cache between the scanner's passes over them */
        for (size_t at = skip; at < len && !rc; at += FEED)
            rc = vf_oom_scan_feed(s, map + at, len - at < FEED ? len - at : FEED, err);
        munmap(map, len);
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
