/* SPDX-License-Identifier: Apache-2.0 */
/*
 * model_gguf.c - turns a GGUF header read by read/read_gguf.c into a struct vf_model: the
 * metadata keys of llama.cpp's architectures (llama-arch.cpp, {arch}.block_count, ...)
 * give the dimensions, attention kind (MHA/GQA/MQA/MLA), experts and vocabulary; the
 * tensor infos give the weights group by group with their exact stored bytes (F-W-10,
 * F-PAR-01), which layers attend, slide, recur or only hold an MLP (F-LAY-01), the
 * recurrent state (F-KV-05) and the file's native storage. Every number is checked
 * against the limits of internal.h before it is used.
 */
#include "model_config.h"
#include "read/read_gguf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* GGUF architecture -> HF model_type where they differ (llama-arch.cpp
 * LLM_ARCH_NAMES). */
static const struct {
    const char *arch, *hf;
} arch_map[] = {
    {"qwen2moe", "qwen2_moe"},
    {"qwen3moe", "qwen3_moe"},
    {"qwen3next", "qwen3_next"},
    {"gpt-oss", "gpt_oss"},
    {"glm4moe", "glm4_moe"},
    {"granitehybrid", "granitemoehybrid"},
    {"nemotron_h_moe", "nemotron_h"},
    {"command-r", "cohere"},
    {"phi2", "phi"},
    {"falcon-h1", "falcon_h1"},
    {"hunyuan-moe", "hunyuan_v1_moe"},
    {"ernie4_5-moe", "ernie4_5_moe"},
    {"minimax-m2", "minimax_m2"},
    {"gemma3n", "gemma3n"},
};

/* Metadata lookups of one mapping run. */
struct map {
    const struct vf_gguf *g;
    const char *arch;
    const char *origin;
    struct vf_error *err;
    char key[160];
};

static const char *akey(struct map *mp, const char *suffix)
{
    snprintf(mp->key, sizeof mp->key, "%s.%s", mp->arch, suffix);
    return mp->key;
}

static const struct vf_gguf_kv *akv(struct map *mp, const char *suffix)
{
    return vf__gguf_find(mp->g, akey(mp, suffix));
}

/*
 * {arch}.suffix as an integer in [0, max]: a scalar, or the largest element of
 * a per-layer array. *present false when absent (or of another type). VF_ELIMIT
 * above max.
 */
static enum vf_err anum(struct map *mp, const char *suffix, uint64_t max, uint64_t *out,
                        bool *present)
{
    const struct vf_gguf_kv *kv = akv(mp, suffix);
    uint64_t v = 0, e;
    bool any = false;
    *present = false;
    if (!kv || !kv->kept)
        return VF_OK;
    if (kv->type == VF_GGUF_ARRAY) {
        for (uint64_t i = 0; kv->arr && i < kv->n; i++)
            if (vf__gguf_as_u64(kv->elem_type, kv->arr[i], &e)) {
                v = e > v ? e : v;
                any = true;
            }
    } else {
        any = vf__gguf_as_u64(kv->type, kv->v, &v);
    }
    if (!any)
        return VF_OK;
    if (v > max)
        return vf__errf(mp->err, VF_ELIMIT, "gguf: '%s': %s.%s %llu exceeds the limit %llu",
                        mp->origin, mp->arch, suffix, (unsigned long long)v,
                        (unsigned long long)max);
    *out = v;
    *present = true;
    return VF_OK;
}

/* anum() into a uint32_t with a default. */
static enum vf_err anum32(struct map *mp, const char *suffix, uint64_t max, uint32_t dflt,
                          uint32_t *out)
{
    uint64_t v;
    bool present;
    enum vf_err rc = anum(mp, suffix, max, &v, &present);
    *out = present ? (uint32_t)v : dflt;
    return rc;
}

/* A required {arch}.suffix in [1, max]: VF_EFORMAT ("missing") when absent or 0. */
static enum vf_err anum_req(struct map *mp, const char *suffix, uint64_t max, uint32_t *out)
{
    uint64_t v;
    bool present;
    enum vf_err rc = anum(mp, suffix, max, &v, &present);
    if (rc)
        return rc;
    if (!present || v == 0)
        return vf__errf(mp->err, VF_EFORMAT, "gguf: '%s': missing %s.%s", mp->origin, mp->arch,
                        suffix);
    *out = (uint32_t)v;
    return VF_OK;
}

/* Element i of a per-layer integer array at {arch}.suffix; false when not an
 * array. */
static bool alayer(struct map *mp, const char *suffix, uint32_t i, uint64_t *out)
{
    const struct vf_gguf_kv *kv = akv(mp, suffix);
    if (!kv || kv->type != VF_GGUF_ARRAY || !kv->kept || !kv->arr || i >= kv->n)
        return false;
    return vf__gguf_as_u64(kv->elem_type, kv->arr[i], out);
}

/* Sort key of a group: token embeddings, then layer by layer, then the rest. */
static int group_cmp(const void *pa, const void *pb)
{
    const struct vf_tgroup *a = pa, *b = pb;
    int ka = a->layer >= 0 ? 1 : a->cls == VF_T_TOKEN_EMBD ? 0 : 2;
    int kb = b->layer >= 0 ? 1 : b->cls == VF_T_TOKEN_EMBD ? 0 : 2;
    if (ka != kb)
        return ka - kb;
    if (a->layer != b->layer)
        return a->layer < b->layer ? -1 : 1;
    if (a->cls != b->cls)
        return (int)a->cls - (int)b->cls;
    return a->row_elems < b->row_elems ? -1 : a->row_elems > b->row_elems;
}

static bool is_expert(enum vf_tclass c)
{
    return c == VF_T_FFN_GATE_EXP || c == VF_T_FFN_UP_EXP || c == VF_T_FFN_DOWN_EXP;
}

/* Per-layer facts the tensors tell. */
#define L_ANY  1u
#define L_ATTN 2u
#define L_SSM  4u

/*
 * F-W-10, F-PAR-01 from the file: one group per (class, layer, row length) with
 * the exact stored bytes; params, active params (F-PAR-02: routed experts count
 * n_used of n_experts), exact weight bytes. Fills lflags[n_layers] with what
 * each layer holds.
 */
static enum vf_err tensor_groups(struct vf_arena *a, struct map *mp, struct vf_model *m,
                                 uint8_t *lflags)
{
    const struct vf_gguf *g = mp->g;
    struct vf_tgroup *tmp = NULL;
    size_t n = 0;
    uint64_t params = 0, active = 0, bytes = 0;

    if (g->n_tensors) {
        tmp = vf__malloc((size_t)g->n_tensors * sizeof *tmp);
        if (!tmp)
            return vf__errf(mp->err, VF_ENOMEM, "gguf: '%s': out of memory", mp->origin);
    }
    for (uint64_t i = 0; i < g->n_tensors; i++) {
        const struct vf_tensor_info *t = &g->tensors[i];
        int32_t layer;
        enum vf_tclass cls;
        bool each;
        vf__gguf_classify(t->name, &layer, &cls, &each);
        if (layer >= (int32_t)m->n_layers)
            layer = -1; /* a block past block_count: count it, outside the layers */
        uint32_t nt = 1;
        if (is_expert(cls) && !each && t->n_dims >= 3)
            nt = t->dims[2] > UINT32_MAX ? UINT32_MAX : (uint32_t)t->dims[2];
        tmp[n++] =
            (struct vf_tgroup){cls, layer, t->n_elems, t->n_dims ? t->dims[0] : 1, nt, t->bytes};
        if (layer >= 0) {
            const char *base = strchr(t->name + 4, '.') + 1;
            lflags[layer] |= L_ANY;
            if (cls == VF_T_ATTN_Q || cls == VF_T_ATTN_K || cls == VF_T_ATTN_V ||
                cls == VF_T_ATTN_QKV)
                lflags[layer] |= L_ATTN;
            if (strncmp(base, "ssm_", 4) == 0)
                lflags[layer] |= L_SSM;
        }
    }
    if (n)
        qsort(tmp, n, sizeof *tmp, group_cmp);
    /* fold equal keys */
    size_t k = 0;
    bool bad = false;
    for (size_t i = 0; i < n; i++) {
        struct vf_tgroup *t = &tmp[i];
        uint64_t act = t->n_params;
        if (is_expert(t->cls) && m->n_experts && m->n_experts_used <= m->n_experts) {
            /* F-PAR-02 */
            uint64_t e = m->n_experts, u = m->n_experts_used;
            act = t->n_params / e * u + t->n_params % e * u / e;
        }
        bad |= !vf__add_u64(params, t->n_params, &params) || !vf__add_u64(active, act, &active) ||
               !vf__add_u64(bytes, t->stored_bytes, &bytes);
        if (k > 0 && group_cmp(&tmp[k - 1], t) == 0) {
            struct vf_tgroup *d = &tmp[k - 1];
            bad |= !vf__add_u64(d->n_params, t->n_params, &d->n_params) ||
                   !vf__add_u64(d->stored_bytes, t->stored_bytes, &d->stored_bytes);
            d->n_tensors =
                d->n_tensors > UINT32_MAX - t->n_tensors ? UINT32_MAX : d->n_tensors + t->n_tensors;
        } else {
            tmp[k++] = *t;
        }
    }
    if (bad) {
        vf__free(tmp);
        return vf__errf(mp->err, VF_ERANGE, "gguf: '%s': parameter count overflows 64 bits",
                        mp->origin);
    }
    if (k > VF_MAX_MODEL_GROUPS) {
        vf__free(tmp);
        return vf__errf(mp->err, VF_ELIMIT, "gguf: '%s': %zu tensor groups exceed the limit of %zu",
                        mp->origin, k, (size_t)VF_MAX_MODEL_GROUPS);
    }
    m->groups = NULL;
    if (k) {
        m->groups = vf_arena_alloc(a, k * sizeof *m->groups);
        if (!m->groups) {
            vf__free(tmp);
            return vf__errf(mp->err, VF_ENOMEM, "gguf: '%s': out of memory", mp->origin);
        }
        memcpy(m->groups, tmp, k * sizeof *m->groups);
    }
    vf__free(tmp);
    m->n_groups = k;
    m->params = params;
    m->params_active = active;
    m->exact_weight_bytes = bytes;
    return VF_OK;
}

/*
 * F-LAY-01 from a GGUF file: a layer with attention tensors (or, with no
 * tensors, a non-zero head_count_kv entry) attends; one with ssm_* tensors (or
 * head_count_kv 0 and ssm.* keys) is recurrent; the rest are MLP-only. Sliding
 * layers: {arch}.attention.sliding_window with the per-layer
 * sliding_window_pattern array, its period, or the architecture's own period
 * (vf__swa_period of the model_type).
 */
static enum vf_err layer_kinds(struct map *mp, struct vf_model *m, const uint8_t *lflags)
{
    uint64_t v, win = 0;
    bool present, has_ssm = akv(mp, "ssm.state_size") || akv(mp, "ssm.inner_size");
    enum vf_err rc;

    if ((rc = anum(mp, "attention.sliding_window", VF_MAX_CTX_TOKENS, &win, &present)))
        return rc;
    const struct vf_gguf_kv *pat = akv(mp, "attention.sliding_window_pattern");
    uint64_t period = vf__swa_period(m->model_type);
    if (pat && pat->type != VF_GGUF_ARRAY && vf__gguf_as_u64(pat->type, pat->v, &v) &&
        v <= VF_MAX_LAYERS)
        period = v;

    for (uint32_t i = 0; i < m->n_layers; i++) {
        uint8_t k;
        if (lflags[i] & L_ANY)
            k = lflags[i] & L_ATTN  ? VF_LAYER_ATTN_FULL
                : lflags[i] & L_SSM ? VF_LAYER_RECURRENT
                                    : VF_LAYER_MLP_ONLY;
        else if (alayer(mp, "attention.head_count_kv", i, &v) && v == 0)
            k = has_ssm ? VF_LAYER_RECURRENT : VF_LAYER_MLP_ONLY;
        else
            k = VF_LAYER_ATTN_FULL;
        if (k == VF_LAYER_ATTN_FULL && win) {
            bool sl;
            if (pat && pat->type == VF_GGUF_ARRAY && pat->kept && pat->arr && i < pat->n)
                sl = vf__gguf_as_u64(pat->elem_type, pat->arr[i], &v) && v != 0;
            else
                sl = vf__swa_sliding(i, (uint32_t)period);
            if (sl)
                k = VF_LAYER_ATTN_SLIDING;
        }
        m->layer_kind[i] = k;
    }
    m->sliding_window = 0;
    for (uint32_t i = 0; i < m->n_layers; i++)
        if (m->layer_kind[i] == VF_LAYER_ATTN_SLIDING)
            m->sliding_window = (uint32_t)win;
    return VF_OK;
}

/* F-KV-05 from the ssm.* keys (Mamba 1/2, gated DeltaNet): per recurrent layer
 * inner*state + (inner + 2*groups*state) * (conv_kernel - 1) elements, at 16
 * bits. */
static enum vf_err recurrent_state(struct map *mp, struct vf_model *m, const uint8_t *lflags)
{
    uint32_t k, di, s, b;
    uint64_t n_rec = 0;
    enum vf_err rc;
    if ((rc = anum32(mp, "ssm.conv_kernel", 64, 0, &k)) ||
        (rc = anum32(mp, "ssm.inner_size", VF_MAX_DIM, 0, &di)) ||
        (rc = anum32(mp, "ssm.state_size", VF_MAX_DIM, 0, &s)) ||
        (rc = anum32(mp, "ssm.group_count", VF_MAX_DIM, 0, &b)))
        return rc;
    for (uint32_t i = 0; i < m->n_layers; i++)
        n_rec += m->layer_kind[i] == VF_LAYER_RECURRENT || (lflags[i] & L_SSM);
    if (!n_rec || !di || !s)
        return VF_OK;
    uint64_t conv = (uint64_t)di + 2 * (uint64_t)b * s;
    uint64_t per = (uint64_t)di * s + conv * (k ? k - 1 : 0);
    m->recurrent_state_bytes = vf__sat_mul(vf__sat_mul(per, n_rec), 2);
    return VF_OK;
}

/* general.file_type -> m->native (a GGUF ftype recipe) and m->native_dtype. */
static void native(const struct vf_gguf *g, struct vf_model *m)
{
    const char *nm = vf__gguf_ftype_name(g->file_type);
    int ft = g->file_type >= 0 ? g->file_type & ~1024 : -1;
    memset(&m->native, 0, sizeof m->native);
    m->native_dtype = ft == 0 ? VF_DT_F32 : ft == 32 ? VF_DT_BF16 : VF_DT_F16;
    if (nm && ft != 0 && ft != 1 && ft != 32 && vf_quant_parse(nm, &m->native, NULL) == VF_OK &&
        m->native.kind == VF_QK_GGUF_FTYPE)
        return;
    memset(&m->native, 0, sizeof m->native);
    m->native.kind = VF_QK_GGUF_FTYPE;
    m->native.ftype = ft;
    m->native.dtype = m->native_dtype;
    if (!nm) {
        /* no (known) file type: name the most used type of the 2-D weights */
        uint64_t best = 0, per[64] = {0};
        int bt = -1;
        for (uint64_t i = 0; i < g->n_tensors; i++) {
            int t = g->tensors[i].ggml_type;
            if (t >= 0 && t < 64 && g->tensors[i].n_dims >= 2)
                per[t] = vf__sat_add(per[t], g->tensors[i].bytes);
        }
        for (int t = 0; t < 64; t++)
            if (per[t] > best) {
                best = per[t];
                bt = t;
            }
        const char *tn = NULL;
        if (bt >= 0)
            vf__ggml_type(bt, &tn, NULL, NULL);
        nm = tn ? tn : "GGUF";
        if (bt >= 0 && vf__ggml_type_dtype(bt) != VF_DT_DEFAULT)
            m->native.dtype = vf__ggml_type_dtype(bt);
    }
    snprintf(m->native.name, sizeof m->native.name, "%s", nm);
}

/* Names: source, id and name from the file, model_type from general.architecture. */
static enum vf_err identity(struct vf_arena *a, struct map *mp, struct vf_model *m)
{
    if (!mp->arch || !*mp->arch)
        return vf__errf(mp->err, VF_EFORMAT, "gguf: '%s': no general.architecture", mp->origin);
    if (strlen(mp->arch) > 64)
        return vf__errf(mp->err, VF_ELIMIT, "gguf: '%s': general.architecture is too long",
                        mp->origin);
    m->task = VF_TASK_INFER;
    m->provenance = VF_PROV_EXACT;
    m->source = vf_arena_strdup(a, mp->origin);
    m->id = m->source;
    m->name = mp->g->name ? mp->g->name : m->source;
    char *mt = vf_arena_strdup(a, mp->arch);
    if (!m->source || !mt)
        return vf__errf(mp->err, VF_ENOMEM, "gguf: '%s': out of memory", mp->origin);
    for (char *p = mt; *p; p++)
        if (*p == '-')
            *p = '_'; /* HF spells the rest with '_' (gpt-oss -> gpt_oss) */
    m->model_type = mt;
    for (size_t i = 0; i < sizeof arch_map / sizeof arch_map[0]; i++)
        if (strcmp(mp->arch, arch_map[i].arch) == 0)
            m->model_type = arch_map[i].hf;
    m->encoder_only = vf__encoder_only(m->model_type);
    return VF_OK;
}

/*
 * The dimensions F-PAR-01 and F-KV-01 use: layers and hidden size (required), heads, KV
 * heads (per layer when {arch}.attention.head_count_kv is an array), FFN width, head sizes
 * (hidden / heads when absent), context length (VF_UNKNOWN when absent), attention kind.
 */
static enum vf_err dimensions(struct vf_arena *a, struct map *mp, struct vf_model *m)
{
    uint64_t v;
    bool present;
    enum vf_err rc;

    if ((rc = anum_req(mp, "block_count", VF_MAX_LAYERS, &m->n_layers)) ||
        (rc = anum_req(mp, "embedding_length", VF_MAX_DIM, &m->hidden)))
        return rc;
    if ((rc = anum32(mp, "attention.head_count", VF_MAX_DIM, 0, &m->n_heads)) ||
        (rc = anum32(mp, "attention.head_count_kv", VF_MAX_DIM, m->n_heads, &m->n_kv_heads)) ||
        (rc = anum32(mp, "feed_forward_length", VF_MAX_DIM, 0, &m->intermediate)) ||
        (rc = anum32(mp, "attention.key_length", VF_MAX_DIM, 0, &m->head_dim)) ||
        (rc = anum32(mp, "attention.value_length", VF_MAX_DIM, 0, &m->head_dim_v)) ||
        (rc = anum32(mp, "attention.key_length_swa", VF_MAX_DIM, 0, &m->head_dim_swa)) ||
        (rc = anum32(mp, "attention.value_length_swa", VF_MAX_DIM, m->head_dim_swa,
                     &m->head_dim_v_swa)))
        return rc;
    if (!m->head_dim && m->n_heads)
        m->head_dim = m->hidden / m->n_heads;
    if (!m->head_dim_v)
        m->head_dim_v = m->head_dim;
    if ((rc = anum(mp, "context_length", VF_MAX_CTX_TOKENS, &v, &present)))
        return rc;
    m->max_ctx_tokens = present ? v : VF_UNKNOWN;

    const struct vf_gguf_kv *hkv = akv(mp, "attention.head_count_kv");
    if (hkv && hkv->type == VF_GGUF_ARRAY) {
        m->layer_kv_heads = vf_arena_alloc(a, m->n_layers * sizeof *m->layer_kv_heads);
        if (!m->layer_kv_heads)
            return vf__errf(mp->err, VF_ENOMEM, "gguf: '%s': out of memory", mp->origin);
        for (uint32_t i = 0; i < m->n_layers; i++)
            if (alayer(mp, "attention.head_count_kv", i, &v) && v <= VF_MAX_DIM)
                m->layer_kv_heads[i] = (uint32_t)v;
    }
    m->attn = m->n_kv_heads == m->n_heads ? VF_ATTN_MHA
              : m->n_kv_heads == 1        ? VF_ATTN_MQA
                                          : VF_ATTN_GQA;
    return VF_OK;
}

/*
 * F-KV-02: MLA (deepseek2 and kin) when {arch}.attention.kv_lora_rank is set. The
 * key/value_length_mla keys are the per-head sizes when present (newer files give the
 * latent sizes in key/value_length); the key splits into the rope part
 * (rope.dimension_count) and the rest. VF_EFORMAT when the key is not longer than the rope.
 */
static enum vf_err mla(struct map *mp, struct vf_model *m)
{
    uint32_t kl, vl, rope;
    enum vf_err rc;

    if ((rc = anum32(mp, "attention.kv_lora_rank", VF_MAX_DIM, 0, &m->kv_lora_rank)))
        return rc;
    if (!m->kv_lora_rank)
        return VF_OK;
    if ((rc = anum32(mp, "attention.q_lora_rank", VF_MAX_DIM, 0, &m->q_lora_rank)) ||
        (rc = anum32(mp, "rope.dimension_count", VF_MAX_DIM, 0, &rope)) ||
        (rc = anum32(mp, "attention.key_length_mla", VF_MAX_DIM, m->head_dim, &kl)) ||
        (rc = anum32(mp, "attention.value_length_mla", VF_MAX_DIM, m->head_dim_v, &vl)))
        return rc;
    if (kl <= rope || !vl)
        return vf__errf(mp->err, VF_EFORMAT,
                        "gguf: '%s': MLA key length %u must exceed the rope dimension %u",
                        mp->origin, kl, rope);
    m->attn = VF_ATTN_MLA;
    m->qk_rope_dim = rope;
    m->qk_nope_dim = kl - rope;
    m->v_head_dim_mla = vl;
    m->head_dim = kl;
    m->head_dim_v = vl;
    return VF_OK;
}

/*
 * The MoE terms of F-PAR-01 and F-PAR-02: routed experts and how many a token uses, shared
 * experts and their width (the routed width times their count when not given), dense
 * leading layers, the MoE layer interval. deepseek2 files are V3 when the gating is sigmoid
 * (expert_gating_func 2), V2 otherwise. VF_EFORMAT when more experts are used than exist.
 */
static enum vf_err experts(struct map *mp, struct vf_model *m)
{
    uint64_t v;
    enum vf_err rc;

    if ((rc = anum32(mp, "expert_count", VF_MAX_EXPERTS, 0, &m->n_experts)) ||
        (rc = anum32(mp, "expert_used_count", VF_MAX_EXPERTS, 0, &m->n_experts_used)) ||
        (rc = anum32(mp, "expert_shared_count", 64, 0, &m->n_shared_experts)) ||
        (rc = anum32(mp, "expert_feed_forward_length", VF_MAX_DIM, m->intermediate,
                     &m->moe_intermediate)) ||
        (rc = anum32(mp, "expert_shared_feed_forward_length", VF_MAX_DIM, 0,
                     &m->shared_intermediate)) ||
        (rc = anum32(mp, "leading_dense_block_count", VF_MAX_LAYERS, 0, &m->first_k_dense)) ||
        (rc = anum32(mp, "interleave_moe_layer_step", VF_MAX_LAYERS, 1, &m->moe_every)))
        return rc;
    if (m->n_experts_used > m->n_experts)
        return vf__errf(mp->err, VF_EFORMAT,
                        "gguf: '%s': %s.expert_used_count %u exceeds %u experts", mp->origin,
                        mp->arch, m->n_experts_used, m->n_experts);
    if (!m->n_experts)
        m->moe_intermediate = 0;
    if (m->n_shared_experts && !m->shared_intermediate)
        m->shared_intermediate = m->n_shared_experts * m->moe_intermediate;
    if (m->shared_intermediate && !m->n_shared_experts)
        m->n_shared_experts = 1;
    if (!m->moe_every)
        m->moe_every = 1;
    if (strcmp(mp->arch, "deepseek2") == 0) /* sigmoid gating (2) is V3's */
        m->model_type = vf_gguf_get_u64(mp->g, akey(mp, "expert_gating_func"), -1, &v) && v == 2
                            ? "deepseek_v3"
                            : "deepseek_v2";
    return VF_OK;
}

/*
 * The vocabulary of F-PAR-01's embedding terms: the tokenizer's token count, else
 * {arch}.vocab_size, else the rows of token_embd.weight. Embeddings are tied when the file
 * has tensors but no output.weight. VF_ELIMIT above VF_MAX_DIM.
 */
static enum vf_err vocabulary(struct map *mp, struct vf_model *m)
{
    const struct vf_gguf *g = mp->g;
    const struct vf_tensor_info *embd = NULL;
    bool has_output = false, present;
    uint64_t v;
    enum vf_err rc;

    for (uint64_t i = 0; i < g->n_tensors; i++) {
        if (strcmp(g->tensors[i].name, "token_embd.weight") == 0)
            embd = &g->tensors[i];
        if (strcmp(g->tensors[i].name, "output.weight") == 0)
            has_output = true;
    }
    if (!vf_gguf_get_array_len(g, "tokenizer.ggml.tokens", &m->vocab)) {
        if ((rc = anum(mp, "vocab_size", VF_MAX_DIM, &v, &present)))
            return rc;
        m->vocab = present ? v : embd && embd->n_dims >= 2 ? embd->dims[1] : 0;
    }
    if (m->vocab > VF_MAX_DIM)
        return vf__errf(mp->err, VF_ELIMIT,
                        "gguf: '%s': vocabulary of %llu tokens exceeds the limit", mp->origin,
                        (unsigned long long)m->vocab);
    m->tied_embeddings = g->n_tensors > 0 && !has_output;
    return VF_OK;
}

/*
 * The layers and the weights from the tensors: groups with their exact bytes, parameters
 * and active parameters (F-W-10, F-PAR-01, F-PAR-02), the kind of every layer (F-LAY-01)
 * and the recurrent state (F-KV-05). Arrays in arena a.
 */
static enum vf_err layers(struct vf_arena *a, struct map *mp, struct vf_model *m)
{
    enum vf_err rc;
    uint8_t *lflags = vf_arena_alloc(a, m->n_layers);
    m->layer_kind = vf_arena_alloc(a, m->n_layers);
    if (!lflags || !m->layer_kind)
        return vf__errf(mp->err, VF_ENOMEM, "gguf: '%s': out of memory", mp->origin);
    if ((rc = tensor_groups(a, mp, m, lflags)) || (rc = layer_kinds(mp, m, lflags)) ||
        (rc = recurrent_state(mp, m, lflags)))
        return rc;
    if (!m->n_experts)
        m->params_active = m->params;
    return VF_OK;
}

/*
 * Maps a read GGUF header to a struct vf_model (see the public contract). Every
 * dimension is checked against the limits of internal.h; the arrays and strings
 * live in arena a. On an error *out is partly filled and must not be used.
 */
enum vf_err vf_model_from_gguf(struct vf_arena *a, const struct vf_gguf *g, const char *origin,
                               struct vf_model *out, struct vf_error *err)
{
    struct map mp = {.g = g, .err = err};
    enum vf_err rc;

    if (!a || !g || !out)
        return vf__errf(err, VF_EINVAL, "gguf: no arena, header or output given");
    memset(out, 0, sizeof *out);
    mp.origin = origin ? origin : "model.gguf";
    mp.arch = g->arch;
    if ((rc = identity(a, &mp, out)) || (rc = dimensions(a, &mp, out)) || (rc = mla(&mp, out)) ||
        (rc = experts(&mp, out)) || (rc = vocabulary(&mp, out)) || (rc = layers(a, &mp, out)))
        return rc;
    native(g, out);
    out->tensors = g->tensors;
    out->n_tensors = (size_t)g->n_tensors;
    if (g->n_tensors == 0)
        out->exact_weight_bytes = VF_UNKNOWN;
    return VF_OK;
}
