/* SPDX-License-Identifier: Apache-2.0 */
/*
 * terms.c - the estimate terms several LLM inference engines share (terms.h): one definition
 * each of the workload's defaults, the weights at a storage, the KV bytes per token, logits,
 * the PyTorch runtime overhead and the tensor-parallel rule.
 */
#include "engine/terms.h"
#include "engine/runtime.h"

void vf__term_begin(const struct vf_model *m, const struct vf_engine *eng, struct vf_estimate *e)
{
    e->model = *m;
    e->engine = eng->name;
    e->task = VF_TASK_INFER;
}

uint64_t vf__term_ctx(const struct vf_model *m, const struct vf_workload *w)
{
    uint64_t ctx = w->ctx_tokens ? w->ctx_tokens : m->max_ctx_tokens;
    return ctx == 0 || ctx == VF_UNKNOWN ? 4096 : ctx;
}

void vf__term_assume_ctx(struct vf_arena *a, struct vf_estimate *e, const struct vf_workload *w,
                         uint64_t ctx)
{
    char b1[32];
    uint64_t max = e->model.max_ctx_tokens;
    if (!w->ctx_tokens && (!max || max == VF_UNKNOWN)) /* issue 21: unknown stays unknown */
        vf__assume(a, e, "context %s tokens: the model's maximum is unknown (--ctx to change)",
                   vf_format_tokens(b1, sizeof b1, ctx));
    else if (!w->ctx_tokens)
        vf__assume(a, e, "context %s tokens: the model's maximum (--ctx to change)",
                   vf_format_tokens(b1, sizeof b1, ctx));
}

enum vf_err vf__term_limits(uint64_t users, uint64_t gpus, struct vf_error *err)
{
    if (users > VF_MAX_USERS)
        return vf__errf(err, VF_ERANGE, "%llu users is over the limit of %llu",
                        (unsigned long long)users, (unsigned long long)VF_MAX_USERS);
    if (gpus > VF_MAX_GPUS)
        return vf__errf(err, VF_ERANGE, "%llu GPUs is over the limit of %d",
                        (unsigned long long)gpus, VF_MAX_GPUS);
    return VF_OK;
}

bool vf__term_tp_split(const struct vf_model *m, uint32_t n, const struct vf__tp_words *words,
                       const char **why)
{
    *why = NULL;
    if (n <= 1)
        return true;
    if (m->n_heads % n)
        *why = words->heads;
    else if (m->attn != VF_ATTN_MLA && m->n_kv_heads && m->n_kv_heads % n && n % m->n_kv_heads)
        *why = words->kv_heads;
    return *why == NULL;
}

enum vf_err vf__term_check_split(const struct vf_model *m, const struct vf_workload *w,
                                 const struct vf_engine *eng, uint32_t n, bool heads,
                                 struct vf_error *err)
{
    const char *why = NULL;
    if (eng->can_split(m, w, n, &why))
        return VF_OK;
    if (heads)
        return vf__errf(err, VF_EUNSUPPORTED,
                        "cannot split '%s' over %u GPUs: %s (%u heads, %u KV heads)", m->id, n,
                        why ? why : "", m->n_heads, m->n_kv_heads);
    return vf__errf(err, VF_EUNSUPPORTED, "cannot split '%s' over %u GPUs: %s", m->id, n,
                    why ? why : "");
}

const struct vf_quant *vf__term_storage(const struct vf_workload *w)
{
    return w->weights.kind == VF_QK_NATIVE ? NULL : &w->weights;
}

enum vf_err vf__term_weights(const struct vf_model *m, const struct vf_quant *q,
                             struct vf_estimate *e, struct vf_error *err)
{
    e->weights = q ? *q : m->native;
    e->weights_bytes = vf_model_weight_bytes(m, q);
    if (e->weights_bytes == VF_UNKNOWN)
        return vf__errf(err, VF_ERANGE, "weights of '%s' overflow 64 bits", m->id);
    return VF_OK;
}

enum vf_dtype vf__term_compute_dtype(const struct vf_model *m)
{
    return m->native_dtype == VF_DT_F16 ? VF_DT_F16 : VF_DT_BF16;
}

enum vf_dtype vf__term_kv_dtype(const struct vf_model *m, const struct vf_workload *w)
{
    return w->kv_dtype == VF_DT_DEFAULT ? vf__term_compute_dtype(m) : w->kv_dtype;
}

void vf__term_kv_per_token(const struct vf_model *m, enum vf_dtype kv, struct vf_estimate *e)
{
    e->kv_dtype = kv;
    e->kv_bytes_per_token = vf_model_kv_bytes_per_token(m, kv);
}

uint64_t vf__term_active_ffn(const struct vf_model *m)
{
    if (!m->n_experts)
        return m->intermediate;
    uint64_t ffn = (uint64_t)m->moe_intermediate * m->n_experts_used;
    if (m->n_shared_experts)
        ffn += (uint64_t)(m->shared_intermediate ? m->shared_intermediate : m->moe_intermediate) *
               m->n_shared_experts;
    return ffn < m->intermediate && m->first_k_dense ? m->intermediate : ffn;
}

uint64_t vf__term_logits(uint64_t rows, uint64_t vocab, uint64_t bytes)
{
    return vf__sat_mul(vf__sat_mul(rows, vocab), bytes);
}

uint64_t vf__term_torch_overhead(uint64_t transient)
{
    uint64_t slack = transient == VF_UNKNOWN ? VF_UNKNOWN : transient / 100 * VF_RT_ALLOC_SLACK_PCT;
    return vf__sat_add(VF_RT_CUDA_CONTEXT_BYTES + VF_RT_CUBLAS_WORKSPACE_BYTES, slack);
}
