/* SPDX-License-Identifier: Apache-2.0 */
/*
 * t_json.c - the JSON dumper of render_json.c (vf__json_finish) writes what jansson's own
 * json_dumps(JSON_INDENT(2) | JSON_REAL_PRECISION(10)) writes, byte for byte, on the
 * documents the CLI prints and on generated trees with every escape, real form and nesting.
 */
#include "th.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/render_json.h"
#include "read/json_fast.h"

#include <dirent.h>

/* jansson's text of j (a new reference is taken: vf__json_finish frees its root). */
static char *jansson_text(json_t *j)
{
    char *s = json_dumps(j, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
    assert_non_null(s);
    size_t n = strlen(s);
    char *t = malloc(n + 2);
    assert_non_null(t);
    memcpy(t, s, n);
    memcpy(t + n, "\n", 2);
    free(s);
    return t;
}

static void same_as_jansson(json_t *j)
{
    char *want = jansson_text(j);
    struct vf_arena *a = vf_arena_open(0);
    char *got = vf__json_finish(a, j); /* frees j */
    assert_non_null(got);
    assert_string_equal(got, want);
    free(want);
    vf_arena_close(a);
}

/* Reals in every form %.10g takes: integers (".0" added), exponents up and down (jansson
 * drops '+' and leading zeros), the smallest and largest doubles, negative zero. */
static void reals(void **state)
{
    (void)state;
    static const double v[] = {0.0,
                               -0.0,
                               1.0,
                               100.0,
                               0.1,
                               1.5,
                               0.76,
                               1e20,
                               1e-5,
                               1.25e-7,
                               123456789012.0,
                               1e100,
                               -2.5e8,
                               5e-324,
                               1.7976931348623157e308,
                               3.14159265358979,
                               0.0001,
                               1e15,
                               12345678901.0};
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
        json_t *a = json_array();
        json_array_append_new(a, json_real(v[i]));
        same_as_jansson(a);
    }
}

/* The printf-free path of vf__json_put_real (1e-4 <= |v| < 1e10) against snprintf's
 * "%.10g" + jansson's ".0" on 400k values: prices in micro-units as the catalog holds them,
 * per minute (thirds, sixths: repeating decimals), random mantissas at every decimal exponent
 * of the range and next to its edges and powers of ten, halves after the tenth digit, exact and
 * decimal. */
static void reals_fast_path(void **state)
{
    (void)state;
    unsigned seed = 15;
    char want[64];
    struct vf_arena *a = vf_arena_open(0);
    for (int i = 0; i < 400000; i++) {
        double v;
        switch (i % 6) {
        case 0:
            v = (double)(rand_r(&seed) % 100000000) / 1e6;
            break;
        case 1:
            v = (double)(rand_r(&seed) % 100000000) / 1e6 / 60.0;
            break;
        case 2: {
            int x = rand_r(&seed) % 16 - 5; /* 1e-5 .. 1e10 */
            v = ((double)rand_r(&seed) / RAND_MAX + 1e-9) * pow(10.0, x);
            break;
        }
        case 3: { /* next to 10^x and its neighbours in ulps */
            int x = rand_r(&seed) % 16 - 5;
            v = nextafter(pow(10.0, x), rand_r(&seed) % 2 ? 0.0 : 1e300);
            break;
        }
        case 4: /* an exact binary half at the eleventh digit: printf rounds it to even */
            v = (double)(rand_r(&seed) % 900000000 + 100000000) * 10.0 + 0.5;
            v = (i / 6) % 2 ? v : v / 1024.0;
            break;
        default: /* a decimal half at the eleventh significant digit */
            v = ((double)(rand_r(&seed) % 1000000000) * 10.0 + 5.0) / 1e10 *
                pow(10.0, rand_r(&seed) % 8 - 3);
            break;
        }
        if (i % 7 == 0)
            v = -v;
        int n = snprintf(want, sizeof want - 3, "%.10g", v);
        if (!strchr(want, 'e') && !strchr(want, '.'))
            memcpy(want + n, ".0", 3);
        if (strchr(want, 'e'))
            continue; /* the exponent form (jansson's rewrite) is reals()'s */
        struct vf__sb b;
        vf__sb_init(&b, a);
        vf__json_put_real(&b, v);
        const char *got = vf__sb_done(&b);
        assert_non_null(got);
        if (strcmp(got, want))
            fail_msg("%.17g: got %s, want %s", v, got, want);
    }
    vf_arena_close(a);
}

/* Strings with every byte from 1 to 127 (the control characters escaped as \uXXXX, quote
 * and backslash, '/' and DEL left as they are) and multi-byte UTF-8. */
static void strings(void **state)
{
    (void)state;
    char s[128];
    for (int i = 1; i < 128; i++)
        s[i - 1] = (char)i;
    s[127] = 0;
    json_t *o = json_object();
    json_object_set_new(o, "all", json_string(s));
    json_object_set_new(o, "utf8", json_string("caf\xc3\xa9 \xe2\x82\xac 0.76/h \xf0\x9f\x98\x80"));
    json_object_set_new(o, "key \"quoted\"\n", json_string(""));
    same_as_jansson(o);
}

/* 20k strings of 0..40 bytes, through the dumper and the streaming writer, drawn from plain ASCII,
 * the escaped bytes and UTF-8 (a multi-byte character is kept whole: jansson refuses invalid
 * UTF-8), so every escape falls at every place of the 8-byte steps (vf__json_put_string,
 * plain_ascii). */
static void strings_at_every_offset(void **state)
{
    (void)state;
    static const char *const piece[] = {"a",  "Z",        " ",           "\"",   "\\",
                                        "\n", "\t",       "\x01",        "\x1f", "\x7f",
                                        "/",  "\xc3\xa9", "\xe2\x82\xac"};
    unsigned seed = 8;
    for (int k = 0; k < 20000; k++) {
        char s[128];
        size_t n = 0, len = (size_t)(rand_r(&seed) % 41);
        while (n < len) {
            const char *p = piece[rand_r(&seed) % (sizeof piece / sizeof *piece)];
            memcpy(s + n, p, strlen(p));
            n += strlen(p);
        }
        s[n] = 0;
        json_t *a = json_array();
        json_array_append_new(a, json_string(s));
        same_as_jansson(a);
        /* the streaming writer (estimate, pick), s as a key and as a value */
        json_t *o = json_object();
        json_object_set_new(o, s, json_string(s));
        char *want = jansson_text(o);
        json_decref(o);
        struct vf_arena *ar = vf_arena_open(0);
        struct vf__jw j;
        vf__jw_init(&j, ar);
        vf__jw_open(&j, NULL, '{');
        vf__jw_text(&j, s, s);
        vf__jw_close(&j);
        char *got = vf__jw_done(&j);
        assert_non_null(got);
        assert_string_equal(got, want);
        free(want);
        vf_arena_close(ar);
    }
}

/* A generated tree: nested objects and arrays (empty ones too), integers from INT64_MIN
 * to INT64_MAX, true, false, null; a fixed seed, so a failure repeats. */
static json_t *tree(unsigned *seed, int depth)
{
    int kind = depth > 4 ? 2 + rand_r(seed) % 6 : rand_r(seed) % 8;
    switch (kind) {
    case 0:
    case 1: {
        bool obj = kind == 0;
        json_t *c = obj ? json_object() : json_array();
        int n = rand_r(seed) % 5;
        for (int i = 0; i < n; i++) {
            char key[16];
            snprintf(key, sizeof key, "k%d", rand_r(seed) % 100);
            json_t *v = tree(seed, depth + 1);
            if (obj)
                json_object_set_new(c, key, v);
            else
                json_array_append_new(c, v);
        }
        return c;
    }
    case 2:
        return json_integer(rand_r(seed) % 3 == 0   ? INT64_MIN
                            : rand_r(seed) % 2 == 0 ? INT64_MAX
                                                    : (json_int_t)rand_r(seed) - RAND_MAX / 2);
    case 3:
        return json_real((double)rand_r(seed) / (rand_r(seed) % 1000 + 1));
    case 4:
        return json_true();
    case 5:
        return json_false();
    case 6:
        return json_null();
    default: {
        char s[8];
        for (int i = 0; i < 7; i++)
            s[i] = (char)(1 + rand_r(seed) % 127);
        s[7] = 0;
        return json_string(s);
    }
    }
}

static void trees(void **state)
{
    (void)state;
    unsigned seed = 15;
    for (int i = 0; i < 300; i++) {
        json_t *root = json_array(); /* jansson dumps no bare scalar without JSON_ENCODE_ANY */
        json_array_append_new(root, tree(&seed, 0));
        same_as_jansson(root);
    }
}

/* The documents themselves: the estimate and pick the API serves (bench/serve.sh's). */
static void documents(void **state)
{
    (void)state;
    struct vf_catalog *c = NULL;
    struct vf_error err = {0};
    assert_int_equal(vf_catalog_open(&c, NULL, &err), VF_OK);
    struct vf_arena *a = vf_arena_open(0);
    struct vf_workload w;
    struct vf_answer *ans = vf_arena_alloc(a, sizeof *ans);
    vf_workload_init(&w, VF_CMD_PICK);
    assert_int_equal(vf_workload_set(&w, "model", "llama-3.1-70b", &err), VF_OK);
    assert_int_equal(vf_workload_set(&w, "quant", "Q4_K_M", &err), VF_OK);
    assert_int_equal(vf_workload_finish(&w, &err), VF_OK);
    assert_int_equal(vf_answer_pick(a, c, &w, ans, &err), VF_OK);
    char *ours = vf_render_pick_json(a, &ans->est, &ans->pick, &w);
    assert_non_null(ours);
    /* jansson reads ours back and prints the same bytes */
    json_error_t jerr;
    json_t *back = json_loads(ours, 0, &jerr);
    assert_non_null(back);
    char *theirs = jansson_text(back);
    assert_string_equal(ours, theirs);
    free(theirs);
    json_decref(back);
    vf_arena_close(a);
    vf_catalog_close(c);
}

/* vf__json_loadb (read/json_fast.c) against json_loadb: the same tree (json_equal tells an
 * integer from a real) or the same error, line and column; *fast: whether its own reader
 * answered (json_loadb always writes the error's source, the fast reader leaves it). */
static void fast_vs_jansson(const char *text, size_t n, size_t flags, bool *fast)
{
    json_error_t a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    json_t *x = vf__json_loadb(text, n, flags, &a);
    json_t *y = json_loadb(text, n, flags, &b);
    assert_true((x == NULL) == (y == NULL));
    if (x) {
        assert_true(json_equal(x, y));
    } else {
        assert_string_equal(a.text, b.text);
        assert_int_equal(a.line, b.line);
        assert_int_equal(a.column, b.column);
    }
    if (fast)
        *fast = x && !a.source[0];
    json_decref(x);
    json_decref(y);
}

/* Every model config and pipeline file of the catalog is read by the fast reader (so the test
 * fails if it gives up on them) into jansson's tree; so is each of its texts cut short at every
 * byte (an error, jansson's). */
static void fast_reader_catalog(void **state)
{
    (void)state;
    static const char *const dirs[] = {"data/models", "data/pipelines"};
    size_t files = 0;
    for (size_t i = 0; i < 2; i++) {
        DIR *d = opendir(dirs[i]);
        assert_non_null(d);
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (!strstr(e->d_name, ".json"))
                continue;
            char path[512];
            snprintf(path, sizeof path, "%s/%s", dirs[i], e->d_name);
            FILE *f = fopen(path, "rb");
            assert_non_null(f);
            static char buf[1 << 16];
            size_t n = fread(buf, 1, sizeof buf, f);
            fclose(f);
            bool fast = false;
            fast_vs_jansson(buf, n, 0, &fast);
            assert_true(fast);
            fast_vs_jansson(buf, n, JSON_REJECT_DUPLICATES, NULL);
            for (size_t cut = 0; cut < n && files < 3; cut++)
                fast_vs_jansson(buf, cut, 0, NULL);
            files++;
        }
        closedir(d);
    }
    assert_true(files >= 20);
}

/* Texts at each edge of the fast reader's subset: taken (numbers of each form, empty
 * containers, nesting) or handed to jansson (escapes, UTF-8, duplicates, leading zeros, too
 * big, too deep, trailing bytes, a top-level scalar, a NUL). */
static void fast_reader_edges(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        bool fast;
    } cases[] = {
        {"{}", true},
        {" [ ] ", true},
        {"{\"a\": [1, -0, 0.5, -1.25e-3, 1E5, 2e+2, 123456789012345678, true, false, null]}", true},
        {"{\"\": {\"b\": [[], {}]}}", true},
        {"[1.7976931348623157e308, 4.9e-324, 0.1, 1e-400]", true},
        {"{\"a\": \"x\\\"y\"}", false},
        {"{\"a\": \"caf\xc3\xa9\"}", false},
        {"{\"a\": \"\xff\"}", false},
        {"{\"a\": 1, \"a\": 2}", false},
        {"[01]", false},
        {"[1.]", false},
        {"[.5]", false},
        {"[1e]", false},
        {"[-]", false},
        {"[1234567890123456789]", false},
        {"[12345678901234567890123]", false},
        {"[1e309]", false},
        {"[1, ]", false},
        {"{\"a\" 1}", false},
        {"{\"a\": 1,}", false},
        {"[1] x", false},
        {"1", false},
        {"\"a\"", false},
        {"[tru]", false},
        {"[nul]", false},
        {"", false},
        {"   ", false},
        {"[\"a\tb\"]", false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bool fast = false;
        fast_vs_jansson(cases[i].text, strlen(cases[i].text), 0, &fast);
        assert_int_equal(fast, cases[i].fast);
    }
    char nul[] = "[1,\0 2]";
    fast_vs_jansson(nul, sizeof nul - 1, 0, NULL);
    char deep[200];
    for (int d = 0; d < 2; d++) { /* 64 levels are read here, 65 go to jansson */
        int levels = d ? 65 : 64;
        memset(deep, '[', (size_t)levels);
        memset(deep + levels, ']', (size_t)levels);
        bool fast = false;
        fast_vs_jansson(deep, 2 * (size_t)levels, 0, &fast);
        assert_int_equal(fast, !d);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reals),
        cmocka_unit_test(reals_fast_path),
        cmocka_unit_test(strings_at_every_offset),
        cmocka_unit_test(strings),
        cmocka_unit_test(trees),
        cmocka_unit_test(documents),
        cmocka_unit_test(fast_reader_catalog),
        cmocka_unit_test(fast_reader_edges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
