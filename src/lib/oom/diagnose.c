/* SPDX-License-Identifier: Apache-2.0 */
/*
 * diagnose.c - why an out-of-memory event happened (F-OOM-10..19): the cause, the secondary
 * causes and the evidence sentences, each with the numbers it rests on. Reads only the event
 * and the log's context; the estimator's view (workload larger than the card) is added by
 * advise.c, which knows the workload.
 *
 * The diagnosis is one ordered table of rules (`rules` below, where the order is explained).
 * A rule is its formula ID, the cause it sets (NULL: evidence only), a predicate over the
 * event and the context (struct facts, computed once), and the evidence sentence it writes.
 * How to add a rule: a row in the place its cause takes in the order; a predicate (holds_*)
 * and, for a sentence with figures, a writer (say_*).
 */
#include "oom.h"
#include "engine/runtime.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

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

void vf__diagnose_incomplete(struct vf_diagnosis *d, const char *why)
{
    if (!d->incomplete)
        d->incomplete = why;
}

void vf__diagnose_add(struct vf_diagnosis *d, const char *s)
{
    if (!s)
        vf__diagnose_incomplete(d, "out of memory building the diagnosis");
    else if (d->n_evidence >= VF_MAX_EVIDENCE)
        vf__diagnose_incomplete(d, "more than 16 evidence sentences (VF_MAX_EVIDENCE)");
    else
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
        vf__diagnose_incomplete(d, "more than 8 secondary causes (struct vf_diagnosis.secondary)");
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

/* ------------------------------------------------------------------ facts */

/* What the rules read: the event's figures and the conclusions drawn from them once. */
struct facts {
    struct vf_arena *a;
    struct vf_diagnosis *d;
    const char *id; /* the rule being walked: prefixes its evidence */
    const struct vf_oom_event *ev;
    const struct vf_oom_context *ctx; /* may be NULL */
    const char *text;
    uint64_t req, tot, fre, ru, alloc;
    uint64_t held;    /* what the "Process N" entries hold (VF_UNKNOWN: none named) */
    uint64_t own;     /* what PyTorch holds itself: allocated + reserved-unallocated */
    bool host_pid;    /* the one "Process N" is this process under its host PID */
    uint64_t others;  /* what other processes hold: held, unless it is this process */
    unsigned ru_pm;   /* reserved-unallocated, per mille of the card */
    bool frag;        /* F-OOM-11: the allocator's cache could serve the request */
    bool frag_minor;  /* a sizeable cache that could not: a secondary cause */
    bool bnb, handle; /* bitsandbytes; a cuBLAS/cuDNN handle */
    uint64_t step;    /* the last training step seen (VF_UNKNOWN) */
};

static void facts_of(struct vf_arena *a, const struct vf_oom_event *ev,
                     const struct vf_oom_context *ctx, struct vf_diagnosis *d, struct facts *f)
{
    *f = (struct facts){.a = a, .d = d, .ev = ev, .ctx = ctx, .text = ev->text};
    f->req = ev->requested_bytes;
    f->tot = ev->total_bytes;
    f->fre = ev->free_bytes;
    f->ru = ev->reserved_unallocated_bytes;
    f->alloc = ev->allocated_bytes;
    f->held = procs_bytes(ev);
    f->own =
        f->alloc != VF_UNKNOWN && f->ru != VF_UNKNOWN ? vf__sat_add(f->alloc, f->ru) : f->alloc;
    /* One "Process N", no "this process" clause, and it plus what PyTorch holds itself
     * would exceed the card, or what the card has in use (total - free, the same moment):
     * it cannot be another process, it is this one under its host PID (NVML inside a
     * container; dots.ocr#196: 14.51 GiB "Process N" = total 44.40 - free 29.89, PyTorch
     * itself 14.16). The used side allows 1 % of the card for the rounding of the figures. */
    uint64_t used = f->tot != VF_UNKNOWN && f->fre != VF_UNKNOWN && f->fre <= f->tot
                        ? f->tot - f->fre + f->tot / 100
                        : VF_UNKNOWN;
    uint64_t both = vf__sat_add(f->held, f->own);
    f->host_pid = f->held != VF_UNKNOWN && ev->n_procs == 1 &&
                  ev->non_pytorch_bytes == VF_UNKNOWN && f->own != VF_UNKNOWN &&
                  f->tot != VF_UNKNOWN && f->held >= f->own &&
                  (both > f->tot || (used != VF_UNKNOWN && both > used));
    f->others = f->host_pid ? VF_UNKNOWN : f->held;
    f->ru_pm = permille(f->ru, f->tot);
    /* primary: the cache could serve the request and is 5 % of the card or more */
    f->frag = f->ru != VF_UNKNOWN && f->req != VF_UNKNOWN && f->ru >= f->req && f->ru_pm >= 50;
    f->frag_minor = f->ru != VF_UNKNOWN && !f->frag &&
                    (f->ru_pm >= 100 || (f->req != VF_UNKNOWN && f->ru >= f->req));
    f->bnb = is(ev->source, "bitsandbytes");
    f->handle = is(ev->source, "cublas") || is(ev->source, "cudnn");
    f->step = ev->step;
    if (f->step == VF_UNKNOWN && ctx && ctx->last_step != VF_UNKNOWN)
        f->step = ctx->last_step;
}

/* Appends an evidence sentence, "<rule id>: " and fmt formatted at its full length (nothing
 * is cut short); a full table or no memory marks d incomplete. */
static void evidence(const struct facts *f, const char *fmt, ...) VF__PRINTF(2, 3);
static void evidence(const struct facts *f, const char *fmt, ...)
{
    if (f->d->n_evidence >= VF_MAX_EVIDENCE) { /* not formatted: the table is full */
        vf__diagnose_add(f->d, "");            /* names the limit in d->incomplete */
        return;
    }
    struct vf__sb b;
    vf__sb_init(&b, f->a);
    if (f->id)
        vf__sb_printf(&b, "%s: ", f->id);
    va_list ap;
    va_start(ap, fmt);
    vf__sb_vprintf(&b, fmt, ap);
    va_end(ap);
    vf__diagnose_add(f->d, vf__sb_done(&b));
}

/* ------------------------------------------------------------- predicates */

static bool holds_triton(const struct facts *f)
{
    return is(f->ev->source, "triton") || has(f->text, "out of resource: shared memory");
}

/* a CPU-only bitsandbytes build marks its event backend cpu: that is not host RAM */
static bool holds_host_ram(const struct facts *f)
{
    return is(f->ev->source, "linux") || (is(f->ev->backend, "cpu") && !f->bnb) ||
           has(f->text, "DefaultCPUAllocator") || has(f->text, "requires more system memory") ||
           has(f->text, "Killed process");
}

static bool holds_vllm_below_util(const struct facts *f)
{
    return has(f->text, "less than desired GPU memory utilization");
}

static bool holds_vllm_at_util(const struct facts *f)
{
    return f->ctx && f->ctx->gpu_memory_utilization > 0.0 && is(f->ev->tool, "vllm") &&
           has(f->text, "gpu_memory_utilization") && !has(f->text, "KV cache");
}

static bool holds_tf_handle(const struct facts *f)
{
    return is(f->ev->tool, "tensorflow") && f->handle;
}

static bool holds_vllm_sampler(const struct facts *f)
{
    return is(f->ev->tool, "vllm") && has(f->text, "warming up sampler");
}

static bool holds_xla_small(const struct facts *f)
{
    return is(f->ev->source, "xla") && f->alloc != VF_UNKNOWN && f->alloc < XLA_SMALL_PROGRAM;
}

static bool holds_host_pid(const struct facts *f)
{
    return f->host_pid;
}

/* MPS: "other allocations" of the unified memory larger than PyTorch's own. */
static bool holds_mps_other(const struct facts *f)
{
    uint64_t np = f->ev->non_pytorch_bytes;
    return is(f->ev->backend, "mps") && np != VF_UNKNOWN && f->alloc != VF_UNKNOWN &&
           np > f->alloc && (f->req == VF_UNKNOWN || np >= f->req);
}

static bool holds_handle_at_start(const struct facts *f)
{
    return !is(f->ev->tool, "tensorflow") && f->handle;
}

static bool holds_others_named(const struct facts *f)
{
    return f->others != VF_UNKNOWN;
}

/* a share that matters: more than the request, or a tenth of the card */
static bool holds_others_matter(const struct facts *f)
{
    return f->others != VF_UNKNOWN &&
           ((f->req != VF_UNKNOWN && f->others >= f->req) || permille(f->others, f->tot) >= 100);
}

static bool holds_short_of_free(const struct facts *f)
{
    return f->req != VF_UNKNOWN && f->fre != VF_UNKNOWN && f->req > f->fre;
}

static bool holds_free_over_total(const struct facts *f)
{
    return f->tot != VF_UNKNOWN && f->fre != VF_UNKNOWN && f->fre > f->tot;
}

static bool holds_cache_known(const struct facts *f)
{
    return f->ru != VF_UNKNOWN;
}

static bool holds_frag(const struct facts *f)
{
    return f->frag;
}

static bool holds_kv_message(const struct facts *f)
{
    return has(f->text, "KV cache") || has(f->text, "max seq len") || has(f->text, "cache blocks");
}

static bool holds_long_training(const struct facts *f)
{
    return f->step != VF_UNKNOWN && f->step >= LEAK_MIN_STEPS && is_training_tool(f->ev->tool);
}

static bool holds_comfy_loader(const struct facts *f)
{
    return f->ctx && f->ctx->node_type && strstr(f->ctx->node_type, "Loader") &&
           is(f->ev->tool, "comfyui");
}

/* PyTorch holds more than the card: on Windows the driver lends system memory past the card
 * (the CUDA "sysmem fallback" of drivers 536.40 and later) until that runs out too. */
static bool holds_held_over_card(const struct facts *f)
{
    return f->own != VF_UNKNOWN && f->tot != VF_UNKNOWN && f->own > f->tot && !f->host_pid &&
           (!f->ev->backend || is(f->ev->backend, "cuda"));
}

static bool holds_request_over_card(const struct facts *f)
{
    return f->req != VF_UNKNOWN && f->tot != VF_UNKNOWN && f->req > f->tot;
}

static bool holds_tensors_fill(const struct facts *f)
{
    return f->alloc != VF_UNKNOWN && f->tot != VF_UNKNOWN && permille(f->alloc, f->tot) >= 800;
}

static bool holds_llamacpp_buffer(const struct facts *f)
{
    return f->req != VF_UNKNOWN && (is(f->ev->source, "ggml-cuda") || is(f->ev->tool, "llamacpp") ||
                                    is(f->ev->tool, "ollama"));
}

static bool holds_tensors_and_request(const struct facts *f)
{
    return f->req != VF_UNKNOWN && f->tot != VF_UNKNOWN && f->alloc != VF_UNKNOWN &&
           vf__sat_add(f->req, f->alloc) > f->tot;
}

/* F-OOM-13c: more asked than was free, and what the card held outside PyTorch is no more than
 * this process's own CUDA context and libraries, with no other process named and a cache too
 * small to serve it: the job's own tensors and the request do not fit (LaWGPT#122: 14.71 GiB
 * held + 8.23 asked + 1.00 outside on a 23.70 GiB card). */
static bool holds_own_context_only(const struct facts *f)
{
    uint64_t out = f->ev->outside_pytorch_bytes, cap = VF_RT_CUDA_CONTEXT_EAGER_BYTES;
    if (is(f->ev->backend, "mps")) {
        /* MPS: "other allocations" are this process's Metal allocations outside PyTorch's
         * allocator (MPSGraph and driver caches); more than PyTorch's own is F-OOM-12b */
        out = f->ev->non_pytorch_bytes;
        cap = f->own;
    }
    return f->req != VF_UNKNOWN && f->fre != VF_UNKNOWN && f->req > f->fre && out != VF_UNKNOWN &&
           cap != VF_UNKNOWN && out <= cap && !f->frag &&
           (f->others == VF_UNKNOWN || f->others == 0) && f->own != VF_UNKNOWN;
}

static void say_own_context_only(const struct facts *f)
{
    bool mps = is(f->ev->backend, "mps");
    uint64_t out = mps ? f->ev->non_pytorch_bytes : f->ev->outside_pytorch_bytes;
    uint64_t all = vf__sat_add(vf__sat_add(f->own, f->req), out);
    if (mps)
        evidence(f,
                 "PyTorch holds %s, the request is %s and the process's other Metal allocations "
                 "%s: %s in all, over MPS's limit (%s); the job itself does not fit",
                 gib(f->a, f->own), gib(f->a, f->req), gib(f->a, out), gib(f->a, all),
                 gib(f->a, f->tot));
    else
        evidence(f,
                 "PyTorch holds %s, the request is %s and %s is outside PyTorch (no more than a "
                 "CUDA context with its libraries, %s at most without another process): %s in "
                 "all, more than the card (%s); the job itself does not fit",
                 gib(f->a, f->own), gib(f->a, f->req), gib(f->a, out),
                 gib(f->a, VF_RT_CUDA_CONTEXT_EAGER_BYTES), gib(f->a, all), gib(f->a, f->tot));
}

static bool holds_xla_program(const struct facts *f)
{
    return is(f->ev->source, "xla") && f->alloc != VF_UNKNOWN && f->alloc >= XLA_SMALL_PROGRAM;
}

static bool holds_tf_pool(const struct facts *f)
{
    return is(f->ev->tool, "tensorflow") && !f->handle;
}

static bool holds_nccl(const struct facts *f)
{
    return is(f->ev->source, "nccl");
}

static bool holds_bnb(const struct facts *f)
{
    return f->bnb;
}

static bool holds_ollama_runner(const struct facts *f)
{
    return is(f->ev->tool, "ollama") && is(f->ev->source, "ggml-cuda");
}

/* Ollama's scheduler found no layout (llm/server.go, 0.12+): no split of the layers over the
 * GPUs and the host holds the model with its context and graph (ollama#15517: fixed by a
 * shorter OLLAMA_CONTEXT_LENGTH than the default for the card). */
static bool holds_ollama_layout(const struct facts *f)
{
    return f->ev->pattern && !strcmp(f->ev->pattern, "ollama-memory-layout");
}

static bool holds_bnb_cpu_build(const struct facts *f)
{
    return f->bnb && is(f->ev->backend, "cpu");
}

static bool holds_no_cause(const struct facts *f)
{
    return !f->d->cause;
}

static bool holds_frag_minor(const struct facts *f)
{
    return f->frag_minor;
}

static bool holds_no_evidence(const struct facts *f)
{
    return f->d->n_evidence == 0;
}

/* ---------------------------------------------------- evidence with figures */

static void say_host_ram(const struct facts *f)
{
    if (has(f->text, "requires more system memory")) { /* Ollama's check (llm/server.go) */
        evidence(f, "Ollama checks, before loading, that the part of the model it cannot place "
                    "on the GPU fits the free RAM and swap: it does not; more RAM or swap holds "
                    "it, and more free GPU memory, a smaller quant or a shorter context shrinks "
                    "it");
        return;
    }
    evidence(f,
             "the host's RAM ran out (%s), not the GPU's: the fix is more RAM, swap or a larger "
             "container limit, the opposite of a bigger GPU",
             is(f->ev->source, "linux") ? "the Linux OOM killer stopped the process"
                                        : "a CPU-side allocation failed");
}

static void say_vllm_below_util(const struct facts *f)
{
    if (f->tot != VF_UNKNOWN && f->fre != VF_UNKNOWN && f->fre <= f->tot)
        evidence(f,
                 "vLLM wants --gpu-memory-utilization x %s of the card, but only %s is free: %s "
                 "is held by something else",
                 gib(f->a, f->tot), gib(f->a, f->fre), gib(f->a, f->tot - f->fre));
    else
        evidence(f, "vLLM reserves a fraction of the whole card at start "
                    "(--gpu-memory-utilization, default 0.9); something else holds part of it");
}

static void say_vllm_at_util(const struct facts *f)
{
    evidence(f, "vLLM ran at --gpu-memory-utilization %.2f", f->ctx->gpu_memory_utilization);
}

static void say_tf_handle(const struct facts *f)
{
    evidence(f,
             "TensorFlow maps (nearly) all GPU memory into its BFC pool at start; the %s handle, "
             "allocated outside that pool, found nothing left",
             f->ev->source);
}

static void say_xla_small(const struct facts *f)
{
    evidence(f,
             "the program needs only %s in all (XLA buffer assignment) yet a %s request failed: "
             "the memory was already taken, by XLA's preallocation (75 %% of the card per "
             "process by default) or by another process",
             gib(f->a, f->alloc), gib(f->a, f->req != VF_UNKNOWN ? f->req : f->alloc));
}

static void say_host_pid(const struct facts *f)
{
    bool card = vf__sat_add(f->held, f->own) > f->tot;
    evidence(f,
             "PID %u holds %s; with the %s PyTorch holds itself that exceeds %s (%s), and "
             "the message has no \"this process\" clause: it is this process under its host "
             "PID (inside a container), not another one",
             f->ev->procs[0].pid, gib(f->a, f->held), gib(f->a, f->own),
             card ? "the card" : "what the card had in use (total - free)",
             gib(f->a, card ? f->tot : f->tot - f->fre));
}

static void say_mps_other(const struct facts *f)
{
    unsigned pm = permille(f->ev->non_pytorch_bytes, f->tot);
    evidence(f,
             "other allocations hold %s (%u.%u %% of the MPS limit), more than PyTorch's own "
             "%s: something else uses the shared memory",
             gib(f->a, f->ev->non_pytorch_bytes), pm / 10, pm % 10, gib(f->a, f->alloc));
}

static void say_handle_at_start(const struct facts *f)
{
    evidence(f,
             "%s could not allocate its handle/workspace (a few MiB, at the first use): the "
             "card was already full at that point; the message does not say by whom (this "
             "job's own tensors or another process): nvidia-smi while it runs tells which",
             is(f->ev->source, "cublas") ? "cuBLAS" : "cuDNN");
}

static void say_others_named(const struct facts *f)
{
    char list[256] = "";
    size_t at = 0;
    for (size_t i = 0; i < f->ev->n_procs && i < 4; i++) {
        int k = snprintf(list + at, sizeof list - at, "%sPID %u %s", i ? ", " : "",
                         f->ev->procs[i].pid, gib(f->a, f->ev->procs[i].bytes));
        if (k < 0 || (size_t)k >= sizeof list - at)
            break;
        at += (size_t)k;
    }
    unsigned pm = permille(f->others, f->tot);
    evidence(f, "other processes hold %s (%u.%u %% of the card): %s", gib(f->a, f->others), pm / 10,
             pm % 10, list);
}

static void say_short_of_free(const struct facts *f)
{
    evidence(f, "shortfall = requested %s - free %s = %s", gib(f->a, f->req), gib(f->a, f->fre),
             gib(f->a, f->req - f->fre));
}

static void say_free_over_total(const struct facts *f)
{
    evidence(f,
             "free %s exceeds total %s: an APU/UMA reporting quirk (ROCm), the figures do not "
             "describe a dedicated card",
             gib(f->a, f->fre), gib(f->a, f->tot));
}

static void say_cache(const struct facts *f)
{
    /* the words compare the reserve with the request itself (issue 19: "less than" was
     * printed for a reserve larger than the request when it was under 5 % of the card) */
    bool covers = f->req != VF_UNKNOWN && f->ru >= f->req;
    evidence(f, "reserved-but-unallocated %s = %u.%u %% of the card; %s the request%s",
             gib(f->a, f->ru), f->ru_pm / 10, f->ru_pm % 10, covers ? "at least" : "less than",
             f->frag ? ": the memory is there, in pieces too small" : "");
}

static void say_kv(const struct facts *f)
{
    if (f->ctx && f->ctx->ctx_tokens != VF_UNKNOWN && f->ctx->ctx_tokens)
        evidence(f,
                 "the KV cache for %llu tokens per sequence does not fit what is left after the "
                 "weights",
                 (unsigned long long)f->ctx->ctx_tokens);
    else
        evidence(f, "the KV cache does not fit what is left after the weights");
}

static void say_leak(const struct facts *f)
{
    evidence(f,
             "it ran %llu steps before failing: memory grew over time (a leak such as total_loss "
             "+= loss keeping the graph, or evaluation without torch.no_grad())",
             (unsigned long long)f->step);
}

static void say_comfy_loader(const struct facts *f)
{
    evidence(f,
             "ComfyUI failed in %s, a model loader: the model's weights do not fit what the card "
             "has free",
             f->ctx->node_type);
}

static void say_request_over_card(const struct facts *f)
{
    evidence(f, "one request of %s is larger than the whole card (%s)", gib(f->a, f->req),
             gib(f->a, f->tot));
}

static void say_held_over_card(const struct facts *f)
{
    evidence(f,
             "PyTorch holds %s, more than the whole card (%s): the driver lent system memory "
             "past the card (Windows' CUDA sysmem fallback, or unified memory), far slower "
             "than the card's own, and the next %s did not fit either: the job needs about %s",
             gib(f->a, f->own), gib(f->a, f->tot), gib(f->a, f->req),
             gib(f->a, vf__sat_add(f->own, f->req)));
}

static void say_tensors_fill(const struct facts *f)
{
    unsigned pm = permille(f->alloc, f->tot);
    evidence(f, "tensors hold %s = %u.%u %% of the card: the job needs more", gib(f->a, f->alloc),
             pm / 10, pm % 10);
}

static void say_llamacpp_buffer(const struct facts *f)
{
    evidence(f, "llama.cpp could not allocate a buffer of %s", gib(f->a, f->req));
}

static void say_tensors_and_request(const struct facts *f)
{
    evidence(f,
             "tensors %s + request %s = %s, more than the whole card (%s): even without "
             "fragmentation the job does not fit",
             gib(f->a, f->alloc), gib(f->a, f->req), gib(f->a, vf__sat_add(f->req, f->alloc)),
             gib(f->a, f->tot));
}

static void say_xla_program(const struct facts *f)
{
    evidence(f,
             "XLA's buffer assignment for the program needs %s in all (the request of %s is one "
             "buffer of it): compare with the card's total",
             gib(f->a, f->alloc), gib(f->a, f->req != VF_UNKNOWN ? f->req : 0));
}

static void say_tf_pool(const struct facts *f)
{
    if (f->req != VF_UNKNOWN)
        evidence(f,
                 "TensorFlow's pool, (nearly) the whole card by default, could not serve %s "
                 "more: the graph's own tensors fill it",
                 gib(f->a, f->req));
    else
        evidence(f, "a tensor did not fit TensorFlow's pool, (nearly) the whole card by "
                    "default: the graph's own tensors fill it (batch size)");
}

/* ------------------------------------------------------------------ rules */

/* No figures: the platform's own tool to watch the memory (issue 19: nvidia-smi only on
 * CUDA). */
static void say_no_evidence(const struct facts *f)
{
    const char *b = f->ev->backend;
    evidence(f, "the message carries no figures; run %s while the job runs",
             is(b, "rocm")  ? "rocm-smi --showmeminfo vram"
             : is(b, "mps") ? "Activity Monitor (Memory)"
             : is(b, "xpu") ? "xpu-smi stats"
                            : "nvidia-smi");
    /* "Allocation on device" is PyTorch's cudaMallocAsync allocator: its figures follow on
     * the lines after it ("Currently allocated", "Requested", "Device limit"), which pastes
     * and ComfyUI's error report often leave out; ComfyUI turns that allocator on by default
     * (cuda_malloc.py) and --disable-cuda-malloc turns it off */
    if (f->ev->pattern && !strcmp(f->ev->pattern, "pytorch-cuda-malloc-async"))
        evidence(f,
                 "\"Allocation on device\" is PyTorch's cudaMallocAsync allocator: its sizes "
                 "are on the lines after it (\"Requested\", \"Device limit\"); paste those, "
                 "%s",
                 is(f->ev->tool, "comfyui")
                     ? "or start ComfyUI with --disable-cuda-malloc for PyTorch's usual message"
                     : "or set PYTORCH_CUDA_ALLOC_CONF=backend:native for PyTorch's usual "
                       "message");
}

/* Rules of one chain are alternatives (an if / else if): only the first that holds fires. */
enum chain { C_NONE, C_START, C_POOL, C_TOO_LARGE };

struct rule {
    const char *id;    /* formula ID (docs/FORMULAS.md), prefixes the evidence; NULL: none */
    const char *cause; /* the cause it sets; NULL: evidence only */
    enum chain chain;
    bool stop; /* the walk ends after this rule when a cause is set */
    bool (*holds)(const struct facts *f);
    void (*say)(const struct facts *f); /* writes the evidence; NULL: `text`, or none */
    const char *text;
};

/*
 * The order. The first rule that sets a cause names the cause; a later one adds a secondary
 * cause; the evidence is listed in table order. So the rules stand in the order of the
 * remedy that should be tried first:
 * - not_vram, host_ram: the memory that ran out is not the card's (Triton's shared memory per
 *   block, the host's RAM). Every figure below would point at the card, so the walk stops.
 * - engine_reservation: the engine itself took the card before the failing allocation (vLLM's
 *   start-up check against a fraction of the whole card, TensorFlow's BFC pool, XLA's
 *   preallocation); its own setting is the lever, whatever the figures below say.
 * - other_process: memory someone else holds is freed by stopping them, without touching
 *   the job; the container's own PID is recognised first so that it is not counted.
 *   Then the figures that are evidence only: the shortfall (F-OOM-10), the APU quirk (F-OOM-19).
 * - fragmentation before the workload causes: when PyTorch's cache already holds as much as
 *   the request, the job fits in memory it has; an allocator setting, free of cost, beats a
 *   smaller job or a bigger card. A sizeable cache that could not serve the request is only
 *   added as a secondary cause, last.
 * - kv_cache: vLLM names the part that does not fit, more specific than "too large".
 * - leak: a training run that ran hundreds of steps fit at the start; calling it too large
 *   would send a bug to a bigger card.
 * - workload_too_large: the job itself does not fit; its chain goes from the most specific
 *   sign (a ComfyUI loader node, one request over the card) to the engine-wide ones.
 * - unknown when nothing set a cause; then the secondary fragmentation, and a sentence for a
 *   message with no figures at all.
 */
static const struct rule rules[] = {
    {"F-OOM-18", "not_vram", C_NONE, false, holds_triton, NULL,
     "Triton ran out of on-chip shared memory per block (a kernel setting), not of GPU memory: "
     "a card with more VRAM of the same architecture does not help"},
    {"F-OOM-18", "host_ram", C_NONE, true, holds_host_ram, say_host_ram, NULL},
    {"F-OOM-17", "engine_reservation", C_START, false, holds_vllm_below_util, say_vllm_below_util,
     NULL},
    {"F-OOM-17", "engine_reservation", C_START, false, holds_vllm_at_util, say_vllm_at_util, NULL},
    {"F-OOM-17", "engine_reservation", C_POOL, false, holds_tf_handle, say_tf_handle, NULL},
    {"F-OOM-17", "engine_reservation", C_POOL, false, holds_vllm_sampler, NULL,
     "vLLM had already reserved --gpu-memory-utilization of the card for weights and KV cache; "
     "the sampler's warm-up for max_num_seqs requests did not fit in the rest"},
    {"F-OOM-17", "engine_reservation", C_POOL, false, holds_xla_small, say_xla_small, NULL},
    {"F-OOM-12", NULL, C_NONE, false, holds_host_pid, say_host_pid, NULL},
    {"F-OOM-12", "other_process", C_NONE, false, holds_mps_other, say_mps_other, NULL},
    /* evidence only: a bare handle failure names no other process (issue 19) */
    {"F-OOM-12", NULL, C_NONE, false, holds_handle_at_start, say_handle_at_start, NULL},
    {"F-OOM-12", NULL, C_NONE, false, holds_others_named, say_others_named, NULL},
    {"F-OOM-12", "other_process", C_NONE, false, holds_others_matter, NULL, NULL},
    {"F-OOM-10", NULL, C_NONE, false, holds_short_of_free, say_short_of_free, NULL},
    {"F-OOM-19", NULL, C_NONE, false, holds_free_over_total, say_free_over_total, NULL},
    {"F-OOM-11", NULL, C_NONE, false, holds_cache_known, say_cache, NULL},
    {"F-OOM-11", "fragmentation", C_NONE, false, holds_frag, NULL, NULL},
    {"F-OOM-15", "kv_cache", C_NONE, false, holds_kv_message, say_kv, NULL},
    {"F-OOM-16", "leak", C_NONE, false, holds_long_training, say_leak, NULL},
    {"F-OOM-13", "workload_too_large", C_TOO_LARGE, false, holds_comfy_loader, say_comfy_loader,
     NULL},
    {"F-OOM-13", "workload_too_large", C_TOO_LARGE, false, holds_held_over_card, say_held_over_card,
     NULL},
    {"F-OOM-13", "workload_too_large", C_TOO_LARGE, false, holds_request_over_card,
     say_request_over_card, NULL},
    {"F-OOM-13", "workload_too_large", C_TOO_LARGE, false, holds_tensors_fill, say_tensors_fill,
     NULL},
    {"F-OOM-13", "workload_too_large", C_TOO_LARGE, false, holds_llamacpp_buffer,
     say_llamacpp_buffer, NULL},
    {"F-OOM-13", "workload_too_large", C_TOO_LARGE, false, holds_tensors_and_request,
     say_tensors_and_request, NULL},
    {"F-OOM-13c", "workload_too_large", C_TOO_LARGE, false, holds_own_context_only,
     say_own_context_only, NULL},
    {"F-OOM-13", "workload_too_large", C_TOO_LARGE, false, holds_xla_program, say_xla_program,
     NULL},
    {"F-OOM-13", "workload_too_large", C_TOO_LARGE, false, holds_tf_pool, say_tf_pool, NULL},
    {"F-OOM-13", "workload_too_large", C_TOO_LARGE, false, holds_nccl, NULL,
     "NCCL could not allocate its communication buffers: the training step had filled the card "
     "and left no headroom for them"},
    {"F-OOM-13", "workload_too_large", C_TOO_LARGE, false, holds_bnb, NULL,
     "device_map=\"auto\" found the quantized model larger than the free GPU memory and put "
     "modules on the CPU or disk"},
    {"F-OOM-13", "workload_too_large", C_TOO_LARGE, false, holds_ollama_runner, NULL,
     "Ollama offloads the layers its own estimate says fit; the runner died allocating on the "
     "GPU, so what it placed there did not fit"},
    {"F-OOM-13", "workload_too_large", C_TOO_LARGE, false, holds_ollama_layout, NULL,
     "Ollama found no layout of the layers over the GPUs and the host that holds the model with "
     "its context (KV cache) and compute graph in the memory they have free"},
    {"F-OOM-13", NULL, C_NONE, false, holds_bnb_cpu_build, NULL,
     "but bitsandbytes was compiled without GPU support: it cannot quantize on the GPU at all; "
     "install a CUDA build before judging the fit"},
    {NULL, "unknown", C_NONE, false, holds_no_cause, NULL, NULL},
    {"F-OOM-11", "fragmentation", C_NONE, false, holds_frag_minor, NULL, NULL},
    {NULL, NULL, C_NONE, false, holds_no_evidence, say_no_evidence, NULL},
};

/*
 * Contract: fills *d (zeroed first) from one event and the context by walking `rules`.
 * Never fails on odd numbers (free > total on APUs is reported, not rejected); a full table
 * or no memory is marked in d->incomplete, for vf_explain() to report. Returns VF_OK.
 */
enum vf_err vf__diagnose(struct vf_arena *a, const struct vf_oom_event *ev,
                         const struct vf_oom_context *ctx, struct vf_diagnosis *d,
                         struct vf_error *err)
{
    memset(d, 0, sizeof *d);
    struct facts f;
    facts_of(a, ev, ctx, d, &f);
    unsigned fired = 0; /* the chains one of whose rules has fired */
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
        const struct rule *r = &rules[i];
        if (!(fired & 1u << r->chain) && r->holds(&f)) {
            if (r->chain != C_NONE)
                fired |= 1u << r->chain;
            f.id = r->id;
            if (r->cause)
                cause(d, r->cause);
            if (r->say)
                r->say(&f);
            else if (r->text)
                evidence(&f, "%s", r->text);
        }
        if (r->stop && d->cause) /* not the card's memory: the figures below would mislead */
            break;
    }
    (void)err;
    return VF_OK;
}
