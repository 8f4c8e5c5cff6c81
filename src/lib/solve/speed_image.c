/* SPDX-License-Identifier: Apache-2.0 */
/* How long one image or one clip takes on a card (issue 24, docs/FORMULAS.md F-SPD-10..13):
 * the denoiser's FLOPs per step from its parameters and the latent's tokens, the text
 * encoders, the VAE decode, and what an offload mode moves over PCIe per step. */
#include "internal.h"
#include "engine/pipeline_terms.h"

#include <string.h>

/* F-SPD-14: the share of the card's dense 16-bit tensor rate the denoiser's linear layers,
 * text encoders and VAE reach, one for every card and kind: calibrated on the public xDiT and
 * diffusers rows by bench/accuracy-speed-kinds.py (rows and errors: bench/README.md). */
#ifndef ETA_LINEAR
#define ETA_LINEAR 0.53
#endif
/* F-SPD-14: attention runs in FlashAttention-2's kernels, measured apart (Dao, "FlashAttention-2",
 * 2023, section 4.1): 73 % of the A100's peak at head_dim 128 forward, and on H100 at most 335
 * TFLOPS, as its mma.sync kernels do not use Hopper's wgmma instructions. */
#define ETA_ATTN_FA2         0.73
#define FA2_HOPPER_CAP_TFLOP 335.0
/* F-SPD-11: FLOPs of the AutoencoderKL decoder per output pixel, from its layers
 * (diffusers autoencoder_kl.py Decoder, block_out_channels 128 256 512 512, 3 ResNet blocks
 * of two 3x3 convolutions per level, an upsampling conv between levels; 2 FLOPs per
 * multiply-add): latent level 47.3 M / 64 + 1/4 level 33.0 M / 16 + 1/2 level 13.2 M / 4 +
 * full level 3.3 M = 9.4 M. Video VAEs (HunyuanVideo, Wan) use 3x3x3 kernels: x 3. */
#define VAE_FLOPS_PER_PIXEL 9.4e6
#define VAE_3D_FACTOR       3.0
/* F-SPD-11: ComfyUI's VAEDecodeTiled overlaps its tiles by 64 pixels (nodes.py default
 * overlap 64): each tile of t pixels yields (t - 64)^2 new ones. */
#define VAE_TILE_OVERLAP 64.0
/* F-SPD-18: the memory-bound work between a DiT block's matmuls, in reads and writes of one
 * tokens x hidden 16-bit tensor per layer and pass, counted from diffusers' Flux blocks
 * (transformer_flux.py, 0.3x): adaLN LayerNorm 2 + modulation 4 + GELU on 4 x hidden 8 + q and
 * k RMSNorm in fp32 2 x 18 + RoPE in fp32 2 x 16 + attention layout copies 8 + concatenation 10
 * + gate 2 + residual 3 = 105 in eager PyTorch. torch.compile (Inductor) fuses each chain
 * between two matmuls into one kernel: one read and one write of each input, about 20. */
#define ELEM_PASSES_EAGER    105.0
#define ELEM_PASSES_COMPILED 20.0
/* F-SPD-18: eager PyTorch launches every kernel from Python, so a step takes at least the host's
 * launch time: per layer and step, calibrated on xDiT's eager Flux rows on 2 and 4 H100s (4.38
 * and 4.24 s for 28 steps of 57 layers: 2.74 and 2.66 ms, where a second pair of cards no longer
 * helped; bench/accuracy-speed-kinds.py refits it leave-one-GPU-out). torch.compile's kernels:
 * no floor modelled (xDiT's compiled rows kept scaling to 4 cards). */
#ifndef LAUNCH_S_PER_LAYER
#define LAUNCH_S_PER_LAYER 2.7e-3
#endif

/* F-SPD-10: FLOPs of one denoiser pass over one sample: 2 x params x tokens through the
 * linear layers (the text tokens too when they join the attention), and in *attn the
 * self-attention 4 x layers x seq^2 x hidden (QK^T and AV) + cross-attention 4 x layers x
 * img x text x hidden where the text does not join. Returns the linear FLOPs. */
double vf__denoiser_flops(const struct vf_pipeline *p, const struct vf_pipe_geom *g, double *attn)
{
    double seq = (double)g->seq_tokens, img = (double)g->img_tokens;
    *attn = 4.0 * p->layers * seq * seq * p->hidden;
    if (!p->joint_text)
        *attn += 4.0 * p->layers * img * p->text_tokens * p->hidden;
    return 2.0 * (double)p->params * seq;
}

/* F-SPD-14: the attention kernels' FLOP/s on g. */
static double attn_rate(const struct vf_gpu_spec *g, double rate)
{
    double r = rate * 1e12 * ETA_ATTN_FA2;
    if (g->arch && !strcmp(g->arch, "Hopper") && r > FA2_HOPPER_CAP_TFLOP * 1e12)
        r = FA2_HOPPER_CAP_TFLOP * 1e12;
    return r;
}

/* F-SPD-11: FLOPs of the VAE decode of one sample (pixels x frames), with tiling. */
static double vae_flops(const struct vf_pipeline *p, const struct vf_diffusion_opts *o,
                        double tile_px)
{
    double px = (double)o->width * o->height * (o->frames ? o->frames : 1);
    double f = px * VAE_FLOPS_PER_PIXEL * (p->vae_temporal > 1 ? VAE_3D_FACTOR : 1.0);
    if (o->tiled_vae && tile_px > 2 * VAE_TILE_OVERLAP) {
        double r = tile_px / (tile_px - VAE_TILE_OVERLAP);
        f *= r * r;
    }
    return f;
}

/* The denoiser's bytes that live in host RAM (F-DIF-12): streamed or swapped per pass. */
static double host_denoiser(const struct vf_estimate *e, const struct vf_pipeline *p)
{
    double b = 0;
    for (size_t i = 0; i < e->n_components; i++)
        if (e->components[i].device == VF_DEV_HOST && !strcmp(e->components[i].name, p->component))
            b += (double)e->components[i].bytes;
    return b;
}

/* F-SPD-12: seconds per sample that an offload mode adds, moving bytes at link bytes/s:
 * --lowvram and sequential offload stream the host part every pass, waiting for it (ComfyUI
 * casts each layer's weights to the GPU before its matmul; accelerate's hooks copy each
 * submodule); block swap moves its blocks in and out every pass (WanVideoWrapper, which
 * runs the cond and uncond passes apart); model offload loads each model once per run. */
static double offload_seconds(const struct vf_estimate *e, const struct vf_pipeline *p,
                              double passes, double steps, double link, double *weights)
{
    const struct vf_diffusion_opts *o = &e->diffusion;
    double host = host_denoiser(e, p);
    /* experts used in turn (Wan 2.2 A14B): the idle one waits in host RAM and is loaded
     * once per run; only the rest moves every pass */
    double experts = p->experts > 1 ? p->experts : 1;
    double idle = (experts - 1) * *weights / experts;
    double once = host > idle ? idle / link : 0;
    if (host > idle)
        host -= idle;
    switch (o->offload) {
    case VF_DOFF_LOWVRAM:
    case VF_DOFF_NOVRAM:
        return once + steps * host / link;
    case VF_DOFF_BLOCK_SWAP:
        return once + steps * passes * 2.0 * host / link;
    case VF_DOFF_SEQUENTIAL:
        return steps * passes * *weights / link;
    case VF_DOFF_MODEL_CPU:
        return *weights / link;
    default:
        return 0;
    }
}

void vf__speed_diffusion(const struct vf_gpu_spec *g, const struct vf_model *m,
                         const struct vf_estimate *e, const struct vf_workload *w, uint32_t n,
                         struct vf_job_speed *out)
{
    memset(out, 0, sizeof *out);
    const struct vf_pipeline *p = m->pipeline;
    /* the 16-bit rate at the clock the card holds under its power limit (F-SPD-07) */
    double rate = (g->tflops_bf16 > 0 ? g->tflops_bf16 : g->tflops_fp16 / 2.0) * vf__power_share(g);
    if (!p || rate <= 0) {
        out->why = !p ? "not a pipeline" : "the card's 16-bit tensor throughput is unknown";
        return;
    }
    const struct vf_diffusion_opts *o = &e->diffusion;
    struct vf_pipe_geom geo;
    vf__pipeline_geom(p, o->width, o->height, o->frames, &geo);
    bool video = e->task == VF_TASK_VIDEO;
    double cards = w->diffusion.sp > 1 ? w->diffusion.sp : (n ? n : 1);
    double batch = o->batch ? o->batch : 1;
    double steps = w->diffusion.steps ? w->diffusion.steps : p->def_steps;
    bool cfg = o->cfg == VF_CFG_ON || (o->cfg == VF_CFG_DEFAULT && p->cfg);
    double passes = cfg ? 2.0 : 1.0;
    out->eta = ETA_LINEAR;
    out->prec = "bf16";
    double flops = rate * 1e12 * out->eta;
    /* the denoiser's steps, split over the cards by sequence parallelism (xDiT Ulysses) */
    double attn;
    double step = passes * batch * vf__denoiser_flops(p, &geo, &attn);
    out->attn_s = steps * passes * batch * attn / cards / attn_rate(g, rate);
    double te = 0;
    for (size_t i = 0; i < p->n_enc; i++) /* the prompt (and the negative one with CFG) */
        te += 2.0 * (double)p->enc[i].params * p->text_tokens * passes * batch;
    double tile = o->vae_tile ? o->vae_tile : VF_PIPE_TILE_PX;
    double vae = batch * vae_flops(p, o, tile);
    out->encdec_s = (te + vae) / flops;
    out->compute_s = steps * step / cards / flops + out->encdec_s;
    /* F-SPD-13: Ulysses moves q, k, v and the output all-to-all in every layer: 4 x seq x
     * hidden x 2 B x (n - 1) / n^2 per card and pass */
    double link = (g->nvlink_gbps > 0 ? g->nvlink_gbps / 2.0 : vf__pcie_gbps(g)) * 1e9;
    if (cards > 1)
        out->comm_s = steps * passes * batch * p->layers * 4.0 * (double)geo.seq_tokens *
                      p->hidden * 2.0 * (cards - 1) / (cards * cards) / link;
    /* F-SPD-18: the elementwise kernels of each card's share of the tokens, and the floor of
     * eager PyTorch's kernel launches */
    bool compiled = (w->train.given & VF_TK_COMPILE) && w->train.compile;
    if (g->bandwidth_gbps > 0)
        out->elem_s = steps * passes * batch * p->layers * (double)geo.seq_tokens / cards *
                      p->hidden * 2.0 * (compiled ? ELEM_PASSES_COMPILED : ELEM_PASSES_EAGER) /
                      (g->bandwidth_gbps * 1e9);
    out->launch_s = compiled ? 0 : steps * p->layers * LAUNCH_S_PER_LAYER;
    double weights = (double)e->weights_bytes;
    out->offload_s =
        offload_seconds(e, p, passes, steps, vf__pcie_gbps(g) * 1e9 * VF_PCIE_TLP, &weights);
    double gpu = out->compute_s - out->encdec_s + out->attn_s + out->comm_s + out->elem_s;
    double base = (gpu > out->launch_s ? gpu : out->launch_s) + out->encdec_s;
    out->seconds = (base + out->offload_s) / batch;
    out->compute_s /= batch;
    out->encdec_s /= batch;
    out->attn_s /= batch;
    out->comm_s /= batch;
    out->elem_s /= batch;
    out->launch_s /= batch;
    out->offload_s /= batch;
    out->slowdown = base > 0 ? (base + out->offload_s * batch) / base : 1.0;
    out->lo = out->seconds * VF_SPEED_RANGE_LO;
    out->hi = out->seconds * VF_SPEED_RANGE_HI;
    out->result = video ? "clip" : "image";
    out->known = true;
}
