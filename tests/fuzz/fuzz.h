/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz.h - what the libFuzzer targets of tests/fuzz/ share: the entry point's prototype, the
 * input cut into NUL-terminated pieces, the stub libraries built beside the targets (a stand-in
 * libcurl and libnvidia-ml fed from the input) and a scratch sysroot for the /proc and /sys
 * readers. Header-only (static functions), so each target stays one file.
 */
#ifndef VRAMFIT_FUZZ_H
#define VRAMFIT_FUZZ_H

#ifndef _XOPEN_SOURCE
#define _XOPEN_SOURCE 700 /* nftw */
#endif
#include "internal.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The input as a NUL-terminated malloc'ed copy (NULL when out of memory); free() it. */
static inline char *fuzz_text(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (s) {
        memcpy(s, data, size);
        s[size] = '\0';
    }
    return s;
}

/* Cuts text (NUL-terminated, modified in place) at each byte sep into at most max pieces; the
 * last piece keeps the rest. Returns the number of pieces (at least 1). */
static inline size_t fuzz_split(char *text, char sep, char **pieces, size_t max)
{
    size_t n = 0;
    pieces[n++] = text;
    for (char *p = text; *p && n < max; p++)
        if (*p == sep) {
            *p = '\0';
            pieces[n++] = p + 1;
        }
    return n;
}

/* "<directory of this program>/name" into path; false when it does not fit. */
static inline bool fuzz_beside_me(const char *name, char *path, size_t cap)
{
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return false;
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (slash)
        *slash = '\0';
    return (size_t)snprintf(path, cap, "%s/%s", slash ? self : ".", name) < cap;
}

/* dlopen()s the stub library `name` built beside this program and returns its symbol `fn`
 * (the stub's script setter); aborts when it is missing: a target without its stub tests
 * nothing. The handle stays open, so the library's own dlopen/dlclose keep the same copy. */
static inline void *fuzz_stub(const char *name, const char *fn, char *path, size_t cap)
{
    void *lib = fuzz_beside_me(name, path, cap) ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
    void *sym = lib ? dlsym(lib, fn) : NULL;
    if (!sym) {
        fprintf(stderr, "fuzz: cannot load %s from %s: %s\n", fn, path, dlerror());
        abort();
    }
    return sym;
}

static inline int fuzz_rm(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st;
    (void)type;
    (void)ftw;
    (void)remove(path);
    return 0;
}

static char fuzz_scratch_dir[64];

static inline void fuzz_scratch_drop(void)
{
    nftw(fuzz_scratch_dir, fuzz_rm, 16, FTW_DEPTH | FTW_PHYS);
}

/* A scratch sysroot for the run (under $TMPDIR or /tmp, removed at exit), made and named in
 * VRAMFIT_SYSROOT on the first call: the /proc and /sys readers read there. */
static inline const char *fuzz_sysroot(void)
{
    if (!fuzz_scratch_dir[0]) {
        const char *tmp = getenv("TMPDIR");
        snprintf(fuzz_scratch_dir, sizeof fuzz_scratch_dir, "%s/vramfit-fuzz-XXXXXX",
                 tmp && *tmp && strlen(tmp) < 32 ? tmp : "/tmp");
        if (!mkdtemp(fuzz_scratch_dir))
            abort();
        atexit(fuzz_scratch_drop);
        setenv("VRAMFIT_SYSROOT", fuzz_scratch_dir, 1);
    }
    return fuzz_scratch_dir;
}

/* root/rel into path, with the directories on the way made; false when it does not fit. */
static inline bool fuzz_path(const char *root, const char *rel, char *path, size_t cap)
{
    if ((size_t)snprintf(path, cap, "%s/%s", root, rel) >= cap)
        return false;
    for (char *p = path + strlen(root) + 1; (p = strchr(p, '/')); p++) {
        *p = '\0';
        mkdir(path, 0700);
        *p = '/';
    }
    return true;
}

/* Writes len bytes to root/rel; false on failure. */
static inline bool fuzz_put(const char *root, const char *rel, const char *data, size_t len)
{
    char path[1024];
    int fd = fuzz_path(root, rel, path, sizeof path)
                 ? open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600)
                 : -1;
    if (fd < 0)
        return false;
    bool ok = write(fd, data, len) == (ssize_t)len;
    close(fd);
    return ok;
}

/* Makes root/rel a symbolic link to target; false on failure. */
static inline bool fuzz_link(const char *root, const char *rel, const char *target)
{
    char path[1024];
    return fuzz_path(root, rel, path, sizeof path) && !symlink(target, path);
}

/* Removes root/rel (a file or a symbolic link) if it is there. */
static inline void fuzz_drop(const char *root, const char *rel)
{
    char path[1024];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", root, rel) < sizeof path)
        unlink(path);
}

#endif /* VRAMFIT_FUZZ_H */
