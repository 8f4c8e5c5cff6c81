/* SPDX-License-Identifier: Apache-2.0 */
/*
 * render_json.h - the JSON building blocks every JSON renderer shares (render_json.c,
 * render_explain.c, json_out.c), so all documents print unknowns, bytes and prices the same
 * way.
 */
#ifndef VRAMFIT_RENDER_JSON_H
#define VRAMFIT_RENDER_JSON_H

#include "internal.h"

#include <jansson.h>

/* A byte count or count: an integer, or null for VF_UNKNOWN. */
json_t *vf__json_bytes(uint64_t v);
/* Micro-units as a decimal price, or null for VF_UNKNOWN. */
json_t *vf__json_price(uint64_t micro);
/* A string of any bytes, always valid UTF-8: bytes that are not become U+FFFD (jansson's
 * json_string() would return NULL, and json_object_set_new() drop the key); NULL for NULL or
 * when memory runs out. Every string of a document goes through this or vf__json_str. */
json_t *vf__json_text(const char *s);
/* One offer of the catalog: count, price_per_hour, currency, billing, kind, as_of, provider,
 * source (catalog gpus --json; catalog prices --json adds gpu and from). */
struct vf_offer;
json_t *vf__json_offer(const struct vf_offer *of);
/* The same, or null for NULL. */
json_t *vf__json_str(const char *s);
/* An array of the n strings of s, each as vf__json_text makes it. */
json_t *vf__json_texts(const char *const *s, size_t n);
/* ---- json_out.c: the text of every document, one format ---- */

/* s (n bytes) as well-formed UTF-8: s itself when it is, else a repaired copy in *buf (the
 * caller frees it with vf__free) with its length in *out_n; NULL when memory runs out. */
const char *vf__utf8_repair(const char *s, size_t n, char **buf, size_t *out_n);
/* A real and a string (quoted, escaped) as every document writes them. */
void vf__json_put_real(struct vf__sb *b, double v);
void vf__json_put_string(struct vf__sb *b, const char *s, size_t n);
/* Dumps root (indented, reals at 10 significant digits) into arena a with a final newline,
 * and frees root; NULL when memory runs out, now or while root was built (a value jansson
 * could not allocate is missing from it: vf__json_oom). */
char *vf__json_finish(struct vf_arena *a, json_t *root);

/* The streaming writer: the same text as building a jansson tree and vf__json_finish, with
 * no tree. Each call writes one member: `key` inside an object, NULL inside an array. */
#define VF__JW_DEPTH 16
struct vf__jw {
    struct vf__sb sb;
    int depth;
    size_t count[VF__JW_DEPTH]; /* members written in each open container */
    char close[VF__JW_DEPTH];   /* '}' or ']' */
};
void vf__jw_init(struct vf__jw *j, struct vf_arena *a);
/* A member's key. A literal (what the compiler sees as a constant) comes with its length and is
 * written as it is: our keys are plain ASCII names (t_json compares the documents with
 * jansson's). Any other key has n = VF__JK_CHECK and is measured and escaped as needed. Half of
 * /api/v1/pick was the writer, a fifth of it measuring and checking the same keys (issue 15). */
struct vf__jk {
    const char *s;
    size_t n;
};
#define VF__JK_CHECK ((size_t)-1)
static inline size_t vf__jk_len(const char *k, int literal)
{
    return literal && k ? __builtin_strlen(k) : VF__JK_CHECK;
}
#define VF__JK(k) ((struct vf__jk){(k), vf__jk_len((k), __builtin_constant_p(k))})
void vf__jw_open_k(struct vf__jw *j, struct vf__jk key, char bracket); /* '{' or '[' */
void vf__jw_close(struct vf__jw *j);
/* s through vf__utf8_repair; a NULL s writes nothing (the member is left out). */
void vf__jw_text_k(struct vf__jw *j, struct vf__jk key, const char *s);
/* The same, null for NULL. */
void vf__jw_str_k(struct vf__jw *j, struct vf__jk key, const char *s);
/* An array of the n strings of s (NULL ones left out). */
void vf__jw_texts_k(struct vf__jw *j, struct vf__jk key, const char *const *s, size_t n);
void vf__jw_int_k(struct vf__jw *j, struct vf__jk key, int64_t v);
/* A count or byte count, null for VF_UNKNOWN. */
void vf__jw_bytes_k(struct vf__jw *j, struct vf__jk key, uint64_t v);
void vf__jw_real_k(struct vf__jw *j, struct vf__jk key, double v);
/* Micro-units as a decimal price, null for VF_UNKNOWN. */
void vf__jw_price_k(struct vf__jw *j, struct vf__jk key, uint64_t micro);
void vf__jw_bool_k(struct vf__jw *j, struct vf__jk key, bool v);
void vf__jw_null_k(struct vf__jw *j, struct vf__jk key);
#define vf__jw_open(j, k, b)     vf__jw_open_k((j), VF__JK(k), (b))
#define vf__jw_text(j, k, s)     vf__jw_text_k((j), VF__JK(k), (s))
#define vf__jw_str(j, k, s)      vf__jw_str_k((j), VF__JK(k), (s))
#define vf__jw_texts(j, k, s, n) vf__jw_texts_k((j), VF__JK(k), (s), (n))
#define vf__jw_int(j, k, v)      vf__jw_int_k((j), VF__JK(k), (v))
#define vf__jw_bytes(j, k, v)    vf__jw_bytes_k((j), VF__JK(k), (v))
#define vf__jw_real(j, k, v)     vf__jw_real_k((j), VF__JK(k), (v))
#define vf__jw_price(j, k, v)    vf__jw_price_k((j), VF__JK(k), (v))
#define vf__jw_bool(j, k, v)     vf__jw_bool_k((j), VF__JK(k), (v))
#define vf__jw_null(j, k)        vf__jw_null_k((j), VF__JK(k))
/* The document with a final newline; NULL when memory ran out or a container is open. */
char *vf__jw_done(struct vf__jw *j);

/* issue 24 (render_speed.c): a job's speed, its cost and the fix-or-bigger-card choice. */
void vf__job_speed_jw(struct vf__jw *j, const char *key, const struct vf_job_speed *s);
void vf__job_cost_jw(struct vf__jw *j, const char *key, const struct vf_job_speed *s);
void vf__choice_jw(struct vf__jw *j, const struct vf_speed_choice *c);
void vf__job_speed_text(struct vf__sb *s, const struct vf_fit *f, bool ascii);
/* "; runs with --offload lowvram: about 1.53x slower than if it fit, 47.4 s per image, EUR
 * 0.0078 per image" for a short card of pick --rank cost (issue 24), nothing without one. */
void vf__offload_offer_text(struct vf__sb *s, const struct vf_pick_row *r, bool ascii);

#endif
