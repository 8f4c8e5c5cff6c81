/*
 * pipeline.c - reads an image/video generation pipeline file (data/pipelines/NAME.json)
 * into a struct vf_pipeline and the struct vf_model that carries it, and holds the
 * pipeline arithmetic both the reader and the ComfyUI engine use: latent and token
 * geometry (F-DIF-03) and component weight bytes (F-DIF-01, F-DIF-02).
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
 *                        "fp8_file": true}, ...],          1 to 4 encoders
 *     "vae": {"params": 83800000, "dtype": "bf16", "spatial": 8, "temporal": 1,
 *             "latent_channels": 16, "decode_coef": 2178, "decode_per_frame": false},
 *     "sources": ["where each number comes from", ...]
 *   }
 *
 * Every key is required except "sources"; unknown keys are ignored. Errors name the file
 * and the key: "pipeline: 'pipelines/x.json': denoiser.params: -3 is negative".
 */
#include "pipeline.h"

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
    }
    return u32_at(r, root, "text_tokens", "text_tokens", 1, VF_PIPE_MAX_TOKENS, &p->text_tokens);
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
    return VF_OK;
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
    json_t *root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &je);
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

/* ceil(a / b) of small positive numbers */
static uint64_t cdiv(uint64_t a, uint64_t b)
{
    return vf__div_ceil(a, b);
}

void vf__pipeline_geom(const struct vf_pipeline *p, uint32_t width, uint32_t height,
                       uint32_t frames, struct vf_pipe_geom *out)
{
    /* F-DIF-03: ComfyUI's empty latents floor the pixel sizes to the VAE's compression
     * (EmptyLatentImage: width // 8); causal video VAEs keep the first frame alone:
     * (F - 1) / t + 1 latent frames. The model pads the latent to whole patches. */
    out->lat_h = height / p->vae_spatial;
    out->lat_w = width / p->vae_spatial;
    out->lat_t = p->vae_temporal > 1 ? (frames ? (uint64_t)(frames - 1) / p->vae_temporal + 1 : 1)
                                     : (frames ? frames : 1);
    out->img_tokens =
        cdiv(out->lat_t, p->patch_t) * cdiv(out->lat_h, p->patch_h) * cdiv(out->lat_w, p->patch_w);
    out->seq_tokens = out->img_tokens + (p->joint_text ? p->text_tokens : 0);
}

uint64_t vf__pipeline_denoiser_bytes(const struct vf_pipeline *p, const struct vf_quant *q,
                                     const char **why)
{
    *why = NULL;
    switch (q->kind) {
    case VF_QK_NATIVE:
        return vf_dtype_bytes(p->dtype, p->params);
    case VF_QK_PLAIN:
    case VF_QK_NF4:
    case VF_QK_FP8_BLOCK:
    case VF_QK_GGUF_FTYPE:
        /* F-DIF-01: every weight at the scheme's (base) type; GGUF files keep norms,
         * biases and other 1-D tensors at 16/32 bits and K_M/K_S mixes put some tensors
         * at a larger type: said in the estimate's assumptions */
        if (q->dtype == VF_DT_DEFAULT)
            return vf_dtype_bytes(p->dtype, p->params);
        return vf_dtype_bytes(q->dtype, p->params);
    case VF_QK_AWQ:
    case VF_QK_GPTQ:
        *why = "ComfyUI loads no AWQ/GPTQ diffusion checkpoints (use fp8, nf4 or a GGUF type)";
        return VF_UNKNOWN;
    }
    *why = "unknown weight storage";
    return VF_UNKNOWN;
}

uint64_t vf__pipeline_encoder_bytes(const struct vf_pipeline *p, bool low_bits,
                                    const struct vf_quant *te)
{
    uint64_t sum = 0;
    bool given = te && te->kind != VF_QK_NATIVE;
    for (size_t i = 0; i < p->n_enc; i++) {
        enum vf_dtype t = low_bits && p->enc[i].fp8_file ? VF_DT_FP8 : p->enc[i].dtype;
        uint64_t b = vf_dtype_bytes(t, p->enc[i].params);
        if (given) /* bits per parameter of the scheme, rounded up to bytes */
            b = vf__div_ceil(vf__sat_mul(p->enc[i].params, vf_quant_bits(te)), 8);
        sum = vf__sat_add(sum, b);
    }
    return sum;
}

uint64_t vf__pipeline_step_act(const struct vf_pipeline *p, uint64_t seq_tokens, uint64_t batch)
{
    return vf__sat_mul(vf__sat_mul(vf__sat_mul(seq_tokens, batch), p->act_widths),
                       vf__sat_mul(p->hidden, 2));
}

uint64_t vf__pipeline_decode_bytes(const struct vf_pipeline *p, uint64_t lat_t, uint64_t lat_h,
                                   uint64_t lat_w)
{
    uint64_t ds = vf_dtype_bytes(p->vae_dtype, 1);
    uint64_t v = vf__sat_mul(vf__sat_mul((uint64_t)p->decode_coef, lat_h), lat_w);
    v = vf__sat_mul(vf__sat_mul(v, 64), ds);
    return p->decode_per_frame ? vf__sat_mul(v, lat_t) : v;
}

uint64_t vf__pipeline_lora_bytes(const struct vf_pipeline *p, uint64_t rank)
{
    uint64_t per = vf__sat_mul(rank, 10 * (uint64_t)p->hidden + 2 * (uint64_t)p->ffn);
    return vf__sat_mul(vf__sat_mul(per, p->layers), 2);
}

enum vf_err vf__pipeline_resolve_opts(struct vf_arena *a, const struct vf_model *m,
                                      const struct vf_workload *w, struct vf_estimate *e,
                                      struct vf_diffusion_opts *o, struct vf_error *err)
{
    const struct vf_pipeline *p = m->pipeline;
    char dflt[128] = "";
    *o = w->diffusion;
    if (!o->width) {
        o->width = p->def_width;
        snprintf(dflt + strlen(dflt), sizeof dflt - strlen(dflt), ", width %u", o->width);
    }
    if (!o->height) {
        o->height = p->def_height;
        snprintf(dflt + strlen(dflt), sizeof dflt - strlen(dflt), ", height %u", o->height);
    }
    if (w->task == VF_TASK_IMAGE) {
        if (o->frames > 1)
            return vf__errf(err, VF_EINVAL,
                            "--frames %u: an image has 1 frame (use --task video with a video "
                            "pipeline)",
                            o->frames);
        o->frames = 1;
    } else if (!o->frames) {
        o->frames = p->def_frames;
        snprintf(dflt + strlen(dflt), sizeof dflt - strlen(dflt), ", %u frames", o->frames);
    }
    if (!o->batch) {
        o->batch = 1;
        snprintf(dflt + strlen(dflt), sizeof dflt - strlen(dflt), ", batch 1");
    }
    uint32_t side = p->vae_spatial * (p->patch_h > p->patch_w ? p->patch_h : p->patch_w);
    if (o->width < side || o->height < side || o->width > VF_PIPE_MAX_SIDE ||
        o->height > VF_PIPE_MAX_SIDE)
        return vf__errf(err, VF_ERANGE, "%ux%u: width and height must be %u to %u pixels", o->width,
                        o->height, side, VF_PIPE_MAX_SIDE);
    if (o->frames > VF_PIPE_MAX_FRAMES)
        return vf__errf(err, VF_ERANGE, "--frames %u is over the limit of %u", o->frames,
                        VF_PIPE_MAX_FRAMES);
    if (o->batch > VF_PIPE_MAX_BATCH)
        return vf__errf(err, VF_ERANGE, "--batch %u is over the limit of %u", o->batch,
                        VF_PIPE_MAX_BATCH);
    if (*dflt)
        vf__assume(a, e, "%s: the pipeline's defaults (--width, --height, --frames, --batch)",
                   dflt + 2);
    /* F-DIF-03: sizes are whole latent cells of whole patches; ComfyUI's Empty Latent nodes
     * floor the pixels to the VAE's cell (width // 8) and the model pads to its patch, so a
     * size off the stride runs as the multiple below */
    if (o->width % side || o->height % side) {
        uint32_t wd = o->width / side * side, ht = o->height / side * side;
        vf__assume(a, e,
                   "%ux%u is not a multiple of %u (%u px VAE cells x %u patch): it runs as "
                   "%ux%u, the multiple below",
                   o->width, o->height, side, p->vae_spatial, side / p->vae_spatial, wd, ht);
        o->width = wd;
        o->height = ht;
    }
    if (o->width > 2 * p->def_width || o->height > 2 * p->def_height ||
        (uint64_t)o->width * o->height > 4ULL * p->def_width * p->def_height)
        vf__assume(a, e,
                   "%ux%u is beyond what %s was trained for (native %ux%u): expect repeated "
                   "subjects; generate at the native size and upscale",
                   o->width, o->height, p->name, p->def_width, p->def_height);
    if (p->task == VF_TASK_VIDEO && o->frames > 1 && o->frames > 2 * p->def_frames)
        vf__assume(a, e, "%u frames is beyond the %u the model was trained on", o->frames,
                   p->def_frames);
    if (p->vae_temporal > 1 && (o->frames - 1) % p->vae_temporal)
        vf__assume(a, e,
                   "%u frames is not of the form %un+1 the VAE takes (%u, %u): ComfyUI's "
                   "latent holds (%u - 1) / %u + 1 = %u latent frames",
                   o->frames, p->vae_temporal,
                   (o->frames - 1) / p->vae_temporal * p->vae_temporal + 1,
                   ((o->frames - 1) / p->vae_temporal + 1) * p->vae_temporal + 1, o->frames,
                   p->vae_temporal, (o->frames - 1) / p->vae_temporal + 1);
    return VF_OK;
}

enum vf_err vf__pipeline_begin(const struct vf_model *m, const struct vf_workload *w,
                               const struct vf_engine *eng, unsigned offloads, const char *offered,
                               struct vf_estimate *e, struct vf_error *err)
{
    enum vf_dif_offload off = w->diffusion.offload;
    if (off != VF_DOFF_NONE && !(offloads & (1u << off)))
        return vf__errf(err, VF_EINVAL, "--offload %s is not a mode of %s; it offers %s",
                        vf_dif_offload_name(off), eng->name, offered);
    const struct vf_pipeline *p = m->pipeline;
    if (!p)
        return vf__errf(err, VF_EINVAL, "'%s' is not an image/video pipeline", m->id);
    if (w->task != VF_TASK_IMAGE && w->task != VF_TASK_VIDEO)
        return vf__errf(err, VF_EINVAL, "engine %s estimates --task image or video", eng->name);
    if (w->task == VF_TASK_VIDEO && p->task == VF_TASK_IMAGE)
        return vf__errf(err, VF_EINVAL,
                        "'%s' generates images: --task video needs a video pipeline "
                        "(wan2.2-t2v-a14b, wan2.1-t2v-14b, ...)",
                        m->id);
    uint32_t n = w->gpus ? w->gpus : 1;
    const char *why = NULL;
    if (!eng->can_split(m, w, n, &why))
        return vf__errf(err, VF_EUNSUPPORTED, "cannot split '%s' over %u GPUs: %s", m->id, n,
                        why ? why : "");
    e->model = *m;
    e->engine = eng->name;
    e->task = w->task;
    e->gpus = 1;
    e->users = 1;
    e->ctx_tokens = 0;
    e->kv_dtype = VF_DT_DEFAULT;
    e->kv_bytes_per_token = VF_UNKNOWN;
    e->host_bytes = 0;
    return VF_OK;
}
