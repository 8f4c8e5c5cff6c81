/* SPDX-License-Identifier: Apache-2.0 */
/*
 * est_generic.c - the engine-neutral LLM inference estimate: weights + KV cache +
 * activations of one prefill chunk + runtime overhead, per GPU, with tensor-parallel
 * splitting over several cards. Formulas F-GEN-01..05 in docs/FORMULAS.md. The engine
 * estimators of issue 4 refine each term with the engine's own logic; the terms they share
 * are in terms.c.
 */
#include "internal.h"
#include "engine/runtime.h"
#include "engine/terms.h"

/* F-GEN-03: tokens of one prefill chunk (vLLM's default max_num_batched_tokens 8192). */
#define GEN_CHUNK_TOKENS 8192
/* F-GEN-03: sequences sampled at once when profiling (vLLM's default max_num_seqs 256). */
#define GEN_SAMPLED_SEQS 256

/* F-GEN-01 split rule (terms.c), in the generic engine's words. */
static bool generic_can_split(const struct vf_model *m, const struct vf_workload *w, uint32_t n,
                              const char **why)
{
    static const struct vf__tp_words words = {
        "tensor parallelism needs the attention heads to divide evenly over the cards",
        "tensor parallelism needs the KV heads to divide evenly over the cards",
    };
    (void)w;
    return vf__term_tp_split(m, n, &words, why);
}

/* F-GEN-01: the weights, split evenly by tensor parallelism over n GPUs (e->weights_bytes
 * already set). */
static void gen_weights(const struct vf_model *m, uint32_t n, struct vf_estimate *e)
{
    vf__add_component(e, "weights", vf__div_ceil(e->weights_bytes, n), NULL,
                      m->provenance == VF_PROV_EXACT ? "exact from the weights"
                                                     : "from the architecture");
}

/* F-GEN-02: the KV cache of every sequence on one of n GPUs (sliding layers capped at their
 * window, the recurrent state divided evenly), with its assumptions. */
static void gen_kv(struct vf_arena *a, const struct vf_model *m, uint32_t n, struct vf_estimate *e)
{
    char b1[32], b2[32];
    uint64_t kv_seq = vf_model_kv_bytes(m, e->kv_dtype, e->ctx_tokens, true);
    uint64_t kv_all = vf__sat_mul(kv_seq, e->users);
    uint64_t state = vf__sat_mul(m->recurrent_state_bytes, e->users);
    uint64_t kv_gpu;
    if (m->attn == VF_ATTN_MLA || n == 1)
        kv_gpu = kv_all; /* one latent per token: every rank keeps all of it */
    else if (m->n_kv_heads >= n)
        kv_gpu = vf__div_ceil(kv_all, n);
    else
        kv_gpu = vf__div_ceil(kv_all, m->n_kv_heads); /* each rank keeps one KV head */
    if (n > 1 && m->attn == VF_ATTN_MLA)
        vf__assume(a, e,
                   "MLA keeps one latent per token that every tensor-parallel rank holds "
                   "whole");
    if (n > 1 && m->attn != VF_ATTN_MLA && m->n_kv_heads < n)
        vf__assume(a, e, "%u KV heads over %u GPUs: each GPU keeps a copy of one KV head",
                   m->n_kv_heads, n);
    kv_gpu = vf__sat_add(kv_gpu, vf__div_ceil(state == VF_UNKNOWN ? 0 : state, n));
    vf__add_component(e, "kv_cache", kv_gpu, NULL, NULL);
    vf__assume(a, e, "KV cache %s, %s B per token (%s tokens x %llu sequences)",
               vf_dtype_name(e->kv_dtype),
               vf_format_bytes(b1, sizeof b1, e->kv_bytes_per_token, VF_FMT_EXACT),
               vf_format_tokens(b2, sizeof b2, e->ctx_tokens), (unsigned long long)e->users);
    if (m->sliding_window && e->ctx_tokens > m->sliding_window)
        vf__assume(a, e, "sliding-window layers keep at most %u tokens", m->sliding_window);
    if (m->recurrent_state_bytes)
        vf__assume(a, e, "recurrent layers keep a fixed state of %s per sequence",
                   vf_format_bytes(b1, sizeof b1, m->recurrent_state_bytes, VF_FMT_IEC));
}

/* F-GEN-03: activations of one prefill chunk of T tokens: residual stream and norm outputs
 * (4 x hidden), q/k/v, and the FFN's gate, up and product (3 x the active FFN width), at 2
 * bytes; q/k/v and FFN are sharded over the n GPUs. Plus fp32 logits for the sequences
 * sampled at once. */
static void gen_activations(struct vf_arena *a, const struct vf_model *m, uint32_t n,
                            struct vf_estimate *e)
{
    uint64_t total_tokens = vf__sat_mul(e->ctx_tokens, e->users);
    uint64_t t = total_tokens < GEN_CHUNK_TOKENS ? total_tokens : GEN_CHUNK_TOKENS;
    uint64_t ffn = vf__term_active_ffn(m);
    uint64_t q_dim = (uint64_t)m->n_heads * m->head_dim;
    uint64_t kv_dim = (uint64_t)(m->n_kv_heads ? m->n_kv_heads : m->n_heads) * m->head_dim;
    uint64_t sharded = (q_dim + 2 * kv_dim + 3 * ffn) * 2 / n;
    uint64_t per_token = 4 * (uint64_t)m->hidden * 2 + sharded;
    uint64_t seqs = e->users < GEN_SAMPLED_SEQS ? e->users : GEN_SAMPLED_SEQS;
    uint64_t logits = vf__term_logits(seqs, m->vocab, 4);
    uint64_t acts = vf__sat_add(vf__sat_mul(t, per_token), logits);
    vf__add_component(e, "activations", acts, "prefill", NULL);
    vf__assume(a, e,
               "activations: one prefill chunk of %llu tokens (vLLM's default "
               "max_num_batched_tokens) + fp32 logits of %llu sequences",
               (unsigned long long)t, (unsigned long long)seqs);
}

/* F-GEN-04: the runtime overhead on each of the n GPUs, with the split's assumption. */
static void gen_overhead(struct vf_arena *a, uint32_t n, struct vf_estimate *e)
{
    char b1[32];
    vf__add_component(e, "runtime_overhead", VF_RT_GENERIC_OVERHEAD_BYTES, NULL, NULL);
    vf__assume(a, e,
               "runtime overhead %s per GPU: CUDA context, cuBLAS workspace and allocator "
               "slack (assumed from vLLM's non-torch memory logs)",
               vf_format_bytes(b1, sizeof b1, VF_RT_GENERIC_OVERHEAD_BYTES, VF_FMT_IEC));
    if (n > 1)
        vf__assume(a, e,
                   "split over %u GPUs by tensor parallelism: weights, KV heads and "
                   "activations divided evenly, overhead on every GPU",
                   n);
}

static enum vf_err generic_estimate(struct vf_arena *a, const struct vf_model *m,
                                    const struct vf_workload *w, struct vf_estimate *e,
                                    struct vf_error *err)
{
    enum vf_err rc;
    uint32_t n = w->gpus ? w->gpus : 1;
    vf__term_begin(m, &vf__engine_generic, e);
    e->gpus = n;
    e->users = w->users ? w->users : 1;
    e->ctx_tokens = vf__term_ctx(m, w);
    if ((rc = vf__term_limits(e->users, n, err)) ||
        (rc = vf__term_check_split(m, w, &vf__engine_generic, n, true, err)) ||
        (rc = vf__term_weights(m, vf__term_storage(w), e, err)))
        return rc;
    vf__term_kv_per_token(m, vf__term_kv_dtype(m, w), e);

    vf__assume(a, e,
               "engine generic: weights + KV cache + one prefill chunk of activations + "
               "runtime overhead (F-GEN-01..05); --engine picks an engine's own logic");
    vf__term_assume_ctx(a, e, w, e->ctx_tokens);
    gen_weights(m, n, e);
    gen_kv(a, m, n, e);
    gen_activations(a, m, n, e);
    gen_overhead(a, n, e);

    /* F-GEN-05: the peak of one GPU is the sum of its components */
    e->total_bytes = vf__gpu_total(e, 0);
    e->host_bytes = 0;
    return VF_OK;
}

const struct vf_engine vf__engine_generic = {
    .name = "generic",
    .version = "",
    .tasks = 1u << VF_TASK_INFER,
    .can_split = generic_can_split,
    .estimate = generic_estimate,
    .card_blind = true, /* F-GEN-01..05: the model and the workload only */
};
