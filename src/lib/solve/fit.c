/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fit.c - does a workload fit a card, and what is the most it could hold (F-FIT-01)?
 * Estimators are monotone in context, concurrent sequences and batch, so the largest value
 * that fits is one crossing of the budget. Where the engine's total is linear in the knob
 * (the generic engine, the KV need of vLLM above its pool, training per sample) the line
 * through two estimates says where that crossing is; the solver estimates there and one step
 * above to confirm it, and probes further only where the total is not linear. Image size and
 * video frames (quadratic in area) keep the galloping bisection. The answer is exactly the
 * bisection's for any monotone engine (tests/unit/t_solve.c keeps that bisection and compares).
 *
 * Nothing is computed twice in one call: the weight bytes come from the memo of the call
 * (struct vf__memo, internal.h), and the probes' strings go to a scratch arena.
 */
#include "internal.h"

#include <string.h>

enum knob_kind { KNOB_CTX, KNOB_USERS, KNOB_BATCH, KNOB_SIZE, KNOB_FRAMES };

struct knob {
    struct vf_arena *a;       /* scratch: the probes' assumption strings */
    const struct vf_model *m; /* the memo's owner */
    struct vf_workload w;
    uint64_t budget;
    enum knob_kind kind;
    /* The fit's own estimate and the context and users it was taken at: a probe at the
     * same point is that estimate (KNOB_CTX, KNOB_USERS only). */
    bool has_base;
    uint64_t base_ctx, base_users, base_total;
};

/* w with the knob at v; false when v is no valid setting (a size out of range). */
static bool set_knob(const struct knob *k, uint64_t v, struct vf_workload *w)
{
    *w = k->w;
    switch (k->kind) {
    case KNOB_SIZE: { /* v steps of 16 px of width at the asked aspect */
        uint64_t wd = v * 16, ht = wd * k->w.diffusion.height / k->w.diffusion.width / 16 * 16;
        if (wd > 16384 || ht > 16384 || ht < 16)
            return false;
        w->diffusion.width = (uint32_t)wd;
        w->diffusion.height = (uint32_t)ht;
        break;
    }
    case KNOB_FRAMES: /* 4n + 1 frames (the video VAEs' form) */
        if (v > 1024)
            return false;
        w->diffusion.frames = (uint32_t)(4 * v + 1);
        break;
    case KNOB_CTX:
        w->ctx_tokens = v;
        break;
    case KNOB_USERS:
        w->users = v;
        break;
    case KNOB_BATCH:
        if (w->task == VF_TASK_TRAIN && !k->m->pipeline)
            w->train.batch = (uint32_t)v;
        else
            w->train.batch = w->diffusion.batch = (uint32_t)v;
        break;
    }
    return true;
}

/* One estimate of the solver, counted in the memo; a probe's is totals_only. */
static enum vf_err estimate(struct vf_arena *a, const struct vf_model *m,
                            const struct vf_workload *w, struct vf_estimate *e, bool probe,
                            struct vf_error *err)
{
    if (!m->memo)
        return vf_estimate(a, m, w, e, err);
    m->memo->n_estimates++;
    m->memo->probing = probe;
    enum vf_err rc = vf_estimate(a, m, w, e, err);
    m->memo->probing = false;
    return rc;
}

/* What device g of a --gpu A,B mix holds at the peak: with need, the engine's need for it when
 * it gave one (n_dev_need: every layer on the GPUs where it runs with spill), else its components
 * (each GPU the total when every component is on every GPU alike, as an even split is). */
static uint64_t dev_bytes(const struct vf_estimate *e, uint32_t g, bool need)
{
    if (need && g < e->n_dev_need)
        return e->dev_need[g];
    bool uniform = true;
    for (size_t i = 0; i < e->n_components; i++)
        uniform &= e->components[i].device == VF_DEV_ALL_GPUS;
    return uniform ? e->total_bytes : vf__gpu_total(e, (int)g);
}

/* F-FIT-08 (issue 21): the need against the budget as one figure. One kind of card: the total
 * (the most loaded GPU). A mix: the budget plus the largest shortfall over the devices, each
 * against its own usable bytes, so that it fits when every device does and the headroom is
 * the tightest device's; monotone wherever each device's need is. */
static uint64_t need_of(const struct vf_estimate *e, const struct vf_workload *w, uint64_t budget)
{
    if (!w->n_mix || e->total_bytes == VF_UNKNOWN)
        return e->total_bytes;
    __int128 worst = -(__int128)budget;
    for (uint32_t g = 0, used = 0; g < w->n_mix && g < VF_MAX_MIX; g++) {
        uint64_t b = dev_bytes(e, g, true);
        if (b == VF_UNKNOWN)
            return VF_UNKNOWN;
        __int128 d = (__int128)b - w->mix_usable[g];
        if (b && !used++) /* a GPU the engine leaves empty has no say (Ollama's layout) */
            worst = d;
        else if (d > worst && (b || !used))
            worst = d;
    }
    __int128 t = (__int128)budget + worst;
    return t < 0 ? 0 : t >= (__int128)VF_UNKNOWN ? VF_UNKNOWN - 1 : (uint64_t)t;
}

/* The total at v: *t, and whether the estimate was made (a failed one never fits). */
static bool total_at(struct knob *k, uint64_t v, uint64_t *t)
{
    struct vf_workload w;
    if (!set_knob(k, v, &w))
        return false;
    if (k->has_base && w.ctx_tokens == k->base_ctx && w.users == k->base_users) {
        *t = k->base_total;
        return true;
    }
    struct vf_estimate e;
    if (estimate(k->a, k->m, &w, &e, true, NULL))
        return false;
    *t = need_of(&e, &w, k->budget);
    return true;
}

static bool fits_with(uint64_t v, void *ud)
{
    struct knob *k = ud;
    uint64_t t;
    return total_at(k, v, &t) && t <= k->budget;
}

/* ------------------------------------------------------------- the solver */

/* A probed value and the total there; `line` when the total may be drawn through (an
 * estimate that failed or overflowed is only "does not fit"). */
struct probe {
    uint64_t v, t;
    bool line;
};

struct solver {
    struct knob *k;
    struct probe ok, ok2;   /* the largest fitting value probed, and the one before */
    struct probe bad, bad2; /* the smallest value probed that does not fit, and the one after */
    bool has_ok, has_ok2, has_bad, has_bad2;
    unsigned creep_lo, creep_hi; /* guesses in a row at the edge of the values left */
    unsigned up;                 /* guesses upward before any value failed */
    unsigned left;               /* probes left to the bisection bound (0: not bracketed) */
};

/* Probes allowed beyond a bisection's once the answer is bracketed: the guesses may cost
 * this many more estimates than bisecting would, never more (the projection in guess()). */
#define SLACK 3
/* Guesses extrapolated upward before doubling takes over (a total far from linear). */
#define MAX_UP 4

static void probe(struct solver *s, uint64_t v)
{
    uint64_t t = VF_UNKNOWN;
    bool made = total_at(s->k, v, &t);
    struct probe p = {v, t, made && t != VF_UNKNOWN};
    if (made && t <= s->k->budget) {
        s->ok2 = s->ok, s->has_ok2 = s->has_ok;
        s->ok = p, s->has_ok = true;
    } else {
        s->bad2 = s->bad, s->has_bad2 = s->has_bad;
        s->bad = p, s->has_bad = true;
    }
}

/* The largest x with line(x) <= budget on the line through p and q, when it rises. */
static bool crossing(struct probe p, struct probe q, uint64_t budget, __int128 *x)
{
    if (!p.line || !q.line || p.v == q.v || p.t == q.t || (p.v < q.v) != (p.t < q.t))
        return false;
    __int128 dv = (__int128)q.v - p.v, dt = (__int128)q.t - p.t;
    if (dt < 0)
        dv = -dv, dt = -dt;
    __int128 num = ((__int128)budget - p.t) * dv, d = num / dt;
    if (num % dt && num < 0)
        d--; /* floor */
    *x = p.v + d;
    return true;
}

static unsigned bits(uint64_t n) /* ceil(log2(n + 1)): probes a bisection of n values needs */
{
    unsigned b = 0;
    while (b < 64 && (n >> b))
        b++;
    return b;
}

/* Where the line says the budget is crossed, both ends known ([l, h] undecided). */
static __int128 guess_between(const struct solver *s, uint64_t l, uint64_t h)
{
    uint64_t budget = s->k->budget;
    __int128 x;
    /* a flat stretch above (a block-rounded total): step down past it, doubling */
    if (s->has_bad2 && s->bad.line && s->bad.t == s->bad2.t)
        return (__int128)s->bad.v - 2 * (__int128)(s->bad2.v - s->bad.v);
    /* the line through the two nearest points above the budget: the total's last piece
     * (past vLLM's pool, past the generic engine's activation cap), unless the largest fit
     * lies well above it (then the total bends there; a little: whole blocks) */
    if (s->has_bad2 && crossing(s->bad, s->bad2, budget, &x) && x + 1 + (h - l) / 16 >= l)
        return x;
    /* a flat stretch below (vLLM's pool, a block-rounded total): the line from it does not
     * say where the next step up is; halve */
    if (s->has_ok2 && s->ok.line && s->ok.t == s->ok2.t)
        return l + (h - l) / 2;
    if (crossing(s->ok, s->bad, budget, &x))
        return x;
    return l + (h - l) / 2;
}

/* The next value to probe, in [l, h] (the values not decided yet). */
static uint64_t guess(struct solver *s, uint64_t l, uint64_t h)
{
    __int128 x;
    if (s->has_ok && s->has_bad) {
        x = guess_between(s, l, h);
    } else if (s->has_ok) {
        /* extrapolate up from the last two fits (the first time: twice the value asked);
         * flat: the top of the range; far from linear: doubling */
        if (!s->has_ok2 || s->up >= MAX_UP)
            x = h - s->ok.v > s->ok.v ? (__int128)s->ok.v * 2 : h;
        else if (!crossing(s->ok2, s->ok, s->k->budget, &x))
            x = h;
        s->up++;
    } else {
        x = l; /* nothing fits yet: the bottom gives the line with the value asked */
    }
    x = x < l ? l : x > h ? h : x;
    /* The line keeps landing next to a decided value (block-rounded totals): step away
     * from it, doubling, so a staircase costs O(log step) estimates. */
    unsigned c = (uint64_t)x == l && s->has_ok && l < h ? s->creep_lo++ : (s->creep_lo = 0);
    if (c)
        x = l + (((uint64_t)1 << (c < 40 ? c : 40)) - 1);
    c = (uint64_t)x == h && s->has_ok && s->has_bad && l < h ? s->creep_hi++ : (s->creep_hi = 0);
    if (c)
        x = (__int128)h - (((uint64_t)1 << (c < 40 ? c : 40)) - 1);
    x = x < l ? l : x > h ? h : x;
    if (!(s->has_ok && s->has_bad))
        return (uint64_t)x;
    /* Projection: both outcomes must leave no more values than the probes left can bisect,
     * so the whole search costs at most SLACK estimates more than a bisection. */
    if (!s->left)
        s->left = bits(h - l + 1) + SLACK;
    unsigned p = s->left--;
    uint64_t half = p >= 2 && p - 1 < 64 ? ((uint64_t)1 << (p - 1)) - 1 : p >= 2 ? UINT64_MAX : 0;
    if (h - l > half) {
        uint64_t lo_x = h - half, hi_x = l + half; /* x - l <= half, h - x <= half */
        x = x < lo_x ? lo_x : x > hi_x ? hi_x : x;
    }
    return (uint64_t)x;
}

/*
 * F-FIT-01: the largest v in [lo, hi] whose total fits the budget (lo - 1 when none), for a
 * total monotone in v, starting at `from` (the value asked). Every probe narrows the values
 * not decided yet, (largest fit, smallest non-fit); the guess is where the line through the
 * nearest totals crosses the budget, so a linear total is solved by two estimates and two
 * checks (the crossing fits, one more does not). The result does not depend on the guesses:
 * it is where fitting ends, the value a bisection finds.
 */
static uint64_t solve_max(struct knob *k, uint64_t lo, uint64_t from, uint64_t hi)
{
    struct solver s = {.k = k};
    if (hi < lo)
        return lo ? lo - 1 : 0;
    probe(&s, from < lo ? lo : from > hi ? hi : from);
    for (;;) {
        if (s.has_ok && s.ok.v == hi)
            return hi;
        if (s.has_bad && s.bad.v == lo)
            return lo ? lo - 1 : 0;
        uint64_t l = s.has_ok ? s.ok.v + 1 : lo, h = s.has_bad ? s.bad.v - 1 : hi;
        if (l > h)
            return s.ok.v;
        probe(&s, guess(&s, l, h));
    }
}

/* ------------------------------------------------------------------ fit */

/* F-FIT-01/02: the largest batch, and for image and video the largest size and frames. */
static void solve_diffusion(struct knob *k, const struct vf_estimate *e,
                            const struct vf_workload *w, struct vf_fit *out)
{
    k->kind = KNOB_BATCH;
    uint64_t b0 = e->diffusion.batch ? e->diffusion.batch : 1;
    out->max_batch = solve_max(k, 1, b0, 4096);
    if (w->task == VF_TASK_TRAIN || !e->diffusion.width || !e->diffusion.height)
        return;
    /* F-FIT-02: the largest size at the asked aspect, the most frames at the asked size;
     * quadratic in the area, so a galloping bisection */
    k->w.diffusion = e->diffusion;
    k->kind = KNOB_SIZE;
    uint64_t s =
        vf__gallop(1, e->diffusion.width / 16 ? e->diffusion.width / 16 : 1, 1024, fits_with, k);
    out->max_width = (uint32_t)(s * 16);
    out->max_height = (uint32_t)(s * 16 * e->diffusion.height / e->diffusion.width / 16 * 16);
    if (w->task == VF_TASK_VIDEO) {
        k->kind = KNOB_FRAMES;
        uint64_t f = vf__gallop(0, e->diffusion.frames / 4, 1024, fits_with, k);
        out->max_frames = fits_with(f, k) ? (uint32_t)(4 * f + 1) : 0;
    }
}

/* F-FIT-01: the largest context (training: sequence) at the asked users (batch), up to the
 * model's maximum; then the largest users (training: micro-batch) at the asked context. */
static void solve_llm(struct knob *k, const struct vf_estimate *e, const struct vf_workload *w,
                      struct vf_fit *out)
{
    const struct vf_model *m = k->m;
    uint64_t max_ctx = m->max_ctx_tokens && m->max_ctx_tokens != VF_UNKNOWN ? m->max_ctx_tokens
                                                                            : VF_MAX_CTX_TOKENS;
    if (e->ctx_tokens > max_ctx)
        max_ctx = e->ctx_tokens;
    k->kind = KNOB_CTX;
    out->max_ctx_tokens = solve_max(k, 1, e->ctx_tokens, max_ctx);
    k->w.ctx_tokens = e->ctx_tokens;

    if (w->task == VF_TASK_TRAIN) {
        k->has_base = false; /* the batch is no workload field the base records */
        k->kind = KNOB_BATCH;
        out->max_batch = solve_max(k, 1, e->train.batch ? e->train.batch : 1, 65536);
        return;
    }
    k->kind = KNOB_USERS;
    out->max_users = solve_max(k, 1, e->users, VF_MAX_USERS);
}

void vf__fit_budget(struct vf_fit *f, uint64_t total, uint64_t usable_bytes)
{
    f->usable_bytes = usable_bytes;
    f->fits = total <= usable_bytes;
    f->headroom_bytes = (int64_t)usable_bytes - (int64_t)total;
}

static enum vf_err fit_with(struct vf_arena *a, const struct vf_model *m,
                            const struct vf_workload *w, const char *gpu, uint64_t usable_bytes,
                            uint32_t count, bool solve, struct vf_fit *out, struct vf_estimate *ep,
                            struct vf_error *err)
{
    /* the caller reads the whole estimate only when it asked for it and for a solution
     * (pick's short cards); otherwise its totals are enough */
    bool full = ep && solve;
    struct vf_estimate local;
    if (!ep)
        ep = &local;
    memset(out, 0, sizeof *out);
    out->gpu = gpu;
    out->count = count ? count : 1;
    out->usable_bytes = usable_bytes;
    out->max_ctx_tokens = VF_UNKNOWN;
    out->max_users = VF_UNKNOWN;
    out->max_batch = VF_UNKNOWN;

    const struct vf_engine *eng = vf_engine_for(w, err);
    if (!eng)
        return err ? err->code : VF_EINVAL;
    const char *why = NULL;
    if (!eng->can_split(m, w, out->count, &why)) {
        out->why_not = why;
        out->fits = false;
        out->headroom_bytes = 0;
        return VF_OK;
    }

    struct knob k = {.a = m->memo->a, .m = m, .w = *w, .budget = usable_bytes};
    k.w.gpus = out->count;
    k.w.usable_bytes = usable_bytes;
    for (uint32_t g = 0; g < w->n_mix && g < VF_MAX_MIX; g++) /* F-FIT-08: the largest card */
        k.budget = w->mix_usable[g] > k.budget ? w->mix_usable[g] : k.budget;
    enum vf_err rc = estimate(a, m, &k.w, ep, !full, err);
    if (rc)
        return rc;
    const struct vf_estimate *e = ep;
    uint64_t need = need_of(e, &k.w, k.budget);
    vf__fit_budget(out, need, k.budget);
    if (k.w.n_mix && !(out->devs = vf_arena_alloc(a, sizeof *out->devs * k.w.n_mix)))
        return vf__errf(err, VF_ENOMEM, "fit: out of memory");
    for (uint32_t g = 0; g < k.w.n_mix && g < VF_MAX_MIX; g++) { /* issue 21: each device */
        struct vf_fit_dev *d = &out->devs[out->n_devs++];
        d->usable_bytes = k.w.mix_usable[g];
        d->bytes = dev_bytes(e, g, false);
        d->headroom_bytes = (int64_t)d->usable_bytes - (int64_t)d->bytes;
        if (d->bytes && out->headroom_bytes == d->headroom_bytes)
            out->usable_bytes = d->usable_bytes; /* the tightest device's card */
    }
    if (!solve)
        return VF_OK;
    k.has_base = true;
    k.base_ctx = k.w.ctx_tokens;
    k.base_users = k.w.users;
    k.base_total = need;
    if (w->task == VF_TASK_IMAGE || w->task == VF_TASK_VIDEO ||
        (w->task == VF_TASK_TRAIN && m->pipeline)) {
        k.has_base = false;
        solve_diffusion(&k, e, w, out);
    } else {
        solve_llm(&k, e, w, out);
    }
    return VF_OK;
}

/* fit_with on the memo's copy of m: the caller's when m already is one (pick), else a copy
 * and a memo of this call, with a scratch arena for the probes. */
static enum vf_err fit(struct vf_arena *a, const struct vf_model *m, const struct vf_workload *w,
                       const char *gpu, uint64_t usable_bytes, uint32_t count, bool solve,
                       struct vf_fit *out, struct vf_estimate *est, struct vf_error *err)
{
    if (m->memo && m->memo->owner == m)
        return fit_with(a, m, w, gpu, usable_bytes, count, solve, out, est, err);
    struct vf_arena *scratch = vf_arena_open(0);
    if (!scratch)
        return vf__errf(err, VF_ENOMEM, "fit: out of memory");
    struct vf_model mc = *m;
    struct vf__memo memo;
    vf__memo_attach(&memo, scratch, &mc);
    enum vf_err rc = fit_with(a, &mc, w, gpu, usable_bytes, count, solve, out, est, err);
    if (est)
        est->model.memo = m->memo; /* the estimate names the caller's model, not the copy */
    vf_arena_close(scratch);
    return rc;
}

/* Runs with spill (DESIGN section 8, issue 21): where the engine itself keeps layers on the CPU
 * to run on these cards, the answer is yes with the split; the slowdown is set by the caller,
 * which knows the card's bandwidth (F-SPD-17's offload model). pick keeps its own rule. */
enum vf_err vf_fit(struct vf_arena *a, const struct vf_model *m, const struct vf_workload *w,
                   const char *gpu, uint64_t usable_bytes, uint32_t count, struct vf_fit *out,
                   struct vf_error *err)
{
    struct vf_estimate *e = vf_arena_alloc(a, sizeof *e);
    if (!e)
        return vf__errf(err, VF_ENOMEM, "fit: out of memory");
    enum vf_err rc = fit(a, m, w, gpu, usable_bytes, count, true, out, e, err);
    if (rc || out->why_not || !e->spill.runs)
        return rc;
    out->fits = true;
    out->spill.on = true;
    out->spill.gpu_layers = e->spill.gpu_layers;
    out->spill.cpu_layers = e->spill.cpu_layers;
    out->spill.host_bytes = e->spill.host_bytes;
    return VF_OK;
}

enum vf_err vf__fit_check(struct vf_arena *a, const struct vf_model *m, const struct vf_workload *w,
                          const char *gpu, uint64_t usable_bytes, uint32_t count, bool solve,
                          struct vf_fit *out, struct vf_estimate *est, struct vf_error *err)
{
    return fit(a, m, w, gpu, usable_bytes, count, solve, out, est, err);
}
