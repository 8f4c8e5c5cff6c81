/* SPDX-License-Identifier: Apache-2.0 */
/*
 * est_transformers.c - Hugging Face transformers inference: `model.generate()` of a causal LM
 * loaded with from_pretrained(torch_dtype=..., device_map=..., attn_implementation=...,
 * quantization_config=BitsAndBytesConfig(...)), as transformers 4.57 and accelerate 1.x run
 * it. Formulas F-HF-01..12 in docs/FORMULAS.md.
 *
 * One generate call: a prefill forward over the prompts of the whole batch, then one decode
 * forward per new token. The peak of each GPU is the larger of the two phases:
 *   prefill = weights + KV cache of the prompts (static cache: the whole max length) + the
 *             largest per-layer transient + the prefill logits + runtime overhead;
 *   decode  = weights + KV cache at its final length + the DynamicCache's torch.cat copy of
 *             one layer + one step's logits + runtime overhead.
 * device_map="auto" splits the modules in order over the GPUs as accelerate's
 * get_balanced_memory + infer_auto_device_map place them (F-HF-09); every GPU then holds the
 * KV cache and the transients of its own layers, the last one the lm_head and its logits.
 */
#include "internal.h"
#include "engine/runtime.h"
#include "engine/terms.h"

#include <stdio.h>
#include <string.h>

/* F-HF-02: tokens generate() adds when --max-new-tokens is not given. */
#define TF_DEFAULT_NEW_TOKENS 256
/* F-HF-09: accelerate's get_balanced_memory adds 1.25 x the largest no-split block per GPU. */
#define TF_BALANCE_NUM 5
#define TF_BALANCE_DEN 4
/* F-HF-09: the bitsandbytes quantizers' adjust_max_memory keeps 90 % of each device. */
#define TF_BNB_MAX_MEMORY_PCT 90
/* Bound on --logits-to-keep and --max-new-tokens. */
#define TF_MAX_TOKENS VF_MAX_CTX_TOKENS
/* Per-GPU components (weights, kv_cache, activations per GPU, logits, overhead) fit the
 * component table up to this many GPUs; beyond it the most loaded GPU is shown. */
#define TF_MAX_SPLIT_ROWS 3

enum tf_attn { TF_SDPA = 0, TF_EAGER, TF_FA2 };
enum tf_map { TF_MAP_AUTO = 0, TF_MAP_CUDA };

/* One resolved generate() call: the flags with their defaults applied. */
struct tf_run {
    uint64_t ctx, prompt, new_tokens, kv_len, batch, keep;
    uint32_t n; /* GPUs */
    enum tf_map map;
    enum tf_attn attn;
    bool static_cache;
    unsigned bnb; /* 0, 8 or 4 */
    enum vf_dtype dt;
    uint64_t dtb; /* bytes of one element of dt */
    struct vf_quant q;
    uint64_t usable; /* per card, VF_UNKNOWN when no card */
    bool new_clamped;
};

/* What one GPU holds at the peak (F-HF-10). */
struct tf_gpu {
    uint64_t weights, layers_w;
    uint32_t first_layer, n_layers;
    bool embed, head, tail;
    uint64_t kv_pre, kv_dec;
    uint64_t act_pre, act_dec;
    uint64_t logits_pre, logits_dec;
    uint64_t overhead_pre, overhead_dec;
    uint64_t total_pre, total_dec;
};

#define TF_GPUS_MAX 64u

struct tf_result {
    struct tf_gpu g[TF_GPUS_MAX];
    uint32_t n;
    uint64_t host_w;       /* weights accelerate offloads to the CPU */
    uint32_t host_layers;  /* decoder layers offloaded */
    uint64_t total;        /* the most loaded GPU */
    uint32_t peak_gpu;     /* its index */
    uint64_t kv_per_token; /* all layers, one sequence */
    uint64_t layer_act;    /* F-HF-05: per-layer transient of the prefill, one GPU */
};

/* device_map="auto" splits by whole decoder layers: at most one GPU per layer. */
static bool tf_can_split(const struct vf_model *m, const struct vf_workload *w, uint32_t n,
                         const char **why)
{
    (void)w;
    *why = NULL;
    if (n <= 1)
        return true;
    if (n > TF_GPUS_MAX) {
        *why = "vramfit models device_map=\"auto\" over at most 64 GPUs";
        return false;
    }
    if (n > m->n_layers) {
        *why = "device_map=\"auto\" splits by whole decoder layers: more GPUs than layers";
        return false;
    }
    return true;
}

static const char *attn_name(enum tf_attn a)
{
    return a == TF_EAGER ? "eager" : a == TF_FA2 ? "flash_attention_2" : "sdpa";
}

static const char *torch_dtype_name(enum vf_dtype t)
{
    return t == VF_DT_F32 ? "float32" : t == VF_DT_F16 ? "float16" : "bfloat16";
}

/* Parses a count option into *out; VF_EINVAL naming the flag. */
static enum vf_err opt_count(const char *flag, const char *v, uint64_t lo, uint64_t hi,
                             uint64_t *out, struct vf_error *err)
{
    uint64_t x;
    if (!v || !*v || vf_parse_tokens(v, &x, NULL) || x < lo || x > hi)
        return vf__errf(err, VF_EINVAL, "transformers: %s '%s': expected a count from %llu to %llu",
                        flag, v ? v : "", (unsigned long long)lo, (unsigned long long)hi);
    *out = x;
    return VF_OK;
}

/* F-HF-02: the cards, the batch, the context and the card's usable bytes of w, checked
 * against the limits (VF_ERANGE; VF_ELIMIT for a model without layers or with too many). */
static enum vf_err resolve_sizes(const struct vf_model *m, const struct vf_workload *w,
                                 struct tf_run *r, struct vf_error *err)
{
    r->n = w->gpus ? w->gpus : 1;
    r->batch = w->users ? w->users : 1;
    r->ctx = vf__term_ctx(m, w);
    r->usable = w->usable_bytes && w->usable_bytes != VF_UNKNOWN ? w->usable_bytes : VF_UNKNOWN;
    if (r->ctx > VF_MAX_CTX_TOKENS)
        return vf__errf(err, VF_ERANGE, "a context of %llu tokens is over the limit of %llu",
                        (unsigned long long)r->ctx, (unsigned long long)VF_MAX_CTX_TOKENS);
    if (r->batch > VF_MAX_USERS)
        return vf__errf(err, VF_ERANGE, "a batch of %llu is over the limit of %llu",
                        (unsigned long long)r->batch, (unsigned long long)VF_MAX_USERS);
    if (m->n_layers == 0 || m->n_layers > VF_MAX_LAYERS)
        return vf__errf(err, VF_ELIMIT, "'%s': %u layers is outside 1..%d", m->id, m->n_layers,
                        VF_MAX_LAYERS);
    return VF_OK;
}

/* F-HF-09: --device-map (auto splits the layers over the cards, cuda puts all on one), and
 * whether the cards can split the model. */
static enum vf_err resolve_map(const struct vf_model *m, const struct vf_workload *w,
                               struct tf_run *r, struct vf_error *err)
{
    const char *v = vf_engine_opt(&w->opts, "--device-map");
    if (!v || !vf__strcasecmp(v, "auto"))
        r->map = TF_MAP_AUTO;
    else if (!vf__strcasecmp(v, "cuda") || !vf__strcasecmp(v, "cuda:0"))
        r->map = TF_MAP_CUDA;
    else
        return vf__errf(err, VF_EINVAL, "transformers: --device-map '%s': expected auto or cuda",
                        v);
    if (r->map == TF_MAP_CUDA && r->n > 1)
        return vf__errf(err, VF_EINVAL,
                        "transformers: --device-map cuda puts the whole model on one GPU; "
                        "--device-map auto splits its layers over %u GPUs",
                        r->n);
    return vf__term_check_split(m, w, &vf__engine_transformers, r->n, false, err);
}

/* F-HF-06, F-HF-08: --attn-implementation, --cache and --logits-to-keep. */
static enum vf_err resolve_flags(const struct vf_workload *w, struct tf_run *r,
                                 struct vf_error *err)
{
    const struct vf_engine_opts *o = &w->opts;
    const char *v = vf_engine_opt(o, "--attn-implementation");
    if (!v || !vf__strcasecmp(v, "sdpa"))
        r->attn = TF_SDPA;
    else if (!vf__strcasecmp(v, "eager"))
        r->attn = TF_EAGER;
    else if (!vf__strcasecmp(v, "flash_attention_2") || !vf__strcasecmp(v, "fa2"))
        r->attn = TF_FA2;
    else
        return vf__errf(err, VF_EINVAL,
                        "transformers: --attn-implementation '%s': expected sdpa, eager or "
                        "flash_attention_2",
                        v);

    v = vf_engine_opt(o, "--cache");
    if (!v || !vf__strcasecmp(v, "dynamic"))
        r->static_cache = false;
    else if (!vf__strcasecmp(v, "static"))
        r->static_cache = true;
    else
        return vf__errf(err, VF_EINVAL, "transformers: --cache '%s': expected dynamic or static",
                        v);

    r->keep = 1;
    v = vf_engine_opt(o, "--logits-to-keep");
    if (v && (!vf__strcasecmp(v, "all") || !strcmp(v, "0")))
        r->keep = 0;
    else if (v)
        return opt_count("--logits-to-keep", v, 0, TF_MAX_TOKENS, &r->keep, err);
    return VF_OK;
}

/* F-HF-02: ctx = prompt + new tokens per sequence; the cache's final length. */
static enum vf_err resolve_tokens(const struct vf_workload *w, struct tf_run *r,
                                  struct vf_error *err)
{
    const char *v = vf_engine_opt(&w->opts, "--max-new-tokens");
    r->new_tokens = TF_DEFAULT_NEW_TOKENS;
    if (v) {
        enum vf_err rc = opt_count("--max-new-tokens", v, 0, TF_MAX_TOKENS, &r->new_tokens, err);
        if (rc)
            return rc;
    }
    if (r->new_tokens >= r->ctx) {
        r->new_clamped = v != NULL;
        r->new_tokens = r->ctx > TF_DEFAULT_NEW_TOKENS * 2 ? TF_DEFAULT_NEW_TOKENS : r->ctx / 2;
    }
    r->prompt = r->ctx - r->new_tokens;
    /* generate() never feeds its last token back: the cache ends at max_length - 1, and
     * StaticCache is sized max_cache_len = max_length - 1 (generation/utils.py) */
    r->kv_len = r->new_tokens ? r->ctx - 1 : r->ctx;
    return VF_OK;
}

/* F-HF-01: --torch-dtype with bitsandbytes' default (float16 when unset), else the model's. */
static enum vf_err resolve_dtype(const struct vf_model *m, const struct vf_workload *w, bool bnb,
                                 struct tf_run *r, struct vf_error *err)
{
    const char *v = vf_engine_opt(&w->opts, "--torch-dtype");
    enum vf_dtype td = VF_DT_DEFAULT;
    if (v && !vf__strcasecmp(v, "bfloat16"))
        td = VF_DT_BF16;
    else if (v && !vf__strcasecmp(v, "float16"))
        td = VF_DT_F16;
    else if (v && !vf__strcasecmp(v, "float32"))
        td = VF_DT_F32;
    else if (v && vf__strcasecmp(v, "auto"))
        return vf__errf(err, VF_EINVAL,
                        "transformers: --torch-dtype '%s': expected bfloat16, float16, float32 "
                        "or auto",
                        v);
    enum vf_dtype native =
        m->native_dtype == VF_DT_F16 || m->native_dtype == VF_DT_F32 ? m->native_dtype : VF_DT_BF16;
    /* bitsandbytes overrides an unset torch_dtype with float16 (quantizer update_dtype) */
    if (td == VF_DT_DEFAULT)
        td = bnb && !v ? VF_DT_F16 : native;
    r->dt = td;
    r->dtb = td == VF_DT_F32 ? 4 : 2;
    if (td == VF_DT_F32 && bnb)
        return vf__errf(err, VF_EUNSUPPORTED,
                        "transformers: --torch-dtype float32 with bitsandbytes is not modelled "
                        "(use bfloat16 or float16)");
    return VF_OK;
}

/* F-HF-01: the weights' storage (bitsandbytes, --weights, the checkpoint's own, or plain at
 * the dtype) and the KV cache type, which transformers keeps in the model dtype. */
static enum vf_err resolve_storage(const struct vf_model *m, const struct vf_workload *w,
                                   struct tf_run *r, struct vf_error *err)
{
    enum vf_err rc;
    bool b8 = vf_engine_opt(&w->opts, "--load-in-8bit") != NULL;
    bool b4 = vf_engine_opt(&w->opts, "--load-in-4bit") != NULL;
    if (b8 && b4)
        return vf__errf(err, VF_EINVAL,
                        "transformers: --load-in-8bit and --load-in-4bit exclude each other");
    if ((rc = resolve_dtype(m, w, b8 || b4, r, err)))
        return rc;
    if (b8 || b4) {
        r->bnb = b8 ? 8 : 4;
        if ((rc = vf_quant_parse(b8 ? "int8" : "nf4", &r->q, err)))
            return rc;
    } else if (w->weights.kind != VF_QK_NATIVE) {
        if (w->weights.kind == VF_QK_GGUF_FTYPE)
            return vf__errf(err, VF_EUNSUPPORTED,
                            "transformers: --weights %s is a llama.cpp file type (transformers "
                            "loads safetensors; --load-in-4bit/--load-in-8bit quantize)",
                            w->weights.name);
        r->q = w->weights;
    } else if (m->native.kind != VF_QK_NATIVE && m->native.kind != VF_QK_PLAIN) {
        r->q = m->native; /* AWQ/GPTQ/FP8 checkpoints load as stored */
    } else {
        if ((rc = vf_quant_parse(vf_dtype_name(r->dt), &r->q, err)))
            return rc;
    }

    if (w->kv_dtype != VF_DT_DEFAULT && w->kv_dtype != r->dt &&
        !((w->kv_dtype == VF_DT_BF16 || w->kv_dtype == VF_DT_F16) && r->dtb == 2))
        return vf__errf(err, VF_EUNSUPPORTED,
                        "transformers: the KV cache is kept in the model dtype (%s); "
                        "--kv-dtype %s (QuantizedCache) is not modelled",
                        torch_dtype_name(r->dt), vf_dtype_name(w->kv_dtype));
    return VF_OK;
}

/*
 * Resolves the workload and the engine's flags into r (F-HF-01/02). Errors: VF_EINVAL for a
 * flag value outside its accepted forms or contradicting flags, VF_ERANGE for sizes over the
 * limits, VF_EUNSUPPORTED for what transformers does not do (a GGUF recipe as --weights).
 */
static enum vf_err resolve(const struct vf_model *m, const struct vf_workload *w, struct tf_run *r,
                           struct vf_error *err)
{
    enum vf_err rc;
    memset(r, 0, sizeof *r);
    if ((rc = resolve_sizes(m, w, r, err)) || (rc = resolve_map(m, w, r, err)) ||
        (rc = resolve_flags(w, r, err)) || (rc = resolve_tokens(w, r, err)) ||
        (rc = resolve_storage(m, w, r, err)))
        return rc;
    return VF_OK;
}

/* Elements per tensor of a group, and its output width. */
static uint64_t per_tensor(const struct vf_tgroup *g)
{
    return g->n_tensors ? g->n_params / g->n_tensors : g->n_params;
}

static enum vf_layer_kind kind_of(const struct vf_model *m, uint32_t l)
{
    return m->layer_kind ? (enum vf_layer_kind)m->layer_kind[l] : VF_LAYER_ATTN_FULL;
}

/*
 * F-HF-03: KV cache bytes of layer l for `seqs` sequences of `tokens` tokens, as transformers'
 * caches store them: K and V per KV head at head_dim/head_dim_v; sliding-window layers keep at
 * most the window (DynamicSlidingWindowLayer); MLA models cache the decompressed K (nope + rope)
 * and V of every head, not the latent; recurrent layers a fixed state per sequence.
 */
static uint64_t layer_kv(const struct vf_model *m, const struct tf_run *r, uint32_t l,
                         uint64_t tokens, uint64_t seqs)
{
    enum vf_layer_kind k = kind_of(m, l);
    if (k == VF_LAYER_MLP_ONLY)
        return 0;
    if (k == VF_LAYER_RECURRENT) {
        uint32_t nrec = 0;
        for (uint32_t i = 0; i < m->n_layers; i++)
            nrec += kind_of(m, i) == VF_LAYER_RECURRENT;
        return vf__sat_mul(vf__div_ceil(m->recurrent_state_bytes, nrec ? nrec : 1), seqs);
    }
    uint64_t t = tokens;
    if (k == VF_LAYER_ATTN_SLIDING && m->sliding_window && t > m->sliding_window)
        t = m->sliding_window;
    uint64_t per;
    if (m->attn == VF_ATTN_MLA) {
        per = (uint64_t)m->n_heads *
              ((uint64_t)m->qk_nope_dim + m->qk_rope_dim + m->v_head_dim_mla) * r->dtb;
    } else {
        uint64_t h = m->layer_kv_heads ? m->layer_kv_heads[l] : m->n_kv_heads;
        per = h * ((uint64_t)m->head_dim + m->head_dim_v) * r->dtb;
    }
    return vf__sat_mul(vf__sat_mul(per, t), seqs);
}

/* The largest single K (or V) tensor of one layer at `tokens` (the torch.cat copy, F-HF-07). */
static uint64_t layer_cat(const struct vf_model *m, const struct tf_run *r, uint64_t tokens)
{
    uint64_t heads, d;
    if (m->attn == VF_ATTN_MLA) {
        heads = m->n_heads;
        d = (uint64_t)m->qk_nope_dim + m->qk_rope_dim;
    } else {
        heads = m->n_kv_heads;
        d = m->head_dim > m->head_dim_v ? m->head_dim : m->head_dim_v;
    }
    return vf__sat_mul(vf__sat_mul(heads * d * r->dtb, tokens), r->batch);
}

/* Module sizes in the order accelerate walks LlamaForCausalLM (F-HF-09). */
struct tf_modules {
    uint64_t embed, head, tail; /* tail: final norm and other non-layer tensors */
    uint64_t layer[VF_MAX_LAYERS];
    bool tied;
    uint64_t max_lin_elems, max_lin_out; /* largest quantized linear (F-HF-06) */
};

static enum vf_err modules_of(const struct vf_model *m, const struct tf_run *r,
                              struct tf_modules *x, struct vf_error *err)
{
    memset(x, 0, sizeof *x);
    bool head = false;
    for (size_t i = 0; i < m->n_groups; i++) {
        const struct vf_tgroup *g = &m->groups[i];
        uint64_t b = vf__quant_group_bytes(m, &r->q, g);
        if (b == VF_UNKNOWN)
            return vf__errf(err, VF_ERANGE, "'%s': the weight bytes are unknown or overflow",
                            m->id);
        if (g->layer >= 0 && (uint32_t)g->layer < m->n_layers) {
            x->layer[g->layer] = vf__sat_add(x->layer[g->layer], b);
            if (b < vf__sat_mul(g->n_params, 2) && g->row_elems) {
                uint64_t pt = per_tensor(g);
                if (pt > x->max_lin_elems)
                    x->max_lin_elems = pt;
                if (pt / g->row_elems > x->max_lin_out)
                    x->max_lin_out = pt / g->row_elems;
            }
        } else if (g->cls == VF_T_TOKEN_EMBD) {
            x->embed = vf__sat_add(x->embed, b);
        } else if (g->cls == VF_T_OUTPUT) {
            x->head = vf__sat_add(x->head, b);
            head = true;
        } else {
            x->tail = vf__sat_add(x->tail, b);
        }
    }
    x->tied = !head;
    return VF_OK;
}

/*
 * F-HF-05: the per-token bytes of the largest transient inside one decoder layer of the
 * prefill, at the compute dtype (dt bytes):
 *   MLP (SwiGLU): residual + normed input 2h, act(gate), up and their product 3I;
 *   MoE: 3h (residual, input, the accumulated output) + fp32 router probabilities 4E/dt +
 *     one expert processing every token 3Ie, or the shared experts 3Is;
 *   attention: 2h + q, its rotary temporaries 3q, and k's 2kv (k and v themselves are cache);
 *   RMSNorm: the input (dt) and two fp32 temporaries (the upcast and its square): 8h/dt.
 * Returns bytes per token.
 */
static uint64_t layer_peak_per_token(const struct vf_model *m, const struct tf_run *r)
{
    uint64_t h = m->hidden, dt = r->dtb;
    uint64_t q = (uint64_t)m->n_heads *
                 (m->attn == VF_ATTN_MLA ? (uint64_t)m->qk_nope_dim + m->qk_rope_dim : m->head_dim);
    uint64_t kv = m->attn == VF_ATTN_MLA ? q : (uint64_t)m->n_kv_heads * m->head_dim;
    uint64_t mlp = (2 * h + 3 * (uint64_t)m->intermediate) * dt;
    if (m->n_experts) {
        uint64_t ie = m->moe_intermediate, is = m->shared_intermediate;
        if (m->n_shared_experts && !is)
            is = ie * m->n_shared_experts;
        uint64_t in = ie > is ? ie : is;
        uint64_t moe = (3 * h + 3 * in) * dt + 4 * (uint64_t)m->n_experts;
        bool dense_too = m->first_k_dense || m->moe_every > 1;
        mlp = dense_too && mlp > moe ? mlp : moe;
    }
    uint64_t attn = (2 * h + 4 * q + 2 * kv) * dt;
    uint64_t norm = h * dt + 8 * h;
    uint64_t p = mlp > attn ? mlp : attn;
    return p > norm ? p : norm;
}

/*
 * F-HF-06: the attention's own transient on top of the layer peak for q query tokens over k
 * keys per sequence (b sequences):
 *   eager: the scores b*heads*q*k at S bytes each (matmul out, the fp32 softmax of torch's
 *     non-Half path: bf16 2 + fp32 copy 4 + fp32 out 4 = 10; fp16 2 + 4 + 2 = 8; fp32 8),
 *     the additive mask b*q*k at dt, and repeat_kv's K and V copies 2*b*heads*k*d*dt;
 *   sdpa with a mask (static cache, whose keys are the whole max_cache_len): the bool mask
 *     b*q*k and repeat_kv's copies (torch's enable_gqa is used only without a mask);
 *   sdpa without a mask, flash_attention_2: nothing beyond the layer peak.
 */
static uint64_t attn_extra(const struct vf_model *m, const struct tf_run *r, uint64_t qn,
                           uint64_t kn)
{
    uint64_t b = r->batch, nh = m->n_heads, dt = r->dtb;
    uint64_t d = m->attn == VF_ATTN_MLA ? (uint64_t)m->qk_nope_dim + m->qk_rope_dim : m->head_dim;
    uint64_t qk = vf__sat_mul(vf__sat_mul(b, qn), kn);
    uint64_t rep = vf__sat_mul(vf__sat_mul(2 * b * nh, kn), d * dt);
    if (r->attn == TF_EAGER) {
        uint64_t s = r->dt == VF_DT_BF16 ? 10 : 8;
        uint64_t scores = vf__sat_mul(vf__sat_mul(qk, nh), s);
        return vf__sat_add(vf__sat_add(scores, vf__sat_mul(qk, dt)), rep);
    }
    if (r->attn == TF_SDPA && r->static_cache)
        return vf__sat_add(qk, rep);
    return 0;
}

/*
 * F-HF-06: bitsandbytes' own transient for T tokens through the largest quantized linear:
 * 4-bit dequantizes the weight to the compute dtype for every matmul of more than one token
 * (gemv_4bit only for a single token); LLM.int8 writes an int32 product and its fp16 copy
 * (4 + 2 B per output) and an int8 copy of the input.
 */
static uint64_t bnb_extra(const struct vf_model *m, const struct tf_run *r,
                          const struct tf_modules *x, uint64_t tokens)
{
    if (r->bnb == 4)
        return tokens > 1 ? vf__sat_mul(x->max_lin_elems, r->dtb) : 0;
    if (r->bnb == 8)
        return vf__sat_mul(tokens, vf__sat_add(6 * x->max_lin_out, m->hidden));
    return 0;
}

/*
 * F-HF-09: accelerate's placement of the modules (embed, layers, final norm, lm_head; a tied
 * lm_head stays with the embedding) over n GPUs. get_balanced_memory gives every GPU but the
 * last min(free, total/n + 1.25 x the largest layer); infer_auto_device_map keeps the largest
 * module free on GPU 0 (for offloaded layers) and fills the GPUs in order; what does not fit
 * the last GPU is offloaded to the CPU. free is the card minus the CUDA context (x 0.9 with
 * bitsandbytes); no card given = no limit on the last GPU. device_map="cuda": all on GPU 0.
 * Fills gpu[i].weights, first_layer, n_layers, embed, head, and res->host_*.
 */
static void place(const struct vf_model *m, const struct tf_run *r, const struct tf_modules *x,
                  struct tf_result *res)
{
    uint32_t n = r->n, L = m->n_layers;
    uint64_t total = vf__sat_add(vf__sat_add(x->embed, x->head), x->tail), max_layer = 0;
    for (uint32_t l = 0; l < L; l++) {
        total = vf__sat_add(total, x->layer[l]);
        if (x->layer[l] > max_layer)
            max_layer = x->layer[l];
    }
    uint64_t max_module = max_layer;
    if (x->embed > max_module)
        max_module = x->embed;
    if (x->head > max_module)
        max_module = x->head;

    uint64_t cap[TF_GPUS_MAX];
    uint64_t free_b = VF_UNKNOWN;
    if (r->usable != VF_UNKNOWN)
        free_b = r->usable > VF_RT_CUDA_CONTEXT_BYTES ? r->usable - VF_RT_CUDA_CONTEXT_BYTES : 0;
    if (free_b != VF_UNKNOWN && r->bnb)
        free_b = free_b / 100 * TF_BNB_MAX_MEMORY_PCT;
    uint64_t per_gpu = vf__sat_add(total / n, max_layer * TF_BALANCE_NUM / TF_BALANCE_DEN);
    for (uint32_t i = 0; i < n; i++)
        cap[i] = i + 1 < n ? (per_gpu < free_b ? per_gpu : free_b) : free_b;
    if (r->map == TF_MAP_CUDA)
        cap[0] = VF_UNKNOWN; /* .to("cuda"): no planner, no offload */
    else if (cap[0] != VF_UNKNOWN)
        cap[0] = cap[0] > max_module ? cap[0] - max_module : 0;

    /* modules in order: 0 embed, 1..L layers, L+1 tail, L+2 head */
    uint32_t dev = 0;
    uint64_t used[TF_GPUS_MAX] = {0};
    for (uint32_t i = 0; i < L + 3; i++) {
        uint64_t sz = i == 0       ? x->embed + (x->tied ? x->head : 0)
                      : i <= L     ? x->layer[i - 1]
                      : i == L + 1 ? x->tail
                      : x->tied    ? 0
                                   : x->head;
        while (dev < n && cap[dev] != VF_UNKNOWN && vf__sat_add(used[dev], sz) > cap[dev])
            dev++;
        if (dev >= n) {
            res->host_w = vf__sat_add(res->host_w, sz);
            res->host_layers += i >= 1 && i <= L;
            continue;
        }
        struct tf_gpu *g = &res->g[dev];
        used[dev] = vf__sat_add(used[dev], sz);
        g->weights = used[dev];
        if (i == 0) {
            g->embed = true;
            g->head |= x->tied;
        } else if (i <= L) {
            if (!g->n_layers)
                g->first_layer = i - 1;
            g->n_layers++;
            g->layers_w = vf__sat_add(g->layers_w, sz);
        } else if (i == L + 1) {
            g->tail = true;
        } else if (!x->tied) {
            g->head = true;
        }
    }
    /* an offloaded layer is copied to GPU 0 to run: the reserve accelerate kept */
    if (res->host_w)
        res->g[0].weights = vf__sat_add(res->g[0].weights, max_module);
}

/*
 * The estimate of one run: per-GPU totals of both phases (F-HF-04..11). Fills res; returns
 * VF_ERANGE when a size overflows.
 */
static enum vf_err compute(const struct vf_model *m, const struct tf_run *r,
                           const struct tf_modules *x, struct tf_result *res, struct vf_error *err)
{
    memset(res, 0, sizeof *res);
    res->n = r->n;
    place(m, r, x, res);

    uint64_t dt = r->dtb, b = r->batch, V = m->vocab, h = m->hidden;
    uint64_t T = vf__sat_mul(b, r->prompt); /* prefill tokens */
    uint64_t kv_pre_len = r->static_cache ? r->kv_len : r->prompt;
    uint64_t keys_pre = r->static_cache ? r->kv_len : r->prompt;
    uint64_t keys_dec = r->kv_len;

    for (uint32_t l = 0; l < m->n_layers; l++)
        res->kv_per_token = vf__sat_add(res->kv_per_token, layer_kv(m, r, l, 1, 1));
    res->layer_act = vf__sat_mul(T, layer_peak_per_token(m, r));

    /* F-HF-05/06: the prefill transient of one GPU with layers: the layer peak or the
     * attention's own (at the attention, the MLP's tensors are not alive), the rotary cos/sin
     * (2 x head_dim per token), the incoming hidden state copy, bitsandbytes' buffers */
    uint64_t attn_pre =
        vf__sat_add(vf__sat_mul(T, (2 * h) * dt), attn_extra(m, r, r->prompt, keys_pre));
    uint64_t act_pre = res->layer_act > attn_pre ? res->layer_act : attn_pre;
    act_pre = vf__sat_add(act_pre, vf__sat_mul(T, 2 * (uint64_t)m->head_dim * dt + h * dt));
    act_pre = vf__sat_add(act_pre, bnb_extra(m, r, x, T));

    /* F-HF-07: a decode step: b tokens through one layer (tiny), the attention over the whole
     * cache, the DynamicCache's torch.cat of one layer's K (old and new alive together) */
    uint64_t act_dec = vf__sat_mul(b, layer_peak_per_token(m, r));
    act_dec = vf__sat_add(act_dec, attn_extra(m, r, 1, keys_dec));
    act_dec = vf__sat_add(act_dec, bnb_extra(m, r, x, b));
    if (!r->static_cache)
        act_dec = vf__sat_add(act_dec, layer_cat(m, r, r->kv_len));

    /* F-HF-08: logits: lm_head output for the kept rows at dt + generate's fp32 copy of the
     * last row (and in decode the processors' fp32 scores of one row more) */
    uint64_t rows = r->keep == 0 || r->keep > r->prompt ? r->prompt : r->keep;
    uint64_t logits_pre =
        vf__sat_add(vf__term_logits(vf__sat_mul(b, rows), V, dt), vf__term_logits(b, V, 4));
    uint64_t logits_dec = vf__term_logits(b, V, dt + 8);

    bool any_head = false;
    for (uint32_t i = 0; i < r->n; i++)
        any_head |= res->g[i].head;
    for (uint32_t i = 0; i < r->n; i++) {
        struct tf_gpu *g = &res->g[i];
        for (uint32_t l = g->first_layer; l < g->first_layer + g->n_layers; l++) {
            g->kv_pre = vf__sat_add(g->kv_pre, layer_kv(m, r, l, kv_pre_len, b));
            g->kv_dec = vf__sat_add(g->kv_dec, layer_kv(m, r, l, r->kv_len, b));
        }
        if (i == 0 && res->host_layers) /* offloaded layers keep their cache on GPU 0 */
            for (uint32_t l = m->n_layers - res->host_layers; l < m->n_layers; l++) {
                g->kv_pre = vf__sat_add(g->kv_pre, layer_kv(m, r, l, kv_pre_len, b));
                g->kv_dec = vf__sat_add(g->kv_dec, layer_kv(m, r, l, r->kv_len, b));
            }
        bool runs = g->n_layers || (i == 0 && res->host_layers);
        g->act_pre = runs ? act_pre : g->embed ? vf__sat_mul(T, h * dt) : 0;
        g->act_dec = runs ? act_dec : 0;
        /* an offloaded lm_head runs on GPU 0, the execution device of the offload hooks */
        bool head_here = g->head || (i == 0 && !any_head);
        g->logits_pre = head_here ? logits_pre : 0;
        g->logits_dec = head_here ? logits_dec : 0;
        /* F-HF-11: PyTorch's runtime overhead, slack on this phase's transients */
        g->overhead_pre = vf__term_torch_overhead(vf__sat_add(g->act_pre, g->logits_pre));
        g->overhead_dec = vf__term_torch_overhead(vf__sat_add(g->act_dec, g->logits_dec));
        g->total_pre =
            vf__sat_add(vf__sat_add(g->weights, g->kv_pre),
                        vf__sat_add(vf__sat_add(g->act_pre, g->logits_pre), g->overhead_pre));
        g->total_dec =
            vf__sat_add(vf__sat_add(g->weights, g->kv_dec),
                        vf__sat_add(vf__sat_add(g->act_dec, g->logits_dec), g->overhead_dec));
        uint64_t t = g->total_pre > g->total_dec ? g->total_pre : g->total_dec;
        if (t == VF_UNKNOWN)
            return vf__errf(err, VF_ERANGE, "'%s': the estimate overflows 64 bits", m->id);
        if (t > res->total) {
            res->total = t;
            res->peak_gpu = i;
        }
    }
    return VF_OK;
}

/* One run from scratch (the fixes re-run it on changed settings). */
static enum vf_err run_once(const struct vf_model *m, const struct tf_run *r, struct tf_modules *x,
                            struct tf_result *res, struct vf_error *err)
{
    enum vf_err rc = modules_of(m, r, x, err);
    return rc ? rc : compute(m, r, x, res, err);
}

/* The module table and the per-GPU result of one run (about 17 KiB: on the stack). */
struct tf_scratch {
    struct tf_modules x;
    struct tf_result res;
};

static uint64_t total_of(const struct vf_model *m, const struct tf_run *r, struct tf_scratch *s)
{
    if (run_once(m, r, &s->x, &s->res, NULL))
        return VF_UNKNOWN;
    return s->res.total;
}

/* The largest v in [1, hi] for which setter(v) fits usable (0 when none). */
static uint64_t largest(const struct vf_model *m, const struct tf_run *base, struct tf_scratch *s,
                        bool prompt, uint64_t hi)
{
    uint64_t lo = 0;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo + 1) / 2;
        struct tf_run r = *base;
        if (prompt) {
            r.prompt = mid;
            r.ctx = mid + r.new_tokens;
            r.kv_len = r.new_tokens ? r.ctx - 1 : r.ctx;
        } else {
            r.batch = mid;
        }
        if (total_of(m, &r, s) <= base->usable)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* "saves X (fits|short by Y)" for a changed run. */
static void fix_line(struct vf_arena *a, struct vf_estimate *e, const struct tf_run *base,
                     uint64_t before, uint64_t after, const char *what)
{
    char b1[32], b2[32], b3[32];
    if (after == VF_UNKNOWN || after >= before)
        return;
    bool fits = after <= base->usable;
    vf__fix(a, e, "%s: saves %s -> %s per GPU, %s%s", what,
            vf_format_bytes(b1, sizeof b1, before - after, VF_FMT_IEC),
            vf_format_bytes(b2, sizeof b2, after, VF_FMT_IEC), fits ? "fits" : "still short by ",
            fits ? "" : vf_format_bytes(b3, sizeof b3, after - base->usable, VF_FMT_IEC));
}

/* F-HF-12: settings that make the run fit the card, each from a re-run of the estimate. */
static void fixes(struct vf_arena *a, const struct vf_model *m, const struct tf_run *r,
                  uint64_t before, struct vf_estimate *e)
{
    struct tf_scratch scratch, *s = &scratch;
    struct tf_run t;
    char what[160];

    uint64_t p = largest(m, r, s, true, r->prompt);
    if (p && p < r->prompt) {
        t = *r;
        t.prompt = p;
        t.ctx = p + t.new_tokens;
        t.kv_len = t.new_tokens ? t.ctx - 1 : t.ctx;
        snprintf(what, sizeof what, "prompt of at most %llu tokens (--ctx %llu with %llu new)",
                 (unsigned long long)p, (unsigned long long)t.ctx,
                 (unsigned long long)t.new_tokens);
        fix_line(a, e, r, before, total_of(m, &t, s), what);
    }
    uint64_t bmax = largest(m, r, s, false, r->batch);
    if (bmax && bmax < r->batch) {
        t = *r;
        t.batch = bmax;
        snprintf(what, sizeof what, "batch of %llu sequences per generate() (--users %llu)",
                 (unsigned long long)bmax, (unsigned long long)bmax);
        fix_line(a, e, r, before, total_of(m, &t, s), what);
    }
    if (r->keep != 1) {
        t = *r;
        t.keep = 1;
        fix_line(a, e, r, before, total_of(m, &t, s),
                 "logits_to_keep=1 (what generate() passes since 4.45; num_logits_to_keep in "
                 "4.45-4.49)");
    }
    if (r->attn == TF_EAGER) {
        t = *r;
        t.attn = TF_SDPA;
        fix_line(a, e, r, before, total_of(m, &t, s), "attn_implementation=\"sdpa\"");
    }
    if (r->static_cache) {
        t = *r;
        t.static_cache = false;
        fix_line(a, e, r, before, total_of(m, &t, s), "cache_implementation dynamic (default)");
    }
    if (r->bnb != 4) {
        t = *r;
        t.bnb = 4;
        if (!vf_quant_parse("nf4", &t.q, NULL)) {
            if (t.dt == VF_DT_F32) {
                t.dt = VF_DT_BF16;
                t.dtb = 2;
            }
            fix_line(a, e, r, before, total_of(m, &t, s),
                     "BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type=\"nf4\", "
                     "bnb_4bit_use_double_quant=True)");
        }
    }
    if (r->n == 1 && m->n_layers >= 2) {
        t = *r;
        t.n = 2;
        t.map = TF_MAP_AUTO;
        fix_line(a, e, r, before, total_of(m, &t, s),
                 "device_map=\"auto\" over 2 GPUs (layers split, run one after the other)");
    }
}

/* "model.layers.0-13" for the device map line. */
static const char *layers_text(struct vf_arena *a, const struct tf_gpu *g)
{
    if (!g->n_layers)
        return "";
    if (g->n_layers == 1)
        return vf_arena_printf(a, "model.layers.%u", g->first_layer);
    return vf_arena_printf(a, "model.layers.%u-%u", g->first_layer,
                           g->first_layer + g->n_layers - 1);
}

/* F-HF-10: the components of GPU i (device dev) at its own peak phase; `where` names the GPU
 * when only the most loaded one is shown. */
static void gpu_components(struct vf_arena *a, const struct tf_run *r, const struct tf_gpu *g,
                           int dev, bool per_dev, const char *where, struct vf_estimate *e)
{
    bool pre = g->total_pre >= g->total_dec;
    const char *ph = pre ? "prefill" : "decode";
    struct vf_component *c;
    c = vf__add_component(e, "weights", g->weights, NULL,
                          where ? where
                          : r->bnb == 4
                              ? "bitsandbytes NF4, double-quantized; embeddings, lm_head, "
                                "norms 16-bit"
                          : r->bnb == 8 ? "bitsandbytes LLM.int8; lm_head, norms 16-bit"
                                        : vf_arena_printf(a, "%s", r->q.name));
    if (c)
        c->device = dev;
    c = vf__add_component(
        e, "kv_cache", pre ? g->kv_pre : g->kv_dec, ph,
        vf_arena_printf(a, "%s cache, %llu tokens x %llu sequences",
                        r->static_cache ? "static" : "dynamic",
                        (unsigned long long)(pre && !r->static_cache ? r->prompt : r->kv_len),
                        (unsigned long long)r->batch));
    if (c)
        c->device = dev;
    c = vf__add_component(
        e, "activations", pre ? g->act_pre : g->act_dec, ph,
        pre ? (r->attn == TF_EAGER ? "eager attention scores" : "largest per-layer transient")
        : r->static_cache ? "one decode step"
                          : "one decode step + torch.cat of one layer");
    if (c)
        c->device = dev;
    if (g->logits_pre || !per_dev) {
        c = vf__add_component(e, "logits", pre ? g->logits_pre : g->logits_dec, ph,
                              r->keep == 0 ? "every prompt position"
                                           : vf_arena_printf(a, "last %llu position%s + fp32 copy",
                                                             (unsigned long long)r->keep,
                                                             r->keep == 1 ? "" : "s"));
        if (c)
            c->device = dev;
    }
    c = vf__add_component(e, "runtime_overhead", pre ? g->overhead_pre : g->overhead_dec, NULL,
                          "CUDA context, cuBLAS, allocator slack");
    if (c)
        c->device = dev;
}

/* F-HF-10: the components of every GPU when there are few (TF_MAX_SPLIT_ROWS), else of the
 * most loaded one; then the weights offloaded to the CPU. */
static void tf_components(struct vf_arena *a, const struct tf_run *r, const struct tf_result *res,
                          struct vf_estimate *e)
{
    bool per_dev = r->n > 1 && r->n <= TF_MAX_SPLIT_ROWS;
    uint32_t from = per_dev ? 0 : res->peak_gpu, to = per_dev ? r->n : res->peak_gpu + 1;
    for (uint32_t i = from; i < to; i++) {
        const char *where = r->n > 1 && !per_dev
                                ? vf_arena_printf(a, "GPU %u of %u, the most loaded", i, r->n)
                                : NULL;
        gpu_components(a, r, &res->g[i], per_dev ? (int)i : VF_DEV_ALL_GPUS, per_dev, where, e);
    }
    if (res->host_w) {
        struct vf_component *c =
            vf__add_component(e, "weights", res->host_w, NULL, "offloaded to the CPU");
        if (c)
            c->device = VF_DEV_HOST;
    }
}

/* The engine results (JSON "transformers"). */
static void tf_extras(const struct tf_run *r, const struct tf_result *res, struct vf_estimate *e)
{
    const struct tf_gpu *pk = &res->g[res->peak_gpu];
    e->extra_name = "transformers";
    vf__extra_u64(e, "prompt_tokens", r->prompt);
    vf__extra_u64(e, "max_new_tokens", r->new_tokens);
    vf__extra_u64(e, "batch", r->batch);
    vf__extra_text(e, "cache", r->static_cache ? "static" : "dynamic");
    vf__extra_text(e, "attn_implementation", attn_name(r->attn));
    vf__extra_text(e, "torch_dtype", torch_dtype_name(r->dt));
    vf__extra_text(e, "device_map", r->map == TF_MAP_CUDA ? "cuda" : "auto");
    vf__extra_u64(e, "logits_to_keep", r->keep);
    vf__extra_text(e, "peak_phase", pk->total_pre >= pk->total_dec ? "prefill" : "decode");
    vf__extra_u64(e, "peak_gpu", res->peak_gpu);
    vf__extra_u64(e, "offloaded_layers", res->host_layers);
}

/* What transformers itself shows of a split: model.hf_device_map, by GPU. */
static void tf_device_map(struct vf_arena *a, const struct tf_run *r, const struct tf_result *res,
                          struct vf_estimate *e)
{
    if (r->map != TF_MAP_AUTO || (r->n <= 1 && !res->host_w))
        return;
    const char *map = "";
    for (uint32_t i = 0; i < r->n; i++) {
        const struct tf_gpu *g = &res->g[i];
        const char *parts = "";
        if (g->embed)
            parts = "model.embed_tokens";
        if (g->n_layers)
            parts = vf_arena_printf(a, "%s%s%s", parts, *parts ? ", " : "", layers_text(a, g));
        if (g->tail)
            parts = vf_arena_printf(a, "%s%smodel.norm", parts, *parts ? ", " : "");
        if (g->head && !g->embed)
            parts = vf_arena_printf(a, "%s%slm_head", parts, *parts ? ", " : "");
        if (*parts)
            map = vf_arena_printf(a, "%s%s%u: %s", map, *map ? "; " : "", i, parts);
    }
    if (res->host_w)
        map = vf_arena_printf(a, "%s; cpu: %u layers", map, res->host_layers);
    vf__line(a, e, "model.hf_device_map by GPU: %s", map);
}

/* The assumptions about the call: the engine, the tokens, the weights' storage (F-HF-01/02). */
static void assume_run(struct vf_arena *a, const struct vf_workload *w, const struct tf_run *r,
                       struct vf_estimate *e)
{
    vf__assume(a, e,
               "engine transformers %s: model.generate() after from_pretrained, prefill over "
               "the batch's prompts then one decode step per token; peak = max(prefill, "
               "decode) per GPU (F-HF-01..12)",
               vf__engine_transformers.version);
    vf__assume(a, e,
               "--ctx %llu = prompt %llu + max_new_tokens %llu per sequence%s; batch %llu "
               "(--users) of equal-length prompts, no padding",
               (unsigned long long)r->ctx, (unsigned long long)r->prompt,
               (unsigned long long)r->new_tokens,
               r->new_clamped                                ? " (--max-new-tokens was >= --ctx)"
               : vf_engine_opt(&w->opts, "--max-new-tokens") ? ""
                                                             : " (the default; --max-new-tokens)",
               (unsigned long long)r->batch);
    vf__term_assume_ctx(a, e, w, r->ctx);
    if (r->bnb == 4)
        vf__assume(a, e,
                   "--load-in-4bit: BitsAndBytesConfig(nf4, double quant, 16-bit compute): "
                   "4.127 bits per linear weight; transformers' own defaults (fp4, no double "
                   "quant, fp32 compute) store 4.5 bits; each matmul dequantizes one weight to "
                   "%s (F-HF-01, F-HF-06)",
                   torch_dtype_name(r->dt));
    else if (r->bnb == 8)
        vf__assume(a, e,
                   "--load-in-8bit: LLM.int8 (int8 weights + fp32 scale per row, threshold "
                   "6.0); int32 products and fp16 copies per matmul (F-HF-01, F-HF-06)");
    else
        vf__assume(a, e, "weights %s%s (F-HF-01)", r->q.name,
                   r->q.kind != VF_QK_PLAIN || w->weights.kind != VF_QK_NATIVE
                       ? ", as the checkpoint or --weights stores them"
                   : vf_engine_opt(&w->opts, "--torch-dtype")
                       ? ""
                       : ": torch_dtype of the checkpoint (transformers 4.x loads float32 when "
                         "torch_dtype is not passed: --torch-dtype float32)");
}

/* The assumptions about the memory: cache, attention, activations, logits, the split, the
 * overhead (F-HF-03..11). */
static void assume_memory(struct vf_arena *a, const struct vf_model *m, const struct tf_run *r,
                          const struct tf_result *res, struct vf_estimate *e)
{
    char b1[32];
    vf__assume(a, e, "%s in %s: %s B per token per sequence, %llu tokens at the end (F-HF-03)",
               r->static_cache ? "StaticCache (allocated up front at max_cache_len)"
                               : "DynamicCache (grows by torch.cat)",
               torch_dtype_name(r->dt),
               vf_format_bytes(b1, sizeof b1, res->kv_per_token, VF_FMT_EXACT),
               (unsigned long long)r->kv_len);
    vf__assume(a, e, "attention %s: %s (F-HF-06)", attn_name(r->attn),
               r->attn == TF_EAGER
                   ? "materialises batch x heads x prompt x keys scores, 10 B each in bfloat16 "
                     "(torch's softmax upcasts through an fp32 copy), 8 B in float16/float32"
               : r->attn == TF_FA2 ? "no score matrix, no mask, GQA native"
               : r->static_cache   ? "with a static cache the mask is materialised and K/V are "
                                     "repeated to every head (memory-efficient kernel)"
                                   : "no mask without padding, GQA inside SDPA (torch >= 2.5)");
    vf__assume(a, e,
               "activations: the largest per-layer transient of the prefill, %s B per prompt "
               "token (SwiGLU: residual, input, act(gate), up, product); layers run one at a "
               "time (F-HF-05)",
               vf_format_bytes(b1, sizeof b1, layer_peak_per_token(m, r), VF_FMT_EXACT));
    vf__assume(a, e,
               "logits: lm_head over %s at %s + generate()'s fp32 copy of the last row%s "
               "(F-HF-08)",
               r->keep == 0 ? "every prompt position" : "the last position (logits_to_keep=1)",
               torch_dtype_name(r->dt),
               r->keep == 0 ? "; transformers < 4.46 also upcast all of them to fp32 (+4 B each)"
                            : "");
    if (r->n > 1 || res->host_w)
        vf__assume(a, e,
                   "device_map=\"auto\": accelerate's balanced split, every GPU but the last "
                   "up to total/%u + 1.25 x the largest layer, the largest module kept free on "
                   "GPU 0; layers run one GPU after the other, each GPU keeps the KV cache of "
                   "its layers (F-HF-09)",
                   r->n);
    if (res->host_w)
        vf__assume(a, e,
                   "%u layers (%s) do not fit the GPUs and are offloaded to the CPU: they run "
                   "(slowly) by being copied to GPU 0",
                   res->host_layers, vf_format_bytes(b1, sizeof b1, res->host_w, VF_FMT_IEC));
    vf__assume(a, e,
               "runtime overhead per GPU: CUDA context ~400 MiB with lazy loading "
               "(pytorch#109888) + cuBLAS workspaces 40 MiB + %d %% of the transients "
               "(allocator slack); cached blocks are released before an OOM (F-HF-11)",
               VF_RT_ALLOC_SLACK_PCT);
    if (r->n > TF_MAX_SPLIT_ROWS)
        vf__assume(a, e, "components show GPU %u of %u, the most loaded", res->peak_gpu, r->n);
}

static enum vf_err tf_estimate(struct vf_arena *a, const struct vf_model *m,
                               const struct vf_workload *w, struct vf_estimate *e,
                               struct vf_error *err)
{
    struct tf_run r;
    struct tf_scratch s;
    enum vf_err rc;
    if ((rc = resolve(m, w, &r, err)) || (rc = run_once(m, &r, &s.x, &s.res, err)))
        return rc;
    const struct tf_result *res = &s.res;

    vf__term_begin(m, &vf__engine_transformers, e);
    e->weights = r.q;
    e->gpus = r.n;
    e->ctx_tokens = r.ctx;
    e->users = r.batch;
    e->weights_bytes = vf_model_weight_bytes(m, &r.q);
    if (e->weights_bytes == VF_UNKNOWN)
        return vf__errf(err, VF_ERANGE, "'%s': the weight bytes are unknown or overflow", m->id);
    e->kv_dtype = r.dt;
    e->kv_bytes_per_token = res->kv_per_token; /* F-HF-03: as transformers' caches store it */
    e->total_bytes = res->total;
    e->host_bytes = res->host_w;

    tf_components(a, &r, res, e);
    tf_extras(&r, res, e);
    tf_device_map(a, &r, res, e);
    assume_run(a, w, &r, e);
    assume_memory(a, m, &r, res, e);
    if (r.usable != VF_UNKNOWN && res->total > r.usable)
        fixes(a, m, &r, res->total, e);
    return VF_OK;
}

static const struct vf_engine_flag tf_flags[] = {
    {"--device-map", NULL, true, "auto|cuda: split layers over the GPUs, or all on one (auto)"},
    {"--torch-dtype", "--dtype", true, "bfloat16|float16|float32|auto (auto: the checkpoint's)"},
    {"--load-in-8bit", NULL, false, "bitsandbytes LLM.int8 weights"},
    {"--load-in-4bit", NULL, false, "bitsandbytes NF4 weights (double quant, 16-bit compute)"},
    {"--cache", "--cache-implementation", true, "dynamic|static (dynamic)"},
    {"--max-new-tokens", NULL, true,
     "tokens generated per sequence; prompt = --ctx minus it (256)"},
    {"--attn-implementation", NULL, true, "sdpa|eager|flash_attention_2 (sdpa)"},
    {"--logits-to-keep", "--num-logits-to-keep", true,
     "N|all: prompt positions the prefill computes logits for (1, as generate() does)"},
    {NULL, NULL, false, NULL},
};

const struct vf_engine vf__engine_transformers = {
    .name = "transformers",
    .version = "4.57",
    .tasks = 1u << VF_TASK_INFER,
    .can_split = tf_can_split,
    .estimate = tf_estimate,
    .flags = tf_flags,
};
