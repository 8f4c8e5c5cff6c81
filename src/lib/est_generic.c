/*
 * est_generic.c - the engine-neutral LLM inference estimate: weights + KV cache +
 * activations of one prefill chunk + runtime overhead, per GPU, with tensor-parallel
 * splitting over several cards. Formulas F-GEN-01..05 in docs/FORMULAS.md. The engine
 * estimators of issue 4 refine each term with the engine's own logic.
 */
#include "internal.h"

#include <stdio.h>
#include <string.h>

/* F-GEN-03: tokens of one prefill chunk (vLLM's default max_num_batched_tokens 8192). */
#define GEN_CHUNK_TOKENS 8192
/* F-GEN-03: sequences sampled at once when profiling (vLLM's default max_num_seqs 256). */
#define GEN_SAMPLED_SEQS 256
/* F-GEN-04: CUDA context + cuBLAS workspace + allocator slack per GPU (assumed, see
 * FORMULAS.md: vLLM logs show 0.35-1.79 GiB of non-torch memory; PyTorch on CUDA 12 with
 * lazy module loading creates a context of a few hundred MiB). */
#define GEN_RUNTIME_BYTES (768ULL << 20)

/* Tensor parallelism shards attention heads: n must divide the query heads, and either
 * divide the KV heads or be a multiple of them (then KV heads are replicated). */
static bool generic_can_split(const struct vf_model *m, const struct vf_workload *w, uint32_t n,
                              const char **why)
{
    (void)w;
    *why = NULL;
    if (n <= 1)
        return true;
    if (m->n_heads % n) {
        *why = "tensor parallelism needs the attention heads to divide evenly over the cards";
        return false;
    }
    if (m->attn != VF_ATTN_MLA && m->n_kv_heads && m->n_kv_heads % n && n % m->n_kv_heads) {
        *why = "tensor parallelism needs the KV heads to divide evenly over the cards";
        return false;
    }
    return true;
}

/* The 16-bit type the model computes in (KV default, activations). */
static enum vf_dtype compute_dtype(const struct vf_model *m)
{
    return m->native_dtype == VF_DT_F16 ? VF_DT_F16 : VF_DT_BF16;
}

static enum vf_err generic_estimate(struct vf_arena *a, const struct vf_model *m,
                                    const struct vf_workload *w, struct vf_estimate *e,
                                    struct vf_error *err)
{
    char b1[32], b2[32];
    e->model = *m;
    e->engine = vf__engine_generic.name;
    e->task = VF_TASK_INFER;
    uint32_t n = w->gpus ? w->gpus : 1;
    e->gpus = n;
    e->users = w->users ? w->users : 1;
    e->ctx_tokens = w->ctx_tokens ? w->ctx_tokens : m->max_ctx_tokens;
    if (e->ctx_tokens == 0 || e->ctx_tokens == VF_UNKNOWN)
        e->ctx_tokens = 4096;
    if (e->users > VF_MAX_USERS)
        return vf__errf(err, VF_ERANGE, "%llu users is over the limit of %llu",
                        (unsigned long long)e->users, (unsigned long long)VF_MAX_USERS);
    if (n > VF_MAX_GPUS)
        return vf__errf(err, VF_ERANGE, "%u GPUs is over the limit of %d", n, VF_MAX_GPUS);
    const char *why;
    if (!generic_can_split(m, w, n, &why))
        return vf__errf(err, VF_EUNSUPPORTED,
                        "cannot split '%s' over %u GPUs: %s (%u heads, %u KV heads)", m->id, n, why,
                        m->n_heads, m->n_kv_heads);

    e->weights = w->weights.kind == VF_QK_NATIVE ? m->native : w->weights;
    enum vf_dtype act = compute_dtype(m);
    e->kv_dtype = w->kv_dtype == VF_DT_DEFAULT ? act : w->kv_dtype;

    vf__assume(a, e,
               "engine generic: weights + KV cache + one prefill chunk of activations + "
               "runtime overhead (F-GEN-01..05); --engine picks an engine's own logic");
    if (!w->ctx_tokens)
        vf__assume(a, e, "context %s tokens: the model's maximum (--ctx to change)",
                   vf_format_tokens(b1, sizeof b1, e->ctx_tokens));

    /* F-GEN-01: weights, split evenly by tensor parallelism */
    e->weights_bytes = vf_model_weight_bytes(m, &e->weights);
    if (e->weights_bytes == VF_UNKNOWN)
        return vf__errf(err, VF_ERANGE, "weights of '%s' overflow 64 bits", m->id);
    uint64_t w_gpu = vf__div_ceil(e->weights_bytes, n);
    vf__add_component(e, "weights", w_gpu, NULL,
                      m->provenance == VF_PROV_EXACT ? "exact from the weights"
                                                     : "from the architecture");

    /* F-GEN-02: KV cache of every sequence; sliding layers capped at their window */
    e->kv_bytes_per_token = vf_model_kv_bytes_per_token(m, e->kv_dtype);
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

    /* F-GEN-03: activations of one prefill chunk of T tokens: residual stream and norm
     * outputs (4 x hidden), q/k/v, and the FFN's gate, up and product (3 x the active FFN
     * width), at 2 bytes; q/k/v and FFN are sharded by tensor parallelism. Plus fp32
     * logits for the sequences sampled at once. */
    uint64_t total_tokens = vf__sat_mul(e->ctx_tokens, e->users);
    uint64_t t = total_tokens < GEN_CHUNK_TOKENS ? total_tokens : GEN_CHUNK_TOKENS;
    uint64_t ffn = m->intermediate;
    if (m->n_experts) {
        ffn = (uint64_t)m->moe_intermediate * m->n_experts_used +
              (uint64_t)m->shared_intermediate * (m->n_shared_experts ? m->n_shared_experts : 0);
        if (m->n_shared_experts && !m->shared_intermediate)
            ffn += (uint64_t)m->moe_intermediate * m->n_shared_experts;
        if (ffn < m->intermediate && m->first_k_dense)
            ffn = m->intermediate;
    }
    uint64_t q_dim = (uint64_t)m->n_heads * m->head_dim;
    uint64_t kv_dim = (uint64_t)(m->n_kv_heads ? m->n_kv_heads : m->n_heads) * m->head_dim;
    uint64_t sharded = (q_dim + 2 * kv_dim + 3 * ffn) * 2 / n;
    uint64_t per_token = 4 * (uint64_t)m->hidden * 2 + sharded;
    uint64_t seqs = e->users < GEN_SAMPLED_SEQS ? e->users : GEN_SAMPLED_SEQS;
    uint64_t logits = vf__sat_mul(vf__sat_mul(seqs, m->vocab), 4);
    uint64_t acts = vf__sat_add(vf__sat_mul(t, per_token), logits);
    vf__add_component(e, "activations", acts, "prefill", NULL);
    vf__assume(a, e,
               "activations: one prefill chunk of %llu tokens (vLLM's default "
               "max_num_batched_tokens) + fp32 logits of %llu sequences",
               (unsigned long long)t, (unsigned long long)seqs);

    /* F-GEN-04: runtime overhead per GPU */
    vf__add_component(e, "runtime_overhead", GEN_RUNTIME_BYTES, NULL, NULL);
    vf__assume(a, e,
               "runtime overhead %s per GPU: CUDA context, cuBLAS workspace and allocator "
               "slack (assumed from vLLM's non-torch memory logs)",
               vf_format_bytes(b1, sizeof b1, GEN_RUNTIME_BYTES, VF_FMT_IEC));
    if (n > 1)
        vf__assume(a, e,
                   "split over %u GPUs by tensor parallelism: weights, KV heads and "
                   "activations divided evenly, overhead on every GPU",
                   n);

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
};
