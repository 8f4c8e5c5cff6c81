/* SPDX-License-Identifier: Apache-2.0 */
/*
 * serve.c - vramfit-serve (`vramfit serve` runs it) [--listen 127.0.0.1:8077] [--data-dir DIR]:
 * the local web page and JSON API over libmicrohttpd (a thread per connection; it parses HTTP, we
 * never do). libmicrohttpd is loaded with dlopen the first time serve runs, as hub.c loads libcurl:
 * linking it would cost every other command its start-up time. Limits: body size per route
 * (srv_body_cap), connections, per-connection timeout and memory. One log line per request on
 * stderr; the URL is the first line on stdout. SIGINT/SIGTERM stop it cleanly.
 */
#include "server.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <locale.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <microhttpd.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------ libmicrohttpd via dlopen */

static struct {
    struct MHD_Daemon *(*start)(unsigned int, uint16_t, MHD_AcceptPolicyCallback, void *,
                                MHD_AccessHandlerCallback, void *, ...);
    void (*stop)(struct MHD_Daemon *);
    struct MHD_Response *(*from_buffer)(size_t, void *, enum MHD_ResponseMemoryMode);
    enum MHD_Result (*add_header)(struct MHD_Response *, const char *, const char *);
    enum MHD_Result (*queue)(struct MHD_Connection *, unsigned int, struct MHD_Response *);
    void (*destroy)(struct MHD_Response *);
    int (*values)(struct MHD_Connection *, enum MHD_ValueKind, MHD_KeyValueIterator, void *);
    const char *(*lookup)(struct MHD_Connection *, enum MHD_ValueKind, const char *);
    const union MHD_DaemonInfo *(*daemon_info)(struct MHD_Daemon *, enum MHD_DaemonInfoType, ...);
} mhd;

static int load_mhd(void)
{
    static const char *const sonames[] = {"libmicrohttpd.so.12", "libmicrohttpd.so"};
    static const char *const names[] = {"MHD_start_daemon",
                                        "MHD_stop_daemon",
                                        "MHD_create_response_from_buffer",
                                        "MHD_add_response_header",
                                        "MHD_queue_response",
                                        "MHD_destroy_response",
                                        "MHD_get_connection_values",
                                        "MHD_lookup_connection_value",
                                        "MHD_get_daemon_info"};
    void *lib = NULL;
    for (size_t i = 0; i < sizeof sonames / sizeof sonames[0] && !lib; i++)
        lib = dlopen(sonames[i], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        srv_fail("serve needs libmicrohttpd (apt-get install libmicrohttpd12): %s", dlerror());
        return -1;
    }
    void *sym[sizeof names / sizeof names[0]];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!(sym[i] = dlsym(lib, names[i]))) {
            srv_fail("libmicrohttpd lacks %s", names[i]);
            return -1;
        }
    /* POSIX guarantees that dlsym's object pointers convert to function pointers */
    memcpy(&mhd.start, &sym[0], sizeof mhd.start);
    memcpy(&mhd.stop, &sym[1], sizeof mhd.stop);
    memcpy(&mhd.from_buffer, &sym[2], sizeof mhd.from_buffer);
    memcpy(&mhd.add_header, &sym[3], sizeof mhd.add_header);
    memcpy(&mhd.queue, &sym[4], sizeof mhd.queue);
    memcpy(&mhd.destroy, &sym[5], sizeof mhd.destroy);
    memcpy(&mhd.values, &sym[6], sizeof mhd.values);
    memcpy(&mhd.lookup, &sym[7], sizeof mhd.lookup);
    memcpy(&mhd.daemon_info, &sym[8], sizeof mhd.daemon_info);
    return 0;
}

/* ------------------------------------------------------------------ requests */

/* Per-connection state: the body so far and the clock for the log line. */
struct conn {
    char uri[208];
    const char *method;
    bool started;
    char *body;
    size_t len, cap, limit;
    bool too_big;
    /* POST /api/v1/explain: the body goes through the scanner as it arrives (bounded memory
     * whatever its size: a line over VF_OOM_MAX_LINE is cut, 64 events are kept) */
    struct vf_arena *arena;
    struct vf_oom_scan *scan;
    struct vf_error scan_err;
    struct timespec t0;
    unsigned status;
    size_t sent;
};

static double ms_since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) * 1e3 + (double)(t.tv_nsec - t0->tv_nsec) / 1e6;
}

static enum MHD_Result collect_arg(void *cls, enum MHD_ValueKind kind, const char *key,
                                   const char *value)
{
    (void)kind;
    struct srv_request *rq = cls;
    if (rq->n_args == SRV_MAX_ARGS) {
        rq->too_many_args = true;
        return MHD_NO;
    }
    rq->args[rq->n_args].key = key;
    rq->args[rq->n_args].value = value ? value : "";
    rq->n_args++;
    return MHD_YES;
}

static enum MHD_Result send_response(struct MHD_Connection *c, struct conn *k,
                                     struct srv_response *r)
{
    struct MHD_Response *resp =
        mhd.from_buffer(r->len, r->body, r->owned ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
    if (!resp) {
        if (r->owned)
            free(r->body);
        return MHD_NO;
    }
    mhd.add_header(resp, "Content-Type", r->type);
    mhd.add_header(resp, "X-Content-Type-Options", "nosniff");
    mhd.add_header(resp, "Content-Security-Policy",
                   "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'");
    mhd.add_header(resp, "Cache-Control", "no-store");
    mhd.add_header(resp, "Vary", "Origin");
    if (r->allow_origin) {
        mhd.add_header(resp, "Access-Control-Allow-Origin", r->allow_origin);
        if (r->preflight) {
            mhd.add_header(resp, "Access-Control-Allow-Methods", "GET, POST");
            mhd.add_header(resp, "Access-Control-Allow-Headers", "Content-Type");
            mhd.add_header(resp, "Access-Control-Max-Age", "600");
        }
    }
    enum MHD_Result rc = mhd.queue(c, r->status, resp);
    mhd.destroy(resp);
    k->status = r->status;
    k->sent = r->len;
    return rc;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *upload,
                              size_t *upload_size, void **con_cls)
{
    (void)cls;
    (void)version;
    struct conn *k = *con_cls; /* made by log_uri */
    if (!k)
        return MHD_NO;
    if (!k->started) { /* the headers are in: set up, and refuse an announced body over the cap */
        k->started = true;
        k->method = method;
        k->limit = srv_body_cap(method, url);
        if (!strcmp(method, "POST") && !strcmp(url, "/api/v1/explain")) {
            k->arena = vf_arena_open(0);
            if (!k->arena || vf_oom_scan_open(k->arena, &k->scan, &k->scan_err))
                k->scan = NULL;
        }
        const char *cl = mhd.lookup(c, MHD_HEADER_KIND, "Content-Length");
        if (cl && strtoull(cl, NULL, 10) > k->limit)
            k->too_big = true;
        return MHD_YES;
    }
    if (*upload_size) { /* a piece of the body */
        if (!k->too_big && k->len + *upload_size > k->limit)
            k->too_big = true;
        if (!k->too_big && k->scan) {
            if (!k->scan_err.code)
                vf_oom_scan_feed(k->scan, upload, *upload_size, &k->scan_err);
            k->len += *upload_size;
        } else if (!k->too_big) {
            if (k->len + *upload_size + 1 > k->cap) {
                size_t want = (k->len + *upload_size + 1) * 2;
                if (want > k->limit + 1)
                    want = k->limit + 1;
                char *p = realloc(k->body, want);
                if (!p)
                    return MHD_NO;
                k->body = p;
                k->cap = want;
            }
            memcpy(k->body + k->len, upload, *upload_size);
            k->len += *upload_size;
            k->body[k->len] = '\0';
        }
        *upload_size = 0;
        return MHD_YES;
    }
    struct srv_response r = {0};
    if (k->too_big) {
        srv_error(&r, 413, "too_large", "the request body is over the limit of %zu bytes",
                  k->limit);
        return send_response(c, k, &r);
    }
    struct srv_request rq = {.method = method, .url = url};
    rq.host = mhd.lookup(c, MHD_HEADER_KIND, "Host");
    rq.origin = mhd.lookup(c, MHD_HEADER_KIND, "Origin");
    rq.fetch_site = mhd.lookup(c, MHD_HEADER_KIND, "Sec-Fetch-Site");
    mhd.values(c, MHD_GET_ARGUMENT_KIND, collect_arg, &rq);
    rq.body = k->body ? k->body : "";
    rq.body_len = k->body ? k->len : 0;
    rq.scan = k->scan;
    rq.scan_arena = k->arena;
    rq.scan_err = &k->scan_err;
    srv_route(&rq, &r);
    return send_response(c, k, &r);
}

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
                      enum MHD_RequestTerminationCode why)
{
    (void)cls;
    (void)c;
    struct conn *k = *con_cls;
    if (!k)
        return;
    pthread_mutex_lock(&log_lock);
    fprintf(stderr, "%s %s %u %zu B %.1f ms%s\n", k->method ? k->method : "-", k->uri, k->status,
            k->sent, ms_since(&k->t0),
            why == MHD_REQUEST_TERMINATED_COMPLETED_OK ? "" : " (connection ended early)");
    pthread_mutex_unlock(&log_lock);
    free(k->body);
    vf_arena_close(k->arena);
    free(k);
    *con_cls = NULL;
}

/* The request's state, made when its line arrives (the uri_log callback's value becomes the
 * request's *con_cls): the URI for the log line and the clock. */
static void *log_uri(void *cls, const char *uri, struct MHD_Connection *c)
{
    (void)cls;
    (void)c;
    struct conn *k = calloc(1, sizeof *k);
    if (!k)
        return NULL;
    clock_gettime(CLOCK_MONOTONIC, &k->t0);
    snprintf(k->uri, sizeof k->uri, "%.200s", uri ? uri : "");
    return k;
}

/* ---------------------------------------------------------------------- main */

static int parse_listen(const char *s, struct sockaddr_in *sa)
{
    char host[64];
    const char *colon = strrchr(s, ':');
    if (!colon || (size_t)(colon - s) >= sizeof host)
        return -1;
    memcpy(host, s, (size_t)(colon - s));
    host[colon - s] = '\0';
    char *end;
    unsigned long port = strtoul(colon + 1, &end, 10);
    if (*end || port > 65535 || colon[1] == '\0')
        return -1;
    memset(sa, 0, sizeof *sa);
    sa->sin_family = AF_INET;
    sa->sin_port = htons((uint16_t)port);
    if (!strcmp(host, "localhost"))
        strcpy(host, "127.0.0.1");
    return inet_pton(AF_INET, host, &sa->sin_addr) == 1 ? 0 : -1;
}

/* The server's own messages: "vramfit serve: error: ..." on stderr. */
void srv_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("vramfit serve: error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static const char usage_text[] =
    "usage: vramfit serve [--listen HOST:PORT] [--public] [--allow-host NAME]\n"
    "                     [--cors-origin ORIGIN] [--data-dir DIR]\n"
    "       vramfit exporter [--listen HOST:PORT] [--public] [--follow FILE...] [--oom-spool DIR]\n"
    "  (vramfit help serve: the endpoints and limits; docs/SECURITY.md: who may ask)\n";

/* As many descriptors as the hard limit allows, up to the connections and the process's own;
 * returns the connection cap that fits. */
static unsigned raise_fd_limit(void)
{
    struct rlimit nofile;
    unsigned max_conns = SRV_MAX_CONNS;
    if (!getrlimit(RLIMIT_NOFILE, &nofile)) {
        rlim_t want = SRV_MAX_CONNS + 64;
        if (nofile.rlim_cur < want) {
            nofile.rlim_cur = nofile.rlim_max < want ? nofile.rlim_max : want;
            setrlimit(RLIMIT_NOFILE, &nofile);
            getrlimit(RLIMIT_NOFILE, &nofile);
        }
        if (nofile.rlim_cur < want)
            max_conns = nofile.rlim_cur > 128 ? (unsigned)nofile.rlim_cur - 64 : 64;
    }
    return max_conns;
}

/* The Host names this server answers to (F-SEC-01): its address, localhost and 127.0.0.1 with
 * the port, and each --allow-host name as given and with the port. */
static void allow_hosts(const char *host, unsigned port, const char *const *names, size_t n)
{
    const char *own[] = {host, "localhost", "127.0.0.1"};
    for (size_t i = 0; i < 3; i++)
        snprintf(srv_policy.hosts[srv_policy.n_hosts++], sizeof srv_policy.hosts[0], "%s:%u",
                 own[i], port);
    for (size_t i = 0; i < n && srv_policy.n_hosts + 2 <= SRV_MAX_HOSTS; i++) {
        snprintf(srv_policy.hosts[srv_policy.n_hosts++], sizeof srv_policy.hosts[0], "%s",
                 names[i]);
        snprintf(srv_policy.hosts[srv_policy.n_hosts++], sizeof srv_policy.hosts[0], "%s:%u",
                 names[i], port);
    }
}

struct vf_catalog *srv_catalog;

/* The command line: serve's flags, and the exporter's (--metrics-only, --follow FILE...,
 * --oom-spool DIR). */
struct args {
    const char *listen, *data_dir, *spool;
    const char *names[SRV_MAX_HOSTS / 2];
    size_t n_names;
    const char *follow[VF_FOLLOW_MAX_FILES];
    size_t n_follow;
    bool public;
};

/* Fills a from argv; -1 to go on, else the exit code (help printed, or a usage error said). */
static int parse_args(int argc, char **argv, struct args *a)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(usage_text, stdout);
            return 0;
        }
        if (!strcmp(argv[i], "--listen") && i + 1 < argc) {
            a->listen = argv[++i];
        } else if (!strcmp(argv[i], "--public")) {
            a->public = true;
        } else if (!strcmp(argv[i], "--metrics-only")) {
            srv_policy.metrics_only = true;
        } else if (!strcmp(argv[i], "--oom-spool") && i + 1 < argc) {
            a->spool = argv[++i];
        } else if (!strcmp(argv[i], "--follow") && i + 1 < argc) {
            /* --follow FILE [FILE...]: the words up to the next flag */
            while (i + 1 < argc && argv[i + 1][0] != '-') {
                if (a->n_follow == VF_FOLLOW_MAX_FILES) {
                    fprintf(stderr, "vramfit serve: at most %d files to follow\n",
                            VF_FOLLOW_MAX_FILES);
                    return 2;
                }
                a->follow[a->n_follow++] = argv[++i];
            }
        } else if (!strcmp(argv[i], "--cors-origin") && i + 1 < argc) {
            srv_policy.cors_origin = argv[++i];
        } else if (!strcmp(argv[i], "--allow-host") && i + 1 < argc) {
            if (a->n_names == SRV_MAX_HOSTS / 2) {
                fprintf(stderr, "vramfit serve: at most %d --allow-host names\n",
                        SRV_MAX_HOSTS / 2);
                return 2;
            }
            a->names[a->n_names++] = argv[++i];
        } else if (!strcmp(argv[i], "--data-dir") && i + 1 < argc) {
            a->data_dir = argv[++i];
        } else {
            fprintf(stderr, "vramfit serve: unexpected '%s'\n%s", argv[i], usage_text);
            return 2;
        }
    }
    if ((a->n_follow || a->spool) && !srv_policy.metrics_only) {
        fprintf(stderr, "vramfit serve: --follow and --oom-spool are the exporter's (vramfit "
                        "exporter, or serve --metrics-only)\n");
        return 2;
    }
    if (!a->listen)
        a->listen = srv_policy.metrics_only ? SRV_EXPORTER_LISTEN : "127.0.0.1:8077";
    return -1;
}

int main(int argc, char **argv)
{
    setlocale(LC_ALL, "C");
#ifdef __GLIBC__
    /* Each request's arena takes 64 KiB blocks and gives them back when it closes; glibc's
     * default (trim the heap's top past 128 KiB, mmap past 128 KiB) handed them to the kernel
     * after every request and the next one faulted them in again: 8 page faults and about a
     * third of the server's CPU time per /api/v1/pick (issue 15, measured with perf stat and
     * bench/serve.sh). Freed memory is kept up to 64 MiB a heap instead. */
    mallopt(M_TRIM_THRESHOLD, 64 << 20);
    mallopt(M_MMAP_THRESHOLD, 4 << 20);
#endif
    struct args args = {.data_dir = getenv("VRAMFIT_DATA_DIR"),
                        .spool = getenv("VRAMFIT_OOM_SPOOL")};
    int prc = parse_args(argc, argv, &args);
    if (prc >= 0)
        return prc;
    const char *listen = args.listen;
    bool public = args.public;
    struct sockaddr_in sa;
    if (parse_listen(listen, &sa)) {
        fprintf(stderr,
                "vramfit serve: --listen %s: expected an IPv4 address and port such as "
                "127.0.0.1:8077 (port 0 picks a free one)\n",
                listen);
        return 2;
    }
    /* docs/SECURITY.md: other machines reach the server only when the operator says so */
    bool loopback = (ntohl(sa.sin_addr.s_addr) >> 24) == 127;
    if (!loopback && !public) {
        fprintf(stderr,
                "vramfit serve: --listen %s is reachable from other machines: add --public if "
                "that is what you want (the API shows this machine's GPU processes)\n",
                listen);
        return 2;
    }
    struct vf_error err = {0};
    /* every request shares the catalog's models, parsed once (issue 15) */
    if (vf_catalog_open(&srv_catalog, args.data_dir, &err) ||
        vf_catalog_preload(srv_catalog, &err)) {
        srv_fail("%s", err.msg);
        vf_catalog_close(srv_catalog);
        return 1;
    }
    if (load_mhd() || srv_exporter_start(args.follow, args.n_follow, args.spool)) {
        vf_catalog_close(srv_catalog);
        return 1;
    }

    /* the pool's threads inherit a mask that leaves SIGINT/SIGTERM to this thread */
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    unsigned max_conns = raise_fd_limit();
    struct MHD_Daemon *d =
        mhd.start(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL, 0,
                  NULL, NULL, handle, NULL, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
                  MHD_OPTION_THREAD_STACK_SIZE, SRV_THREAD_STACK, MHD_OPTION_CONNECTION_LIMIT,
                  max_conns, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)SRV_TIMEOUT_S,
                  MHD_OPTION_CONNECTION_MEMORY_LIMIT, SRV_CONN_MEM, MHD_OPTION_NOTIFY_COMPLETED,
                  completed, NULL, MHD_OPTION_URI_LOG_CALLBACK, log_uri, NULL, MHD_OPTION_END);
    if (!d) {
        srv_fail("cannot listen on %s (in use, or not an address of this machine)", listen);
        srv_exporter_stop();
        vf_catalog_close(srv_catalog);
        return 1;
    }
    const union MHD_DaemonInfo *info = mhd.daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    char host[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &sa.sin_addr, host, sizeof host);
    unsigned port = info ? (unsigned)info->port : (unsigned)ntohs(sa.sin_port);
    allow_hosts(host, port, args.names, args.n_names);
    srv_policy.any_ip = public;
    if (public)
        fprintf(stderr,
                "vramfit serve: warning: listening on %s for every machine that can reach it; "
                "the API has no authentication (docs/SECURITY.md)\n",
                host);
    printf("http://%s:%u/\n", host, port);
    fflush(stdout);
    fprintf(stderr,
            "vramfit serve: up to %u connections, a thread each; loopback only unless --listen "
            "and --public say otherwise; Ctrl-C stops\n",
            max_conns);
    int sig = 0;
    sigwait(&stop, &sig);
    fprintf(stderr, "vramfit serve: %s, stopping\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
    mhd.stop(d);
    srv_exporter_stop();
    vf_catalog_close(srv_catalog);
    return 0;
}
