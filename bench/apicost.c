/* SPDX-License-Identifier: Apache-2.0 */
/*
 * apicost.c - the in-process cost of one /api/v1/estimate and one /api/v1/pick, as the server
 * does them (src/server/api.c: a request arena, vf_workload_set for each query member,
 * vf_answer_*, the JSON), on one catalog opened and preloaded once as serve.c does: median, p10 and
 * p90 microseconds over N requests, after 20 unmeasured ones. It isolates the library's part of
 * bench/serve.sh's requests from HTTP and wrk (issue 15). Usage: apicost [N]   (built and run by
 * bench/serve.sh; default N 2000)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vramfit.h"

struct req {
    const char *name;
    unsigned cmd;
    const char *kv[12]; /* name, value, ..., NULL */
};

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

/* One request as the server runs it; the bytes of its JSON, 0 on an error. */
static size_t one(const struct vf_catalog *c, const struct req *r)
{
    struct vf_arena *a = vf_arena_open(0);
    struct vf_workload *w = vf_arena_alloc(a, sizeof *w);
    struct vf_answer *ans = vf_arena_alloc(a, sizeof *ans);
    struct vf_error err = {0};
    size_t n = 0;
    vf_workload_init(w, r->cmd);
    for (size_t i = 0; r->kv[i]; i += 2)
        if (vf_workload_set(w, r->kv[i], r->kv[i + 1], &err))
            goto out;
    if (vf_workload_finish(w, &err))
        goto out;
    const char *json = NULL;
    if (r->cmd == VF_CMD_PICK) {
        if (!vf_answer_pick(a, c, w, ans, &err))
            json = vf_render_pick_json(a, &ans->est, &ans->pick, w);
    } else if (!vf_answer_estimate(a, c, w, ans, &err)) {
        if (ans->has_fit)
            ans->fit.gpu = ans->card.name;
        json = vf_render_estimate_json(a, &ans->est, ans->has_fit ? &ans->fit : NULL);
    }
    n = json ? strlen(json) : 0;
out:
    if (!n)
        fprintf(stderr, "apicost: %s: %s\n", r->name, err.msg);
    vf_arena_close(a);
    return n;
}

static int by_value(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 2000;
    if (n < 10)
        n = 10;
    struct vf_catalog *c = NULL;
    struct vf_error err = {0};
    if (vf_catalog_open(&c, NULL, &err) || vf_catalog_preload(c, &err)) {
        fprintf(stderr, "apicost: %s\n", err.msg);
        return 1;
    }
    /* bench/serve.sh's two API requests */
    static const struct req reqs[] = {
        {"/api/v1/estimate?model=llama-3.1-8b&ctx=32k&users=4&gpu=rtx-4090",
         VF_CMD_ESTIMATE,
         {"model", "llama-3.1-8b", "ctx", "32k", "users", "4", "gpu", "rtx-4090", NULL}},
        {"/api/v1/pick?model=llama-3.1-70b&quant=Q4_K_M&ctx=32k&users=4&hours=3",
         VF_CMD_PICK,
         {"model", "llama-3.1-70b", "quant", "Q4_K_M", "ctx", "32k", "users", "4", "hours", "3",
          NULL}},
    };
    double *t = malloc((size_t)n * sizeof *t);
    if (!t)
        return 1;
    printf("%-72s %9s %9s %9s %7s\n", "request (in process, one catalog)", "median us", "p10 us",
           "p90 us", "bytes");
    for (size_t r = 0; r < sizeof reqs / sizeof *reqs; r++) {
        size_t bytes = 0;
        for (int i = 0; i < 20; i++)
            bytes = one(c, &reqs[r]);
        if (!bytes)
            return 1;
        for (int i = 0; i < n; i++) {
            double t0 = now_us();
            one(c, &reqs[r]);
            t[i] = now_us() - t0;
        }
        qsort(t, (size_t)n, sizeof *t, by_value);
        printf("%-72s %9.1f %9.1f %9.1f %7zu\n", reqs[r].name, t[n / 2], t[n / 10], t[n * 9 / 10],
               bytes);
    }
    free(t);
    vf_catalog_close(c);
    return 0;
}
