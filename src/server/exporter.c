/* SPDX-License-Identifier: Apache-2.0 */
/*
 * exporter.c - what `vramfit exporter` (vramfit-serve --metrics-only) adds to the server: the
 * out-of-memory counters behind vramfit_oom_events_total and the last explanation behind
 * GET /api/v1/oom/last, fed two ways (README "Across a fleet"):
 *   --follow FILE...  logs followed in this process (the library's vf_follow: rotation and
 *                     truncation handled), each new OOM explained and counted;
 *   --oom-spool DIR   a folder where `vramfit run` and `vramfit explain --follow` leave one
 *                     file per OOM they explained (oom-NS-PID-COUNT.json, the explain --json
 *                     text; written under a temporary name and renamed, so never read half):
 *                     files newer than the exporter's start are counted once each.
 * One thread polls both every SRV_POLL_MS; the counters and the last text sit behind a mutex
 * the scrape takes briefly. Counts start at zero with the process, as Prometheus counters do.
 */
#include "server.h"
#include "version.h"

#include <dirent.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SRV_POLL_MS        500
#define SRV_MAX_COUNTERS   64                /* (tool, cause) pairs: both come from fixed sets */
#define SRV_SPOOL_PER_POLL 256               /* spool files taken in one poll; the rest next time */
#define SRV_SPOOL_MAX_FILE ((size_t)4 << 20) /* an explain --json text is a few KiB */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct vf_oom_count counters[SRV_MAX_COUNTERS];
static size_t n_counters;
static char *last_json; /* the last explanation (explain --json text), or NULL */

static pthread_t thread;
static _Atomic bool running;
static struct vf_follow *follow;
static const char *spool_dir;
static char spool_seen[64]; /* the name of the newest spool file taken ("oom-<ns>" at start) */

static void count(const char *tool, const char *cause, uint64_t n, char *json)
{
    pthread_mutex_lock(&lock);
    size_t i = 0;
    while (i < n_counters && (strcmp(counters[i].tool, tool) || strcmp(counters[i].cause, cause)))
        i++;
    if (i == n_counters && n_counters < SRV_MAX_COUNTERS) {
        counters[i].tool = strdup(tool);
        counters[i].cause = strdup(cause);
        if (counters[i].tool && counters[i].cause)
            n_counters++;
    }
    if (i < n_counters)
        counters[i].n += n;
    if (json) {
        free(last_json);
        last_json = json;
    }
    pthread_mutex_unlock(&lock);
}

/* A label value from a file we did not write: short, and plain characters only. */
static const char *word(const char *s)
{
    if (!s || !*s || strlen(s) > 40)
        return "unknown";
    for (const char *p = s; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_' || *p == '.' ||
              *p == '-'))
            return "unknown";
    return s;
}

static void on_hit(void *ud, const struct vf_follow_hit *h)
{
    const struct vf_workload *w = ud;
    const struct vf_explain *x = h->x;
    const char *tool = w->tool ? w->tool : x->events[x->n_events - 1].tool;
    const char *cause = x->diagnosis.cause;
    struct vf_arena *a = vf_arena_open(0);
    const char *text = a ? vf_render_explain_json(a, x) : NULL;
    count(word(tool), word(cause), h->n_new, text ? strdup(text) : NULL);
    vf_arena_close(a);
    fprintf(stderr, "vramfit exporter: %s: %llu new out-of-memory error%s (%s, %s)\n", h->path,
            (unsigned long long)h->n_new, h->n_new == 1 ? "" : "s", word(tool), word(cause));
}

/* One spool file: its count from the name, tool and cause from the text (the last event's
 * tool, the diagnosis' cause). Bad files are said on stderr and skipped. */
static void take_spooled(const char *name)
{
    unsigned long long ns, n;
    unsigned pid;
    if (sscanf(name, "oom-%llu-%u-%llu.json", &ns, &pid, &n) != 3 || !n || n > 1000000)
        return;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", spool_dir, name);
    FILE *f = fopen(path, "rb");
    char *text = f ? malloc(SRV_SPOOL_MAX_FILE + 1) : NULL;
    size_t len = text ? fread(text, 1, SRV_SPOOL_MAX_FILE + 1, f) : 0;
    if (f)
        fclose(f);
    json_error_t je = {.text = "cannot read it"};
    json_t *o = text && len <= SRV_SPOOL_MAX_FILE
                    ? json_loadb(text, len, JSON_REJECT_DUPLICATES, &je)
                    : NULL;
    json_t *evs = json_object_get(o, "events");
    json_t *ev = json_array_get(evs, json_array_size(evs) - 1);
    const char *tool = json_string_value(json_object_get(ev, "tool"));
    const char *cause =
        json_string_value(json_object_get(json_object_get(o, "diagnosis"), "cause"));
    if (!o || !cause) {
        fprintf(stderr, "vramfit exporter: %s: not an explanation (%s), skipped\n", path,
                o ? "no diagnosis.cause" : je.text);
        free(text);
    } else {
        text[len] = '\0';
        count(word(tool), word(cause), n, text); /* served as it is: explain --json's bytes */
    }
    json_decref(o);
}

static int by_name(const void *x, const void *y)
{
    return strcmp(*(char *const *)x, *(char *const *)y);
}

/* The spool files newer than the last taken, oldest first (their names sort by time). */
static void poll_spool(void)
{
    DIR *d = opendir(spool_dir);
    if (!d)
        return;
    char *names[SRV_SPOOL_PER_POLL] = {0};
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (!strncmp(e->d_name, "oom-", 4) && strlen(e->d_name) < sizeof spool_seen &&
            strcmp(e->d_name, spool_seen) > 0) {
            if (n == SRV_SPOOL_PER_POLL) { /* keep the oldest: the rest come next time */
                qsort(names, n, sizeof *names, by_name);
                if (strcmp(e->d_name, names[n - 1]) >= 0)
                    continue;
                free(names[--n]);
            }
            if ((names[n] = strdup(e->d_name)))
                n++;
        }
    closedir(d);
    qsort(names, n, sizeof *names, by_name);
    for (size_t i = 0; i < n; i++) {
        take_spooled(names[i]);
        snprintf(spool_seen, sizeof spool_seen, "%s", names[i]);
        free(names[i]);
    }
}

static void *poller(void *arg)
{
    struct vf_workload *w = arg;
    while (running) {
        struct vf_error err = {0};
        if (follow && vf_follow_poll(follow, srv_catalog, w, on_hit, w, &err))
            fprintf(stderr, "vramfit exporter: %s\n", err.msg);
        if (spool_dir)
            poll_spool();
        struct timespec t = {0, SRV_POLL_MS * 1000000L};
        nanosleep(&t, NULL);
    }
    return NULL;
}

int srv_exporter_start(const char *const *paths, size_t n, const char *spool)
{
    static struct vf_workload w;
    vf_workload_init(&w, VF_CMD_EXPLAIN);
    struct vf_error err = {0};
    if (n && vf_follow_open(&follow, paths, n, &err)) {
        srv_fail("%s", err.msg);
        return -1;
    }
    spool_dir = spool;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    snprintf(spool_seen, sizeof spool_seen, "oom-%020llu",
             (unsigned long long)now.tv_sec * 1000000000ull + (unsigned long long)now.tv_nsec);
    if (!n && !spool)
        return 0;
    running = true;
    if (pthread_create(&thread, NULL, poller, &w)) {
        running = false;
        srv_fail("cannot start the thread that follows the logs");
        return -1;
    }
    return 0;
}

void srv_exporter_stop(void)
{
    if (running) {
        running = false;
        pthread_join(thread, NULL);
    }
    vf_follow_close(follow);
    follow = NULL;
}

/* The node's name for the Hostname label: NODE_NAME (the DaemonSet sets it from
 * spec.nodeName, as dcgm-exporter's does), else this machine's host name. */
static const char *hostname(void)
{
    static char name[256];
    const char *node = getenv("NODE_NAME");
    if (node && *node)
        return node;
    if (!name[0] && gethostname(name, sizeof name - 1))
        snprintf(name, sizeof name, "unknown");
    return name;
}

void srv_metrics(struct srv_response *out)
{
    struct vf_arena *a = vf_arena_open(0);
    struct vf_gpu_snapshot s;
    struct vf_error err = {0};
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    bool ok = a && !vf_gpu_snapshot(a, &s, &err);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    struct vf_metrics_info m = {
        .hostname = hostname(),
        .revision = VF_COMMIT,
        .probe_error = ok           ? NULL
                       : err.msg[0] ? err.msg
                                    : "no GPU found",
        .scrape_seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9,
    };
    char *text = NULL;
    pthread_mutex_lock(&lock);
    m.oom = counters;
    m.n_oom = n_counters;
    if (a)
        text = vf_render_metrics(a, ok ? &s : NULL, &m);
    text = text ? strdup(text) : NULL;
    pthread_mutex_unlock(&lock);
    vf_arena_close(a);
    if (!text) {
        srv_error(out, 500, "internal", "out of memory");
        return;
    }
    out->status = 200;
    out->type = "text/plain; version=0.0.4; charset=utf-8";
    out->body = text;
    out->len = strlen(text);
    out->owned = true;
}

void srv_oom_last(struct srv_response *out)
{
    pthread_mutex_lock(&lock);
    char *text = last_json ? strdup(last_json) : NULL;
    bool none = !last_json;
    pthread_mutex_unlock(&lock);
    if (none) {
        srv_error(out, 404, "not_found",
                  "no out-of-memory error seen since the exporter started (it counts what "
                  "--follow and --oom-spool bring)");
    } else if (!text) {
        srv_error(out, 500, "internal", "out of memory");
    } else {
        out->status = 200;
        out->type = "application/json";
        out->body = text;
        out->len = strlen(text);
        out->owned = true;
    }
}
