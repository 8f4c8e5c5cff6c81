/*
 * api.c - the routes of vramfit serve. /api/v1/{estimate,pick,explain,inspect,models,gpus}
 * run the CLI's own commands with `--json` on an argument vector made from the query
 * (`?model=llama-3.1-8b&ctx=32k&gpu=rtx-4090` is `estimate llama-3.1-8b --ctx 32k --gpu
 * rtx-4090 --json`), their output captured on this thread: the API answers exactly what the
 * CLI prints. Errors are {"error":{"code","message"}} with a matching status. Everything else
 * is the embedded web page (web/). Nothing a request sends is executed or opened as a file:
 * keys are flag names from a fixed alphabet, a model must be a catalog id or an hf: id, and
 * the flags that name files or directories are refused.
 */
#include "server.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void srv_error(struct srv_response *out, unsigned status, const char *code, const char *fmt, ...)
{
    char msg[VF_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    json_t *o = json_pack("{s:{s:s,s:s}}", "error", "code", code, "message", msg);
    out->status = status;
    out->type = "application/json";
    out->body = o ? json_dumps(o, JSON_INDENT(2)) : NULL;
    json_decref(o);
    if (!out->body) {
        out->body = (char *)"{\"error\":{\"code\":\"internal\",\"message\":\"out of memory\"}}";
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

/* Flags a request may not pass: they name files or change how output is written. */
static bool refused(const char *key)
{
    static const char *const no[] = {"data-dir", "json", "ascii", "help", "h", "listen"};
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
        if (!strcmp(key, no[i]))
            return true;
    return false;
}

/* A flag name: lower-case letters, digits, '-' and '_' ('_' becomes '-'). */
static bool flag_name(const char *key, char *out, size_t cap)
{
    size_t n = strlen(key);
    if (!n || n >= cap || n > SRV_MAX_KEY)
        return false;
    for (size_t i = 0; i <= n; i++) {
        char c = key[i];
        if (i < n && !((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_'))
            return false;
        out[i] = c == '_' ? '-' : c;
    }
    return out[0] != '-';
}

/* Is ref something the server may resolve (catalog id or alias, or a hub id)? */
static bool model_allowed(const char *ref, struct srv_response *out)
{
    const struct vf_catalog *c = cli_shared_catalog();
    if (!strncmp(ref, "hf:", 3) || (c && vf_catalog_model(c, ref)))
        return true;
    const struct vf_catalog_model *sug[3];
    size_t n = c ? vf_catalog_suggest(c, ref, sug, 3) : 0;
    char list[512] = "";
    for (size_t i = 0; i < n; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "",
                 sug[i]->alias ? sug[i]->alias : sug[i]->id);
    srv_error(out, 404, "not_found",
              "unknown model '%.200s'%s%s%s (the server reads catalog models and hub ids "
              "hf:ORG/NAME, not local files)",
              ref, n ? " - did you mean: " : "", list, "");
    return false;
}

/* Runs `cmd ARGS --json` from the query and answers what it prints. */
static void run(const struct srv_request *rq, const char *cmd, const char *positional_key,
                const char *fixed_positional, bool input, struct srv_response *out)
{
    char *argv[2 * SRV_MAX_ARGS + 4];
    char names[SRV_MAX_ARGS][SRV_MAX_KEY + 3];
    int argc = 0;
    argv[argc++] = (char *)cmd;
    if (fixed_positional)
        argv[argc++] = (char *)fixed_positional;
    if (rq->too_many_args) {
        srv_error(out, 400, "bad_request", "more than %d query arguments", SRV_MAX_ARGS);
        return;
    }
    for (size_t i = 0; i < rq->n_args; i++) {
        const char *k = rq->args[i].key, *v = rq->args[i].value;
        if (strlen(v) > SRV_MAX_VALUE) {
            srv_error(out, 400, "bad_request", "'%.40s': the value is over %d characters", k,
                      SRV_MAX_VALUE);
            return;
        }
        if (!strcmp(k, "model") && !model_allowed(v, out))
            return;
        if (positional_key && !strcmp(k, positional_key)) {
            if (!*v) {
                srv_error(out, 400, "bad_request", "'%s' is empty", k);
                return;
            }
            argv[argc++] = (char *)v;
            continue;
        }
        char name[SRV_MAX_KEY + 1];
        if (!flag_name(k, name, sizeof name) || refused(name)) {
            srv_error(out, 400, "bad_request", "'%.40s' is not a parameter this endpoint takes", k);
            return;
        }
        snprintf(names[i], sizeof names[i], "--%s", name);
        argv[argc++] = names[i];
        if (*v)
            argv[argc++] = (char *)v;
    }
    argv[argc++] = "--json";
    argv[argc] = NULL;

    struct cli_capture cap;
    if (input)
        cli_capture_begin_input(&cap, rq->body, rq->body_len);
    else
        cli_capture_begin(&cap);
    int rc = !strcmp(cmd, "estimate")  ? cmd_estimate(argc, argv)
             : !strcmp(cmd, "smi")     ? cmd_smi(argc, argv)
             : !strcmp(cmd, "pick")    ? cmd_pick(argc, argv)
             : !strcmp(cmd, "explain") ? cmd_explain(argc, argv)
             : !strcmp(cmd, "inspect") ? cmd_inspect(argc, argv)
                                       : cmd_catalog(argc, argv);
    if ((rc == EXIT_YES || rc == EXIT_NO) && cap.out) {
        out->status = 200;
        out->type = "application/json";
        out->body = cap.out;
        out->len = cap.out_len;
        out->owned = true;
        cap.out = NULL; /* the response owns it */
    } else if (cap.usage || cap.lib_code == VF_EINVAL || cap.lib_code == VF_ERANGE ||
               cap.lib_code == VF_EFORMAT || cap.lib_code == VF_ELIMIT) {
        srv_error(out, cap.lib_code == VF_ELIMIT ? 413 : 400, "bad_request", "%s",
                  cap.err[0] ? cap.err : "bad request");
    } else if (cap.lib_code == VF_ENOENT) {
        srv_error(out, 404, "not_found", "%s", cap.err);
    } else if (cap.lib_code == VF_EUNSUPPORTED) {
        srv_error(out, 422, "unsupported", "%s", cap.err);
    } else if (cap.lib_code == VF_ENODEV) {
        srv_error(out, 503, "no_gpu", "%s", cap.err);
    } else if (cap.lib_code == VF_EIO) {
        srv_error(out, 502, "upstream", "%s", cap.err);
    } else {
        srv_error(out, 500, "internal", "%s", cap.err[0] ? cap.err : "the command failed");
    }
    cli_capture_end(&cap);
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
    if (!strcmp(path, "/"))
        path = "/index.html";
    for (size_t i = 0; i < vf__n_web_files; i++) {
        if (strcmp(vf__web_files[i].name, path + 1))
            continue;
        out->status = 200;
        out->type = "application/octet-stream";
        const char *dot = strrchr(path, '.');
        for (size_t t = 0; dot && t < sizeof types / sizeof types[0]; t++)
            if (!strcmp(dot, types[t].ext))
                out->type = types[t].type;
        out->body = (char *)vf__web_files[i].data;
        out->len = vf__web_files[i].len;
        out->owned = false;
        return;
    }
    srv_error(out, 404, "not_found", "no page '%.200s'", path);
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

void srv_route(const struct srv_request *rq, struct srv_response *out)
{
    const char *u = rq->url;
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
        /* Prometheus: the GPUs now; no GPU is an empty set with the reason as a comment */
        struct vf_arena *a = vf_arena_open(0);
        struct vf_gpu_snapshot s;
        struct vf_error err = {0};
        char *text = NULL;
        if (a && !vf_gpu_snapshot(a, &s, &err))
            text = vf_render_gpus_prometheus(a, &s);
        else if (a)
            text = vf_arena_printf(a, "# no GPU found: %s\n", err.msg);
        answer(out, text ? strdup(text) : NULL, "text/plain; version=0.0.4; charset=utf-8");
        vf_arena_close(a);
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
    if (!strcmp(u, "/api/v1/estimate") && get)
        run(rq, "estimate", "model", NULL, false, out);
    else if (!strcmp(u, "/api/v1/pick") && get)
        run(rq, "pick", "model", NULL, false, out);
    else if (!strcmp(u, "/api/v1/inspect") && get)
        run(rq, "inspect", "model", NULL, false, out);
    else if (!strcmp(u, "/api/v1/models") && get)
        run(rq, "catalog", NULL, "models", false, out);
    else if (!strcmp(u, "/api/v1/gpus") && get)
        run(rq, "catalog", NULL, "gpus", false, out);
    else if (!strcmp(u, "/api/v1/smi") && get)
        run(rq, "smi", NULL, NULL, false, out);
    else if (!strcmp(u, "/api/v1/explain") && post)
        run(rq, "explain", NULL, "-", true, out);
    else if (!strcmp(u, "/api/v1/estimate") || !strcmp(u, "/api/v1/pick") ||
             !strcmp(u, "/api/v1/explain") || !strcmp(u, "/api/v1/models") ||
             !strcmp(u, "/api/v1/gpus") || !strcmp(u, "/api/v1/inspect") ||
             !strcmp(u, "/api/v1/version") || !strcmp(u, "/api/v1/smi"))
        srv_error(out, 405, "method_not_allowed", "%s %s: use %s", rq->method, u,
                  !strcmp(u, "/api/v1/explain") ? "POST with the log as the body" : "GET");
    else
        srv_error(out, 404, "not_found",
                  "no endpoint %.200s (estimate, pick, explain, inspect, models, gpus, smi, "
                  "version; /metrics)",
                  u);
}
