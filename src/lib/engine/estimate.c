/* SPDX-License-Identifier: Apache-2.0 */
/*
 * estimate.c - the engine table and the dispatcher. Every estimator sits behind
 * struct vf_engine; pick, fit and the renderers only ever call vf_estimate() and the
 * engine's can_split. Each engine says which tasks it estimates; each task has a default.
 */
#include "internal.h"

#include <stdio.h>
#include <string.h>

#define TASK(t) (1u << (t))

static const struct vf_engine *const engines[] = {
    &vf__engine_generic, /* LLM inference (the default) */
    &vf__engine_pytorch, /* training and fine-tuning (the default) */
    &vf__engine_comfyui, /* image and video generation (the default) */
    &vf__engine_vllm,         &vf__engine_llamacpp,  &vf__engine_ollama,
    &vf__engine_transformers, &vf__engine_diffusers,
};

const struct vf_engine *const *vf_engines(size_t *n)
{
    *n = sizeof engines / sizeof engines[0];
    return engines;
}

const struct vf_engine *vf_engine_find(const char *name)
{
    if (!name || !*name)
        return engines[0];
    const char *at = strchr(name, '@'); /* NAME@VERSION (DESIGN section 8): the engine's */
    if (at) {
        char base[32];
        size_t n = (size_t)(at - name);
        if (n == 0 || n >= sizeof base)
            return NULL;
        memcpy(base, name, n);
        base[n] = 0;
        return vf_engine_find(base);
    }
    for (size_t i = 0; i < sizeof engines / sizeof engines[0]; i++)
        if (!vf__strcasecmp(engines[i]->name, name))
            return engines[i];
    /* the engines' other spellings */
    if (!vf__strcasecmp(name, "llamacpp") || !vf__strcasecmp(name, "llama-cpp") ||
        !vf__strcasecmp(name, "llama-server"))
        return vf_engine_find("llama.cpp");
    if (!vf__strcasecmp(name, "hf") || !vf__strcasecmp(name, "huggingface"))
        return vf_engine_find("transformers");
    return NULL;
}

const struct vf_engine *vf_engine_for(const struct vf_workload *w, struct vf_error *err)
{
    size_t n = sizeof engines / sizeof engines[0];
    if ((!w->engine || !*w->engine) && w->engine_version) {
        vf__errf(err, VF_EINVAL, "--engine-version %s: say which engine (--engine vllm@%s)",
                 w->engine_version, w->engine_version);
        return NULL;
    }
    if (!w->engine || !*w->engine) {
        for (size_t i = 0; i < n; i++)
            if (engines[i]->tasks & TASK(w->task))
                return engines[i];
        vf__errf(err, VF_EUNSUPPORTED, "no engine estimates task '%s'", vf_task_name(w->task));
        return NULL;
    }
    const struct vf_engine *e = vf_engine_find(w->engine);
    char list[256] = "";
    for (size_t i = 0; i < n; i++)
        if (engines[i]->tasks & TASK(w->task))
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", *list ? ", " : "",
                     engines[i]->name);
    if (!e) {
        vf__errf(err, VF_EINVAL, "unknown engine '%s' (for --task %s: %s)", w->engine,
                 vf_task_name(w->task), list);
        return NULL;
    }
    if (!(e->tasks & TASK(w->task))) {
        vf__errf(err, VF_EINVAL, "engine '%s' does not estimate --task %s (use: %s)", e->name,
                 vf_task_name(w->task), list);
        return NULL;
    }
    if (w->engine_version && vf_engine_version_check(e, w->engine_version, err))
        return NULL;
    return e;
}

/* ------------------------------------------------------------ engine versions (issue 20) */

/* The next number of a release string from *p ("0.11.0": 0, 11, 0), -1 at its end. */
static long version_part(const char **p)
{
    while (**p && (**p < '0' || **p > '9'))
        (*p)++;
    if (!**p)
        return -1;
    long v = 0;
    while (**p >= '0' && **p <= '9' && v < 100000000)
        v = v * 10 + (*(*p)++ - '0');
    return v;
}

int vf_engine_version_cmp(const char *a, const char *b)
{
    for (;;) {
        long x = version_part(&a), y = version_part(&b);
        if (x < 0 && y < 0)
            return 0;
        x = x < 0 ? 0 : x; /* a missing part counts as 0: "0.6" = "0.6.0" */
        y = y < 0 ? 0 : y;
        if (x != y)
            return x < y ? -1 : 1;
    }
}

enum vf_err vf_engine_version_check(const struct vf_engine *e, const char *version,
                                    struct vf_error *err)
{
    const char *p = version;
    bool digits = false;
    for (; *p; p++)
        digits |= *p >= '0' && *p <= '9';
    if (!digits || strlen(version) > 24)
        return vf__errf(err, VF_EINVAL, "%s@%s: a version is a release number such as %s", e->name,
                        version, *e->version ? e->version : "0.6");
    if (!e->rules || !e->rules[0].since) {
        if (*e->version && !vf_engine_version_cmp(version, e->version))
            return VF_OK;
        return vf__errf(err, VF_EINVAL, "%s@%s: %s has no versions modelled yet (it models: %s)",
                        e->name, version, e->name, *e->version ? e->version : "one release");
    }
    if (vf_engine_version_cmp(version, e->rules[0].since) < 0)
        return vf__errf(err, VF_EINVAL,
                        "%s@%s: the oldest release modelled is %s ('vramfit help engines' lists "
                        "the rules by release)",
                        e->name, version, e->rules[0].since);
    return VF_OK;
}

/* Why a result is incomplete (struct vf_estimate.incomplete); vf_estimate() turns it into an
 * error. OUT_OF_MEMORY is told apart from the tables' limits by its address. */
#define STR_(x) #x
#define STR(x)  STR_(x)
static const char OUT_OF_MEMORY[] = "out of memory building the result";

static void incomplete(struct vf_estimate *e, const char *why)
{
    if (!e->incomplete) /* the first reason is the one reported */
        e->incomplete = why;
}

/* fmt formatted into the arena at its full length (no fixed buffer: nothing is cut short);
 * NULL, with e marked incomplete, when the arena is out of memory. */
static const char *format(struct vf_arena *a, struct vf_estimate *e, const char *fmt, va_list ap)
    VF__PRINTF(3, 0);
static const char *format(struct vf_arena *a, struct vf_estimate *e, const char *fmt, va_list ap)
{
    char *s = vf__arena_vprintf(a, fmt, ap);
    if (!s)
        incomplete(e, OUT_OF_MEMORY);
    return s;
}

void(vf__assume)(struct vf_arena *a, struct vf_estimate *e, const char *fmt, ...)
{
    if (e->totals_only)
        return;
    if (e->n_assumptions >= VF_MAX_ASSUMPTIONS) {
        incomplete(e, "more than " STR(VF_MAX_ASSUMPTIONS) " assumptions (VF_MAX_ASSUMPTIONS)");
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    const char *s = format(a, e, fmt, ap);
    va_end(ap);
    if (s)
        e->assumptions[e->n_assumptions++] = s;
}

/* Appends x to e's engine results (past VF_MAX_EXTRAS e is marked incomplete instead). */
static void extra(struct vf_estimate *e, struct vf_extra x)
{
    if (e->n_extras >= VF_MAX_EXTRAS)
        incomplete(e, "more than " STR(VF_MAX_EXTRAS) " engine results (VF_MAX_EXTRAS)");
    else
        e->extras[e->n_extras++] = x;
}

void vf__extra_u64(struct vf_estimate *e, const char *key, uint64_t v)
{
    extra(e, (struct vf_extra){.key = key, .kind = VF_EXTRA_U64, .u64 = v});
}

void vf__extra_real(struct vf_estimate *e, const char *key, double v)
{
    extra(e, (struct vf_extra){.key = key, .kind = VF_EXTRA_REAL, .real = v});
}

void vf__extra_text(struct vf_estimate *e, const char *key, const char *v)
{
    extra(e, (struct vf_extra){.key = key, .kind = VF_EXTRA_TEXT, .text = v});
}

void vf__extra_bool(struct vf_estimate *e, const char *key, bool v)
{
    extra(e, (struct vf_extra){.key = key, .kind = VF_EXTRA_BOOL, .u64 = v});
}

static void add_line(struct vf_arena *a, struct vf_estimate *e, const char **lines, size_t *n,
                     const char *why, const char *fmt, va_list ap) VF__PRINTF(6, 0);
static void add_line(struct vf_arena *a, struct vf_estimate *e, const char **lines, size_t *n,
                     const char *why, const char *fmt, va_list ap)
{
    if (e->totals_only)
        return;
    if (*n >= VF_MAX_LINES) {
        incomplete(e, why);
        return;
    }
    const char *s = format(a, e, fmt, ap);
    if (s)
        lines[(*n)++] = s;
}

void(vf__line)(struct vf_arena *a, struct vf_estimate *e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    add_line(a, e, e->lines, &e->n_lines,
             "more than " STR(VF_MAX_LINES) " engine lines (VF_MAX_LINES)", fmt, ap);
    va_end(ap);
}

void(vf__fix)(struct vf_arena *a, struct vf_estimate *e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    add_line(a, e, e->fixes, &e->n_fixes, "more than " STR(VF_MAX_LINES) " fixes (VF_MAX_LINES)",
             fmt, ap);
    va_end(ap);
}

struct vf_component *vf__add_component(struct vf_estimate *e, const char *name, uint64_t bytes,
                                       const char *phase, const char *note)
{
    if (e->n_components >= VF_MAX_COMPONENTS) {
        incomplete(e, "more than " STR(VF_MAX_COMPONENTS) " components (VF_MAX_COMPONENTS)");
        return NULL;
    }
    struct vf_component *c = &e->components[e->n_components++];
    c->name = name;
    c->bytes = bytes;
    c->device = VF_DEV_ALL_GPUS;
    c->phase = phase;
    c->note = note;
    return c;
}

void vf__fix_saving(struct vf_arena *a, struct vf_estimate *e, uint64_t after, uint64_t usable,
                    const char *flags, const char *cost)
{
    char b1[32], b2[32];
    if (e->totals_only || after == VF_UNKNOWN || after >= e->total_bytes)
        return;
    vf_format_bytes(b1, sizeof b1, e->total_bytes - after, VF_FMT_IEC);
    vf_format_bytes(b2, sizeof b2, after, VF_FMT_IEC);
    vf__fix(a, e, "%s: saves %s, peak %s%s - %s", flags, b1, b2, after <= usable ? " (fits)" : "",
            cost);
}

uint64_t vf__gpu_total(const struct vf_estimate *e, int gpu)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < e->n_components; i++)
        if (e->components[i].device == VF_DEV_ALL_GPUS || e->components[i].device == gpu)
            sum = vf__sat_add(sum, e->components[i].bytes);
    return sum;
}

const char *vf_engine_opt(const struct vf_engine_opts *o, const char *key)
{
    for (size_t i = 0; o && i < o->n; i++)
        if (!strcmp(o->key[i], key))
            return o->value[i] ? o->value[i] : "";
    return NULL;
}

const char *vf_task_name(enum vf_task t)
{
    switch (t) {
    case VF_TASK_INFER:
        return "infer";
    case VF_TASK_TRAIN:
        return "train";
    case VF_TASK_IMAGE:
        return "image";
    case VF_TASK_VIDEO:
        return "video";
    }
    return "?";
}

enum vf_err vf_estimate(struct vf_arena *a, const struct vf_model *m, const struct vf_workload *w,
                        struct vf_estimate *out, struct vf_error *err)
{
    memset(out, 0, sizeof *out);
    out->totals_only = m->memo && m->memo->probing;
    const struct vf_engine *e = vf_engine_for(w, err);
    if (!e)
        return err ? err->code : VF_EINVAL;
    bool llm = m->pipeline == NULL;
    bool gen = w->task == VF_TASK_IMAGE || w->task == VF_TASK_VIDEO;
    if (llm && gen)
        return vf__errf(err, VF_EINVAL,
                        "'%s' is a language model: --task %s needs an image or video pipeline "
                        "(flux1-dev, wan2.2-t2v-a14b, ...)",
                        m->id, vf_task_name(w->task));
    if (!llm && !gen && w->task != VF_TASK_TRAIN)
        return vf__errf(err, VF_EINVAL,
                        "'%s' is an image/video pipeline: use --task image, video or train", m->id);
    /* issue 21: a BERT-style encoder neither decodes nor keeps a KV cache */
    if (llm && m->encoder_only)
        return vf__errf(err, VF_EUNSUPPORTED,
                        "'%s' is an encoder-only model (%s, BERT-style): it embeds or classifies "
                        "text in one pass, with no KV cache and no generation; vramfit estimates "
                        "decoder LLM inference and training",
                        m->id, m->model_type);
    /* engines refuse a context past the model's maximum unless told to (vLLM's
     * VLLM_ALLOW_LONG_MAX_MODEL_LEN, llama.cpp's rope scaling flags) */
    if (w->task == VF_TASK_INFER && !w->force && m->max_ctx_tokens &&
        m->max_ctx_tokens != VF_UNKNOWN && w->ctx_tokens > m->max_ctx_tokens)
        return vf__errf(err, VF_EINVAL,
                        "context %llu tokens is beyond the maximum of '%s' (%llu tokens); the "
                        "engines refuse it unless rope scaling is set: add --force to estimate "
                        "it anyway",
                        (unsigned long long)w->ctx_tokens, m->id,
                        (unsigned long long)m->max_ctx_tokens);
    /* issue 21: llama.cpp alone keeps K and V in different types (-ctk/-ctv) */
    if (w->kv_dtype_v != VF_DT_DEFAULT && w->kv_dtype_v != w->kv_dtype && e != &vf__engine_llamacpp)
        return vf__errf(err, VF_EINVAL,
                        "-ctv %s differs from the K cache type: engine %s keeps K and V in one "
                        "type (llama.cpp sets them apart)",
                        vf_dtype_name(w->kv_dtype_v), e->name);
    enum vf_err rc = e->estimate(a, m, w, out, err);
    /* issue 20: the release whose rules were used, for the engines with versions */
    /* the release modelled is printed when the engine names one by its number (vLLM's
     * "0.11.0"); llama.cpp's version names the node-llama-cpp build it follows: its build
     * is printed only when one was asked for */
    bool numbered = e->version[0] >= '0' && e->version[0] <= '9';
    if (!out->engine_version && (w->engine_version || (e->rules && e->rules[0].since && numbered)))
        out->engine_version = w->engine_version ? w->engine_version : e->version;
    if (!rc && out->incomplete) /* a limit is an error, never a result with parts left out */
        rc = out->incomplete == OUT_OF_MEMORY
                 ? vf__errf(err, VF_ENOMEM, "estimate of '%s': %s", m->id, out->incomplete)
                 : vf__errf(err, VF_ELIMIT, "estimate of '%s': %s: the result would leave some out",
                            m->id, out->incomplete);
    return rc;
}
