/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hubserver.c - a loopback Hugging Face hub for the tests: serves a fixture directory
 * (ROOT/owner/name/...) in the hub's URL layout on 127.0.0.1, with libmicrohttpd:
 *
 *   GET /api/models/{owner}/{name}/tree/main?recursive=true[&cursor=K]   JSON listing, paged
 *   GET /{owner}/{name}/resolve/main/{path}     the file, with Range (206, 416); files over
 *                                               redirect_over bytes answer 302 to /cdn/...
 *   GET /cdn/{owner}/{name}/{path}              the file, with Range (the "CDN": no auth)
 *
 * A repo that holds a file named ".gated" answers 401 (X-Error-Code: GatedRepo) unless the
 * request carries "Authorization: Bearer <token>"; a missing repo is 404 RepoNotFound, a
 * missing file 404 EntryNotFound, another revision 404 RevisionNotFound, as the hub does.
 * It counts requests and body bytes, so a test can assert how little a header read costs.
 *
 * Tests #include this file and call hubserver_start()/hubserver_stop(); built with
 * -DHUBSERVER_MAIN it is a program: `hubserver ROOT [PORT [TOKEN]]`.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

struct hubserver {
    /* settings: set before hubserver_start() (zero means the default) */
    uint64_t redirect_over; /* files larger than this are redirected (default 1 MiB) */
    size_t page_size;       /* listing entries per page (default: all on one) */
    /* filled by hubserver_start() */
    struct MHD_Daemon *d;
    char root[1024];
    char token[256];
    uint16_t port;
    char url[64]; /* "http://127.0.0.1:PORT" */
    /* counters */
    atomic_ullong requests, bytes, redirects, partial, unsatisfiable, unauthorized;
};

int hubserver_start(struct hubserver *s, const char *root, const char *token, uint16_t port);
void hubserver_stop(struct hubserver *s);
void hubserver_reset_counts(struct hubserver *s);

#define HUBSERVER_MAX_ENTRIES 10000

/* Queues a response and drops our reference; MHD_NO when it cannot. */
static enum MHD_Result hs_queue(struct MHD_Connection *c, unsigned status, struct MHD_Response *r)
{
    if (!r)
        return MHD_NO;
    enum MHD_Result ok = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ok;
}

/* An error answer as the hub gives it: status, X-Error-Code, a JSON body. */
static enum MHD_Result hs_error(struct hubserver *s, struct MHD_Connection *c, unsigned status,
                                const char *code, const char *msg)
{
    char body[512];
    int n = snprintf(body, sizeof body, "{\"error\":\"%s\"}", msg);
    struct MHD_Response *r =
        MHD_create_response_from_buffer((size_t)n, body, MHD_RESPMEM_MUST_COPY);
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, "Content-Type", "application/json");
    if (code)
        MHD_add_response_header(r, "X-Error-Code", code);
    atomic_fetch_add(&s->bytes, (unsigned long long)n);
    if (status == 401)
        atomic_fetch_add(&s->unauthorized, 1);
    return hs_queue(c, status, r);
}

/* True when no part of path is empty, "." or ".." (nothing escapes the root). */
static bool hs_safe(const char *path)
{
    for (const char *p = path;;) {
        size_t k = strcspn(p, "/");
        if (k == 0 || (k == 1 && p[0] == '.') || (k == 2 && p[0] == '.' && p[1] == '.'))
            return false;
        p += k;
        if (!*p)
            return true;
        p++;
    }
}

/* Splits "owner/name/rest" into the repo directory path and rest; false if malformed. */
static bool hs_repo(const struct hubserver *s, const char *u, char *dir, size_t cap,
                    const char **rest)
{
    const char *a = strchr(u, '/');
    if (!a)
        return false;
    const char *b = strchr(a + 1, '/');
    if (!b || a == u || b == a + 1)
        return false;
    *rest = b + 1;
    int n = snprintf(dir, cap, "%s/%.*s", s->root, (int)(b - u), u);
    return n > 0 && (size_t)n < cap && hs_safe(dir + strlen(s->root) + 1);
}

static bool hs_is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The repo checks every hub route makes: exists (404), gated (401 without the token). */
static enum MHD_Result hs_check_repo(struct hubserver *s, struct MHD_Connection *c, const char *dir,
                                     bool *done)
{
    *done = true;
    if (!hs_is_dir(dir))
        return hs_error(s, c, 404, "RepoNotFound", "Repository not found");
    char gate[1200];
    snprintf(gate, sizeof gate, "%s/.gated", dir);
    if (access(gate, F_OK) == 0) {
        const char *auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
        char want[300];
        snprintf(want, sizeof want, "Bearer %s", s->token);
        if (!auth || !s->token[0] || strcmp(auth, want) != 0)
            return hs_error(s, c, 401, "GatedRepo",
                            "Access to this model is restricted. You must have access to it "
                            "and be authenticated to access it.");
    }
    *done = false;
    return MHD_YES;
}

/* ------------------------------------------------------------------ listing */

struct hs_entry {
    char path[512];
    bool dir;
    unsigned long long size;
};

static int hs_entry_cmp(const void *a, const void *b)
{
    return strcmp(((const struct hs_entry *)a)->path, ((const struct hs_entry *)b)->path);
}

/* Collects the entries under base/rel (dot files left out); false when too many. */
static bool hs_walk(const char *base, const char *rel, bool recursive, struct hs_entry *e,
                    size_t *n)
{
    char dir[1600];
    snprintf(dir, sizeof dir, "%s%s%s", base, rel[0] ? "/" : "", rel);
    DIR *d = opendir(dir);
    if (!d)
        return true;
    bool ok = true;
    for (struct dirent *de; ok && (de = readdir(d));) {
        if (de->d_name[0] == '.')
            continue;
        if (*n == HUBSERVER_MAX_ENTRIES) {
            ok = false;
            break;
        }
        struct hs_entry *x = &e[(*n)++];
        snprintf(x->path, sizeof x->path, "%s%s%s", rel, rel[0] ? "/" : "", de->d_name);
        char full[2200];
        snprintf(full, sizeof full, "%s/%s", base, x->path);
        struct stat st;
        if (stat(full, &st) != 0) {
            (*n)--;
            continue;
        }
        x->dir = S_ISDIR(st.st_mode);
        x->size = x->dir ? 0 : (unsigned long long)st.st_size;
        if (x->dir && recursive) {
            char sub[512];
            snprintf(sub, sizeof sub, "%s", x->path);
            ok = hs_walk(base, sub, recursive, e, n);
        }
    }
    closedir(d);
    return ok;
}

static enum MHD_Result hs_listing(struct hubserver *s, struct MHD_Connection *c, const char *dir,
                                  const char *rel_url)
{
    const char *rec = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "recursive");
    const char *cur = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "cursor");
    bool recursive = rec && (strcmp(rec, "true") == 0 || strcmp(rec, "True") == 0);
    size_t start = cur ? (size_t)strtoull(cur, NULL, 10) : 0;
    struct hs_entry *e = calloc(HUBSERVER_MAX_ENTRIES, sizeof *e);
    size_t n = 0;
    if (!e || !hs_walk(dir, "", recursive, e, &n)) {
        free(e);
        return hs_error(s, c, 500, NULL, "listing failed");
    }
    qsort(e, n, sizeof *e, hs_entry_cmp);
    size_t end =
        s->page_size && n - (start < n ? start : n) > s->page_size ? start + s->page_size : n;
    json_t *arr = json_array();
    for (size_t i = start; i < end; i++) {
        json_t *o = json_object();
        json_object_set_new(o, "type", json_string(e[i].dir ? "directory" : "file"));
        json_object_set_new(o, "oid", json_string("0123456789abcdef0123456789abcdef01234567"));
        json_object_set_new(o, "size", json_integer((json_int_t)e[i].size));
        json_object_set_new(o, "path", json_string(e[i].path));
        if (!e[i].dir && e[i].size > s->redirect_over) {
            json_t *lfs = json_object();
            json_object_set_new(lfs, "oid",
                                json_string("00000000000000000000000000000000000000"
                                            "00000000000000000000000000"));
            json_object_set_new(lfs, "size", json_integer((json_int_t)e[i].size));
            json_object_set_new(lfs, "pointerSize", json_integer(134));
            json_object_set_new(o, "lfs", lfs);
        }
        json_array_append_new(arr, o);
    }
    free(e);
    char *body = json_dumps(arr, JSON_COMPACT);
    json_decref(arr);
    if (!body)
        return MHD_NO;
    size_t len = strlen(body);
    struct MHD_Response *r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(body);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", "application/json");
    if (end < n) {
        char link[1600];
        snprintf(link, sizeof link, "<%s%s?recursive=%s&expand=false&cursor=%zu>; rel=\"next\"",
                 s->url, rel_url, recursive ? "true" : "false", end);
        MHD_add_response_header(r, "Link", link);
    }
    atomic_fetch_add(&s->bytes, (unsigned long long)len);
    return hs_queue(c, 200, r);
}

/* ------------------------------------------------------------------ files */

/* Serves file `path` whole (200) or the one range asked for (206), or 416 past its end. */
static enum MHD_Result hs_file(struct hubserver *s, struct MHD_Connection *c, const char *path,
                               bool head)
{
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        if (fd >= 0)
            close(fd);
        return hs_error(s, c, 404, "EntryNotFound", "Entry not found");
    }
    uint64_t size = (uint64_t)st.st_size, first = 0, last = size ? size - 1 : 0;
    bool ranged = false;
    const char *range = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Range");
    if (range && strncmp(range, "bytes=", 6) == 0 && !strchr(range, ',')) {
        const char *p = range + 6;
        char *end;
        unsigned long long a = 0, b = UINT64_MAX;
        bool ok = true;
        if (*p == '-') { /* suffix: the last N bytes */
            unsigned long long k = strtoull(p + 1, &end, 10);
            ok = end != p + 1 && !*end && k > 0;
            a = k >= size ? 0 : size - k;
        } else {
            a = strtoull(p, &end, 10);
            ok = end != p && *end == '-';
            if (ok && end[1]) {
                const char *q = end + 1;
                b = strtoull(q, &end, 10);
                ok = end != q && !*end && b >= a;
            }
        }
        if (ok && (a >= size)) {
            close(fd);
            char cr[64];
            snprintf(cr, sizeof cr, "bytes */%llu", (unsigned long long)size);
            struct MHD_Response *r =
                MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
            if (!r)
                return MHD_NO;
            MHD_add_response_header(r, "Content-Range", cr);
            atomic_fetch_add(&s->unsatisfiable, 1);
            return hs_queue(c, 416, r);
        }
        if (ok) {
            ranged = true;
            first = a;
            last = b < size ? b : size - 1;
        }
    }
    uint64_t len = ranged ? last - first + 1 : size;
    struct MHD_Response *r = MHD_create_response_from_fd_at_offset64(len, fd, first);
    if (!r) {
        close(fd);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Accept-Ranges", "bytes");
    MHD_add_response_header(r, "Content-Type", "application/octet-stream");
    if (ranged) {
        char cr[96];
        snprintf(cr, sizeof cr, "bytes %llu-%llu/%llu", (unsigned long long)first,
                 (unsigned long long)last, (unsigned long long)size);
        MHD_add_response_header(r, "Content-Range", cr);
        atomic_fetch_add(&s->partial, 1);
    }
    if (!head)
        atomic_fetch_add(&s->bytes, (unsigned long long)len);
    return hs_queue(c, ranged ? 206 : 200, r);
}

static enum MHD_Result hs_handle(void *cls, struct MHD_Connection *c, const char *url,
                                 const char *method, const char *version, const char *upload,
                                 size_t *upload_size, void **req_cls)
{
    (void)version;
    (void)upload;
    (void)upload_size;
    static int first_call;
    if (*req_cls != &first_call) {
        /* answering on the headers' call would make MHD close the connection */
        *req_cls = &first_call;
        return MHD_YES;
    }
    struct hubserver *s = cls;
    atomic_fetch_add(&s->requests, 1);
    bool head = strcmp(method, "HEAD") == 0;
    if (!head && strcmp(method, "GET") != 0)
        return hs_error(s, c, 405, NULL, "method not allowed");

    char dir[1200];
    const char *rest;
    bool done;
    enum MHD_Result res;
    if (strncmp(url, "/api/models/", 12) == 0) {
        if (!hs_repo(s, url + 12, dir, sizeof dir, &rest) || strncmp(rest, "tree/", 5) != 0)
            return hs_error(s, c, 404, NULL, "Not found");
        if ((res = hs_check_repo(s, c, dir, &done)), done)
            return res;
        if (strcmp(rest + 5, "main") != 0)
            return hs_error(s, c, 404, "RevisionNotFound", "Invalid rev id");
        return hs_listing(s, c, dir, url);
    }
    if (strncmp(url, "/cdn/", 5) == 0) {
        if (!hs_repo(s, url + 5, dir, sizeof dir, &rest) || !hs_safe(rest))
            return hs_error(s, c, 404, NULL, "Not found");
        char path[2400];
        snprintf(path, sizeof path, "%s/%s", dir, rest);
        return hs_file(s, c, path, head);
    }
    if (!hs_repo(s, url + 1, dir, sizeof dir, &rest) || strncmp(rest, "resolve/", 8) != 0)
        return hs_error(s, c, 404, NULL, "Not found");
    if ((res = hs_check_repo(s, c, dir, &done)), done)
        return res;
    rest += 8;
    if (strncmp(rest, "main/", 5) != 0)
        return hs_error(s, c, 404, "RevisionNotFound", "Invalid rev id");
    rest += 5;
    char path[2400];
    snprintf(path, sizeof path, "%s/%s", dir, rest);
    struct stat st;
    if (!hs_safe(rest) || rest[0] == '.' || stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return hs_error(s, c, 404, "EntryNotFound", "Entry not found");
    if ((uint64_t)st.st_size > s->redirect_over) {
        /* large (LFS) files live on the CDN, as on the real hub */
        char loc[2400];
        snprintf(loc, sizeof loc, "%s/cdn/%.*s/%s", s->url,
                 (int)(strlen(dir) - strlen(s->root) - 1), dir + strlen(s->root) + 1, rest);
        char linked[32];
        snprintf(linked, sizeof linked, "%llu", (unsigned long long)st.st_size);
        struct MHD_Response *r =
            MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
        if (!r)
            return MHD_NO;
        MHD_add_response_header(r, "Location", loc);
        MHD_add_response_header(r, "X-Linked-Size", linked);
        atomic_fetch_add(&s->redirects, 1);
        return hs_queue(c, 302, r);
    }
    return hs_file(s, c, path, head);
}

/*
 * Starts serving directory root on 127.0.0.1:port (0: any free port; s->port and s->url say
 * which). token is the one a gated repo accepts (NULL: none). Returns 0, or -1 with a
 * message on stderr.
 */
int hubserver_start(struct hubserver *s, const char *root, const char *token, uint16_t port)
{
    snprintf(s->root, sizeof s->root, "%s", root);
    snprintf(s->token, sizeof s->token, "%s", token ? token : "");
    if (!s->redirect_over)
        s->redirect_over = (uint64_t)1 << 20;
    hubserver_reset_counts(s);
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_port = htons(port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    s->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG, port, NULL, NULL,
                            hs_handle, s, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
                            MHD_OPTION_END);
    if (!s->d) {
        fprintf(stderr, "hubserver: cannot listen on 127.0.0.1:%u\n", (unsigned)port);
        return -1;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
    s->port = info ? info->port : port;
    snprintf(s->url, sizeof s->url, "http://127.0.0.1:%u", (unsigned)s->port);
    return 0;
}

void hubserver_stop(struct hubserver *s)
{
    if (s->d)
        MHD_stop_daemon(s->d);
    s->d = NULL;
}

void hubserver_reset_counts(struct hubserver *s)
{
    atomic_store(&s->requests, 0);
    atomic_store(&s->bytes, 0);
    atomic_store(&s->redirects, 0);
    atomic_store(&s->partial, 0);
    atomic_store(&s->unsatisfiable, 0);
    atomic_store(&s->unauthorized, 0);
}

#ifdef HUBSERVER_MAIN
int main(int argc, char **argv)
{
    if (argc < 2 || argc > 4) {
        fprintf(stderr, "usage: hubserver ROOT [PORT [TOKEN]]\n");
        return 2;
    }
    static struct hubserver s;
    if (hubserver_start(&s, argv[1], argc > 3 ? argv[3] : NULL,
                        argc > 2 ? (uint16_t)atoi(argv[2]) : 0))
        return 1;
    printf("HF_ENDPOINT=%s\n(serving %s; end with Ctrl-D)\n", s.url, s.root);
    fflush(stdout);
    while (getchar() != EOF)
        ;
    printf("%llu requests, %llu bytes\n", (unsigned long long)atomic_load(&s.requests),
           (unsigned long long)atomic_load(&s.bytes));
    hubserver_stop(&s);
    return 0;
}
#endif
