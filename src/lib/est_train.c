/*
 * est_train.c - the training and fine-tuning estimate (engine "pytorch"): the peak of one
 * GPU during a training step of full fine-tuning, LoRA or QLoRA, with AdamW, 8-bit AdamW or
 * SGD, data parallel over several GPUs with ZeRO/FSDP sharding. The peak is at the start of
 * backward: model states, every saved activation and the cross-entropy buffers of the logits
 * are live together. Formulas F-TRAIN-01..10 in docs/FORMULAS.md (section "Training").
 *
 * What is modelled is a PyTorch eager training step as Hugging Face transformers + PEFT (or
 * DeepSpeed/FSDP for several GPUs) runs it: bf16 mixed precision with an fp32 master copy,
 * FlashAttention, RMSNorm inputs saved in fp32, the logits upcast to fp32 for the loss.
 */
#include "internal.h"

#include <stdio.h>
#include <string.h>

/* F-TRAIN-06: sequence length per sample when none is given. */
#define TRAIN_DEFAULT_SEQ 2048
/* F-TRAIN-04: LoRA rank when none is given (PEFT examples, LLaMA-Factory use 8-16). */
#define TRAIN_DEFAULT_RANK 16
/* F-TRAIN-02: bitsandbytes 8-bit optimizers: one fp32 absmax per 256 values of each state
 * (bitsandbytes/optim/optimizer.py init_state, block_wise); tensors with fewer than 4096
 * elements keep 32-bit states (min_8bit_size). */
#define BNB_OPT_BLOCK 256
#define BNB_MIN_8BIT  4096
/* F-TRAIN-08: bytes per (token x vocab entry) at the cross-entropy backward: the fp32
 * log-probabilities log_softmax saved, their incoming gradient, and the gradient of the fp32
 * logits it produces (4 + 4 + 4). */
#define TRAIN_LOGIT_BYTES 12
/* F-TRAIN-09: CUDA context with lazy module loading, "around 400MB" (pytorch/pytorch#109888),
 * plus the cuBLASLt workspace (32 MiB on Hopper, PyTorch PR #120925) and the cuBLAS block of
 * 8,519,680 B seen on the first matmul (research A6). */
#define TRAIN_CONTEXT_BYTES (400ULL << 20)
#define TRAIN_CUBLAS_BYTES  ((32ULL << 20) + 8519680ULL)
/* F-TRAIN-09: allocator slack on activations and logits, Megatron-LM's overhead_factor 1.05
 * (megatron/training/theoretical_memory_usage.py; research A7). */
#define TRAIN_SLACK_PCT 5
/* Limits of the knobs this estimator takes. */
#define TRAIN_MAX_BATCH VF_MAX_USERS
#define TRAIN_MAX_RANK  VF_MAX_DIM

#define CLS(c) (1u << (c))

/* F-TRAIN-04: the linear layers LoRA targets (PEFT "all-linear" minus lm_head): attention
 * q, k, v, o (fused qkv, MLA's low-rank halves), the MLP's gate, up and down, every routed
 * expert and the shared experts. Not the router, not recurrent mixers. */
static const uint32_t lora_classes =
    CLS(VF_T_ATTN_Q) | CLS(VF_T_ATTN_K) | CLS(VF_T_ATTN_V) | CLS(VF_T_ATTN_QKV) | CLS(VF_T_ATTN_O) |
    CLS(VF_T_FFN_GATE) | CLS(VF_T_FFN_UP) | CLS(VF_T_FFN_DOWN) | CLS(VF_T_FFN_GATE_EXP) |
    CLS(VF_T_FFN_UP_EXP) | CLS(VF_T_FFN_DOWN_EXP) | CLS(VF_T_FFN_GATE_SHEXP) |
    CLS(VF_T_FFN_UP_SHEXP) | CLS(VF_T_FFN_DOWN_SHEXP);

const char *vf_train_method_name(enum vf_train_method m)
{
    switch (m) {
    case VF_TRAIN_FULL:
        return "full";
    case VF_TRAIN_LORA:
        return "lora";
    case VF_TRAIN_QLORA:
        return "qlora";
    }
    return "?";
}

const char *vf_optimizer_name(enum vf_optimizer o)
{
    switch (o) {
    case VF_OPT_ADAMW:
        return "adamw";
    case VF_OPT_ADAMW8BIT:
        return "adamw8bit";
    case VF_OPT_SGD:
        return "sgd";
    }
    return "?";
}

/* Data parallelism replicates the model (ZeRO shards its states): any number of cards. */
static bool train_can_split(const struct vf_model *m, uint32_t n, const char **why)
{
    (void)m;
    (void)n;
    *why = NULL;
    return true;
}

static bool is_lora_target(enum vf_tclass c)
{
    return (unsigned)c < 32 && (lora_classes & CLS(c)) != 0;
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

/*
 * F-TRAIN-02: optimizer-state bytes of n_tensors tensors of `elems` trained fp32 elements.
 * AdamW: m and v in fp32 (8 B); SGD: one fp32 momentum buffer (4 B); 8-bit AdamW: uint8 m
 * and v plus one fp32 absmax each per block of 256 (2 B + 8 B per block), or fp32 m and v
 * for tensors under 4096 elements. VF_UNKNOWN on overflow.
 */
static uint64_t opt_bytes(enum vf_optimizer o, uint64_t elems, uint64_t n_tensors)
{
    uint64_t per;
    switch (o) {
    case VF_OPT_SGD:
        per = vf__sat_mul(elems, 4);
        break;
    case VF_OPT_ADAMW8BIT:
        if (elems < BNB_MIN_8BIT)
            per = vf__sat_mul(elems, 8);
        else
            per = vf__sat_add(vf__sat_mul(elems, 2),
                              vf__sat_mul(vf__div_ceil(elems, BNB_OPT_BLOCK), 8));
        break;
    default:
        per = vf__sat_mul(elems, 8);
        break;
    }
    return vf__sat_mul(per, n_tensors);
}

/* Is the group stored below 16 bits by scheme q (then dequantized to bf16 at each use)? */
static bool below_16bit(const struct vf_model *m, const struct vf_quant *q,
                        const struct vf_tgroup *g)
{
    uint64_t b = vf__quant_group_bytes(m, q, g);
    return b != VF_UNKNOWN && b < vf__sat_mul(g->n_params, 2);
}

/* Per-layer tallies of one pass over the tensor groups. */
struct layer_sum {
    uint64_t norm_act; /* F-TRAIN-06: bytes per token the layer's norms save */
    uint64_t ssm_out;  /* output elements per token of the recurrent mixer's projections */
    uint64_t ffn_up;   /* dense FFN: up (or fused gate_up) output width */
    uint64_t exp_up;   /* MoE: one routed expert's up width */
    uint64_t shexp_up; /* MoE: the shared experts' up width */
    uint64_t bytes;    /* the layer's weights at the base storage (gathered unit) */
    bool gated, moe;
};

/*
 * F-TRAIN-06: bytes per token a layer's norms save: HF's eager RMSNorm upcasts its input to
 * fp32 and keeps it with the fp32 reciprocal RMS for backward (4 x width + 4 per norm).
 * Hidden-width norms; q/k norms across every head (qk_norm: 2 tensors of head_dim); other
 * norms (MLA latents) over their own width.
 */
static uint64_t norm_act(const struct vf_model *m, const struct vf_tgroup *g, uint64_t q_dim,
                         uint64_t kv_dim)
{
    uint64_t t = g->n_tensors ? g->n_tensors : 1;
    if (g->row_elems == m->hidden)
        return t * (4 * (uint64_t)m->hidden + 4);
    if (t == 2 && g->row_elems == m->head_dim && m->head_dim)
        return 4 * (q_dim + kv_dim) + 4 * ((uint64_t)m->n_heads + m->n_kv_heads);
    return t * (4 * g->row_elems + 4);
}

/*
 * F-TRAIN-06: activation bytes per token that layer l saves for backward (bf16 tensors, fp32
 * where the op keeps fp32): its norms, the token mixer and the FFN.
 *   attention (GQA, FlashAttention): input of q/k/v 2h, Q 2q, K 2kv, V 2kv, the attention
 *     output (= o_proj input) 2o, the fp32 log-sum-exp per head 4nh;
 *   MLA: input 2h, the two latents 2(q_lora + kv_lora) + rope key 2r, Q and K 2nh(dn+dr)
 *     each, V and O 2nh dv each, 4nh;
 *   recurrent mixer (rough): input 2h + each projection's output twice at 2 B;
 *   gated MLP (SwiGLU): input 2h, gate out, up out, SiLU out, down in: 8I;
 *   non-gated MLP (and fused gate_up, where I is already 2x): input 2h, up out, down in: 4I;
 *   MoE: input 2h, fp32 router probabilities 4E, per routed expert (k of them) its gathered
 *     input 2h, 8Ie inside and its output 2h before the weighted sum; shared experts 8Is.
 */
static uint64_t layer_act(const struct vf_model *m, uint32_t l, const struct layer_sum *s)
{
    uint64_t h = m->hidden, nh = m->n_heads;
    uint64_t nkv = m->layer_kv_heads ? m->layer_kv_heads[l] : m->n_kv_heads;
    enum vf_layer_kind kind =
        m->layer_kind ? (enum vf_layer_kind)m->layer_kind[l] : VF_LAYER_ATTN_FULL;
    uint64_t b = s->norm_act;

    if (kind == VF_LAYER_ATTN_FULL || kind == VF_LAYER_ATTN_SLIDING) {
        if (m->attn == VF_ATTN_MLA) {
            uint64_t qk = (uint64_t)m->qk_nope_dim + m->qk_rope_dim;
            b += 2 * h + 2 * ((uint64_t)m->q_lora_rank + m->kv_lora_rank + m->qk_rope_dim);
            b += 4 * nh * qk + 4 * nh * m->v_head_dim_mla + 4 * nh;
        } else {
            uint64_t q = nh * m->head_dim, kv = nkv * m->head_dim;
            uint64_t v = nkv * m->head_dim_v, o = nh * m->head_dim_v;
            b += 2 * h + 2 * q + 2 * kv + 2 * v + 2 * o + 4 * nh;
        }
    } else if (kind == VF_LAYER_RECURRENT) {
        b += 2 * h + 4 * s->ssm_out;
    }

    if (s->moe) {
        uint64_t k = m->n_experts_used ? m->n_experts_used : 1;
        b += 2 * h + 4 * (uint64_t)m->n_experts;
        b += k * (4 * h + 8 * s->exp_up);
        b += 8 * s->shexp_up;
    } else if (s->ffn_up) {
        b += 2 * h + (s->gated ? 8 : 4) * s->ffn_up;
    }
    return b;
}

/* One resolved training run: the knobs with their defaults applied. */
struct run {
    enum vf_train_method method;
    enum vf_optimizer opt;
    uint64_t seq, batch, rank;
    uint32_t n;    /* GPUs */
    unsigned zero; /* effective ZeRO stage 0..3 */
    struct vf_quant base;
};

/* ceil(x / n) when the stage shards this state, else x. */
static uint64_t shard(uint64_t x, const struct run *r, unsigned from_stage)
{
    if (x == VF_UNKNOWN || r->zero < from_stage || r->n <= 1)
        return x;
    return vf__div_ceil(x, r->n);
}

static const char *shard_note(struct vf_arena *a, const char *what, const struct run *r,
                              unsigned from_stage)
{
    if (r->n <= 1 || r->zero < from_stage)
        return what;
    return vf_arena_printf(a, "%s, sharded over %u GPUs (ZeRO-%u)", what, r->n, r->zero);
}

/* The base weights' storage: 16-bit for full fine-tuning and LoRA unless --weights names a
 * frozen quantized base (LoRA); NF4 for QLoRA unless --weights names another 4-bit scheme. */
static enum vf_err base_scheme(const struct vf_model *m, const struct vf_workload *w, struct run *r,
                               struct vf_error *err)
{
    bool given = w->weights.kind != VF_QK_NATIVE;
    if (given && w->weights.kind == VF_QK_GGUF_FTYPE)
        return vf__errf(err, VF_EUNSUPPORTED,
                        "training: --weights %s is a llama.cpp file type; PyTorch trains on "
                        "bf16 weights (full, lora) or a bitsandbytes NF4 base (qlora)",
                        w->weights.name);
    if (r->method == VF_TRAIN_QLORA && !given)
        return vf_quant_parse("nf4", &r->base, err);
    if (r->method == VF_TRAIN_FULL && given && w->weights.kind == VF_QK_PLAIN &&
        (w->weights.dtype == VF_DT_BF16 || w->weights.dtype == VF_DT_F16)) {
        r->base = w->weights;
        return VF_OK;
    }
    if (r->method == VF_TRAIN_FULL && given)
        return vf__errf(err, VF_EUNSUPPORTED,
                        "full fine-tuning trains 16-bit weights in mixed precision: "
                        "--weights %s is not modelled (--method qlora trains adapters on a "
                        "4-bit base)",
                        w->weights.name);
    if (given) {
        r->base = w->weights;
        return VF_OK;
    }
    (void)m;
    return vf_quant_parse("bf16", &r->base, err);
}

static enum vf_err train_estimate(struct vf_arena *a, const struct vf_model *m,
                                  const struct vf_workload *w, struct vf_estimate *e,
                                  struct vf_error *err)
{
    char b1[32];
    struct run r = {0};
    const struct vf_train_opts *t = &w->train;

    r.method = t->method;
    r.opt = t->optimizer;
    r.seq = w->ctx_tokens ? w->ctx_tokens : TRAIN_DEFAULT_SEQ;
    r.batch = t->batch ? t->batch : 1;
    r.rank = t->lora_rank ? t->lora_rank : TRAIN_DEFAULT_RANK;
    r.n = w->gpus ? w->gpus : 1;
    if (r.seq > VF_MAX_CTX_TOKENS)
        return vf__errf(err, VF_ERANGE, "a sequence of %llu tokens is over the limit of %llu",
                        (unsigned long long)r.seq, (unsigned long long)VF_MAX_CTX_TOKENS);
    if (r.batch > TRAIN_MAX_BATCH)
        return vf__errf(err, VF_ERANGE, "a micro-batch of %llu is over the limit of %llu",
                        (unsigned long long)r.batch, (unsigned long long)TRAIN_MAX_BATCH);
    if (r.rank > TRAIN_MAX_RANK)
        return vf__errf(err, VF_ERANGE, "LoRA rank %llu is over the limit of %llu",
                        (unsigned long long)r.rank, (unsigned long long)TRAIN_MAX_RANK);
    if (r.n > VF_MAX_GPUS)
        return vf__errf(err, VF_ERANGE, "%u GPUs is over the limit of %d", r.n, VF_MAX_GPUS);
    if (m->n_layers > VF_MAX_LAYERS)
        return vf__errf(err, VF_ELIMIT, "'%s': %u layers is over the limit of %d", m->id,
                        m->n_layers, VF_MAX_LAYERS);
    if (t->zero == VF_ZERO_AUTO)
        r.zero = r.n > 1 ? 3 : 0;
    else
        r.zero = (unsigned)(t->zero - VF_ZERO_0);
    enum vf_err rc = base_scheme(m, w, &r, err);
    if (rc)
        return rc;

    e->model = *m;
    e->engine = vf__engine_pytorch.name;
    e->task = VF_TASK_TRAIN;
    e->weights = r.base;
    e->kv_dtype = VF_DT_BF16;
    e->gpus = r.n;
    e->ctx_tokens = r.seq;
    e->users = r.batch;
    e->train = *t;
    e->train.batch = (uint32_t)r.batch;
    e->train.lora_rank = r.method == VF_TRAIN_FULL ? 0 : (uint32_t)r.rank;
    e->train.zero = (enum vf_zero)(VF_ZERO_0 + r.zero);
    bool full = r.method == VF_TRAIN_FULL;

    /* One pass over the groups: per-layer tallies, trainable parameters and their states. */
    struct layer_sum sums[VF_MAX_LAYERS];
    uint32_t nl = m->n_layers;
    memset(sums, 0, nl * sizeof sums[0]);
    uint64_t q_dim = (uint64_t)m->n_heads * m->head_dim;
    uint64_t kv_dim = (uint64_t)m->n_kv_heads * m->head_dim;
    uint64_t trainable = 0, opt = 0, outside_max = 0, final_norm = 0, dequant = 0;
    for (size_t i = 0; i < m->n_groups; i++) {
        const struct vf_tgroup *g = &m->groups[i];
        uint64_t gb = vf__quant_group_bytes(m, &r.base, g);
        if (full) {
            /* F-TRAIN-01/02: every parameter is trained */
            trainable = vf__sat_add(trainable, g->n_params);
            opt = vf__sat_add(opt, opt_bytes(r.opt, per_tensor(g), g->n_tensors));
        } else if (is_lora_target(g->cls) && g->layer >= 0 && g->row_elems) {
            /* F-TRAIN-04: A (r x d_in) and B (d_out x r) per targeted tensor */
            uint64_t nt = g->n_tensors ? g->n_tensors : 1;
            uint64_t a_el = vf__sat_mul(r.rank, g->row_elems);
            uint64_t b_el = vf__sat_mul(r.rank, d_out(g));
            trainable = vf__sat_add(trainable, vf__sat_mul(vf__sat_add(a_el, b_el), nt));
            opt = vf__sat_add(opt,
                              vf__sat_add(opt_bytes(r.opt, a_el, nt), opt_bytes(r.opt, b_el, nt)));
        }
        /* F-TRAIN-05: a quantized linear is dequantized to bf16 for its matmul, one at a
         * time */
        if (!full && is_lora_target(g->cls) && below_16bit(m, &r.base, g) &&
            vf__sat_mul(per_tensor(g), 2) > dequant)
            dequant = vf__sat_mul(per_tensor(g), 2);
        if (g->layer < 0 || (uint32_t)g->layer >= nl) {
            if (gb > outside_max)
                outside_max = gb;
            if (g->cls == VF_T_NORM && g->row_elems == m->hidden)
                final_norm = vf__sat_add(final_norm, norm_act(m, g, q_dim, kv_dim));
            continue;
        }
        struct layer_sum *s = &sums[g->layer];
        s->bytes = vf__sat_add(s->bytes, gb);
        switch (g->cls) {
        case VF_T_NORM:
            s->norm_act = vf__sat_add(s->norm_act, norm_act(m, g, q_dim, kv_dim));
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
    if (trainable == VF_UNKNOWN || opt == VF_UNKNOWN)
        return vf__errf(err, VF_ERANGE, "'%s': trainable parameters overflow 64 bits", m->id);
    e->trainable_params = trainable;

    /* F-TRAIN-01: the weights at their training storage */
    e->weights_bytes = vf_model_weight_bytes(m, &r.base);
    if (e->weights_bytes == VF_UNKNOWN)
        return vf__errf(err, VF_ERANGE, "'%s': the weight bytes are unknown or overflow", m->id);

    /* F-TRAIN-01/05: model states of the whole model, before sharding */
    uint64_t weights, grads, master;
    if (full) {
        weights = e->weights_bytes;        /* bf16 */
        grads = vf__sat_mul(trainable, 2); /* bf16 */
        master = vf__sat_mul(trainable, 4);
    } else {
        weights = vf__sat_add(e->weights_bytes, vf__sat_mul(trainable, 4)); /* fp32 adapters */
        grads = vf__sat_mul(trainable, 4);
        master = 0; /* the fp32 adapters are their own master copy */
    }

    /* F-TRAIN-03: ZeRO-3 / FSDP gathers one unit (the largest layer, or the largest tensor
     * outside the layers) in bf16 and, when trained, its unsharded gradients */
    uint64_t unit = outside_max;
    for (uint32_t l = 0; l < nl; l++)
        if (sums[l].bytes > unit)
            unit = sums[l].bytes;
    uint64_t gathered_w = r.zero >= 3 && r.n > 1 ? unit : 0;
    uint64_t gathered_g = full ? gathered_w : 0;

    uint64_t w_gpu = vf__sat_add(vf__sat_add(shard(weights, &r, 3), gathered_w), dequant);
    uint64_t g_gpu = vf__sat_add(shard(grads, &r, 2), gathered_g);
    uint64_t o_gpu = shard(opt, &r, 1);
    uint64_t m_gpu = shard(master, &r, 1);

    const char *wnote;
    if (full)
        wnote = vf_arena_printf(a, "%s", r.base.name);
    else
        wnote = vf_arena_printf(a, "%s base (frozen) + fp32 adapters", r.base.name);
    wnote = shard_note(a, wnote, &r, 3);
    if (gathered_w)
        wnote = vf_arena_printf(a, "%s + 1 gathered layer", wnote);
    if (dequant)
        wnote = vf_arena_printf(a, "%s + bf16 dequantization buffer", wnote);
    vf__add_component(e, "weights", w_gpu, NULL, wnote);
    vf__add_component(e, "gradients", g_gpu, NULL,
                      shard_note(a, full ? "bf16" : "fp32, adapters only", &r, 2));
    const char *onote = r.opt == VF_OPT_ADAMW8BIT ? "8-bit AdamW: uint8 m and v + fp32 absmax"
                        : r.opt == VF_OPT_SGD     ? "SGD: fp32 momentum"
                                                  : "AdamW: fp32 m and v";
    vf__add_component(e, "optimizer_states", o_gpu, NULL, shard_note(a, onote, &r, 1));
    vf__add_component(e, "master_weights", m_gpu, NULL,
                      full ? shard_note(a, "fp32 copy", &r, 1) : "none: adapters are fp32");

    /* F-TRAIN-06/07: saved activations per token, times the tokens of one micro-batch */
    uint64_t tokens = vf__sat_mul(r.seq, r.batch);
    uint64_t per_tok = 0, max_layer = 0;
    for (uint32_t l = 0; l < nl; l++) {
        uint64_t x = layer_act(m, l, &sums[l]);
        per_tok = vf__sat_add(per_tok, x);
        if (x > max_layer)
            max_layer = x;
    }
    if (t->grad_checkpointing)
        per_tok = vf__sat_add(vf__sat_mul((uint64_t)nl, 2 * (uint64_t)m->hidden), max_layer);
    per_tok = vf__sat_add(per_tok, vf__sat_add(final_norm, 2 * (uint64_t)m->hidden));
    uint64_t acts = vf__sat_mul(per_tok, tokens);
    vf__add_component(e, "activations", acts, "backward",
                      t->grad_checkpointing
                          ? vf_arena_printf(a, "checkpointed: %u layer inputs + 1 layer", nl)
                          : vf_arena_printf(a, "%u layers, all saved", nl));

    /* F-TRAIN-08: the logits and the cross-entropy in fp32 */
    uint64_t logits = vf__sat_mul(vf__sat_mul(tokens, m->vocab), TRAIN_LOGIT_BYTES);
    vf__add_component(e, "logits", logits, "backward",
                      vf_arena_printf(a, "%llu tokens x %llu vocab, fp32 cross-entropy",
                                      (unsigned long long)tokens, (unsigned long long)m->vocab));

    /* F-TRAIN-09: CUDA context, cuBLAS workspaces and allocator slack */
    uint64_t slack = vf__sat_add(acts, logits);
    slack = slack == VF_UNKNOWN ? VF_UNKNOWN : slack / 100 * TRAIN_SLACK_PCT;
    uint64_t overhead = vf__sat_add(TRAIN_CONTEXT_BYTES + TRAIN_CUBLAS_BYTES, slack);
    vf__add_component(e, "runtime_overhead", overhead, NULL,
                      "CUDA context, cuBLAS, allocator slack");

    /* assumptions, each with its formula and source */
    vf__assume(a, e,
               "engine pytorch: one training step of PyTorch 2.x eager (HF transformers + "
               "PEFT; DeepSpeed/FSDP on several GPUs), peak at the start of backward: model "
               "states + saved activations + logits + overhead (F-TRAIN-01..10)");
    if (full)
        vf__assume(a, e,
                   "full fine-tune: every parameter trained in bf16 mixed precision: bf16 "
                   "weights and gradients + fp32 master copy + optimizer (ZeRO paper "
                   "accounting, 16 B/param with AdamW; F-TRAIN-01)");
    else
        vf__assume(a, e,
                   "%s r=%llu on q,k,v,o,gate,up,down of every layer (PEFT all-linear; MoE: "
                   "every expert and shared expert, not the router): %llu trainable params, "
                   "fp32 adapters (PEFT autocast_adapter_dtype) with fp32 gradients "
                   "(F-TRAIN-04)",
                   r.method == VF_TRAIN_QLORA ? "QLoRA" : "LoRA", (unsigned long long)r.rank,
                   (unsigned long long)trainable);
    if (!full)
        vf__assume(a, e,
                   "base weights frozen in %s, no gradients or optimizer states%s (F-TRAIN-05)",
                   r.base.name,
                   dequant ? "; one linear at a time dequantized to bf16 for its matmul "
                             "(bitsandbytes/torchao NF4)"
                           : "");
    if (r.method == VF_TRAIN_QLORA && w->weights.kind == VF_QK_NATIVE)
        vf__assume(a, e,
                   "NF4: bitsandbytes 4-bit, block 64, double-quantized absmax; embeddings, "
                   "lm_head and norms stay bf16 (F-W-06)");
    if (m->native.kind != VF_QK_NATIVE && m->native.kind != VF_QK_PLAIN &&
        w->weights.kind == VF_QK_NATIVE && r.method != VF_TRAIN_QLORA)
        vf__assume(a, e, "'%s' ships as %s: trained from a bf16 copy of its weights", m->id,
                   m->native.name);
    if (r.opt == VF_OPT_ADAMW8BIT)
        vf__assume(a, e,
                   "8-bit AdamW (bitsandbytes): uint8 m and v + one fp32 absmax each per "
                   "block of %d (2.03 B/param); tensors under %d elements keep fp32 states "
                   "(F-TRAIN-02)",
                   BNB_OPT_BLOCK, BNB_MIN_8BIT);
    else if (r.opt == VF_OPT_SGD)
        vf__assume(a, e, "SGD with momentum: one fp32 momentum buffer, 4 B/param (F-TRAIN-02)");
    else
        vf__assume(a, e,
                   "AdamW: fp32 m and v, 8 B/param; fused or multi-tensor kernels with no "
                   "per-step copies (torch's foreach AdamW adds up to the fp32 parameters' "
                   "size at the step) (F-TRAIN-02)");
    if (!w->ctx_tokens)
        vf__assume(a, e, "sequence %d tokens per sample: the default (--seq to change)",
                   TRAIN_DEFAULT_SEQ);
    vf__assume(a, e,
               "micro-batch %llu per GPU%s: %llu tokens per step; gradient accumulation adds "
               "no memory (the gradients are already counted)",
               (unsigned long long)r.batch, t->batch ? "" : " (the default; --batch)",
               (unsigned long long)tokens);
    if (t->grad_checkpointing)
        vf__assume(a, e,
                   "gradient checkpointing: each layer keeps its bf16 input, one layer is "
                   "recomputed at a time (Korthikanti et al. 2022 full recomputation; "
                   "F-TRAIN-07)");
    else
        vf__assume(a, e,
                   "no gradient checkpointing: every layer keeps its activations until "
                   "backward (--grad-checkpointing recomputes them; F-TRAIN-06)");
    vf__assume(a, e,
               "activations: FlashAttention (no s^2 scores; fp32 log-sum-exp), no dropout, "
               "RMSNorm inputs kept in fp32 as HF's eager RMSNorm does; %s per token over "
               "%u layers (Korthikanti et al. 2022 adapted to GQA/SwiGLU/RMSNorm; F-TRAIN-06)",
               vf_format_bytes(b1, sizeof b1, per_tok, VF_FMT_IEC), nl);
    vf__assume(a, e,
               "logits: upcast to fp32 for cross-entropy, %d B per token x vocab at its "
               "backward; chunked or fused cross-entropy (torchtune, Liger, Unsloth) needs "
               "far less (F-TRAIN-08)",
               TRAIN_LOGIT_BYTES);
    if (r.n <= 1)
        vf__assume(a, e, "1 GPU: no sharding, no NCCL buffers");
    else if (r.zero == 0)
        vf__assume(a, e,
                   "data parallel over %u GPUs (DDP, ZeRO-0): every GPU holds all model "
                   "states (F-TRAIN-03)",
                   r.n);
    else
        vf__assume(a, e,
                   "data parallel over %u GPUs, ZeRO-%u%s: %s divided by %u (ZeRO paper)%s; "
                   "NCCL buffers not counted (F-TRAIN-03)",
                   r.n, r.zero, r.zero == 3 ? " / FSDP full shard" : "",
                   r.zero == 1   ? "optimizer states and master copy"
                   : r.zero == 2 ? "optimizer states, master copy and gradients"
                                 : "weights, gradients, optimizer states and master copy",
                   r.n,
                   r.zero == 3 ? " + the largest layer gathered (DeepSpeed largest_layer_memory)"
                               : "");
    vf__assume(a, e,
               "runtime overhead: CUDA context ~400 MiB with lazy loading (pytorch#109888) + "
               "cuBLAS/cuBLASLt workspaces 40 MiB + %d %% of activations and logits for "
               "allocator slack (Megatron-LM overhead_factor; F-TRAIN-09); no CPU offload",
               TRAIN_SLACK_PCT);

    /* F-TRAIN-10: the peak of one GPU is the sum of its components */
    e->total_bytes = vf__gpu_total(e, 0);
    e->host_bytes = 0;
    return VF_OK;
}

const struct vf_engine vf__engine_pytorch = {
    .name = "pytorch",
    .version = "2.5",
    .tasks = 1u << VF_TASK_TRAIN,
    .can_split = train_can_split,
    .estimate = train_estimate,
};
