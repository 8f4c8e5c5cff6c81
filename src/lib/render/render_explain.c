/* SPDX-License-Identifier: Apache-2.0 */
/*
 * render_explain.c - `vramfit explain` as text (an expert walking through the message) and as
 * the JSON of DESIGN section 8, "Explain JSON" (jansson, byte-identical for CLI and HTTP).
 */
#include "render_json.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *iec(char *buf, size_t cap, uint64_t v)
{
    return vf_format_bytes(buf, cap, v, VF_FMT_IEC);
}

/* The platform's own tool to see who holds the memory (issue 19: no nvidia-smi on others). */
static const char *smi_of(const char *platform)
{
    if (platform && !strcmp(platform, "rocm"))
        return "rocm-smi --showmeminfo vram";
    if (platform && !strcmp(platform, "mps"))
        return "Activity Monitor, Memory";
    if (platform && !strcmp(platform, "xpu"))
        return "xpu-smi stats";
    return "nvidia-smi";
}

static const char *cause_words(const char *c)
{
    static const struct {
        const char *cause, *words;
    } t[] = {
        {"fragmentation", "the memory is there, but cut into pieces too small for the request."},
        {"other_process", "another process holds memory on the same card."},
        {"workload_too_large", "the job needs more than the card holds."},
        {"kv_cache", "the KV cache for the context asked for does not fit next to the weights."},
        {"leak", "memory grew over many steps: look for a leak before shrinking the job."},
        {"engine_reservation", "the engine reserves a share of the whole card that is not free."},
        {"host_ram", "the host's RAM ran out, not the GPU's: a bigger GPU does not help."},
        {"not_vram", "not GPU memory: a kernel needs more on-chip shared memory than it has."},
        {"unknown", "the message does not say enough; run"},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (c && !strcmp(c, t[i].cause))
            return t[i].words;
    return "unknown.";
}

static const char *symptom_title(const char *kind)
{
    static const struct {
        const char *kind, *title;
    } t[] = {
        {"ollama_cpu_split", "ollama ps: the model is split between CPU and GPU"},
        {"nvidia_smi", "nvidia-smi: memory in use"},
        {"vllm_startup", "vLLM start-up: the KV cache"},
        {"recovered", "recovered: the run went on"},
        {"not_a_failure", "allocator warning: not a failure"},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (!strcmp(kind, t[i].kind))
            return t[i].title;
    return kind;
}

/* The symptoms of the log (what it shows that is not an error), each with its line. */
static void symptoms_text(struct vf__sb *b, const struct vf_oom_context *ctx)
{
    for (size_t i = 0; ctx && i < ctx->n_symptoms; i++) {
        const struct vf_oom_symptom *y = &ctx->symptoms[i];
        vf__sb_printf(b, "%s%s (line %llu)\n", i ? "\n" : "", symptom_title(y->kind),
                      (unsigned long long)y->line);
        vf__sb_printf(b, "  %s\n", y->text ? y->text : "");
        for (size_t k = 0; k < y->n_says; k++)
            vf__sb_printf(b, "  - %s\n", y->says[k]);
    }
}

/* The figures of the event, one a line (what the message says, what follows from it). */
static void event_figures(struct vf__sb *b, const struct vf_oom_event *ev)
{
    char s1[48], s2[48], s3[48];
    /* Ollama's pre-load check names the whole model's need, not one allocation (issue 19) */
    bool whole = ev->pattern && !strcmp(ev->pattern, "ollama-system-memory");
    if (ev->requested_bytes != VF_UNKNOWN && whole)
        vf__sb_printf(
            b, "  model needs       %12s   Ollama's estimate of what the GPU does not hold\n",
            iec(s1, sizeof s1, ev->requested_bytes));
    else if (ev->requested_bytes != VF_UNKNOWN)
        vf__sb_printf(b,
                      "  failed request    %12s   one allocation; not what the whole job needs\n",
                      iec(s1, sizeof s1, ev->requested_bytes));
    if (ev->total_bytes != VF_UNKNOWN)
        vf__sb_printf(b, "  card total        %12s\n", iec(s1, sizeof s1, ev->total_bytes));
    if (ev->free_bytes != VF_UNKNOWN) {
        vf__sb_printf(b, "  free at the time  %12s", iec(s1, sizeof s1, ev->free_bytes));
        if (ev->requested_bytes != VF_UNKNOWN && ev->requested_bytes > ev->free_bytes)
            vf__sb_printf(b, "   short by %s",
                          iec(s2, sizeof s2, ev->requested_bytes - ev->free_bytes));
        vf__sb_printf(b, "\n");
    }
    if (ev->allocated_bytes != VF_UNKNOWN && ev->source && !strcmp(ev->source, "xla")) {
        vf__sb_printf(b, "  XLA program needs %12s   total allocation of the buffer assignment\n",
                      iec(s1, sizeof s1, ev->allocated_bytes));
    } else if (ev->allocated_bytes != VF_UNKNOWN) {
        /* the allocator that printed it: PyTorch's caching allocator, or the tool's own */
        bool pt = !ev->source || !strcmp(ev->source, "pytorch");
        uint64_t ru = ev->reserved_unallocated_bytes;
        uint64_t held = vf__sat_add(ev->allocated_bytes, ru == VF_UNKNOWN ? 0 : ru);
        if (pt)
            vf__sb_printf(b, "  held by PyTorch   %12s   %s in tensors + %s cached, unused\n",
                          iec(s1, sizeof s1, held), iec(s2, sizeof s2, ev->allocated_bytes),
                          iec(s3, sizeof s3, ru == VF_UNKNOWN ? 0 : ru));
        else
            vf__sb_printf(b, "  allocated         %12s   by %s before the request\n",
                          iec(s1, sizeof s1, ev->allocated_bytes), ev->source);
    }
    if (ev->private_pool_bytes != VF_UNKNOWN)
        vf__sb_printf(b, "  private pools     %12s   of that, CUDA graphs' own pools\n",
                      iec(s1, sizeof s1, ev->private_pool_bytes));
    if (ev->allowed_bytes != VF_UNKNOWN)
        vf__sb_printf(b, "  allowed           %12s   a per-process cap (memory fraction)\n",
                      iec(s1, sizeof s1, ev->allowed_bytes));
    if (ev->outside_pytorch_bytes != VF_UNKNOWN && ev->outside_pytorch_bytes)
        vf__sb_printf(b,
                      "  outside PyTorch   %12s   total - free - held: other processes, "
                      "CUDA contexts\n",
                      iec(s1, sizeof s1, ev->outside_pytorch_bytes));
    /* the kernel's OOM killer names the process it killed, with its RSS in host RAM */
    bool killed = ev->source && !strcmp(ev->source, "linux");
    const char *label = killed ? "killed process " : "other processes";
    if (ev->n_procs) {
        for (size_t i = 0; i < ev->n_procs && i < VF_OOM_MAX_PROCS; i++)
            vf__sb_printf(b, "  %s PID %-8u %12s%s\n", i ? "               " : label,
                          ev->procs[i].pid, iec(s1, sizeof s1, ev->procs[i].bytes),
                          killed ? " of host RAM" : "");
    } else if (ev->total_bytes != VF_UNKNOWN) {
        vf__sb_printf(b, "  other processes   none named in the message\n");
    }
}

/* Contract: text for a finished vf_explain(); NULL only when the arena is exhausted. */
/* "Together: fixes 1 + 3 ..." (issue 19, DESIGN section 8's combination), when there is one. */
static void combination_text(struct vf__sb *b, const struct vf_explain *x)
{
    char s1[32], s2[32];
    if (!x->n_combination)
        return;
    if (x->n_combination == 1)
        vf__sb_printf(b, "\nFix %zu alone brings", x->combination[0] + 1);
    else
        vf__sb_printf(b, "\nTogether, fixes");
    for (size_t i = 0; x->n_combination > 1 && i < x->n_combination; i++)
        vf__sb_printf(b, "%s%zu", i ? " + " : " ", x->combination[i] + 1);
    vf__sb_printf(b, "%s the estimate to %s: %s\n", x->n_combination > 1 ? " bring" : "",
                  iec(s1, sizeof s1, x->combination_total_bytes),
                  x->combination_fits ? "it fits the card" : "still more than the card");
    if (x->short_bytes != VF_UNKNOWN)
        vf__sb_printf(b, "  (short by %s before any fix)\n", iec(s2, sizeof s2, x->short_bytes));
}

char *vf_render_explain_text(struct vf_arena *a, const struct vf_explain *x,
                             const struct vf_render_opts *o)
{
    (void)o;
    struct vf__sb b = {.a = a};
    char s1[48], s2[48];
    if (!x->n_events) {
        vf__sb_printf(&b, "no out-of-memory error found");
        if (x->ctx && x->ctx->n_symptoms) {
            vf__sb_printf(&b, "; what the log shows instead:\n\n");
            symptoms_text(&b, x->ctx);
        } else {
            vf__sb_printf(&b, "\n");
        }
        return vf__sb_done(&b);
    }
    const struct vf_oom_event *ev = &x->events[x->n_events - 1];
    vf__sb_printf(&b, "out of memory (%s) - %s via %s, %s", ev->pattern ? ev->pattern : "?",
                  ev->tool ? ev->tool : "?", ev->source ? ev->source : "?",
                  ev->backend ? ev->backend : "?");
    if (ev->device >= 0)
        vf__sb_printf(&b, ", GPU %d", ev->device);
    vf__sb_printf(&b, ", line %llu", (unsigned long long)ev->line);
    if (ev->step != VF_UNKNOWN)
        vf__sb_printf(&b, ", at step %llu", (unsigned long long)ev->step);
    vf__sb_printf(&b, "\n");
    if (x->n_total > 1)
        vf__sb_printf(&b, "(the last of %llu such errors in the log)\n",
                      (unsigned long long)x->n_total);
    vf__sb_printf(&b, "\n");

    event_figures(&b, ev);
    if (ev->text)
        vf__sb_printf(&b, "  message           %s\n", ev->text);

    const struct vf_diagnosis *d = &x->diagnosis;
    /* Ollama's RAM check is on what the GPU does not hold: a bigger GPU does help there */
    bool split = d->cause && !strcmp(d->cause, "host_ram") && ev->pattern &&
                 !strcmp(ev->pattern, "ollama-system-memory");
    vf__sb_printf(&b, "\nDiagnosis (%s): %s", d->cause ? d->cause : "unknown",
                  split ? "the host's RAM cannot hold the part of the model the GPU does not."
                        : cause_words(d->cause));
    if (!d->cause || !strcmp(d->cause, "unknown")) /* the platform's own tool (issue 19) */
        vf__sb_printf(&b, " %s while the job runs.", smi_of(x->platform));
    vf__sb_printf(&b, "\n");
    if (d->n_secondary) {
        vf__sb_printf(&b, "Also:");
        for (size_t i = 0; i < d->n_secondary; i++)
            vf__sb_printf(&b, " %s%s", d->secondary[i], i + 1 < d->n_secondary ? "," : "");
        vf__sb_printf(&b, "\n");
    }
    for (size_t i = 0; i < d->n_evidence; i++)
        vf__sb_printf(&b, "  - %s\n", d->evidence[i]);

    if (x->n_fixes) {
        const char *tool = x->tool ? x->tool : ev->tool; /* --tool wins (issue 19) */
        vf__sb_printf(&b, "\nFixes for %s, in the order to try them:\n", tool ? tool : "this tool");
        for (size_t i = 0; i < x->n_fixes; i++) {
            const struct vf_fix *f = &x->fixes[i];
            if (f->saves_bytes != VF_UNKNOWN)
                snprintf(s1, sizeof s1, "saves ~%s", iec(s2, sizeof s2, f->saves_bytes));
            else
                snprintf(s1, sizeof s1, "saves ?");
            vf__sb_printf(&b, "  %2zu  %-46s %-18s %s\n", i + 1, f->title, s1,
                          f->cost ? f->cost : "");
            vf__sb_printf(&b, "        %s\n", f->command);
            if (f->speed_factor > 0 && (f->speed_factor < 0.995 || f->speed_factor > 1.005))
                vf__sb_printf(&b, "        time: about %.2f%s %s on this card (F-SPD-16)\n",
                              f->speed_factor < 1 ? 1 / f->speed_factor : f->speed_factor, "x",
                              f->speed_factor < 1 ? "slower" : "faster");
            if (f->saves_bytes == VF_UNKNOWN && f->missing)
                vf__sb_printf(&b, "        (no saving computed: %s)\n", f->missing);
            else if (f->still_short_bytes != VF_UNKNOWN && f->still_short_bytes)
                vf__sb_printf(&b, "        (alone it leaves %s short)\n",
                              iec(s2, sizeof s2, f->still_short_bytes));
        }
        combination_text(&b, x);
    }
    if (x->bigger_card) {
        vf__sb_printf(&b, "\nNo fix above? The cheapest card with room for this job:\n");
        vf__sb_printf(&b, "  %s", x->bigger_card->name);
        if (x->bigger_offer) {
            char p1[32], p2[32], p3[32];
            uint64_t per_min = x->bigger_offer->price_micro / 60;
            uint64_t q = x->bigger_offer->price_micro / 4;
            vf__sb_printf(&b, "   %s %s/h (%s/min)   a 15-minute test costs %s %s",
                          x->bigger_offer->currency,
                          vf_format_price(p1, sizeof p1, x->bigger_offer->price_micro, 2),
                          vf_format_price(p2, sizeof p2, per_min, 4), x->bigger_offer->currency,
                          vf_format_price(p3, sizeof p3, q, 2));
        }
        vf__sb_printf(&b, "\n");
    }
    if (x->ctx && x->ctx->n_symptoms) {
        vf__sb_printf(&b, "\nAlso in the log (not errors):\n");
        symptoms_text(&b, x->ctx);
    }
    return vf__sb_done(&b);
}

/* ------------------------------------------------------------------- JSON */

static json_t *event_json(const struct vf_oom_event *ev)
{
    json_t *o = json_object();
    json_object_set_new(o, "tool", vf__json_str(ev->tool));
    json_object_set_new(o, "source", vf__json_str(ev->source));
    json_object_set_new(o, "backend", vf__json_str(ev->backend));
    json_object_set_new(o, "requested_bytes", vf__json_bytes(ev->requested_bytes));
    json_object_set_new(o, "total_bytes", vf__json_bytes(ev->total_bytes));
    json_object_set_new(o, "free_bytes", vf__json_bytes(ev->free_bytes));
    json_object_set_new(o, "allocated_bytes", vf__json_bytes(ev->allocated_bytes));
    json_object_set_new(o, "reserved_unallocated_bytes",
                        vf__json_bytes(ev->reserved_unallocated_bytes));
    /* PyTorch: this process's memory outside its allocator (MPS: "other allocations"), the
     * device's memory outside PyTorch (total - free - reserved), a cap, private pools */
    json_object_set_new(o, "non_pytorch_bytes", vf__json_bytes(ev->non_pytorch_bytes));
    json_object_set_new(o, "outside_pytorch_bytes", vf__json_bytes(ev->outside_pytorch_bytes));
    json_object_set_new(o, "allowed_bytes", vf__json_bytes(ev->allowed_bytes));
    json_object_set_new(o, "private_pool_bytes", vf__json_bytes(ev->private_pool_bytes));
    json_t *ps = json_array();
    for (size_t i = 0; i < ev->n_procs && i < VF_OOM_MAX_PROCS; i++) {
        json_t *p = json_object();
        json_object_set_new(p, "pid", json_integer(ev->procs[i].pid));
        json_object_set_new(p, "bytes", vf__json_bytes(ev->procs[i].bytes));
        json_array_append_new(ps, p);
    }
    json_object_set_new(o, "processes", ps);
    json_object_set_new(o, "line", json_integer((json_int_t)ev->line));
    return o;
}

static json_t *int_or_null(long long v, bool known)
{
    return known ? json_integer(v) : json_null();
}

static json_t *symptoms_json(const struct vf_oom_context *ctx)
{
    json_t *arr = json_array();
    for (size_t i = 0; ctx && i < ctx->n_symptoms; i++) {
        const struct vf_oom_symptom *y = &ctx->symptoms[i];
        json_t *o = json_object();
        json_object_set_new(o, "kind", vf__json_str(y->kind));
        json_object_set_new(o, "line", json_integer((json_int_t)y->line));
        json_object_set_new(o, "text", vf__json_str(y->text));
        json_object_set_new(o, "name", vf__json_str(y->name));
        json_object_set_new(o, "gpu", int_or_null(y->gpu, y->gpu >= 0));
        json_object_set_new(o, "used_bytes", vf__json_bytes(y->used_bytes));
        json_object_set_new(o, "total_bytes", vf__json_bytes(y->total_bytes));
        json_object_set_new(o, "cpu_percent", int_or_null(y->cpu_percent, y->cpu_percent >= 0));
        json_object_set_new(o, "gpu_percent", int_or_null(y->gpu_percent, y->gpu_percent >= 0));
        json_object_set_new(o, "processes", int_or_null(y->processes, y->processes >= 0));
        json_object_set_new(o, "kv_cache_tokens", vf__json_bytes(y->kv_tokens));
        json_object_set_new(o, "tokens_per_request", vf__json_bytes(y->per_request_tokens));
        json_object_set_new(o, "max_concurrency",
                            y->max_concurrency > 0 ? json_real(y->max_concurrency) : json_null());
        json_object_set_new(o, "says", vf__json_texts(y->says, y->n_says));
        json_array_append_new(arr, o);
    }
    return arr;
}

/* Contract: the Explain JSON document; NULL only when memory runs out. */
/* {"fixes": [1-based numbers], "total_bytes", "fits"}, or null when there is none. */
static json_t *combination_json(const struct vf_explain *x)
{
    if (!x->n_combination)
        return json_null();
    json_t *o = json_object(), *ids = json_array();
    for (size_t i = 0; i < x->n_combination; i++)
        json_array_append_new(ids, json_integer((json_int_t)x->combination[i] + 1));
    json_object_set_new(o, "fixes", ids);
    json_object_set_new(o, "total_bytes", vf__json_bytes(x->combination_total_bytes));
    json_object_set_new(o, "fits", json_boolean(x->combination_fits));
    return o;
}

char *vf_render_explain_json(struct vf_arena *a, const struct vf_explain *x)
{
    json_t *root = json_object();
    json_t *evs = json_array();
    for (size_t i = 0; i < x->n_events; i++)
        json_array_append_new(evs, event_json(&x->events[i]));
    json_object_set_new(root, "events", evs);

    const struct vf_diagnosis *d = &x->diagnosis;
    json_t *dj = json_object();
    json_object_set_new(dj, "cause", vf__json_str(x->n_events ? d->cause : NULL));
    json_object_set_new(dj, "secondary", vf__json_texts(d->secondary, d->n_secondary));
    json_object_set_new(dj, "evidence", vf__json_texts(d->evidence, d->n_evidence));
    json_object_set_new(root, "diagnosis", dj);

    json_t *fx = json_array();
    for (size_t i = 0; i < x->n_fixes; i++) {
        const struct vf_fix *f = &x->fixes[i];
        json_t *o = json_object();
        json_object_set_new(o, "title", vf__json_str(f->title));
        json_object_set_new(o, "command", vf__json_str(f->command));
        json_object_set_new(o, "saves_bytes", vf__json_bytes(f->saves_bytes));
        json_object_set_new(o, "missing",
                            vf__json_str(f->saves_bytes == VF_UNKNOWN ? f->missing : NULL));
        json_object_set_new(o, "still_short_bytes", vf__json_bytes(f->still_short_bytes));
        json_t *c = json_object();
        json_object_set_new(c, "quality", vf__json_str(f->quality));
        json_object_set_new(c, "speed_factor", json_real(f->speed_factor));
        json_object_set_new(c, "text", vf__json_str(f->cost));
        json_object_set_new(o, "cost", c);
        json_array_append_new(fx, o);
    }
    json_object_set_new(root, "fixes", fx);
    json_object_set_new(root, "combination", combination_json(x));
    json_t *ff = json_object(); /* issue 19: what the fixes were chosen for */
    json_object_set_new(ff, "tool", vf__json_str(x->tool));
    json_object_set_new(ff, "platform", vf__json_str(x->platform));
    json_object_set_new(ff, "job", vf__json_str(x->job));
    json_object_set_new(ff, "short_bytes",
                        vf__json_bytes(x->n_events ? x->short_bytes : VF_UNKNOWN));
    json_object_set_new(root, "fixes_for", ff);
    if (x->bigger_card) {
        json_t *bc = json_object();
        json_object_set_new(bc, "gpu", vf__json_str(x->bigger_card->id));
        json_object_set_new(bc, "name", vf__json_str(x->bigger_card->name));
        json_object_set_new(bc, "usable_bytes", vf__json_bytes(x->bigger_card->usable_bytes));
        json_object_set_new(bc, "price_per_hour",
                            x->bigger_offer ? json_real((double)x->bigger_offer->price_micro / 1e6)
                                            : json_null());
        json_object_set_new(bc, "currency",
                            x->bigger_offer ? vf__json_text(x->bigger_offer->currency)
                                            : json_null());
        json_object_set_new(root, "bigger_card", bc);
    } else {
        json_object_set_new(root, "bigger_card", json_null());
    }
    json_object_set_new(root, "events_total", json_integer((json_int_t)x->n_total));
    json_object_set_new(root, "symptoms", symptoms_json(x->ctx));

    return vf__json_finish(a, root);
}
