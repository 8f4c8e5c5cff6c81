/*
 * catalog.c - the built-in data: GPUs (gpus.tsv), price offers (prices.tsv) and models
 * (models.tsv indexing models/NAME.json, trimmed HF config files). tools/embed.c compiles the
 * files into the binary; --data-dir / VRAMFIT_DATA_DIR loads the same files from disk instead.
 * Both paths go through the same readers (tsv.c, model_config.c) that read user files.
 */
#include "internal.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* --------------------------------------------------------------- file access */

static const struct vf__embedded_file *embedded(const char *name)
{
    for (size_t i = 0; i < vf__n_embedded_files; i++)
        if (!strcmp(vf__embedded_files[i].name, name))
            return &vf__embedded_files[i];
    return NULL;
}

const char *vf_catalog_file(struct vf_arena *a, const struct vf_catalog *c, const char *name,
                            size_t *len, struct vf_error *err)
{
    *len = 0;
    if (!c->data_dir) {
        const struct vf__embedded_file *f = embedded(name);
        if (!f) {
            vf__errf(err, VF_ENOENT, "catalog: no embedded file '%s'", name);
            return NULL;
        }
        *len = f->len;
        return (const char *)f->data;
    }
    char *path = vf_arena_printf(a, "%s/%s", c->data_dir, name);
    char *text = NULL;
    if (!path) {
        vf__errf(err, VF_ENOMEM, "catalog: out of memory");
        return NULL;
    }
    if (vf__read_file(a, path, VF_MAX_DATA_FILE_BYTES, &text, len, err))
        return NULL;
    return text;
}

/* ------------------------------------------------------------------ fields */

struct row_ctx {
    const struct vf__tsv *t;
    size_t row;
    struct vf_error *err;
};

static const char *field(const struct row_ctx *r, const char *col)
{
    int i = vf__tsv_col(r->t, col);
    return i < 0 ? NULL : r->t->rows[r->row][i];
}

static enum vf_err bad(const struct row_ctx *r, const char *col, const char *expected)
{
    const char *v = field(r, col);
    return vf__errf(r->err, VF_EFORMAT, "%s:%zu: column '%s' is '%s', expected %s", r->t->origin,
                    r->t->lines[r->row], col, v ? v : "", expected);
}

static enum vf_err need_cols(const struct vf__tsv *t, const char *const *cols, struct vf_error *err)
{
    for (size_t i = 0; cols[i]; i++)
        if (vf__tsv_col(t, cols[i]) < 0)
            return vf__errf(err, VF_EFORMAT, "%s: header has no column '%s'", t->origin, cols[i]);
    return VF_OK;
}

/* Reads catalog file `name` as a TSV table that must have the columns `cols`. */
static enum vf_err load_table(struct vf_catalog *c, const char *name, const char *const *cols,
                              struct vf__tsv *t, struct vf_error *err)
{
    size_t len;
    const char *text = vf_catalog_file(c->arena, c, name, &len, err);
    if (!text)
        return err ? err->code : VF_ENOENT;
    enum vf_err rc = vf__tsv_parse(c->arena, text, len, name, t, err);
    return rc ? rc : need_cols(t, cols, err);
}

static enum vf_err u64_field(const struct row_ctx *r, const char *col, bool unknown_ok,
                             uint64_t *out)
{
    const char *v = field(r, col);
    if (unknown_ok && (!strcmp(v, "?") || !*v)) {
        *out = VF_UNKNOWN;
        return VF_OK;
    }
    if (vf_parse_count(v, out, NULL))
        return bad(r, col, unknown_ok ? "a whole number or '?'" : "a whole number");
    return VF_OK;
}

static enum vf_err bool_field(const struct row_ctx *r, const char *col, bool *out)
{
    const char *v = field(r, col);
    if (!strcmp(v, "yes"))
        *out = true;
    else if (!strcmp(v, "no") || !strcmp(v, "?"))
        *out = false;
    else
        return bad(r, col, "yes, no or ?");
    return VF_OK;
}

/* ------------------------------------------------------------------- gpus */

static enum vf_err load_gpus(struct vf_catalog *c, struct vf_error *err)
{
    static const char *const cols[] = {"id",      "name",         "vendor",      "marketed_gb",
                                       "smi_mib", "usable_bytes", "usable_kind", "bandwidth_gbps",
                                       "arch",    "cc",           "bf16",        "fp8",
                                       "fp4",     "source",       NULL};
    struct vf__tsv t;
    enum vf_err rc = load_table(c, "gpus.tsv", cols, &t, err);
    if (rc)
        return rc;
    c->gpus = vf_arena_alloc(c->arena, (t.n_rows + 1) * sizeof *c->gpus);
    if (!c->gpus)
        return vf__errf(err, VF_ENOMEM, "gpus.tsv: out of memory");
    for (size_t i = 0; i < t.n_rows; i++) {
        struct row_ctx r = {&t, i, err};
        struct vf_gpu_spec *g = &c->gpus[i];
        uint64_t v;
        g->id = field(&r, "id");
        g->name = field(&r, "name");
        g->vendor = field(&r, "vendor");
        g->arch = field(&r, "arch");
        g->cc = field(&r, "cc");
        g->source = field(&r, "source");
        if (!*g->id)
            return bad(&r, "id", "a card id");
        for (size_t j = 0; j < i; j++)
            if (!strcmp(c->gpus[j].id, g->id))
                return bad(&r, "id", "an id not used on an earlier line");
        if ((rc = u64_field(&r, "marketed_gb", false, &v)))
            return rc;
        if (v == 0 || v > 100000)
            return bad(&r, "marketed_gb", "a size in GB between 1 and 100000");
        g->marketed_gb = (uint32_t)v;
        if ((rc = u64_field(&r, "smi_mib", true, &v)))
            return rc;
        g->smi_bytes = v == VF_UNKNOWN ? VF_UNKNOWN : v << 20;
        if ((rc = u64_field(&r, "usable_bytes", false, &g->usable_bytes)))
            return rc;
        if (g->usable_bytes == 0 || g->usable_bytes > (uint64_t)g->marketed_gb * 1100000000ULL)
            return bad(&r, "usable_bytes", "a byte count no larger than the marketed size");
        const char *kind = field(&r, "usable_kind");
        if (!strcmp(kind, "derived"))
            g->usable_derived = true;
        else if (strcmp(kind, "measured"))
            return bad(&r, "usable_kind", "measured or derived");
        if ((rc = u64_field(&r, "bandwidth_gbps", true, &v)))
            return rc;
        g->bandwidth_gbps = v == VF_UNKNOWN || v > UINT32_MAX ? 0 : (uint32_t)v;
        if ((rc = bool_field(&r, "bf16", &g->bf16)) || (rc = bool_field(&r, "fp8", &g->fp8)) ||
            (rc = bool_field(&r, "fp4", &g->fp4)))
            return rc;
    }
    c->n_gpus = t.n_rows;
    return VF_OK;
}

/* ----------------------------------------------------------------- prices */

static enum vf_err load_prices(struct vf_catalog *c, struct vf_error *err)
{
    static const char *const cols[] = {"gpu",  "count", "price_per_hour", "currency", "billing",
                                       "kind", "as_of", "provider",       "source",   NULL};
    struct vf__tsv t;
    enum vf_err rc = load_table(c, "prices.tsv", cols, &t, err);
    if (rc)
        return rc;
    c->offers = vf_arena_alloc(c->arena, (t.n_rows + 1) * sizeof *c->offers);
    if (!c->offers)
        return vf__errf(err, VF_ENOMEM, "prices.tsv: out of memory");
    for (size_t i = 0; i < t.n_rows; i++) {
        struct row_ctx r = {&t, i, err};
        struct vf_offer *o = &c->offers[i];
        uint64_t v;
        o->gpu_id = field(&r, "gpu");
        bool known = false;
        for (size_t j = 0; j < c->n_gpus && !known; j++)
            known = !strcmp(c->gpus[j].id, o->gpu_id);
        if (!known)
            return bad(&r, "gpu", "a card id from gpus.tsv");
        if ((rc = u64_field(&r, "count", false, &v)))
            return rc;
        if (v == 0 || v > VF_MAX_GPUS)
            return bad(&r, "count", "a card count from 1 to 4096");
        o->count = (uint32_t)v;
        if (vf_parse_price(field(&r, "price_per_hour"), &o->price_micro, NULL))
            return bad(&r, "price_per_hour", "a decimal price with at most 6 decimals");
        const char *cur = field(&r, "currency");
        if (strlen(cur) != 3 || !isupper((unsigned char)cur[0]) ||
            !isupper((unsigned char)cur[1]) || !isupper((unsigned char)cur[2]))
            return bad(&r, "currency", "a three-letter ISO code such as EUR");
        memcpy(o->currency, cur, 4);
        o->billing = field(&r, "billing");
        if (strcmp(o->billing, "minute") && strcmp(o->billing, "second") &&
            strcmp(o->billing, "hour"))
            return bad(&r, "billing", "minute, second or hour");
        o->kind = field(&r, "kind");
        o->as_of = field(&r, "as_of");
        o->provider = field(&r, "provider");
        o->source = field(&r, "source");
    }
    c->n_offers = t.n_rows;
    return VF_OK;
}

/* ----------------------------------------------------------------- models */

/* models.tsv indexes the model files: the lookup needs no JSON parsing at all, and each
 * config is parsed only when that model is resolved. */
static enum vf_err load_models(struct vf_catalog *c, struct vf_error *err)
{
    static const char *const cols[] = {"id",   "alias",      "name",   "task",
                                       "file", "params_ref", "source", NULL};
    struct vf__tsv t;
    enum vf_err rc = load_table(c, "models.tsv", cols, &t, err);
    if (rc)
        return rc;
    c->models = vf_arena_alloc(c->arena, (t.n_rows + 1) * sizeof *c->models);
    if (!c->models)
        return vf__errf(err, VF_ENOMEM, "models.tsv: out of memory");
    for (size_t i = 0; i < t.n_rows; i++) {
        struct row_ctx r = {&t, i, err};
        struct vf_catalog_model *m = &c->models[i];
        m->id = field(&r, "id");
        m->alias = *field(&r, "alias") ? field(&r, "alias") : NULL;
        m->name = *field(&r, "name") ? field(&r, "name") : m->id;
        m->file = field(&r, "file");
        if (!strchr(m->id, '/'))
            return bad(&r, "id", "a Hugging Face id ORG/NAME");
        const char *task = field(&r, "task");
        if (!strcmp(task, "infer"))
            m->task = VF_TASK_INFER;
        else if (!strcmp(task, "image"))
            m->task = VF_TASK_IMAGE;
        else if (!strcmp(task, "video"))
            m->task = VF_TASK_VIDEO;
        else
            return bad(&r, "task", "infer, image or video");
        /* LLM configs live in models/, pipelines in pipelines/ */
        const char *dir = m->task == VF_TASK_INFER ? "models/" : "pipelines/";
        size_t fl = strlen(m->file), dl = strlen(dir);
        if (strncmp(m->file, dir, dl) || fl < dl + 6 || strcmp(m->file + fl - 5, ".json") ||
            strstr(m->file, ".."))
            return bad(&r, "file",
                       m->task == VF_TASK_INFER ? "models/NAME.json" : "pipelines/NAME.json");
        if (!c->data_dir && !embedded(m->file))
            return bad(&r, "file", "a file that exists under data/");
        uint64_t p;
        if ((rc = u64_field(&r, "params_ref", true, &p)))
            return rc;
        m->params_ref = p;
        for (size_t j = 0; j < i; j++)
            if (!vf__strcasecmp(c->models[j].id, m->id) ||
                (m->alias && c->models[j].alias && !vf__strcasecmp(c->models[j].alias, m->alias)))
                return vf__errf(
                    err, VF_EFORMAT, "models.tsv:%zu: model '%s' is also on line %zu", t.lines[i],
                    m->alias && c->models[j].alias && !vf__strcasecmp(c->models[j].alias, m->alias)
                        ? m->alias
                        : m->id,
                    t.lines[j]);
    }
    c->n_models = t.n_rows;
    return VF_OK;
}

/* ------------------------------------------------------------------ public */

enum vf_err vf_catalog_open(struct vf_catalog **out, const char *data_dir, struct vf_error *err)
{
    *out = NULL;
    struct vf_arena *a = vf_arena_open(0);
    struct vf_catalog *c = a ? vf_arena_alloc(a, sizeof *c) : NULL;
    if (!c) {
        vf_arena_close(a);
        return vf__errf(err, VF_ENOMEM, "catalog: out of memory");
    }
    c->arena = a;
    c->data_dir = data_dir && *data_dir ? vf_arena_strdup(a, data_dir) : NULL;
    enum vf_err rc = load_gpus(c, err);
    if (!rc)
        rc = load_prices(c, err);
    if (!rc)
        rc = load_models(c, err);
    if (rc) {
        if (c->data_dir)
            vf__err_prefix(err, "data dir '%s'", c->data_dir);
        vf_arena_close(a);
        return rc;
    }
    *out = c;
    return VF_OK;
}

void vf_catalog_close(struct vf_catalog *c)
{
    if (c)
        vf_arena_close(c->arena);
}

/* Lowercase letters and digits only: "GeForce RTX-4090" -> "geforcertx4090". */
static void normalize(const char *s, char *out, size_t cap)
{
    size_t n = 0;
    for (; *s && n + 1 < cap; s++)
        if (isalnum((unsigned char)*s))
            out[n++] = (char)tolower((unsigned char)*s);
    out[n] = 0;
}

size_t vf_catalog_gpu_suggest(const struct vf_catalog *c, const char *ref,
                              const struct vf_gpu_spec **out, size_t cap)
{
    char r[128], id[128], nm[128];
    size_t n = 0;
    normalize(ref, r, sizeof r);
    if (!*r)
        return 0;
    for (size_t i = 0; i < c->n_gpus && n < cap; i++) {
        normalize(c->gpus[i].id, id, sizeof id);
        normalize(c->gpus[i].name, nm, sizeof nm);
        if (strstr(id, r) || strstr(nm, r))
            out[n++] = &c->gpus[i];
    }
    return n;
}

const struct vf_gpu_spec *vf_catalog_gpu(const struct vf_catalog *c, const char *ref)
{
    char r[128], id[128], nm[128];
    normalize(ref, r, sizeof r);
    for (size_t i = 0; i < c->n_gpus; i++)
        if (!vf__strcasecmp(c->gpus[i].id, ref))
            return &c->gpus[i];
    for (size_t i = 0; i < c->n_gpus; i++) {
        normalize(c->gpus[i].id, id, sizeof id);
        normalize(c->gpus[i].name, nm, sizeof nm);
        if (!strcmp(id, r) || !strcmp(nm, r))
            return &c->gpus[i];
    }
    /* a unique partial match: "4090" -> rtx-4090, "l40s" -> l40s */
    const struct vf_gpu_spec *hits[2];
    if (vf_catalog_gpu_suggest(c, ref, hits, 2) == 1)
        return hits[0];
    return NULL;
}

const struct vf_catalog_model *vf_catalog_model(const struct vf_catalog *c, const char *ref)
{
    for (size_t i = 0; i < c->n_models; i++) {
        const struct vf_catalog_model *m = &c->models[i];
        if (!vf__strcasecmp(m->id, ref) || (m->alias && !vf__strcasecmp(m->alias, ref)))
            return m;
    }
    /* "Llama-3.1-8B-Instruct" without the organization */
    for (size_t i = 0; i < c->n_models; i++) {
        const char *slash = strchr(c->models[i].id, '/');
        if (slash && !vf__strcasecmp(slash + 1, ref))
            return &c->models[i];
    }
    return NULL;
}

size_t vf_catalog_suggest(const struct vf_catalog *c, const char *ref,
                          const struct vf_catalog_model **out, size_t cap)
{
    /* rank by the smaller of the distances to the alias and to the id's name part */
    size_t n = 0;
    unsigned dist[16];
    if (cap > 16)
        cap = 16;
    for (size_t i = 0; i < c->n_models; i++) {
        const struct vf_catalog_model *m = &c->models[i];
        const char *slash = strchr(m->id, '/');
        unsigned d = vf__edit_distance(ref, slash ? slash + 1 : m->id);
        unsigned d2 = vf__edit_distance(ref, m->id);
        if (d2 < d)
            d = d2;
        if (m->alias) {
            d2 = vf__edit_distance(ref, m->alias);
            if (d2 < d)
                d = d2;
        }
        size_t reflen = strlen(ref);
        if (d > reflen / 2 + 1)
            continue;
        size_t k = n < cap ? n++ : cap;
        if (k == cap && d >= dist[cap - 1])
            continue;
        if (k == cap)
            k = cap - 1;
        while (k > 0 && dist[k - 1] > d) {
            dist[k] = dist[k - 1];
            out[k] = out[k - 1];
            k--;
        }
        dist[k] = d;
        out[k] = m;
    }
    return n;
}
