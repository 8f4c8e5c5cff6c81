/* SPDX-License-Identifier: Apache-2.0 */
/*
 * server.h - what serve.c (the HTTP side: libmicrohttpd, limits, logging, signals) and api.c
 * (the routes: the JSON API on the library's calls, the embedded web page) share. The server
 * is a program of its own (vramfit-serve) linking the library and none of the CLI.
 */
#ifndef VRAMFIT_SERVER_H
#define VRAMFIT_SERVER_H

#include "vramfit.h"

#include <stdbool.h>
#include <stddef.h>

/* An embedded file (tools/embed.c writes the table). */
struct srv_embedded_file {
    const char *name;
    const unsigned char *data;
    size_t len;
};

/* Request limits: query arguments, body sizes (a pasted log may be larger). */
#define SRV_MAX_ARGS     64
#define SRV_MAX_KEY      40
#define SRV_MAX_VALUE    1024
#define SRV_MAX_BODY     ((size_t)1 << 20)  /* 1 MiB */
#define SRV_MAX_LOG_BODY ((size_t)16 << 20) /* 16 MiB: POST /api/v1/explain */
/* Connections: enough that a flood of half-sent requests (2,000 in tests/http) leaves room for
 * the real ones, within the file descriptors the process may open (raised at start); an
 * idle connection (no byte for SRV_TIMEOUT_S) is closed, whole request or not. */
#define SRV_MAX_CONNS 4096
#define SRV_TIMEOUT_S 10
#define SRV_CONN_MEM  ((size_t)64 << 10)
/* A thread per connection (poll, not select: thousands of descriptors), so a request that
 * waits (on the hub) holds its own connection only; its stack; how many may wait on the hub. */
#define SRV_THREAD_STACK ((size_t)512 << 10)
#define SRV_MAX_HUB      2
/* `vramfit exporter`'s address when --listen is not given (serve's is 127.0.0.1:8077) */
#define SRV_EXPORTER_LISTEN "127.0.0.1:9477"

/* One query argument, decoded. */
struct srv_arg {
    const char *key, *value;
};

/* A request as the routes see it. */
struct srv_request {
    const char *method, *url;
    struct srv_arg args[SRV_MAX_ARGS];
    size_t n_args;
    bool too_many_args;
    const char *body;
    size_t body_len;
    const char *host, *origin, *fetch_site; /* the Host, Origin, Sec-Fetch-Site headers or NULL */
    /* POST /api/v1/explain: the body was fed to this scanner as it arrived (never held whole);
     * the scanner lives in scan_arena, which the route may use; scan_err when feeding failed */
    struct vf_oom_scan *scan;
    struct vf_arena *scan_arena;
    const struct vf_error *scan_err;
};

/* What a route answers: a status, a content type and a body (malloc'ed or static). */
struct srv_response {
    unsigned status;
    const char *type;
    char *body; /* freed by the server when owned */
    size_t len;
    bool owned;
    const char *allow_origin; /* CORS: Access-Control-Allow-Origin, or NULL */
    bool preflight;           /* an OPTIONS answer: the CORS methods and headers too */
};

/* Who may ask (docs/SECURITY.md): the Host names the server answers to and the one origin
 * that may read it cross-site. Set once at start, read-only after. */
#define SRV_MAX_HOSTS 16
struct srv_policy {
    char hosts[SRV_MAX_HOSTS][128]; /* "127.0.0.1:8077", "localhost:8077", --allow-host */
    size_t n_hosts;
    bool any_ip;             /* --public: any IP literal as Host (no name rebinds to it) */
    const char *cors_origin; /* --cors-origin, or NULL: no cross-site reads */
    bool metrics_only;       /* `vramfit exporter`: /metrics, /healthz, /api/v1/oom/last only */
};
extern struct srv_policy srv_policy;

/* The body cap of a route (POST /api/v1/explain takes a pasted log). */
size_t srv_body_cap(const char *method, const char *url);

/* Answers one request (api.c). Never fails: errors are JSON responses. */
void srv_route(const struct srv_request *rq, struct srv_response *out);

/* A JSON error {"error":{"code","message"}} with its status. */
void srv_error(struct srv_response *out, unsigned status, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* The catalog every request reads (opened once at start, read-only after). */
extern struct vf_catalog *srv_catalog;
/* "vramfit serve: error: ..." on stderr. */
void srv_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The exporter (exporter.c): follows the logs in paths[n] and the spool folder (either may be
 * absent) in a thread of its own; 0, or -1 with the error said. */
int srv_exporter_start(const char *const *paths, size_t n, const char *spool);
void srv_exporter_stop(void);
/* GET /metrics (the GPUs now and the OOM counters) and GET /api/v1/oom/last. */
void srv_metrics(struct srv_response *out);
void srv_oom_last(struct srv_response *out);

/* The embedded web assets (generated from web/ by tools/embed.c). */
extern const struct srv_embedded_file srv_web_files[];
extern const size_t srv_n_web_files;

#endif /* VRAMFIT_SERVER_H */
