/* SPDX-License-Identifier: Apache-2.0 */
/*
 * est_train.c - the training and fine-tuning estimate (engine "pytorch"): the peak of one
 * GPU during a training step of full fine-tuning, freeze tuning, LoRA or QLoRA, with AdamW,
 * 8-bit (paged) AdamW, Adafactor, Lion or SGD, in mixed, pure-bf16 or fp32 precision, data
 * parallel over several GPUs with ZeRO/FSDP sharding and CPU offload. The peak is at the
 * start of backward: model states, every saved activation and the cross-entropy buffers of
 * the logits are live together. Formulas F-TRAIN-01..21 in docs/FORMULAS.md ("Training").
 *
 * What is modelled is a PyTorch eager training step as Hugging Face transformers + PEFT (or
 * DeepSpeed/FSDP for several GPUs) runs it: bf16 mixed precision with an fp32 master copy,
 * FlashAttention, RMSNorm inputs saved in fp32, the logits upcast to fp32 for the loss; each
 * of these is a knob (--precision, --flash-attn, --liger, --chunked-ce).
 *
 * The estimate (llm_estimate) is a list of term functions, one per component and one per
 * group of assumptions; what it shares with a denoiser's (est_train_diffusion.c) is in
 * train_terms.c and train_states.c, the fix ladder in train_fixes.c.
 */
#include "est_train.h"
#include "engine/runtime.h"

#include <string.h>

/* F-TRAIN-06: sequence length per sample when none is given. */
#define TRAIN_DEFAULT_SEQ 2048
/* F-TRAIN-15: layers freeze tuning trains (LLaMA-Factory freeze_trainable_layers = 2). */
#define TRAIN_DEFAULT_FREEZE 2
/* F-TRAIN-08: bytes per (token x vocab entry) at the cross-entropy backward: the fp32
 * log-probabilities log_softmax saved, their incoming gradient, and the gradient of the fp32
 * logits it produces (4 + 4 + 4). */
#define TRAIN_LOGIT_BYTES 12
/* F-TRAIN-28: DeepSpeed ZeRO-3 stage3_max_live_parameters (deepspeed/runtime/zero/config.py
 * DeepSpeedZeroConfig.max_live_parameters, default 1e9; LLaMA-Factory's ds_z3 configs and
 * the transformers docs' examples set the same 1e9). The prefetch bucket stays inside it:
 * partitioned_param_coordinator.py fetch_sub_module prefetches at most
 * min(max_live - available, stage3_prefetch_bucket_size) parameters. */
#define TRAIN_DS_MAX_LIVE 1000000000ULL
/* Limits of the knobs this estimator takes. */
#define TRAIN_MAX_BATCH VF_MAX_USERS
#define TRAIN_MAX_RANK  VF_MAX_DIM
#define TRAIN_MAX_ACCUM (1u << 20)

#define CLS(c) (1u << (c))

/* ------------------------------------------------------------ LoRA targets */

/* F-TRAIN-04: the linear layers LoRA targets, by the module names PEFT, torchtune and
 * LLaMA-Factory use ("all-linear" = all of them, not lm_head, not the router, not recurrent
 * mixers). Routed and shared experts answer to their MLP's names. */
static const struct target {
    const char *name;  /* Hugging Face module name */
    const char *alias; /* short or torchtune spelling */
    uint32_t classes;
} targets[] = {
    {"q_proj", "q", CLS(VF_T_ATTN_Q)},
    {"k_proj", "k", CLS(VF_T_ATTN_K)},
    {"v_proj", "v", CLS(VF_T_ATTN_V)},
    {"qkv_proj", "qkv", CLS(VF_T_ATTN_QKV)},
    {"o_proj", "output_proj", CLS(VF_T_ATTN_O)},
    {"gate_proj", "w1", CLS(VF_T_FFN_GATE) | CLS(VF_T_FFN_GATE_EXP) | CLS(VF_T_FFN_GATE_SHEXP)},
    {"up_proj", "w3", CLS(VF_T_FFN_UP) | CLS(VF_T_FFN_UP_EXP) | CLS(VF_T_FFN_UP_SHEXP)},
    {"down_proj", "w2", CLS(VF_T_FFN_DOWN) | CLS(VF_T_FFN_DOWN_EXP) | CLS(VF_T_FFN_DOWN_SHEXP)},
};
#define N_TARGETS (sizeof targets / sizeof targets[0])

static uint32_t all_linear(void)
{
    uint32_t m = 0;
    for (size_t i = 0; i < N_TARGETS; i++)
        m |= targets[i].classes;
    return m;
}

/* The classes present among the model's layer tensors. */
static uint32_t model_classes(const struct vf_model *m)
{
    uint32_t c = 0;
    for (size_t i = 0; i < m->n_groups; i++)
        if (m->groups[i].layer >= 0 && (unsigned)m->groups[i].cls < 32)
            c |= CLS(m->groups[i].cls);
    return c;
}

/* "q_proj, k_proj, ..." of the targets the model has. */
static const char *module_names(struct vf_arena *a, const struct vf_model *m)
{
    uint32_t have = model_classes(m);
    const char *s = "";
    for (size_t i = 0; i < N_TARGETS; i++)
        if (have & targets[i].classes)
            s = vf_arena_printf(a, "%s%s%s", s, *s ? ", " : "", targets[i].name);
    return s;
}

/*
 * F-TRAIN-04: the class mask of a --lora-targets list ("q,k,v,o", "q_proj,v_proj",
 * "all-linear"); VF_EINVAL naming the entry and listing the model's module names when an
 * entry is unknown or names a module the model does not have.
 */
static enum vf_err parse_targets(struct vf_arena *a, const struct vf_model *m, const char *list,
                                 uint32_t *out, struct vf_error *err)
{
    *out = 0;
    if (!list) {
        *out = all_linear();
        return VF_OK;
    }
    uint32_t have = model_classes(m);
    const char *p = list;
    while (*p) {
        while (*p == ',' || *p == ' ')
            p++;
        size_t n = strcspn(p, ", ");
        if (!n)
            break;
        if (n > 64)
            return vf__errf(err, VF_EINVAL,
                            "--lora-targets: entry of %zu characters at offset "
                            "%zu is too long",
                            n, (size_t)(p - list));
        char word[65];
        memcpy(word, p, n);
        word[n] = '\0';
        uint32_t c = 0;
        if (!strcmp(word, "all-linear") || !strcmp(word, "all"))
            c = all_linear() & have;
        for (size_t i = 0; i < N_TARGETS && !c; i++)
            if (!strcmp(word, targets[i].name) || !strcmp(word, targets[i].alias) ||
                (!strncmp(word, targets[i].name, strlen(targets[i].name) - 5) &&
                 strlen(word) == strlen(targets[i].name) - 5))
                c = targets[i].classes;
        if (!c || !(c & have))
            return vf__errf(err, VF_EINVAL,
                            "--lora-targets: '%s' is not a linear module of '%s' (its modules: "
                            "%s; or all-linear)",
                            word, m->id, module_names(a, m));
        *out |= c & have;
        p += n;
    }
    if (!*out)
        return vf__errf(err, VF_EINVAL, "--lora-targets: no module named (its modules: %s)",
                        module_names(a, m));
    return VF_OK;
}

/* ---------------------------------------------------------------- one run */

static bool is_target(const struct vf__train_run *r, enum vf_tclass c)
{
    return (unsigned)c < 32 && (r->targets & CLS(c)) != 0;
}

/* The base weights' storage: 16-bit for full fine-tuning and LoRA (fp32 with --precision
 * fp32) unless --weights names a frozen quantized base (LoRA); NF4 for QLoRA unless --weights
 * names another 4-bit scheme. */
static enum vf_err base_scheme(const struct vf_model *m, const struct vf_workload *w,
                               struct vf__train_run *r, struct vf_error *err)
{
    bool given = w->weights.kind != VF_QK_NATIVE;
    bool trained = r->method == VF_TRAIN_FULL || r->method == VF_TRAIN_FREEZE;
    if (given && w->weights.kind == VF_QK_GGUF_FTYPE)
        return vf__errf(err, VF_EUNSUPPORTED,
                        "training: --weights %s is a llama.cpp file type; PyTorch trains on "
                        "bf16 weights (full, lora) or a bitsandbytes NF4 base (qlora)",
                        w->weights.name);
    if (r->method == VF_TRAIN_QLORA) {
        if (!given)
            return vf_quant_parse("nf4", &r->base, err);
        uint64_t bits = vf_model_weight_bytes(m, &w->weights);
        if (bits != VF_UNKNOWN && m->params && bits / m->params >= 1)
            return vf__errf(err, VF_EINVAL,
                            "--method qlora trains adapters on a 4-bit base: --weights %s is "
                            "not 4-bit (use --method lora for a %s base)",
                            w->weights.name, w->weights.name);
        r->base = w->weights;
        return VF_OK;
    }
    const char *dflt = r->prec == VF_PREC_FP32 ? "fp32" : r->prec == VF_PREC_FP16 ? "fp16" : "bf16";
    if (trained && given &&
        !(w->weights.kind == VF_QK_PLAIN &&
          (w->weights.dtype == VF_DT_BF16 || w->weights.dtype == VF_DT_F16 ||
           w->weights.dtype == VF_DT_F32)))
        return vf__errf(err, VF_EUNSUPPORTED,
                        "%s fine-tuning trains the weights themselves: --weights %s is not "
                        "modelled (--method qlora trains adapters on a 4-bit base)",
                        vf_train_method_name(r->method), w->weights.name);
    if (given) {
        r->base = w->weights;
        return VF_OK;
    }
    return vf_quant_parse(dflt, &r->base, err);
}

/* Data parallelism replicates the model (ZeRO shards its states): any number of cards, but
 * a sharding stage needs more than one unless states are offloaded. */
static bool train_can_split(const struct vf_model *m, const struct vf_workload *w, uint32_t n,
                            const char **why)
{
    (void)m;
    *why = NULL;
    if (!w || n > 1 || w->train.offload != VF_OFFLOAD_NONE)
        return true;
    if ((w->train.zero != VF_ZERO_AUTO && w->train.zero != VF_ZERO_0) ||
        (w->train.fsdp != VF_FSDP_NONE && w->train.fsdp != VF_FSDP_NO_SHARD)) {
        *why = "ZeRO/FSDP sharding needs more than one GPU";
        return false;
    }
    return true;
}

/* Elements per tensor of a group (its tensors have the same shape or are folded alike). */
static uint64_t per_tensor(const struct vf_tgroup *g)
{
    return g->n_tensors ? g->n_params / g->n_tensors : g->n_params;
}

/* Output width of one tensor of a group: elements / input width. */
static uint64_t d_out(const struct vf_tgroup *g)
{
    return g->row_elems ? per_tensor(g) / g->row_elems : 0;
}

/* Is the group stored below 16 bits by scheme q (then dequantized to bf16 at each use)? */
static bool below_16bit(const struct vf_model *m, const struct vf_quant *q,
                        const struct vf_tgroup *g)
{
    uint64_t b = vf__quant_group_bytes(m, q, g);
    return b != VF_UNKNOWN && b < vf__sat_mul(g->n_params, 2);
}

/* ------------------------------------------------------------- activations */

/* Per-layer tallies of one pass over the tensor groups. */
struct layer_sum {
    uint32_t hnorms;   /* hidden-width norm tensors */
    bool qk_norm;      /* q/k norms across every head */
    uint64_t onorm_w;  /* widths of other norms (MLA latents), summed */
    uint32_t onorms;   /* their count */
    uint64_t ssm_out;  /* output elements per token of the recurrent mixer's projections */
    uint64_t ffn_up;   /* dense FFN: up (or fused gate_up) output width */
    uint64_t exp_up;   /* MoE: one routed expert's up width */
    uint64_t shexp_up; /* MoE: the shared experts' up width */
    uint64_t bytes;    /* the layer's weights at the base storage (gathered unit) */
    uint64_t params;   /* the layer's parameters */
    bool gated, moe;
};

/*
 * F-TRAIN-06/16/17: activation bytes per token that layer l saves for backward.
 * Norms: HF's eager RMSNorm keeps its fp32 input and the fp32 reciprocal RMS (4h + 4); Liger's
 * fused RMSNorm its 16-bit input and the rstd (u h + 4); selective recomputation keeps only
 * the residual input (u h). q/k norms count across every head.
 * Token mixer, u bytes per value (2 in 16-bit, 4 in fp32):
 *   attention (GQA, FlashAttention): input of q/k/v h, Q q, K kv, V kv, the attention output
 *     (= o_proj input) o, each u; the fp32 log-sum-exp per head 4nh; without FlashAttention
 *     (eager) the fp32 softmax output and the u-byte probabilities, (4 + u) nh s per token;
 *   MLA: input h, the two latents (q_lora + kv_lora) + rope key r, Q and K nh(dn+dr) each, V
 *     and O nh dv each, u bytes each, + 4nh;
 *   recurrent mixer (rough): input h + each projection's output twice, u each;
 *   gated MLP (SwiGLU): input h, gate out, up out, SiLU out, down in: u(h + 4I) (Liger's fused
 *     SwiGLU recomputes the SiLU output: u(h + 3I)); non-gated: u(h + 2I);
 *   MoE: input h, fp32 router probabilities 4E, per routed expert (k of them) its gathered
 *     input h, 4Ie inside and its output h before the weighted sum; shared experts 4Is.
 * Selective recomputation (torchtitan's op-level policy, Korthikanti's selective) keeps the
 * matmul outputs and recomputes the norms and elementwise ops: no norm-output inputs (h), no
 * SiLU output or product (2I), and no s^2 scores.
 */
static uint64_t layer_act(const struct vf_model *m, uint32_t l, const struct layer_sum *s,
                          const struct vf__train_run *r)
{
    uint64_t h = m->hidden, nh = m->n_heads, u = r->u;
    uint64_t nkv = m->layer_kv_heads ? m->layer_kv_heads[l] : m->n_kv_heads;
    enum vf_layer_kind kind =
        m->layer_kind ? (enum vf_layer_kind)m->layer_kind[l] : VF_LAYER_ATTN_FULL;
    bool sel = r->gc == VF_GC_SELECTIVE;
    uint64_t in = sel ? 0 : u * h; /* a block's normed input, recomputed under selective */

    /* norms */
    bool fused = r->liger || r->compile; /* F-TRAIN-24: fused norms and SwiGLU */
    uint64_t per_h = sel ? u * h : fused ? u * h + 4 : 4 * h + 4;
    uint64_t b = (uint64_t)s->hnorms * per_h;
    if (s->qk_norm) {
        uint64_t q = nh * m->head_dim, k = nkv * m->head_dim;
        b += sel ? u * (q + k) : 4 * (q + k) + 4 * (nh + nkv);
    }
    b += sel ? u * s->onorm_w : 4 * s->onorm_w + 4 * (uint64_t)s->onorms;

    if (kind == VF_LAYER_ATTN_FULL || kind == VF_LAYER_ATTN_SLIDING) {
        if (m->attn == VF_ATTN_MLA) {
            uint64_t qk = (uint64_t)m->qk_nope_dim + m->qk_rope_dim;
            b += in + u * ((uint64_t)m->q_lora_rank + m->kv_lora_rank + m->qk_rope_dim);
            b += 2 * u * nh * qk + 2 * u * nh * m->v_head_dim_mla + 4 * nh;
        } else {
            uint64_t q = nh * m->head_dim, kv = nkv * m->head_dim;
            uint64_t v = nkv * m->head_dim_v, o = nh * m->head_dim_v;
            b += in + u * (q + kv + v + o) + 4 * nh;
        }
        if (!r->fa && !sel) {
            uint64_t span = r->seq;
            if (kind == VF_LAYER_ATTN_SLIDING && m->sliding_window && m->sliding_window < span)
                span = m->sliding_window;
            b = vf__sat_add(b, vf__sat_mul((4 + u) * nh, span));
        }
    } else if (kind == VF_LAYER_RECURRENT) {
        b += in + 2 * u * s->ssm_out;
    }

    unsigned gated_w = sel ? 2 : fused ? 3 : 4;
    if (s->moe) {
        uint64_t k = m->n_experts_used ? m->n_experts_used : 1;
        b += in + 4 * (uint64_t)m->n_experts;
        b += k * (2 * u * h + gated_w * u * s->exp_up);
        b += gated_w * u * s->shexp_up;
    } else if (s->ffn_up) {
        b += in + (s->gated ? gated_w : sel ? 1 : 2) * u * s->ffn_up;
    }
    return b;
}

/* --------------------------------------------------------------- the knobs */

/* F-TRAIN-06/18: the knobs only a language model has, and their limits; VF_ERANGE naming the
 * first knob over its limit. */
static enum vf_err llm_knobs(const struct vf_model *m, const struct vf_workload *w,
                             struct vf__train_run *r, struct vf_error *err)
{
    const struct vf_train_opts *t = &w->train;
    /* F-TRAIN-06/22: the trainer's own truncation (TRL's max_length) when it has one */
    r->seq = w->ctx_tokens                 ? w->ctx_tokens
             : r->preset && r->preset->seq ? r->preset->seq
                                           : TRAIN_DEFAULT_SEQ;
    r->batch = t->batch ? t->batch : 1;
    if (r->fused_ce)
        r->ce_chunks = 0; /* F-TRAIN-18: a fused loss replaces the chunked one */
    const struct {
        uint64_t v, max;
        const char *what;
    } limits[] = {
        {r->seq, VF_MAX_CTX_TOKENS, "tokens per sequence"},
        {r->batch, TRAIN_MAX_BATCH, "sequences per micro-batch"},
        {r->accum, TRAIN_MAX_ACCUM, "gradient accumulation steps"},
        {r->rank, TRAIN_MAX_RANK, "as LoRA rank"},
        {r->n, VF_MAX_GPUS, "GPUs"},
        {m->n_layers, VF_MAX_LAYERS, "layers"},
        {t->ce_chunks, 1024, "cross-entropy chunks"},
    };
    for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++)
        if (limits[i].v > limits[i].max)
            return vf__errf(err, VF_ERANGE, "'%s': %llu %s is over the limit of %llu", m->id,
                            (unsigned long long)limits[i].v, limits[i].what,
                            (unsigned long long)limits[i].max);
    return VF_OK;
}

/* F-TRAIN-04/15: what the method trains: the LoRA targets, or the first layer freeze tuning
 * trains; VF_EINVAL for a knob of another method or a count the model does not have. */
static enum vf_err method_knobs(struct vf_arena *a, const struct vf_model *m,
                                const struct vf_train_opts *t, struct vf__train_run *r,
                                struct vf_error *err)
{
    bool lora = r->method == VF_TRAIN_LORA || r->method == VF_TRAIN_QLORA;
    if (!lora && t->lora_targets)
        return vf__errf(err, VF_EINVAL, "--lora-targets applies to --method lora or qlora, not %s",
                        vf_train_method_name(r->method));
    enum vf_err rc = lora ? parse_targets(a, m, t->lora_targets, &r->targets, err) : VF_OK;
    if (rc)
        return rc;
    if (r->method == VF_TRAIN_FREEZE) {
        uint32_t k = t->freeze_layers ? t->freeze_layers : TRAIN_DEFAULT_FREEZE;
        if (k > m->n_layers)
            return vf__errf(err, VF_EINVAL,
                            "--freeze-layers %u: '%s' has %u layers (use --method full to train "
                            "them all)",
                            k, m->id, m->n_layers);
        r->first = m->n_layers - k;
    } else if (t->freeze_layers) {
        return vf__errf(err, VF_EINVAL, "--freeze-layers applies to --method freeze, not %s",
                        vf_train_method_name(r->method));
    }
    return VF_OK;
}

/* Hugging Face model_type values of encoder-only and encoder-decoder models (transformers
 * models/<type>/configuration_*.py): no causal-LM head, a bidirectional or cross-attending
 * stack, a loss other than next-token over the vocabulary. */
static const char *const encoder_types[] = {
    "bert",        "roberta",
    "xlm-roberta", "deberta",
    "deberta-v2",  "distilbert",
    "electra",     "albert",
    "modernbert",  "mpnet",
    "t5",          "mt5",
    "umt5",        "bart",
    "mbart",       "pegasus",
    "marian",      "longt5",
    "flan-t5",     "whisper",
    "nllb-moe",    "switch_transformers",
};

/* issue 22: an encoder config refused for causal-LM training, with the reason. */
static enum vf_err refuse_encoder(const struct vf_model *m, struct vf_error *err)
{
    for (size_t i = 0; m->model_type && i < sizeof encoder_types / sizeof encoder_types[0]; i++)
        if (!strcmp(m->model_type, encoder_types[i]))
            return vf__errf(err, VF_EUNSUPPORTED,
                            "training: '%s' is an encoder or encoder-decoder model (model_type "
                            "%s); the training estimate models causal-LM fine-tuning (decoder "
                            "layers, next-token loss over the vocabulary), not masked-LM, "
                            "classification or seq2seq training",
                            m->id, m->model_type);
    return VF_OK;
}

/* The knobs of w as a run (est_train.h): the common ones, the LLM's with their limits, the
 * ZeRO stage, what the method trains, the base storage; the first error returned. */
enum vf_err vf__train_resolve(struct vf_arena *a, const struct vf_model *m,
                              const struct vf_workload *w, struct vf__train_run *r,
                              struct vf_error *err)
{
    vf__train_knobs(w, r, true);
    enum vf_err rc = refuse_encoder(m, err);
    if (!rc)
        rc = llm_knobs(m, w, r, err);
    if (!rc)
        rc = vf__train_stage(&w->train, r->n, &r->zero, &r->group, err);
    if (!rc)
        rc = method_knobs(a, m, &w->train, r, err);
    return rc ? rc : base_scheme(m, w, r, err);
}

/* Is group g trained as a whole (full fine-tuning, or a layer freeze tuning trains)? */
static bool trains_whole(const struct vf__train_run *r, const struct vf_tgroup *g)
{
    if (r->method == VF_TRAIN_FULL)
        return true;
    return r->method == VF_TRAIN_FREEZE && g->layer >= 0 && (uint32_t)g->layer >= r->first;
}

/* ------------------------------------------------------------ the estimate */

/* What one pass over the tensor groups finds. */
struct tally {
    struct layer_sum sums[VF_MAX_LAYERS]; /* per layer (the first n_layers set) */
    uint64_t trainable;                   /* trainable parameters */
    uint64_t opt;                         /* their optimizer states */
    uint64_t trained_bytes;               /* the trained tensors at the base storage */
    uint64_t largest;                     /* elements of the largest trained tensor */
    uint64_t outside_max;                 /* bytes of the largest group outside the layers */
    uint64_t final_norm;                  /* hidden-width norm tensors outside the layers */
    uint64_t dequant;                     /* LoRA on a quantized base: the bf16 buffer */
    uint64_t upcast; /* F-TRAIN-23: bytes the 16-bit base tensors gain cast to fp32 */
};

/* One language-model estimate in the making: the run, what the pass over the groups found,
 * the model states, and what the components and assumptions after them share. */
struct step {
    struct vf__train_run r;
    bool whole;  /* the trained tensors are the model's own (full or freeze tuning) */
    bool pure;   /* --precision pure-bf16 */
    bool fp32;   /* --precision fp32 */
    bool in_bwd; /* F-TRAIN-21: the optimizer step in backward */
    struct tally tl;
    struct vf__train_states_in in;
    struct vf__train_states st;
    const char *shard;     /* F-TRAIN-03: ", sharded over N GPUs (ZeRO-k)" or "" */
    uint64_t tokens;       /* per micro-step: seq x batch */
    uint64_t per_tok;      /* saved activation bytes per token */
    uint64_t acts, logits; /* bytes of the activations and the logits */
    uint64_t live;         /* F-TRAIN-28: DeepSpeed's live parameters above the gathered unit */
    uint64_t act_host;     /* F-TRAIN-24: offloaded checkpoints in host RAM */
};

/* F-TRAIN-01/02/15: group g trained whole: every parameter, its optimizer states (a matrix
 * of d_out rows x d_in columns, or a vector), its bytes gb at the base storage. */
static void tally_whole(const struct vf__train_run *r, const struct vf_tgroup *g, uint64_t gb,
                        struct tally *tl)
{
    uint64_t nt = g->n_tensors ? g->n_tensors : 1;
    tl->trainable = vf__sat_add(tl->trainable, g->n_params);
    tl->trained_bytes = vf__sat_add(tl->trained_bytes, gb);
    if (per_tensor(g) > tl->largest)
        tl->largest = per_tensor(g);
    uint64_t rows = d_out(g) ? d_out(g) : 1, cols = g->row_elems ? g->row_elems : 1;
    if (!g->row_elems)
        rows = 1, cols = per_tensor(g);
    tl->opt = vf__sat_add(
        tl->opt, vf__train_opt_bytes(r->opt, rows, cols, nt, r->prec == VF_PREC_PURE_BF16));
}

/* F-TRAIN-04/05: the adapters of targeted group g: A (r x d_in) and B (d_out x r) per tensor
 * and their optimizer states; a quantized linear is dequantized to bf16 for its matmul, one
 * at a time. VF_EINVAL when the rank is wider than the tensor. */
static enum vf_err tally_adapters(const struct vf_model *m, const struct vf__train_run *r,
                                  const struct vf_tgroup *g, struct tally *tl, struct vf_error *err)
{
    bool pure = r->prec == VF_PREC_PURE_BF16;
    uint64_t nt = g->n_tensors ? g->n_tensors : 1;
    uint64_t din = g->row_elems, dout = d_out(g);
    uint64_t narrow = din < dout ? din : dout;
    if (r->rank > narrow)
        return vf__errf(err, VF_EINVAL,
                        "LoRA rank %llu is larger than the width of a targeted module "
                        "of '%s' (%llu x %llu): a rank of at most %llu, or leave that "
                        "module out with --lora-targets",
                        (unsigned long long)r->rank, m->id, (unsigned long long)dout,
                        (unsigned long long)din, (unsigned long long)narrow);
    uint64_t a_el = vf__sat_mul(r->rank, din), b_el = vf__sat_mul(r->rank, dout);
    tl->trainable = vf__sat_add(tl->trainable, vf__sat_mul(vf__sat_add(a_el, b_el), nt));
    tl->opt =
        vf__sat_add(tl->opt, vf__sat_add(vf__train_opt_bytes(r->opt, r->rank, din, nt, pure),
                                         vf__train_opt_bytes(r->opt, dout, r->rank, nt, pure)));
    if (below_16bit(m, &r->base, g) && vf__sat_mul(per_tensor(g), 2) > tl->dequant)
        tl->dequant = vf__sat_mul(per_tensor(g), 2);
    return VF_OK;
}

/* F-TRAIN-03/06: what layer group g (bytes gb at the base storage) adds to its layer's
 * tallies: weights for the gathered unit, norms and widths for the activations. */
static void tally_layer(const struct vf_model *m, const struct vf_tgroup *g, uint64_t gb,
                        struct layer_sum *s)
{
    uint64_t nt = g->n_tensors ? g->n_tensors : 1;
    s->bytes = vf__sat_add(s->bytes, gb);
    s->params = vf__sat_add(s->params, g->n_params);
    switch (g->cls) {
    case VF_T_NORM:
        if (g->row_elems == m->hidden)
            s->hnorms += (uint32_t)nt;
        else if (nt == 2 && g->row_elems == m->head_dim && m->head_dim)
            s->qk_norm = true;
        else
            s->onorm_w += g->row_elems * nt, s->onorms += (uint32_t)nt;
        break;
    case VF_T_SSM:
        if (g->row_elems)
            s->ssm_out = vf__sat_add(s->ssm_out, g->n_params / g->row_elems);
        break;
    case VF_T_FFN_GATE:
        s->gated = true;
        break;
    case VF_T_FFN_UP:
        s->ffn_up = d_out(g);
        break;
    case VF_T_FFN_UP_EXP:
        s->moe = true;
        s->exp_up = d_out(g);
        break;
    case VF_T_FFN_UP_SHEXP:
        s->shexp_up = d_out(g);
        break;
    default:
        break;
    }
}

/* One pass over the model's groups into tl: the trained parameters (whole or adapters) and
 * their states, the per-layer tallies, and what lies outside the layers (the largest group,
 * the final norm). VF_EINVAL for a LoRA rank too wide, VF_ERANGE on overflow. */
static enum vf_err tally(const struct vf_model *m, const struct vf__train_run *r, struct tally *tl,
                         struct vf_error *err)
{
    uint32_t nl = m->n_layers;
    bool whole = r->method == VF_TRAIN_FULL || r->method == VF_TRAIN_FREEZE;
    memset(tl->sums, 0, nl * sizeof tl->sums[0]);
    tl->trainable = tl->opt = tl->trained_bytes = tl->largest = 0;
    tl->outside_max = tl->final_norm = tl->dequant = tl->upcast = 0;
    for (size_t i = 0; i < m->n_groups; i++) {
        const struct vf_tgroup *g = &m->groups[i];
        uint64_t gb = vf__quant_group_bytes(m, &r->base, g);
        bool in_layer = g->layer >= 0 && (uint32_t)g->layer < nl;
        enum vf_err rc = VF_OK;
        /* F-TRAIN-23: prepare_model_for_kbit_training casts every 16-bit tensor (embeddings,
         * lm_head, norms) to fp32: twice its bytes */
        if (r->kbit_prep && !below_16bit(m, &r->base, g))
            tl->upcast = vf__sat_add(tl->upcast, gb);
        if (trains_whole(r, g))
            tally_whole(r, g, gb, tl);
        else if (!whole && is_target(r, g->cls) && in_layer && g->row_elems)
            rc = tally_adapters(m, r, g, tl, err);
        if (rc)
            return rc;
        if (in_layer) {
            tally_layer(m, g, gb, &tl->sums[g->layer]);
            continue;
        }
        if (gb > tl->outside_max)
            tl->outside_max = gb;
        if (g->cls == VF_T_NORM && g->row_elems == m->hidden)
            tl->final_norm = vf__sat_add(tl->final_norm, g->n_tensors ? g->n_tensors : 1);
    }
    if (tl->trainable == VF_UNKNOWN || tl->opt == VF_UNKNOWN)
        return vf__errf(err, VF_ERANGE, "'%s': trainable parameters overflow 64 bits", m->id);
    return VF_OK;
}

/* The estimate's header for a language model: tokens of a sequence, the precision of the
 * activations, accumulation and freeze tuning's trained layers. */
static void llm_header(struct vf_estimate *e, const struct vf_model *m, const struct vf_workload *w,
                       const struct step *s)
{
    const struct vf__train_run *r = &s->r;
    vf__train_header(e, m, w, r, s->whole, r->batch, r->seq);
    e->kv_dtype = s->fp32 ? VF_DT_F32 : VF_DT_BF16;
    e->train.grad_accum = (uint32_t)r->accum;
    e->train.freeze_layers = r->method == VF_TRAIN_FREEZE ? m->n_layers - r->first : 0;
}

/* F-TRAIN-03: ZeRO-3 / FSDP gathers one unit (the largest layer, or the largest tensor
 * outside the layers) in 16 bit and, when trained, its unsharded gradients. */
static void gathered_unit(const struct vf_model *m, const struct step *s,
                          struct vf__train_states_in *in)
{
    const struct vf__train_run *r = &s->r;
    bool full = r->method == VF_TRAIN_FULL, freeze = r->method == VF_TRAIN_FREEZE;
    uint64_t unit = s->tl.outside_max;
    bool unit_trained = full;
    for (uint32_t l = 0; l < m->n_layers; l++)
        if (s->tl.sums[l].bytes > unit) {
            unit = s->tl.sums[l].bytes;
            unit_trained = full || (freeze && l >= r->first);
        }
    in->unit_bytes = unit;
    in->unit_grads = unit_trained;
}

/*
 * F-TRAIN-01/03/05/11/12/13/21: the model states of one GPU and the host into s->in and s->st:
 * the weights at their storage (e->weights_bytes), the trained parameters' bytes, sharding
 * and offload; with the optimizer step in backward one tensor's gradient at a time (torchtune
 * optimizer_in_bwd). VF_ERANGE for unknown weight bytes, VF_EINVAL for --optimizer-in-bwd
 * with LoRA or offload.
 */
static enum vf_err model_states(const struct vf_model *m, const struct vf_workload *w,
                                struct step *s, struct vf_estimate *e, struct vf_error *err)
{
    const struct vf__train_run *r = &s->r;
    e->weights_bytes = vf_model_weight_bytes(m, &r->base);
    if (e->weights_bytes == VF_UNKNOWN)
        return vf__errf(err, VF_ERANGE, "'%s': the weight bytes are unknown or overflow", m->id);
    struct vf__train_states_in *in = &s->in;
    vf__train_states_of(r, s->whole, in);
    in->params = m->params;
    in->trained = s->tl.trainable;
    in->opt_bytes = s->tl.opt;
    in->frozen_bytes = s->whole ? e->weights_bytes - s->tl.trained_bytes : e->weights_bytes;
    gathered_unit(m, s, in);
    vf__train_states(in, &s->st);
    /* F-TRAIN-28: DeepSpeed's stage 3 (--zero 3; FSDP releases each unit) keeps released
     * parameters gathered while fewer than stage3_max_live_parameters are
     * (partitioned_param_coordinator.py release_sub_module): up to 1e9 of them in 16 bit stay
     * on the GPU beside the shard, the gathered unit among them. Not in DeepSpeed's own
     * estimator (--accounting deepspeed), which counts the largest layer only. */
    s->live = 0;
    if (w->train.zero == VF_ZERO_3 && r->acct == VF_ACCT_ZERO && in->stage >= 3 &&
        (r->group > 1 || r->offload == VF_OFFLOAD_PARAMS)) {
        uint64_t n = m->params < TRAIN_DS_MAX_LIVE ? m->params : TRAIN_DS_MAX_LIVE;
        uint64_t live = vf__sat_mul(n, in->w_bytes);
        if (live > in->unit_bytes) {
            s->live = live - in->unit_bytes;
            s->st.weights = vf__sat_add(s->st.weights, s->live);
        }
    }
    bool asked = w->train.optimizer_in_bwd;
    s->in_bwd = r->in_bwd && s->whole && r->offload == VF_OFFLOAD_NONE;
    if (asked && !s->in_bwd)
        return vf__errf(err, VF_EINVAL,
                        "--optimizer-in-bwd frees each gradient of a full or freeze fine-tune "
                        "on the GPU; it does not combine with %s",
                        s->whole ? "--offload" : "LoRA (its gradients are already small)");
    if (s->in_bwd && r->zero < 2) {
        uint64_t one = vf__sat_mul(s->tl.largest, in->g_bytes);
        if (one < s->st.grads)
            s->st.grads = one;
    }
    return VF_OK;
}

/* F-TRAIN-01/03/05/13: the weights component: the base (freeze: all but the last layers;
 * LoRA: frozen, + the adapters), its shard, the gathered unit, the dequantization buffer. */
static void add_weights(struct vf_arena *a, struct vf_estimate *e, const struct step *s)
{
    const struct vf__train_run *r = &s->r;
    const char *wnote;
    if (s->whole)
        wnote = vf_arena_printf(a, "%s%s", r->base.name,
                                r->method == VF_TRAIN_FREEZE ? ", frozen but the last layers" : "");
    else
        wnote = vf_arena_printf(a, "%s base (frozen) + %s adapters", r->base.name,
                                s->pure ? "bf16" : "fp32");
    if (r->zero >= 3 && r->group > 1)
        wnote = vf_arena_printf(a, "%s%s", wnote, s->shard);
    if (r->offload == VF_OFFLOAD_PARAMS)
        wnote = vf_arena_printf(a, "%s, offloaded to the host", wnote);
    if (s->live)
        wnote = vf_arena_printf(a, "%s + live parameters (stage3_max_live_parameters 1e9)", wnote);
    else if (s->st.weights >= s->in.unit_bytes && s->in.unit_bytes && s->in.stage >= 3 &&
             (r->group > 1 || r->offload == VF_OFFLOAD_PARAMS))
        wnote = vf_arena_printf(a, "%s + 1 gathered layer", wnote);
    if (s->tl.dequant)
        wnote = vf_arena_printf(a, "%s + bf16 dequantization buffer", wnote);
    if (s->tl.upcast)
        wnote = vf_arena_printf(a, "%s; embeddings, lm_head, norms in fp32", wnote);
    vf__add_component(e, "weights",
                      vf__sat_add(vf__sat_add(s->st.weights, s->tl.dequant), s->tl.upcast), NULL,
                      wnote);
}

/* F-TRAIN-01/03/04/13/21: the gradients component. */
static void add_gradients(struct vf_arena *a, struct vf_estimate *e, const struct step *s)
{
    const struct vf__train_run *r = &s->r;
    const char *gnote = s->whole ? (s->in.g_bytes == 4 ? "fp32" : "bf16")
                                 : (s->pure ? "bf16, adapters only" : "fp32, adapters only");
    /* F-TRAIN-25: set_to_none frees them after each step; with one micro-step per step they
     * exist from backward to the step, not beside the saved activations */
    bool step_only = s->whole && r->accum == 1 && !s->in_bwd && r->offload == VF_OFFLOAD_NONE;
    vf__add_component(
        e, "gradients", s->st.grads, step_only ? "optimizer_step" : NULL,
        vf_arena_printf(a, "%s%s%s%s", gnote, r->zero >= 2 ? s->shard : "",
                        s->in_bwd && r->zero < 2 ? ", one tensor at a time (step in "
                                                   "backward)"
                                                 : "",
                        r->offload != VF_OFFLOAD_NONE ? ", fp32 copy on the host" : ""));
}

/* F-TRAIN-02/03/13/14: the optimizer_states component. */
static void add_optimizer(struct vf_arena *a, struct vf_estimate *e, const struct step *s)
{
    const struct vf__train_run *r = &s->r;
    const char *onote;
    switch (r->opt) {
    case VF_OPT_ADAMW8BIT:
        onote = "8-bit AdamW: uint8 m and v + fp32 absmax";
        break;
    case VF_OPT_PAGED_ADAMW8BIT:
        onote = "paged 8-bit AdamW: uint8 m and v + fp32 absmax";
        break;
    case VF_OPT_SGD:
        onote = s->pure ? "SGD: bf16 momentum" : "SGD: fp32 momentum";
        break;
    case VF_OPT_LION:
        onote = s->pure ? "Lion: bf16 momentum" : "Lion: fp32 momentum";
        break;
    case VF_OPT_ADAFACTOR:
        onote = "Adafactor: factored second moment";
        break;
    default:
        onote = s->pure ? "AdamW: bf16 m and v" : "AdamW: fp32 m and v";
        break;
    }
    if (r->opt == VF_OPT_PAGED_ADAMW8BIT && r->offload == VF_OFFLOAD_NONE) {
        /* F-TRAIN-26: bitsandbytes allocates paged states with cudaMallocManaged: unified
         * memory PyTorch's allocator never sees, paged to host RAM under pressure */
        struct vf_component *c =
            vf__add_component(e, "optimizer_states", s->st.opt, NULL,
                              vf_arena_printf(a, "%s%s, unified memory (not in the GPU's peak)",
                                              onote, r->zero >= 1 ? s->shard : ""));
        if (c)
            c->device = VF_DEV_HOST;
        return;
    }
    vf__add_component(
        e, "optimizer_states", s->st.opt, NULL,
        vf_arena_printf(a, "%s%s%s", onote, r->zero >= 1 ? s->shard : "",
                        r->offload == VF_OFFLOAD_NONE ? "" : ", offloaded to the host"));
}

/* F-TRAIN-01/04/11: the master_weights component: an fp32 copy under mixed precision. */
static void add_master(struct vf_arena *a, struct vf_estimate *e, const struct step *s)
{
    const struct vf__train_run *r = &s->r;
    const char *mnote =
        !s->whole ? (s->pure ? "none: pure bf16" : "none: adapters are fp32")
        : s->fp32 ? "none: the weights are fp32"
        : s->pure ? "none: pure bf16"
                  : vf_arena_printf(a, "fp32 copy%s%s", r->zero >= 1 ? s->shard : "",
                                    r->offload == VF_OFFLOAD_NONE ? "" : ", offloaded to the host");
    vf__add_component(e, "master_weights", s->st.master, NULL, mnote);
}

/* F-TRAIN-06/07/15/16/17: saved activation bytes per token: every trained layer's (full
 * recomputation: their inputs + the largest layer live again), then the final norm and the
 * lm_head input. */
static uint64_t act_per_token(const struct vf_model *m, const struct step *s)
{
    const struct vf__train_run *r = &s->r;
    uint64_t per_tok = 0, max_layer = 0, h = m->hidden, work = 0;
    for (uint32_t l = r->first; l < m->n_layers; l++) {
        const struct layer_sum *ls = &s->tl.sums[l];
        uint64_t x = layer_act(m, l, ls, r); /* as saved without checkpointing */
        per_tok = vf__sat_add(per_tok, x);
        if (x > max_layer)
            max_layer = x;
        /* F-TRAIN-27: a layer's backward works on the gradients of its input and output
         * (2 h) and of the MLP's widest tensors (gate, up, their product: 3 I) */
        uint64_t k = m->n_experts_used ? m->n_experts_used : 1;
        uint64_t wide = ls->moe ? k * ls->exp_up + ls->shexp_up : ls->ffn_up;
        uint64_t wk = r->u * (2 * h + 3 * wide);
        if (wk > work)
            work = wk;
    }
    max_layer = vf__sat_add(max_layer, work);
    /* F-TRAIN-23: under autocast the fp32 embeddings of prepare_model_for_kbit_training
     * make the residual stream, and so each saved layer input, fp32 */
    unsigned ur = r->kbit_prep && r->prec != VF_PREC_PURE_BF16 ? 4 : r->u;
    if (r->gc == VF_GC_FULL)
        per_tok = vf__train_ckpt_per_token(m->n_layers - r->first, ur, h, max_layer);
    else if (r->gc == VF_GC_OFFLOAD) /* F-TRAIN-24: inputs in host RAM, two in flight */
        per_tok = vf__train_ckpt_per_token(2, ur, h, max_layer);
    uint64_t fnorm = r->liger || r->compile || r->gc == VF_GC_SELECTIVE ? r->u * h + 4 : 4 * h + 4;
    /* the lm_head input: fp32 under prepare_model_for_kbit_training (F-TRAIN-23) */
    return vf__sat_add(per_tok, vf__sat_add(vf__sat_mul(s->tl.final_norm, fnorm), ur * h));
}

/* F-TRAIN-06/07/17: the activations component: per token times the tokens of a micro-batch. */
static void add_activations(struct vf_arena *a, const struct vf_model *m, struct step *s,
                            struct vf_estimate *e)
{
    const struct vf__train_run *r = &s->r;
    uint32_t saving = m->n_layers - r->first;
    s->tokens = vf__sat_mul(r->seq, r->batch);
    s->per_tok = act_per_token(m, s);
    s->acts = vf__sat_mul(s->per_tok, s->tokens);
    const char *anote;
    if (r->gc == VF_GC_FULL)
        anote = vf_arena_printf(a, "checkpointed: %u layer inputs + 1 layer", saving);
    else if (r->gc == VF_GC_OFFLOAD)
        anote = vf_arena_printf(a, "checkpoints of %u layers in host RAM, 1 layer live", saving);
    else if (r->gc == VF_GC_SELECTIVE)
        anote = vf_arena_printf(a, "selective recomputation, %u layers", saving);
    else
        anote = vf_arena_printf(a, "%u layers, all saved", saving);
    if (!r->fa)
        anote = vf_arena_printf(a, "%s, eager attention (s^2 scores)", anote);
    vf__add_component(e, "activations", s->acts, "backward", anote);
    s->act_host = 0;
    if (r->gc == VF_GC_OFFLOAD) {
        /* F-TRAIN-24: every layer's input in pinned host RAM */
        unsigned ur = r->kbit_prep && r->prec != VF_PREC_PURE_BF16 ? 4 : r->u;
        s->act_host = vf__sat_mul(vf__sat_mul(saving, (uint64_t)ur * m->hidden), s->tokens);
        struct vf_component *c =
            vf__add_component(e, "activations", s->act_host, NULL, "offloaded checkpoints, pinned");
        if (c)
            c->device = VF_DEV_HOST;
    }
}

/* F-TRAIN-08/18: the logits component: the fp32 cross-entropy at its backward, or one chunk of
 * it beside the 16-bit logits (--chunked-ce), or Liger's fused chunks (--liger). */
static void add_logits(struct vf_arena *a, const struct vf_model *m, struct step *s,
                       struct vf_estimate *e)
{
    const struct vf__train_run *r = &s->r;
    uint64_t tokens = s->tokens, tv = vf__sat_mul(tokens, m->vocab);
    const char *lnote;
    if (r->fused_ce) {
        /* Liger's fused linear cross-entropy: chunks of next_pow2(ceil(BT / ceil(V / h)))
         * tokens, their u-byte logits turned into gradients in place, + the u-byte gradient
         * of the final hidden states */
        uint64_t inc = m->hidden ? vf__div_ceil(m->vocab, m->hidden) : 1;
        uint64_t chunk = vf__div_ceil(tokens, inc ? inc : 1), p2 = 1;
        while (p2 < chunk && p2 < VF_MAX_CTX_TOKENS)
            p2 <<= 1;
        if (p2 > tokens)
            p2 = tokens;
        s->logits = vf__sat_add(vf__sat_mul(vf__sat_mul(p2, m->vocab), r->u),
                                vf__sat_mul(tokens, r->u * (uint64_t)m->hidden));
        /* F-TRAIN-24: uncompiled, a chunked linear loss whose chunks autograd saves
         * (torchtune LinearCrossEntropyLoss) keeps each chunk's fp32 log-probabilities */
        if (r->fused_saved && !r->compile)
            s->logits = vf__sat_add(s->logits, vf__sat_mul(tv, r->fused_saved));
        lnote = vf_arena_printf(a, "fused linear cross-entropy, chunks of %llu tokens",
                                (unsigned long long)p2);
    } else if (r->ce_chunks) {
        /* the 16-bit logits whole + one chunk's fp32 cross-entropy at a time */
        /* compiled, a chunk's loss keeps no fp32 copies: its fp32 gradient only (4) */
        s->logits = vf__sat_add(
            vf__sat_mul(tv, r->u),
            vf__div_ceil(vf__sat_mul(tv, r->compile ? 4 : TRAIN_LOGIT_BYTES), r->ce_chunks));
        lnote =
            vf_arena_printf(a, "%llu tokens x %llu vocab, chunked cross-entropy (%u chunks)",
                            (unsigned long long)tokens, (unsigned long long)m->vocab, r->ce_chunks);
    } else {
        /* F-TRAIN-08/24: the transformers release's bytes; compiled, the loss is one kernel
         * over the 16-bit logits writing their 16-bit gradient, + an fp32 row at a time */
        unsigned lb = r->compile ? 2 * r->u : r->logit_bytes ? r->logit_bytes : TRAIN_LOGIT_BYTES;
        s->logits = vf__sat_mul(tv, lb);
        lnote = vf_arena_printf(a, "%llu tokens x %llu vocab, %s cross-entropy (%u B each)",
                                (unsigned long long)tokens, (unsigned long long)m->vocab,
                                r->compile ? "compiled" : "fp32", lb);
    }
    if (r->kbit_prep && r->prec != VF_PREC_PURE_BF16 && !r->fused_ce) {
        /* F-TRAIN-23: autocast casts the fp32 lm_head to bf16 for its matmul and autograd
         * keeps that copy until the lm_head's backward: vocab x hidden x 2 */
        s->logits = vf__sat_add(s->logits, vf__sat_mul((uint64_t)m->vocab * 2, m->hidden));
        lnote = vf_arena_printf(a, "%s + the lm_head's bf16 autocast copy", lnote);
    }
    vf__add_component(e, "logits", s->logits, "backward", lnote);
}

/* F-TRAIN-12/13: what offload moves to the host, per node, each state a host component, and
 * DeepSpeed's buffers above them as the host's runtime_overhead. */
static void add_host(struct vf_estimate *e, const struct step *s)
{
    const struct vf__train_states *st = &s->st;
    const char *hnames[4] = {"weights", "gradients", "optimizer_states", "master_weights"};
    uint64_t hbytes[4] = {st->host_weights, st->host_grads, st->host_opt, st->host_master};
    uint64_t hsum = 0;
    for (int i = 0; i < 4; i++) {
        if (!hbytes[i])
            continue;
        struct vf_component *c = vf__add_component(e, hnames[i], hbytes[i], NULL,
                                                   i == 1 ? "fp32, for the CPU optimizer step"
                                                          : "offloaded, this node's share");
        if (c)
            c->device = VF_DEV_HOST;
        hsum = vf__sat_add(hsum, hbytes[i]);
    }
    if (st->host_step > hsum) {
        struct vf_component *c = vf__add_component(e, "runtime_overhead", st->host_step - hsum,
                                                   NULL, "DeepSpeed estimator: x1.5 buffer");
        if (c)
            c->device = VF_DEV_HOST;
    }
    /* F-TRAIN-29: the load, a moment of its own before the steps */
    if (st->host_load) {
        struct vf_component *c = vf__add_component(
            e, "weights", st->host_load, "load",
            s->r.zero >= 3 ? "while loading: zero.Init partitions as it builds, the largest "
                             "layer per rank of the node"
                           : "while loading: every rank of the node builds the whole model");
        if (c)
            c->device = VF_DEV_HOST;
    }
}

/* F-TRAIN-01/11/12: how the precision keeps a trained parameter, for the assumptions. */
static const char *precision_text(const struct step *s)
{
    if (s->fp32)
        return "fp32 weights, gradients and optimizer states, no master copy "
               "(16 B/param with AdamW)";
    if (s->pure)
        return "pure bf16: bf16 weights, gradients and optimizer states, "
               "no fp32 master copy (8 B/param with AdamW; LLaMA-Factory "
               "pure_bf16, torchtune)";
    if (s->r.acct == VF_ACCT_DEEPSPEED)
        return "bf16 mixed precision in DeepSpeed's accounting: bf16 weights, "
               "fp32 gradients, fp32 master copy + optimizer (18 B/param with "
               "AdamW)";
    return "bf16 mixed precision: bf16 weights and gradients + fp32 master "
           "copy + optimizer (ZeRO paper accounting, 16 B/param with "
           "AdamW)";
}

/* F-TRAIN-04/05: what LoRA/QLoRA trains and how the base is kept. */
static void assume_adapters(struct vf_arena *a, const struct vf_workload *w, const struct step *s,
                            struct vf_estimate *e)
{
    const struct vf__train_run *r = &s->r;
    const char *tl = r->targets == all_linear() || !w->train.lora_targets
                         ? "q,k,v,o,gate,up,down of every layer (PEFT all-linear; MoE: every "
                           "expert and shared expert, not the router)"
                         : vf_arena_printf(a, "%s of every layer", w->train.lora_targets);
    vf__assume(a, e,
               "%s r=%llu on %s: %llu trainable params, %s adapters with %s gradients "
               "(PEFT autocast_adapter_dtype; F-TRAIN-04)",
               r->method == VF_TRAIN_QLORA ? "QLoRA" : "LoRA", (unsigned long long)r->rank, tl,
               (unsigned long long)s->tl.trainable, s->pure ? "bf16" : "fp32",
               s->pure ? "bf16" : "fp32");
    vf__assume(a, e, "base weights frozen in %s, no gradients or optimizer states%s (F-TRAIN-05)",
               r->base.name,
               s->tl.dequant ? "; one linear at a time dequantized to bf16 for its matmul "
                               "(bitsandbytes/torchao NF4)"
                             : "");
}

/* F-TRAIN-01/04/05/11/15, F-W-06: the engine, what the method trains and in what precision,
 * the frozen base. */
static void assume_method(struct vf_arena *a, const struct vf_model *m, const struct vf_workload *w,
                          const struct step *s, struct vf_estimate *e)
{
    const struct vf__train_run *r = &s->r;
    vf__assume(a, e,
               "engine pytorch: one training step of PyTorch 2.x (the framework's stack; "
               "DeepSpeed/FSDP on several GPUs): model states + overhead + the larger phase, "
               "the start of backward (saved activations + logits) or the optimizer step "
               "(gradients) (F-TRAIN-01..10, 25)");
    if (r->method == VF_TRAIN_FREEZE)
        vf__assume(a, e,
                   "freeze tuning: the last %u of %u layers trained (%llu params), the rest "
                   "frozen in %s; layers below the first trained one save no activations "
                   "(LLaMA-Factory freeze_trainable_layers; F-TRAIN-15); %s (F-TRAIN-01/11)",
                   m->n_layers - r->first, m->n_layers, (unsigned long long)s->tl.trainable,
                   r->base.name, precision_text(s));
    else if (s->whole)
        vf__assume(a, e, "full fine-tune: every parameter trained; %s (F-TRAIN-01/11)",
                   precision_text(s));
    else
        assume_adapters(a, w, s, e);
    if (r->method == VF_TRAIN_QLORA && w->weights.kind == VF_QK_NATIVE)
        vf__assume(a, e,
                   "NF4: bitsandbytes 4-bit, block 64, double-quantized absmax; embeddings, "
                   "lm_head and norms stay bf16 (F-W-06)");
    if (m->native.kind != VF_QK_NATIVE && m->native.kind != VF_QK_PLAIN &&
        w->weights.kind == VF_QK_NATIVE && r->method != VF_TRAIN_QLORA)
        vf__assume(a, e, "'%s' ships as %s: trained from a bf16 copy of its weights", m->id,
                   m->native.name);
}

/* F-TRAIN-02/14: the optimizer and the bytes of its states. */
static void assume_optimizer(struct vf_arena *a, const struct step *s, struct vf_estimate *e)
{
    enum vf_optimizer o = s->r.opt;
    switch (o) {
    case VF_OPT_ADAMW8BIT:
    case VF_OPT_PAGED_ADAMW8BIT:
        vf__assume(a, e,
                   "%s8-bit AdamW (bitsandbytes): uint8 m and v + one fp32 absmax each per "
                   "block of %d (2.03 B/param); tensors under %d elements keep fp32 states%s "
                   "(F-TRAIN-02)",
                   o == VF_OPT_PAGED_ADAMW8BIT ? "paged " : "", BNB_OPT_BLOCK, BNB_MIN_8BIT,
                   o == VF_OPT_PAGED_ADAMW8BIT
                       ? "; paged: the states sit in CUDA unified memory and spill to host RAM "
                         "when the GPU runs out, so a spike slows the step instead of failing it"
                       : "");
        break;
    case VF_OPT_SGD:
        vf__assume(a, e, "SGD with momentum: one momentum buffer, %d B/param (F-TRAIN-02)",
                   s->pure ? 2 : 4);
        break;
    case VF_OPT_LION:
        vf__assume(a, e, "Lion: one momentum buffer, %d B/param (Chen et al. 2023; F-TRAIN-14)",
                   s->pure ? 2 : 4);
        break;
    case VF_OPT_ADAFACTOR:
        vf__assume(a, e,
                   "Adafactor: factored second moment, a row and a column vector per matrix "
                   "(the whole moment for vectors), no first moment (beta1 = None, the "
                   "transformers default; F-TRAIN-14)");
        break;
    default:
        vf__assume(a, e,
                   "AdamW: %s m and v, %d B/param; fused or multi-tensor kernels with no "
                   "per-step copies (torch's foreach AdamW adds up to the fp32 parameters' "
                   "size at the step) (F-TRAIN-02)",
                   s->pure ? "bf16" : "fp32", s->pure ? 4 : 8);
        break;
    }
}

/* F-TRAIN-06/07/17: the tokens of a micro-step, the batch, and what checkpointing keeps. */
static void assume_batch(struct vf_arena *a, const struct vf_workload *w, const struct step *s,
                         struct vf_estimate *e)
{
    const struct vf__train_run *r = &s->r;
    if (!w->ctx_tokens && r->preset && r->preset->seq)
        vf__assume(a, e,
                   "sequence %llu tokens per sample: the framework truncates to it by default "
                   "(TRL SFTConfig max_length; --seq to change) (F-TRAIN-22)",
                   (unsigned long long)r->seq);
    else if (!w->ctx_tokens)
        vf__assume(a, e, "sequence %d tokens per sample: the default (--seq to change)",
                   TRAIN_DEFAULT_SEQ);
    vf__assume(a, e,
               "micro-batch %llu per GPU%s x %llu accumulation steps x %u GPUs = effective "
               "batch %llu; %llu tokens per micro-step; gradient accumulation adds no memory "
               "(the gradients are already counted)",
               (unsigned long long)r->batch, w->train.batch ? "" : " (the default; --batch)",
               (unsigned long long)r->accum, r->n, (unsigned long long)(r->batch * r->accum * r->n),
               (unsigned long long)s->tokens);
    if (r->gc == VF_GC_FULL)
        vf__assume(a, e,
                   "gradient checkpointing: each layer keeps its input, one layer is "
                   "recomputed at a time (Korthikanti et al. 2022 full recomputation; "
                   "F-TRAIN-07)");
    else if (r->gc == VF_GC_SELECTIVE)
        vf__assume(a, e,
                   "selective recomputation: the matmul outputs are kept, norms, activation "
                   "functions and attention scores are recomputed (torchtitan's op policy, "
                   "Korthikanti et al. 2022 selective; F-TRAIN-17)");
    else
        vf__assume(a, e,
                   "no gradient checkpointing: every layer keeps its activations until "
                   "backward (--grad-checkpointing recomputes them; F-TRAIN-06)");
}

/* F-TRAIN-06/08/16/18: what a layer saves per token, and how the loss holds the logits. */
static void assume_activations(struct vf_arena *a, const struct vf_model *m, const struct step *s,
                               struct vf_estimate *e)
{
    const struct vf__train_run *r = &s->r;
    char b1[32];
    vf__assume(a, e,
               "activations in %s: %s, no dropout, %s; %s per token over %u layers "
               "(Korthikanti et al. 2022 adapted to GQA/SwiGLU/RMSNorm; F-TRAIN-06)",
               s->fp32 ? "fp32" : "16 bit",
               r->fa ? "FlashAttention (no s^2 scores; fp32 log-sum-exp)"
                     : "eager attention: fp32 softmax and the probabilities saved, s^2 per head "
                       "(F-TRAIN-16)",
               r->compile ? "norms and SwiGLU fused by torch.compile (F-TRAIN-24)"
               : r->liger ? "fused RMSNorm and SwiGLU kernels (Liger, Unsloth)"
                          : "RMSNorm inputs kept in fp32 as HF's eager RMSNorm does",
               vf_format_bytes(b1, sizeof b1, s->per_tok, VF_FMT_IEC), m->n_layers - r->first);
    if (r->fused_ce)
        vf__assume(a, e,
                   "fused linear cross-entropy (Liger, Unsloth, TRL chunked_nll, torchtune "
                   "LinearCrossEntropyLoss): lm_head and loss by chunks of tokens, never the "
                   "whole logits%s (F-TRAIN-18, 24)",
                   r->fused_saved && !r->compile
                       ? "; uncompiled, autograd keeps each chunk's fp32 log-probabilities"
                       : "");
    else if (r->ce_chunks)
        vf__assume(a, e,
                   "chunked cross-entropy (torchtune CEWithChunkedOutputLoss): the 16-bit "
                   "logits whole + one chunk of %u upcast to fp32 at a time (F-TRAIN-18)",
                   r->ce_chunks);
    else
        vf__assume(a, e,
                   "logits: upcast to fp32 for cross-entropy, %u B per token x vocab at the "
                   "loss's larger phase (%s); chunked or fused cross-entropy (--chunked-ce, "
                   "--liger) needs "
                   "far less (F-TRAIN-08)",
                   r->compile       ? 2 * r->u
                   : r->logit_bytes ? r->logit_bytes
                                    : TRAIN_LOGIT_BYTES,
                   r->compile ? "compiled into one kernel" : "the transformers release's loss");
}

/* F-TRAIN-03/12/13: data parallelism, the sharding, offload, DeepSpeed's accounting. */
static void assume_parallel(struct vf_arena *a, const struct vf_workload *w, const struct step *s,
                            struct vf_estimate *e)
{
    const struct vf__train_run *r = &s->r;
    if (r->n <= 1 && r->offload == VF_OFFLOAD_NONE)
        vf__assume(a, e, "1 GPU: no sharding, no NCCL buffers");
    else if (r->zero == 0)
        vf__assume(a, e,
                   "data parallel over %u GPUs (DDP, ZeRO-0 / FSDP no_shard): every GPU holds "
                   "all model states (F-TRAIN-03)",
                   r->n);
    else
        vf__assume(
            a, e,
            "%u GPU%s, ZeRO-%u%s: %s divided by %u%s (ZeRO paper)%s; NCCL buffers not "
            "counted (F-TRAIN-03)",
            r->n, r->n > 1 ? "s" : "", r->zero,
            w->train.fsdp != VF_FSDP_NONE
                ? vf_arena_printf(a, " (FSDP %s)", vf_fsdp_name(w->train.fsdp))
            : r->zero == 3 ? " / FSDP full_shard"
            : r->zero == 2 ? " / FSDP shard_grad_op"
                           : "",
            r->zero == 1   ? "optimizer states and master copy"
            : r->zero == 2 ? "optimizer states, master copy and gradients"
                           : "weights, gradients, optimizer states and master copy",
            r->group > 1 ? r->group : 1,
            r->group != r->n ? vf_arena_printf(a, " (hybrid: within a node of %u)", r->group) : "",
            r->zero == 3 ? " + the largest layer gathered (DeepSpeed largest_layer_memory)" : "");
    if (r->offload != VF_OFFLOAD_NONE)
        vf__assume(a, e,
                   "offload %s: the fp32 master copy, fp32 gradients and optimizer states%s in "
                   "host RAM, the optimizer step on the CPU (DeepSpeed ZeRO-Offload); host "
                   "figures per node of %u GPUs (F-TRAIN-13)",
                   vf_offload_name(r->offload),
                   r->offload == VF_OFFLOAD_PARAMS ? " and the 16-bit weights" : "",
                   r->n < TRAIN_GPUS_PER_NODE ? r->n : TRAIN_GPUS_PER_NODE);
    if (r->acct == VF_ACCT_DEEPSPEED)
        vf__assume(a, e,
                   "DeepSpeed accounting: its estimator's formulas (docs memory.rst, "
                   "estimate_zero2/3_model_states_mem_needs): fp32 gradients, ZeRO-2 keeps the "
                   "16-bit gradients whole, host RAM x1.5 buffer, zero.Init under ZeRO-3 "
                   "(F-TRAIN-12)");
}

/* F-TRAIN-22..24: the framework whose defaults were taken, and what they turned on. */
static void assume_framework(struct vf_arena *a, const struct vf_workload *w, const struct step *s,
                             struct vf_estimate *e)
{
    const struct vf__train_run *r = &s->r;
    const struct vf__train_preset *p = r->preset;
    vf__extra_text(e, "framework", vf_arena_printf(a, "%s@%s", p->name, p->version));
    vf__assume(
        a, e,
        "framework %s%s: %s; knobs not given take its defaults: checkpointing %s, %s, %s, "
        "%s%s%s (F-TRAIN-22)",
        p->name,
        w->train.framework == VF_FW_DEFAULT ? " (the default, the most common stack; "
                                              "--framework hf|trl|unsloth|torchtune|axolotl|"
                                              "llama-factory|torchtitan|deepspeed)"
                                            : "",
        p->source, vf_grad_ckpt_name(r->gc), vf_precision_name(r->prec), vf_optimizer_name(r->opt),
        r->fused_ce    ? "fused/chunked lm_head + loss"
        : r->ce_chunks ? "chunked cross-entropy"
                       : "plain cross-entropy",
        r->compile ? ", torch.compile" : "", r->in_bwd ? ", optimizer step in backward" : "");
    if (r->kbit_prep)
        vf__assume(a, e,
                   "QLoRA through PEFT's prepare_model_for_kbit_training (peft/utils/other.py): "
                   "the 16-bit tensors (embeddings, lm_head, norms) cast to fp32, +%s; under "
                   "autocast the residual stream and so each checkpointed layer input is fp32; "
                   "use_gradient_checkpointing=True turns checkpointing on (F-TRAIN-23)",
                   vf_format_bytes((char[32]){0}, 32, s->tl.upcast, VF_FMT_IEC));
    if (r->gc == VF_GC_OFFLOAD)
        vf__assume(a, e,
                   "checkpoints offloaded: each layer's input goes to host RAM as it is saved "
                   "and back for its recomputation, two in flight on the GPU (Unsloth "
                   "use_gradient_checkpointing=\"unsloth\"; F-TRAIN-24)");
}

/* F-TRAIN-09: what the runtime overhead counts. */
static void assume_overhead(struct vf_arena *a, const struct vf__train_run *r,
                            struct vf_estimate *e)
{
    vf__assume(a, e,
               "runtime overhead: CUDA context ~400 MiB with lazy module loading "
               "(pytorch#109888; PyTorch 1.13+ sets CUDA_MODULE_LOADING=LAZY on CUDA 11.7+)%s "
               "+ cuBLAS/cuBLASLt workspaces 40 MiB + %d %% of activations and logits for "
               "allocator slack (Megatron-LM overhead_factor; F-TRAIN-09)",
               r->eager ? ", + 362 MiB as --cuda-module-loading eager loads every kernel "
                          "(pytorch PR #86509: 666,632,192 B eager vs 287,047,680 lazy)"
                        : " (--cuda-module-loading eager: +362 MiB)",
               VF_RT_ALLOC_SLACK_PCT);
}

/* GPU bytes of e's components in `phase` (NULL: those of every phase). */
static uint64_t phase_bytes(const struct vf_estimate *e, const char *phase)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < e->n_components; i++) {
        const struct vf_component *c = &e->components[i];
        if (c->device == VF_DEV_HOST)
            continue;
        if (phase ? c->phase && !strcmp(c->phase, phase) : !c->phase)
            sum = vf__sat_add(sum, c->bytes);
    }
    return sum;
}

/* F-TRAIN-10/25: the peak is a phase: what every phase holds (the model states) + the larger
 * of the backward (saved activations + logits at the loss's backward, + gradients kept across
 * micro-steps) and the optimizer step (every gradient); e->peak_phase names it. The host's:
 * offloaded states and paged optimizer states. */
static void llm_total(struct vf_arena *a, struct vf_estimate *e, const struct step *s)
{
    char b1[32], b2[32];
    uint64_t base = phase_bytes(e, NULL);
    uint64_t bwd = phase_bytes(e, "backward"), opt = phase_bytes(e, "optimizer_step");
    e->peak_phase = bwd >= opt ? "backward" : "optimizer_step";
    e->total_bytes = vf__sat_add(base, bwd >= opt ? bwd : opt);
    uint64_t host = vf__sat_add(s->st.host_step, s->act_host);
    if (s->r.opt == VF_OPT_PAGED_ADAMW8BIT && s->r.offload == VF_OFFLOAD_NONE)
        host = vf__sat_add(host, s->st.opt);
    /* F-TRAIN-29: the node's host RAM is the larger of the load and the steps */
    e->host_bytes = host > s->st.host_load ? host : s->st.host_load;
    if (s->st.host_load) {
        vf__extra_u64(e, "host_load_bytes", s->st.host_load);
        vf__extra_u64(e, "host_step_bytes", host);
        vf__assume(a, e,
                   "host RAM of a node of %u: %s while the model loads (%s), %s during the "
                   "steps (F-TRAIN-29)",
                   s->r.n < TRAIN_GPUS_PER_NODE ? s->r.n : TRAIN_GPUS_PER_NODE,
                   vf_format_bytes(b1, sizeof b1, s->st.host_load, VF_FMT_IEC),
                   s->r.zero >= 3 ? "deepspeed.zero.Init, which transformers' from_pretrained "
                                    "enters under ZeRO-3: each rank partitions every layer "
                                    "as it is built, so it holds the largest one at most; "
                                    "FSDP without cpu_ram_efficient_loading builds the whole "
                                    "model on every rank"
                                  : "every rank builds the whole model before the engine "
                                    "shards it",
                   vf_format_bytes(b2, sizeof b2, host, VF_FMT_IEC));
    }
    vf__assume(a, e,
               "peak phase %s: start of backward %s, optimizer step %s; gradients are freed "
               "between steps (zero_grad set_to_none) (F-TRAIN-25)",
               bwd >= opt ? "backward" : "optimizer step",
               vf_format_bytes(b1, sizeof b1, vf__sat_add(base, bwd), VF_FMT_IEC),
               vf_format_bytes(b2, sizeof b2, vf__sat_add(base, opt), VF_FMT_IEC));
}

/*
 * F-TRAIN-01..18, 21: the estimate of a language model, its terms in the order they are
 * shown: model states (weights, gradients, optimizer states, master copy), activations,
 * logits, runtime overhead, the host's share; then the assumptions, the peak (F-TRAIN-10) and,
 * with a card given, the fixes (F-TRAIN-19). Errors: those of vf__train_resolve, a LoRA rank
 * too wide, --optimizer-in-bwd with LoRA or offload, VF_ERANGE on overflow.
 */
static enum vf_err llm_estimate(struct vf_arena *a, const struct vf_model *m,
                                const struct vf_workload *w, struct vf_estimate *e,
                                struct vf_error *err)
{
    struct step s;
    enum vf_err rc = vf__train_resolve(a, m, w, &s.r, err);
    if (rc)
        return rc;
    s.whole = s.r.method == VF_TRAIN_FULL || s.r.method == VF_TRAIN_FREEZE;
    s.pure = s.r.prec == VF_PREC_PURE_BF16;
    s.fp32 = s.r.prec == VF_PREC_FP32;
    llm_header(e, m, w, &s);
    if ((rc = tally(m, &s.r, &s.tl, err)))
        return rc;
    e->trainable_params = s.tl.trainable;
    if ((rc = model_states(m, w, &s, e, err)))
        return rc;
    s.shard = vf__train_shard_note(a, &s.r);
    add_weights(a, e, &s);
    add_gradients(a, e, &s);
    add_optimizer(a, e, &s);
    add_master(a, e, &s);
    add_activations(a, m, &s, e);
    add_logits(a, m, &s, e);
    vf__train_add_overhead(e, vf__sat_add(s.acts, s.logits), s.r.eager);
    add_host(e, &s);

    assume_framework(a, w, &s, e);
    assume_method(a, m, w, &s, e);
    assume_optimizer(a, &s, e);
    assume_batch(a, w, &s, e);
    assume_activations(a, m, &s, e);
    assume_parallel(a, w, &s, e);
    assume_overhead(a, &s.r, e);
    llm_total(a, e, &s);
    vf__train_fixes(a, m, w, &s.r, e);
    return VF_OK;
}

/* The engine's estimate: a denoiser's (est_train_diffusion.c) or a language model's, each
 * with its fixes when a card is given and the peak is above it. */
static enum vf_err train_estimate(struct vf_arena *a, const struct vf_model *m,
                                  const struct vf_workload *w, struct vf_estimate *e,
                                  struct vf_error *err)
{
    if (!m->pipeline)
        return llm_estimate(a, m, w, e, err);
    enum vf_err rc = vf__train_diffusion(a, m, w, e, err);
    if (!rc) {
        struct vf__train_run r;
        vf__train_diffusion_run(m, w, &r);
        vf__train_fixes(a, m, w, &r, e);
    }
    return rc;
}

const struct vf_engine vf__engine_pytorch = {
    .name = "pytorch",
    .version = "2.5",
    .tasks = 1u << VF_TASK_TRAIN,
    .can_split = train_can_split,
    .estimate = train_estimate,
};
