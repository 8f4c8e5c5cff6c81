/* SPDX-License-Identifier: Apache-2.0 */
/*
 * train_fixes.c - the fix ladder of a training run (F-TRAIN-19 in docs/FORMULAS.md): with a
 * card given and the peak above it, each change of the guide's order applied alone and
 * estimated again (what it saves, the peak it leaves), then the fewest of them, in that
 * order, that fit together. Serves both training engines: a denoiser first caches what its
 * encoders compute, and trains at 512 px instead of halving the sequence.
 */
#include "est_train.h"

#include <string.h>

/* A fix: the change to the workload, and how to say it. */
struct fix {
    const char *flags; /* vramfit's flags for the change */
    const char *cost;
};

/* The knobs of x as a run, for the fixes: resolved for a language model; for a denoiser
 * (est_train_diffusion.c resolves its own) the knobs the fixes look at. */
static enum vf_err run_of(struct vf_arena *a, const struct vf_model *m, const struct vf_workload *x,
                          struct vf__train_run *r)
{
    if (!m->pipeline)
        return vf__train_resolve(a, m, x, r, NULL);
    vf__train_diffusion_run(m, x, r);
    return VF_OK;
}

/* F-TRAIN-19: fix i of the guide's order applied to x (run r); false when it does not
 * change this run. */
static bool apply_fix(struct vf_arena *a, int i, const struct vf__train_run *r,
                      struct vf_workload *x, struct fix *f)
{
    switch (i) {
    case 0:
        if (r->batch < 2)
            return false;
        x->train.batch = 1;
        x->diffusion.batch = x->diffusion.batch ? 1 : 0;
        x->train.grad_accum = (uint32_t)(r->batch * r->accum);
        f->flags = vf_arena_printf(a, "--batch 1 --grad-accum %llu",
                                   (unsigned long long)(r->batch * r->accum));
        f->cost = "same effective batch, more steps";
        return true;
    case 1:
        if (r->gc == VF_GC_FULL || r->gc == VF_GC_OFFLOAD)
            return false;
        x->train.grad_checkpointing = VF_GC_FULL;
        x->train.given |= VF_TK_GRAD_CKPT;
        f->flags = "--grad-checkpointing full";
        f->cost = "the forward pass runs twice";
        return true;
    case 2:
        if (r->liger)
            return false;
        x->train.liger = true;
        x->train.given |= VF_TK_LIGER;
        f->flags = "--liger";
        f->cost = "fused cross-entropy kernels (pip install liger-kernel), no quality cost";
        return true;
    case 3:
        if (r->prec != VF_PREC_FP32)
            return false;
        x->train.precision = VF_PREC_BF16;
        x->train.given |= VF_TK_PRECISION;
        f->flags = "--precision bf16";
        f->cost = "mixed precision, Ampere or newer";
        return true;
    case 4:
        if (r->opt != VF_OPT_ADAMW)
            return false;
        x->train.optimizer = VF_OPT_ADAMW8BIT;
        x->train.given |= VF_TK_OPTIMIZER;
        f->flags = "--optimizer adamw8bit";
        f->cost = "8-bit optimizer states, quality as AdamW in practice";
        return true;
    case 5:
        if (r->method != VF_TRAIN_FULL && r->method != VF_TRAIN_FREEZE)
            return false;
        x->train.method = VF_TRAIN_LORA;
        x->train.freeze_layers = 0;
        f->flags = "--method lora";
        f->cost = "trains adapters, not the model";
        return true;
    case 6:
        if (r->method == VF_TRAIN_QLORA)
            return false;
        x->train.method = VF_TRAIN_QLORA;
        x->train.freeze_layers = 0;
        x->weights.kind = VF_QK_NATIVE;
        f->flags = "--method qlora";
        f->cost = "4-bit base dequantized each pass, a small quality cost";
        return true;
    case 7:
        if (r->width) { /* a denoiser: train at 512 px first (our guide) */
            if (r->width <= 512 && r->height <= 512)
                return false;
            x->diffusion.width = x->diffusion.height = 512;
            f->flags = "--width 512 --height 512";
            f->cost = "a lower training resolution; finish at the full size";
            return true;
        }
        if (r->seq < 1024)
            return false;
        x->ctx_tokens = r->seq / 2;
        f->flags = vf_arena_printf(a, "--seq %llu", (unsigned long long)(r->seq / 2));
        f->cost = "longer examples are cut";
        return true;
    case 9:
        if (!r->width || x->train.cache_text)
            return false;
        x->train.cache_text = true;
        f->flags = "--cache-text-embeddings";
        f->cost = "encode the captions once before training; the encoders leave the GPU";
        return true;
    case 10:
        if (!r->width || x->train.cache_latents)
            return false;
        x->train.cache_latents = true;
        f->flags = "--cache-latents";
        f->cost = "encode the images once; no random crops or flips per epoch";
        return true;
    default:
        if (r->n >= VF_MAX_GPUS / 2 || r->offload != VF_OFFLOAD_NONE)
            return false;
        x->gpus = r->n * 2;
        x->train.zero = VF_ZERO_AUTO;
        x->train.fsdp = VF_FSDP_FULL_SHARD;
        f->flags = vf_arena_printf(a, "--gpus %u --fsdp full_shard", r->n * 2);
        f->cost = "more cards";
        return true;
    }
}

/* The guide's order; a denoiser first caches what its encoders compute (free). */
#define N_FIXES 11
static const int fix_order[N_FIXES] = {9, 10, 0, 1, 2, 3, 4, 5, 6, 7, 8};

/* The peak of x, VF_UNKNOWN when the estimator refuses it. */
static uint64_t peak_of(struct vf_arena *a, const struct vf_model *m, const struct vf_workload *x)
{
    struct vf_estimate y;
    memset(&y, 0, sizeof y);
    return vf__engine_pytorch.estimate(a, m, x, &y, NULL) ? VF_UNKNOWN : y.total_bytes;
}

/* The fixes used[] but used[skip] applied to w in order: their flags, and the peak in *peak
 * (NULL when one no longer applies or the estimator refuses the result). */
static const char *together(struct vf_arena *a, const struct vf_model *m,
                            const struct vf_workload *w, const int *used, int n_used, int skip,
                            uint64_t *peak)
{
    struct vf_workload x = *w;
    x.usable_bytes = 0;
    const char *flags = "";
    for (int j = 0; j < n_used; j++) {
        struct vf__train_run cur;
        struct fix f = {NULL, NULL};
        if (j == skip)
            continue;
        if (run_of(a, m, &x, &cur) || !apply_fix(a, used[j], &cur, &x, &f))
            return NULL;
        flags = vf_arena_printf(a, "%s%s%s", flags, *flags ? " " : "", f.flags);
    }
    *peak = peak_of(a, m, &x);
    return *peak == VF_UNKNOWN ? NULL : flags;
}

/* F-TRAIN-19: each fix of the guide's order that changes run r alone, with the memory it
 * saves and the peak it leaves. */
static void singles(struct vf_arena *a, const struct vf_model *m, const struct vf_workload *w,
                    const struct vf__train_run *r, struct vf_estimate *e)
{
    for (int k = 0; k < N_FIXES; k++) {
        struct vf_workload x = *w;
        x.usable_bytes = 0;
        struct fix f = {NULL, NULL};
        if (!apply_fix(a, fix_order[k], r, &x, &f))
            continue;
        vf__fix_saving(a, e, peak_of(a, m, &x), w->usable_bytes, f.flags, f.cost);
    }
}

/* F-TRAIN-19: the fixes that lower the peak, applied in order until it fits (into used[],
 * their count returned); the peak they leave in *peak. */
static int in_order(struct vf_arena *a, const struct vf_model *m, const struct vf_workload *w,
                    int *used, uint64_t *peak)
{
    int n_used = 0;
    struct vf_workload x = *w;
    x.usable_bytes = 0;
    for (int k = 0; k<N_FIXES && * peak> w->usable_bytes; k++) {
        struct vf__train_run cur;
        struct vf_workload before = x;
        struct fix f = {NULL, NULL};
        if (run_of(a, m, &x, &cur) || !apply_fix(a, fix_order[k], &cur, &x, &f))
            continue;
        uint64_t z = peak_of(a, m, &x);
        if (z == VF_UNKNOWN || z >= *peak) {
            x = before;
            continue;
        }
        *peak = z;
        used[n_used++] = fix_order[k];
    }
    return n_used;
}

/* F-TRAIN-19: together: in order until it fits, then without each one it fits without, the
 * costliest first: a fix the others make unnecessary is dropped. */
static void fewest(struct vf_arena *a, const struct vf_model *m, const struct vf_workload *w,
                   struct vf_estimate *e)
{
    char b2[32];
    int used[N_FIXES];
    uint64_t y = e->total_bytes;
    int n_used = in_order(a, m, w, used, &y);
    if (n_used < 2)
        return;
    if (y > w->usable_bytes) {
        vf_format_bytes(b2, sizeof b2, y, VF_FMT_IEC);
        vf__fix(a, e, "even all of these that lower the peak leave %s: a larger card", b2);
        return;
    }
    for (int j = n_used - 1; j >= 0 && n_used > 1; j--) {
        uint64_t z;
        const char *flags = together(a, m, w, used, n_used, j, &z);
        if (flags && z <= w->usable_bytes) {
            memmove(used + j, used + j + 1, (size_t)(n_used - j - 1) * sizeof used[0]);
            n_used--;
        }
    }
    const char *flags = together(a, m, w, used, n_used, -1, &y);
    if (flags) {
        vf_format_bytes(b2, sizeof b2, y, VF_FMT_IEC);
        vf__fix(a, e, "together: %s: peak %s (fits)", flags, b2);
    }
}

void vf__train_fixes(struct vf_arena *a, const struct vf_model *m, const struct vf_workload *w,
                     const struct vf__train_run *r, struct vf_estimate *e)
{
    if (!w->usable_bytes || w->usable_bytes == VF_UNKNOWN || e->total_bytes <= w->usable_bytes)
        return;
    singles(a, m, w, r, e);
    fewest(a, m, w, e);
}
