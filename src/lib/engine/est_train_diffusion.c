/* SPDX-License-Identifier: Apache-2.0 */
/*
 * est_train_diffusion.c - fine-tuning an image/video denoiser (engine "pytorch", --task train
 * on a pipeline): full fine-tuning, LoRA or QLoRA of the transformer as the diffusers training
 * scripts, ai-toolkit and musubi-tuner run it. One training step at the start of backward:
 * the denoiser's model states (train_states.c), the text encoders and the VAE unless their
 * outputs are cached, the saved activations of every block over the latent tokens of one
 * micro-batch, and the runtime overhead. Formula F-TRAIN-20 in docs/FORMULAS.md.
 */
#include "est_train.h"
#include "engine/runtime.h"
#include "engine/pipeline_terms.h"

/* F-TRAIN-20: training resolution of an image pipeline when none is given: the diffusers
 * DreamBooth/LoRA scripts' --resolution default (train_dreambooth_lora_flux.py: 512). */
#define DIF_TRAIN_SIDE 512

/* One denoiser estimate in the making: the run, the sample, the trained parameters and
 * the model states. */
struct step {
    struct vf__train_run r;
    bool full, pure, fp32;
    struct vf_diffusion_opts o; /* the sample as trained: size, frames, batch */
    const char *dflt;           /* where the size comes from when not given, or NULL */
    struct vf_pipe_geom geo;
    uint64_t den;          /* the denoiser's weights at the base storage */
    uint64_t trained, opt; /* trainable parameters and their optimizer states */
    struct vf__train_states_in in;
    struct vf__train_states st;
    uint64_t per_tok, acts; /* activation bytes per token and of the micro-batch */
};

/*
 * F-TRAIN-20: activation bytes per token one transformer block saves (u bytes per value,
 * FlashAttention): the modulated norm input and its output h each, Q, K, V 3h, the attention
 * output h, the attention projection's output before the gated residual h, the MLP input h,
 * its hidden layer before and after the activation 2 ffn, the MLP output before the gated
 * residual h: u (9h + 2 ffn), + the fp32 log-sum-exp 4 heads. Selective recomputation keeps
 * the matmul outputs only: u (5h + ffn) + 4 heads. Eager attention adds the fp32 softmax and
 * the u-byte probabilities per head and key: (4 + u) heads s.
 */
static uint64_t block_act(const struct vf_pipeline *p, unsigned u, enum vf_grad_ckpt gc, bool fa,
                          uint64_t seq)
{
    uint64_t h = p->hidden, f = p->ffn, nh = p->heads;
    uint64_t b = gc == VF_GC_SELECTIVE ? u * (5 * h + f) : u * (9 * h + 2 * f);
    b += 4 * nh;
    if (!fa && gc != VF_GC_SELECTIVE)
        b = vf__sat_add(b, vf__sat_mul((4 + u) * nh, seq));
    return b;
}

void vf__train_diffusion_size(const struct vf_model *m, const struct vf_workload *w,
                              uint32_t *width, uint32_t *height)
{
    const struct vf_pipeline *p = m->pipeline;
    uint32_t side = p->task == VF_TASK_IMAGE ? DIF_TRAIN_SIDE : 0;
    *width = w->diffusion.width ? w->diffusion.width : side ? side : p->def_width;
    *height = w->diffusion.height ? w->diffusion.height : side ? side : p->def_height;
}

void vf__train_diffusion_run(const struct vf_model *m, const struct vf_workload *w,
                             struct vf__train_run *r)
{
    const struct vf_train_opts *t = &w->train;
    vf__train_knobs(w, r, false);
    r->batch = w->diffusion.batch ? w->diffusion.batch : t->batch ? t->batch : 1;
    r->liger = true; /* no cross-entropy to fuse */
    vf__train_diffusion_size(m, w, &r->width, &r->height);
}

/* What a denoiser's training refuses: freeze tuning, language-model LoRA targets, a pipeline
 * file without block dimensions (VF_EUNSUPPORTED, VF_EINVAL). */
static enum vf_err refusals(const struct vf_model *m, const struct vf_train_opts *t,
                            struct vf_error *err)
{
    const struct vf_pipeline *p = m->pipeline;
    if (t->method == VF_TRAIN_FREEZE)
        return vf__errf(err, VF_EUNSUPPORTED,
                        "'%s': freeze tuning is modelled for language models; a denoiser trains "
                        "with --method full, lora or qlora",
                        m->id);
    if (t->lora_targets)
        return vf__errf(err, VF_EINVAL,
                        "'%s': --lora-targets names language-model modules; a denoiser's LoRA "
                        "targets its attention and MLP linears",
                        m->id);
    if (!p->hidden || !p->heads || !p->layers || !p->ffn)
        return vf__errf(err, VF_EUNSUPPORTED,
                        "'%s': the pipeline file does not give the denoiser's block dimensions "
                        "(hidden, heads, layers, ffn) the training estimate needs",
                        m->id);
    return VF_OK;
}

/* F-TRAIN-03/04: the run of w into s->r with its ZeRO stage; VF_ERANGE for too many GPUs,
 * VF_EINVAL for contradictory sharding or a LoRA rank wider than the denoiser. */
static enum vf_err resolve(const struct vf_model *m, const struct vf_workload *w, struct step *s,
                           struct vf_error *err)
{
    const struct vf_pipeline *p = m->pipeline;
    struct vf__train_run *r = &s->r;
    vf__train_diffusion_run(m, w, r);
    s->full = r->method == VF_TRAIN_FULL;
    s->pure = r->prec == VF_PREC_PURE_BF16;
    s->fp32 = r->prec == VF_PREC_FP32;
    if (r->n > VF_MAX_GPUS)
        return vf__errf(err, VF_ERANGE, "%u GPUs is over the limit of %d", r->n, VF_MAX_GPUS);
    enum vf_err rc = vf__train_stage(&w->train, r->n, &r->zero, &r->group, err);
    if (rc)
        return rc;
    uint64_t narrow = p->hidden < p->ffn ? p->hidden : p->ffn;
    if (!s->full && r->rank > narrow)
        return vf__errf(err, VF_EINVAL,
                        "LoRA rank %llu is larger than the denoiser's width (%u): a rank of at "
                        "most %u",
                        (unsigned long long)r->rank, p->hidden, p->hidden);
    return VF_OK;
}

/* F-TRAIN-20, F-DIF-03: the sample at its training size (default resolution, frames, batch)
 * and its latent tokens; VF_EINVAL/VF_ERANGE for a size or count out of range. */
static enum vf_err sample(const struct vf_model *m, const struct vf_workload *w, struct step *s,
                          struct vf_error *err)
{
    const struct vf_pipeline *p = m->pipeline;
    struct vf_diffusion_opts *o = &s->o;
    *o = w->diffusion;
    s->dflt = NULL;
    if (!o->width || !o->height)
        s->dflt = p->task == VF_TASK_IMAGE ? "the diffusers training scripts' default resolution "
                                             "512"
                                           : "the pipeline's default size";
    o->width = s->r.width;
    o->height = s->r.height;
    if (!o->frames)
        o->frames = p->task == VF_TASK_VIDEO ? p->def_frames : 1;
    if (p->task == VF_TASK_IMAGE && o->frames > 1)
        return vf__errf(err, VF_EINVAL, "--frames %u: '%s' is an image pipeline", o->frames, m->id);
    o->batch = (uint32_t)s->r.batch;
    uint32_t side = p->vae_spatial * (p->patch_h > p->patch_w ? p->patch_h : p->patch_w);
    if (o->width < side || o->height < side || o->width > VF_PIPE_MAX_SIDE ||
        o->height > VF_PIPE_MAX_SIDE)
        return vf__errf(err, VF_ERANGE, "%ux%u: width and height must be %u to %u pixels", o->width,
                        o->height, side, VF_PIPE_MAX_SIDE);
    if (o->frames > VF_PIPE_MAX_FRAMES || o->batch > VF_PIPE_MAX_BATCH)
        return vf__errf(err, VF_ERANGE, "%u frames x batch %u is over the limits (%u, %u)",
                        o->frames, o->batch, VF_PIPE_MAX_FRAMES, VF_PIPE_MAX_BATCH);
    vf__pipeline_geom(p, o->width, o->height, o->frames, &s->geo);
    return VF_OK;
}

/* F-TRAIN-05/11: the base storage (bf16, fp32, NF4 for QLoRA, or --weights for a frozen base)
 * into s->r.base and the denoiser's bytes at it; VF_EUNSUPPORTED for --weights under full
 * fine-tuning or an unknown size, VF_EINVAL for a QLoRA base that is not 4-bit. */
static enum vf_err base_storage(const struct vf_model *m, const struct vf_workload *w,
                                struct step *s, struct vf_error *err)
{
    const struct vf_pipeline *p = m->pipeline;
    struct vf_quant *q = &s->r.base;
    bool qlora = s->r.method == VF_TRAIN_QLORA;
    enum vf_err rc;
    if (w->weights.kind != VF_QK_NATIVE) {
        if (s->full)
            return vf__errf(err, VF_EUNSUPPORTED,
                            "full fine-tuning trains the weights themselves: --weights %s is "
                            "not modelled",
                            w->weights.name);
        *q = w->weights;
    } else if ((rc = vf_quant_parse(qlora ? "nf4" : s->fp32 ? "fp32" : "bf16", q, err))) {
        return rc;
    }
    const char *why = NULL;
    s->den = vf__pipeline_denoiser_bytes(p, q, &why);
    if (s->den == VF_UNKNOWN)
        return vf__errf(err, VF_EUNSUPPORTED, "'%s' as %s: %s", m->id, q->name,
                        why ? why : "the weight bytes overflow");
    if (qlora && s->den >= p->params)
        return vf__errf(err, VF_EINVAL,
                        "--method qlora trains adapters on a 4-bit base: --weights %s is not "
                        "4-bit",
                        q->name);
    return VF_OK;
}

/* F-TRAIN-02/04/14/20: trainable parameters and their optimizer states: the whole denoiser,
 * or per block the adapters of the attention q, k, v, o (h -> h) and the MLP up (h -> ffn)
 * and down (ffn -> h); VF_ERANGE on overflow. */
static enum vf_err trainable(const struct vf_model *m, struct step *s, struct vf_error *err)
{
    const struct vf_pipeline *p = m->pipeline;
    enum vf_optimizer opt = s->r.opt;
    uint64_t h = p->hidden, f = p->ffn, L = p->layers, rank = s->r.rank;
    if (s->full) {
        s->trained = p->params;
        s->opt = opt == VF_OPT_ADAFACTOR
                     ? vf__train_opt_bytes(opt, h, vf__div_ceil(p->params, h), 1, s->pure)
                     : vf__train_opt_bytes(opt, 1, p->params, 1, s->pure);
    } else {
        s->trained = vf__sat_mul(vf__sat_mul(rank, 10 * h + 2 * f), L);
        s->opt = vf__train_opt_bytes(opt, rank, h, 4 * L + L, s->pure); /* A: q,k,v,o,up */
        s->opt = vf__sat_add(s->opt, vf__train_opt_bytes(opt, rank, f, L, s->pure)); /* A: down */
        s->opt = vf__sat_add(s->opt, vf__train_opt_bytes(opt, h, rank, 5 * L, s->pure)); /* B */
        s->opt = vf__sat_add(s->opt, vf__train_opt_bytes(opt, f, rank, L, s->pure));     /* B: up */
    }
    if (s->trained == VF_UNKNOWN || s->opt == VF_UNKNOWN)
        return vf__errf(err, VF_ERANGE, "'%s': trainable parameters overflow 64 bits", m->id);
    return VF_OK;
}

/* F-TRAIN-01..05/11..13/20: the denoiser's model states on one GPU and the host; the
 * gathered unit is one block. */
static void model_states(const struct vf_model *m, struct step *s)
{
    const struct vf_pipeline *p = m->pipeline;
    struct vf__train_states_in *in = &s->in;
    vf__train_states_of(&s->r, s->full, in);
    /* kept as it was: fp32 gradients in DeepSpeed's accounting even under pure bf16 (the
     * language-model path keeps them bf16, F-TRAIN-11/12) */
    if (s->full && s->pure && s->r.acct == VF_ACCT_DEEPSPEED)
        in->g_bytes = 4;
    in->params = s->full ? p->params : vf__sat_add(p->params, s->trained);
    in->trained = s->trained;
    in->opt_bytes = s->opt;
    in->frozen_bytes = s->full ? 0 : s->den;
    in->unit_bytes = s->den / p->layers;
    in->unit_grads = s->full;
    vf__train_states(in, &s->st);
}

/* The estimate's header for a denoiser: the sample, its tokens, the denoiser's weights. */
static void header(struct vf_estimate *e, const struct vf_model *m, const struct vf_workload *w,
                   const struct step *s)
{
    vf__train_header(e, m, w, &s->r, s->full, s->o.batch, s->geo.seq_tokens);
    e->kv_dtype = VF_DT_DEFAULT;
    e->kv_bytes_per_token = VF_UNKNOWN;
    e->trainable_params = s->trained;
    e->weights_bytes = s->den;
    e->diffusion = s->o;
    e->diffusion_tokens = s->geo.img_tokens;
    e->peak_phase = "train";
}

/* F-TRAIN-01..05/11..13: the weights, gradients, optimizer_states and master_weights
 * components of the denoiser. */
static void add_states(struct vf_arena *a, const struct vf_model *m, const struct step *s,
                       struct vf_estimate *e)
{
    const struct vf_pipeline *p = m->pipeline;
    const struct vf__train_run *r = &s->r;
    const char *shard = r->zero >= 3 ? vf__train_shard_note(a, r) : "";
    vf__add_component(
        e, "weights", s->st.weights, NULL,
        s->full ? vf_arena_printf(a, "%s %s, trained%s", p->component, r->base.name, shard)
                : vf_arena_printf(a, "%s %s (frozen) + %s adapters%s", p->component, r->base.name,
                                  s->pure ? "bf16" : "fp32", shard));
    vf__add_component(e, "gradients", s->st.grads, NULL,
                      s->full ? (s->in.g_bytes == 4 ? "fp32" : "bf16") : "adapters only");
    vf__add_component(e, "optimizer_states", s->st.opt, NULL, vf_optimizer_name(r->opt));
    vf__add_component(e, "master_weights", s->st.master, NULL,
                      s->in.master_bytes ? "fp32 copy" : "none");
}

/* F-TRAIN-20: the text encoders and the VAE, on the GPU unless their outputs are cached
 * before training. */
static void add_encoders(const struct vf_model *m, const struct vf_train_opts *t,
                         struct vf_estimate *e)
{
    const struct vf_pipeline *p = m->pipeline;
    uint64_t te = t->cache_text ? 0 : vf__pipeline_encoder_bytes(p, false, NULL);
    uint64_t vae = t->cache_latents ? 0 : vf_dtype_bytes(p->vae_dtype, p->vae_params);
    vf__add_component(e, "text_encoders", te, NULL,
                      t->cache_text ? "embeddings cached: off the GPU" : "frozen, 16-bit");
    vf__add_component(e, "vae", vae, NULL,
                      t->cache_latents ? "latents cached: off the GPU"
                                       : "frozen, encodes each step");
}

/* F-TRAIN-07/20: the activations of every block over the tokens of the micro-batch (full
 * recomputation: each block's input + one block). */
static void add_activations(struct vf_arena *a, const struct vf_model *m, struct step *s,
                            struct vf_estimate *e)
{
    const struct vf_pipeline *p = m->pipeline;
    const struct vf__train_run *r = &s->r;
    uint64_t seq = s->geo.seq_tokens, L = p->layers;
    uint64_t tokens = vf__sat_mul(seq, s->o.batch);
    uint64_t one = block_act(p, r->u, VF_GC_NONE, r->fa, seq);
    s->per_tok = r->gc == VF_GC_FULL ? vf__train_ckpt_per_token(L, r->u, p->hidden, one)
                                     : vf__sat_mul(L, block_act(p, r->u, r->gc, r->fa, seq));
    s->acts = vf__sat_mul(s->per_tok, tokens);
    vf__add_component(e, "activations", s->acts, "backward",
                      vf_arena_printf(a, "%llu tokens x batch %u, %s", (unsigned long long)seq,
                                      s->o.batch,
                                      r->gc == VF_GC_FULL        ? "checkpointed blocks"
                                      : r->gc == VF_GC_SELECTIVE ? "selective recomputation"
                                                                 : "all blocks saved"));
}

/* F-TRAIN-13: the offloaded states, in the host RAM of one node. */
static void add_host(const struct step *s, struct vf_estimate *e)
{
    if (!s->st.host_step)
        return;
    struct vf_component *c = vf__add_component(e, "optimizer_states", s->st.host_step, NULL,
                                               "offloaded states, host RAM of one node");
    if (c)
        c->device = VF_DEV_HOST;
}

/* F-TRAIN-01/04/11/20: the engine, and what the method trains in what precision. */
static void assume_method(struct vf_arena *a, const struct vf_model *m, const struct step *s,
                          struct vf_estimate *e)
{
    const struct vf_pipeline *p = m->pipeline;
    vf__assume(a, e,
               "engine pytorch: one training step of the denoiser (diffusers training scripts, "
               "ai-toolkit, musubi-tuner), peak at the start of backward (F-TRAIN-20)");
    if (s->full)
        vf__assume(a, e, "full fine-tune of the %s (%llu params)%s; %s (F-TRAIN-01/11)",
                   p->component, (unsigned long long)p->params,
                   p->experts > 1 ? vf_arena_printf(a, ", one of its %u experts", p->experts) : "",
                   s->fp32   ? "fp32 weights, gradients and states"
                   : s->pure ? "pure bf16"
                             : "bf16 mixed precision with an fp32 master copy");
    else
        vf__assume(a, e,
                   "%s r=%llu on the attention q, k, v, o and the MLP up and down of each of "
                   "the %llu blocks: %llu trainable params (double-stream blocks counted once)%s; "
                   "the base frozen in %s (F-TRAIN-04/20)",
                   s->r.method == VF_TRAIN_QLORA ? "QLoRA" : "LoRA", (unsigned long long)s->r.rank,
                   (unsigned long long)p->layers, (unsigned long long)s->trained,
                   p->experts > 1 ? vf_arena_printf(a, "; one of the %u experts", p->experts) : "",
                   s->r.base.name);
}

/* F-TRAIN-03/07/09/20, F-DIF-03: the sample, the activations, what is cached, the GPUs and
 * the runtime overhead. */
static void assume_step(struct vf_arena *a, const struct vf_model *m, const struct vf_workload *w,
                        const struct step *s, struct vf_estimate *e)
{
    const struct vf_train_opts *t = &w->train;
    const struct vf_diffusion_opts *o = &s->o;
    char b1[32];
    vf__assume(a, e, "%ux%u%s, batch %u: %llu latent tokens%s per sample (F-DIF-03)%s%s", o->width,
               o->height, o->frames > 1 ? vf_arena_printf(a, " x %u frames", o->frames) : "",
               o->batch, (unsigned long long)s->geo.img_tokens,
               s->geo.seq_tokens > s->geo.img_tokens ? " + the text tokens" : "",
               s->dflt ? "; size: " : "", s->dflt ? s->dflt : "");
    vf__assume(a, e,
               "activations %s per token over %llu blocks (u(9h + 2 ffn) + 4 heads per block, "
               "%s; F-TRAIN-20)",
               vf_format_bytes(b1, sizeof b1, s->per_tok, VF_FMT_IEC),
               (unsigned long long)m->pipeline->layers,
               s->r.fa ? "FlashAttention/SDPA" : "eager attention with s^2 scores");
    vf__assume(a, e, "%s; %s (--cache-latents, --cache-text-embeddings)",
               t->cache_text ? "text embeddings cached before training: the encoders are off "
                               "the GPU"
                             : "text encoders on the GPU, encoding each caption",
               t->cache_latents ? "latents cached: the VAE is off the GPU"
                                : "the VAE encodes each image on the GPU; its encode activations "
                                  "are freed before the denoiser's forward");
    if (s->r.n > 1)
        vf__assume(a, e, "%u GPUs, ZeRO-%u (F-TRAIN-03)", s->r.n, s->r.zero);
    vf__assume(a, e,
               "runtime overhead: CUDA context ~400 MiB + cuBLAS 40 MiB + %d %% of the "
               "activations (F-TRAIN-09)",
               VF_RT_ALLOC_SLACK_PCT);
}

/*
 * F-TRAIN-20: the training estimate of a denoiser, its terms in the order they are shown:
 * model states, text encoders and VAE, activations, runtime overhead, the host's share; then
 * the assumptions and the peak (F-TRAIN-10). Errors: the refusals, the knobs' ranges and
 * contradictions, the base storage.
 */
enum vf_err vf__train_diffusion(struct vf_arena *a, const struct vf_model *m,
                                const struct vf_workload *w, struct vf_estimate *e,
                                struct vf_error *err)
{
    struct step s;
    enum vf_err rc = refusals(m, &w->train, err);
    if (!rc)
        rc = resolve(m, w, &s, err);
    if (!rc)
        rc = sample(m, w, &s, err);
    if (!rc)
        rc = base_storage(m, w, &s, err);
    if (!rc)
        rc = trainable(m, &s, err);
    if (rc)
        return rc;
    model_states(m, &s);
    header(e, m, w, &s);

    add_states(a, m, &s, e);
    add_encoders(m, &w->train, e);
    add_activations(a, m, &s, e);
    vf__train_add_overhead(e, s.acts, s.r.eager);
    add_host(&s, e);

    assume_method(a, m, &s, e);
    assume_step(a, m, w, &s, e);
    vf__train_total(e, s.st.host_step); /* the load (F-TRAIN-29) is not modelled here */
    return VF_OK;
}
