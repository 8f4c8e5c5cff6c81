/*
 * render_json.c - the JSON documents of DESIGN section 8, built with jansson. The CLI's
 * --json and the HTTP API print these same strings, so they are byte-identical. Unknown
 * numbers are null; bytes are exact integers; prices are decimal numbers in their currency.
 */
#include "render_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DUMP_FLAGS (JSON_INDENT(2) | JSON_REAL_PRECISION(10))

json_t *vf__json_bytes(uint64_t v)
{
    return v == VF_UNKNOWN ? json_null() : json_integer((json_int_t)v);
}

json_t *vf__json_price(uint64_t micro)
{
    return micro == VF_UNKNOWN ? json_null() : json_real((double)micro / 1e6);
}

json_t *vf__json_text(const char *s)
{
    /* jansson's json_string() refuses (NULL) a string that is not UTF-8, and
     * json_object_set_new() then drops the key without a word: a path, a command line or a
     * catalog field with a stray byte would vanish from the document. Well-formed UTF-8
     * (RFC 3629: no overlong forms, surrogates or code points past U+10FFFF) is kept; each
     * byte that does not start a well-formed sequence becomes U+FFFD (one for each byte), so
     * the document is valid JSON whatever the bytes; jansson escapes quotes, backslashes and
     * control characters. */
    if (!s)
        return NULL;
    size_t n = strlen(s);
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    while (i < n && p[i] < 0x80) /* the common case: ASCII, no copy */
        i++;
    if (i == n)
        return json_stringn(s, n);
    char *buf = vf__malloc(n * 3 + 1); /* U+FFFD is 3 bytes for 1 */
    if (!buf)
        return NULL;
    memcpy(buf, s, i);
    size_t o = i;
    while (i < n) {
        unsigned c = p[i];
        size_t len = c < 0x80                 ? 1
                     : c >= 0xc2 && c <= 0xdf ? 2
                     : c >= 0xe0 && c <= 0xef ? 3
                     : c >= 0xf0 && c <= 0xf4 ? 4
                                              : 0;
        /* the second byte's range (Unicode Table 3-7), the others 80..BF */
        unsigned lo = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80;
        unsigned hi = c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : 0xbf;
        bool ok = len > 0 && i + len <= n;
        for (size_t k = 1; ok && k < len; k++)
            ok = k == 1 ? p[i + k] >= lo && p[i + k] <= hi : p[i + k] >= 0x80 && p[i + k] <= 0xbf;
        if (ok) {
            memcpy(buf + o, p + i, len);
            o += len;
            i += len;
        } else {
            memcpy(buf + o, "\xef\xbf\xbd", 3);
            o += 3;
            i++;
        }
    }
    json_t *j = json_stringn(buf, o);
    vf__free(buf);
    return j;
}

json_t *vf__json_str(const char *s)
{
    return s ? vf__json_text(s) : json_null();
}

json_t *vf__json_texts(const char *const *s, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, vf__json_text(s[i]));
    return a;
}

/* Moves a jansson string into the arena (jansson's buffer is freed). */
char *vf__json_finish(struct vf_arena *a, json_t *root)
{
    char *s = root ? json_dumps(root, DUMP_FLAGS) : NULL;
    json_decref(root);
    /* a value jansson could not allocate was left out of root: the document is short */
    if (vf__json_oom() || !s) {
        vf__free(s);
        return NULL;
    }
    char *out = vf_arena_printf(a, "%s\n", s);
    vf__free(s);
    return out;
}

static const char *device_name(char *buf, size_t cap, int device)
{
    if (device == VF_DEV_HOST)
        snprintf(buf, cap, "host");
    else if (device == VF_DEV_ALL_GPUS)
        snprintf(buf, cap, "gpu");
    else
        snprintf(buf, cap, "gpu%d", device);
    return buf;
}

static json_t *model_json(const struct vf_model *m)
{
    json_t *o = json_object();
    json_object_set_new(o, "id", vf__json_str(m->id));
    json_object_set_new(o, "name", vf__json_str(m->name));
    json_object_set_new(o, "params", vf__json_bytes(m->params));
    json_object_set_new(o, "params_active", vf__json_bytes(m->params_active));
    json_object_set_new(o, "source", vf__json_text(vf_provenance_name(m->provenance)));
    json_object_set_new(o, "origin", vf__json_str(m->source));
    return o;
}

static json_t *fit_json(const struct vf_fit *f)
{
    json_t *o = json_object();
    json_object_set_new(o, "gpu", vf__json_str(f->gpu));
    json_object_set_new(o, "count", json_integer(f->count));
    json_object_set_new(o, "usable_bytes", vf__json_bytes(f->usable_bytes));
    json_object_set_new(o, "fits", json_boolean(f->fits));
    json_object_set_new(o, "headroom_bytes", json_integer(f->headroom_bytes));
    json_object_set_new(o, "max_ctx_tokens", vf__json_bytes(f->max_ctx_tokens));
    json_object_set_new(o, "max_users", vf__json_bytes(f->max_users));
    json_object_set_new(o, "max_batch", vf__json_bytes(f->max_batch));
    if (f->max_width) {
        json_object_set_new(o, "max_width", json_integer(f->max_width));
        json_object_set_new(o, "max_height", json_integer(f->max_height));
    }
    if (f->max_frames)
        json_object_set_new(o, "max_frames", json_integer(f->max_frames));
    if (f->why_not)
        json_object_set_new(o, "why_not", vf__json_text(f->why_not));
    return o;
}

/* The components of e: name, bytes, device ("gpu", "gpu1", "host"), the phase if any. */
static json_t *components_json(const struct vf_estimate *e)
{
    char dev[32];
    json_t *comps = json_array();
    for (size_t i = 0; i < e->n_components; i++) {
        const struct vf_component *c = &e->components[i];
        json_t *j = json_object();
        json_object_set_new(j, "name", vf__json_text(c->name));
        json_object_set_new(j, "bytes", vf__json_bytes(c->bytes));
        json_object_set_new(j, "device", vf__json_text(device_name(dev, sizeof dev, c->device)));
        if (c->phase)
            json_object_set_new(j, "phase", vf__json_text(c->phase));
        json_array_append_new(comps, j);
    }
    return comps;
}

/* What each device holds: every GPU of e (64 at most), then the host. */
static json_t *devices_json(const struct vf_estimate *e)
{
    char dev[32];
    json_t *devs = json_array();
    /* components on every GPU alike: each GPU holds the estimate's peak (phases that do not
     * coexist are not added up) */
    bool uniform = true;
    for (size_t i = 0; i < e->n_components; i++)
        uniform &= e->components[i].device == VF_DEV_ALL_GPUS;
    for (uint32_t g = 0; g < e->gpus && g < 64; g++) {
        uint64_t sum = uniform ? e->total_bytes : vf__gpu_total(e, (int)g);
        json_t *j = json_object();
        json_object_set_new(j, "name", vf__json_text(device_name(dev, sizeof dev, (int)g)));
        json_object_set_new(j, "bytes", vf__json_bytes(sum));
        json_array_append_new(devs, j);
    }
    json_t *host = json_object();
    json_object_set_new(host, "name", vf__json_text("host"));
    json_object_set_new(host, "bytes", vf__json_bytes(e->host_bytes));
    json_array_append_new(devs, host);
    return devs;
}

/* The engine's own results (e->extras), each typed: real, text, boolean or bytes. */
static json_t *extras_json(const struct vf_estimate *e)
{
    json_t *x = json_object();
    for (size_t i = 0; i < e->n_extras; i++) {
        const struct vf_extra *v = &e->extras[i];
        json_t *j = v->kind == VF_EXTRA_REAL   ? json_real(v->real)
                    : v->kind == VF_EXTRA_TEXT ? vf__json_str(v->text)
                    : v->kind == VF_EXTRA_BOOL ? json_boolean(v->u64)
                                               : vf__json_bytes(v->u64);
        json_object_set_new(x, v->key, j);
    }
    return x;
}

/* The "train" object: the fine-tune's method, optimizer, precision, batch and memory
 * settings as the estimate used them. */
static json_t *train_json(const struct vf_estimate *e)
{
    json_t *t = json_object();
    const struct vf_train_opts *tr = &e->train;
    uint32_t accum = tr->grad_accum ? tr->grad_accum : 1;
    json_object_set_new(t, "method", vf__json_text(vf_train_method_name(tr->method)));
    json_object_set_new(t, "optimizer", vf__json_text(vf_optimizer_name(tr->optimizer)));
    json_object_set_new(t, "precision", vf__json_text(vf_precision_name(tr->precision)));
    json_object_set_new(t, "trainable_params", vf__json_bytes(e->trainable_params));
    json_object_set_new(t, "lora_rank", json_integer(tr->lora_rank));
    json_object_set_new(t, "lora_targets",
                        tr->lora_rank
                            ? vf__json_text(tr->lora_targets ? tr->lora_targets : "all-linear")
                            : json_null());
    json_object_set_new(t, "freeze_layers", json_integer(tr->freeze_layers));
    json_object_set_new(t, "batch", json_integer(tr->batch));
    json_object_set_new(t, "grad_accum", json_integer(accum));
    json_object_set_new(t, "effective_batch",
                        json_integer((json_int_t)tr->batch * accum * (e->gpus ? e->gpus : 1)));
    json_object_set_new(t, "seq_tokens", vf__json_bytes(e->ctx_tokens));
    json_object_set_new(t, "grad_checkpointing",
                        vf__json_text(vf_grad_ckpt_name(tr->grad_checkpointing)));
    json_object_set_new(t, "flash_attn", json_boolean(!tr->no_flash_attn));
    json_object_set_new(t, "liger", json_boolean(tr->liger));
    json_object_set_new(t, "ce_chunks", json_integer(tr->liger ? 0 : tr->ce_chunks));
    json_object_set_new(t, "zero_stage",
                        tr->zero == VF_ZERO_AUTO ? json_null() : json_integer((int)tr->zero - 1));
    json_object_set_new(
        t, "fsdp", tr->fsdp == VF_FSDP_NONE ? json_null() : vf__json_text(vf_fsdp_name(tr->fsdp)));
    json_object_set_new(t, "offload", vf__json_text(vf_offload_name(tr->offload)));
    json_object_set_new(t, "accounting", vf__json_text(vf_accounting_name(tr->accounting)));
    json_object_set_new(t, "cache_latents", json_boolean(tr->cache_latents));
    json_object_set_new(t, "cache_text_embeddings", json_boolean(tr->cache_text));
    return t;
}

/* The "diffusion" object of an image or video estimate. */
static json_t *diffusion_json(const struct vf_estimate *e)
{
    json_t *d = json_object();
    json_object_set_new(d, "tokens", vf__json_bytes(e->diffusion_tokens));
    json_object_set_new(d, "peak_phase", vf__json_str(e->peak_phase));
    json_object_set_new(d, "width", json_integer(e->diffusion.width));
    json_object_set_new(d, "height", json_integer(e->diffusion.height));
    json_object_set_new(d, "frames", json_integer(e->diffusion.frames));
    json_object_set_new(d, "batch", json_integer(e->diffusion.batch));
    json_object_set_new(d, "tiled_vae", json_boolean(e->diffusion.tiled_vae));
    return d;
}

/* The estimate object without the fit (shared by estimate and pick), its keys in the order of
 * DESIGN section 8. */
static json_t *estimate_json(const struct vf_estimate *e)
{
    json_t *o = json_object();
    json_object_set_new(o, "model", model_json(&e->model));
    json_object_set_new(o, "engine", vf__json_str(e->engine));
    json_object_set_new(o, "task", vf__json_text(vf_task_name(e->task)));
    json_object_set_new(o, "weights", vf__json_text(e->weights.name));
    json_object_set_new(o, "kv_dtype", vf__json_text(vf_dtype_name(e->kv_dtype)));
    json_object_set_new(o, "ctx_tokens", vf__json_bytes(e->ctx_tokens));
    json_object_set_new(o, "users", vf__json_bytes(e->users));
    json_object_set_new(o, "gpus", json_integer(e->gpus));
    json_object_set_new(o, "weights_bytes", vf__json_bytes(e->weights_bytes));
    json_object_set_new(o, "kv_bytes_per_token", vf__json_bytes(e->kv_bytes_per_token));
    json_object_set_new(o, "components", components_json(e));
    json_object_set_new(o, "devices", devices_json(e));
    json_object_set_new(o, "total_bytes", vf__json_bytes(e->total_bytes));
    json_object_set_new(o, "host_bytes", vf__json_bytes(e->host_bytes));
    json_object_set_new(o, "assumptions", vf__json_texts(e->assumptions, e->n_assumptions));
    if (e->extra_name && e->n_extras)
        json_object_set_new(o, e->extra_name, extras_json(e));
    if (e->n_lines || e->n_fixes) {
        json_object_set_new(o, "engine_log", vf__json_texts(e->lines, e->n_lines));
        json_object_set_new(o, "engine_fixes", vf__json_texts(e->fixes, e->n_fixes));
    }
    if (e->task == VF_TASK_TRAIN)
        json_object_set_new(o, "train", train_json(e));
    if (e->task == VF_TASK_IMAGE || e->task == VF_TASK_VIDEO)
        json_object_set_new(o, "diffusion", diffusion_json(e));
    return o;
}

char *vf_render_estimate_json(struct vf_arena *a, const struct vf_estimate *e,
                              const struct vf_fit *fit)
{
    json_t *o = estimate_json(e);
    if (fit)
        json_object_set_new(o, "fit", fit_json(fit));
    return vf__json_finish(a, o);
}

static json_t *offer_json(const struct vf_pick_row *r, bool ranked, int rank)
{
    json_t *o = json_object();
    json_object_set_new(o, "gpu", vf__json_text(r->gpu->id));
    json_object_set_new(o, "name", vf__json_text(r->gpu->name));
    json_object_set_new(o, "count", json_integer(r->count));
    json_object_set_new(o, "usable_bytes", vf__json_bytes(r->gpu->usable_bytes));
    json_object_set_new(o, "needs_bytes", vf__json_bytes(r->est.total_bytes));
    json_object_set_new(o, "headroom_bytes", json_integer(r->fit.headroom_bytes));
    json_object_set_new(o, "price_per_hour",
                        r->offer ? vf__json_price(r->offer->price_micro) : json_null());
    json_object_set_new(o, "price_per_minute",
                        r->offer ? json_real((double)r->offer->price_micro / 60e6) : json_null());
    json_object_set_new(o, "currency", r->offer ? vf__json_text(r->offer->currency) : json_null());
    json_object_set_new(o, "billing", r->offer ? vf__json_text(r->offer->billing) : json_null());
    json_object_set_new(o, "kind", r->offer ? vf__json_text(r->offer->kind) : json_null());
    json_object_set_new(o, "provider", r->offer ? vf__json_text(r->offer->provider) : json_null());
    json_object_set_new(o, "as_of", r->offer ? vf__json_text(r->offer->as_of) : json_null());
    json_object_set_new(o, "fits", json_boolean(r->fit.fits));
    json_object_set_new(o, "rank", ranked ? json_integer(rank) : json_null());
    if (r->original) {
        json_t *fx = json_object();
        json_object_set_new(fx, "currency", vf__json_text(r->original->currency));
        json_object_set_new(fx, "price_per_hour", vf__json_price(r->original->price_micro));
        json_object_set_new(fx, "rate", vf__json_price(r->fx_micro));
        json_object_set_new(o, "converted_from", fx);
    }
    if (!r->fit.fits) {
        json_object_set_new(o, "max_ctx_tokens", vf__json_bytes(r->fit.max_ctx_tokens));
        json_object_set_new(o, "max_users", vf__json_bytes(r->fit.max_users));
        json_object_set_new(o, "max_batch", vf__json_bytes(r->fit.max_batch));
        json_object_set_new(o, "kv_dtype_fix",
                            r->kv_fix != VF_DT_DEFAULT && r->kv_fix_fits
                                ? vf__json_text(vf_dtype_name(r->kv_fix))
                                : json_null());
        /* the first of the estimator's fixes that fits this card (training, image, video) */
        json_t *fx = json_null();
        for (size_t k = 0; k < r->est.n_fixes; k++)
            if (strstr(r->est.fixes[k], "(fits)") && strncmp(r->est.fixes[k], "together", 8)) {
                json_decref(fx);
                fx = vf__json_text(r->est.fixes[k]);
                break;
            }
        json_object_set_new(o, "fix", fx);
    }
    return o;
}

char *vf_render_pick_json(struct vf_arena *a, const struct vf_estimate *e, const struct vf_pick *p,
                          const struct vf_workload *w)
{
    (void)w;
    json_t *o = estimate_json(e);
    json_object_set_new(o, "currency", vf__json_text(p->currency));
    json_t *offers = json_array();
    for (size_t i = 0; i < p->n_rows; i++)
        json_array_append_new(offers, offer_json(&p->rows[i], true, (int)i + 1));
    for (size_t i = 0; i < p->n_other; i++)
        json_array_append_new(offers, offer_json(&p->other[i], false, 0));
    for (size_t i = 0; i < p->n_unpriced; i++)
        json_array_append_new(offers, offer_json(&p->unpriced[i], false, 0));
    for (size_t i = 0; i < p->n_short; i++)
        json_array_append_new(offers, offer_json(&p->short_rows[i], false, 0));
    json_object_set_new(o, "offers", offers);
    json_object_set_new(o, "skipped_for_precision", json_integer((json_int_t)p->n_skipped));
    json_object_set_new(o, "skipped_multi_gpu", json_integer((json_int_t)p->n_unsplittable));
    json_object_set_new(o, "skipped_multi_gpu_why", vf__json_str(p->unsplittable_why));
    if (p->low_bits) {
        json_t *u = json_object();
        json_object_set_new(u, "weights", vf__json_text(p->upgrade_quant.name));
        json_object_set_new(u, "offer",
                            p->upgrade ? offer_json(p->upgrade, false, 0) : json_null());
        json_object_set_new(o, "move_up", u);
    }
    return vf__json_finish(a, o);
}

char *vf_render_catalog_json(struct vf_arena *a, const struct vf_catalog *c, bool gpus)
{
    json_t *arr = json_array();
    if (gpus) {
        for (size_t i = 0; i < c->n_gpus; i++) {
            const struct vf_gpu_spec *g = &c->gpus[i];
            json_t *o = json_object();
            json_object_set_new(o, "id", vf__json_text(g->id));
            json_object_set_new(o, "name", vf__json_text(g->name));
            json_object_set_new(o, "vendor", vf__json_text(g->vendor));
            json_object_set_new(o, "marketed_gb", json_integer(g->marketed_gb));
            json_object_set_new(o, "smi_bytes", vf__json_bytes(g->smi_bytes));
            json_object_set_new(o, "usable_bytes", vf__json_bytes(g->usable_bytes));
            json_object_set_new(o, "usable_kind",
                                vf__json_text(g->usable_derived ? "derived" : "measured"));
            json_object_set_new(o, "bandwidth_gbps",
                                g->bandwidth_gbps ? json_integer(g->bandwidth_gbps) : json_null());
            json_object_set_new(o, "arch", vf__json_text(g->arch));
            json_object_set_new(o, "cc", vf__json_text(g->cc));
            json_object_set_new(o, "bf16", json_boolean(g->bf16));
            json_object_set_new(o, "fp8", json_boolean(g->fp8));
            json_object_set_new(o, "fp4", json_boolean(g->fp4));
            json_t *offers = json_array();
            for (size_t j = 0; j < c->n_offers; j++) {
                const struct vf_offer *of = &c->offers[j];
                if (strcmp(of->gpu_id, g->id))
                    continue;
                json_t *x = json_object();
                json_object_set_new(x, "count", json_integer(of->count));
                json_object_set_new(x, "price_per_hour", vf__json_price(of->price_micro));
                json_object_set_new(x, "currency", vf__json_text(of->currency));
                json_object_set_new(x, "billing", vf__json_text(of->billing));
                json_object_set_new(x, "kind", vf__json_text(of->kind));
                json_object_set_new(x, "as_of", vf__json_text(of->as_of));
                json_object_set_new(x, "provider", vf__json_text(of->provider));
                json_object_set_new(x, "source", vf__json_text(of->source));
                json_array_append_new(offers, x);
            }
            json_object_set_new(o, "offers", offers);
            json_object_set_new(o, "source", vf__json_text(g->source));
            json_array_append_new(arr, o);
        }
    } else {
        for (size_t i = 0; i < c->n_models; i++) {
            const struct vf_catalog_model *m = &c->models[i];
            json_t *o = json_object();
            json_object_set_new(o, "id", vf__json_text(m->id));
            json_object_set_new(o, "alias", vf__json_str(m->alias));
            json_object_set_new(o, "name", vf__json_text(m->name));
            json_object_set_new(o, "file", vf__json_text(m->file));
            json_array_append_new(arr, o);
        }
    }
    json_t *root = json_object();
    json_object_set_new(root, gpus ? "gpus" : "models", arr);
    return vf__json_finish(a, root);
}

char *vf_render_inspect_json(struct vf_arena *a, const struct vf_model *m)
{
    json_t *o = json_object();
    json_object_set_new(o, "model", model_json(m));
    json_object_set_new(o, "task", vf__json_text(vf_task_name(m->task)));
    if (m->pipeline)
        return vf__json_finish(a, o);
    json_object_set_new(o, "model_type", vf__json_str(m->model_type));
    /* no architecture (a .safetensors without config.json): its numbers are unknown, null */
    bool arch = m->n_layers > 0;
    json_object_set_new(o, "layers", arch ? json_integer(m->n_layers) : json_null());
    json_object_set_new(o, "hidden", arch ? json_integer(m->hidden) : json_null());
    json_object_set_new(o, "intermediate", arch ? json_integer(m->intermediate) : json_null());
    json_object_set_new(o, "heads", arch ? json_integer(m->n_heads) : json_null());
    json_object_set_new(o, "kv_heads", arch ? json_integer(m->n_kv_heads) : json_null());
    json_object_set_new(o, "head_dim", arch ? json_integer(m->head_dim) : json_null());
    json_object_set_new(o, "attention",
                        arch ? vf__json_text(vf_attn_kind_name(m->attn)) : json_null());
    json_object_set_new(o, "vocab", arch ? vf__json_bytes(m->vocab) : json_null());
    json_object_set_new(o, "max_ctx_tokens", vf__json_bytes(m->max_ctx_tokens));
    unsigned sliding = 0, rec = 0;
    for (uint32_t i = 0; m->layer_kind && i < m->n_layers; i++) {
        sliding += m->layer_kind[i] == VF_LAYER_ATTN_SLIDING;
        rec += m->layer_kind[i] == VF_LAYER_RECURRENT;
    }
    json_object_set_new(o, "sliding_window",
                        m->sliding_window ? json_integer(m->sliding_window) : json_null());
    json_object_set_new(o, "sliding_layers", json_integer(sliding));
    json_object_set_new(o, "recurrent_layers", json_integer(rec));
    json_object_set_new(o, "recurrent_state_bytes", vf__json_bytes(m->recurrent_state_bytes));
    if (m->n_experts) {
        json_t *x = json_object();
        json_object_set_new(x, "routed", json_integer(m->n_experts));
        json_object_set_new(x, "per_token", json_integer(m->n_experts_used));
        json_object_set_new(x, "shared", json_integer(m->n_shared_experts));
        json_object_set_new(o, "experts", x);
    }
    json_t *w = json_object();
    json_object_set_new(w, "scheme", vf__json_text(m->native.name));
    json_object_set_new(w, "bytes", vf__json_bytes(vf_model_weight_bytes(m, &m->native)));
    json_object_set_new(
        w, "exact",
        json_boolean(m->exact_weight_bytes != VF_UNKNOWN && m->exact_weight_bytes != 0));
    json_object_set_new(o, "weights", w);
    struct vf__type_count types[32];
    size_t nt = vf__model_type_counts(m, types, 32);
    json_t *bt = json_array();
    for (size_t i = 0; i < nt; i++) {
        json_t *x = json_object();
        json_object_set_new(x, "type", vf__json_text(types[i].type));
        json_object_set_new(x, "tensors", json_integer(types[i].tensors));
        json_object_set_new(x, "params", vf__json_bytes(types[i].params));
        json_object_set_new(x, "bytes", vf__json_bytes(types[i].bytes));
        json_array_append_new(bt, x);
    }
    json_object_set_new(o, "by_type", bt);
    enum vf_dtype kv = m->native_dtype == VF_DT_F16 ? VF_DT_F16 : VF_DT_BF16;
    json_object_set_new(o, "kv_dtype", vf__json_text(vf_dtype_name(kv)));
    json_object_set_new(o, "kv_bytes_per_token",
                        arch ? vf__json_bytes(vf_model_kv_bytes_per_token(m, kv)) : json_null());
    return vf__json_finish(a, o);
}

char *vf_render_gpus_json(struct vf_arena *a, const struct vf_gpu_snapshot *s)
{
    json_t *o = json_object(), *gpus = json_array();
    json_object_set_new(o, "backend", vf__json_str(s->backend));
    for (size_t i = 0; i < s->n_devs; i++) {
        const struct vf_gpu_dev *d = &s->devs[i];
        json_t *g = json_object(), *procs = json_array();
        json_object_set_new(g, "index", json_integer(d->index));
        json_object_set_new(g, "name", vf__json_str(d->name));
        json_object_set_new(g, "uuid", vf__json_str(d->uuid));
        json_object_set_new(g, "total_bytes", vf__json_bytes(d->total_bytes));
        json_object_set_new(g, "used_bytes", vf__json_bytes(d->used_bytes));
        json_object_set_new(g, "free_bytes", vf__json_bytes(d->free_bytes));
        json_object_set_new(g, "reserved_bytes", vf__json_bytes(d->reserved_bytes));
        json_object_set_new(g, "unified_memory", json_boolean(d->unified));
        json_object_set_new(g, "mig_of",
                            d->mig_parent ? json_integer(d->mig_parent - 1) : json_null());
        json_object_set_new(g, "utilization_percent",
                            d->util_percent == UINT32_MAX ? json_null()
                                                          : json_integer(d->util_percent));
        for (size_t k = 0; k < d->n_procs; k++) {
            const struct vf_gpu_proc *p = &d->procs[k];
            json_t *j = json_object();
            json_object_set_new(j, "pid", json_integer(p->pid));
            json_object_set_new(j, "local_pid",
                                p->local_pid ? json_integer(p->local_pid) : json_null());
            json_object_set_new(j, "match", vf__json_str(p->match));
            json_object_set_new(j, "used_bytes", vf__json_bytes(p->used_bytes));
            json_object_set_new(j, "name", vf__json_str(p->name));
            json_object_set_new(j, "cmdline", vf__json_str(p->cmdline));
            json_object_set_new(j, "kind", vf__json_str(p->kind));
            json_object_set_new(j, "container", vf__json_str(p->container));
            json_object_set_new(j, "hint", vf__json_str(p->hint));
            json_array_append_new(procs, j);
        }
        json_object_set_new(g, "processes", procs);
        json_array_append_new(gpus, g);
    }
    json_object_set_new(o, "gpus", gpus);
    return vf__json_finish(a, o);
}

/* ------------------------------------------------------------------ errors */

const char *vf_err_api_code(enum vf_err code, unsigned *http_status)
{
    static const struct {
        enum vf_err code;
        const char *name;
        unsigned status;
    } map[] = {
        {VF_EUSAGE, "bad_request", 400},
        {VF_EINVAL, "bad_request", 400},
        {VF_ERANGE, "bad_request", 400},
        {VF_EFORMAT, "bad_request", 400},
        {VF_ELIMIT, "too_large", 413},
        {VF_ENOENT, "not_found", 404},
        {VF_EUNSUPPORTED, "unsupported", 422},
        {VF_ENODEV, "no_gpu", 503},
        {VF_EIO, "upstream", 502},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (map[i].code == code) {
            if (http_status)
                *http_status = map[i].status;
            return map[i].name;
        }
    if (http_status)
        *http_status = 500;
    return "internal";
}

char *vf_render_error_json(struct vf_arena *a, const char *code, const char *message,
                           const char *hint)
{
    json_t *e = json_object(), *root = json_object();
    if (!e || !root) {
        json_decref(e);
        json_decref(root);
        return NULL;
    }
    json_object_set_new(e, "code", vf__json_text(code));
    json_object_set_new(e, "message", vf__json_text(message));
    if (hint)
        json_object_set_new(e, "hint", vf__json_text(hint));
    json_object_set_new(root, "error", e);
    return vf__json_finish(a, root);
}
