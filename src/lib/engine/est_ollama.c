/* SPDX-License-Identifier: Apache-2.0 */
/*
 * est_ollama.c - Ollama: llama.cpp's buffers (est_llamacpp.h) behind Ollama's planner:
 * num_ctx by VRAM, num_parallel sequences sharing num_ctx x parallel, its flash-attention
 * and KV-type settings, and the layer offload decision with the graph and minimum-memory
 * reserves that decides the CPU/GPU split `ollama ps` prints. Formulas F-OLL-01..06 in
 * docs/FORMULAS.md.
 */
#include "est_llamacpp.h"
#include "est_ollama.h"
#include "engine/terms.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OLL_VERSION "0.15.5"
/* F-OLL-04: memory.go's MinimumMemory reserve per CUDA GPU */
#define OLL_MIN_MEMORY (457ULL << 20)
/* Ollama's runner batch (num_batch) */
#define OLL_BATCH 512

static bool oll_can_split(const struct vf_model *m, const struct vf_workload *w, uint32_t n,
                          const char **why)
{
    return vf__engine_llamacpp.can_split(m, w, n, why);
}

static enum vf_err opt_u64(const struct vf_workload *w, const char *key, uint64_t *out,
                           struct vf_error *err)
{
    const char *v = vf_engine_opt(&w->opts, key);
    if (!v)
        return VF_OK;
    if (!strcmp(key, "OLLAMA_GPU_OVERHEAD")) {
        if (vf_parse_bytes(v, out, NULL))
            return vf__errf(err, VF_EINVAL, "ollama: %s '%s': expected bytes", key, v);
        return VF_OK;
    }
    if (vf_parse_tokens(v, out, NULL) || !*out)
        return vf__errf(err, VF_EINVAL, "ollama: %s '%s': expected a positive number", key, v);
    return VF_OK;
}

/* F-OLL-01..05: the settings Ollama hands llama.cpp, before the offload decision. */
struct oll_cfg {
    struct vf_lcpp_cfg c;
    uint64_t num_ctx, parallel, overhead;
    uint64_t proj_weights, proj_graph; /* F-OLL-07: the vision projector on GPU 0 */
    bool ctx_default, par_default;
    /* F-OLL-09: the release's rules (--engine ollama@0.X.Y; the newest without one) */
    bool memgo;         /* before 0.11.11: memory.go's planner (F-OLL-08) */
    bool proj_last;     /* 0.7.1 on: an Ollama-engine model's projector with the output layer */
    bool own;           /* an architecture Ollama's own engine runs (else its llama.cpp runner) */
    uint64_t ctx_fixed; /* the default num_ctx, 0: by VRAM (0.15.5 on) */
    uint64_t par_auto;  /* num_parallel tried first when unset (then 1), 1: fixed */
    const char *ver;    /* the release asked, NULL: the newest modelled */
    /* F-OLL-10 (issue 21): several GPUs: the plan's GPU i is the card dev[i] of the request
     * (n_dev of them used); n_dev 0 = the plan's GPUs are the request's, in order. */
    uint32_t n_dev, dev[VF_OLL_MAX_GPUS];
};

/* F-OLL-09: the rules of release `v` (NULL: the newest). Sources in oll_rules below. */
static void oll_era(const char *v, const struct vf_model *m, struct oll_cfg *o)
{
#define BEFORE(x) (v && vf_engine_version_cmp(v, x) < 0)
    o->ver = v;
    o->memgo = BEFORE("0.11.11");
    o->ctx_fixed = BEFORE("0.6.7") ? 2048 : BEFORE("0.15.5") ? 4096 : 0;
    o->par_auto = BEFORE("0.6.7") ? 4 : BEFORE("0.9.7") ? 2 : 1;
    o->c.flash_attn = !BEFORE("0.12.4");
    /* the architectures Ollama's own engine runs (fs/ggml OllamaEngineRequired) */
    static const char *const own[] = {"gemma3", "gemma3_text", "mistral3", "qwen3",
                                      "llama4", "llama4_text", "mllama",   "gpt_oss"};
    o->proj_last = o->own = false;
    for (size_t i = 0; m->model_type && i < sizeof own / sizeof own[0]; i++)
        o->own |= !strcmp(m->model_type, own[i]);
    o->proj_last = o->own && !BEFORE("0.7.1");
#undef BEFORE
}

/*
 * F-OLL-07 (issue 21): a multimodal model's vision projector (mmproj), which Ollama loads on the
 * first GPU beside the model. Weights of a SigLIP/CLIP tower of hidden h, L layers, FFN f, patch
 * p, n = (image / p)^2 patches, as the projector file stores them (matrices f16, vectors f32):
 *   f16: patch conv 3 p^2 h + positions n h + L (4 h^2 + 2 h f) + the projection h x text hidden
 *   f32: patch bias h + L (q/k/v/o biases 4h + fc1 bias f + fc2 bias h + 2 norms 4h)
 *        + post-norm 2h + the soft-embedding norm h
 * Graph: one image in f32 (image^2 x 3) + a patch row (h p) + the encoder's attention scores,
 * n^2 per head, f32. Check: ollama-pr12000 (gemma3 12B): projector.weights 795.9 MiB (ours
 * 804.3, +1.1 %), projector.graph 1.0 GiB (ours 1.009 GiB).
 */
static void projector(const struct vf_model *m, uint64_t *weights, uint64_t *graph)
{
    uint64_t h = m->vision.hidden, L = m->vision.layers, f = m->vision.ffn;
    uint64_t p = m->vision.patch, img = m->vision.image;
    *weights = *graph = 0;
    if (!h || !L || !p || !img)
        return;
    uint64_t n = (img / p) * (img / p);
    uint64_t f16 = 3 * p * p * h + n * h + L * (4 * h * h + 2 * h * f) + h * m->hidden;
    uint64_t f32 = h + L * (4 * h + f + h + 4 * h) + 2 * h + h;
    *weights = vf__sat_add(vf__sat_mul(f16, 2), vf__sat_mul(f32, 4));
    *graph = vf__sat_mul(vf__sat_add(vf__sat_add(img * img * 3, h * p),
                                     vf__sat_mul(vf__sat_mul(n, n), m->vision.heads)),
                         4);
}

static enum vf_err read_cfg(const struct vf_model *m, const struct vf_workload *w,
                            struct oll_cfg *o, struct vf_error *err)
{
    enum vf_err rc;
    memset(o, 0, sizeof *o);
    oll_era(w->engine_version, m, o);
    const char *ne = vf_engine_opt(&w->opts, "OLLAMA_NEW_ESTIMATES"); /* 0.11.5-0.11.10 opt-in */
    if (ne && (!strcmp(ne, "1") || !vf__strcasecmp(ne, "true")))
        o->memgo = false;
    o->parallel = w->users;
    if ((rc = opt_u64(w, "OLLAMA_NUM_PARALLEL", &o->parallel, err)) ||
        (rc = opt_u64(w, "num_parallel", &o->parallel, err)))
        return rc;
    o->par_default = !o->parallel;
    if (!o->parallel)
        o->parallel = o->par_auto;
    if (o->parallel > VF_MAX_USERS)
        return vf__errf(err, VF_ERANGE, "ollama: num_parallel over the limit");
    /* F-OLL-01: num_ctx: the flag, else OLLAMA_CONTEXT_LENGTH, else by total VRAM
     * (>= 47 GiB 262144, >= 23 GiB 32768, else 4096), capped at the model's context */
    o->num_ctx = w->ctx_tokens;
    if ((rc = opt_u64(w, "num_ctx", &o->num_ctx, err)))
        return rc;
    if (!o->num_ctx) {
        if ((rc = opt_u64(w, "OLLAMA_CONTEXT_LENGTH", &o->num_ctx, err)))
            return rc;
    }
    if (!o->num_ctx && o->ctx_fixed) {
        o->num_ctx = o->ctx_fixed;
        o->ctx_default = true;
    }
    if (!o->num_ctx) {
        uint64_t vram = w->usable_bytes && w->usable_bytes != VF_UNKNOWN
                            ? vf__sat_mul(w->usable_bytes, w->gpus ? w->gpus : 1)
                            : 0;
        if (w->n_mix) /* issue 21: the total of a --gpu A,B mix */
            for (uint32_t g = vram = 0; g < w->n_mix; g++)
                vram = vf__sat_add(vram, w->mix_usable[g]);
        o->num_ctx = vram >= (47ULL << 30) ? 262144 : vram >= (23ULL << 30) ? 32768 : 4096;
        if (m->max_ctx_tokens && m->max_ctx_tokens != VF_UNKNOWN && o->num_ctx > m->max_ctx_tokens)
            o->num_ctx = m->max_ctx_tokens;
        o->ctx_default = true;
    }
    if (o->num_ctx > VF_MAX_CTX_TOKENS)
        return vf__errf(err, VF_ERANGE, "ollama: num_ctx over the limit");
    if ((rc = opt_u64(w, "OLLAMA_GPU_OVERHEAD", &o->overhead, err)))
        return rc;

    struct vf_lcpp_cfg *c = &o->c;
    c->n_gpus = w->gpus ? w->gpus : 1;
    c->n_seq = o->parallel;
    c->n_ctx = o->num_ctx * o->parallel; /* F-OLL-02 */
    c->n_batch = c->n_ubatch = OLL_BATCH;
    c->q = vf__term_storage(w);
    /* F-OLL-03: flash attention on unless OLLAMA_FLASH_ATTENTION says 0/false */
    const char *fa = vf_engine_opt(&w->opts, "OLLAMA_FLASH_ATTENTION");
    if (fa)
        c->flash_attn = !(!strcmp(fa, "0") || !vf__strcasecmp(fa, "false"));
    enum vf_dtype kv = w->kv_dtype == VF_DT_DEFAULT ? VF_DT_F16 : w->kv_dtype;
    const char *kt = vf_engine_opt(&w->opts, "OLLAMA_KV_CACHE_TYPE");
    if (kt && *kt && vf_kv_dtype_parse(kt, &kv, NULL))
        return vf__errf(err, VF_EINVAL,
                        "ollama: OLLAMA_KV_CACHE_TYPE '%s': expected f16, q8_0 or q4_0", kt);
    /* a quantized cache needs flash attention: Ollama falls back to f16 */
    uint32_t be, bb;
    vf_dtype_block(kv, &be, &bb);
    if (be > 1 && !c->flash_attn)
        kv = VF_DT_F16;
    c->tk = c->tv = kv;
    c->ngl = (int64_t)m->n_layers + 1;
    projector(m, &o->proj_weights, &o->proj_graph);
    return VF_OK;
}

/* F-OLL-04 (issue 21): what one GPU needs as Ollama plans it: the buffers of the most loaded GPU
 * and one CUDA context, Ollama's MinimumMemory (457 MiB, the allowance its scheduler keeps for
 * the runner's context), + OLLAMA_GPU_OVERHEAD; not llama.cpp's context on top of it. */
static uint64_t oll_gpu_need(const struct oll_cfg *o, const struct vf_lcpp_cfg *c,
                             const struct vf_lcpp_plan *p)
{
    uint64_t peak = vf__lcpp_gpu_peak(c, p);
    peak = peak > VF_LCPP_CUDA_OVERHEAD ? peak - VF_LCPP_CUDA_OVERHEAD : 0;
    if (c->n_gpus) /* F-OLL-07: the projector on GPU 0 (taken as the most loaded) */
        peak = vf__sat_add(peak, vf__sat_add(o->proj_weights, o->proj_graph));
    return vf__sat_add(peak, vf__sat_add(o->overhead, OLL_MIN_MEMORY));
}

/* F-OLL-04: the layers Ollama offloads: from the last layer down, while the GPU keeps
 * OLLAMA_GPU_OVERHEAD + 457 MiB + the graph + the CUDA context free; the output layer
 * only when every layer fits. */
static int64_t offload_layers(const struct vf_model *m, const struct oll_cfg *o, uint64_t usable)
{
    struct vf_lcpp_cfg c = o->c;
    for (int64_t n = (int64_t)m->n_layers + 1; n > 0; n--) {
        c.ngl = n;
        struct vf_lcpp_plan p;
        if (vf__lcpp_plan(m, &c, &p, NULL))
            return 0;
        if (oll_gpu_need(o, &c, &p) <= usable)
            return n;
    }
    return 0;
}

/* The usable bytes of the request's GPU g (a --gpu A,B mix's own, else the card's). */
static uint64_t dev_usable(const struct vf_workload *w, uint32_t g)
{
    return g < w->n_mix ? w->mix_usable[g] : w->usable_bytes;
}

/* F-OLL-10: the plan's settings for the layout: count[j] layers on the sorted GPU order[j]
 * (those with none left out), ngl the layers placed. */
static void layout_cfg(struct oll_cfg *o, const uint32_t *order, const uint32_t *count, uint32_t n,
                       uint32_t placed)
{
    memset(o->c.split, 0, sizeof o->c.split);
    o->n_dev = 0;
    for (uint32_t j = 0; j < n; j++)
        if (count[j]) {
            o->c.split[o->n_dev] = count[j];
            o->dev[o->n_dev++] = order[j];
        }
    if (!o->n_dev) /* nothing on a GPU: the largest keeps the context */
        o->dev[o->n_dev++] = order[0];
    o->c.n_gpus = o->n_dev;
    o->c.split_ts = true;
    o->c.ngl = placed;
}

/*
 * F-OLL-10 (issue 21): Ollama's layout over several GPUs (est_ollama_layout.c): the GPUs by
 * usable bytes, largest first (ties in the order given); each keeps MinimumMemory,
 * OLLAMA_GPU_OVERHEAD and the graph (llama.cpp's compute buffer with every layer on one GPU)
 * free, and for the llama.cpp runner one layer more (llamaServer.Load's buffer); the request's
 * first GPU the projector too (llama.cpp loads it there); a layer is its weights + KV (+ recurrent
 * state) as llama.cpp allocates them, the output layer last. Sets o->c to the layout and, where it
 * leaves layers on the CPU, need[] to what each request GPU would need for all of them, spread as
 * the capacities are (*has_need). Errors as vf__lcpp_plan.
 */
static enum vf_err oll_layout(struct vf_arena *a, const struct vf_model *m,
                              const struct vf_workload *w, struct oll_cfg *o, uint64_t *need,
                              bool *has_need, struct vf_error *err)
{
    uint32_t n = o->c.n_gpus > VF_OLL_MAX_GPUS ? VF_OLL_MAX_GPUS : o->c.n_gpus, nl = m->n_layers;
    uint32_t order[VF_OLL_MAX_GPUS], count[VF_OLL_MAX_GPUS];
    uint64_t cap[VF_OLL_MAX_GPUS], reserve = vf__sat_add(OLL_MIN_MEMORY, o->overhead);
    struct vf_lcpp_cfg one = o->c;
    struct vf_lcpp_plan p;
    one.n_gpus = 1;
    one.ngl = (int64_t)nl + 1;
    enum vf_err rc = vf__lcpp_plan(m, &one, &p, err);
    uint64_t *size = rc ? NULL : vf_arena_alloc(a, sizeof *size * ((size_t)nl + 1));
    if (rc || !size)
        return rc ? rc : vf__errf(err, VF_ENOMEM, "ollama: out of memory");
    for (uint32_t l = 0; l <= nl; l++)
        size[l] = vf__lcpp_layer_bytes(m, &one, &p, l);
    for (uint32_t g = 0; g < n; g++) { /* insertion: by usable bytes, largest first, stable */
        uint32_t k = g;
        for (; k > 0 && dev_usable(w, order[k - 1]) < dev_usable(w, g); k--)
            order[k] = order[k - 1];
        order[k] = g;
    }
    for (uint32_t j = 0; j < n; j++) { /* the llama.cpp runner keeps one layer more free */
        uint64_t keep = vf__sat_add(vf__sat_add(reserve, p.compute[0]), o->own ? 0 : size[0]);
        keep = vf__sat_add(keep, order[j] ? 0 : vf__sat_add(o->proj_weights, o->proj_graph));
        uint64_t u = dev_usable(w, order[j]);
        cap[j] = u > keep ? u - keep : 0;
    }
    uint32_t placed = vf__oll_layout(size, nl + 1, cap, n, count);
    *has_need = placed < nl + 1;
    if (*has_need) { /* every layer, spread as the capacities are: what "fits" would need */
        struct oll_cfg all = *o;
        uint32_t share[VF_OLL_MAX_GPUS] = {0};
        for (uint32_t j = 0; j < n; j++)
            share[j] = (uint32_t)(cap[j] >> 20) + 1;
        layout_cfg(&all, order, share, n, nl + 1);
        if ((rc = vf__lcpp_plan(m, &all.c, &p, err)))
            return rc;
        for (uint32_t j = 0; j < n; j++)
            need[order[j]] = vf__sat_add(
                vf__sat_add(vf__sat_add(p.model[j], p.kv[j]), vf__sat_add(p.compute[j], reserve)),
                order[j] ? 0 : vf__sat_add(o->proj_weights, o->proj_graph));
    }
    layout_cfg(o, order, count, n, placed);
    return VF_OK;
}

/* F-OLL-10: the layout's components on the request's GPUs (the plan's GPU i is o->dev[i]),
 * Ollama's reserve on each GPU used and none on the others; every GPU of the request listed;
 * need (NULL: the components) what each would need for every layer, the total its largest. */
static void layout_results(struct vf_arena *a, const struct vf_workload *w, const struct oll_cfg *o,
                           size_t first, const uint64_t *need, struct vf_estimate *e)
{
    char b[32];
    struct vf_component *x;
    size_t end = e->n_components;
    for (size_t i = first; i < end; i++) {
        struct vf_component *c = &e->components[i];
        if (!strncmp(c->name, "mmproj_", 7)) /* llama.cpp: the first GPU of the request */
            c->device = 0;
        else if (c->device >= 0 && (uint32_t)c->device < o->n_dev)
            c->device = (int)o->dev[c->device];
        else if (c->device == VF_DEV_ALL_GPUS) {
            c->device = (int)o->dev[0];
            for (uint32_t j = 1; j < o->n_dev; j++)
                if ((x = vf__add_component(e, c->name, c->bytes, c->phase, c->note)))
                    x->device = (int)o->dev[j];
        }
    }
    e->gpus = w->gpus;
    if (need) {
        e->n_dev_need = w->gpus < VF_MAX_MIX ? w->gpus : VF_MAX_MIX;
        e->total_bytes = 0;
        for (uint32_t g = 0; g < e->n_dev_need; g++) {
            e->dev_need[g] = need[g];
            e->total_bytes = need[g] > e->total_bytes ? need[g] : e->total_bytes;
        }
    }
    struct vf__sb s;
    vf__sb_init(&s, a);
    for (uint32_t i = 0; i < o->n_dev; i++)
        vf__sb_printf(&s, "%sGPU %u: %g layers", i ? ", " : "", o->dev[i], o->c.split[i]);
    vf__assume(a, e,
               "Ollama's layout over %u GPUs (llm/server.go v0.15.5, F-OLL-10): as few GPUs as "
               "hold the layers, the most free memory first, balanced: %s%s",
               w->gpus, o->c.ngl ? vf__sb_done(&s) : "none on a GPU",
               need ? vf_arena_printf(a, "; every layer would need %s on the most loaded GPU",
                                      vf_format_bytes(b, sizeof b, e->total_bytes, VF_FMT_IEC))
                    : "");
}

/* The assumptions of the settings Ollama hands llama.cpp (F-OLL-01..03, F-OLL-09). */
static void oll_assume(struct vf_arena *a, const struct oll_cfg *o, struct vf_estimate *e)
{
    const char *ver = o->ver ? o->ver : OLL_VERSION;
    vf__assume(a, e, "engine ollama %s: %s", ver,
               o->memgo ? "memory.go's planner and its graph estimates (F-OLL-08, before 0.11.11)"
                        : "the buffers its runner allocates (llama.cpp's) with Ollama's layout "
                          "(F-OLL-01..07, 0.11.11 on)");
    const char *src =
        !o->ctx_default        ? ""
        : o->ctx_fixed == 2048 ? " (Ollama's default before 0.6.7: api/types.go DefaultOptions)"
        : o->ctx_fixed ? " (Ollama's default 0.6.7-0.15.4: envconfig OLLAMA_CONTEXT_LENGTH 4096)"
                       : " (Ollama's default by VRAM: < 24 GiB 4k, 24-48 GiB 32k, "
                         "48 GiB and more 256k; docs/context-length.mdx, 0.15.5 on)";
    const char *par = !o->par_default || o->par_auto < 2 ? ""
                      : o->parallel == 1
                          ? vf_arena_printf(a,
                                            " (the scheduler's default %llu does not keep every "
                                            "layer on the GPU: 1)",
                                            (unsigned long long)o->par_auto)
                          : " (the scheduler's default where every layer fits)";
    vf__assume(a, e, "num_ctx %llu%s, num_parallel %llu%s: llama.cpp -c %llu",
               (unsigned long long)o->num_ctx, src, (unsigned long long)o->parallel, par,
               (unsigned long long)o->c.n_ctx);
    vf__assume(a, e,
               "flash attention %s, KV cache %s (OLLAMA_FLASH_ATTENTION, "
               "OLLAMA_KV_CACHE_TYPE)",
               o->c.flash_attn ? "on" : "off", vf_dtype_name(o->c.tk));
}

/* F-OLL-04: the total is memory.required.full: what 100 % GPU needs, so that a fit means
 * every layer on the GPU (the components show the split Ollama would make), with Ollama's
 * reserves kept free. Errors as vf__lcpp_plan. */
static enum vf_err oll_total(const struct vf_model *m, const struct oll_cfg *o, struct vf_arena *a,
                             struct vf_estimate *e, struct vf_error *err)
{
    char b1[32], b2[32], b3[32];
    struct vf_lcpp_cfg full = o->c;
    struct vf_lcpp_plan pf;
    full.ngl = (int64_t)m->n_layers + 1;
    enum vf_err rc = vf__lcpp_plan(m, &full, &pf, err);
    if (rc)
        return rc;
    e->total_bytes = oll_gpu_need(o, &full, &pf);
    vf__assume(a, e,
               "per GPU: one CUDA context, Ollama's %s MinimumMemory (the runner's context; "
               "llama.cpp's own %s not added on top), + %s OLLAMA_GPU_OVERHEAD",
               vf_format_bytes(b2, sizeof b2, OLL_MIN_MEMORY, VF_FMT_IEC),
               vf_format_bytes(b1, sizeof b1, VF_LCPP_CUDA_OVERHEAD, VF_FMT_IEC),
               vf_format_bytes(b3, sizeof b3, o->overhead, VF_FMT_IEC));
    return VF_OK;
}

/* F-OLL-05: `ollama ps` PROCESSOR: the share of the model's memory on the GPU, with the
 * engine results (JSON "ollama") and the lines Ollama logs. `host` is the plan's host bytes. */
static void oll_results(struct vf_arena *a, const struct vf_model *m, const struct oll_cfg *o,
                        const struct vf_lcpp_plan *p, uint64_t host, struct vf_estimate *e)
{
    uint64_t gpu_part = 0;
    for (uint32_t g = 0; g < o->c.n_gpus; g++)
        gpu_part =
            vf__sat_add(gpu_part, vf__sat_add(vf__sat_add(p->model[g], p->kv[g]), p->compute[g]));
    uint64_t cpu_part = vf__sat_add(vf__sat_add(p->host_model, p->host_kv), 0);
    uint64_t all = vf__sat_add(gpu_part, cpu_part);
    unsigned gpu_pct = all ? (unsigned)((gpu_part * 100.0) / (double)all + 0.5) : 0;
    const char *processor = gpu_pct >= 100 || o->c.ngl > (int64_t)m->n_layers ? "100% GPU"
                            : gpu_pct == 0
                                ? "100% CPU"
                                : vf_arena_printf(a, "%u%%/%u%% CPU/GPU", 100 - gpu_pct, gpu_pct);
    e->extra_name = "ollama";
    vf__extra_u64(e, "num_ctx", o->num_ctx);
    vf__extra_u64(e, "num_parallel", o->parallel);
    vf__extra_u64(e, "layers_model", (uint64_t)m->n_layers + 1);
    vf__extra_u64(e, "layers_offload", (uint64_t)o->c.ngl);
    vf__extra_bool(e, "flash_attn", o->c.flash_attn);
    vf__extra_u64(e, "gpu_bytes_used", oll_gpu_need(o, &o->c, p));
    uint64_t kv = host == VF_UNKNOWN ? 0 : p->host_kv; /* issue 21: every device's KV */
    for (uint32_t g = 0; g < o->c.n_gpus; g++)
        kv = vf__sat_add(kv, p->kv[g]);
    vf__extra_u64(e, "kv_bytes", kv);
    vf__extra_text(e, "processor", processor);
    vf__line(a, e, "offload: layers.model=%u layers.offload=%lld", m->n_layers + 1,
             (long long)o->c.ngl);
    vf__line(a, e, "ollama ps: PROCESSOR %s, CONTEXT %llu", processor,
             (unsigned long long)o->num_ctx);
}

/* F-OLL-06: the largest num_ctx that keeps every layer on a card of `usable` bytes, and the
 * 8-bit KV cache. */
static void oll_fixes(struct vf_arena *a, const struct vf_model *m, const struct oll_cfg *o,
                      uint64_t usable, struct vf_estimate *e)
{
    uint64_t lo = 0,
             hi = m->max_ctx_tokens && m->max_ctx_tokens != VF_UNKNOWN ? m->max_ctx_tokens : 131072;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo + 1) / 2;
        struct oll_cfg t = *o;
        t.c.n_ctx = mid * o->parallel;
        t.c.ngl = (int64_t)m->n_layers + 1;
        if (offload_layers(m, &t, usable) > (int64_t)m->n_layers)
            lo = mid;
        else
            hi = mid - 1;
    }
    if (lo)
        vf__fix(a, e,
                "num_ctx %llu (OLLAMA_CONTEXT_LENGTH=%llu): the largest context that "
                "stays 100%% GPU",
                (unsigned long long)lo, (unsigned long long)lo);
    else
        vf__fix(a, e, "no num_ctx keeps every layer on the GPU: a smaller quant or card");
    if (o->c.tk == VF_DT_F16)
        vf__fix(a, e,
                "OLLAMA_FLASH_ATTENTION=1 OLLAMA_KV_CACHE_TYPE=q8_0: halves the KV "
                "cache");
}

/* F-OLL-07: the projector's components on GPU 0 and its assumption. */
static void oll_projector(struct vf_arena *a, const struct oll_cfg *o, struct vf_estimate *e)
{
    char b1[32], b2[32];
    struct vf_component *x;
    if (!o->proj_weights || !o->c.n_gpus)
        return;
    if ((x = vf__add_component(e, "mmproj_buffer", o->proj_weights, NULL, "vision projector")))
        x->device = 0;
    if ((x = vf__add_component(e, "mmproj_compute", o->proj_graph, NULL,
                               "one image through the vision encoder")))
        x->device = 0;
    vf__assume(a, e,
               "multimodal: the vision projector (mmproj) on GPU 0: %s of weights + %s of graph "
               "(F-OLL-07)",
               vf_format_bytes(b1, sizeof b1, o->proj_weights, VF_FMT_IEC),
               vf_format_bytes(b2, sizeof b2, o->proj_graph, VF_FMT_IEC));
}

/* F-OLL-08: memory.go's inputs for the settings o on n GPUs of `usable` bytes (0: no card). */
static void memgo_in(const struct oll_cfg *o, const struct vf_workload *w, uint64_t usable,
                     int64_t num_gpu, struct vf_oll_memgo_in *in)
{
    memset(in, 0, sizeof *in);
    in->context = o->num_ctx * o->parallel;
    if (o->proj_weights && in->context < 2048) /* multimodal models require 2048 */
        in->context = 2048;
    in->batch = in->context < OLL_BATCH ? in->context : OLL_BATCH;
    in->parallel = o->parallel;
    in->kv_elem = o->c.tk == VF_DT_Q8_0 ? 1.0 : o->c.tk == VF_DT_Q4_0 ? 0.5 : 2.0;
    in->n_gpus = o->c.n_gpus > VF_OLL_MAX_GPUS ? VF_OLL_MAX_GPUS : o->c.n_gpus;
    for (uint32_t g = 0; g < in->n_gpus; g++) /* issue 21: a --gpu A,B mix's own */
        in->free[g] = !usable ? UINT64_MAX / 4 : g < w->n_mix ? w->mix_usable[g] : usable;
    in->overhead = o->overhead;
    in->minimum = OLL_MIN_MEMORY;
    in->num_gpu = num_gpu;
    in->proj_weights = o->proj_weights;
    in->proj_graph = o->proj_graph;
    in->proj_last = o->proj_last;
    in->q = o->c.q;
}

/* F-OLL-08: the plan as components: per GPU its layers' weights and KV, the graph, the
 * MinimumMemory + first-layer buffer; the projector on GPU 0; the layers left on the host. */
static void memgo_components(struct vf_arena *a, const struct oll_cfg *o,
                             const struct vf_oll_memgo *p, struct vf_estimate *e)
{
    struct vf_component *x;
    bool full = p->layers >= p->layers_model;
    for (uint32_t g = 0; g < o->c.n_gpus && g < VF_OLL_MAX_GPUS; g++) {
        uint64_t graph = p->layers_gpu[g] ? (full ? p->graph_full : p->graph_partial) : 0;
        uint64_t reserve = p->alloc[g] ? OLL_MIN_MEMORY + p->layer0 + o->overhead : 0;
        const char *names[] = {"model_buffer", "kv_buffer", "compute_buffer", "runtime_overhead"};
        uint64_t bytes[] = {p->w_gpu[g], p->kv_gpu[g], graph, reserve};
        for (int i = 0; i < 4; i++)
            if ((x = vf__add_component(e, names[i], bytes[i], NULL,
                                       i == 3 ? "MinimumMemory + the first layer again (memory.go)"
                                              : NULL)))
                x->device = (int)g;
    }
    if (!o->proj_last || full)
        oll_projector(a, o, e);
    if (p->w_host && (x = vf__add_component(e, "model_buffer", p->w_host, NULL, NULL)))
        x->device = VF_DEV_HOST;
    if (p->kv_host && (x = vf__add_component(e, "kv_buffer", p->kv_host, NULL, NULL)))
        x->device = VF_DEV_HOST;
    e->host_bytes = vf__sat_add(p->w_host, p->kv_host);
}

/* F-OLL-08: the extras and the "offload" line memory.go logs. */
static void memgo_results(struct vf_arena *a, const struct oll_cfg *o, const struct vf_oll_memgo *p,
                          struct vf_estimate *e)
{
    char b[6][32];
    uint64_t gpu = p->required_partial, all = vf__sat_add(gpu, e->host_bytes);
    unsigned pct = all ? (unsigned)((gpu * 100.0) / (double)all + 0.5) : 0;
    const char *processor = p->layers >= p->layers_model ? "100% GPU"
                            : !p->layers                 ? "100% CPU"
                                         : vf_arena_printf(a, "%u%%/%u%% CPU/GPU", 100 - pct, pct);
    e->extra_name = "ollama";
    vf__extra_u64(e, "num_ctx", o->num_ctx);
    vf__extra_u64(e, "num_parallel", o->parallel);
    vf__extra_u64(e, "layers_model", p->layers_model);
    vf__extra_u64(e, "layers_offload", p->layers);
    vf__extra_bool(e, "flash_attn", o->c.flash_attn);
    vf__extra_u64(e, "kv_bytes", p->kv);
    vf__extra_u64(e, "required_full_bytes", p->required_full);
    vf__extra_u64(e, "required_partial_bytes", p->required_partial);
    vf__extra_u64(e, "weights_total_bytes", p->weights_repeating + p->weights_output);
    vf__extra_u64(e, "graph_full_bytes", p->graph_full);
    vf__extra_u64(e, "graph_partial_bytes", p->graph_partial);
    vf__extra_u64(e, "projector_weights_bytes", o->proj_weights);
    vf__extra_u64(e, "projector_graph_bytes", o->proj_graph);
    vf__extra_text(e, "processor", processor);
    vf__line(
        a, e,
        "offload: layers.model=%u layers.offload=%u memory.required.full=%s partial=%s "
        "kv=%s graph.full=%s graph.partial=%s weights.total=%s",
        p->layers_model, p->layers,
        vf_format_bytes(b[0], sizeof b[0], p->required_full, VF_FMT_IEC),
        vf_format_bytes(b[1], sizeof b[1], p->required_partial, VF_FMT_IEC),
        vf_format_bytes(b[2], sizeof b[2], p->kv, VF_FMT_IEC),
        vf_format_bytes(b[3], sizeof b[3], p->graph_full, VF_FMT_IEC),
        vf_format_bytes(b[4], sizeof b[4], p->graph_partial, VF_FMT_IEC),
        vf_format_bytes(b[5], sizeof b[5], p->weights_repeating + p->weights_output, VF_FMT_IEC));
    vf__line(a, e, "ollama ps: PROCESSOR %s, CONTEXT %llu", processor,
             (unsigned long long)o->num_ctx);
    if (!p->graph_known)
        vf__assume(a, e,
                   "memory.go has no graph formula for this architecture: GQA x the KV cache / 6 "
                   "(its fallback)");
}

/* F-OLL-08: releases before 0.11.11: memory.go decides the layers and logs the need. The total
 * is what its placement needs on the most loaded GPU to keep every layer: the allocations with
 * the larger of the two graphs and OLLAMA_GPU_OVERHEAD free (memory.required.full is in the
 * extras and the offload line). */
static enum vf_err oll_estimate_memgo(struct vf_arena *a, const struct vf_model *m,
                                      const struct vf_workload *w, struct oll_cfg *o,
                                      int64_t num_gpu, struct vf_estimate *e, struct vf_error *err)
{
    enum vf_err rc;
    uint64_t usable = w->usable_bytes && w->usable_bytes != VF_UNKNOWN ? w->usable_bytes : 0;
    struct vf_oll_memgo_in in;
    struct vf_oll_memgo p, whole;
    memgo_in(o, w, usable, num_gpu, &in);
    vf__oll_memgo(m, &in, &p);
    if (o->par_default && o->parallel > 1 && usable && p.layers < p.layers_model) {
        o->parallel = 1; /* the scheduler tries its default, then 1 */
        memgo_in(o, w, usable, num_gpu, &in);
        vf__oll_memgo(m, &in, &p);
    }
    o->c.n_ctx = in.context;
    vf__term_begin(m, &vf__engine_ollama, e);
    e->gpus = o->c.n_gpus;
    e->users = o->parallel;
    e->ctx_tokens = o->num_ctx;
    if ((rc = vf__term_weights(m, o->c.q, e, err)))
        return rc;
    vf__term_kv_per_token(m, o->c.tk, e);
    oll_assume(a, o, e);
    memgo_components(a, o, &p, e);
    memgo_in(o, w, 0, -1, &in);
    vf__oll_memgo(m, &in, &whole);
    /* the placement keeps the larger graph free beside every layer (memory.go's check) */
    uint64_t gmax = whole.graph_full > whole.graph_partial ? whole.graph_full : whole.graph_partial;
    for (uint32_t g = 0; g < in.n_gpus; g++) {
        uint64_t need =
            whole.alloc[g] - (whole.layers_gpu[g] ? whole.graph_full : 0) + gmax + o->overhead;
        e->total_bytes = need > e->total_bytes ? need : e->total_bytes;
    }
    memgo_results(a, o, &p, e);
    if (p.layers && p.layers < p.layers_model) { /* runs with spill (issue 21) */
        e->spill.runs = true;
        e->spill.gpu_layers = p.layers;
        e->spill.cpu_layers = p.layers_model - p.layers;
        e->spill.host_bytes = e->host_bytes;
        e->spill.host_weight_bytes = p.w_host;
        for (uint32_t g = 0; g < in.n_gpus; g++)
            e->spill.gpu_weight_bytes += p.w_gpu[g];
    }
    return VF_OK;
}

static enum vf_err oll_estimate(struct vf_arena *a, const struct vf_model *m,
                                const struct vf_workload *w, struct vf_estimate *e,
                                struct vf_error *err)
{
    struct oll_cfg o;
    struct vf_lcpp_plan p;
    enum vf_err rc;
    if (m->task != VF_TASK_INFER || m->pipeline)
        return vf__errf(err, VF_EUNSUPPORTED, "ollama estimates LLM inference only");
    if ((rc = read_cfg(m, w, &o, err)) ||
        (rc = vf__term_check_split(m, w, &vf__engine_ollama, o.c.n_gpus, false, err)))
        return rc;
    bool card = w->usable_bytes && w->usable_bytes != VF_UNKNOWN;
    uint64_t num_gpu = 0;
    const char *ng = vf_engine_opt(&w->opts, "num_gpu");
    if (ng && (vf_parse_tokens(ng, &num_gpu, NULL) || num_gpu > VF_MAX_LAYERS + 1))
        return vf__errf(err, VF_EINVAL, "ollama: num_gpu '%s': expected a number of layers", ng);
    if (o.memgo)
        return oll_estimate_memgo(a, m, w, &o, ng ? (int64_t)num_gpu : -1, e, err);
    uint64_t need[VF_OLL_MAX_GPUS];
    bool has_need = false, layout = card && !ng && o.c.n_gpus > 1;
    if (ng) /* issue 21: num_gpu sets the layers offloaded; the planner does not choose */
        o.c.ngl = num_gpu > m->n_layers + 1ULL ? (int64_t)m->n_layers + 1 : (int64_t)num_gpu;
    else if (layout && (rc = oll_layout(a, m, w, &o, need, &has_need, err)))
        return rc;
    else if (card && !layout)
        o.c.ngl = offload_layers(m, &o, w->usable_bytes);
    if ((rc = vf__lcpp_plan(m, &o.c, &p, err)))
        return rc;

    vf__term_begin(m, &vf__engine_ollama, e);
    e->gpus = o.c.n_gpus;
    e->users = o.parallel;
    e->ctx_tokens = o.num_ctx;
    if ((rc = vf__term_weights(m, o.c.q, e, err)))
        return rc;
    vf__term_kv_per_token(m, o.c.tk, e);
    oll_assume(a, &o, e);
    size_t first = e->n_components;
    e->host_bytes = vf__lcpp_components(e, &o.c, &p, vf__sat_add(o.overhead, OLL_MIN_MEMORY),
                                        "one CUDA context (Ollama's reserve)");
    oll_projector(a, &o, e);
    if ((rc = oll_total(m, &o, a, e, err)))
        return rc;
    if (layout)
        layout_results(a, w, &o, first, has_need ? need : NULL, e);
    oll_results(a, m, &o, &p, e->host_bytes, e);
    if (card || ng) /* Ollama runs what does not fit with layers on the CPU (issue 21) */
        vf__lcpp_spill(m, &o.c, &p, e);
    if (card && !layout)
        oll_fixes(a, m, &o, w->usable_bytes, e);
    return VF_OK;
}

static const struct vf_engine_flag oll_flags[] = {
    {"num_ctx", NULL, true, "context tokens per sequence (default by VRAM: 4k/32k/256k)"},
    {"num_parallel", NULL, true, "sequences served at once (num_ctx x num_parallel cells)"},
    {"OLLAMA_NUM_PARALLEL", NULL, true, "as num_parallel"},
    {"OLLAMA_FLASH_ATTENTION", NULL, true, "1 or 0 (default 1 from 0.12.4, 0 before)"},
    {"OLLAMA_KV_CACHE_TYPE", NULL, true, "f16 (default), q8_0 or q4_0 (needs flash attention)"},
    {"OLLAMA_CONTEXT_LENGTH", NULL, true, "default num_ctx"},
    {"OLLAMA_GPU_OVERHEAD", NULL, true, "bytes kept free per GPU"},
    {"num_gpu", NULL, true, "layers offloaded to the GPUs (default: Ollama's planner decides)"},
    {"OLLAMA_NEW_ESTIMATES", NULL, true,
     "1: the new memory estimates before they became the default (0.11.5-0.11.10)"},
    {NULL, NULL, false, NULL},
};

/* F-OLL-09: the releases where a rule changed (ollama/ollama git history). */
static const struct vf_engine_rule oll_rules[] = {
    {"0.1.0", "memory.go planner",
     "llm/memory.go EstimateGPULayers places the layers by fs/ggml GraphSize's graph estimates "
     "(F-OLL-08); num_ctx 2048; num_parallel 4 where it fits, else 1; flash attention off; a "
     "projector on GPU 0",
     "llm/memory.go, fs/ggml/ggml.go, api/types.go, server/sched.go defaultParallel (v0.6.5)"},
    {"0.6.7", "memory.go planner", "num_ctx 4096; num_parallel 2 where it fits, else 1",
     "commits 44b466eeb (default context length 4096), fe5b9bb21 (default num parallel 2)"},
    {"0.7.1", "memory.go planner",
     "an Ollama-engine model's projector is placed with the output layer, not on GPU 0",
     "commit d75557747"},
    {"0.9.7", "memory.go planner", "num_parallel 1", "PR #11330 (commit 20c3266e9)"},
    {"0.11.11", "new estimates",
     "sized by what the runner allocates (llama.cpp's buffers), laid out by Ollama with its "
     "MinimumMemory reserve; (models on the llama.cpp runner kept memory.go until 0.30: not "
     "modelled apart)",
     "commit eb10390de (PR #11090's new memory management, opt-in since 0.11.5)"},
    {"0.12.4", "new estimates",
     "flash attention on by default (a per-architecture list in "
     "Ollama: taken as every model)",
     "commit fdb109469"},
    {"0.15.5", "new estimates",
     "num_ctx by total VRAM: 4096, 32768 from 23 GiB, 262144 from 47 GiB", "commit 0334ffa62"},
    {NULL, NULL, NULL, NULL},
};

const struct vf_engine vf__engine_ollama = {
    .name = "ollama",
    .version = OLL_VERSION,
    .tasks = 1u << VF_TASK_INFER,
    .can_split = oll_can_split,
    .estimate = oll_estimate,
    .flags = oll_flags,
    .rules = oll_rules,
};
