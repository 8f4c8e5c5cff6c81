/* SPDX-License-Identifier: Apache-2.0 */
/*
 * t_hub.c - unit tests of the hub client (hub.c) against the loopback hub of
 * tests/helpers/hubserver.c: listings (paged), small files and their disk cache, range reads
 * (206, across the CDN redirect, 416, a 2 GiB sparse file read for a few KiB), gated repos
 * with and without a token (HF_TOKEN and the token file), 404s, an unreachable endpoint and a
 * missing libcurl. Never touches the internet: HF_ENDPOINT is the loopback server and
 * XDG_CACHE_HOME a fresh directory per test.
 */
#include "th.h"

#include "read/hub.h"

#include "../helpers/hubserver.c"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define TOKEN       "hf_test_secret_token"
#define SPARSE_SIZE ((uint64_t)2 << 30)

static struct hubserver srv;
static char root[256];  /* mkdtemp: fx/ (fixtures), cache-N/, hfhome/ */
static int cache_count; /* one fresh cache directory per test */

/* The byte at offset i of every pattern file. */
static const char config[] = "{\"architectures\":[\"LlamaForCausalLM\"],\"hidden_size\":64}\n";
#define CONFIG_LEN (sizeof config - 1)

static unsigned char pat(uint64_t i)
{
    return (unsigned char)((i * 2654435761u) >> 13);
}

static void write_file(const char *rel, const void *data, size_t len)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    for (char *q = p + strlen(root) + 1; (q = strchr(q, '/')); q++) {
        *q = 0;
        mkdir(p, 0700);
        *q = '/';
    }
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

/* A file of `size` pattern bytes, the first `dense` of them written (the rest a hole). */
static void write_pattern(const char *rel, uint64_t size, size_t dense)
{
    unsigned char *buf = malloc(dense ? dense : 1);
    assert_non_null(buf);
    for (size_t i = 0; i < dense; i++)
        buf[i] = pat(i);
    write_file(rel, buf, dense);
    free(buf);
    char p[512];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    assert_int_equal(truncate(p, (off_t)size), 0);
}

static void rm_rf(const char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "t_hub: cannot remove %s\n", dir);
}

/* Points the environment at the loopback hub with a fresh cache and no token. */
static void fresh_env(const char *endpoint)
{
    char p[512];
    snprintf(p, sizeof p, "%s/cache-%d", root, ++cache_count);
    setenv("XDG_CACHE_HOME", p, 1);
    snprintf(p, sizeof p, "%s/hfhome", root);
    setenv("HF_HOME", p, 1);
    setenv("HF_ENDPOINT", endpoint, 1);
    unsetenv("HF_TOKEN");
    unsetenv("HF_TOKEN_PATH");
    setenv("NO_PROXY", "127.0.0.1", 1); /* a proxy in the environment must not see the tests */
    setenv("no_proxy", "127.0.0.1", 1);
}

static struct vf_hub *open_hub(void)
{
    struct vf_hub *h = NULL;
    struct vf_error err = {0};
    if (vf__hub_open(&h, &err))
        fail_msg("%s", err.msg);
    return h;
}

static int setup(void **state)
{
    (void)state;
    snprintf(root, sizeof root, "/tmp/t_hub.XXXXXX");
    if (!mkdtemp(root))
        return -1;
    write_file("fx/org/model/config.json", config, strlen(config));
    write_file("fx/org/model/sub/dir/tokenizer_config.json", "{}\n", 3);
    write_file("fx/org/model/empty.bin", "", 0);
    write_pattern("fx/org/model/model.safetensors", 200000, 200000); /* under the redirect */
    write_pattern("fx/org/model/big.gguf", 3000000, 3000000);        /* over it: CDN */
    write_pattern("fx/org/model/sparse.gguf", SPARSE_SIZE, 200000);
    write_file("fx/org/gated/.gated", "", 0);
    write_file("fx/org/gated/config.json", config, strlen(config));
    write_pattern("fx/org/shrink/data.bin", 300000, 300000);
    char p[512];
    snprintf(p, sizeof p, "%s/hfhome", root);
    mkdir(p, 0700);
    snprintf(p, sizeof p, "%s/fx", root);
    srv.page_size = 2; /* the listing of org/model takes five pages */
    return hubserver_start(&srv, p, TOKEN, 0);
}

static int teardown(void **state)
{
    (void)state;
    hubserver_stop(&srv);
    rm_rf(root);
    return 0;
}

static int each(void **state)
{
    (void)state;
    fresh_env(srv.url);
    return 0;
}

static unsigned long long requests(void)
{
    return atomic_load(&srv.requests);
}

/* ------------------------------------------------------------------ listing */

static void test_list(void **state)
{
    (void)state;
    struct vf_arena *a = vf_arena_open(0);
    struct vf_hub *h = open_hub();
    struct vf_error err = {0};
    const char **paths;
    uint64_t *sizes;
    size_t n;
    unsigned long long before = requests();
    if (vf__hub_list(a, h, "org/model", "main", &paths, &sizes, &n, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(n, 6); /* files only: the directories sub/ and sub/dir/ are left out */
    assert_true(requests() - before >= 4); /* eight entries, two a page: the Link was followed */
    static const struct {
        const char *path;
        uint64_t size;
    } want[] = {
        {"config.json", CONFIG_LEN},
        {"sub/dir/tokenizer_config.json", 3},
        {"empty.bin", 0},
        {"model.safetensors", 200000},
        {"big.gguf", 3000000},
        {"sparse.gguf", SPARSE_SIZE},
    };
    for (size_t w = 0; w < sizeof want / sizeof want[0]; w++) {
        size_t i = 0;
        while (i < n && strcmp(paths[i], want[w].path) != 0)
            i++;
        if (i == n)
            fail_msg("listing lacks %s", want[w].path);
        assert_u64(sizes[i], want[w].size);
    }

    /* the second listing comes from the disk cache */
    before = requests();
    if (vf__hub_list(a, h, "org/model", NULL, &paths, &sizes, &n, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(n, 6);
    assert_int_equal(requests(), before);

    /* an unknown repo and an unknown revision */
    assert_int_equal(vf__hub_list(a, h, "org/nope", "main", &paths, &sizes, &n, &err), VF_ENOENT);
    assert_non_null(strstr(err.msg, "hub: 'org/nope' not found (404 from http://127.0.0.1:"));
    assert_non_null(strstr(err.msg, "/api/models/org/nope/tree/main?recursive=true"));
    assert_int_equal(vf__hub_list(a, h, "org/model", "v9", &paths, &sizes, &n, &err), VF_ENOENT);
    assert_non_null(strstr(err.msg, "revision 'v9' of 'org/model' not found (404 from"));
    vf__hub_close(h);
    vf_arena_close(a);
}

/* ------------------------------------------------------------------ small files */

static void test_get_cached(void **state)
{
    (void)state;
    struct vf_arena *a = vf_arena_open(0);
    struct vf_hub *h = open_hub();
    struct vf_error err = {0};
    char *data;
    size_t len;
    unsigned long long before = requests();
    if (vf__hub_get(a, h, "org/model", "main", "config.json", 1 << 20, &data, &len, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(len, CONFIG_LEN);
    assert_non_null(strstr(data, "LlamaForCausalLM"));
    assert_int_equal(requests(), before + 1);

    /* again, and from another hub: the disk cache answers, the server sees nothing */
    if (vf__hub_get(a, h, "org/model", "main", "config.json", 1 << 20, &data, &len, &err))
        fail_msg("%s", err.msg);
    vf__hub_close(h);
    h = open_hub();
    if (vf__hub_get(a, h, "org/model", NULL, "config.json", 1 << 20, &data, &len, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(len, CONFIG_LEN);
    assert_int_equal(requests(), before + 1);

    /* a file in a subfolder; a file over the caller's limit */
    if (vf__hub_get(a, h, "org/model", "main", "sub/dir/tokenizer_config.json", 100, &data, &len,
                    &err))
        fail_msg("%s", err.msg);
    assert_string_equal(data, "{}\n");
    assert_int_equal(
        vf__hub_get(a, h, "org/model", "main", "model.safetensors", 1000, &data, &len, &err),
        VF_ELIMIT);
    assert_non_null(strstr(err.msg, "'model.safetensors' of 'org/model' is over the limit"));
    vf__hub_close(h);
    vf_arena_close(a);
}

static void test_not_found(void **state)
{
    (void)state;
    struct vf_arena *a = vf_arena_open(0);
    struct vf_hub *h = open_hub();
    struct vf_error err = {0};
    char *data;
    struct vf_reader r;
    assert_int_equal(
        vf__hub_get(a, h, "org/nope", "main", "config.json", 1 << 20, &data, NULL, &err),
        VF_ENOENT);
    assert_non_null(strstr(err.msg, "hub: 'org/nope' not found (404 from http://127.0.0.1:"));
    assert_non_null(strstr(err.msg, "/org/nope/resolve/main/config.json)"));
    assert_int_equal(
        vf__hub_get(a, h, "org/model", "main", "missing.json", 1 << 20, &data, NULL, &err),
        VF_ENOENT);
    assert_non_null(strstr(err.msg, "hub: 'missing.json' not found in 'org/model' (404 from"));
    assert_int_equal(vf__hub_reader(a, h, "org/model", "main", "nope.gguf", &r, &err), VF_ENOENT);
    assert_non_null(strstr(err.msg, "'nope.gguf' not found in 'org/model' (404 from"));
    assert_int_equal(
        vf__hub_get(a, h, "org/model", "v2", "config.json", 1 << 20, &data, NULL, &err), VF_ENOENT);
    assert_non_null(strstr(err.msg, "revision 'v2' of 'org/model' not found"));

    /* names that could escape the cache directory are refused before any request */
    assert_int_equal(vf__hub_get(a, h, "../etc", "main", "config.json", 100, &data, NULL, &err),
                     VF_EINVAL);
    assert_non_null(strstr(err.msg, "'../etc' is not a repo id"));
    assert_int_equal(vf__hub_get(a, h, "org/model", "main", "../x", 100, &data, NULL, &err),
                     VF_EINVAL);
    assert_int_equal(vf__hub_get(a, h, "org/model", "..", "x", 100, &data, NULL, &err), VF_EINVAL);
    vf__hub_close(h);
    vf_arena_close(a);
}

/* ------------------------------------------------------------------ gated repos */

static enum vf_err get_gated(struct vf_error *err)
{
    struct vf_arena *a = vf_arena_open(0);
    struct vf_hub *h = open_hub();
    char *data = NULL;
    enum vf_err rc =
        vf__hub_get(a, h, "org/gated", "main", "config.json", 1 << 20, &data, NULL, err);
    if (!rc)
        assert_non_null(strstr(data, "LlamaForCausalLM"));
    vf__hub_close(h);
    vf_arena_close(a);
    return rc;
}

static void test_gated(void **state)
{
    (void)state;
    struct vf_error err = {0};
    assert_int_equal(get_gated(&err), VF_EIO);
    assert_non_null(strstr(err.msg, "hub: 'org/gated' is gated: 401 from http://127.0.0.1:"));
    assert_non_null(strstr(err.msg, "/org/gated/resolve/main/config.json; set HF_TOKEN or run "
                                    "`huggingface-cli login`"));

    setenv("HF_TOKEN", "hf_wrong", 1);
    assert_int_equal(get_gated(&err), VF_EIO);
    assert_non_null(strstr(err.msg, "is gated: 401 from"));
    assert_non_null(strstr(err.msg, "with the token from HF_TOKEN"));

    setenv("HF_TOKEN", TOKEN "\n", 1); /* pasted with its newline */
    if (get_gated(&err))
        fail_msg("%s", err.msg);

    /* the token file under HF_HOME, in a fresh cache so that the server is asked */
    fresh_env(srv.url);
    char p[512];
    snprintf(p, sizeof p, "%s/hfhome/token", root);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(TOKEN "\n", f);
    fclose(f);
    unsigned long long denied = atomic_load(&srv.unauthorized);
    if (get_gated(&err))
        fail_msg("%s", err.msg);
    assert_int_equal(atomic_load(&srv.unauthorized), denied);

    /* the listing of a gated repo asks for the token too */
    unlink(p);
    fresh_env(srv.url);
    struct vf_arena *a = vf_arena_open(0);
    struct vf_hub *h = open_hub();
    const char **paths;
    uint64_t *sizes;
    size_t n;
    assert_int_equal(vf__hub_list(a, h, "org/gated", NULL, &paths, &sizes, &n, &err), VF_EIO);
    assert_non_null(strstr(err.msg, "'org/gated' is gated: 401 from"));
    vf__hub_close(h);
    vf_arena_close(a);
}

/* ------------------------------------------------------------------ range reads */

/* Reads n bytes at off and checks them against the pattern. */
static void check_read(struct vf_reader *r, uint64_t off, size_t n)
{
    unsigned char *buf = malloc(n);
    struct vf_error err = {0};
    size_t got = 0;
    assert_non_null(buf);
    if (r->read(r->ud, off, buf, n, &got, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(got, n);
    for (size_t i = 0; i < n; i++)
        if (buf[i] != pat(off + i))
            fail_msg("byte %llu differs", (unsigned long long)(off + i));
    free(buf);
}

static void test_range_206(void **state)
{
    (void)state;
    struct vf_arena *a = vf_arena_open(0);
    struct vf_hub *h = open_hub();
    struct vf_error err = {0};
    struct vf_reader r;
    unsigned long long partial = atomic_load(&srv.partial);
    unsigned long long redirects = atomic_load(&srv.redirects);
    if (vf__hub_reader(a, h, "org/model", "main", "model.safetensors", &r, &err))
        fail_msg("%s", err.msg);
    assert_u64(r.size, 200000);
    assert_non_null(strstr(r.name, "/org/model/resolve/main/model.safetensors"));
    check_read(&r, 0, 8);
    check_read(&r, 60000, 10000); /* across the end of the first 64 KiB */
    check_read(&r, 199000, 1000); /* the last bytes */
    assert_true(atomic_load(&srv.partial) - partial >= 2);
    assert_int_equal(atomic_load(&srv.redirects), redirects);

    /* past the end: a short read, no request */
    unsigned long long before = requests();
    char buf[16];
    size_t got = 99;
    assert_int_equal(r.read(r.ud, 199990, buf, sizeof buf, &got, &err), VF_OK);
    assert_int_equal(got, 10);
    assert_int_equal(r.read(r.ud, 200000, buf, sizeof buf, &got, &err), VF_OK);
    assert_int_equal(got, 0);
    assert_int_equal(requests(), before);
    vf_reader_close(&r);
    vf__hub_close(h);
    vf_arena_close(a);
}

static void test_range_redirect(void **state)
{
    (void)state;
    struct vf_arena *a = vf_arena_open(0);
    struct vf_hub *h = open_hub();
    struct vf_error err = {0};
    struct vf_reader r;
    unsigned long long redirects = atomic_load(&srv.redirects);
    unsigned long long bytes = atomic_load(&srv.bytes);
    if (vf__hub_reader(a, h, "org/model", "main", "big.gguf", &r, &err))
        fail_msg("%s", err.msg);
    assert_u64(r.size, 3000000);
    check_read(&r, 0, 4096);
    check_read(&r, 2000000, 5000);
    assert_true(atomic_load(&srv.redirects) - redirects >= 2); /* each request went by the CDN */
    assert_true(atomic_load(&srv.bytes) - bytes < 512 * 1024);

    /* a second reader on another hub: the ranges come from the disk cache */
    vf__hub_close(h);
    h = open_hub();
    unsigned long long before = requests();
    if (vf__hub_reader(a, h, "org/model", "main", "big.gguf", &r, &err))
        fail_msg("%s", err.msg);
    assert_u64(r.size, 3000000);
    check_read(&r, 0, 4096);
    check_read(&r, 2000000, 5000);
    assert_int_equal(requests(), before);
    vf__hub_close(h);
    vf_arena_close(a);
}

static void test_sparse_2g(void **state)
{
    (void)state;
    struct vf_arena *a = vf_arena_open(0);
    struct vf_hub *h = open_hub();
    struct vf_error err = {0};
    struct vf_reader r;
    unsigned long long bytes = atomic_load(&srv.bytes);
    unsigned long long partial = atomic_load(&srv.partial);
    if (vf__hub_reader(a, h, "org/model", "main", "sparse.gguf", &r, &err))
        fail_msg("%s", err.msg);
    assert_u64(r.size, SPARSE_SIZE);
    /* a header that streams on in small reads: requests grow, so only a few are made */
    for (uint64_t off = 0; off < 150000; off += 1000)
        check_read(&r, off, 1000);
    unsigned char buf[64];
    size_t got;
    if (r.read(r.ud, SPARSE_SIZE - 10, buf, sizeof buf, &got, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(got, 10);
    for (size_t i = 0; i < got; i++)
        assert_int_equal(buf[i], 0);
    unsigned long long served = atomic_load(&srv.bytes) - bytes;
    /* 64 KiB at open, then 64 KiB and 128 KiB as the reads go on, and the last bytes */
    assert_int_equal(atomic_load(&srv.partial) - partial, 4);
    assert_true(served >= 150000);
    assert_true(served < 400 * 1024); /* of 2 GiB */
    vf__hub_close(h);
    vf_arena_close(a);
}

static void test_416(void **state)
{
    (void)state;
    struct vf_arena *a = vf_arena_open(0);
    struct vf_hub *h = open_hub();
    struct vf_error err = {0};
    struct vf_reader r;
    unsigned long long unsat = atomic_load(&srv.unsatisfiable);

    /* an empty file: the first range is unsatisfiable, 416 says the size (0) */
    if (vf__hub_reader(a, h, "org/model", "main", "empty.bin", &r, &err))
        fail_msg("%s", err.msg);
    assert_u64(r.size, 0);
    assert_int_equal(atomic_load(&srv.unsatisfiable), unsat + 1);
    char buf[8];
    size_t got = 1;
    assert_int_equal(r.read(r.ud, 0, buf, sizeof buf, &got, &err), VF_OK);
    assert_int_equal(got, 0);

    /* a file that shrinks on the hub between two reads: 416 with a clear message */
    if (vf__hub_reader(a, h, "org/shrink", "main", "data.bin", &r, &err))
        fail_msg("%s", err.msg);
    assert_u64(r.size, 300000);
    char p[512];
    snprintf(p, sizeof p, "%s/fx/org/shrink/data.bin", root);
    assert_int_equal(truncate(p, 10000), 0);
    assert_int_equal(r.read(r.ud, 200000, buf, sizeof buf, &got, &err), VF_EIO);
    assert_non_null(strstr(err.msg, "hub: range of 'data.bin' not satisfiable (416 from http://"));
    assert_non_null(strstr(err.msg, "Content-Range 'bytes */10000'); did the file change"));
    assert_int_equal(atomic_load(&srv.unsatisfiable), unsat + 2);
    vf__hub_close(h);
    vf_arena_close(a);
}

/* ------------------------------------------------------------------ no network */

static void test_unreachable(void **state)
{
    (void)state;
    /* a second hub on its own port, used once and stopped: then nothing listens there */
    static struct hubserver b;
    char fx[512];
    snprintf(fx, sizeof fx, "%s/fx", root);
    assert_int_equal(hubserver_start(&b, fx, NULL, 0), 0);
    fresh_env(b.url);
    struct vf_arena *a = vf_arena_open(0);
    struct vf_hub *h = open_hub();
    struct vf_error err = {0};
    char *data;
    size_t len;
    if (vf__hub_get(a, h, "org/model", "main", "config.json", 1 << 20, &data, &len, &err))
        fail_msg("%s", err.msg);
    hubserver_stop(&b);
    vf__hub_close(h);
    h = open_hub();

    assert_int_equal(vf__hub_get(a, h, "org/model", "main", "sub/dir/tokenizer_config.json",
                                 1 << 20, &data, &len, &err),
                     VF_EIO);
    char want[128];
    snprintf(want, sizeof want, "hub: cannot reach %s (", b.url);
    assert_non_null(strstr(err.msg, want));
    assert_non_null(strstr(err.msg, "); offline? a local folder works too"));
    struct vf_reader r;
    assert_int_equal(vf__hub_reader(a, h, "org/model", "main", "big.gguf", &r, &err), VF_EIO);
    assert_non_null(strstr(err.msg, "offline?"));

    /* a stale cached copy beats no answer when the hub cannot be reached */
    char p[512];
    snprintf(p, sizeof p, "%s/cache-%d/vramfit/hub/127.0.0.1_%u/org/model/main/files/config.json",
             root, cache_count, (unsigned)b.port);
    struct timespec old[2] = {{time(NULL) - 3 * 86400, 0}, {time(NULL) - 3 * 86400, 0}};
    assert_int_equal(utimensat(AT_FDCWD, p, old, 0), 0);
    if (vf__hub_get(a, h, "org/model", "main", "config.json", 1 << 20, &data, &len, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(len, CONFIG_LEN);
    vf__hub_close(h);
    vf_arena_close(a);
}

static const char *fake_env(void *ud, const char *name)
{
    (void)ud;
    if (strcmp(name, "HF_ENDPOINT") == 0)
        return "http://127.0.0.1:9/";
    return NULL; /* no HOME either: no disk cache, no token */
}

static void test_env_and_libcurl(void **state)
{
    (void)state;
    struct vf_hub *h = NULL;
    struct vf_error err = {0};
    struct vf_hub_env env = {fake_env, NULL, "libcurl-vramfit-missing.so.4"};
    if (vf__hub_open_with(&h, &env, &err))
        fail_msg("%s", err.msg);
    assert_string_equal(vf__hub_endpoint(h), "http://127.0.0.1:9");
    struct vf_arena *a = vf_arena_open(0);
    char *data;
    assert_int_equal(vf__hub_get(a, h, "org/model", NULL, "config.json", 100, &data, NULL, &err),
                     VF_EUNSUPPORTED);
    assert_non_null(strstr(err.msg, "hub: cannot load libcurl-vramfit-missing.so.4 (apt-get "
                                    "install libcurl4)"));
    vf__hub_close(h);
    vf_arena_close(a);

    setenv("HF_ENDPOINT", "ftp://example.org", 1);
    assert_int_equal(vf__hub_open(&h, &err), VF_EINVAL);
    assert_non_null(strstr(err.msg, "HF_ENDPOINT 'ftp://example.org' is not an http(s) URL"));
    unsetenv("HF_ENDPOINT");
    if (vf__hub_open(&h, &err))
        fail_msg("%s", err.msg);
    assert_string_equal(vf__hub_endpoint(h), "https://huggingface.co");
    vf__hub_close(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_list, each),
        cmocka_unit_test_setup(test_get_cached, each),
        cmocka_unit_test_setup(test_not_found, each),
        cmocka_unit_test_setup(test_gated, each),
        cmocka_unit_test_setup(test_range_206, each),
        cmocka_unit_test_setup(test_range_redirect, each),
        cmocka_unit_test_setup(test_sparse_2g, each),
        cmocka_unit_test_setup(test_416, each),
        cmocka_unit_test_setup(test_unreachable, each),
        cmocka_unit_test_setup(test_env_and_libcurl, each),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
