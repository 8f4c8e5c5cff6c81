/* SPDX-License-Identifier: Apache-2.0 */
/*
 * render_prices.c - `vramfit catalog prices [--json]`: every offer of the catalog with where it
 * comes from, the built-in prices.tsv or a --data-dir's one that overlays it (issue 26).
 */
#include "internal.h"
#include "render_json.h"

#include <jansson.h>
#include <string.h>

char *vf_render_prices_text(struct vf_arena *a, const struct vf_catalog *c)
{
    struct vf__sb b = {.a = a};
    vf__sb_printf(&b, "%-22s %5s %14s %-7s %-18s %-16s %-8s %s\n", "card", "cards", "per hour",
                  "billing", "kind", "provider", "as of", "from");
    for (size_t i = 0; i < c->n_offers; i++) {
        const struct vf_offer *o = &c->offers[i];
        char price[48];
        vf_format_price(price, sizeof price, o->price_micro, 2);
        vf__sb_printf(&b, "%-22s %5u %10s %s %-7s %-18s %-16s %-8s %s\n", o->gpu_id, o->count,
                      price, o->currency, o->billing, o->kind, o->provider, o->as_of,
                      o->origin ? o->origin : "built-in");
    }
    vf__sb_printf(&b, "%zu offers\n", c->n_offers);
    return vf__sb_done(&b);
}

char *vf_render_prices_json(struct vf_arena *a, const struct vf_catalog *c)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < c->n_offers; i++) {
        const struct vf_offer *of = &c->offers[i];
        json_t *x = vf__json_offer(of);
        json_object_set_new(x, "gpu", vf__json_text(of->gpu_id));
        json_object_set_new(x, "from", vf__json_text(of->origin ? of->origin : "built-in"));
        json_array_append_new(arr, x);
    }
    json_t *root = json_object();
    json_object_set_new(root, "offers", arr);
    return vf__json_finish(a, root);
}
