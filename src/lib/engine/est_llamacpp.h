/* SPDX-License-Identifier: Apache-2.0 */
/*
 * est_llamacpp.h - what est_llamacpp.c shares with est_ollama.c: the llama.cpp buffer
 * plan of one workload (F-LCPP-01..10), per device, without the estimate around it.
 */
#ifndef VRAMFIT_EST_LLAMACPP_H
#define VRAMFIT_EST_LLAMACPP_H

#include "internal.h"

/* GPUs one plan describes (more are refused by the estimator with VF_ERANGE). */
#define VF_LCPP_MAX_GPUS 16

/* The settings llama.cpp resolves from its flags (F-LCPP-01). */
struct vf_lcpp_cfg {
    uint32_t n_gpus;   /* 0 = --cpu: everything on the CPU backend */
    int64_t ngl;       /* layers offloaded, 0..n_layers+1 (n_layers+1: the output too) */
    bool flash_attn;   /* resolved: auto -> on */
    enum vf_dtype tk;  /* K cache type */
    enum vf_dtype tv;  /* V cache type */
    uint64_t n_ctx;    /* -c as given: the total over the sequences */
    uint64_t n_seq;    /* -np */
    uint64_t n_batch;  /* -b */
    uint64_t n_ubatch; /* -ub */
    bool kv_unified, swa_full, no_mmap;
    bool no_op_offload;             /* --no-op-offload: no host weights copied (F-LCPP-13) */
    bool fit;                       /* --fit on / -ngl auto (F-LCPP-11) */
    uint64_t fit_margin, fit_ctx;   /* --fit-target (bytes), --fit-ctx */
    bool shared_kv;                 /* builds before PR 14363: one unified KV cache */
    uint32_t build;                 /* llama.cpp@bNNNN; 0 = the newest modelled */
    bool output_last;               /* builds before PR 18148: -ngl offloads the output layer
                                     * after every repeating layer (F-LCPP-02, F-LCPP-14) */
    uint32_t n_cpu_moe;             /* expert tensors of the first N layers stay on the CPU */
    double split[VF_LCPP_MAX_GPUS]; /* -ts weights (0 everywhere = even) */
    bool split_ts;                  /* split is -ts's (else free memory, or even) */
    uint32_t n_mix;                 /* issue 21: --gpu A,B: each GPU's usable bytes */
    uint64_t mix[VF_LCPP_MAX_GPUS];
    const struct vf_quant *q; /* NULL = the model's own storage */
};

/* What llama.cpp allocates, per GPU and on the host (bytes). */
struct vf_lcpp_plan {
    uint64_t model[VF_LCPP_MAX_GPUS], kv[VF_LCPP_MAX_GPUS], compute[VF_LCPP_MAX_GPUS];
    uint64_t output[VF_LCPP_MAX_GPUS];
    uint64_t host_model, host_kv, host_compute, host_output;
    uint64_t n_ctx, n_ctx_seq, n_stream; /* after llama.cpp's padding (F-LCPP-03) */
    uint64_t cells, swa_cells;           /* KV cells per stream: full and sliding layers */
    uint32_t layers_gpu[VF_LCPP_MAX_GPUS];
    uint32_t layers_host;
    bool output_on_gpu;
};

/* Fills p for model m under c (F-LCPP-02..08). VF_EINVAL for configurations llama.cpp
 * refuses (a quantized V cache without flash attention), VF_ERANGE on overflow. */
enum vf_err vf__lcpp_plan(const struct vf_model *m, const struct vf_lcpp_cfg *c,
                          struct vf_lcpp_plan *p, struct vf_error *err);

/* The peak of the most loaded GPU of a plan, with the per-GPU runtime overhead. */
uint64_t vf__lcpp_gpu_peak(const struct vf_lcpp_cfg *c, const struct vf_lcpp_plan *p);

/* F-LCPP-02..09: plan p as e's components: the model, KV and compute buffers of each GPU,
 * then `overhead` bytes on every GPU named runtime_overhead with `note` (static; none without
 * GPUs), then the host's buffers (the output buffer always, the others when not empty or
 * when there is no GPU). Returns the bytes in host memory. Shared by llama.cpp and Ollama. */
uint64_t vf__lcpp_components(struct vf_estimate *e, const struct vf_lcpp_cfg *c,
                             const struct vf_lcpp_plan *p, uint64_t overhead, const char *note);

/* Issue 21: e->spill for a plan that keeps part of the model on the CPU to run (the caller
 * decides that the engine itself chose it: --fit, -ngl auto, Ollama's planner). */
void vf__lcpp_spill(const struct vf_model *m, const struct vf_lcpp_cfg *c,
                    const struct vf_lcpp_plan *p, struct vf_estimate *e);

/* Bytes layer l of plan p takes on a GPU: its weights, KV cells and recurrent state; l ==
 * n_layers: the output layer (output + norm, or the tied embeddings again). For planners
 * (Ollama's layout, F-OLL-10). */
uint64_t vf__lcpp_layer_bytes(const struct vf_model *m, const struct vf_lcpp_cfg *c,
                              const struct vf_lcpp_plan *p, uint32_t l);

/* F-LCPP-09: the CUDA context + cuBLAS handles per GPU that llama.cpp's breakdown lists as
 * "unaccounted" (466/467 MiB on RTX 3080s in measured-public.jsonl). */
#define VF_LCPP_CUDA_OVERHEAD (466ULL << 20)

#endif
