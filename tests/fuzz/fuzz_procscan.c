/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_procscan.c - libFuzzer target of the /proc reader (gpu/procscan.c): a snapshot with a
 * process the driver reports (PID 4242), one from another PID namespace (999999, not here)
 * and a local one (77), over a scratch sysroot whose /proc/4242/{comm,cmdline,cgroup} and the
 * /dev links of /proc/77/fd come from the input, so both the naming and the one-holder match
 * run. Input: a byte (bits 0-1: how many of the three PIDs the snapshot lists; bit 2: no comm
 * for 4242, so it is the lost one), then comm, cmdline, cgroup and link targets separated by
 * 0x1e.
 */
#include "fuzz.h"

#define MAX_LINKS 4

/* The /dev links of PID 77's descriptors: target[i] as fd/i, the others gone. */
static void put_links(const char *root, char **target, size_t n)
{
    for (size_t i = 0; i < MAX_LINKS; i++) {
        char rel[64];
        snprintf(rel, sizeof rel, "proc/77/fd/%zu", i);
        fuzz_drop(root, rel);
        if (i < n && *target[i])
            (void)fuzz_link(root, rel, target[i]);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *root = fuzz_sysroot();
    fuzz_put(root, "proc/77/comm", "python3\n", 8);
    if (!size)
        return 0;
    char *text = fuzz_text(data + 1, size - 1);
    if (!text)
        return 0;
    char *part[3 + MAX_LINKS];
    size_t n = fuzz_split(text, 0x1e, part, 3 + MAX_LINKS);
    static const char *const names[] = {"proc/4242/comm", "proc/4242/cmdline", "proc/4242/cgroup"};
    for (size_t i = 0; i < 3; i++) {
        if (i < n && !(i == 0 && (data[0] & 4)))
            fuzz_put(root, names[i], part[i], i == 1 ? strlen(part[i]) + 1 : strlen(part[i]));
        else
            fuzz_drop(root, names[i]);
    }
    put_links(root, part + 3, n > 3 ? n - 3 : 0);
    struct vf_arena *a = vf_arena_open((size_t)16 << 20);
    struct vf_gpu_proc procs[3] = {{.pid = 4242}, {.pid = 999999}, {.pid = 77}};
    struct vf_gpu_dev dev = {.name = "GPU", .procs = procs, .n_procs = 1 + (data[0] & 3) % 3};
    struct vf_gpu_snapshot s = {.devs = &dev, .n_devs = 1, .backend = "nvml"};
    if (a) {
        vf__procscan(a, &s);
        (void)vf_render_gpus_json(a, &s);
    }
    vf_arena_close(a);
    free(text);
    return 0;
}
