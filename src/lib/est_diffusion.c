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

static uint64_t max2(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

static uint64_t min2(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
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

static enum vf_err comfyui_run(struct vf_arena *a, const struct vf_model *m,
                               const struct vf_workload *w, struct vf_estimate *e,
                               struct vf_error *err)
{
    char b1[32], b2[32], b3[32];
    const struct vf_pipeline *p = m->pipeline;
    enum vf_err crc = vf__pipeline_begin(
        m, w, &vf__engine_comfyui,
        (1u << VF_DOFF_LOWVRAM) | (1u << VF_DOFF_NOVRAM) | (1u << VF_DOFF_BLOCK_SWAP),
        "lowvram, novram and block-swap N; model-cpu and sequential are diffusers' "
        "(--engine diffusers)",
        e, err);
    if (crc)
        return crc;
    enum vf_dif_offload off = w->diffusion.offload;
    if (off == VF_DOFF_BLOCK_SWAP && w->diffusion.block_swap > p->layers)
        return vf__errf(err, VF_EINVAL,
                        "--offload block-swap %u: '%s' has %u blocks (at most %u to swap)",
                        w->diffusion.block_swap, m->id, p->layers, p->layers);

    vf__assume(a, e,
               "engine comfyui (ComfyUI at 00184d15, comfy/model_management.py): each phase "
               "loads what it needs and unloads earlier models when the card is short; the "
               "peak is the largest phase without offloading weights (F-DIF-06)");

    struct vf_diffusion_opts o;
    enum vf_err rc = vf__pipeline_resolve_opts(a, m, w, e, &o, err);
    if (rc)
        return rc;
    if (w->task == VF_TASK_IMAGE && p->task == VF_TASK_VIDEO)
        vf__assume(a, e, "--task image on a video pipeline: one frame");
    e->diffusion = o;

    /* F-DIF-01: the denoiser; one expert resident at a time */
    e->weights = w->weights.kind == VF_QK_NATIVE ? m->native : w->weights;
    const char *why = NULL;
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
    /* F-DIF-12: block swap keeps N blocks in host RAM (moved in for their turn); lowvram and
     * novram stream the weights by layer: what the card holds besides the step's needs, at
     * least one block (comfy/model_management.py lowvram_model_memory) */
    uint64_t block = expert / p->layers, resident = expert, host = 0;
    if (off == VF_DOFF_BLOCK_SWAP) {
        resident = expert - vf__sat_mul(block, w->diffusion.block_swap);
        dnote = vf_arena_printf(a, "%s, %u of %u blocks swapped to host RAM", dnote,
                                w->diffusion.block_swap, p->layers);
    } else if (off == VF_DOFF_LOWVRAM || off == VF_DOFF_NOVRAM) {
        resident = block;
        dnote =
            vf_arena_printf(a, "%s, streamed: %s", dnote,
                            off == VF_DOFF_NOVRAM ? "--novram" : "--lowvram, at least one block");
    }
    host = vf__sat_add(host, expert - resident);
    if (p->experts > 1 && off != VF_DOFF_NONE)
        host = vf__sat_add(host, vf__sat_mul(expert, p->experts - 1)); /* the idle expert */
    vf__add_component(e, p->component, resident, "denoise", dnote);
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
    uint64_t te = vf__pipeline_encoder_bytes(p, low_bits, &o.te_weights);
    const char *enames = ""; /* at full length (names come from pipeline files) */
    for (size_t i = 0; i < p->n_enc && enames; i++) {
        bool f8 = low_bits && p->enc[i].fp8_file;
        enames = vf_arena_printf(a, "%s%s%s %s", enames, i ? " + " : "", p->enc[i].name,
                                 vf_dtype_name(f8 ? VF_DT_FP8 : p->enc[i].dtype));
    }
    if (!enames)
        return vf__errf(err, VF_ENOMEM, "'%s': out of memory", m->id);
    enum vf_te_place tp = o.text_encoder;
    if (off == VF_DOFF_NOVRAM && tp == VF_TE_DEFAULT)
        tp = VF_TE_CPU;
    if (tp == VF_TE_CPU) {
        struct vf_component *c = vf__add_component(e, "text_encoders", te, NULL,
                                                   vf_arena_printf(a, "%s, on the CPU", enames));
        if (c)
            c->device = VF_DEV_HOST;
        host = vf__sat_add(host, te);
        vf__add_component(e, "text_encoders", 0, "encode", "encoded on the CPU (encode)");
    } else {
        vf__add_component(
            e, "text_encoders", te, tp == VF_TE_GPU ? "all" : "encode",
            vf_arena_printf(a, "%s (%s)", enames, tp == VF_TE_GPU ? "kept on the GPU" : "encode"));
    }
    vf__assume(a, e,
               "text encoders %s: ComfyUI's default files are 16-bit; with weights below 16 bits "
               "the encoders that have an fp8 file use it, as ComfyUI's fp8 workflows do "
               "(F-DIF-02)",
               enames);

    /* F-DIF-01: the VAE (at --vae-dtype when given) */
    struct vf_pipeline pv = *p;
    if (o.vae_dtype != VF_DT_DEFAULT)
        pv.vae_dtype = o.vae_dtype;
    uint64_t vae = vf_dtype_bytes(pv.vae_dtype, p->vae_params);
    vf__add_component(e, "vae", vae, "decode",
                      vf_arena_printf(a, "%s (decode)", vf_dtype_name(pv.vae_dtype)));

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
    /* F-DIF-11: LoRA files, loaded next to the model while it is patched */
    if (o.loras) {
        uint64_t rank = o.lora_rank ? o.lora_rank : w->train.lora_rank ? w->train.lora_rank : 16;
        uint64_t lb = vf__pipeline_lora_bytes(p, rank);
        vf__add_component(e, "loras", vf__sat_mul(lb, o.loras), "denoise",
                          vf_arena_printf(a, "%u x rank %llu, bf16 (denoise)", o.loras,
                                          (unsigned long long)rank));
        vf__assume(a, e,
                   "%u LoRA file%s of rank %llu on every block's attention and MLP: %s each "
                   "(F-DIF-11); ComfyUI patches them into the weights as it loads them",
                   o.loras, o.loras > 1 ? "s" : "", (unsigned long long)rank,
                   vf_format_bytes(b1, sizeof b1, lb, VF_FMT_IEC));
    }
    bool cfg = o.cfg == VF_CFG_ON || (o.cfg == VF_CFG_DEFAULT && p->cfg);
    if (cfg) {
        /* F-DIF-05: samplers.py batches cond and uncond only when 1.5 x the reservation of
         * both fits in free memory; otherwise they run one after the other */
        uint64_t both = comfy_reservation(vf__sat_mul(area, 2), cs, p->factor_ppm);
        uint64_t need = vf__sat_mul(both, 3) / 2;
        vf__assume(a, e,
                   "classifier-free guidance: cond and uncond run one after the other at this "
                   "size; ComfyUI batches them (faster) when %s is free after loading",
                   vf_format_bytes(b1, sizeof b1, need, VF_FMT_IEC));
    } else {
        vf__assume(a, e, "no classifier-free guidance: %s",
                   p->cfg ? "--cfg off (cfg 1.0)"
                          : vf_arena_printf(a, "%s is guidance-distilled (cfg 1.0)", p->name));
    }
    vf__add_component(e, "activations", DIF_MIN_INFERENCE_BYTES, "encode",
                      "ComfyUI's minimum inference memory (encode)");

    /* F-DIF-07: VAE decode, one sample at a time (ComfyUI decodes in batches that fit) */
    uint64_t full = vf__pipeline_decode_bytes(&pv, g.lat_t, g.lat_h, g.lat_w);
    uint64_t tile_px = o.vae_tile ? o.vae_tile : DIF_TILE_PX;
    uint64_t tile = tile_px / p->vae_spatial ? tile_px / p->vae_spatial : 1;
    uint64_t tile_t =
        p->vae_temporal > 1 ? (DIF_TILE_FRAMES - 1) / p->vae_temporal + 1 : DIF_TILE_FRAMES;
    uint64_t tiled = vf__pipeline_decode_bytes(&pv, min2(g.lat_t, tile_t), min2(g.lat_h, tile),
                                               min2(g.lat_w, tile));
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
    vf__add_component(
        e, "vae_decode", dec, "decode",
        use_tiled ? vf_arena_printf(a, "tiled, %llu px tiles (decode)", (unsigned long long)tile_px)
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
    if (expert > resident) {
        struct vf_component *c = vf__add_component(
            e, p->component, host - (tp == VF_TE_CPU ? te : 0), NULL,
            off == VF_DOFF_BLOCK_SWAP ? "swapped blocks (and an idle expert) in host RAM"
                                      : "streamed from host RAM");
        if (c)
            c->device = VF_DEV_HOST;
        vf__assume(a, e,
                   "%s: %s of the %s in host RAM; each step moves it over PCIe: %s (F-DIF-12)",
                   off == VF_DOFF_BLOCK_SWAP ? "block swap" : vf_dif_offload_name(off),
                   vf_format_bytes(b1, sizeof b1, expert - resident, VF_FMT_IEC), p->component,
                   off == VF_DOFF_BLOCK_SWAP ? "slower steps, more so with more blocks"
                                             : "expect several times slower");
    }
    e->host_bytes = host;
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
 * a lower resolution, fewer frames at 480p, block swap (the fewest blocks that fit), the text
 * encoders on the CPU; then the Manager's unload buttons and --lowvram, slowest last.
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
            cost = "VAE Decode (Tiled); slower decode, rare seams";
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
        case 8: {
            if (w->diffusion.offload != VF_DOFF_NONE)
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
            cost = "blocks_to_swap (WanVideoWrapper) / block swap nodes; slower steps";
            break;
        }
        case 9:
            if (o->text_encoder == VF_TE_CPU)
                continue;
            x.diffusion.text_encoder = VF_TE_CPU;
            flags = "--text-encoder cpu";
            cost = "the CLIP/T5 loader's device: cpu; slower prompt encoding";
            break;
        default:
            if (w->diffusion.offload != VF_DOFF_NONE)
                continue;
            x.diffusion.offload = VF_DOFF_LOWVRAM;
            flags = "--offload lowvram";
            cost = "ComfyUI --lowvram (or --reserve-vram); expect several times slower";
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
