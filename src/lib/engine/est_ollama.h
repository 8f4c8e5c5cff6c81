/* SPDX-License-Identifier: Apache-2.0 */
/*
 * est_ollama.h - what est_ollama.c shares with est_ollama_memgo.c: Ollama's older memory
 * planner (llm/memory.go EstimateGPULayers with fs/ggml GraphSize), F-OLL-08.
 */
#ifndef VRAMFIT_EST_OLLAMA_H
#define VRAMFIT_EST_OLLAMA_H

#include "internal.h"

#define VF_OLL_MAX_GPUS 16

/* What memory.go is given: the context over every sequence (num_ctx x num_parallel), the
 * batch, the sequences, the KV bytes per element (2, 1 for q8_0, 0.5 for q4_0, as Go counts),
 * the free memory of each GPU, OLLAMA_GPU_OVERHEAD, MinimumMemory, num_gpu (-1: unset) and
 * whether a projector is counted on GPU 0 (proj_weights + proj_graph bytes). */
struct vf_oll_memgo_in {
    uint64_t context, batch, parallel;
    double kv_elem;
    uint32_t n_gpus;
    uint64_t free[VF_OLL_MAX_GPUS];
    uint64_t overhead, minimum;
    int64_t num_gpu;
    uint64_t proj_weights, proj_graph;
    bool proj_last; /* 0.7.1 on, Ollama-engine models: the projector goes with the output layer */
    const struct vf_quant *q;
};

/* What memory.go logs in its "offload" line (bytes; layers include the output layer). */
struct vf_oll_memgo {
    uint64_t kv, graph_full, graph_partial;
    uint64_t weights_repeating, weights_output;
    uint64_t required_full, required_partial;
    uint64_t alloc[VF_OLL_MAX_GPUS];
    uint64_t w_gpu[VF_OLL_MAX_GPUS], kv_gpu[VF_OLL_MAX_GPUS]; /* of the layers placed there */
    uint64_t w_host, kv_host; /* the layers left on the CPU (their true sizes) */
    uint64_t layer0;          /* the first layer counted once more per GPU as a buffer */
    uint32_t layers_gpu[VF_OLL_MAX_GPUS];
    uint32_t layers, layers_model;
    bool graph_known; /* false: the architecture has no GraphSize case (GQA x KV / 6) */
};

/* F-OLL-08: runs memory.go's planner on model m. */
void vf__oll_memgo(const struct vf_model *m, const struct vf_oll_memgo_in *in,
                   struct vf_oll_memgo *out);

/* F-OLL-10 (issue 21): Ollama's layout of n_layers layers (size[], the output layer last) over
 * n_gpus GPUs of cap[] bytes for layers each, sorted by free memory, largest first: count[j]
 * the layers of GPU j, the last layers on the last GPU used. Returns the layers placed. */
uint32_t vf__oll_layout(const uint64_t *size, uint32_t n_layers, const uint64_t *cap,
                        uint32_t n_gpus, uint32_t *count);

#endif
