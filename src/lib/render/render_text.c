/* SPDX-License-Identifier: Apache-2.0 */
/*
 * render_text.c - what a person reads: the estimate breakdown with a bar chart against
 * the card, the ranked offers of pick, and the catalog listings. The voice is UX.md's: short,
 * every number explained, every fix typed out so it can be copied.
 */
#include "internal.h"
#include "render/render_json.h"

#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------ pieces */

#define BAR_WIDTH 36

/* A bar of `bytes` out of `scale` in BAR_WIDTH cells, with eighth-cell precision. */
static void bar(struct vf__sb *s, uint64_t bytes, uint64_t scale, bool ascii)
{
    static const char *const part[] = {"",       "\u258f", "\u258e", "\u258d",
                                       "\u258c", "\u258b", "\u258a", "\u2589"};
    uint64_t eighths = scale ? (uint64_t)((unsigned __int128)bytes * BAR_WIDTH * 8 / scale) : 0;
    if (eighths > BAR_WIDTH * 8)
        eighths = BAR_WIDTH * 8;
    if (bytes && !eighths)
        eighths = 1;
    unsigned full = (unsigned)(eighths / 8), rest = (unsigned)(eighths % 8);
    unsigned cells = 0;
    for (unsigned i = 0; i < full; i++, cells++)
        vf__sb_puts(s, ascii ? "#" : "\u2588");
    if (rest) {
        vf__sb_puts(s, ascii ? "#" : part[rest]);
        cells++;
    }
    for (; cells < BAR_WIDTH; cells++)
        vf__sb_putc(s, ' ');
}

static const char *label(const char *name)
{
    static const struct {
        const char *name, *label;
    } labels[] = {
        {"kv_cache", "KV cache"},
        {"runtime_overhead", "runtime overhead"},
        {"optimizer_states", "optimizer states"},
        {"master_weights", "master weights"},
        {"text_encoders", "text encoders"},
        {"vae", "VAE"},
        {"vae_decode", "VAE decode"},
        {"vae_upcast", "VAE upcast"},
        {"unet", "UNet"},
    };
    for (size_t i = 0; i < sizeof labels / sizeof labels[0]; i++)
        if (!strcmp(name, labels[i].name))
            return labels[i].label;
    return name;
}

static const char *params_text(char *buf, size_t cap, uint64_t p)
{
    if (p == VF_UNKNOWN || p == 0)
        snprintf(buf, cap, "? params");
    else if (p >= 995000000ULL) {
        uint64_t hundredths = (p + 5000000ULL) / 10000000ULL; /* rounded half up */
        snprintf(buf, cap, "%llu.%02llu B params", (unsigned long long)(hundredths / 100),
                 (unsigned long long)(hundredths % 100));
    } else if (p >= 1000000ULL) {
        snprintf(buf, cap, "%llu M params", (unsigned long long)((p + 500000) / 1000000));
    } else {
        snprintf(buf, cap, "%llu params", (unsigned long long)p);
    }
    return buf;
}

/* "Llama 3.1 8B Instruct · 8.03 B params (3.35 B active) · bf16 · generic" */
static void headline(struct vf__sb *s, const struct vf_estimate *e, const char *dot)
{
    char b1[48], b2[48];
    const struct vf_model *m = &e->model;
    vf__sb_printf(s, "%s %s %s", m->name ? m->name : m->id, dot,
                  params_text(b1, sizeof b1, m->params));
    if (m->params_active && m->params_active != m->params && m->params_active != VF_UNKNOWN)
        vf__sb_printf(s, " (%s active)", params_text(b2, sizeof b2, m->params_active));
    vf__sb_printf(s, " %s %s %s %s", dot, e->weights.name, dot, e->engine);
    if (e->task == VF_TASK_TRAIN) {
        const struct vf_train_opts *t = &e->train;
        vf__sb_printf(s, " %s %s fine-tune, %s", dot, vf_train_method_name(t->method),
                      vf_optimizer_name(t->optimizer));
        if (t->precision != VF_PREC_BF16)
            vf__sb_printf(s, ", %s", vf_precision_name(t->precision));
        if (m->pipeline)
            vf__sb_printf(s, ", %ux%u", e->diffusion.width, e->diffusion.height);
        else
            vf__sb_printf(s, ", seq %llu", (unsigned long long)e->ctx_tokens);
        vf__sb_printf(s, " x batch %u", t->batch);
        if (e->gpus > 1 || t->offload != VF_OFFLOAD_NONE)
            vf__sb_printf(s, ", ZeRO-%d", (int)t->zero - 1);
        if (t->offload != VF_OFFLOAD_NONE)
            vf__sb_printf(s, " + %s offload", vf_offload_name(t->offload));
    } else if (e->task == VF_TASK_IMAGE || e->task == VF_TASK_VIDEO)
        vf__sb_printf(s, " %s %ux%u", dot, e->diffusion.width, e->diffusion.height);
    if (e->task == VF_TASK_VIDEO)
        vf__sb_printf(s, " x %u frames", e->diffusion.frames);
}

static const char *component_note(const struct vf_estimate *e, const struct vf_component *c,
                                  char *buf, size_t cap)
{
    char b1[32], b2[32];
    /* the engines of issue 4 explain their own components */
    if (e->task != VF_TASK_INFER || (e->engine && strcmp(e->engine, "generic")))
        return c->note ? c->note : "";
    if (!strcmp(c->name, "kv_cache")) {
        snprintf(buf, cap, "%s tokens x %llu %s x %s/token (%s)",
                 vf_format_tokens(b1, sizeof b1, e->ctx_tokens), (unsigned long long)e->users,
                 e->users == 1 ? "user" : "users",
                 vf_format_bytes(b2, sizeof b2, e->kv_bytes_per_token, VF_FMT_IEC),
                 vf_dtype_name(e->kv_dtype));
        return buf;
    }
    if (!strcmp(c->name, "weights")) {
        snprintf(buf, cap, "%s, %s", e->weights.name,
                 c->note ? c->note : vf_provenance_name(e->model.provenance));
        return buf;
    }
    if (!strcmp(c->name, "activations"))
        return "peak of one prefill chunk";
    if (!strcmp(c->name, "runtime_overhead"))
        return "CUDA context, cuBLAS, allocator";
    return c->note ? c->note : "";
}

static unsigned percent(int64_t part, uint64_t whole)
{
    if (!whole)
        return 0;
    int64_t p = part < 0 ? -part : part;
    return (unsigned)(((unsigned __int128)p * 100 + whole / 2) / whole);
}

/* ---------------------------------------------------------------- estimate */

static const char *users_word(uint64_t users)
{
    return users == 1 ? "user" : "users";
}

/* "  KV cache             2.0 GiB": a label and a size in the two first columns of the
 * breakdown (a component's row, a total). */
static void size_cells(struct vf__sb *s, const char *name, uint64_t bytes)
{
    char b[48];
    vf__sb_printf(s, "  %-17s %11s", name, vf_format_bytes(b, sizeof b, bytes, VF_FMT_IEC));
}

/* One row per component of e held in host RAM (host) or on a GPU (!host), in e's order: the
 * label, the size, a bar against scale bytes, the note. Returns the number of rows. */
static size_t component_rows(struct vf__sb *s, const struct vf_estimate *e, bool host,
                             uint64_t scale, bool ascii)
{
    char note[160];
    size_t n = 0;
    for (size_t i = 0; i < e->n_components; i++) {
        const struct vf_component *c = &e->components[i];
        if ((c->device == VF_DEV_HOST) != host)
            continue;
        size_cells(s, label(c->name), c->bytes);
        vf__sb_printf(s, "  ");
        bar(s, c->bytes, scale, ascii);
        vf__sb_printf(s, "  %s\n", component_note(e, c, note, sizeof note));
        n++;
    }
    return n;
}

/* The line under the rows, as wide as a row without its note. */
static void rule(struct vf__sb *s, bool ascii)
{
    vf__sb_printf(s, "  ");
    for (int i = 0; i < 18 + 12 + 2 + BAR_WIDTH; i++)
        vf__sb_printf(s, "%s", ascii ? "-" : "\u2500");
    vf__sb_printf(s, "\n");
}

/* The breakdown: the GPU's components with bars against the larger of the total and the
 * card's usable bytes (fit may be NULL), their total, then those in host RAM (offload,
 * llama.cpp's CPU layers) with theirs. */
static void breakdown(struct vf__sb *s, const struct vf_estimate *e, const struct vf_fit *fit,
                      bool ascii)
{
    char b[48];
    uint64_t scale = e->total_bytes;
    if (fit && fit->usable_bytes > scale)
        scale = fit->usable_bytes;
    size_t n_gpu = component_rows(s, e, false, scale, ascii);
    rule(s, ascii);
    size_cells(s,
               fit && fit->n_devs ? "most loaded GPU"
               : e->gpus > 1      ? "total per GPU"
                                  : "total",
               e->total_bytes);
    if (fit && !fit->n_devs)
        vf__sb_printf(s, "  of %s usable",
                      vf_format_bytes(b, sizeof b, fit->usable_bytes, VF_FMT_IEC));
    vf__sb_printf(s, "\n");
    for (uint32_t i = 0; fit && i < fit->n_devs && i < VF_MAX_MIX; i++) { /* issue 21 */
        char label[24], u[48];
        snprintf(label, sizeof label, "GPU %u", i);
        size_cells(s, label, fit->devs[i].bytes);
        vf__sb_printf(s, "  of %s usable (%s)\n",
                      vf_format_bytes(u, sizeof u, fit->devs[i].usable_bytes, VF_FMT_IEC),
                      fit->devs[i].gpu ? fit->devs[i].gpu : "?");
    }
    if (n_gpu == e->n_components)
        return;
    vf__sb_printf(s, "\n  host RAM\n");
    component_rows(s, e, true, e->host_bytes ? e->host_bytes : 1, ascii);
    size_cells(s, "total host", e->host_bytes);
    vf__sb_printf(s, "\n");
}

/* The verdict on fit's card: it cannot run there (why), fits with what to spare (tight under
 * 10 %), or is short by how much. */
static void fit_verdict(struct vf__sb *s, const struct vf_fit *fit, bool ascii)
{
    char b[48];
    if (fit->why_not) {
        vf__sb_printf(s, "  %s cannot run on %u cards: %s\n", ascii ? "no:" : "\u2717", fit->count,
                      fit->why_not);
    } else if (fit->spill.on) { /* issue 21: the engine runs it with layers on the CPU */
        char sl[48] = "";
        if (fit->spill.slowdown > 0)
            snprintf(sl, sizeof sl, ", decode about %.1fx slower", fit->spill.slowdown);
        vf__sb_printf(s, "  %s runs with spill: %u of %u layers on the GPU, %s in host RAM%s\n",
                      ascii ? "warning:" : "\u26a0", fit->spill.gpu_layers,
                      fit->spill.gpu_layers + fit->spill.cpu_layers,
                      vf_format_bytes(b, sizeof b, fit->spill.host_bytes, VF_FMT_IEC), sl);
    } else if (fit->fits) {
        unsigned pc = percent(fit->headroom_bytes, fit->usable_bytes);
        vf__sb_printf(s, "  %s fits with %s to spare (%u %%)%s\n", ascii ? "ok:" : "\u2713",
                      vf_format_bytes(b, sizeof b, (uint64_t)fit->headroom_bytes, VF_FMT_IEC), pc,
                      pc < 10 ? " - tight" : "");
    } else {
        vf__sb_printf(s, "  %s does not fit: short by %s\n", ascii ? "no:" : "\u2717",
                      vf_format_bytes(b, sizeof b, (uint64_t)-fit->headroom_bytes, VF_FMT_IEC));
        if (fit->stop_pid) /* issue 28: --gpu local */
            vf__sb_printf(s, "  stop PID %u (%s, holding %s) and it fits\n", fit->stop_pid,
                          fit->stop_name ? fit->stop_name : "?",
                          vf_format_bytes(b, sizeof b, fit->stop_bytes, VF_FMT_IEC));
    }
}

/* Inference: the largest context at e's users, the most users at e's context. */
static void infer_limits(struct vf__sb *s, const struct vf_estimate *e, const struct vf_fit *fit)
{
    char b[48], b2[48];
    uint64_t max = e->model.max_ctx_tokens;
    bool full = false;
    if (fit->max_ctx_tokens == 0)
        vf__sb_printf(s, "  not even 1 token of context fits at %llu %s\n",
                      (unsigned long long)e->users, users_word(e->users));
    else if (!fit->fits && max && max != VF_UNKNOWN && e->ctx_tokens == max &&
             (full = fit->max_ctx_tokens < max)) /* issue 28: the full context does not fit */
        vf__sb_printf(s, "  fits up to %llu tokens at %llu %s (--ctx %llu); the full %s needs %s\n",
                      (unsigned long long)fit->max_ctx_tokens, (unsigned long long)e->users,
                      users_word(e->users), (unsigned long long)fit->max_ctx_tokens,
                      vf_format_tokens(b, sizeof b, max),
                      vf_format_bytes(b2, sizeof b2, e->total_bytes, VF_FMT_IEC));
    else
        vf__sb_printf(s, "  largest context at %llu %s: %s tokens (--ctx %llu)\n",
                      (unsigned long long)e->users, users_word(e->users),
                      vf_format_tokens(b, sizeof b, fit->max_ctx_tokens),
                      (unsigned long long)fit->max_ctx_tokens);
    if (fit->max_users)
        vf__sb_printf(s, "  largest number of users at %s tokens: %llu (--users %llu)\n",
                      vf_format_tokens(b, sizeof b, e->ctx_tokens),
                      (unsigned long long)fit->max_users, (unsigned long long)fit->max_users);
    else if (!full) /* the line above said it */
        vf__sb_printf(s, "  not even 1 user fits at %s tokens\n",
                      vf_format_tokens(b, sizeof b, e->ctx_tokens));
}

/* Training of a language model: the longest sequence at e's micro-batch, the largest
 * micro-batch at e's sequence. */
static void train_limits(struct vf__sb *s, const struct vf_estimate *e, const struct vf_fit *fit)
{
    if (fit->max_ctx_tokens)
        vf__sb_printf(s, "  longest sequence at batch %u: %llu tokens (--seq %llu)\n",
                      e->train.batch, (unsigned long long)fit->max_ctx_tokens,
                      (unsigned long long)fit->max_ctx_tokens);
    else
        vf__sb_printf(s, "  not even a 1-token sequence fits at batch %u\n", e->train.batch);
    if (fit->max_batch)
        vf__sb_printf(s, "  largest micro-batch at %llu tokens: %llu (--batch %llu)\n",
                      (unsigned long long)e->ctx_tokens, (unsigned long long)fit->max_batch,
                      (unsigned long long)fit->max_batch);
    else
        vf__sb_printf(s, "  not even a micro-batch of 1 fits at %llu tokens\n",
                      (unsigned long long)e->ctx_tokens);
}

/* What fit solved for e, each with the flag that sets it: context and users (inference),
 * sequence and micro-batch (training), batch, image size, frames. Nothing when the card
 * cannot run e at all. */
static void fit_limits(struct vf__sb *s, const struct vf_estimate *e, const struct vf_fit *fit)
{
    if (fit->why_not)
        return;
    if (e->task == VF_TASK_INFER)
        infer_limits(s, e, fit);
    else if (e->task == VF_TASK_TRAIN && !e->model.pipeline)
        train_limits(s, e, fit);
    else if (fit->max_batch != VF_UNKNOWN && fit->max_batch)
        vf__sb_printf(s, "  largest batch: %llu (--batch %llu)\n",
                      (unsigned long long)fit->max_batch, (unsigned long long)fit->max_batch);
    if (fit->max_width && e->task != VF_TASK_TRAIN)
        vf__sb_printf(s, "  largest size at this aspect: %ux%u (--width %u --height %u)\n",
                      fit->max_width, fit->max_height, fit->max_width, fit->max_height);
    if (fit->max_frames && e->task == VF_TASK_VIDEO)
        vf__sb_printf(s, "  most frames at %ux%u: %u (--frames %u)\n", e->diffusion.width,
                      e->diffusion.height, fit->max_frames, fit->max_frames);
}

/* The engine's own lines, its fixes (titled by whether e fits fit's card; fit may be NULL)
 * and e's assumptions. */
static void estimate_notes(struct vf__sb *s, const struct vf_estimate *e, const struct vf_fit *fit)
{
    if (e->n_lines) {
        vf__sb_printf(s, "\n%s would print:\n", e->engine);
        for (size_t i = 0; i < e->n_lines; i++)
            vf__sb_printf(s, "  %s\n", e->lines[i]);
    }
    if (e->n_fixes) {
        vf__sb_printf(s, "\n%s:\n",
                      fit && !fit->fits ? "To make it fit this card" : "Other settings that fit");
        for (size_t i = 0; i < e->n_fixes; i++)
            vf__sb_printf(s, "  %s\n", e->fixes[i]);
    }
    vf__sb_printf(s, "\nassumptions:\n");
    for (size_t i = 0; i < e->n_assumptions; i++)
        vf__sb_printf(s, "  - %s\n", e->assumptions[i]);
}

/* Tokens/s with their range (F-SPD-01..05). */
static void speed_text(struct vf__sb *s, const struct vf_speed *sp)
{
    vf__sb_printf(s,
                  "  speed: decode %.0f tokens/s per sequence (%.0f-%.0f) with %llu decoding, "
                  "prefill %.0f tokens/s (%.0f-%.0f), %.0f output tokens/s in all at %s\n",
                  sp->decode_tps, sp->decode_lo, sp->decode_hi, (unsigned long long)sp->batch,
                  sp->prefill_tps, sp->prefill_lo, sp->prefill_hi, sp->serving_tps, sp->prec);
}

char *vf_render_estimate_text(struct vf_arena *a, const struct vf_estimate *e,
                              const struct vf_fit *fit, const struct vf_render_opts *o)
{
    struct vf__sb s = {.a = a};
    bool ascii = o && o->ascii;
    const char *dot = ascii ? "-" : "\u00b7";
    char b[48];

    headline(&s, e, dot);
    if (fit && fit->n_devs) /* issue 21: --gpu A,B: the label names each card */
        vf__sb_printf(&s, " %s %s", dot, fit->gpu);
    else if (fit)
        vf__sb_printf(&s, " %s %u%s %s (%s usable)", dot, fit->count, ascii ? "x" : "\u00d7",
                      fit->gpu, vf_format_bytes(b, sizeof b, fit->usable_bytes, VF_FMT_IEC));
    vf__sb_printf(&s, "\n\n");
    breakdown(&s, e, fit, ascii);
    if (fit) {
        vf__sb_printf(&s, "\n");
        fit_verdict(&s, fit, ascii);
        fit_limits(&s, e, fit);
        if (fit->speed.known)
            speed_text(&s, &fit->speed);
        vf__job_speed_text(&s, fit, ascii); /* issue 24 */
    }
    estimate_notes(&s, e, fit);
    return vf__sb_done(&s);
}

/* -------------------------------------------------------------------- pick */

static const char *currency_sign(const char *cur)
{
    if (!strcmp(cur, "EUR"))
        return "\u20ac";
    if (!strcmp(cur, "USD"))
        return "$";
    return cur;
}

/* Per-minute billing: a job of `hours` costs ceil(hours x 60) minutes of the price. */
static uint64_t job_cost(const struct vf_offer *o, double hours)
{
    uint64_t units, per_unit;
    if (!strcmp(o->billing, "second")) {
        units = (uint64_t)(hours * 3600.0 + 0.999999);
        return (o->price_micro * units + 1800) / 3600;
    }
    if (!strcmp(o->billing, "minute")) {
        units = (uint64_t)(hours * 60.0 + 0.999999);
        per_unit = o->price_micro;
        return (per_unit * units + 30) / 60;
    }
    units = (uint64_t)(hours + 0.999999);
    return o->price_micro * units;
}

static void card_name(char *buf, size_t cap, const struct vf_pick_row *r, bool ascii)
{
    if (r->count > 1)
        snprintf(buf, cap, "%u%s %s", r->count, ascii ? "x" : "\u00d7", r->gpu->name);
    else
        snprintf(buf, cap, "%s", r->gpu->name);
}

/* The memory of all the cards of r together (saturating). */
static uint64_t row_memory(const struct vf_pick_row *r)
{
    return vf__sat_mul(r->gpu->usable_bytes, r->count);
}

/* Display width of a UTF-8 string (code points). */
static int width(const char *s)
{
    int w = 0;
    for (; *s; s++)
        w += ((unsigned char)*s & 0xC0) != 0x80;
    return w;
}

static void padded(struct vf__sb *s, const char *text, int w)
{
    vf__sb_printf(s, "%s", text);
    for (int i = width(text); i < w; i++)
        vf__sb_printf(s, " ");
}

static void right(struct vf__sb *s, const char *text, int w)
{
    for (int i = width(text); i < w; i++)
        vf__sb_printf(s, " ");
    vf__sb_printf(s, "%s", text);
}

/* The card column of a table: indent, then r's cards ("2x H100 SXM") padded to 24 columns. */
static void card_cell(struct vf__sb *s, const char *indent, const struct vf_pick_row *r, bool ascii)
{
    char name[96];
    card_name(name, sizeof name, r, ascii);
    vf__sb_printf(s, "%s", indent);
    padded(s, name, 24);
}

/* "Llama 3.1 8B · bf16 (15.0 GiB of weights) · vllm · 8k tokens · needs 20.1 GiB on one
 * card", then a blank line. */
static void pick_headline(struct vf__sb *s, const struct vf_estimate *e, const char *dot,
                          bool ascii)
{
    char b[64];
    const struct vf_model *m = &e->model;
    vf__sb_printf(s, "%s %s %s (%s of weights) %s %s %s ", m->name ? m->name : m->id, dot,
                  e->weights.name, vf_format_bytes(b, sizeof b, e->weights_bytes, VF_FMT_IEC), dot,
                  e->engine, dot);
    if (e->task == VF_TASK_TRAIN)
        vf__sb_printf(s, "%s fine-tune, seq %llu x batch %u", vf_train_method_name(e->train.method),
                      (unsigned long long)e->ctx_tokens, e->train.batch);
    else if (e->task == VF_TASK_IMAGE || e->task == VF_TASK_VIDEO)
        vf__sb_printf(s, "%ux%u", e->diffusion.width, e->diffusion.height);
    else
        vf__sb_printf(s, "%s tokens", vf_format_tokens(b, sizeof b, e->ctx_tokens));
    if (e->task == VF_TASK_VIDEO)
        vf__sb_printf(s, " x %u frames", e->diffusion.frames);
    if (e->task == VF_TASK_INFER && e->users > 1)
        vf__sb_printf(s, " %s %llu users", ascii ? "x" : "\u00d7", (unsigned long long)e->users);
    vf__sb_printf(s, " %s needs %s on one card\n\n", dot,
                  vf_format_bytes(b, sizeof b, e->total_bytes, VF_FMT_IEC));
}

/* The head of the offers' table: card, memory, headroom, the price per hour and per minute
 * in sign's currency, and per job when hours > 0. */
static void pick_table_head(struct vf__sb *s, const char *sign, double hours, bool cost,
                            const char *unit)
{
    char ph[32], pm[32];
    snprintf(ph, sizeof ph, "%s/hour", sign);
    snprintf(pm, sizeof pm, "%s/minute", sign);
    vf__sb_printf(s, "  ");
    padded(s, "card", 24);
    vf__sb_printf(s, " %10s %8s ", "memory", "headroom");
    right(s, ph, 10);
    vf__sb_printf(s, " ");
    right(s, pm, 10);
    if (hours > 0) {
        char pj[32];
        snprintf(pj, sizeof pj, "%s job", sign);
        vf__sb_printf(s, "  ");
        right(s, pj, 8);
    }
    if (cost) {
        char pt[32], ps[32];
        snprintf(pt, sizeof pt, "%s/%s", sign, unit ? unit : "1M tok");
        snprintf(ps, sizeof ps, "s/%s", unit ? unit : "");
        vf__sb_printf(s, " %9s ", unit ? ps : "out tok/s");
        right(s, pt, 10);
    }
    vf__sb_printf(s, "\n");
}

/* One ranked offer under pick_table_head: the cards, their memory, the headroom of one card,
 * the prices; rank 0 (the cheapest) and a tight fit (< 10 % headroom) marked; a price
 * converted from another currency with its original and the rate. */
static void pick_table_row(struct vf__sb *s, const struct vf_pick_row *r, size_t rank, double hours,
                           bool cost, bool ascii)
{
    char b1[64], b2[64], b3[64], hr[32];
    card_cell(s, "  ", r, ascii);
    unsigned pc = percent(r->fit.headroom_bytes, r->gpu->usable_bytes);
    snprintf(hr, sizeof hr, "%u %%", pc);
    vf__sb_printf(s, " %10s %8s %10s %10s",
                  vf_format_bytes(b1, sizeof b1, row_memory(r), VF_FMT_IEC), hr,
                  vf_format_price(b2, sizeof b2, r->offer->price_micro, 2),
                  vf_format_price(b3, sizeof b3, (r->offer->price_micro + 30) / 60, 4));
    if (hours > 0)
        vf__sb_printf(s, "  %8s", vf_format_price(b1, sizeof b1, job_cost(r->offer, hours), 2));
    if (cost && r->job && r->job->known && r->job->eur > 0) /* issue 24: per image/clip */
        vf__sb_printf(s, " %9.1f %10.4f", r->job->seconds, r->job->eur);
    else if (cost && r->cost_per_mtok > 0)
        vf__sb_printf(s, " %9.0f %10s", r->fit.speed.serving_tps,
                      vf_format_price(b1, sizeof b1, (uint64_t)(r->cost_per_mtok * 1e6 + 0.5), 2));
    else if (cost)
        vf__sb_printf(s, " %9s %10s", "?", "?");
    if (rank == 0)
        vf__sb_printf(s, "   %s cheapest %s%s", ascii ? "<-" : "\u2190",
                      !cost                     ? "that fits"
                      : r->job && r->job->known ? "per result"
                                                : "per token",
                      pc < 10 ? " (tight)" : "");
    else if (pc < 10)
        vf__sb_printf(s, "   (tight)");
    if (r->offer->derived) /* issue 28: a derived price, not a quote */
        vf__sb_printf(s, "%s%u %s single-card price", rank == 0 || pc < 10 ? "; " : "   ", r->count,
                      ascii ? "x" : "\u00d7");
    if (r->original)
        vf__sb_printf(s, "   %s %s/h %s at %s (%s)", r->original->currency,
                      vf_format_price(b1, sizeof b1, r->original->price_micro, 3),
                      r->original->kind, vf_format_price(b2, sizeof b2, r->fx_micro, 4),
                      r->original->provider);
    vf__sb_printf(s, "\n");
}

/* The ranked offers of p in its currency, cheapest first: all of them up to 13, else the
 * first 12 and how many more; or that none fits. */
static void pick_table(struct vf__sb *s, const struct vf_pick *p, double hours, const char *sign,
                       bool ascii)
{
    if (!p->n_rows) {
        vf__sb_printf(s, "  no offer in %s fits this workload\n", p->currency);
        return;
    }
    pick_table_head(s, sign, hours, p->rank_cost, p->cost_unit);
    for (size_t i = 0; i < p->n_rows; i++) {
        pick_table_row(s, &p->rows[i], i, hours, p->rank_cost, ascii);
        if (i >= 11 && p->n_rows > 13) {
            vf__sb_printf(s, "  ... %zu more (--json lists them all)\n", p->n_rows - i - 1);
            break;
        }
    }
}

/* What of the n components c no context or batch shrinks: weights, gradients, optimizer
 * states and master weights. */
static uint64_t fixed_bytes(const struct vf_component *c, size_t n)
{
    uint64_t sum = 0;
    for (size_t k = 0; k < n; k++)
        if (!strcmp(c[k].name, "weights") || !strcmp(c[k].name, "gradients") ||
            !strcmp(c[k].name, "optimizer_states") || !strcmp(c[k].name, "master_weights"))
            sum = vf__sat_add(sum, c[k].bytes);
    return sum;
}

/* The single changes that make e fit r's card, after " - fits with " and joined by ", or ":
 * the KV cache's dtype, the context (sequence), the first of the estimator's fixes that fits
 * alone (training, image, video: F-TRAIN-19, F-DIF-13), fewer users; when none does for a
 * language model, that not even the shortest context would. */
static void short_fixes(struct vf__sb *s, const struct vf_estimate *e, const struct vf_pick_row *r,
                        const char *dash)
{
    int n_fix = 0;
    char lead[32];
    snprintf(lead, sizeof lead, " %s fits with ", dash);
    if (r->kv_fix != VF_DT_DEFAULT && r->kv_fix_fits) {
        vf__sb_printf(s, " %s fits with --kv-dtype %s", dash, vf_dtype_name(r->kv_fix));
        n_fix++;
    }
    if (r->fit.max_ctx_tokens && r->fit.max_ctx_tokens != VF_UNKNOWN) {
        vf__sb_printf(s, "%s%s %llu", n_fix ? ", or " : lead,
                      e->task == VF_TASK_TRAIN ? "--seq" : "--ctx",
                      (unsigned long long)r->fit.max_ctx_tokens);
        n_fix++;
    }
    for (size_t k = 0; e->task != VF_TASK_INFER && k < r->est.n_fixes; k++) {
        const char *fx = r->est.fixes[k], *colon = strchr(fx, ':');
        if (colon && strstr(fx, "(fits)") && strncmp(fx, "together", 8)) {
            vf__sb_printf(s, "%s%.*s", n_fix ? ", or " : lead, (int)(colon - fx), fx);
            n_fix++;
            break;
        }
    }
    if (e->task == VF_TASK_INFER && e->users > 1 && r->fit.max_users) {
        vf__sb_printf(s, "%s--users %llu", n_fix ? ", or " : lead,
                      (unsigned long long)r->fit.max_users);
        n_fix++;
    }
    if (n_fix == 0 && (e->task == VF_TASK_INFER || e->task == VF_TASK_TRAIN))
        vf__sb_printf(s, " %s not even with a 1-token %s", dash,
                      e->task == VF_TASK_TRAIN ? "sequence" : "context");
}

/* "  RTX 4090: short by 3.1 GiB - fits with --ctx 12288, or --users 2": one card that does
 * not fit e, and what would make it fit; nothing would when what does not shrink alone
 * exceeds the card. */
static void short_card(struct vf__sb *s, const struct vf_estimate *e, const struct vf_pick_row *r,
                       bool ascii)
{
    const char *dash = ascii ? "-" : "\u2014";
    char name[96], b1[64], b2[64];
    card_name(name, sizeof name, r, ascii);
    vf__sb_printf(s, "  %s: short by %s", name,
                  vf_format_bytes(b1, sizeof b1, (uint64_t)-r->fit.headroom_bytes, VF_FMT_IEC));
    uint64_t wbytes = fixed_bytes(r->est.components, r->est.n_components);
    if (wbytes > r->gpu->usable_bytes)
        vf__sb_printf(s, " %s the weights%s alone are %s", dash,
                      e->task == VF_TASK_TRAIN ? ", gradients and optimizer states" : "",
                      vf_format_bytes(b2, sizeof b2, wbytes, VF_FMT_IEC));
    else
        short_fixes(s, e, r, dash);
    vf__offload_offer_text(s, r, ascii);
    vf__sb_printf(s, "\n");
}

/* With hours > 0: what a 15-minute trial costs on the first offer with more memory than the
 * cheapest (nothing when there is none). */
static void trial_line(struct vf__sb *s, const struct vf_pick *p, double hours, const char *sign,
                       bool ascii)
{
    char name[96], b[64];
    if (!p->n_rows || hours <= 0)
        return;
    uint64_t mem0 = row_memory(&p->rows[0]);
    for (size_t i = 1; i < p->n_rows; i++) {
        const struct vf_pick_row *r = &p->rows[i];
        if (row_memory(r) > mem0) {
            card_name(name, sizeof name, r, ascii);
            vf__sb_printf(s, "  a 15-minute trial on %s costs %s%s\n", name, sign,
                          vf_format_price(b, sizeof b, job_cost(r->offer, 0.25), 2));
            return;
        }
    }
}

/* With low-bit weights (p->low_bits): the cheapest offer that holds e at p's better weights
 * and its extra price per hour over the cheapest, with the guide's rule; or that none does. */
static void move_up(struct vf__sb *s, const struct vf_estimate *e, const struct vf_pick *p,
                    const char *sign, bool ascii)
{
    char name[96], b1[64], b2[64];
    if (!p->low_bits)
        return;
    const struct vf_pick_row *u = p->upgrade;
    if (!u) {
        vf__sb_printf(s,
                      "\n  %u-bit weights (%s) cost quality, but no offer in %s holds %s "
                      "weights for this workload.\n",
                      vf_quant_bits(&e->weights), e->weights.name, p->currency,
                      p->upgrade_quant.name);
        return;
    }
    card_name(name, sizeof name, u, ascii);
    vf__sb_printf(s, "\n  %u-bit weights (%s) cost quality. With %s weights it fits %s at %s%s/h",
                  vf_quant_bits(&e->weights), e->weights.name, p->upgrade_quant.name, name, sign,
                  vf_format_price(b1, sizeof b1, u->offer->price_micro, 2));
    if (p->n_rows && u->offer->price_micro >= p->rows[0].offer->price_micro)
        vf__sb_printf(s, " (+%s%s/h)", sign,
                      vf_format_price(b2, sizeof b2,
                                      u->offer->price_micro - p->rows[0].offer->price_micro, 2));
    vf__sb_printf(s, ":\n  our guide's rule is to move up a size when a fix costs quality, "
                     "speed or more of your time than the price difference.\n");
}

/* Offers that fit but are priced in another currency than p's (not ranked against it): the
 * cheapest of each card and count, five at most, then how many more. */
static void other_currencies(struct vf__sb *s, const struct vf_pick *p, bool ascii)
{
    char b[64];
    if (!p->n_other)
        return;
    vf__sb_printf(s, "\n  also fitting, priced in other currencies (not ranked against %s):\n",
                  p->currency);
    size_t shown = 0;
    for (size_t i = 0; i < p->n_other && shown < 5; i++) {
        const struct vf_pick_row *r = &p->other[i];
        bool dup = false; /* the cheapest offer of a card and count is enough here */
        for (size_t j = 0; j < i && !dup; j++)
            dup = p->other[j].gpu == r->gpu && p->other[j].count == r->count;
        if (dup)
            continue;
        card_cell(s, "    ", r, ascii);
        vf__sb_printf(s, " %s %s/h %s (%s, %s)\n", r->offer->currency,
                      vf_format_price(b, sizeof b, r->offer->price_micro, 3), r->offer->kind,
                      r->offer->provider, r->offer->as_of);
        shown++;
    }
    if (p->n_other > shown)
        vf__sb_printf(s, "    ... %zu more offers (--json lists them all)\n", p->n_other - shown);
}

/* The end of pick's text: the cards that fit without a price, the offers left out and why,
 * and what the headroom and the prices mean. */
static void pick_notes(struct vf__sb *s, const struct vf_estimate *e, const struct vf_pick *p)
{
    if (p->n_unpriced) {
        vf__sb_printf(s, "\n  also fitting, no price in the catalog:");
        for (size_t i = 0; i < p->n_unpriced; i++)
            vf__sb_printf(s, "%s %s", i ? "," : "", p->unpriced[i].gpu->name);
        vf__sb_printf(s, "\n");
    }
    if (p->n_skipped)
        vf__sb_printf(s, "\n  left out %zu offers: %s (%s weights)\n", p->n_skipped, p->skipped_why,
                      e->weights.name);
    if (p->n_unsplittable)
        vf__sb_printf(s, "\n  left out %zu multi-GPU offers: %s\n", p->n_unsplittable,
                      p->unsplittable_why);
    const char *as_of = p->n_rows ? p->rows[0].offer->as_of : NULL;
    vf__sb_printf(s, "\n  headroom is per card; tight fit (< 10 %% headroom) marked");
    if (as_of)
        vf__sb_printf(s, "; prices as of %s, billed per %s", as_of, p->rows[0].offer->billing);
    vf__sb_printf(s, "\n");
}

char *vf_render_pick_text(struct vf_arena *a, const struct vf_estimate *e, const struct vf_pick *p,
                          const struct vf_workload *w, double hours, const struct vf_render_opts *o)
{
    (void)w;
    struct vf__sb s = {.a = a};
    bool ascii = o && o->ascii;
    const char *sign = ascii ? p->currency : currency_sign(p->currency);

    pick_headline(&s, e, ascii ? "-" : "\u00b7", ascii);
    pick_table(&s, p, hours, sign, ascii);
    for (size_t i = 0; i < p->n_short; i++)
        short_card(&s, e, &p->short_rows[i], ascii);
    trial_line(&s, p, hours, sign, ascii);
    move_up(&s, e, p, sign, ascii);
    other_currencies(&s, p, ascii);
    pick_notes(&s, e, p);
    return vf__sb_done(&s);
}

/* ----------------------------------------------------------------- catalog */

char *vf_render_catalog_text(struct vf_arena *a, const struct vf_catalog *c, bool gpus)
{
    struct vf__sb s = {.a = a};
    char b1[48], b2[48];
    if (gpus) {
        vf__sb_printf(&s, "%-24s %-26s %11s %11s  %-8s %-5s %s\n", "id", "name", "nvidia-smi",
                      "usable", "", "cc", "bf16 fp8 fp4");
        for (size_t i = 0; i < c->n_gpus; i++) {
            const struct vf_gpu_spec *g = &c->gpus[i];
            vf__sb_printf(&s, "%-24s %-26s %11s %11s  %-8s %-5s %-4s %-3s %s\n", g->id, g->name,
                          vf_format_bytes(b1, sizeof b1, g->smi_bytes, VF_FMT_IEC),
                          vf_format_bytes(b2, sizeof b2, g->usable_bytes, VF_FMT_IEC),
                          g->usable_derived ? "derived" : "measured", g->cc, g->bf16 ? "yes" : "no",
                          g->fp8 ? "yes" : "no", g->fp4 ? "yes" : "no");
        }
        vf__sb_printf(&s,
                      "\nusable = what CUDA reports as total (PyTorch's \"total capacity\"): "
                      "measured, or nvidia-smi's total less the driver reservation (derived)\n");
    } else {
        vf__sb_printf(&s, "%-48s %s\n", "id", "alias");
        for (size_t i = 0; i < c->n_models; i++)
            vf__sb_printf(&s, "%-48s %s\n", c->models[i].id,
                          c->models[i].alias ? c->models[i].alias : "");
    }
    return vf__sb_done(&s);
}

/* ----------------------------------------------------------------- inspect */

/* "8,030,261,248" */
static unsigned count_layers(const struct vf_model *m, enum vf_layer_kind kind)
{
    unsigned n = 0;
    for (uint32_t i = 0; m->layer_kind && i < m->n_layers; i++)
        n += m->layer_kind[i] == kind;
    return n;
}

/* inspect's architecture lines: the shape, MLA, experts, sliding and recurrent layers, the
 * context (m has an architecture: n_layers > 0). */
static void inspect_arch(struct vf__sb *s, const struct vf_model *m, const char *dot)
{
    char b1[48];
    vf__sb_printf(s,
                  "  %-13s %s %s %u layers %s hidden %u %s %u heads / %u KV heads (%s) %s "
                  "head_dim %u",
                  "architecture", m->model_type ? m->model_type : "?", dot, m->n_layers, dot,
                  m->hidden, dot, m->n_heads, m->n_kv_heads, vf_attn_kind_name(m->attn), dot,
                  m->head_dim);
    if (m->intermediate)
        vf__sb_printf(s, " %s FFN %u", dot, m->intermediate);
    vf__sb_printf(s, " %s vocab %llu\n", dot, (unsigned long long)m->vocab);
    if (m->attn == VF_ATTN_MLA)
        vf__sb_printf(s, "  %-13s kv_lora_rank %u + rope %u cached per layer; q_lora_rank %u\n",
                      "MLA", m->kv_lora_rank, m->qk_rope_dim, m->q_lora_rank);
    if (m->n_experts) {
        vf__sb_printf(s, "  %-13s %u routed (%u per token)", "experts", m->n_experts,
                      m->n_experts_used);
        if (m->n_shared_experts)
            vf__sb_printf(s, " + %u shared", m->n_shared_experts);
        vf__sb_printf(s, ", width %u", m->moe_intermediate);
        if (m->first_k_dense)
            vf__sb_printf(s, "; the first %u layers dense", m->first_k_dense);
        vf__sb_printf(s, "\n");
    }
    unsigned sliding = count_layers(m, VF_LAYER_ATTN_SLIDING);
    unsigned rec = count_layers(m, VF_LAYER_RECURRENT);
    if (sliding)
        vf__sb_printf(s, "  %-13s %u of %u layers keep a window of %u tokens\n", "sliding", sliding,
                      m->n_layers, m->sliding_window);
    if (rec)
        vf__sb_printf(s, "  %-13s %u of %u layers, %s of state per sequence\n", "recurrent", rec,
                      m->n_layers,
                      vf_format_bytes(b1, sizeof b1, m->recurrent_state_bytes, VF_FMT_IEC));
    if (m->max_ctx_tokens && m->max_ctx_tokens != VF_UNKNOWN)
        vf__sb_printf(s, "  %-13s %s tokens\n", "context",
                      vf__format_grouped(b1, sizeof b1, m->max_ctx_tokens));
    else
        vf__sb_printf(s, "  %-13s unknown (the files do not say)\n", "context");
}

/* inspect's parameters, weights and by-type lines; "unknown" where the files do not tell (a
 * GGUF that lists no tensors), never VF_UNKNOWN as a number. The scheme is named once (a
 * safetensors file without its config is "as stored" already). */
static void inspect_weights(struct vf__sb *s, const struct vf_model *m)
{
    char b1[48], b2[48], b3[48];
    if (m->params && m->params != VF_UNKNOWN)
        vf__sb_printf(s, "  %-13s %s (%s)", "parameters",
                      vf__format_grouped(b1, sizeof b1, m->params),
                      params_text(b2, sizeof b2, m->params));
    else
        vf__sb_printf(s, "  %-13s unknown (the file lists no tensors)", "parameters");
    if (m->params_active && m->params_active != VF_UNKNOWN && m->params_active != m->params)
        vf__sb_printf(s, ", %s active per token", params_text(b3, sizeof b3, m->params_active));
    vf__sb_printf(s, "\n");
    uint64_t wb = vf_model_weight_bytes(m, &m->native);
    bool exact = m->exact_weight_bytes != VF_UNKNOWN && m->exact_weight_bytes;
    vf__sb_printf(s, "  %-13s %s%s (%s): ", "weights", m->native.name,
                  strcmp(m->native.name, "as stored") ? " as stored" : "",
                  exact ? "exact" : "computed");
    if (wb == VF_UNKNOWN)
        vf__sb_printf(s, "unknown (no tensors to count)\n");
    else
        vf__sb_printf(s, "%s (%s B)%s\n", vf_format_bytes(b1, sizeof b1, wb, VF_FMT_IEC),
                      vf__format_grouped(b2, sizeof b2, wb), exact ? ", from the files" : "");
    struct vf__type_count types[32];
    size_t nt = vf__model_type_counts(m, types, 32);
    for (size_t i = 0; i < nt; i++)
        vf__sb_printf(s, "  %-13s %-8s %5u tensors %16s params %12s\n", i ? "" : "by type",
                      types[i].type, types[i].tensors,
                      vf__format_grouped(b1, sizeof b1, types[i].params),
                      vf_format_bytes(b2, sizeof b2, types[i].bytes, VF_FMT_IEC));
}

char *vf_render_inspect_text(struct vf_arena *a, const struct vf_model *m,
                             const struct vf_render_opts *o)
{
    struct vf__sb s = {.a = a};
    bool ascii = o && o->ascii;
    const char *dot = ascii ? "-" : "\u00b7";
    char b1[48], b2[48], b3[48];

    if (m->name && m->id && strcmp(m->name, m->id))
        vf__sb_printf(&s, "%s (%s)\n", m->name, m->id);
    else
        vf__sb_printf(&s, "%s\n", m->id ? m->id : "?");
    vf__sb_printf(&s, "  %-13s %s\n", "source", m->source ? m->source : "?");
    if (m->pipeline) {
        vf__sb_printf(&s, "  %-13s %s pipeline, denoiser %s params\n", "kind",
                      vf_task_name(m->task), vf__format_grouped(b1, sizeof b1, m->params));
        return vf__sb_done(&s);
    }
    if (!m->n_layers)
        vf__sb_printf(&s,
                      "  %-13s unknown: no config.json came with the weights (nor the context "
                      "and the KV cache)\n",
                      "architecture");
    else
        inspect_arch(&s, m, dot);
    inspect_weights(&s, m);
    if (!m->n_layers)
        return vf__sb_done(&s);
    enum vf_dtype kv = m->native_dtype == VF_DT_F16 ? VF_DT_F16 : VF_DT_BF16;
    uint64_t per = vf_model_kv_bytes_per_token(m, kv);
    vf__sb_printf(&s, "  %-13s %s per token at %s (%s B)", "KV cache",
                  vf_format_bytes(b1, sizeof b1, per, VF_FMT_IEC), vf_dtype_name(kv),
                  vf__format_grouped(b2, sizeof b2, per));
    if (m->max_ctx_tokens && m->max_ctx_tokens != VF_UNKNOWN)
        vf__sb_printf(&s, "; %s for one sequence of %s tokens",
                      vf_format_bytes(b1, sizeof b1,
                                      vf_model_kv_bytes(m, kv, m->max_ctx_tokens, true),
                                      VF_FMT_IEC),
                      vf_format_tokens(b3, sizeof b3, m->max_ctx_tokens));
    vf__sb_printf(&s, "\n");
    return vf__sb_done(&s);
}

/* ------------------------------------------------------------------ GPUs */

/* The process holding the most memory of d (NULL when none is known). */
static const struct vf_gpu_proc *top_proc(const struct vf_gpu_dev *d)
{
    const struct vf_gpu_proc *t = NULL;
    for (size_t i = 0; i < d->n_procs; i++)
        if (d->procs[i].used_bytes != VF_UNKNOWN && (!t || d->procs[i].used_bytes > t->used_bytes))
            t = &d->procs[i];
    return t;
}

char *vf_render_gpus_text(struct vf_arena *a, const struct vf_gpu_snapshot *s,
                          const struct vf_render_opts *o)
{
    struct vf__sb b = {.a = a};
    bool ascii = o && o->ascii;
    char b1[32], b2[32], b3[32];
    for (size_t i = 0; i < s->n_devs; i++) {
        const struct vf_gpu_dev *d = &s->devs[i];
        if (d->mig_parent)
            vf__sb_printf(&b, "GPU %u / MIG %u  ", d->mig_parent - 1, d->index);
        else
            vf__sb_printf(&b, "GPU %u  ", d->index);
        vf__sb_printf(&b, "%s%s%s\n", d->name ? d->name : "?", d->uuid ? "  " : "",
                      d->uuid ? d->uuid : "");
        vf__sb_printf(&b, "  memory  %s of %s used, %s free",
                      vf_format_bytes(b1, sizeof b1, d->used_bytes, VF_FMT_IEC),
                      vf_format_bytes(b2, sizeof b2, d->total_bytes, VF_FMT_IEC),
                      vf_format_bytes(b3, sizeof b3, d->free_bytes, VF_FMT_IEC));
        if (d->reserved_bytes != VF_UNKNOWN && d->reserved_bytes)
            vf__sb_printf(&b, ", %s reserved by the driver",
                          vf_format_bytes(b1, sizeof b1, d->reserved_bytes, VF_FMT_IEC));
        if (d->util_percent != UINT32_MAX)
            vf__sb_printf(&b, "  %s  %u %% busy", ascii ? "-" : "\u00b7", d->util_percent);
        if (d->unified)
            vf__sb_printf(&b, "  (unified memory: the system's RAM, /proc/meminfo)");
        vf__sb_printf(&b, "\n  ");
        bar(&b, d->used_bytes, d->total_bytes, ascii);
        vf__sb_printf(&b, "\n");
        if (!d->n_procs) {
            vf__sb_printf(&b, "  no processes hold memory on it\n\n");
            continue;
        }
        vf__sb_printf(&b, "  %8s  %11s  %-16s  %-30s  %-12s  %s\n", "PID", "memory", "process",
                      "application", "container", "command");
        for (size_t k = 0; k < d->n_procs; k++) {
            const struct vf_gpu_proc *p = &d->procs[k];
            char pid[32];
            snprintf(pid, sizeof pid, p->local_pid ? "%u=%u" : "%u", p->pid, p->local_pid);
            vf__sb_printf(&b, "  %8s  %11s  %-16.16s  %-30.30s  %-12s  %.60s\n", pid,
                          p->used_bytes == VF_UNKNOWN
                              ? "?"
                              : vf_format_bytes(b1, sizeof b1, p->used_bytes, VF_FMT_IEC),
                          p->name ? p->name : "(not visible here)", p->app ? p->app : "-",
                          p->container ? p->container : "-", p->cmdline ? p->cmdline : "");
            if (p->match)
                vf__sb_printf(&b, "  %8s  PID %u here: %s\n", "", p->local_pid, p->match);
        }
        const struct vf_gpu_proc *t = top_proc(d);
        if (t && t->used_bytes != VF_UNKNOWN) {
            uint32_t kp = t->local_pid ? t->local_pid : t->pid;
            vf__sb_printf(
                &b, "  %s of %s used: %s by %s (PID %u%s)%s%s%s\n",
                vf_format_bytes(b1, sizeof b1, d->used_bytes, VF_FMT_IEC),
                vf_format_bytes(b2, sizeof b2, d->total_bytes, VF_FMT_IEC),
                vf_format_bytes(b3, sizeof b3, t->used_bytes, VF_FMT_IEC),
                t->name ? (t->app ? vf_arena_printf(a, "%s, %s", t->app, t->name) : t->name)
                        : "a process not visible here",
                kp, t->container ? vf_arena_printf(a, ", container %s", t->container) : "",
                t->hint ? " - " : "", t->hint ? t->hint : "",
                t->name ? vf_arena_printf(a, "; or kill %u", kp) : "");
        }
        vf__sb_printf(&b, "\n");
    }
    vf__sb_printf(&b, "backend %s\n", s->backend ? s->backend : "?");
    return vf__sb_done(&b);
}
