/* SPDX-License-Identifier: Apache-2.0 */
/*
 * stub_nvml.c - a stand-in libnvidia-ml.so for tests: the NVML calls vramfit makes, with
 * scripted values, built in four symbol sets (-D):
 *   STUB_V1  plain symbols only (nvmlInit, nvmlDeviceGetMemoryInfo, 16-byte process entries);
 *   STUB_V2  + the _v2 symbols (nvmlMemory_v2_t with its version check, 24-byte entries);
 *   STUB_V3  + _v3 and nvmlDeviceGetRunningProcessDetailList (current drivers: 24 bytes);
 *   STUB_CC  + _v3 and nvmlDeviceGetConfComputeMemSizeInfo, no DetailList (the R525/R530
 *            window: 32-byte entries).
 * One GPU: 24 GiB total, 10 GiB used, 400 MiB reserved (v2 only); compute processes 4242
 * (8 GiB), 777 (1 GiB), 31337 (512 MiB); graphics 777 again (dedup). STUB_NVML_FAIL=init makes
 * nvmlInit fail with "Driver Not Loaded"; STUB_NVML_UMA=1 makes the memory calls "not
 * supported", as on unified-memory parts. The entries are written with the stride of the
 * symbol set, so a reader with the wrong stride scrambles PIDs after the first.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GIB (1ULL << 30)
#define MIB (1ULL << 20)

static const struct {
    unsigned pid;
    unsigned long long used;
} compute[] = {{4242, 8 * GIB}, {777, 1 * GIB}, {31337, 512 * MIB}};

#if defined(STUB_CC)
#define STRIDE 32
#elif defined(STUB_V1)
#define STRIDE 16
#else
#define STRIDE 24
#endif

/* STUB_NVML_PROCS=FILE: the compute processes read from FILE ("PID BYTES" per line, as a test's
 * child writes its own PID), instead of the three built in; graphics then lists none. */
static unsigned file_procs(unsigned pids[16], unsigned long long used[16])
{
    const char *path = getenv("STUB_NVML_PROCS");
    FILE *f = path ? fopen(path, "r") : NULL;
    unsigned n = 0;
    while (f && n < 16 && fscanf(f, "%u %llu", &pids[n], &used[n]) == 2)
        n++;
    if (f)
        fclose(f);
    return n;
}

static int fill(unsigned *count, void *buf, int graphics)
{
    unsigned fp[16];
    unsigned long long fu[16];
    unsigned nf = getenv("STUB_NVML_PROCS") ? file_procs(fp, fu) : 0;
    bool from_file = getenv("STUB_NVML_PROCS") != NULL;
    unsigned n = from_file ? (graphics ? 0 : nf) : graphics ? 1 : 3;
    if (!buf || *count < n) {
        *count = n;
        return n ? 7 : 0; /* NVML_ERROR_INSUFFICIENT_SIZE */
    }
    for (unsigned i = 0; i < n; i++) {
        unsigned char *e = (unsigned char *)buf + (size_t)i * STRIDE;
        unsigned pid = from_file ? fp[i] : graphics ? 777 : compute[i].pid;
        unsigned long long used = from_file ? fu[i] : graphics ? 900 * MIB : compute[i].used;
        memset(e, 0xAB, STRIDE);
        memcpy(e, &pid, sizeof pid);
        memcpy(e + 8, &used, sizeof used);
#if !defined(STUB_V1)
        unsigned none = 0xFFFFFFFFu, gi = pid == 777 ? 2 : 1;
        memcpy(e + 16, getenv("STUB_NVML_MIG") ? &gi : &none, 4);
        memcpy(e + 20, &none, 4);
#endif
    }
    *count = n;
    return 0;
}

static int init(void)
{
    const char *f = getenv("STUB_NVML_FAIL");
    return f && !strcmp(f, "init") ? 9 : 0; /* NVML_ERROR_DRIVER_NOT_LOADED */
}

const char *nvmlErrorString(int r);
const char *nvmlErrorString(int r)
{
    return r == 9 ? "Driver Not Loaded" : r == 7 ? "Insufficient Size" : "Unknown Error";
}
int nvmlShutdown(void);
int nvmlShutdown(void)
{
    return 0;
}
int nvmlDeviceGetName(void *d, char *s, unsigned n);
int nvmlDeviceGetName(void *d, char *s, unsigned n)
{
    strncpy(s, (size_t)d >= 100 ? "NVIDIA A100 MIG 3g.40gb" : "NVIDIA GeForce RTX 4090", n);
    return 0;
}
/* MIG (STUB_NVML_MIG=1): 2 instances, handles 100 and 101, GPU instances 1 and 2 of 12 GiB;
 * 4242 and 31337 run in instance 1, 777 in instance 2 */
int nvmlDeviceGetMigMode(void *d, unsigned *cur, unsigned *pend);
int nvmlDeviceGetMigMode(void *d, unsigned *cur, unsigned *pend)
{
    (void)d;
    *cur = *pend = getenv("STUB_NVML_MIG") ? 1 : 0;
    return 0;
}
int nvmlDeviceGetMaxMigDeviceCount(void *d, unsigned *n);
int nvmlDeviceGetMaxMigDeviceCount(void *d, unsigned *n)
{
    (void)d;
    *n = 7;
    return 0;
}
int nvmlDeviceGetMigDeviceHandleByIndex(void *d, unsigned i, void **m);
int nvmlDeviceGetMigDeviceHandleByIndex(void *d, unsigned i, void **m)
{
    (void)d;
    if (i >= 2)
        return 6; /* NVML_ERROR_NOT_FOUND */
    *m = (void *)(size_t)(100 + i);
    return 0;
}
int nvmlDeviceGetGpuInstanceId(void *d, unsigned *gi);
int nvmlDeviceGetGpuInstanceId(void *d, unsigned *gi)
{
    *gi = (unsigned)((size_t)d - 99);
    return 0;
}
int nvmlDeviceGetUUID(void *d, char *s, unsigned n);
int nvmlDeviceGetUUID(void *d, char *s, unsigned n)
{
    (void)d;
    strncpy(s, "GPU-00000000-1111-2222-3333-444444444444", n);
    return 0;
}
struct util {
    unsigned gpu, memory;
};
int nvmlDeviceGetUtilizationRates(void *d, struct util *u);
int nvmlDeviceGetUtilizationRates(void *d, struct util *u)
{
    (void)d;
    u->gpu = 37;
    u->memory = 12;
    return 0;
}
struct mem1 {
    unsigned long long total, free, used;
};
int nvmlDeviceGetMemoryInfo(void *d, struct mem1 *m);
int nvmlDeviceGetMemoryInfo(void *d, struct mem1 *m)
{
    (void)d;
    if (getenv("STUB_NVML_UMA"))
        return 3; /* NVML_ERROR_NOT_SUPPORTED, as on unified-memory parts */
    m->total = 24 * GIB;
    m->used = 10 * GIB + 400 * MIB; /* v1 counts the reservation as used */
    m->free = m->total - m->used;
    return 0;
}

#if defined(STUB_V1)
int nvmlInit(void);
int nvmlInit(void)
{
    return init();
}
int nvmlDeviceGetCount(unsigned *n);
int nvmlDeviceGetCount(unsigned *n)
{
    *n = 1;
    return 0;
}
int nvmlDeviceGetHandleByIndex(unsigned i, void **d);
int nvmlDeviceGetHandleByIndex(unsigned i, void **d)
{
    *d = (void *)(size_t)(i + 1);
    return 0;
}
int nvmlDeviceGetComputeRunningProcesses(void *d, unsigned *c, void *b);
int nvmlDeviceGetComputeRunningProcesses(void *d, unsigned *c, void *b)
{
    (void)d;
    return fill(c, b, 0);
}
int nvmlDeviceGetGraphicsRunningProcesses(void *d, unsigned *c, void *b);
int nvmlDeviceGetGraphicsRunningProcesses(void *d, unsigned *c, void *b)
{
    (void)d;
    return fill(c, b, 1);
}
#else
int nvmlInit_v2(void);
int nvmlInit_v2(void)
{
    return init();
}
int nvmlDeviceGetCount_v2(unsigned *n);
int nvmlDeviceGetCount_v2(unsigned *n)
{
    *n = 1;
    return 0;
}
int nvmlDeviceGetHandleByIndex_v2(unsigned i, void **d);
int nvmlDeviceGetHandleByIndex_v2(unsigned i, void **d)
{
    *d = (void *)(size_t)(i + 1);
    return 0;
}
struct mem2 {
    unsigned version;
    unsigned long long total, reserved, free, used;
};
int nvmlDeviceGetMemoryInfo_v2(void *d, struct mem2 *m);
int nvmlDeviceGetMemoryInfo_v2(void *d, struct mem2 *m)
{
    if (m->version != (unsigned)(sizeof(struct mem2) | 2u << 24))
        return 25; /* NVML_ERROR_ARGUMENT_VERSION_MISMATCH */
    if (getenv("STUB_NVML_UMA"))
        return 3;
    m->total = (size_t)d >= 100 ? 12 * GIB : 24 * GIB;
    m->reserved = 400 * MIB;
    m->used = (size_t)d >= 100 ? ((size_t)d == 100 ? 8 * GIB + 512 * MIB : 1 * GIB) : 10 * GIB;
    m->free = m->total - m->used - m->reserved;
    return 0;
}
#if defined(STUB_V2)
#define SFX(x) x##_v2
#else
#define SFX(x) x##_v3
#endif
int SFX(nvmlDeviceGetComputeRunningProcesses)(void *d, unsigned *c, void *b);
int SFX(nvmlDeviceGetComputeRunningProcesses)(void *d, unsigned *c, void *b)
{
    (void)d;
    return fill(c, b, 0);
}
int SFX(nvmlDeviceGetGraphicsRunningProcesses)(void *d, unsigned *c, void *b);
int SFX(nvmlDeviceGetGraphicsRunningProcesses)(void *d, unsigned *c, void *b)
{
    (void)d;
    return fill(c, b, 1);
}
#if defined(STUB_V3)
int nvmlDeviceGetRunningProcessDetailList(void *d, void *l);
int nvmlDeviceGetRunningProcessDetailList(void *d, void *l)
{
    (void)d;
    (void)l;
    return 3;
}
#endif
#if defined(STUB_CC)
int nvmlDeviceGetConfComputeMemSizeInfo(void *d, void *m);
int nvmlDeviceGetConfComputeMemSizeInfo(void *d, void *m)
{
    (void)d;
    (void)m;
    return 3;
}
#endif
#endif
