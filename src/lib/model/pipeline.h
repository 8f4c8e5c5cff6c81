/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pipeline.h - the image/video generation pipeline as libvramfit holds it: the denoiser
 * (transformer or UNet, with the dimensions the activation formulas need), the text
 * encoders, the VAE and the defaults of a run. Private to pipeline.c (the reader of
 * data/pipelines/NAME.json) and est_diffusion.c (the ComfyUI engine); formulas F-DIF-nn
 * in docs/FORMULAS.md ("Diffusion").
 */
#ifndef VRAMFIT_PIPELINE_H
#define VRAMFIT_PIPELINE_H

#include "internal.h"

/* ------------------------------------------------------------ input limits */

#define VF_PIPE_MAX_PARAMS   10000000000000ULL /* 10^13 parameters in one component */
#define VF_PIPE_MAX_EXPERTS  16                /* denoisers used in turn (Wan 2.2 A14B: 2) */
#define VF_PIPE_MAX_ENCODERS 4                 /* text encoders of one pipeline */
#define VF_PIPE_MAX_SOURCES  32
#define VF_PIPE_MAX_TEXT     1024    /* characters of one name or source string */
#define VF_PIPE_MAX_PATCH    16      /* patch size along one axis */
#define VF_PIPE_MAX_COMPRESS 64      /* VAE compression along one axis */
#define VF_PIPE_MAX_TOKENS   65536   /* text tokens */
#define VF_PIPE_MAX_WIDTHS   1024    /* act_widths */
#define VF_PIPE_MAX_FACTOR   1000    /* ComfyUI memory_usage_factor */
#define VF_PIPE_MAX_COEF     1000000 /* VAE decode coefficient */
#define VF_PIPE_MAX_SIDE     16384   /* pixels along one side */
#define VF_PIPE_MAX_FRAMES   4097    /* video frames */
#define VF_PIPE_MAX_BATCH    4096    /* images/videos at once */
#define VF_PIPE_MAX_STEPS    10000
#define VF_PIPE_VAE_LEVELS   4    /* decoder_channels: an AutoencoderKL's block_out_channels */
#define VF_PIPE_MAX_VAE_CH   4096 /* channels of one VAE level */

/* One text encoder (T5-XXL, CLIP-L, UMT5-XXL, ...). */
struct vf_pipe_encoder {
    const char *name;
    uint64_t params;
    enum vf_dtype dtype; /* the default file's storage (fp16 in ComfyUI's workflows) */
    bool fp8_file;       /* an fp8 file is published for it (t5xxl_fp8_e4m3fn, ...) */
    /* F-DIF-15, optional (0 when absent): parameters of the modules transformers'
     * _keep_in_fp32_modules names (T5/UMT5: every layer's FFN `wo`), and those outside
     * nn.Linear (embeddings, norms, relative position biases), which bitsandbytes leaves
     * unquantized */
    uint64_t keep_fp32_params;
    uint64_t nonlinear_params;
};

struct vf_pipeline {
    const char *name;
    enum vf_task task; /* VF_TASK_IMAGE or VF_TASK_VIDEO */
    uint32_t def_width, def_height, def_frames, def_steps;

    /* the denoiser */
    const char *component; /* "transformer" or "unet" (DESIGN section 8 names) */
    const char *arch;      /* "flux", "wan", "mmdit", "unet" */
    uint64_t params;       /* of one expert */
    uint32_t experts;      /* denoisers used one after the other (1 for most) */
    enum vf_dtype dtype;   /* BF16 or F16: the checkpoint's storage and compute type */
    uint32_t hidden, heads, head_dim, layers, ffn;
    uint32_t patch_t, patch_h, patch_w;
    uint32_t latent_channels;
    bool joint_text;      /* text tokens join the image tokens in self-attention */
    uint32_t act_widths;  /* hidden-wide tensors alive per token at a step's peak (F-DIF-04) */
    bool cfg;             /* classifier-free guidance: a cond and an uncond pass per step */
    uint64_t factor_ppm;  /* ComfyUI's memory_usage_factor in millionths (F-DIF-05) */
    uint32_t text_tokens; /* sequence length of the text encoder's output */

    struct vf_pipe_encoder enc[VF_PIPE_MAX_ENCODERS];
    size_t n_enc;

    /* the VAE */
    uint64_t vae_params;
    enum vf_dtype vae_dtype;
    uint32_t vae_spatial, vae_temporal; /* pixels (frames) per latent cell */
    uint32_t vae_latent_channels;
    uint32_t decode_coef;  /* ComfyUI's memory_used_decode coefficient (F-DIF-07) */
    bool decode_per_frame; /* the decode estimate scales with latent frames (3-D conv VAEs) */
    /* F-DIF-17, optional: a 2-D AutoencoderKL's block_out_channels (0s when absent: the video
     * VAEs), and whether the diffusers pipeline upcasts an fp16 VAE for the decode (its
     * force_upcast, honoured by StableDiffusionXLPipeline) */
    uint32_t vae_ch[VF_PIPE_VAE_LEVELS];
    bool vae_upcast;

    const char **sources;
    size_t n_sources;
};

#endif /* VRAMFIT_PIPELINE_H */
