/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pipeline.c - reads an image/video generation pipeline file (data/pipelines/NAME.json)
 * into a struct vf_pipeline and the struct vf_model that carries it. The arithmetic on a
 * pipeline the image/video engines share (geometry, component bytes, the start of an
 * estimate) is engine/pipeline_terms.c.
 *
 * The file format is ours ("vramfit-pipeline/1"); every number in it is cited in its
 * "sources" array and checked against the limits of pipeline.h before it is used:
 *
 *   {
 *     "format": "vramfit-pipeline/1",
 *     "name": "FLUX.1 [dev]",
 *     "task": "image" | "video",
 *     "defaults": {"width": 1024, "height": 1024, "frames": 1, "steps": 20},
 *     "denoiser": {
 *       "component": "transformer" | "unet",    component name in estimates
 *       "arch": "flux",                         free text: flux, wan, mmdit, unet
 *       "params": 11901408320,                  parameters of ONE expert
 *       "experts": 1,                           denoisers used in turn (Wan 2.2 A14B: 2)
 *       "dtype": "bf16" | "fp16",               the checkpoint's storage = compute type
 *       "hidden": 3072, "heads": 24, "head_dim": 128, "layers": 57, "ffn": 12288,
 *       "patch": [t, h, w],                     latent cells per token along each axis
 *       "latent_channels": 16,
 *       "joint_text": true,                     text tokens join self-attention (F-DIF-03)
 *       "act_widths": 18,                       hidden-wide tensors alive per token (F-DIF-04)
 *       "cfg": false,                           classifier-free guidance (cond + uncond)
 *       "comfy_memory_usage_factor": 3.1        ComfyUI's per-model factor (F-DIF-05)
 *     },
 *     "text_tokens": 512,
 *     "text_encoders": [{"name": "t5xxl", "params": 4762310656, "dtype": "fp16",
 *                        "fp8_file": true,
 *                        "keep_fp32_params": 1006632960,   optional: _keep_in_fp32_modules
 *                        "nonlinear_params": 131799040},   optional: outside nn.Linear
 *                       ...],                              1 to 4 encoders
 *     "vae": {"params": 83800000, "dtype": "bf16", "spatial": 8, "temporal": 1,
 *             "latent_channels": 16, "decode_coef": 2178, "decode_per_frame": false,
 *             "decoder_channels": [128, 256, 512, 512],   optional: block_out_channels
 *             "force_upcast": false},                     optional: diffusers upcasts fp16
 *     "sources": ["where each number comes from", ...]
 *   }
 *
 * Every key is required except "sources" and those marked optional (0 or false when absent);
 * unknown keys are ignored. Errors name the file
 * and the key: "pipeline: 'pipelines/x.json': denoiser.params: -3 is negative".
 */
#include "pipeline.h"

#include "read/json_fast.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

/* One parse: the file name for messages and where errors go. */
struct rd {
    struct vf_arena *a;
    const char *origin;
    struct vf_error *err;
};

static enum vf_err bad(const struct rd *r, const char *path, const char *what)
{
    return vf__errf(r->err, VF_EFORMAT, "pipeline: '%s': %s: %s", r->origin, path, what);
}

/* The member `key` of object `o` (path names it in messages); VF_EFORMAT when absent. */
static enum vf_err member(const struct rd *r, json_t *o, const char *path, const char *key,
                          json_t **out)
{
    *out = json_object_get(o, key);
    if (!*out || json_is_null(*out))
        return bad(r, path, "is missing");
    return VF_OK;
}

/*
 * Reads the whole number at o[key] into *out, within [min, max]. Accepts JSON integers
 * and integral reals (1.2e10). VF_EFORMAT for anything else, VF_ELIMIT above max.
 */
static enum vf_err u64_at(const struct rd *r, json_t *o, const char *path, const char *key,
                          uint64_t min, uint64_t max, uint64_t *out)
{
    json_t *v;
    enum vf_err rc = member(r, o, path, key, &v);
    if (rc)
        return rc;
    if (json_is_integer(v)) {
        json_int_t i = json_integer_value(v);
        if (i < 0)
            return vf__errf(r->err, VF_EFORMAT, "pipeline: '%s': %s: %lld is negative", r->origin,
                            path, (long long)i);
        *out = (uint64_t)i;
    } else if (json_is_real(v)) {
        double d = json_real_value(v);
        if (!(d >= 0))
            return vf__errf(r->err, VF_EFORMAT, "pipeline: '%s': %s: %g is negative", r->origin,
                            path, d);
        if (d > (double)max)
            return vf__errf(r->err, VF_ELIMIT, "pipeline: '%s': %s: %g exceeds the limit %llu",
                            r->origin, path, d, (unsigned long long)max);
        if ((double)(uint64_t)d != d)
            return vf__errf(r->err, VF_EFORMAT, "pipeline: '%s': %s: %g is not a whole number",
                            r->origin, path, d);
        *out = (uint64_t)d;
    } else {
        return bad(r, path, "is not a number");
    }
    if (*out > max)
        return vf__errf(r->err, VF_ELIMIT, "pipeline: '%s': %s: %llu exceeds the limit %llu",
                        r->origin, path, (unsigned long long)*out, (unsigned long long)max);
    if (*out < min)
        return vf__errf(r->err, VF_EFORMAT, "pipeline: '%s': %s: %llu is below the minimum %llu",
                        r->origin, path, (unsigned long long)*out, (unsigned long long)min);
    return VF_OK;
}

/* u64_at for an optional key: 0 when o has no `key` (or it is null). */
static enum vf_err u64_opt(const struct rd *r, json_t *o, const char *path, const char *key,
                           uint64_t max, uint64_t *out)
{
    json_t *v = json_object_get(o, key);
    *out = 0;
    return !v || json_is_null(v) ? VF_OK : u64_at(r, o, path, key, 0, max, out);
}

static enum vf_err u32_at(const struct rd *r, json_t *o, const char *path, const char *key,
                          uint64_t min, uint64_t max, uint32_t *out)
{
    uint64_t v = 0;
    enum vf_err rc = u64_at(r, o, path, key, min, max, &v);
    *out = (uint32_t)v;
    return rc;
}

static enum vf_err bool_at(const struct rd *r, json_t *o, const char *path, const char *key,
                           bool *out)
{
    json_t *v;
    enum vf_err rc = member(r, o, path, key, &v);
    if (rc)
        return rc;
    if (!json_is_boolean(v))
        return bad(r, path, "is not true or false");
    *out = json_is_true(v);
    return VF_OK;
}

/* A string of at most VF_PIPE_MAX_TEXT bytes, copied into the arena. */
static enum vf_err str_at(const struct rd *r, json_t *o, const char *path, const char *key,
                          const char **out)
{
    json_t *v;
    enum vf_err rc = member(r, o, path, key, &v);
    if (rc)
        return rc;
    if (!json_is_string(v))
        return bad(r, path, "is not a string");
    if (json_string_length(v) > VF_PIPE_MAX_TEXT || !json_string_length(v))
        return bad(r, path, "is empty or longer than 1024 bytes");
    *out = vf_arena_strdup(r->a, json_string_value(v));
    return *out ? VF_OK : vf__errf(r->err, VF_ENOMEM, "pipeline: out of memory");
}

/* "bf16" | "fp16" (and "fp32" where allow32) into *out. */
static enum vf_err dtype_at(const struct rd *r, json_t *o, const char *path, const char *key,
                            bool allow32, enum vf_dtype *out)
{
    const char *s;
    enum vf_err rc = str_at(r, o, path, key, &s);
    if (rc)
        return rc;
    if (!strcmp(s, "bf16"))
        *out = VF_DT_BF16;
    else if (!strcmp(s, "fp16"))
        *out = VF_DT_F16;
    else if (allow32 && !strcmp(s, "fp32"))
        *out = VF_DT_F32;
    else
        return vf__errf(r->err, VF_EFORMAT, "pipeline: '%s': %s: '%s' is not %s", r->origin, path,
                        s, allow32 ? "bf16, fp16 or fp32" : "bf16 or fp16");
    return VF_OK;
}

/* The object at o[key]. */
static enum vf_err obj_at(const struct rd *r, json_t *o, const char *path, const char *key,
                          json_t **out)
{
    enum vf_err rc = member(r, o, path, key, out);
    if (rc)
        return rc;
    return json_is_object(*out) ? VF_OK : bad(r, path, "is not an object");
}

/* F-DIF-05's factor: a positive decimal up to VF_PIPE_MAX_FACTOR, kept in millionths. */
static enum vf_err factor_at(const struct rd *r, json_t *o, const char *path, const char *key,
                             uint64_t *ppm)
{
    json_t *v;
    enum vf_err rc = member(r, o, path, key, &v);
    if (rc)
        return rc;
    if (!json_is_number(v))
        return bad(r, path, "is not a number");
    double d = json_number_value(v);
    if (!(d > 0) || d > VF_PIPE_MAX_FACTOR)
        return vf__errf(r->err, VF_ERANGE, "pipeline: '%s': %s: %g is not in (0, %d]", r->origin,
                        path, d, VF_PIPE_MAX_FACTOR);
    *ppm = (uint64_t)(d * 1e6 + 0.5);
    return *ppm ? VF_OK : bad(r, path, "rounds to 0");
}

static enum vf_err read_denoiser(const struct rd *r, json_t *root, struct vf_pipeline *p)
{
    json_t *d, *v;
    enum vf_err rc = obj_at(r, root, "denoiser", "denoiser", &d);
    if (rc)
        return rc;
#define U32(key, min, max, field)                                           \
    do {                                                                    \
        if ((rc = u32_at(r, d, "denoiser." key, key, min, max, &p->field))) \
            return rc;                                                      \
    } while (0)
    if ((rc = str_at(r, d, "denoiser.component", "component", &p->component)))
        return rc;
    if (strcmp(p->component, "transformer") && strcmp(p->component, "unet"))
        return bad(r, "denoiser.component", "is not 'transformer' or 'unet'");
    if ((rc = str_at(r, d, "denoiser.arch", "arch", &p->arch)))
        return rc;
    if ((rc = u64_at(r, d, "denoiser.params", "params", 1, VF_PIPE_MAX_PARAMS, &p->params)))
        return rc;
    U32("experts", 1, VF_PIPE_MAX_EXPERTS, experts);
    if ((rc = dtype_at(r, d, "denoiser.dtype", "dtype", false, &p->dtype)))
        return rc;
    U32("hidden", 1, VF_MAX_DIM, hidden);
    U32("heads", 1, VF_MAX_DIM, heads);
    U32("head_dim", 1, VF_MAX_DIM, head_dim);
    U32("layers", 1, VF_MAX_LAYERS, layers);
    U32("ffn", 1, VF_MAX_DIM, ffn);
    U32("latent_channels", 1, 1024, latent_channels);
    U32("act_widths", 1, VF_PIPE_MAX_WIDTHS, act_widths);
#undef U32
    if ((rc = member(r, d, "denoiser.patch", "patch", &v)))
        return rc;
    if (!json_is_array(v) || json_array_size(v) != 3)
        return bad(r, "denoiser.patch", "is not an array [t, h, w]");
    uint32_t *axes[3] = {&p->patch_t, &p->patch_h, &p->patch_w};
    for (size_t i = 0; i < 3; i++) {
        json_t *e = json_array_get(v, i);
        if (!json_is_integer(e) || json_integer_value(e) < 1 ||
            json_integer_value(e) > VF_PIPE_MAX_PATCH)
            return bad(r, "denoiser.patch", "holds a value that is not an integer in [1, 16]");
        *axes[i] = (uint32_t)json_integer_value(e);
    }
    if ((rc = bool_at(r, d, "denoiser.joint_text", "joint_text", &p->joint_text)))
        return rc;
    if ((rc = bool_at(r, d, "denoiser.cfg", "cfg", &p->cfg)))
        return rc;
    return factor_at(r, d, "denoiser.comfy_memory_usage_factor", "comfy_memory_usage_factor",
                     &p->factor_ppm);
}

static enum vf_err read_encoders(const struct rd *r, json_t *root, struct vf_pipeline *p)
{
    json_t *arr;
    enum vf_err rc = member(r, root, "text_encoders", "text_encoders", &arr);
    if (rc)
        return rc;
    if (!json_is_array(arr) || json_array_size(arr) < 1 ||
        json_array_size(arr) > VF_PIPE_MAX_ENCODERS)
        return bad(r, "text_encoders", "is not an array of 1 to 4 encoders");
    p->n_enc = json_array_size(arr);
    for (size_t i = 0; i < p->n_enc; i++) {
        json_t *e = json_array_get(arr, i);
        char path[64];
        snprintf(path, sizeof path, "text_encoders[%zu]", i);
        if (!json_is_object(e))
            return bad(r, path, "is not an object");
        struct vf_pipe_encoder *x = &p->enc[i];
        char key[96];
        snprintf(key, sizeof key, "%s.name", path);
        if ((rc = str_at(r, e, key, "name", &x->name)))
            return rc;
        snprintf(key, sizeof key, "%s.params", path);
        if ((rc = u64_at(r, e, key, "params", 1, VF_PIPE_MAX_PARAMS, &x->params)))
            return rc;
        snprintf(key, sizeof key, "%s.dtype", path);
        if ((rc = dtype_at(r, e, key, "dtype", true, &x->dtype)))
            return rc;
        snprintf(key, sizeof key, "%s.fp8_file", path);
        if ((rc = bool_at(r, e, key, "fp8_file", &x->fp8_file)))
            return rc;
        snprintf(key, sizeof key, "%s.keep_fp32_params", path);
        if ((rc = u64_opt(r, e, key, "keep_fp32_params", x->params, &x->keep_fp32_params)))
            return rc;
        snprintf(key, sizeof key, "%s.nonlinear_params", path);
        if ((rc = u64_opt(r, e, key, "nonlinear_params", x->params - x->keep_fp32_params,
                          &x->nonlinear_params)))
            return rc;
    }
    return u32_at(r, root, "text_tokens", "text_tokens", 1, VF_PIPE_MAX_TOKENS, &p->text_tokens);
}

/* F-DIF-17: the optional vae.decoder_channels (four levels of 1 to VF_PIPE_MAX_VAE_CH channels)
 * and vae.force_upcast. */
static enum vf_err read_vae_decoder(const struct rd *r, json_t *v, struct vf_pipeline *p)
{
    json_t *ch = json_object_get(v, "decoder_channels");
    json_t *up = json_object_get(v, "force_upcast");
    if (up && !json_is_null(up)) {
        if (!json_is_boolean(up))
            return bad(r, "vae.force_upcast", "is not true or false");
        p->vae_upcast = json_is_true(up);
    }
    if (!ch || json_is_null(ch))
        return VF_OK;
    if (!json_is_array(ch) || json_array_size(ch) != VF_PIPE_VAE_LEVELS)
        return bad(r, "vae.decoder_channels", "is not an array of 4 channel counts");
    for (size_t i = 0; i < VF_PIPE_VAE_LEVELS; i++) {
        json_t *e = json_array_get(ch, i);
        if (!json_is_integer(e) || json_integer_value(e) < 1 ||
            json_integer_value(e) > VF_PIPE_MAX_VAE_CH)
            return bad(r, "vae.decoder_channels",
                       "holds a value that is not an integer in [1, 4096]");
        p->vae_ch[i] = (uint32_t)json_integer_value(e);
    }
    return VF_OK;
}

static enum vf_err read_vae(const struct rd *r, json_t *root, struct vf_pipeline *p)
{
    json_t *v;
    enum vf_err rc = obj_at(r, root, "vae", "vae", &v);
    if (rc)
        return rc;
    if ((rc = u64_at(r, v, "vae.params", "params", 1, VF_PIPE_MAX_PARAMS, &p->vae_params)) ||
        (rc = dtype_at(r, v, "vae.dtype", "dtype", true, &p->vae_dtype)) ||
        (rc = u32_at(r, v, "vae.spatial", "spatial", 1, VF_PIPE_MAX_COMPRESS, &p->vae_spatial)) ||
        (rc =
             u32_at(r, v, "vae.temporal", "temporal", 1, VF_PIPE_MAX_COMPRESS, &p->vae_temporal)) ||
        (rc = u32_at(r, v, "vae.latent_channels", "latent_channels", 1, 1024,
                     &p->vae_latent_channels)) ||
        (rc = u32_at(r, v, "vae.decode_coef", "decode_coef", 1, VF_PIPE_MAX_COEF,
                     &p->decode_coef)) ||
        (rc = bool_at(r, v, "vae.decode_per_frame", "decode_per_frame", &p->decode_per_frame)))
        return rc;
    if (p->vae_latent_channels != p->latent_channels)
        return bad(r, "vae.latent_channels", "differs from denoiser.latent_channels");
    return read_vae_decoder(r, v, p);
}

static enum vf_err read_defaults(const struct rd *r, json_t *root, struct vf_pipeline *p)
{
    json_t *d;
    enum vf_err rc = obj_at(r, root, "defaults", "defaults", &d);
    if (rc)
        return rc;
    uint64_t min_side =
        (uint64_t)p->vae_spatial * (p->patch_h > p->patch_w ? p->patch_h : p->patch_w);
    if ((rc = u32_at(r, d, "defaults.width", "width", min_side, VF_PIPE_MAX_SIDE, &p->def_width)) ||
        (rc = u32_at(r, d, "defaults.height", "height", min_side, VF_PIPE_MAX_SIDE,
                     &p->def_height)) ||
        (rc = u32_at(r, d, "defaults.frames", "frames", 1, VF_PIPE_MAX_FRAMES, &p->def_frames)) ||
        (rc = u32_at(r, d, "defaults.steps", "steps", 1, VF_PIPE_MAX_STEPS, &p->def_steps)))
        return rc;
    if (p->task == VF_TASK_IMAGE && p->def_frames != 1)
        return bad(r, "defaults.frames", "is not 1 for an image pipeline");
    return VF_OK;
}

static enum vf_err read_sources(const struct rd *r, json_t *root, struct vf_pipeline *p)
{
    json_t *arr = json_object_get(root, "sources");
    if (!arr || json_is_null(arr))
        return VF_OK;
    if (!json_is_array(arr) || json_array_size(arr) > VF_PIPE_MAX_SOURCES)
        return bad(r, "sources", "is not an array of at most 32 strings");
    p->n_sources = json_array_size(arr);
    p->sources = vf_arena_alloc(r->a, (p->n_sources + 1) * sizeof *p->sources);
    if (!p->sources)
        return vf__errf(r->err, VF_ENOMEM, "pipeline: out of memory");
    for (size_t i = 0; i < p->n_sources; i++) {
        json_t *s = json_array_get(arr, i);
        if (!json_is_string(s) || json_string_length(s) > 4 * VF_PIPE_MAX_TEXT)
            return bad(r, "sources", "holds something that is not a string of <= 4096 bytes");
        if (!(p->sources[i] = vf_arena_strdup(r->a, json_string_value(s))))
            return vf__errf(r->err, VF_ENOMEM, "pipeline: out of memory");
    }
    return VF_OK;
}

static enum vf_err read_all(const struct rd *r, json_t *root, struct vf_pipeline *p)
{
    const char *s;
    enum vf_err rc = str_at(r, root, "format", "format", &s);
    if (rc)
        return rc;
    if (strcmp(s, "vramfit-pipeline/1"))
        return vf__errf(r->err, VF_EUNSUPPORTED,
                        "pipeline: '%s': format: '%s' is not 'vramfit-pipeline/1'", r->origin, s);
    if ((rc = str_at(r, root, "name", "name", &p->name)) ||
        (rc = str_at(r, root, "task", "task", &s)))
        return rc;
    if (!strcmp(s, "image"))
        p->task = VF_TASK_IMAGE;
    else if (!strcmp(s, "video"))
        p->task = VF_TASK_VIDEO;
    else
        return bad(r, "task", "is not 'image' or 'video'");
    if ((rc = read_denoiser(r, root, p)) || (rc = read_encoders(r, root, p)) ||
        (rc = read_vae(r, root, p)) || (rc = read_defaults(r, root, p)) ||
        (rc = read_sources(r, root, p)))
        return rc;
    if (p->task == VF_TASK_IMAGE && p->vae_temporal != 1)
        return bad(r, "vae.temporal", "is not 1 for an image pipeline");
    return VF_OK;
}

enum vf_err vf__pipeline_from_json(struct vf_arena *a, const char *json, size_t len,
                                   const char *origin, struct vf_model *m, struct vf_error *err)
{
    struct rd r = {a, origin ? origin : "?", err};
    if (len > VF_MAX_CONFIG_JSON_BYTES)
        return vf__errf(err, VF_ELIMIT, "pipeline: '%s': %zu bytes exceeds the limit of %zu",
                        r.origin, len, VF_MAX_CONFIG_JSON_BYTES);
    json_error_t je;
    json_t *root = vf__json_loadb(json, len, JSON_REJECT_DUPLICATES, &je);
    if (!root && vf__json_nomem(&je))
        return vf__errf(err, VF_ENOMEM, "pipeline: out of memory reading '%s'", r.origin);
    if (!root)
        return vf__errf(err, VF_EFORMAT, "pipeline: cannot parse '%s': %s at line %d column %d",
                        r.origin, je.text, je.line, je.column);
    struct vf_pipeline *p = vf_arena_alloc(a, sizeof *p);
    enum vf_err rc = p ? VF_OK : vf__errf(err, VF_ENOMEM, "pipeline: out of memory");
    if (!rc && !json_is_object(root))
        rc = vf__errf(err, VF_EFORMAT, "pipeline: '%s': the top level is not an object", r.origin);
    if (!rc)
        rc = read_all(&r, root, p);
    json_decref(root);
    if (rc)
        return rc;

    memset(m, 0, sizeof *m);
    m->id = origin;
    m->name = p->name;
    m->task = p->task;
    m->pipeline = p;
    m->model_type = p->arch;
    m->source = origin;
    m->provenance = VF_PROV_CATALOG;
    m->hidden = p->hidden;
    m->n_heads = p->heads;
    m->n_kv_heads = p->heads;
    m->head_dim = p->head_dim;
    m->head_dim_v = p->head_dim;
    m->intermediate = p->ffn;
    /* m->n_layers stays 0: there is no per-layer table (layer_kind) for a pipeline, and the
     * LLM code paths read n_layers entries of it. p->layers holds the count. */
    m->params_active = p->params; /* one expert runs per step */
    if (!vf__mul_u64(p->params, p->experts, &m->params))
        return vf__errf(err, VF_ERANGE, "pipeline: '%s': params x experts overflow", r.origin);
    m->native.kind = VF_QK_PLAIN;
    m->native.dtype = p->dtype;
    snprintf(m->native.name, sizeof m->native.name, "%s", vf_dtype_name(p->dtype));
    m->native_dtype = p->dtype;
    m->exact_weight_bytes = VF_UNKNOWN;
    return VF_OK;
}
