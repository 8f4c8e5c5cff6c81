/* SPDX-License-Identifier: Apache-2.0 */
/*
 * spill.c - the slowdown of a run with spill (issue 21, F-FIT-07): decode reads every weight
 * once per token, the GPU's share at the card's bandwidth and the CPU's at host memory
 * bandwidth. One small function, to be replaced by the offload speed model of issue 24.
 */
#include "internal.h"

/* Host memory bandwidth assumed: a desktop's dual-channel DDR5-5600, 2 channels x 8 bytes x
 * 5600 MT/s = 89.6 GB/s peak (JEDEC DDR5 transfer rate x bus width; no measurement). */
#define SPILL_HOST_BPS 89.6e9

double vf__spill_slowdown(uint64_t gpu_weight_bytes, uint64_t host_weight_bytes,
                          uint32_t gpu_bandwidth_gbps)
{
    if (!gpu_bandwidth_gbps)
        return 0;
    double gpu_bps = (double)gpu_bandwidth_gbps * 1e9;
    double all = (double)gpu_weight_bytes + (double)host_weight_bytes;
    if (all <= 0)
        return 0;
    double t = (double)gpu_weight_bytes / gpu_bps + (double)host_weight_bytes / SPILL_HOST_BPS;
    return t / (all / gpu_bps);
}
