/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_amdgpu.c - libFuzzer target of the AMD backend (gpu/gpu_amdgpu.c): the sysfs files of
 * one card and the DRM fdinfo of one process, written from the input under a scratch sysroot
 * (VRAMFIT_SYSROOT), then a snapshot (procscan.c names the process from the same tree) and its
 * text, JSON and Prometheus renderings. Input: the files' contents separated by 0x1e, in the
 * order of `files` below.
 */
#include "fuzz.h"

static const char *const files[] = {
    "sys/class/drm/card0/device/vendor",
    "sys/class/drm/card0/device/mem_info_vram_total",
    "sys/class/drm/card0/device/mem_info_vram_used",
    "sys/class/drm/card0/device/gpu_busy_percent",
    "sys/class/drm/card0/device/product_name",
    "sys/class/drm/card0/device/uevent",
    "proc/4242/fdinfo/5",
    "proc/4242/fdinfo/6",
    "proc/4242/comm",
};
#define N_FILES (sizeof files / sizeof files[0])

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *root = fuzz_sysroot();
    setenv("VRAMFIT_GPU_BACKEND", "amdgpu", 1);
    char *text = fuzz_text(data, size);
    if (!text)
        return 0;
    char *part[N_FILES];
    size_t n = fuzz_split(text, 0x1e, part, N_FILES);
    for (size_t i = 0; i < N_FILES; i++) {
        if (i < n)
            fuzz_put(root, files[i], part[i], strlen(part[i]));
        else
            fuzz_drop(root, files[i]);
    }
    struct vf_arena *a = vf_arena_open((size_t)64 << 20);
    struct vf_gpu_snapshot s;
    if (a && !vf_gpu_snapshot(a, &s, NULL)) {
        (void)vf_render_gpus_text(a, &s, NULL);
        (void)vf_render_gpus_json(a, &s);
        struct vf_metrics_info mi = {.hostname = "fuzz", .scrape_seconds = 0.001};
        (void)vf_render_metrics(a, &s, &mi);
    }
    vf_arena_close(a);
    free(text);
    return 0;
}
