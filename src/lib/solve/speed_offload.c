/* SPDX-License-Identifier: Apache-2.0 */
/* What running partly off the card costs, and the fix-or-bigger-card answer (issue 24,
 * docs/FORMULAS.md F-SPD-12, F-SPD-16, F-SPD-17): LLM layers on the CPU at the host's memory
 * bandwidth, the speed factor of a fix (the workload's seconds before over after), and the
 * offload that makes a workload fit a card next to the cheapest card where it fits. */
#include "internal.h"
#include "model/pipeline.h"

#include <string.h>

/* F-SPD-17: the host's memory bandwidth when not given: dual-channel DDR5-4800, 2 x 8 B x
 * 4800 MT/s = 76.8 GB/s (JEDEC JESD79-5 speed bin; a common desktop of 2024-25). */
#define HOST_GBPS_DEFAULT 76.8
/* F-SPD-17: the share of it llama.cpp's CPU layers read at while decoding; calibrated on the
 * public all-on-CPU rows (bench/accuracy-speed-kinds.py, kind offload). */
#ifndef ETA_HOST
#define ETA_HOST 0.60
#endif
/* F-SPD-17: llama.cpp copies a CPU layer's weights to the GPU for each micro-batch of a
 * prompt of at least 32 tokens (ggml-backend's op offload); its default -ub is 512. */
#define LLAMACPP_UBATCH 512.0
/* F-SPD-16: "a quick test on the bigger card costs 15 minutes of its price" (the guide). */
#define TEST_HOURS 0.25

double vf__host_bw(const struct vf_workload *w)
{
    return (w && w->host_gbps > 0 ? w->host_gbps : HOST_GBPS_DEFAULT) * ETA_HOST;
}

/* The cheapest EUR price per hour of one card, 0 when none is listed. */
double vf__card_eur_per_hour(const struct vf_catalog *c, const struct vf_gpu_spec *g)
{
    double best = 0;
    for (size_t i = 0; c && g && i < c->n_offers; i++) {
        const struct vf_offer *o = &c->offers[i];
        if (o->count != 1 || strcmp(o->currency, "EUR") || o->price_micro == VF_UNKNOWN ||
            strcmp(o->gpu_id, g->id))
            continue;
        double p = (double)o->price_micro / 1e6;
        if (best == 0 || p < best)
            best = p;
    }
    return best;
}

static void price(const struct vf_catalog *c, const struct vf_gpu_spec *g, uint32_t n,
                  struct vf_job_speed *s)
{
    s->eur_per_hour = vf__card_eur_per_hour(c, g) * (n ? n : 1);
    s->eur = s->known ? s->eur_per_hour * s->seconds / 3600.0 : 0;
}

/* F-SPD-17: llama.cpp (and Ollama) with layers in host memory: a decoded token reads the
 * GPU's layers at its bandwidth and the host's at the host's; a prompt copies the host
 * layers to the GPU once per micro-batch. The LLM figures of f->speed are scaled. */
static void llm_offload(const struct vf_gpu_spec *g, const struct vf_estimate *e,
                        const struct vf_workload *w, struct vf_fit *f)
{
    struct vf_speed *sp = &f->speed;
    struct vf_job_speed *j = &f->job;
    double host = (double)e->host_bytes, all = (double)e->weights_bytes;
    if (!sp->known || host <= 0 || all <= 0 || sp->decode_tps <= 0)
        return;
    if (host > all)
        host = all;
    double t_gpu = 1.0 / sp->decode_tps;
    double t = t_gpu * (1.0 - host / all) + host / (vf__host_bw(w) * 1e9);
    double p = w->in_tokens ? (double)w->in_tokens : 512.0;
    double ub = (double)(uint64_t)((p + LLAMACPP_UBATCH - 1) / LLAMACPP_UBATCH);
    double t_pp = p / sp->prefill_tps + ub * host / (vf__pcie_gbps(g) * 1e9 * VF_PCIE_TLP);
    *j = (struct vf_job_speed){.known = true, .result = "token", .prec = sp->prec};
    j->seconds = t;
    j->offload_s = t - t_gpu * (1.0 - host / all);
    j->compute_s = t - j->offload_s;
    j->slowdown = t / t_gpu;
    j->tokens_per_s = 1.0 / t;
    j->eta = ETA_HOST;
    j->lo = t * VF_SPEED_RANGE_LO;
    j->hi = t * VF_SPEED_RANGE_HI;
    double scale = t_gpu / t;
    sp->decode_tps *= scale;
    sp->decode_lo *= scale;
    sp->decode_hi *= scale;
    double pscale = (p / sp->prefill_tps) / t_pp;
    sp->prefill_tps *= pscale;
    sp->prefill_lo *= pscale;
    sp->prefill_hi *= pscale;
    sp->serving_tps *= scale;
    sp->serving_lo *= scale;
    sp->serving_hi *= scale;
}

void vf__job_speed(const struct vf_catalog *c, const struct vf_gpu_spec *g,
                   const struct vf_model *m, const struct vf_estimate *e,
                   const struct vf_workload *w, struct vf_fit *f)
{
    memset(&f->job, 0, sizeof f->job);
    f->job.why = "not modelled for this task";
    if (e->task == VF_TASK_IMAGE || e->task == VF_TASK_VIDEO)
        vf__speed_diffusion(g, m, e, w, f->count, &f->job);
    else if (e->task == VF_TASK_TRAIN)
        vf__speed_train(g, m, e, w, f->count, &f->job);
    else if (e->host_bytes && e->host_bytes != VF_UNKNOWN)
        llm_offload(g, e, w, f);
    price(c, g, f->count, &f->job);
}

/* F-SPD-16: the speed factor of a fix: the seconds per result of the workload as it was,
 * over the same with the fix's change (1 = no change, 0.3 = 3.3 x slower); 0 when either
 * cannot be computed (the card or the workload is not known well enough). */
double vf__fix_speed(const struct vf_gpu_spec *g, const struct vf_model *m,
                     const struct vf_workload *w0, const struct vf_estimate *e0,
                     const struct vf_workload *w1, const struct vf_estimate *e1)
{
    if (!g || !m || !e0 || !e1)
        return 0;
    struct vf_fit f0 = {.count = 1}, f1 = {.count = 1};
    vf__job_speed(NULL, g, m, e0, w0, &f0);
    vf__job_speed(NULL, g, m, e1, w1, &f1);
    if (!f0.job.known || !f1.job.known || f1.job.seconds <= 0)
        return 0;
    return f0.job.seconds / f1.job.seconds;
}

/* Whether w fits `usable` bytes, with its estimate in *e. */
static bool fits(struct vf_arena *a, const struct vf_model *m, struct vf_workload *w,
                 uint64_t usable, struct vf_estimate *e)
{
    struct vf_error err = {0};
    w->usable_bytes = usable;
    return !vf_estimate(a, m, w, e, &err) && e->total_bytes != VF_UNKNOWN &&
           e->total_bytes <= usable;
}

/* The offload of w's engine that makes it fit `usable`: ComfyUI's fewest swapped blocks,
 * else --lowvram; diffusers' model offload, else sequential. NULL when none does. */
static const char *offload_that_fits(struct vf_arena *a, const struct vf_model *m,
                                     struct vf_workload *x, uint64_t usable, struct vf_estimate *e)
{
    bool comfy = !x->engine || !strcmp(x->engine, "comfyui");
    if (comfy && m->pipeline && m->pipeline->task == VF_TASK_VIDEO) {
        uint32_t lo = 1, hi = m->pipeline->layers, found = 0;
        x->diffusion.offload = VF_DOFF_BLOCK_SWAP;
        while (lo <= hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            x->diffusion.block_swap = mid;
            if (fits(a, m, x, usable, e)) {
                found = mid;
                hi = mid - 1;
            } else {
                lo = mid + 1;
            }
        }
        if (found) {
            x->diffusion.block_swap = found;
            fits(a, m, x, usable, e);
            return vf_arena_printf(a, "--offload block-swap %u", found);
        }
    }
    x->diffusion.block_swap = 0;
    x->diffusion.offload = comfy ? VF_DOFF_LOWVRAM : VF_DOFF_MODEL_CPU;
    if (fits(a, m, x, usable, e))
        return comfy ? "--offload lowvram" : "--offload model-cpu";
    x->diffusion.offload = comfy ? VF_DOFF_NOVRAM : VF_DOFF_SEQUENTIAL;
    if (fits(a, m, x, usable, e))
        return comfy ? "--offload novram" : "--offload sequential";
    return NULL;
}

void vf__speed_choice(struct vf_arena *a, const struct vf_catalog *c, const struct vf_model *m,
                      const struct vf_workload *w, const struct vf_gpu_spec *g, struct vf_fit *f)
{
    memset(&f->choice, 0, sizeof f->choice);
    if (f->fits || !m->pipeline || !g || w->diffusion.offload != VF_DOFF_NONE || f->count > 1)
        return;
    struct vf_workload x = *w;
    struct vf_estimate e;
    f->choice.flags = offload_that_fits(a, m, &x, f->usable_bytes, &e);
    if (f->choice.flags) {
        struct vf_fit t = {.count = 1};
        vf__job_speed(c, g, m, &e, &x, &t);
        f->choice.with = t.job;
    }
    double best = 0;
    for (size_t i = 0; c && i < c->n_gpus; i++) {
        const struct vf_gpu_spec *o = &c->gpus[i];
        double p = vf__card_eur_per_hour(c, o);
        if (p <= 0 || o->usable_bytes == VF_UNKNOWN || o->usable_bytes <= f->usable_bytes ||
            (best > 0 && p >= best))
            continue;
        struct vf_workload y = *w;
        if (!fits(a, m, &y, o->usable_bytes, &e))
            continue;
        struct vf_fit t = {.count = 1};
        vf__job_speed(c, o, m, &e, &y, &t);
        if (!t.job.known)
            continue;
        best = p;
        f->choice.other = o;
        f->choice.there = t.job;
        f->choice.test_eur = p * TEST_HOURS;
    }
}
