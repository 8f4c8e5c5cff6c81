/* SPDX-License-Identifier: Apache-2.0 */
/*
 * run.c - measuring a run (vramfit run): what the command's whole process tree holds on the
 * GPUs in one snapshot (its descendants found through /proc under VRAMFIT_SYSROOT, matched to
 * the driver's PIDs directly or through procscan's local PID) and the timeline's peak; the
 * report is rendered by render/render_run.c. Formulas F-RUN-01..03 in docs/FORMULAS.md.
 */
#include "internal.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The parent of pid from /proc/PID/stat (field 4, after the parenthesized name). */
static uint32_t parent_of(uint32_t pid)
{
    char path[512], buf[512];
    snprintf(path, sizeof path, "%s/proc/%u/stat", vf__sysroot(), pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')');
    unsigned long pp = 0;
    if (!p || sscanf(p + 1, " %*c %lu", &pp) != 1)
        return 0;
    return (uint32_t)pp;
}

size_t vf_run_tree(uint32_t root, uint32_t *out, size_t cap, bool *cut)
{
    /* F-RUN-01: every process whose parent chain reaches root, root included */
    size_t n = 0;
    if (cut)
        *cut = false;
    if (cap)
        out[n++] = root;
    char dir[512];
    snprintf(dir, sizeof dir, "%s/proc", vf__sysroot());
    DIR *d = opendir(dir);
    if (!d)
        return n;
    uint32_t pids[VF_RUN_MAX_PROCS], ppids[VF_RUN_MAX_PROCS];
    size_t np = 0;
    bool full = false;
    struct dirent *e;
    while ((e = readdir(d))) {
        char *end;
        unsigned long pid = strtoul(e->d_name, &end, 10);
        if (*end || !pid || pid > UINT32_MAX)
            continue;
        if (np == VF_RUN_MAX_PROCS) { /* the processes past the cap are not read */
            full = true;
            break;
        }
        pids[np] = (uint32_t)pid;
        ppids[np++] = parent_of((uint32_t)pid);
    }
    closedir(d);
    for (bool grew = true; grew;) { /* add children of members until nothing changes */
        grew = false;
        for (size_t i = 0; i < np; i++) {
            bool member = false, parent_in = false;
            for (size_t k = 0; k < n; k++) {
                member |= out[k] == pids[i];
                parent_in |= out[k] == ppids[i];
            }
            if (!member && parent_in && n == cap)
                full = true; /* a member left out */
            if (!member && parent_in && n < cap) {
                out[n++] = pids[i];
                grew = true;
            }
        }
    }
    if (cut)
        *cut = full;
    return n;
}

uint64_t vf_run_tree_bytes(const struct vf_gpu_snapshot *s, const uint32_t *tree, size_t n,
                           int device)
{
    /* F-RUN-02: the tree's memory: every process of the snapshot in it (by the driver's PID
     * or the local PID procscan matched) on the device (-1: all) */
    uint64_t sum = 0;
    for (size_t g = 0; g < s->n_devs; g++) {
        if (device >= 0 && s->devs[g].index != (uint32_t)device)
            continue;
        for (size_t k = 0; k < s->devs[g].n_procs; k++) {
            const struct vf_gpu_proc *p = &s->devs[g].procs[k];
            bool in = false;
            for (size_t i = 0; i < n && !in; i++)
                in = tree[i] == p->pid || (p->local_pid && tree[i] == p->local_pid);
            if (in && p->used_bytes != VF_UNKNOWN)
                sum = vf__sat_add(sum, p->used_bytes);
        }
    }
    return sum;
}

/* F-RUN-03: the peak sample of a timeline (the largest tree figure; the device delta breaks
 * a tie and stands in when the driver lists no processes). */
size_t vf_run_peak(const struct vf_run_sample *t, size_t n)
{
    size_t best = 0;
    for (size_t i = 1; i < n; i++) {
        uint64_t a = t[i].tree_bytes, b = t[best].tree_bytes;
        uint64_t da = t[i].device_used > t[i].baseline ? t[i].device_used - t[i].baseline : 0;
        uint64_t db =
            t[best].device_used > t[best].baseline ? t[best].device_used - t[best].baseline : 0;
        if (a > b || (a == b && da > db))
            best = i;
    }
    return best;
}
