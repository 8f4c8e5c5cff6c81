/* SPDX-License-Identifier: Apache-2.0 */
/*
 * advise.c - the fixes for an out-of-memory event, per tool, and vf_explain() (F-OOM-20..).
 *
 * Two tables drive it. `rules` lists the fixes in the order our guide tries them (rows are
 * selected top to bottom and listed in that order, see selects()); `changes` says, per kind
 * of change, how a fix's change is made to the workload and how what it saves is found.
 *
 * How to add a rule: add a row to `rules` below, in the place our guide's fix order puts it.
 * A row names the tool group it applies to (G_* below, widened by `covers`), the causes it
 * applies to (see struct rule), the title and the exact line to type ('#' in the command is
 * replaced by the value the change computes), the change it makes to the workload (enum
 * change; its row in `changes` makes it), and what it costs (quality none|minor|major, speed
 * factor, words). What a fix saves is never a fixed share: it is estimate(before).total -
 * estimate(after).total with the change applied (F-OOM-20); when the workload is not known
 * well enough the fix says what is missing.
 */
#include "oom.h"
#include "engine/pipeline_terms.h"

#include <stdio.h>
#include <string.h>

/* Tool groups: the tool of the event maps to one of these (group_of()). */
enum group {
    G_ANY = 0,
    G_COMFY,
    G_OLLAMA,
    G_LLAMACPP,
    G_VLLM,
    G_TRAIN,
    G_TORCH,
    G_TF,      /* TensorFlow, its BFC pool and the cuBLAS/cuDNN handles it creates */
    G_JAX,     /* JAX/XLA */
    G_NCCL,    /* NCCL buffers in a distributed job */
    G_CUBLAS,  /* cuBLAS/cuDNN handle creation outside TensorFlow */
    G_BNB,     /* transformers + bitsandbytes loading a quantized model */
    G_BNB_CPU, /* the same with a bitsandbytes build that has no GPU support */
    N_GROUPS
};

#define GBIT(g) (1u << (g))
/* The event groups the rows of a group apply to: its own, and those it stands for. */
static const unsigned covers[N_GROUPS] = {
    [G_ANY] = GBIT(N_GROUPS) - 1,
    [G_COMFY] = GBIT(G_COMFY),
    [G_OLLAMA] = GBIT(G_OLLAMA),
    [G_LLAMACPP] = GBIT(G_LLAMACPP),
    [G_VLLM] = GBIT(G_VLLM),
    [G_TRAIN] = GBIT(G_TRAIN),
    [G_TORCH] = GBIT(G_TORCH) | GBIT(G_COMFY) | GBIT(G_TRAIN), /* any PyTorch-based tool */
    [G_TF] = GBIT(G_TF),
    [G_JAX] = GBIT(G_JAX),
    [G_NCCL] = GBIT(G_NCCL),
    [G_CUBLAS] = GBIT(G_CUBLAS),
    [G_BNB] = GBIT(G_BNB) | GBIT(G_BNB_CPU),
    [G_BNB_CPU] = GBIT(G_BNB_CPU),
};

enum change {
    CH_NONE = 0,  /* not an estimator change: saves from the event or unknown */
    CH_CTX,       /* context / sequence length to value */
    CH_KV8,       /* 8-bit KV cache */
    CH_USERS,     /* concurrent sequences to value */
    CH_EAGER,     /* vLLM --enforce-eager */
    CH_UTIL,      /* vLLM utilization to value (saves: the budget it adds) */
    CH_FREE_UTIL, /* vLLM utilization below what is free (not an estimator change) */
    CH_TP2,       /* two cards */
    CH_BATCH,     /* micro-batch / images at once to value */
    CH_CKPT,      /* gradient checkpointing */
    CH_ADAM8,     /* 8-bit AdamW */
    CH_BF16,      /* bf16 mixed precision instead of fp32 */
    CH_Q5,        /* GGUF Q5_K_M weights (12 GB cards) */
    CH_SWAP,      /* block swap: the fewest blocks that fit */
    CH_TECPU,     /* text encoders on the CPU */
    CH_LOWVRAM,   /* ComfyUI --lowvram */
    CH_LIGER,     /* Liger's fused cross-entropy and kernels */
    CH_LORA,      /* LoRA instead of full fine-tuning */
    CH_QLORA,     /* QLoRA (4-bit base) */
    CH_FP8,       /* fp8 weights */
    CH_Q8,        /* GGUF Q8_0 weights */
    CH_TILED,     /* VAE Decode (Tiled) */
    CH_RES,       /* width and height halved */
    CH_FRAMES,    /* 49 frames, 480p */
    CH_NGL,       /* a quarter of the layers on the CPU */
    CH_KILL,      /* other processes: saves what they hold */
    CH_FRAG,      /* allocator setting: saves the reserved-unallocated bytes */
    N_CHANGES
};

struct rule {
    enum group g;
    /* The causes it applies to: NULL any (host_ram and not_vram have their own fix); a
     * space-separated list: one of them is the cause or a secondary cause; "!c": any cause
     * but c (the row is listed earlier for c). */
    const char *causes;
    const char *title;
    const char *command; /* '#' = the computed value */
    enum change ch;
    const char *quality;
    double speed;
    const char *cost;
};

#define ANYC NULL
/* F-SPD-16: the row's speed factor is computed by the speed model (solve/speed_offload.c):
 * seconds per result before over after the change, on the log's card; 0 when it cannot be. */
#define SPD (-1.0)
static const struct rule rules[] = {
    /* the cause first: these free memory without touching the workload */
    {G_ANY, "other_process", "free the memory other processes hold",
     "nvidia-smi; ps aux | grep python; kill #", CH_KILL, "none", 1.0,
     "restart the stale Jupyter kernel or stop the other job"},
    {G_VLLM, "engine_reservation", "a utilization that fits what is free",
     "--gpu-memory-utilization #", CH_FREE_UTIL, "none", 1.0, "a smaller KV cache"},
    {G_ANY, "fragmentation", "let the allocator grow segments (set before import torch)",
     "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", CH_FRAG, "none", 1.0,
     "none; PyTorch >= 2.9 also reads PYTORCH_ALLOC_CONF"},
    {G_ANY, "fragmentation", "on PyTorch 1.x: cap the split size",
     "export PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128", CH_FRAG, "none", SPD,
     "smaller cached blocks"},
    {G_TRAIN, "leak", "accumulate the loss as a number, not a tensor", "total_loss += loss.item()",
     CH_NONE, "none", 1.0, "none"},
    {G_TRAIN, "leak", "evaluate without building a graph", "with torch.no_grad(): ...", CH_NONE,
     "none", 1.0, "none"},
    /* bitsandbytes (oom-formats 6): a CPU-only build first, then the fit */
    {G_BNB_CPU, ANYC, "a CUDA build of bitsandbytes (this one has no GPU support)",
     "pip install -U bitsandbytes (a CUDA wheel); check: python -m bitsandbytes", CH_NONE, "none",
     1.0, "none"},
    {G_BNB, "workload_too_large", "4-bit instead of 8-bit", "BitsAndBytesConfig(load_in_4bit=True)",
     CH_NONE, "minor", 1.0, "slightly lower quality"},
    {G_BNB, "workload_too_large", "offload what does not fit, kept in fp32 on the CPU",
     "BitsAndBytesConfig(llm_int8_enable_fp32_cpu_offload=True) + device_map with max_memory",
     CH_NONE, "none", SPD, "CPU layers at host memory speed"},
    /* TensorFlow (oom-formats 8) */
    {G_TF, "engine_reservation", "let TensorFlow grow its pool instead of taking the card",
     "tf.config.experimental.set_memory_growth(gpu, True) or TF_FORCE_GPU_ALLOW_GROWTH=true",
     CH_NONE, "none", 1.0, "none"},
    {G_TF, ANYC, "smaller batch", "model.fit(..., batch_size=<half>)", CH_NONE, "none", 1.0,
     "more steps per epoch"},
    /* the growth row once: first for engine_reservation (above), else in the guide's place */
    {G_TF, "!engine_reservation", "let TensorFlow grow its pool instead of taking the card",
     "tf.config.experimental.set_memory_growth(gpu, True) or TF_FORCE_GPU_ALLOW_GROWTH=true",
     CH_NONE, "none", 1.0, "none"},
    {G_TF, ANYC, "mixed precision", "tf.keras.mixed_precision.set_global_policy(\"mixed_float16\")",
     CH_NONE, "minor", 1.0, "loss scaling; faster on tensor cores"},
    /* JAX/XLA (oom-formats 9) */
    {G_JAX, "engine_reservation other_process unknown",
     "do not preallocate (set before importing jax)", "export XLA_PYTHON_CLIENT_PREALLOCATE=false",
     CH_NONE, "none", 1.0, "allocations as needed; fragmentation possible"},
    {G_JAX, "engine_reservation other_process unknown", "a smaller share per process",
     "export XLA_PYTHON_CLIENT_MEM_FRACTION=.50", CH_NONE, "none", 1.0,
     "each process gets that share of the card"},
    {G_JAX, ANYC, "smaller batch", "batch_size = <half>", CH_NONE, "none", 1.0,
     "more steps per epoch"},
    {G_JAX, ANYC, "recompute activations", "jax.checkpoint(f)", CH_NONE, "none", SPD,
     "recomputes the forward pass"},
    /* NCCL (oom-formats 11) */
    {G_NCCL, ANYC, "leave headroom for NCCL: smaller micro-batch",
     "per_device_train_batch_size=<half>", CH_NONE, "none", 1.0, "more steps"},
    {G_NCCL, ANYC, "smaller / fewer NCCL buffers",
     "export NCCL_BUFFSIZE=1048576 NCCL_MAX_NCHANNELS=4", CH_NONE, "none", SPD,
     "slower collectives"},
    {G_NCCL, ANYC, "check for other processes on the cards; confirm with the NCCL log",
     "nvidia-smi; export NCCL_DEBUG=INFO", CH_NONE, "none", 1.0, "none"},
    /* cuBLAS/cuDNN handle at start-up (oom-formats 10) */
    {G_CUBLAS, ANYC, "a card with free memory at start-up",
     "nvidia-smi; CUDA_VISIBLE_DEVICES=<a free card> python ...", CH_NONE, "none", 1.0, "none"},
    {G_CUBLAS, ANYC, "a smaller cuBLAS workspace", "export CUBLAS_WORKSPACE_CONFIG=:4096:8",
     CH_NONE, "none", 1.0, "none measurable"},
    {G_CUBLAS, ANYC, "a smaller model or more cards (device_map=\"auto\" with max_memory)",
     "from_pretrained(..., device_map=\"auto\", max_memory={0: \"20GiB\"})", CH_NONE, "none", 1.0,
     "spread over cards"},
    /* ComfyUI, in the guide's order */
    {G_COMFY, ANYC, "fp8 weights", "load the fp8_e4m3fn checkpoint (Load Diffusion Model)", CH_FP8,
     "minor", 1.0, "slight loss of fine detail"},
    {G_COMFY, ANYC, "GGUF Q8 weights", "ComfyUI-GGUF: Unet Loader (GGUF) with a Q8_0 file", CH_Q8,
     "minor", SPD, "dequantized per layer"},
    {G_COMFY, ANYC, "GGUF Q5 weights (12 GB cards)",
     "ComfyUI-GGUF: Unet Loader (GGUF) with a Q5_K_M file", CH_Q5, "minor", SPD,
     "some loss of detail; Q4_K_S loses more"},
    {G_COMFY, ANYC, "VAE Decode (Tiled)", "replace VAE Decode with VAE Decode (Tiled)", CH_TILED,
     "none", SPD, "overlapping tiles decode again"},
    {G_COMFY, ANYC, "one image at a time", "Empty Latent Image: batch_size #", CH_BATCH, "none",
     1.0, "same images, one after another"},
    {G_COMFY, ANYC, "lower resolution, then upscale", "Empty Latent Image: width/height #", CH_RES,
     "minor", 1.0, "upscale with a tiled upscaler"},
    {G_COMFY, ANYC, "fewer frames or 480p (video)", "length 49, 832x480", CH_FRAMES, "minor", 1.0,
     "shorter or smaller clip"},
    {G_COMFY, ANYC, "block swap (Wan video wrapper)", "WanVideo BlockSwap: blocks_to_swap #",
     CH_SWAP, "none", SPD, "the swapped blocks cross PCIe every step"},
    {G_COMFY, ANYC, "text encoders on the CPU", "Load CLIP: device cpu", CH_TECPU, "none", SPD,
     "slower prompt encoding"},
    {G_COMFY, ANYC, "offload as a last resort", "python main.py --lowvram --reserve-vram 2",
     CH_LOWVRAM, "none", SPD, "the weights cross PCIe every step"},
    /* Ollama */
    {G_OLLAMA, ANYC, "shorter context", "OLLAMA_CONTEXT_LENGTH=# (or num_ctx #)", CH_CTX, "minor",
     1.0, "forgets earlier parts of long chats"},
    {G_OLLAMA, ANYC, "8-bit KV cache", "OLLAMA_FLASH_ATTENTION=1 OLLAMA_KV_CACHE_TYPE=q8_0", CH_KV8,
     "none", 1.0, "none measurable"},
    {G_OLLAMA, ANYC, "some layers on the CPU", "num_gpu #", CH_NGL, "none", SPD,
     "CPU layers at host memory speed (ollama ps shows CPU/GPU)"},
    /* llama.cpp */
    {G_LLAMACPP, ANYC, "shorter context", "-c #", CH_CTX, "minor", 1.0,
     "forgets earlier parts of long chats"},
    {G_LLAMACPP, ANYC, "8-bit KV cache", "-ctk q8_0 -ctv q8_0 -fa on", CH_KV8, "none", 1.0,
     "none measurable"},
    {G_LLAMACPP, ANYC, "some layers on the CPU", "-ngl #", CH_NGL, "none", SPD,
     "the weights cross PCIe every step"},
    /* vLLM */
    {G_VLLM, "kv_cache", "give vLLM more of the card", "--gpu-memory-utilization #", CH_UTIL,
     "none", 1.0, "nothing else can share the card"},
    {G_VLLM, ANYC, "shorter maximum length", "--max-model-len #", CH_CTX, "minor", 1.0,
     "longer requests are refused"},
    {G_VLLM, ANYC, "8-bit KV cache", "--kv-cache-dtype fp8", CH_KV8, "minor", 1.0,
     "twice the tokens; a small accuracy cost"},
    {G_VLLM, ANYC, "fewer requests at once", "--max-num-seqs #", CH_USERS, "none", SPD,
     "lower throughput under load"},
    {G_VLLM, ANYC, "no CUDA graphs", "--enforce-eager", CH_EAGER, "none", SPD,
     "no CUDA graphs while decoding"},
    {G_VLLM, ANYC, "split over two cards", "--tensor-parallel-size 2", CH_TP2, "none", 1.0,
     "a second card"},
    /* training, in the guide's order */
    {G_TRAIN, ANYC, "smaller micro-batch, same effective batch", "#", CH_BATCH, "none", SPD,
     "no quality cost"},
    {G_TRAIN, ANYC, "gradient checkpointing", "gradient_checkpointing=True", CH_CKPT, "none", SPD,
     "recomputes the forward pass"},
    {G_TRAIN, ANYC, "fused cross-entropy (Liger kernels)", "use_liger_kernel=True", CH_LIGER,
     "none", 1.0, "pip install liger-kernel"},
    {G_TRAIN, ANYC, "bf16 mixed precision (Ampere or newer)", "bf16=True", CH_BF16, "none", 1.0,
     "none"},
    {G_TRAIN, ANYC, "8-bit AdamW", "optim=\"adamw_bnb_8bit\"", CH_ADAM8, "none", 1.0,
     "6 B/param less optimizer state"},
    {G_TRAIN, ANYC, "LoRA instead of full fine-tuning", "peft LoraConfig(r=16)", CH_LORA, "minor",
     1.0, "adapters, not the full model"},
    {G_TRAIN, ANYC, "QLoRA (4-bit base model)", "BitsAndBytesConfig(load_in_4bit=True) + LoRA",
     CH_QLORA, "minor", SPD, "4-bit base, dequantized per step"},
    {G_TRAIN, ANYC, "shorter sequences", "max_seq_length=#", CH_CTX, "minor", 1.0,
     "long examples are cut"},
    {G_TRAIN, ANYC, "shard over several cards (FSDP / ZeRO-3)", "accelerate launch --use_fsdp",
     CH_TP2, "none", SPD, "a second card"},
    /* any PyTorch-based tool with a heavy cache, when nothing else applies */
    {G_TORCH, "unknown workload_too_large", "measure the peak first",
     "torch.cuda.max_memory_allocated()", CH_NONE, "none", 1.0, "none"},
};

static bool is(const char *s, const char *v)
{
    return s && !vf__strcasecmp(s, v);
}

static bool in_list(const char *list, const char *word)
{
    if (!list)
        return true;
    size_t n = strlen(word);
    for (const char *p = list; (p = strstr(p, word)) != NULL; p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
            return true;
    return false;
}

static bool is_train_tool(const char *t)
{
    return is(t, "pytorch") || is(t, "deepspeed") || is(t, "accelerate") || is(t, "tensorflow") ||
           is(t, "jax");
}

/* The group of the event: the layer that printed it where that decides the fixes (a pool,
 * a handle, a library), else the tool. */
static enum group group_of(const char *tool, const struct vf_oom_event *ev,
                           const struct vf_oom_context *ctx)
{
    if (is(tool, "tensorflow"))
        return G_TF;
    if (is(tool, "jax") || is(ev->source, "xla"))
        return G_JAX;
    if (is(ev->source, "nccl"))
        return G_NCCL;
    if (is(ev->source, "cublas") || is(ev->source, "cudnn"))
        return G_CUBLAS;
    if (is(ev->source, "bitsandbytes"))
        return is(ev->backend, "cpu") ? G_BNB_CPU : G_BNB;
    if (is(tool, "comfyui"))
        return G_COMFY;
    if (is(tool, "ollama"))
        return G_OLLAMA;
    if (is(tool, "llamacpp") || is(tool, "llama.cpp"))
        return G_LLAMACPP;
    if (is(tool, "vllm"))
        return G_VLLM;
    bool steps = ctx && ctx->last_step != VF_UNKNOWN && ctx->last_step != 0;
    if (is_train_tool(tool) || (is(tool, "transformers") && steps))
        return G_TRAIN;
    return G_TORCH;
}

/* Whether row r is a fix for an event of group g with diagnosis d (struct rule.causes). */
static bool selects(const struct rule *r, enum group g, const struct vf_diagnosis *d)
{
    if (!(covers[r->g] & GBIT(g)))
        return false;
    if (!r->causes)
        return true;
    if (r->causes[0] == '!')
        return !is(d->cause, r->causes + 1);
    bool hit = in_list(r->causes, d->cause);
    for (size_t s = 0; s < d->n_secondary && !hit; s++)
        hit = in_list(r->causes, d->secondary[s]);
    return hit;
}

/* The workload the log describes, as far as it does. */
struct known {
    const struct vf_catalog *cat; /* for the card of the speed factor (F-SPD-16) */
    bool ok;                      /* model resolved and the engine estimated it */
    const char *missing;          /* why not */
    struct vf_model m;
    struct vf_workload w;
    struct vf_estimate est;
};

static const char *engine_of(enum group g, const char *tool)
{
    switch (g) {
    case G_VLLM:
        return "vllm";
    case G_LLAMACPP:
        return "llama.cpp";
    case G_OLLAMA:
        return "ollama";
    case G_COMFY:
        return "comfyui";
    case G_TRAIN:
        return "pytorch";
    default:
        return is(tool, "transformers") ? "transformers" : NULL;
    }
}

/* Fills *k with the workload the log (and opts->workload, for what the log does not show)
 * describes for group g, and its estimate: k->ok, or k->missing naming what is lacking. */
static void build(struct vf_arena *a, const struct vf_oom_event *ev,
                  const struct vf_oom_context *ctx, const struct vf_explain_opts *opts,
                  enum group g, const char *tool, struct known *k)
{
    memset(k, 0, sizeof *k);
    const char *engine = engine_of(g, tool);
    if (!ctx || !ctx->model) {
        k->missing = "the model: the log does not name it; pass --model";
        return;
    }
    if (!opts || !opts->catalog) {
        k->missing = "the catalog";
        return;
    }
    if (!engine) {
        k->missing = vf_arena_printf(a, "an engine we model for the tool '%s'; pass --tool",
                                     tool ? tool : "?");
        return;
    }
    struct vf_error e = {0};
    if (vf_model_resolve(a, opts->catalog, ctx->model, &k->m, &e)) {
        k->missing =
            vf_arena_printf(a, "the model: '%s' is not in the catalog; pass --model", ctx->model);
        return;
    }
    struct vf_workload *w = &k->w;
    if (opts->workload)
        *w = *opts->workload; /* the user's word, for what the log does not show */
    w->engine = engine;
    w->usable_bytes = ev->total_bytes;
    w->task = g == G_TRAIN ? VF_TASK_TRAIN : k->m.task;
    const struct vf_workload *said = opts->workload;
    uint64_t ctxt = ctx->ctx_tokens != VF_UNKNOWN ? ctx->ctx_tokens : said ? said->ctx_tokens : 0;
    uint64_t batch = ctx->batch != VF_UNKNOWN ? ctx->batch : 0;
    if (!batch && said)
        batch = w->task == VF_TASK_TRAIN                               ? said->train.batch
                : w->task == VF_TASK_IMAGE || w->task == VF_TASK_VIDEO ? said->diffusion.batch
                                                                       : said->users;
    if (w->task == VF_TASK_TRAIN) {
        if (!ctxt || !batch) {
            k->missing = !ctxt ? "the sequence length: the log does not show it (--seq)"
                               : "the micro-batch size: the log does not show it (--batch)";
            return;
        }
        w->ctx_tokens = ctxt;
        w->train.batch = batch > UINT32_MAX ? UINT32_MAX : (uint32_t)batch;
    } else if (w->task == VF_TASK_IMAGE || w->task == VF_TASK_VIDEO) {
        if (ctx->width && ctx->height) { /* the log's size wins over the user's */
            w->diffusion.width = ctx->width;
            w->diffusion.height = ctx->height;
        }
        if (ctx->frames)
            w->diffusion.frames = ctx->frames;
        w->diffusion.batch = batch > UINT32_MAX ? UINT32_MAX : (uint32_t)batch;
    } else {
        w->ctx_tokens = ctxt;
        w->users = batch;
    }
    if (g == G_VLLM && ctx->gpu_memory_utilization > 0.0) {
        w->opts.key[0] = "--gpu-memory-utilization";
        w->opts.value[0] = vf_arena_printf(a, "%.2f", ctx->gpu_memory_utilization);
        w->opts.n = 1;
    }
    if (vf_estimate(a, &k->m, w, &k->est, &e)) {
        k->missing = vf_arena_printf(a, "a workload the estimator accepts (%s)", e.msg);
        return;
    }
    k->ok = true;
}

/* Sets an engine option of w; false when VF_MAX_ENGINE_OPTS are taken (the fix then has no
 * saving rather than one computed without its change). */
static bool set_opt(struct vf_workload *w, const char *key, const char *value)
{
    for (size_t i = 0; i < w->opts.n; i++)
        if (!strcmp(w->opts.key[i], key)) {
            w->opts.value[i] = value;
            return true;
        }
    if (w->opts.n >= VF_MAX_ENGINE_OPTS)
        return false;
    w->opts.key[w->opts.n] = key;
    w->opts.value[w->opts.n++] = value;
    return true;
}

/* The context the workload runs at (0 = the model's maximum). */
static uint64_t eff_ctx(const struct known *k)
{
    if (k->est.ctx_tokens)
        return k->est.ctx_tokens;
    return k->w.ctx_tokens ? k->w.ctx_tokens : k->m.max_ctx_tokens;
}

/* ---------------------------------------------------------------- changes */

/* One rule being turned into a fix: the workload with its change applied. */
struct fixing {
    struct vf_arena *a;
    const struct rule *r;
    const struct known *k;
    const struct vf_oom_event *ev;
    const struct vf_oom_context *ctx; /* may be NULL */
    const char *arg;                  /* the change's argument (struct change_kind) */
    struct vf_workload w;             /* k->w with the change applied */
    const char *value;                /* what '#' in the command stands for ("" if none) */
    uint64_t c, b;                    /* the context and the batch the workload runs at */
};

/*
 * The apply_* functions make their change to x->w and set x->value. Each returns false when
 * the change does not apply to this workload (the fix is then listed without a saving).
 */
static bool apply_ctx(struct fixing *x)
{
    if (x->c == VF_UNKNOWN || x->c < 2048) {
        x->value = x->r->g == G_TRAIN ? "1024" : "16384";
        return false;
    }
    x->value = vf_arena_printf(x->a, "%llu", (unsigned long long)(x->c / 2 / 1024 * 1024));
    x->w.ctx_tokens = x->c / 2 / 1024 * 1024;
    return true;
}

static bool apply_kv8(struct fixing *x)
{
    struct vf_workload *w = &x->w;
    w->kv_dtype = x->r->g == G_VLLM ? VF_DT_FP8 : VF_DT_Q8_0;
    if (x->r->g == G_LLAMACPP && !set_opt(w, "-fa", "on"))
        return false;
    if (x->r->g == G_OLLAMA) {
        if (!set_opt(w, "OLLAMA_FLASH_ATTENTION", "1") ||
            !set_opt(w, "OLLAMA_KV_CACHE_TYPE", "q8_0"))
            return false;
        w->kv_dtype = VF_DT_DEFAULT;
    }
    return true;
}

static bool apply_users(struct fixing *x)
{
    if (x->b < 2) {
        x->value = "16";
        return false;
    }
    x->value = vf_arena_printf(x->a, "%llu", (unsigned long long)(x->b / 2));
    x->w.users = x->b / 2;
    return true;
}

/* An engine option with the value of the change's argument ("--enforce-eager"). */
static bool apply_opt(struct fixing *x)
{
    return set_opt(&x->w, x->arg, "");
}

static bool apply_util(struct fixing *x)
{
    double u =
        x->ctx && x->ctx->gpu_memory_utilization > 0.0 ? x->ctx->gpu_memory_utilization : 0.9;
    x->value = u < 0.95 ? "0.95" : "0.98";
    return set_opt(&x->w, "--gpu-memory-utilization", x->value);
}

/* Below free/total, in hundredths, rounded down, one hundredth of margin; not applied. */
static bool apply_free_util(struct fixing *x)
{
    const struct vf_oom_event *ev = x->ev;
    if (ev->total_bytes == VF_UNKNOWN || ev->free_bytes == VF_UNKNOWN || !ev->total_bytes ||
        ev->free_bytes > ev->total_bytes) {
        x->value = "0.8";
        return false;
    }
    uint64_t h = (uint64_t)((long double)ev->free_bytes * 100.0L / (long double)ev->total_bytes);
    x->value = h > 1 ? vf_arena_printf(x->a, "0.%02llu", (unsigned long long)(h - 1)) : "0.01";
    return false;
}

static bool apply_tp2(struct fixing *x)
{
    x->w.gpus = 2;
    if (x->w.task == VF_TASK_TRAIN)
        x->w.train.zero = VF_ZERO_3;
    return true;
}

static bool apply_batch(struct fixing *x)
{
    uint64_t b = x->b;
    if (x->r->g == G_TRAIN) {
        uint64_t nb = b / 4 ? b / 4 : 1;
        x->value = b >= 2 ? vf_arena_printf(x->a,
                                            "per_device_train_batch_size=%llu  "
                                            "gradient_accumulation_steps=%llu",
                                            (unsigned long long)nb, (unsigned long long)(b / nb))
                          : "per_device_train_batch_size=1  gradient_accumulation_steps=N";
        x->w.train.batch = (uint32_t)nb;
        return b >= 2;
    }
    x->value = "1";
    x->w.diffusion.batch = 1;
    return b >= 2;
}

static bool apply_ckpt(struct fixing *x)
{
    x->w.train.grad_checkpointing = VF_GC_FULL;
    return x->k->w.train.grad_checkpointing != VF_GC_FULL;
}

static bool apply_adam8(struct fixing *x)
{
    x->w.train.optimizer = VF_OPT_ADAMW8BIT;
    return x->k->w.train.optimizer == VF_OPT_ADAMW;
}

static bool apply_bf16(struct fixing *x)
{
    x->w.train.precision = VF_PREC_BF16;
    return x->k->w.train.precision == VF_PREC_FP32;
}

static bool apply_liger(struct fixing *x)
{
    x->w.train.liger = true;
    return !x->k->w.train.liger;
}

static bool apply_lora(struct fixing *x)
{
    x->w.train.method = VF_TRAIN_LORA;
    return true;
}

static bool apply_qlora(struct fixing *x)
{
    x->w.train.method = VF_TRAIN_QLORA;
    return true;
}

/* Weights stored as the change's argument ("fp8", "q8_0", "Q5_K_M"). */
static bool apply_weights(struct fixing *x)
{
    return !vf_quant_parse(x->arg, &x->w.weights, NULL);
}

static bool apply_te_cpu(struct fixing *x)
{
    x->w.diffusion.text_encoder = VF_TE_CPU;
    return x->k->ok && x->k->w.diffusion.text_encoder != VF_TE_CPU;
}

static bool apply_lowvram(struct fixing *x)
{
    x->w.diffusion.offload = VF_DOFF_LOWVRAM;
    return x->k->ok && x->k->w.diffusion.offload == VF_DOFF_NONE;
}

/* F-DIF-13: the fewest blocks in host RAM that fit the card */
static bool apply_swap(struct fixing *x)
{
    const struct known *k = x->k;
    uint64_t total = x->ev->total_bytes;
    if (!k->ok || !k->m.pipeline || !total || total == VF_UNKNOWN) {
        x->value = "20";
        return false;
    }
    uint32_t lo = 1, hi = k->m.pipeline->layers, found = hi;
    x->w.diffusion.offload = VF_DOFF_BLOCK_SWAP;
    while (lo <= hi) {
        struct vf_estimate y;
        uint32_t mid = lo + (hi - lo) / 2;
        x->w.diffusion.block_swap = mid;
        if (!vf_estimate(x->a, &k->m, &x->w, &y, NULL) && y.total_bytes <= total) {
            found = mid;
            hi = mid - 1;
        } else {
            lo = mid + 1;
        }
    }
    x->w.diffusion.block_swap = found;
    x->value = vf_arena_printf(x->a, "%u", found);
    return true;
}

static bool apply_tiled(struct fixing *x)
{
    x->w.diffusion.tiled_vae = true;
    return true;
}

static bool apply_res(struct fixing *x)
{
    const struct known *k = x->k;
    const struct vf_oom_context *ctx = x->ctx;
    uint32_t wd = ctx && ctx->width ? ctx->width : k->ok ? k->w.diffusion.width : 0;
    uint32_t ht = ctx && ctx->height ? ctx->height : k->ok ? k->w.diffusion.height : 0;
    if (wd < 512 || ht < 512) {
        x->value = "1024x1024";
        return false;
    }
    x->w.diffusion.width = wd / 2 / 16 * 16;
    x->w.diffusion.height = ht / 2 / 16 * 16;
    x->value = vf_arena_printf(x->a, "%ux%u", x->w.diffusion.width, x->w.diffusion.height);
    return true;
}

static bool apply_frames(struct fixing *x)
{
    if (x->w.task != VF_TASK_VIDEO)
        return false;
    x->w.diffusion.frames = 49;
    x->w.diffusion.width = 832;
    x->w.diffusion.height = 480;
    return true;
}

static bool apply_ngl(struct fixing *x)
{
    uint32_t n = x->k->ok ? x->k->m.n_layers : 0;
    if (!n) {
        x->value = "20";
        return false;
    }
    x->value = vf_arena_printf(x->a, "%u", n - n / 4);
    return set_opt(&x->w, "-ngl", x->value) && x->r->g == G_LLAMACPP;
}

/* The PID to stop; not a workload change. */
static bool apply_kill(struct fixing *x)
{
    x->value = x->ev->n_procs ? vf_arena_printf(x->a, "%u", x->ev->procs[0].pid) : "PID";
    return false;
}

/*
 * The saves_* functions fill f->saves_bytes, or f->missing with what it would need.
 */
static void saves_held(const struct fixing *x, struct vf_fix *f)
{
    const struct vf_oom_event *ev = x->ev;
    uint64_t s = 0;
    for (size_t i = 0; i < ev->n_procs && i < VF_OOM_MAX_PROCS; i++)
        s = vf__sat_add(s, ev->procs[i].bytes);
    if (ev->n_procs && s != VF_UNKNOWN)
        f->saves_bytes = s; /* what the message says they hold */
    else
        f->missing = "which process: the message names none; run nvidia-smi";
}

static void saves_cache(const struct fixing *x, struct vf_fix *f)
{
    if (x->ev->reserved_unallocated_bytes != VF_UNKNOWN)
        f->saves_bytes = x->ev->reserved_unallocated_bytes; /* made usable, not freed */
    else
        f->missing = "the reserved-but-unallocated figure: the message does not give it";
}

static void saves_unknown(const struct fixing *x, struct vf_fix *f)
{
    (void)x;
    f->missing = "a change vramfit does not estimate";
}

/* not a smaller need: the budget vLLM may use grows by (new - old) x card total */
static void saves_budget(const struct fixing *x, struct vf_fix *f)
{
    const struct vf_oom_context *ctx = x->ctx;
    double old = ctx && ctx->gpu_memory_utilization > 0.0 ? ctx->gpu_memory_utilization : 0.9;
    double nu = !strcmp(x->value, "0.95") ? 0.95 : 0.98;
    if (x->ev->total_bytes != VF_UNKNOWN && nu > old)
        f->saves_bytes = (uint64_t)((long double)(nu - old) * (long double)x->ev->total_bytes);
    else
        f->missing = "the card's total: the message does not give it";
}

/* F-OOM-20: saves = estimate(before).total - estimate(after).total. */
static void saves_estimated(const struct fixing *x, struct vf_fix *f)
{
    struct vf_estimate after;
    struct vf_error e = {0};
    if (vf_estimate(x->a, &x->k->m, &x->w, &after, &e)) {
        f->missing = vf_arena_printf(x->a, "an estimate of the changed workload (%s)", e.msg);
        return;
    }
    uint64_t before = x->k->est.total_bytes;
    f->saves_bytes = before != VF_UNKNOWN && after.total_bytes != VF_UNKNOWN
                         ? (before > after.total_bytes ? before - after.total_bytes : 0)
                         : VF_UNKNOWN;
    if (f->saves_bytes == VF_UNKNOWN)
        f->missing = "an estimate in bytes";
}

struct change_kind {
    bool (*apply)(struct fixing *x); /* NULL: nothing to apply */
    /* what it saves; NULL: estimate(before) - estimate(after), saves_estimated() */
    void (*saves)(const struct fixing *x, struct vf_fix *f);
    bool from_event;       /* saves reads the event alone: no workload needed */
    const char *unchanged; /* f->missing when apply() returns false (NULL: not modelled) */
    const char *arg;       /* for apply(): an option, a weight type */
};

static const struct change_kind changes[N_CHANGES] = {
    [CH_NONE] = {.saves = saves_unknown, .from_event = true},
    [CH_CTX] = {.apply = apply_ctx, .unchanged = "the context length: the log does not show it"},
    [CH_KV8] = {.apply = apply_kv8},
    [CH_USERS] = {.apply = apply_users,
                  .unchanged = "the batch: the log does not show it (or it is already 1)"},
    [CH_EAGER] = {.apply = apply_opt, .arg = "--enforce-eager"},
    [CH_UTIL] = {.apply = apply_util, .saves = saves_budget},
    [CH_FREE_UTIL] = {.apply = apply_free_util, .saves = saves_unknown, .from_event = true},
    [CH_TP2] = {.apply = apply_tp2},
    [CH_BATCH] = {.apply = apply_batch,
                  .unchanged = "the batch: the log does not show it (or it is already 1)"},
    [CH_CKPT] = {.apply = apply_ckpt},
    [CH_ADAM8] = {.apply = apply_adam8},
    [CH_BF16] = {.apply = apply_bf16},
    [CH_Q5] = {.apply = apply_weights, .arg = "Q5_K_M"},
    [CH_SWAP] = {.apply = apply_swap},
    [CH_TECPU] = {.apply = apply_te_cpu},
    [CH_LOWVRAM] = {.apply = apply_lowvram},
    [CH_LIGER] = {.apply = apply_liger},
    [CH_LORA] = {.apply = apply_lora},
    [CH_QLORA] = {.apply = apply_qlora},
    [CH_FP8] = {.apply = apply_weights, .arg = "fp8"},
    [CH_Q8] = {.apply = apply_weights, .arg = "q8_0"},
    [CH_TILED] = {.apply = apply_tiled},
    [CH_RES] = {.apply = apply_res, .unchanged = "the resolution: the log does not show it"},
    [CH_FRAMES] = {.apply = apply_frames},
    [CH_NGL] = {.apply = apply_ngl},
    [CH_KILL] = {.apply = apply_kill, .saves = saves_held, .from_event = true},
    [CH_FRAG] = {.saves = saves_cache, .from_event = true},
};

/* Fills one fix from a rule: its command with '#' replaced, and what it saves (F-OOM-20). */
static void make_fix(struct vf_arena *a, const struct rule *r, const struct known *k,
                     const struct vf_oom_event *ev, const struct vf_oom_context *ctx,
                     struct vf_fix *f)
{
    const struct change_kind *ck = &changes[r->ch];
    struct fixing x = {.a = a, .r = r, .k = k, .ev = ev, .ctx = ctx, .arg = ck->arg, .w = k->w};
    x.value = "";
    x.c = k->ok ? eff_ctx(k) : (ctx ? ctx->ctx_tokens : VF_UNKNOWN);
    x.b = ctx && ctx->batch != VF_UNKNOWN ? ctx->batch : 0;
    if (!x.b && k->ok) /* the batch the user said */
        x.b = k->w.task == VF_TASK_TRAIN                                 ? k->w.train.batch
              : k->w.task == VF_TASK_IMAGE || k->w.task == VF_TASK_VIDEO ? k->w.diffusion.batch
                                                                         : k->w.users;
    bool changed = ck->apply && ck->apply(&x);
    const char *hash = strchr(r->command, '#');
    *f = (struct vf_fix){
        .title = r->title,
        .command = hash ? vf_arena_printf(a, "%.*s%s%s", (int)(hash - r->command), r->command,
                                          x.value, hash + 1)
                        : r->command,
        .saves_bytes = VF_UNKNOWN,
        .quality = r->quality,
        .speed_factor = r->speed,
        .cost = r->cost,
    };
    if (r->speed < 0) /* F-SPD-16 */
        f->speed_factor = changed && k->ok ? vf__fix_speed(a, k->cat, k->w.gpu, ev->total_bytes,
                                                           &k->m, &k->w, &k->est, &x.w)
                                           : 0;
    if (ck->from_event)
        ck->saves(&x, f);
    else if (!k->ok)
        f->missing = k->missing;
    else if (!changed)
        f->missing = ck->unchanged ? ck->unchanged : "not modelled for this workload";
    else
        (ck->saves ? ck->saves : saves_estimated)(&x, f);
}

/* ---------------------------------------------------------------- explain */

static bool fix_is_free(const struct vf_fix *f, uint64_t need)
{
    return is(f->quality, "none") && f->speed_factor >= 1.0 && f->saves_bytes != VF_UNKNOWN &&
           need != VF_UNKNOWN && f->saves_bytes >= need;
}

/* The cheapest offer of one card in EUR whose usable bytes exceed `need` (F-OOM-21b). */
static void cheapest_over(const struct vf_catalog *c, uint64_t need, struct vf_explain *x)
{
    for (size_t i = 0; i < c->n_offers; i++) {
        const struct vf_offer *o = &c->offers[i];
        if (o->count != 1 || strcmp(o->currency, "EUR") || o->price_micro == VF_UNKNOWN)
            continue;
        const struct vf_gpu_spec *g = vf_catalog_gpu(c, o->gpu_id);
        if (!g || g->usable_bytes == VF_UNKNOWN || g->usable_bytes <= need)
            continue;
        if (!x->bigger_offer || o->price_micro < x->bigger_offer->price_micro) {
            x->bigger_offer = o;
            x->bigger_card = g;
        }
    }
}

/* The next free fix of out, or NULL (out marked incomplete) when VF_MAX_FIXES are taken. */
static struct vf_fix *next_fix(struct vf_explain *out)
{
    if (out->n_fixes >= VF_MAX_FIXES) {
        vf__diagnose_incomplete(&out->diagnosis, "more than 16 fixes (VF_MAX_FIXES)");
        return NULL;
    }
    return &out->fixes[out->n_fixes++];
}

/* Causes where the card's memory is not what ran out: their one fix instead of the rules. */
static const struct {
    const char *cause;
    struct vf_fix fix;
} dead_ends[] = {
    {"host_ram",
     {"more host RAM or swap; load with mmap",
      "low_cpu_mem_usage=True; docker run --memory/--shm-size", VF_UNKNOWN,
      "host RAM is not what vramfit estimates", "none", 1.0, "a bigger GPU does not help"}},
    {"not_vram",
     {"smaller kernel tiles", "num_stages=2 (or smaller BLOCK sizes)", VF_UNKNOWN,
      "shared memory per block is not VRAM", "none", 0.0 /* unknown: not a workload change */,
      "or update the library; a newer GPU architecture has more"}},
};

/* Causes where the memory is there, held or split: a bigger card is not the answer. */
static const char *const no_bigger_card = "host_ram not_vram other_process fragmentation leak "
                                          "engine_reservation";

/* F-OOM-14: the estimator's view of the whole workload against the card; an estimate larger
 * than the card turns an unknown cause into workload_too_large. */
static void estimate_evidence(struct vf_arena *a, const struct known *k,
                              const struct vf_oom_event *ev, struct vf_diagnosis *d)
{
    char b1[48], b2[48];
    if (!k->ok || ev->total_bytes == VF_UNKNOWN || k->est.total_bytes == VF_UNKNOWN)
        return;
    bool over = k->est.total_bytes > ev->total_bytes;
    vf__diagnose_add(
        d, vf_arena_printf(a, "F-OOM-14: the estimate for %s on %s needs %s of the card's %s%s",
                           k->m.name ? k->m.name : k->m.id, k->w.engine,
                           vf_format_bytes(b1, sizeof b1, k->est.total_bytes, VF_FMT_IEC),
                           vf_format_bytes(b2, sizeof b2, ev->total_bytes, VF_FMT_IEC),
                           over ? ": the workload is larger than the card" : ""));
    if (over && is(d->cause, "unknown"))
        d->cause = "workload_too_large";
}

/* The fixes: a dead end's one fix, else every row of `rules` selects() takes, in order. */
static void list_fixes(struct vf_arena *a, const struct known *k, enum group g,
                       const struct vf_oom_event *ev, const struct vf_oom_context *ctx,
                       struct vf_explain *out)
{
    const struct vf_diagnosis *d = &out->diagnosis;
    for (size_t i = 0; i < sizeof dead_ends / sizeof dead_ends[0]; i++) {
        if (!is(d->cause, dead_ends[i].cause))
            continue;
        struct vf_fix *f = next_fix(out);
        if (f)
            *f = dead_ends[i].fix;
        return;
    }
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
        if (!selects(&rules[i], g, d))
            continue;
        struct vf_fix *f = next_fix(out);
        if (!f)
            break;
        make_fix(a, &rules[i], k, ev, ctx, f);
    }
}

/* The cheapest bigger card (F-OOM-21), when no fix covers the shortfall for free: the
 * cheapest offer vf_pick finds for the estimated workload, else the cheapest single card
 * with more than total + shortfall usable. */
static void bigger_card(struct vf_arena *a, const struct known *k, const struct vf_oom_event *ev,
                        const struct vf_catalog *catalog, struct vf_explain *out)
{
    struct vf_diagnosis *d = &out->diagnosis;
    if (!catalog || (d->cause && in_list(no_bigger_card, d->cause)))
        return;
    uint64_t short_by = VF_UNKNOWN;
    if (ev->requested_bytes != VF_UNKNOWN && ev->free_bytes != VF_UNKNOWN &&
        ev->requested_bytes > ev->free_bytes)
        short_by = ev->requested_bytes - ev->free_bytes;
    if (k->ok && k->est.total_bytes != VF_UNKNOWN && ev->total_bytes != VF_UNKNOWN &&
        k->est.total_bytes > ev->total_bytes)
        short_by = k->est.total_bytes - ev->total_bytes;
    for (size_t i = 0; i < out->n_fixes; i++)
        if (fix_is_free(&out->fixes[i], short_by))
            return;
    if (k->ok) {
        struct vf_pick p;
        struct vf_workload w = k->w;
        w.usable_bytes = VF_UNKNOWN;
        w.gpus = 1;
        struct vf_error e = {0};
        if (!vf_pick(a, catalog, &k->m, &w, NULL, &p, &e) && p.n_rows) {
            out->bigger_card = p.rows[0].gpu;
            out->bigger_offer = p.rows[0].offer;
            vf__diagnose_add(d, "F-OOM-21a: bigger card: the cheapest offer vf_pick finds for "
                                "the estimated workload");
            return;
        }
    }
    uint64_t need = ev->total_bytes != VF_UNKNOWN && short_by != VF_UNKNOWN
                        ? vf__sat_add(ev->total_bytes, short_by)
                        : VF_UNKNOWN;
    if (need == VF_UNKNOWN)
        return;
    cheapest_over(catalog, need, out);
    char b[48];
    if (out->bigger_card)
        vf__diagnose_add(d, vf_arena_printf(a,
                                            "F-OOM-21b: bigger card: the cheapest single card "
                                            "with more than total + shortfall = %s usable",
                                            vf_format_bytes(b, sizeof b, need, VF_FMT_IEC)));
}

static enum vf_err explain(struct vf_arena *a, const struct vf_oom_event *events, size_t n_events,
                           uint64_t n_total, const struct vf_oom_context *ctx,
                           const struct vf_explain_opts *opts, struct vf_explain *out,
                           struct vf_error *err)
{
    memset(out, 0, sizeof *out);
    out->events = events;
    out->n_events = n_events;
    out->n_total = n_total;
    out->ctx = ctx;
    vf__symptoms_explain(a, ctx);
    if (!n_events || !events)
        return VF_OK;
    const struct vf_oom_event *ev = &events[n_events - 1];
    const char *tool = opts && opts->tool ? opts->tool : ev->tool;
    enum vf_err rc = vf__diagnose(a, ev, ctx, &out->diagnosis, err);
    if (rc)
        return rc;
    enum group g = group_of(tool, ev, ctx);
    struct known *k = vf_arena_alloc(a, sizeof *k);
    if (!k)
        return vf__errf(err, VF_ENOMEM, "explain: out of memory");
    build(a, ev, ctx, opts, g, tool, k);
    k->cat = opts ? opts->catalog : NULL;
    estimate_evidence(a, k, ev, &out->diagnosis);
    list_fixes(a, k, g, ev, ctx, out);
    bigger_card(a, k, ev, opts ? opts->catalog : NULL, out);
    return VF_OK;
}

enum vf_err vf_explain(struct vf_arena *a, const struct vf_oom_event *events, size_t n_events,
                       uint64_t n_total, const struct vf_oom_context *ctx,
                       const struct vf_explain_opts *opts, struct vf_explain *out,
                       struct vf_error *err)
{
    enum vf_err rc = explain(a, events, n_events, n_total, ctx, opts, out, err);
    const char *why = out->diagnosis.incomplete;
    if (!rc && why) /* a limit is an error, never an explanation with parts left out */
        rc = vf__errf(err, strncmp(why, "out of memory", 13) ? VF_ELIMIT : VF_ENOMEM,
                      "explain: %s: the explanation would leave some out", why);
    return rc;
}
