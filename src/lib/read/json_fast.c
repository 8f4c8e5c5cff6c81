/* SPDX-License-Identifier: Apache-2.0 */
/*
 * json_fast.c - see json_fast.h. A recursive descent over RFC 8259's grammar for the subset
 * it takes; each construct outside it makes the whole parse give up (NULL), never guess:
 * - strings: bytes 0x20..0x7e but '"' and '\\' (no escape, no UTF-8), as jansson keeps them;
 * - numbers: RFC 8259's grammar; no fraction and no exponent is an integer (jansson's rule),
 *   up to 18 digits (json_int_t holds them all); anything else a real, through vf__strtod (the
 *   same double as strtod, t_units) and finite, as jansson's overflow check;
 * - an object's key seen twice gives up (jansson keeps the last, or refuses with
 *   JSON_REJECT_DUPLICATES: its own parse decides);
 * - the top level an object or array followed by nothing but white space (json_loadb without
 *   JSON_DECODE_ANY or JSON_DISABLE_EOF_CHECK); any other flag gives up at once.
 */
#include "json_fast.h"
#include "internal.h"

#include <math.h>
#include <string.h>

#define FAST_DEPTH 64

struct fast {
    const char *p, *end;
    int depth;
};

static void skip_ws(struct fast *f)
{
    while (f->p < f->end && (*f->p == ' ' || *f->p == '\n' || *f->p == '\r' || *f->p == '\t'))
        f->p++;
}

static json_t *value(struct fast *f);

/* A string's bytes after its opening quote; *n its length; NULL when it is not plain. */
static const char *plain_string(struct fast *f, size_t *n)
{
    const char *s = f->p;
    while (f->p < f->end && *f->p != '"') {
        unsigned char c = (unsigned char)*f->p;
        if (c < 0x20 || c > 0x7e || c == '\\')
            return NULL;
        f->p++;
    }
    if (f->p >= f->end)
        return NULL;
    *n = (size_t)(f->p - s);
    f->p++; /* the closing quote */
    return s;
}

static bool digit(const struct fast *f)
{
    return f->p < f->end && *f->p >= '0' && *f->p <= '9';
}

static json_t *number(struct fast *f)
{
    const char *s = f->p;
    bool real = false;
    if (*f->p == '-')
        f->p++;
    if (!digit(f))
        return NULL;
    if (*f->p == '0') {
        f->p++;
        if (digit(f))
            return NULL; /* a leading zero */
    } else {
        while (digit(f))
            f->p++;
    }
    if (f->p < f->end && *f->p == '.') {
        f->p++;
        if (!digit(f))
            return NULL;
        while (digit(f))
            f->p++;
        real = true;
    }
    if (f->p < f->end && (*f->p == 'e' || *f->p == 'E')) {
        f->p++;
        if (f->p < f->end && (*f->p == '+' || *f->p == '-'))
            f->p++;
        if (!digit(f))
            return NULL;
        while (digit(f))
            f->p++;
        real = true;
    }
    size_t n = (size_t)(f->p - s);
    char buf[64];
    if (n >= sizeof buf)
        return NULL;
    memcpy(buf, s, n);
    buf[n] = 0;
    if (!real) {
        if (n > (buf[0] == '-' ? 19u : 18u))
            return NULL;
        long long v = 0;
        for (const char *d = buf + (buf[0] == '-'); *d; d++)
            v = v * 10 + (*d - '0');
        return json_integer(buf[0] == '-' ? -v : v);
    }
    char *e;
    double v = vf__strtod(buf, &e);
    if (e != buf + n || !isfinite(v))
        return NULL;
    return json_real(v);
}

/* The byte c after white space: taken (true), or left where it is. */
static bool accept(struct fast *f, char c)
{
    skip_ws(f);
    if (f->p < f->end && *f->p == c) {
        f->p++;
        return true;
    }
    return false;
}

static json_t *object(struct fast *f)
{
    json_t *o = json_object();
    if (!o || accept(f, '}'))
        return o;
    do {
        size_t n;
        const char *k;
        char key[256];
        if (!accept(f, '"') || !(k = plain_string(f, &n)) || n >= sizeof key)
            break;
        memcpy(key, k, n);
        key[n] = 0;
        json_t *v = accept(f, ':') ? value(f) : NULL;
        if (!v)
            break;
        if (json_object_get(o, key)) { /* a key seen twice: jansson decides */
            json_decref(v);
            break;
        }
        if (json_object_set_new_nocheck(o, key, v)) /* it took v, even failing */
            break;
        if (accept(f, '}'))
            return o;
    } while (accept(f, ','));
    json_decref(o);
    return NULL;
}

static json_t *array(struct fast *f)
{
    json_t *a = json_array();
    if (!a || accept(f, ']'))
        return a;
    do {
        json_t *v = value(f);
        if (!v || json_array_append_new(a, v)) /* it took v, even failing */
            break;
        if (accept(f, ']'))
            return a;
    } while (accept(f, ','));
    json_decref(a);
    return NULL;
}

static bool word(struct fast *f, const char *w, size_t n)
{
    if ((size_t)(f->end - f->p) < n || memcmp(f->p, w, n))
        return false;
    f->p += n;
    return true;
}

static json_t *value(struct fast *f)
{
    skip_ws(f);
    if (f->p >= f->end)
        return NULL;
    char c = *f->p;
    if (c == '{' || c == '[') {
        if (++f->depth > FAST_DEPTH)
            return NULL;
        f->p++;
        json_t *v = c == '{' ? object(f) : array(f);
        f->depth--;
        return v;
    }
    if (c == '"') {
        size_t n;
        f->p++;
        const char *s = plain_string(f, &n);
        return s ? json_stringn_nocheck(s, n) : NULL;
    }
    if (c == '-' || (c >= '0' && c <= '9'))
        return number(f);
    if (word(f, "true", 4))
        return json_true();
    if (word(f, "false", 5))
        return json_false();
    if (word(f, "null", 4))
        return json_null();
    return NULL;
}

json_t *vf__json_loadb(const char *s, size_t n, size_t flags, json_error_t *je)
{
    if (s && (flags & ~(size_t)JSON_REJECT_DUPLICATES) == 0) {
        struct fast f = {.p = s, .end = s + n};
        skip_ws(&f);
        json_t *root = f.p < f.end && (*f.p == '{' || *f.p == '[') ? value(&f) : NULL;
        if (root) {
            skip_ws(&f);
            if (f.p == f.end)
                return root;
            json_decref(root);
        }
    }
    return json_loadb(s, n, flags, je);
}
