/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hub.c - the Hugging Face hub client: repo listings, small files (config.json) and HTTP range
 * reads of model headers, with a disk cache under $XDG_CACHE_HOME/vramfit/hub.
 *
 * libcurl is dlopen()ed on the first request that needs the network: linking it would cost every
 * vramfit process ~12 ms of dynamic loading, and `vramfit estimate` has 5 ms in all. <curl/curl.h>
 * gives the types and constants only; no curl symbol is referenced at link time. The URL layout and
 * the error headers are those of huggingface_hub (see hub.h).
 */
#define CURL_DISABLE_TYPECHECK /* we call through pointers, not the checked macros */
#include "hub.h"

#include <curl/curl.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ----------------------------------------------------------- libcurl via dlopen */

struct curl_fns {
    CURLcode (*global_init)(long flags);
    CURL *(*init)(void);
    void (*reset)(CURL *c);
    CURLcode (*setopt)(CURL *c, CURLoption opt, ...);
    CURLcode (*perform)(CURL *c);
    CURLcode (*getinfo)(CURL *c, CURLINFO info, ...);
    void (*cleanup)(CURL *c);
    const char *(*strerror)(CURLcode cc);
    struct curl_slist *(*slist_append)(struct curl_slist *l, const char *s);
    void (*slist_free_all)(struct curl_slist *l);
};

static pthread_mutex_t curl_init_lock = PTHREAD_MUTEX_INITIALIZER;
static bool curl_global_done;

/* Loads `soname` and its functions into *f. The library stays loaded for the process's life
 * (libcurl's TLS back end does not survive dlclose). */
static enum vf_err load_curl(const char *soname, struct curl_fns *f, struct vf_error *err)
{
    void *lib = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        return vf__errf(err, VF_EUNSUPPORTED, "hub: cannot load %s (apt-get install libcurl4): %s",
                        soname, dlerror());
    static const char *const names[] = {
        "curl_global_init",  "curl_easy_init",      "curl_easy_reset",   "curl_easy_setopt",
        "curl_easy_perform", "curl_easy_getinfo",   "curl_easy_cleanup", "curl_easy_strerror",
        "curl_slist_append", "curl_slist_free_all",
    };
    void *sym[sizeof names / sizeof names[0]];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        sym[i] = dlsym(lib, names[i]);
        if (!sym[i])
            return vf__errf(err, VF_EUNSUPPORTED,
                            "hub: cannot load %s (apt-get install libcurl4): no symbol %s", soname,
                            names[i]);
    }
    /* POSIX guarantees that dlsym's object pointers convert to function pointers */
    f->global_init = (CURLcode(*)(long))sym[0];
    f->init = (CURL * (*)(void)) sym[1];
    f->reset = (void (*)(CURL *))sym[2];
    f->setopt = (CURLcode(*)(CURL *, CURLoption, ...))sym[3];
    f->perform = (CURLcode(*)(CURL *))sym[4];
    f->getinfo = (CURLcode(*)(CURL *, CURLINFO, ...))sym[5];
    f->cleanup = (void (*)(CURL *))sym[6];
    f->strerror = (const char *(*)(CURLcode))sym[7];
    f->slist_append = (struct curl_slist * (*)(struct curl_slist *, const char *)) sym[8];
    f->slist_free_all = (void (*)(struct curl_slist *))sym[9];

    /* curl_global_init is not thread-safe in older libcurls: once per process, locked */
    CURLcode cc = CURLE_OK;
    pthread_mutex_lock(&curl_init_lock);
    if (!curl_global_done) {
        cc = f->global_init(CURL_GLOBAL_DEFAULT);
        curl_global_done = cc == CURLE_OK;
    }
    pthread_mutex_unlock(&curl_init_lock);
    if (cc != CURLE_OK)
        return vf__errf(err, VF_EIO, "hub: cannot initialise %s: %s", soname, f->strerror(cc));
    return VF_OK;
}

/* ------------------------------------------------------------------ the hub */

struct vf_hub {
    struct vf_arena *arena; /* the strings below */
    const char *endpoint;   /* "https://huggingface.co", no trailing '/' */
    size_t origin_len;      /* length of "scheme://host[:port]" in endpoint */
    const char *token;      /* NULL when none */
    const char *token_from; /* "HF_TOKEN" or the token file's path */
    const char *cache_dir;  /* ".../vramfit/hub/<endpoint>", NULL: no disk cache */
    const char *curl_lib;   /* soname to dlopen */
    bool curl_loaded;
    struct curl_fns curl;
    CURL *easy; /* reused so that range requests share one connection */
};

static const char *env_get(const struct vf_hub_env *env, const char *name)
{
    const char *v = env && env->getenv ? env->getenv(env->ud, name) : getenv(name);
    return v && *v ? v : NULL;
}

/* A token goes into an HTTP header: printable ASCII without spaces only. */
static bool token_ok(const char *t)
{
    if (!*t)
        return false;
    for (; *t; t++)
        if (*t <= ' ' || *t > '~')
            return false;
    return true;
}

/* Strips surrounding whitespace in place (token files end with a newline). */
static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
        s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' || s[n - 1] == '\r'))
        s[--n] = 0;
    return s;
}

/* HF_TOKEN, else the first token file that exists (huggingface_hub's order). */
static enum vf_err find_token(struct vf_hub *h, const struct vf_hub_env *env, struct vf_error *err)
{
    const char *v = env_get(env, "HF_TOKEN");
    if (v) {
        char *t = trim(vf_arena_strdup(h->arena, v));
        if (!t)
            return vf__errf(err, VF_ENOMEM, "hub: out of memory");
        if (!token_ok(t))
            return vf__errf(err, VF_EINVAL,
                            "hub: HF_TOKEN has a character that cannot go in an HTTP header");
        h->token = t;
        h->token_from = "HF_TOKEN";
        return VF_OK;
    }
    const char *file = env_get(env, "HF_TOKEN_PATH");
    const char *home = env_get(env, "HF_HOME");
    const char *xdg = env_get(env, "XDG_CACHE_HOME");
    const char *user = env_get(env, "HOME");
    if (!file && home)
        file = vf_arena_printf(h->arena, "%s/token", home);
    else if (!file && xdg)
        file = vf_arena_printf(h->arena, "%s/huggingface/token", xdg);
    else if (!file && user)
        file = vf_arena_printf(h->arena, "%s/.cache/huggingface/token", user);
    if (!file)
        return VF_OK;
    char *text;
    if (vf__read_file(h->arena, file, VF_HUB_MAX_TOKEN, &text, NULL, NULL))
        return VF_OK; /* no token file: anonymous */
    char *t = trim(text);
    if (!*t)
        return VF_OK;
    if (!token_ok(t))
        return vf__errf(err, VF_EINVAL,
                        "hub: the token in '%s' has a character that cannot go in an HTTP header",
                        file);
    h->token = t;
    h->token_from = file;
    return VF_OK;
}

/* "$XDG_CACHE_HOME/vramfit/hub/<endpoint as one name>", or NULL when there is no home. */
static const char *cache_root(struct vf_hub *h, const struct vf_hub_env *env)
{
    const char *xdg = env_get(env, "XDG_CACHE_HOME");
    const char *home = env_get(env, "HOME");
    const char *base;
    if (xdg && xdg[0] == '/') /* the XDG spec ignores relative values */
        base = vf_arena_printf(h->arena, "%s/vramfit", xdg);
    else if (home)
        base = vf_arena_printf(h->arena, "%s/.cache/vramfit", home);
    else
        return NULL;
    /* endpoints differ in content: each gets its own tree ("127.0.0.1_8080") */
    char *key = vf_arena_strdup(h->arena, strstr(h->endpoint, "://") + 3);
    if (!base || !key)
        return NULL;
    for (char *p = key; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '.' || *p == '-'))
            *p = '_';
    return vf_arena_printf(h->arena, "%s/hub/%s", base, key);
}

enum vf_err vf__hub_open_with(struct vf_hub **out, const struct vf_hub_env *env,
                              struct vf_error *err)
{
    *out = NULL;
    struct vf_arena *a = vf_arena_open((size_t)1 << 20);
    struct vf_hub *h = a ? vf_arena_alloc(a, sizeof *h) : NULL;
    if (!h) {
        vf_arena_close(a);
        return vf__errf(err, VF_ENOMEM, "hub: out of memory");
    }
    h->arena = a;
    h->curl_lib = vf_arena_strdup(a, env && env->curl_lib ? env->curl_lib : VF_HUB_CURL_SONAME);

    const char *ep = env_get(env, "HF_ENDPOINT");
    char *e = vf_arena_strdup(a, ep ? ep : VF_HUB_DEFAULT_ENDPOINT);
    enum vf_err rc = VF_OK;
    if (!e || !h->curl_lib) {
        rc = vf__errf(err, VF_ENOMEM, "hub: out of memory");
        goto fail;
    }
    size_t n = strlen(e);
    while (n && e[n - 1] == '/')
        e[--n] = 0;
    const char *auth = strncmp(e, "https://", 8) == 0  ? e + 8
                       : strncmp(e, "http://", 7) == 0 ? e + 7
                                                       : NULL;
    if (!auth || !*auth || strpbrk(e, " \t\r\n?#")) {
        rc = vf__errf(err, VF_EINVAL,
                      "hub: HF_ENDPOINT '%s' is not an http(s) URL (e.g. https://huggingface.co)",
                      ep ? ep : "");
        goto fail;
    }
    h->endpoint = e;
    h->origin_len = (size_t)(auth - e) + strcspn(auth, "/");
    rc = find_token(h, env, err);
    if (rc)
        goto fail;
    h->cache_dir = cache_root(h, env);
    *out = h;
    return VF_OK;
fail:
    vf_arena_close(a);
    return rc;
}

enum vf_err vf__hub_open(struct vf_hub **out, struct vf_error *err)
{
    return vf__hub_open_with(out, NULL, err);
}

void vf__hub_close(struct vf_hub *h)
{
    if (!h)
        return;
    if (h->easy)
        h->curl.cleanup(h->easy);
    vf_arena_close(h->arena);
}

const char *vf__hub_endpoint(const struct vf_hub *h)
{
    return h->endpoint;
}

/* Loads libcurl on the first request (not at open: cached answers need no network). */
static enum vf_err ensure_curl(struct vf_hub *h, struct vf_error *err)
{
    if (h->easy)
        return VF_OK;
    if (!h->curl_loaded) {
        enum vf_err rc = load_curl(h->curl_lib, &h->curl, err);
        if (rc)
            return rc;
        h->curl_loaded = true;
    }
    h->easy = h->curl.init();
    if (!h->easy)
        return vf__errf(err, VF_ENOMEM, "hub: curl_easy_init failed");
    return VF_OK;
}

/* ------------------------------------------------------------- names and URLs */

static bool name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
}

/* "owner/name" or "name": letters, digits, '.', '_', '-'; no "." or ".." part. */
static enum vf_err check_repo(const char *repo, struct vf_error *err)
{
    size_t n = strlen(repo), slash = 0;
    bool ok = n > 0 && n <= VF_HUB_MAX_REPO && repo[0] != '/' && repo[n - 1] != '/';
    for (size_t i = 0; ok && i < n; i++) {
        if (repo[i] == '/')
            ok = ++slash == 1 && repo[i + 1] != '/';
        else
            ok = name_char(repo[i]);
    }
    ok = ok && strcmp(repo, ".") && strcmp(repo, "..") && strncmp(repo, "./", 2) &&
         strncmp(repo, "../", 3);
    if (ok && slash) {
        const char *b = strchr(repo, '/') + 1;
        ok = strcmp(b, ".") && strcmp(b, "..");
    }
    if (!ok)
        return vf__errf(
            err, VF_EINVAL,
            "hub: '%.*s' is not a repo id (expected 'owner/name', e.g. 'Qwen/Qwen3-8B')", 200,
            repo);
    return VF_OK;
}

static enum vf_err check_rev(const char *rev, struct vf_error *err)
{
    size_t n = strlen(rev);
    bool ok = n > 0 && n <= VF_HUB_MAX_REV && strcmp(rev, ".") && strcmp(rev, "..");
    for (size_t i = 0; ok && i < n; i++)
        ok = rev[i] > ' ' && rev[i] <= '~';
    if (!ok)
        return vf__errf(err, VF_EINVAL, "hub: '%.*s' is not a revision (a branch, tag or commit)",
                        200, rev);
    return VF_OK;
}

/* A relative path of non-empty parts, none "." or "..", no control characters. */
static enum vf_err check_path(const char *path, struct vf_error *err)
{
    size_t n = strlen(path);
    bool ok = n > 0 && n <= VF_HUB_MAX_PATH && path[0] != '/';
    for (const char *p = path; ok && *p;) {
        size_t k = strcspn(p, "/");
        ok = k > 0 && !(k == 1 && p[0] == '.') && !(k == 2 && p[0] == '.' && p[1] == '.');
        for (size_t i = 0; ok && i < k; i++)
            ok = (unsigned char)p[i] >= ' ' && p[i] != 0x7f && p[i] != '\\';
        p += k;
        if (*p == '/')
            ok = ok && *++p; /* no trailing '/' */
    }
    if (!ok)
        return vf__errf(err, VF_EINVAL, "hub: '%.*s' is not a file path in a repo", 200, path);
    return VF_OK;
}

/* True for a full 40-hex commit id: its content never changes, so the cache never expires. */
static bool rev_is_commit(const char *rev)
{
    size_t n = strlen(rev);
    if (n != 40)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((rev[i] >= '0' && rev[i] <= '9') || (rev[i] >= 'a' && rev[i] <= 'f')))
            return false;
    return true;
}

/* Percent-encodes s (RFC 3986 unreserved kept, and '/' when keep_slash); NULL: no memory. */
static char *pct(struct vf_arena *a, const char *s, bool keep_slash)
{
    size_t n = strlen(s);
    char *o = vf_arena_alloc(a, n * 3 + 1), *q = o;
    if (!o)
        return NULL;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (name_char((char)*p) || *p == '~' || (keep_slash && *p == '/')) {
            *q++ = (char)*p;
        } else {
            static const char hex[] = "0123456789ABCDEF";
            *q++ = '%';
            *q++ = hex[*p >> 4];
            *q++ = hex[*p & 15];
        }
    }
    *q = 0;
    return o;
}

/* Validates repo/rev/path (path may be NULL) and builds the URL-safe rev in *erev. */
static enum vf_err check_args(struct vf_arena *a, const char *repo, const char *rev,
                              const char *path, char **erev, struct vf_error *err)
{
    enum vf_err rc = check_repo(repo, err);
    if (!rc)
        rc = check_rev(rev, err);
    if (!rc && path)
        rc = check_path(path, err);
    if (rc)
        return rc;
    *erev = pct(a, rev, false);
    return *erev ? VF_OK : vf__errf(err, VF_ENOMEM, "hub: out of memory");
}

/* ------------------------------------------------------------------ disk cache */

/* mkdir -p of the directory that holds `file`; false when it cannot. */
static bool mkdirs_for(char *file)
{
    for (char *p = file + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        bool ok = mkdir(file, 0700) == 0 || errno == EEXIST;
        *p = '/';
        if (!ok)
            return false;
    }
    return true;
}

/* Writes a cache file atomically (temporary + rename); failures are ignored: the cache is an
 * optimisation, never a reason to fail. */
static void cache_write(struct vf_arena *a, const char *file, const void *data, size_t len)
{
    char *tmp = vf_arena_printf(a, "%s.tmp%ld", file, (long)getpid());
    if (!tmp || !mkdirs_for(tmp))
        return;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0)
        return;
    size_t done = 0;
    while (done < len) {
        ssize_t k = write(fd, (const char *)data + done, len - done);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        done += (size_t)k;
    }
    if (close(fd) != 0 || done != len || rename(tmp, file) != 0)
        unlink(tmp);
}

/* 1: the cache file exists and is fresh, 0: it exists but is stale, -1: it does not exist. */
static int cache_state(const char *file, const char *rev)
{
    struct stat st;
    if (!file || stat(file, &st) != 0 || !S_ISREG(st.st_mode))
        return -1;
    if (rev_is_commit(rev))
        return 1;
    time_t now = time(NULL);
    return now >= st.st_mtime && now - st.st_mtime < VF_HUB_CACHE_TTL_S ? 1 : 0;
}

/* "<cache>/<repo>/<rev>/<kind>[/<path>]" or NULL (no cache directory or no memory). */
static char *cache_file(struct vf_arena *a, const struct vf_hub *h, const char *repo,
                        const char *erev, const char *kind, const char *path)
{
    if (!h->cache_dir)
        return NULL;
    return vf_arena_printf(a, "%s/%s/%s/%s%s%s", h->cache_dir, repo, erev, kind, path ? "/" : "",
                           path ? path : "");
}

/* ------------------------------------------------------------------ one request */

struct resp {
    long status;
    unsigned char *body; /* vf__malloc'd */
    size_t len, alloc, limit;
    bool too_big;
    char content_range[96]; /* of the last response (after redirects) */
    char error_code[64];    /* X-Error-Code */
    char next[2048];        /* Link rel="next" target */
    bool next_truncated;
};

static size_t on_body(char *data, size_t size, size_t nmemb, void *ud)
{
    struct resp *rs = ud;
    size_t n = size * nmemb;
    if (!n)
        return 0; /* libcurl calls once with nothing for an empty body */
    if (n > rs->limit - rs->len) {
        rs->too_big = true;
        return 0; /* aborts the transfer: never download more than asked */
    }
    if (rs->len + n > rs->alloc) {
        size_t cap = rs->alloc ? rs->alloc : 16384;
        while (cap < rs->len + n)
            cap = cap > rs->limit / 2 ? rs->limit : cap * 2;
        unsigned char *p = vf__realloc(rs->body, cap);
        if (!p)
            return 0;
        rs->body = p;
        rs->alloc = cap;
    }
    memcpy(rs->body + rs->len, data, n);
    rs->len += n;
    return n;
}

/* Copies header value (trimmed) into dst if the header line `line` is `name:`. */
static bool header_value(const char *line, size_t n, const char *name, char *dst, size_t cap,
                         bool *truncated)
{
    size_t k = strlen(name);
    if (n <= k || strncasecmp(line, name, k) != 0 || line[k] != ':')
        return false;
    const char *v = line + k + 1;
    const char *end = line + n;
    while (v < end && (*v == ' ' || *v == '\t'))
        v++;
    while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' '))
        end--;
    size_t len = (size_t)(end - v);
    if (truncated)
        *truncated = len >= cap;
    if (len >= cap)
        len = cap - 1;
    memcpy(dst, v, len);
    dst[len] = 0;
    return true;
}

/* Finds the rel="next" target in a Link header value: `<url>; rel="next", <...>; ...`. */
static void link_next(struct resp *rs, const char *v)
{
    for (const char *p = v; (p = strchr(p, '<'));) {
        const char *e = strchr(p, '>');
        if (!e)
            return;
        const char *seg_end = strchr(e, ',');
        size_t seg = seg_end ? (size_t)(seg_end - e) : strlen(e);
        const char *rel = strstr(e, "rel=\"next\"");
        if (rel && (size_t)(rel - e) < seg) {
            size_t n = (size_t)(e - p - 1);
            rs->next_truncated = n >= sizeof rs->next;
            if (!rs->next_truncated) {
                memcpy(rs->next, p + 1, n);
                rs->next[n] = 0;
            }
            return;
        }
        p = e;
    }
}

static size_t on_header(char *data, size_t size, size_t nmemb, void *ud)
{
    struct resp *rs = ud;
    size_t n = size * nmemb;
    if (n >= 5 && strncmp(data, "HTTP/", 5) == 0) {
        /* a new response (after a redirect): only the last one's headers count */
        rs->content_range[0] = rs->error_code[0] = rs->next[0] = 0;
        rs->next_truncated = false;
        return n;
    }
    char link[4096];
    bool trunc = false;
    if (header_value(data, n, "Content-Range", rs->content_range, sizeof rs->content_range, NULL))
        return n;
    if (header_value(data, n, "X-Error-Code", rs->error_code, sizeof rs->error_code, NULL))
        return n;
    if (header_value(data, n, "Link", link, sizeof link, &trunc)) {
        if (trunc)
            rs->next_truncated = true;
        else
            link_next(rs, link);
    }
    return n;
}

/* The "scheme://host[:port]" of url, for messages about unreachable hosts. */
static void url_origin(const char *url, char *out, size_t cap)
{
    const char *auth = strstr(url, "://");
    size_t n = auth ? (size_t)(auth + 3 - url) + strcspn(auth + 3, "/?#") : strlen(url);
    snprintf(out, cap, "%.*s", (int)n, url);
}

/*
 * GETs url (with Range header `range` unless NULL), following redirects, keeping at most rs->limit
 * body bytes (rs->too_big when the body was longer). Fills *rs; the caller frees rs->body with
 * vf__free. A response with any HTTP status is VF_OK; a failed transfer (no connection, timeout,
 * TLS) is VF_EIO with an "offline?" hint.
 */
static enum vf_err http_get(struct vf_hub *h, const char *url, const char *range, struct resp *rs,
                            struct vf_error *err)
{
    enum vf_err rc = ensure_curl(h, err);
    if (rc)
        return rc;
    const struct curl_fns *c = &h->curl;
    CURL *e = h->easy;
    char errbuf[CURL_ERROR_SIZE] = {0};
    char auth[VF_HUB_MAX_TOKEN + 32];
    struct curl_slist *hdrs = NULL;
    if (h->token) {
        /* a custom Authorization header is not sent on to another host after a redirect (libcurl
         * >= 7.58): the CDN of a large file never sees the token */
        snprintf(auth, sizeof auth, "Authorization: Bearer %s", h->token);
        hdrs = c->slist_append(NULL, auth);
        if (!hdrs)
            return vf__errf(err, VF_ENOMEM, "hub: out of memory");
    }
    c->reset(e);
    c->setopt(e, CURLOPT_URL, url);
    c->setopt(e, CURLOPT_NOSIGNAL, 1L);
    c->setopt(e, CURLOPT_FOLLOWLOCATION, 1L);
    c->setopt(e, CURLOPT_MAXREDIRS, VF_HUB_MAX_REDIRECTS);
    c->setopt(e, CURLOPT_CONNECTTIMEOUT, VF_HUB_CONNECT_TIMEOUT_S);
    c->setopt(e, CURLOPT_TIMEOUT, VF_HUB_TOTAL_TIMEOUT_S);
    /* an https endpoint is followed to https only: a redirect to http would send the request,
     * and what it returns, in the clear (issue 16); an http endpoint (a local mirror, the
     * tests' hub) may redirect either way */
    bool tls = !strncmp(h->endpoint, "https://", 8);
    c->setopt(e, CURLOPT_PROTOCOLS_STR, tls ? "https" : "http,https");
    c->setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, tls ? "https" : "http,https");
    c->setopt(e, CURLOPT_USERAGENT, "vramfit/" VF_VERSION);
    c->setopt(e, CURLOPT_ERRORBUFFER, errbuf);
    c->setopt(e, CURLOPT_WRITEFUNCTION, on_body);
    c->setopt(e, CURLOPT_WRITEDATA, rs);
    c->setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    c->setopt(e, CURLOPT_HEADERDATA, rs);
    if (hdrs)
        c->setopt(e, CURLOPT_HTTPHEADER, hdrs);
    if (range)
        c->setopt(e, CURLOPT_RANGE, range);
    else
        c->setopt(e, CURLOPT_ACCEPT_ENCODING, ""); /* JSON compresses well; ranges must not */
    CURLcode cc = c->perform(e);
    c->setopt(e, CURLOPT_HTTPHEADER, NULL); /* both die with this call */
    c->setopt(e, CURLOPT_ERRORBUFFER, NULL);
    c->slist_free_all(hdrs);
    if (h->token)
        memset(auth, 0, sizeof auth);
    rs->status = 0;
    c->getinfo(e, CURLINFO_RESPONSE_CODE, &rs->status);
    if (cc == CURLE_OK || (cc == CURLE_WRITE_ERROR && rs->too_big && rs->status))
        return VF_OK;
    char origin[256];
    url_origin(url, origin, sizeof origin);
    if (cc == CURLE_WRITE_ERROR)
        return vf__errf(err, VF_ENOMEM, "hub: out of memory reading %s", url);
    return vf__errf(err, VF_EIO, "hub: cannot reach %s (%s); offline? a local folder works too",
                    origin, errbuf[0] ? errbuf : c->strerror(cc));
}

/*
 * The error for an HTTP status other than success, naming the URL and what to do. `path` is the
 * file asked for (NULL for a listing).
 */
static enum vf_err http_error(const struct vf_hub *h, const struct resp *rs, const char *repo,
                              const char *rev, const char *path, const char *url,
                              struct vf_error *err)
{
    long st = rs->status;
    const char *code = rs->error_code;
    bool gated = strcmp(code, "GatedRepo") == 0;
    if (strcmp(code, "RevisionNotFound") == 0)
        return vf__errf(err, VF_ENOENT, "hub: revision '%s' of '%s' not found (%ld from %s)", rev,
                        repo, st, url);
    if (strcmp(code, "EntryNotFound") == 0 || (st == 404 && path && strcmp(code, "RepoNotFound")))
        return vf__errf(err, VF_ENOENT, "hub: '%s' not found in '%s' (%ld from %s)",
                        path ? path : "", repo, st, url);
    if (st == 404 || (strcmp(code, "RepoNotFound") == 0 && h->token))
        return vf__errf(err, VF_ENOENT, "hub: '%s' not found (%ld from %s)", repo, st, url);
    if (st == 401 && strcmp(code, "RepoNotFound") == 0)
        return vf__errf(err, VF_ENOENT,
                        "hub: '%s' not found or private (401 from %s); check the name, or set "
                        "HF_TOKEN or run `huggingface-cli login` if it is private",
                        repo, url);
    if ((st == 401 || gated) && !h->token)
        return vf__errf(
            err, VF_EIO,
            "hub: '%s' is gated: %ld from %s; set HF_TOKEN or run `huggingface-cli login`", repo,
            st, url);
    if (st == 401 || gated)
        return vf__errf(err, VF_EIO,
                        "hub: '%s' is gated: %ld from %s with the token from %s; check the token "
                        "and accept the model's terms at %s/%s",
                        repo, st, url, h->token_from, h->endpoint, repo);
    if (st == 403)
        return vf__errf(err, VF_EIO,
                        "hub: access to '%s' denied (403 from %s); check the token's permissions",
                        repo, url);
    if (st == 416)
        return vf__errf(err, VF_EIO,
                        "hub: range of '%s' not satisfiable (416 from %s, Content-Range '%s'); did "
                        "the file change on the hub?",
                        path ? path : repo, url, rs->content_range);
    if (st == 429)
        return vf__errf(err, VF_EIO,
                        "hub: rate-limited (429 from %s); wait a minute, or set HF_TOKEN", url);
    if (st >= 500)
        return vf__errf(err, VF_EIO, "hub: server error %ld from %s; try again later", st, url);
    return vf__errf(err, VF_EIO, "hub: unexpected HTTP %ld from %s", st, url);
}

/* ------------------------------------------------------------------ small files */

enum vf_err vf__hub_get(struct vf_arena *a, struct vf_hub *h, const char *repo, const char *rev,
                        const char *path, size_t limit, char **data, size_t *len,
                        struct vf_error *err)
{
    char *erev;
    rev = rev ? rev : "main";
    enum vf_err rc = check_args(a, repo, rev, path, &erev, err);
    if (rc)
        return rc;
    if (limit > VF_HUB_MAX_SMALL_FILE)
        limit = VF_HUB_MAX_SMALL_FILE;
    char *epath = pct(a, path, true);
    char *url =
        epath ? vf_arena_printf(a, "%s/%s/resolve/%s/%s", h->endpoint, repo, erev, epath) : NULL;
    if (!url)
        return vf__errf(err, VF_ENOMEM, "hub: out of memory");
    char *file = cache_file(a, h, repo, erev, "files", path);
    int cached = cache_state(file, rev);
    if (cached == 1 && vf__read_file(a, file, limit, data, len, NULL) == VF_OK)
        return VF_OK;

    struct resp rs = {.limit = limit};
    rc = http_get(h, url, NULL, &rs, err);
    if (rc == VF_EIO && cached == 0 && vf__read_file(a, file, limit, data, len, NULL) == VF_OK) {
        vf__free(rs.body); /* offline: a stale copy beats no answer */
        return VF_OK;
    }
    if (!rc && rs.status != 200)
        rc = http_error(h, &rs, repo, rev, path, url, err);
    else if (!rc && rs.too_big)
        rc = vf__errf(err, VF_ELIMIT, "hub: '%s' of '%s' is over the limit of %zu bytes (%s)", path,
                      repo, limit, url);
    if (!rc) {
        char *buf = vf_arena_alloc(a, rs.len + 1);
        if (!buf) {
            rc = vf__errf(err, VF_ENOMEM, "hub: out of memory reading %s", url);
        } else {
            if (rs.len)
                memcpy(buf, rs.body, rs.len);
            buf[rs.len] = 0;
            *data = buf;
            if (len)
                *len = rs.len;
            if (file)
                cache_write(a, file, buf, rs.len);
        }
    }
    vf__free(rs.body);
    return rc;
}

/* ------------------------------------------------------------------ listing */

struct entry {
    char *path;
    uint64_t size;
};

struct list {
    struct entry *e;
    size_t n, cap;
};

static enum vf_err list_add(struct vf_arena *a, struct list *l, const char *path, uint64_t size,
                            struct vf_error *err)
{
    if (l->n >= VF_HUB_MAX_LIST_ENTRIES)
        return vf__errf(err, VF_ELIMIT, "hub: the repo has over %d files", VF_HUB_MAX_LIST_ENTRIES);
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        struct entry *p = vf__realloc(l->e, cap * sizeof *p);
        if (!p)
            return vf__errf(err, VF_ENOMEM, "hub: out of memory");
        l->e = p;
        l->cap = cap;
    }
    char *s = vf_arena_strdup(a, path);
    if (!s)
        return vf__errf(err, VF_ENOMEM, "hub: out of memory");
    l->e[l->n++] = (struct entry){s, size};
    return VF_OK;
}

/* Parses one page of the tree listing (a JSON array) into l. */
static enum vf_err list_page(struct vf_arena *a, struct list *l, const struct resp *rs,
                             const char *url, struct vf_error *err)
{
    json_error_t je;
    json_t *root = json_loadb((const char *)rs->body, rs->len, 0, &je);
    if (!root && vf__json_nomem(&je))
        return vf__errf(err, VF_ENOMEM, "hub: out of memory reading the listing from %s", url);
    if (!root)
        return vf__errf(err, VF_EFORMAT, "hub: bad listing from %s: %s at line %d", url, je.text,
                        je.line);
    enum vf_err rc = VF_OK;
    if (!json_is_array(root))
        rc = vf__errf(err, VF_EFORMAT, "hub: bad listing from %s: not a JSON array", url);
    size_t i;
    json_t *it;
    json_array_foreach(root, i, it)
    {
        if (rc)
            break;
        const char *type = json_string_value(json_object_get(it, "type"));
        const char *path = json_string_value(json_object_get(it, "path"));
        json_t *size = json_object_get(it, "size");
        if (!type || !path) {
            rc = vf__errf(err, VF_EFORMAT, "hub: bad listing from %s: entry %zu has no type/path",
                          url, i);
        } else if (strcmp(type, "file") == 0) {
            if (!json_is_integer(size) || json_integer_value(size) < 0)
                rc = vf__errf(err, VF_EFORMAT, "hub: bad listing from %s: '%s' has no size", url,
                              path);
            else
                rc = list_add(a, l, path, (uint64_t)json_integer_value(size), err);
        }
    }
    json_decref(root);
    return rc;
}

/* Reads a cached listing ("size\tpath" lines) into l; false when it is unusable. */
static bool list_from_cache(struct vf_arena *a, struct list *l, const char *file)
{
    char *text;
    size_t len;
    if (vf__read_file(a, file, VF_HUB_MAX_LIST_PAGE, &text, &len, NULL))
        return false;
    for (char *p = text; *p;) {
        char *nl = strchr(p, '\n');
        char *tab = strchr(p, '\t');
        if (!nl || !tab || tab > nl)
            return false;
        *nl = *tab = 0;
        char *end;
        errno = 0;
        unsigned long long v = strtoull(p, &end, 10);
        if (errno || end != tab || p == tab || list_add(a, l, tab + 1, v, NULL))
            return false;
        p = nl + 1;
    }
    return true;
}

static void list_to_cache(struct vf_arena *a, const struct list *l, const char *file)
{
    size_t cap = 1, used = 0;
    for (size_t i = 0; i < l->n; i++) {
        if (strpbrk(l->e[i].path, "\t\n"))
            return; /* not representable: just not cached */
        cap += strlen(l->e[i].path) + 24;
    }
    char *buf = vf_arena_alloc(a, cap);
    if (!buf)
        return;
    for (size_t i = 0; i < l->n; i++)
        used += (size_t)snprintf(buf + used, cap - used, "%llu\t%s\n",
                                 (unsigned long long)l->e[i].size, l->e[i].path);
    cache_write(a, file, buf, used);
}

enum vf_err vf__hub_list(struct vf_arena *a, struct vf_hub *h, const char *repo, const char *rev,
                         const char ***paths, uint64_t **sizes, size_t *n, struct vf_error *err)
{
    char *erev;
    rev = rev ? rev : "main";
    enum vf_err rc = check_args(a, repo, rev, NULL, &erev, err);
    if (rc)
        return rc;
    struct list l = {0};
    char *file = cache_file(a, h, repo, erev, "tree.tsv", NULL);
    int cached = cache_state(file, rev);
    bool hit = cached == 1 && list_from_cache(a, &l, file);
    if (!hit) {
        l.n = 0;
        const char *url = vf_arena_printf(a, "%s/api/models/%s/tree/%s?recursive=true&expand=false",
                                          h->endpoint, repo, erev);
        for (int page = 0; url && !rc; page++) {
            if (page == VF_HUB_MAX_LIST_PAGES) {
                rc = vf__errf(err, VF_ELIMIT, "hub: listing of '%s' has over %d pages", repo,
                              VF_HUB_MAX_LIST_PAGES);
                break;
            }
            struct resp rs = {.limit = VF_HUB_MAX_LIST_PAGE};
            rc = http_get(h, url, NULL, &rs, err);
            if (rc == VF_EIO && cached == 0 && page == 0) {
                l.n = 0;
                if (list_from_cache(a, &l, file)) {
                    rc = VF_OK; /* offline: the stale listing */
                    hit = true;
                    url = NULL;
                }
            } else if (!rc && rs.status != 200) {
                rc = http_error(h, &rs, repo, rev, NULL, url, err);
            } else if (!rc && rs.too_big) {
                rc = vf__errf(err, VF_ELIMIT, "hub: listing page over %zu bytes from %s",
                              VF_HUB_MAX_LIST_PAGE, url);
            } else if (!rc) {
                rc = list_page(a, &l, &rs, url, err);
                if (!rc && rs.next_truncated)
                    rc = vf__errf(err, VF_ELIMIT, "hub: next-page link too long from %s", url);
                if (!rc && rs.next[0] == '/') {
                    url = vf_arena_printf(a, "%.*s%s", (int)h->origin_len, h->endpoint, rs.next);
                } else if (!rc && rs.next[0]) {
                    /* the token goes to the endpoint's host only */
                    if (strncmp(rs.next, h->endpoint, h->origin_len) != 0 ||
                        !strchr("/?", rs.next[h->origin_len]))
                        rc = vf__errf(err, VF_EFORMAT,
                                      "hub: listing of '%s' continues on another host (%s)", repo,
                                      rs.next);
                    url = vf_arena_strdup(a, rs.next);
                } else {
                    url = NULL;
                }
            }
            vf__free(rs.body);
        }
        if (!rc && !hit && file)
            list_to_cache(a, &l, file);
    }
    if (!rc) {
        *paths = vf_arena_alloc(a, (l.n ? l.n : 1) * sizeof **paths);
        *sizes = vf_arena_alloc(a, (l.n ? l.n : 1) * sizeof **sizes);
        if (!*paths || !*sizes)
            rc = vf__errf(err, VF_ENOMEM, "hub: out of memory");
        for (size_t i = 0; !rc && i < l.n; i++) {
            (*paths)[i] = l.e[i].path;
            (*sizes)[i] = l.e[i].size;
        }
        *n = rc ? 0 : l.n;
    }
    vf__free(l.e);
    return rc;
}

/* ------------------------------------------------------------------ range reader */

struct extent {
    uint64_t off;
    size_t len;
    unsigned char *data; /* NULL: only on disk so far */
};

struct hub_rd {
    struct vf_hub *h;
    struct vf_arena *a;
    const char *repo, *rev, *path, *url;
    const char *dir; /* disk cache directory of this file's ranges, or NULL */
    struct extent *ext;
    size_t n_ext, cap_ext;
    uint64_t size;    /* total bytes, VF_UNKNOWN until a response says */
    uint64_t fetched; /* bytes fetched over the network by this reader */
    size_t next_req;  /* the size of the next request (doubles as reads stream on) */
};

static enum vf_err add_extent(struct hub_rd *rd, uint64_t off, size_t len, unsigned char *data,
                              struct vf_error *err)
{
    if (rd->n_ext == VF_HUB_MAX_EXTENTS)
        return vf__errf(err, VF_ELIMIT, "hub: reading '%s' took over %d requests", rd->url,
                        VF_HUB_MAX_EXTENTS);
    if (rd->n_ext == rd->cap_ext) {
        size_t cap = rd->cap_ext ? rd->cap_ext * 2 : 16;
        struct extent *p = vf_arena_alloc(rd->a, cap * sizeof *p);
        if (!p)
            return vf__errf(err, VF_ENOMEM, "hub: out of memory reading %s", rd->url);
        if (rd->n_ext)
            memcpy(p, rd->ext, rd->n_ext * sizeof *p);
        rd->ext = p;
        rd->cap_ext = cap;
    }
    rd->ext[rd->n_ext++] = (struct extent){off, len, data};
    return VF_OK;
}

/* Parses "bytes A-B/T" or "bytes *" "/T"; unknown parts are VF_UNKNOWN. false: unparsable. */
static bool parse_content_range(const char *s, uint64_t *first, uint64_t *last, uint64_t *total)
{
    *first = *last = *total = VF_UNKNOWN;
    if (strncmp(s, "bytes ", 6) != 0)
        return false;
    s += 6;
    char *end;
    if (*s == '*') {
        end = (char *)s + 1;
    } else {
        if (*s < '0' || *s > '9')
            return false;
        errno = 0;
        *first = strtoull(s, &end, 10);
        if (errno || *end != '-' || end[1] < '0' || end[1] > '9')
            return false;
        *last = strtoull(end + 1, &end, 10);
        if (errno || *last < *first)
            return false;
    }
    if (*end != '/')
        return false;
    if (end[1] == '*' && end[2] == 0)
        return true;
    if (end[1] < '0' || end[1] > '9')
        return false;
    const char *t = end + 1;
    errno = 0;
    *total = strtoull(t, &end, 10);
    return !errno && *end == 0;
}

/* Stores a fetched extent under the reader's cache directory ("<off>-<len>"), and the size. */
static void disk_store(struct hub_rd *rd, uint64_t off, const unsigned char *data, size_t len)
{
    if (!rd->dir)
        return;
    char *f = vf_arena_printf(rd->a, "%s/%llu-%zu", rd->dir, (unsigned long long)off, len);
    if (f)
        cache_write(rd->a, f, data, len);
    if (rd->size != VF_UNKNOWN) {
        char num[32];
        int k = snprintf(num, sizeof num, "%llu\n", (unsigned long long)rd->size);
        f = vf_arena_printf(rd->a, "%s/size", rd->dir);
        if (f)
            cache_write(rd->a, f, num, (size_t)k);
    }
}

/*
 * Fetches bytes [off, off + len) with one range request and keeps them as an extent. At the end of
 * the file (416 with the total, or a shorter answer) fewer bytes or none arrive.
 */
static enum vf_err fetch_range(struct hub_rd *rd, uint64_t off, size_t len, struct vf_error *err)
{
    uint64_t total_after;
    if (!vf__add_u64(rd->fetched, len, &total_after) || total_after > VF_HUB_MAX_READER_BYTES)
        return vf__errf(err, VF_ELIMIT,
                        "hub: reading the header of '%s' needs over %llu MiB; vramfit does not "
                        "download weights",
                        rd->url, (unsigned long long)(VF_HUB_MAX_READER_BYTES >> 20));
    char range[64];
    snprintf(range, sizeof range, "%llu-%llu", (unsigned long long)off,
             (unsigned long long)(off + len - 1));
    struct resp rs = {.limit = len};
    enum vf_err rc = http_get(rd->h, rd->url, range, &rs, err);
    if (rc)
        goto out;
    uint64_t first, last, total;
    bool cr = parse_content_range(rs.content_range, &first, &last, &total);
    if (rs.status == 416 && cr && total != VF_UNKNOWN && off >= total &&
        (rd->size == VF_UNKNOWN || rd->size == total)) {
        rd->size = total; /* asked at or past the end: nothing there */
        goto out;
    }
    if (rs.status == 200 && off == 0 && !rs.too_big) {
        rd->size = rs.len; /* the server sent the whole (small) file */
    } else if (rs.status == 200) {
        rc = vf__errf(err, VF_EIO,
                      "hub: %s ignored the Range header (200 with the whole file); vramfit does "
                      "not download weights",
                      rd->url);
        goto out;
    } else if (rs.status != 206) {
        rc = http_error(rd->h, &rs, rd->repo, rd->rev, rd->path, rd->url, err);
        goto out;
    } else if (!cr || first != off || rs.len == 0 || last - first + 1 != rs.len || rs.too_big ||
               (total != VF_UNKNOWN && last >= total)) {
        rc = vf__errf(err, VF_EIO,
                      "hub: bad 206 answer from %s for bytes %s (Content-Range '%s', %zu bytes)",
                      rd->url, range, rs.content_range, rs.len);
        goto out;
    } else if (total != VF_UNKNOWN) {
        if (rd->size != VF_UNKNOWN && rd->size != total) {
            rc = vf__errf(err, VF_EIO,
                          "hub: '%s' changed on the hub while reading (%llu bytes, now %llu; %s)",
                          rd->path, (unsigned long long)rd->size, (unsigned long long)total,
                          rd->url);
            goto out;
        }
        rd->size = total;
    }
    rd->fetched += rs.len;
    if (rs.len) {
        unsigned char *data = vf_arena_alloc(rd->a, rs.len);
        if (!data) {
            rc = vf__errf(err, VF_ENOMEM, "hub: out of memory reading %s", rd->url);
            goto out;
        }
        memcpy(data, rs.body, rs.len);
        rc = add_extent(rd, off, rs.len, data, err);
        if (!rc)
            disk_store(rd, off, data, rs.len);
    }
out:
    vf__free(rs.body);
    return rc;
}

/* Loads a disk extent's bytes; false (and the extent dropped) when the file is unusable. */
static bool load_extent(struct hub_rd *rd, size_t i)
{
    struct extent *x = &rd->ext[i];
    char *f = vf_arena_printf(rd->a, "%s/%llu-%zu", rd->dir, (unsigned long long)x->off, x->len);
    char *data;
    size_t len;
    if (f && vf__read_file(rd->a, f, x->len, &data, &len, NULL) == VF_OK && len == x->len) {
        x->data = (unsigned char *)data;
        return true;
    }
    rd->ext[i] = rd->ext[--rd->n_ext];
    return false;
}

/* The struct vf_reader read(): cached extents first, the network for the rest. */
static enum vf_err hub_read(void *ud, uint64_t off, void *buf, size_t n, size_t *got,
                            struct vf_error *err)
{
    struct hub_rd *rd = ud;
    *got = 0;
    while (*got < n) {
        uint64_t cur = off + *got;
        if (rd->size != VF_UNKNOWN && cur >= rd->size)
            break;
        size_t want = n - *got;
        if (rd->size != VF_UNKNOWN && rd->size - cur < want)
            want = (size_t)(rd->size - cur);
        uint64_t next_start = VF_UNKNOWN;
        bool hit = false;
        for (size_t i = 0; i < rd->n_ext; i++) {
            struct extent *x = &rd->ext[i];
            if (cur >= x->off && cur - x->off < x->len) {
                if (!x->data && !load_extent(rd, i))
                    break; /* rescan: the extent is gone */
                size_t k = x->len - (size_t)(cur - x->off);
                k = k < want ? k : want;
                memcpy((char *)buf + *got, x->data + (cur - x->off), k);
                *got += k;
                hit = true;
                break;
            }
            if (x->off > cur && x->off < next_start)
                next_start = x->off;
        }
        if (hit)
            continue;
        /* a request at least as large as the last one, up to the next cached stretch */
        size_t req = want > rd->next_req ? want : rd->next_req;
        if (req > VF_HUB_MAX_RANGE)
            req = VF_HUB_MAX_RANGE;
        if (next_start != VF_UNKNOWN && next_start - cur < req)
            req = (size_t)(next_start - cur);
        if (rd->size != VF_UNKNOWN && rd->size - cur < req)
            req = (size_t)(rd->size - cur);
        size_t before = rd->n_ext;
        enum vf_err rc = fetch_range(rd, cur, req, err);
        if (rc)
            return rc;
        if (rd->next_req < VF_HUB_MAX_RANGE)
            rd->next_req *= 2;
        if (rd->n_ext == before)
            break; /* end of file */
    }
    return VF_OK;
}

/* Reads the reader's disk cache directory: the size and the extents it holds. A stale directory (a
 * branch older than VF_HUB_CACHE_TTL_S) is emptied instead. */
static void disk_scan(struct hub_rd *rd)
{
    char *sizef = vf_arena_printf(rd->a, "%s/size", rd->dir);
    int state = cache_state(sizef, rd->rev);
    DIR *d = state >= 0 ? opendir(rd->dir) : NULL;
    if (!d)
        return;
    char *text;
    unsigned long long total = 0;
    char *end = NULL;
    if (state == 1 && vf__read_file(rd->a, sizef, 64, &text, NULL, NULL) == VF_OK) {
        errno = 0;
        total = strtoull(text, &end, 10);
        if (errno || end == text || *end != '\n')
            state = 0;
    } else {
        state = 0;
    }
    for (struct dirent *de; (de = readdir(d));) {
        unsigned long long off, len;
        char tail;
        if (sscanf(de->d_name, "%llu-%llu%c", &off, &len, &tail) != 2)
            continue;
        if (state == 1 && len > 0 && len <= VF_HUB_MAX_RANGE && off < total && len <= total - off) {
            if (add_extent(rd, off, (size_t)len, NULL, NULL))
                break;
        } else {
            char *f = vf_arena_printf(rd->a, "%s/%s", rd->dir, de->d_name);
            if (f)
                unlink(f);
        }
    }
    closedir(d);
    if (state == 1)
        rd->size = total;
}

enum vf_err vf__hub_reader(struct vf_arena *a, struct vf_hub *h, const char *repo, const char *rev,
                           const char *path, struct vf_reader *r, struct vf_error *err)
{
    memset(r, 0, sizeof *r);
    r->fd = -1;
    char *erev;
    rev = rev ? rev : "main";
    enum vf_err rc = check_args(a, repo, rev, path, &erev, err);
    if (rc)
        return rc;
    struct hub_rd *rd = vf_arena_alloc(a, sizeof *rd);
    char *epath = pct(a, path, true);
    if (!rd || !epath)
        return vf__errf(err, VF_ENOMEM, "hub: out of memory");
    rd->h = h;
    rd->a = a;
    rd->repo = vf_arena_strdup(a, repo);
    rd->rev = vf_arena_strdup(a, rev);
    rd->path = vf_arena_strdup(a, path);
    rd->url = vf_arena_printf(a, "%s/%s/resolve/%s/%s", h->endpoint, repo, erev, epath);
    rd->dir = cache_file(a, h, repo, erev, "ranges", path);
    rd->size = VF_UNKNOWN;
    rd->next_req = VF_HUB_FIRST_RANGE;
    if (!rd->repo || !rd->rev || !rd->path || !rd->url)
        return vf__errf(err, VF_ENOMEM, "hub: out of memory");
    if (rd->dir)
        disk_scan(rd);

    /* the first bytes now: a gated or missing file fails at open, and the size is known */
    bool have_head = false;
    for (size_t i = 0; i < rd->n_ext && rd->size != VF_UNKNOWN; i++)
        have_head = have_head || (rd->ext[i].off == 0 && (rd->ext[i].len >= VF_HUB_FIRST_RANGE ||
                                                          rd->ext[i].len == rd->size));
    if (!have_head && rd->size != 0) {
        rc = fetch_range(rd, 0, VF_HUB_FIRST_RANGE, err);
        if (rc)
            return rc;
    }
    if (rd->size == VF_UNKNOWN) {
        /* no total in the answers: a short first answer still ends the file */
        if (rd->n_ext == 0 || rd->ext[rd->n_ext - 1].len < VF_HUB_FIRST_RANGE)
            rd->size = rd->n_ext ? rd->ext[rd->n_ext - 1].len : 0;
    }
    r->read = hub_read;
    r->ud = rd;
    r->size = rd->size;
    r->name = rd->url;
    return VF_OK;
}
