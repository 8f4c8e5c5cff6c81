/* SPDX-License-Identifier: Apache-2.0 */
/*
 * est_train.h - what the training estimators share: the resolved knobs of a run, the model
 * states of one GPU and of the host under ZeRO/FSDP sharding and offload (F-TRAIN-01..03, 12,
 * 13), optimizer-state bytes (F-TRAIN-02, 14), the term functions both engines list (estimate
 * header, states, checkpointed activations, runtime overhead F-TRAIN-09) and the fix ladder
 * (F-TRAIN-19). Private to est_train.c (LLMs), est_train_diffusion.c (image/video denoisers),
 * train_states.c, train_terms.c and train_fixes.c; formulas in docs/FORMULAS.md "Training".
 */
#ifndef VRAMFIT_EST_TRAIN_H
#define VRAMFIT_EST_TRAIN_H

#include "internal.h"
#include "engine/runtime.h"

/* F-TRAIN-02: bitsandbytes 8-bit optimizers: one fp32 absmax per 256 values of each state
 * (bitsandbytes/optim/optimizer.py init_state, block_wise); tensors with fewer than 4096
 * elements keep 32-bit states (min_8bit_size). */
#define BNB_OPT_BLOCK 256
#define BNB_MIN_8BIT  4096
/* F-TRAIN-13: GPUs of one node (DGX/HGX): the FSDP hybrid-shard group and DeepSpeed's
 * num_gpus_per_node when a run spans nodes. */
#define TRAIN_GPUS_PER_NODE 8
/* F-TRAIN-04: LoRA rank when none is given (PEFT examples, LLaMA-Factory use 8-16). */
#define TRAIN_DEFAULT_RANK 16

/* issue 22, F-TRAIN-22: what a training stack turns on by default (train_presets.c). */
struct vf__train_preset {
    enum vf_framework fw;
    const char *name, *version; /* the release these defaults start at */
    const char *source;         /* where they are read from, for the assumptions */
    enum vf_grad_ckpt gc;
    enum vf_precision prec;
    enum vf_optimizer opt;
    uint32_t ce_chunks;   /* chunked cross-entropy (torchtune), 0 = none */
    bool fused_ce;        /* the loss never holds the whole logits (chunked lm_head + CE) */
    bool kernels;         /* fused RMSNorm / SwiGLU kernels (Unsloth, Liger) */
    bool compile;         /* torch.compile */
    bool kbit_prep;       /* QLoRA through PEFT's prepare_model_for_kbit_training */
    unsigned logit_bytes; /* plain loss: bytes per token x vocab at its backward (F-TRAIN-08) */
    unsigned fused_saved; /* fused loss, uncompiled: bytes per token x vocab autograd keeps */
    uint32_t seq;         /* tokens a sample is truncated to by default, 0 = F-TRAIN-06's */
};

/* The preset of fw at `version` (NULL: the newest; VF_FW_DEFAULT: trl). */
const struct vf__train_preset *vf__train_preset(enum vf_framework fw, const char *version);

/* One resolved training run: the knobs with their defaults applied. The LLM engine fills
 * every field but width/height; a denoiser (est_train_diffusion.c) fills the common knobs,
 * the batch and the sample size (seq, targets, first, ce_chunks 0; liger true: no
 * cross-entropy to fuse). */
struct vf__train_run {
    enum vf_train_method method;
    enum vf_optimizer opt;
    enum vf_precision prec;
    enum vf_grad_ckpt gc;
    enum vf_accounting acct;
    uint64_t seq, batch, rank, accum;
    uint32_t n;       /* GPUs (data-parallel ranks) */
    uint32_t group;   /* ranks each state is sharded over */
    unsigned zero;    /* effective ZeRO stage 0..3 */
    uint32_t first;   /* first trained layer (freeze tuning), 0 otherwise */
    uint32_t targets; /* LoRA: class mask */
    unsigned u;       /* bytes of one activation value: 2 (16-bit) or 4 (fp32) */
    uint32_t ce_chunks;
    bool fa, liger;
    enum vf_offload offload;
    struct vf_quant base;
    uint32_t width, height; /* image/video fine-tuning: the sample size (seq unused) */
    /* issue 22 (F-TRAIN-22..24): the framework's preset and what it implies */
    const struct vf__train_preset *preset;
    bool fused_ce;        /* chunked lm_head + loss: no whole logits (Liger, Unsloth, TRL) */
    bool compile;         /* torch.compile: fused loss and elementwise ops */
    bool kbit_prep;       /* QLoRA: 16-bit base tensors cast to fp32, fp32 residual stream */
    bool in_bwd;          /* the optimizer step in backward (torchtune full fine-tuning) */
    bool eager;           /* CUDA_MODULE_LOADING=EAGER: the larger context (F-TRAIN-09) */
    unsigned logit_bytes; /* plain loss: bytes per token x vocab */
    unsigned fused_saved; /* fused loss, uncompiled: bytes per token x vocab it keeps */
};

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
    /* F-TRAIN-29: the node's host RAM at two moments: while the model loads (each rank
     * builds it before DeepSpeed partitions it; zero.Init partitions as it builds) and
     * during the steps (what offload keeps there). `host` is the larger (DeepSpeed's
     * accounting: its estimator's one figure, which merges them). */
    uint64_t host_load, host_step;
};

/* ------------------------------------------------------- train_states.c */

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

/* -------------------------------------------------------- train_terms.c */

/* F-TRAIN-04/11: the knobs both engines read from w into r, defaults applied: method,
 * optimizer, precision, checkpointing, accounting, accumulation (1), GPUs (1), LoRA rank
 * (TRAIN_DEFAULT_RANK), the activation bytes u, FlashAttention, offload. Clears r first.
 * F-TRAIN-22: knobs not given take the --framework preset's defaults (`preset`: the default
 * stack's too when none is named; a denoiser passes false). */
void vf__train_knobs(const struct vf_workload *w, struct vf__train_run *r, bool preset);

/* F-TRAIN-01/03/04/11/12: in set to the bytes per trained parameter of weights, gradients and
 * master copy of r (`whole`: the model's own tensors are trained; else adapters) and the
 * sharding of r, the rest 0: the caller sets params, trained, frozen_bytes, opt_bytes and the
 * gathered unit. */
void vf__train_states_of(const struct vf__train_run *r, bool whole, struct vf__train_states_in *in);

/* F-TRAIN-03: ", sharded over N GPUs (ZeRO-k)" when r shards a state, else "" (arena). */
const char *vf__train_shard_note(struct vf_arena *a, const struct vf__train_run *r);

/* The fields of e every training estimate sets: the model, engine, task, the base storage,
 * GPUs, `users` samples of `ctx` tokens, the knobs as resolved (batch, LoRA rank unless
 * `whole`, ZeRO stage). */
void vf__train_header(struct vf_estimate *e, const struct vf_model *m, const struct vf_workload *w,
                      const struct vf__train_run *r, bool whole, uint64_t users, uint64_t ctx);

/* F-TRAIN-07: activation bytes per token under full recomputation: each of n_saved layers
 * keeps its u-byte input of width h, and one layer (max_layer bytes) is live again. */
uint64_t vf__train_ckpt_per_token(uint64_t n_saved, unsigned u, uint64_t h, uint64_t max_layer);

/* F-TRAIN-09: the runtime_overhead component over `transient` bytes (activations, logits),
 * the CUDA context under eager module loading when `eager`. */
void vf__train_add_overhead(struct vf_estimate *e, uint64_t transient, bool eager);

/* F-TRAIN-10: the peak of one GPU is the sum of its components; host_bytes the host's. */
void vf__train_total(struct vf_estimate *e, uint64_t host_bytes);

/* -------------------------------------------------------- train_fixes.c */

/* F-TRAIN-19: when w gives a card and e's peak is above it, each fix of the guide's order
 * that changes run r, and the fewest that fit together, appended to e's fixes. */
void vf__train_fixes(struct vf_arena *a, const struct vf_model *m, const struct vf_workload *w,
                     const struct vf__train_run *r, struct vf_estimate *e);

/* --------------------------------------------------------- est_train.c */

/* The knobs of w as a run of a language model (defaults applied, limits and contradictions
 * checked, LoRA targets parsed, the base storage chosen); VF_EINVAL/VF_ERANGE/VF_EUNSUPPORTED
 * naming the knob. */
enum vf_err vf__train_resolve(struct vf_arena *a, const struct vf_model *m,
                              const struct vf_workload *w, struct vf__train_run *r,
                              struct vf_error *err);

/* ------------------------------------------------ est_train_diffusion.c */

/* The pytorch engine for an image/video pipeline. */
enum vf_err vf__train_diffusion(struct vf_arena *a, const struct vf_model *m,
                                const struct vf_workload *w, struct vf_estimate *e,
                                struct vf_error *err);

/* F-TRAIN-20: the sample size a denoiser trains at (512 x 512 for images unless given). */
void vf__train_diffusion_size(const struct vf_model *m, const struct vf_workload *w,
                              uint32_t *width, uint32_t *height);

/* The knobs of w as a run of a denoiser: the common knobs, the batch (--batch of the
 * diffusion options or of training, 1) and the sample size; nothing checked. */
void vf__train_diffusion_run(const struct vf_model *m, const struct vf_workload *w,
                             struct vf__train_run *r);

#endif /* VRAMFIT_EST_TRAIN_H */
