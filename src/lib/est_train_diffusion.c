/*
 * est_train_diffusion.c - fine-tuning an image/video denoiser (engine "pytorch", --task train
 * on a pipeline): full fine-tuning, LoRA or QLoRA of the transformer as the diffusers training
 * scripts, ai-toolkit and musubi-tuner run it. One training step at the start of backward:
 * the denoiser's model states (train_states.c), the text encoders and the VAE unless their
 * outputs are cached, the saved activations of every block over the latent tokens of one
 * micro-batch, and the runtime overhead. Formula F-TRAIN-20 in docs/FORMULAS.md.
 */
#include "est_train.h"
#include "pipeline.h"

#include <stdio.h>
#include <string.h>

/* F-TRAIN-20: training resolution of an image pipeline when none is given: the diffusers
 * DreamBooth/LoRA scripts' --resolution default (train_dreambooth_lora_flux.py: 512). */
#define DIF_TRAIN_SIDE 512
/* F-TRAIN-04: LoRA rank when none is given. */
#define DIF_TRAIN_RANK 16

static uint64_t min2(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

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

enum vf_err vf__train_diffusion(struct vf_arena *a, const struct vf_model *m,
                                const struct vf_workload *w, struct vf_estimate *e,
                                struct vf_error *err)
{
    char b1[32];
    const struct vf_pipeline *p = m->pipeline;
    const struct vf_train_opts *t = &w->train;
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

    /* the run's knobs */
    bool full = t->method == VF_TRAIN_FULL, qlora = t->method == VF_TRAIN_QLORA;
    bool pure = t->precision == VF_PREC_PURE_BF16, fp32 = t->precision == VF_PREC_FP32;
    unsigned u = fp32 ? 4 : 2;
    uint64_t rank = t->lora_rank ? t->lora_rank : DIF_TRAIN_RANK;
    uint32_t n = w->gpus ? w->gpus : 1, group;
    unsigned zero;
    if (n > VF_MAX_GPUS)
        return vf__errf(err, VF_ERANGE, "%u GPUs is over the limit of %d", n, VF_MAX_GPUS);
    enum vf_err rc = vf__train_stage(t, n, &zero, &group, err);
    if (rc)
        return rc;
    if (!full && rank > min2(p->hidden, p->ffn))
        return vf__errf(err, VF_EINVAL,
                        "LoRA rank %llu is larger than the denoiser's width (%u): a rank of at "
                        "most %u",
                        (unsigned long long)rank, p->hidden, p->hidden);

    /* the sample: F-TRAIN-20 default resolution, F-DIF-03 tokens */
    struct vf_diffusion_opts o = w->diffusion;
    const char *dflt = NULL;
    if (!o.width || !o.height)
        dflt = p->task == VF_TASK_IMAGE ? "the diffusers training scripts' default resolution 512"
                                        : "the pipeline's default size";
    vf__train_diffusion_size(m, w, &o.width, &o.height);
    if (!o.frames)
        o.frames = p->task == VF_TASK_VIDEO ? p->def_frames : 1;
    if (p->task == VF_TASK_IMAGE && o.frames > 1)
        return vf__errf(err, VF_EINVAL, "--frames %u: '%s' is an image pipeline", o.frames, m->id);
    if (!o.batch)
        o.batch = w->train.batch ? w->train.batch : 1;
    uint32_t side = p->vae_spatial * (p->patch_h > p->patch_w ? p->patch_h : p->patch_w);
    if (o.width < side || o.height < side || o.width > VF_PIPE_MAX_SIDE ||
        o.height > VF_PIPE_MAX_SIDE)
        return vf__errf(err, VF_ERANGE, "%ux%u: width and height must be %u to %u pixels", o.width,
                        o.height, side, VF_PIPE_MAX_SIDE);
    if (o.frames > VF_PIPE_MAX_FRAMES || o.batch > VF_PIPE_MAX_BATCH)
        return vf__errf(err, VF_ERANGE, "%u frames x batch %u is over the limits (%u, %u)",
                        o.frames, o.batch, VF_PIPE_MAX_FRAMES, VF_PIPE_MAX_BATCH);
    struct vf_pipe_geom geo;
    vf__pipeline_geom(p, o.width, o.height, o.frames, &geo);

    /* the base storage: bf16 (fp32), NF4 for QLoRA, or --weights for a frozen base */
    struct vf_quant q;
    if (w->weights.kind != VF_QK_NATIVE) {
        if (full)
            return vf__errf(err, VF_EUNSUPPORTED,
                            "full fine-tuning trains the weights themselves: --weights %s is "
                            "not modelled",
                            w->weights.name);
        q = w->weights;
    } else if ((rc = vf_quant_parse(qlora ? "nf4" : fp32 ? "fp32" : "bf16", &q, err))) {
        return rc;
    }
    const char *why = NULL;
    uint64_t den = vf__pipeline_denoiser_bytes(p, &q, &why);
    if (den == VF_UNKNOWN)
        return vf__errf(err, VF_EUNSUPPORTED, "'%s' as %s: %s", m->id, q.name,
                        why ? why : "the weight bytes overflow");
    if (qlora && den >= p->params)
        return vf__errf(err, VF_EINVAL,
                        "--method qlora trains adapters on a 4-bit base: --weights %s is not "
                        "4-bit",
                        q.name);

    /* F-TRAIN-04/20: trainable parameters: the whole denoiser, or per block the adapters of
     * the attention q, k, v, o (h -> h) and the MLP up (h -> ffn) and down (ffn -> h) */
    uint64_t h = p->hidden, f = p->ffn, L = p->layers, trained, opt;
    if (full) {
        trained = p->params;
        opt = t->optimizer == VF_OPT_ADAFACTOR
                  ? vf__train_opt_bytes(t->optimizer, h, vf__div_ceil(p->params, h), 1, pure)
                  : vf__train_opt_bytes(t->optimizer, 1, p->params, 1, pure);
    } else {
        trained = vf__sat_mul(vf__sat_mul(rank, 10 * h + 2 * f), L);
        opt = vf__train_opt_bytes(t->optimizer, rank, h, 4 * L + L, pure); /* A: q,k,v,o,up */
        opt = vf__sat_add(opt, vf__train_opt_bytes(t->optimizer, rank, f, L, pure)); /* A: down */
        opt = vf__sat_add(opt, vf__train_opt_bytes(t->optimizer, h, rank, 5 * L, pure)); /* B */
        opt = vf__sat_add(opt, vf__train_opt_bytes(t->optimizer, f, rank, L, pure));     /* B: up */
    }
    if (trained == VF_UNKNOWN || opt == VF_UNKNOWN)
        return vf__errf(err, VF_ERANGE, "'%s': trainable parameters overflow 64 bits", m->id);

    struct vf__train_states_in in = {0};
    in.params = full ? p->params : vf__sat_add(p->params, trained);
    in.trained = trained;
    in.opt_bytes = opt;
    in.frozen_bytes = full ? 0 : den;
    in.w_bytes = full ? (fp32 ? 4 : 2) : (pure ? 2 : 4);
    in.g_bytes = full ? (fp32 || t->accounting == VF_ACCT_DEEPSPEED ? 4 : 2) : (pure ? 2 : 4);
    in.master_bytes = full && !fp32 && !pure ? 4 : 0;
    in.unit_bytes = den / L;
    in.unit_grads = full;
    in.stage = zero;
    in.n_gpus = n;
    in.group = group;
    in.offload = t->offload;
    in.accounting = t->accounting;
    in.zero_init = true;
    struct vf__train_states st;
    vf__train_states(&in, &st);

    e->model = *m;
    e->engine = "pytorch";
    e->task = VF_TASK_TRAIN;
    e->weights = q;
    e->kv_dtype = VF_DT_DEFAULT;
    e->kv_bytes_per_token = VF_UNKNOWN;
    e->gpus = n;
    e->users = o.batch;
    e->ctx_tokens = geo.seq_tokens;
    e->train = *t;
    e->train.batch = o.batch;
    e->train.lora_rank = full ? 0 : (uint32_t)rank;
    e->train.zero = (enum vf_zero)(VF_ZERO_0 + zero);
    e->trainable_params = trained;
    e->weights_bytes = den;
    e->diffusion = o;
    e->diffusion_tokens = geo.img_tokens;
    e->peak_phase = "train";

    const char *shard = group > 1 && zero > 0
                            ? vf_arena_printf(a, ", sharded over %u GPUs (ZeRO-%u)", group, zero)
                            : "";
    vf__add_component(
        e, "weights", st.weights, NULL,
        full ? vf_arena_printf(a, "%s %s, trained%s", p->component, q.name, zero >= 3 ? shard : "")
             : vf_arena_printf(a, "%s %s (frozen) + %s adapters%s", p->component, q.name,
                               pure ? "bf16" : "fp32", zero >= 3 ? shard : ""));
    vf__add_component(e, "gradients", st.grads, NULL,
                      full ? (in.g_bytes == 4 ? "fp32" : "bf16") : "adapters only");
    vf__add_component(e, "optimizer_states", st.opt, NULL, vf_optimizer_name(t->optimizer));
    vf__add_component(e, "master_weights", st.master, NULL, in.master_bytes ? "fp32 copy" : "none");

    /* text encoders and VAE: on the GPU unless their outputs are cached before training */
    uint64_t te = t->cache_text ? 0 : vf__pipeline_encoder_bytes(p, false, NULL);
    uint64_t vae = t->cache_latents ? 0 : vf_dtype_bytes(p->vae_dtype, p->vae_params);
    vf__add_component(e, "text_encoders", te, NULL,
                      t->cache_text ? "embeddings cached: off the GPU" : "frozen, 16-bit");
    vf__add_component(e, "vae", vae, NULL,
                      t->cache_latents ? "latents cached: off the GPU"
                                       : "frozen, encodes each step");

    /* F-TRAIN-20: activations of every block over the tokens of the micro-batch */
    uint64_t tokens = vf__sat_mul(geo.seq_tokens, o.batch);
    bool fa = !t->no_flash_attn;
    uint64_t one = block_act(p, u, VF_GC_NONE, fa, geo.seq_tokens);
    uint64_t per_tok =
        t->grad_checkpointing == VF_GC_FULL
            ? vf__sat_add(vf__sat_mul(L, u * h), one)
            : vf__sat_mul(L, block_act(p, u, t->grad_checkpointing, fa, geo.seq_tokens));
    uint64_t acts = vf__sat_mul(per_tok, tokens);
    vf__add_component(e, "activations", acts, "backward",
                      vf_arena_printf(a, "%llu tokens x batch %u, %s",
                                      (unsigned long long)geo.seq_tokens, o.batch,
                                      t->grad_checkpointing == VF_GC_FULL ? "checkpointed blocks"
                                      : t->grad_checkpointing == VF_GC_SELECTIVE
                                          ? "selective recomputation"
                                          : "all blocks saved"));
    vf__add_component(e, "runtime_overhead", vf__train_overhead(acts), NULL,
                      "CUDA context, cuBLAS, allocator slack");
    if (st.host) {
        struct vf_component *c = vf__add_component(e, "optimizer_states", st.host, NULL,
                                                   "offloaded states, host RAM of one node");
        if (c)
            c->device = VF_DEV_HOST;
    }

    vf__assume(a, e,
               "engine pytorch: one training step of the denoiser (diffusers training scripts, "
               "ai-toolkit, musubi-tuner), peak at the start of backward (F-TRAIN-20)");
    if (full)
        vf__assume(a, e, "full fine-tune of the %s (%llu params)%s; %s (F-TRAIN-01/11)",
                   p->component, (unsigned long long)p->params,
                   p->experts > 1 ? vf_arena_printf(a, ", one of its %u experts", p->experts) : "",
                   fp32   ? "fp32 weights, gradients and states"
                   : pure ? "pure bf16"
                          : "bf16 mixed precision with an fp32 master copy");
    else
        vf__assume(a, e,
                   "%s r=%llu on the attention q, k, v, o and the MLP up and down of each of "
                   "the %llu blocks: %llu trainable params (double-stream blocks counted once)%s; "
                   "the base frozen in %s (F-TRAIN-04/20)",
                   qlora ? "QLoRA" : "LoRA", (unsigned long long)rank, (unsigned long long)L,
                   (unsigned long long)trained,
                   p->experts > 1 ? vf_arena_printf(a, "; one of the %u experts", p->experts) : "",
                   q.name);
    vf__assume(a, e, "%ux%u%s, batch %u: %llu latent tokens%s per sample (F-DIF-03)%s%s", o.width,
               o.height, o.frames > 1 ? vf_arena_printf(a, " x %u frames", o.frames) : "", o.batch,
               (unsigned long long)geo.img_tokens,
               geo.seq_tokens > geo.img_tokens ? " + the text tokens" : "", dflt ? "; size: " : "",
               dflt ? dflt : "");
    vf__assume(a, e,
               "activations %s per token over %llu blocks (u(9h + 2 ffn) + 4 heads per block, "
               "%s; F-TRAIN-20)",
               vf_format_bytes(b1, sizeof b1, per_tok, VF_FMT_IEC), (unsigned long long)L,
               fa ? "FlashAttention/SDPA" : "eager attention with s^2 scores");
    vf__assume(a, e, "%s; %s (--cache-latents, --cache-text-embeddings)",
               t->cache_text ? "text embeddings cached before training: the encoders are off "
                               "the GPU"
                             : "text encoders on the GPU, encoding each caption",
               t->cache_latents ? "latents cached: the VAE is off the GPU"
                                : "the VAE encodes each image on the GPU; its encode activations "
                                  "are freed before the denoiser's forward");
    if (n > 1)
        vf__assume(a, e, "%u GPUs, ZeRO-%u (F-TRAIN-03)", n, zero);
    vf__assume(a, e,
               "runtime overhead: CUDA context ~400 MiB + cuBLAS 40 MiB + %d %% of the "
               "activations (F-TRAIN-09)",
               TRAIN_SLACK_PCT);
    e->total_bytes = vf__gpu_total(e, 0);
    e->host_bytes = st.host;
    return VF_OK;
}
