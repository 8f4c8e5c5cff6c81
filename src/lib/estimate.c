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
    for (size_t i = 0; i < sizeof engines / sizeof engines[0]; i++)
        if (!vf__strcasecmp(engines[i]->name, name))
            return engines[i];
    return NULL;
}

const struct vf_engine *vf_engine_for(const struct vf_workload *w, struct vf_error *err)
{
    size_t n = sizeof engines / sizeof engines[0];
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
    return e;
}

void vf__assume(struct vf_arena *a, struct vf_estimate *e, const char *fmt, ...)
{
    if (e->n_assumptions >= VF_MAX_ASSUMPTIONS)
        return;
    va_list ap;
    va_start(ap, fmt);
    char buf[512];
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    const char *s = vf_arena_strdup(a, buf);
    if (s)
        e->assumptions[e->n_assumptions++] = s;
}

struct vf_component *vf__add_component(struct vf_estimate *e, const char *name, uint64_t bytes,
                                       const char *phase, const char *note)
{
    if (e->n_components >= VF_MAX_COMPONENTS)
        return NULL;
    struct vf_component *c = &e->components[e->n_components++];
    c->name = name;
    c->bytes = bytes;
    c->device = VF_DEV_ALL_GPUS;
    c->phase = phase;
    c->note = note;
    return c;
}

uint64_t vf__gpu_total(const struct vf_estimate *e, int gpu)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < e->n_components; i++)
        if (e->components[i].device == VF_DEV_ALL_GPUS || e->components[i].device == gpu)
            sum = vf__sat_add(sum, e->components[i].bytes);
    return sum;
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
    if (!llm && !gen)
        return vf__errf(err, VF_EINVAL,
                        "'%s' is an image/video pipeline: use --task image or --task video", m->id);
    return e->estimate(a, m, w, out, err);
}
