/* SPDX-License-Identifier: Apache-2.0 */
/*
 * render_json.c - the JSON documents of DESIGN section 8, built with jansson. The CLI's
 * --json and the HTTP API print these same strings, so they are byte-identical. Unknown
 * numbers are null; bytes are exact integers; prices are decimal numbers in their currency.
 */
#include "render_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
     * json_object_set_new() then drops the key without a word: vf__utf8_repair makes it
     * well-formed first (json_out.c) */
    if (!s)
        return NULL;
    size_t n = strlen(s);
    char *buf = NULL;
    const char *t = vf__utf8_repair(s, n, &buf, &n);
    json_t *j = t ? json_stringn(t, n) : NULL;
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

static void model_jw(struct vf__jw *j, const struct vf_model *m)
{
    vf__jw_open(j, "model", '{');
    vf__jw_str(j, "id", m->id);
    vf__jw_str(j, "name", m->name);
    vf__jw_bytes(j, "params", m->params);
    vf__jw_bytes(j, "params_active", m->params_active);
    vf__jw_text(j, "source", vf_provenance_name(m->provenance));
    vf__jw_str(j, "origin", m->source);
    vf__jw_close(j);
}

static void fit_jw(struct vf__jw *j, const struct vf_fit *f)
{
    vf__jw_open(j, "fit", '{');
    vf__jw_str(j, "gpu", f->gpu);
    vf__jw_int(j, "count", f->count);
    vf__jw_bytes(j, "usable_bytes", f->usable_bytes);
    vf__jw_bool(j, "fits", f->fits);
    vf__jw_int(j, "headroom_bytes", f->headroom_bytes);
    vf__jw_bytes(j, "max_ctx_tokens", f->max_ctx_tokens);
    vf__jw_bytes(j, "max_users", f->max_users);
    vf__jw_bytes(j, "max_batch", f->max_batch);
    if (f->spill.on) { /* issue 21: runs with spill (DESIGN section 8) */
        vf__jw_open(j, "spill", '{');
        vf__jw_int(j, "gpu_layers", f->spill.gpu_layers);
        vf__jw_int(j, "cpu_layers", f->spill.cpu_layers);
        vf__jw_bytes(j, "host_bytes", f->spill.host_bytes);
        if (f->spill.slowdown > 0)
            vf__jw_real(j, "slowdown", f->spill.slowdown);
        else
            vf__jw_null(j, "slowdown");
        vf__jw_close(j);
    }
    if (f->max_width) {
        vf__jw_int(j, "max_width", f->max_width);
        vf__jw_int(j, "max_height", f->max_height);
    }
    if (f->max_frames)
        vf__jw_int(j, "max_frames", f->max_frames);
    vf__jw_text(j, "why_not", f->why_not);
    if (f->n_devs) { /* issue 21: --gpu A,B: each device of the mix, in order */
        vf__jw_open(j, "devices", '[');
        for (uint32_t i = 0; i < f->n_devs && i < VF_MAX_MIX; i++) {
            vf__jw_open(j, NULL, '{');
            vf__jw_str(j, "gpu", f->devs[i].gpu);
            vf__jw_bytes(j, "usable_bytes", f->devs[i].usable_bytes);
            vf__jw_bytes(j, "bytes", f->devs[i].bytes);
            vf__jw_int(j, "headroom_bytes", f->devs[i].headroom_bytes);
            vf__jw_close(j);
        }
        vf__jw_close(j);
    }
    if (f->stop_pid) { /* issue 28: --gpu local: the process to stop for it to fit */
        vf__jw_open(j, "stop", '{');
        vf__jw_int(j, "pid", f->stop_pid);
        vf__jw_str(j, "name", f->stop_name);
        vf__jw_bytes(j, "bytes", f->stop_bytes);
        vf__jw_close(j);
    }
    vf__jw_close(j);
}

/* The components of e: name, bytes, device ("gpu", "gpu1", "host"), the phase if any. */
static void components_jw(struct vf__jw *j, const struct vf_estimate *e)
{
    char dev[32];
    vf__jw_open(j, "components", '[');
    for (size_t i = 0; i < e->n_components; i++) {
        const struct vf_component *c = &e->components[i];
        vf__jw_open(j, NULL, '{');
        vf__jw_text(j, "name", c->name);
        vf__jw_bytes(j, "bytes", c->bytes);
        vf__jw_text(j, "device", device_name(dev, sizeof dev, c->device));
        vf__jw_text(j, "phase", c->phase);
        vf__jw_close(j);
    }
    vf__jw_close(j);
}

/* What each device holds: every GPU of e (64 at most), then the host. */
static void devices_jw(struct vf__jw *j, const struct vf_estimate *e)
{
    char dev[32];
    vf__jw_open(j, "devices", '[');
    /* components on every GPU alike (host ones aside): each GPU holds the estimate's peak
     * (phases that do not coexist are not added up) */
    bool uniform = true;
    for (size_t i = 0; i < e->n_components; i++)
        uniform &=
            e->components[i].device == VF_DEV_ALL_GPUS || e->components[i].device == VF_DEV_HOST;
    for (uint32_t g = 0; g < e->gpus && g < 64; g++) {
        vf__jw_open(j, NULL, '{');
        vf__jw_text(j, "name", device_name(dev, sizeof dev, (int)g));
        vf__jw_bytes(j, "bytes", uniform ? e->total_bytes : vf__gpu_total(e, (int)g));
        vf__jw_close(j);
    }
    vf__jw_open(j, NULL, '{');
    vf__jw_text(j, "name", "host");
    vf__jw_bytes(j, "bytes", e->host_bytes);
    vf__jw_close(j);
    vf__jw_close(j);
}

/* The engine's own results (e->extras), each typed: real, text, boolean or bytes. */
static void extras_jw(struct vf__jw *j, const struct vf_estimate *e)
{
    vf__jw_open(j, e->extra_name, '{');
    for (size_t i = 0; i < e->n_extras; i++) {
        const struct vf_extra *v = &e->extras[i];
        if (v->kind == VF_EXTRA_REAL)
            vf__jw_real(j, v->key, v->real);
        else if (v->kind == VF_EXTRA_TEXT)
            vf__jw_str(j, v->key, v->text);
        else if (v->kind == VF_EXTRA_BOOL)
            vf__jw_bool(j, v->key, v->u64);
        else
            vf__jw_bytes(j, v->key, v->u64);
    }
    vf__jw_close(j);
}

/* The "train" object: the fine-tune's method, optimizer, precision, batch and memory
 * settings as the estimate used them. */
static void train_jw(struct vf__jw *j, const struct vf_estimate *e)
{
    const struct vf_train_opts *tr = &e->train;
    uint32_t accum = tr->grad_accum ? tr->grad_accum : 1;
    vf__jw_open(j, "train", '{');
    /* issue 22: the framework whose defaults were taken (DESIGN section 8 --framework) */
    vf__jw_text(j, "framework", vf_framework_name(tr->framework));
    vf__jw_str(j, "framework_version", tr->framework_version);
    vf__jw_str(j, "peak_phase", e->peak_phase);
    vf__jw_text(j, "method", vf_train_method_name(tr->method));
    vf__jw_text(j, "optimizer", vf_optimizer_name(tr->optimizer));
    vf__jw_text(j, "precision", vf_precision_name(tr->precision));
    vf__jw_bytes(j, "trainable_params", e->trainable_params);
    vf__jw_int(j, "lora_rank", tr->lora_rank);
    vf__jw_str(j, "lora_targets",
               tr->lora_rank ? (tr->lora_targets ? tr->lora_targets : "all-linear") : NULL);
    vf__jw_int(j, "freeze_layers", tr->freeze_layers);
    vf__jw_int(j, "batch", tr->batch);
    vf__jw_int(j, "grad_accum", accum);
    vf__jw_int(j, "effective_batch", (int64_t)tr->batch * accum * (e->gpus ? e->gpus : 1));
    vf__jw_bytes(j, "seq_tokens", e->ctx_tokens);
    vf__jw_text(j, "grad_checkpointing", vf_grad_ckpt_name(tr->grad_checkpointing));
    vf__jw_bool(j, "flash_attn", !tr->no_flash_attn);
    vf__jw_bool(j, "liger", tr->liger);
    vf__jw_int(j, "ce_chunks", tr->liger ? 0 : tr->ce_chunks);
    vf__jw_bool(j, "compile", tr->compile);
    if (tr->zero == VF_ZERO_AUTO)
        vf__jw_null(j, "zero_stage");
    else
        vf__jw_int(j, "zero_stage", (int)tr->zero - 1);
    vf__jw_str(j, "fsdp", tr->fsdp == VF_FSDP_NONE ? NULL : vf_fsdp_name(tr->fsdp));
    vf__jw_text(j, "offload", vf_offload_name(tr->offload));
    vf__jw_text(j, "accounting", vf_accounting_name(tr->accounting));
    vf__jw_bool(j, "cache_latents", tr->cache_latents);
    vf__jw_bool(j, "cache_text_embeddings", tr->cache_text);
    vf__jw_close(j);
}

/* The "diffusion" object of an image or video estimate. */
static void diffusion_jw(struct vf__jw *j, const struct vf_estimate *e)
{
    vf__jw_open(j, "diffusion", '{');
    vf__jw_bytes(j, "tokens", e->diffusion_tokens);
    vf__jw_str(j, "peak_phase", e->peak_phase);
    vf__jw_int(j, "width", e->diffusion.width);
    vf__jw_int(j, "height", e->diffusion.height);
    vf__jw_int(j, "frames", e->diffusion.frames);
    vf__jw_int(j, "batch", e->diffusion.batch);
    vf__jw_bool(j, "tiled_vae", e->diffusion.tiled_vae);
    vf__jw_close(j);
}

static void pair_jw(struct vf__jw *j, const char *key, double lo, double hi)
{
    vf__jw_open(j, key, '[');
    vf__jw_real(j, NULL, lo);
    vf__jw_real(j, NULL, hi);
    vf__jw_close(j);
}

/* DESIGN section 8 `speed` (F-SPD-01..05): LLM tokens/s on the card, with their range. An
 * estimate also gives the model's terms behind them (precision, compute bound, efficiencies,
 * bandwidth, fixed time per token); a pick row does not (`terms` false): they are the card's
 * and the engine's, the same in every row of a card, and they were two thirds of each row's
 * speed object (issue 15: /api/v1/pick's share of /healthz). */
static void speed_jw(struct vf__jw *j, const struct vf_speed *sp, bool terms)
{
    vf__jw_open(j, "speed", '{');
    if (!sp->known) {
        vf__jw_null(j, "decode_tokens_per_s");
        vf__jw_null(j, "prefill_tokens_per_s");
        vf__jw_str(j, "why", sp->why);
        vf__jw_close(j);
        return;
    }
    vf__jw_real(j, "decode_tokens_per_s", sp->decode_tps);
    vf__jw_real(j, "prefill_tokens_per_s", sp->prefill_tps);
    vf__jw_real(j, "output_tokens_per_s", sp->serving_tps);
    vf__jw_real(j, "tokens_per_s_per_gpu", sp->serving_tps / (sp->gpus ? sp->gpus : 1));
    vf__jw_bytes(j, "batch", sp->batch);
    if (terms) {
        vf__jw_text(j, "precision", sp->prec);
        vf__jw_bool(j, "compute_bound", sp->compute_bound);
    }
    vf__jw_open(j, "range", '{');
    pair_jw(j, "decode_tokens_per_s", sp->decode_lo, sp->decode_hi);
    pair_jw(j, "prefill_tokens_per_s", sp->prefill_lo, sp->prefill_hi);
    pair_jw(j, "output_tokens_per_s", sp->serving_lo, sp->serving_hi);
    vf__jw_close(j);
    if (!terms) {
        vf__jw_close(j);
        return;
    }
    vf__jw_open(j, "efficiency", '{');
    vf__jw_real(j, "bandwidth", sp->eta_bw);
    vf__jw_real(j, "compute", sp->eta_compute);
    vf__jw_close(j);
    vf__jw_real(j, "bandwidth_gbps", sp->bw_gbps);
    vf__jw_real(j, "decode_fixed_s", sp->decode_fixed_s);
    vf__jw_close(j);
}

/* The estimate's members without the fit (shared by estimate and pick), its keys in the
 * order of DESIGN section 8; the object stays open. */
static void estimate_jw(struct vf__jw *j, const struct vf_estimate *e)
{
    vf__jw_open(j, NULL, '{');
    model_jw(j, &e->model);
    vf__jw_str(j, "engine", e->engine);
    if (e->engine_version) /* issue 20 */
        vf__jw_str(j, "engine_version", e->engine_version);
    vf__jw_text(j, "task", vf_task_name(e->task));
    vf__jw_text(j, "weights", e->weights.name);
    if (e->kv_dtype_v != VF_DT_DEFAULT && e->kv_dtype_v != e->kv_dtype) {
        vf__jw_text(j, "kv_dtype_k", vf_dtype_name(e->kv_dtype)); /* -ctk/-ctv apart */
        vf__jw_text(j, "kv_dtype_v", vf_dtype_name(e->kv_dtype_v));
    } else {
        vf__jw_text(j, "kv_dtype", vf_dtype_name(e->kv_dtype));
    }
    vf__jw_bytes(j, "ctx_tokens", e->ctx_tokens);
    vf__jw_bytes(j, "users", e->users);
    vf__jw_int(j, "gpus", e->gpus);
    vf__jw_bytes(j, "weights_bytes", e->weights_bytes);
    vf__jw_bytes(j, "kv_bytes_per_token", e->kv_bytes_per_token);
    components_jw(j, e);
    devices_jw(j, e);
    vf__jw_bytes(j, "total_bytes", e->total_bytes);
    vf__jw_bytes(j, "host_bytes", e->host_bytes);
    vf__jw_texts(j, "assumptions", e->assumptions, e->n_assumptions);
    if (e->extra_name && e->n_extras)
        extras_jw(j, e);
    if (e->n_lines || e->n_fixes) {
        vf__jw_texts(j, "engine_log", e->lines, e->n_lines);
        vf__jw_texts(j, "engine_fixes", e->fixes, e->n_fixes);
    }
    if (e->task == VF_TASK_TRAIN)
        train_jw(j, e);
    if (e->task == VF_TASK_IMAGE || e->task == VF_TASK_VIDEO)
        diffusion_jw(j, e);
}

char *vf_render_estimate_json(struct vf_arena *a, const struct vf_estimate *e,
                              const struct vf_fit *fit)
{
    struct vf__jw j;
    vf__jw_init(&j, a);
    estimate_jw(&j, e);
    if (fit)
        fit_jw(&j, fit);
    if (fit && e->task == VF_TASK_INFER && (fit->speed.known || fit->speed.why))
        speed_jw(&j, &fit->speed, true);
    if (fit && fit->job && e->task != VF_TASK_INFER && (fit->job->known || fit->job->why))
        vf__job_speed_jw(&j, "speed", fit->job); /* issue 24 */
    if (fit && fit->job && e->task == VF_TASK_INFER && fit->job->known)
        vf__job_speed_jw(&j, "offload_speed", fit->job);
    if (fit && fit->job)
        vf__job_cost_jw(&j, "cost", fit->job);
    if (fit && fit->choice)
        vf__choice_jw(&j, fit->choice);
    vf__jw_close(&j);
    return vf__jw_done(&j);
}

/* The first of the estimator's fixes that fits this card (training, image, video). */
static const char *fitting_fix(const struct vf_pick_row *r)
{
    for (size_t k = 0; k < r->est.n_fixes; k++)
        if (strstr(r->est.fixes[k], "(fits)") && strncmp(r->est.fixes[k], "together", 8))
            return r->est.fixes[k];
    return NULL;
}

static void offer_jw(struct vf__jw *j, const char *key, const struct vf_pick_row *r, int rank)
{
    const struct vf_offer *of = r->offer;
    vf__jw_open(j, key, '{');
    vf__jw_text(j, "gpu", r->gpu->id);
    vf__jw_text(j, "name", r->gpu->name);
    vf__jw_int(j, "count", r->count);
    vf__jw_bytes(j, "usable_bytes", r->gpu->usable_bytes);
    vf__jw_bytes(j, "needs_bytes", r->est.total_bytes);
    vf__jw_int(j, "headroom_bytes", r->fit.headroom_bytes);
    if (of) {
        vf__jw_price(j, "price_per_hour", of->price_micro);
        vf__jw_real(j, "price_per_minute", (double)of->price_micro / 60e6);
    } else {
        vf__jw_null(j, "price_per_hour");
        vf__jw_null(j, "price_per_minute");
    }
    vf__jw_str(j, "currency", of ? of->currency : NULL);
    vf__jw_str(j, "billing", of ? of->billing : NULL);
    vf__jw_str(j, "kind", of ? of->kind : NULL);
    vf__jw_str(j, "provider", of ? of->provider : NULL);
    vf__jw_str(j, "as_of", of ? of->as_of : NULL);
    if (of && of->derived) /* DESIGN section 8: n x a single-card price, not a quote */
        vf__jw_bool(j, "derived", true);
    vf__jw_bool(j, "fits", r->fit.fits);
    if (rank)
        vf__jw_int(j, "rank", rank);
    else
        vf__jw_null(j, "rank");
    if (r->original) {
        vf__jw_open(j, "converted_from", '{');
        vf__jw_text(j, "currency", r->original->currency);
        vf__jw_price(j, "price_per_hour", r->original->price_micro);
        vf__jw_price(j, "rate", r->fx_micro);
        vf__jw_close(j);
    }
    if (!r->fit.fits) {
        vf__jw_bytes(j, "max_ctx_tokens", r->fit.max_ctx_tokens);
        vf__jw_bytes(j, "max_users", r->fit.max_users);
        vf__jw_bytes(j, "max_batch", r->fit.max_batch);
        vf__jw_str(j, "kv_dtype_fix",
                   r->kv_fix != VF_DT_DEFAULT && r->kv_fix_fits ? vf_dtype_name(r->kv_fix) : NULL);
        vf__jw_str(j, "fix", fitting_fix(r));
    }
    bool llm_offload = !r->fit.fits && r->offload_flags && r->fit.spill.on;
    if ((r->fit.speed.known || r->fit.speed.why) && !llm_offload)
        speed_jw(j, &r->fit.speed, false);
    if (r->fit.fits && r->job && r->job->known) { /* issue 24: --rank cost, image/video */
        vf__job_speed_jw(j, "job_speed", r->job);
        vf__job_cost_jw(j, "cost", r->job);
    }
    if (r->offload_flags && r->job) { /* issue 24: runs with offload on this card (F-SPD-16) */
        vf__jw_text(j, "offload", r->offload_flags);
        if (llm_offload) { /* the engine's own layer split (DESIGN section 8's fit.spill) */
            vf__jw_open(j, "spill", '{');
            vf__jw_int(j, "gpu_layers", r->fit.spill.gpu_layers);
            vf__jw_int(j, "cpu_layers", r->fit.spill.cpu_layers);
            vf__jw_bytes(j, "host_bytes", r->fit.spill.host_bytes);
            vf__jw_real(j, "slowdown", r->fit.spill.slowdown);
            vf__jw_real(j, "output_tokens_per_s", r->fit.speed.serving_tps);
            vf__jw_close(j);
        }
        vf__job_speed_jw(j, "offload_speed", r->job);
        vf__job_cost_jw(j, "offload_cost", r->job);
    }
    if (r->cost_per_mtok > 0) { /* F-SPD-06; on a short card, with its offload (issue 24) */
        vf__jw_open(j, llm_offload ? "offload_cost" : "cost", '{');
        vf__jw_real(j, "per_result", r->cost_per_mtok);
        vf__jw_text(j, "unit", "1M output tokens");
        vf__jw_str(j, "currency", of ? of->currency : NULL);
        vf__jw_close(j);
    }
    vf__jw_close(j);
}

char *vf_render_pick_json(struct vf_arena *a, const struct vf_estimate *e, const struct vf_pick *p,
                          const struct vf_workload *w)
{
    (void)w;
    struct vf__jw j;
    vf__jw_init(&j, a);
    estimate_jw(&j, e);
    vf__jw_text(&j, "currency", p->currency);
    vf__jw_open(&j, "offers", '[');
    for (size_t i = 0; i < p->n_rows; i++)
        offer_jw(&j, NULL, &p->rows[i], (int)i + 1);
    for (size_t i = 0; i < p->n_other; i++)
        offer_jw(&j, NULL, &p->other[i], 0);
    for (size_t i = 0; i < p->n_unpriced; i++)
        offer_jw(&j, NULL, &p->unpriced[i], 0);
    for (size_t i = 0; i < p->n_short; i++)
        offer_jw(&j, NULL, &p->short_rows[i], 0);
    vf__jw_close(&j);
    vf__jw_int(&j, "skipped_for_precision", (int64_t)p->n_skipped);
    vf__jw_int(&j, "skipped_multi_gpu", (int64_t)p->n_unsplittable);
    vf__jw_str(&j, "skipped_multi_gpu_why", p->unsplittable_why);
    if (p->low_bits) {
        vf__jw_open(&j, "move_up", '{');
        vf__jw_text(&j, "weights", p->upgrade_quant.name);
        if (p->upgrade)
            offer_jw(&j, "offer", p->upgrade, 0);
        else
            vf__jw_null(&j, "offer");
        vf__jw_close(&j);
    }
    vf__jw_close(&j);
    return vf__jw_done(&j);
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
                json_array_append_new(offers, vf__json_offer(of));
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

json_t *vf__json_offer(const struct vf_offer *of)
{
    json_t *x = json_object();
    json_object_set_new(x, "count", json_integer(of->count));
    json_object_set_new(x, "price_per_hour", vf__json_price(of->price_micro));
    json_object_set_new(x, "currency", vf__json_text(of->currency));
    json_object_set_new(x, "billing", vf__json_text(of->billing));
    json_object_set_new(x, "kind", vf__json_text(of->kind));
    json_object_set_new(x, "as_of", vf__json_text(of->as_of));
    json_object_set_new(x, "provider", vf__json_text(of->provider));
    json_object_set_new(x, "source", vf__json_text(of->source));
    return x;
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
            json_object_set_new(j, "app", vf__json_str(p->app));
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
