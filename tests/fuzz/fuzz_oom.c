/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_oom.c - libFuzzer target: the OOM log scanner, the input fed in 1-3 pieces whose
 * sizes come from the first bytes of the input.
 */
#include "internal.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    struct vf_arena *a = vf_arena_open((size_t)8 << 20);
    struct vf_oom_scan *s;
    if (!a || vf_oom_scan_open(a, &s, NULL)) {
        vf_arena_close(a);
        return 0;
    }
    size_t cuts[2] = {size, size};
    if (size >= 3) {
        unsigned n = data[0] % 3; /* 0..2 cuts: 1..3 pieces */
        for (unsigned i = 0; i < n; i++)
            cuts[i] = data[1 + i] * size / 256;
        if (cuts[0] > cuts[1]) {
            size_t t = cuts[0];
            cuts[0] = cuts[1], cuts[1] = t;
        }
    }
    const char *p = (const char *)data;
    (void)vf_oom_scan_feed(s, p, cuts[0], NULL);
    (void)vf_oom_scan_feed(s, p + cuts[0], cuts[1] - cuts[0], NULL);
    (void)vf_oom_scan_feed(s, p + cuts[1], size - cuts[1], NULL);
    const struct vf_oom_event *ev;
    size_t n;
    uint64_t total;
    const struct vf_oom_context *ctx;
    if (!vf_oom_scan_finish(s, &ev, &n, &total, &ctx, NULL))
        for (size_t i = 0; i < n; i++)
            if (ev[i].text && strlen(ev[i].text) > 4096)
                __builtin_trap();
    vf_arena_close(a);
    return 0;
}
