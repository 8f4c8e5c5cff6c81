/* SPDX-License-Identifier: Apache-2.0 */
/*
 * api.c - the routes of vramfit serve. /api/v1/{estimate,pick,explain,inspect,models,gpus,smi}
 * call the library: the request's options go through the library's option table
 * (vf_workload_set: `?model=llama-3.1-8b&ctx=32k&gpu=rtx-4090`, or the same as a JSON body
 * with POST), the answer comes from vf_answer_* and the JSON renderers the CLI's --json uses,
 * so both print the same bytes. Errors are {"error":{"code","message"}} with a matching
 * status. Everything else is the embedded web page (web/). Nothing a request sends is
 * executed or opened as a file: only the table's options exist (none names a file), a value
 * is checked by its option's kind, a model must be a catalog id or an hf: id, and engine
 * settings come from the request, never from the server's environment.
 */
#include "server.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void srv_error(struct srv_response *out, unsigned status, const char *code, const char *fmt, ...)
{
    char msg[VF_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    struct vf_arena *a = vf_arena_open(0);
    const char *text = a ? vf_render_error_json(a, code, msg, NULL) : NULL;
    out->status = status;
    out->type = "application/json";
    out->body = text ? strdup(text) : NULL;
    vf_arena_close(a);
    if (!out->body) {
        out->body = (char *)"{\"error\":{\"code\":\"internal\",\"message\":\"out of memory\"}}\n";
        out->owned = false;
        out->status = 500;
    } else {
        out->owned = true;
    }
    out->len = strlen(out->body);
}

size_t srv_body_cap(const char *method, const char *url)
{
    if (method && !strcmp(method, "POST") && url && !strcmp(url, "/api/v1/explain"))
        return SRV_MAX_LOG_BODY;
    return SRV_MAX_BODY;
}

/* A query key: letters, digits, '-' and '_', not starting with '-' (an option's name as
 * vf_workload_set takes it without dashes: "ctx", "max_model_len", "OLLAMA_KV_CACHE_TYPE"). */
static bool key_ok(const char *key)
{
    size_t n = strlen(key);
    if (!n || n > SRV_MAX_KEY || key[0] == '-')
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = key[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_'))
            return false;
    }
    return true;
}

/* Is ref something the server may resolve (catalog id or alias, or a hub id)? */
static bool model_allowed(const char *ref, struct srv_response *out)
{
    const struct vf_catalog *c = srv_catalog;
    if (!strncmp(ref, "hf:", 3) || (c && vf_catalog_model(c, ref)))
        return true;
    const struct vf_catalog_model *sug[3];
    size_t n = c ? vf_catalog_suggest(c, ref, sug, 3) : 0;
    char list[512] = "";
    for (size_t i = 0; i < n; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "",
                 sug[i]->alias ? sug[i]->alias : sug[i]->id);
    srv_error(out, 404, "not_found",
              "unknown model '%.200s'%s%s (the server reads catalog models and hub ids "
              "hf:ORG/NAME, not local files)",
              ref, n ? " - did you mean: " : "", list);
    return false;
}

/* A library error as an HTTP answer: the code and status of vf_err_api_code. */
static void lib_error(const struct vf_error *err, struct srv_response *out)
{
    unsigned status;
    const char *code = vf_err_api_code(err->code, &status);
    srv_error(out, status, code, "%s", err->msg[0] ? err->msg : vf_strerror(err->code));
}

/* A 200 answer with a malloc'ed body; 500 when it is NULL (out of memory). */
static void answer(struct srv_response *out, char *body, const char *type)
{
    if (!body) {
        srv_error(out, 500, "internal", "out of memory");
        return;
    }
    out->status = 200;
    out->type = type;
    out->body = body;
    out->len = strlen(body);
    out->owned = true;
}

/* A 200 answer with a copy of text (made in an arena that is about to close). */
static void answer_copy(struct srv_response *out, const char *text, const char *type)
{
    answer(out, text ? strdup(text) : NULL, type);
}

/* One option from the request: the model is checked (catalog or hub ids only), the rest goes
 * through the library's option table; false with the error answered. */
static bool apply(struct vf_workload *w, const char *key, const char *value,
                  struct srv_response *out)
{
    if (!key_ok(key)) {
        srv_error(out, 400, "bad_request", "'%.40s' is not a parameter this endpoint takes", key);
        return false;
    }
    if (strlen(value) > SRV_MAX_VALUE) {
        srv_error(out, 400, "bad_request", "'%.40s': the value is over %d characters", key,
                  SRV_MAX_VALUE);
        return false;
    }
    if (!strcmp(key, "model")) {
        if (!*value) {
            srv_error(out, 400, "bad_request", "'model' is empty");
            return false;
        }
        if (!model_allowed(value, out))
            return false;
    }
    struct vf_error err = {0};
    if (vf_workload_set(w, key, value, &err)) {
        lib_error(&err, out);
        return false;
    }
    return true;
}

/* A JSON body's member value as the text vf_workload_set takes, in arena a; NULL for null. */
static const char *member_text(struct vf_arena *a, json_t *v)
{
    if (json_is_string(v))
        return json_string_value(v);
    if (json_is_integer(v))
        return vf_arena_printf(a, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
    if (json_is_real(v))
        return vf_arena_printf(a, "%.17g", json_real_value(v));
    if (json_is_true(v))
        return "true";
    if (json_is_false(v))
        return "false";
    return NULL;
}

/* The workload of a request: the query's options, then a JSON body's members (POST), the
 * engine first either way (which spellings are its own flags depends on it). */
static bool workload(struct vf_arena *a, const struct srv_request *rq, unsigned cmd,
                     struct vf_workload *w, json_t **body, struct srv_response *out)
{
    vf_workload_init(w, cmd);
    *body = NULL;
    if (rq->too_many_args) {
        srv_error(out, 400, "bad_request", "more than %d query arguments", SRV_MAX_ARGS);
        return false;
    }
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < rq->n_args; i++)
            if ((pass == 0) == !strcmp(rq->args[i].key, "engine") &&
                !apply(w, rq->args[i].key, rq->args[i].value, out))
                return false;
    if (cmd != VF_CMD_EXPLAIN && rq->body_len) {
        json_error_t je;
        *body = json_loadb(rq->body, rq->body_len, JSON_REJECT_DUPLICATES, &je);
        if (!json_is_object(*body)) {
            srv_error(out, 400, "bad_request", "the body is not a JSON object: %s at byte %d",
                      *body ? "another JSON value" : je.text, *body ? 0 : je.position);
            return false;
        }
        if (json_object_size(*body) > SRV_MAX_ARGS) {
            srv_error(out, 400, "bad_request", "more than %d members in the body", SRV_MAX_ARGS);
            return false;
        }
        for (int pass = 0; pass < 2; pass++) {
            const char *k;
            json_t *v;
            json_object_foreach(*body, k, v)
            {
                if ((pass == 0) != !strcmp(k, "engine"))
                    continue;
                size_t n = json_is_array(v) ? json_array_size(v) : 1;
                for (size_t e = 0; e < n && e < VF_MAX_FX; e++) {
                    json_t *item = json_is_array(v) ? json_array_get(v, e) : v;
                    const char *text = member_text(a, item);
                    if (!text && !json_is_null(item)) {
                        srv_error(out, 400, "bad_request",
                                  "'%.40s': a string, number or boolean (or a list of them)", k);
                        return false;
                    }
                    if (text && !apply(w, k, text, out))
                        return false;
                }
            }
        }
    }
    struct vf_error err = {0};
    if (vf_workload_finish(w, &err)) {
        lib_error(&err, out);
        return false;
    }
    return true;
}

/* F-SEC-03: at most SRV_MAX_HUB requests wait on the hub at once; the others are told to come
 * back (503) instead of taking the pool's threads, so a slow or silent hub never stalls the
 * page, /healthz or the catalog answers. */
static _Atomic unsigned hub_busy;

static bool hub_enter(const char *model, struct srv_response *out)
{
    if (!model || strncmp(model, "hf:", 3))
        return true;
    if (++hub_busy > SRV_MAX_HUB) {
        hub_busy--;
        srv_error(out, 503, "busy",
                  "%d hub lookups are running already; try again in a few seconds", SRV_MAX_HUB);
        return false;
    }
    return true;
}

static void hub_leave(const char *model)
{
    if (model && !strncmp(model, "hf:", 3))
        hub_busy--;
}

/* GET /api/v1/estimate and /pick (a JSON body's members may come with POST). */
static void estimate_or_pick(const struct srv_request *rq, bool pick, struct srv_response *out)
{
    struct vf_arena *a = vf_arena_open(0);
    struct vf_workload *w = a ? vf_arena_alloc(a, sizeof *w) : NULL;
    struct vf_answer *ans = a ? vf_arena_alloc(a, sizeof *ans) : NULL;
    json_t *body = NULL;
    struct vf_error err = {0};
    if (!w || !ans) {
        srv_error(out, 500, "internal", "out of memory");
    } else if (workload(a, rq, pick ? VF_CMD_PICK : VF_CMD_ESTIMATE, w, &body, out)) {
        if (!w->model)
            srv_error(out, 400, "bad_request", "which model? (model=llama-3.1-8b)");
        else if (hub_enter(w->model, out)) {
            enum vf_err rc = pick ? vf_answer_pick(a, srv_catalog, w, ans, &err)
                                  : vf_answer_estimate(a, srv_catalog, w, ans, &err);
            hub_leave(w->model);
            if (rc) {
                lib_error(&err, out);
            } else if (pick) {
                answer_copy(out, vf_render_pick_json(a, &ans->est, &ans->pick, w),
                            "application/json");
            } else {
                if (ans->has_fit)
                    ans->fit.gpu = ans->card.name;
                answer_copy(out,
                            vf_render_estimate_json(a, &ans->est, ans->has_fit ? &ans->fit : NULL),
                            "application/json");
            }
        }
    }
    json_decref(body);
    vf_arena_close(a);
}

/* POST /api/v1/explain: the body is the log; the query names the tool, the model and the
 * workload flags. */
static void explain(const struct srv_request *rq, struct srv_response *out)
{
    /* the body was scanned while it arrived: its arena serves the answer too */
    struct vf_arena *a = rq->scan_arena ? rq->scan_arena : vf_arena_open(0);
    struct vf_workload *w = a ? vf_arena_alloc(a, sizeof *w) : NULL;
    struct vf_explain x;
    json_t *body = NULL;
    struct vf_error err = {0};
    if (!w)
        srv_error(out, 500, "internal", "out of memory");
    else if (rq->scan_err && rq->scan_err->code)
        lib_error(rq->scan_err, out);
    else if (!workload(a, rq, VF_CMD_EXPLAIN, w, &body, out))
        ;
    else if (rq->scan ? vf_answer_explain_scanned(a, srv_catalog, w, rq->scan, &x, &err)
                      : vf_answer_explain_text(a, srv_catalog, w, rq->body, rq->body_len, &x, &err))
        lib_error(&err, out);
    else
        answer_copy(out, vf_render_explain_json(a, &x), "application/json");
    if (a != rq->scan_arena)
        vf_arena_close(a);
}

/* GET endpoints with a fixed set of keys: a key outside `keys` is an error. */
static bool only_keys(const struct srv_request *rq, const char *const *keys,
                      struct srv_response *out)
{
    if (rq->too_many_args) {
        srv_error(out, 400, "bad_request", "more than %d query arguments", SRV_MAX_ARGS);
        return false;
    }
    for (size_t i = 0; i < rq->n_args; i++) {
        bool known = false;
        for (size_t k = 0; keys[k] && !known; k++)
            known = !strcmp(rq->args[i].key, keys[k]);
        if (!known) {
            srv_error(out, 400, "bad_request", "'%.40s' is not a parameter this endpoint takes",
                      rq->args[i].key);
            return false;
        }
        if (strlen(rq->args[i].value) > SRV_MAX_VALUE) {
            srv_error(out, 400, "bad_request", "'%.40s': the value is over %d characters",
                      rq->args[i].key, SRV_MAX_VALUE);
            return false;
        }
    }
    return true;
}

static const char *arg(const struct srv_request *rq, const char *key)
{
    for (size_t i = 0; i < rq->n_args; i++)
        if (!strcmp(rq->args[i].key, key))
            return rq->args[i].value;
    return NULL;
}

/* GET /api/v1/inspect?model=ID */
static void inspect(const struct srv_request *rq, struct srv_response *out)
{
    static const char *const keys[] = {"model", NULL};
    const char *ref = arg(rq, "model");
    if (!only_keys(rq, keys, out))
        return;
    if (!ref || !*ref) {
        srv_error(out, 400, "bad_request", "which model? (model=llama-3.1-8b)");
        return;
    }
    if (!model_allowed(ref, out))
        return;
    struct vf_arena *a = vf_arena_open(0);
    struct vf_model *m = a ? vf_arena_alloc(a, sizeof *m) : NULL;
    struct vf_error err = {0};
    if (!m)
        srv_error(out, 500, "internal", "out of memory");
    else if (hub_enter(ref, out)) {
        enum vf_err rc = vf_model_resolve(a, srv_catalog, ref, m, &err);
        hub_leave(ref);
        if (rc)
            lib_error(&err, out);
        else
            answer_copy(out, vf_render_inspect_json(a, m), "application/json");
    }
    vf_arena_close(a);
}

/* GET /api/v1/models[?search=Q] and /api/v1/gpus */
static void catalog(const struct srv_request *rq, bool gpus, struct srv_response *out)
{
    static const char *const model_keys[] = {"search", "q", NULL};
    static const char *const no_keys[] = {NULL};
    if (!only_keys(rq, gpus ? no_keys : model_keys, out))
        return;
    const char *q = gpus ? NULL : arg(rq, "search") ? arg(rq, "search") : arg(rq, "q");
    struct vf_arena *a = vf_arena_open(0);
    struct vf_catalog view;
    struct vf_error err = {0};
    if (!a)
        srv_error(out, 500, "internal", "out of memory");
    else if (vf_catalog_search(a, srv_catalog, q, &view, &err))
        lib_error(&err, out);
    else
        answer_copy(out, vf_render_catalog_json(a, &view, gpus), "application/json");
    vf_arena_close(a);
}

/* GET /api/v1/smi: the GPUs and who holds their memory. */
static void smi(const struct srv_request *rq, struct srv_response *out)
{
    static const char *const no_keys[] = {NULL};
    if (!only_keys(rq, no_keys, out))
        return;
    struct vf_arena *a = vf_arena_open(0);
    struct vf_gpu_snapshot s;
    struct vf_error err = {0};
    if (!a)
        srv_error(out, 500, "internal", "out of memory");
    else if (vf_gpu_snapshot(a, &s, &err))
        lib_error(&err, out);
    else
        answer_copy(out, vf_render_gpus_json(a, &s), "application/json");
    vf_arena_close(a);
}

static void asset(const char *path, struct srv_response *out)
{
    static const struct {
        const char *ext, *type;
    } types[] = {{".html", "text/html; charset=utf-8"},
                 {".js", "text/javascript; charset=utf-8"},
                 {".css", "text/css; charset=utf-8"},
                 {".png", "image/png"},
                 {".svg", "image/svg+xml"}};
    if (path[0] != '/') { /* "*" or an absolute URI: no page of ours */
        srv_error(out, 404, "not_found", "no page '%.200s'", path);
        return;
    }
    if (!strcmp(path, "/"))
        path = "/index.html";
    for (size_t i = 0; i < srv_n_web_files; i++) {
        if (strcmp(srv_web_files[i].name, path + 1))
            continue;
        out->status = 200;
        out->type = "application/octet-stream";
        const char *dot = strrchr(path, '.');
        for (size_t t = 0; dot && t < sizeof types / sizeof types[0]; t++)
            if (!strcmp(dot, types[t].ext))
                out->type = types[t].type;
        out->body = (char *)srv_web_files[i].data;
        out->len = srv_web_files[i].len;
        out->owned = false;
        return;
    }
    srv_error(out, 404, "not_found", "no page '%.200s'", path);
}

struct srv_policy srv_policy;

/* An IP literal "1.2.3.4[:port]" or "[v6][:port]": no DNS name can rebind to it. */
static bool ip_literal(const char *host)
{
    if (host[0] == '[')
        return true;
    for (const char *p = host; *p && *p != ':'; p++)
        if (!((*p >= '0' && *p <= '9') || *p == '.'))
            return false;
    return true;
}

/* F-SEC-01 (docs/SECURITY.md): the Host header names this server: a DNS name an attacker
 * controls and points at 127.0.0.1 (rebinding) is refused. */
static bool host_allowed(const char *host)
{
    if (!host || !*host)
        return false;
    for (size_t i = 0; i < srv_policy.n_hosts; i++)
        if (!strcasecmp(host, srv_policy.hosts[i]))
            return true;
    return srv_policy.any_ip && ip_literal(host);
}

/* F-SEC-02: a browser's cross-site request may not read local state or spend the user's
 * token: an Origin that is neither this server's ("http://" + Host) nor --cors-origin is
 * refused, and so is a request the browser marks cross-site (Sec-Fetch-Site) without one.
 * Requests with neither header (curl, scripts, Prometheus) are not a browser's. */
static bool origin_allowed(const struct srv_request *rq, struct srv_response *out)
{
    if (rq->origin) {
        if (srv_policy.cors_origin && !strcmp(rq->origin, srv_policy.cors_origin)) {
            out->allow_origin = srv_policy.cors_origin;
            return true;
        }
        return !strncmp(rq->origin, "http://", 7) && rq->host &&
               !strcasecmp(rq->origin + 7, rq->host);
    }
    return !rq->fetch_site || !strcmp(rq->fetch_site, "same-origin") ||
           !strcmp(rq->fetch_site, "none");
}

void srv_route(const struct srv_request *rq, struct srv_response *out)
{
    const char *u = rq->url;
    if (!host_allowed(rq->host)) {
        srv_error(out, 403, "forbidden",
                  "Host '%.100s' is not this server's (DNS rebinding?); --allow-host NAME "
                  "adds a name",
                  rq->host ? rq->host : "");
        return;
    }
    if (strcmp(u, "/healthz") && strncmp(u, "/api/", 5) == 0 && !origin_allowed(rq, out)) {
        srv_error(out, 403, "forbidden",
                  "a cross-site request (Origin '%.100s'): the API answers this server's page, "
                  "or the origin --cors-origin names",
                  rq->origin ? rq->origin : "-");
        return;
    }
    if (!strcmp(u, "/metrics") && !origin_allowed(rq, out)) {
        srv_error(out, 403, "forbidden", "a cross-site request for the metrics");
        return;
    }
    if (!strcmp(rq->method, "OPTIONS") && out->allow_origin) {
        out->status = 204;
        out->type = "text/plain";
        out->body = (char *)"";
        out->len = 0;
        out->preflight = true;
        return;
    }
    bool get = !strcmp(rq->method, "GET") || !strcmp(rq->method, "HEAD");
    bool post = !strcmp(rq->method, "POST");
    if (!strcmp(u, "/healthz")) {
        out->status = 200;
        out->type = "text/plain; charset=utf-8";
        out->body = (char *)"ok\n";
        out->len = 3;
        return;
    }
    if (!strcmp(u, "/metrics") && get) {
        srv_metrics(out);
        return;
    }
    if (!strcmp(u, "/api/v1/oom/last") && get) {
        srv_oom_last(out);
        return;
    }
    if (srv_policy.metrics_only) {
        srv_error(out, 404, "not_found",
                  "%.200s: the exporter answers /metrics, /healthz and /api/v1/oom/last only "
                  "(vramfit serve has the page and the API)",
                  u);
        return;
    }
    if (strncmp(u, "/api/", 5)) {
        if (!get)
            srv_error(out, 405, "method_not_allowed", "%s: pages are read with GET", rq->method);
        else
            asset(u, out);
        return;
    }
    if (!strcmp(u, "/api/v1/version") && get) {
        size_t n;
        const struct vf_engine *const *all = vf_engines(&n);
        json_t *o = json_pack("{s:s,s:[]}", "version", VF_VERSION, "engines");
        for (size_t i = 0; o && i < n; i++)
            json_array_append_new(
                json_object_get(o, "engines"),
                json_pack("{s:s,s:s}", "name", all[i]->name, "version", all[i]->version));
        answer(out, o ? json_dumps(o, JSON_INDENT(2)) : NULL, "application/json");
        json_decref(o);
        return;
    }
    if (!strcmp(u, "/api/v1/estimate") && (get || post))
        estimate_or_pick(rq, false, out);
    else if (!strcmp(u, "/api/v1/pick") && (get || post))
        estimate_or_pick(rq, true, out);
    else if (!strcmp(u, "/api/v1/inspect") && get)
        inspect(rq, out);
    else if (!strcmp(u, "/api/v1/models") && get)
        catalog(rq, false, out);
    else if (!strcmp(u, "/api/v1/gpus") && get)
        catalog(rq, true, out);
    else if (!strcmp(u, "/api/v1/smi") && get)
        smi(rq, out);
    else if (!strcmp(u, "/api/v1/explain") && post)
        explain(rq, out);
    else if (!strcmp(u, "/api/v1/estimate") || !strcmp(u, "/api/v1/pick") ||
             !strcmp(u, "/api/v1/explain") || !strcmp(u, "/api/v1/models") ||
             !strcmp(u, "/api/v1/gpus") || !strcmp(u, "/api/v1/inspect") ||
             !strcmp(u, "/api/v1/version") || !strcmp(u, "/api/v1/smi") ||
             !strcmp(u, "/api/v1/oom/last"))
        srv_error(out, 405, "method_not_allowed", "%s %s: use %s", rq->method, u,
                  !strcmp(u, "/api/v1/explain") ? "POST with the log as the body" : "GET");
    else
        srv_error(out, 404, "not_found",
                  "no endpoint %.200s (estimate, pick, explain, inspect, models, gpus, smi, "
                  "version, oom/last; /metrics)",
                  u);
}
