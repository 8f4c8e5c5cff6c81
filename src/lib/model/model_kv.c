/*
 * model_kv.c - the KV cache of a model per token and per sequence (F-KV-01..F-KV-04):
 * which layers hold K and V, how many elements per token, and how many bytes those take
 * in the chosen cache type (16-bit, fp8, or ggml's block-quantized types).
 */
#include "internal.h"

/* The cache type actually used: VF_DT_DEFAULT means the engines' 16-bit default. */
static enum vf_dtype kv_type(enum vf_dtype kv)
{
    return kv == VF_DT_DEFAULT ? VF_DT_F16 : kv;
}

/*
 * Bytes one token adds to the cache of layer l, or 0 for a layer with no KV (recurrent,
 * MLP-only). F-KV-01: K and V rows of head_dim (head_dim_v) elements per KV head.
 * F-KV-02: MLA caches one row of kv_lora_rank + qk_rope_dim elements (latent + shared
 * rope key), no separate V. Quantized types round each row up to whole blocks.
 */
static uint64_t layer_bytes(const struct vf_model *m, enum vf_dtype kv, uint32_t l)
{
    enum vf_layer_kind k = m->layer_kind ? m->layer_kind[l] : VF_LAYER_ATTN_FULL;

    if (k != VF_LAYER_ATTN_FULL && k != VF_LAYER_ATTN_SLIDING)
        return 0;
    if (m->attn == VF_ATTN_MLA)
        return vf_dtype_bytes(kv, (uint64_t)m->kv_lora_rank + m->qk_rope_dim);
    uint64_t heads = m->layer_kv_heads ? m->layer_kv_heads[l] : m->n_kv_heads;
    uint64_t hv = m->head_dim_v ? m->head_dim_v : m->head_dim;
    uint64_t row = vf__sat_add(vf_dtype_bytes(kv, m->head_dim), vf_dtype_bytes(kv, hv));
    return vf__sat_mul(heads, row);
}

/* F-KV-01/02: bytes per token per sequence summed over every layer holding KV, as if
 * every layer kept the whole context. VF_UNKNOWN on overflow; 0 for a NULL model. */
uint64_t vf_model_kv_bytes_per_token(const struct vf_model *m, enum vf_dtype kv)
{
    uint64_t sum = 0;

    if (!m)
        return 0;
    kv = kv_type(kv);
    for (uint32_t l = 0; l < m->n_layers; l++)
        sum = vf__sat_add(sum, layer_bytes(m, kv, l));
    return sum;
}

/*
 * F-KV-03/04: the cache of one sequence of ctx tokens. Full-attention layers hold ctx
 * tokens; sliding-window layers hold min(ctx, sliding_window) when cap_sliding (engines
 * with a hybrid/SWA cache), else ctx; recurrent and MLP-only layers hold none (their
 * fixed state is m->recurrent_state_bytes, F-KV-05, not part of this). VF_UNKNOWN on
 * overflow.
 */
uint64_t vf_model_kv_bytes(const struct vf_model *m, enum vf_dtype kv, uint64_t ctx,
                           bool cap_sliding)
{
    uint64_t sum = 0;

    if (!m)
        return 0;
    kv = kv_type(kv);
    for (uint32_t l = 0; l < m->n_layers; l++) {
        enum vf_layer_kind k = m->layer_kind ? m->layer_kind[l] : VF_LAYER_ATTN_FULL;
        uint64_t tokens = ctx;
        if (k == VF_LAYER_ATTN_SLIDING && cap_sliding && m->sliding_window &&
            m->sliding_window < ctx)
            tokens = m->sliding_window;
        sum = vf__sat_add(sum, vf__sat_mul(layer_bytes(m, kv, l), tokens));
    }
    return sum;
}
