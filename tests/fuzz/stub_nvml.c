/* SPDX-License-Identifier: Apache-2.0 */
/*
 * stub_nvml.c - a stand-in libnvidia-ml.so for fuzz_nvml: the NVML calls gpu_nvml.c makes
 * (the _v2/_v3 symbol set: 24-byte process entries, MIG calls), each answering from a script of
 * bytes that stub_nvml_script() sets: return codes, counts, numbers, process entries and the
 * name and UUID strings, which fill the caller's buffer as the bytes say, with no promise of a
 * terminating NUL. An exhausted script answers zeros.
 */
#include <stddef.h>
#include <string.h>

static const unsigned char *sp, *send;

void stub_nvml_script(const unsigned char *data, size_t len);
void stub_nvml_script(const unsigned char *data, size_t len)
{
    sp = data;
    send = data + len;
}

static unsigned char byte(void)
{
    return sp < send ? *sp++ : 0;
}

/* n bytes of the script into dst (zeros past its end). */
static void take(void *dst, size_t n)
{
    size_t k = (size_t)(send - sp) < n ? (size_t)(send - sp) : n;
    memcpy(dst, sp, k);
    memset((char *)dst + k, 0, n - k);
    sp += k;
}

/* Mostly success; sometimes "not supported" (3), "insufficient size" (7) or another error. */
static int ret(void)
{
    unsigned char b = byte();
    return b < 200 ? 0 : b < 220 ? 3 : b < 240 ? 7 : b - 230;
}

int nvmlInit_v2(void);
int nvmlInit_v2(void)
{
    return byte() == 255 ? 9 : 0;
}
int nvmlShutdown(void);
int nvmlShutdown(void)
{
    return 0;
}
int nvmlDeviceGetCount_v2(unsigned *count);
int nvmlDeviceGetCount_v2(unsigned *count)
{
    unsigned char b = byte();
    *count = b == 255 ? 100000 : b % 4;
    return ret();
}
int nvmlDeviceGetHandleByIndex_v2(unsigned i, void **dev);
int nvmlDeviceGetHandleByIndex_v2(unsigned i, void **dev)
{
    *dev = (void *)(size_t)(i + 1);
    return ret();
}

/* A string of the script: its length byte, then up to len bytes (NUL or not). */
static int str(char *buf, unsigned len)
{
    int r = ret();
    unsigned n = byte();
    if (n > len)
        n = len;
    take(buf, n);
    return r;
}
int nvmlDeviceGetName(void *dev, char *buf, unsigned len);
int nvmlDeviceGetName(void *dev, char *buf, unsigned len)
{
    (void)dev;
    return str(buf, len);
}
int nvmlDeviceGetUUID(void *dev, char *buf, unsigned len);
int nvmlDeviceGetUUID(void *dev, char *buf, unsigned len)
{
    (void)dev;
    return str(buf, len);
}

struct mem_v2 {
    unsigned version;
    unsigned long long total, reserved, free, used;
};
int nvmlDeviceGetMemoryInfo_v2(void *dev, struct mem_v2 *m);
int nvmlDeviceGetMemoryInfo_v2(void *dev, struct mem_v2 *m)
{
    (void)dev;
    if (m->version != (unsigned)(sizeof *m | 2u << 24))
        return 25; /* NVML_ERROR_ARGUMENT_VERSION_MISMATCH */
    take(&m->total, 4 * sizeof m->total);
    return ret();
}
int nvmlDeviceGetMemoryInfo(void *dev, unsigned long long m[3]);
int nvmlDeviceGetMemoryInfo(void *dev, unsigned long long m[3])
{
    (void)dev;
    take(m, 3 * sizeof m[0]);
    return ret();
}
int nvmlDeviceGetUtilizationRates(void *dev, unsigned u[2]);
int nvmlDeviceGetUtilizationRates(void *dev, unsigned u[2])
{
    (void)dev;
    take(u, 2 * sizeof u[0]);
    return ret();
}
const char *nvmlErrorString(int r);
const char *nvmlErrorString(int r)
{
    return r == 9 ? NULL : "stub error";
}

/* A process list: asked without a buffer, a count; with one, up to *count 24-byte entries and
 * a count of the script's choosing (possibly more than fit). */
static int procs(unsigned *count, void *buf)
{
    unsigned char n = byte();
    int r = ret();
    if (!buf) {
        *count = n;
        return r ? r : n ? 7 : 0;
    }
    unsigned fill = n < *count ? n : *count;
    take(buf, (size_t)fill * 24);
    *count = byte() == 255 ? 100000 : n;
    return r;
}
int nvmlDeviceGetComputeRunningProcesses_v3(void *dev, unsigned *count, void *buf);
int nvmlDeviceGetComputeRunningProcesses_v3(void *dev, unsigned *count, void *buf)
{
    (void)dev;
    return procs(count, buf);
}
int nvmlDeviceGetGraphicsRunningProcesses_v3(void *dev, unsigned *count, void *buf);
int nvmlDeviceGetGraphicsRunningProcesses_v3(void *dev, unsigned *count, void *buf)
{
    (void)dev;
    return procs(count, buf);
}
int nvmlDeviceGetMPSComputeRunningProcesses_v3(void *dev, unsigned *count, void *buf);
int nvmlDeviceGetMPSComputeRunningProcesses_v3(void *dev, unsigned *count, void *buf)
{
    (void)dev;
    return procs(count, buf);
}
int nvmlDeviceGetRunningProcessDetailList(void);
int nvmlDeviceGetRunningProcessDetailList(void)
{
    return 3;
}

int nvmlDeviceGetMigMode(void *dev, unsigned *cur, unsigned *pend);
int nvmlDeviceGetMigMode(void *dev, unsigned *cur, unsigned *pend)
{
    (void)dev;
    *cur = byte() & 1;
    *pend = 0;
    return ret();
}
int nvmlDeviceGetMaxMigDeviceCount(void *dev, unsigned *max);
int nvmlDeviceGetMaxMigDeviceCount(void *dev, unsigned *max)
{
    (void)dev;
    *max = byte() % 9;
    return ret();
}
int nvmlDeviceGetMigDeviceHandleByIndex(void *dev, unsigned k, void **mig);
int nvmlDeviceGetMigDeviceHandleByIndex(void *dev, unsigned k, void **mig)
{
    *mig = (void *)((size_t)dev * 16 + k + 1);
    return ret();
}
int nvmlDeviceGetGpuInstanceId(void *mig, unsigned *gi);
int nvmlDeviceGetGpuInstanceId(void *mig, unsigned *gi)
{
    (void)mig;
    take(gi, sizeof *gi);
    return ret();
}
