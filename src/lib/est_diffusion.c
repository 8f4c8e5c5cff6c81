/*
 * est_diffusion.c - the `comfyui` engine: image and video generation memory as ComfyUI
 * runs a pipeline on one GPU. A run has three phases - text encoding, denoising, VAE
 * decode - and ComfyUI loads the models of each phase on demand, unloading the earlier
 * ones when the card is short (comfy/model_management.py load_models_gpu / free_memory).
 * The estimate is what the card must hold to run every phase without offloading weights:
 * the largest phase (F-DIF-06). Formulas F-DIF-01..09 in docs/FORMULAS-diffusion.md;
 * the ComfyUI logic modelled is that of commit 00184d15 (model_management.py),
 * sampler_helpers.py prepare_sampling, model_base.py memory_required and sd.py VAE.
 */
#include "pipeline.h"

#include <stdio.h>
#include <string.h>

/* F-DIF-08: CUDA context with lazy module loading (default since CUDA 11.7): "around 400MB"
 * (pytorch/pytorch#109888; 287 MB measured in pytorch/pytorch#86509). */
#define DIF_CUDA_CONTEXT_BYTES (400ULL << 20)
/* F-DIF-08: EXTRA_RESERVED_VRAM on Linux (comfy/model_management.py; 600 MiB on Windows,
 * --reserve-vram replaces it). ComfyUI keeps it free on top of every phase's need. */
#define DIF_COMFY_RESERVE_BYTES (400ULL << 20)
/* F-DIF-05: minimum_inference_memory() less the reserve: (1024^3) x 0.8 bytes. */
#define DIF_MIN_INFERENCE_BYTES 858993459ULL
/* F-DIF-07: VAEDecodeTiled's default tile (tile_size 512 px, temporal_size 64 frames); the
 * OOM fallback of VAE.decode starts with 64 latent cells = 512 px on an 8x VAE too. */
#define DIF_TILE_PX     512
#define DIF_TILE_FRAMES 64

/* ComfyUI keeps one diffusion model on one device: its samplers have no tensor or
 * pipeline parallelism (multi-GPU custom nodes aside). */
static bool comfyui_can_split(const struct vf_model *m, const struct vf_workload *w, uint32_t n,
                              const char **why)
{
    (void)w;
    (void)m;
    *why = NULL;
    if (n <= 1)
        return true;
    *why = "ComfyUI runs a diffusion model on one GPU";
    return false;
}

/* F-DIF-05: ComfyUI's reservation for one step, BaseModel.memory_required() on the flash /
 * SDPA path: area x dtype_size x 0.01 x memory_usage_factor MiB, area = batch x latent
 * frames x rows x columns. factor in millionths; 0.01 = 1/100. */
static uint64_t comfy_reservation(uint64_t area, uint64_t dtype_size, uint64_t factor_ppm)
{
    unsigned __int128 v = (unsigned __int128)area * dtype_size * factor_ppm * (1u << 20);
    v /= 100000000u; /* 10^6 (ppm) x 100 (0.01) */
    return v > UINT64_MAX - 1 ? VF_UNKNOWN : (uint64_t)v;
}

/* F-DIF-07: ComfyUI's decode estimate (sd.py memory_used_decode) for a latent of lat_t x
 * lat_h x lat_w: coef x lat_h x lat_w x 64 (x lat_t for 3-D-conv VAEs) x dtype bytes. */
static uint64_t decode_bytes(const struct vf_pipeline *p, uint64_t lat_t, uint64_t lat_h,
                             uint64_t lat_w)
{
    uint64_t ds = vf_dtype_bytes(p->vae_dtype, 1);
    uint64_t v = vf__sat_mul(vf__sat_mul((uint64_t)p->decode_coef, lat_h), lat_w);
    v = vf__sat_mul(vf__sat_mul(v, 64), ds);
    return p->decode_per_frame ? vf__sat_mul(v, lat_t) : v;
}

static uint64_t max2(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

static uint64_t min2(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

/* Resolves and checks the width, height, frames and batch of the workload (0 = the
 * pipeline's default); writes the resolved options to *o. */
static enum vf_err resolve_opts(struct vf_arena *a, const struct vf_model *m,
                                const struct vf_workload *w, struct vf_estimate *e,
                                struct vf_diffusion_opts *o, struct vf_error *err)
{
    const struct vf_pipeline *p = m->pipeline;
    char dflt[128] = "";
    *o = w->diffusion;
    if (!o->width) {
        o->width = p->def_width;
        snprintf(dflt + strlen(dflt), sizeof dflt - strlen(dflt), ", width %u", o->width);
    }
    if (!o->height) {
        o->height = p->def_height;
        snprintf(dflt + strlen(dflt), sizeof dflt - strlen(dflt), ", height %u", o->height);
    }
    if (w->task == VF_TASK_IMAGE) {
        if (o->frames > 1)
            return vf__errf(err, VF_EINVAL,
                            "--frames %u: an image has 1 frame (use --task video with a video "
                            "pipeline)",
                            o->frames);
        o->frames = 1;
    } else if (!o->frames) {
        o->frames = p->def_frames;
        snprintf(dflt + strlen(dflt), sizeof dflt - strlen(dflt), ", %u frames", o->frames);
    }
    if (!o->batch) {
        o->batch = 1;
        snprintf(dflt + strlen(dflt), sizeof dflt - strlen(dflt), ", batch 1");
    }
    uint32_t side = p->vae_spatial * (p->patch_h > p->patch_w ? p->patch_h : p->patch_w);
    if (o->width < side || o->height < side || o->width > VF_PIPE_MAX_SIDE ||
        o->height > VF_PIPE_MAX_SIDE)
        return vf__errf(err, VF_ERANGE, "%ux%u: width and height must be %u to %u pixels", o->width,
                        o->height, side, VF_PIPE_MAX_SIDE);
    if (o->frames > VF_PIPE_MAX_FRAMES)
        return vf__errf(err, VF_ERANGE, "--frames %u is over the limit of %u", o->frames,
                        VF_PIPE_MAX_FRAMES);
    if (o->batch > VF_PIPE_MAX_BATCH)
        return vf__errf(err, VF_ERANGE, "--batch %u is over the limit of %u", o->batch,
                        VF_PIPE_MAX_BATCH);
    if (*dflt)
        vf__assume(a, e, "%s: the pipeline's defaults (--width, --height, --frames, --batch)",
                   dflt + 2);
    if (p->vae_temporal > 1 && (o->frames - 1) % p->vae_temporal)
        vf__assume(a, e,
                   "%u frames: the VAE takes 1 + %u n frames; ComfyUI's latent holds "
                   "(%u - 1) / %u + 1 = %u latent frames",
                   o->frames, p->vae_temporal, o->frames, p->vae_temporal,
                   (o->frames - 1) / p->vae_temporal + 1);
    return VF_OK;
}

/* The sums of one phase: its own components plus those of every phase ("all"). */
static uint64_t phase_total(const struct vf_estimate *e, const char *phase)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < e->n_components; i++) {
        const char *ph = e->components[i].phase;
        if (!ph || !strcmp(ph, "all") || !strcmp(ph, phase))
            sum = vf__sat_add(sum, e->components[i].bytes);
    }
    return sum;
}

static enum vf_err comfyui_estimate(struct vf_arena *a, const struct vf_model *m,
                                    const struct vf_workload *w, struct vf_estimate *e,
                                    struct vf_error *err)
{
    char b1[32], b2[32], b3[32];
    const struct vf_pipeline *p = m->pipeline;
    if (!p)
        return vf__errf(err, VF_EINVAL, "'%s' is not an image/video pipeline", m->id);
    if (w->task != VF_TASK_IMAGE && w->task != VF_TASK_VIDEO)
        return vf__errf(err, VF_EINVAL, "engine comfyui estimates --task image or video");
    if (w->task == VF_TASK_VIDEO && p->task == VF_TASK_IMAGE)
        return vf__errf(err, VF_EINVAL,
                        "'%s' generates images: --task video needs a video pipeline "
                        "(wan2.2-t2v-a14b, wan2.1-t2v-14b, ...)",
                        m->id);
    uint32_t n = w->gpus ? w->gpus : 1;
    const char *why;
    if (!comfyui_can_split(m, w, n, &why))
        return vf__errf(err, VF_EUNSUPPORTED, "cannot split '%s' over %u GPUs: %s", m->id, n, why);

    e->model = *m;
    e->engine = vf__engine_comfyui.name;
    e->task = w->task;
    e->gpus = 1;
    e->users = 1;
    e->ctx_tokens = 0;
    e->kv_dtype = VF_DT_DEFAULT;
    e->kv_bytes_per_token = VF_UNKNOWN;
    e->host_bytes = 0;

    vf__assume(a, e,
               "engine comfyui (ComfyUI at 00184d15, comfy/model_management.py): each phase "
               "loads what it needs and unloads earlier models when the card is short; the "
               "peak is the largest phase without offloading weights (F-DIF-06)");

    struct vf_diffusion_opts o;
    enum vf_err rc = resolve_opts(a, m, w, e, &o, err);
    if (rc)
        return rc;
    if (w->task == VF_TASK_IMAGE && p->task == VF_TASK_VIDEO)
        vf__assume(a, e, "--task image on a video pipeline: one frame");
    e->diffusion = o;

    /* F-DIF-01: the denoiser; one expert resident at a time */
    e->weights = w->weights.kind == VF_QK_NATIVE ? m->native : w->weights;
    uint64_t expert = vf__pipeline_denoiser_bytes(p, &e->weights, &why);
    if (expert == VF_UNKNOWN)
        return vf__errf(err, why ? VF_EUNSUPPORTED : VF_ERANGE, "--weights %s for '%s': %s",
                        e->weights.name, m->id, why ? why : "weights overflow 64 bits");
    e->weights_bytes = vf__sat_mul(expert, p->experts);
    unsigned bits = vf_quant_bits(&e->weights);
    bool low_bits = bits < 16;
    const char *dnote = p->experts > 1
                            ? vf_arena_printf(a, "%s, 1 of %u experts at a time (denoise)",
                                              e->weights.name, p->experts)
                            : vf_arena_printf(a, "%s (denoise)", e->weights.name);
    vf__add_component(e, p->component, expert, "denoise", dnote);
    if (e->weights.kind == VF_QK_GGUF_FTYPE)
        vf__assume(a, e,
                   "%s at its base type %s (ComfyUI-GGUF): norms, biases and other 1-D tensors "
                   "stay at 16/32 bits and K_M/K_S mixes put some tensors at a larger type, "
                   "so real files are a few %% (K mixes up to ~20 %%) larger",
                   e->weights.name, vf_dtype_name(e->weights.dtype));
    else if (low_bits)
        vf__assume(a, e,
                   "%s weights: %u bits per parameter; ComfyUI casts each layer to %s as it "
                   "runs (one layer's copy at a time, inside the activations)",
                   e->weights.name, bits, vf_dtype_name(p->dtype));
    if (p->experts > 1)
        vf__assume(a, e,
                   "%u experts of %s each run in turn (high noise, then low noise); ComfyUI "
                   "unloads the first to load the second when both do not fit, so one is "
                   "resident (%s for both)",
                   p->experts, vf_format_bytes(b1, sizeof b1, expert, VF_FMT_IEC),
                   vf_format_bytes(b2, sizeof b2, e->weights_bytes, VF_FMT_IEC));

    /* F-DIF-02: text encoders at their own storage; fp8 files with an 8-bit denoiser */
    uint64_t te = vf__pipeline_encoder_bytes(p, low_bits);
    char enames[128] = "";
    for (size_t i = 0; i < p->n_enc; i++) {
        bool f8 = low_bits && p->enc[i].fp8_file;
        size_t l = strlen(enames);
        snprintf(enames + l, sizeof enames - l, "%s%s %s", i ? " + " : "", p->enc[i].name,
                 vf_dtype_name(f8 ? VF_DT_FP8 : p->enc[i].dtype));
    }
    vf__add_component(e, "text_encoders", te, "encode", vf_arena_printf(a, "%s (encode)", enames));
    vf__assume(a, e,
               "text encoders %s: ComfyUI's default files are 16-bit; with weights below 16 bits "
               "the encoders that have an fp8 file use it, as ComfyUI's fp8 workflows do "
               "(F-DIF-02)",
               enames);

    /* F-DIF-01: the VAE */
    uint64_t vae = vf_dtype_bytes(p->vae_dtype, p->vae_params);
    vf__add_component(e, "vae", vae, "decode",
                      vf_arena_printf(a, "%s (decode)", vf_dtype_name(p->vae_dtype)));

    /* F-DIF-03: latent and tokens */
    struct vf_pipe_geom g;
    vf__pipeline_geom(p, o.width, o.height, o.frames, &g);
    e->diffusion_tokens = g.img_tokens;

    /* F-DIF-04: one step's activations from the block structure: act_widths hidden-wide
     * 16-bit tensors per token of the sequence, per sample of the batch.
     * F-DIF-05: ComfyUI's own reservation for a batch of B (the minimum it loads with). */
    uint64_t cs = 2; /* compute dtype bytes: bf16/fp16 (ComfyUI's manual_cast for fp8/GGUF) */
    uint64_t phys = vf__sat_mul(vf__sat_mul(vf__sat_mul(g.seq_tokens, o.batch), p->act_widths),
                                vf__sat_mul(p->hidden, cs));
    uint64_t area = vf__sat_mul(vf__sat_mul(vf__sat_mul(g.lat_t, g.lat_h), g.lat_w), o.batch);
    uint64_t res = area == VF_UNKNOWN ? VF_UNKNOWN : comfy_reservation(area, cs, p->factor_ppm);
    uint64_t act = max2(max2(phys, res), DIF_MIN_INFERENCE_BYTES);
    const char *by = act == res    ? "ComfyUI's reservation"
                     : act == phys ? "block structure"
                                   : "ComfyUI's minimum";
    vf__add_component(e, "activations", act, "denoise",
                      vf_arena_printf(a, "one step, %llu tokens x batch %u, %s (denoise)",
                                      (unsigned long long)g.seq_tokens, o.batch, by));
    vf__assume(
        a, e,
        "tokens %llu x %llu x %llu = %llu per sample%s (F-DIF-03); one step: %s from "
        "%u x %u-wide 16-bit tensors per token (F-DIF-04), %s reserved by ComfyUI "
        "(memory_usage_factor %.4g, F-DIF-05); SDPA/flash attention, no tokens^2 term",
        (unsigned long long)vf__div_ceil(g.lat_t, p->patch_t),
        (unsigned long long)vf__div_ceil(g.lat_h, p->patch_h),
        (unsigned long long)vf__div_ceil(g.lat_w, p->patch_w), (unsigned long long)g.img_tokens,
        p->joint_text ? vf_arena_printf(a, " + %u text tokens in joint attention", p->text_tokens)
                      : "",
        vf_format_bytes(b1, sizeof b1, phys, VF_FMT_IEC), p->act_widths, p->hidden,
        vf_format_bytes(b2, sizeof b2, res, VF_FMT_IEC), (double)p->factor_ppm / 1e6);
    if (p->cfg) {
        /* F-DIF-05: samplers.py batches cond and uncond only when 1.5 x the reservation of
         * both fits in free memory; otherwise they run one after the other */
        uint64_t both = comfy_reservation(vf__sat_mul(area, 2), cs, p->factor_ppm);
        uint64_t need = vf__sat_mul(both, 3) / 2;
        vf__assume(a, e,
                   "classifier-free guidance: cond and uncond run one after the other at this "
                   "size; ComfyUI batches them (faster) when %s is free after loading",
                   vf_format_bytes(b1, sizeof b1, need, VF_FMT_IEC));
    } else {
        vf__assume(a, e, "no classifier-free guidance: %s is guidance-distilled (cfg 1.0)",
                   p->name);
    }
    vf__add_component(e, "activations", DIF_MIN_INFERENCE_BYTES, "encode",
                      "ComfyUI's minimum inference memory (encode)");

    /* F-DIF-07: VAE decode, one sample at a time (ComfyUI decodes in batches that fit) */
    uint64_t full = decode_bytes(p, g.lat_t, g.lat_h, g.lat_w);
    uint64_t tile = DIF_TILE_PX / p->vae_spatial;
    uint64_t tile_t =
        p->vae_temporal > 1 ? (DIF_TILE_FRAMES - 1) / p->vae_temporal + 1 : DIF_TILE_FRAMES;
    uint64_t tiled =
        decode_bytes(p, min2(g.lat_t, tile_t), min2(g.lat_h, tile), min2(g.lat_w, tile));
    uint64_t ovh = DIF_CUDA_CONTEXT_BYTES + DIF_COMFY_RESERVE_BYTES;
    bool use_tiled = o.tiled_vae;
    uint64_t budget = w->usable_bytes;
    if (!use_tiled && budget && budget != VF_UNKNOWN &&
        vf__sat_add(vf__sat_add(vae, max2(full, DIF_MIN_INFERENCE_BYTES)), ovh) > budget &&
        tiled < full) {
        use_tiled = true;
        vf__assume(a, e,
                   "VAE decode: %s does not fit the card; ComfyUI catches the OOM and retries "
                   "tiled (comfy/sd.py VAE.decode), slower but it runs",
                   vf_format_bytes(b1, sizeof b1, full, VF_FMT_IEC));
    }
    uint64_t dec = max2(use_tiled ? tiled : full, DIF_MIN_INFERENCE_BYTES);
    vf__add_component(e, "vae_decode", dec, "decode",
                      use_tiled ? vf_arena_printf(a, "tiled, %llu px tiles (decode)",
                                                  (unsigned long long)DIF_TILE_PX)
                                : "whole latent, one sample (decode)");
    vf__assume(a, e,
               "VAE decode %s: ComfyUI's estimate %u x %llu x %llu x 64 x 2 B%s (F-DIF-07); "
               "tiled %s",
               vf_format_bytes(b1, sizeof b1, full, VF_FMT_IEC), p->decode_coef,
               (unsigned long long)g.lat_h, (unsigned long long)g.lat_w,
               p->decode_per_frame        ? " x latent frames"
               : p->task == VF_TASK_VIDEO ? ", any frame count"
                                          : "",
               vf_format_bytes(b2, sizeof b2, tiled, VF_FMT_IEC));

    /* F-DIF-08: runtime overhead in every phase */
    vf__add_component(e, "runtime_overhead", ovh, "all", "CUDA context + ComfyUI's reserve");
    vf__assume(a, e,
               "runtime overhead %s: CUDA context with lazy loading (~400 MiB) + ComfyUI's "
               "EXTRA_RESERVED_VRAM 400 MiB on Linux (--reserve-vram changes it)",
               vf_format_bytes(b1, sizeof b1, ovh, VF_FMT_IEC));

    /* F-DIF-06: the peak is the largest phase */
    static const char *const phases[] = {"denoise", "decode", "encode"};
    e->total_bytes = 0;
    e->peak_phase = phases[0];
    for (size_t i = 0; i < 3; i++) {
        uint64_t t = phase_total(e, phases[i]);
        if (t > e->total_bytes || i == 0) {
            e->total_bytes = t;
            e->peak_phase = phases[i];
        }
    }
    uint64_t all = vf__sat_add(vf__sat_add(vf__sat_add(e->weights_bytes, te), vae),
                               vf__sat_add(max2(act, dec), ovh));
    vf__assume(a, e,
               "peak phase %s: %s (encode %s, decode %s); where memory allows ComfyUI keeps "
               "every model loaded, up to %s all together",
               e->peak_phase, vf_format_bytes(b1, sizeof b1, e->total_bytes, VF_FMT_IEC),
               vf_format_bytes(b2, sizeof b2, phase_total(e, "encode"), VF_FMT_IEC),
               vf_format_bytes(b3, sizeof b3, phase_total(e, "decode"), VF_FMT_IEC),
               vf_format_bytes((char[32]){0}, 32, all, VF_FMT_IEC));
    if (e->total_bytes == VF_UNKNOWN)
        return vf__errf(err, VF_ERANGE, "the estimate for '%s' overflows 64 bits", m->id);
    return VF_OK;
}

const struct vf_engine vf__engine_comfyui = {
    .name = "comfyui",
    .version = "ComfyUI 00184d15",
    .tasks = (1u << VF_TASK_IMAGE) | (1u << VF_TASK_VIDEO),
    .can_split = comfyui_can_split,
    .estimate = comfyui_estimate,
};
