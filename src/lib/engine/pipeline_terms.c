/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pipeline_terms.c - the arithmetic on a pipeline (model/pipeline.c reads it) that the
 * image/video engines share: latent and token geometry (F-DIF-03), component weight bytes
 * (F-DIF-01, F-DIF-02), step activations, VAE decode, LoRA bytes, the workload's sizes checked
 * against the pipeline, and the opening the ComfyUI and diffusers engines share (checks, sizes,
 * denoiser and VAE bytes, geometry, guidance, the VAE tile).
 */
#include "engine/pipeline_terms.h"

#include <stdio.h>
#include <string.h>

/* ceil(a / b) of small positive numbers */
static uint64_t cdiv(uint64_t a, uint64_t b)
{
    return vf__div_ceil(a, b);
}

void vf__pipeline_geom(const struct vf_pipeline *p, uint32_t width, uint32_t height,
                       uint32_t frames, struct vf_pipe_geom *out)
{
    /* F-DIF-03: ComfyUI's empty latents floor the pixel sizes to the VAE's compression
     * (EmptyLatentImage: width // 8); causal video VAEs keep the first frame alone:
     * (F - 1) / t + 1 latent frames. The model pads the latent to whole patches. */
    out->lat_h = height / p->vae_spatial;
    out->lat_w = width / p->vae_spatial;
    out->lat_t = p->vae_temporal > 1 ? (frames ? (uint64_t)(frames - 1) / p->vae_temporal + 1 : 1)
                                     : (frames ? frames : 1);
    out->img_tokens =
        cdiv(out->lat_t, p->patch_t) * cdiv(out->lat_h, p->patch_h) * cdiv(out->lat_w, p->patch_w);
    out->seq_tokens = out->img_tokens + (p->joint_text ? p->text_tokens : 0);
}

uint64_t vf__pipeline_denoiser_bytes(const struct vf_pipeline *p, const struct vf_quant *q,
                                     const char **why)
{
    *why = NULL;
    switch (q->kind) {
    case VF_QK_NATIVE:
        return vf_dtype_bytes(p->dtype, p->params);
    case VF_QK_PLAIN:
    case VF_QK_NF4:
    case VF_QK_FP8_BLOCK:
    case VF_QK_GGUF_FTYPE:
        /* F-DIF-01: every weight at the scheme's (base) type; GGUF files keep norms,
         * biases and other 1-D tensors at 16/32 bits and K_M/K_S mixes put some tensors
         * at a larger type: said in the estimate's assumptions */
        if (q->dtype == VF_DT_DEFAULT)
            return vf_dtype_bytes(p->dtype, p->params);
        return vf_dtype_bytes(q->dtype, p->params);
    case VF_QK_AWQ:
    case VF_QK_GPTQ:
        *why = "ComfyUI loads no AWQ/GPTQ diffusion checkpoints (use fp8, nf4 or a GGUF type)";
        return VF_UNKNOWN;
    }
    *why = "unknown weight storage";
    return VF_UNKNOWN;
}

uint64_t vf__pipeline_encoder_bytes(const struct vf_pipeline *p, bool low_bits,
                                    const struct vf_quant *te)
{
    uint64_t sum = 0;
    bool given = te && te->kind != VF_QK_NATIVE;
    for (size_t i = 0; i < p->n_enc; i++) {
        enum vf_dtype t = low_bits && p->enc[i].fp8_file ? VF_DT_FP8 : p->enc[i].dtype;
        uint64_t b = vf_dtype_bytes(t, p->enc[i].params);
        if (given) /* bits per parameter of the scheme, rounded up to bytes */
            b = vf__div_ceil(vf__sat_mul(p->enc[i].params, vf_quant_bits(te)), 8);
        sum = vf__sat_add(sum, b);
    }
    return sum;
}

bool vf__pipeline_is_bnb(const struct vf_quant *q)
{
    return q && (q->kind == VF_QK_NF4 || !strcmp(q->name, "bnb-int8"));
}

uint64_t vf__pipeline_encoder_bytes_hf(const struct vf_pipeline *p, const struct vf_quant *te)
{
    if (!vf__pipeline_is_bnb(te))
        return vf__pipeline_encoder_bytes(p, false, te);
    /* F-DIF-15: transformers' bitsandbytes quantizers (quantizers/quantizer_bnb_4bit.py,
     * quantizer_bnb_8bit.py) set use_keep_in_fp32_modules = True and add the model's
     * _keep_in_fp32_modules to modules_to_not_convert; modeling_utils.py from_pretrained then
     * keeps those modules in fp32 whatever the dtype ("torch_dtype == torch.float16 or
     * getattr(hf_quantizer, 'use_keep_in_fp32_modules', False)"). replace_with_bnb_linear
     * converts nn.Linear only: embeddings and norms stay at the 16-bit load dtype. */
    uint64_t sum = 0;
    for (size_t i = 0; i < p->n_enc; i++) {
        const struct vf_pipe_encoder *x = &p->enc[i];
        uint64_t lin = x->params - x->keep_fp32_params - x->nonlinear_params;
        uint64_t b = vf__div_ceil(vf__sat_mul(lin, vf_quant_bits(te)), 8);
        b = vf__sat_add(b, vf__sat_mul(x->keep_fp32_params, 4));
        b = vf__sat_add(b, vf__sat_mul(x->nonlinear_params, 2));
        sum = vf__sat_add(sum, b);
    }
    return sum;
}

uint64_t vf__pipeline_step_act(const struct vf_pipeline *p, uint64_t seq_tokens, uint64_t batch)
{
    return vf__sat_mul(vf__sat_mul(vf__sat_mul(seq_tokens, batch), p->act_widths),
                       vf__sat_mul(p->hidden, 2));
}

uint64_t vf__pipeline_decode_bytes(const struct vf_pipeline *p, uint64_t lat_t, uint64_t lat_h,
                                   uint64_t lat_w)
{
    uint64_t ds = vf_dtype_bytes(p->vae_dtype, 1);
    uint64_t v = vf__sat_mul(vf__sat_mul((uint64_t)p->decode_coef, lat_h), lat_w);
    v = vf__sat_mul(vf__sat_mul(v, 64), ds);
    return p->decode_per_frame ? vf__sat_mul(v, lat_t) : v;
}

uint64_t vf__pipeline_lora_bytes(const struct vf_pipeline *p, uint64_t rank)
{
    uint64_t per = vf__sat_mul(rank, 10 * (uint64_t)p->hidden + 2 * (uint64_t)p->ffn);
    return vf__sat_mul(vf__sat_mul(per, p->layers), 2);
}

enum vf_err vf__pipeline_resolve_opts(struct vf_arena *a, const struct vf_model *m,
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
    /* F-DIF-03: sizes are whole latent cells of whole patches; ComfyUI's Empty Latent nodes
     * floor the pixels to the VAE's cell (width // 8) and the model pads to its patch, so a
     * size off the stride runs as the multiple below */
    if (o->width % side || o->height % side) {
        uint32_t wd = o->width / side * side, ht = o->height / side * side;
        vf__assume(a, e,
                   "%ux%u is not a multiple of %u (%u px VAE cells x %u patch): it runs as "
                   "%ux%u, the multiple below",
                   o->width, o->height, side, p->vae_spatial, side / p->vae_spatial, wd, ht);
        o->width = wd;
        o->height = ht;
    }
    if (o->width > 2 * p->def_width || o->height > 2 * p->def_height ||
        (uint64_t)o->width * o->height > 4ULL * p->def_width * p->def_height)
        vf__assume(a, e,
                   "%ux%u is beyond what %s was trained for (native %ux%u): expect repeated "
                   "subjects; generate at the native size and upscale",
                   o->width, o->height, p->name, p->def_width, p->def_height);
    if (p->task == VF_TASK_VIDEO && o->frames > 1 && o->frames > 2 * p->def_frames)
        vf__assume(a, e, "%u frames is beyond the %u the model was trained on", o->frames,
                   p->def_frames);
    if (p->vae_temporal > 1 && (o->frames - 1) % p->vae_temporal)
        vf__assume(a, e,
                   "%u frames is not of the form %un+1 the VAE takes (%u, %u): ComfyUI's "
                   "latent holds (%u - 1) / %u + 1 = %u latent frames",
                   o->frames, p->vae_temporal,
                   (o->frames - 1) / p->vae_temporal * p->vae_temporal + 1,
                   ((o->frames - 1) / p->vae_temporal + 1) * p->vae_temporal + 1, o->frames,
                   p->vae_temporal, (o->frames - 1) / p->vae_temporal + 1);
    return VF_OK;
}

/* The checks that open an estimate and e's fields outside image/video (F-DIF-09, F-DIF-10):
 * see vf__pipeline_open. */
static enum vf_err pipeline_begin(const struct vf_model *m, const struct vf_workload *w,
                                  const struct vf_pipe_engine *pe, struct vf_estimate *e,
                                  struct vf_error *err)
{
    const struct vf_engine *eng = pe->engine;
    enum vf_dif_offload off = w->diffusion.offload;
    if (off != VF_DOFF_NONE && !(pe->offloads & (1u << off)))
        return vf__errf(err, VF_EINVAL, "--offload %s is not a mode of %s; it offers %s",
                        vf_dif_offload_name(off), eng->name, pe->offered);
    const struct vf_pipeline *p = m->pipeline;
    if (!p)
        return vf__errf(err, VF_EINVAL, "'%s' is not an image/video pipeline", m->id);
    if (w->task != VF_TASK_IMAGE && w->task != VF_TASK_VIDEO)
        return vf__errf(err, VF_EINVAL, "engine %s estimates --task image or video", eng->name);
    if (w->task == VF_TASK_VIDEO && p->task == VF_TASK_IMAGE)
        return vf__errf(err, VF_EINVAL,
                        "'%s' generates images: --task video needs a video pipeline "
                        "(wan2.2-t2v-a14b, wan2.1-t2v-14b, ...)",
                        m->id);
    uint32_t n = w->gpus ? w->gpus : 1;
    const char *why = NULL;
    if (!eng->can_split(m, w, n, &why))
        return vf__errf(err, VF_EUNSUPPORTED, "cannot split '%s' over %u GPUs: %s", m->id, n,
                        why ? why : "");
    /* F-DIF-16: slicing and the tiny autoencoder are diffusers' calls; TAESD decodes images */
    if (w->diffusion.sliced_vae && !pe->vae_modes)
        return vf__errf(err, VF_EINVAL,
                        "--vae-decode sliced is diffusers' vae.enable_slicing(); %s decodes one "
                        "sample at a time already (F-DIF-07): use full or tiled",
                        eng->name);
    if (w->diffusion.tiny_vae && !pe->vae_modes)
        return vf__errf(err, VF_EINVAL,
                        "--vae-decode tiny is diffusers' AutoencoderTiny; %s's TAESD files are "
                        "for previews here (not modelled as the decoder): use full or tiled",
                        eng->name);
    if (w->diffusion.tiny_vae && p->vae_temporal > 1)
        return vf__errf(err, VF_EUNSUPPORTED,
                        "--vae-decode tiny: TAESD decodes images; '%s' has a video VAE (its "
                        "tiny counterpart, TAEHV, is not modelled)",
                        m->id);
    /* F-DIF-18: diffusers' AttnProcessor is the UNet's; ComfyUI has its own fallbacks */
    if (w->diffusion.eager_attn && !pe->eager_attn)
        return vf__errf(err, VF_EINVAL,
                        "--attention eager is diffusers' AttnProcessor; %s without PyTorch "
                        "attention runs split or sub-quadratic attention, chunked to the free "
                        "memory (not modelled): use sdpa",
                        eng->name);
    if (w->diffusion.eager_attn && strcmp(p->arch, "unet"))
        return vf__errf(err, VF_EINVAL,
                        "--attention eager: '%s' runs diffusers' SDPA-only processors (they "
                        "raise ImportError without PyTorch 2's scaled_dot_product_attention); "
                        "the UNet pipelines (sdxl) have AttnProcessor",
                        m->id);
    /* F-DIF-12: block swap moves whole blocks of the denoiser */
    if (off == VF_DOFF_BLOCK_SWAP && w->diffusion.block_swap > p->layers)
        return vf__errf(err, VF_EINVAL,
                        "--offload block-swap %u: '%s' has %u blocks (at most %u to swap)",
                        w->diffusion.block_swap, m->id, p->layers, p->layers);
    e->model = *m;
    e->engine = eng->name;
    e->task = w->task;
    e->gpus = 1;
    e->users = 1;
    e->ctx_tokens = 0;
    e->kv_dtype = VF_DT_DEFAULT;
    e->kv_bytes_per_token = VF_UNKNOWN;
    e->host_bytes = 0;
    return VF_OK;
}

enum vf_err vf__pipeline_open(struct vf_arena *a, const struct vf_model *m,
                              const struct vf_workload *w, const struct vf_pipe_engine *pe,
                              const char *intro, struct vf_estimate *e, struct vf_pipe_run *r,
                              struct vf_error *err)
{
    enum vf_err rc = pipeline_begin(m, w, pe, e, err);
    if (rc)
        return rc;
    const struct vf_pipeline *p = m->pipeline;
    vf__assume(a, e, "%s", intro);
    if ((rc = vf__pipeline_resolve_opts(a, m, w, e, &r->o, err)))
        return rc;
    e->diffusion = r->o;

    /* F-DIF-01: the denoiser at --weights (else the checkpoint's storage), every expert */
    e->weights = w->weights.kind == VF_QK_NATIVE ? m->native : w->weights;
    const char *why = NULL;
    r->expert = vf__pipeline_denoiser_bytes(p, &e->weights, &why);
    if (r->expert == VF_UNKNOWN)
        return vf__errf(err, why ? VF_EUNSUPPORTED : VF_ERANGE, "--weights %s for '%s': %s",
                        e->weights.name, m->id, why ? why : "weights overflow 64 bits");
    e->weights_bytes = vf__sat_mul(r->expert, p->experts);

    /* F-DIF-01: the VAE at --vae-dtype when given */
    r->pv = *p;
    if (r->o.vae_dtype != VF_DT_DEFAULT)
        r->pv.vae_dtype = r->o.vae_dtype;
    r->vae = vf_dtype_bytes(r->pv.vae_dtype, p->vae_params);
    if (r->o.tiny_vae) /* F-DIF-16: AutoencoderTiny at the pipeline's 16-bit dtype */
        r->vae = vf__sat_mul(vf__pipeline_taesd_params(p), 2);

    /* F-DIF-03: latent and tokens; F-DIF-07: the tile */
    vf__pipeline_geom(p, r->o.width, r->o.height, r->o.frames, &r->g);
    e->diffusion_tokens = r->g.img_tokens;
    r->cfg = r->o.cfg == VF_CFG_ON || (r->o.cfg == VF_CFG_DEFAULT && p->cfg);
    r->tile_px = r->o.vae_tile ? r->o.vae_tile : VF_PIPE_TILE_PX;
    r->tile = r->tile_px / p->vae_spatial ? r->tile_px / p->vae_spatial : 1;
    return VF_OK;
}

static uint64_t min2(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

uint64_t vf__pipeline_decode_whole(const struct vf_pipe_run *r)
{
    return vf__pipeline_decode_bytes(&r->pv, r->g.lat_t, r->g.lat_h, r->g.lat_w);
}

uint64_t vf__pipeline_decode_tile(const struct vf_pipe_run *r, uint64_t tile_t)
{
    return vf__pipeline_decode_bytes(&r->pv, tile_t ? min2(r->g.lat_t, tile_t) : r->g.lat_t,
                                     min2(r->g.lat_h, r->tile), min2(r->g.lat_w, r->tile));
}

/* F-DIF-16: TAESD's layers: 3x3 convolutions of 64 channels (36,864 weights + 64 biases), a
 * Block = three of them with biases (110,784). */
#define TAE_CONV  (9ULL * 64 * 64)
#define TAE_BLOCK (3 * (TAE_CONV + 64))
#define TAE_CH    64ULL

uint64_t vf__pipeline_taesd_params(const struct vf_pipeline *p)
{
    uint64_t lat = p->vae_latent_channels;
    /* decoder: conv(lat, 64) + 10 Blocks + 3 bias-free convs after the upsamplers +
     * conv(64, 3); encoder: conv(3, 64) + Block + 3 x (bias-free stride-2 conv + 3 Blocks) +
     * conv(64, lat) */
    uint64_t dec = 9 * lat * TAE_CH + TAE_CH + 10 * TAE_BLOCK + 3 * TAE_CONV + 9 * TAE_CH * 3 + 3;
    uint64_t enc = 9 * 3 * TAE_CH + TAE_CH + TAE_BLOCK + 3 * (TAE_CONV + 3 * TAE_BLOCK) +
                   9 * TAE_CH * lat + lat;
    return dec + enc;
}

uint64_t vf__pipeline_taesd_decode(const struct vf_pipe_run *r)
{
    uint64_t px = vf__sat_mul(r->g.lat_h * r->pv.vae_spatial, r->g.lat_w * r->pv.vae_spatial);
    return vf__sat_mul(px, 3 * TAE_CH * 2);
}

bool vf__pipeline_vae_upcasts(const struct vf_pipe_run *r)
{
    return r->pv.vae_upcast && r->pv.dtype == VF_DT_F16 && r->o.vae_dtype == VF_DT_DEFAULT &&
           !r->o.tiny_vae;
}

uint64_t vf__pipeline_vae_upcast_bytes(const struct vf_pipeline *p)
{
    uint64_t c = p->vae_ch[VF_PIPE_VAE_LEVELS - 1], lat = p->vae_latent_channels;
    if (!c)
        return 0;
    /* kept at fp16 (diffusers vae.py Decoder): the mid-block (UNetMidBlock2D: two
     * ResnetBlock2D(c, c), 18c^2 + 6c each with their GroupNorms, and one Attention with
     * GroupNorm and q, k, v, out, 4c^2 + 6c), conv_in (3x3, lat -> c) and post_quant_conv
     * (1x1, lat -> lat) */
    uint64_t kept = 40 * c * c + 18 * c + 9 * lat * c + c + lat * lat + lat;
    return p->vae_params > kept ? vf__sat_mul(p->vae_params - kept, 2) : 0;
}

uint64_t vf__pipeline_vae_floor(const struct vf_pipe_run *r, enum vf_dtype dt)
{
    const uint32_t *ch = r->pv.vae_ch;
    if (!ch[0])
        return 0;
    uint64_t c0 = ch[0], c1 = ch[1], c2 = ch[2], b = vf_dtype_bytes(dt, 1);
    /* the last up block (c1 -> c0 at the output size), its first ResnetBlock2D: the input
     * (held by Decoder.forward too), norm1 and SiLU at once (3 c1); at its end the input, conv2,
     * the shortcut, the sum and the sum / output_scale_factor (c1 + 4 c0) */
    uint64_t res = c1 + 4 * c0 > 3 * c1 ? c1 + 4 * c0 : 3 * c1;
    uint64_t per_px = res * b;
    /* the Upsample2D before it: the block's input (c2) and the upsampler's input (c1) at a
     * quarter of the pixels, the interpolated c1 and the conv's c1; in bf16 (upsampling.py:
     * "upsample_nearest2d_out_frame op does not support bfloat16") the interpolation runs in
     * fp32 and is cast back while the fp32 copy lives: (c2 + c1) / 4 x 2 + c1 x (4 + 2) */
    uint64_t up = dt == VF_DT_BF16 ? (c2 + c1) / 2 + 6 * c1 : ((c2 + c1) / 4 + 2 * c1) * b;
    if (up > per_px)
        per_px = up;
    uint64_t px = vf__sat_mul(r->g.lat_h * r->pv.vae_spatial, r->g.lat_w * r->pv.vae_spatial);
    return vf__sat_mul(px, per_px);
}

uint64_t vf__pipeline_eager_scores(const struct vf_pipeline *p, uint64_t tokens, uint64_t samples)
{
    return vf__sat_mul(vf__sat_mul(4 * (uint64_t)p->heads, samples), vf__sat_mul(tokens, tokens));
}

bool vf__pipeline_one_gpu(uint32_t n, const char *reason, const char **why)
{
    *why = n <= 1 ? NULL : reason;
    return n <= 1;
}

void vf__pipeline_host(struct vf_estimate *e, const char *name, uint64_t bytes, const char *note)
{
    struct vf_component *c = vf__add_component(e, name, bytes, NULL, note);
    if (c)
        c->device = VF_DEV_HOST;
}
