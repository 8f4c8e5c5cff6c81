/*
 * render_json.h - the JSON building blocks every JSON renderer shares (render_json.c,
 * render_explain.c), so all documents print unknowns, bytes and prices the same way.
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
/* The same, or null for NULL. */
json_t *vf__json_str(const char *s);
/* An array of the n strings of s, each as vf__json_text makes it. */
json_t *vf__json_texts(const char *const *s, size_t n);
/* Dumps root (indented, reals at 10 significant digits) into arena a with a final newline,
 * and frees root; NULL when memory runs out, now or while root was built (a value jansson
 * could not allocate is missing from it: vf__json_oom). */
char *vf__json_finish(struct vf_arena *a, json_t *root);

#endif
