/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gpu_nvml.c - the NVML backend: libnvidia-ml.so.1 (or VRAMFIT_NVML_LIB) loaded with dlopen,
 * no nvml.h: the few types and calls are declared here as the NVML reference gives them.
 * Symbols are taken newest first with fallbacks (nvmlInit_v2 -> nvmlInit, ..._v2 -> plain).
 * Memory: nvmlDeviceGetMemoryInfo_v2 with its version field set (sizeof | 2 << 24), which
 * reports the driver/firmware reservation apart; else v1. Processes: compute, graphics and
 * MPS lists, each with the element size its symbol and the driver generation use (the nvitop
 * rule, research anchors-monitoring.md 2.3), deduplicated by PID. Names and command lines
 * come from /proc (procscan.c), container-aware. All state lives in one snapshot call.
 */
#include "internal.h"

#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------- NVML, as declared */

typedef int nvml_ret; /* nvmlReturn_t: 0 success */
typedef void *nvml_dev;
#define NVML_SUCCESS                 0
#define NVML_ERROR_NOT_SUPPORTED     3
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_VALUE_NOT_AVAILABLE     (~0ULL)
#define NVML_MEMORY_V2_VERSION       ((unsigned)(sizeof(struct nvml_memory_v2) | 2u << 24))
#define NVML_MAX_PROCS               1024

struct nvml_memory { /* nvmlMemory_t */
    unsigned long long total, free, used;
};
struct nvml_memory_v2 { /* nvmlMemory_v2_t */
    unsigned int version;
    unsigned long long total, reserved, free, used;
};
struct nvml_util { /* nvmlUtilization_t */
    unsigned int gpu, memory;
};
/* process entries: v1 16 B (pid, used), v2/v3 24 B (+ GPU and compute instance), and the
 * 32-byte "v3" of the R525/R530 headers (+ confidential-computing memory) */
struct nvml_proc_v1 {
    unsigned int pid;
    unsigned long long used;
};
struct nvml_proc_v2 {
    unsigned int pid;
    unsigned long long used;
    unsigned int gi, ci;
};
struct nvml_proc_cc {
    unsigned int pid;
    unsigned long long used;
    unsigned int gi, ci;
    unsigned long long cc;
};

typedef nvml_ret (*fn_void)(void);
typedef nvml_ret (*fn_count)(unsigned int *);
typedef nvml_ret (*fn_handle)(unsigned int, nvml_dev *);
typedef nvml_ret (*fn_str)(nvml_dev, char *, unsigned int);
typedef nvml_ret (*fn_mem)(nvml_dev, void *);
typedef nvml_ret (*fn_util)(nvml_dev, struct nvml_util *);
typedef nvml_ret (*fn_procs)(nvml_dev, unsigned int *, void *);
typedef const char *(*fn_errstr)(nvml_ret);
typedef nvml_ret (*fn_migmode)(nvml_dev, unsigned int *, unsigned int *);
typedef nvml_ret (*fn_migmax)(nvml_dev, unsigned int *);
typedef nvml_ret (*fn_mighandle)(nvml_dev, unsigned int, nvml_dev *);
typedef nvml_ret (*fn_gi)(nvml_dev, unsigned int *);

struct nvml {
    void *lib;
    fn_void init, shutdown;
    fn_count count;
    fn_handle handle;
    fn_str name, uuid;
    fn_mem mem_v2, mem_v1;
    fn_util util;
    fn_procs procs[3]; /* compute, graphics, MPS */
    size_t stride;     /* element size of the process calls */
    fn_errstr errstr;
    fn_migmode mig_mode; /* MIG (F-GPU-05) */
    fn_migmax mig_max;
    fn_mighandle mig_handle;
    fn_gi mig_gi;
};

static void *sym(void *lib, const char *a, const char *b)
{
    void *p = dlsym(lib, a);
    return p || !b ? p : dlsym(lib, b);
}

static const char *nvml_err(const struct nvml *n, nvml_ret r)
{
    const char *s = n->errstr ? n->errstr(r) : NULL;
    return s ? s : "NVML error";
}

/* Loads the library and its symbols; VF_ENODEV when there is none (no driver). */
static enum vf_err nvml_load(struct nvml *n, struct vf_error *err)
{
    memset(n, 0, sizeof *n);
    const char *path = getenv("VRAMFIT_NVML_LIB");
    n->lib = dlopen(path && *path ? path : "libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!n->lib)
        return vf__errf(err, VF_ENODEV, "%s not found", path && *path ? path : "libnvidia-ml.so.1");
    /* newest symbol first, then the older one; stored through memcpy (POSIX: dlsym's object
     * pointers convert to function pointers of the same size) */
    static const struct {
        const char *name, *older;
        size_t at;
    } calls[] = {
        {"nvmlInit_v2", "nvmlInit", offsetof(struct nvml, init)},
        {"nvmlShutdown", NULL, offsetof(struct nvml, shutdown)},
        {"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount", offsetof(struct nvml, count)},
        {"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex",
         offsetof(struct nvml, handle)},
        {"nvmlDeviceGetName", NULL, offsetof(struct nvml, name)},
        {"nvmlDeviceGetUUID", NULL, offsetof(struct nvml, uuid)},
        {"nvmlDeviceGetMemoryInfo_v2", NULL, offsetof(struct nvml, mem_v2)},
        {"nvmlDeviceGetMemoryInfo", NULL, offsetof(struct nvml, mem_v1)},
        {"nvmlDeviceGetUtilizationRates", NULL, offsetof(struct nvml, util)},
        {"nvmlErrorString", NULL, offsetof(struct nvml, errstr)},
        {"nvmlDeviceGetMigMode", NULL, offsetof(struct nvml, mig_mode)},
        {"nvmlDeviceGetMaxMigDeviceCount", NULL, offsetof(struct nvml, mig_max)},
        {"nvmlDeviceGetMigDeviceHandleByIndex", NULL, offsetof(struct nvml, mig_handle)},
        {"nvmlDeviceGetGpuInstanceId", NULL, offsetof(struct nvml, mig_gi)},
    };
    void *p;
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++) {
        p = sym(n->lib, calls[i].name, calls[i].older);
        memcpy((char *)n + calls[i].at, &p, sizeof p);
    }
    /* F-GPU-02: the process calls and their stride (nvitop's rule) */
    static const char *const lists[3] = {"nvmlDeviceGetComputeRunningProcesses",
                                         "nvmlDeviceGetGraphicsRunningProcesses",
                                         "nvmlDeviceGetMPSComputeRunningProcesses"};
    bool v3 = dlsym(n->lib, "nvmlDeviceGetComputeRunningProcesses_v3") != NULL;
    bool v2 = dlsym(n->lib, "nvmlDeviceGetComputeRunningProcesses_v2") != NULL;
    bool cc_window = v3 && dlsym(n->lib, "nvmlDeviceGetConfComputeMemSizeInfo") &&
                     !dlsym(n->lib, "nvmlDeviceGetRunningProcessDetailList");
    const char *suffix = v3 ? "_v3" : v2 ? "_v2" : "";
    n->stride = cc_window  ? sizeof(struct nvml_proc_cc)
                : v3 || v2 ? sizeof(struct nvml_proc_v2)
                           : sizeof(struct nvml_proc_v1);
    for (int i = 0; i < 3; i++) {
        char name[80];
        snprintf(name, sizeof name, "%s%s", lists[i], suffix);
        p = sym(n->lib, name, lists[i]);
        memcpy(&n->procs[i], &p, sizeof p);
    }
    if (!n->init || !n->count || !n->handle || (!n->mem_v2 && !n->mem_v1))
        return vf__errf(err, VF_ENODEV,
                        "libnvidia-ml lacks nvmlInit, nvmlDeviceGetCount, "
                        "nvmlDeviceGetHandleByIndex or nvmlDeviceGetMemoryInfo");
    nvml_ret r = n->init();
    if (r != NVML_SUCCESS)
        return vf__errf(err, VF_ENODEV, "nvmlInit: %s (code %d)", nvml_err(n, r), r);
    return VF_OK;
}

/* A name or UUID: call's string, in arena a, cut at the buffer's end (the library is not
 * trusted to end it with a NUL); fallback when there is no call or it fails. */
static const char *nvml_str(struct vf_arena *a, fn_str call, nvml_dev d, const char *fallback)
{
    char s[96];
    if (!call || call(d, s, sizeof s) != NVML_SUCCESS)
        return fallback;
    s[sizeof s - 1] = '\0';
    return vf_arena_strdup(a, s);
}

/* F-GPU-01: a unified-memory part (DGX Spark / GB10, Jetson: NVML reports no total or "not
 * supported") shares the system's RAM: MemTotal and MemAvailable of /proc/meminfo. */
static bool uma_memory(struct vf_gpu_dev *g)
{
    char path[512], line[128];
    snprintf(path, sizeof path, "%s/proc/meminfo", vf__sysroot());
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    unsigned long long total = 0, avail = 0, v;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "MemTotal: %llu kB", &v) == 1)
            total = v << 10;
        else if (sscanf(line, "MemAvailable: %llu kB", &v) == 1)
            avail = v << 10;
    }
    fclose(f);
    if (!total || avail > total)
        return false;
    g->total_bytes = total;
    g->free_bytes = avail;
    g->used_bytes = total - avail;
    g->reserved_bytes = VF_UNKNOWN;
    g->unified = true;
    return true;
}

/* F-GPU-01: memory, v2 first (reserved apart), then v1. */
static enum vf_err nvml_memory(const struct nvml *n, nvml_dev d, struct vf_gpu_dev *g,
                               struct vf_error *err)
{
    if (n->mem_v2) {
        struct nvml_memory_v2 m = {.version = NVML_MEMORY_V2_VERSION};
        if (n->mem_v2(d, &m) == NVML_SUCCESS && m.total) {
            g->total_bytes = m.total;
            g->used_bytes = m.used;
            g->free_bytes = m.free;
            g->reserved_bytes = m.reserved;
            return VF_OK;
        }
    }
    struct nvml_memory m = {0};
    nvml_ret r = n->mem_v1 ? n->mem_v1(d, &m) : NVML_ERROR_NOT_SUPPORTED;
    if ((r == NVML_ERROR_NOT_SUPPORTED || (r == NVML_SUCCESS && !m.total)) && uma_memory(g))
        return VF_OK;
    if (r != NVML_SUCCESS)
        return vf__errf(err, VF_EIO, "GPU %u: nvmlDeviceGetMemoryInfo: %s", g->index,
                        nvml_err(n, r));
    g->total_bytes = m.total;
    g->used_bytes = m.used;
    g->free_bytes = m.free;
    g->reserved_bytes = VF_UNKNOWN;
    return VF_OK;
}

/* F-GPU-02: the processes of one list, appended to g (deduplicated by PID). */
static void nvml_list(struct vf_arena *a, const struct nvml *n, fn_procs call, nvml_dev d,
                      struct vf_gpu_dev *g, struct vf_gpu_proc *procs, size_t cap, const char *kind)
{
    if (!call)
        return;
    unsigned int count = 0;
    nvml_ret r = call(d, &count, NULL);
    if (r != NVML_SUCCESS && r != NVML_ERROR_INSUFFICIENT_SIZE)
        return;
    if (!count)
        return;
    if (count > NVML_MAX_PROCS)
        count = NVML_MAX_PROCS;
    unsigned int room = count * 2 + 5 > NVML_MAX_PROCS ? NVML_MAX_PROCS : count * 2 + 5;
    unsigned char *buf = vf_arena_alloc(a, (size_t)room * n->stride);
    if (!buf)
        return;
    memset(buf, 0, (size_t)room * n->stride);
    unsigned int got = room;
    if (call(d, &got, buf) != NVML_SUCCESS)
        return;
    if (got > room)
        got = room;
    for (unsigned int i = 0; i < got; i++) {
        const struct nvml_proc_v1 *e = (const void *)(buf + (size_t)i * n->stride);
        size_t k = 0;
        while (k < g->n_procs && procs[k].pid != e->pid)
            k++;
        if (k < g->n_procs) { /* in two lists: keep the larger figure, both kinds */
            if (e->used != NVML_VALUE_NOT_AVAILABLE && e->used > procs[k].used_bytes)
                procs[k].used_bytes = e->used;
            procs[k].kind = vf_arena_printf(a, "%s+%s", procs[k].kind, kind);
            continue;
        }
        if (g->n_procs == cap)
            break;
        procs[g->n_procs] = (struct vf_gpu_proc){
            .pid = e->pid,
            .used_bytes = e->used == NVML_VALUE_NOT_AVAILABLE ? VF_UNKNOWN : e->used,
            .kind = kind,
            .gpu_instance = n->stride > sizeof(struct nvml_proc_v1)
                                ? ((const struct nvml_proc_v2 *)(const void *)e)->gi
                                : UINT32_MAX};
        g->n_procs++;
    }
}

/* F-GPU-05: the MIG instances of the GPU just added (out->devs[out->n_devs - 1]), each a
 * device of its own with its memory, and the parent's processes of its GPU instance moved to
 * it. Nothing when MIG is off or the driver lacks the calls. */
static enum vf_err nvml_mig(struct vf_arena *a, const struct nvml *n, nvml_dev d,
                            struct vf_gpu_snapshot *out, struct vf_error *err)
{
    unsigned int cur = 0, pend = 0, max = 0;
    if (!n->mig_mode || !n->mig_max || !n->mig_handle || n->mig_mode(d, &cur, &pend) || cur != 1 ||
        n->mig_max(d, &max) || !max)
        return VF_OK;
    struct vf_gpu_dev *parent = &out->devs[out->n_devs - 1];
    uint32_t pidx = parent->index;
    for (unsigned int k = 0; k < max && k < 7; k++) {
        nvml_dev m = NULL;
        if (n->mig_handle(d, k, &m) != NVML_SUCCESS || !m)
            continue;
        struct vf_gpu_dev *g = &out->devs[out->n_devs];
        memset(g, 0, sizeof *g);
        g->index = k;
        g->mig_parent = pidx + 1;
        g->util_percent = UINT32_MAX;
        g->name = nvml_str(a, n->name, m, "MIG instance");
        g->uuid = nvml_str(a, n->uuid, m, NULL);
        enum vf_err rc = nvml_memory(n, m, g, err);
        if (rc)
            return rc;
        unsigned int gi = UINT32_MAX;
        if (n->mig_gi)
            n->mig_gi(m, &gi);
        /* the parent's processes of this GPU instance belong to it */
        struct vf_gpu_dev *whole = NULL;
        for (size_t i = 0; i < out->n_devs; i++)
            if (!out->devs[i].mig_parent && out->devs[i].index == pidx)
                whole = &out->devs[i];
        g->procs = vf_arena_alloc(a, (whole ? whole->n_procs : 0) * sizeof *g->procs + 1);
        for (size_t i = 0; whole && g->procs && i < whole->n_procs; i++)
            if (whole->procs[i].gpu_instance == gi)
                g->procs[g->n_procs++] = whole->procs[i];
        out->n_devs++;
    }
    return VF_OK;
}

static enum vf_err nvml_snapshot(struct vf_arena *a, struct vf_gpu_snapshot *out,
                                 struct vf_error *err)
{
    struct nvml n;
    enum vf_err rc = nvml_load(&n, err);
    if (rc) {
        if (n.lib)
            dlclose(n.lib);
        return rc;
    }
    unsigned int count = 0;
    nvml_ret r = n.count(&count);
    if (r != NVML_SUCCESS || !count) {
        rc = r != NVML_SUCCESS ? vf__errf(err, VF_ENODEV, "nvmlDeviceGetCount: %s", nvml_err(&n, r))
                               : vf__errf(err, VF_ENODEV, "NVML sees no devices");
        goto out;
    }
    if (count > 64)
        count = 64;
    /* every GPU may be split into up to 7 MIG instances */
    out->devs = vf_arena_alloc(a, count * 8 * sizeof *out->devs);
    if (!out->devs) {
        rc = vf__errf(err, VF_ENOMEM, "out of memory");
        goto out;
    }
    for (unsigned int i = 0; i < count; i++) {
        struct vf_gpu_dev *g = &out->devs[out->n_devs];
        memset(g, 0, sizeof *g);
        g->index = i;
        g->util_percent = UINT32_MAX;
        nvml_dev d = NULL;
        if ((r = n.handle(i, &d)) != NVML_SUCCESS) {
            rc =
                vf__errf(err, VF_EIO, "GPU %u: nvmlDeviceGetHandleByIndex: %s", i, nvml_err(&n, r));
            goto out;
        }
        g->name = nvml_str(a, n.name, d, "NVIDIA GPU");
        g->uuid = nvml_str(a, n.uuid, d, NULL);
        if ((rc = nvml_memory(&n, d, g, err)))
            goto out;
        struct nvml_util u;
        if (n.util && n.util(d, &u) == NVML_SUCCESS)
            g->util_percent = u.gpu;
        struct vf_gpu_proc *procs = vf_arena_alloc(a, NVML_MAX_PROCS * sizeof *procs);
        if (procs) {
            static const char *const kinds[3] = {"compute", "graphics", "mps"};
            for (int k = 0; k < 3; k++)
                nvml_list(a, &n, n.procs[k], d, g, procs, NVML_MAX_PROCS, kinds[k]);
            g->procs = procs;
        }
        out->n_devs++;
        if ((rc = nvml_mig(a, &n, d, out, err)))
            goto out;
    }
    rc = VF_OK;
out:
    if (n.shutdown)
        n.shutdown();
    dlclose(n.lib);
    return rc;
}

const struct vf__gpu_backend vf__gpu_backend_nvml = {
    .name = "nvml",
    .explicit_only = false,
    .snapshot = nvml_snapshot,
};
