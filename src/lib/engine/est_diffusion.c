/* SPDX-License-Identifier: Apache-2.0 */
/*
 * est_diffusion.c - the `comfyui` engine: image and video generation memory as ComfyUI
 * runs a pipeline on one GPU. A run has three phases - text encoding, denoising, VAE
 * decode - and ComfyUI loads the models of each phase on demand, unloading the earlier
 * ones when the card is short (comfy/model_management.py load_models_gpu / free_memory).
 * The estimate is what the card must hold to run every phase without offloading weights:
 * the largest phase (F-DIF-06). Formulas F-DIF-01..13 in docs/FORMULAS.md ("Diffusion");
 * the ComfyUI logic modelled is that of commit 00184d15 (model_management.py),
 * sampler_helpers.py prepare_sampling, model_base.py memory_required and sd.py VAE.
 */
#include "engine/pipeline_terms.h"
#include "engine/runtime.h"

#include <stdio.h>
#include <string.h>

/* F-DIF-07: VAEDecodeTiled's default temporal_size, 64 frames (the tile side is
 * VF_PIPE_TILE_PX). */
#define DIF_TILE_FRAMES 64

/* ComfyUI keeps one diffusion model on one device: its samplers have no tensor or
 * pipeline parallelism (multi-GPU custom nodes aside; F-DIF-09). */
static bool comfyui_can_split(const struct vf_model *m, const struct vf_workload *w, uint32_t n,
                              const char **why)
{
    (void)m;
    (void)w;
    return vf__pipeline_one_gpu(n, "ComfyUI runs a diffusion model on one GPU", why);
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

static uint64_t max2(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

/* The sums of one phase: its own components plus those of every phase ("all"). */
static uint64_t phase_total(const struct vf_estimate *e, const char *phase)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < e->n_components; i++) {
        const char *ph = e->components[i].phase;
        if (e->components[i].device == VF_DEV_HOST)
            continue;
        if (!ph || !strcmp(ph, "all") || !strcmp(ph, phase))
            sum = vf__sat_add(sum, e->components[i].bytes);
    }
    return sum;
}

/* A ComfyUI estimate in the making: the workload, the opened terms (r) and what each term
 * function leaves for the later ones. Bytes saturate at VF_UNKNOWN. */
struct comfy {
    struct vf_arena *a;
    const struct vf_model *m;
    const struct vf_workload *w;
    const struct vf_pipeline *p;
    struct vf_estimate *e;
    struct vf_pipe_run r;
    enum vf_dif_offload off;
    bool low_bits;       /* the denoiser is stored below 16 bits */
    uint64_t resident;   /* of the running expert, on the card (F-DIF-12) */
    uint64_t host;       /* in host RAM: offloaded weights, encoders on the CPU */
    uint64_t te;         /* the text encoders' weights (F-DIF-02) */
    enum vf_te_place tp; /* where the text encoders run */
    uint64_t area;       /* latent cells of the batch (F-DIF-05) */
    uint64_t act;        /* one step's activations (F-DIF-05) */
    uint64_t dec;        /* the VAE decode's working memory (F-DIF-07) */
    uint64_t ovh;        /* the runtime overhead of every phase (F-DIF-08) */
};

/* ComfyUI computes in bf16/fp16 (manual_cast for fp8 and GGUF weights): F-DIF-05's dtype_size
 * (F-DIF-04's 16-bit tensors, in vf__pipeline_step_act, are the same 2 bytes). */
#define COMFY_COMPUTE_BYTES 2

/* F-DIF-01, F-DIF-12: the denoiser component: one expert resident at a time, less what the
 * offload mode keeps in host RAM - block swap N blocks (moved in for their turn), lowvram and
 * novram all but one block streamed by layer (model_management.py lowvram_model_memory);
 * under offloading the idle expert waits in host RAM too. Sets c->resident and c->host. */
static void comfy_denoiser(struct comfy *c)
{
    const struct vf_pipeline *p = c->p;
    uint64_t expert = c->r.expert, block = expert / p->layers;
    const char *dnote = p->experts > 1
                            ? vf_arena_printf(c->a, "%s, 1 of %u experts at a time (denoise)",
                                              c->e->weights.name, p->experts)
                            : vf_arena_printf(c->a, "%s (denoise)", c->e->weights.name);
    c->resident = expert;
    if (c->off == VF_DOFF_BLOCK_SWAP) {
        c->resident = expert - vf__sat_mul(block, c->w->diffusion.block_swap);
        dnote = vf_arena_printf(c->a, "%s, %u of %u blocks swapped to host RAM", dnote,
                                c->w->diffusion.block_swap, p->layers);
    } else if (c->off == VF_DOFF_LOWVRAM || c->off == VF_DOFF_NOVRAM) {
        c->resident = block;
        dnote = vf_arena_printf(c->a, "%s, streamed: %s", dnote,
                                c->off == VF_DOFF_NOVRAM ? "--novram"
                                                         : "--lowvram, at least one block");
    }
    c->host = expert - c->resident;
    if (p->experts > 1 && c->off != VF_DOFF_NONE)
        c->host = vf__sat_add(c->host, vf__sat_mul(expert, p->experts - 1)); /* the idle one */
    vf__add_component(c->e, p->component, c->resident, "denoise", dnote);
}

/* F-DIF-01: the assumptions on the denoiser's storage (GGUF files' real size, per-layer casts
 * of low-bit weights) and on experts run in turn. */
static void comfy_storage_notes(struct comfy *c)
{
    char b1[32], b2[32];
    const struct vf_quant *q = &c->e->weights;
    if (q->kind == VF_QK_GGUF_FTYPE)
        vf__assume(c->a, c->e,
                   "%s at its base type %s (ComfyUI-GGUF): norms, biases and other 1-D tensors "
                   "stay at 16/32 bits and K_M/K_S mixes put some tensors at a larger type, "
                   "so real files are a few %% (K mixes up to ~20 %%) larger",
                   q->name, vf_dtype_name(q->dtype));
    else if (c->low_bits)
        vf__assume(c->a, c->e,
                   "%s weights: %u bits per parameter; ComfyUI casts each layer to %s as it "
                   "runs (one layer's copy at a time, inside the activations)",
                   q->name, vf_quant_bits(q), vf_dtype_name(c->p->dtype));
    if (c->p->experts > 1)
        vf__assume(c->a, c->e,
                   "%u experts of %s each run in turn (high noise, then low noise); ComfyUI "
                   "unloads the first to load the second when both do not fit, so one is "
                   "resident (%s for both)",
                   c->p->experts, vf_format_bytes(b1, sizeof b1, c->r.expert, VF_FMT_IEC),
                   vf_format_bytes(b2, sizeof b2, c->e->weights_bytes, VF_FMT_IEC));
}

/* F-DIF-02, F-DIF-12: the text encoders at their storage (fp8 files with a low-bit denoiser),
 * in the encode phase, through every phase (--text-encoder gpu) or on the CPU (--text-encoder
 * cpu, and novram's default) with their bytes in host RAM. Sets c->te and c->tp; VF_ENOMEM
 * when their names cannot be formatted. */
static enum vf_err comfy_encoders(struct comfy *c, struct vf_error *err)
{
    const struct vf_pipeline *p = c->p;
    struct vf_estimate *e = c->e;
    c->te = vf__pipeline_encoder_bytes(p, c->low_bits, &c->r.o.te_weights);
    const char *enames = ""; /* at full length (names come from pipeline files) */
    const struct vf_quant *tq = &c->r.o.te_weights;
    for (size_t i = 0; i < p->n_enc && enames; i++) {
        bool f8 = c->low_bits && p->enc[i].fp8_file;
        /* the label is the storage the bytes were computed at: --text-encoder-weights when
         * given (issue 28: it said fp16 over fp8 bytes), else the file's */
        enames = vf_arena_printf(
            c->a, "%s%s%s %s", enames, i ? " + " : "", p->enc[i].name,
            tq->kind != VF_QK_NATIVE ? tq->name : vf_dtype_name(f8 ? VF_DT_FP8 : p->enc[i].dtype));
    }
    if (!enames)
        return vf__errf(err, VF_ENOMEM, "'%s': out of memory", c->m->id);
    c->tp = c->r.o.text_encoder;
    if (c->off == VF_DOFF_NOVRAM && c->tp == VF_TE_DEFAULT)
        c->tp = VF_TE_CPU;
    if (c->tp == VF_TE_CPU) {
        vf__pipeline_host(e, "text_encoders", c->te,
                          vf_arena_printf(c->a, "%s, on the CPU", enames));
        c->host = vf__sat_add(c->host, c->te);
        vf__add_component(e, "text_encoders", 0, "encode", "encoded on the CPU (encode)");
    } else {
        bool gpu = c->tp == VF_TE_GPU;
        vf__add_component(
            e, "text_encoders", c->te, gpu ? "all" : "encode",
            vf_arena_printf(c->a, "%s (%s)", enames, gpu ? "kept on the GPU" : "encode"));
    }
    if (tq->kind != VF_QK_NATIVE)
        vf__assume(c->a, e,
                   "text encoders %s: --text-encoder-weights %s, every encoder at %u bits per "
                   "parameter (F-DIF-02)",
                   enames, tq->name, vf_quant_bits(tq));
    else
        vf__assume(c->a, e,
                   "text encoders %s: ComfyUI's default files are 16-bit; with weights below 16 "
                   "bits the encoders that have an fp8 file use it, as ComfyUI's fp8 workflows "
                   "do (F-DIF-02)",
                   enames);
    return VF_OK;
}

/* F-DIF-04, F-DIF-05: one step's activations for the batch: the largest of the block
 * structure's tensors, ComfyUI's reservation (the minimum it loads with) and its minimum
 * inference memory, in the denoise phase. Sets c->area and c->act. */
static void comfy_activations(struct comfy *c)
{
    char b1[32], b2[32];
    const struct vf_pipeline *p = c->p;
    const struct vf_pipe_geom *g = &c->r.g;
    uint32_t batch = c->r.o.batch;
    uint64_t phys = vf__pipeline_step_act(p, g->seq_tokens, batch);
    c->area = vf__sat_mul(vf__sat_mul(vf__sat_mul(g->lat_t, g->lat_h), g->lat_w), batch);
    uint64_t res = c->area == VF_UNKNOWN
                       ? VF_UNKNOWN
                       : comfy_reservation(c->area, COMFY_COMPUTE_BYTES, p->factor_ppm);
    c->act = max2(max2(phys, res), VF_RT_COMFY_MIN_INFERENCE_BYTES);
    const char *by = c->act == res    ? "ComfyUI's reservation"
                     : c->act == phys ? "block structure"
                                      : "ComfyUI's minimum";
    vf__add_component(c->e, "activations", c->act, "denoise",
                      vf_arena_printf(c->a, "one step, %llu tokens x batch %u, %s (denoise)",
                                      (unsigned long long)g->seq_tokens, batch, by));
    vf__assume(c->a, c->e,
               "tokens %llu x %llu x %llu = %llu per sample%s (F-DIF-03); one step: %s from "
               "%u x %u-wide 16-bit tensors per token (F-DIF-04), %s reserved by ComfyUI "
               "(memory_usage_factor %.4g, F-DIF-05); SDPA/flash attention, no tokens^2 term",
               (unsigned long long)vf__div_ceil(g->lat_t, p->patch_t),
               (unsigned long long)vf__div_ceil(g->lat_h, p->patch_h),
               (unsigned long long)vf__div_ceil(g->lat_w, p->patch_w),
               (unsigned long long)g->img_tokens,
               p->joint_text
                   ? vf_arena_printf(c->a, " + %u text tokens in joint attention", p->text_tokens)
                   : "",
               vf_format_bytes(b1, sizeof b1, phys, VF_FMT_IEC), p->act_widths, p->hidden,
               vf_format_bytes(b2, sizeof b2, res, VF_FMT_IEC), (double)p->factor_ppm / 1e6);
}

/* F-DIF-11: the LoRA files (--loras, rank --lora-rank, else the training rank, else 16),
 * loaded next to the model while ComfyUI patches it: denoise phase. */
static void comfy_loras(struct comfy *c)
{
    char b1[32];
    const struct vf_diffusion_opts *o = &c->r.o;
    if (!o->loras)
        return;
    uint64_t rank = o->lora_rank            ? o->lora_rank
                    : c->w->train.lora_rank ? c->w->train.lora_rank
                                            : 16;
    uint64_t lb = vf__pipeline_lora_bytes(c->p, rank);
    vf__add_component(c->e, "loras", vf__sat_mul(lb, o->loras), "denoise",
                      vf_arena_printf(c->a, "%u x rank %llu, bf16 (denoise)", o->loras,
                                      (unsigned long long)rank));
    vf__assume(c->a, c->e,
               "%u LoRA file%s of rank %llu on every block's attention and MLP: %s each "
               "(F-DIF-11); ComfyUI patches them into the weights as it loads them",
               o->loras, o->loras > 1 ? "s" : "", (unsigned long long)rank,
               vf_format_bytes(b1, sizeof b1, lb, VF_FMT_IEC));
}

/* F-DIF-05: classifier-free guidance. samplers.py batches cond and uncond only when 1.5 x the
 * reservation of both fits in free memory; otherwise they run one after the other, the
 * estimate's case. Says which, and what batching both would need. */
static void comfy_guidance(struct comfy *c)
{
    char b1[32];
    const struct vf_pipeline *p = c->p;
    if (!c->r.cfg) {
        vf__assume(c->a, c->e, "no classifier-free guidance: %s",
                   p->cfg ? "--cfg off (cfg 1.0)"
                          : vf_arena_printf(c->a, "%s is guidance-distilled (cfg 1.0)", p->name));
        return;
    }
    uint64_t both = comfy_reservation(vf__sat_mul(c->area, 2), COMFY_COMPUTE_BYTES, p->factor_ppm);
    uint64_t need = vf__sat_mul(both, 3) / 2;
    vf__assume(c->a, c->e,
               "classifier-free guidance: cond and uncond run one after the other at this "
               "size; ComfyUI batches them (faster) when %s is free after loading",
               vf_format_bytes(b1, sizeof b1, need, VF_FMT_IEC));
}

/* F-DIF-07: the VAE decode, one sample at a time (ComfyUI decodes in batches that fit), at
 * least the minimum inference memory; tiled with --vae-decode tiled, or when a card is given
 * and the whole decode does not fit it (VAE.decode catches the OOM and retries tiled). Sets
 * c->dec; needs c->ovh. */
static void comfy_decode(struct comfy *c)
{
    char b1[32], b2[32];
    const struct vf_pipeline *p = c->p;
    const struct vf_pipe_geom *g = &c->r.g;
    uint64_t full = vf__pipeline_decode_whole(&c->r);
    uint64_t tile_t =
        p->vae_temporal > 1 ? (DIF_TILE_FRAMES - 1) / p->vae_temporal + 1 : DIF_TILE_FRAMES;
    uint64_t tiled = vf__pipeline_decode_tile(&c->r, tile_t);
    bool use_tiled = c->r.o.tiled_vae;
    uint64_t budget = c->w->usable_bytes;
    if (!use_tiled && budget && budget != VF_UNKNOWN &&
        vf__sat_add(vf__sat_add(c->r.vae, max2(full, VF_RT_COMFY_MIN_INFERENCE_BYTES)), c->ovh) >
            budget &&
        tiled < full) {
        use_tiled = true;
        vf__assume(c->a, c->e,
                   "VAE decode: %s does not fit the card; ComfyUI catches the OOM and retries "
                   "tiled (comfy/sd.py VAE.decode), slower but it runs",
                   vf_format_bytes(b1, sizeof b1, full, VF_FMT_IEC));
    }
    c->dec = max2(use_tiled ? tiled : full, VF_RT_COMFY_MIN_INFERENCE_BYTES);
    vf__add_component(c->e, "vae_decode", c->dec, "decode",
                      use_tiled ? vf_arena_printf(c->a, "tiled, %llu px tiles (decode)",
                                                  (unsigned long long)c->r.tile_px)
                                : "whole latent, one sample (decode)");
    vf__assume(c->a, c->e,
               "VAE decode %s: ComfyUI's estimate %u x %llu x %llu x 64 x 2 B%s (F-DIF-07); "
               "tiled %s",
               vf_format_bytes(b1, sizeof b1, full, VF_FMT_IEC), p->decode_coef,
               (unsigned long long)g->lat_h, (unsigned long long)g->lat_w,
               p->decode_per_frame        ? " x latent frames"
               : p->task == VF_TASK_VIDEO ? ", any frame count"
                                          : "",
               vf_format_bytes(b2, sizeof b2, tiled, VF_FMT_IEC));
}

/* F-DIF-08: the runtime overhead of every phase: the CUDA context and ComfyUI's
 * EXTRA_RESERVED_VRAM (c->ovh, set before the decode, which weighs it). */
static void comfy_overhead(struct comfy *c)
{
    char b1[32];
    vf__add_component(c->e, "runtime_overhead", c->ovh, "all", "CUDA context + ComfyUI's reserve");
    vf__assume(c->a, c->e,
               "runtime overhead %s: CUDA context with lazy loading (~400 MiB) + ComfyUI's "
               "EXTRA_RESERVED_VRAM 400 MiB on Linux (--reserve-vram changes it)",
               vf_format_bytes(b1, sizeof b1, c->ovh, VF_FMT_IEC));
}

/* F-DIF-06: the peak is the largest phase (denoise on a tie): e->total_bytes and
 * e->peak_phase; says the other phases and the all-resident sum. VF_ERANGE on overflow. */
static enum vf_err comfy_phases(struct comfy *c, struct vf_error *err)
{
    char b1[32], b2[32], b3[32], b4[32];
    struct vf_estimate *e = c->e;
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
    uint64_t all = vf__sat_add(vf__sat_add(vf__sat_add(e->weights_bytes, c->te), c->r.vae),
                               vf__sat_add(max2(c->act, c->dec), c->ovh));
    vf__assume(c->a, e,
               "peak phase %s: %s (encode %s, decode %s); where memory allows ComfyUI keeps "
               "every model loaded, up to %s all together",
               e->peak_phase, vf_format_bytes(b1, sizeof b1, e->total_bytes, VF_FMT_IEC),
               vf_format_bytes(b2, sizeof b2, phase_total(e, "encode"), VF_FMT_IEC),
               vf_format_bytes(b3, sizeof b3, phase_total(e, "decode"), VF_FMT_IEC),
               vf_format_bytes(b4, sizeof b4, all, VF_FMT_IEC));
    if (e->total_bytes == VF_UNKNOWN)
        return vf__errf(err, VF_ERANGE, "the estimate for '%s' overflows 64 bits", c->m->id);
    return VF_OK;
}

/* F-DIF-12: the denoiser's bytes an offload mode keeps in host RAM (swapped or streamed
 * blocks, the idle expert), listed with what the mode costs; e->host_bytes. */
static void comfy_offload(struct comfy *c)
{
    char b1[32];
    bool swap = c->off == VF_DOFF_BLOCK_SWAP;
    uint64_t moved = c->r.expert - c->resident;
    if (c->r.expert > c->resident) {
        vf__pipeline_host(c->e, c->p->component, c->host - (c->tp == VF_TE_CPU ? c->te : 0),
                          swap ? "swapped blocks (and an idle expert) in host RAM"
                               : "streamed from host RAM");
        vf__assume(c->a, c->e,
                   "%s: %s of the %s in host RAM; each step moves it over PCIe (F-DIF-12; its "
                   "time: F-SPD-12)",
                   swap ? "block swap" : vf_dif_offload_name(c->off),
                   vf_format_bytes(b1, sizeof b1, moved, VF_FMT_IEC), c->p->component);
    }
    c->e->host_bytes = c->host;
}

#define COMFY_INTRO                                                                              \
    "engine comfyui (ComfyUI at 00184d15, comfy/model_management.py): each phase loads what it " \
    "needs and unloads earlier models when the card is short; the peak is the largest phase "    \
    "without offloading weights (F-DIF-06)"

static const struct vf_pipe_engine comfy_opening = {
    .engine = &vf__engine_comfyui,
    .offloads = (1u << VF_DOFF_LOWVRAM) | (1u << VF_DOFF_NOVRAM) | (1u << VF_DOFF_BLOCK_SWAP),
    .offered = "lowvram, novram and block-swap N; model-cpu and sequential are diffusers' "
               "(--engine diffusers)",
};

/* The ComfyUI estimate of w on m, term by term (F-DIF-01..12); the components carry their
 * phase and the total is the largest phase. Errors as vf__pipeline_open, VF_ERANGE on
 * overflow, VF_ENOMEM. */
static enum vf_err comfyui_run(struct vf_arena *a, const struct vf_model *m,
                               const struct vf_workload *w, struct vf_estimate *e,
                               struct vf_error *err)
{
    struct comfy c = {.a = a, .m = m, .w = w, .p = m->pipeline, .e = e};
    enum vf_err rc = vf__pipeline_open(a, m, w, &comfy_opening, COMFY_INTRO, e, &c.r, err);
    if (rc)
        return rc;
    if (w->task == VF_TASK_IMAGE && c.p->task == VF_TASK_VIDEO)
        vf__assume(a, e, "--task image on a video pipeline: one frame");
    c.off = w->diffusion.offload;
    c.low_bits = vf_quant_bits(&e->weights) < 16;
    c.ovh = VF_RT_CUDA_CONTEXT_BYTES + VF_RT_COMFY_RESERVE_BYTES;

    comfy_denoiser(&c);
    comfy_storage_notes(&c);
    if ((rc = comfy_encoders(&c, err)))
        return rc;
    vf__add_component(e, "vae", c.r.vae, "decode", /* F-DIF-01 */
                      vf_arena_printf(a, "%s (decode)", vf_dtype_name(c.r.pv.vae_dtype)));
    comfy_activations(&c);
    comfy_loras(&c);
    comfy_guidance(&c);
    /* F-DIF-06: the encode phase holds ComfyUI's minimum inference memory */
    vf__add_component(e, "activations", VF_RT_COMFY_MIN_INFERENCE_BYTES, "encode",
                      "ComfyUI's minimum inference memory (encode)");
    comfy_decode(&c);
    comfy_overhead(&c);
    if ((rc = comfy_phases(&c, err)))
        return rc;
    comfy_offload(&c);
    return VF_OK;
}

/* The peak of x, VF_UNKNOWN when refused. */
static uint64_t peak_of(struct vf_arena *a, const struct vf_model *m, const struct vf_workload *x)
{
    struct vf_estimate y;
    memset(&y, 0, sizeof y);
    return comfyui_run(a, m, x, &y, NULL) ? VF_UNKNOWN : y.total_bytes;
}

/*
 * F-DIF-13: ComfyUI's fixes in our guide's order, each estimated on the changed workload:
 * fp8 weights, GGUF Q8_0 (16 GB cards), Q5_K_M and Q4_K_S (12 GB), VAE Decode (Tiled), batch 1,
 * a lower resolution (images), fewer frames at 480p and block swap (the fewest blocks that fit;
 * both video only), the text encoders on the CPU; then the Manager's unload buttons and
 * --lowvram, slowest last. Each fix is for the workload's kind: an image gets no frames and no
 * video wrapper's block swap.
 */
static void comfy_fixes(struct vf_arena *a, const struct vf_model *m, const struct vf_workload *w,
                        const struct vf_estimate *e0, struct vf_estimate *e)
{
    const struct vf_pipeline *p = m->pipeline;
    const struct vf_diffusion_opts *o = &e0->diffusion;
    unsigned bits = vf_quant_bits(&e0->weights);
    for (int i = 0; i < 11; i++) {
        struct vf_workload x = *w;
        const char *flags = NULL, *cost = NULL;
        x.diffusion.width = o->width;
        x.diffusion.height = o->height;
        x.diffusion.frames = o->frames;
        x.diffusion.batch = o->batch;
        switch (i) {
        case 0:
        case 1:
        case 2:
        case 3: {
            static const char *const q[] = {"fp8", "Q8_0", "Q5_K_M", "Q4_K_S"};
            static const unsigned b[] = {8, 9, 6, 5};
            static const char *const c[] = {
                "the fp8_e4m3fn file; a small quality cost",
                "ComfyUI-GGUF Unet Loader; close to 16-bit quality, for 16 GB cards",
                "ComfyUI-GGUF; for 12 GB cards, some loss of detail",
                "ComfyUI-GGUF; for 12 GB cards, visible loss of detail"};
            if (bits <= b[i] || vf_quant_parse(q[i], &x.weights, NULL))
                continue;
            flags = vf_arena_printf(a, "--weights %s", q[i]);
            cost = c[i];
            break;
        }
        case 4:
            if (o->tiled_vae)
                continue;
            x.diffusion.tiled_vae = true;
            flags = "--vae-decode tiled";
            cost = "VAE Decode (Tiled); rare seams";
            break;
        case 5:
            if (o->batch < 2)
                continue;
            x.diffusion.batch = 1;
            flags = "--batch 1";
            cost = "batch_size 1 in Empty Latent Image; run the batch in turn";
            break;
        case 6: {
            uint32_t st = p->vae_spatial * (p->patch_h > p->patch_w ? p->patch_h : p->patch_w);
            uint32_t wd = o->width * 3 / 4 / st * st, ht = o->height * 3 / 4 / st * st;
            if (p->task == VF_TASK_VIDEO || wd < 512 || ht < 512)
                continue;
            x.diffusion.width = wd;
            x.diffusion.height = ht;
            flags = vf_arena_printf(a, "--width %u --height %u", wd, ht);
            cost = "a lower resolution, then a tiled upscale";
            break;
        }
        case 7:
            if (p->task != VF_TASK_VIDEO || (o->frames <= 49 && o->width * o->height <= 832 * 480))
                continue;
            x.diffusion.frames = o->frames > 49 ? 49 : o->frames;
            x.diffusion.width = o->width * o->height > 832 * 480 ? 832 : o->width;
            x.diffusion.height = o->width * o->height > 832 * 480 ? 480 : o->height;
            flags = vf_arena_printf(a, "--frames %u --res %ux%u", x.diffusion.frames,
                                    x.diffusion.width, x.diffusion.height);
            cost = "a shorter, smaller video";
            break;
        case 8: { /* block swap is the video wrappers' (WanVideoWrapper's blocks_to_swap):
                   * an image workflow's is --lowvram below (issue 28) */
            if (w->diffusion.offload != VF_DOFF_NONE || p->task != VF_TASK_VIDEO)
                continue;
            uint32_t lo = 1, hi = p->layers, found = 0;
            x.diffusion.offload = VF_DOFF_BLOCK_SWAP;
            while (lo <= hi) { /* the fewest blocks that fit */
                uint32_t mid = lo + (hi - lo) / 2;
                x.diffusion.block_swap = mid;
                uint64_t z = peak_of(a, m, &x);
                if (z != VF_UNKNOWN && z <= w->usable_bytes) {
                    found = mid;
                    hi = mid - 1;
                } else {
                    lo = mid + 1;
                }
            }
            x.diffusion.block_swap = found ? found : p->layers;
            flags = vf_arena_printf(a, "--offload block-swap %u", x.diffusion.block_swap);
            cost = "blocks_to_swap (WanVideoWrapper) / block swap nodes";
            break;
        }
        case 9:
            if (o->text_encoder == VF_TE_CPU)
                continue;
            x.diffusion.text_encoder = VF_TE_CPU;
            flags = "--text-encoder cpu";
            cost = "the CLIP/T5 loader's device: cpu; the prompt is encoded on the CPU";
            break;
        default:
            if (w->diffusion.offload != VF_DOFF_NONE)
                continue;
            x.diffusion.offload = VF_DOFF_LOWVRAM;
            flags = "--offload lowvram";
            cost = "ComfyUI --lowvram (or --reserve-vram)";
            break;
        }
        vf__fix_saving(a, e, peak_of(a, m, &x), w->usable_bytes, flags, cost);
    }
    vf__fix(a, e,
            "if the workflow changed in this session: Manager > Unload Models / Free model and "
            "node cache (the old model may still be loaded)");
}

static enum vf_err comfyui_estimate(struct vf_arena *a, const struct vf_model *m,
                                    const struct vf_workload *w, struct vf_estimate *e,
                                    struct vf_error *err)
{
    enum vf_err rc = comfyui_run(a, m, w, e, err);
    if (!rc && w->usable_bytes && w->usable_bytes != VF_UNKNOWN && e->total_bytes > w->usable_bytes)
        comfy_fixes(a, m, w, e, e);
    return rc;
}

const struct vf_engine vf__engine_comfyui = {
    .name = "comfyui",
    .version = "ComfyUI 00184d15",
    .tasks = (1u << VF_TASK_IMAGE) | (1u << VF_TASK_VIDEO),
    .can_split = comfyui_can_split,
    .estimate = comfyui_estimate,
};
