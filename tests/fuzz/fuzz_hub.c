/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_hub.c - libFuzzer target of the hub client (read/hub.c) on hostile answers: a stand-in
 * libcurl (stub_curl.so, beside this program) answers each request from the input, so the
 * header parsing (Content-Range, X-Error-Code, Link rel="next"), the listing JSON with its
 * pages, the error mapping and the range reader (with a safetensors header read through it)
 * run on whatever a server could send. The first byte picks the call and whether a token is
 * set; the rest is the script of answers (stub_curl.c). No disk cache (no HOME), no network.
 */
#include "fuzz.h"

#include "read/hub.h"
#include "read/read_safetensors.h"

static void (*script)(const char *data, size_t len);
static char stub_path[4096];

/* The environment of the hub: an http endpoint, a token when asked, nothing else. */
static const char *env_get(void *ud, const char *name)
{
    bool token = *(const bool *)ud;
    if (!strcmp(name, "HF_ENDPOINT"))
        return "http://hub.test";
    if (!strcmp(name, "HF_TOKEN"))
        return token ? "hf_fuzz" : NULL;
    return NULL;
}

/* Reads through the range reader at offsets taken from the input, then a safetensors header. */
static void read_file(struct vf_arena *a, struct vf_hub *h, uint8_t how)
{
    struct vf_reader r;
    if (vf__hub_reader(a, h, "org/model", (how & 8) ? "refs/pr/1" : NULL, "model.safetensors", &r,
                       NULL))
        return;
    static char buf[1 << 17];
    size_t got;
    static const uint64_t offs[] = {0, 8, 70000, 1 << 20};
    for (size_t i = 0; i < 4; i++)
        if (r.read(r.ud, offs[i], buf, (how & 16) ? sizeof buf : 100, &got, NULL))
            break;
    struct vf_safetensors st;
    (void)vf_safetensors_read(a, &r, &st, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!script)
        script = (void (*)(const char *, size_t))fuzz_stub("stub_curl.so", "stub_curl_script",
                                                           stub_path, sizeof stub_path);
    if (!size)
        return 0;
    bool token = data[0] & 4;
    struct vf_hub_env env = {.getenv = env_get, .ud = &token, .curl_lib = stub_path};
    struct vf_hub *h;
    struct vf_arena *a = vf_arena_open((size_t)64 << 20);
    script((const char *)data + 1, size - 1);
    if (a && !vf__hub_open_with(&h, &env, NULL)) {
        const char **paths;
        uint64_t *sizes;
        size_t n;
        char *text;
        size_t len;
        switch (data[0] % 3) {
        case 0:
            (void)vf__hub_list(a, h, "org/model", NULL, &paths, &sizes, &n, NULL);
            break;
        case 1:
            (void)vf__hub_get(a, h, "org/model", NULL, "config.json", 1 << 20, &text, &len, NULL);
            break;
        default:
            read_file(a, h, data[0]);
        }
        vf__hub_close(h);
    }
    vf_arena_close(a);
    return 0;
}
