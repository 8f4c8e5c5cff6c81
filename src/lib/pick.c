/*
 * pick.c - which offers of the catalog fit the workload, cheapest first (F-PICK-01).
 * Every (card, count) offer is estimated with the workload's own engine, so multi-GPU
 * offers are checked with the split that engine really does. Offers rank only within one
 * currency; other currencies and cards without a price are listed apart. Cards that cannot
 * run the asked precision natively are left out and said so.
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Does the card run the weights' precision natively? *note tells why not. */
static bool precision_ok(const struct vf_gpu_spec *g, const struct vf_quant *q, enum vf_task task,
                         const char **note)
{
    *note = NULL;
    if (q->kind == VF_QK_GGUF_FTYPE)
        return true; /* llama.cpp dequantizes on the fly on every card */
    if (task == VF_TASK_IMAGE || task == VF_TASK_VIDEO)
        return true; /* ComfyUI casts fp8 weights to the compute type on older cards */
    if ((q->dtype == VF_DT_FP8 || q->kind == VF_QK_FP8_BLOCK) && !g->fp8) {
        *note = "no native FP8 on this card";
        return false;
    }
    if (q->dtype == VF_DT_NVFP4 && !g->fp4) {
        *note = "no native FP4 on this card";
        return false;
    }
    return true;
}

static int by_price(const void *pa, const void *pb)
{
    const struct vf_pick_row *a = pa, *b = pb;
    int c = strcmp(a->offer->currency, b->offer->currency);
    if (c)
        return c;
    if (a->offer->price_micro != b->offer->price_micro)
        return a->offer->price_micro < b->offer->price_micro ? -1 : 1;
    if (a->count != b->count)
        return a->count < b->count ? -1 : 1;
    if (a->gpu->usable_bytes != b->gpu->usable_bytes)
        return a->gpu->usable_bytes < b->gpu->usable_bytes ? -1 : 1;
    return strcmp(a->gpu->id, b->gpu->id);
}

static int by_size(const void *pa, const void *pb)
{
    const struct vf_pick_row *a = pa, *b = pb;
    if (a->gpu->usable_bytes != b->gpu->usable_bytes)
        return a->gpu->usable_bytes < b->gpu->usable_bytes ? -1 : 1;
    return strcmp(a->gpu->id, b->gpu->id);
}

static int by_price_desc(const void *pa, const void *pb)
{
    return -by_price(pa, pb);
}

/* Is there an equal or cheaper offer of the same card, count and currency already? */
static bool dominated(const struct vf_pick_row *rows, size_t n, const struct vf_offer *o)
{
    for (size_t i = 0; i < n; i++) {
        const struct vf_offer *p = rows[i].offer;
        if (!strcmp(p->gpu_id, o->gpu_id) && p->count == o->count &&
            !strcmp(p->currency, o->currency) && !strcmp(p->kind, o->kind))
            return true;
    }
    return false;
}

/* F-PICK-03: would an 8-bit KV cache make a short card fit? Tried only when the cache is
 * 16-bit now; q8_0 is llama.cpp's spelling for GGUF weights, fp8 the others'. */
static enum vf_err try_kv_fix(struct vf_arena *a, const struct vf_model *m,
                              const struct vf_workload *w, const struct vf_quant *q,
                              struct vf_pick_row *r, struct vf_error *err)
{
    r->kv_fix = VF_DT_DEFAULT;
    if (w->task != VF_TASK_INFER)
        return VF_OK;
    uint32_t elems, bytes;
    vf_dtype_block(r->est.kv_dtype, &elems, &bytes);
    if (bytes * 8 / elems < 16)
        return VF_OK;
    struct vf_workload w8 = *w;
    w8.kv_dtype = q->kind == VF_QK_GGUF_FTYPE ? VF_DT_Q8_0 : VF_DT_FP8;
    struct vf_fit f;
    struct vf_estimate e;
    enum vf_err rc =
        vf__fit_check(a, m, &w8, r->gpu->id, r->gpu->usable_bytes, r->count, false, &f, &e, err);
    if (rc)
        return rc;
    r->kv_fix = w8.kv_dtype;
    r->kv_fix_fits = f.fits;
    return VF_OK;
}

enum vf_err vf_pick(struct vf_arena *a, const struct vf_catalog *c, const struct vf_model *m,
                    const struct vf_workload *w, const struct vf_pick_opts *opts,
                    struct vf_pick *out, struct vf_error *err)
{
    memset(out, 0, sizeof *out);
    const char *currency = opts ? opts->currency : NULL;
    snprintf(out->currency, sizeof out->currency, "%s", currency && *currency ? currency : "EUR");
    size_t cap = c->n_offers + c->n_gpus + 1;
    struct vf_pick_row *fit_rows = vf_arena_alloc(a, cap * sizeof *fit_rows);
    out->rows = vf_arena_alloc(a, cap * sizeof *out->rows);
    out->other = vf_arena_alloc(a, cap * sizeof *out->other);
    out->unpriced = vf_arena_alloc(a, cap * sizeof *out->unpriced);
    out->short_rows = vf_arena_alloc(a, cap * sizeof *out->short_rows);
    if (!fit_rows || !out->rows || !out->other || !out->unpriced || !out->short_rows)
        return vf__errf(err, VF_ENOMEM, "pick: out of memory");
    struct vf_quant q = w->weights.kind == VF_QK_NATIVE ? m->native : w->weights;

    /* offers sorted by price first, so the first offer of a kind seen is the cheapest */
    struct vf_pick_row *cand = vf_arena_alloc(a, cap * sizeof *cand);
    if (!cand)
        return vf__errf(err, VF_ENOMEM, "pick: out of memory");
    size_t n_cand = 0;
    for (size_t i = 0; i < c->n_offers; i++) {
        const struct vf_gpu_spec *g = vf_catalog_gpu(c, c->offers[i].gpu_id);
        if (!g || (w->gpus && c->offers[i].count != w->gpus))
            continue;
        cand[n_cand].gpu = g;
        cand[n_cand].offer = &c->offers[i];
        cand[n_cand].count = c->offers[i].count;
        /* F-PICK-04: an explicit exchange rate brings the offer into the ranked currency */
        for (size_t k = 0; opts && k < opts->n_fx && k < VF_MAX_FX; k++) {
            if (strcmp(opts->fx[k].from, c->offers[i].currency) ||
                !strcmp(c->offers[i].currency, out->currency))
                continue;
            struct vf_offer *conv = vf_arena_alloc(a, sizeof *conv);
            if (!conv)
                return vf__errf(err, VF_ENOMEM, "pick: out of memory");
            *conv = c->offers[i];
            conv->price_micro =
                (uint64_t)(((unsigned __int128)c->offers[i].price_micro * opts->fx[k].micro +
                            500000) /
                           1000000);
            memcpy(conv->currency, out->currency, sizeof conv->currency);
            cand[n_cand].original = &c->offers[i];
            cand[n_cand].fx_micro = opts->fx[k].micro;
            cand[n_cand].offer = conv;
        }
        n_cand++;
    }
    qsort(cand, n_cand, sizeof *cand, by_price);

    for (size_t i = 0; i < n_cand; i++) {
        struct vf_pick_row r = cand[i];
        const char *note;
        if (!precision_ok(r.gpu, &q, w->task, &note)) {
            out->n_skipped++;
            out->skipped_why = note;
            continue;
        }
        bool mine = !strcmp(r.offer->currency, out->currency);
        struct vf_pick_row *list = mine ? out->rows : out->other;
        size_t *n = mine ? &out->n_rows : &out->n_other;
        if (dominated(list, *n, r.offer))
            continue;
        enum vf_err rc = vf__fit_check(a, m, w, r.gpu->id, r.gpu->usable_bytes, r.count, false,
                                       &r.fit, &r.est, err);
        if (rc)
            return rc;
        if (r.fit.why_not && r.count > 1) {
            out->n_unsplittable++;
            out->unsplittable_why = r.fit.why_not;
        } else if (r.fit.fits) {
            list[(*n)++] = r;
        } else if (mine && r.count == 1 && !r.fit.why_not) {
            bool seen = false;
            for (size_t j = 0; j < out->n_short && !seen; j++)
                seen = out->short_rows[j].gpu == r.gpu;
            if (!seen) {
                rc = vf__fit_check(a, m, w, r.gpu->id, r.gpu->usable_bytes, 1, true, &r.fit, &r.est,
                                   err);
                if (rc)
                    return rc;
                if ((rc = try_kv_fix(a, m, w, &q, &r, err)))
                    return rc;
                out->short_rows[out->n_short++] = r;
            }
        }
    }

    /* cards with no offer at all, one card each */
    for (size_t i = 0; i < c->n_gpus; i++) {
        const struct vf_gpu_spec *g = &c->gpus[i];
        bool priced = false;
        for (size_t j = 0; j < c->n_offers && !priced; j++)
            priced = !strcmp(c->offers[j].gpu_id, g->id);
        const char *note;
        if (priced || !precision_ok(g, &q, w->task, &note) || w->gpus > 1)
            continue;
        struct vf_pick_row r = {.gpu = g, .count = 1};
        enum vf_err rc =
            vf__fit_check(a, m, w, g->id, g->usable_bytes, 1, false, &r.fit, &r.est, err);
        if (rc)
            return rc;
        if (r.fit.fits)
            out->unpriced[out->n_unpriced++] = r;
    }

    qsort(out->rows, out->n_rows, sizeof *out->rows, by_price);
    qsort(out->other, out->n_other, sizeof *out->other, by_price);
    qsort(out->unpriced, out->n_unpriced, sizeof *out->unpriced, by_size);
    /* only the short cards cheaper than the cheapest fit are worth a line */
    size_t keep = 0;
    for (size_t i = 0; i < out->n_short; i++)
        if (!out->n_rows || out->short_rows[i].offer->price_micro < out->rows[0].offer->price_micro)
            out->short_rows[keep++] = out->short_rows[i];
    out->n_short = keep;
    qsort(out->short_rows, out->n_short, sizeof *out->short_rows, by_price_desc);

    /* F-PICK-02: the guide's "move up a size when the fix costs quality" */
    if (vf_quant_bits(&q) <= 4 && !w->no_upgrade) {
        struct vf_workload w8 = *w;
        w8.no_upgrade = true;
        w8.weights = q;
        if (q.kind == VF_QK_GGUF_FTYPE) {
            if (vf_quant_parse("Q8_0", &w8.weights, err))
                return err ? err->code : VF_EINVAL;
        } else if (vf_quant_parse("fp8", &w8.weights, err)) {
            return err ? err->code : VF_EINVAL;
        }
        struct vf_pick p8;
        struct vf_pick_opts o8 = opts ? *opts : (struct vf_pick_opts){0};
        o8.currency = out->currency;
        enum vf_err rc = vf_pick(a, c, m, &w8, &o8, &p8, err);
        if (rc)
            return rc;
        out->low_bits = true;
        out->upgrade_quant = w8.weights;
        out->upgrade = p8.n_rows ? &p8.rows[0] : NULL;
    }
    return VF_OK;
}
