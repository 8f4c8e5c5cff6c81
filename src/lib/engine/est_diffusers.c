/* SPDX-License-Identifier: Apache-2.0 */
/*
 * est_diffusers.c - the `diffusers` engine: image and video generation as a Hugging Face
 * diffusers pipeline runs it on one GPU. Unlike ComfyUI, `pipe.to("cuda")` keeps every
 * component resident through the three phases (text encoding, denoising, VAE decode);
 * enable_model_cpu_offload() moves one model at a time onto the GPU, and
 * enable_sequential_cpu_offload() / group offload one module at a time. Classifier-free
 * guidance runs cond and uncond as one batch of 2B; the VAE decodes the whole batch at once
 * unless vae.enable_tiling(). Formulas F-DIF-14 in docs/FORMULAS.md (section "Diffusion").
 */
#include "engine/pipeline_terms.h"
#include "engine/runtime.h"

#include <stdio.h>
#include <string.h>

/* A diffusers pipeline runs on one device here (device_map="balanced" spreads whole
 * components over GPUs; not modelled; F-DIF-09). */
static bool diffusers_can_split(const struct vf_model *m, const struct vf_workload *w, uint32_t n,
                                const char **why)
{
    (void)m;
    (void)w;
    return vf__pipeline_one_gpu(n, "a diffusers pipeline runs on one GPU here", why);
}

static bool is_bnb8(const struct vf_quant *q)
{
    return !strcmp(q->name, "bnb-int8");
}

static uint64_t max3(uint64_t a, uint64_t b, uint64_t c)
{
    uint64_t x = a > b ? a : b;
    return x > c ? x : c;
}

/* A diffusers estimate in the making: the workload, the opened terms (r) and what each term
 * function leaves for the later ones. Bytes saturate at VF_UNKNOWN. */
struct dfs {
    struct vf_arena *a;
    const struct vf_model *m;
    const struct vf_pipeline *p;
    struct vf_estimate *e;
    struct vf_pipe_run r;
    enum vf_dif_offload off;
    bool resident;        /* pipe.to("cuda"): no offload, every component on the card */
    bool te_cpu;          /* --text-encoder cpu */
    uint64_t den;         /* the denoiser, every expert (F-DIF-01) */
    uint64_t te;          /* the text encoders (F-DIF-02) */
    uint64_t block;       /* one block of one expert */
    uint64_t samples;     /* the step's batch: 2B under classifier-free guidance */
    uint64_t act;         /* one step's activations (F-DIF-04), eager scores included */
    uint64_t scores;      /* the eager AttnProcessor's tokens^2 scores (F-DIF-18), else 0 */
    uint64_t dec;         /* the VAE decode (F-DIF-07) */
    uint64_t upc;         /* the VAE's weights upcast to fp32 for the decode (F-DIF-17), or 0 */
    uint64_t all_w;       /* every weight the card would hold: denoiser, encoders, VAE */
    uint64_t pinned;      /* LLM.int8 weights model offload cannot move */
    uint64_t gpu_te;      /* the text encoders on the card: none with --text-encoder cpu */
    uint64_t r_den, r_te; /* the denoiser and the encoders on the card in their phase */
    uint64_t enc_ph, den_ph, dec_ph; /* the phases (F-DIF-06, F-DIF-14) */
    uint64_t load_ph;                /* bitsandbytes models quantized on the card (F-DIF-15) */
};

/* F-DIF-03, F-DIF-04: one step's activations; classifier-free guidance runs cond and uncond as
 * one batch of 2B. F-DIF-18: the eager AttnProcessor (attention_processor.py: get_attention_scores
 * builds baddbmm's empty input and the scores, then the softmax beside the scores) adds its
 * tokens^2 scores at the first attention level to the block's working set (AttnProcessor2_0's
 * F.scaled_dot_product_attention keeps none). Sets c->samples, c->scores and c->act. */
static void dfs_step(struct dfs *c)
{
    c->samples = vf__sat_mul(c->r.o.batch, c->r.cfg ? 2 : 1);
    c->act = vf__pipeline_step_act(c->p, c->r.g.seq_tokens, c->samples);
    c->scores =
        c->r.o.eager_attn ? vf__pipeline_eager_scores(c->p, c->r.g.img_tokens, c->samples) : 0;
    c->act = vf__sat_add(c->act, c->scores);
}

/* F-DIF-07, F-DIF-14, F-DIF-16: the pipeline's vae.decode takes the whole batch at once; with
 * vae.enable_tiling() one tile (all latent frames) at a time; with vae.enable_slicing()
 * (AutoencoderKL.decode: z.split(1) when use_slicing) one sample at a time; the tiny
 * autoencoder (AutoencoderTiny) the whole batch through its 64-channel decoder. Sets c->dec. */
static void dfs_decode(struct dfs *c)
{
    const struct vf_diffusion_opts *o = &c->r.o;
    if (o->tiled_vae)
        c->dec = vf__pipeline_decode_tile(&c->r, 0);
    else if (o->tiny_vae)
        c->dec = vf__sat_mul(vf__pipeline_taesd_decode(&c->r), o->batch);
    else
        c->dec = vf__sat_mul(vf__pipeline_decode_whole(&c->r), o->sliced_vae ? 1 : o->batch);
    /* F-DIF-17: StableDiffusionXLPipeline.__call__ upcasts an fp16 VAE with force_upcast
     * (upcast_vae) before vae.decode; the working memory keeps F-DIF-07's 16-bit figure, which
     * the public fp32-upcast rows sit below (FORMULAS.md F-DIF-17) */
    c->upc = vf__pipeline_vae_upcasts(&c->r) ? vf__pipeline_vae_upcast_bytes(c->p) : 0;
}

/* The decode's note: how vae.decode runs. */
static const char *dfs_decode_note(struct vf_arena *a, const struct vf_diffusion_opts *o)
{
    if (o->tiled_vae)
        return "vae.enable_tiling()";
    if (o->tiny_vae)
        return vf_arena_printf(a, "AutoencoderTiny (TAESD) x batch %u", o->batch);
    if (o->sliced_vae)
        return "vae.enable_slicing(): one sample at a time";
    return vf_arena_printf(a, "whole latent x batch %u", o->batch);
}

/* F-DIF-14: what is on the card in each phase. pipe.to("cuda") keeps every weight resident;
 * enable_model_cpu_offload() one model (one expert) at a time, except bitsandbytes 8-bit
 * (LLM.int8) models, which .to() cannot move (diffusers pipeline_utils: "loaded in bitsandbytes
 * 8bit and moving it ... is not supported"; 4-bit ones move with bitsandbytes >= 0.43.2);
 * sequential / group offload one block of the denoiser. Sets the phases (activations and
 * decode included); dfs_peak picks the largest. */
static void dfs_phases(struct dfs *c)
{
    char b1[32];
    const struct vf_quant *tq = &c->r.o.te_weights;
    c->gpu_te = c->te_cpu ? 0 : c->te; /* --text-encoder cpu: encoded on the CPU */
    c->r_den = c->den;
    c->r_te = c->gpu_te;
    c->pinned = 0;
    if (c->off == VF_DOFF_MODEL_CPU) {
        c->r_den = c->r.expert; /* the expert being run */
        if (is_bnb8(&c->e->weights))
            c->pinned = vf__sat_add(c->pinned, c->den);
        if (is_bnb8(tq) && !c->te_cpu)
            c->pinned = vf__sat_add(c->pinned, c->te);
    } else if (c->off == VF_DOFF_SEQUENTIAL) {
        c->r_den = c->block;
        c->r_te = 0;
    }
    c->all_w = vf__sat_add(vf__sat_add(c->den, c->gpu_te), c->r.vae);
    bool den_pin = c->pinned && is_bnb8(&c->e->weights);
    bool te_pin = c->pinned && is_bnb8(tq);
    uint64_t pin = c->pinned;
    c->enc_ph = c->resident ? c->all_w : vf__sat_add(pin, te_pin ? 0 : c->r_te);
    c->den_ph =
        vf__sat_add(c->resident ? c->all_w : vf__sat_add(pin, den_pin ? 0 : c->r_den), c->act);
    c->dec_ph = vf__sat_add(c->resident ? c->all_w : vf__sat_add(pin, c->r.vae),
                            vf__sat_add(c->dec, c->upc));
    if (pin)
        vf__assume(c->a, c->e,
                   "bitsandbytes 8-bit components stay on the GPU under model offload (%s): "
                   ".to() cannot move them",
                   vf_format_bytes(b1, sizeof b1, pin, VF_FMT_IEC));
}

/* F-DIF-15: bitsandbytes quantizes a model on the GPU as from_pretrained loads it (diffusers
 * quantizers/bitsandbytes/bnb_quantizer.py and transformers quantizer_bnb_4bit.py
 * update_device_map: no device_map -> {"": current cuda device}), so before
 * enable_model_cpu_offload() or enable_sequential_cpu_offload() moves them every
 * bitsandbytes component of the pipeline is on the card at once: the load phase, which
 * torch.cuda.max_memory_reserved() keeps. Resident runs hold it in every phase anyway. Sets
 * c->load_ph (0 without bitsandbytes or without offload) and its components. */
static void dfs_load(struct dfs *c)
{
    char b1[32];
    bool den_bnb = vf__pipeline_is_bnb(&c->e->weights);
    bool te_bnb = vf__pipeline_is_bnb(&c->r.o.te_weights) && !c->te_cpu;
    c->load_ph = 0;
    if (c->resident || (!den_bnb && !te_bnb))
        return;
    if (den_bnb) {
        c->load_ph = vf__sat_add(c->load_ph, c->den);
        vf__add_component(c->e, c->p->component, c->den, "load",
                          "bitsandbytes, quantized on the GPU");
    }
    if (te_bnb) {
        c->load_ph = vf__sat_add(c->load_ph, c->te);
        vf__add_component(c->e, "text_encoders", c->te, "load",
                          "bitsandbytes, quantized on the GPU");
    }
    vf__assume(c->a, c->e,
               "load %s: bitsandbytes quantizes each model on the GPU as it loads (its "
               "update_device_map), so its models are all on the card before the offload hooks "
               "move them (F-DIF-15)",
               vf_format_bytes(b1, sizeof b1, c->load_ph, VF_FMT_IEC));
}

/* The largest phase and its name (denoise, then decode, encode, load on a tie). */
static uint64_t dfs_peak(struct dfs *c)
{
    uint64_t peak = max3(c->enc_ph, c->den_ph, c->dec_ph);
    if (c->load_ph > peak) {
        c->e->peak_phase = "load";
        return c->load_ph;
    }
    c->e->peak_phase = peak == c->den_ph ? "denoise" : peak == c->dec_ph ? "decode" : "encode";
    return peak;
}

/* F-DIF-14 (F-DIF-01, 02, 04, 07, 08): the components, each in its phase ("all" when every
 * component is resident): the denoiser, the text encoders, the VAE, the step, the decode and
 * the CUDA context. Notes are static, in the arena or in e. */
static void dfs_components(struct dfs *c)
{
    struct vf_arena *a = c->a;
    const struct vf_diffusion_opts *o = &c->e->diffusion; /* e's copy: notes outlive c */
    const struct vf_pipeline *p = c->p;
    bool all = c->resident;
    vf__add_component(c->e, p->component, all ? c->den : c->r_den, all ? "all" : "denoise",
                      vf_arena_printf(a, "%s%s", c->e->weights.name,
                                      p->experts > 1 && all
                                          ? vf_arena_printf(a, ", %u experts loaded", p->experts)
                                      : c->off == VF_DOFF_SEQUENTIAL ? ", one block at a time"
                                                                     : ""));
    vf__add_component(c->e, "text_encoders", all ? c->gpu_te : c->r_te, all ? "all" : "encode",
                      c->te_cpu                            ? "on the CPU"
                      : o->te_weights.kind != VF_QK_NATIVE ? o->te_weights.name
                                                           : "16-bit");
    vf__add_component(c->e, "vae", c->r.vae, all ? "all" : "decode",
                      o->tiny_vae ? "AutoencoderTiny (TAESD), 16-bit"
                                  : vf_dtype_name(c->r.pv.vae_dtype));
    vf__add_component(c->e, "activations", c->act, "denoise",
                      vf_arena_printf(a, "%llu tokens x %llu samples%s",
                                      (unsigned long long)c->r.g.seq_tokens,
                                      (unsigned long long)c->samples, c->r.cfg ? " (CFG)" : ""));
    vf__add_component(c->e, "vae_decode", c->dec, "decode", dfs_decode_note(a, o));
    if (c->upc)
        vf__add_component(c->e, "vae_upcast", c->upc, "decode",
                          "force_upcast: the VAE to fp32 but its mid-block (upcast_vae)");
    vf__add_component(c->e, "runtime_overhead", VF_RT_CUDA_CONTEXT_BYTES, "all", "CUDA context");
}

/* F-DIF-14: host RAM: every weight off the card under offload (pinned LLM.int8 and the
 * running block aside) and the text encoders on the CPU; e->host_bytes and its component. */
static void dfs_host(struct dfs *c)
{
    uint64_t off_card =
        c->resident ? 0 : c->all_w - c->pinned - (c->off == VF_DOFF_SEQUENTIAL ? c->block : 0);
    c->e->host_bytes = vf__sat_add(off_card, c->te_cpu ? c->te : 0);
    if (c->e->host_bytes)
        vf__pipeline_host(c->e, "weights", c->e->host_bytes, "offloaded, host RAM");
}

/* F-DIF-17: the decode's note: how it runs and, for a whole (or sliced) AutoencoderKL decode,
 * the decoder's own tensors at the dtype its up blocks run in. */
static const char *dfs_decode_why(const struct dfs *c)
{
    char b1[32];
    const struct vf_diffusion_opts *o = &c->r.o;
    if (o->tiled_vae)
        return "tiles of 512 px (vae.enable_tiling(), F-DIF-07)";
    if (o->tiny_vae)
        return "the tiny autoencoder (TAESD), 3 x 64 channels x H x W x 2 B a sample from its "
               "block code, not measured; the full VAE's public measurements sit above its own "
               "block-code count, so take it as a floor (F-DIF-16)";
    const char *how = o->sliced_vae
                          ? "one sample at a time (vae.enable_slicing(), F-DIF-16)"
                          : "the whole batch at once (the pipeline's vae.decode, F-DIF-07)";
    bool up = vf__pipeline_vae_upcasts(&c->r);
    enum vf_dtype dt = up ? VF_DT_F32 : o->vae_dtype != VF_DT_DEFAULT ? o->vae_dtype : c->p->dtype;
    uint64_t floor = vf__sat_mul(vf__pipeline_vae_floor(&c->r, dt), o->sliced_vae ? 1 : o->batch);
    if (!floor)
        return how;
    return vf_arena_printf(c->a,
                           "%s; ComfyUI's figure, kept: the decoder's own tensors at its peak "
                           "are %s (up blocks in %s%s, F-DIF-17) and the public rows sit "
                           "1.3-2.5x above them (cuDNN workspaces, the allocator)",
                           how, vf_format_bytes(b1, sizeof b1, floor, VF_FMT_IEC),
                           vf_dtype_name(dt), up ? ": force_upcast" : "");
}

/* F-DIF-04, F-DIF-07, F-DIF-08, F-DIF-18: the assumptions on the step, the decode and the
 * phases. */
static void dfs_notes(struct dfs *c)
{
    char b1[32], b2[32], b3[32];
    const struct vf_pipeline *p = c->p;
    vf__assume(c->a, c->e,
               "tokens %llu per sample%s; one step %s from %u x %u-wide 16-bit tensors per "
               "token x %llu samples%s (F-DIF-04); %s",
               (unsigned long long)c->r.g.img_tokens,
               p->joint_text ? vf_arena_printf(c->a, " + %u text tokens", p->text_tokens) : "",
               vf_format_bytes(b1, sizeof b1, c->act - c->scores, VF_FMT_IEC), p->act_widths,
               p->hidden, (unsigned long long)c->samples,
               c->r.cfg ? " (classifier-free guidance: cond and uncond as one batch)" : "",
               c->scores ? vf_arena_printf(c->a,
                                           "eager attention (AttnProcessor): + %s of scores, "
                                           "2 x %llu samples x %u heads x %llu^2 tokens x 2 B "
                                           "(F-DIF-18)",
                                           vf_format_bytes(b2, sizeof b2, c->scores, VF_FMT_IEC),
                                           (unsigned long long)c->samples, p->heads,
                                           (unsigned long long)c->r.g.img_tokens)
                         : "SDPA attention (diffusers' default AttnProcessor2_0), no tokens^2 "
                           "term");
    vf__assume(c->a, c->e, "VAE decode %s: %s", vf_format_bytes(b1, sizeof b1, c->dec, VF_FMT_IEC),
               dfs_decode_why(c));
    vf__assume(c->a, c->e,
               "phases: encode %s, denoise %s, decode %s; + CUDA context 400 MiB, which "
               "torch.cuda.max_memory_reserved() does not show (F-DIF-08)",
               vf_format_bytes(b1, sizeof b1, c->enc_ph, VF_FMT_IEC),
               vf_format_bytes(b2, sizeof b2, c->den_ph, VF_FMT_IEC),
               vf_format_bytes(b3, sizeof b3, c->dec_ph, VF_FMT_IEC));
}

/* The engine's first assumption: its version and what the offload mode keeps resident. */
#define DFS_INTRO(mode) "engine diffusers (0.35): " mode "; peak = the largest phase (F-DIF-14)"

static const char *dfs_intro(enum vf_dif_offload off)
{
    if (off == VF_DOFF_MODEL_CPU)
        return DFS_INTRO("enable_model_cpu_offload(): one model on the GPU at a time, the "
                         "others in host RAM");
    if (off == VF_DOFF_SEQUENTIAL)
        return DFS_INTRO("enable_sequential_cpu_offload() / group offload: one block on the GPU "
                         "at a time");
    return DFS_INTRO("pipe.to(\"cuda\"): every component resident");
}

static const struct vf_pipe_engine dfs_opening = {
    .engine = &vf__engine_diffusers,
    .offloads = (1u << VF_DOFF_MODEL_CPU) | (1u << VF_DOFF_SEQUENTIAL),
    .offered = "model-cpu (enable_model_cpu_offload) and sequential "
               "(enable_sequential_cpu_offload, group offload); lowvram, novram and block swap "
               "are ComfyUI's",
    .vae_modes = true,
    .eager_attn = true,
};

/* The diffusers estimate of w on m, term by term (F-DIF-14): the largest phase + the CUDA
 * context. Errors as vf__pipeline_open, VF_ERANGE on overflow. */
static enum vf_err diffusers_estimate(struct vf_arena *a, const struct vf_model *m,
                                      const struct vf_workload *w, struct vf_estimate *e,
                                      struct vf_error *err)
{
    struct dfs c = {.a = a, .m = m, .p = m->pipeline, .e = e, .off = w->diffusion.offload};
    enum vf_err rc = vf__pipeline_open(a, m, w, &dfs_opening, dfs_intro(c.off), e, &c.r, err);
    if (rc)
        return rc;
    c.resident = c.off == VF_DOFF_NONE;
    c.den = e->weights_bytes; /* F-DIF-01: every expert is loaded */
    c.te = vf__pipeline_encoder_bytes_hf(c.p, &c.r.o.te_weights); /* F-DIF-02, F-DIF-15 */
    c.te_cpu = c.r.o.text_encoder == VF_TE_CPU;
    c.block = c.r.expert / c.p->layers;
    /* from_pretrained(torch_dtype=...) loads the VAE at the pipeline's dtype (the pipeline
     * file's VAE dtype is ComfyUI's vae_dtype); the same bytes at 16 bits */
    if (c.r.o.vae_dtype == VF_DT_DEFAULT && !c.r.o.tiny_vae &&
        vf_dtype_bytes(c.p->dtype, 1) == vf_dtype_bytes(c.r.pv.vae_dtype, 1))
        c.r.pv.vae_dtype = c.p->dtype;

    dfs_step(&c);
    dfs_decode(&c);
    dfs_phases(&c);
    dfs_components(&c);
    dfs_load(&c);
    e->total_bytes = vf__sat_add(dfs_peak(&c), VF_RT_CUDA_CONTEXT_BYTES);
    dfs_host(&c);
    if (e->total_bytes == VF_UNKNOWN)
        return vf__errf(err, VF_ERANGE, "the estimate for '%s' overflows 64 bits", m->id);
    dfs_notes(&c);
    return VF_OK;
}

const struct vf_engine vf__engine_diffusers = {
    .name = "diffusers",
    .version = "0.35",
    .tasks = (1u << VF_TASK_IMAGE) | (1u << VF_TASK_VIDEO),
    .can_split = diffusers_can_split,
    .estimate = diffusers_estimate,
};
