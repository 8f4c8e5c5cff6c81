/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpu_fake.c - the fake GPU backend: devices and processes read from a TSV file named by
 * VRAMFIT_FAKE_GPUS, so tests run the whole probe path on machines with no GPU.
 *
 * Columns: kind  index  name  total  used  util  pid  cmdline
 *   kind "gpu": one device (total and used as sizes, "24564MiB"; util in %, or "?")
 *   kind "proc": a process on GPU `index` (used = its memory, pid, name, cmdline)
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

static enum vf_err bad(struct vf_error *err, const struct vf__tsv *t, size_t r, const char *col,
                       const char *want)
{
    int i = vf__tsv_col(t, col);
    return vf__errf(err, VF_EFORMAT, "%s:%zu: column '%s' is '%s', expected %s", t->origin,
                    t->lines[r], col, i < 0 ? "" : t->rows[r][i], want);
}

static enum vf_err fake_snapshot(struct vf_arena *a, struct vf_gpu_snapshot *out,
                                 struct vf_error *err)
{
    const char *path = getenv("VRAMFIT_FAKE_GPUS");
    if (!path || !*path)
        return vf__errf(err, VF_ENODEV, "VRAMFIT_FAKE_GPUS names no file");
    char *text;
    size_t len;
    enum vf_err rc = vf__read_file(a, path, VF_MAX_DATA_FILE_BYTES, &text, &len, err);
    if (rc)
        return rc;
    struct vf__tsv t;
    if ((rc = vf__tsv_parse(a, text, len, path, &t, err)))
        return rc;
    static const char *const cols[] = {"kind", "index", "name", "total",
                                       "used", "util",  "pid",  "cmdline"};
    int ci[8];
    for (int i = 0; i < 8; i++)
        if ((ci[i] = vf__tsv_col(&t, cols[i])) < 0)
            return vf__errf(err, VF_EFORMAT, "%s: header has no column '%s'", path, cols[i]);
    out->devs = vf_arena_alloc(a, (t.n_rows + 1) * sizeof *out->devs);
    if (!out->devs)
        return vf__errf(err, VF_ENOMEM, "%s: out of memory", path);
    for (size_t r = 0; r < t.n_rows; r++) {
        char **f = t.rows[r];
        uint64_t idx;
        if (vf_parse_count(f[ci[1]], &idx, NULL) || idx >= VF_MAX_GPUS)
            return bad(err, &t, r, "index", "a GPU index");
        if (!strcmp(f[ci[0]], "gpu")) {
            if (idx != out->n_devs)
                return bad(err, &t, r, "index", "the next GPU index, in order");
            struct vf_gpu_dev *d = &out->devs[out->n_devs++];
            d->index = (uint32_t)idx;
            d->name = f[ci[2]];
            if (vf_parse_bytes(f[ci[3]], &d->total_bytes, NULL))
                return bad(err, &t, r, "total", "a size such as 24564MiB");
            if (vf_parse_bytes(f[ci[4]], &d->used_bytes, NULL) || d->used_bytes > d->total_bytes)
                return bad(err, &t, r, "used", "a size no larger than total");
            d->free_bytes = d->total_bytes - d->used_bytes;
            d->reserved_bytes = VF_UNKNOWN;
            uint64_t u;
            if (!strcmp(f[ci[5]], "?"))
                d->util_percent = UINT32_MAX;
            else if (vf_parse_count(f[ci[5]], &u, NULL) || u > 100)
                return bad(err, &t, r, "util", "a percentage 0-100 or ?");
            else
                d->util_percent = (uint32_t)u;
            d->procs = vf_arena_alloc(a, (t.n_rows + 1) * sizeof *d->procs);
            if (!d->procs)
                return vf__errf(err, VF_ENOMEM, "%s: out of memory", path);
        } else if (!strcmp(f[ci[0]], "proc")) {
            if (idx >= out->n_devs)
                return bad(err, &t, r, "index", "the index of a GPU listed above");
            struct vf_gpu_dev *d = &out->devs[idx];
            struct vf_gpu_proc *p = &d->procs[d->n_procs++];
            uint64_t pid;
            if (vf_parse_count(f[ci[6]], &pid, NULL) || pid == 0 || pid > UINT32_MAX)
                return bad(err, &t, r, "pid", "a process id");
            p->pid = (uint32_t)pid;
            p->name = f[ci[2]];
            p->cmdline = f[ci[7]];
            p->kind = "compute";
            if (vf_parse_bytes(f[ci[4]], &p->used_bytes, NULL))
                return bad(err, &t, r, "used", "a size such as 20100MiB");
        } else {
            return bad(err, &t, r, "kind", "gpu or proc");
        }
    }
    if (!out->n_devs)
        return vf__errf(err, VF_ENODEV, "%s lists no gpu rows", path);
    return VF_OK;
}

const struct vf__gpu_backend vf__gpu_backend_fake = {
    .name = "fake",
    .explicit_only = true,
    .snapshot = fake_snapshot,
};
