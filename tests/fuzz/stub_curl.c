/* SPDX-License-Identifier: Apache-2.0 */
/*
 * stub_curl.c - a stand-in libcurl for fuzz_hub: the ten calls hub.c loads with dlopen, where
 * curl_easy_perform() answers from a script instead of the network. stub_curl_script() sets the
 * script: answers separated by the byte 0x1e, each "STATUS-LINE\nHEADER\n...\n\nBODY" as a
 * server sends it (the status line and each header line go to the header callback, the body to
 * the write callback in two pieces). An empty answer, or none left, is a failed connection.
 */
#define CURL_DISABLE_TYPECHECK
#include <curl/curl.h>

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define SEP 0x1e

typedef size_t (*callback)(char *data, size_t size, size_t nmemb, void *ud);

static struct {
    const char *p, *end; /* the script left */
    callback on_body, on_header;
    void *body_ud, *header_ud;
    long status;
} st;

static int easy; /* the one handle */

void stub_curl_script(const char *data, size_t len);
void stub_curl_script(const char *data, size_t len)
{
    st.p = data;
    st.end = data + len;
}

CURLcode curl_global_init(long flags)
{
    (void)flags;
    return CURLE_OK;
}

CURL *curl_easy_init(void)
{
    return &easy;
}

void curl_easy_reset(CURL *c)
{
    (void)c;
    st.on_body = st.on_header = NULL;
    st.body_ud = st.header_ud = NULL;
}

void curl_easy_cleanup(CURL *c)
{
    (void)c;
}

/* Options below 10000 take a long, below 20000 an object pointer, below 30000 a function. */
CURLcode curl_easy_setopt(CURL *c, CURLoption opt, ...)
{
    (void)c;
    va_list ap;
    va_start(ap, opt);
    if (opt == CURLOPT_WRITEFUNCTION)
        st.on_body = va_arg(ap, callback);
    else if (opt == CURLOPT_HEADERFUNCTION)
        st.on_header = va_arg(ap, callback);
    else if (opt == CURLOPT_WRITEDATA)
        st.body_ud = va_arg(ap, void *);
    else if (opt == CURLOPT_HEADERDATA)
        st.header_ud = va_arg(ap, void *);
    else if (opt < 10000)
        (void)va_arg(ap, long);
    else
        (void)va_arg(ap, void *);
    va_end(ap);
    return CURLE_OK;
}

/* Hands n bytes at p to a callback; false when it took fewer (an abort). */
static int give(callback cb, void *ud, const char *p, size_t n)
{
    char *copy = malloc(n ? n : 1); /* the callback sees exactly n bytes, as from curl */
    if (!copy)
        return 0;
    memcpy(copy, p, n);
    size_t took = cb(copy, 1, n, ud);
    free(copy);
    return took == n;
}

CURLcode curl_easy_perform(CURL *c)
{
    (void)c;
    st.status = 0;
    if (!st.p || st.p >= st.end)
        return CURLE_COULDNT_CONNECT;
    const char *sep = memchr(st.p, SEP, (size_t)(st.end - st.p));
    const char *p = st.p, *end = sep ? sep : st.end;
    st.p = sep ? sep + 1 : st.end;
    if (p == end)
        return CURLE_COULDNT_CONNECT;
    /* "HTTP/1.1 206 Partial Content": the status after the first space */
    const char *sp = memchr(p, ' ', (size_t)(end - p));
    for (const char *d = sp ? sp + 1 : end; d < end && *d >= '0' && *d <= '9' && st.status < 1000;
         d++)
        st.status = st.status * 10 + (*d - '0');
    while (p < end) { /* header lines up to an empty one */
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);
        if (n == 1 || (n == 2 && p[0] == '\r')) {
            p += n;
            break;
        }
        if (st.on_header && !give(st.on_header, st.header_ud, p, n))
            return CURLE_WRITE_ERROR;
        p += n;
    }
    size_t body = (size_t)(end - p), half = body / 2;
    if (st.on_body && body &&
        (!give(st.on_body, st.body_ud, p, half) ||
         !give(st.on_body, st.body_ud, p + half, body - half)))
        return CURLE_WRITE_ERROR;
    return CURLE_OK;
}

CURLcode curl_easy_getinfo(CURL *c, CURLINFO info, ...)
{
    (void)c;
    va_list ap;
    va_start(ap, info);
    if (info == CURLINFO_RESPONSE_CODE)
        *va_arg(ap, long *) = st.status;
    va_end(ap);
    return CURLE_OK;
}

const char *curl_easy_strerror(CURLcode cc)
{
    return cc == CURLE_WRITE_ERROR ? "write error" : "could not connect (stub)";
}

struct curl_slist *curl_slist_append(struct curl_slist *l, const char *s)
{
    struct curl_slist *n = malloc(sizeof *n);
    if (!n)
        return NULL;
    n->data = strdup(s);
    n->next = NULL;
    if (!l)
        return n;
    struct curl_slist *t = l;
    while (t->next)
        t = t->next;
    t->next = n;
    return l;
}

void curl_slist_free_all(struct curl_slist *l)
{
    while (l) {
        struct curl_slist *n = l->next;
        free(l->data);
        free(l);
        l = n;
    }
}
