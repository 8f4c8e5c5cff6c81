/* SPDX-License-Identifier: Apache-2.0 */
/* The speed of an image, a clip, a training run or an LLM with layers in host memory, and
 * the fix-or-bigger-card sentence (issue 24, F-SPD-10..17), as JSON members and text. */
#include "internal.h"
#include "render/render_json.h"

#include <stdio.h>
#include <string.h>

/* DESIGN section 8 `speed` of a job: seconds per result with the parts and the range. */
void vf__job_speed_jw(struct vf__jw *j, const char *key, const struct vf_job_speed *s)
{
    vf__jw_open(j, key, '{');
    if (!s->known) {
        vf__jw_null(j, "seconds_per_result");
        vf__jw_str(j, "why", s->why);
        vf__jw_close(j);
        return;
    }
    vf__jw_text(j, "result", s->result);
    vf__jw_real(j, "seconds_per_result", s->seconds);
    vf__jw_open(j, "range", '[');
    vf__jw_real(j, NULL, s->lo);
    vf__jw_real(j, NULL, s->hi);
    vf__jw_close(j);
    vf__jw_real(j, "compute_seconds", s->compute_s);
    vf__jw_real(j, "offload_seconds", s->offload_s);
    vf__jw_real(j, "attention_seconds", s->attn_s);
    vf__jw_real(j, "comm_seconds", s->comm_s);
    if (s->elem_s > 0 || s->launch_s > 0) {
        vf__jw_real(j, "elementwise_seconds", s->elem_s);
        vf__jw_real(j, "encode_decode_seconds", s->encdec_s);
        vf__jw_real(j, "launch_floor_seconds", s->launch_s);
    }
    vf__jw_real(j, "slowdown", s->slowdown);
    if (s->tokens_per_s > 0)
        vf__jw_real(j, "tokens_per_s_per_gpu", s->tokens_per_s);
    vf__jw_text(j, "precision", s->prec);
    vf__jw_real(j, "efficiency", s->eta);
    vf__jw_close(j);
}

/* DESIGN section 8 `cost` of a job: euros per result at the cheapest listed price. */
void vf__job_cost_jw(struct vf__jw *j, const char *key, const struct vf_job_speed *s)
{
    if (!s->known || s->eur <= 0)
        return;
    vf__jw_open(j, key, '{');
    vf__jw_real(j, "per_result", s->eur);
    vf__jw_text(j, "unit", s->result);
    vf__jw_text(j, "currency", "EUR");
    vf__jw_real(j, "per_hour", s->eur_per_hour);
    vf__jw_close(j);
}

/* F-SPD-16: "choice": the offload that fits this card against the cheapest bigger card. */
void vf__choice_jw(struct vf__jw *j, const struct vf_speed_choice *c)
{
    if (!c->flags && !c->other)
        return;
    vf__jw_open(j, "choice", '{');
    vf__jw_str(j, "offload", c->flags);
    if (c->flags) {
        vf__job_speed_jw(j, "offload_speed", &c->with);
        vf__job_cost_jw(j, "offload_cost", &c->with);
    }
    vf__jw_str(j, "bigger_gpu", c->other ? c->other->id : NULL);
    if (c->other) {
        vf__job_speed_jw(j, "bigger_speed", &c->there);
        vf__job_cost_jw(j, "bigger_cost", &c->there);
        vf__jw_real(j, "quick_test_eur", c->test_eur);
    }
    vf__jw_close(j);
}

static const char *dur(char *b, size_t n, double s)
{
    if (s < 1)
        snprintf(b, n, "%.2f s", s);
    else if (s < 120)
        snprintf(b, n, "%.1f s", s);
    else if (s < 7200)
        snprintf(b, n, "%.1f min", s / 60);
    else
        snprintf(b, n, "%.1f h", s / 3600);
    return b;
}

static const char *eur(char *b, size_t n, double v)
{
    snprintf(b, n, v < 0.1 ? "%.4f" : "%.2f", v);
    return b;
}

void vf__offload_offer_text(struct vf__sb *s, const struct vf_pick_row *r, bool ascii)
{
    const struct vf_job_speed *j = r->job;
    char b1[32], b2[32];
    if (!r->offload_flags || !j || !j->known)
        return;
    if (r->fit.spill.on && r->offer && r->cost_per_mtok > 0) { /* an LLM's layer split */
        bool sign = !ascii && !strcmp(r->offer->currency, "EUR");
        char where[96];
        vf_format_bytes(b1, sizeof b1, r->fit.spill.host_bytes, VF_FMT_IEC);
        if (r->fit.spill.cpu_layers) /* whole layers on the CPU */
            snprintf(where, sizeof where, "%u of %u layers on the GPU, %s in host memory",
                     r->fit.spill.gpu_layers, r->fit.spill.gpu_layers + r->fit.spill.cpu_layers,
                     b1);
        else /* --n-cpu-moe: the layers on the GPU, routed experts on the CPU */
            snprintf(where, sizeof where, "routed experts in host memory, %s", b1);
        vf__sb_printf(s,
                      "; runs with %s (%s): about %.1f%s slower than if it fit, %.1f output "
                      "tokens/s, %s%s%s per 1M output tokens",
                      r->offload_flags, where, j->slowdown, ascii ? "x" : "\u00d7",
                      r->fit.speed.serving_tps, sign ? "\u20ac" : r->offer->currency,
                      sign ? "" : " ", eur(b2, sizeof b2, r->cost_per_mtok));
        return;
    }
    vf__sb_printf(s, "; runs with %s: about %.*f%s slower than if it fit, %s per %s",
                  r->offload_flags, j->slowdown < 2 ? 2 : 1, j->slowdown, ascii ? "x" : "\u00d7",
                  dur(b1, sizeof b1, j->seconds), j->result);
    if (j->eur > 0)
        vf__sb_printf(s, ", %s%s per %s", ascii ? "EUR " : "\u20ac", eur(b2, sizeof b2, j->eur),
                      j->result);
}

/* The text line of a job's speed, and the choice sentence when it does not fit. */
void vf__job_speed_text(struct vf__sb *s, const struct vf_fit *f, bool ascii)
{
    const struct vf_job_speed *j = f->job;
    if (!j || !f->choice)
        return;
    const char *euro = ascii ? "EUR " : "\u20ac";
    char b1[32], b2[32], b3[32], b4[32];
    if (j->known && !strcmp(j->result, "token")) {
        vf__sb_printf(s,
                      "  offload: the layers in host memory make decoding about %.1f%s slower "
                      "(F-SPD-17)\n",
                      j->slowdown, ascii ? "x" : "\u00d7");
    } else if (j->known && f->fits) {
        vf__sb_printf(s, "  speed: %s per %s (%s-%s)", dur(b1, sizeof b1, j->seconds), j->result,
                      dur(b2, sizeof b2, j->lo), dur(b3, sizeof b3, j->hi));
        if (j->tokens_per_s > 0 && !strcmp(j->result, "1M tokens"))
            vf__sb_printf(s, ", %.0f tokens/s per GPU", j->tokens_per_s);
        if (j->slowdown > 1.005)
            vf__sb_printf(s, ", %.1f%s slower for the offload", j->slowdown,
                          ascii ? "x" : "\u00d7");
        if (j->eur > 0)
            vf__sb_printf(s, "; %s%s per %s at %s%s/h", euro, eur(b4, sizeof b4, j->eur), j->result,
                          euro, eur(b1, sizeof b1, j->eur_per_hour));
        vf__sb_printf(s, "\n");
    }
    const struct vf_speed_choice *c = f->choice;
    if (!c->flags && !c->other)
        return;
    vf__sb_printf(s, "  fix or bigger card:");
    if (c->flags && c->with.known) {
        vf__sb_printf(s, " this card with %s: about %.*f%s slower than if it fit, %s per %s",
                      c->flags, c->with.slowdown < 2 ? 2 : 1, c->with.slowdown,
                      ascii ? "x" : "\u00d7", dur(b1, sizeof b1, c->with.seconds), c->with.result);
        if (c->with.eur > 0)
            vf__sb_printf(s, ", %s%s per %s", euro, eur(b2, sizeof b2, c->with.eur),
                          c->with.result);
        vf__sb_printf(s, c->other ? ";" : "\n");
    }
    if (c->other) {
        vf__sb_printf(s,
                      " a %s where it fits: %s per %s, %s%s per %s; a quick test on it costs "
                      "15 minutes of its price, %s%s\n",
                      c->other->name, dur(b1, sizeof b1, c->there.seconds), c->there.result, euro,
                      eur(b2, sizeof b2, c->there.eur), c->there.result, euro,
                      eur(b3, sizeof b3, c->test_eur));
    }
}
