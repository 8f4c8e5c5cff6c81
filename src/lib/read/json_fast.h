/* SPDX-License-Identifier: Apache-2.0 */
/*
 * json_fast.h - the JSON texts vramfit reads on every command (the catalog's model configs and
 * pipeline files) into jansson trees without jansson's lexer, which was a fifth of a catalog
 * estimate's instructions (116 k for the 626 bytes of llama-3.1-8b's config: issue 15).
 * Private to the library.
 */
#ifndef VRAMFIT_JSON_FAST_H
#define VRAMFIT_JSON_FAST_H

#include <jansson.h>
#include <stddef.h>

/* As json_loadb(s, n, flags, je): the same tree, the same errors. The common shape (an object
 * or array of ASCII strings without escapes, numbers, true, false, null; nothing duplicated,
 * 64 levels at most) is read here; any other text, or any doubt, goes to json_loadb whole,
 * whose tree and messages are the reference (t_json compares the two). */
json_t *vf__json_loadb(const char *s, size_t n, size_t flags, json_error_t *je);

#endif
