/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sb.c - the string builder of every renderer: printf-style appends into a buffer that
 * grows in an arena (doubling, so n appends cost O(total) copies).
 */
#include "internal.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

void vf__sb_init(struct vf__sb *b, struct vf_arena *a)
{
    memset(b, 0, sizeof *b);
    b->a = a;
}

/* Room for n more bytes and a terminator; false (and failed) when memory runs out. */
static bool reserve(struct vf__sb *b, size_t n)
{
    if (b->failed)
        return false;
    if (b->p && b->len + n + 1 <= b->cap)
        return true;
    size_t cap = b->cap ? b->cap : 1024;
    while (cap < b->len + n + 1) {
        if (cap > SIZE_MAX / 2) {
            b->failed = true;
            return false;
        }
        cap *= 2;
    }
    char *np = vf__arena_take(b->a, cap);
    if (!np) {
        b->failed = true;
        return false;
    }
    if (b->len)
        memcpy(np, b->p, b->len);
    b->p = np;
    b->cap = cap;
    return true;
}

/* One conversion of the formats the renderers use most: an optional '-', a width (not starting
 * with 0: zero padding is vsnprintf's), an optional z, l or ll, then s, c, d or u. */
struct spec {
    bool left;
    unsigned width;
    char len; /* 0, 'z', 'l' or 'L' (ll) */
    char conv;
};

/* Reads the conversion after a '%' at f into *sp; the text after it, or NULL when it is
 * something else (precision, other flags, floating point, ...). */
static const char *read_spec(const char *f, struct spec *sp)
{
    sp->left = *f == '-';
    f += sp->left;
    if (*f == '0') /* zero padding ("%02u") is vsnprintf's */
        return NULL;
    sp->width = 0;
    for (; *f >= '0' && *f <= '9' && sp->width < 1000; f++)
        sp->width = sp->width * 10 + (unsigned)(*f - '0');
    sp->len = 0;
    if (*f == 'z' || *f == 'l') {
        sp->len = f[0] == 'l' && f[1] == 'l' ? 'L' : f[0];
        f += sp->len == 'L' ? 2 : 1;
    }
    sp->conv = *f;
    if ((*f == 'd' || *f == 'u') || (!sp->len && (*f == 's' || *f == 'c')))
        return f + 1;
    return NULL;
}

/* Whether every conversion of fmt is one read_spec reads (or "%%"). */
static bool simple_format(const char *fmt)
{
    struct spec sp;
    for (const char *f = fmt; (f = strchr(f, '%'));)
        if (f[1] == '%')
            f += 2;
        else if (!(f = read_spec(f + 1, &sp)))
            return false;
    return true;
}

static void put_padded(struct vf__sb *b, const struct spec *sp, const char *s, size_t n)
{
    size_t pad = sp->width > n ? sp->width - n : 0;
    if (!reserve(b, n + pad))
        return;
    if (!sp->left)
        for (; pad; pad--)
            b->p[b->len++] = ' ';
    memcpy(b->p + b->len, s, n);
    b->len += n;
    for (; pad; pad--)
        b->p[b->len++] = ' ';
    b->p[b->len] = 0;
}

/* One integer conversion: its argument read at the width sp names, in decimal. */
static void put_int(struct vf__sb *b, const struct spec *sp, va_list *ap)
{
    char buf[24], *e = buf + sizeof buf, *q = e;
    uint64_t u;
    bool neg = false;
    if (sp->conv == 'd') {
        int64_t v = sp->len == 'z'   ? (int64_t)va_arg(*ap, ptrdiff_t)
                    : sp->len == 'l' ? (int64_t)va_arg(*ap, long)
                    : sp->len == 'L' ? (int64_t)va_arg(*ap, long long)
                                     : (int64_t)va_arg(*ap, int);
        neg = v < 0;
        u = neg ? 0 - (uint64_t)v : (uint64_t)v;
    } else {
        u = sp->len == 'z'   ? (uint64_t)va_arg(*ap, size_t)
            : sp->len == 'l' ? (uint64_t)va_arg(*ap, unsigned long)
            : sp->len == 'L' ? (uint64_t)va_arg(*ap, unsigned long long)
                             : (uint64_t)va_arg(*ap, unsigned);
    }
    do
        *--q = (char)('0' + u % 10);
    while (u /= 10);
    if (neg)
        *--q = '-';
    put_padded(b, sp, q, (size_t)(e - q));
}

/* vsnprintf's output for the formats simple_format accepts, without vsnprintf. */
static void simple_printf(struct vf__sb *b, const char *fmt, va_list ap)
{
    va_list aq;
    va_copy(aq, ap);
    for (const char *f = fmt; *f && !b->failed;) {
        const char *pc = strchr(f, '%');
        size_t lit = pc ? (size_t)(pc - f) : strlen(f);
        vf__sb_putn(b, f, lit);
        if (!pc)
            break;
        if (pc[1] == '%') {
            vf__sb_putc(b, '%');
            f = pc + 2;
            continue;
        }
        struct spec sp;
        f = read_spec(pc + 1, &sp);
        if (sp.conv == 's') {
            const char *s = va_arg(aq, const char *);
            if (!s)
                s = "(null)"; /* as glibc prints it */
            put_padded(b, &sp, s, strlen(s));
        } else if (sp.conv == 'c') {
            char c = (char)va_arg(aq, int);
            put_padded(b, &sp, &c, 1);
        } else {
            put_int(b, &sp, &aq);
        }
    }
    va_end(aq);
}

void vf__sb_vprintf(struct vf__sb *b, const char *fmt, va_list ap)
{
    if (b->failed)
        return;
    if (simple_format(fmt)) {
        simple_printf(b, fmt, ap);
        return;
    }
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? b->cap - b->len : 0, fmt, ap);
    if (n >= 0 && (!b->p || b->len + (size_t)n + 1 > b->cap) && reserve(b, (size_t)n))
        vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap2);
    va_end(ap2);
    if (n < 0)
        b->failed = true;
    if (!b->failed)
        b->len += (size_t)n;
}

void vf__sb_putn_slow(struct vf__sb *b, const char *s, size_t n)
{
    if (!reserve(b, n))
        return;
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = 0;
}

void vf__sb_puts(struct vf__sb *b, const char *s)
{
    vf__sb_putn(b, s, strlen(s));
}

void vf__sb_printf(struct vf__sb *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vf__sb_vprintf(b, fmt, ap);
    va_end(ap);
}

char *vf__sb_done(struct vf__sb *b)
{
    if (b->failed)
        return NULL;
    return b->p ? b->p : vf_arena_strdup(b->a, "");
}
