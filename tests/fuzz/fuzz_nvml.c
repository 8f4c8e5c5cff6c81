/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_nvml.c - libFuzzer target of the NVML backend (gpu/gpu_nvml.c) through its real dlopen
 * path: VRAMFIT_NVML_LIB names a stand-in libnvidia-ml (stub_nvml.so, beside this program) whose
 * every answer - return codes, device counts, names and UUIDs without a promised NUL, memory
 * figures, process lists and their counts, MIG instances - comes from the input. The snapshot
 * is then rendered as text, JSON and Prometheus text, where the driver's strings end up. /proc
 * is read under an empty scratch sysroot.
 */
#include "fuzz.h"

static void (*script)(const uint8_t *data, size_t len);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!script) {
        char path[4096];
        script = (void (*)(const uint8_t *, size_t))fuzz_stub("stub_nvml.so", "stub_nvml_script",
                                                              path, sizeof path);
        setenv("VRAMFIT_NVML_LIB", path, 1);
        setenv("VRAMFIT_GPU_BACKEND", "nvml", 1);
        (void)fuzz_sysroot();
    }
    struct vf_arena *a = vf_arena_open((size_t)64 << 20);
    struct vf_gpu_snapshot s;
    script(data, size);
    if (a && !vf_gpu_snapshot(a, &s, NULL)) {
        (void)vf_render_gpus_text(a, &s, NULL);
        (void)vf_render_gpus_json(a, &s);
        struct vf_metrics_info mi = {.hostname = "fuzz", .scrape_seconds = 0.001};
        (void)vf_render_metrics(a, &s, &mi);
    }
    vf_arena_close(a);
    return 0;
}
