/* SPDX-License-Identifier: Apache-2.0 */
/*
 * terms.h - the terms of an LLM inference estimate that several engines compute alike: the
 * workload's defaults, the weights at a storage, the KV cache per token, logits, the PyTorch
 * runtime overhead and the tensor-parallel rule. Each engine (est_generic.c, est_vllm.c,
 * est_llamacpp.c, est_ollama.c, est_transformers.c) is a short list of these and of its own
 * terms; each term cites its formula IDs in docs/FORMULAS.md.
 */
#ifndef VRAMFIT_TERMS_H
#define VRAMFIT_TERMS_H

#include "internal.h"

/* Fills what every LLM inference estimate starts with: e's model (a copy of m), its engine's
 * name and the task. */
void vf__term_begin(const struct vf_model *m, const struct vf_engine *eng, struct vf_estimate *e);

/* F-GEN-02, F-VLLM-01, F-HF-02, F-LCPP-01: the context per sequence: --ctx, else the model's
 * maximum, else 4096 tokens. */
uint64_t vf__term_ctx(const struct vf_model *m, const struct vf_workload *w);

/* Says, as an assumption, that the context is the model's maximum when --ctx was not given. */
void vf__term_assume_ctx(struct vf_arena *a, struct vf_estimate *e, const struct vf_workload *w,
                         uint64_t ctx);

/* The input limits on sequences and cards: VF_ERANGE "N users/GPUs is over the limit". */
enum vf_err vf__term_limits(uint64_t users, uint64_t gpus, struct vf_error *err);

/* How an engine words the two ways a tensor-parallel split fails (static strings). */
struct vf__tp_words {
    const char *heads;    /* the query heads do not divide over the cards */
    const char *kv_heads; /* the KV heads neither divide nor are divided by the cards */
};

/* F-GEN-01 split rule: n cards shard the attention heads: n must divide the query heads, and
 * either divide the KV heads or be a multiple of them (then each card keeps a copy of one;
 * vLLM's QKVParallelLinear); MLA's latent is not sharded. n <= 1 always splits. Returns
 * whether n cards can split m; *why is NULL, or the engine's words for what does not divide. */
bool vf__term_tp_split(const struct vf_model *m, uint32_t n, const struct vf__tp_words *words,
                       const char **why);

/* Asks eng->can_split whether n cards can hold m; VF_EUNSUPPORTED "cannot split 'id' over n
 * GPUs: why" when not, with the head counts after it when `heads` (tensor parallelism). */
enum vf_err vf__term_check_split(const struct vf_model *m, const struct vf_workload *w,
                                 const struct vf_engine *eng, uint32_t n, bool heads,
                                 struct vf_error *err);

/* F-W-01: the storage --weights asks for, or NULL for the model's own (w must outlive it). */
const struct vf_quant *vf__term_storage(const struct vf_workload *w);

/* F-W-01, F-GEN-01, F-VLLM-02, F-LCPP-02: records storage q (NULL: the model's own) in e and
 * the bytes of the whole model stored so (e->weights_bytes). VF_ERANGE when they are unknown
 * or overflow 64 bits. */
enum vf_err vf__term_weights(const struct vf_model *m, const struct vf_quant *q,
                             struct vf_estimate *e, struct vf_error *err);

/* F-GEN-02, F-VLLM-01: the 16-bit type the model computes in (fp16 when its checkpoint is
 * fp16, else bf16), and the KV cache type: --kv-dtype, else that. */
enum vf_dtype vf__term_compute_dtype(const struct vf_model *m);
enum vf_dtype vf__term_kv_dtype(const struct vf_model *m, const struct vf_workload *w);

/* F-KV-01, F-KV-02: records the KV cache type kv in e and its bytes per token of one sequence
 * over all layers (e->kv_bytes_per_token). */
void vf__term_kv_per_token(const struct vf_model *m, enum vf_dtype kv, struct vf_estimate *e);

/* F-GEN-03, F-VLLM-03: the FFN width one token passes through (Iact): I for a dense model;
 * for MoE k x Ie + ns x Is (Is, else Ie), or I when that is larger and the model has
 * leading dense layers. */
uint64_t vf__term_active_ffn(const struct vf_model *m);

/* F-GEN-03, F-VLLM-03, F-LCPP-07, F-HF-08: bytes of `rows` rows of logits over a vocabulary of
 * `vocab` entries at `bytes` each (saturating). */
uint64_t vf__term_logits(uint64_t rows, uint64_t vocab, uint64_t bytes);

/* F-HF-11, F-TRAIN-09: PyTorch's runtime overhead per GPU: the CUDA context and the cuBLAS
 * workspaces, plus the allocator slack on `transient` bytes (activations, logits). */
uint64_t vf__term_torch_overhead(uint64_t transient);

#endif /* VRAMFIT_TERMS_H */
