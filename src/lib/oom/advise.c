/* SPDX-License-Identifier: Apache-2.0 */
/*
 * advise.c - the fixes for an out-of-memory event, per tool, platform and job, and
 * vf_explain() (F-OOM-20..).
 *
 * Two tables drive it. `rules` lists the fixes in the order our guide tries them (rows are
 * selected top to bottom and listed in that order, see selects()); `changes` says, per kind
 * of change, how a fix's change is made to the workload and how what it saves is found.
 *
 * How to add a rule: add a row to `rules` below, in the place our guide's fix order puts it.
 * A row is tagged with what it applies to (issue 19): the tool group (G_* below, widened by
 * `covers`), the platforms (P_*, 0 = any), the job kinds (J_*, 0 = any) and the causes
 * (see struct rule), plus an optional `when` test on the event's own figures. Then the
 * title and the exact line to type ('#' in the command is replaced by the value the change
 * computes), the change it makes to the workload (enum change; its row in `changes` makes
 * it), and what it costs (quality none|minor|major, speed factor, words). What a fix saves
 * is never a fixed share: it is estimate(before) - estimate(after) with the change applied
 * (F-OOM-20), at the phase that failed; when the workload is not known well enough the fix
 * says what is missing.
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
    G_TORCH,   /* PyTorch scripts and libraries: transformers, diffusers, deepspeed, ... */
    G_SCRIPT,  /* rows only: the G_TORCH events without ComfyUI's (its ladder is its own) */
    G_TF,      /* TensorFlow, its BFC pool and the cuBLAS/cuDNN handles it creates */
    G_JAX,     /* JAX/XLA */
    G_NCCL,    /* NCCL buffers in a distributed job */
    G_CUBLAS,  /* cuBLAS/cuDNN handle creation outside TensorFlow */
    G_BNB,     /* transformers + bitsandbytes loading a quantized model */
    G_BNB_CPU, /* the same with a bitsandbytes build that has no GPU support */
    N_GROUPS
};

/* The group's name: the tools tag of its rows (struct vf_fix.tag_tools). */
static const char *const group_names[N_GROUPS] = {
    [G_ANY] = "any",
    [G_COMFY] = "comfyui",
    [G_OLLAMA] = "ollama",
    [G_LLAMACPP] = "llamacpp",
    [G_VLLM] = "vllm",
    [G_TORCH] = "pytorch",
    [G_SCRIPT] = "pytorch",
    [G_TF] = "tensorflow",
    [G_JAX] = "jax",
    [G_NCCL] = "nccl",
    [G_CUBLAS] = "cublas",
    [G_BNB] = "bitsandbytes",
    [G_BNB_CPU] = "bitsandbytes-cpu",
};

#define GBIT(g) (1u << (g))
/* The event groups the rows of a group apply to: its own, and those it stands for. */
static const unsigned covers[N_GROUPS] = {
    [G_ANY] = GBIT(N_GROUPS) - 1,
    [G_COMFY] = GBIT(G_COMFY),
    [G_OLLAMA] = GBIT(G_OLLAMA),
    [G_LLAMACPP] = GBIT(G_LLAMACPP),
    [G_VLLM] = GBIT(G_VLLM),
    [G_TORCH] = GBIT(G_TORCH) | GBIT(G_COMFY), /* any PyTorch-based tool */
    [G_SCRIPT] = GBIT(G_TORCH),
    [G_TF] = GBIT(G_TF),
    [G_JAX] = GBIT(G_JAX),
    [G_NCCL] = GBIT(G_NCCL),
    [G_CUBLAS] = GBIT(G_CUBLAS),
    [G_BNB] = GBIT(G_BNB) | GBIT(G_BNB_CPU),
    [G_BNB_CPU] = GBIT(G_BNB_CPU),
};

/* Platforms (the event's backend): a rule's `plat`, 0 = any. */
enum { P_CUDA = 1, P_ROCM = 2, P_MPS = 4, P_XPU = 8, P_CPU = 16 };
#define P_CARDS (P_CUDA | P_ROCM | P_XPU) /* discrete cards with a process table */
static const char *const plat_names[] = {"cuda", "rocm", "mps", "xpu", "cpu"};

/* Job kinds: a rule's `jobs`, 0 = any. J_NONE: the log and the model do not show it. */
enum { J_IMAGE = 1, J_INFER = 2, J_TRAIN = 4, J_NONE = 8 };
static const char *const job_names[] = {"image", "infer", "train", "unknown"};

enum change {
    CH_NONE = 0,  /* not an estimator change: saves from the event or unknown */
    CH_CTX,       /* context / sequence length to value */
    CH_SEQ_N,     /* vLLM --max-model-len to the engine's own N, block-rounded */
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
    CH_Q4,        /* GGUF Q4_K_M weights (llama.cpp: a smaller quant) */
    CH_SWAP,      /* block swap: the fewest blocks that fit */
    CH_TECPU,     /* text encoders on the CPU */
    CH_LOWVRAM,   /* ComfyUI --lowvram */
    CH_LIGER,     /* Liger's fused cross-entropy and kernels */
    CH_LORA,      /* LoRA instead of full fine-tuning */
    CH_QLORA,     /* QLoRA (4-bit base) */
    CH_FP8,       /* fp8 weights */
    CH_Q8,        /* GGUF Q8_0 weights */
    CH_TILED,     /* VAE Decode (Tiled) */
    CH_SLICED,    /* diffusers vae.enable_slicing(): one sample at a time (F-DIF-16) */
    CH_TINYVAE,   /* diffusers AutoencoderTiny (TAESD) for the decode (F-DIF-16) */
    CH_SDPA,      /* diffusers' SDPA processor instead of the eager one (F-DIF-18) */
    CH_RES,       /* width and height halved */
    CH_FRAMES,    /* 49 frames, 480p */
    CH_NGL,       /* the most layers on the GPU that fit */
    CH_UBATCH,    /* llama.cpp -ub / -b to 256 */
    CH_KILL,      /* other processes: saves what they hold */
    CH_FREE_GAP,  /* vLLM start-up: saves total - free (what others hold) */
    CH_MPS_OTHER, /* MPS: other allocations of the unified memory */
    CH_FRAG,      /* allocator setting: saves the reserved-unallocated bytes */
    N_CHANGES
};

struct sit; /* the event as the rules see it (below) */

struct rule {
    enum group g;
    /* The causes it applies to: NULL any but host_ram and not_vram (those name themselves);
     * a space-separated list: one of them is the cause or a secondary cause; "!c": any
     * cause but c (the row is listed earlier for c). */
    const char *causes;
    const char *title;
    const char *command; /* '#' = the computed value */
    enum change ch;
    const char *quality;
    double speed;
    const char *cost;
    unsigned plat, jobs;               /* P_* and J_* bits; 0 = any */
    bool (*when)(const struct sit *s); /* NULL: always */
};

/* The event as the rules see it: its group, platform, job, diagnosis and figures. */
struct sit {
    enum group g;
    unsigned plat, job;
    const struct vf_diagnosis *d;
    const struct vf_oom_event *ev;
    const struct vf_oom_context *ctx; /* may be NULL */
    const struct vf_model *m;         /* the resolved model, or NULL */
    const struct vf_estimate *est;    /* the workload's estimate, or NULL (not known) */
};

static bool is(const char *s, const char *v)
{
    return s && !vf__strcasecmp(s, v);
}

static bool has(const char *s, const char *needle)
{
    return s && strstr(s, needle);
}

static const char *phase_of(const struct sit *s)
{
    return s->ctx ? s->ctx->phase : NULL;
}

/* ---------------------------------------------------------------- when */

/* PyTorch 1.x (and 2.0): its message advises max_split_size_mb in the old format; no
 * expandable_segments before 2.1 (c10/cuda/CUDACachingAllocator.cpp, v2.1.0). */
static bool w_torch1(const struct sit *s)
{
    const char *v = s->ctx ? s->ctx->tool_version : NULL;
    return (s->ev->pattern && !strncmp(s->ev->pattern, "pytorch-1", 9)) || has(v, "torch 1.") ||
           has(v, "torch<2");
}

/* The reserved-but-unallocated bytes plus the free ones cover the request: with segments
 * that grow, the allocator would have served it (F-OOM-11). */
static bool w_ru_covers(const struct sit *s)
{
    const struct vf_oom_event *ev = s->ev;
    return ev->reserved_unallocated_bytes != VF_UNKNOWN && ev->reserved_unallocated_bytes &&
           ev->requested_bytes != VF_UNKNOWN && ev->free_bytes != VF_UNKNOWN &&
           vf__sat_add(ev->reserved_unallocated_bytes, ev->free_bytes) >= ev->requested_bytes &&
           !w_torch1(s);
}

static bool w_frag_2x(const struct sit *s)
{
    return !w_torch1(s) && !w_ru_covers(s);
}

/* vLLM's start-up check: "Free memory on device (F/T GiB) on startup is less than desired":
 * T - F is held by others before vLLM allocated anything. */
static bool w_vllm_startup(const struct sit *s)
{
    return has(s->ev->text, "Free memory on device") && s->ev->free_bytes != VF_UNKNOWN &&
           s->ev->total_bytes != VF_UNKNOWN && s->ev->free_bytes < s->ev->total_bytes;
}

/* F-OOM-22b: vLLM needs its weights, activation peak, non-torch memory and CUDA graphs before
 * any KV cache: when the estimate of those exceeds what was free at start-up, no utilization
 * makes the model fit next to the other process. */
static bool vllm_cannot_hold(const struct vf_estimate *e, const struct vf_oom_event *ev)
{
    if (!e || ev->free_bytes == VF_UNKNOWN)
        return false;
    uint64_t need = 0;
    for (size_t i = 0; i < e->n_components; i++)
        if (strcmp(e->components[i].name, "kv_cache") && e->components[i].device != VF_DEV_HOST)
            need = vf__sat_add(need, e->components[i].bytes);
    return need > ev->free_bytes;
}

static bool w_startup_cannot_hold(const struct sit *s)
{
    return w_vllm_startup(s) && vllm_cannot_hold(s->est, s->ev);
}

static bool w_startup_can_hold(const struct sit *s)
{
    return w_vllm_startup(s) && !vllm_cannot_hold(s->est, s->ev);
}

/* vLLM names the longest context its KV cache holds (V0 "(N)", V1 "maximum model length
 * is N"). */
static uint64_t vllm_kv_tokens(const struct vf_oom_event *ev)
{
    if (!ev->text)
        return VF_UNKNOWN;
    size_t n = strlen(ev->text);
    uint64_t t = vf__oom_u64_after(ev->text, n, "stored in KV cache (");
    return t != VF_UNKNOWN ? t : vf__oom_u64_after(ev->text, n, "maximum model length is ");
}

static bool w_vllm_sampler(const struct sit *s)
{
    return has(s->ev->text, "sampler");
}

static bool w_not_startup_sampler(const struct sit *s)
{
    return !w_vllm_startup(s) && !w_vllm_sampler(s);
}

static bool w_vllm_seq(const struct sit *s)
{
    return vllm_kv_tokens(s->ev) != VF_UNKNOWN;
}

static bool w_not_vllm_seq(const struct sit *s)
{
    return !w_vllm_seq(s);
}

/* "No available memory for the cache blocks": the weights left no KV cache at all. */
static bool w_no_blocks(const struct sit *s)
{
    return has(s->ev->text, "No available memory");
}

static bool w_util_below(const struct sit *s)
{
    return !s->ctx || !(s->ctx->gpu_memory_utilization >= 0.95);
}

static bool w_not_no_blocks(const struct sit *s)
{
    return !w_no_blocks(s);
}

/* llama.cpp: which buffer failed (the log's phase, or the row that matched). */
static bool w_buf_weights(const struct sit *s)
{
    return is(phase_of(s), "weights") || has(s->ev->text, "load_tensors") ||
           has(s->ev->text, "alloc_tensor_range");
}

static bool w_buf_kv(const struct sit *s)
{
    return is(phase_of(s), "kv") && !w_buf_weights(s);
}

static bool w_buf_compute(const struct sit *s)
{
    return (is(phase_of(s), "compute") || has(s->ev->pattern, "gallocr") ||
            has(s->ev->pattern, "compute-buffers")) &&
           !w_buf_weights(s) && !w_buf_kv(s);
}

static bool w_buf_unknown(const struct sit *s)
{
    return !w_buf_weights(s) && !w_buf_kv(s) && !w_buf_compute(s);
}

static bool w_buf_not_kv_compute(const struct sit *s)
{
    return !w_buf_kv(s) && !w_buf_compute(s);
}

static bool w_buf_kv_compute(const struct sit *s)
{
    return w_buf_kv(s) || w_buf_compute(s);
}

/* MoE: --n-cpu-moe keeps the experts of N layers on the CPU; shown when the model has
 * experts, or is not known. */
static bool w_moe_maybe(const struct sit *s)
{
    return (!s->m || s->m->n_experts > 1) && !w_buf_kv(s) && !w_buf_compute(s);
}

/* Eager attention's scores (batch x heads x tokens x tokens) are what failed: the traceback
 * names the attention code (phase "attention"), or one request is larger than the whole
 * card, or a quarter of it in a job that is a transformer's inference (the log shows
 * generate() or names the model). A weight or one layer's activation is not that large;
 * the scores and a long prompt's logits are (dots.ocr#196: 74.16 GiB asked on a 44.40 GiB
 * card, fixed by installing flash-attn). */
static bool w_attention(const struct sit *s)
{
    if (is(phase_of(s), "attention"))
        return true;
    uint64_t r = s->ev->requested_bytes, t = s->ev->total_bytes;
    if (r == VF_UNKNOWN || t == VF_UNKNOWN || !t)
        return false;
    return r > t || (r >= t / 4 && ((s->job & J_INFER) || s->m));
}

/* A whole pipeline moved to the card failed (pipe.to("cuda") in the traceback): it does not
 * fit at once, so the components take turns before anything else is tried (flux2#23: FLUX.2
 * dev's pipe.to(device) on a 48 GB card). */
static bool w_load(const struct sit *s)
{
    return is(phase_of(s), "load");
}

static bool w_not_load(const struct sit *s)
{
    return !w_load(s);
}

/* ComfyUI / diffusion: the VAE decode was what failed. */
static bool w_decode(const struct sit *s)
{
    return is(phase_of(s), "decode") ||
           (s->ctx && s->ctx->node_type && strstr(s->ctx->node_type, "VAEDecode"));
}

static bool w_not_decode(const struct sit *s)
{
    return !w_decode(s);
}

/* diffusers: the workload runs the UNet's eager AttnProcessor (--attention eager, F-DIF-18)
 * and it was not the decode that failed. */
static bool w_eager(const struct sit *s)
{
    return s->est && s->est->diffusion.eager_attn && !w_decode(s);
}

static bool w_video(const struct sit *s)
{
    return (s->m && s->m->task == VF_TASK_VIDEO) ||
           (s->ctx && s->ctx->job && is(s->ctx->job, "video")) || (s->ctx && s->ctx->frames > 1);
}

static bool w_cudnn(const struct sit *s)
{
    return is(s->ev->source, "cudnn");
}

static bool w_cublas(const struct sit *s)
{
    return is(s->ev->source, "cublas");
}

/* Ollama names its own container limit row (its words) before the general one. */
static bool w_not_ollama(const struct sit *s)
{
    return s->g != G_OLLAMA;
}

/* ---------------------------------------------------------------- rules */

#define ANYC NULL
#define IMG  J_IMAGE
#define TRN  J_TRAIN
#define INF  J_INFER
/* F-SPD-16: the row's speed factor is computed by the speed model (solve/speed_offload.c):
 * seconds per result before over after the change, on the log's card; 0 when it cannot be. */
#define SPD (-1.0)
static const struct rule rules[] = {
    /* the cause first: these free memory without touching the workload; each platform has
     * its own tool to see who holds the memory */
    {G_ANY, ANYC, "let the allocator grow segments (set before import torch)",
     "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", CH_FRAG, "none", 1.0,
     "none; the reserve plus the free memory covers the request", P_CUDA, 0, w_ru_covers},
    {G_ANY, ANYC, "let the allocator grow segments (set before import torch)",
     "export PYTORCH_HIP_ALLOC_CONF=expandable_segments:True", CH_FRAG, "none", 1.0,
     "none; the reserve plus the free memory covers the request", P_ROCM, 0, w_ru_covers},
    {G_VLLM, "engine_reservation other_process",
     "free the memory other processes hold (vLLM checks at start-up)",
     "nvidia-smi; kill the other job (or move vLLM: CUDA_VISIBLE_DEVICES=<a free card>)",
     CH_FREE_GAP, "none", 1.0, "the other job stops", P_CUDA, 0, w_vllm_startup},
    {G_ANY, "other_process", "free the memory other processes hold",
     "nvidia-smi; ps aux | grep python; kill #", CH_KILL, "none", 1.0,
     "restart the stale Jupyter kernel or stop the other job", P_CUDA, 0, NULL},
    {G_ANY, "other_process", "free the memory other processes hold",
     "rocm-smi --showpids (or amd-smi process); kill #", CH_KILL, "none", 1.0, "stop the other job",
     P_ROCM, 0, NULL},
    {G_ANY, "other_process", "free the memory other processes hold", "xpu-smi ps; kill #", CH_KILL,
     "none", 1.0, "stop the other job", P_XPU, 0, NULL},
    {G_ANY, "other_process", "quit the apps that hold the Mac's unified memory",
     "Activity Monitor > Memory (or: top -o mem); quit the largest apps", CH_MPS_OTHER, "none", 1.0,
     "the GPU shares RAM with every app", P_MPS, 0, NULL},
    {G_VLLM, "engine_reservation", "a utilization that fits what is free",
     "--gpu-memory-utilization #", CH_FREE_UTIL, "none", 1.0, "a smaller KV cache", 0, 0,
     w_startup_can_hold},
    {G_VLLM, "engine_reservation",
     "this card cannot hold the model next to the other process: free it or take a bigger card",
     "no --gpu-memory-utilization fits: the model needs more than is free (see the card below)",
     CH_NONE, "none", 1.0, "the other job stops, or another card", 0, 0, w_startup_cannot_hold},
    {G_ANY, "fragmentation", "on PyTorch 1.x: cap the split size",
     "export PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128", CH_FRAG, "none", SPD,
     "smaller cached blocks", P_CUDA, 0, w_torch1},
    {G_ANY, "fragmentation", "let the allocator grow segments (set before import torch)",
     "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", CH_FRAG, "none", 1.0,
     "none; PyTorch >= 2.9 also reads PYTORCH_ALLOC_CONF", P_CUDA, 0, w_frag_2x},
    {G_ANY, "fragmentation", "let the allocator grow segments (set before import torch)",
     "export PYTORCH_HIP_ALLOC_CONF=expandable_segments:True", CH_FRAG, "none", 1.0, "none", P_ROCM,
     0, w_frag_2x},
    {G_ANY, "fragmentation", "cap the split size",
     "export PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128", CH_FRAG, "none", SPD,
     "smaller cached blocks", P_CUDA, 0, w_frag_2x},
    {G_ANY, "fragmentation", "release PyTorch's unused cache (the message's advice)",
     "torch.xpu.empty_cache()", CH_FRAG, "none", 1.0, "cached blocks are freed", P_XPU, 0, NULL},
    {G_SCRIPT, "leak", "accumulate the loss as a number, not a tensor", "total_loss += loss.item()",
     CH_NONE, "none", 1.0, "none", 0, TRN | J_NONE, NULL},
    {G_SCRIPT, "leak", "evaluate without building a graph", "with torch.no_grad(): ...", CH_NONE,
     "none", 1.0, "none", 0, TRN | J_NONE, NULL},
    /* the host's RAM, not the card's: each tool's own levers */
    {G_OLLAMA, "host_ram", "a smaller tag of the model (fewer parameters or a 4-bit quant)",
     "ollama run MODEL:<smaller tag>  (ollama show MODEL lists its size)", CH_NONE, "minor", 1.0,
     "a smaller or more quantized model", 0, 0, NULL},
    {G_OLLAMA, "host_ram", "unload the other models and free the RAM others hold",
     "ollama ps; ollama stop MODEL; OLLAMA_MAX_LOADED_MODELS=1", CH_NONE, "none", 1.0,
     "models load again when asked", 0, 0, NULL},
    {G_OLLAMA, "host_ram", "shorter context", "OLLAMA_CONTEXT_LENGTH=# (or the num_ctx parameter)",
     CH_CTX, "minor", 1.0, "forgets earlier parts of long chats", 0, 0, NULL},
    {G_OLLAMA, "host_ram", "raise the container's memory limit",
     "docker run --memory=<RAM the model needs> ... (or the pod's limits.memory)", CH_NONE, "none",
     1.0, "only where the limit, not the host, is short", 0, 0, NULL},
    /* Ollama's check is on the part of the model that does not fit the GPU (llm/server.go:
     * TotalSize - VRAMSize, later cpuSize, against free RAM + swap): more RAM holds it, more
     * free GPU memory shrinks it */
    {G_OLLAMA, "host_ram", "more host RAM or swap",
     "free -h; add swap (fallocate -l 32G /swapfile; mkswap; swapon) or a machine with more RAM",
     CH_NONE, "none", 1.0, "swap is slow", 0, 0, NULL},
    {G_OLLAMA, "host_ram", "more free GPU memory: less of the model is left for RAM",
     "ollama ps (the CPU/GPU split); stop what else holds the card, or a card with more memory",
     CH_NONE, "none", 1.0, "the other job stops, or another card", 0, 0, NULL},
    {G_ANY, "host_ram", "more host RAM or swap (a bigger GPU does not help)",
     "free -h; add swap (fallocate -l 32G /swapfile; mkswap; swapon) or a machine with more RAM",
     CH_NONE, "none", 1.0, "swap is slow", 0, 0, w_not_ollama},
    {G_SCRIPT, "host_ram", "load with less host RAM",
     "from_pretrained(..., low_cpu_mem_usage=True)", CH_NONE, "none", 1.0, "none", 0,
     INF | TRN | J_NONE, NULL},
    {G_SCRIPT, "host_ram", "fewer data-loader workers, smaller prefetch",
     "DataLoader(..., num_workers=2, prefetch_factor=2)", CH_NONE, "none", SPD,
     "slower data loading", 0, TRN | J_NONE, NULL},
    {G_ANY, "host_ram", "raise the container's memory limit",
     "docker run --memory=<more> --shm-size=<more> (or the pod's limits.memory)", CH_NONE, "none",
     1.0, "only where the limit, not the host, is short", 0, 0, w_not_ollama},
    {G_ANY, "not_vram", "smaller kernel tiles", "num_stages=2 (or smaller BLOCK sizes)", CH_NONE,
     "none", SPD, "or update the library; a newer GPU architecture has more", 0, 0, NULL},
    /* bitsandbytes (oom-formats 6): a CPU-only build first, then the fit */
    {G_BNB_CPU, ANYC, "a CUDA build of bitsandbytes (this one has no GPU support)",
     "pip install -U bitsandbytes (a CUDA wheel); check: python -m bitsandbytes", CH_NONE, "none",
     1.0, "none", 0, 0, NULL},
    {G_BNB, "workload_too_large", "4-bit instead of 8-bit", "BitsAndBytesConfig(load_in_4bit=True)",
     CH_NONE, "minor", 1.0, "slightly lower quality", 0, 0, NULL},
    {G_BNB, "workload_too_large", "offload what does not fit, kept in fp32 on the CPU",
     "BitsAndBytesConfig(llm_int8_enable_fp32_cpu_offload=True) + device_map with max_memory",
     CH_NONE, "none", SPD, "CPU layers at host memory speed", 0, 0, NULL},
    /* TensorFlow (oom-formats 8) */
    {G_TF, "engine_reservation", "let TensorFlow grow its pool instead of taking the card",
     "tf.config.experimental.set_memory_growth(gpu, True) or TF_FORCE_GPU_ALLOW_GROWTH=true",
     CH_NONE, "none", 1.0, "none", 0, 0, NULL},
    {G_TF, ANYC, "smaller batch", "model.fit(..., batch_size=<half>)", CH_NONE, "none", 1.0,
     "more steps per epoch", 0, 0, NULL},
    /* the growth row once: first for engine_reservation (above), else in the guide's place */
    {G_TF, "!engine_reservation", "let TensorFlow grow its pool instead of taking the card",
     "tf.config.experimental.set_memory_growth(gpu, True) or TF_FORCE_GPU_ALLOW_GROWTH=true",
     CH_NONE, "none", 1.0, "none", 0, 0, NULL},
    {G_TF, ANYC, "mixed precision", "tf.keras.mixed_precision.set_global_policy(\"mixed_float16\")",
     CH_NONE, "minor", 1.0, "loss scaling; faster on tensor cores", 0, 0, NULL},
    /* JAX/XLA (oom-formats 9) */
    {G_JAX, "engine_reservation other_process unknown",
     "do not preallocate (set before importing jax)", "export XLA_PYTHON_CLIENT_PREALLOCATE=false",
     CH_NONE, "none", 1.0, "allocations as needed; fragmentation possible", 0, 0, NULL},
    {G_JAX, "engine_reservation other_process unknown", "a smaller share per process",
     "export XLA_PYTHON_CLIENT_MEM_FRACTION=.50", CH_NONE, "none", 1.0,
     "each process gets that share of the card", 0, 0, NULL},
    {G_JAX, ANYC, "smaller batch", "batch_size = <half>", CH_NONE, "none", 1.0,
     "more steps per epoch", 0, 0, NULL},
    {G_JAX, ANYC, "recompute activations", "jax.checkpoint(f)", CH_NONE, "none", SPD,
     "recomputes the forward pass", 0, 0, NULL},
    /* NCCL (oom-formats 11) */
    {G_NCCL, ANYC, "leave headroom for NCCL: smaller micro-batch",
     "per_device_train_batch_size=<half>", CH_NONE, "none", 1.0, "more steps", 0, TRN | J_NONE,
     NULL},
    {G_NCCL, ANYC, "smaller / fewer NCCL buffers",
     "export NCCL_BUFFSIZE=1048576 NCCL_MAX_NCHANNELS=4", CH_NONE, "none", SPD,
     "slower collectives", 0, 0, NULL},
    {G_NCCL, ANYC, "check for other processes on the cards; confirm with the NCCL log",
     "nvidia-smi; export NCCL_DEBUG=INFO", CH_NONE, "none", 1.0, "none", P_CUDA, 0, NULL},
    /* cuBLAS/cuDNN handle at start-up (oom-formats 10): their own settings, then the card */
    {G_CUBLAS, ANYC, "run on a card with free memory at start-up",
     "nvidia-smi; CUDA_VISIBLE_DEVICES=<a free card> python ...", CH_NONE, "none", 1.0, "none",
     P_CUDA, 0, NULL},
    {G_CUBLAS, ANYC, "a smaller cuBLAS workspace", "export CUBLAS_WORKSPACE_CONFIG=:4096:8",
     CH_NONE, "none", 1.0, "none measurable", 0, 0, w_cublas},
    {G_CUBLAS, ANYC, "no cuDNN autotuning (it tries large workspaces)",
     "torch.backends.cudnn.benchmark = False", CH_NONE, "none", SPD,
     "cuDNN picks a kernel without trying the large ones", 0, 0, w_cudnn},
    {G_CUBLAS, ANYC, "load the model before the first matmul leaves no room: spread it",
     "from_pretrained(..., device_map=\"auto\", max_memory={0: \"<card minus 2 GiB>\"})", CH_NONE,
     "none", 1.0, "spread over cards", 0, 0, NULL},
    /* ComfyUI, in the guide's order (the decode's own fix first when the decode failed) */
    {G_COMFY, ANYC, "VAE Decode (Tiled)", "replace VAE Decode with VAE Decode (Tiled)", CH_TILED,
     "none", SPD, "overlapping tiles decode again", 0, 0, w_decode},
    {G_COMFY, ANYC, "fp8 weights", "load the fp8_e4m3fn checkpoint (Load Diffusion Model)", CH_FP8,
     "minor", 1.0, "slight loss of fine detail", P_CUDA | P_ROCM | P_XPU, 0, NULL},
    {G_COMFY, ANYC, "GGUF Q8 weights", "ComfyUI-GGUF: Unet Loader (GGUF) with a Q8_0 file", CH_Q8,
     "minor", SPD, "dequantized per layer", 0, 0, NULL},
    {G_COMFY, ANYC, "GGUF Q5 weights (12 GB cards)",
     "ComfyUI-GGUF: Unet Loader (GGUF) with a Q5_K_M file", CH_Q5, "minor", SPD,
     "some loss of detail; Q4_K_S loses more", 0, 0, NULL},
    {G_COMFY, ANYC, "VAE Decode (Tiled)", "replace VAE Decode with VAE Decode (Tiled)", CH_TILED,
     "none", SPD, "overlapping tiles decode again", 0, 0, w_not_decode},
    {G_COMFY, ANYC, "one image at a time", "Empty Latent Image: batch_size #", CH_BATCH, "none",
     1.0, "same images, one after another", 0, 0, NULL},
    {G_COMFY, ANYC, "lower resolution, then upscale", "Empty Latent Image: width/height #", CH_RES,
     "minor", 1.0, "upscale with a tiled upscaler", 0, 0, NULL},
    {G_COMFY, ANYC, "fewer frames or 480p (video)", "length 49, 832x480", CH_FRAMES, "minor", 1.0,
     "shorter or smaller clip", 0, 0, w_video},
    {G_COMFY, ANYC, "block swap (Wan video wrapper)", "WanVideo BlockSwap: blocks_to_swap #",
     CH_SWAP, "none", SPD, "the swapped blocks cross PCIe every step", 0, 0, w_video},
    {G_COMFY, ANYC, "text encoders on the CPU", "Load CLIP: device cpu", CH_TECPU, "none", SPD,
     "slower prompt encoding", 0, 0, NULL},
    {G_COMFY, ANYC, "offload as a last resort", "python main.py --lowvram --reserve-vram 2",
     CH_LOWVRAM, "none", SPD, "the weights cross PCIe every step", 0, 0, NULL},
    /* diffusers and other PyTorch image/video pipelines, the same ladder in their words */
    {G_SCRIPT, ANYC, "components on the GPU only while they run",
     "pipe.enable_model_cpu_offload()  (instead of pipe.to(\"cuda\"))", CH_TECPU, "none", SPD,
     "slower steps between components", 0, IMG, w_load},
    {G_SCRIPT, ANYC, "tiled VAE decode", "pipe.vae.enable_tiling()", CH_TILED, "none", SPD,
     "a few seconds more", 0, IMG, w_decode},
    {G_SCRIPT, ANYC, "decode one image at a time", "pipe.vae.enable_slicing()", CH_SLICED, "none",
     1.0, "the same images, decoded one after another", 0, IMG, w_decode},
    {G_SCRIPT, ANYC, "tiny autoencoder (TAESD) for the decode",
     "pipe.vae = AutoencoderTiny.from_pretrained(\"madebyollin/taesdxl\", "
     "torch_dtype=torch.float16)  (taesd: SD 1/2, taesd3: SD3, taef1: Flux)",
     CH_TINYVAE, "minor", 1.0, "softer fine detail than the full VAE", 0, IMG, w_decode},
    {G_SCRIPT, ANYC, "SDPA attention instead of the eager processor",
     "drop pipe.unet.set_default_attn_processor() (PyTorch >= 2: AttnProcessor2_0)", CH_SDPA,
     "none", 1.0, "the same images, faster", 0, IMG, w_eager},
    {G_SCRIPT, ANYC, "fp8 / 8-bit transformer weights",
     "transformer = ...from_pretrained(..., "
     "quantization_config=BitsAndBytesConfig(load_in_8bit=True))",
     CH_FP8, "minor", SPD, "slight loss of fine detail", P_CUDA, IMG, NULL},
    {G_SCRIPT, ANYC, "tiled VAE decode", "pipe.vae.enable_tiling()", CH_TILED, "none", SPD,
     "a few seconds more", 0, IMG, w_not_decode},
    {G_SCRIPT, ANYC, "one image at a time", "num_images_per_prompt=#", CH_BATCH, "none", 1.0,
     "same images, one after another", 0, IMG, NULL},
    {G_SCRIPT, ANYC, "lower resolution, then upscale", "height, width = #", CH_RES, "minor", 1.0,
     "upscale afterwards", 0, IMG, NULL},
    {G_SCRIPT, ANYC, "fewer frames or 480p (video)", "num_frames=49, height=480, width=832",
     CH_FRAMES, "minor", 1.0, "shorter or smaller clip", 0, IMG, w_video},
    {G_SCRIPT, ANYC, "components on the GPU only while they run", "pipe.enable_model_cpu_offload()",
     CH_TECPU, "none", SPD, "slower steps between components", 0, IMG, w_not_load},
    {G_SCRIPT, ANYC, "offload layer by layer as a last resort",
     "pipe.enable_sequential_cpu_offload()", CH_LOWVRAM, "none", SPD,
     "the weights cross PCIe every step", 0, IMG, NULL},
    /* Ollama */
    {G_OLLAMA, ANYC, "shorter context", "OLLAMA_CONTEXT_LENGTH=# (or the num_ctx parameter)",
     CH_CTX, "minor", 1.0, "forgets earlier parts of long chats", 0, 0, NULL},
    {G_OLLAMA, ANYC, "fewer layers on the GPU", "num_gpu #", CH_NGL, "none", SPD,
     "CPU layers at host memory speed (ollama ps shows CPU/GPU)", 0, 0, NULL},
    {G_OLLAMA, ANYC, "8-bit KV cache", "OLLAMA_FLASH_ATTENTION=1 OLLAMA_KV_CACHE_TYPE=q8_0", CH_KV8,
     "none", 1.0, "none measurable", 0, 0, NULL},
    {G_OLLAMA, ANYC, "leave headroom Ollama's estimate misses", "OLLAMA_GPU_OVERHEAD=1073741824",
     CH_NONE, "none", 1.0, "a layer or two more on the CPU", 0, 0, NULL},
    /* llama.cpp, by the buffer that failed: weights, KV cache, compute graph */
    {G_LLAMACPP, ANYC, "fewer layers on the GPU", "-ngl #", CH_NGL, "none", SPD,
     "CPU layers at host memory speed", 0, 0, w_buf_not_kv_compute},
    {G_LLAMACPP, ANYC, "a smaller quant of the same model", "a # (or smaller) GGUF file", CH_Q4,
     "minor", 1.0, "some loss of quality", 0, 0, w_buf_weights},
    {G_LLAMACPP, ANYC, "MoE experts on the CPU", "--n-cpu-moe N (the first N layers' experts)",
     CH_NONE, "none", SPD, "expert layers run on the CPU", 0, 0, w_moe_maybe},
    {G_LLAMACPP, ANYC, "a smaller compute batch", "-ub 256 -b 256", CH_UBATCH, "none", SPD,
     "slower prompt processing", 0, 0, w_buf_compute},
    {G_LLAMACPP, ANYC, "shorter context", "-c #", CH_CTX, "minor", 1.0,
     "forgets earlier parts of long chats", 0, 0, w_buf_kv},
    {G_LLAMACPP, ANYC, "8-bit KV cache", "-ctk q8_0 -ctv q8_0 -fa on", CH_KV8, "none", 1.0,
     "none measurable", 0, 0, w_buf_kv},
    {G_LLAMACPP, ANYC, "shorter context", "-c #", CH_CTX, "minor", 1.0,
     "forgets earlier parts of long chats", 0, 0, w_buf_compute},
    {G_LLAMACPP, ANYC, "shorter context", "-c #", CH_CTX, "minor", 1.0,
     "forgets earlier parts of long chats", 0, 0, w_buf_unknown},
    {G_LLAMACPP, ANYC, "a smaller quant of the same model", "a # (or smaller) GGUF file", CH_Q4,
     "minor", 1.0, "some loss of quality", 0, 0, w_buf_unknown},
    {G_LLAMACPP, ANYC, "fewer layers on the GPU", "-ngl #", CH_NGL, "none", SPD,
     "CPU layers at host memory speed", 0, 0, w_buf_kv_compute},
    /* vLLM: the engine's own number first */
    {G_VLLM, ANYC, "fewer requests at once (the sampler warms up for each)", "--max-num-seqs #",
     CH_USERS, "none", SPD, "lower throughput under load", 0, 0, w_vllm_sampler},
    {G_VLLM, ANYC, "a maximum length the KV cache holds", "--max-model-len #", CH_SEQ_N, "minor",
     1.0, "longer requests are refused", 0, 0, w_vllm_seq},
    {G_VLLM, "kv_cache", "give vLLM more of the card", "--gpu-memory-utilization #", CH_UTIL,
     "none", 1.0, "nothing else can share the card", 0, 0, w_util_below},
    {G_VLLM, "kv_cache", "quantized weights (FP8, or an AWQ/GPTQ checkpoint)", "--quantization fp8",
     CH_FP8, "minor", 1.0, "a small accuracy cost", 0, 0, w_no_blocks},
    {G_VLLM, "kv_cache", "split over two cards", "--tensor-parallel-size 2", CH_TP2, "none", 1.0,
     "a second card", 0, 0, w_no_blocks},
    {G_VLLM, ANYC, "shorter maximum length", "--max-model-len #", CH_CTX, "minor", 1.0,
     "longer requests are refused", 0, 0, w_not_vllm_seq},
    {G_VLLM, ANYC, "8-bit KV cache", "--kv-cache-dtype fp8", CH_KV8, "minor", 1.0,
     "twice the tokens; a small accuracy cost", 0, 0, w_not_no_blocks},
    {G_VLLM, ANYC, "fewer requests at once", "--max-num-seqs #", CH_USERS, "none", SPD,
     "lower throughput under load", 0, 0, w_not_startup_sampler},
    {G_VLLM, ANYC, "no CUDA graphs", "--enforce-eager", CH_EAGER, "none", SPD,
     "no CUDA graphs while decoding", 0, 0, NULL},
    {G_VLLM, ANYC, "split over two cards", "--tensor-parallel-size 2", CH_TP2, "none", 1.0,
     "a second card", 0, 0, w_not_no_blocks},
    /* training, in the guide's order */
    {G_SCRIPT, ANYC, "smaller micro-batch, same effective batch", "#", CH_BATCH, "none", SPD,
     "no quality cost", 0, TRN, NULL},
    {G_SCRIPT, ANYC, "gradient checkpointing", "gradient_checkpointing=True", CH_CKPT, "none", SPD,
     "recomputes the forward pass", 0, TRN, NULL},
    {G_SCRIPT, ANYC, "fused cross-entropy (Liger kernels)", "use_liger_kernel=True", CH_LIGER,
     "none", 1.0, "pip install liger-kernel", P_CUDA | P_ROCM, TRN, NULL},
    {G_SCRIPT, ANYC, "bf16 mixed precision (Ampere or newer)", "bf16=True", CH_BF16, "none", 1.0,
     "none", 0, TRN, NULL},
    {G_SCRIPT, ANYC, "8-bit AdamW", "optim=\"adamw_bnb_8bit\"", CH_ADAM8, "none", 1.0,
     "6 B/param less optimizer state", P_CUDA | P_ROCM | P_XPU, TRN, NULL},
    {G_SCRIPT, ANYC, "LoRA instead of full fine-tuning", "peft LoraConfig(r=16)", CH_LORA, "minor",
     1.0, "adapters, not the full model", 0, TRN, NULL},
    {G_SCRIPT, ANYC, "QLoRA (4-bit base model)", "BitsAndBytesConfig(load_in_4bit=True) + LoRA",
     CH_QLORA, "minor", SPD, "4-bit base, dequantized per step", P_CUDA | P_ROCM | P_XPU, TRN,
     NULL},
    {G_SCRIPT, ANYC, "shorter sequences", "max_seq_length=#", CH_CTX, "minor", 1.0,
     "long examples are cut", 0, TRN, NULL},
    {G_SCRIPT, ANYC, "shard over several cards (FSDP / ZeRO-3)", "accelerate launch --use_fsdp",
     CH_TP2, "none", SPD, "a second card", P_CUDA | P_ROCM, TRN, NULL},
    /* inference with transformers / a PyTorch script */
    {G_SCRIPT, ANYC, "memory-efficient attention",
     "from_pretrained(..., attn_implementation=\"sdpa\") (or \"flash_attention_2\"); own code: "
     "F.scaled_dot_product_attention(q, k, v)",
     CH_NONE, "none", 1.0, "none; no tokens x tokens scores", 0, INF | J_NONE, w_attention},
    {G_SCRIPT, ANYC, "fewer sequences at once", "batch_size=# (or fewer prompts per generate())",
     CH_USERS, "none", SPD, "lower throughput", 0, INF, NULL},
    {G_SCRIPT, ANYC, "shorter inputs and outputs", "max_new_tokens=<fewer>, truncate the prompt",
     CH_CTX, "minor", 1.0, "shorter answers", 0, INF, NULL},
    {G_SCRIPT, ANYC, "4-bit weights",
     "from_pretrained(..., quantization_config=BitsAndBytesConfig(load_in_4bit=True))", CH_QLORA,
     "minor", SPD, "slightly lower quality", P_CUDA, INF, NULL},
    {G_SCRIPT, ANYC, "spread the model over the cards and the CPU",
     "from_pretrained(..., device_map=\"auto\", max_memory={0: \"<card minus 2 GiB>\", \"cpu\": "
     "\"64GiB\"})",
     CH_NONE, "none", SPD, "CPU layers at host memory speed", 0, INF, NULL},
    /* a PyTorch job the log does not say more of */
    {G_SCRIPT, ANYC, "smaller batch",
     "batch_size = <half> (the tensors of one step shrink with it)", CH_NONE, "none", 1.0,
     "more steps", 0, J_NONE, NULL},
    {G_SCRIPT, ANYC, "no autograd where no gradients are needed",
     "with torch.inference_mode(): ... (inference and evaluation)", CH_NONE, "none", 1.0, "none", 0,
     J_NONE, NULL},
    {G_SCRIPT, ANYC, "16-bit activations",
     "with torch.autocast(\"cuda\", dtype=torch.bfloat16): ...", CH_NONE, "minor", 1.0,
     "faster on tensor cores", P_CUDA | P_ROCM, J_NONE, NULL},
    {G_SCRIPT, ANYC, "smaller inputs (crops, tiles, fewer points)",
     "process the input in tiles or at a lower resolution", CH_NONE, "minor", 1.0, "more passes", 0,
     J_NONE, NULL},
    /* MPS: lift PyTorch's own cap last (the message suggests it; the Mac may then swap) */
    {G_ANY, "!other_process", "lift PyTorch's MPS memory cap (last resort)",
     "export PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 (before starting; ComfyUI: before python "
     "main.py)",
     CH_NONE, "none", SPD, "the Mac may swap hard or freeze", P_MPS, 0, NULL},
    /* any PyTorch-based tool with a heavy cache, when nothing else applies */
    {G_TORCH, "unknown workload_too_large", "measure the peak first",
     "torch.cuda.max_memory_allocated()", CH_NONE, "none", 1.0, "none", P_CUDA | P_ROCM, 0, NULL},
};

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

/* The group of the event: the layer that printed it where that decides the fixes (a pool,
 * a handle, a library), else the tool. */
static enum group group_of(const char *tool, const struct vf_oom_event *ev)
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
    return G_TORCH;
}

static unsigned plat_of(const struct vf_oom_event *ev)
{
    for (unsigned i = 0; i < sizeof plat_names / sizeof plat_names[0]; i++)
        if (is(ev->backend, plat_names[i]))
            return 1u << i;
    return P_CUDA; /* the scanner names a backend for every row; CUDA when it cannot */
}

static unsigned job_word(const char *w)
{
    return is(w, "train")                     ? J_TRAIN
           : is(w, "infer")                   ? J_INFER
           : is(w, "image") || is(w, "video") ? J_IMAGE
                                              : 0;
}

/*
 * The job kind (issue 19): --task first; then the tool (ComfyUI and diffusers make images,
 * the LLM engines serve); then what the log shows (a traceback through backward() or a
 * trainer, training steps; generate(); a diffusion pipeline); then the model's own task
 * (an image or video model); else J_NONE. Training is never assumed: the log must show it.
 */
static unsigned job_of(enum group g, const char *tool, const struct vf_oom_context *ctx,
                       const struct vf_explain_opts *opts, const struct vf_model *m)
{
    const struct vf_workload *w = opts ? opts->workload : NULL;
    if (w && w->task_set)
        return w->task == VF_TASK_TRAIN ? J_TRAIN : w->task == VF_TASK_INFER ? J_INFER : J_IMAGE;
    if (g == G_COMFY || is(tool, "diffusers") || is(tool, "forge") || is(tool, "a1111"))
        return J_IMAGE;
    if (g == G_VLLM || g == G_OLLAMA || g == G_LLAMACPP)
        return J_INFER;
    unsigned j = ctx ? job_word(ctx->job) : 0;
    if (j)
        return j;
    if ((ctx && ctx->last_step != VF_UNKNOWN && ctx->last_step != 0) || is(tool, "deepspeed") ||
        is(tool, "accelerate") || g == G_NCCL)
        return J_TRAIN;
    if (m && (m->task == VF_TASK_IMAGE || m->task == VF_TASK_VIDEO))
        return J_IMAGE;
    return J_NONE;
}

/* Whether row r is a fix for the event s (the tags and causes of struct rule). */
static bool selects(const struct rule *r, const struct sit *s)
{
    const struct vf_diagnosis *d = s->d;
    if (!(covers[r->g] & GBIT(s->g)) || (r->plat && !(r->plat & s->plat)) ||
        (r->jobs && !(r->jobs & s->job)) || (r->when && !r->when(s)))
        return false;
    if (!r->causes) /* host_ram and not_vram: only the rows that name them */
        return !is(d->cause, "host_ram") && !is(d->cause, "not_vram");
    if (r->causes[0] == '!')
        return !is(d->cause, r->causes + 1) && !is(d->cause, "host_ram") &&
               !is(d->cause, "not_vram");
    bool hit = in_list(r->causes, d->cause);
    for (size_t i = 0; i < d->n_secondary && !hit; i++)
        hit = in_list(r->causes, d->secondary[i]);
    return hit;
}

/* The words of the bits of mask (names[i] for bit i), or NULL for 0 (any). */
static const char *tag_words(struct vf_arena *a, unsigned mask, const char *const *names, size_t n)
{
    if (!mask)
        return NULL;
    char buf[160] = "";
    size_t at = 0;
    for (size_t i = 0; i < n; i++)
        if (mask & 1u << i) {
            int k = snprintf(buf + at, sizeof buf - at, "%s%s", at ? " " : "", names[i]);
            if (k < 0 || (size_t)k >= sizeof buf - at)
                break;
            at += (size_t)k;
        }
    return vf_arena_printf(a, "%s", buf);
}

/* The workload the log describes, as far as it does. */
struct known {
    const struct vf_catalog *cat; /* for the card of the speed factor (F-SPD-16) */
    bool ok;                      /* model resolved and the engine estimated it */
    bool resolved;                /* the model resolved (m is filled) */
    const char *missing;          /* why not */
    struct vf_model m;
    struct vf_workload w;
    struct vf_estimate est;
    uint64_t card_bytes; /* the card's usable bytes: the log's total, else --gpu's */
};

/* The engine that runs the job: the tool's own, else the job's (issue 19: diffusers for a
 * PyTorch image job, transformers for inference, the training estimator for training). */
static const char *engine_of(enum group g, unsigned job, const char *tool)
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
    case G_TORCH:
    case G_SCRIPT:
        return job == J_TRAIN                               ? "pytorch"
               : job == J_IMAGE                             ? "diffusers"
               : job == J_INFER || is(tool, "transformers") ? "transformers"
                                                            : NULL;
    default:
        return NULL;
    }
}

/* The model the log names (or --model): k->m and k->resolved, else k->missing. */
static void resolve(struct vf_arena *a, const struct vf_oom_context *ctx,
                    const struct vf_explain_opts *opts, struct known *k)
{
    memset(k, 0, sizeof *k);
    k->card_bytes = VF_UNKNOWN;
    if (!ctx || !ctx->model) {
        k->missing = "the model: the log does not name it; pass --model";
        return;
    }
    if (!opts || !opts->catalog) {
        k->missing = "the catalog";
        return;
    }
    struct vf_error e = {0};
    if (vf_model_resolve(a, opts->catalog, ctx->model, &k->m, &e)) {
        k->missing = vf_arena_printf(a, "the model '%s' (%s)", ctx->model, e.msg);
        return;
    }
    k->resolved = true;
}

/* The card: the log's total capacity, else the card --gpu named (struct vf_explain_opts). */
static uint64_t card_of(const struct vf_oom_event *ev, const struct vf_explain_opts *opts)
{
    if (ev->total_bytes != VF_UNKNOWN)
        return ev->total_bytes;
    return opts && opts->gpu_usable_bytes ? opts->gpu_usable_bytes : VF_UNKNOWN;
}

/* Fills k (resolved first) with the workload the log (and opts->workload, for what the log
 * does not show) describes for group g and job, and its estimate: k->ok, or k->missing. */
static void build(struct vf_arena *a, const struct vf_oom_context *ctx,
                  const struct vf_explain_opts *opts, enum group g, unsigned job, const char *tool,
                  struct known *k)
{
    const char *engine = engine_of(g, job, tool);
    if (!k->resolved)
        return;
    if (!engine) {
        k->missing = vf_arena_printf(
            a, "an engine we model for the tool '%s'; pass --tool or --task", tool ? tool : "?");
        return;
    }
    struct vf_workload *w = &k->w;
    if (opts->workload)
        *w = *opts->workload; /* the user's word, for what the log does not show */
    w->engine = engine;
    w->usable_bytes = k->card_bytes;
    w->task = job == J_TRAIN ? VF_TASK_TRAIN : k->m.task;
    if (job == J_IMAGE && w->task != VF_TASK_IMAGE && w->task != VF_TASK_VIDEO) {
        k->missing = vf_arena_printf(a, "an image or video model ('%s' is not one)", ctx->model);
        return;
    }
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
    struct vf_error e = {0};
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
    unsigned job;                     /* J_* */
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
        x->value = x->job == J_TRAIN ? "1024" : "16384";
        return false;
    }
    x->value = vf_arena_printf(x->a, "%llu", (unsigned long long)(x->c / 2 / 1024 * 1024));
    x->w.ctx_tokens = x->c / 2 / 1024 * 1024;
    return true;
}

/* vLLM's own N (the tokens its KV cache holds), rounded down to its block size: 16 tokens,
 * vllm/config.py CacheConfig.block_size default (v0.6 - v0.10) (F-OOM-22). */
#define VLLM_BLOCK_TOKENS 16
static bool apply_seq_n(struct fixing *x)
{
    uint64_t n = vllm_kv_tokens(x->ev);
    n = n / VLLM_BLOCK_TOKENS * VLLM_BLOCK_TOKENS;
    x->value = vf_arena_printf(x->a, "%llu", (unsigned long long)n);
    if (!x->k->ok || !n)
        return false;
    x->w.ctx_tokens = n;
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
    if (x->job == J_TRAIN) {
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

/* A smaller quant than the model has: the first of Q4_K_M, Q3_K_M, Q2_K (llama.cpp's
 * quantize types) whose estimate is below the model's; Q4_K_M without the model. */
static bool apply_smaller_quant(struct fixing *x)
{
    static const char *const q[] = {"Q4_K_M", "Q3_K_M", "Q2_K"};
    x->value = q[0];
    if (!x->k->ok)
        return false;
    for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) {
        struct vf_workload w = x->w;
        struct vf_estimate y;
        if (vf_quant_parse(q[i], &w.weights, NULL) || vf_estimate(x->a, &x->k->m, &w, &y, NULL) ||
            y.total_bytes >= x->k->est.total_bytes)
            continue;
        x->value = q[i];
        x->w = w;
        return true;
    }
    return false;
}

/* Weights stored as the change's argument ("fp8", "q8_0", "Q5_K_M"). */
static bool apply_weights(struct fixing *x)
{
    return !vf_quant_parse(x->arg, &x->w.weights, NULL);
}

/* diffusers names its offloads itself: enable_model_cpu_offload (one model at a time) and
 * enable_sequential_cpu_offload (one block at a time); ComfyUI's --lowvram and text encoders
 * on the CPU are its own and diffusers' estimator refuses them. */
static bool for_diffusers(const struct fixing *x)
{
    return x->w.engine && !strcmp(x->w.engine, "diffusers");
}

static bool apply_te_cpu(struct fixing *x)
{
    if (for_diffusers(x)) {
        x->w.diffusion.offload = VF_DOFF_MODEL_CPU;
        return x->k->ok && x->k->w.diffusion.offload == VF_DOFF_NONE;
    }
    x->w.diffusion.text_encoder = VF_TE_CPU;
    return x->k->ok && x->k->w.diffusion.text_encoder != VF_TE_CPU;
}

static bool apply_lowvram(struct fixing *x)
{
    x->w.diffusion.offload = for_diffusers(x) ? VF_DOFF_SEQUENTIAL : VF_DOFF_LOWVRAM;
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

/* F-DIF-16: one decode mode at a time */
static bool apply_sliced(struct fixing *x)
{
    x->w.diffusion.tiled_vae = x->w.diffusion.tiny_vae = false;
    x->w.diffusion.sliced_vae = true;
    return x->b >= 2 && !x->k->w.diffusion.sliced_vae;
}

static bool apply_sdpa(struct fixing *x)
{
    x->w.diffusion.eager_attn = false;
    return x->k->w.diffusion.eager_attn;
}

static bool apply_tiny_vae(struct fixing *x)
{
    x->w.diffusion.tiled_vae = x->w.diffusion.sliced_vae = false;
    x->w.diffusion.tiny_vae = true;
    return !x->k->w.diffusion.tiny_vae;
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

/* The estimate of x->w with engine option key = v fits the card (x->k->card_bytes). */
static bool fits_with(struct fixing *x, const char *key, uint32_t v)
{
    struct vf_workload w = x->w;
    struct vf_estimate y;
    const char *val = vf_arena_printf(x->a, "%u", v);
    return val && set_opt(&w, key, val) && !vf_estimate(x->a, &x->k->m, &w, &y, NULL) &&
           y.total_bytes != VF_UNKNOWN && y.total_bytes <= x->k->card_bytes;
}

/*
 * F-OOM-23: the most layers on the GPU that fit the card (llama.cpp -ngl, Ollama num_gpu),
 * by bisection on the estimator; without the model, the share of the failed buffer the
 * card's free (else total) memory holds, from the log's own numbers.
 */
static bool apply_ngl(struct fixing *x)
{
    const char *key = x->r->g == G_OLLAMA ? "num_gpu" : "-ngl";
    const struct vf_oom_event *ev = x->ev;
    uint32_t n = x->k->ok ? x->k->m.n_layers : 0;
    if (!n || x->k->card_bytes == VF_UNKNOWN) {
        uint64_t avail = ev->free_bytes != VF_UNKNOWN ? ev->free_bytes : ev->total_bytes;
        uint64_t req = ev->requested_bytes;
        if (avail != VF_UNKNOWN && req != VF_UNKNOWN && req > avail && req)
            x->value = vf_arena_printf(x->a, "<%u %% of the layers now on the GPU>",
                                       (unsigned)((long double)avail * 100.0L / (long double)req));
        else
            x->value = "<fewer than now>";
        return false;
    }
    uint32_t lo = 0, hi = n;
    while (lo < hi) { /* the largest count that fits; 0 when none does */
        uint32_t mid = lo + (hi - lo + 1) / 2;
        if (fits_with(x, key, mid))
            lo = mid;
        else
            hi = mid - 1;
    }
    x->value = vf_arena_printf(x->a, "%u", lo);
    return set_opt(&x->w, key, x->value);
}

/* llama.cpp's compute batch: -ub 256 -b 256 (defaults 512 and 2048, common/common.h). */
static bool apply_ubatch(struct fixing *x)
{
    return set_opt(&x->w, "-ub", "256") && set_opt(&x->w, "-b", "256");
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

/* vLLM's start-up check: what others hold is the card's total less what was free. */
static void saves_free_gap(const struct fixing *x, struct vf_fix *f)
{
    f->saves_bytes = x->ev->total_bytes - x->ev->free_bytes; /* w_vllm_startup: free < total */
}

/* MPS: the "other allocations" of the unified memory the message names. */
static void saves_mps_other(const struct fixing *x, struct vf_fix *f)
{
    if (x->ev->non_pytorch_bytes != VF_UNKNOWN)
        f->saves_bytes = x->ev->non_pytorch_bytes;
    else
        f->missing = "what other apps hold: the message does not say";
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
    uint64_t card = x->k->card_bytes != VF_UNKNOWN ? x->k->card_bytes : x->ev->total_bytes;
    if (card != VF_UNKNOWN && nu > old)
        f->saves_bytes = (uint64_t)((long double)(nu - old) * (long double)card);
    else
        f->missing = "the card's total: the message does not give it (--gpu)";
}

/* The phase of an image/video job that failed, from the log: ComfyUI's node (a loader, a
 * sampler, the VAE decode, a text encoder) or a decode seen in the traceback; NULL: the peak. */
static const char *failed_phase(const struct fixing *x)
{
    const struct vf_oom_context *ctx = x->ctx;
    const char *node = ctx ? ctx->node_type : NULL;
    if (x->job != J_IMAGE || !ctx)
        return NULL;
    if ((ctx->phase && is(ctx->phase, "decode")) || has(node, "Decode"))
        return "decode";
    if (has(node, "Loader"))
        return "load";
    if (has(node, "Sampler"))
        return "denoise";
    if (has(node, "TextEncode"))
        return "encode";
    return NULL;
}

/* F-OOM-24: what the card holds at a phase: the components of that phase and of every phase;
 * "load", the weights resident while denoising (no activations, no runtime); NULL: the peak. */
static uint64_t phase_bytes(const struct vf_estimate *e, const char *phase)
{
    if (!phase)
        return e->total_bytes;
    bool load = !strcmp(phase, "load");
    uint64_t sum = 0;
    for (size_t i = 0; i < e->n_components; i++) {
        const struct vf_component *c = &e->components[i];
        const char *ph = c->phase;
        bool in = !ph || !strcmp(ph, "all") || !strcmp(ph, load ? "denoise" : phase);
        if (load && (!strcmp(c->name, "activations") || !strcmp(c->name, "runtime_overhead")))
            in = false;
        if (in && c->device != VF_DEV_HOST)
            sum = vf__sat_add(sum, c->bytes);
    }
    return sum;
}

/* F-OOM-20: saves = estimate(before) - estimate(after), at the phase that failed (F-OOM-24). */
static void saves_estimated(const struct fixing *x, struct vf_fix *f)
{
    struct vf_estimate after;
    struct vf_error e = {0};
    if (vf_estimate(x->a, &x->k->m, &x->w, &after, &e)) {
        f->missing = vf_arena_printf(x->a, "an estimate of the changed workload (%s)", e.msg);
        return;
    }
    const char *phase = failed_phase(x);
    uint64_t before = phase_bytes(&x->k->est, phase), now = phase_bytes(&after, phase);
    f->saves_bytes =
        before != VF_UNKNOWN && now != VF_UNKNOWN ? (before > now ? before - now : 0) : VF_UNKNOWN;
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
    [CH_SEQ_N] = {.apply = apply_seq_n},
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
    [CH_Q4] = {.apply = apply_smaller_quant},
    [CH_SWAP] = {.apply = apply_swap},
    [CH_TECPU] = {.apply = apply_te_cpu},
    [CH_LOWVRAM] = {.apply = apply_lowvram},
    [CH_LIGER] = {.apply = apply_liger},
    [CH_LORA] = {.apply = apply_lora},
    [CH_QLORA] = {.apply = apply_qlora},
    [CH_FP8] = {.apply = apply_weights, .arg = "fp8"},
    [CH_Q8] = {.apply = apply_weights, .arg = "q8_0"},
    [CH_TILED] = {.apply = apply_tiled},
    [CH_SLICED] = {.apply = apply_sliced, .unchanged = "one image: slicing changes nothing"},
    [CH_TINYVAE] = {.apply = apply_tiny_vae},
    [CH_SDPA] = {.apply = apply_sdpa},
    [CH_RES] = {.apply = apply_res, .unchanged = "the resolution: the log does not show it"},
    [CH_FRAMES] = {.apply = apply_frames},
    [CH_NGL] = {.apply = apply_ngl, .unchanged = "the model or the card: the log names neither"},
    [CH_UBATCH] = {.apply = apply_ubatch},
    [CH_FREE_GAP] = {.saves = saves_free_gap, .from_event = true},
    [CH_MPS_OTHER] = {.saves = saves_mps_other, .from_event = true},
    [CH_KILL] = {.apply = apply_kill, .saves = saves_held, .from_event = true},
    [CH_FRAG] = {.saves = saves_cache, .from_event = true},
};

/* x for rule r, its change to be made on top of w. */
static void fixing_init(struct fixing *x, struct vf_arena *a, const struct rule *r,
                        const struct known *k, const struct sit *s, const struct vf_workload *w)
{
    const struct vf_oom_context *ctx = s->ctx;
    *x = (struct fixing){.a = a,
                         .r = r,
                         .k = k,
                         .ev = s->ev,
                         .ctx = ctx,
                         .job = s->job,
                         .arg = changes[r->ch].arg,
                         .w = *w};
    x->value = "";
    x->c = k->ok ? eff_ctx(k) : (ctx ? ctx->ctx_tokens : VF_UNKNOWN);
    x->b = ctx && ctx->batch != VF_UNKNOWN ? ctx->batch : 0;
    if (!x->b && k->ok) /* the batch the user said */
        x->b = k->w.task == VF_TASK_TRAIN                                 ? k->w.train.batch
               : k->w.task == VF_TASK_IMAGE || k->w.task == VF_TASK_VIDEO ? k->w.diffusion.batch
                                                                          : k->w.users;
}

/* Fills one fix from a rule: its command with '#' replaced, and what it saves (F-OOM-20). */
static void make_fix(struct vf_arena *a, const struct rule *r, const struct known *k,
                     const struct sit *s, struct vf_fix *f)
{
    const struct change_kind *ck = &changes[r->ch];
    struct fixing x;
    fixing_init(&x, a, r, k, s, &k->w);
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
        f->speed_factor = changed && k->ok ? vf__fix_speed(a, k->cat, k->w.gpu, s->ev->total_bytes,
                                                           &k->m, &k->w, &k->est, &x.w)
                                           : 0;
    if (is(s->d->cause, "host_ram") || is(s->d->cause, "not_vram"))
        f->missing = is(s->d->cause, "host_ram") ? "host RAM is not what vramfit estimates"
                                                 : "shared memory per block is not VRAM";
    else if (ck->from_event)
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

/* Causes where the memory is there, held or split: a bigger card is not the answer. */
static const char *const no_bigger_card = "host_ram not_vram other_process fragmentation leak "
                                          "engine_reservation";

/* F-OOM-14: the estimator's view of the whole workload against the card; an estimate larger
 * than the card turns an unknown cause into workload_too_large. */
static void estimate_evidence(struct vf_arena *a, const struct known *k,
                              const struct vf_oom_event *ev, struct vf_diagnosis *d)
{
    char b1[48], b2[48];
    uint64_t card = k->card_bytes; /* the log's total, else --gpu's */
    (void)ev;
    if (!k->ok || card == VF_UNKNOWN || k->est.total_bytes == VF_UNKNOWN)
        return;
    bool over = k->est.total_bytes > card;
    vf__diagnose_add(
        d, vf_arena_printf(a, "F-OOM-14: the estimate for %s on %s needs %s of the card's %s%s",
                           k->m.name ? k->m.name : k->m.id, k->w.engine,
                           vf_format_bytes(b1, sizeof b1, k->est.total_bytes, VF_FMT_IEC),
                           vf_format_bytes(b2, sizeof b2, card, VF_FMT_IEC),
                           over ? ": the workload is larger than the card" : ""));
    if (over && is(d->cause, "unknown"))
        d->cause = "workload_too_large";
}

/* The fixes: every row of `rules` selects() takes, in order, each with its tags. */
static void list_fixes(struct vf_arena *a, const struct known *k, const struct sit *s,
                       struct vf_explain *out, const struct rule **picked)
{
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
        const struct rule *r = &rules[i];
        if (!selects(r, s))
            continue;
        struct vf_fix *f = next_fix(out);
        if (!f)
            break;
        picked[out->n_fixes - 1] = r;
        make_fix(a, r, k, s, f);
        f->still_short_bytes =
            out->short_bytes == VF_UNKNOWN || f->saves_bytes == VF_UNKNOWN ? VF_UNKNOWN
            : out->short_bytes > f->saves_bytes ? out->short_bytes - f->saves_bytes
                                                : 0;
        unsigned tools = 0;
        for (int g = 0; g < N_GROUPS; g++)
            if (g != G_ANY && covers[r->g] & GBIT(g))
                tools |= GBIT(g);
        f->tag_tools = r->g == G_ANY ? NULL : tag_words(a, tools, group_names, N_GROUPS);
        f->tag_platforms = tag_words(a, r->plat, plat_names, 5);
        f->tag_jobs = tag_words(a, r->jobs, job_names, 4);
    }
}

/* The shortfall (F-OOM-10/14): the estimate over the card when the model is known and does
 * not fit, else what the message asked beyond what was free; VF_UNKNOWN otherwise. */
static uint64_t shortfall(const struct known *k, const struct vf_oom_event *ev)
{
    if (k->ok && k->est.total_bytes != VF_UNKNOWN && k->card_bytes != VF_UNKNOWN &&
        k->est.total_bytes > k->card_bytes)
        return k->est.total_bytes - k->card_bytes;
    if (ev->requested_bytes != VF_UNKNOWN && ev->free_bytes != VF_UNKNOWN &&
        ev->requested_bytes > ev->free_bytes)
        return ev->requested_bytes - ev->free_bytes;
    return VF_UNKNOWN;
}

/* The knob a change sets: the weight storage is one knob whichever type it picks. */
static int knob_of(enum change ch)
{
    return ch == CH_FP8 || ch == CH_Q8 || ch == CH_Q5 || ch == CH_Q4 ? -1 : (int)ch;
}

/*
 * F-OOM-25 (DESIGN section 8, `combination`): the listed fixes that change the workload,
 * applied one on top of the other in the listed order; a fix is kept when it lowers the
 * estimate, and the walk stops as soon as the estimate fits the card. Needs the model and
 * the card; out->n_combination 0 otherwise.
 */
static void combine(struct vf_arena *a, const struct known *k, const struct sit *s,
                    const struct rule *const *picked, struct vf_explain *out)
{
    out->combination_total_bytes = VF_UNKNOWN;
    if (!k->ok || k->card_bytes == VF_UNKNOWN || k->est.total_bytes == VF_UNKNOWN ||
        k->est.total_bytes <= k->card_bytes)
        return;
    struct vf_workload w = k->w;
    uint64_t total = k->est.total_bytes;
    for (size_t i = 0; i < out->n_fixes && total > k->card_bytes; i++) {
        const struct change_kind *ck = &changes[picked[i]->ch];
        if (!ck->apply || ck->from_event || ck->saves) /* not an estimator change */
            continue;
        struct fixing x;
        fixing_init(&x, a, picked[i], k, s, &w);
        struct vf_estimate y;
        if (!ck->apply(&x) || vf_estimate(a, &k->m, &x.w, &y, NULL) ||
            y.total_bytes == VF_UNKNOWN || y.total_bytes >= total)
            continue;
        w = x.w;
        total = y.total_bytes;
        size_t n = 0; /* a fix that sets the same knob replaces the one kept before */
        for (size_t j = 0; j < out->n_combination; j++)
            if (knob_of(picked[out->combination[j]]->ch) != knob_of(picked[i]->ch))
                out->combination[n++] = out->combination[j];
        out->combination[n++] = i;
        out->n_combination = n;
    }
    if (!out->n_combination)
        return;
    out->combination_total_bytes = total;
    out->combination_fits = total <= k->card_bytes;
}

/* The cheapest bigger card (F-OOM-21), when no fix covers the shortfall for free: the
 * cheapest offer vf_pick finds for the estimated workload, else the cheapest single card
 * with more than total + shortfall usable. */
static void bigger_card(struct vf_arena *a, const struct known *k, const struct vf_oom_event *ev,
                        const struct vf_catalog *catalog, struct vf_explain *out)
{
    struct vf_diagnosis *d = &out->diagnosis;
    /* engine_reservation needs no bigger card, unless the model cannot fit what is free */
    bool cannot = k->ok && vllm_cannot_hold(&k->est, ev) && has(ev->text, "Free memory on device");
    if (!catalog || (d->cause && in_list(no_bigger_card, d->cause) && !cannot))
        return;
    uint64_t short_by = VF_UNKNOWN;
    if (ev->requested_bytes != VF_UNKNOWN && ev->free_bytes != VF_UNKNOWN &&
        ev->requested_bytes > ev->free_bytes)
        short_by = ev->requested_bytes - ev->free_bytes;
    uint64_t card = k->card_bytes;
    if (k->ok && k->est.total_bytes != VF_UNKNOWN && card != VF_UNKNOWN &&
        k->est.total_bytes > card)
        short_by = k->est.total_bytes - card;
    for (size_t i = 0; i < out->n_fixes && !cannot; i++)
        if (fix_is_free(&out->fixes[i], short_by))
            return;
    if (k->ok) {
        struct vf_pick p;
        struct vf_workload w = k->w;
        w.usable_bytes = VF_UNKNOWN;
        w.gpus = 1;
        struct vf_error e = {0};
        size_t i = 0; /* issue 19: a bigger card is never the card the job ran on */
        if (!vf_pick(a, catalog, &k->m, &w, NULL, &p, &e))
            while (i < p.n_rows && card != VF_UNKNOWN && p.rows[i].gpu &&
                   p.rows[i].gpu->usable_bytes <= card)
                i++;
        if (!e.code && i < p.n_rows) {
            out->bigger_card = p.rows[i].gpu;
            out->bigger_offer = p.rows[i].offer;
            vf__diagnose_add(d, "F-OOM-21a: bigger card: the cheapest offer vf_pick finds for "
                                "the estimated workload, larger than this card");
            return;
        }
    }
    uint64_t need =
        card != VF_UNKNOWN && short_by != VF_UNKNOWN ? vf__sat_add(card, short_by) : VF_UNKNOWN;
    /* XLA names what the whole program needs (its buffer assignment): a card over that */
    bool xla = is(ev->source, "xla") && ev->allocated_bytes != VF_UNKNOWN &&
               (need == VF_UNKNOWN || need < ev->allocated_bytes);
    if (xla)
        need = ev->allocated_bytes;
    /* PyTorch already held more than the card (Windows' sysmem fallback): what it holds and
     * the request that failed */
    uint64_t held = ev->reserved_bytes != VF_UNKNOWN ? ev->reserved_bytes : ev->allocated_bytes;
    bool over = !xla && held != VF_UNKNOWN && card != VF_UNKNOWN && held > card &&
                ev->requested_bytes != VF_UNKNOWN;
    if (over && (need == VF_UNKNOWN || need < vf__sat_add(held, ev->requested_bytes)))
        need = vf__sat_add(held, ev->requested_bytes);
    else
        over = false;
    if (need == VF_UNKNOWN)
        return;
    cheapest_over(catalog, need, out);
    char b[48];
    if (out->bigger_card)
        vf__diagnose_add(d, vf_arena_printf(a,
                                            "F-OOM-21b: bigger card: the cheapest single card "
                                            "with more than %s = %s usable",
                                            xla    ? "the program's buffers"
                                            : over ? "what PyTorch held + the request"
                                                   : "total + shortfall",
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
    enum group g = group_of(tool, ev);
    struct known *k = vf_arena_alloc(a, sizeof *k);
    if (!k)
        return vf__errf(err, VF_ENOMEM, "explain: out of memory");
    resolve(a, ctx, opts, k);
    k->card_bytes = card_of(ev, opts);
    struct sit s = {.g = g,
                    .plat = plat_of(ev),
                    .d = &out->diagnosis,
                    .ev = ev,
                    .ctx = ctx,
                    .m = k->resolved ? &k->m : NULL};
    s.job = job_of(g, tool, ctx, opts, s.m);
    build(a, ctx, opts, g, s.job, tool, k);
    k->cat = opts ? opts->catalog : NULL;
    s.est = k->ok ? &k->est : NULL;
    out->tool = tool;
    out->group = group_names[g];
    out->platform = tag_words(a, s.plat, plat_names, 5);
    out->job = tag_words(a, s.job, job_names, 4);
    estimate_evidence(a, k, ev, &out->diagnosis);
    out->short_bytes = shortfall(k, ev);
    const struct rule *picked[VF_MAX_FIXES];
    list_fixes(a, k, &s, out, picked);
    combine(a, k, &s, picked, out);
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
