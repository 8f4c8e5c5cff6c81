/* SPDX-License-Identifier: Apache-2.0 */
/*
 * est_ollama_layout.c - where Ollama's scheduler puts the layers over several GPUs (issue 21,
 * F-OLL-10): llm/server.go buildLayout, assignLayers, findBestFit and greedyFit of Ollama
 * v0.15.5 (commit 8a4b77f9d), on layer sizes and per-GPU capacities the caller computed.
 */
#include "est_ollama.h"

#include <string.h>

/* greedyFit: the layers from the last down onto devices k-1, k-2, ..., each filled to
 * factor x its capacity before the next is opened; count[j] the layers of device j. Returns
 * the layers placed (the last ones: placement stops at the first that fits nowhere). */
static uint32_t greedy(const uint64_t *size, uint32_t n, const uint64_t *cap, uint32_t k,
                       double factor, uint32_t *count)
{
    memset(count, 0, sizeof *count * k);
    uint32_t placed = 0;
    int64_t d = (int64_t)k - 1;
    double room = (double)cap[d] * factor;
    for (int64_t i = (int64_t)n - 1; i >= 0; i--) {
        while ((double)size[i] > room) {
            if (--d < 0)
                return placed;
            room = (double)cap[d] * factor;
        }
        room -= (double)size[i];
        count[d]++;
        placed++;
    }
    return placed;
}

/* findBestFit: the smallest capacity factor in [0, 1] (bisected to 1e-6, as Ollama does) that
 * places as many layers as the whole capacity does, so the layers are balanced over the k
 * devices rather than packed into the last ones. */
static uint32_t best_fit(const uint64_t *size, uint32_t n, const uint64_t *cap, uint32_t k,
                         uint32_t *count)
{
    uint32_t trial[VF_OLL_MAX_GPUS];
    uint32_t most = greedy(size, n, cap, k, 1.0, count);
    double lo = 0, hi = 1;
    while (hi - lo > 1e-6) {
        double mid = (lo + hi) / 2;
        if (greedy(size, n, cap, k, mid, trial) == most) {
            hi = mid;
            memcpy(count, trial, sizeof *count * k);
        } else {
            lo = mid;
        }
    }
    return most;
}

uint32_t vf__oll_layout(const uint64_t *size, uint32_t n_layers, const uint64_t *cap,
                        uint32_t n_gpus, uint32_t *count)
{
    uint32_t placed = 0, n = n_layers;
    if (n_gpus > VF_OLL_MAX_GPUS)
        n_gpus = VF_OLL_MAX_GPUS;
    memset(count, 0, sizeof *count * n_gpus);
    /* assignLayers: as few GPUs as hold every layer, the largest first; where none do, the
     * output layer (the last) is left to the CPU and the rest placed again */
    for (int pass = 0; pass < 2 && n && n_gpus; pass++) {
        for (uint32_t k = 1; k <= n_gpus; k++) {
            memset(count, 0, sizeof *count * n_gpus);
            placed = best_fit(size, n, cap, k, count);
            if (placed == n)
                break;
        }
        if (placed == n)
            return placed;
        n--;
    }
    return placed;
}
