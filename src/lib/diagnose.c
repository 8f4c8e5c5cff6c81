/*
 * diagnose.c - why an out-of-memory event happened (F-OOM-10..19): the cause, the secondary
 * causes and the evidence sentences, each with the numbers it rests on. Reads only the event
 * and the log's context; the estimator's view (workload larger than the card) is added by
 * advise.c, which knows the workload.
 *
 * Order of the rules (first match is the cause, later matches become secondary causes):
 *   not_vram (Triton shared memory) > host_ram (OOM killer, CPU allocator, Ollama system
 *   memory) > engine_reservation (vLLM's start-up check) > other_process > fragmentation >
 *   kv_cache (vLLM KV messages) > leak (training died late) > workload_too_large > unknown.
 */
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Shared with advise.c (no private header for two files; the prototype repeats there). */
enum vf_err vf__diagnose(struct vf_arena *a, const struct vf_oom_event *ev,
                         const struct vf_oom_context *ctx, struct vf_diagnosis *d,
                         struct vf_error *err);

/* A training run that dies after this many steps is more likely leaking than too large. */
#define LEAK_MIN_STEPS 500u
/* An XLA program needing less than this in all failed on memory something else had taken. */
#define XLA_SMALL_PROGRAM ((uint64_t)1 << 30)

static bool has(const char *s, const char *needle)
{
    return s && strstr(s, needle) != NULL;
}

static bool is(const char *s, const char *v)
{
    return s && !vf__strcasecmp(s, v);
}

static const char *gib(struct vf_arena *a, uint64_t b)
{
    char buf[48];
    return vf_arena_strdup(a, vf_format_bytes(buf, sizeof buf, b, VF_FMT_IEC));
}

/* Share of b in t, in tenths of a percent (checked: 0 when t is 0 or unknown). */
static unsigned permille(uint64_t b, uint64_t t)
{
    if (t == 0 || t == VF_UNKNOWN || b == VF_UNKNOWN)
        return 0;
    long double r = (long double)b * 1000.0L / (long double)t;
    return r > 100000.0L ? 100000u : (unsigned)(r + 0.5L);
}

/* Why d is incomplete (the first reason is kept); vf_explain() turns it into an error. */
static void incomplete(struct vf_diagnosis *d, const char *why)
{
    if (!d->incomplete)
        d->incomplete = why;
}

/* Appends an evidence sentence, formatted at its full length (nothing is cut short); a full
 * table or no memory marks d incomplete. */
static void evidence(struct vf_arena *a, struct vf_diagnosis *d, const char *fmt, ...)
    VF__PRINTF(3, 4);
static void evidence(struct vf_arena *a, struct vf_diagnosis *d, const char *fmt, ...)
{
    if (d->n_evidence >= VF_MAX_EVIDENCE) {
        incomplete(d, "more than 16 evidence sentences (VF_MAX_EVIDENCE)");
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *s = n < 0 ? NULL : vf_arena_alloc(a, (size_t)n + 1);
    if (!s) {
        incomplete(d, "out of memory building the diagnosis");
        return;
    }
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    d->evidence[d->n_evidence++] = s;
}

/* Sets the cause the first time, adds a secondary cause afterwards (no duplicates). */
static void cause(struct vf_diagnosis *d, const char *c)
{
    if (!d->cause) {
        d->cause = c;
        return;
    }
    if (!strcmp(d->cause, c))
        return;
    for (size_t i = 0; i < d->n_secondary; i++)
        if (!strcmp(d->secondary[i], c))
            return;
    if (d->n_secondary < sizeof d->secondary / sizeof d->secondary[0])
        d->secondary[d->n_secondary++] = c;
    else
        incomplete(d, "more than 8 secondary causes (struct vf_diagnosis.secondary)");
}

static bool is_training_tool(const char *tool)
{
    return is(tool, "pytorch") || is(tool, "transformers") || is(tool, "deepspeed") ||
           is(tool, "accelerate") || is(tool, "tensorflow") || is(tool, "jax");
}

/* Sum of the memory the message names for other processes (VF_UNKNOWN when none). */
static uint64_t procs_bytes(const struct vf_oom_event *ev)
{
    uint64_t sum = 0;
    bool any = false;
    for (size_t i = 0; i < ev->n_procs && i < VF_OOM_MAX_PROCS; i++) {
        if (ev->procs[i].bytes == VF_UNKNOWN)
            continue;
        sum = vf__sat_add(sum, ev->procs[i].bytes);
        any = true;
    }
    return any ? sum : VF_UNKNOWN;
}

/*
 * Contract: fills *d (zeroed first) from one event and the context. Never fails on odd
 * numbers (free > total on APUs is reported, not rejected); VF_ENOMEM only.
 */
enum vf_err vf__diagnose(struct vf_arena *a, const struct vf_oom_event *ev,
                         const struct vf_oom_context *ctx, struct vf_diagnosis *d,
                         struct vf_error *err)
{
    memset(d, 0, sizeof *d);
    const uint64_t req = ev->requested_bytes, tot = ev->total_bytes, fre = ev->free_bytes;
    const uint64_t ru = ev->reserved_unallocated_bytes;
    const char *text = ev->text;

    /* F-OOM-18: not the card's memory at all. */
    if (is(ev->source, "triton") || has(text, "out of resource: shared memory")) {
        cause(d, "not_vram");
        evidence(a, d,
                 "F-OOM-18: Triton ran out of on-chip shared memory per block (a kernel "
                 "setting), not of GPU memory: a card with more VRAM of the same architecture "
                 "does not help");
    }
    /* a CPU-only bitsandbytes build marks its event backend cpu: that is not host RAM */
    bool bnb = is(ev->source, "bitsandbytes");
    if (is(ev->source, "linux") || (is(ev->backend, "cpu") && !bnb) ||
        has(text, "DefaultCPUAllocator") || has(text, "requires more system memory") ||
        has(text, "Killed process")) {
        cause(d, "host_ram");
        evidence(a, d,
                 "F-OOM-18: the host's RAM ran out (%s), not the GPU's: the fix is more RAM, "
                 "swap or a larger container limit, the opposite of a bigger GPU",
                 is(ev->source, "linux") ? "the Linux OOM killer stopped the process"
                                         : "a CPU-side allocation failed");
    }
    if (d->cause) /* not the card's memory: the figures below would mislead */
        return VF_OK;

    /* F-OOM-17: vLLM's start-up check against a fraction of the whole card. */
    if (has(text, "less than desired GPU memory utilization")) {
        cause(d, "engine_reservation");
        if (tot != VF_UNKNOWN && fre != VF_UNKNOWN && fre <= tot)
            evidence(a, d,
                     "F-OOM-17: vLLM wants --gpu-memory-utilization x %s of the card, but only "
                     "%s is free: %s is held by something else",
                     gib(a, tot), gib(a, fre), gib(a, tot - fre));
        else
            evidence(a, d,
                     "F-OOM-17: vLLM reserves a fraction of the whole card at start "
                     "(--gpu-memory-utilization, default 0.9); something else holds part of it");
    } else if (ctx && ctx->gpu_memory_utilization > 0.0 && is(ev->tool, "vllm") &&
               has(text, "gpu_memory_utilization") && !has(text, "KV cache")) {
        cause(d, "engine_reservation");
        evidence(a, d, "F-OOM-17: vLLM ran at --gpu-memory-utilization %.2f",
                 ctx->gpu_memory_utilization);
    }

    /* F-OOM-17: an engine's own pool took the card before the failing allocation. */
    if (is(ev->tool, "tensorflow") && (is(ev->source, "cublas") || is(ev->source, "cudnn"))) {
        cause(d, "engine_reservation");
        evidence(a, d,
                 "F-OOM-17: TensorFlow maps (nearly) all GPU memory into its BFC pool at start; "
                 "the %s handle, allocated outside that pool, found nothing left",
                 ev->source);
    } else if (is(ev->tool, "vllm") && has(text, "warming up sampler")) {
        cause(d, "engine_reservation");
        evidence(a, d,
                 "F-OOM-17: vLLM had already reserved --gpu-memory-utilization of the card for "
                 "weights and KV cache; the sampler's warm-up for max_num_seqs requests did not "
                 "fit in the rest");
    } else if (is(ev->source, "xla") && ev->allocated_bytes != VF_UNKNOWN &&
               ev->allocated_bytes < XLA_SMALL_PROGRAM) {
        cause(d, "engine_reservation");
        evidence(a, d,
                 "F-OOM-17: the program needs only %s in all (XLA buffer assignment) yet a %s "
                 "request failed: the memory was already taken, by XLA's preallocation (75 %% "
                 "of the card per process by default) or by another process",
                 gib(a, ev->allocated_bytes),
                 gib(a, req != VF_UNKNOWN ? req : ev->allocated_bytes));
    }

    /* F-OOM-12: other processes on the card. */
    uint64_t others = procs_bytes(ev);
    uint64_t own = ev->allocated_bytes;
    if (own != VF_UNKNOWN && ru != VF_UNKNOWN)
        own = vf__sat_add(own, ru);
    /* One "Process N", no "this process" clause, and it plus what PyTorch holds itself
     * would exceed the card: it cannot be another process, it is this one under its host
     * PID (NVML inside a container). */
    if (others != VF_UNKNOWN && ev->n_procs == 1 && ev->non_pytorch_bytes == VF_UNKNOWN &&
        own != VF_UNKNOWN && tot != VF_UNKNOWN && others >= own && vf__sat_add(others, own) > tot) {
        evidence(a, d,
                 "F-OOM-12: PID %u holds %s; with the %s PyTorch holds itself that exceeds the "
                 "card (%s), and the message has no \"this process\" clause: it is this "
                 "process under its host PID (inside a container), not another one",
                 ev->procs[0].pid, gib(a, others), gib(a, own), gib(a, tot));
        others = VF_UNKNOWN;
    }
    /* MPS: "other allocations" of the unified memory larger than PyTorch's own. */
    if (is(ev->backend, "mps") && ev->non_pytorch_bytes != VF_UNKNOWN &&
        ev->allocated_bytes != VF_UNKNOWN && ev->non_pytorch_bytes > ev->allocated_bytes &&
        (req == VF_UNKNOWN || ev->non_pytorch_bytes >= req)) {
        unsigned pm = permille(ev->non_pytorch_bytes, tot);
        cause(d, "other_process");
        evidence(a, d,
                 "F-OOM-12: other allocations hold %s (%u.%u %% of the MPS limit), more than "
                 "PyTorch's own %s: something else uses the shared memory",
                 gib(a, ev->non_pytorch_bytes), pm / 10, pm % 10, gib(a, ev->allocated_bytes));
    }
    /* cuBLAS/cuDNN handle creation: a few MiB at the first matmul/convolution. */
    if (!is(ev->tool, "tensorflow") && (is(ev->source, "cublas") || is(ev->source, "cudnn"))) {
        cause(d, "other_process");
        evidence(a, d,
                 "F-OOM-12: %s could not allocate its handle/workspace (a few MiB, at the first "
                 "use): the card was already full when the job started; most often another "
                 "process holds it (nvidia-smi), else the model loaded on that card fills it",
                 is(ev->source, "cublas") ? "cuBLAS" : "cuDNN");
    }
    if (others != VF_UNKNOWN) {
        char list[256] = "";
        size_t at = 0;
        for (size_t i = 0; i < ev->n_procs && i < 4; i++) {
            int k = snprintf(list + at, sizeof list - at, "%sPID %u %s", i ? ", " : "",
                             ev->procs[i].pid, gib(a, ev->procs[i].bytes));
            if (k < 0 || (size_t)k >= sizeof list - at)
                break;
            at += (size_t)k;
        }
        unsigned pm = permille(others, tot);
        evidence(a, d, "F-OOM-12: other processes hold %s (%u.%u %% of the card): %s",
                 gib(a, others), pm / 10, pm % 10, list);
        /* a share that matters: more than the request, or a tenth of the card */
        if ((req != VF_UNKNOWN && others >= req) || pm >= 100)
            cause(d, "other_process");
    }

    /* F-OOM-10: the shortfall of the failed request. */
    if (req != VF_UNKNOWN && fre != VF_UNKNOWN && req > fre)
        evidence(a, d, "F-OOM-10: shortfall = requested %s - free %s = %s", gib(a, req),
                 gib(a, fre), gib(a, req - fre));

    /* F-OOM-19: ROCm APUs report free above total (shared system memory). */
    if (tot != VF_UNKNOWN && fre != VF_UNKNOWN && fre > tot)
        evidence(a, d,
                 "F-OOM-19: free %s exceeds total %s: an APU/UMA reporting quirk (ROCm), the "
                 "figures do not describe a dedicated card",
                 gib(a, fre), gib(a, tot));

    bool frag_minor = false;
    /* F-OOM-11: fragmentation = reserved but unallocated, as a share of the card. */
    if (ru != VF_UNKNOWN) {
        unsigned pm = permille(ru, tot);
        /* primary: the cache could serve the request and is 5 % of the card or more */
        bool frag = req != VF_UNKNOWN && ru >= req && pm >= 50;
        evidence(a, d,
                 "F-OOM-11: reserved-but-unallocated %s = %u.%u %% of the card; %s the "
                 "request%s",
                 gib(a, ru), pm / 10, pm % 10, frag ? "at least" : "less than",
                 frag ? ": the memory is there, in pieces too small" : "");
        if (frag)
            cause(d, "fragmentation");
        frag_minor = !frag && (pm >= 100 || (req != VF_UNKNOWN && ru >= req));
    }

    /* F-OOM-15: vLLM's KV cache messages. */
    if (has(text, "KV cache") || has(text, "max seq len") || has(text, "cache blocks")) {
        cause(d, "kv_cache");
        if (ctx && ctx->ctx_tokens != VF_UNKNOWN && ctx->ctx_tokens)
            evidence(a, d,
                     "F-OOM-15: the KV cache for %llu tokens per sequence does not fit what "
                     "is left after the weights",
                     (unsigned long long)ctx->ctx_tokens);
        else
            evidence(a, d, "F-OOM-15: the KV cache does not fit what is left after the weights");
    }

    /* F-OOM-16: a training run that ran for hundreds of steps first. */
    uint64_t step = ev->step;
    if (step == VF_UNKNOWN && ctx && ctx->last_step != VF_UNKNOWN)
        step = ctx->last_step;
    if (step != VF_UNKNOWN && step >= LEAK_MIN_STEPS && is_training_tool(ev->tool)) {
        cause(d, "leak");
        evidence(a, d,
                 "F-OOM-16: it ran %llu steps before failing: memory grew over time (a leak such "
                 "as total_loss += loss keeping the graph, or evaluation without torch.no_grad())",
                 (unsigned long long)step);
    }

    /* F-OOM-13: one request larger than the whole card can never fit. A ComfyUI loader node
     * that fails is the model itself not fitting, figures or not. */
    if (ctx && ctx->node_type && strstr(ctx->node_type, "Loader") && is(ev->tool, "comfyui")) {
        cause(d, "workload_too_large");
        evidence(a, d,
                 "F-OOM-13: ComfyUI failed in %s, a model loader: the model's weights do not fit "
                 "what the card has free",
                 ctx->node_type);
    } else if (req != VF_UNKNOWN && tot != VF_UNKNOWN && req > tot) {
        cause(d, "workload_too_large");
        evidence(a, d, "F-OOM-13: one request of %s is larger than the whole card (%s)",
                 gib(a, req), gib(a, tot));
    } else if (ev->allocated_bytes != VF_UNKNOWN && tot != VF_UNKNOWN &&
               permille(ev->allocated_bytes, tot) >= 800) {
        unsigned pm = permille(ev->allocated_bytes, tot);
        cause(d, "workload_too_large");
        evidence(a, d, "F-OOM-13: tensors hold %s = %u.%u %% of the card: the job needs more",
                 gib(a, ev->allocated_bytes), pm / 10, pm % 10);
    } else if (req != VF_UNKNOWN && (is(ev->source, "ggml-cuda") || is(ev->tool, "llamacpp") ||
                                     is(ev->tool, "ollama"))) {
        cause(d, "workload_too_large");
        evidence(a, d, "F-OOM-13: llama.cpp could not allocate a buffer of %s", gib(a, req));
    } else if (req != VF_UNKNOWN && tot != VF_UNKNOWN && ev->allocated_bytes != VF_UNKNOWN &&
               vf__sat_add(req, ev->allocated_bytes) > tot) {
        cause(d, "workload_too_large");
        evidence(a, d,
                 "F-OOM-13: tensors %s + request %s = %s, more than the whole card (%s): even "
                 "without fragmentation the job does not fit",
                 gib(a, ev->allocated_bytes), gib(a, req),
                 gib(a, vf__sat_add(req, ev->allocated_bytes)), gib(a, tot));
    } else if (is(ev->source, "xla") && ev->allocated_bytes != VF_UNKNOWN &&
               ev->allocated_bytes >= XLA_SMALL_PROGRAM) {
        cause(d, "workload_too_large");
        evidence(a, d,
                 "F-OOM-13: XLA's buffer assignment for the program needs %s in all (the request "
                 "of %s is one buffer of it): compare with the card's total",
                 gib(a, ev->allocated_bytes), gib(a, req != VF_UNKNOWN ? req : 0));
    } else if (is(ev->tool, "tensorflow") && !is(ev->source, "cublas") &&
               !is(ev->source, "cudnn")) {
        cause(d, "workload_too_large");
        if (req != VF_UNKNOWN)
            evidence(a, d,
                     "F-OOM-13: TensorFlow's pool, (nearly) the whole card by default, could not "
                     "serve %s more: the graph's own tensors fill it",
                     gib(a, req));
        else
            evidence(a, d,
                     "F-OOM-13: a tensor did not fit TensorFlow's pool, (nearly) the whole card "
                     "by default: the graph's own tensors fill it (batch size)");
    } else if (is(ev->source, "nccl")) {
        cause(d, "workload_too_large");
        evidence(a, d,
                 "F-OOM-13: NCCL could not allocate its communication buffers: the training "
                 "step had filled the card and left no headroom for them");
    } else if (bnb) {
        cause(d, "workload_too_large");
        evidence(a, d,
                 "F-OOM-13: device_map=\"auto\" found the quantized model larger than the free "
                 "GPU memory and put modules on the CPU or disk");
    } else if (is(ev->tool, "ollama") && is(ev->source, "ggml-cuda")) {
        cause(d, "workload_too_large");
        evidence(a, d,
                 "F-OOM-13: Ollama offloads the layers its own estimate says fit; the runner "
                 "died allocating on the GPU, so what it placed there did not fit");
    }
    if (bnb && is(ev->backend, "cpu"))
        evidence(a, d,
                 "F-OOM-13: but bitsandbytes was compiled without GPU support: it cannot "
                 "quantize on the GPU at all; install a CUDA build before judging the fit");
    if (!d->cause)
        cause(d, "unknown");
    if (frag_minor)
        cause(d, "fragmentation");
    if (d->n_evidence == 0)
        evidence(a, d, "the message carries no figures; run nvidia-smi while the job runs");
    (void)err;
    return VF_OK;
}
