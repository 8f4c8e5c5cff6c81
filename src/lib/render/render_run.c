/* SPDX-License-Identifier: Apache-2.0 */
/*
 * render_run.c - a run's report (vramfit run) as JSON (jansson), its samples as CSV and the
 * timeline as SVG (our own small writer). Formulas F-RUN-01..03 in docs/FORMULAS.md.
 */
#include "render/render_json.h"

#include <stdio.h>
#include <string.h>

/* A duration in milliseconds to 0.1 ms (what the report has always printed). */
static json_t *ms_json(double ms)
{
    return json_real(ms >= 0 ? (double)(long long)(ms * 10 + 0.5) / 10 : 0.0);
}

/* Sets o[key] = v (v stolen); false when v is NULL (no memory), where jansson would drop the
 * key without a word. */
static bool put(json_t *o, const char *key, json_t *v)
{
    return json_object_set_new(o, key, v) == 0;
}

char *vf_render_run_json(struct vf_arena *a, const struct vf_run_report *r)
{
    json_t *o = json_object(), *argv = json_array();
    if (!o || !argv) {
        json_decref(o);
        json_decref(argv);
        return NULL;
    }
    bool ok = true;
    for (char *const *c = r->argv; c && *c; c++)
        ok &= json_array_append_new(argv, vf__json_text(*c)) == 0;
    const char *cmd = r->argv && r->argv[0] ? r->argv[0] : "";
    /* one statement each: the keys in this order, and every value handed to o (freed with it)
     * even after a failure */
    ok &= put(o, "command", vf__json_text(cmd));
    ok &= put(o, "argv", argv);
    ok &= put(o, "exit_status", json_integer(r->exit_status));
    ok &= put(o, "duration_ms", ms_json(r->duration_ms));
    ok &= put(o, "gpu", vf__json_str(r->gpu));
    ok &= put(o, "total_bytes", json_integer((json_int_t)r->total_bytes));
    ok &= put(o, "baseline_bytes", json_integer((json_int_t)r->baseline_bytes));
    ok &= put(o, "peak_tree_bytes", json_integer((json_int_t)r->peak_tree_bytes));
    ok &= put(o, "peak_device_delta_bytes", json_integer((json_int_t)r->peak_device_delta_bytes));
    ok &= put(o, "peak_at_ms", ms_json(r->peak_at_ms));
    ok &= put(o, "headroom_bytes", json_integer(r->headroom_bytes));
    ok &= put(o, "samples", json_integer((json_int_t)r->samples));
    ok &= put(o, "interval_ms", ms_json(r->interval_ms));
    ok &= put(o, "oom_at_ms", r->oom_at_ms >= 0 ? ms_json(r->oom_at_ms) : json_null());
    /* samples whose process tree was cut at a cap: their tree figure may be short */
    ok &= put(o, "tree_cut_samples", json_integer((json_int_t)r->tree_cut));
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return vf__json_finish(a, o);
}

char *vf_render_run_csv(struct vf_arena *a, const struct vf_run_sample *t, size_t n)
{
    /* a line is at most 3 x 20 digits, a time and 4 separators: 128 bytes each unless t_ms is
     * absurd, and then the whole CSV is refused (NULL), never cut short */
    size_t cap = 64 + n * 128;
    char *buf = vf_arena_alloc(a, cap);
    if (!buf)
        return NULL;
    size_t at = (size_t)snprintf(buf, cap, "t_ms,device_used_bytes,baseline_bytes,tree_bytes\n");
    for (size_t i = 0; i < n && at < cap; i++)
        at += (size_t)snprintf(buf + at, cap - at, "%.1f,%llu,%llu,%llu\n", t[i].t_ms,
                               (unsigned long long)t[i].device_used,
                               (unsigned long long)t[i].baseline,
                               (unsigned long long)t[i].tree_bytes);
    return at < cap ? buf : NULL;
}

char *vf_render_run_svg(struct vf_arena *a, const struct vf_run_sample *t, size_t n, uint64_t total,
                        double oom_ms)
{
    /* 800 x 300 px: memory (GiB) over time (s); the card's total as a dashed line, the
     * device's use and the tree's as lines, the peak and the OOM marked */
    const double W = 800, H = 300, L = 60, R = 20, T = 20, B = 40;
    double tmax = n ? t[n - 1].t_ms : 1, ymax = (double)total;
    for (size_t i = 0; i < n; i++)
        if ((double)t[i].device_used > ymax)
            ymax = (double)t[i].device_used;
    if (tmax <= 0)
        tmax = 1;
    if (ymax <= 0)
        ymax = 1;
    size_t cap = 4096 + n * 48;
    char *s = vf_arena_alloc(a, cap);
    if (!s)
        return NULL;
    size_t at = 0;
#define PUT(...)                                                   \
    do {                                                           \
        if (at < cap)                                              \
            at += (size_t)snprintf(s + at, cap - at, __VA_ARGS__); \
    } while (0)
#define X(ms) (L + (W - L - R) * (ms) / tmax)
#define Y(b)  (H - B - (H - T - B) * (double)(b) / ymax)
    PUT("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    PUT("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
        "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" font-size=\"12\">\n",
        W, H, W, H);
    PUT("<title>vramfit run: GPU memory over time</title>\n");
    PUT("<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
    PUT("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n", L, H - B,
        W - R, H - B);
    PUT("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n", L, T, L,
        H - B);
    PUT("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%.1f GiB</text>\n", L - 4, T + 4,
        ymax / (1 << 30));
    PUT("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%.1f s</text>\n", W - R, H - B + 16,
        tmax / 1000);
    if (total) {
        PUT("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#b00020\" "
            "stroke-dasharray=\"6 4\"/>\n",
            L, Y(total), W - R, Y(total));
        PUT("<text x=\"%.1f\" y=\"%.1f\" fill=\"#b00020\">card %.1f GiB</text>\n", L + 4,
            Y(total) - 4, (double)total / (1 << 30));
    }
    const char *names[2] = {"device", "process tree"}, *colors[2] = {"#0b5fff", "#ff8c00"};
    for (int line = 0; line < 2; line++) {
        PUT("<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"", colors[line]);
        for (size_t i = 0; i < n; i++)
            PUT("%.1f,%.1f ", X(t[i].t_ms), Y(line ? t[i].tree_bytes : t[i].device_used));
        PUT("\"><title>%s</title></polyline>\n", names[line]);
    }
    if (n) {
        size_t p = vf_run_peak(t, n);
        PUT("<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\" "
            "fill=\"#ff8c00\"><title>peak</title></circle>\n",
            X(t[p].t_ms), Y(t[p].tree_bytes));
        PUT("<text x=\"%.1f\" y=\"%.1f\">peak %.2f GiB</text>\n", X(t[p].t_ms) + 6,
            Y(t[p].tree_bytes) - 6, (double)t[p].tree_bytes / (1 << 30));
    }
    if (oom_ms >= 0) {
        PUT("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#b00020\" "
            "stroke-width=\"2\"/>\n",
            X(oom_ms), T, X(oom_ms), H - B);
        PUT("<text x=\"%.1f\" y=\"%.1f\" fill=\"#b00020\">OOM</text>\n", X(oom_ms) + 4, T + 12);
    }
    PUT("<text x=\"%.1f\" y=\"%.1f\" fill=\"#0b5fff\">device</text>\n", L + 4, H - 8);
    PUT("<text x=\"%.1f\" y=\"%.1f\" fill=\"#ff8c00\">process tree</text>\n", L + 70, H - 8);
    PUT("</svg>\n");
#undef PUT
#undef X
#undef Y
    return at < cap ? s : NULL;
}
