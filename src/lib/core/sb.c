/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sb.c - the string builder of every renderer: printf-style appends into a buffer that
 * grows in an arena (doubling, so n appends cost O(total) copies).
 */
#include "internal.h"

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

void vf__sb_vprintf(struct vf__sb *b, const char *fmt, va_list ap)
{
    if (b->failed)
        return;
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
