/*
 * sb.c - the string builder of every renderer: printf-style appends into a buffer that
 * grows in an arena (doubling, so n appends cost O(total) copies).
 */
#include "internal.h"

#include <stdio.h>
#include <string.h>

void vf__sb_init(struct vf__sb *b, struct vf_arena *a)
{
    memset(b, 0, sizeof *b);
    b->a = a;
}

void vf__sb_vprintf(struct vf__sb *b, const char *fmt, va_list ap)
{
    if (b->failed)
        return;
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? b->cap - b->len : 0, fmt, ap);
    if (n < 0) {
        b->failed = true;
        va_end(ap2);
        return;
    }
    if (!b->p || b->len + (size_t)n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        while (cap < b->len + (size_t)n + 1)
            cap *= 2;
        char *np = vf_arena_alloc(b->a, cap);
        if (!np) {
            b->failed = true;
            va_end(ap2);
            return;
        }
        if (b->len)
            memcpy(np, b->p, b->len);
        b->p = np;
        b->cap = cap;
        vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap2);
    }
    va_end(ap2);
    b->len += (size_t)n;
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
