/* SPDX-License-Identifier: Apache-2.0 */
/*
 * util.c - small shared helpers: case-insensitive comparison, edit distance for
 * "did you mean", and reading a whole file with a size limit.
 */
#include "internal.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int vf__strcasecmp(const char *a, const char *b)
{
    for (;; a++, b++) {
        int ca = tolower((unsigned char)*a), cb = tolower((unsigned char)*b);
        if (ca != cb || !ca)
            return ca - cb;
    }
}

unsigned vf__edit_distance(const char *a, const char *b)
{
    enum { MAXL = 96 };
    unsigned row[MAXL + 1];
    size_t la = strlen(a), lb = strlen(b);
    if (la > MAXL)
        la = MAXL;
    if (lb > MAXL)
        lb = MAXL;
    for (size_t j = 0; j <= lb; j++)
        row[j] = (unsigned)j;
    for (size_t i = 1; i <= la; i++) {
        unsigned diag = row[0];
        row[0] = (unsigned)i;
        for (size_t j = 1; j <= lb; j++) {
            unsigned up = row[j];
            unsigned cost = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
            unsigned best = diag + cost;
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb] > 255 ? 255 : row[lb];
}

unsigned vf_edit_distance(const char *a, const char *b)
{
    return vf__edit_distance(a, b);
}

/* What a file that is not a regular file is, for the error: "a FIFO", "a directory", ... */
const char *vf__file_kind(unsigned mode)
{
    if (S_ISFIFO(mode))
        return "a FIFO";
    if (S_ISDIR(mode))
        return "a directory";
    if (S_ISCHR(mode))
        return "a character device";
    if (S_ISBLK(mode))
        return "a block device";
    if (S_ISSOCK(mode))
        return "a socket";
    return "a special file";
}

enum vf_err vf__open_regular(const char *path, int *out_fd, uint64_t *size, struct vf_error *err)
{
    /* O_NONBLOCK: a FIFO without a writer (or a device) must not block the open */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return vf__errf(err, errno == ENOENT ? VF_ENOENT : VF_EIO, "cannot open '%s': %s", path,
                        strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return vf__errf(err, VF_EIO, "cannot read '%s': %s", path, strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return vf__errf(err, VF_EIO, "cannot read '%s': %s, not a regular file", path,
                        vf__file_kind(st.st_mode));
    }
    *out_fd = fd;
    *size = (uint64_t)st.st_size;
    return VF_OK;
}

enum vf_err vf__read_file(struct vf_arena *a, const char *path, size_t limit, char **out,
                          size_t *len, struct vf_error *err)
{
    int fd;
    uint64_t size;
    enum vf_err rc = vf__open_regular(path, &fd, &size, err);
    if (rc)
        return rc;
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        close(fd);
        return vf__errf(err, VF_ENOMEM, "cannot read '%s': out of memory", path);
    }
    if (size > limit) {
        fclose(f);
        return vf__errf(err, VF_ELIMIT, "cannot read '%s': %llu bytes is over the limit of %zu",
                        path, (unsigned long long)size, limit);
    }
    size_t n = (size_t)size;
    char *buf = vf_arena_alloc(a, n + 1);
    if (!buf) {
        fclose(f);
        return vf__errf(err, VF_ENOMEM, "cannot read '%s': out of memory", path);
    }
    size_t got = fread(buf, 1, n, f);
    int bad = ferror(f);
    fclose(f);
    if (bad || got != n)
        return vf__errf(err, VF_EIO, "cannot read '%s': short read (%zu of %zu bytes)", path, got,
                        n);
    buf[n] = 0;
    *out = buf;
    if (len)
        *len = n;
    return VF_OK;
}

const char *vf__sysroot(void)
{
    const char *r = getenv("VRAMFIT_SYSROOT");
    return r && *r ? r : "";
}

/* x^n by squaring (n a count: sequences, tokens), exact where the products are: the one power
 * the library takes, so the binaries do not load libm for it (issue 15). */
double vf__powi(double x, uint64_t n)
{
    double r = 1.0;
    for (; n; n >>= 1, x *= x)
        if (n & 1)
            r *= x;
    return r;
}

/* cbrt() for 0 < x <= 1 (a share; F-SPD-07), without libm: Newton's iteration from 1, which
 * decreases monotonically to the root; 0 for x <= 0, 1 for x >= 1. */
double vf__cbrt_share(double x)
{
    if (!(x > 0))
        return 0.0;
    if (x >= 1)
        return 1.0;
    double r = 1.0;
    for (int k = 0; k < 64; k++) {
        double next = (2.0 * r + x / (r * r)) / 3.0;
        if (next >= r)
            break;
        r = next;
    }
    return r;
}

/* round() for 0 <= x < 2^52: half away from zero, without libm. */
double vf__round_pos(double x)
{
    uint64_t i = (uint64_t)x;
    return (double)(x - (double)i >= 0.5 ? i + 1 : i);
}
