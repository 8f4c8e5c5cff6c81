/* SPDX-License-Identifier: Apache-2.0 */
/*
 * json_out.c - JSON text, one format for every document: what jansson's
 * json_dumps(JSON_INDENT(2) | JSON_REAL_PRECISION(10)) writes, byte for byte (t_json checks
 * it against jansson). Two ways in: vf__json_finish dumps a jansson tree (most documents),
 * and the streaming writer vf__jw_* writes a document as it goes, without building a tree
 * (estimate and pick, which the API serves most: issue 15). Strings go through
 * vf__utf8_repair either way.
 */
#include "render_json.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const char *vf__utf8_repair(const char *s, size_t n, char **buf, size_t *out_n)
{
    /* Well-formed UTF-8 (RFC 3629: no overlong forms, surrogates or code points past
     * U+10FFFF) is kept; each byte that does not start a well-formed sequence becomes U+FFFD
     * (one for each byte), so the document is valid JSON whatever the bytes (a path, a
     * command line or a catalog field with a stray byte). */
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    *buf = NULL;
    *out_n = n;
    while (i < n && p[i] < 0x80) /* the common case: ASCII, no copy */
        i++;
    if (i == n)
        return s;
    char *b = vf__malloc(n * 3 + 1); /* U+FFFD is 3 bytes for 1 */
    if (!b)
        return NULL;
    memcpy(b, s, i);
    size_t o = i;
    while (i < n) {
        unsigned c = p[i];
        size_t len = c < 0x80                 ? 1
                     : c >= 0xc2 && c <= 0xdf ? 2
                     : c >= 0xe0 && c <= 0xef ? 3
                     : c >= 0xf0 && c <= 0xf4 ? 4
                                              : 0;
        /* the second byte's range (Unicode Table 3-7), the others 80..BF */
        unsigned lo = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80;
        unsigned hi = c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : 0xbf;
        bool ok = len > 0 && i + len <= n;
        for (size_t k = 1; ok && k < len; k++)
            ok = k == 1 ? p[i + k] >= lo && p[i + k] <= hi : p[i + k] >= 0x80 && p[i + k] <= 0xbf;
        if (ok) {
            memcpy(b + o, p + i, len);
            o += len;
            i += len;
        } else {
            memcpy(b + o, "\xef\xbf\xbd", 3);
            o += 3;
            i++;
        }
    }
    *buf = b;
    *out_n = o;
    return b;
}

/* The five decimal digits of v < 100000 at d, two at a time from a table of pairs. */
static void five_digits(char *d, uint32_t v)
{
    static const char pairs[] = "00010203040506070809101112131415161718192021222324"
                                "25262728293031323334353637383940414243444546474849"
                                "50515253545556575859606162636465666768697071727374"
                                "75767778798081828384858687888990919293949596979899";
    d[0] = (char)('0' + v / 10000);
    v %= 10000;
    memcpy(d + 1, pairs + 2 * (v / 100), 2);
    memcpy(d + 3, pairs + 2 * (v % 100), 2);
}

/*
 * "%.10g" of v without printf, as jansson writes reals (".0" added to a value that reads as an
 * integer), for the reals our documents hold (prices, per-minute prices, tokens per second:
 * 1e-4 <= |v| < 1e10, where %g writes no exponent); 0 for the others.
 * The ten significant digits are v x 10^(9-X) rounded to an integer, X its decimal exponent:
 * 10^(9-X) is exact (X >= -4) and the product is rounded once in long double (64-bit
 * mantissa, error < 1e-9 at 1e10), so the integer is printf's unless the product lies within
 * 1e-3 of a half, where printf's exact decimal expansion decides: those go to snprintf, as do
 * a rounding that carries into an eleventh digit. Then %g's fixed form: 9-X decimals,
 * trailing zeros and a bare point dropped. For |v| >= 1, X is the largest x with |v| >= 10^x
 * (exact double comparisons; the product then rounds to at least 1e9, and below 10^x a double
 * stays more than 2^-53 under it, too far for a 64-bit rounding to reach 1e9). It was a
 * tenth of an /api/v1/pick (issue 15).
 */
static size_t fixed10(char *buf, double v)
{
    static const long double pow10[] = {1e0L, 1e1L, 1e2L, 1e3L,  1e4L,  1e5L,  1e6L,
                                        1e7L, 1e8L, 1e9L, 1e10L, 1e11L, 1e12L, 1e13L};
    static const double pow10d[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9};
    double ad = v < 0 ? -v : v;
    if (!(ad >= 1e-4 && ad < 1e10))
        return 0; /* zero, NaN, infinities, exponent forms */
    long double a = ad, t;
    int x; /* the decimal exponent X: the first scale that brings a to ten digits */
    if (ad >= 1) {
        for (x = 0; x < 9 && ad >= pow10d[x + 1];)
            x++;
        t = a * pow10[9 - x];
    } else {
        for (x = 9, t = a; t < 1e9L;)
            t = a * pow10[9 - --x];
    }
    uint64_t k = (uint64_t)t; /* t < 1e14: the integer part exactly */
    long double f = t - (long double)k;
    if (f > 0.499L && f < 0.501L)
        return 0;
    if (f >= 0.5L)
        k++;
    if (k >= 10000000000ULL)
        return 0;
    char digits[10];
    five_digits(digits, (uint32_t)(k / 100000));
    five_digits(digits + 5, (uint32_t)(k % 100000));
    size_t n = 0, last = 10; /* digits kept: trailing zeros of the fraction dropped */
    size_t whole = x >= 0 ? (size_t)x + 1 : 0;
    while (last > whole && digits[last - 1] == '0')
        last--;
    if (v < 0)
        buf[n++] = '-';
    if (x >= 0) {
        memcpy(buf + n, digits, whole);
        n += whole;
        buf[n++] = '.';
        if (last > whole) {
            memcpy(buf + n, digits + whole, last - whole);
            n += last - whole;
        } else {
            buf[n++] = '0'; /* jansson's ".0" on a value that reads as an integer */
        }
    } else {
        buf[n++] = '0';
        buf[n++] = '.';
        for (int z = -1; z > x; z--)
            buf[n++] = '0';
        memcpy(buf + n, digits, last);
        n += last;
    }
    return n;
}

/* A real as jansson prints it at JSON_REAL_PRECISION(10): "%.10g", ".0" added when that
 * reads as an integer, the exponent without '+' and leading zeros ("1e+20" -> "1e20"). */
void vf__json_put_real(struct vf__sb *b, double v)
{
    char buf[48];
    size_t fast = fixed10(buf, v);
    if (fast) {
        vf__sb_putn(b, buf, fast);
        return;
    }
    int n = snprintf(buf, sizeof buf - 3, "%.10g", v);
    if (n < 0 || (size_t)n >= sizeof buf - 3) {
        b->failed = true;
        return;
    }
    char *e = strchr(buf, 'e');
    if (!e && !strchr(buf, '.'))
        memcpy(buf + n, ".0", 3);
    if (e) {
        char *d = e + 1, *from = d;
        if (*from == '+')
            from++;
        else if (*from == '-')
            d = ++from;
        while (*from == '0' && from[1])
            from++;
        memmove(d, from, strlen(from) + 1);
    }
    vf__sb_puts(b, buf);
}

/* A string as jansson escapes it without flags: quote, backslash and the control
 * characters; every other byte as it is (vf__json_text made it valid UTF-8). */
/* Do any of the 8 bytes of x need an escape (below 0x20, '"', '\\')? Exact for "any" (the
 * bit tricks of "Bit Twiddling Hacks": haszero, hasless), eight bytes a step. */
static bool needs_escape8(uint64_t x)
{
    const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
    uint64_t quote = x ^ (ones * '"'), bslash = x ^ (ones * '\\');
    uint64_t low = (x - ones * 0x20) & ~x;
    return ((low | ((quote - ones) & ~quote) | ((bslash - ones) & ~bslash)) & highs) != 0;
}

/* Printable ASCII with nothing to escape: written between quotes as it is, without
 * vf__utf8_repair or the escape loop (most keys and values of our documents). */
static bool plain8(uint64_t x)
{
    return !(x & 0x8080808080808080ULL) && !needs_escape8(x);
}

static bool plain_ascii(const char *s, size_t n)
{
    uint64_t x = 0x2020202020202020ULL; /* a short string is padded with spaces */
    if (n < 8) {
        memcpy(&x, s, n);
        return plain8(x);
    }
    for (size_t i = 0; i + 8 <= n; i += 8) {
        memcpy(&x, s + i, 8);
        if (!plain8(x))
            return false;
    }
    memcpy(&x, s + n - 8, 8); /* the last 8 bytes, overlapping the steps before */
    return plain8(x);
}

static void put_plain(struct vf__sb *b, const char *s, size_t n)
{
    vf__sb_putc(b, '"');
    vf__sb_putn(b, s, n);
    vf__sb_putc(b, '"');
}

void vf__json_put_string(struct vf__sb *b, const char *s, size_t n)
{
    vf__sb_putc(b, '"');
    size_t run = 0; /* bytes that need no escape, written at once */
    for (size_t i = 0; i < n; i++) {
        uint64_t x;
        while (n - i >= 8 && (memcpy(&x, s + i, 8), !needs_escape8(x)))
            i += 8; /* a plain stretch (issue 15: a tenth of /api/v1/pick went byte by byte) */
        if (i >= n)
            break;
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        vf__sb_putn(b, s + run, i - run);
        run = i + 1;
        switch (c) {
        case '"':
            vf__sb_puts(b, "\\\"");
            break;
        case '\\':
            vf__sb_puts(b, "\\\\");
            break;
        case '\b':
            vf__sb_puts(b, "\\b");
            break;
        case '\f':
            vf__sb_puts(b, "\\f");
            break;
        case '\n':
            vf__sb_puts(b, "\\n");
            break;
        case '\r':
            vf__sb_puts(b, "\\r");
            break;
        case '\t':
            vf__sb_puts(b, "\\t");
            break;
        default:
            vf__sb_printf(b, "\\u%04X", c);
            break;
        }
    }
    vf__sb_putn(b, s + run, n - run);
    vf__sb_putc(b, '"');
}

/* A comma, a newline and 2 x 24 spaces: a member's lead-in up to depth 24 in one copy. */
static const char lead[] = ",\n                                                ";
#define LEAD_DEPTH ((sizeof lead - 3) / 2)

static void newline(struct vf__sb *b, int depth)
{
    if ((size_t)depth <= LEAD_DEPTH) {
        vf__sb_putn(b, lead + 1, 1 + 2 * (size_t)depth);
        return;
    }
    vf__sb_putc(b, '\n');
    for (size_t left = 2 * (size_t)depth, n; left; left -= n) {
        n = left < sizeof lead - 3 ? left : sizeof lead - 3;
        vf__sb_putn(b, lead + 2, n);
    }
}

/* j as json_dumps(j, DUMP_FLAGS) writes it (byte for byte: t_json checks), without its
 * buffers: objects in insertion order, two spaces of indent, ": " after keys. */
static void dump(struct vf__sb *b, const json_t *j, int depth)
{
    switch (json_typeof(j)) {
    case JSON_OBJECT: {
        const char *key;
        const json_t *v;
        if (!json_object_size(j)) {
            vf__sb_puts(b, "{}");
            break;
        }
        vf__sb_putc(b, '{');
        bool first = true;
        json_object_foreach((json_t *)j, key, v)
        {
            if (!first)
                vf__sb_putc(b, ',');
            first = false;
            newline(b, depth + 1);
            vf__json_put_string(b, key, strlen(key));
            vf__sb_puts(b, ": ");
            dump(b, v, depth + 1);
        }
        newline(b, depth);
        vf__sb_putc(b, '}');
        break;
    }
    case JSON_ARRAY: {
        size_t n = json_array_size(j);
        if (!n) {
            vf__sb_puts(b, "[]");
            break;
        }
        vf__sb_putc(b, '[');
        for (size_t i = 0; i < n; i++) {
            if (i)
                vf__sb_putc(b, ',');
            newline(b, depth + 1);
            dump(b, json_array_get(j, i), depth + 1);
        }
        newline(b, depth);
        vf__sb_putc(b, ']');
        break;
    }
    case JSON_STRING:
        vf__json_put_string(b, json_string_value(j), json_string_length(j));
        break;
    case JSON_INTEGER:
        vf__sb_printf(b, "%" JSON_INTEGER_FORMAT, json_integer_value(j));
        break;
    case JSON_REAL:
        vf__json_put_real(b, json_real_value(j));
        break;
    case JSON_TRUE:
        vf__sb_puts(b, "true");
        break;
    case JSON_FALSE:
        vf__sb_puts(b, "false");
        break;
    case JSON_NULL:
        vf__sb_puts(b, "null");
        break;
    }
}

/* The document root, dumped into arena a with a final newline; root is freed. */
char *vf__json_finish(struct vf_arena *a, json_t *root)
{
    if (!root)
        return NULL;
    struct vf__sb b;
    vf__sb_init(&b, a);
    dump(&b, root, 0);
    vf__sb_putc(&b, '\n');
    json_decref(root);
    /* a value jansson could not allocate was left out of root: the document is short */
    if (vf__json_oom())
        return NULL;
    return vf__sb_done(&b);
}

/* ------------------------------------------------------- the streaming writer */

void vf__jw_init(struct vf__jw *j, struct vf_arena *a)
{
    memset(j, 0, sizeof *j);
    vf__sb_init(&j->sb, a);
}

/* Bytes a string may hold and still be written as it is: printable ASCII but '"' and '\\'
 * (a table, so that the one-copy paths test a byte with one load). */
static const bool plain_byte[256] = {
    [' '] = 1,
    ['!'] = 1,
    ['#' ... '['] = 1,
    [']' ... 0x7f] = 1,
};

/* Up to QUICK bytes of a string written at p between quotes, when they are all plain and the
 * string ends within them: the end of what was written, else NULL (the caller's slow path).
 * The caller made room for QUICK + 2 bytes. */
#define QUICK 64
static char *quick_string(char *p, const char *s)
{
    *p++ = '"';
    for (size_t i = 0; i < QUICK; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!plain_byte[c]) {
            if (c)
                return NULL;
            p[i] = '"';
            return p + i + 1;
        }
        p[i] = (char)c;
    }
    return NULL;
}

/* The lead-in of a member (comma, newline, indent) and its key with ": " in one pass when it
 * fits the buffer and the key is a literal or plain: the end of what was written, else NULL
 * with nothing kept (issue 15: half of /api/v1/pick was this writer). */
static char *quick_member(struct vf__jw *j, struct vf__jk key, bool comma)
{
    struct vf__sb *b = &j->sb;
    size_t in = (comma ? 2 : 1) + 2 * (size_t)j->depth;
    size_t kn = key.n != VF__JK_CHECK ? key.n : QUICK;
    if ((size_t)j->depth > LEAD_DEPTH || !b->p || 32 + kn + 8 >= b->cap - b->len)
        return NULL;
    char *p = b->p + b->len;
    if (in <= 32)
        memcpy(p, lead + !comma, 32); /* a fixed size: two moves; what is past `in` is
                                       * written over next */
    else
        memcpy(p, lead + !comma, in);
    p += in;
    if (key.s && key.n != VF__JK_CHECK) {
        *p++ = '"';
        memcpy(p, key.s, key.n);
        p += key.n;
        *p++ = '"';
    } else if (key.s && !(p = quick_string(p, key.s))) {
        return NULL;
    }
    if (key.s) {
        *p++ = ':';
        *p++ = ' ';
    }
    return p;
}

/* Before a member: the comma and the newline of its place; the key when in an object. */
static void member(struct vf__jw *j, struct vf__jk key)
{
    struct vf__sb *b = &j->sb;
    if (j->depth > 0) {
        bool comma = j->count[j->depth - 1]++ != 0;
        char *p = quick_member(j, key, comma);
        if (p) {
            *p = 0;
            b->len = (size_t)(p - b->p);
            return;
        }
        if (comma)
            vf__sb_putc(b, ',');
        newline(b, j->depth);
    }
    if (key.s) {
        size_t n = key.n != VF__JK_CHECK ? key.n : strlen(key.s);
        if (key.n != VF__JK_CHECK || plain_ascii(key.s, n))
            put_plain(b, key.s, n);
        else
            vf__json_put_string(b, key.s, n);
        vf__sb_putn(b, ": ", 2);
    }
}

void vf__jw_open_k(struct vf__jw *j, struct vf__jk key, char bracket)
{
    member(j, key);
    vf__sb_putc(&j->sb, bracket);
    if (j->depth >= VF__JW_DEPTH) { /* deeper than any document of ours */
        j->sb.failed = true;
        return;
    }
    j->close[j->depth] = bracket == '{' ? '}' : ']';
    j->count[j->depth++] = 0;
}

void vf__jw_close(struct vf__jw *j)
{
    if (j->depth == 0) {
        j->sb.failed = true;
        return;
    }
    j->depth--;
    if (j->count[j->depth])
        newline(&j->sb, j->depth);
    vf__sb_putc(&j->sb, j->close[j->depth]);
}

void vf__jw_text_k(struct vf__jw *j, struct vf__jk key, const char *s)
{
    if (!s)
        return;
    member(j, key);
    struct vf__sb *b = &j->sb;
    if (b->p && QUICK + 2 < b->cap - b->len) {
        char *p = quick_string(b->p + b->len, s);
        if (p) {
            *p = 0;
            b->len = (size_t)(p - b->p);
            return;
        }
    }
    char *buf;
    size_t n = strlen(s);
    if (plain_ascii(s, n)) {
        put_plain(b, s, n);
        return;
    }
    const char *t = vf__utf8_repair(s, n, &buf, &n);
    if (t)
        vf__json_put_string(&j->sb, t, n);
    else
        j->sb.failed = true;
    vf__free(buf);
}

void vf__jw_str_k(struct vf__jw *j, struct vf__jk key, const char *s)
{
    if (s)
        vf__jw_text_k(j, key, s);
    else
        vf__jw_null_k(j, key);
}

void vf__jw_texts_k(struct vf__jw *j, struct vf__jk key, const char *const *s, size_t n)
{
    vf__jw_open_k(j, key, '[');
    for (size_t i = 0; i < n; i++)
        vf__jw_text(j, NULL, s[i]);
    vf__jw_close(j);
}

void vf__jw_int_k(struct vf__jw *j, struct vf__jk key, int64_t v)
{
    member(j, key);
    char buf[24], *p = buf + sizeof buf; /* the digits from the right, as %lld prints them */
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do
        *--p = (char)('0' + u % 10);
    while ((u /= 10));
    if (v < 0)
        *--p = '-';
    vf__sb_putn(&j->sb, p, (size_t)(buf + sizeof buf - p));
}

void vf__jw_bytes_k(struct vf__jw *j, struct vf__jk key, uint64_t v)
{
    if (v == VF_UNKNOWN)
        vf__jw_null_k(j, key);
    else
        vf__jw_int_k(j, key, (int64_t)v);
}

void vf__jw_real_k(struct vf__jw *j, struct vf__jk key, double v)
{
    member(j, key);
    vf__json_put_real(&j->sb, v);
}

void vf__jw_price_k(struct vf__jw *j, struct vf__jk key, uint64_t micro)
{
    if (micro == VF_UNKNOWN)
        vf__jw_null_k(j, key);
    else
        vf__jw_real_k(j, key, (double)micro / 1e6);
}

void vf__jw_bool_k(struct vf__jw *j, struct vf__jk key, bool v)
{
    member(j, key);
    vf__sb_puts(&j->sb, v ? "true" : "false");
}

void vf__jw_null_k(struct vf__jw *j, struct vf__jk key)
{
    member(j, key);
    vf__sb_puts(&j->sb, "null");
}

char *vf__jw_done(struct vf__jw *j)
{
    if (j->depth)
        j->sb.failed = true;
    vf__sb_putc(&j->sb, '\n');
    return vf__sb_done(&j->sb);
}
