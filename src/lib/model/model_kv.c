/* SPDX-License-Identifier: Apache-2.0 */
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
 * Bytes one token adds to the cache of layer l (row: head_row_bytes), or 0 for a layer with
 * no KV (recurrent, MLP-only). F-KV-01: K and V rows of head_dim (head_dim_v) elements per KV head.
 * F-KV-02: MLA caches one row of kv_lora_rank + qk_rope_dim elements (latent + shared
 * rope key), no separate V. Quantized types round each row up to whole blocks.
 */
static uint64_t layer_bytes(const struct vf_model *m, uint64_t row, uint32_t l)
{
    enum vf_layer_kind k = m->layer_kind ? m->layer_kind[l] : VF_LAYER_ATTN_FULL;

    if (k != VF_LAYER_ATTN_FULL && k != VF_LAYER_ATTN_SLIDING)
        return 0;
    if (m->attn == VF_ATTN_MLA)
        return row;
    uint64_t heads = m->layer_kv_heads ? m->layer_kv_heads[l] : m->n_kv_heads;
    return vf__sat_mul(heads, row);
}

/* The bytes of one KV head's K and V rows of one token at kv (MLA: the whole compressed
 * latent and rope key of the layer), one size for the full-attention layers and one for the
 * sliding-window ones (their own head sizes, issue 21): computed once per call. */
static uint64_t head_row_bytes(const struct vf_model *m, enum vf_dtype kv, bool swa)
{
    if (m->attn == VF_ATTN_MLA)
        return vf_dtype_bytes(kv, (uint64_t)m->kv_lora_rank + m->qk_rope_dim);
    uint64_t hk = swa && m->head_dim_swa ? m->head_dim_swa : m->head_dim;
    uint64_t hv = swa && m->head_dim_v_swa ? m->head_dim_v_swa
                  : m->head_dim_v          ? m->head_dim_v
                                           : m->head_dim;
    if (swa && m->head_dim_swa && !m->head_dim_v_swa)
        hv = hk;
    return vf__sat_add(vf_dtype_bytes(kv, hk), vf_dtype_bytes(kv, hv));
}

/* The bytes per token of the full-attention layers and of the sliding-window ones at kv,
 * summed over the layers once per model and cache type (the solver's memo keeps them: its
 * probes ask again for every context). */
static void kv_sums(const struct vf_model *m, enum vf_dtype kv, uint64_t *full, uint64_t *sliding)
{
    struct vf__memo *memo = m->memo && m->memo->owner == m ? m->memo : NULL;
    for (size_t i = 0; memo && i < memo->n_kv; i++)
        if (memo->kv[i].dtype == kv) {
            *full = memo->kv[i].full;
            *sliding = memo->kv[i].sliding;
            return;
        }
    uint64_t row = head_row_bytes(m, kv, false), row_swa = head_row_bytes(m, kv, true);
    *full = *sliding = 0;
    for (uint32_t l = 0; l < m->n_layers; l++) {
        enum vf_layer_kind k = m->layer_kind ? m->layer_kind[l] : VF_LAYER_ATTN_FULL;
        bool swa = k == VF_LAYER_ATTN_SLIDING;
        uint64_t *sum = swa ? sliding : full;
        *sum = vf__sat_add(*sum, layer_bytes(m, swa ? row_swa : row, l));
    }
    if (memo && memo->n_kv < VF__MEMO_KV)
        memo->kv[memo->n_kv++] = (struct vf__memo_kv){kv, *full, *sliding};
}

/* F-KV-01/02: bytes per token per sequence summed over every layer holding KV, as if
 * every layer kept the whole context. VF_UNKNOWN on overflow; 0 for a NULL model. */
uint64_t vf_model_kv_bytes_per_token(const struct vf_model *m, enum vf_dtype kv)
{
    if (!m || m->encoder_only) /* issue 21: an encoder attends in one pass, no cache */
        return 0;
    uint64_t full, sliding;
    kv_sums(m, kv_type(kv), &full, &sliding);
    return vf__sat_add(full, sliding);
}

/*
 * F-KV-03/04: the cache of one sequence of ctx tokens. Full-attention layers hold ctx
 * tokens; sliding-window layers hold min(ctx, sliding_window) when cap_sliding (engines
 * with a hybrid/SWA cache), else ctx; recurrent and MLP-only layers hold none (their
 * fixed state is m->recurrent_state_bytes, F-KV-05, not part of this). VF_UNKNOWN on
 * overflow (the saturated sums: a product that overflows per layer overflows in total).
 */
uint64_t vf_model_kv_bytes(const struct vf_model *m, enum vf_dtype kv, uint64_t ctx,
                           bool cap_sliding)
{
    if (!m || m->encoder_only)
        return 0;
    uint64_t full, sliding;
    kv_sums(m, kv_type(kv), &full, &sliding);
    uint64_t swa =
        cap_sliding && m->sliding_window && m->sliding_window < ctx ? m->sliding_window : ctx;
    return vf__sat_add(vf__sat_mul(full, ctx), vf__sat_mul(sliding, swa));
}
