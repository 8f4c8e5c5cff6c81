/*
 * est_train.h - what the training estimators share: the model states of one GPU and of the
 * host under ZeRO/FSDP sharding and offload (F-TRAIN-01..03, 12, 13), optimizer-state bytes
 * (F-TRAIN-02, 14) and the runtime overhead (F-TRAIN-09). Private to est_train.c (LLMs) and
 * est_train_diffusion.c (image/video denoisers); formulas in docs/FORMULAS.md "Training".
 */
#ifndef VRAMFIT_EST_TRAIN_H
#define VRAMFIT_EST_TRAIN_H

#include "internal.h"

/* F-TRAIN-09: CUDA context with lazy module loading, "around 400MB" (pytorch/pytorch#109888),
 * plus the cuBLASLt workspace (32 MiB on Hopper, PyTorch PR #120925) and the cuBLAS block of
 * 8,519,680 B seen on the first matmul (research A6). */
#define TRAIN_CONTEXT_BYTES (400ULL << 20)
#define TRAIN_CUBLAS_BYTES  ((32ULL << 20) + 8519680ULL)
/* F-TRAIN-09: allocator slack on activations and logits, Megatron-LM's overhead_factor 1.05
 * (megatron/training/theoretical_memory_usage.py; research A7). */
#define TRAIN_SLACK_PCT 5
/* F-TRAIN-02: bitsandbytes 8-bit optimizers: one fp32 absmax per 256 values of each state
 * (bitsandbytes/optim/optimizer.py init_state, block_wise); tensors with fewer than 4096
 * elements keep 32-bit states (min_8bit_size). */
#define BNB_OPT_BLOCK 256
#define BNB_MIN_8BIT  4096
/* F-TRAIN-13: GPUs of one node (DGX/HGX): the FSDP hybrid-shard group and DeepSpeed's
 * num_gpus_per_node when a run spans nodes. */
#define TRAIN_GPUS_PER_NODE 8

/* The model states of a run, before and after sharding. */
struct vf__train_states_in {
    uint64_t params;       /* every parameter of the model (DeepSpeed's total_params) */
    uint64_t trained;      /* trainable parameters */
    uint64_t frozen_bytes; /* frozen weights at their storage */
    uint64_t opt_bytes;    /* optimizer states of the trained parameters */
    unsigned w_bytes;      /* per trained parameter: weight, gradient and master copy */
    unsigned g_bytes;
    unsigned master_bytes;
    uint64_t unit_bytes; /* ZeRO-3: the largest unit gathered at 16 bit */
    bool unit_grads;     /* ... and its gradients (the unit is trained) */
    unsigned stage;      /* 0..3 */
    uint32_t n_gpus;     /* data-parallel ranks */
    uint32_t group;      /* ranks a state is sharded over (n_gpus; hybrid: one node) */
    enum vf_offload offload;
    enum vf_accounting accounting;
    bool zero_init; /* DeepSpeed zero.Init (Hugging Face's default under ZeRO-3) */
};

struct vf__train_states {
    uint64_t weights, grads, opt, master; /* on one GPU */
    /* offloaded to the host RAM of one node: each state, and the node's total (their sum;
     * DeepSpeed's accounting: its estimator's figure, buffers included) */
    uint64_t host_weights, host_grads, host_opt, host_master;
    uint64_t host;
};

/* F-TRAIN-01..03, 12, 13: the states on one GPU and the host. VF_UNKNOWN on overflow. */
void vf__train_states(const struct vf__train_states_in *in, struct vf__train_states *out);

/* F-TRAIN-02, 14: optimizer-state bytes of n_tensors tensors of rows x cols trained elements
 * (cols = the input width; rows 1 for a vector), states in fp32 (or bf16 when `half`). */
uint64_t vf__train_opt_bytes(enum vf_optimizer o, uint64_t rows, uint64_t cols, uint64_t n_tensors,
                             bool half);

/* F-TRAIN-03: the effective ZeRO stage of the knobs on n GPUs and the ranks each state is
 * sharded over; VF_EINVAL for contradictory knobs (both --zero and --fsdp, sharding on one GPU
 * without offload, params offload below stage 3, offload at stage 0). */
enum vf_err vf__train_stage(const struct vf_train_opts *t, uint32_t n, unsigned *zero,
                            uint32_t *group, struct vf_error *err);

/* F-TRAIN-09: CUDA context + cuBLAS workspaces + slack on the transient bytes. */
uint64_t vf__train_overhead(uint64_t transient);

/* The pytorch engine for an image/video pipeline (est_train_diffusion.c). */
enum vf_err vf__train_diffusion(struct vf_arena *a, const struct vf_model *m,
                                const struct vf_workload *w, struct vf_estimate *e,
                                struct vf_error *err);

/* F-TRAIN-20: the sample size a denoiser trains at (512 x 512 for images unless given). */
void vf__train_diffusion_size(const struct vf_model *m, const struct vf_workload *w,
                              uint32_t *width, uint32_t *height);

#endif /* VRAMFIT_EST_TRAIN_H */
