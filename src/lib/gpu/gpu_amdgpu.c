/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpu_amdgpu.c - the AMD backend: cards from sysfs (SYSROOT/sys/class/drm/cardN/device with
 * vendor 0x1002: mem_info_vram_total, mem_info_vram_used, gpu_busy_percent, product_name) and
 * per-process VRAM from DRM fdinfo (SYSROOT/proc/PID/fdinfo/FD: drm-pdev, drm-client-id,
 * drm-memory-vram), each client counted once (F-GPU-04). Everything is read relative to
 * VRAMFIT_SYSROOT, so tests run on fixture trees; names come from procscan.c after.
 */
#include "internal.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AMD_MAX_CARDS   16
#define AMD_MAX_PIDS    4096
#define AMD_MAX_FDS     1024
#define AMD_MAX_CLIENTS 256

/* One line of a small sysfs or proc file; false when absent. */
static bool read_line(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    bool ok = fgets(buf, (int)cap, f) != NULL;
    fclose(f);
    if (ok)
        buf[strcspn(buf, "\n")] = '\0';
    return ok;
}

static bool read_u64(const char *path, uint64_t *out)
{
    char buf[64], *end;
    if (!read_line(path, buf, sizeof buf))
        return false;
    unsigned long long v = strtoull(buf, &end, 10);
    if (end == buf)
        return false;
    *out = v;
    return true;
}

/* The PCI address of a card (PCI_SLOT_NAME in its uevent). */
static bool pci_slot(const char *dev, char *out, size_t cap)
{
    char path[600], line[256];
    snprintf(path, sizeof path, "%s/uevent", dev);
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    bool ok = false;
    while (!ok && fgets(line, sizeof line, f))
        if (!strncmp(line, "PCI_SLOT_NAME=", 14)) {
            snprintf(out, cap, "%s", line + 14);
            out[strcspn(out, "\n")] = '\0';
            ok = true;
        }
    fclose(f);
    return ok;
}

struct client {
    uint32_t pid;
    uint64_t id;
    uint64_t vram;
    int card;
};

/* F-GPU-04: the DRM clients of every process, by card, from fdinfo. */
static size_t scan_fdinfo(char slots[][32], size_t n_cards, struct client *cl, size_t cap)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/proc", vf__sysroot());
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    size_t n = 0;
    struct dirent *e;
    for (int np = 0; np < AMD_MAX_PIDS && (e = readdir(d)); np++) {
        char *end;
        unsigned long pid = strtoul(e->d_name, &end, 10);
        if (*end || !pid || pid > UINT32_MAX)
            continue;
        char fddir[700];
        snprintf(fddir, sizeof fddir, "%s/%lu/fdinfo", dir, pid);
        DIR *fd = opendir(fddir);
        if (!fd)
            continue;
        struct dirent *f;
        for (int nf = 0; nf < AMD_MAX_FDS && (f = readdir(fd)); nf++) {
            if (f->d_name[0] == '.')
                continue;
            char path[1000], line[256], pdev[64] = "";
            snprintf(path, sizeof path, "%s/%s", fddir, f->d_name);
            FILE *fp = fopen(path, "r");
            if (!fp)
                continue;
            uint64_t id = 0, vram = 0;
            bool amd = false;
            while (fgets(line, sizeof line, fp)) {
                if (!strncmp(line, "drm-driver:", 11))
                    amd = strstr(line, "amdgpu") != NULL;
                else if (!strncmp(line, "drm-pdev:", 9))
                    sscanf(line + 9, " %63s", pdev);
                else if (!strncmp(line, "drm-client-id:", 14))
                    id = strtoull(line + 14, NULL, 10);
                else if (!strncmp(line, "drm-memory-vram:", 16)) {
                    char unit[8] = "";
                    unsigned long long v = 0;
                    if (sscanf(line + 16, " %llu %7s", &v, unit) >= 1)
                        vram = !strcmp(unit, "KiB") ? v << 10 : !strcmp(unit, "MiB") ? v << 20 : v;
                }
            }
            fclose(fp);
            if (!amd || !*pdev)
                continue;
            int card = -1;
            for (size_t c = 0; c < n_cards; c++)
                if (!strcmp(slots[c], pdev))
                    card = (int)c;
            bool seen = false; /* one client, however many fds share it */
            for (size_t k = 0; k < n && !seen; k++)
                seen = cl[k].card == card && cl[k].id == id && cl[k].pid == pid;
            if (card >= 0 && !seen && n < cap)
                cl[n++] = (struct client){(uint32_t)pid, id, vram, card};
        }
        closedir(fd);
    }
    closedir(d);
    return n;
}

static enum vf_err amd_snapshot(struct vf_arena *a, struct vf_gpu_snapshot *out,
                                struct vf_error *err)
{
    char base[512];
    snprintf(base, sizeof base, "%s/sys/class/drm", vf__sysroot());
    out->devs = vf_arena_alloc(a, AMD_MAX_CARDS * sizeof *out->devs);
    if (!out->devs)
        return vf__errf(err, VF_ENOMEM, "out of memory");
    char slots[AMD_MAX_CARDS][32];
    for (int c = 0; c < 64 && out->n_devs < AMD_MAX_CARDS; c++) {
        char dev[600], path[700], buf[128];
        snprintf(dev, sizeof dev, "%s/card%d/device", base, c);
        snprintf(path, sizeof path, "%s/vendor", dev);
        if (!read_line(path, buf, sizeof buf) || strcmp(buf, "0x1002"))
            continue;
        struct vf_gpu_dev *g = &out->devs[out->n_devs];
        memset(g, 0, sizeof *g);
        snprintf(path, sizeof path, "%s/mem_info_vram_total", dev);
        if (!read_u64(path, &g->total_bytes))
            continue;
        snprintf(path, sizeof path, "%s/mem_info_vram_used", dev);
        if (!read_u64(path, &g->used_bytes))
            g->used_bytes = 0;
        g->free_bytes = g->used_bytes < g->total_bytes ? g->total_bytes - g->used_bytes : 0;
        g->reserved_bytes = VF_UNKNOWN;
        uint64_t busy;
        snprintf(path, sizeof path, "%s/gpu_busy_percent", dev);
        g->util_percent = read_u64(path, &busy) && busy <= 100 ? (uint32_t)busy : UINT32_MAX;
        snprintf(path, sizeof path, "%s/product_name", dev);
        g->name = read_line(path, buf, sizeof buf) && *buf ? vf_arena_strdup(a, buf) : "AMD GPU";
        g->index = (uint32_t)out->n_devs;
        if (!pci_slot(dev, slots[out->n_devs], sizeof slots[0]))
            slots[out->n_devs][0] = '\0';
        g->uuid = *slots[out->n_devs] ? vf_arena_strdup(a, slots[out->n_devs]) : NULL;
        g->procs = vf_arena_alloc(a, AMD_MAX_CLIENTS * sizeof *g->procs);
        out->n_devs++;
    }
    if (!out->n_devs)
        return vf__errf(err, VF_ENODEV, "no amdgpu devices under %s", base);
    struct client *cl = vf_arena_alloc(a, AMD_MAX_CLIENTS * sizeof *cl);
    size_t n = cl ? scan_fdinfo(slots, out->n_devs, cl, AMD_MAX_CLIENTS) : 0;
    for (size_t k = 0; k < n; k++) {
        struct vf_gpu_dev *g = &out->devs[cl[k].card];
        if (!g->procs)
            continue;
        size_t j = 0; /* a process with several clients: their sum */
        while (j < g->n_procs && g->procs[j].pid != cl[k].pid)
            j++;
        if (j == g->n_procs)
            g->procs[g->n_procs++] = (struct vf_gpu_proc){.pid = cl[k].pid, .kind = "drm"};
        g->procs[j].used_bytes += cl[k].vram;
    }
    return VF_OK;
}

const struct vf__gpu_backend vf__gpu_backend_amdgpu = {
    .name = "amdgpu",
    .explicit_only = false,
    .snapshot = amd_snapshot,
};
