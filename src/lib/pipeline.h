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

/* One text encoder (T5-XXL, CLIP-L, UMT5-XXL, ...). */
struct vf_pipe_encoder {
    const char *name;
    uint64_t params;
    enum vf_dtype dtype; /* the default file's storage (fp16 in ComfyUI's workflows) */
    bool fp8_file;       /* an fp8 file is published for it (t5xxl_fp8_e4m3fn, ...) */
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

    const char **sources;
    size_t n_sources;
};

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

/* What every image/video engine does first: checks for a pipeline, an image or video task the
 * pipeline can do, a GPU count the engine can split over and an offload mode among `offloads`
 * (bits 1u << enum vf_dif_offload; `offered` names them for the message); then fills e's
 * model, engine, task and the fields an image/video estimate does not use. */
enum vf_err vf__pipeline_begin(const struct vf_model *m, const struct vf_workload *w,
                               const struct vf_engine *eng, unsigned offloads, const char *offered,
                               struct vf_estimate *e, struct vf_error *err);

#endif /* VRAMFIT_PIPELINE_H */
