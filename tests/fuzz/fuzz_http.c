/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_http.c - libFuzzer target of the server's request handling (src/server/api.c, linked in
 * whole, with exporter.c for /metrics and /api/v1/oom/last): a request as serve.c hands it to
 * srv_route after libmicrohttpd has parsed the HTTP - method, URL, the Host, Origin and
 * Sec-Fetch-Site headers, the decoded query arguments and the body - so the routes, the Host and
 * Origin policy, the query keys through the option table (vf_workload_set) and the JSON body reader
 * all see hostile values. POST /api/v1/explain bodies go through the OOM scanner as serve.c feeds
 * them.
 *
 * Input: lines "METHOD", "URL", "HOST", "ORIGIN", "SEC-FETCH-SITE" (an empty line: no such
 * header), then "KEY=VALUE" query arguments up to an empty line, then the body. A request
 * naming a hub model ("hf:") is skipped: it would go to the network.
 */
#define _GNU_SOURCE /* memmem */
#include "fuzz.h"

#include "../../src/server/server.h"

#define HEAD_LINES 5

struct vf_catalog *srv_catalog;
static const unsigned char page[] = "<!doctype html><title>vramfit</title>";
const struct srv_embedded_file srv_web_files[] = {{"index.html", page, sizeof page - 1}};
const size_t srv_n_web_files = 1;
/* serve.c's (not linked): the exporter's start errors, never reached here */
void srv_fail(const char *fmt, ...)
{
    (void)fmt;
}

static void setup(void)
{
    if (srv_catalog)
        return;
    if (vf_catalog_open(&srv_catalog, NULL, NULL))
        abort();
    setenv("VRAMFIT_GPU_BACKEND", "fake", 1); /* /api/v1/smi and /metrics: no GPU */
    unsetenv("VRAMFIT_FAKE_GPUS");
    snprintf(srv_policy.hosts[0], sizeof srv_policy.hosts[0], "127.0.0.1:8077");
    snprintf(srv_policy.hosts[1], sizeof srv_policy.hosts[1], "localhost:8077");
    srv_policy.n_hosts = 2;
    srv_policy.cors_origin = "http://app.example";
}

/* The request's query arguments from the lines after the headers; returns where the body
 * starts (after the empty line), or NULL when there is none. */
static char *query(struct srv_request *rq, char *p)
{
    while (p && *p && *p != '\n') {
        char *nl = strchr(p, '\n');
        if (nl)
            *nl = '\0';
        if (rq->n_args == SRV_MAX_ARGS) {
            rq->too_many_args = true;
        } else {
            char *eq = strchr(p, '=');
            if (eq)
                *eq = '\0';
            rq->args[rq->n_args++] = (struct srv_arg){p, eq ? eq + 1 : ""};
        }
        p = nl ? nl + 1 : NULL;
    }
    return p && *p == '\n' ? p + 1 : NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    setup();
    if (memmem(data, size, "hf:", 3))
        return 0;
    char *text = fuzz_text(data, size);
    if (!text)
        return 0;
    char *head[HEAD_LINES + 1];
    size_t n = fuzz_split(text, '\n', head, HEAD_LINES + 1);
    struct srv_request rq = {.method = head[0], .url = n > 1 ? head[1] : "/"};
    rq.host = n > 2 ? head[2] : "127.0.0.1:8077";
    rq.origin = n > 3 && *head[3] ? head[3] : NULL;
    rq.fetch_site = n > 4 && *head[4] ? head[4] : NULL;
    char *body = query(&rq, n > HEAD_LINES ? head[HEAD_LINES] : NULL);
    rq.body = body ? body : "";
    rq.body_len = body ? strlen(body) : 0;
    struct vf_error scan_err = {0};
    rq.scan_err = &scan_err;
    if (!strcmp(rq.method, "POST") && !strcmp(rq.url, "/api/v1/explain")) {
        rq.scan_arena = vf_arena_open(0);
        if (rq.scan_arena && !vf_oom_scan_open(rq.scan_arena, &rq.scan, &scan_err))
            (void)vf_oom_scan_feed(rq.scan, rq.body, rq.body_len, &scan_err);
    }
    struct srv_response r = {0};
    if (rq.body_len <= srv_body_cap(rq.method, rq.url))
        srv_route(&rq, &r);
    if (r.body && r.len != strlen(r.body) && strcmp(r.type, "image/png"))
        __builtin_trap(); /* a text answer's length is its body's */
    if (r.owned)
        free(r.body);
    vf_arena_close(rq.scan_arena);
    free(text);
    return 0;
}
