/*
 * fit.c - does a workload fit a card, and what is the most it could hold? One generic
 * bisection solver (F-FIT-01) over any monotone knob; estimators are monotone in context
 * and in concurrent sequences, so the largest value that fits is found in O(log n)
 * estimates. Every engine and the advice of later issues reuse it.
 */
#include "internal.h"

#include <string.h>

uint64_t vf_bisect(uint64_t lo, uint64_t hi, bool (*pred)(uint64_t v, void *ud), void *ud)
{
    if (hi < lo || !pred(lo, ud))
        return lo ? lo - 1 : 0;
    /* invariant: pred(lo) true; answer in [lo, hi] */
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo + 1) / 2;
        if (pred(mid, ud))
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* The largest v in [lo, hi] with pred(v), searching upward from `from` by doubling first:
 * answers near the asked value cost a few estimates instead of log2(hi). */
static uint64_t gallop(uint64_t lo, uint64_t from, uint64_t hi, bool (*pred)(uint64_t v, void *ud),
                       void *ud)
{
    if (from < lo)
        from = lo;
    if (from > hi)
        from = hi;
    if (!pred(from, ud))
        return vf_bisect(lo, from - 1 < lo ? lo : from - 1, pred, ud);
    uint64_t step = from > 1 ? from : 1, ok = from;
    while (ok < hi) {
        uint64_t next = hi - ok > step ? ok + step : hi;
        if (!pred(next, ud))
            return vf_bisect(ok, next - 1, pred, ud);
        ok = next;
        step *= 2;
    }
    return ok;
}

enum knob_kind { KNOB_CTX, KNOB_USERS, KNOB_BATCH, KNOB_SIZE, KNOB_FRAMES };

struct knob {
    struct vf_arena *a;
    const struct vf_model *m;
    struct vf_workload w;
    uint64_t budget;
    enum knob_kind kind;
};

static bool fits_with(uint64_t v, void *ud)
{
    struct knob *k = ud;
    struct vf_workload w = k->w;
    if (k->kind == KNOB_SIZE) { /* v steps of 16 px of width at the asked aspect */
        uint64_t wd = v * 16, ht = wd * k->w.diffusion.height / k->w.diffusion.width / 16 * 16;
        if (wd > 16384 || ht > 16384 || ht < 16)
            return false;
        w.diffusion.width = (uint32_t)wd;
        w.diffusion.height = (uint32_t)ht;
    } else if (k->kind == KNOB_FRAMES) { /* 4n + 1 frames (the video VAEs' form) */
        if (v > 1024)
            return false;
        w.diffusion.frames = (uint32_t)(4 * v + 1);
    } else if (k->kind == KNOB_CTX)
        w.ctx_tokens = v;
    else if (k->kind == KNOB_USERS)
        w.users = v;
    else if (w.task == VF_TASK_TRAIN && !k->m->pipeline)
        w.train.batch = (uint32_t)v;
    else
        w.train.batch = w.diffusion.batch = (uint32_t)v;
    struct vf_estimate e;
    if (vf_estimate(k->a, k->m, &w, &e, NULL))
        return false;
    return e.total_bytes <= k->budget;
}

static enum vf_err fit(struct vf_arena *a, const struct vf_model *m, const struct vf_workload *w,
                       const char *gpu, uint64_t usable_bytes, uint32_t count, bool solve,
                       struct vf_fit *out, struct vf_estimate *est, struct vf_error *err)
{
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

    struct knob k = {a, m, *w, usable_bytes, KNOB_CTX};
    k.w.gpus = out->count;
    k.w.usable_bytes = usable_bytes;
    struct vf_estimate local = {0};
    struct vf_estimate *ep = est ? est : &local;
    enum vf_err rc = vf_estimate(a, m, &k.w, ep, err);
    if (rc)
        return rc;
    const struct vf_estimate e = *ep;
    out->fits = e.total_bytes <= usable_bytes;
    out->headroom_bytes = (int64_t)usable_bytes - (int64_t)e.total_bytes;
    if (!solve)
        return VF_OK;

    /* F-FIT-01: image/video: the largest batch; nothing else is a simple knob */
    if (w->task == VF_TASK_IMAGE || w->task == VF_TASK_VIDEO ||
        (w->task == VF_TASK_TRAIN && m->pipeline)) {
        k.kind = KNOB_BATCH;
        uint64_t b0 = e.diffusion.batch ? e.diffusion.batch : 1;
        out->max_batch = gallop(1, b0, 4096, fits_with, &k);
        if (w->task == VF_TASK_TRAIN || !e.diffusion.width || !e.diffusion.height)
            return VF_OK;
        /* F-FIT-02: the largest size at the asked aspect, the most frames at the asked size */
        k.w.diffusion = e.diffusion;
        k.kind = KNOB_SIZE;
        uint64_t s =
            gallop(1, e.diffusion.width / 16 ? e.diffusion.width / 16 : 1, 1024, fits_with, &k);
        out->max_width = (uint32_t)(s * 16);
        out->max_height = (uint32_t)(s * 16 * e.diffusion.height / e.diffusion.width / 16 * 16);
        if (w->task == VF_TASK_VIDEO) {
            k.kind = KNOB_FRAMES;
            uint64_t f = gallop(0, e.diffusion.frames / 4, 1024, fits_with, &k);
            out->max_frames = fits_with(f, &k) ? (uint32_t)(4 * f + 1) : 0;
        }
        return VF_OK;
    }

    /* F-FIT-01: the largest context (training: sequence) at the asked users (batch), up to
     * the model's maximum */
    uint64_t max_ctx = m->max_ctx_tokens && m->max_ctx_tokens != VF_UNKNOWN ? m->max_ctx_tokens
                                                                            : VF_MAX_CTX_TOKENS;
    if (e.ctx_tokens > max_ctx)
        max_ctx = e.ctx_tokens;
    k.kind = KNOB_CTX;
    out->max_ctx_tokens = gallop(1, e.ctx_tokens, max_ctx, fits_with, &k);
    k.w.ctx_tokens = e.ctx_tokens;

    if (w->task == VF_TASK_TRAIN) {
        /* the largest micro-batch at the asked sequence */
        k.kind = KNOB_BATCH;
        out->max_batch = gallop(1, e.train.batch ? e.train.batch : 1, 65536, fits_with, &k);
        return VF_OK;
    }
    /* F-FIT-01: the largest number of concurrent sequences at the asked context */
    k.kind = KNOB_USERS;
    out->max_users = gallop(1, e.users, VF_MAX_USERS, fits_with, &k);
    return VF_OK;
}

enum vf_err vf_fit(struct vf_arena *a, const struct vf_model *m, const struct vf_workload *w,
                   const char *gpu, uint64_t usable_bytes, uint32_t count, struct vf_fit *out,
                   struct vf_error *err)
{
    return fit(a, m, w, gpu, usable_bytes, count, true, out, NULL, err);
}

enum vf_err vf__fit_check(struct vf_arena *a, const struct vf_model *m, const struct vf_workload *w,
                          const char *gpu, uint64_t usable_bytes, uint32_t count, bool solve,
                          struct vf_fit *out, struct vf_estimate *est, struct vf_error *err)
{
    return fit(a, m, w, gpu, usable_bytes, count, solve, out, est, err);
}
