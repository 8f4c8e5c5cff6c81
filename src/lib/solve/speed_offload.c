/* SPDX-License-Identifier: Apache-2.0 */
/* What running partly off the card costs, and the fix-or-bigger-card answer (issue 24,
 * docs/FORMULAS.md F-SPD-12, F-SPD-16, F-SPD-17): LLM layers on the CPU at the host's memory
 * bandwidth, the speed factor of a fix (the workload's seconds before over after), and the
 * offload that makes a workload fit a card next to the cheapest card where it fits. */
#include "internal.h"
#include "model/pipeline.h"

#include <stdio.h>
#include <string.h>

/* F-SPD-17: the host's memory bandwidth when not given: dual-channel DDR5-4800, 2 x 8 B x
 * 4800 MT/s = 76.8 GB/s (JEDEC JESD79-5 speed bin; a common desktop of 2024-25). */
#define HOST_GBPS_DEFAULT 76.8
/* F-SPD-17: the share of it llama.cpp's CPU layers read at while decoding; calibrated on the
 * public all-on-CPU rows (bench/accuracy-speed-kinds.py, kind offload). */
#ifndef ETA_HOST
#define ETA_HOST 0.54
#endif
/* F-SPD-17: llama.cpp's default micro-batch (-ub 512). A CPU layer's weights cross to the
 * GPU once for each micro-batch of at least OFFLOAD_MIN_BATCH tokens: ggml-backend.cpp's
 * scheduler (ggml_backend_sched_backend_id_from_cur, cause "1.off") hands an op whose weights
 * sit in a host buffer to a GPU whose offload_op agrees, and ggml-cuda.cu's
 * ggml_backend_cuda_device_offload_op agrees when get_op_batch_size(op) (the tokens: ne[1],
 * ne[2] of MUL_MAT_ID, 0 for GET_ROWS) is at least 32 (llama.cpp since the ggml-backend
 * scheduler, PR 4766, 2024-01; host buffers only since PR 11124, 2025-01; repacked CPU
 * weights are not made when a GPU is present since PR 12498, 2025-03). A smaller micro-batch
 * runs on the CPU. */
#define LLAMACPP_UBATCH   512.0
#define OFFLOAD_MIN_BATCH 32.0
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
    /* per token a price is noise: the LLM's cost is per 1M tokens (F-SPD-06) */
    s->eur = s->known && strcmp(s->result, "token") ? s->eur_per_hour * s->seconds / 3600.0 : 0;
}

/* F-SPD-17: the seconds a prompt of p tokens adds for `host` bytes of layers in host memory.
 * Each micro-batch of at least OFFLOAD_MIN_BATCH tokens copies them to the GPU over the slot;
 * a shorter one (a short prompt, or the tail of a long one) runs them on the CPU, read once
 * at the host's bandwidth as a decode step reads them: a floor, its FLOPs not modelled. */
static double prompt_host_s(const struct vf_gpu_spec *g, const struct vf_model *m,
                            const struct vf_workload *w, double host, double gpu_bw, double p)
{
    double full = (double)(uint64_t)(p / LLAMACPP_UBATCH), rest = p - full * LLAMACPP_UBATCH;
    double copies = full + (rest >= OFFLOAD_MIN_BATCH ? 1 : 0);
    double t = copies * host / (vf__pcie_gbps(g) * 1e9 * VF_PCIE_TLP);
    if (rest > 0 && rest < OFFLOAD_MIN_BATCH) {
        double read = host; /* rest tokens touch at most rest x k of the E experts */
        if (m->n_experts > m->n_experts_used && m->n_experts_used &&
            rest * m->n_experts_used < m->n_experts)
            read *= rest * m->n_experts_used / m->n_experts;
        double cpu = read / (vf__host_bw(w) * 1e9) - read / gpu_bw;
        t += cpu > 0 ? cpu : 0;
    }
    return t;
}

/* F-SPD-17: llama.cpp (and Ollama) with layers in host memory: a decoded token reads the
 * GPU's layers at its bandwidth and the host's at the host's; a prompt copies the host
 * layers to the GPU once per micro-batch. The LLM figures of f->speed are scaled. */
static void llm_offload(const struct vf_gpu_spec *g, const struct vf_model *m,
                        const struct vf_estimate *e, const struct vf_workload *w,
                        struct vf_speed *sp, struct vf_job_speed *j)
{
    /* the host's weights, less the token embedding llama.cpp always keeps there (one row
     * of it is read per token, not the table) */
    double host = 0, all = (double)e->weights_bytes;
    for (size_t i = 0; i < e->n_components; i++)
        if (e->components[i].device == VF_DEV_HOST &&
            !strcmp(e->components[i].name, "model_buffer"))
            host += (double)e->components[i].bytes;
    if (m->params && m->vocab && m->hidden)
        host -= (double)m->vocab * m->hidden * all / (double)m->params;
    if (!sp->known || host <= 0 || all <= 0 || sp->decode_tps <= 0 || !g->bandwidth_gbps)
        return;
    if (host > all)
        host = all;
    /* a token reads the routed experts only: k of E of the host's expert weights */
    double read = host;
    if (m->n_experts > m->n_experts_used && m->n_experts_used)
        read *= (double)m->n_experts_used / m->n_experts;
    double t_gpu = 1.0 / sp->decode_tps;
    double gpu_bw = g->bandwidth_gbps * 1e9 * (sp->eta_bw > 0 ? sp->eta_bw : 1.0);
    double moved = read / (vf__host_bw(w) * 1e9) - read / gpu_bw;
    double t = t_gpu + (moved > 0 ? moved : 0);
    /* the prompt and answer lengths vf__speed_of took (F-SPD-03's defaults) */
    uint64_t ctx = e->ctx_tokens ? e->ctx_tokens : 4096;
    double p = w->in_tokens ? (double)w->in_tokens : (double)(ctx < 4096 ? ctx : 4096);
    double o = w->out_tokens ? (double)w->out_tokens : 512.0;
    double b = sp->batch ? (double)sp->batch : 1.0;
    double t_pp = p / sp->prefill_tps + prompt_host_s(g, m, w, host, gpu_bw, p);
    *j = (struct vf_job_speed){.known = true, .result = "token", .prec = sp->prec};
    j->seconds = t;
    j->offload_s = read / (vf__host_bw(w) * 1e9);
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
    /* serving: b prompts, then o steps of b sequences: each step reads the host's layers
     * once for the batch, the prompts copy them per micro-batch of their b x p tokens */
    if (sp->serving_tps > 0) {
        double t_old = b * o / sp->serving_tps;
        double t_new = t_old + o * (t - t_gpu) + prompt_host_s(g, m, w, host, gpu_bw, b * p);
        double sscale = t_old / t_new;
        sp->serving_tps *= sscale;
        sp->serving_lo *= sscale;
        sp->serving_hi *= sscale;
    }
}

void vf__job_speed(const struct vf_catalog *c, const struct vf_gpu_spec *g,
                   const struct vf_model *m, const struct vf_estimate *e,
                   const struct vf_workload *w, uint32_t n, struct vf_speed *sp,
                   struct vf_job_speed *out)
{
    memset(out, 0, sizeof *out);
    out->why = "not modelled for this task";
    if (e->task == VF_TASK_IMAGE || e->task == VF_TASK_VIDEO)
        vf__speed_diffusion(g, m, e, w, n, out);
    else if (e->task == VF_TASK_TRAIN)
        vf__speed_train(g, m, e, w, n, out);
    else if (sp && e->host_bytes && e->host_bytes != VF_UNKNOWN)
        llm_offload(g, m, e, w, sp, out);
    price(c, g, n, out);
}

/* Seconds per result of e on one card g: a job's, or an LLM's decoded token. */
static double seconds_of(const struct vf_gpu_spec *g, const struct vf_model *m,
                         const struct vf_estimate *e, const struct vf_workload *w)
{
    struct vf_fit f = {.count = 1, .fits = true, .max_users = 1};
    struct vf_job_speed j;
    if (e->task == VF_TASK_INFER) {
        vf__speed_of(m, w, e->engine, &e->weights, e->weights_bytes, e->kv_bytes_per_token,
                     e->ctx_tokens, g, &f);
        if (!f.speed.known || f.speed.decode_tps <= 0)
            return 0;
    }
    vf__job_speed(NULL, g, m, e, w, 1, &f.speed, &j);
    if (e->task == VF_TASK_INFER)
        return 1.0 / f.speed.decode_tps;
    return j.known ? j.seconds : 0;
}

/* The catalog card of a log: the one named, else the one whose CUDA total is closest to the
 * total the message gives (within 1 %). */
static const struct vf_gpu_spec *card_of(const struct vf_catalog *c, const char *name,
                                         uint64_t total)
{
    const struct vf_gpu_spec *best = NULL;
    double gap = 0.01;
    for (size_t i = 0; c && i < c->n_gpus; i++) {
        const struct vf_gpu_spec *g = &c->gpus[i];
        if (name && !strcmp(g->id, name))
            return g;
        if (total == VF_UNKNOWN || !total || g->usable_bytes == VF_UNKNOWN)
            continue;
        double d = (double)g->usable_bytes / (double)total - 1.0;
        d = d < 0 ? -d : d;
        if (d < gap) {
            gap = d;
            best = g;
        }
    }
    return best;
}

double vf__fix_speed(struct vf_arena *a, const struct vf_catalog *c, const char *gpu,
                     uint64_t total, const struct vf_model *m, const struct vf_workload *w0,
                     const struct vf_estimate *e0, const struct vf_workload *w1)
{
    const struct vf_gpu_spec *g = card_of(c, gpu, total);
    struct vf_estimate e1;
    struct vf_error err = {0};
    if (!g || !m || !e0 || vf_estimate(a, m, w1, &e1, &err))
        return 0; /* the fix then says no factor; its saving reports the failed estimate */
    double t0 = seconds_of(g, m, e0, w0), t1 = seconds_of(g, m, &e1, w1);
    return t0 > 0 && t1 > 0 ? t0 / t1 : 0;
}

/* Whether w fits `usable` bytes, with its estimate in *e. */
static bool fits(struct vf_arena *a, const struct vf_model *m, struct vf_workload *w,
                 uint64_t usable, struct vf_estimate *e, enum vf_err *rc)
{
    struct vf_error err = {0};
    w->usable_bytes = usable;
    enum vf_err r = vf_estimate(a, m, w, e, &err);
    if (r == VF_ENOMEM)
        *rc = r; /* out of memory is the answer's error, not "does not fit" */
    return !r && e->total_bytes != VF_UNKNOWN && e->total_bytes <= usable;
}

/* The offload of w's engine that makes it fit `usable`: ComfyUI's fewest swapped blocks,
 * else --lowvram; diffusers' model offload, else sequential. NULL when none does. */
static const char *offload_that_fits(struct vf_arena *a, const struct vf_model *m,
                                     struct vf_workload *x, uint64_t usable, struct vf_estimate *e,
                                     enum vf_err *rc)
{
    bool comfy = !x->engine || !strcmp(x->engine, "comfyui");
    if (comfy && m->pipeline && m->pipeline->task == VF_TASK_VIDEO) {
        uint32_t lo = 1, hi = m->pipeline->layers, found = 0;
        x->diffusion.offload = VF_DOFF_BLOCK_SWAP;
        while (lo <= hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            x->diffusion.block_swap = mid;
            if (fits(a, m, x, usable, e, rc)) {
                found = mid;
                hi = mid - 1;
            } else {
                lo = mid + 1;
            }
        }
        if (found) {
            x->diffusion.block_swap = found;
            fits(a, m, x, usable, e, rc);
            return vf_arena_printf(a, "--offload block-swap %u", found);
        }
    }
    x->diffusion.block_swap = 0;
    x->diffusion.offload = comfy ? VF_DOFF_LOWVRAM : VF_DOFF_MODEL_CPU;
    if (fits(a, m, x, usable, e, rc))
        return comfy ? "--offload lowvram" : "--offload model-cpu";
    x->diffusion.offload = comfy ? VF_DOFF_NOVRAM : VF_DOFF_SEQUENTIAL;
    if (fits(a, m, x, usable, e, rc))
        return comfy ? "--offload novram" : "--offload sequential";
    return NULL;
}

enum vf_err vf__speed_choice(struct vf_arena *a, const struct vf_catalog *c,
                             const struct vf_model *m, const struct vf_workload *w,
                             const struct vf_gpu_spec *g, const struct vf_fit *f,
                             struct vf_speed_choice *ch)
{
    memset(ch, 0, sizeof *ch);
    if (f->fits || !m->pipeline || !g || w->diffusion.offload != VF_DOFF_NONE || f->count > 1)
        return VF_OK;
    struct vf_workload x = *w;
    struct vf_estimate e;
    enum vf_err rc = VF_OK;
    ch->flags = offload_that_fits(a, m, &x, f->usable_bytes, &e, &rc);
    if (ch->flags)
        vf__job_speed(c, g, m, &e, &x, 1, NULL, &ch->with);
    double best = 0;
    for (size_t i = 0; !rc && c && i < c->n_gpus; i++) {
        const struct vf_gpu_spec *o = &c->gpus[i];
        double p = vf__card_eur_per_hour(c, o);
        if (p <= 0 || o->usable_bytes == VF_UNKNOWN || o->usable_bytes <= f->usable_bytes ||
            (best > 0 && p >= best))
            continue;
        struct vf_workload y = *w;
        if (!fits(a, m, &y, o->usable_bytes, &e, &rc))
            continue;
        vf__job_speed(c, o, m, &e, &y, 1, NULL, &ch->there);
        if (!ch->there.known)
            continue;
        best = p;
        ch->other = o;
        ch->test_eur = p * TEST_HOURS;
    }
    return rc;
}

/* Applies the flags of a fix line ("--offload block-swap 15 --weights fp8: saves ...") to x;
 * false when a flag is not an option. */
static int apply_flags(struct vf_arena *a, const char *line, struct vf_workload *x, enum vf_err *rc)
{
    const char *colon = strstr(line, ": ");
    if (!colon || strncmp(line, "--", 2))
        return false;
    char *buf = vf_arena_printf(a, "%.*s", (int)(colon - line), line);
    if (!buf) {
        *rc = VF_ENOMEM;
        return false;
    }
    char *save = NULL;
    for (char *t = strtok_r(buf, " ", &save); t;) {
        char *v = strtok_r(NULL, " ", &save);
        char *next = v;
        if (v && !strncmp(v, "--", 2))
            v = NULL;
        else
            next = strtok_r(NULL, " ", &save);
        if (v && next && strncmp(next, "--", 2)) { /* a two-word value: "block-swap 15" */
            if (!(v = vf_arena_printf(a, "%s %s", v, next))) {
                *rc = VF_ENOMEM;
                return false;
            }
            next = strtok_r(NULL, " ", &save);
        }
        struct vf_error err = {0};
        if (vf_workload_set(x, t, v, &err))
            return false;
        t = next;
    }
    return true;
}

/* F-SPD-16: each of the engine's fix lines of an image, video or training estimate gets its
 * time on card g: the seconds per result with the fix over without. */
enum vf_err vf__fix_lines_speed(struct vf_arena *a, const struct vf_gpu_spec *g,
                                const struct vf_model *m, const struct vf_workload *w,
                                struct vf_estimate *e)
{
    if (!g || e->task == VF_TASK_INFER)
        return VF_OK;
    double t0 = seconds_of(g, m, e, w);
    for (size_t i = 0; t0 > 0 && i < e->n_fixes; i++) {
        struct vf_workload x = *w;
        struct vf_estimate e1;
        struct vf_error err = {0};
        enum vf_err rc = VF_OK;
        int ok = apply_flags(a, e->fixes[i], &x, &rc);
        if (rc)
            return rc;
        if (ok && (rc = vf_estimate(a, m, &x, &e1, &err)) == VF_ENOMEM)
            return rc;
        if (!ok || rc)
            continue;
        double t1 = seconds_of(g, m, &e1, &x);
        if (t1 <= 0)
            continue;
        double f = t1 / t0;
        const char *line =
            f > 1.005
                ? vf_arena_printf(a, "%s; time: about %.2fx slower (F-SPD-16)", e->fixes[i], f)
            : f < 0.995
                ? vf_arena_printf(a, "%s; time: about %.2fx faster (F-SPD-16)", e->fixes[i], 1 / f)
                : vf_arena_printf(a, "%s; time: about the same (F-SPD-16)", e->fixes[i]);
        if (!line)
            return VF_ENOMEM;
        e->fixes[i] = line;
    }
    return VF_OK;
}

/* What a job's speed assumed, as an assumption of e (F-SPD-14, F-SPD-17). */
void vf__speed_note(struct vf_arena *a, const struct vf_model *m, struct vf_estimate *e,
                    const struct vf_workload *w, const struct vf_job_speed *j)
{
    if (e->task == VF_TASK_IMAGE || e->task == VF_TASK_VIDEO) {
        double gpu = j->compute_s - j->encdec_s + j->attn_s + j->comm_s + j->elem_s;
        vf__assume(a, e,
                   "speed: %u steps (--steps; the pipeline's default %u), linear layers at %.2f "
                   "of the 16-bit tensor rate (17 public image/video rows), attention at "
                   "FlashAttention-2's rate, VAE decode 9.4 M FLOPs a pixel, elementwise "
                   "kernels at the card's bandwidth (%s); %s (F-SPD-10..14, F-SPD-18)",
                   w->diffusion.steps ? w->diffusion.steps : m->pipeline->def_steps,
                   m->pipeline->def_steps, j->eta,
                   j->launch_s > 0 ? "eager PyTorch" : "torch.compile",
                   j->launch_s <= 0 ? "no launch floor modelled"
                   : j->launch_s > gpu
                       ? "here the steps wait for eager PyTorch's kernel launches, 2.7 ms a "
                         "layer, a floor calibrated on 2 xDiT rows of one card (a guess)"
                       : "the GPU work is longer than eager PyTorch's kernel launches");
    } else if (e->task == VF_TASK_TRAIN)
        vf__assume(a, e,
                   "speed: matmuls at %.2f of the bf16 tensor rate, fitted on 4 torchtune rows "
                   "of 2 cards (few; F-SPD-15)",
                   j->eta);
    else
        vf__assume(a, e,
                   "speed: the host's layers read at %.1f GB/s (--host-bandwidth, default "
                   "dual-channel DDR5-4800) x %.2f, a share fitted on one public row: a guess "
                   "(F-SPD-17)",
                   w->host_gbps > 0 ? w->host_gbps : HOST_GBPS_DEFAULT, ETA_HOST);
}
