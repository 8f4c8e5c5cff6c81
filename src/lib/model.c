/*
 * model.c - turns a model reference into a struct vf_model. Issue 2 resolves catalog ids
 * and aliases: LLMs through the same config reader that reads users' config.json files,
 * image/video pipelines through the pipeline reader; files, folders and the hub are added
 * by the readers of issue 3.
 */
#include "internal.h"

#include <stdio.h>
#include <string.h>

enum vf_err vf_model_resolve(struct vf_arena *a, const struct vf_catalog *c, const char *ref,
                             struct vf_model *out, struct vf_error *err)
{
    memset(out, 0, sizeof *out);
    if (!ref || !*ref)
        return vf__errf(err, VF_EINVAL, "no model given (a catalog id such as llama-3.1-8b)");
    const struct vf_catalog_model *cm = vf_catalog_model(c, ref);
    if (!cm) {
        const struct vf_catalog_model *near[3];
        size_t n = vf_catalog_suggest(c, ref, near, 3);
        char list[VF_ERROR_MSG_MAX] = "";
        for (size_t i = 0; i < n; i++) {
            size_t l = strlen(list);
            snprintf(list + l, sizeof list - l, "%s%s%s%s%s", i ? ", " : "", near[i]->id,
                     near[i]->alias ? " (" : "", near[i]->alias ? near[i]->alias : "",
                     near[i]->alias ? ")" : "");
        }
        if (n)
            return vf__errf(err, VF_ENOENT,
                            "unknown model '%s'\n  did you mean: %s\n  "
                            "'vramfit catalog models' lists them all",
                            ref, list);
        return vf__errf(err, VF_ENOENT,
                        "unknown model '%s'\n  'vramfit catalog models' lists the models it "
                        "knows",
                        ref);
    }
    size_t len;
    const char *text = vf_catalog_file(a, c, cm->file, &len, err);
    if (!text)
        return err ? err->code : VF_ENOENT;
    enum vf_err rc = cm->task == VF_TASK_INFER
                         ? vf_model_from_config(a, text, len, cm->file, out, err)
                         : vf__pipeline_from_json(a, text, len, cm->file, out, err);
    if (rc)
        return rc;
    out->task = cm->task;
    out->provenance = VF_PROV_CATALOG;
    out->source = vf_arena_printf(a, "catalog %s", cm->file);
    out->id = cm->id;
    out->name = cm->name;
    out->alias = cm->alias;
    return VF_OK;
}
