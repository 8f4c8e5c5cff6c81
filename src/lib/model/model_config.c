/* SPDX-License-Identifier: Apache-2.0 */
/*
 * model_config.c - reads a Hugging Face config.json into a struct vf_model: dimensions,
 * attention kind (MHA/GQA/MQA/MLA), experts, per-layer kinds (full, sliding, recurrent,
 * MLP-only), recurrent state size and the checkpoint's native storage. The catalog's files
 * in data/models/ are trimmed real configs (named in data/models.tsv), so the same reader
 * serves the catalog and users' files. Every number is checked against the limits
 * of internal.h before it is used.
 */
#include "model_config.h"

#include "read/json_fast.h"

#include <jansson.h>
#include <string.h>

const char *vf_provenance_name(enum vf_provenance p)
{
    switch (p) {
    case VF_PROV_EXACT:
        return "exact";
    case VF_PROV_CONFIG:
        return "config";
    case VF_PROV_CATALOG:
        return "catalog";
    case VF_PROV_ASSUMED:
        return "assumed";
    }
    return "unknown";
}

const char *vf_attn_kind_name(enum vf_attn_kind k)
{
    switch (k) {
    case VF_ATTN_MHA:
        return "MHA";
    case VF_ATTN_GQA:
        return "GQA";
    case VF_ATTN_MQA:
        return "MQA";
    case VF_ATTN_MLA:
        return "MLA";
    }
    return "unknown";
}

/* One parse: the object holding the decoder's keys (root or text_config) and the root. */
struct cfg {
    json_t *root, *obj;
    const char *origin;
    struct vf_error *err;
};

/* The value of key in the decoder object, else in the root; NULL when absent or null. */
static json_t *get(const struct cfg *c, const char *key)
{
    json_t *v = json_object_get(c->obj, key);
    if ((!v || json_is_null(v)) && c->obj != c->root)
        v = json_object_get(c->root, key);
    return v && !json_is_null(v) ? v : NULL;
}

/*
 * Reads the unsigned integer at key (an integral JSON number) into *out. Returns VF_OK
 * with *present false when absent; VF_EFORMAT for a non-number, negative or fractional
 * value; VF_ELIMIT above max.
 */
static enum vf_err num(const struct cfg *c, const char *key, uint64_t max, uint64_t *out,
                       bool *present)
{
    json_t *v = get(c, key);
    *present = false;
    if (!v)
        return VF_OK;
    if (json_is_integer(v)) {
        json_int_t i = json_integer_value(v);
        if (i < 0)
            return vf__errf(c->err, VF_EFORMAT, "config: '%s': %s %lld is negative", c->origin, key,
                            (long long)i);
        *out = (uint64_t)i;
    } else if (json_is_real(v)) {
        double d = json_real_value(v);
        if (!(d >= 0))
            return vf__errf(c->err, VF_EFORMAT, "config: '%s': %s %g is negative", c->origin, key,
                            d);
        if (d >= 1.8e19)
            return vf__errf(c->err, VF_ELIMIT, "config: '%s': %s %g exceeds the limit %llu",
                            c->origin, key, d, (unsigned long long)max);
        if ((double)(uint64_t)d != d)
            return vf__errf(c->err, VF_EFORMAT, "config: '%s': %s %g is not a whole number",
                            c->origin, key, d);
        *out = (uint64_t)d;
    } else {
        return vf__errf(c->err, VF_EFORMAT, "config: '%s': %s is not a number", c->origin, key);
    }
    if (*out > max)
        return vf__errf(c->err, VF_ELIMIT, "config: '%s': %s %llu exceeds the limit %llu",
                        c->origin, key, (unsigned long long)*out, (unsigned long long)max);
    *present = true;
    return VF_OK;
}

/* The first of the keys present (NULL-terminated list), else dflt. */
static enum vf_err num_any(const struct cfg *c, const char *const *keys, uint64_t max,
                           uint64_t dflt, uint32_t *out)
{
    for (; *keys; keys++) {
        uint64_t v;
        bool present;
        enum vf_err rc = num(c, *keys, max, &v, &present);
        if (rc)
            return rc;
        if (present) {
            *out = (uint32_t)v;
            return VF_OK;
        }
    }
    *out = (uint32_t)dflt;
    return VF_OK;
}

#define KEYS(...) ((const char *const[]){__VA_ARGS__, NULL})

/* A required count in [1, max]. */
static enum vf_err req(const struct cfg *c, const char *key, uint64_t max, uint64_t *out)
{
    bool present;
    enum vf_err rc = num(c, key, max, out, &present);
    if (rc)
        return rc;
    if (!present)
        return vf__errf(c->err, VF_EFORMAT, "config: '%s': missing %s", c->origin, key);
    if (*out == 0)
        return vf__errf(c->err, VF_EFORMAT, "config: '%s': %s must be at least 1 (got 0)",
                        c->origin, key);
    return VF_OK;
}

static bool flag(const struct cfg *c, const char *key, bool dflt)
{
    json_t *v = get(c, key);
    return v && json_is_boolean(v) ? json_is_true(v) : dflt;
}

static const char *str(const struct cfg *c, const char *key)
{
    json_t *v = get(c, key);
    return v && json_is_string(v) ? json_string_value(v) : NULL;
}

static bool is(const char *s, const char *t)
{
    return s && strcmp(s, t) == 0;
}

static bool prefix(const char *s, const char *p)
{
    return s && strncmp(s, p, strlen(p)) == 0;
}

/* F-LAY-01: the families that alternate sliding and full attention layers, by HF model_type
 * (the GGUF reader maps general.architecture to it: gpt-oss -> gpt_oss, gemma-embedding ->
 * gemma_embedding). */
static const struct {
    const char *model_type;
    uint32_t period;
} swa_periods[] = {
    {"gemma2", 2},          {"gpt_oss", 2}, {"gemma3", 6}, {"gemma3_text", 6},
    {"gemma_embedding", 6}, {"cohere2", 4}, {"llama4", 4}, {"llama4_text", 4},
};

bool vf__encoder_only(const char *model_type)
{
    static const char *const enc[] = {
        "bert",         "roberta",      "xlm_roberta", "xlm_roberta_xl", "distilbert",
        "electra",      "deberta",      "deberta_v2",  "albert",         "camembert",
        "mpnet",        "modernbert",   "modern_bert", "nomic_bert",     "nomic_bert_moe",
        "jina_bert_v2", "jina_bert_v3", "neo_bert",    "neobert",        "t5encoder",
    };
    char mt[32];
    size_t n = model_type ? strlen(model_type) : 0;
    if (!n || n >= sizeof mt)
        return false;
    for (size_t i = 0; i <= n; i++)
        mt[i] = model_type[i] == '-' ? '_' : model_type[i];
    for (size_t i = 0; i < sizeof enc / sizeof enc[0]; i++)
        if (!strcmp(mt, enc[i]))
            return true;
    return false;
}

uint32_t vf__swa_period(const char *model_type)
{
    for (size_t i = 0; model_type && i < sizeof swa_periods / sizeof swa_periods[0]; i++)
        if (strcmp(model_type, swa_periods[i].model_type) == 0)
            return swa_periods[i].period;
    return 0;
}

bool vf__swa_sliding(uint32_t i, uint32_t period)
{
    return period == 0 || i % period < period - 1;
}

/*
 * F-LAY-01 for the families of vf__swa_period (period > 0): sliding_window_pattern (gemma3's
 * key) overrides the period, and no_rope_layers (Llama 4: chunked attention on the RoPE
 * layers), when it lists every layer, names them one by one.
 */
static enum vf_err periodic(const struct cfg *c, uint32_t n, uint32_t period, uint8_t *kind)
{
    json_t *nr = get(c, "no_rope_layers");
    bool list = nr && json_is_array(nr) && json_array_size(nr) == n;
    uint32_t p;
    enum vf_err rc = num_any(c, KEYS("sliding_window_pattern"), VF_MAX_LAYERS, period, &p);
    if (rc)
        return rc;
    for (uint32_t i = 0; i < n; i++) {
        bool sl = list ? json_integer_value(json_array_get(nr, i)) != 0 : vf__swa_sliding(i, p);
        kind[i] = sl ? VF_LAYER_ATTN_SLIDING : VF_LAYER_ATTN_FULL;
    }
    return VF_OK;
}

/*
 * F-LAY-01: the kind of every layer. Sources, first match wins: hybrid_override_pattern
 * (Nemotron-H: M mamba, * attention, - MLP), layer_types (full/sliding/chunked/linear
 * attention), Qwen3-Next's full_attention_interval, then the per-family sliding rules:
 * the periodic families of vf__swa_period (gemma2, gemma3, llama4's chunked attention on
 * the RoPE layers, ...: see periodic), qwen2/qwen3 (use_sliding_window, from
 * max_window_layers on), and a plain sliding_window on every layer (Mistral v0.1).
 */
static enum vf_err layer_kinds(const struct cfg *c, struct vf_model *m, uint8_t *kind)
{
    const char *mt = m->model_type;
    const char *pat = str(c, "hybrid_override_pattern");
    json_t *types = get(c, "layer_types");
    uint32_t n = m->n_layers, win = 0, p;
    enum vf_err rc;

    rc = num_any(c, KEYS("sliding_window"), VF_MAX_CTX_TOKENS, 0, &win);
    if (rc)
        return rc;
    if (prefix(mt, "llama4")) {
        rc = num_any(c, KEYS("attention_chunk_size"), VF_MAX_CTX_TOKENS, 0, &win);
        if (rc)
            return rc;
    }
    if ((prefix(mt, "qwen2") || prefix(mt, "qwen3")) && !flag(c, "use_sliding_window", false))
        win = 0; /* qwen's sliding_window is inert unless use_sliding_window */

    memset(kind, VF_LAYER_ATTN_FULL, n);
    if (pat) {
        if (strlen(pat) != n)
            return vf__errf(c->err, VF_EFORMAT,
                            "config: '%s': hybrid_override_pattern has %zu blocks, "
                            "num_hidden_layers %u",
                            c->origin, strlen(pat), n);
        for (uint32_t i = 0; i < n; i++) {
            switch (pat[i]) {
            case 'M':
                kind[i] = VF_LAYER_RECURRENT;
                break;
            case '*':
                kind[i] = VF_LAYER_ATTN_FULL;
                break;
            case '-':
                kind[i] = VF_LAYER_MLP_ONLY;
                break;
            default:
                return vf__errf(c->err, VF_EUNSUPPORTED,
                                "config: '%s': hybrid_override_pattern block '%c' at %u "
                                "(known: M * -)",
                                c->origin, pat[i], i);
            }
        }
        win = 0;
    } else if (types && json_is_array(types)) {
        if (json_array_size(types) != n)
            return vf__errf(c->err, VF_EFORMAT,
                            "config: '%s': layer_types has %zu entries, num_hidden_layers %u",
                            c->origin, json_array_size(types), n);
        for (uint32_t i = 0; i < n; i++) {
            const char *t = json_string_value(json_array_get(types, i));
            if (is(t, "full_attention") || is(t, "attention"))
                kind[i] = VF_LAYER_ATTN_FULL;
            else if (is(t, "sliding_attention") || is(t, "chunked_attention"))
                kind[i] = win ? VF_LAYER_ATTN_SLIDING : VF_LAYER_ATTN_FULL;
            else if (is(t, "linear_attention") || is(t, "mamba"))
                kind[i] = VF_LAYER_RECURRENT;
            else
                return vf__errf(c->err, VF_EUNSUPPORTED,
                                "config: '%s': layer_types[%u] '%s' is not a known layer type",
                                c->origin, i, t ? t : "(not a string)");
        }
    } else if (is(mt, "qwen3_next")) {
        rc = num_any(c, KEYS("full_attention_interval"), VF_MAX_LAYERS, 4, &p);
        if (rc)
            return rc;
        for (uint32_t i = 0; i < n; i++)
            kind[i] = p && (i + 1) % p == 0 ? VF_LAYER_ATTN_FULL : VF_LAYER_RECURRENT;
        win = 0;
    } else if (win && vf__swa_period(mt)) {
        rc = periodic(c, n, vf__swa_period(mt), kind);
        if (rc)
            return rc;
    } else if (win && (prefix(mt, "qwen2") || prefix(mt, "qwen3"))) {
        rc = num_any(c, KEYS("max_window_layers"), VF_MAX_LAYERS, 0, &p);
        if (rc)
            return rc;
        for (uint32_t i = p; i < n; i++)
            kind[i] = VF_LAYER_ATTN_SLIDING;
    } else if (win) {
        memset(kind, VF_LAYER_ATTN_SLIDING, n);
    }
    m->sliding_window = 0;
    for (uint32_t i = 0; i < n; i++)
        if (kind[i] == VF_LAYER_ATTN_SLIDING)
            m->sliding_window = win;
    return VF_OK;
}

/* Groups the reader adds before vf__model_build_groups (see its contract). */
struct extras {
    struct vf_tgroup *g; /* 8 per layer at most */
    size_t n, cap;
};

static void extra(struct extras *x, enum vf_tclass cls, int32_t l, uint64_t n, uint64_t row,
                  uint32_t nt)
{
    if (n && x->n < x->cap)
        x->g[x->n++] = (struct vf_tgroup){cls, l, n, row, nt, 0};
}

/*
 * F-PAR-01 (recurrent part) and F-KV-05: Mamba2 and gated-DeltaNet mixers. Adds their
 * tensor groups for every RECURRENT layer and sets m->recurrent_state_bytes (16-bit).
 */
static enum vf_err recurrent(const struct cfg *c, struct vf_model *m, struct extras *x)
{
    uint64_t h = m->hidden, n_rec = 0, per_layer_state = 0;
    uint32_t a, b, d, e, k, s;
    enum vf_err rc;

    for (uint32_t i = 0; i < m->n_layers; i++)
        n_rec += m->layer_kind[i] == VF_LAYER_RECURRENT;
    if (!n_rec)
        return VF_OK;

    if (get(c, "linear_num_value_heads")) {
        /* Gated DeltaNet (Qwen3-Next): a = key heads, b = value heads, d/e = head dims. */
        if ((rc = num_any(c, KEYS("linear_num_key_heads"), VF_MAX_DIM, 0, &a)) ||
            (rc = num_any(c, KEYS("linear_num_value_heads"), VF_MAX_DIM, 0, &b)) ||
            (rc = num_any(c, KEYS("linear_key_head_dim"), VF_MAX_DIM, 0, &d)) ||
            (rc = num_any(c, KEYS("linear_value_head_dim"), VF_MAX_DIM, 0, &e)) ||
            (rc = num_any(c, KEYS("linear_conv_kernel_dim"), 64, 4, &k)))
            return rc;
        if (!a || !b || !d || !e || !k)
            return vf__errf(c->err, VF_EFORMAT,
                            "config: '%s': linear attention needs "
                            "linear_num_key_heads, linear_num_value_heads and head dims",
                            c->origin);
        uint64_t kd = (uint64_t)a * d, vd = (uint64_t)b * e, conv = 2 * kd + vd;
        if (conv > VF_MAX_DIM)
            return vf__errf(c->err, VF_ELIMIT,
                            "config: '%s': linear attention width %llu "
                            "exceeds the limit",
                            c->origin, (unsigned long long)conv);
        per_layer_state = (uint64_t)b * d * e + conv * (k - 1);
        for (uint32_t i = 0; i < m->n_layers; i++) {
            if (m->layer_kind[i] != VF_LAYER_RECURRENT)
                continue;
            int32_t l = (int32_t)i;
            extra(x, VF_T_SSM, l, h * (2 * kd + 2 * vd + 2 * (uint64_t)b), h, 2); /* in_proj */
            extra(x, VF_T_SSM, l, conv * k, k, 1);                                /* conv1d */
            extra(x, VF_T_SSM, l, 2 * (uint64_t)b, b, 2); /* dt_bias, A_log */
            extra(x, VF_T_NORM, l, e, e, 1);              /* gated norm */
            extra(x, VF_T_SSM, l, vd * h, vd, 1);         /* out_proj */
        }
    } else {
        /* Mamba2 (Nemotron-H): a heads of d, state s, b groups, conv kernel k. */
        uint32_t expand;
        if ((rc = num_any(c, KEYS("mamba_num_heads"), VF_MAX_DIM, 0, &a)) ||
            (rc = num_any(c, KEYS("mamba_head_dim"), VF_MAX_DIM, 64, &d)) ||
            (rc = num_any(c, KEYS("ssm_state_size", "state_size"), VF_MAX_DIM, 0, &s)) ||
            (rc = num_any(c, KEYS("n_groups", "mamba_n_groups"), VF_MAX_DIM, 1, &b)) ||
            (rc = num_any(c, KEYS("conv_kernel", "mamba_d_conv", "d_conv"), 64, 4, &k)) ||
            (rc = num_any(c, KEYS("expand", "mamba_expand"), 64, 2, &expand)))
            return rc;
        if (!a && d)
            a = (uint32_t)(expand * h / d);
        if (!a || !d || !s || !k)
            return vf__errf(c->err, VF_EFORMAT,
                            "config: '%s': mamba layers need "
                            "mamba_num_heads, mamba_head_dim and ssm_state_size",
                            c->origin);
        uint64_t di = (uint64_t)a * d, conv = di + 2 * (uint64_t)b * s;
        if (conv > VF_MAX_DIM)
            return vf__errf(c->err, VF_ELIMIT,
                            "config: '%s': mamba width %llu exceeds the "
                            "limit",
                            c->origin, (unsigned long long)conv);
        per_layer_state = di * s + conv * (k - 1);
        bool conv_bias = flag(c, "mamba_conv_bias", flag(c, "use_conv_bias", true));
        for (uint32_t i = 0; i < m->n_layers; i++) {
            if (m->layer_kind[i] != VF_LAYER_RECURRENT)
                continue;
            int32_t l = (int32_t)i;
            extra(x, VF_T_SSM, l, h * (2 * di + 2 * (uint64_t)b * s + a), h, 1); /* in_proj */
            extra(x, VF_T_SSM, l, conv * k, k, 1);                               /* conv1d */
            if (conv_bias)
                extra(x, VF_T_BIAS, l, conv, 1, 1);
            extra(x, VF_T_SSM, l, 3 * (uint64_t)a, a, 3); /* dt_bias, A_log, D */
            extra(x, VF_T_NORM, l, di, di, 1);            /* gated RMSNorm */
            extra(x, VF_T_SSM, l, di * h, di, 1);         /* out_proj */
        }
    }
    /* F-KV-05: 16-bit state; per_layer_state is small (< 2^60) after the limits above. */
    m->recurrent_state_bytes = vf__sat_mul(vf__sat_mul(per_layer_state, n_rec), 2);
    return VF_OK;
}

/* Does layer i have a dense FFN (mirrors model_params.c's rule)? */
static bool dense_ffn(const struct vf_model *m, uint32_t i)
{
    uint32_t every = m->moe_every ? m->moe_every : 1;
    enum vf_layer_kind k = m->layer_kind[i];
    if (is(m->model_type, "nemotron_h"))
        return k == VF_LAYER_MLP_ONLY;
    return !(m->n_experts && i >= m->first_k_dense && (i - m->first_k_dense + 1) % every == 0);
}

/* Flag-dependent tensors: attention_bias, mlp_bias, use_qk_norm (F-PAR-01). */
static void flag_tensors(const struct cfg *c, struct vf_model *m, struct extras *x)
{
    bool ab = flag(c, "attention_bias", false) && !prefix(m->model_type, "qwen2");
    bool mb = flag(c, "mlp_bias", false);
    bool qkn = is(m->model_type, "glm4_moe") && flag(c, "use_qk_norm", false);
    uint64_t q = (uint64_t)m->n_heads * m->head_dim, kv = (uint64_t)m->n_kv_heads * m->head_dim;

    for (uint32_t i = 0; i < m->n_layers; i++) {
        int32_t l = (int32_t)i;
        bool attn = m->layer_kind[i] <= VF_LAYER_ATTN_SLIDING;
        if (attn && ab && m->attn != VF_ATTN_MLA) {
            /* glm4_moe biases q/k/v only; llama-style attention_bias also o_proj */
            bool o = !is(m->model_type, "glm4_moe");
            extra(x, VF_T_BIAS, l, q + 2 * kv + (o ? m->hidden : 0), 1, o ? 4 : 3);
        }
        if (attn && qkn)
            extra(x, VF_T_NORM, l, 2 * (uint64_t)m->head_dim, m->head_dim, 2);
        if (mb && dense_ffn(m, i)) {
            bool gated = !is(m->model_type, "nemotron_h");
            extra(x, VF_T_BIAS, l, (gated ? 2 : 1) * (uint64_t)m->intermediate + m->hidden, 1,
                  gated ? 3 : 2);
        }
    }
}

/*
 * compressed-tensors (llm-compressor checkpoints): the weights scheme of the first config group
 * that targets Linear layers: 8-bit float -> fp8 (per-channel or per-tensor scales), 8-bit int
 * -> int8, 4-bit float with groups of 16 -> nvfp4, 4-bit int with a group size -> int4 with a
 * 16-bit scale per group, counted with AWQ's layout (its packed zero points add 0.4 % that a
 * symmetric scheme does not store).
 * Layers listed in "ignore" (lm_head, routers) stay 16-bit, which the default class set
 * already does (F-W-04).
 */
static enum vf_err compressed_tensors(const struct cfg *c, const json_t *q, struct vf_model *m)
{
    const json_t *groups = json_object_get(q, "config_groups");
    const char *key;
    json_t *grp, *weights = NULL;
    json_object_foreach((json_t *)groups, key, grp)
    {
        (void)key;
        if (!weights)
            weights = json_object_get(grp, "weights");
    }
    if (!json_is_object(weights))
        return vf__errf(c->err, VF_EFORMAT,
                        "config: '%s': compressed-tensors quantization_config has no "
                        "config_groups.*.weights scheme",
                        c->origin);
    json_int_t bits = json_integer_value(json_object_get(weights, "num_bits"));
    const char *type = json_string_value(json_object_get(weights, "type"));
    json_int_t grp_size = json_integer_value(json_object_get(weights, "group_size"));
    bool is_float = type && !strcmp(type, "float");
    if (bits == 8) {
        m->native.kind = VF_QK_PLAIN;
        m->native.dtype = is_float ? VF_DT_FP8 : VF_DT_INT8;
        strcpy(m->native.name, is_float ? "fp8" : "int8");
    } else if (bits == 4 && is_float) {
        m->native.kind = VF_QK_PLAIN;
        m->native.dtype = VF_DT_NVFP4;
        strcpy(m->native.name, "nvfp4");
    } else if (bits == 4) {
        m->native.kind = VF_QK_AWQ;
        m->native.dtype = VF_DT_INT4;
        m->native.group = grp_size > 0 && grp_size <= 65536 ? (uint32_t)grp_size : 128;
        strcpy(m->native.name, "int4");
    } else {
        return vf__errf(c->err, VF_EUNSUPPORTED,
                        "config: '%s': compressed-tensors with %d-bit %s weights is not "
                        "supported (known: 8-bit float/int, 4-bit float/int)",
                        c->origin, (int)bits, type ? type : "?");
    }
    return VF_OK;
}

/* Issue 20: the classes one entry of a checkpoint's list of modules kept unquantized names,
 * matched as transformers matches modules_to_not_convert (a substring of the module name) and
 * compressed-tensors its "re:" patterns (the pattern's text); an entry naming one layer
 * ("model.layers.0.self_attn") is per layer, which the class mask cannot hold: 0. */
static uint32_t kept_classes(const char *e)
{
#define C(x) (1u << (x))
    const uint32_t attn =
        C(VF_T_ATTN_Q) | C(VF_T_ATTN_K) | C(VF_T_ATTN_V) | C(VF_T_ATTN_QKV) | C(VF_T_ATTN_O);
    const uint32_t gate = C(VF_T_FFN_GATE) | C(VF_T_FFN_GATE_EXP) | C(VF_T_FFN_GATE_SHEXP);
    const uint32_t up = C(VF_T_FFN_UP) | C(VF_T_FFN_UP_EXP) | C(VF_T_FFN_UP_SHEXP);
    const uint32_t down = C(VF_T_FFN_DOWN) | C(VF_T_FFN_DOWN_EXP) | C(VF_T_FFN_DOWN_SHEXP);
    const char *l = strstr(e, "layers.");
    if (l && l[7] >= '0' && l[7] <= '9')
        return 0;
    uint32_t k = 0;
    if (strstr(e, "self_attn") || strstr(e, "attention") || strstr(e, ".attn"))
        k |= attn;
    k |= strstr(e, "q_proj") ? C(VF_T_ATTN_Q) : 0;
    k |= strstr(e, "k_proj") ? C(VF_T_ATTN_K) : 0;
    k |= strstr(e, "v_proj") ? C(VF_T_ATTN_V) : 0;
    k |= strstr(e, "qkv_proj") ? C(VF_T_ATTN_QKV) : 0;
    k |= strstr(e, "o_proj") ? C(VF_T_ATTN_O) : 0;
    k |= strstr(e, "gate_proj") ? gate : 0;
    k |= strstr(e, "up_proj") ? up : 0;
    k |= strstr(e, "down_proj") ? down : 0;
    if (strstr(e, "shared_expert"))
        k |= C(VF_T_FFN_GATE_SHEXP) | C(VF_T_FFN_UP_SHEXP) | C(VF_T_FFN_DOWN_SHEXP);
    else if (strstr(e, "experts"))
        k |= C(VF_T_FFN_GATE_EXP) | C(VF_T_FFN_UP_EXP) | C(VF_T_FFN_DOWN_EXP);
    const char *mlp = strstr(e, "mlp");
    /* "mlp.gate" and "mlp.router" are the router, kept anyway */
    if (mlp && !strstr(e, "mlp.gate") && !strstr(e, "router") && !k)
        k |= gate | up | down;
    if (strstr(e, "mamba") || strstr(e, "linear_attn") || strstr(e, "mixer"))
        k |= C(VF_T_SSM);
    return k;
#undef C
}

/* Issue 20: the modules a quantized checkpoint keeps at 16 bits ("ignore" of
 * compressed-tensors, "modules_to_not_convert" of transformers' fp8/awq/bitsandbytes/mxfp4
 * configs, "ignored_layers" of vLLM's fp8 config) leave the scheme's class set (struct
 * vf_quant.classes; 0 there stands for quant.c's linear classes, spelled out here). */
static void kept_modules(const json_t *q, struct vf_model *m)
{
    static const char *const keys[] = {"ignore", "modules_to_not_convert", "ignored_layers"};
    uint32_t kept = 0;
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        const json_t *list = json_object_get(q, keys[i]);
        size_t j;
        json_t *v;
        json_array_foreach((json_t *)list, j, v)
        {
            if (json_is_string(v))
                kept |= kept_classes(json_string_value(v));
        }
    }
    if (!kept)
        return;
    uint32_t set = m->native.classes;
    if (!set)
        for (int c = VF_T_ATTN_Q; c <= VF_T_SSM; c++)
            if (c != VF_T_ROUTER)
                set |= 1u << c;
    m->native.classes = set & ~kept;
}

/* Native storage from torch_dtype and quantization_config (see FORMULAS.md F-W notes). */
static enum vf_err native(const struct cfg *c, struct vf_model *m)
{
    const char *dt = str(c, "torch_dtype");
    json_t *q = json_object_get(c->root, "quantization_config");
    if (!dt)
        dt = str(c, "dtype");
    m->native_dtype = is(dt, "float16") ? VF_DT_F16 : is(dt, "float32") ? VF_DT_F32 : VF_DT_BF16;
    memset(&m->native, 0, sizeof(m->native));
    m->native.kind = VF_QK_PLAIN;
    m->native.dtype = m->native_dtype;
    strcpy(m->native.name, m->native_dtype == VF_DT_F16   ? "fp16"
                           : m->native_dtype == VF_DT_F32 ? "fp32"
                                                          : "bf16");
    if (!q && c->obj != c->root)
        q = json_object_get(c->obj, "quantization_config");
    if (!q || json_is_null(q))
        return VF_OK;

    const char *meth = json_string_value(json_object_get(q, "quant_method"));
    json_int_t grp = json_integer_value(json_object_get(q, "group_size"));
    json_int_t bits = json_integer_value(json_object_get(q, "bits"));
    uint32_t group = grp > 0 && grp <= 65536 ? (uint32_t)grp : 128;
    if (is(meth, "fp8")) {
        bool block = json_object_get(q, "weight_block_size") != NULL;
        m->native.kind = block ? VF_QK_FP8_BLOCK : VF_QK_PLAIN;
        m->native.dtype = VF_DT_FP8;
        m->native.group = block ? 128 : 0;
        strcpy(m->native.name, "fp8");
    } else if (is(meth, "mxfp4")) {
        m->native.dtype = VF_DT_MXFP4;
        m->native.classes =
            1u << VF_T_FFN_GATE_EXP | 1u << VF_T_FFN_UP_EXP | 1u << VF_T_FFN_DOWN_EXP;
        strcpy(m->native.name, "mxfp4");
    } else if (is(meth, "awq") || is(meth, "gptq")) {
        m->native.kind = is(meth, "awq") ? VF_QK_AWQ : VF_QK_GPTQ;
        m->native.dtype = bits == 8 ? VF_DT_INT8 : VF_DT_INT4;
        m->native.group = group;
        strcpy(m->native.name, meth);
    } else if (is(meth, "bitsandbytes")) {
        if (json_is_true(json_object_get(q, "load_in_4bit"))) {
            m->native.kind = VF_QK_NF4;
            m->native.dtype = VF_DT_NF4;
            m->native.group = 64;
            strcpy(m->native.name, "nf4");
        } else {
            m->native.dtype = VF_DT_INT8;
            strcpy(m->native.name, "int8");
        }
    } else if (is(meth, "compressed-tensors")) {
        enum vf_err rc = compressed_tensors(c, q, m);
        if (!rc)
            kept_modules(q, m);
        return rc;
    } else {
        return vf__errf(c->err, VF_EUNSUPPORTED,
                        "config: '%s': quantization_config quant_method '%s' is not supported "
                        "(known: fp8, mxfp4, awq, gptq, bitsandbytes, compressed-tensors)",
                        c->origin, meth ? meth : "(missing)");
    }
    kept_modules(q, m);
    return VF_OK;
}

static const char *dup(struct vf_arena *a, const char *s)
{
    return s ? vf_arena_strdup(a, s) : NULL;
}

/*
 * The dimensions F-PAR-01 and F-KV-01 use: layers, hidden size, heads and vocabulary
 * (required), FFN width, KV heads (dividing the heads), context length (VF_UNKNOWN when
 * absent), tied embeddings (gemma's default), head sizes (hidden / heads when not given),
 * attention kind.
 */
/* Issue 21: the vision encoder of vision_config (SigLIP/CLIP style), for the engines that load
 * it as a projector; left 0 unless its size, layers, image and patch are all given. */
static enum vf_err vision(const struct cfg *c, struct vf_model *m)
{
    json_t *v = json_object_get(c->root, "vision_config");
    if (!v || !json_is_object(v))
        return VF_OK;
    struct cfg vc = {.root = v, .obj = v, .origin = c->origin, .err = c->err};
    enum vf_err rc;
    if ((rc = num_any(&vc, KEYS("hidden_size"), VF_MAX_DIM, 0, &m->vision.hidden)) ||
        (rc = num_any(&vc, KEYS("num_hidden_layers"), VF_MAX_LAYERS, 0, &m->vision.layers)) ||
        (rc = num_any(&vc, KEYS("intermediate_size"), VF_MAX_DIM, 0, &m->vision.ffn)) ||
        (rc = num_any(&vc, KEYS("num_attention_heads"), VF_MAX_DIM, 0, &m->vision.heads)) ||
        (rc = num_any(&vc, KEYS("image_size"), VF_MAX_DIM, 0, &m->vision.image)) ||
        (rc = num_any(&vc, KEYS("patch_size"), VF_MAX_DIM, 0, &m->vision.patch)))
        return rc;
    if (!m->vision.hidden || !m->vision.layers || !m->vision.image || !m->vision.patch)
        memset(&m->vision, 0, sizeof m->vision);
    return VF_OK;
}

static enum vf_err dimensions(const struct cfg *c, struct vf_model *m)
{
    uint64_t v;
    bool present;
    enum vf_err rc;

    if ((rc = req(c, "num_hidden_layers", VF_MAX_LAYERS, &v)))
        return rc;
    m->n_layers = (uint32_t)v;
    if ((rc = req(c, "hidden_size", VF_MAX_DIM, &v)))
        return rc;
    m->hidden = (uint32_t)v;
    if ((rc = req(c, "num_attention_heads", VF_MAX_DIM, &v)))
        return rc;
    m->n_heads = (uint32_t)v;
    if ((rc = req(c, "vocab_size", VF_MAX_DIM, &v)))
        return rc;
    m->vocab = v;
    if ((rc = num_any(c, KEYS("intermediate_size"), VF_MAX_DIM, 0, &m->intermediate)))
        return rc;
    if ((rc = num_any(c, KEYS("num_key_value_heads"), VF_MAX_DIM, m->n_heads, &m->n_kv_heads)))
        return rc;
    if (m->n_kv_heads == 0 || m->n_heads % m->n_kv_heads)
        return vf__errf(c->err, VF_EFORMAT,
                        "config: '%s': num_key_value_heads %u must divide num_attention_heads %u",
                        c->origin, m->n_kv_heads, m->n_heads);
    if ((rc = num(c, "max_position_embeddings", VF_MAX_CTX_TOKENS, &v, &present)))
        return rc;
    m->max_ctx_tokens = present ? v : VF_UNKNOWN;
    m->tied_embeddings = flag(c, "tie_word_embeddings", prefix(m->model_type, "gemma"));

    /* head size: explicit, else hidden / heads */
    if ((rc = num_any(c, KEYS("head_dim", "attention_head_dim"), VF_MAX_DIM, 0, &m->head_dim)))
        return rc;
    if (!m->head_dim) {
        if (m->hidden % m->n_heads)
            return vf__errf(c->err, VF_EFORMAT,
                            "config: '%s': no head_dim, and hidden_size %u "
                            "is not a multiple of num_attention_heads %u",
                            c->origin, m->hidden, m->n_heads);
        m->head_dim = m->hidden / m->n_heads;
    }
    m->head_dim_v = m->head_dim;
    m->attn = m->n_kv_heads == m->n_heads ? VF_ATTN_MHA
              : m->n_kv_heads == 1        ? VF_ATTN_MQA
                                          : VF_ATTN_GQA;
    return VF_OK;
}

/*
 * F-KV-02: MLA (DeepSeek-V2/V3, Kimi K2) when kv_lora_rank is set: the query's LoRA rank,
 * the rope and no-rope parts of the key head, the value head. VF_EFORMAT when the no-rope
 * or value size is missing.
 */
static enum vf_err mla(const struct cfg *c, struct vf_model *m)
{
    enum vf_err rc;
    if ((rc = num_any(c, KEYS("kv_lora_rank"), VF_MAX_DIM, 0, &m->kv_lora_rank)))
        return rc;
    if (!m->kv_lora_rank)
        return VF_OK;
    if ((rc = num_any(c, KEYS("q_lora_rank"), VF_MAX_DIM, 0, &m->q_lora_rank)) ||
        (rc = num_any(c, KEYS("qk_rope_head_dim"), VF_MAX_DIM, 0, &m->qk_rope_dim)) ||
        (rc = num_any(c, KEYS("qk_nope_head_dim"), VF_MAX_DIM, 0, &m->qk_nope_dim)) ||
        (rc = num_any(c, KEYS("v_head_dim"), VF_MAX_DIM, 0, &m->v_head_dim_mla)))
        return rc;
    if (!m->qk_nope_dim || !m->v_head_dim_mla)
        return vf__errf(c->err, VF_EFORMAT,
                        "config: '%s': kv_lora_rank %u needs "
                        "qk_nope_head_dim and v_head_dim",
                        c->origin, m->kv_lora_rank);
    m->attn = VF_ATTN_MLA;
    m->head_dim = m->qk_nope_dim + m->qk_rope_dim;
    m->head_dim_v = m->v_head_dim_mla;
    return VF_OK;
}

/*
 * The MoE terms of F-PAR-01 and F-PAR-02: routed experts (under the three names the families
 * use) and how many a token uses (1..n), their width, dense leading layers, the MoE layer
 * interval, shared experts (one as wide as shared_expert_intermediate_size when that is
 * given; Llama 4's one as wide as a routed one, its dense layers intermediate_size_mlp wide).
 */
static enum vf_err experts(const struct cfg *c, struct vf_model *m)
{
    uint32_t u;
    enum vf_err rc;

    if ((rc = num_any(c, KEYS("num_experts", "n_routed_experts", "num_local_experts"),
                      VF_MAX_EXPERTS, 0, &m->n_experts)) ||
        (rc = num_any(c, KEYS("num_experts_per_tok", "experts_per_token"), VF_MAX_EXPERTS, 0,
                      &m->n_experts_used)))
        return rc;
    if (!m->n_experts) {
        m->n_experts_used = 0;
        return VF_OK;
    }
    if (m->n_experts_used == 0 || m->n_experts_used > m->n_experts)
        return vf__errf(c->err, VF_EFORMAT,
                        "config: '%s': num_experts_per_tok %u must be "
                        "in 1..%u",
                        c->origin, m->n_experts_used, m->n_experts);
    if ((rc = num_any(c, KEYS("moe_intermediate_size"), VF_MAX_DIM, m->intermediate,
                      &m->moe_intermediate)) ||
        (rc = num_any(c, KEYS("first_k_dense_replace"), VF_MAX_LAYERS, 0, &m->first_k_dense)) ||
        (rc = num_any(c, KEYS("interleave_moe_layer_step", "decoder_sparse_step", "moe_layer_freq"),
                      VF_MAX_LAYERS, 1, &m->moe_every)) ||
        (rc = num_any(c, KEYS("n_shared_experts"), 64, 0, &m->n_shared_experts)) ||
        (rc = num_any(c, KEYS("shared_expert_intermediate_size"), VF_MAX_DIM, 0, &u)))
        return rc;
    m->shared_intermediate = m->n_shared_experts ? m->moe_intermediate : 0;
    if (u) {
        m->n_shared_experts = 1;
        m->shared_intermediate = u;
    }
    if (prefix(m->model_type, "llama4")) {
        /* Llama 4: one shared expert as wide as a routed one; dense layers use
         * intermediate_size_mlp */
        m->n_shared_experts = 1;
        m->shared_intermediate = m->moe_intermediate;
        if ((rc = num_any(c, KEYS("intermediate_size_mlp"), VF_MAX_DIM, m->intermediate,
                          &m->intermediate)))
            return rc;
    }
    if (!m->moe_intermediate)
        return vf__errf(c->err, VF_EFORMAT, "config: '%s': missing moe_intermediate_size",
                        c->origin);
    return VF_OK;
}

/*
 * Everything after JSON parsing (c->obj/c->root are set): names, dimensions, MLA, experts,
 * the kind of every layer (F-LAY-01), the tensor groups the config implies with the
 * recurrent and flag-dependent ones (F-PAR-01, F-KV-05) and the native storage. Strings and
 * arrays in arena a.
 */
static enum vf_err parse(struct vf_arena *a, struct cfg *c, struct vf_model *m)
{
    enum vf_err rc;
    const char *mt = str(c, "model_type");

    memset(m, 0, sizeof(*m));
    m->provenance = VF_PROV_CONFIG;
    m->source = dup(a, c->origin);
    m->id = m->source;
    m->model_type = dup(a, mt ? mt : "llama"); /* unknown: read as a llama-like decoder */
    m->name = m->id;                           /* the catalog (models.tsv) names its models */
    if (!m->source || !m->model_type || !m->id)
        return vf__errf(c->err, VF_ENOMEM, "config: '%s': out of memory", c->origin);
    m->encoder_only = vf__encoder_only(m->model_type);
    if ((rc = dimensions(c, m)) || (rc = mla(c, m)) || (rc = experts(c, m)) || (rc = vision(c, m)))
        return rc;
    if (!m->moe_every)
        m->moe_every = 1;

    m->layer_kind = vf_arena_alloc(a, m->n_layers);
    if (!m->layer_kind)
        return vf__errf(c->err, VF_ENOMEM, "config: '%s': out of memory", c->origin);
    if ((rc = layer_kinds(c, m, m->layer_kind)))
        return rc;
    for (uint32_t i = 0; i < m->n_layers; i++)
        if (dense_ffn(m, i) && !m->intermediate)
            return vf__errf(c->err, VF_EFORMAT,
                            "config: '%s': missing intermediate_size "
                            "(layer %u has a dense MLP)",
                            c->origin, i);

    struct extras xs = {.cap = 8 * (size_t)m->n_layers + 8};
    struct extras *x = &xs;
    x->g = vf__arena_take(a, x->cap * sizeof(*x->g)); /* filled up to x->n */
    if (!x->g)
        return vf__errf(c->err, VF_ENOMEM, "config: '%s': out of memory", c->origin);
    if ((rc = recurrent(c, m, x)))
        return rc;
    flag_tensors(c, m, x);
    if ((rc = native(c, m)))
        return rc;
    m->exact_weight_bytes = VF_UNKNOWN;

    m->groups = x->g;
    m->n_groups = x->n;
    if ((rc = vf__model_build_groups(a, m, c->err))) {
        vf__err_prefix(c->err, "config: '%s'", c->origin);
        return rc;
    }
    return VF_OK;
}

/*
 * Parses config.json text (len bytes, not necessarily NUL-terminated) into *out, all
 * strings and arrays in arena a. origin names the file in messages. Keys of a nested
 * "text_config" are used when the top level has no num_hidden_layers (multimodal
 * wrappers). Errors: VF_ELIMIT (too big, dimension over a limit), VF_EFORMAT (not JSON,
 * missing or inconsistent keys, naming the key), VF_EUNSUPPORTED (unknown quantization
 * or layer type), VF_ENOMEM.
 */
enum vf_err vf_model_from_config(struct vf_arena *a, const char *json, size_t len,
                                 const char *origin, struct vf_model *out, struct vf_error *err)
{
    struct cfg c = {.origin = origin ? origin : "config.json", .err = err};
    json_error_t jerr;
    enum vf_err rc;

    if (!a || !json || !out)
        return vf__errf(err, VF_EINVAL, "config: no arena, text or output given");
    if (len > VF_MAX_CONFIG_JSON_BYTES)
        return vf__errf(err, VF_ELIMIT, "config: '%s': %zu bytes exceed the limit of %zu", c.origin,
                        len, VF_MAX_CONFIG_JSON_BYTES);
    c.root = vf__json_loadb(json, len, 0, &jerr);
    if (!c.root && vf__json_nomem(&jerr))
        return vf__errf(err, VF_ENOMEM, "config: out of memory reading '%s'", c.origin);
    if (!c.root)
        return vf__errf(err, VF_EFORMAT, "config: '%s': not JSON: %s at line %d column %d",
                        c.origin, jerr.text, jerr.line, jerr.column);
    if (!json_is_object(c.root)) {
        json_decref(c.root);
        return vf__errf(err, VF_EFORMAT, "config: '%s': top level is not a JSON object", c.origin);
    }
    c.obj = c.root;
    json_t *tc = json_object_get(c.root, "text_config");
    if (tc && json_is_object(tc) && !json_object_get(c.root, "num_hidden_layers"))
        c.obj = tc;
    rc = parse(a, &c, out);
    json_decref(c.root);
    return rc;
}
