/* SPDX-License-Identifier: Apache-2.0 */
/*
 * render_prom.c - the Prometheus text exposition (format 0.0.4) of `vramfit exporter`'s
 * /metrics: the GPUs, who holds their memory, the out-of-memory errors counted, the build and
 * the scrape itself. Names follow Prometheus's conventions (base units, _bytes, _ratio,
 * _total for counters, _info for the build); the labels of the per-GPU series are the ones
 * dcgm-exporter (NVIDIA/dcgm-exporter 3.x, pkg/dcgmexporter) gives the same figures: gpu,
 * UUID, modelName, Hostname, so a dashboard can join the two.
 */
#include "internal.h"

#include <stdio.h>
#include <string.h>

const char *const vf_metric_names[] = {"vramfit_build_info",
                                       "vramfit_gpu_probe_success",
                                       "vramfit_gpu_memory_total_bytes",
                                       "vramfit_gpu_memory_used_bytes",
                                       "vramfit_gpu_memory_free_bytes",
                                       "vramfit_gpu_memory_reserved_bytes",
                                       "vramfit_gpu_utilization_ratio",
                                       "vramfit_process_gpu_memory_bytes",
                                       "vramfit_oom_events_total",
                                       "vramfit_scrape_duration_seconds",
                                       NULL};

/* A label value with Prometheus's escapes (backslash, quote, newline). */
static void label(struct vf__sb *b, const char *name, const char *v, bool first)
{
    vf__sb_printf(b, "%s%s=\"", first ? "" : ",", name);
    for (const char *p = v ? v : ""; *p; p++) {
        if (*p == '\\' || *p == '"')
            vf__sb_printf(b, "\\%c", *p);
        else if (*p == '\n')
            vf__sb_puts(b, "\\n");
        else
            vf__sb_putc(b, *p);
    }
    vf__sb_putc(b, '"');
}

static void head(struct vf__sb *b, const char *name, const char *type, const char *help)
{
    vf__sb_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* gpu="0" (a MIG instance: "0/mig1", its parent's index and its own) and UUID. */
static void gpu_labels(struct vf__sb *b, const struct vf_gpu_dev *d)
{
    char idx[32];
    if (d->mig_parent)
        snprintf(idx, sizeof idx, "%u/mig%u", d->mig_parent - 1, d->index);
    else
        snprintf(idx, sizeof idx, "%u", d->index);
    label(b, "gpu", idx, true);
    label(b, "UUID", d->uuid, false);
}

static void devices(struct vf__sb *b, const struct vf_gpu_snapshot *s, const char *host)
{
    static const struct {
        const char *name, *help;
    } m[] = {
        {"vramfit_gpu_memory_total_bytes", "Memory of the GPU (DCGM_FI_DEV_FB_TOTAL, MiB there)"},
        {"vramfit_gpu_memory_used_bytes", "Memory in use (DCGM_FI_DEV_FB_USED, MiB there)"},
        {"vramfit_gpu_memory_free_bytes", "Memory free (DCGM_FI_DEV_FB_FREE, MiB there)"},
        {"vramfit_gpu_memory_reserved_bytes",
         "Memory the driver and firmware reserve (DCGM_FI_DEV_FB_RESERVED)"},
        {"vramfit_gpu_utilization_ratio", "Time the GPU was busy, 0-1 (DCGM_FI_DEV_GPU_UTIL, %)"},
    };
    for (size_t k = 0; k < sizeof m / sizeof m[0]; k++) {
        head(b, m[k].name, "gauge", m[k].help);
        for (size_t i = 0; s && i < s->n_devs; i++) {
            const struct vf_gpu_dev *d = &s->devs[i];
            uint64_t v = k == 0   ? d->total_bytes
                         : k == 1 ? d->used_bytes
                         : k == 2 ? d->free_bytes
                         : k == 3 ? d->reserved_bytes
                                  : (d->util_percent == UINT32_MAX ? VF_UNKNOWN : 0);
            if (v == VF_UNKNOWN)
                continue;
            vf__sb_printf(b, "%s{", m[k].name);
            gpu_labels(b, d);
            label(b, "modelName", d->name, false);
            label(b, "Hostname", host, false);
            if (k == 4)
                vf__sb_printf(b, "} %u.%02u\n", d->util_percent / 100, d->util_percent % 100);
            else
                vf__sb_printf(b, "} %llu\n", (unsigned long long)v);
        }
    }
    head(b, "vramfit_process_gpu_memory_bytes", "gauge",
         "Memory a process holds on a GPU (command: its name; container and pod_uid from its "
         "cgroup)");
    for (size_t i = 0; s && i < s->n_devs; i++)
        for (size_t k = 0; k < s->devs[i].n_procs; k++) {
            const struct vf_gpu_proc *p = &s->devs[i].procs[k];
            if (p->used_bytes == VF_UNKNOWN)
                continue;
            char pid[16];
            snprintf(pid, sizeof pid, "%u", p->pid);
            vf__sb_puts(b, "vramfit_process_gpu_memory_bytes{");
            gpu_labels(b, &s->devs[i]);
            label(b, "Hostname", host, false);
            label(b, "pid", pid, false);
            label(b, "command", p->name, false);
            label(b, "container", p->container, false);
            label(b, "pod_uid", p->pod_uid, false);
            vf__sb_printf(b, "} %llu\n", (unsigned long long)p->used_bytes);
        }
}

char *vf_render_metrics(struct vf_arena *a, const struct vf_gpu_snapshot *s,
                        const struct vf_metrics_info *m)
{
    struct vf__sb b = {.a = a};
    head(&b, "vramfit_build_info", "gauge", "The vramfit that answers (always 1)");
    vf__sb_puts(&b, "vramfit_build_info{");
    label(&b, "version", VF_VERSION, true);
    label(&b, "revision", m->revision, false);
    label(&b, "backend", s ? s->backend : "", false);
    vf__sb_puts(&b, "} 1\n");
    if (m->probe_error) /* the reason once, as a comment: the series below are then empty */
        vf__sb_printf(&b, "# vramfit: %s\n", m->probe_error);
    head(&b, "vramfit_gpu_probe_success", "gauge", "1 when the GPUs could be read");
    vf__sb_printf(&b, "vramfit_gpu_probe_success %d\n", s && !m->probe_error ? 1 : 0);
    devices(&b, m->probe_error ? NULL : s, m->hostname);
    head(&b, "vramfit_oom_events_total", "counter",
         "Out-of-memory errors seen since the exporter started (explain --follow, run), by the "
         "tool that ran and the diagnosed cause");
    for (size_t i = 0; i < m->n_oom; i++) {
        vf__sb_puts(&b, "vramfit_oom_events_total{");
        label(&b, "Hostname", m->hostname, true);
        label(&b, "tool", m->oom[i].tool, false);
        label(&b, "cause", m->oom[i].cause, false);
        vf__sb_printf(&b, "} %llu\n", (unsigned long long)m->oom[i].n);
    }
    head(&b, "vramfit_scrape_duration_seconds", "gauge", "Time reading the GPUs took");
    vf__sb_printf(&b, "vramfit_scrape_duration_seconds %.6f\n", m->scrape_seconds);
    return vf__sb_done(&b);
}
