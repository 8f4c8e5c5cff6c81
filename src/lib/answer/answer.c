/* SPDX-License-Identifier: Apache-2.0 */
/*
 * answer.c - the questions vramfit answers, as library calls: estimate, pick, explain and the
 * catalog search, each from a struct vf_workload that vf_workload_set filled. The CLI and the
 * HTTP server call these and the renderers; neither repeats the steps in between (the model,
 * its task and default engine, the card, the estimate, the fit).
 */
#include "internal.h"
#include "engine/runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <strings.h>

/* -------------------------------------------------------------------- cards */

/* The catalog card whose id, without dashes, appears in a device name such as
 * "NVIDIA GeForce RTX 4090"; the longest match wins. */
static const struct vf_gpu_spec *card_from_name(const struct vf_catalog *c, const char *name)
{
    char dev[128];
    size_t n = 0;
    for (const char *s = name; *s && n + 1 < sizeof dev; s++)
        if ((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9'))
            dev[n++] = *s;
        else if (*s >= 'A' && *s <= 'Z')
            dev[n++] = (char)(*s - 'A' + 'a');
    dev[n] = 0;
    const struct vf_gpu_spec *best = NULL;
    size_t best_len = 0;
    for (size_t i = 0; i < c->n_gpus; i++) {
        char id[64];
        size_t k = 0;
        for (const char *s = c->gpus[i].id; *s && k + 1 < sizeof id; s++)
            if (*s != '-')
                id[k++] = *s;
        id[k] = 0;
        if (k > best_len && strstr(dev, id)) {
            best = &c->gpus[i];
            best_len = k;
        }
    }
    return best;
}

/* --gpu local: the detected cards, each less what other processes use now. */
static enum vf_err card_local(struct vf_arena *a, const struct vf_catalog *c, bool count_given,
                              struct vf_card *out, struct vf_error *err)
{
    struct vf_gpu_snapshot snap;
    enum vf_err rc = vf_gpu_snapshot(a, &snap, err);
    if (rc)
        return rc;
    if (!count_given)
        out->count = (uint32_t)snap.n_devs;
    if (out->count > snap.n_devs)
        return vf__errf(err, VF_EUSAGE, "--gpu local: %u GPUs asked, %zu found", out->count,
                        snap.n_devs);
    /* the smallest free budget over the cards used */
    uint64_t budget = UINT64_MAX;
    for (uint32_t i = 0; i < out->count; i++) {
        const struct vf_gpu_dev *g = &snap.devs[i];
        const struct vf_gpu_spec *spec = card_from_name(c, g->name);
        uint64_t reserve =
            spec && spec->smi_bytes != VF_UNKNOWN && spec->smi_bytes > spec->usable_bytes
                ? spec->smi_bytes - spec->usable_bytes
                : VF_RT_DRIVER_RESERVE_BYTES;
        uint64_t usable = g->total_bytes > reserve ? g->total_bytes - reserve : 0;
        uint64_t free_now = usable > g->used_bytes ? usable - g->used_bytes : 0;
        if (free_now < budget) {
            budget = free_now;
            out->total_bytes = usable; /* issue 20: that card's CUDA total */
            out->dev = g;              /* issue 28: its processes */
        }
    }
    out->usable_bytes = budget;
    out->name = vf_arena_printf(a, "local GPU%s", out->count > 1 ? "s" : "");
    out->label = vf_arena_printf(a, "%s (free now)", snap.devs[0].name);
    out->note = "local: CUDA's total less what other processes use now";
    return out->name && out->label ? VF_OK : vf__errf(err, VF_ENOMEM, "out of memory");
}

/* Up to cap catalog cards whose id is within a third of ref's length (at least 2) edits of
 * ref, the nearest first; the count. */
static size_t near_cards(const struct vf_catalog *c, const char *ref,
                         const struct vf_gpu_spec **out, size_t cap)
{
    size_t len = strlen(ref), n = 0;
    unsigned limit = len / 3 > 2 ? (unsigned)(len / 3) : 2;
    for (unsigned d = 0; d <= limit && n < cap; d++)
        for (size_t i = 0; i < c->n_gpus && n < cap; i++)
            if (vf__edit_distance(ref, c->gpus[i].id) == d)
                out[n++] = &c->gpus[i];
    return n;
}

static enum vf_err card_one(struct vf_arena *a, const struct vf_catalog *c, const char *ref,
                            uint32_t gpus, struct vf_card *out, struct vf_error *err);

/* Issue 21 (DESIGN section 8): --gpu A,B, a mix of cards in one box, in device order: each item
 * a card as --gpu takes it (a catalog card, a size; CARD:N or NxCARD for N alike), expanded to
 * one entry per device. The label joins the cards ("RTX 4090 24 GB + RTX 3090 24 GB"); the
 * usable bytes are the smallest card's. gpus (--gpus), when given, must equal the devices. */
static enum vf_err card_mix(struct vf_arena *a, const struct vf_catalog *c, const char *ref,
                            uint32_t gpus, struct vf_card *out, struct vf_error *err)
{
    char *list = vf_arena_strdup(a, ref), *save = NULL;
    struct vf__sb lb;
    vf__sb_init(&lb, a);
    if (!list)
        return vf__errf(err, VF_ENOMEM, "out of memory");
    out->usable_bytes = UINT64_MAX;
    out->count = 0;
    for (char *item = strtok_r(list, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        uint64_t n = 1;
        char *x = item + strspn(item, "0123456789");
        if (x > item && (*x == 'x' || *x == 'X') && x[1]) { /* 2xa100-80gb-sxm */
            *x = 0;
            struct vf_error e = {0};
            if (vf_parse_count(item, &n, &e) || n == 0 || n > VF_MAX_MIX)
                return vf__errf(err, VF_EUSAGE, "--gpu %s: '%sx' must be 1 to %d cards", ref, item,
                                VF_MAX_MIX);
            item = x + 1;
        }
        if (!strncmp(item, "local", 5))
            return vf__errf(err, VF_EUSAGE, "--gpu %s: 'local' cannot be part of a mix", ref);
        struct vf_card one;
        enum vf_err rc = card_one(a, c, item, 0, &one, err);
        if (rc)
            return rc;
        n *= one.count;
        if (n > VF_MAX_MIX - out->count)
            return vf__errf(err, VF_EUSAGE, "--gpu %s: more than %d devices in a mix", ref,
                            VF_MAX_MIX);
        vf__sb_printf(&lb, "%s%s%s", lb.len ? " + " : "",
                      n > 1 ? vf_arena_printf(a, "%llux ", (unsigned long long)n) : "", one.label);
        for (uint64_t i = 0; i < n; i++)
            out->mix[out->count++] = (struct vf_card_dev){one.name, one.label, one.usable_bytes};
        if (one.usable_bytes < out->usable_bytes)
            out->usable_bytes = one.usable_bytes;
    }
    if (!out->count)
        return vf__errf(err, VF_EUSAGE, "--gpu %s: which cards? (rtx-4090,rtx-3090)", ref);
    if (gpus && gpus != out->count)
        return vf__errf(err, VF_EUSAGE, "--gpu %s names %u cards, --gpus %u", ref, out->count,
                        gpus);
    out->n_mix = out->count;
    out->name = ref;
    out->label = vf__sb_done(&lb);
    return out->label ? VF_OK : vf__errf(err, VF_ENOMEM, "out of memory");
}

enum vf_err vf_card_resolve(struct vf_arena *a, const struct vf_catalog *c, const char *ref,
                            uint32_t gpus, struct vf_card *out, struct vf_error *err)
{
    memset(out, 0, sizeof *out);
    if (strchr(ref, ','))
        return card_mix(a, c, ref, gpus, out, err);
    return card_one(a, c, ref, gpus, out, err);
}

static enum vf_err card_one(struct vf_arena *a, const struct vf_catalog *c, const char *ref,
                            uint32_t gpus, struct vf_card *out, struct vf_error *err)
{
    memset(out, 0, sizeof *out);
    out->count = gpus ? gpus : 1;
    char *name = vf_arena_strdup(a, ref);
    if (!name)
        return vf__errf(err, VF_ENOMEM, "out of memory");
    char *colon = strrchr(name, ':');
    if (colon) {
        uint64_t n;
        struct vf_error e = {0};
        if (vf_parse_count(colon + 1, &n, &e) || n == 0 || n > 4096)
            return vf__errf(err, VF_EUSAGE, "--gpu %s: the count after ':' must be 1 to 4096", ref);
        if (gpus && gpus != n)
            return vf__errf(err, VF_EUSAGE, "--gpu %s and --gpus %u disagree", ref, gpus);
        *colon = 0;
        out->count = (uint32_t)n;
    }
    if (!strcmp(name, "local"))
        return card_local(a, c, gpus || colon, out, err);
    /* a catalog card first ("4090" is a card), then a size with its unit ("23.65GiB") */
    const struct vf_gpu_spec *g = vf_catalog_gpu(c, name);
    uint64_t bytes;
    struct vf_error e = {0};
    if (!g && strpbrk(name, "KkMmGgTtBb") && !vf_parse_bytes(name, &bytes, &e)) {
        if (bytes < (64ULL << 20))
            return vf__errf(err, VF_EUSAGE, "--gpu %s: a card of less than 64 MiB?", ref);
        out->name = name;
        out->label = name;
        out->usable_bytes = bytes;
        return VF_OK;
    }
    if (!g) {
        const struct vf_gpu_spec *near[8];
        size_t n = vf_catalog_gpu_suggest(c, name, near, 8);
        char list[512] = "";
        for (size_t i = 0; i < n; i++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "",
                     near[i]->id);
        if (n)
            return vf__errf(err, VF_EINVAL, "ambiguous card '%s': %s", name, list);
        /* a typo: the catalog ids nearest by edit distance, the nearest first */
        n = near_cards(c, name, near, 3);
        for (size_t i = 0; i < n; i++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "",
                     near[i]->id);
        if (n)
            return vf__errf(err, VF_EINVAL,
                            "unknown card '%s' (did you mean %s? 'vramfit catalog gpus' lists "
                            "them; a size such as 23.65GiB or 24GB, or 'local', works too)",
                            name, list);
        return vf__errf(err, VF_EINVAL,
                        "unknown card '%s' (a catalog id such as rtx-4090, 'vramfit catalog "
                        "gpus' lists them; or a size such as 23.65GiB or 24GB; or 'local')",
                        name);
    }
    out->name = g->id;
    out->label = g->name;
    out->usable_bytes = g->usable_bytes;
    return VF_OK;
}

/* ------------------------------------------------------------------ answers */

/* An Ollama tag's weights: the quantization the tag names, else Q4_K_M, the quantization of
 * the Ollama library's default tags (ollama.com/library: "qwen3:32b" is the Q4_K_M file) for a
 * checkpoint of 16-bit weights; a checkpoint stored below 16 bits (gpt-oss's MXFP4) is shipped
 * as it is. --weights wins over the tag. Says which in w->model_note. */
static enum vf_err ollama_weights(struct vf_arena *a, struct vf_workload *w,
                                  const struct vf_model *m, const char *quant, struct vf_error *err)
{
    bool sixteen = m->native.kind == VF_QK_NATIVE ||
                   (m->native.kind == VF_QK_PLAIN && vf_dtype_bytes(m->native.dtype, 1024) >= 2048);
    const char *q = *quant ? quant : sixteen ? "Q4_K_M" : NULL;
    if (w->weights.kind != VF_QK_NATIVE || !q) {
        w->model_note =
            vf_arena_printf(a, "model %s: the Ollama tag '%s'%s", m->id, w->model,
                            w->weights.kind != VF_QK_NATIVE ? ", at the --weights given"
                                                            : ", at the checkpoint's own storage");
        return VF_OK;
    }
    enum vf_err rc = vf_quant_parse(q, &w->weights, err);
    if (rc)
        return rc;
    w->model_note = vf_arena_printf(a, "model %s at %s: the Ollama tag '%s'%s", m->id,
                                    w->weights.name, w->model,
                                    *quant ? ""
                                           : " (no quantization in the tag: the library's "
                                             "default tags are Q4_K_M)");
    return VF_OK;
}

/* The model, its task unless --task said one, and the engine its format implies. */
static enum vf_err resolve_model(struct vf_arena *a, const struct vf_catalog *c,
                                 struct vf_workload *w, struct vf_model *m, struct vf_error *err)
{
    if (!w->model || !*w->model)
        return vf__errf(err, VF_EUSAGE, "which model? (a catalog id such as llama-3.1-8b)");
    enum vf_err rc = vf_model_resolve(a, c, w->model, m, err);
    if (rc)
        return rc;
    if (!w->task_set)
        w->task = m->task;
    char quant[24];
    if (vf__ollama_tag(c, w->model, quant, sizeof quant) &&
        (rc = ollama_weights(a, w, m, quant, err)))
        return rc;
    /* DESIGN section 8: a GGUF file runs on llama.cpp unless --engine says otherwise */
    if (!w->engine && w->task == VF_TASK_INFER && m->n_tensors && m->tensors &&
        m->tensors[0].ggml_type >= 0 && vf_engine_find("llama.cpp"))
        w->engine = "llama.cpp";
    return VF_OK;
}

/* What the answer decided from the options' spellings, as assumptions (after the engine's). */
static enum vf_err note_flags(struct vf_arena *a, const struct vf_workload *w,
                              struct vf_estimate *e, struct vf_error *err)
{
    if (w->model_note)
        vf__assume(a, e, "%s", w->model_note);
    if (w->engine_by)
        vf__assume(a, e, "engine %s: selected by its own flag %s", w->engine, w->engine_by);
    if (w->llamacpp_total_ctx)
        vf__assume(a, e,
                   "context %llu tokens per sequence: llama.cpp's -c %llu is shared by %llu "
                   "slots (-np)",
                   (unsigned long long)w->ctx_tokens, (unsigned long long)w->llamacpp_total_ctx,
                   (unsigned long long)(w->users ? w->users : 1));
    if (e->incomplete)
        return vf__errf(err, VF_ELIMIT, "estimate of '%s': %s", e->model.id ? e->model.id : "?",
                        e->incomplete);
    return VF_OK;
}

/* The card's speed for an LLM (F-SPD-01..05), and for images, video, training and layers in
 * host memory (issue 24, F-SPD-10..17) with the fix-or-bigger-card choice; unknown for cards
 * not in the catalog. VF_ENOMEM only. */
static enum vf_err fit_speed(struct vf_arena *a, const struct vf_catalog *c,
                             const struct vf_model *m, struct vf_estimate *e,
                             const struct vf_workload *w, struct vf_fit *f, struct vf_error *err)
{
    memset(&f->speed, 0, sizeof f->speed);
    f->speed.why = "not a catalog card";
    struct vf_job_speed *job = vf_arena_alloc(a, sizeof *job);
    struct vf_speed_choice *ch = vf_arena_alloc(a, sizeof *ch);
    if (!job || !ch)
        return vf__errf(err, VF_ENOMEM, "estimate: out of memory");
    memset(job, 0, sizeof *job);
    memset(ch, 0, sizeof *ch);
    job->why = "not a catalog card";
    f->job = job;
    f->choice = ch;
    const struct vf_gpu_spec *g = NULL;
    for (size_t i = 0; c && f->gpu && i < c->n_gpus && !g; i++)
        if (!strcmp(c->gpus[i].id, f->gpu))
            g = &c->gpus[i];
    if (!g)
        return VF_OK;
    if (e->task == VF_TASK_INFER)
        vf__speed_of(m, w, e->engine, &e->weights, e->weights_bytes, e->kv_bytes_per_token,
                     e->ctx_tokens, g, f);
    /* with layers in host memory (a spill, -ngl, --n-cpu-moe) the LLM figures of f->speed are
     * scaled by the offload model (F-SPD-17), and a spill's slowdown is its (issue 21) */
    vf__job_speed(c, g, m, e, w, f->count, &f->speed, job);
    if (e->task == VF_TASK_INFER && f->spill.on)
        f->spill.slowdown = job->known ? job->slowdown : 0;
    if (job->known)
        vf__speed_note(a, m, e, w, job);
    double share = vf__power_share(g);
    if (share < 1 && (f->speed.known || job->known))
        vf__assume(a, e,
                   "speed: tensor work at %.2f of the boost clock: %.0f W for %u SMs at %.0f MHz "
                   "is below the RTX 4090's 1.40 W per SM-GHz, and the clock falls as the cube "
                   "root of the power that fits (F-SPD-07; derived, checked on one card's rows)",
                   share, g->tdp_w, g->sms, g->boost_mhz);
    enum vf_err rc = vf__speed_choice(a, c, m, w, g, f, ch);
    if (!rc)
        rc = vf__fix_lines_speed(a, g, m, w, e);
    if (rc)
        vf__errf(err, rc, "estimate: out of memory");
    return rc;
}

/* --gpu local, short: the process on the budget's card that frees enough by itself when
 * stopped (the smallest that does: the least work lost), named as smi names it. Its memory
 * comes back as free memory, which is the local budget (card_local). */
static void stop_to_fit(struct vf_arena *a, const struct vf_gpu_dev *d, struct vf_fit *f)
{
    if (f->fits || f->why_not || f->headroom_bytes >= 0)
        return;
    uint64_t short_by = (uint64_t)-f->headroom_bytes;
    const struct vf_gpu_proc *best = NULL;
    for (size_t i = 0; i < d->n_procs; i++) {
        const struct vf_gpu_proc *p = &d->procs[i];
        if (p->name && p->used_bytes != VF_UNKNOWN && p->used_bytes >= short_by &&
            (!best || p->used_bytes < best->used_bytes))
            best = p;
    }
    if (!best)
        return;
    f->stop_pid = best->local_pid ? best->local_pid : best->pid;
    f->stop_name = best->app ? vf_arena_printf(a, "%s, %s", best->app, best->name) : best->name;
    f->stop_bytes = best->used_bytes;
}

enum vf_err vf_answer_estimate(struct vf_arena *a, const struct vf_catalog *c,
                               struct vf_workload *w, struct vf_answer *out, struct vf_error *err)
{
    memset(out, 0, sizeof *out);
    enum vf_err rc = resolve_model(a, c, w, &out->model, err);
    if (rc)
        return rc;
    if (w->gpu) {
        if ((rc = vf_card_resolve(a, c, w->gpu, w->gpus_asked, &out->card, err)))
            return rc;
        w->gpus = out->card.count;
        w->n_mix = out->card.n_mix; /* issue 21: --gpu A,B */
        for (uint32_t i = 0; i < out->card.n_mix; i++)
            w->mix_usable[i] = out->card.mix[i].usable_bytes;
        w->usable_bytes = out->card.usable_bytes;
        w->card_total_bytes = out->card.total_bytes; /* issue 20 */
        out->has_fit = true;
    } else if (w->gpus_asked) {
        w->gpus = w->gpus_asked;
    }
    if ((rc = vf_estimate(a, &out->model, w, &out->est, err)))
        return rc;
    if ((rc = note_flags(a, w, &out->est, err)))
        return rc;
    if (out->has_fit && (rc = vf_fit(a, &out->model, w, out->card.name, out->card.usable_bytes,
                                     out->card.count, &out->fit, err)))
        return rc;
    for (uint32_t i = 0; out->has_fit && i < out->fit.n_devs && i < out->card.n_mix; i++)
        out->fit.devs[i].gpu = out->card.mix[i].name; /* issue 21: --gpu A,B */
    if (out->has_fit && (rc = fit_speed(a, c, &out->model, &out->est, w, &out->fit, err)))
        return rc;
    if (out->has_fit && out->card.dev)
        stop_to_fit(a, out->card.dev, &out->fit);
    out->yes = !out->has_fit || out->fit.fits;
    return VF_OK;
}

enum vf_err vf_answer_pick(struct vf_arena *a, const struct vf_catalog *c, struct vf_workload *w,
                           struct vf_answer *out, struct vf_error *err)
{
    memset(out, 0, sizeof *out);
    w->gpus = w->gpus_asked;
    enum vf_err rc = resolve_model(a, c, w, &out->model, err);
    if (!rc)
        rc = vf_estimate(a, &out->model, w, &out->est, err);
    if (!rc)
        rc = vf_pick(a, c, &out->model, w, &w->pick, &out->pick, err);
    if (!rc)
        rc = note_flags(a, w, &out->est, err);
    out->yes = !rc && (out->pick.n_rows || out->pick.n_other || out->pick.n_unpriced);
    return rc;
}

/* ------------------------------------------------------------------ explain */

/* 1 MiB reads: the scanner holds lines across feeds, so the chunk size is free. */
#define EXPLAIN_CHUNK ((size_t)1 << 20)

enum vf_err vf_answer_explain_scanned(struct vf_arena *a, const struct vf_catalog *c,
                                      struct vf_workload *w, struct vf_oom_scan *scan,
                                      struct vf_explain *out, struct vf_error *err)
{
    memset(out, 0, sizeof *out);
    if (w->gpus_asked)
        w->gpus = w->gpus_asked;
    const struct vf_oom_event *events = NULL;
    const struct vf_oom_context *ctx = NULL;
    size_t n_kept = 0;
    uint64_t n_total = 0;
    enum vf_err rc = vf_oom_scan_finish(scan, &events, &n_kept, &n_total, &ctx, err);
    if (rc)
        return rc;
    struct vf_oom_context *c2 = vf_arena_alloc(a, sizeof *c2);
    if (!c2)
        return vf__errf(err, VF_ENOMEM, "out of memory");
    memset(c2, 0, sizeof *c2);
    if (ctx)
        *c2 = *ctx;
    else
        c2->ctx_tokens = c2->batch = c2->first_step = c2->last_step = VF_UNKNOWN;
    if (w->model)
        c2->model = w->model;
    struct vf_explain_opts eo = {.tool = w->tool, .catalog = c, .workload = w};
    if (w->gpu) { /* issue 19: the card the job ran on (an unknown card is an error) */
        struct vf_card card;
        rc = vf_card_resolve(a, c, w->gpu, 1, &card, err);
        if (rc)
            return rc;
        eo.gpu_usable_bytes = card.usable_bytes;
        eo.gpu = vf_catalog_gpu(c, card.name);
    }
    return vf_explain(a, events, n_kept, n_total, c2, &eo, out, err);
}

enum vf_err vf_answer_explain(struct vf_arena *a, const struct vf_catalog *c, struct vf_workload *w,
                              enum vf_err (*read)(void *ud, char *buf, size_t cap, size_t *got,
                                                  struct vf_error *err),
                              void *ud, struct vf_explain *out, struct vf_error *err)
{
    memset(out, 0, sizeof *out);
    struct vf_oom_scan *scan = NULL;
    enum vf_err rc = vf_oom_scan_open(a, &scan, err);
    char *buf = rc ? NULL : vf__malloc(EXPLAIN_CHUNK);
    if (!rc && !buf)
        rc = vf__errf(err, VF_ENOMEM, "out of memory");
    size_t got;
    while (!rc && !(rc = read(ud, buf, EXPLAIN_CHUNK, &got, err)) && got)
        rc = vf_oom_scan_feed(scan, buf, got, err);
    vf__free(buf);
    if (rc)
        return rc;
    return vf_answer_explain_scanned(a, c, w, scan, out, err);
}

enum vf_err vf_answer_explain_fd(struct vf_arena *a, const struct vf_catalog *c,
                                 struct vf_workload *w, int fd, const char *name,
                                 struct vf_explain *out, struct vf_error *err)
{
    memset(out, 0, sizeof *out);
    struct vf_oom_scan *scan = NULL;
    off_t at = lseek(fd, 0, SEEK_CUR); /* stdin may have been read from before */
    uint64_t offset = at > 0 ? (uint64_t)at : 0;
    enum vf_err rc = vf_oom_scan_open(a, &scan, err);
    if (!rc)
        rc = vf_oom_scan_fd(scan, fd, &offset, name, err);
    if (rc)
        return rc;
    return vf_answer_explain_scanned(a, c, w, scan, out, err);
}

struct mem_source {
    const char *p;
    size_t left;
};

static enum vf_err mem_read(void *ud, char *buf, size_t cap, size_t *got, struct vf_error *err)
{
    (void)err;
    struct mem_source *m = ud;
    *got = m->left < cap ? m->left : cap;
    memcpy(buf, m->p, *got);
    m->p += *got;
    m->left -= *got;
    return VF_OK;
}

enum vf_err vf_answer_explain_text(struct vf_arena *a, const struct vf_catalog *c,
                                   struct vf_workload *w, const char *text, size_t len,
                                   struct vf_explain *out, struct vf_error *err)
{
    struct mem_source m = {text ? text : "", text ? len : 0};
    return vf_answer_explain(a, c, w, mem_read, &m, out, err);
}

/* ------------------------------------------------------------------ catalog */

/* Case-insensitive substring test; NULL haystacks never match. */
static bool contains(const char *hay, const char *needle)
{
    if (!hay)
        return false;
    size_t n = strlen(needle);
    for (const char *p = hay; *p; p++)
        if (!strncasecmp(p, needle, n))
            return true;
    return !n;
}

enum vf_err vf_catalog_search(struct vf_arena *a, const struct vf_catalog *c, const char *q,
                              struct vf_catalog *view, struct vf_error *err)
{
    *view = *c;
    if (!q)
        return VF_OK;
    struct vf_catalog_model *hits = vf_arena_alloc(a, (c->n_models + 1) * sizeof *hits);
    if (!hits)
        return vf__errf(err, VF_ENOMEM, "out of memory");
    view->n_models = 0;
    for (size_t i = 0; i < c->n_models; i++)
        if (contains(c->models[i].id, q) || contains(c->models[i].alias, q) ||
            contains(c->models[i].name, q))
            hits[view->n_models++] = c->models[i];
    view->models = hits;
    return VF_OK;
}
