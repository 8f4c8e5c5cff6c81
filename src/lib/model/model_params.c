/* SPDX-License-Identifier: Apache-2.0 */
/*
 * model_params.c - the parameter count of a decoder from its architecture numbers
 * (F-PAR-01, F-PAR-02), as tensor groups: one struct vf_tgroup per tensor class per layer.
 * The groups are what weight estimators, quantization recipes and layer offload work on, so
 * they must add up to the model's exact parameter count.
 */
#include "internal.h"

#include <string.h>

static const char *const tclass_names[VF_T__COUNT] = {
    [VF_T_TOKEN_EMBD] = "token_embd",
    [VF_T_OUTPUT] = "output",
    [VF_T_NORM] = "norm",
    [VF_T_ATTN_Q] = "attn_q",
    [VF_T_ATTN_K] = "attn_k",
    [VF_T_ATTN_V] = "attn_v",
    [VF_T_ATTN_QKV] = "attn_qkv",
    [VF_T_ATTN_O] = "attn_output",
    [VF_T_FFN_GATE] = "ffn_gate",
    [VF_T_FFN_UP] = "ffn_up",
    [VF_T_FFN_DOWN] = "ffn_down",
    [VF_T_FFN_GATE_EXP] = "ffn_gate_exps",
    [VF_T_FFN_UP_EXP] = "ffn_up_exps",
    [VF_T_FFN_DOWN_EXP] = "ffn_down_exps",
    [VF_T_FFN_GATE_SHEXP] = "ffn_gate_shexp",
    [VF_T_FFN_UP_SHEXP] = "ffn_up_shexp",
    [VF_T_FFN_DOWN_SHEXP] = "ffn_down_shexp",
    [VF_T_ROUTER] = "ffn_gate_inp",
    [VF_T_SSM] = "ssm",
    [VF_T_BIAS] = "bias",
    [VF_T_OTHER] = "other",
};

const char *vf_tclass_name(enum vf_tclass c)
{
    if ((unsigned)c >= VF_T__COUNT || !tclass_names[c])
        return "unknown";
    return tclass_names[c];
}

/* Groups under construction; `bad` latches the first overflow. */
struct builder {
    struct vf_tgroup *g;
    size_t n, cap;
    uint64_t total, active;
    bool bad;
};

/*
 * Adds n_tensors tensors of `per_tensor` elements each, rows of row_elems elements, of
 * which `used` are active per token (= n_tensors except for routed experts). Consecutive
 * additions with the same class, layer and row length fold into one group.
 */
static void add(struct builder *b, enum vf_tclass cls, int32_t layer, uint64_t per_tensor,
                uint64_t row_elems, uint32_t n_tensors, uint32_t used)
{
    uint64_t n, act;

    if (b->bad || per_tensor == 0 || n_tensors == 0)
        return;
    if (!vf__mul_u64(per_tensor, n_tensors, &n) || !vf__mul_u64(per_tensor, used, &act) ||
        !vf__add_u64(b->total, n, &b->total) || !vf__add_u64(b->active, act, &b->active)) {
        b->bad = true;
        return;
    }
    if (b->n > 0) {
        struct vf_tgroup *last = &b->g[b->n - 1];
        if (last->cls == cls && last->layer == layer && last->row_elems == row_elems &&
            cls != VF_T_FFN_GATE_EXP && cls != VF_T_FFN_UP_EXP && cls != VF_T_FFN_DOWN_EXP) {
            last->n_params += n;
            last->n_tensors += n_tensors;
            return;
        }
    }
    if (b->n == b->cap) {
        b->bad = true;
        return;
    }
    b->g[b->n++] = (struct vf_tgroup){cls, layer, n, row_elems, n_tensors, 0};
}

/* a*b with the overflow latched in the builder (the result is then meaningless). */
static uint64_t mul(struct builder *b, uint64_t x, uint64_t y)
{
    uint64_t r;
    if (!vf__mul_u64(x, y, &r)) {
        b->bad = true;
        return 0;
    }
    return r;
}

static bool type_is(const struct vf_model *m, const char *const *list)
{
    if (!m->model_type)
        return false;
    for (; *list; list++)
        if (strcmp(m->model_type, *list) == 0)
            return true;
    return false;
}

/* Architecture traits that follow from model_type alone (flag-dependent ones, such as
 * attention_bias, are added by the config reader before the call). */
static const char *const four_norms[] = {"gemma2", "gemma3", "gemma3_text", NULL};
static const char *const qk_norm_types[] = {
    "qwen3", "qwen3_moe", "qwen3_next", "qwen3_5_moe_text", "gemma3", "gemma3_text", NULL};
static const char *const qkv_bias_types[] = {"qwen2", "qwen2_moe", NULL};
static const char *const router_bias_types[] = {"deepseek_v3", "kimi_k2", "glm4_moe", NULL};
static const char *const shared_gate_types[] = {"qwen2_moe", "qwen3_next", "qwen3_5_moe_text",
                                                NULL};
/* Gated attention: q_proj also yields the output gate (2x width): Qwen3-Next, and Qwen3.5 (its
 * config.json: "attn_output_gate": true). */
static const char *const out_gate_types[] = {"qwen3_next", "qwen3_5_moe_text", NULL};
static const char *const fused_types[] = {"phi3", NULL};

/* F-PAR-01: the token mixer of one attention layer. */
static void add_attention(struct builder *b, const struct vf_model *m, int32_t l)
{
    uint64_t h = m->hidden, nh = m->n_heads;
    uint64_t kvh = m->layer_kv_heads ? m->layer_kv_heads[l] : m->n_kv_heads;

    if (m->attn == VF_ATTN_MLA) {
        uint64_t qk = (uint64_t)m->qk_nope_dim + m->qk_rope_dim;
        uint64_t kv = m->kv_lora_rank;
        if (m->q_lora_rank) {
            add(b, VF_T_ATTN_Q, l, mul(b, h, m->q_lora_rank), h, 1, 1);
            add(b, VF_T_NORM, l, m->q_lora_rank, m->q_lora_rank, 1, 1);
            add(b, VF_T_ATTN_Q, l, mul(b, m->q_lora_rank, mul(b, nh, qk)), m->q_lora_rank, 1, 1);
        } else {
            add(b, VF_T_ATTN_Q, l, mul(b, h, mul(b, nh, qk)), h, 1, 1);
        }
        add(b, VF_T_ATTN_K, l, mul(b, h, kv + m->qk_rope_dim), h, 1, 1);
        add(b, VF_T_NORM, l, kv, kv, 1, 1);
        add(b, VF_T_ATTN_V, l, mul(b, kv, mul(b, nh, (uint64_t)m->qk_nope_dim + m->v_head_dim_mla)),
            kv, 1, 1);
        add(b, VF_T_ATTN_O, l, mul(b, mul(b, nh, m->v_head_dim_mla), h),
            mul(b, nh, m->v_head_dim_mla), 1, 1);
        return;
    }

    uint64_t q = mul(b, nh, m->head_dim), k = mul(b, kvh, m->head_dim);
    uint64_t v = mul(b, kvh, m->head_dim_v), o = mul(b, nh, m->head_dim_v);
    uint64_t qw = type_is(m, out_gate_types) ? 2 * q : q;

    if (type_is(m, fused_types)) {
        add(b, VF_T_ATTN_QKV, l, mul(b, h, qw + k + v), h, 1, 1);
    } else {
        add(b, VF_T_ATTN_Q, l, mul(b, h, qw), h, 1, 1);
        add(b, VF_T_ATTN_K, l, mul(b, h, k), h, 1, 1);
        add(b, VF_T_ATTN_V, l, mul(b, h, v), h, 1, 1);
    }
    add(b, VF_T_ATTN_O, l, mul(b, o, h), o, 1, 1);
    if (type_is(m, qk_norm_types))
        add(b, VF_T_NORM, l, m->head_dim, m->head_dim, 2, 2);
    if (type_is(m, qkv_bias_types))
        add(b, VF_T_BIAS, l, q + k + v, 1, 1, 1);
    if (m->model_type && strcmp(m->model_type, "gpt_oss") == 0)
        add(b, VF_T_BIAS, l, nh, 1, 1, 1); /* attention sinks, one per head */
}

/* Is layer l a MoE layer (moe_every-th layer from first_k_dense on)? */
static bool layer_is_moe(const struct vf_model *m, uint32_t l)
{
    uint32_t every = m->moe_every ? m->moe_every : 1;
    return m->n_experts > 0 && l >= m->first_k_dense && (l - m->first_k_dense + 1) % every == 0;
}

/* F-PAR-01: the feed-forward block of one layer (dense, or MoE with routed and shared
 * experts); F-PAR-02 counts n_experts_used of the n_experts routed ones as active. */
static void add_ffn(struct builder *b, const struct vf_model *m, int32_t l)
{
    uint64_t h = m->hidden;

    if (m->model_type && strcmp(m->model_type, "nemotron_h") == 0) {
        /* non-gated (squared ReLU) MLP */
        add(b, VF_T_FFN_UP, l, mul(b, h, m->intermediate), h, 1, 1);
        add(b, VF_T_FFN_DOWN, l, mul(b, m->intermediate, h), m->intermediate, 1, 1);
        return;
    }
    if (!layer_is_moe(m, (uint32_t)l)) {
        if (type_is(m, fused_types)) {
            add(b, VF_T_FFN_UP, l, mul(b, h, 2 * (uint64_t)m->intermediate), h, 1, 1);
        } else {
            add(b, VF_T_FFN_GATE, l, mul(b, h, m->intermediate), h, 1, 1);
            add(b, VF_T_FFN_UP, l, mul(b, h, m->intermediate), h, 1, 1);
        }
        add(b, VF_T_FFN_DOWN, l, mul(b, m->intermediate, h), m->intermediate, 1, 1);
        return;
    }

    uint32_t e = m->n_experts, k = m->n_experts_used;
    uint64_t fe = m->moe_intermediate;
    add(b, VF_T_ROUTER, l, mul(b, h, e), h, 1, 1);
    if (type_is(m, router_bias_types))
        add(b, VF_T_BIAS, l, e, 1, 1, 1); /* e_score_correction_bias */
    add(b, VF_T_FFN_GATE_EXP, l, mul(b, h, fe), h, e, k);
    add(b, VF_T_FFN_UP_EXP, l, mul(b, h, fe), h, e, k);
    add(b, VF_T_FFN_DOWN_EXP, l, mul(b, fe, h), fe, e, k);
    if (m->model_type && strcmp(m->model_type, "gpt_oss") == 0) {
        add(b, VF_T_BIAS, l, e, 1, 1, 1);          /* router bias */
        add(b, VF_T_BIAS, l, 2 * fe + h, 1, e, k); /* gate_up and down biases */
    }
    if (m->n_shared_experts && m->shared_intermediate) {
        uint64_t fs = mul(b, m->n_shared_experts, m->shared_intermediate);
        add(b, VF_T_FFN_GATE_SHEXP, l, mul(b, h, fs), h, 1, 1);
        add(b, VF_T_FFN_UP_SHEXP, l, mul(b, h, fs), h, 1, 1);
        add(b, VF_T_FFN_DOWN_SHEXP, l, mul(b, fs, h), fs, 1, 1);
        if (type_is(m, shared_gate_types))
            add(b, VF_T_ROUTER, l, h, h, 1, 1); /* shared_expert_gate: hidden -> 1 */
    }
}

/* Sort key of a group: embeddings first, then layer by layer, then the rest (-1). */
static size_t bucket(const struct vf_tgroup *g, uint32_t n_layers)
{
    if (g->layer >= 0)
        return (size_t)g->layer + 1;
    return g->cls == VF_T_TOKEN_EMBD ? 0 : (size_t)n_layers + 1;
}

/*
 * F-PAR-01/F-PAR-02. Reads the architecture fields of m (n_layers, hidden, heads, layer
 * kinds, experts, MLA ranks, model_type) and fills m->groups, m->n_groups, m->params and
 * m->params_active. Groups the caller already put in m->groups/m->n_groups (tensors only
 * the reader knows of: flag-dependent biases, recurrent mixers) are kept and counted;
 * they must not be routed experts. Layer kinds: ATTN_* layers get attention, RECURRENT
 * layers only their norms and FFN here, MLP_ONLY layers no mixer. Everything is allocated
 * in a. Errors: VF_ERANGE on overflow, VF_ELIMIT past VF_MAX_MODEL_GROUPS.
 */
enum vf_err vf__model_build_groups(struct vf_arena *a, struct vf_model *m, struct vf_error *err)
{
    struct builder b = {0};
    bool nemo = m->model_type && strcmp(m->model_type, "nemotron_h") == 0;
    uint64_t h = m->hidden;
    size_t cap = m->n_groups + (size_t)m->n_layers * 32 + 8;

    if (m->n_layers > VF_MAX_LAYERS || m->n_groups > VF_MAX_MODEL_GROUPS)
        return vf__errf(err, VF_ELIMIT, "model: %u layers, %zu groups exceed the limits",
                        m->n_layers, m->n_groups);
    b.g = vf__arena_take(a, cap * sizeof(*b.g)); /* filled by add() up to b.n */
    if (!b.g)
        return vf__errf(err, VF_ENOMEM, "model: cannot allocate %zu tensor groups", cap);
    b.cap = cap;
    for (size_t i = 0; i < m->n_groups; i++) {
        const struct vf_tgroup *g = &m->groups[i];
        b.g[b.n++] = *g;
        if (!vf__add_u64(b.total, g->n_params, &b.total) ||
            !vf__add_u64(b.active, g->n_params, &b.active))
            b.bad = true;
    }

    add(&b, VF_T_TOKEN_EMBD, -1, mul(&b, m->vocab, h), h, 1, 1);
    for (uint32_t i = 0; i < m->n_layers && !b.bad; i++) {
        int32_t l = (int32_t)i;
        enum vf_layer_kind k = m->layer_kind ? m->layer_kind[i] : VF_LAYER_ATTN_FULL;
        bool attn = k == VF_LAYER_ATTN_FULL || k == VF_LAYER_ATTN_SLIDING;

        if (nemo) {
            /* Nemotron-H: each block is ONE of mixer / attention / MLP, one norm each. */
            add(&b, VF_T_NORM, l, h, h, 1, 1);
            if (attn)
                add_attention(&b, m, l);
            else if (k == VF_LAYER_MLP_ONLY)
                add_ffn(&b, m, l);
            continue;
        }
        add(&b, VF_T_NORM, l, h, h, type_is(m, four_norms) ? 4 : 2, type_is(m, four_norms) ? 4 : 2);
        if (attn)
            add_attention(&b, m, l);
        add_ffn(&b, m, l);
    }
    add(&b, VF_T_NORM, -1, h, h, 1, 1);
    if (!m->tied_embeddings)
        add(&b, VF_T_OUTPUT, -1, mul(&b, m->vocab, h), h, 1, 1);

    if (b.bad && b.n == b.cap)
        return vf__errf(err, VF_ELIMIT, "model: more than %zu tensor groups", b.cap);
    if (b.bad)
        return vf__errf(err, VF_ERANGE, "model: parameter count overflows 64 bits");
    if (b.n > VF_MAX_MODEL_GROUPS)
        return vf__errf(err, VF_ELIMIT, "model: %zu tensor groups exceed the limit of %zu", b.n,
                        (size_t)VF_MAX_MODEL_GROUPS);

    /* Stable counting sort by bucket so the reader's groups sit in their layers. */
    size_t nb = (size_t)m->n_layers + 2;
    size_t *start = vf_arena_alloc(a, (nb + 1) * sizeof(*start));
    struct vf_tgroup *out = vf__arena_take(a, (b.n ? b.n : 1) * sizeof(*out)); /* all b.n set */
    if (!start || !out)
        return vf__errf(err, VF_ENOMEM, "model: cannot allocate %zu tensor groups", b.n);
    for (size_t i = 0; i < b.n; i++)
        start[bucket(&b.g[i], m->n_layers) + 1]++;
    for (size_t i = 1; i <= nb; i++)
        start[i] += start[i - 1];
    for (size_t i = 0; i < b.n; i++)
        out[start[bucket(&b.g[i], m->n_layers)]++] = b.g[i];

    m->groups = out;
    m->n_groups = b.n;
    m->params = b.total;
    m->params_active = b.active;
    return VF_OK;
}
