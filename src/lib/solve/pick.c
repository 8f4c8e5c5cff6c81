/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pick.c - which offers of the catalog fit the workload, cheapest first (F-PICK-01).
 * Every (card, count) offer is estimated with the workload's own engine, so multi-GPU
 * offers are checked with the split that engine really does. Offers rank only within one
 * currency; other currencies and cards without a price are listed apart. Cards that cannot
 * run the asked precision natively are left out and said so.
 *
 * Memory is bounded by the catalog (issue 15): an offer is a 56-byte candidate while pick
 * walks them, a result row keeps the fit numbers and the estimate's total (struct
 * vf_pick_est), and a (card, count) is estimated once however many offers it has. Only the
 * short cards, whose lines print the estimate's parts and fixes, keep a whole estimate.
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

/* ------------------------------------------------------------- candidates */

/* One offer as pick walks them. */
struct cand {
    const struct vf_gpu_spec *gpu;
    const struct vf_offer *offer; /* the catalog's */
    uint64_t price_micro;         /* in `currency`: converted when fx_micro is set */
    uint64_t fx_micro;            /* the --fx rate applied, 0 for none */
    uint32_t count;
    uint32_t gpu_index; /* the card whose id is the offer's, for the "same offer" key */
    uint32_t line;      /* the offer's place in the catalog: ties keep the catalog's order */
    uint32_t kind_hash; /* of offer->kind, taken in catalog order (sorted, the offers are
                         * visited at random: one cache miss fewer per offer) */
    char currency[4];
    uint8_t list; /* where it went: LIST_NONE, LIST_MINE, LIST_OTHER */
};
enum { LIST_NONE, LIST_MINE, LIST_OTHER };

/* F-PICK-01: by currency, price, fewer cards, smaller cards, card id; then the catalog's
 * order (the stable sort of the rows this replaced). */
static int by_price(const void *pa, const void *pb)
{
    const struct cand *a = pa, *b = pb;
    int c = strcmp(a->currency, b->currency);
    if (c)
        return c;
    if (a->price_micro != b->price_micro)
        return a->price_micro < b->price_micro ? -1 : 1;
    if (a->count != b->count)
        return a->count < b->count ? -1 : 1;
    if (a->gpu->usable_bytes != b->gpu->usable_bytes)
        return a->gpu->usable_bytes < b->gpu->usable_bytes ? -1 : 1;
    c = strcmp(a->gpu->id, b->gpu->id);
    if (c)
        return c;
    return a->line < b->line ? -1 : a->line > b->line;
}

static int row_by_price(const void *pa, const void *pb)
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

static int row_by_price_desc(const void *pa, const void *pb)
{
    return -row_by_price(pa, pb);
}

static int row_by_size(const void *pa, const void *pb)
{
    const struct vf_pick_row *a = pa, *b = pb;
    if (a->gpu->usable_bytes != b->gpu->usable_bytes)
        return a->gpu->usable_bytes < b->gpu->usable_bytes ? -1 : 1;
    return strcmp(a->gpu->id, b->gpu->id);
}

/* ------------------------------------------------------------ hash tables */

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *s = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ s[i]) * 0x100000001b3ULL;
    return h;
}
#define FNV0 0xcbf29ce484222325ULL

/* FNV's low bits, which pick the slot, depend on few input bits: MurmurHash3's finalizer
 * spreads the high ones down. */
static size_t slot_of(uint64_t h, size_t mask)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return (size_t)h & mask;
}

/* Slots for n keys at most half full: a power of two. */
static size_t slots_for(size_t n)
{
    size_t s = 16;
    while (s < 2 * n)
        s *= 2;
    return s;
}

/* The card whose id is `id` (byte for byte, as prices.tsv is checked against gpus.tsv). */
struct card_index {
    uint32_t *slot; /* index + 1, 0 = empty */
    size_t mask;
};

static uint64_t str_hash(const char *s)
{
    return fnv(FNV0, s, strlen(s));
}

static bool card_index_open(struct vf_arena *a, const struct vf_catalog *c, struct card_index *ix)
{
    size_t n = slots_for(c->n_gpus);
    ix->slot = vf_arena_alloc(a, n * sizeof *ix->slot);
    ix->mask = n - 1;
    if (!ix->slot)
        return false;
    for (size_t i = 0; i < c->n_gpus; i++) {
        size_t h = slot_of(str_hash(c->gpus[i].id), ix->mask);
        while (ix->slot[h] && strcmp(c->gpus[ix->slot[h] - 1].id, c->gpus[i].id))
            h = (h + 1) & ix->mask;
        if (!ix->slot[h])
            ix->slot[h] = (uint32_t)i + 1;
    }
    return true;
}

/* The index of the card with that id, or -1. */
static long card_find(const struct vf_catalog *c, const struct card_index *ix, const char *id)
{
    for (size_t h = slot_of(str_hash(id), ix->mask); ix->slot[h]; h = (h + 1) & ix->mask)
        if (!strcmp(c->gpus[ix->slot[h] - 1].id, id))
            return (long)ix->slot[h] - 1;
    return -1;
}

/* Offers already listed, by what makes one offer the same as another (F-PICK-01: the
 * cheapest of a card, count, currency and kind is the one shown). */
struct seen {
    uint32_t *slot; /* candidate + 1 */
    size_t mask;
};

static uint64_t seen_hash(const struct cand *x)
{
    uint64_t h = fnv(FNV0, &x->gpu_index, sizeof x->gpu_index);
    h = fnv(h, &x->count, sizeof x->count);
    h = fnv(h, x->currency, 3);
    return fnv(h, &x->kind_hash, sizeof x->kind_hash);
}

static bool same_offer(const struct cand *x, const struct cand *y)
{
    return x->gpu_index == y->gpu_index && x->count == y->count && x->kind_hash == y->kind_hash &&
           !strcmp(x->currency, y->currency) && !strcmp(x->offer->kind, y->offer->kind);
}

/* Is an offer like cand[i] listed? With add, it is afterwards. */
static bool seen_check(struct seen *s, const struct cand *cand, uint32_t i, bool add)
{
    size_t h = slot_of(seen_hash(&cand[i]), s->mask);
    for (; s->slot[h]; h = (h + 1) & s->mask)
        if (same_offer(&cand[s->slot[h] - 1], &cand[i]))
            return true;
    if (add)
        s->slot[h] = i + 1;
    return false;
}

/* ------------------------------------------------------ one check per card */

/* The fit of the workload on `count` cards of one kind, computed once per pick. */
struct check {
    const struct vf_gpu_spec *gpu;
    uint32_t count;
    struct vf_fit fit;
    struct vf_pick_est est;
};

struct pick_ctx {
    struct vf_arena *a;       /* the result's */
    struct vf_arena *scratch; /* the checks' estimates (their strings are not kept) */
    const struct vf_catalog *c;
    const struct vf_model *m; /* the memo's owner */
    const struct vf_workload *w;
    struct vf_quant q;
    struct check **slot; /* by (card, count); a card_blind engine's totals by (NULL, count) */
    size_t mask;
    bool blind; /* the engine's estimate reads nothing of the card (vf_engine.card_blind) */
};

static void compact(struct vf_pick_est *c, const struct vf_estimate *e)
{
    *c = (struct vf_pick_est){.total_bytes = e->total_bytes,
                              .weights_bytes = e->weights_bytes,
                              .kv_dtype = e->kv_dtype,
                              .kv_bytes_per_token = e->kv_bytes_per_token};
}

/* The slot of (g, count) in p's table: its check, or the empty slot where it goes. */
static size_t check_slot(const struct pick_ctx *p, const struct vf_gpu_spec *g, uint32_t count)
{
    size_t h = slot_of(fnv(fnv(FNV0, &g, sizeof g), &count, sizeof count), p->mask);
    while (p->slot[h] && (p->slot[h]->gpu != g || p->slot[h]->count != count))
        h = (h + 1) & p->mask;
    return h;
}

/* *out: the check of (g, count), estimated the first time it is asked. F-PICK-05: for a
 * card_blind engine the first card of a count is estimated and every other card of that
 * count takes its total against its own usable bytes (the same verdict, one estimate). */
static enum vf_err check_of(struct pick_ctx *p, const struct vf_gpu_spec *g, uint32_t count,
                            const struct check **out, struct vf_error *err)
{
    size_t h = check_slot(p, g, count);
    if (p->slot[h]) {
        *out = p->slot[h];
        return VF_OK;
    }
    struct check *ck = vf__arena_take(p->scratch, sizeof *ck), *blind = NULL;
    if (!ck)
        return vf__errf(err, VF_ENOMEM, "pick: out of memory");
    size_t hb = p->blind ? check_slot(p, NULL, count) : 0;
    if (p->blind && p->slot[hb]) {
        *ck = *p->slot[hb];
        ck->fit.gpu = g->id;
        if (!ck->fit.why_not)
            vf__fit_budget(&ck->fit, ck->est.total_bytes, g->usable_bytes);
    } else {
        struct vf_estimate e;
        enum vf_err rc = vf__fit_check(p->scratch, p->m, p->w, g->id, g->usable_bytes, count, false,
                                       &ck->fit, &e, err);
        if (rc)
            return rc;
        compact(&ck->est, &e);
        if (p->blind && !(blind = vf__arena_take(p->scratch, sizeof *blind)))
            return vf__errf(err, VF_ENOMEM, "pick: out of memory");
    }
    ck->gpu = g;
    ck->count = count;
    p->slot[h] = ck;
    if (blind) {
        *blind = *ck;
        blind->gpu = NULL;
        p->slot[check_slot(p, NULL, count)] = blind;
    }
    *out = ck;
    return VF_OK;
}

/* F-PICK-03: would an 8-bit KV cache make a short card fit? Tried only when the cache is
 * 16-bit now; q8_0 is llama.cpp's spelling for GGUF weights, fp8 the others'. */
static enum vf_err try_kv_fix(struct pick_ctx *p, struct vf_pick_row *r, struct vf_error *err)
{
    r->kv_fix = VF_DT_DEFAULT;
    if (p->w->task != VF_TASK_INFER)
        return VF_OK;
    uint32_t elems, bytes;
    vf_dtype_block(r->est.kv_dtype, &elems, &bytes);
    if (bytes * 8 / elems < 16)
        return VF_OK;
    struct vf_workload w8 = *p->w;
    w8.kv_dtype = p->q.kind == VF_QK_GGUF_FTYPE ? VF_DT_Q8_0 : VF_DT_FP8;
    struct vf_fit f;
    struct vf_estimate e;
    enum vf_err rc = vf__fit_check(p->scratch, p->m, &w8, r->gpu->id, r->gpu->usable_bytes,
                                   r->count, false, &f, &e, err);
    if (rc)
        return rc;
    r->kv_fix = w8.kv_dtype;
    r->kv_fix_fits = f.fits;
    return VF_OK;
}

/* The row of a candidate, fit numbers aside; an offer converted with --fx gets its
 * converted copy. */
static enum vf_err list_row(struct pick_ctx *p, const struct cand *x, struct vf_pick_row *r,
                            struct vf_error *err)
{
    *r = (struct vf_pick_row){.gpu = x->gpu, .offer = x->offer, .count = x->count};
    if (x->fx_micro) {
        struct vf_offer *conv = vf_arena_alloc(p->a, sizeof *conv);
        if (!conv)
            return vf__errf(err, VF_ENOMEM, "pick: out of memory");
        *conv = *x->offer;
        conv->price_micro = x->price_micro;
        memcpy(conv->currency, x->currency, sizeof conv->currency);
        r->original = x->offer;
        r->fx_micro = x->fx_micro;
        r->offer = conv;
    }
    return VF_OK;
}

/* DESIGN section 8, F-SPD-06/17 (issue 24), --rank cost: a short card where the LLM runs
 * with layers in host memory as its engine places them itself (llama.cpp's -ngl auto, i.e.
 * --fit; Ollama's planner): the split (r->fit.spill), its speed from the offload model
 * (r->job, and the scaled serving speed in r->fit.speed) and its price per 1M output tokens
 * (r->cost_per_mtok). Left as it is for other engines, or when even the split does not fit. */
static enum vf_err llm_offload_offer(struct pick_ctx *p, struct vf_pick_row *r,
                                     struct vf_error *err)
{
    const struct vf_engine *eng = vf_engine_for(p->w, NULL);
    bool lcpp = eng && !strcmp(eng->name, "llama.cpp");
    if (!eng || (!lcpp && strcmp(eng->name, "ollama")))
        return VF_OK;
    struct vf_workload x = *p->w;
    x.usable_bytes = r->gpu->usable_bytes;
    struct vf_error e2 = {0};
    if (lcpp && vf_workload_set(&x, "-ngl", "auto", &e2))
        return VF_OK;
    struct vf_estimate *e = vf__arena_take(p->scratch, sizeof *e); /* vf_estimate clears it */
    struct vf_job_speed *job = vf_arena_alloc(p->a, sizeof *job);
    if (!e || !job)
        return vf__errf(err, VF_ENOMEM, "pick: out of memory");
    enum vf_err rc = vf_estimate(p->scratch, p->m, &x, e, &e2);
    if (rc == VF_ENOMEM)
        return vf__errf(err, rc, "pick: out of memory");
    /* Ollama's total is its placement's need with every layer on the card (memory.go); its
     * split fits by construction. llama.cpp's --fit may stay short of its margin. */
    if (rc || !e->spill.runs ||
        (lcpp && (e->total_bytes == VF_UNKNOWN || e->total_bytes > r->gpu->usable_bytes)))
        return VF_OK;
    struct vf_fit f = {.gpu = r->gpu->id, .count = 1, .fits = true, .max_users = e->users};
    vf__speed_of(p->m, &x, e->engine, &e->weights, e->weights_bytes, e->kv_bytes_per_token,
                 e->ctx_tokens, r->gpu, &f);
    vf__job_speed(p->c, r->gpu, p->m, e, &x, 1, &f.speed, job);
    if (!job->known || !f.speed.known || f.speed.serving_tps <= 0)
        return VF_OK;
    r->fit.speed = f.speed;
    r->fit.spill.on = true;
    r->fit.spill.gpu_layers = e->spill.gpu_layers;
    r->fit.spill.cpu_layers = e->spill.cpu_layers;
    r->fit.spill.host_bytes = e->spill.host_bytes;
    r->fit.spill.slowdown = job->slowdown;
    r->offload_flags = lcpp ? "-ngl auto" : "Ollama's own layer split";
    r->job = job;
    r->cost_per_mtok = (double)r->offer->price_micro / (3600.0 * f.speed.serving_tps);
    return VF_OK;
}

/* A single card that does not fit: the whole estimate (the text prints its parts and
 * fixes), the largest context and users it holds, and the 8-bit KV cache. */
static enum vf_err short_row(struct pick_ctx *p, const struct cand *x, struct vf_pick_row *r,
                             struct vf_error *err)
{
    struct vf_estimate *e = vf__arena_take(p->a, sizeof *e); /* vf_estimate clears it */
    if (!e)
        return vf__errf(err, VF_ENOMEM, "pick: out of memory");
    enum vf_err rc = list_row(p, x, r, err);
    if (!rc)
        rc = vf__fit_check(p->a, p->m, p->w, x->gpu->id, x->gpu->usable_bytes, 1, true, &r->fit, e,
                           err);
    if (rc)
        return rc;
    e->model.memo = NULL; /* the estimate outlives the memo */
    compact(&r->est, e);
    r->est.components = e->components;
    r->est.n_components = e->n_components;
    r->est.fixes = e->fixes;
    r->est.n_fixes = e->n_fixes;
    if (p->w->pick.rank_cost && p->m->pipeline) { /* F-SPD-16: runs with offload here */
        struct vf_speed_choice ch;
        if ((rc = vf__speed_choice(p->a, p->c, p->m, p->w, x->gpu, &r->fit, &ch)))
            return vf__errf(err, rc, "pick: out of memory");
        struct vf_job_speed *job = vf_arena_alloc(p->a, sizeof *job);
        if (!job)
            return vf__errf(err, VF_ENOMEM, "pick: out of memory");
        *job = ch.with;
        r->offload_flags = ch.flags && ch.with.known ? ch.flags : NULL;
        r->job = job;
    } else if (p->w->pick.rank_cost && p->w->task == VF_TASK_INFER &&
               (rc = llm_offload_offer(p, r, err))) {
        return rc;
    }
    return try_kv_fix(p, r, err);
}

/* ------------------------------------------------------------------ pick */

/* The offers of the catalog for w, sorted by_price; *n their number. */
static struct cand *candidates(struct pick_ctx *p, const struct card_index *ix,
                               const struct vf_pick_opts *opts, const char *currency, size_t *n)
{
    const struct vf_catalog *c = p->c;
    struct cand *cand = vf__arena_take(p->scratch, (c->n_offers + 1) * sizeof *cand); /* filled */
    if (!cand)
        return NULL;
    *n = 0;
    for (size_t i = 0; i < c->n_offers; i++) {
        const struct vf_offer *o = &c->offers[i];
        long gi = card_find(c, ix, o->gpu_id);
        if (gi < 0)
            continue;                               /* prices.tsv names cards of gpus.tsv only */
        const struct vf_gpu_spec *g = &c->gpus[gi]; /* its id, byte for byte */
        if (p->w->gpus && o->count != p->w->gpus)
            continue;
        struct cand *x = &cand[(*n)++];
        *x = (struct cand){.gpu = g,
                           .offer = o,
                           .price_micro = o->price_micro,
                           .count = o->count,
                           .gpu_index = (uint32_t)gi,
                           .line = (uint32_t)i,
                           .kind_hash = (uint32_t)str_hash(o->kind)};
        memcpy(x->currency, o->currency, sizeof x->currency);
        /* F-PICK-04: an explicit exchange rate brings the offer into the ranked currency */
        for (size_t k = 0; opts && k < opts->n_fx && k < VF_MAX_FX; k++) {
            if (strcmp(opts->fx[k].from, o->currency) || !strcmp(o->currency, currency))
                continue;
            x->price_micro =
                (uint64_t)(((unsigned __int128)o->price_micro * opts->fx[k].micro + 500000) /
                           1000000);
            memcpy(x->currency, currency, sizeof x->currency);
            x->fx_micro = opts->fx[k].micro;
        }
    }
    qsort(cand, *n, sizeof *cand, by_price);
    return cand;
}

/* Walks the candidates cheapest first: each is left out, listed (x->list) or, for a single
 * card that is short, made a short row. With first_only, stops at the first listed in
 * out->currency (the "move up a size" alternative needs no more). */
static enum vf_err walk(struct pick_ctx *p, struct cand *cand, size_t n, bool first_only,
                        struct vf_pick *out, struct vf_error *err)
{
    struct seen seen = {.mask = slots_for(n) - 1};
    seen.slot = vf_arena_alloc(p->scratch, (seen.mask + 1) * sizeof *seen.slot);
    /* rows are written whole (list_row), so none is cleared first */
    out->short_rows = vf__arena_take(p->a, (p->c->n_gpus + 1) * sizeof *out->short_rows);
    if (!seen.slot || !out->short_rows)
        return vf__errf(err, VF_ENOMEM, "pick: out of memory");
    for (uint32_t i = 0; i < n; i++) {
        struct cand *x = &cand[i];
        const char *note;
        if (!precision_ok(x->gpu, &p->q, p->w->task, &note)) {
            out->n_skipped++;
            out->skipped_why = note;
            continue;
        }
        bool mine = !strcmp(x->currency, out->currency);
        if (seen_check(&seen, cand, i, false))
            continue;
        const struct check *ck;
        enum vf_err rc = check_of(p, x->gpu, x->count, &ck, err);
        if (rc)
            return rc;
        if (ck->fit.why_not && x->count > 1) {
            out->n_unsplittable++;
            out->unsplittable_why = ck->fit.why_not;
        } else if (ck->fit.fits) {
            seen_check(&seen, cand, i, true);
            x->list = mine ? LIST_MINE : LIST_OTHER;
            *(mine ? &out->n_rows : &out->n_other) += 1;
            if (first_only && mine)
                return VF_OK;
        } else if (mine && x->count == 1 && !ck->fit.why_not && !first_only) {
            bool dup = false;
            for (size_t j = 0; j < out->n_short && !dup; j++)
                dup = out->short_rows[j].gpu == x->gpu;
            if (!dup && (rc = short_row(p, x, &out->short_rows[out->n_short++], err)))
                return rc;
        }
    }
    return VF_OK;
}

/* F-SPD-06: the row's speed (F-SPD-03 at the workload's users and lengths) and its price
 * per 1M output tokens: price per hour / (3600 x output tokens/s) x 10^6. Every LLM row
 * carries both, whatever the ranking (the page's time-and-cost column); --rank cost only
 * orders the rows by the second. An image or clip row under --rank cost carries its seconds
 * and EUR per result (F-SPD-10..14). */
static enum vf_err row_cost(struct pick_ctx *p, struct vf_pick_row *r, struct vf_error *err)
{
    r->cost_per_mtok = 0;
    if (p->m->pipeline && p->w->pick.rank_cost && r->count == 1) {     /* F-SPD-10..14 */
        struct vf_estimate *e = vf__arena_take(p->scratch, sizeof *e); /* vf_estimate clears it */
        struct vf_job_speed *job = vf_arena_alloc(p->a, sizeof *job);
        struct vf_fit f;
        if (!e || !job)
            return vf__errf(err, VF_ENOMEM, "pick: out of memory");
        enum vf_err rc = vf__fit_check(p->scratch, p->m, p->w, r->gpu->id, r->gpu->usable_bytes, 1,
                                       false, &f, e, err);
        if (!rc) {
            vf__job_speed(p->c, r->gpu, p->m, e, p->w, 1, NULL, job);
            r->job = job;
        }
        return rc;
    }
    if (p->w->task != VF_TASK_INFER)
        return VF_OK;
    vf__speed_of(p->m, p->w, p->w->engine, &p->q, r->est.weights_bytes, r->est.kv_bytes_per_token,
                 p->w->ctx_tokens, r->gpu, &r->fit);
    if (r->offer && r->fit.speed.known && r->fit.speed.serving_tps > 0)
        r->cost_per_mtok = (double)r->offer->price_micro / (3600.0 * r->fit.speed.serving_tps);
    return VF_OK;
}

static int row_by_cost(const void *a, const void *b)
{
    const struct vf_pick_row *x = a, *y = b;
    double ex = x->job && x->job->eur > 0 ? x->job->eur : 1e300;
    double ey = y->job && y->job->eur > 0 ? y->job->eur : 1e300;
    double cx = x->cost_per_mtok > 0 ? x->cost_per_mtok : ex;
    double cy = y->cost_per_mtok > 0 ? y->cost_per_mtok : ey;
    if (cx != cy)
        return cx < cy ? -1 : 1;
    uint64_t px = x->offer ? x->offer->price_micro : 0, py = y->offer ? y->offer->price_micro : 0;
    if (px != py)
        return px < py ? -1 : 1;
    return strcmp(x->gpu->id, y->gpu->id);
}

/* The rows of the listed candidates, in their order (already ranked). */
static enum vf_err fill_rows(struct pick_ctx *p, const struct cand *cand, size_t n,
                             struct vf_pick *out, struct vf_error *err)
{
    out->rows = vf__arena_take(p->a, (out->n_rows + 1) * sizeof *out->rows); /* list_row */
    out->other = vf__arena_take(p->a, (out->n_other + 1) * sizeof *out->other);
    if (!out->rows || !out->other)
        return vf__errf(err, VF_ENOMEM, "pick: out of memory");
    size_t n_mine = 0, n_other = 0;
    for (size_t i = 0; i < n; i++) {
        const struct cand *x = &cand[i];
        if (x->list == LIST_NONE)
            continue;
        struct vf_pick_row *r =
            x->list == LIST_MINE ? &out->rows[n_mine++] : &out->other[n_other++];
        const struct check *ck;
        enum vf_err rc = check_of(p, x->gpu, x->count, &ck, err);
        if (!rc)
            rc = list_row(p, x, r, err);
        if (rc)
            return rc;
        r->fit = ck->fit;
        r->est = ck->est;
        if ((rc = row_cost(p, r, err)))
            return rc;
    }
    return VF_OK;
}

/* Cards with no offer at all that fit, one card each. */
static enum vf_err unpriced(struct pick_ctx *p, const struct card_index *ix, struct vf_pick *out,
                            struct vf_error *err)
{
    const struct vf_catalog *c = p->c;
    bool *priced = vf_arena_alloc(p->scratch, c->n_gpus + 1);
    out->unpriced = vf_arena_alloc(p->a, (c->n_gpus + 1) * sizeof *out->unpriced);
    if (!priced || !out->unpriced)
        return vf__errf(err, VF_ENOMEM, "pick: out of memory");
    for (size_t i = 0; i < c->n_offers; i++) {
        long gi = card_find(c, ix, c->offers[i].gpu_id);
        if (gi >= 0)
            priced[gi] = true;
    }
    for (size_t i = 0; i < c->n_gpus; i++) {
        const struct vf_gpu_spec *g = &c->gpus[i];
        const char *note;
        if (priced[i] || !precision_ok(g, &p->q, p->w->task, &note) || p->w->gpus > 1)
            continue;
        const struct check *ck;
        enum vf_err rc = check_of(p, g, 1, &ck, err);
        if (rc)
            return rc;
        if (!ck->fit.fits)
            continue;
        struct vf_pick_row *r = &out->unpriced[out->n_unpriced++];
        *r = (struct vf_pick_row){.gpu = g, .count = 1, .fit = ck->fit, .est = ck->est};
        if ((rc = row_cost(p, r, err))) /* the speed alone: no price, no cost */
            return rc;
    }
    qsort(out->unpriced, out->n_unpriced, sizeof *out->unpriced, row_by_size);
    return VF_OK;
}

/* The offers as candidates() made them, handed from a pick to its upgrade (the same catalog,
 * card counts, rates and currency: only the weights differ), so that they are found and
 * sorted once (issue 15). */
struct cands {
    struct cand *x;
    size_t n;
};

static enum vf_err pick_with(struct vf_arena *a, const struct vf_catalog *c,
                             const struct vf_model *m, const struct vf_workload *w,
                             const struct vf_pick_opts *opts, struct cands *reuse,
                             struct vf_pick *out, struct vf_error *err);

/* F-PICK-02: the guide's "move up a size when the fix costs quality": the cheapest offer
 * that holds the workload at 8 bits. */
static enum vf_err upgrade(struct vf_arena *a, const struct vf_catalog *c, const struct vf_model *m,
                           const struct vf_workload *w, const struct vf_quant *q,
                           const struct vf_pick_opts *opts, struct cands *cands,
                           struct vf_pick *out, struct vf_error *err)
{
    struct vf_workload w8 = *w;
    w8.no_upgrade = true;
    w8.weights = *q;
    if (vf_quant_parse(q->kind == VF_QK_GGUF_FTYPE ? "Q8_0" : "fp8", &w8.weights, err))
        return err ? err->code : VF_EINVAL;
    struct vf_pick p8;
    struct vf_pick_opts o8 = opts ? *opts : (struct vf_pick_opts){0};
    o8.currency = out->currency;
    for (size_t i = 0; i < cands->n; i++)
        cands->x[i].list = LIST_NONE; /* walked again for these weights */
    enum vf_err rc = pick_with(a, c, m, &w8, &o8, cands, &p8, err);
    if (rc)
        return rc;
    out->low_bits = true;
    out->upgrade_quant = w8.weights;
    out->upgrade = p8.n_rows ? &p8.rows[0] : NULL;
    return VF_OK;
}

/* vf_pick with m the memo's owner. With `reuse` (the upgrade), the offers found and sorted by
 * the pick before it, and only rows[0]. */
static enum vf_err pick_with(struct vf_arena *a, const struct vf_catalog *c,
                             const struct vf_model *m, const struct vf_workload *w,
                             const struct vf_pick_opts *opts, struct cands *reuse,
                             struct vf_pick *out, struct vf_error *err)
{
    memset(out, 0, sizeof *out);
    const char *currency = opts ? opts->currency : NULL;
    snprintf(out->currency, sizeof out->currency, "%s", currency && *currency ? currency : "EUR");
    struct pick_ctx p = {.a = a, .scratch = m->memo->a, .c = c, .m = m, .w = w};
    p.q = w->weights.kind == VF_QK_NATIVE ? m->native : w->weights;
    const struct vf_engine *eng = vf_engine_for(w, NULL);
    p.blind = eng && eng->card_blind;
    /* the (card, count) checks: no more than the offers and one per card, and the card_blind
     * totals, one per count (no more than the offers) */
    p.mask = slots_for(2 * c->n_offers + c->n_gpus) - 1;
    p.slot = vf_arena_alloc(p.scratch, (p.mask + 1) * sizeof *p.slot);
    struct card_index ix = {0};
    struct cands own = {0}, *cands = reuse ? reuse : &own;
    if (!p.slot || (!reuse && !card_index_open(p.scratch, c, &ix)))
        return vf__errf(err, VF_ENOMEM, "pick: out of memory");
    if (!reuse && !(own.x = candidates(&p, &ix, opts, out->currency, &own.n)))
        return vf__errf(err, VF_ENOMEM, "pick: out of memory");

    bool first_only = reuse != NULL;
    enum vf_err rc = walk(&p, cands->x, cands->n, first_only, out, err);
    if (!rc)
        rc = fill_rows(&p, cands->x, cands->n, out, err);
    if (!rc && !first_only)
        rc = unpriced(&p, &ix, out, err);
    if (rc || first_only)
        return rc;

    /* only the short cards cheaper than the cheapest fit are worth a line */
    size_t keep = 0;
    for (size_t i = 0; i < out->n_short; i++)
        if (!out->n_rows || out->short_rows[i].offer->price_micro < out->rows[0].offer->price_micro)
            out->short_rows[keep++] = out->short_rows[i];
    out->n_short = keep;
    qsort(out->short_rows, out->n_short, sizeof *out->short_rows, row_by_price_desc);
    if (opts && opts->rank_cost) { /* F-SPD-06: cheapest per 1M output tokens first */
        out->rank_cost = true;
        out->cost_unit = m->pipeline ? (w->task == VF_TASK_VIDEO ? "clip" : "image") : NULL;
        qsort(out->rows, out->n_rows, sizeof *out->rows, row_by_cost);
    }

    if (vf_quant_bits(&p.q) <= 4 && !w->no_upgrade)
        return upgrade(a, c, m, w, &p.q, opts, cands, out, err);
    return VF_OK;
}

enum vf_err vf_pick(struct vf_arena *a, const struct vf_catalog *c, const struct vf_model *m,
                    const struct vf_workload *w, const struct vf_pick_opts *opts,
                    struct vf_pick *out, struct vf_error *err)
{
    if (m->memo && m->memo->owner == m)
        return pick_with(a, c, m, w, opts, NULL, out, err);
    /* one memo for the whole pick, upgrade included: the weight bytes of each storage are
     * computed once; the checks' estimates go to a scratch arena closed at the end */
    struct vf_arena *scratch = vf_arena_open(0);
    if (!scratch)
        return vf__errf(err, VF_ENOMEM, "pick: out of memory");
    struct vf_model mc = *m;
    struct vf__memo memo;
    vf__memo_attach(&memo, scratch, &mc);
    enum vf_err rc = pick_with(a, c, &mc, w, opts, NULL, out, err);
    vf_arena_close(scratch);
    return rc;
}
