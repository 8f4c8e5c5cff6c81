/*
 * estimate.c - the engine table and the dispatcher. Every estimator sits behind
 * struct vf_engine; pick, fit and the renderers only ever call vf_estimate().
 */
#include "internal.h"

#include <string.h>

static const struct vf_engine *const engines[] = {
    &vf__engine_generic,
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
    const struct vf_engine *e = vf_engine_find(w->engine);
    if (!e) {
        size_t n;
        const struct vf_engine *const *all = vf_engines(&n);
        char list[256] = "";
        for (size_t i = 0; i < n; i++) {
            if (i)
                strncat(list, ", ", sizeof list - strlen(list) - 1);
            strncat(list, all[i]->name, sizeof list - strlen(list) - 1);
        }
        return vf__errf(err, VF_EINVAL, "unknown engine '%s' (available: %s)", w->engine, list);
    }
    if (w->task != VF_TASK_INFER)
        return vf__errf(err, VF_EUNSUPPORTED,
                        "task '%s' is not estimated yet: only LLM inference (--task infer) is",
                        vf_task_name(w->task));
    return e->estimate(a, m, w, out, err);
}
