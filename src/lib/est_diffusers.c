/*
 * est_diffusers.c - the `diffusers` engine: image and video generation as a Hugging Face
 * diffusers pipeline runs it on one GPU. Unlike ComfyUI, `pipe.to("cuda")` keeps every
 * component resident through the three phases (text encoding, denoising, VAE decode);
 * enable_model_cpu_offload() moves one model at a time onto the GPU, and
 * enable_sequential_cpu_offload() / group offload one module at a time. Classifier-free
 * guidance runs cond and uncond as one batch of 2B; the VAE decodes the whole batch at once
 * unless vae.enable_tiling(). Formulas F-DIF-14 in docs/FORMULAS.md (section "Diffusion").
 */
#include "pipeline.h"

#include <stdio.h>
#include <string.h>

/* F-DIF-08: CUDA context with lazy module loading (pytorch/pytorch#109888); diffusers keeps
 * no reserve of its own. */
#define DFS_CUDA_CONTEXT_BYTES (400ULL << 20)
/* F-DIF-07: vae.enable_tiling()'s tile: tile_sample_min_size 512 px (AutoencoderKL). */
#define DFS_TILE_PX 512

/* A diffusers pipeline runs on one device here (device_map="balanced" spreads whole
 * components over GPUs; not modelled). */
static bool diffusers_can_split(const struct vf_model *m, const struct vf_workload *w, uint32_t n,
                                const char **why)
{
    (void)m;
    (void)w;
    *why = n <= 1 ? NULL : "a diffusers pipeline runs on one GPU here";
    return n <= 1;
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

static enum vf_err diffusers_estimate(struct vf_arena *a, const struct vf_model *m,
                                      const struct vf_workload *w, struct vf_estimate *e,
                                      struct vf_error *err)
{
    char b1[32], b2[32], b3[32];
    const struct vf_pipeline *p = m->pipeline;
    enum vf_err crc = vf__pipeline_begin(
        m, w, &vf__engine_diffusers, (1u << VF_DOFF_MODEL_CPU) | (1u << VF_DOFF_SEQUENTIAL),
        "model-cpu (enable_model_cpu_offload) and sequential (enable_sequential_cpu_offload, "
        "group offload); lowvram, novram and block swap are ComfyUI's",
        e, err);
    if (crc)
        return crc;
    enum vf_dif_offload off = w->diffusion.offload;

    vf__assume(a, e, "engine diffusers (0.35): %s; peak = the largest phase (F-DIF-14)",
               off == VF_DOFF_MODEL_CPU    ? "enable_model_cpu_offload(): one model on the GPU at "
                                             "a time, the others in host RAM"
               : off == VF_DOFF_SEQUENTIAL ? "enable_sequential_cpu_offload() / group offload: "
                                             "one block on the GPU at a time"
                                           : "pipe.to(\"cuda\"): every component resident");
    struct vf_diffusion_opts o;
    enum vf_err rc = vf__pipeline_resolve_opts(a, m, w, e, &o, err);
    if (rc)
        return rc;
    e->diffusion = o;

    /* F-DIF-01/02: the components at their storage; every expert is loaded */
    e->weights = w->weights.kind == VF_QK_NATIVE ? m->native : w->weights;
    const char *why = NULL;
    uint64_t expert = vf__pipeline_denoiser_bytes(p, &e->weights, &why);
    if (expert == VF_UNKNOWN)
        return vf__errf(err, why ? VF_EUNSUPPORTED : VF_ERANGE, "--weights %s for '%s': %s",
                        e->weights.name, m->id, why ? why : "weights overflow 64 bits");
    uint64_t den = vf__sat_mul(expert, p->experts);
    e->weights_bytes = den;
    uint64_t te = vf__pipeline_encoder_bytes(p, false, &o.te_weights);
    bool te_cpu = o.text_encoder == VF_TE_CPU;
    struct vf_pipeline pv = *p; /* the VAE at the asked dtype */
    if (o.vae_dtype != VF_DT_DEFAULT)
        pv.vae_dtype = o.vae_dtype;
    uint64_t vae = vf_dtype_bytes(pv.vae_dtype, p->vae_params);
    uint64_t block = expert / p->layers;

    /* F-DIF-03/04: the step, cond and uncond batched under CFG */
    struct vf_pipe_geom g;
    vf__pipeline_geom(p, o.width, o.height, o.frames, &g);
    e->diffusion_tokens = g.img_tokens;
    bool cfg = o.cfg == VF_CFG_ON || (o.cfg == VF_CFG_DEFAULT && p->cfg);
    uint64_t samples = vf__sat_mul(o.batch, cfg ? 2 : 1);
    uint64_t act = vf__pipeline_step_act(p, g.seq_tokens, samples);

    /* F-DIF-07: decode of the whole batch, or tiles */
    uint64_t tile = (o.vae_tile ? o.vae_tile : DFS_TILE_PX) / p->vae_spatial;
    if (!tile)
        tile = 1;
    uint64_t dec =
        o.tiled_vae
            ? vf__pipeline_decode_bytes(&pv, g.lat_t, g.lat_h < tile ? g.lat_h : tile,
                                        g.lat_w < tile ? g.lat_w : tile)
            : vf__sat_mul(vf__pipeline_decode_bytes(&pv, g.lat_t, g.lat_h, g.lat_w), o.batch);

    /* F-DIF-14: what is resident in each phase. bitsandbytes 8-bit (LLM.int8) models cannot
     * be moved by .to(), so model offload leaves them on the GPU (diffusers pipeline_utils:
     * "loaded in bitsandbytes 8bit and moving it ... is not supported"); 4-bit ones move with
     * bitsandbytes >= 0.43.2 */
    uint64_t gpu_te = te_cpu ? 0 : te; /* --text-encoder cpu: encoded on the CPU */
    uint64_t r_den = den, r_te = gpu_te, r_vae = vae, pinned = 0;
    if (off == VF_DOFF_MODEL_CPU) {
        r_den = expert; /* the expert being run */
        if (is_bnb8(&e->weights))
            pinned = vf__sat_add(pinned, den);
        if (is_bnb8(&o.te_weights) && !te_cpu)
            pinned = vf__sat_add(pinned, te);
    } else if (off == VF_DOFF_SEQUENTIAL) {
        r_den = block;
        r_te = 0;
        r_vae = vae;
    }
    bool resident = off == VF_DOFF_NONE;
    uint64_t all_w = vf__sat_add(vf__sat_add(den, gpu_te), vae);
    bool den_pin = pinned && is_bnb8(&e->weights);
    bool te_pin = pinned && is_bnb8(&o.te_weights);
    uint64_t enc_phase = resident ? all_w : vf__sat_add(pinned, te_pin ? 0 : r_te);
    uint64_t den_phase =
        vf__sat_add(resident ? all_w : vf__sat_add(pinned, den_pin ? 0 : r_den), act);
    uint64_t dec_phase = vf__sat_add(resident ? all_w : vf__sat_add(pinned, r_vae), dec);
    if (pinned)
        vf__assume(a, e,
                   "bitsandbytes 8-bit components stay on the GPU under model offload (%s): "
                   ".to() cannot move them",
                   vf_format_bytes(b1, sizeof b1, pinned, VF_FMT_IEC));
    uint64_t peak = max3(enc_phase, den_phase, dec_phase);
    e->peak_phase = peak == den_phase ? "denoise" : peak == dec_phase ? "decode" : "encode";

    const char *ph_den = resident ? "all" : "denoise";
    vf__add_component(e, p->component, resident ? den : r_den, ph_den,
                      vf_arena_printf(a, "%s%s", e->weights.name,
                                      p->experts > 1 && resident
                                          ? vf_arena_printf(a, ", %u experts loaded", p->experts)
                                      : off == VF_DOFF_SEQUENTIAL ? ", one block at a time"
                                                                  : ""));
    vf__add_component(e, "text_encoders", resident ? gpu_te : r_te, resident ? "all" : "encode",
                      te_cpu                              ? "on the CPU"
                      : o.te_weights.kind != VF_QK_NATIVE ? o.te_weights.name
                                                          : "16-bit");
    vf__add_component(e, "vae", vae, resident ? "all" : "decode", vf_dtype_name(pv.vae_dtype));
    vf__add_component(e, "activations", act, "denoise",
                      vf_arena_printf(a, "%llu tokens x %llu samples%s",
                                      (unsigned long long)g.seq_tokens, (unsigned long long)samples,
                                      cfg ? " (CFG)" : ""));
    vf__add_component(e, "vae_decode", dec, "decode",
                      o.tiled_vae ? "vae.enable_tiling()"
                                  : vf_arena_printf(a, "whole latent x batch %u", o.batch));
    vf__add_component(e, "runtime_overhead", DFS_CUDA_CONTEXT_BYTES, "all", "CUDA context");
    e->total_bytes = vf__sat_add(peak, DFS_CUDA_CONTEXT_BYTES);
    e->host_bytes = vf__sat_add(
        resident ? 0 : all_w - pinned - (off == VF_DOFF_SEQUENTIAL ? block : 0), te_cpu ? te : 0);
    if (e->host_bytes) {
        struct vf_component *c =
            vf__add_component(e, "weights", e->host_bytes, NULL, "offloaded, host RAM");
        if (c)
            c->device = VF_DEV_HOST;
    }
    if (e->total_bytes == VF_UNKNOWN)
        return vf__errf(err, VF_ERANGE, "the estimate for '%s' overflows 64 bits", m->id);

    vf__assume(a, e,
               "tokens %llu per sample%s; one step %s from %u x %u-wide 16-bit tensors per "
               "token x %llu samples%s (F-DIF-04); SDPA attention (diffusers' default "
               "AttnProcessor2_0), no tokens^2 term",
               (unsigned long long)g.img_tokens,
               p->joint_text ? vf_arena_printf(a, " + %u text tokens", p->text_tokens) : "",
               vf_format_bytes(b1, sizeof b1, act, VF_FMT_IEC), p->act_widths, p->hidden,
               (unsigned long long)samples,
               cfg ? " (classifier-free guidance: cond and uncond as one batch)" : "");
    vf__assume(a, e, "VAE decode %s: %s (F-DIF-07)",
               vf_format_bytes(b1, sizeof b1, dec, VF_FMT_IEC),
               o.tiled_vae ? "tiles of 512 px (vae.enable_tiling())"
                           : "the whole batch at once (the pipeline's vae.decode)");
    vf__assume(a, e,
               "phases: encode %s, denoise %s, decode %s; + CUDA context 400 MiB, which "
               "torch.cuda.max_memory_reserved() does not show (F-DIF-08)",
               vf_format_bytes(b1, sizeof b1, enc_phase, VF_FMT_IEC),
               vf_format_bytes(b2, sizeof b2, den_phase, VF_FMT_IEC),
               vf_format_bytes(b3, sizeof b3, dec_phase, VF_FMT_IEC));
    return VF_OK;
}

const struct vf_engine vf__engine_diffusers = {
    .name = "diffusers",
    .version = "0.35",
    .tasks = (1u << VF_TASK_IMAGE) | (1u << VF_TASK_VIDEO),
    .can_split = diffusers_can_split,
    .estimate = diffusers_estimate,
};
