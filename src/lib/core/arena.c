/* SPDX-License-Identifier: Apache-2.0 */
/*
 * arena.c - the allocator hook and the arena. Every byte the library allocates comes
 * through vf__malloc/vf__realloc/vf__free, which call the hook set by vf_set_allocator(),
 * so tests can fail the n-th allocation; so do jansson's (JSON parsed and rendered for us). An
 * arena hands out zeroed chunks from blocks and frees them all at once; it refuses to grow past its
 * limit instead of exhausting memory.
 */
#include "internal.h"

#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *std_malloc(size_t n, void *ud)
{
    (void)ud;
    return malloc(n);
}
static void *std_realloc(void *p, size_t n, void *ud)
{
    (void)ud;
    return realloc(p, n);
}
static void std_free(void *p, void *ud)
{
    (void)ud;
    free(p);
}

static struct vf_allocator hook = {std_malloc, std_realloc, std_free, NULL};

/* jansson's allocations are the library's too: they go through the hook, and a failure is
 * noted for this thread, because jansson answers it by leaving a value out (json_object_set_new
 * with NULL drops the key) and a document would come out short without a word. */
static _Thread_local bool json_oom;

static void *json_malloc(size_t n)
{
    void *p = hook.malloc(n ? n : 1, hook.ud);
    if (!p)
        json_oom = true;
    return p;
}
static void json_free(void *p)
{
    if (p)
        hook.free(p, hook.ud);
}
static void json_hook(void)
{
    json_set_alloc_funcs(json_malloc, json_free);
}
static pthread_once_t json_once = PTHREAD_ONCE_INIT;

bool vf__json_oom(void)
{
    bool failed = json_oom;
    json_oom = false;
    return failed;
}

bool vf__json_nomem(const struct json_error_t *je)
{
    return vf__json_oom() || json_error_code(je) == json_error_out_of_memory;
}

void vf_set_allocator(const struct vf_allocator *a)
{
    if (a)
        hook = *a;
    else
        hook = (struct vf_allocator){std_malloc, std_realloc, std_free, NULL};
    pthread_once(&json_once, json_hook);
}

void *vf__malloc(size_t n)
{
    return hook.malloc(n ? n : 1, hook.ud);
}
void *vf__realloc(void *p, size_t n)
{
    return hook.realloc(p, n ? n : 1, hook.ud);
}
void vf__free(void *p)
{
    if (p)
        hook.free(p, hook.ud);
}

/* ------------------------------------------------------------------ arena */

#define BLOCK_MIN ((size_t)64 << 10)
#define ALIGN     16

struct block {
    struct block *next;
    size_t cap, used;
    /* data follows, aligned */
};

struct vf_arena {
    struct block *head;
    size_t limit, total;
};

static size_t hdr_size(void)
{
    return (sizeof(struct block) + ALIGN - 1) & ~(size_t)(ALIGN - 1);
}

struct vf_arena *vf_arena_open(size_t limit_bytes)
{
    pthread_once(&json_once,
                 json_hook); /* before the first JSON value: every caller has an arena */
    struct vf_arena *a = vf__malloc(sizeof *a);
    if (!a)
        return NULL;
    a->head = NULL;
    a->limit = limit_bytes ? limit_bytes : VF_ARENA_DEFAULT_LIMIT;
    a->total = 0;
    return a;
}

void vf_arena_close(struct vf_arena *a)
{
    if (!a)
        return;
    struct block *b = a->head;
    while (b) {
        struct block *next = b->next;
        vf__free(b);
        b = next;
    }
    vf__free(a);
}

void *vf__arena_take(struct vf_arena *a, size_t n)
{
    if (!a)
        return NULL;
    size_t need = (n + ALIGN - 1) & ~(size_t)(ALIGN - 1);
    if (need < n || need > a->limit)
        return NULL;
    struct block *b = a->head;
    if (!b || b->cap - b->used < need) {
        size_t cap = need > BLOCK_MIN ? need : BLOCK_MIN;
        if (a->total + cap > a->limit) {
            if (a->total + need > a->limit)
                return NULL;
            cap = need;
        }
        b = vf__malloc(hdr_size() + cap);
        if (!b)
            return NULL;
        b->cap = cap;
        b->used = 0;
        b->next = a->head;
        a->head = b;
        a->total += cap;
    }
    unsigned char *p = (unsigned char *)b + hdr_size() + b->used;
    b->used += need;
    return p;
}

void *vf_arena_alloc(struct vf_arena *a, size_t n)
{
    void *p = vf__arena_take(a, n);
    if (p)
        memset(p, 0, n);
    return p;
}

char *vf_arena_strndup(struct vf_arena *a, const char *s, size_t n)
{
    char *p = n + 1 ? vf__arena_take(a, n + 1) : NULL;
    if (!p)
        return NULL;
    memcpy(p, s, n);
    p[n] = 0;
    return p;
}

char *vf_arena_strdup(struct vf_arena *a, const char *s)
{
    return s ? vf_arena_strndup(a, s, strlen(s)) : NULL;
}

char *vf__arena_vprintf(struct vf_arena *a, const char *fmt, va_list ap)
{
    /* one pass through a stack buffer when the text fits it (most do), else a second one */
    char buf[256];
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(buf, sizeof buf, fmt, ap2);
    va_end(ap2);
    if (n < 0)
        return NULL;
    char *p = vf__arena_take(a, (size_t)n + 1);
    if (!p)
        return NULL;
    if ((size_t)n < sizeof buf)
        memcpy(p, buf, (size_t)n + 1);
    else
        vsnprintf(p, (size_t)n + 1, fmt, ap);
    return p;
}

char *vf_arena_printf(struct vf_arena *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *p = vf__arena_vprintf(a, fmt, ap);
    va_end(ap);
    return p;
}
