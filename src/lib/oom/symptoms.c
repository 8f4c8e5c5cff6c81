/* SPDX-License-Identifier: Apache-2.0 */
/*
 * symptoms.c - what a pasted log shows that is not an out-of-memory error (issue 18,
 * DESIGN section 8: explain's symptoms[], exit 3): `ollama ps` with a model split between
 * CPU and GPU, an nvidia-smi table, vLLM's start-up summary of its KV cache, a llama.cpp
 * run that recovered by itself, TensorFlow's allocator warnings that say they are no
 * failure. The scanner (oom_parse.c) reads the lines into vf_oom_symptom; vf_explain()
 * writes what each means, with its numbers (vf__symptoms_explain).
 */
#include "oom.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MiB ((uint64_t)1 << 20)

/* A decimal with thousands commas ("123,456"); VF_UNKNOWN if none. */
static uint64_t u64_commas(const char *p, const char *end)
{
    while (p < end && *p == ' ')
        p++;
    uint64_t v = 0;
    bool any = false;
    for (; p < end && ((*p >= '0' && *p <= '9') || (*p == ',' && any)); p++) {
        if (*p == ',')
            continue;
        if (!vf__mul_u64(v, 10, &v) || !vf__add_u64(v, (uint64_t)(*p - '0'), &v))
            return VF_UNKNOWN;
        any = true;
    }
    return any ? v : VF_UNKNOWN;
}

/* `ollama ps`: "qwen3:32b  030ee887880f  25 GB  35%/65% CPU/GPU  4 minutes from now". */
bool vf__symptom_ollama(struct vf_oom_symptom *y, const char *line, size_t len)
{
    const char *end = line + len, *cg = vf__oom_find(line, len, "% CPU/GPU");
    if (!cg)
        return false;
    const char *p = cg;
    while (p > line && p[-1] != ' ')
        p--;
    const char *e;
    uint64_t cpu = vf__oom_u64_at(p, cg, &e);
    if (cpu > 100 || e >= cg || *e != '%' || e[1] != '/')
        return false;
    uint64_t gpu = vf__oom_u64_at(e + 2, cg, NULL);
    if (gpu > 100)
        return false;
    y->cpu_percent = (int)cpu, y->gpu_percent = (int)gpu;
    /* SIZE: the "N GB" just before */
    const char *u = p;
    while (u > line && u[-1] == ' ')
        u--;
    const char *n = u;
    while (n > line && n[-1] != ' ')
        n--; /* the unit */
    const char *v = n;
    while (v > line && v[-1] == ' ')
        v--;
    while (v > line && v[-1] != ' ')
        v--;
    y->total_bytes = vf__oom_bytes_at(v, u, 0, NULL);
    (void)end;
    return true;
}

/* nvidia-smi's memory cell: "|  21540MiB / 24564MiB |" (the GPU index when the line starts
 * with it, as in the one-line form "| 0  NVIDIA GeForce RTX 4090 ... |"). */
bool vf__symptom_smi(struct vf_oom_symptom *y, const char *line, size_t len)
{
    const char *end = line + len, *m = vf__oom_find(line, len, "MiB / ");
    if (!m)
        return false;
    const char *p = m;
    while (p > line && p[-1] >= '0' && p[-1] <= '9')
        p--;
    uint64_t used = vf__oom_u64_at(p, m, NULL);
    const char *e;
    uint64_t total = vf__oom_u64_at(m + 6, end, &e);
    if (used == VF_UNKNOWN || total == VF_UNKNOWN || !total || used > total ||
        (size_t)(end - e) < 3 || memcmp(e, "MiB", 3))
        return false;
    y->used_bytes = used * MiB;
    y->total_bytes = total * MiB;
    const char *q = line;
    while (q < end && (*q == '|' || *q == ' '))
        q++;
    uint64_t g = vf__oom_u64_at(q, end, &e);
    if (q > line && g < 64 && e < end && *e == ' ')
        y->gpu = (int)g;
    return true;
}

/* vLLM: "GPU KV cache size: 123,456 tokens" and "Maximum concurrency for 32,768 tokens per
 * request: 3.77x". */
bool vf__symptom_vllm(struct vf_oom_symptom *y, const char *line, size_t len)
{
    const char *end = line + len;
    const char *k = vf__oom_find(line, len, "KV cache size:");
    if (k) {
        y->kv_tokens = u64_commas(k + 14, end);
        return y->kv_tokens != VF_UNKNOWN;
    }
    const char *c = vf__oom_find(line, len, "Maximum concurrency for ");
    if (!c)
        return false;
    y->per_request_tokens = u64_commas(c + 24, end);
    const char *x = vf__oom_find(c, (size_t)(end - c), ": ");
    if (x) {
        char buf[32];
        size_t n = 0;
        for (const char *p = x + 2;
             p < end && n + 1 < sizeof buf && ((*p >= '0' && *p <= '9') || *p == '.'); p++)
            buf[n++] = *p;
        buf[n] = 0;
        y->max_concurrency = n ? strtod(buf, NULL) : 0;
    }
    return y->per_request_tokens != VF_UNKNOWN;
}

/* ------------------------------------------------------------- sentences */

static const char *gib(struct vf_arena *a, uint64_t b)
{
    char buf[48];
    return vf_arena_strdup(a, vf_format_bytes(buf, sizeof buf, b, VF_FMT_IEC));
}

static void say_ollama(struct vf_arena *a, const struct vf_oom_symptom *y, const char **s,
                       size_t *n)
{
    uint64_t size = y->total_bytes;
    double host_bps = vf__host_bw(NULL) * 1e9; /* F-SPD-17: what the CPU's layers read at */
    if (y->gpu_percent == 0) {
        s[(*n)++] = "Ollama runs this model entirely on the CPU (100% CPU): no GPU memory was "
                    "free for it, or no GPU was found.";
        if (size != VF_UNKNOWN && size)
            s[(*n)++] = vf_arena_printf(
                a,
                "A dense model reads all %s from system RAM for every token: at %.1f GB/s "
                "(F-SPD-17's desktop default) that is %.2f s a token, at most %.1f tokens/s.",
                gib(a, size), host_bps / 1e9, (double)size / host_bps, host_bps / (double)size);
        return;
    }
    if (size != VF_UNKNOWN)
        s[(*n)++] = vf_arena_printf(
            a,
            "The model (%s) does not fit in the GPU's free memory: Ollama keeps %d%% of it "
            "(%s) in system RAM and %d%% (%s) on the GPU.",
            gib(a, size), y->cpu_percent, gib(a, size / 100 * (uint64_t)y->cpu_percent),
            y->gpu_percent, gib(a, size / 100 * (uint64_t)y->gpu_percent));
    else
        s[(*n)++] = vf_arena_printf(a,
                                    "The model does not fit in the GPU's free memory: Ollama "
                                    "keeps %d%% of it in system RAM.",
                                    y->cpu_percent);
    if (size != VF_UNKNOWN && y->cpu_percent > 0) {
        double cpu = (double)(size / 100 * (uint64_t)y->cpu_percent);
        s[(*n)++] = vf_arena_printf(
            a,
            "A dense model reads the CPU's share (%s) from system RAM for every token: at %.1f "
            "GB/s (F-SPD-17's desktop default) that alone is %.2f s a token, at most %.1f "
            "tokens/s whatever the GPU; a model that fits the GPU entirely (100%% GPU) is "
            "usually faster even if it is smaller.",
            gib(a, (uint64_t)cpu), host_bps / 1e9, cpu / host_bps, host_bps / cpu);
    } else
        s[(*n)++] = "Layers on the CPU are read from system RAM for every token, at a fraction "
                    "of the GPU's bandwidth (F-SPD-17); a model that fits the GPU entirely (100% "
                    "GPU) is usually faster even if it is smaller.";
    s[(*n)++] = vf_arena_printf(
        a,
        "What fits instead: about %s fits on the GPU now - a smaller quantization or model "
        "under that, a shorter context (num_ctx, OLLAMA_CONTEXT_LENGTH) or "
        "OLLAMA_KV_CACHE_TYPE=q8_0; `vramfit estimate MODEL --engine ollama --gpu CARD` sizes "
        "each.",
        size != VF_UNKNOWN ? gib(a, size / 100 * (uint64_t)y->gpu_percent) : "what is free");
}

static void say_smi(struct vf_arena *a, const struct vf_oom_symptom *y, const char **s, size_t *n)
{
    unsigned pm = (unsigned)(y->used_bytes * 1000 / y->total_bytes);
    s[(*n)++] =
        vf_arena_printf(a, "GPU %d: %s of %s used (%u.%u %%), %s free.", y->gpu >= 0 ? y->gpu : 0,
                        gib(a, y->used_bytes), gib(a, y->total_bytes), pm / 10, pm % 10,
                        gib(a, y->total_bytes - y->used_bytes));
    if (y->processes == 0 && pm >= 50)
        s[(*n)++] = "nvidia-smi lists no process, yet memory is in use: inside a container it "
                    "cannot see processes across the PID namespace. Find the holder with "
                    "`vramfit smi` (the driver's PIDs and their memory) or `ps aux | grep "
                    "python` inside the container.";
    s[(*n)++] = "Used is the driver's count: PyTorch keeps freed tensors cached, so nvidia-smi "
                "shows more than torch.cuda.memory_allocated(); torch.cuda.memory_reserved() "
                "is what it holds, and torch.cuda.empty_cache() gives the cache back only "
                "when another process needs it.";
    if (pm >= 850 && pm <= 950)
        s[(*n)++] = "vLLM takes gpu_memory_utilization (0.9 by default) of the whole card at "
                    "start: about 90 % used while vLLM runs is expected, not a leak; anything "
                    "else started on the card runs out of memory.";
}

static void say_vllm(struct vf_arena *a, const struct vf_oom_symptom *y,
                     const struct vf_oom_context *ctx, const char **s, size_t *n)
{
    if (y->kv_tokens != VF_UNKNOWN)
        s[(*n)++] = vf_arena_printf(a,
                                    "vLLM's KV cache holds %llu tokens in all, shared by the "
                                    "requests running at once.",
                                    (unsigned long long)y->kv_tokens);
    if (y->per_request_tokens != VF_UNKNOWN && y->max_concurrency > 0)
        s[(*n)++] = vf_arena_printf(
            a,
            "At %llu tokens per request (max_model_len) %.2f requests fit at once; more wait in "
            "the queue. Shorter requests fit more: vLLM allocates blocks as a request grows.",
            (unsigned long long)y->per_request_tokens, y->max_concurrency);
    uint64_t want = ctx && ctx->ctx_tokens != VF_UNKNOWN ? ctx->ctx_tokens : y->per_request_tokens;
    if (y->kv_tokens != VF_UNKNOWN && want != VF_UNKNOWN && want)
        s[(*n)++] = vf_arena_printf(
            a,
            "For your context of %llu tokens: %.2f full-length requests at once. For more, "
            "lower --max-model-len, use --kv-cache-dtype fp8 (twice the tokens), or raise "
            "--gpu-memory-utilization if the card has room.",
            (unsigned long long)want, (double)y->kv_tokens / (double)want);
}

void vf__symptoms_explain(struct vf_arena *a, const struct vf_oom_context *ctx)
{
    for (size_t i = 0; ctx && i < ctx->n_symptoms; i++) {
        struct vf_oom_symptom *y = &ctx->symptoms[i];
        const char **s = vf_arena_alloc(a, 6 * sizeof *s);
        size_t n = 0;
        if (!s)
            return;
        if (!strcmp(y->kind, "ollama_cpu_split"))
            say_ollama(a, y, s, &n);
        else if (!strcmp(y->kind, "nvidia_smi"))
            say_smi(a, y, s, &n);
        else if (!strcmp(y->kind, "vllm_startup"))
            say_vllm(a, y, ctx, s, &n);
        else if (!strcmp(y->kind, "recovered"))
            s[n++] = "llama.cpp could not allocate its compute buffer for pipeline parallelism "
                     "and retried without it: the run recovered by itself and goes on (maybe a "
                     "little slower). Not an out-of-memory failure; nothing to fix.";
        else
            s[n++] = "TensorFlow's allocator could not get all the memory it asked for and says "
                     "this is not a failure: the op ran with less (maybe slower). Not an "
                     "out-of-memory failure; if the run dies later, explain that message.";
        for (size_t k = 0; k < n; k++)
            if (!s[k])
                n = k; /* the arena ran out: fewer sentences */
        y->says = s;
        y->n_says = n;
    }
}
