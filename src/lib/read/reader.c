/* SPDX-License-Identifier: Apache-2.0 */
/*
 * reader.c - the byte sources the model readers pull headers from: a file read with pread
 * (only the bytes asked for; a 100 GB model costs a few KiB of reads) and a memory buffer
 * (tests, fuzzers). The hub client of issue 3 adds HTTP range reads behind the same struct.
 */
#include "internal.h"

#include <assert.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

struct mem_src {
    const unsigned char *data;
    size_t len;
};

static enum vf_err mem_read(void *ud, uint64_t off, void *buf, size_t n, size_t *got,
                            struct vf_error *err)
{
    (void)err;
    const struct mem_src *m = ud;
    *got = 0;
    if (off >= m->len)
        return VF_OK;
    size_t k = m->len - (size_t)off < n ? m->len - (size_t)off : n;
    memcpy(buf, m->data + off, k);
    *got = k;
    return VF_OK;
}

void vf_reader_mem(struct vf_reader *r, const void *data, size_t len, const char *name)
{
    /* the descriptor lives in the reader itself: no allocation, nothing to fail */
    static_assert(sizeof(struct mem_src) <= sizeof(r->mem), "reader: mem slot too small");
    struct mem_src *m = (struct mem_src *)(void *)r->mem;
    m->data = data;
    m->len = len;
    r->read = mem_read;
    r->ud = m;
    r->size = len;
    r->name = name;
    r->fd = -1;
}

static enum vf_err file_read(void *ud, uint64_t off, void *buf, size_t n, size_t *got,
                             struct vf_error *err)
{
    const struct vf_reader *r = ud;
    *got = 0;
    while (*got < n) {
        ssize_t k = pread(r->fd, (char *)buf + *got, n - *got, (off_t)(off + *got));
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return vf__errf(err, VF_EIO, "cannot read '%s' at byte %llu: %s", r->name,
                            (unsigned long long)(off + *got), strerror(errno));
        if (k == 0)
            break;
        *got += (size_t)k;
    }
    return VF_OK;
}

/* Anything but a regular file (a FIFO, a device) is refused before a byte is read, and the
 * open cannot block (vf__open_regular). */
enum vf_err vf_reader_open_file(struct vf_reader *r, const char *path, struct vf_error *err)
{
    memset(r, 0, sizeof *r);
    r->fd = -1;
    int fd;
    uint64_t size;
    enum vf_err rc = vf__open_regular(path, &fd, &size, err);
    if (rc)
        return rc;
    r->fd = fd;
    r->read = file_read;
    r->ud = r;
    r->size = size;
    r->name = path;
    return VF_OK;
}

void vf_reader_close(struct vf_reader *r)
{
    if (r && r->fd >= 0) {
        close(r->fd);
        r->fd = -1;
    }
}
