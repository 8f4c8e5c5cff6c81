/* SPDX-License-Identifier: Apache-2.0 */
/*
 * options.c - every option of estimate, pick and explain in one table, and vf_workload_set,
 * the one place a spelled option becomes a field of struct vf_workload. The CLI parses argv
 * with it, the HTTP API applies query keys and JSON body members with it, the help texts and
 * the "did you mean" suggestions are generated from it. An engine's own flags stay in that
 * engine's struct vf_engine_flag table; they are looked up after ours (DESIGN section 8: an
 * engine's flag given without --engine selects that engine, with another engine it is an
 * error naming the engine it belongs to).
 */
#include "internal.h"

#include <limits.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum opt_id {
    O_FORCE = 1,
    O_CTX,
    O_LCPP_CTX,
    O_USERS,
    O_NP,
    O_IN_TOKENS,
    O_OUT_TOKENS,
    O_WEIGHTS,
    O_KV_DTYPE,
    O_KV_DTYPE_V,
    O_ENGINE,
    O_ENGINE_VERSION, /* issue 20 */
    O_TASK,
    O_TRAIN_KNOB, /* vf_train_set by the option's key (its primary name without dashes) */
    O_BATCH,
    O_SEQ,
    O_GRAD_ACCUM,
    O_FREEZE_LAYERS,
    O_CHUNKED_CE,
    O_CACHE_LATENTS,
    O_CACHE_TEXT,
    O_LORA_RANK,
    O_WIDTH,
    O_HEIGHT,
    O_FRAMES,
    O_STEPS,   /* issue 24 */
    O_HOST_BW, /* issue 24 */
    O_SP,      /* issue 24 */
    O_RES,
    O_VAE_TILED,
    O_OFFLOAD,
    O_DIFFUSION_KNOB, /* vf_diffusion_set by key */
    O_VAE_DTYPE,
    O_TE_WEIGHTS,
    O_TILE,
    O_LORAS,
    O_GPU,
    O_GPUS,
    O_HOURS,
    O_CURRENCY,
    O_RANK,
    O_FX,
    O_TOOL,
    O_MODEL,
    O_ENGINE_FLAG /* not in the table: an engine's own flag */
};

#define NAMES(...) ((const char *const[]){__VA_ARGS__, NULL})
#define ALL_CMDS   (VF_CMD_ESTIMATE | VF_CMD_PICK | VF_CMD_EXPLAIN)
#define T_INFER    (1u << VF_TASK_INFER)
#define T_TRAIN    (1u << VF_TASK_TRAIN)
#define T_IMAGE    ((1u << VF_TASK_IMAGE) | (1u << VF_TASK_VIDEO))

/* F-TRAIN-18: torchtune's CEWithChunkedOutputLoss default, num_output_chunks = 8. */
#define CE_CHUNKS_DEFAULT "8"

static const struct vf_option table[] = {
    {O_MODEL, "--model", NULL, VF_KIND_TEXT, "MODEL", NULL, 0, 0, ALL_CMDS, 0, false, NULL,
     "the model: a catalog id or alias, a file or folder, or a hub id (estimate and pick take "
     "it as their argument)"},
    {O_CTX, "--ctx", NAMES("--max-model-len", "--num-ctx", "--num_ctx", "--context"),
     VF_KIND_TOKENS, "N", NULL, 0, 0, ALL_CMDS, 0, false, NULL,
     "context per sequence: 32768, 32k, 128K (default: the model's maximum)"},
    {O_LCPP_CTX, "-c", NAMES("--ctx-size"), VF_KIND_TOKENS, "N", NULL, 0, 0, ALL_CMDS, 0, false,
     NULL, "llama.cpp's total context, shared by the -np slots"},
    {O_USERS, "--users", NAMES("--concurrency"), VF_KIND_COUNT, "N", NULL, 1, UINT32_MAX, ALL_CMDS,
     0, false, NULL, "concurrent sequences (default 1)"},
    {O_NP, "-np", NAMES("--parallel", "--num-parallel"), VF_KIND_COUNT, "N", NULL, 1, UINT32_MAX,
     ALL_CMDS, 0, false, NULL, "llama.cpp's slots: the sequences -c is shared by"},
    {O_IN_TOKENS, "--input-tokens", NAMES("--input-len"), VF_KIND_TOKENS, "N", NULL, 0, 0, ALL_CMDS,
     0, false, NULL, "speed and cost: prompt tokens per request (default 4096, at most --ctx)"},
    {O_OUT_TOKENS, "--output-tokens", NAMES("--output-len"), VF_KIND_TOKENS, "N", NULL, 0, 0,
     ALL_CMDS, 0, false, NULL, "speed and cost: answer tokens per request (default 512)"},
    {O_WEIGHTS, "--weights", NAMES("--quant", "--quantization"), VF_KIND_TEXT, "PREC", NULL, 0, 0,
     ALL_CMDS, 0, false, NULL,
     "fp32 bf16 fp16 fp8 int8 int4 awq gptq nf4 mxfp4 nvfp4, or a GGUF type such as Q4_K_M "
     "(default: the checkpoint's own)"},
    {O_KV_DTYPE, "--kv-dtype", NAMES("--kv-cache-dtype", "-ctk", "--cache-type-k"), VF_KIND_TEXT,
     "D", NULL, 0, 0, ALL_CMDS, 0, false, NULL,
     "KV cache type, K and V: fp16 bf16 fp8 q8_0 q4_0 ... (default 16-bit)"},
    {O_KV_DTYPE_V, "-ctv", NAMES("--cache-type-v"), VF_KIND_TEXT, "D", NULL, 0, 0, ALL_CMDS, 0,
     false, NULL, "llama.cpp's V cache type (default: as -ctk)"},
    {O_ENGINE, "--engine", NULL, VF_KIND_TEXT, "E", NULL, 0, 0, ALL_CMDS, 0, false, NULL,
     "generic vllm llama.cpp ollama transformers pytorch comfyui diffusers ('vramfit help "
     "engines': their own flags); NAME@VERSION picks that release's rules (vllm@0.6)"},
    {O_ENGINE_VERSION, "--engine-version", NULL, VF_KIND_TEXT, "VERSION", NULL, 0, 0, ALL_CMDS, 0,
     false, NULL,
     "the engine release whose rules to use (default the newest modelled; 'vramfit help "
     "engines' lists them)"},
    {O_TASK, "--task", NULL, VF_KIND_ENUM, "T", NULL, 0, 0, ALL_CMDS, 0, false, NULL,
     "infer train image video (default: the model's)"},
    {O_FORCE, "--force", NULL, VF_KIND_FLAG, NULL, NULL, 0, 0, ALL_CMDS, 0, false, NULL,
     "allow a context beyond the model's maximum (rope scaling)"},
    {O_GPU, "--gpu", NULL, VF_KIND_TEXT, "CARD[:N]", NULL, 0, 0, VF_CMD_ESTIMATE | VF_CMD_EXPLAIN,
     0, false, NULL,
     "a catalog card (rtx-4090, h100-sxm), a size (23.65GiB, 24GB), local, or mixed cards A,B "
     "(rtx-4090,rtx-3090; 2xa100-80gb-sxm,rtx-4090)"},
    {O_GPUS, "--gpus", NAMES("--tensor-parallel-size", "-tp"), VF_KIND_COUNT, "N", NULL, 1, 4096,
     ALL_CMDS, 0, false, NULL, "cards the model is split over (default 1)"},
    {O_HOST_BW, "--host-bandwidth", NAMES("--host-bw"), VF_KIND_REAL, "GB/s", NULL, 0, 0, ALL_CMDS,
     0, false, NULL,
     "speed of offload: the host's memory bandwidth (default 76.8, dual-channel DDR5-4800)"},
    {O_HOURS, "--hours", NULL, VF_KIND_REAL, "H", NULL, 0, 0, VF_CMD_PICK, 0, false, NULL,
     "the job's length: prices it per job"},
    {O_CURRENCY, "--currency", NULL, VF_KIND_TEXT, "CUR", NULL, 0, 0, VF_CMD_PICK, 0, false, NULL,
     "rank the offers in this currency (default EUR)"},
    {O_RANK, "--rank", NULL, VF_KIND_TEXT, "cost|price", NULL, 0, 0, VF_CMD_PICK, 0, false, NULL,
     "price per hour (default) or per 1M output tokens at --users, --input/--output-tokens"},
    {O_FX, "--fx", NULL, VF_KIND_LIST, "CUR=RATE", NULL, 0, 0, VF_CMD_PICK, 0, false, NULL,
     "rank another currency's offers too at this rate (USD=0.92)"},
    {O_TOOL, "--tool", NULL, VF_KIND_TEXT, "T", NULL, 0, 0, VF_CMD_EXPLAIN, 0, false, NULL,
     "the tool that printed the log, when it is not recognised"},
    /* training */
    {O_TRAIN_KNOB, "--method", NAMES("--finetuning-type"), VF_KIND_TEXT, "M", NULL, 0, 0, ALL_CMDS,
     T_TRAIN | T_IMAGE, false, "training", "full lora qlora freeze (default full)"},
    {O_TRAIN_KNOB, "--optimizer", NAMES("--optim"), VF_KIND_TEXT, "O", NULL, 0, 0, ALL_CMDS,
     T_TRAIN | T_IMAGE, false, "training",
     "adamw adamw8bit paged_adamw8bit adafactor lion sgd (and HF's --optim names)"},
    {O_TRAIN_KNOB, "--precision", NAMES("--mixed-precision"), VF_KIND_TEXT, "P", NULL, 0, 0,
     ALL_CMDS, T_TRAIN | T_IMAGE, false, "training", "bf16 fp16 (mixed, default), fp32, pure-bf16"},
    {O_SEQ, "--seq", NAMES("--seq-len", "--max-seq-length", "--cutoff-len"), VF_KIND_TOKENS, "N",
     NULL, 0, 0, ALL_CMDS, 0, false, "training", "tokens per sample (default 2048)"},
    {O_BATCH, "--batch", NAMES("--per-device-train-batch-size", "--batch-size"), VF_KIND_COUNT, "B",
     NULL, 1, 65536, ALL_CMDS, T_TRAIN | T_IMAGE, false, "training",
     "micro-batch per GPU; images or videos at once (default 1)"},
    {O_GRAD_ACCUM, "--grad-accum", NAMES("--gradient-accumulation-steps"), VF_KIND_COUNT, "N", NULL,
     1, 1048576, ALL_CMDS, T_TRAIN | T_IMAGE, false, "training",
     "accumulation steps (no memory; the effective batch)"},
    {O_TRAIN_KNOB, "--grad-checkpointing", NAMES("--gradient-checkpointing"), VF_KIND_TEXT, "M",
     "full", 0, 0, ALL_CMDS, T_TRAIN | T_IMAGE, false, "training",
     "none full selective (alone: full)"},
    {O_TRAIN_KNOB, "--flash-attn", NULL, VF_KIND_TEXT, "on|off", "on", 0, 0, ALL_CMDS,
     T_TRAIN | T_IMAGE, false, "training", "off: eager attention, s^2 scores saved"},
    {O_TRAIN_KNOB, "--liger", NAMES("--use-liger-kernel"), VF_KIND_TEXT, "on|off", "on", 0, 0,
     ALL_CMDS, T_TRAIN | T_IMAGE, false, "training", "Liger's fused cross-entropy and kernels"},
    {O_CHUNKED_CE, "--chunked-ce", NULL, VF_KIND_COUNT, "N", CE_CHUNKS_DEFAULT, 1, 1024, ALL_CMDS,
     T_TRAIN | T_IMAGE, false, "training", "torchtune's chunked cross-entropy (alone: 8 chunks)"},
    {O_LORA_RANK, "--lora-rank", NAMES("--lora-r"), VF_KIND_COUNT, "R", NULL, 1, 65536, ALL_CMDS,
     T_TRAIN | T_IMAGE, false, "training", "LoRA rank (default 16)"},
    {O_TRAIN_KNOB, "--lora-targets", NAMES("--lora-target", "--target-modules"), VF_KIND_TEXT,
     "LIST", NULL, 0, 0, ALL_CMDS, T_TRAIN | T_IMAGE, false, "training",
     "all-linear | q,k,v,o,gate,up,down"},
    {O_FREEZE_LAYERS, "--freeze-layers", NAMES("--freeze-trainable-layers"), VF_KIND_COUNT, "N",
     NULL, 1, 65536, ALL_CMDS, T_TRAIN | T_IMAGE, false, "training",
     "--method freeze: the last N layers train (default 2)"},
    {O_TRAIN_KNOB, "--zero", NAMES("--zero-stage"), VF_KIND_TEXT, "0-3", NULL, 0, 0, ALL_CMDS,
     T_TRAIN | T_IMAGE, false, "training", "ZeRO stage (default: 3 on several GPUs)"},
    {O_TRAIN_KNOB, "--fsdp", NULL, VF_KIND_TEXT, "S", "full_shard", 0, 0, ALL_CMDS,
     T_TRAIN | T_IMAGE, false, "training", "full_shard shard_grad_op hybrid_shard no_shard"},
    {O_TRAIN_KNOB, "--accounting", NULL, VF_KIND_TEXT, "zero|deepspeed", NULL, 0, 0, ALL_CMDS,
     T_TRAIN | T_IMAGE, false, "training", "16 B/param (ZeRO paper) or DeepSpeed's estimator (18)"},
    {O_TRAIN_KNOB, "--optimizer-in-bwd", NAMES("--optimizer-in-backward"), VF_KIND_TEXT, "on|off",
     "on", 0, 0, ALL_CMDS, T_TRAIN | T_IMAGE, false, "training",
     "the step runs in backward, each gradient freed (torchtune)"},
    /* issue 22: a training stack's defaults, and torch.compile */
    {O_TRAIN_KNOB, "--framework", NULL, VF_KIND_TEXT, "NAME[@VER]", NULL, 0, 0, ALL_CMDS,
     T_TRAIN | T_IMAGE, false, "training",
     "hf trl unsloth torchtune axolotl llama-factory torchtitan deepspeed: its defaults "
     "(default trl)"},
    {O_TRAIN_KNOB, "--compile", NAMES("--torch-compile"), VF_KIND_TEXT, "on|off", "on", 0, 0,
     ALL_CMDS, T_TRAIN | T_IMAGE, false, "training", "torch.compile: fused loss and activations"},
    {O_TRAIN_KNOB, "--cuda-module-loading", NULL, VF_KIND_TEXT, "lazy|eager", NULL, 0, 0, ALL_CMDS,
     T_TRAIN | T_IMAGE, false, "training",
     "CUDA_MODULE_LOADING: lazy (PyTorch 1.13+ on CUDA 11.7+) or eager (a larger context)"},
    {O_CACHE_LATENTS, "--cache-latents", NULL, VF_KIND_FLAG, NULL, NULL, 0, 0, ALL_CMDS,
     T_TRAIN | T_IMAGE, false, "training", "a denoiser's fine-tuning: the VAE leaves the GPU"},
    {O_CACHE_TEXT, "--cache-text-embeddings", NAMES("--cache-text"), VF_KIND_FLAG, NULL, NULL, 0, 0,
     ALL_CMDS, T_TRAIN | T_IMAGE, false, "training",
     "a denoiser's fine-tuning: the text encoders leave the GPU"},
    {O_OFFLOAD, "--offload", NULL, VF_KIND_TEXT, "M", NULL, 0, 0, ALL_CMDS, T_TRAIN | T_IMAGE, true,
     NULL,
     "training: none optimizer params (ZeRO-Offload); comfyui: lowvram novram block-swap N; "
     "diffusers: model-cpu sequential group"},
    /* image and video */
    {O_WIDTH, "--width", NULL, VF_KIND_COUNT, "W", NULL, 1, 16384, ALL_CMDS, T_IMAGE | T_TRAIN,
     false, "image/video", "pixels (default: the pipeline's)"},
    {O_HEIGHT, "--height", NULL, VF_KIND_COUNT, "H", NULL, 1, 16384, ALL_CMDS, T_IMAGE | T_TRAIN,
     false, "image/video", "pixels (default: the pipeline's)"},
    {O_FRAMES, "--frames", NAMES("--length", "--num-frames"), VF_KIND_COUNT, "F", NULL, 1, 16384,
     ALL_CMDS, T_IMAGE | T_TRAIN, false, "image/video", "video frames (default: the pipeline's)"},
    {O_STEPS, "--steps", NAMES("--num-inference-steps"), VF_KIND_COUNT, "N", NULL, 1, 10000,
     ALL_CMDS, T_IMAGE | T_TRAIN, false, "image/video",
     "speed: denoising steps (default: the pipeline's)"},
    {O_SP, "--ulysses-degree", NAMES("--sp"), VF_KIND_COUNT, "N", NULL, 1, 4096, ALL_CMDS,
     T_IMAGE | T_TRAIN, false, "image/video",
     "speed: cards one image or clip is split over by sequence parallelism (xDiT)"},
    {O_RES, "--res", NAMES("--resolution", "--size"), VF_KIND_TEXT, "WxH", NULL, 0, 0, ALL_CMDS,
     T_IMAGE | T_TRAIN, false, "image/video", "1080p 720p 480p 1024 768 512, or WxH"},
    {O_TE_WEIGHTS, "--text-encoder-weights", NAMES("--te-weights"), VF_KIND_TEXT, "Q", NULL, 0, 0,
     ALL_CMDS, T_IMAGE | T_TRAIN, false, "image/video", "the text encoders' precision"},
    {O_DIFFUSION_KNOB, "--text-encoder", NULL, VF_KIND_TEXT, "gpu|cpu|offload-after-encode", NULL,
     0, 0, ALL_CMDS, T_IMAGE | T_TRAIN, false, "image/video", "where the text encoders run"},
    {O_DIFFUSION_KNOB, "--vae-decode", NULL, VF_KIND_TEXT, "full|tiled|sliced|tiny", NULL, 0, 0,
     ALL_CMDS, T_IMAGE | T_TRAIN, false, "image/video",
     "tiled: VAE Decode (Tiled), vae.enable_tiling(); sliced: vae.enable_slicing(); tiny: "
     "AutoencoderTiny (TAESD)"},
    {O_VAE_TILED, "--vae-tiled", NAMES("--tiled-vae"), VF_KIND_FLAG, NULL, NULL, 0, 0, ALL_CMDS,
     T_IMAGE | T_TRAIN, false, "image/video", "the same as --vae-decode tiled"},
    {O_TILE, "--tile", NULL, VF_KIND_COUNT, "PX", NULL, 64, 16384, ALL_CMDS, T_IMAGE | T_TRAIN,
     false, "image/video", "the VAE's tile size (default 512)"},
    {O_VAE_DTYPE, "--vae-dtype", NAMES("--vae-weights"), VF_KIND_TEXT, "fp32|bf16|fp16", NULL, 0, 0,
     ALL_CMDS, T_IMAGE | T_TRAIN, false, "image/video", "the VAE's precision"},
    {O_LORAS, "--loras", NULL, VF_KIND_COUNT, "N", NULL, 0, 16384, ALL_CMDS, T_IMAGE | T_TRAIN,
     false, "image/video", "LoRA files on the denoiser"},
    {O_DIFFUSION_KNOB, "--cfg", NULL, VF_KIND_TEXT, "on|off", NULL, 0, 0, ALL_CMDS,
     T_IMAGE | T_TRAIN, false, "image/video", "classifier-free guidance (cond + uncond)"},
    {O_DIFFUSION_KNOB, "--attention", NULL, VF_KIND_TEXT, "sdpa|eager", NULL, 0, 0, ALL_CMDS,
     T_IMAGE, false, "image/video",
     "diffusers' UNet attention: eager = AttnProcessor, tokens^2 scores (default sdpa)"},
};

const struct vf_option *vf_options(size_t *n)
{
    *n = sizeof table / sizeof table[0];
    return table;
}

/* ----------------------------------------------------------------- lookup */

/* Does `given` name `spelling`? Exactly when given starts with '-' (the command line);
 * otherwise (an HTTP key) ignoring the leading dashes, with '_' and '-' alike. */
static bool spelled(const char *given, const char *spelling)
{
    if (given[0] == '-')
        return !strcmp(given, spelling);
    while (*spelling == '-')
        spelling++;
    for (; *given && *spelling; given++, spelling++) {
        char a = *given == '_' ? '-' : *given, b = *spelling == '_' ? '-' : *spelling;
        if (a != b)
            return false;
    }
    return !*given && !*spelling;
}

static bool row_spelled(const struct vf_option *o, const char *given)
{
    if (spelled(given, o->name))
        return true;
    for (size_t i = 0; o->aliases && o->aliases[i]; i++)
        if (spelled(given, o->aliases[i]))
            return true;
    return false;
}

/* An engine flag of e spelled `given`, or NULL. */
static const struct vf_engine_flag *engine_flag_of(const struct vf_engine *e, const char *given)
{
    for (const struct vf_engine_flag *f = e->flags; f && f->name; f++)
        if (spelled(given, f->name) || (f->alias && spelled(given, f->alias)))
            return f;
    return NULL;
}

/* The row standing for an engine flag (its id; the name is the flag's own). */
static const struct vf_option engine_row = {
    O_ENGINE_FLAG, NULL, NULL, VF_KIND_TEXT, "V", NULL, 0, 0, ALL_CMDS, T_INFER, false, NULL, NULL};

const struct vf_option *vf_option_find(const char *name, unsigned cmd,
                                       const struct vf_engine_flag **engine_flag,
                                       const struct vf_engine **engine)
{
    if (engine_flag)
        *engine_flag = NULL;
    if (engine)
        *engine = NULL;
    if (!name || !*name)
        return NULL;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if ((table[i].cmds & cmd) && row_spelled(&table[i], name))
            return &table[i];
    size_t n;
    const struct vf_engine *const *all = vf_engines(&n);
    for (size_t i = 0; i < n; i++) {
        const struct vf_engine_flag *f = engine_flag_of(all[i], name);
        if (f) {
            if (engine_flag)
                *engine_flag = f;
            if (engine)
                *engine = all[i];
            return &engine_row;
        }
    }
    return NULL;
}

/* Our row spelled `name` whatever the command (to say "not an option of pick"). */
static const struct vf_option *any_row(const char *name)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (row_spelled(&table[i], name))
            return &table[i];
    return NULL;
}

/* ---------------------------------------------------------------- setting */

void vf_workload_init(struct vf_workload *w, unsigned cmd)
{
    memset(w, 0, sizeof *w);
    w->task = VF_TASK_INFER;
    w->cmd = cmd ? cmd : VF_CMD_ESTIMATE;
}

/* Every error of an option is a usage error (the CLI prints its help hint, HTTP 400). */
#define usage(err, ...) vf__errf(err, VF_EUSAGE, __VA_ARGS__)

/* A whole number option: vf_parse_count in [min, max]. */
static bool count_in(const char *v, uint64_t min, uint64_t max, uint64_t *out)
{
    struct vf_error e = {0};
    return !vf_parse_count(v, out, &e) && *out >= min && *out <= max;
}

/* On/off values of a VF_KIND_FLAG: alone (NULL or ""), 1/0, true/false, on/off, yes/no. */
static int flag_value(const char *v)
{
    static const char *const on[] = {"1", "true", "on", "yes"};
    static const char *const off[] = {"0", "false", "off", "no"};
    if (!v || !*v)
        return 1;
    for (size_t i = 0; i < 4; i++) {
        if (!strcmp(v, on[i]))
            return 1;
        if (!strcmp(v, off[i]))
            return 0;
    }
    return -1;
}

/* --res presets: the video heights (16:9 landscape) and square image sides. */
static bool res_preset(const char *v, unsigned *w, unsigned *h)
{
    static const struct {
        const char *name;
        unsigned w, h;
    } p[] = {{"1080p", 1920, 1080}, {"720p", 1280, 720}, {"480p", 832, 480},
             {"1024", 1024, 1024},  {"768", 768, 768},   {"512", 512, 512}};
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++)
        if (!strcmp(v, p[i].name)) {
            *w = p[i].w;
            *h = p[i].h;
            return true;
        }
    return false;
}

/* Adds an engine option (its primary name); a repeated one takes the last value. */
static enum vf_err add_engine_opt(struct vf_workload *w, const char *key, const char *val,
                                  struct vf_error *err)
{
    struct vf_engine_opts *eo = &w->opts;
    for (size_t i = 0; i < eo->n; i++)
        if (!strcmp(eo->key[i], key)) {
            eo->value[i] = val;
            return VF_OK;
        }
    if (eo->n == VF_MAX_ENGINE_OPTS)
        return usage(err, "more than %d engine options", VF_MAX_ENGINE_OPTS);
    eo->key[eo->n] = key;
    eo->value[eo->n] = val;
    eo->n++;
    return VF_OK;
}

/* The engines' names, "generic, vllm, ...", for messages. */
static void engine_list(char *out, size_t cap)
{
    size_t n;
    const struct vf_engine *const *all = vf_engines(&n);
    out[0] = 0;
    for (size_t k = 0; k < n; k++)
        snprintf(out + strlen(out), cap - strlen(out), "%s%s", k ? ", " : "", all[k]->name);
}

/* An engine's own flag: selects its engine, or conflicts with the one given. */
static enum vf_err set_engine_flag(struct vf_workload *w, const char *name, const char *val,
                                   const struct vf_engine_flag *f, const struct vf_engine *e,
                                   struct vf_error *err)
{
    const struct vf_engine *have = w->engine ? vf_engine_find(w->engine) : NULL;
    if (have && have != e) {
        /* the same spelling may be the given engine's own too (--dtype: vllm, transformers) */
        const struct vf_engine_flag *own = engine_flag_of(have, name);
        if (!own)
            return usage(err, "'%s' is a flag of %s, not of %s (--engine %s)", name, e->name,
                         have->name, e->name);
        f = own;
        e = have;
    }
    if (!have) {
        /* without --engine: the flag must belong to one engine only */
        size_t n;
        const struct vf_engine *const *all = vf_engines(&n);
        for (size_t i = 0; i < n; i++)
            if (all[i] != e && engine_flag_of(all[i], name))
                return usage(err, "'%s' is a flag of %s and of %s: say which with --engine", name,
                             e->name, all[i]->name);
        w->engine = e->name;
        w->engine_by = f->name;
    }
    if (f->takes_value && (!val || !*val))
        return usage(err, "flag '%s' needs a value", name);
    if (!f->takes_value && val && *val && flag_value(val) != 1)
        return usage(err, "flag '%s' takes no value", f->name);
    return add_engine_opt(w, f->name, f->takes_value ? val : NULL, err);
}

/* What a count option expects, for its error message. */
static const char *count_expects(const struct vf_option *o)
{
    switch (o->id) {
    case O_BATCH:
        return "a batch size from 1 to 65536";
    case O_GRAD_ACCUM:
        return "a whole number of steps from 1 to 1048576";
    case O_FREEZE_LAYERS:
        return "a number of layers from 1 to 65536";
    case O_CHUNKED_CE:
        return "a number of chunks from 1 to 1024";
    case O_LORA_RANK:
        return "a rank from 1 to 65536";
    case O_GPUS:
        return "a number of GPUs from 1 to 4096";
    case O_TILE:
        return "a whole number of pixels from 64 to 16384";
    case O_LORAS:
        return "a whole number";
    default:
        return NULL; /* the row's range */
    }
}

/* The on/off options. */
static enum vf_err set_flag(struct vf_workload *w, const struct vf_option *o, const char *name,
                            const char *val, struct vf_error *err)
{
    int on = flag_value(val);
    if (on < 0)
        return usage(err,
                     "%s: an on/off flag takes no value but 1/0, true/false, on/off or "
                     "yes/no (not '%s')",
                     name, val);
    if (o->id == O_FORCE)
        w->force = on;
    else if (o->id == O_CACHE_LATENTS)
        w->train.cache_latents = on;
    else if (o->id == O_CACHE_TEXT)
        w->train.cache_text = on;
    else
        w->diffusion.tiled_vae = on;
    return VF_OK;
}

/* The whole-number options, val already checked against the row's range (but users, -np). */
static enum vf_err set_count(struct vf_workload *w, const struct vf_option *o, const char *name,
                             const char *val, struct vf_error *err)
{
    struct vf_error e = {0};
    uint64_t n = 0;
    if (o->id == O_USERS) {
        if (vf_parse_count(val, &n, &e) || !n || n > o->max)
            return usage(err, "%s: %s (expected a whole number of sequences, 1 or more)", name,
                         e.msg[0] ? e.msg
                         : n      ? "too many users"
                                  : "zero users");
        w->users = n;
        return VF_OK;
    }
    if (o->id == O_NP) {
        if (vf_parse_count(val, &n, &e) || !n || n > o->max)
            return usage(err, "%s: expected a number of slots, 1 or more", name);
        w->np = n;
        return VF_OK;
    }
    if (!count_in(val, o->min, o->max, &n)) {
        if (count_expects(o))
            return usage(err, "%s: expected %s", name, count_expects(o));
        return usage(err, "%s: expected a whole number from %llu to %llu", name,
                     (unsigned long long)o->min, (unsigned long long)o->max);
    }
    uint32_t v = (uint32_t)n;
    switch (o->id) {
    case O_BATCH:
        w->train.batch = v;
        w->diffusion.batch = v;
        break;
    case O_GRAD_ACCUM:
        w->train.grad_accum = v;
        break;
    case O_FREEZE_LAYERS:
        w->train.freeze_layers = v;
        break;
    case O_CHUNKED_CE:
        w->train.ce_chunks = v;
        w->train.given |= VF_TK_CE;
        break;
    case O_LORA_RANK:
        w->train.lora_rank = v;
        break;
    case O_WIDTH:
        w->diffusion.width = v;
        break;
    case O_HEIGHT:
        w->diffusion.height = v;
        break;
    case O_FRAMES:
        w->diffusion.frames = v;
        break;
    case O_STEPS:
        w->diffusion.steps = v;
        break;
    case O_SP:
        w->diffusion.sp = v;
        break;
    case O_TILE:
        w->diffusion.vae_tile = v;
        w->diffusion.tiled_vae = true;
        break;
    case O_LORAS:
        w->diffusion.loras = v;
        break;
    case O_GPUS:
        w->gpus_asked = v;
        break;
    default:
        return usage(err, "%s: not settable", name);
    }
    return VF_OK;
}

/* --engine: a known engine, and no flag of another engine given before it. */
static enum vf_err set_engine(struct vf_workload *w, const char *val, struct vf_error *err)
{
    /* --engine NAME@VERSION (issue 20): the name looked up without the version */
    const char *at = strchr(val, '@');
    char name[32];
    snprintf(name, sizeof name, "%.*s", at ? (int)(at - val) : (int)strlen(val), val);
    const struct vf_engine *eng = vf_engine_find(name);
    if (!eng) {
        char list[256];
        engine_list(list, sizeof list);
        return usage(err, "--engine: unknown engine '%s' (available: %s)", name, list);
    }
    if (at) {
        struct vf_error ve = {0};
        if (vf_engine_version_check(eng, at + 1, &ve))
            return usage(err, "--engine: %s", ve.msg);
        w->engine_version = at + 1;
    }
    /* flags of another engine given before --engine */
    for (size_t i = 0; i < w->opts.n; i++)
        if (!engine_flag_of(eng, w->opts.key[i])) {
            const struct vf_engine *owner = NULL;
            vf_option_find(w->opts.key[i], ALL_CMDS, NULL, &owner);
            return usage(err, "'%s' is a flag of %s, not of %s (--engine %s)", w->opts.key[i],
                         owner ? owner->name : "another engine", eng->name,
                         owner ? owner->name : "...");
        }
    w->engine = at ? eng->name : val;
    w->engine_by = NULL;
    return VF_OK;
}

/* --offload: training's none|optimizer|params, or image/video's modes ("block-swap N"). */
static enum vf_err set_offload(struct vf_workload *w, const char *name, const char *val,
                               struct vf_error *err)
{
    struct vf_error e = {0};
    uint64_t n = 0;
    /* training: none|optimizer|params; image/video: lowvram ... "block-swap N" */
    char mode[32];
    const char *sp = strpbrk(val, " =:");
    size_t ml = sp ? (size_t)(sp - val) : strlen(val);
    snprintf(mode, sizeof mode, "%.*s", (int)(ml < sizeof mode ? ml : sizeof mode - 1), val);
    struct vf_diffusion_opts d = w->diffusion;
    if (ml < sizeof mode && !vf_diffusion_set(&d, "offload", mode, NULL)) {
        if (d.offload == VF_DOFF_BLOCK_SWAP) {
            if (!sp || !count_in(sp + 1, 1, 4096, &n))
                return usage(err,
                             "%s block-swap: expected the number of blocks to keep in host "
                             "RAM (block-swap 20)",
                             name);
            d.block_swap = (uint32_t)n;
        } else if (sp) {
            return usage(err, "%s %s: takes no count", name, mode);
        }
        w->diffusion = d;
        if (!strcmp(mode, "none"))
            w->train.offload = VF_OFFLOAD_NONE;
        return VF_OK;
    }
    if (sp || vf_train_set(&w->train, "offload", val, &e))
        return usage(err,
                     "%s: unknown value '%s' (training: none, optimizer, params; "
                     "image/video: lowvram, novram, block-swap N, model-cpu, sequential, "
                     "group)",
                     name, val);
    return VF_OK;
}

/* --fx CUR=RATE: one more exchange rate for pick. */
static enum vf_err set_fx(struct vf_workload *w, const char *val, struct vf_error *err)
{
    const char *eq = strchr(val, '=');
    uint64_t micro;
    if (!eq || eq - val != 3 || vf_parse_price(eq + 1, &micro, NULL) || !micro)
        return usage(err, "--fx: expected CUR=RATE such as USD=0.92 (1 USD = 0.92 of the "
                          "ranked currency)");
    if (w->pick.n_fx == VF_MAX_FX)
        return usage(err, "--fx: at most %d rates", VF_MAX_FX);
    memcpy(w->pick.fx[w->pick.n_fx].from, val, 3);
    w->pick.fx[w->pick.n_fx].from[3] = 0;
    w->pick.fx[w->pick.n_fx].micro = micro;
    w->pick.n_fx++;
    return VF_OK;
}

/* A decimal number in (0, 100000], or 0 when val is not one. */
static double positive(const char *val)
{
    char *end;
    double v = strtod(val, &end);
    return *end || !(v > 0) || v > 100000 ? 0 : v;
}

/* The options whose value is text: a model, a precision, a card, a word of a list... */
static enum vf_err set_text(struct vf_workload *w, const struct vf_option *o, const char *name,
                            const char *val, struct vf_error *err)
{
    struct vf_error e = {0};
    switch (o->id) {
    case O_MODEL:
        w->model = val;
        return VF_OK;
    case O_CTX:
    case O_SEQ:
        if (vf_parse_tokens(val, &w->ctx_tokens, &e) || !w->ctx_tokens)
            return usage(err, "%s: %s", name,
                         e.msg[0]         ? e.msg
                         : o->id == O_CTX ? "the context must be at least 1 token"
                                          : "the sequence must be at least 1 token");
        w->ctx_flag = name;
        return VF_OK;
    case O_IN_TOKENS:
    case O_OUT_TOKENS:
        if (vf_parse_tokens(val, o->id == O_IN_TOKENS ? &w->in_tokens : &w->out_tokens, &e) ||
            !(o->id == O_IN_TOKENS ? w->in_tokens : w->out_tokens))
            return usage(err, "%s: %s", name, e.msg[0] ? e.msg : "at least 1 token");
        return VF_OK;
    case O_LCPP_CTX:
        if (vf_parse_tokens(val, &w->llamacpp_total_ctx, &e) || !w->llamacpp_total_ctx)
            return usage(err, "%s: %s", name,
                         e.msg[0] ? e.msg : "the context must be at least 1 token");
        return VF_OK;
    case O_WEIGHTS:
        if (vf_quant_parse(val, &w->weights, &e))
            return usage(err, "%s: %s", name, e.msg);
        return VF_OK;
    case O_KV_DTYPE:
        if (vf_kv_dtype_parse(val, &w->kv_dtype, &e))
            return usage(err, "%s: %s", name, e.msg);
        return VF_OK;
    case O_KV_DTYPE_V:
        w->ctv = val;
        return VF_OK;
    case O_TASK:
        for (int t = VF_TASK_INFER; t <= VF_TASK_VIDEO; t++)
            if (!strcmp(val, vf_task_name((enum vf_task)t))) {
                w->task = (enum vf_task)t;
                w->task_set = true;
                return VF_OK;
            }
        return usage(err, "--task: unknown task '%s' (infer, train, image, video)", val);
    case O_TRAIN_KNOB:
        if (vf_train_set(&w->train, o->name + 2, val, &e))
            return usage(err, "%s: %s", name, e.msg);
        return VF_OK;
    case O_RES: {
        unsigned wd, ht;
        char tail;
        if (!res_preset(val, &wd, &ht) && (sscanf(val, "%ux%u%c", &wd, &ht, &tail) != 2 || !wd ||
                                           !ht || wd > 16384 || ht > 16384))
            return usage(err,
                         "%s: expected WIDTHxHEIGHT such as 1280x720, or 1080p, 720p, 480p, "
                         "1024, 768, 512",
                         name);
        w->diffusion.width = wd;
        w->diffusion.height = ht;
        return VF_OK;
    }
    case O_DIFFUSION_KNOB:
        if (vf_diffusion_set(&w->diffusion, o->name + 2, val, &e))
            return usage(err, "%s", e.msg);
        return VF_OK;
    case O_VAE_DTYPE: {
        struct vf_quant vq;
        if (vf_quant_parse(val, &vq, &e) || vq.kind != VF_QK_PLAIN)
            return usage(err, "%s: expected fp32, bf16 or fp16", name);
        w->diffusion.vae_dtype = vq.dtype;
        return VF_OK;
    }
    case O_TE_WEIGHTS:
        if (vf_quant_parse(val, &w->diffusion.te_weights, &e))
            return usage(err, "%s: %s", name, e.msg);
        return VF_OK;
    case O_GPU:
        w->gpu = val;
        return VF_OK;
    case O_HOST_BW:
        if (!(w->host_gbps = positive(val)))
            return usage(err, "--host-bandwidth: expected GB/s such as 76.8");
        return VF_OK;
    case O_HOURS:
        if (!(w->hours = positive(val)))
            return usage(err, "--hours: expected a duration in hours such as 2.5");
        return VF_OK;
    case O_RANK:
        if (strcmp(val, "cost") && strcmp(val, "price"))
            return usage(err, "--rank: expected cost or price");
        w->pick.rank_cost = !strcmp(val, "cost");
        return VF_OK;
    case O_CURRENCY:
        if (strlen(val) != 3)
            return usage(err, "--currency: expected a three-letter code such as EUR");
        w->pick.currency = val;
        return VF_OK;
    case O_TOOL:
        w->tool = val;
        return VF_OK;
    case O_ENGINE:
        return set_engine(w, val, err);
    case O_ENGINE_VERSION: /* checked against the engine when it is known (vf_engine_for) */
        w->engine_version = val;
        return VF_OK;
    case O_OFFLOAD:
        return set_offload(w, name, val, err);
    case O_FX:
        return set_fx(w, val, err);
    default:
        return usage(err, "%s: not settable", name);
    }
}

/* One option of our table: a value given alone takes the row's bare value; then by kind. */
static enum vf_err set_row(struct vf_workload *w, const struct vf_option *o, const char *name,
                           const char *val, struct vf_error *err)
{
    if (o->kind != VF_KIND_FLAG && (!val || !*val)) {
        if (!o->bare)
            return usage(err, "flag '%s' needs a value", name);
        val = o->bare;
    }
    if (o->kind == VF_KIND_FLAG)
        return set_flag(w, o, name, val, err);
    if (o->kind == VF_KIND_COUNT)
        return set_count(w, o, name, val, err);
    return set_text(w, o, name, val, err);
}

const struct vf_option *vf_workload_option(const struct vf_workload *w, const char *name,
                                           const struct vf_engine_flag **engine_flag,
                                           const struct vf_engine **engine)
{
    const struct vf_option *o = vf_option_find(name, w->cmd, engine_flag, engine);
    if (o && o->id != O_ENGINE_FLAG && w->engine) {
        /* our spelling that is also the named engine's own flag: the engine's meaning wins
         * where ours does not apply to the engine's tasks (llama.cpp's --flash-attn is not
         * training's, its --batch-size is -b) */
        const struct vf_engine *have = vf_engine_find(w->engine);
        const struct vf_engine_flag *own = have ? engine_flag_of(have, name) : NULL;
        if (own && o->tasks && !(o->tasks & have->tasks)) {
            if (engine_flag)
                *engine_flag = own;
            if (engine)
                *engine = have;
            return &engine_row;
        }
    }
    return o;
}

enum vf_err vf_workload_set(struct vf_workload *w, const char *name, const char *value,
                            struct vf_error *err)
{
    const struct vf_engine_flag *ef;
    const struct vf_engine *eng;
    const struct vf_option *o = vf_workload_option(w, name, &ef, &eng);
    if (!o) {
        const struct vf_option *other = any_row(name);
        if (other)
            return usage(err, "'%s' is not an option of this command", name);
        const char *near[3];
        size_t n = vf_option_suggest(name, w->cmd, near, 3);
        if (!n)
            return usage(err, "unknown flag '%s'", name);
        return usage(err, "unknown flag '%s' (did you mean %s%s%s%s%s?)", name, near[0],
                     n > 1 ? (n > 2 ? ", " : " or ") : "", n > 1 ? near[1] : "",
                     n > 2 ? " or " : "", n > 2 ? near[2] : "");
    }
    if (o->id == O_ENGINE_FLAG)
        return set_engine_flag(w, name, value, ef, eng, err);
    return set_row(w, o, name, value, err);
}

bool vf_option_accepts(const struct vf_workload *w, const struct vf_option *o, const char *value)
{
    if (!value || !*value || value[0] == '-')
        return false;
    struct vf_workload probe = *w;
    return !set_row(&probe, o, o->name, value, NULL);
}

enum vf_err vf_workload_finish(struct vf_workload *w, struct vf_error *err)
{
    struct vf_error e = {0};
    if (w->ctv) { /* llama.cpp keeps K and V apart: -ctv alone leaves K at f16 */
        enum vf_dtype v;
        if (vf_kv_dtype_parse(w->ctv, &v, &e))
            return usage(err, "-ctv: %s", e.msg);
        bool same = v == w->kv_dtype || (w->kv_dtype == VF_DT_DEFAULT && v == VF_DT_F16);
        w->kv_dtype_v = same ? VF_DT_DEFAULT : v;
    }
    /* llama.cpp: -c is the total context shared by the -np slots */
    if (w->np) {
        if (w->users && w->users != w->np)
            return usage(err, "--users %llu and -np %llu disagree", (unsigned long long)w->users,
                         (unsigned long long)w->np);
        w->users = w->np;
    }
    if (w->llamacpp_total_ctx) {
        if (w->ctx_tokens && strcmp(w->ctx_flag ? w->ctx_flag : "", "-c"))
            return usage(err, "give the context once: --ctx (per sequence) or -c (llama.cpp's "
                              "total, ctx x slots)");
        uint64_t users = w->users ? w->users : 1;
        w->ctx_tokens = w->llamacpp_total_ctx / users;
        if (!w->ctx_tokens)
            return usage(err, "-c %llu over %llu slots leaves no context per slot",
                         (unsigned long long)w->llamacpp_total_ctx, (unsigned long long)users);
        w->ctx_flag = "-c";
    }
    return VF_OK;
}

/* ------------------------------------------------------------- suggestions */

/* The spelling compared: without leading dashes. */
static const char *bare_name(const char *s)
{
    while (*s == '-')
        s++;
    return s;
}

/* The edit distance of q (ql bytes, no dashes) to spelling, or UINT_MAX when their lengths alone
 * differ by more than limit edits. */
static unsigned near_distance(const char *q, size_t ql, const char *spelling, size_t limit)
{
    const char *b = bare_name(spelling);
    size_t bl = strlen(b);
    if ((ql > bl ? ql - bl : bl - ql) > limit)
        return UINT_MAX;
    return vf__edit_distance(q, b);
}

size_t vf_option_suggest(const char *name, unsigned cmd, const char **out, size_t max)
{
    const char *q = bare_name(name);
    size_t ql = strlen(q), n = 0;
    if (ql < 2)
        return 0;
    /* a third of the name's length, at least 1 and at most 3 edits */
    size_t limit = ql / 3 < 1 ? 1 : ql / 3 > 3 ? 3 : ql / 3;
    /* each row's distance (its nearest spelling of the first 8), computed once */
    unsigned dist[sizeof table / sizeof table[0]];
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        dist[i] = UINT_MAX;
        if (!(table[i].cmds & cmd))
            continue;
        dist[i] = near_distance(q, ql, table[i].name, limit);
        for (size_t k = 0; table[i].aliases && table[i].aliases[k] && k < 7; k++) {
            unsigned d = near_distance(q, ql, table[i].aliases[k], limit);
            dist[i] = d < dist[i] ? d : dist[i];
        }
    }
    for (size_t d = 0; d <= limit && n < max; d++)
        for (size_t i = 0; i < sizeof table / sizeof table[0] && n < max; i++)
            if (dist[i] == d) {
                bool dup = false;
                for (size_t j = 0; j < n; j++)
                    dup |= out[j] == table[i].name;
                if (!dup)
                    out[n++] = table[i].name;
            }
    return n;
}

/* --------------------------------------------------------------------- help */

#define HELP_WIDTH  92 /* columns */
#define HELP_INDENT 27 /* where the explanations start */

/* Appends text from column `col`, wrapped at HELP_WIDTH with continuation lines at
 * HELP_INDENT; ends the line. */
static void wrapped(struct vf__sb *sb, size_t col, const char *text)
{
    const char *p = text;
    while (*p == ' ')
        p++;
    while (*p) {
        size_t word = strcspn(p, " ");
        if (col > HELP_INDENT && col + 1 + word > HELP_WIDTH) {
            vf__sb_printf(sb, "\n%*s", HELP_INDENT, "");
            col = HELP_INDENT;
        } else if (col > HELP_INDENT) {
            vf__sb_printf(sb, " ");
            col++;
        }
        vf__sb_printf(sb, "%.*s", (int)word, p);
        col += word;
        p += word;
        while (*p == ' ')
            p++;
    }
    vf__sb_printf(sb, "\n");
}

char *vf_options_help(struct vf_arena *a, unsigned cmd)
{
    static const char *const groups[] = {NULL, "training", "image/video"};
    struct vf__sb sb;
    vf__sb_init(&sb, a);
    for (size_t g = 0; g < sizeof groups / sizeof groups[0]; g++) {
        if (groups[g])
            vf__sb_printf(&sb, "%s:\n", groups[g]);
        for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
            const struct vf_option *o = &table[i];
            bool in = groups[g] ? o->group && !strcmp(o->group, groups[g]) : !o->group;
            if (!in || !(o->cmds & cmd) || (o->id == O_MODEL && cmd != VF_CMD_EXPLAIN))
                continue;
            char head[64];
            snprintf(head, sizeof head, "  %s%s%s%s%s", o->name, o->arg ? " " : "",
                     o->bare && o->arg ? "[" : "", o->arg ? o->arg : "",
                     o->bare && o->arg ? "]" : "");
            vf__sb_printf(&sb, "%s", head);
            size_t col = strlen(head);
            if (col + 1 >= HELP_INDENT) {
                vf__sb_printf(&sb, "\n");
                col = 0;
            }
            vf__sb_printf(&sb, "%*s", (int)(HELP_INDENT - col), "");
            char also[256] = "";
            for (size_t k = 0; o->aliases && o->aliases[k]; k++)
                snprintf(also + strlen(also), sizeof also - strlen(also), "%s%s",
                         k ? ", " : "; also ", o->aliases[k]);
            char *line = vf_arena_printf(a, "%s%s", o->help, also);
            if (!line)
                return NULL;
            /* the first word at the indent, the rest wrapped after it */
            size_t first = strcspn(line, " ");
            vf__sb_printf(&sb, "%.*s", (int)first, line);
            wrapped(&sb, HELP_INDENT + first, line + first);
        }
    }
    return vf__sb_done(&sb);
}
