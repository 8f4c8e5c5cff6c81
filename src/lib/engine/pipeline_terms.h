/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pipeline_terms.h - the terms of an image/video pipeline every image/video engine uses
 * (ComfyUI, diffusers, denoiser fine-tuning, and explain's fixes): geometry, component bytes,
 * the workload's sizes resolved, and the opening the two inference engines share.
 */
#ifndef VRAMFIT_PIPELINE_TERMS_H
#define VRAMFIT_PIPELINE_TERMS_H

#include "model/pipeline.h"

/* The latent and token geometry of one sample (F-DIF-03). */
struct vf_pipe_geom {
    uint64_t lat_t, lat_h, lat_w; /* latent frames, rows, columns */
    uint64_t img_tokens;          /* image/video tokens of one sample */
    uint64_t seq_tokens;          /* the self-attention sequence: + text tokens when joint */
};

/* F-DIF-03: the latent and tokens of a width x height x frames sample. Inputs must be
 * validated (>= the VAE's compression, <= the VF_PIPE_MAX_* limits); never fails then. */
void vf__pipeline_geom(const struct vf_pipeline *p, uint32_t width, uint32_t height,
                       uint32_t frames, struct vf_pipe_geom *out);

/* F-DIF-01: bytes of one expert of the denoiser stored as q (NATIVE: the pipeline's own
 * dtype; PLAIN and NF4: q.dtype; GGUF ftypes: the ftype's base type). VF_UNKNOWN on
 * overflow; *why names the reason for a scheme ComfyUI does not load (then VF_UNKNOWN). */
uint64_t vf__pipeline_denoiser_bytes(const struct vf_pipeline *p, const struct vf_quant *q,
                                     const char **why);

/* F-DIF-02: bytes of all text encoders: as `te` stores them when given (kind not NATIVE);
 * else fp8 for those with an fp8 file when `low_bits` (the denoiser is below 16 bits), else
 * their default dtype. */
uint64_t vf__pipeline_encoder_bytes(const struct vf_pipeline *p, bool low_bits,
                                    const struct vf_quant *te);

/* F-DIF-15: true for the schemes bitsandbytes stores (nf4, bnb-int8 = LLM.int8). */
bool vf__pipeline_is_bnb(const struct vf_quant *q);

/* F-DIF-15: bytes of all text encoders as transformers loads them for a diffusers pipeline
 * (from_pretrained with quantization_config): under a bitsandbytes scheme only nn.Linear
 * weights are quantized, the modules of _keep_in_fp32_modules are left out and kept in fp32,
 * the rest (embeddings, norms) stays 16-bit; any other `te` as vf__pipeline_encoder_bytes
 * (low_bits false). */
uint64_t vf__pipeline_encoder_bytes_hf(const struct vf_pipeline *p, const struct vf_quant *te);

/* F-DIF-04: one denoising step's activations from the block structure: act_widths
 * hidden-wide 16-bit tensors per token of seq_tokens x batch samples. */
uint64_t vf__pipeline_step_act(const struct vf_pipeline *p, uint64_t seq_tokens, uint64_t batch);

/* F-DIF-07: ComfyUI's decode estimate (sd.py memory_used_decode) for a latent of lat_t x
 * lat_h x lat_w: coef x lat_h x lat_w x 64 (x lat_t for 3-D-conv VAEs) x dtype bytes. */
uint64_t vf__pipeline_decode_bytes(const struct vf_pipeline *p, uint64_t lat_t, uint64_t lat_h,
                                   uint64_t lat_w);

/* F-DIF-11: bytes of one LoRA file of rank r on the denoiser's attention q, k, v, o and MLP
 * up and down of every block, bf16: r (10h + 2 ffn) x layers x 2. */
uint64_t vf__pipeline_lora_bytes(const struct vf_pipeline *p, uint64_t rank);

/* F-DIF-03: the width, height, frames and batch of w with the pipeline's defaults for 0,
 * checked against the limits; sizes off the VAE-cell x patch stride are floored as ComfyUI
 * does and said in e's assumptions, as are sizes beyond the native ones. */
enum vf_err vf__pipeline_resolve_opts(struct vf_arena *a, const struct vf_model *m,
                                      const struct vf_workload *w, struct vf_estimate *e,
                                      struct vf_diffusion_opts *o, struct vf_error *err);

/* F-DIF-07: the VAE's default tile, 512 px: ComfyUI's VAEDecodeTiled tile_size (and the
 * OOM fallback of VAE.decode: 64 latent cells on an 8x VAE) and diffusers'
 * vae.enable_tiling() tile_sample_min_size (AutoencoderKL). */
#define VF_PIPE_TILE_PX 512

/* How an image/video inference engine opens its estimate (vf__pipeline_open). */
struct vf_pipe_engine {
    const struct vf_engine *engine;
    unsigned offloads;   /* the offload modes it runs: bits 1u << enum vf_dif_offload */
    const char *offered; /* those modes named, for the message refusing another one */
    bool vae_modes;      /* it takes --vae-decode sliced and tiny (diffusers, F-DIF-16) */
    bool eager_attn;     /* it takes --attention eager (diffusers' AttnProcessor, F-DIF-18) */
};

/* What an image/video inference estimate knows once opened: the terms both engines start
 * from. Every byte count saturates at VF_UNKNOWN. It lives on the engine's stack: no note of e
 * may point into it (e->diffusion is the lasting copy of o). */
struct vf_pipe_run {
    struct vf_diffusion_opts o; /* the workload's sizes resolved (F-DIF-03, F-DIF-10) */
    struct vf_pipeline pv;      /* the pipeline with the VAE at --vae-dtype */
    struct vf_pipe_geom g;      /* latent and tokens of one sample (F-DIF-03) */
    uint64_t expert;            /* one expert of the denoiser at e->weights (F-DIF-01) */
    uint64_t vae;               /* the VAE's weights at pv.vae_dtype (F-DIF-01) */
    uint64_t tile_px;           /* the VAE tile side: --tile, else VF_PIPE_TILE_PX (F-DIF-07) */
    uint64_t tile;              /* the same in latent cells, at least 1 */
    bool cfg;                   /* classifier-free guidance: --cfg, else the pipeline's */
};

/* The opening every image/video inference engine shares (F-DIF-09, F-DIF-10, F-DIF-01,
 * F-DIF-03): checks that m is a pipeline able to do w's image or video task on the GPUs the
 * engine can split over, that w's offload mode is one of pe's (block swap at most the
 * denoiser's blocks); fills e's model, engine, task and the fields an image/video estimate does
 * not use; states `intro` (the engine's first assumption) and the workload's sizes; sets
 * e->diffusion, e->weights (--weights, else the checkpoint's), e->weights_bytes (every expert),
 * e->diffusion_tokens and *r. Errors: VF_EINVAL, VF_EUNSUPPORTED, VF_ERANGE. */
enum vf_err vf__pipeline_open(struct vf_arena *a, const struct vf_model *m,
                              const struct vf_workload *w, const struct vf_pipe_engine *pe,
                              const char *intro, struct vf_estimate *e, struct vf_pipe_run *r,
                              struct vf_error *err);

/* F-DIF-07: the whole VAE decode of one sample of r, or one tile of it (r->tile cells a side;
 * the frames as they are, or at most `tile_t` latent frames when tile_t is not 0). */
uint64_t vf__pipeline_decode_whole(const struct vf_pipe_run *r);
uint64_t vf__pipeline_decode_tile(const struct vf_pipe_run *r, uint64_t tile_t);

/* F-DIF-16: parameters of the tiny autoencoder (TAESD: madebyollin/taesd's taesd.py, diffusers
 * AutoencoderTiny: 64 channels, decoder blocks (3, 3, 3, 1), encoder blocks (1, 3, 3, 3)) for
 * the pipeline's latent channels: encoder and decoder, as AutoencoderTiny loads both. */
uint64_t vf__pipeline_taesd_params(const struct vf_pipeline *p);

/* F-DIF-16: the tiny autoencoder's decode of one sample of r: at the output resolution a
 * Block(64, 64) holds its input, a conv output and its ReLU: 3 x 64 x H x W x 2 B. */
uint64_t vf__pipeline_taesd_decode(const struct vf_pipe_run *r);

/* F-DIF-17: true when a diffusers pipeline upcasts its VAE to fp32 for the decode: the pipeline
 * honours force_upcast (StableDiffusionXLPipeline: needs_upcasting = vae.dtype == float16 and
 * vae.config.force_upcast), the pipeline runs in fp16 and no --vae-dtype was given. */
bool vf__pipeline_vae_upcasts(const struct vf_pipe_run *r);

/* F-DIF-17: the bytes the VAE's weights gain upcast (diffusers' upcast_vae: the whole VAE to
 * fp32, then post_quant_conv, decoder.conv_in and decoder.mid_block back to fp16 when the
 * mid-block's processor is SDPA): 2 B for every other parameter. 0 without decoder_channels. */
uint64_t vf__pipeline_vae_upcast_bytes(const struct vf_pipeline *p);

/* F-DIF-17: the tensors alive at once at the peak of an AutoencoderKL decoder (diffusers
 * models/autoencoders/vae.py Decoder) for one sample of r, its up blocks at `dt` (bf16 takes
 * Upsample2D's fp32 detour): the larger of the last up block's first resnet and the upsampler
 * before it, per output pixel. 0 without decoder_channels (the video VAEs). */
uint64_t vf__pipeline_vae_floor(const struct vf_pipe_run *r, enum vf_dtype dt);

/* F-DIF-18: the attention scores diffusers' AttnProcessor (no SDPA) holds at once at the
 * denoiser's first attention level (hidden / head_dim heads over `tokens`): baddbmm's empty
 * input and the scores, then the scores and the softmax, 2 x samples x heads x tokens^2 x 2 B. */
uint64_t vf__pipeline_eager_scores(const struct vf_pipeline *p, uint64_t tokens, uint64_t samples);

/* F-DIF-09: the split rule of an engine that runs a pipeline on one GPU: true for n <= 1 (*why
 * NULL), else false with *why = reason. */
bool vf__pipeline_one_gpu(uint32_t n, const char *reason, const char **why);

/* Adds a component of `bytes` the engine keeps in host RAM (F-DIF-12, F-DIF-14). */
void vf__pipeline_host(struct vf_estimate *e, const char *name, uint64_t bytes, const char *note);

#endif /* VRAMFIT_PIPELINE_TERMS_H */
