/* SPDX-License-Identifier: Apache-2.0 */
/*
 * catalog.c - the built-in data: GPUs (gpus.tsv), price offers (prices.tsv) and models
 * (models.tsv indexing models/NAME.json, trimmed HF config files). tools/embed.c compiles the
 * files into the binary; --data-dir / VRAMFIT_DATA_DIR loads the same files from disk instead.
 * Both paths go through the same readers (tsv.c, model_config.c) that read user files.
 */
#include "internal.h"

#include <errno.h>
#include <sys/stat.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --------------------------------------------------------------- file access */

static int by_name(const void *key, const void *f)
{
    return strcmp(key, ((const struct vf__embedded_file *)f)->name);
}

/* tools/embed.c writes the table sorted by name */
static const struct vf__embedded_file *embedded(const char *name)
{
    return bsearch(name, vf__embedded_files, vf__n_embedded_files, sizeof *vf__embedded_files,
                   by_name);
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
    struct vf_error e = {0};
    enum vf_err rc = vf__read_file(a, path, VF_MAX_DATA_FILE_BYTES, &text, len, &e);
    /* issue 26: a data dir overlays the built-in catalog: a file it lacks is the built-in one */
    const struct vf__embedded_file *f = rc == VF_ENOENT ? embedded(name) : NULL;
    if (f) {
        *len = f->len;
        return (const char *)f->data;
    }
    if (rc) {
        if (err)
            *err = e;
        return NULL;
    }
    return text;
}

/* ------------------------------------------------------------------ fields */

/* A record of a table whose columns were looked up once: field(r, K) is column cols[K]. */
struct row_ctx {
    const struct vf__tsv *t;
    const char *const *cols; /* the names the loader asked for, NULL-terminated */
    const int *ix;           /* ix[K]: the position of cols[K] in the file's header */
    size_t row;
    struct vf_error *err;
};

static const char *field(const struct row_ctx *r, int k)
{
    return r->t->rows[r->row][r->ix[k]];
}

static enum vf_err bad(const struct row_ctx *r, int k, const char *expected)
{
    return vf__errf(r->err, VF_EFORMAT, "%s:%zu: column '%s' is '%s', expected %s", r->t->origin,
                    r->t->lines[r->row], r->cols[k], field(r, k), expected);
}

/* Reads catalog file `name` as a TSV table that must have the columns `cols` (at most
 * MAX_COLS); ix[K] receives the position of cols[K]. */
#define MAX_COLS 16
static enum vf_err load_table(struct vf_catalog *c, const char *name, const char *const *cols,
                              struct vf__tsv *t, int *ix, struct vf_error *err)
{
    size_t len;
    const char *text = vf_catalog_file(c->arena, c, name, &len, err);
    if (!text)
        return err ? err->code : VF_ENOENT;
    enum vf_err rc = vf__tsv_parse(c->arena, text, len, name, t, err);
    if (rc)
        return rc;
    for (size_t i = 0; i < MAX_COLS && cols[i]; i++)
        if ((ix[i] = vf__tsv_col(t, cols[i])) < 0)
            return vf__errf(err, VF_EFORMAT, "%s: header has no column '%s'", t->origin, cols[i]);
    return VF_OK;
}

static enum vf_err u64_field(const struct row_ctx *r, int k, bool unknown_ok, uint64_t *out)
{
    const char *v = field(r, k);
    if (unknown_ok && (!strcmp(v, "?") || !*v)) {
        *out = VF_UNKNOWN;
        return VF_OK;
    }
    if (vf_parse_count(v, out, NULL))
        return bad(r, k, unknown_ok ? "a whole number or '?'" : "a whole number");
    return VF_OK;
}

static enum vf_err bool_field(const struct row_ctx *r, int k, bool *out)
{
    const char *v = field(r, k);
    if (!strcmp(v, "yes"))
        *out = true;
    else if (!strcmp(v, "no") || !strcmp(v, "?"))
        *out = false;
    else
        return bad(r, k, "yes, no or ?");
    return VF_OK;
}

/* FNV-1a of s, lowercased when fold: duplicate and unknown ids are looked up in a hash set. */
static uint32_t id_hash(const char *s, bool fold)
{
    uint32_t h = 2166136261u;
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (fold && ch >= 'A' && ch <= 'Z')
            ch = (unsigned char)(ch + 32);
        h = (h ^ ch) * 16777619u;
    }
    return h;
}

/* An open-addressing set of row numbers keyed by id strings: slot holds row + 1, 0 is free. */
struct idset {
    uint32_t *slot;
    size_t mask;
};

static enum vf_err idset_init(struct idset *s, struct vf_arena *a, size_t n, struct vf_error *err)
{
    size_t cap = 16;
    while (cap < 2 * n + 2)
        cap *= 2;
    s->slot = vf_arena_alloc(a, cap * sizeof *s->slot);
    s->mask = cap - 1;
    return s->slot ? VF_OK : vf__errf(err, VF_ENOMEM, "catalog: out of memory");
}

/* The row whose key (key(ctx, row)) equals id, else adds row when add and returns -1. */
static long idset_find(struct idset *s, const char *id, bool fold,
                       const char *(*key)(const void *ctx, size_t row), const void *ctx, long add)
{
    size_t i = id_hash(id, fold) & s->mask;
    for (; s->slot[i]; i = (i + 1) & s->mask) {
        const char *k = key(ctx, s->slot[i] - 1);
        if (fold ? !vf__strcasecmp(k, id) : !strcmp(k, id))
            return (long)s->slot[i] - 1;
    }
    if (add >= 0)
        s->slot[i] = (uint32_t)add + 1;
    return -1;
}

static const char *model_id_key(const void *ctx, size_t row)
{
    return ((const struct vf_catalog_model *)ctx)[row].id;
}

static const char *model_alias_key(const void *ctx, size_t row)
{
    return ((const struct vf_catalog_model *)ctx)[row].alias;
}

static const char *gpu_key(const void *ctx, size_t row)
{
    return ((const struct vf_gpu_spec *)ctx)[row].id;
}

enum {
    G_ID,
    G_NAME,
    G_VENDOR,
    G_MARKETED_GB,
    G_SMI_MIB,
    G_USABLE_BYTES,
    G_USABLE_KIND,
    G_BANDWIDTH_GBPS,
    G_ARCH,
    G_CC,
    G_BF16,
    G_FP8,
    G_FP4,
    G_SOURCE
};
/* The optional speed columns of gpus.tsv (issue 23): a file without them reads as unknown.
 * Their places are looked up once per table (struct opt), not once per cell. */
enum {
    O_FP16,
    O_BF16,
    O_FP8,
    O_INT8,
    O_FP4,
    O_BOOST,
    O_TDP,
    O_PCIE,
    O_NVLINK,
    O_SMS,
    O_SOURCE,
    O_N
};
static const char *const opt_names[O_N] = {
    "tflops_fp16", "tflops_bf16", "tflops_fp8",  "tflops_int8", "tflops_fp4",  "boost_mhz",
    "tdp_w",       "pcie",        "nvlink_gbps", "sms",         "speed_source"};
struct opt {
    const struct vf__tsv *t;
    int ix[O_N]; /* -1: the column is absent */
};

static void opt_init(struct opt *o, const struct vf__tsv *t)
{
    o->t = t;
    for (int k = 0; k < O_N; k++)
        o->ix[k] = vf__tsv_col(t, opt_names[k]);
}

static const char *opt_cell(const struct opt *o, size_t row, int col)
{
    return o->ix[col] < 0 ? "?" : o->t->rows[row][o->ix[col]];
}

static enum vf_err speed_bad(const struct opt *o, size_t row, int col, struct vf_error *err)
{
    return vf__errf(err, VF_EFORMAT, "%s:%zu: column '%s' is '%s', expected a number or '?'",
                    o->t->origin, o->t->lines[row], opt_names[col], opt_cell(o, row, col));
}

/* A whole number 0..100000 of an optional column into *n, -1 when '?' or absent; false when
 * the cell is something else. */
static bool count_cell(const struct opt *o, size_t row, int col, long *n)
{
    const char *v = opt_cell(o, row, col);
    *n = -1;
    if (!strcmp(v, "?") || !*v)
        return true;
    char *end;
    *n = strtol(v, &end, 10);
    return !*end && *n >= 0 && *n <= 100000;
}

static enum vf_err speed_fields(const struct opt *o, size_t row, struct vf_gpu_spec *g,
                                struct vf_error *err)
{
    double *dst[] = {&g->tflops_fp16, &g->tflops_bf16, &g->tflops_fp8, &g->tflops_int8,
                     &g->tflops_fp4,  &g->boost_mhz,   &g->tdp_w};
    for (int k = O_FP16; k <= O_TDP; k++) {
        const char *v = opt_cell(o, row, k);
        char *end;
        *dst[k] = 0;
        if (!strcmp(v, "?") || !*v)
            continue;
        *dst[k] = vf__strtod(v, &end);
        if (*end || !(*dst[k] >= 0 && *dst[k] < 1e6))
            return speed_bad(o, row, k, err);
    }
    const char *p = opt_cell(o, row, O_PCIE);
    g->pcie_gen = g->pcie_lanes = 0;
    if (strcmp(p, "?") && *p) {
        char *x, *e;
        unsigned long gen = strtoul(p, &x, 10), lanes = 0;
        e = x;
        if (*x == 'x')
            lanes = strtoul(x + 1, &e, 10);
        if (x == p || *x != 'x' || e == x + 1 || *e || gen == 0 || gen > 9 || lanes == 0 ||
            lanes > 32)
            return speed_bad(o, row, O_PCIE, err);
        g->pcie_gen = (uint8_t)gen;
        g->pcie_lanes = (uint8_t)lanes;
    }
    long n;
    if (!count_cell(o, row, O_NVLINK, &n))
        return speed_bad(o, row, O_NVLINK, err);
    g->nvlink_gbps = (int32_t)n;
    if (!count_cell(o, row, O_SMS, &n) || n == 0)
        return speed_bad(o, row, O_SMS, err);
    g->sms = n < 0 ? 0 : (uint32_t)n;
    g->speed_source = o->ix[O_SOURCE] < 0 ? "" : o->t->rows[row][o->ix[O_SOURCE]];
    return VF_OK;
}

static enum vf_err load_gpus(struct vf_catalog *c, struct idset *ids, struct vf_error *err)
{
    static const char *const cols[] = {"id",      "name",         "vendor",      "marketed_gb",
                                       "smi_mib", "usable_bytes", "usable_kind", "bandwidth_gbps",
                                       "arch",    "cc",           "bf16",        "fp8",
                                       "fp4",     "source",       NULL};
    struct vf__tsv t;
    int ix[MAX_COLS];
    enum vf_err rc = load_table(c, "gpus.tsv", cols, &t, ix, err);
    if (rc)
        return rc;
    c->gpus = vf_arena_alloc(c->arena, (t.n_rows + 1) * sizeof *c->gpus);
    if (!c->gpus)
        return vf__errf(err, VF_ENOMEM, "gpus.tsv: out of memory");
    if ((rc = idset_init(ids, c->arena, t.n_rows, err)))
        return rc;
    struct opt opt;
    opt_init(&opt, &t);
    for (size_t i = 0; i < t.n_rows; i++) {
        struct row_ctx r = {&t, cols, ix, i, err};
        struct vf_gpu_spec *g = &c->gpus[i];
        uint64_t v;
        g->id = field(&r, G_ID);
        g->name = field(&r, G_NAME);
        g->vendor = field(&r, G_VENDOR);
        g->arch = field(&r, G_ARCH);
        g->cc = field(&r, G_CC);
        g->source = field(&r, G_SOURCE);
        if (!*g->id)
            return bad(&r, G_ID, "a card id");
        if (idset_find(ids, g->id, false, gpu_key, c->gpus, (long)i) >= 0)
            return bad(&r, G_ID, "an id not used on an earlier line");
        if ((rc = u64_field(&r, G_MARKETED_GB, false, &v)))
            return rc;
        if (v == 0 || v > 100000)
            return bad(&r, G_MARKETED_GB, "a size in GB between 1 and 100000");
        g->marketed_gb = (uint32_t)v;
        if ((rc = u64_field(&r, G_SMI_MIB, true, &v)))
            return rc;
        g->smi_bytes = v == VF_UNKNOWN ? VF_UNKNOWN : v << 20;
        if ((rc = u64_field(&r, G_USABLE_BYTES, false, &g->usable_bytes)))
            return rc;
        if (g->usable_bytes == 0 || g->usable_bytes > (uint64_t)g->marketed_gb * 1100000000ULL)
            return bad(&r, G_USABLE_BYTES, "a byte count no larger than the marketed size");
        const char *kind = field(&r, G_USABLE_KIND);
        if (!strcmp(kind, "derived"))
            g->usable_derived = true;
        else if (strcmp(kind, "measured"))
            return bad(&r, G_USABLE_KIND, "measured or derived");
        if ((rc = u64_field(&r, G_BANDWIDTH_GBPS, true, &v)))
            return rc;
        g->bandwidth_gbps = v == VF_UNKNOWN || v > UINT32_MAX ? 0 : (uint32_t)v;
        if ((rc = bool_field(&r, G_BF16, &g->bf16)) || (rc = bool_field(&r, G_FP8, &g->fp8)) ||
            (rc = bool_field(&r, G_FP4, &g->fp4)))
            return rc;
        if ((rc = speed_fields(&opt, i, g, err)))
            return rc;
    }
    c->n_gpus = t.n_rows;
    return VF_OK;
}

/* ----------------------------------------------------------------- prices */

enum {
    P_GPU,
    P_COUNT,
    P_PRICE_PER_HOUR,
    P_CURRENCY,
    P_BILLING,
    P_KIND,
    P_AS_OF,
    P_PROVIDER,
    P_SOURCE
};
/* Issue 28: an offer of n > 1 cards whose price is exactly n x the single-card offer of the
 * same card, provider, kind and currency was derived from it, not quoted: say so. */
static void mark_derived(struct vf_catalog *c)
{
    for (size_t i = 0; i < c->n_offers; i++) {
        struct vf_offer *o = &c->offers[i];
        for (size_t k = 0; o->count > 1 && k < c->n_offers && !o->derived; k++) {
            const struct vf_offer *one = &c->offers[k];
            o->derived = one->count == 1 && !strcmp(one->gpu_id, o->gpu_id) &&
                         !strcmp(one->currency, o->currency) && !strcmp(one->kind, o->kind) &&
                         !strcmp(one->provider, o->provider) &&
                         one->price_micro <= UINT64_MAX / o->count &&
                         one->price_micro * o->count == o->price_micro;
        }
    }
}

/* The offers of one prices.tsv text (origin: where it comes from, for `catalog prices`) into
 * out[*n...]; a built-in row for a card the data dir's gpus.tsv does not have is left out. */
static enum vf_err read_offers(struct vf_catalog *c, struct idset *gpu_ids, const char *text,
                               size_t len, const char *origin, struct vf_offer *out, size_t *n,
                               struct vf_error *err)
{
    static const char *const cols[] = {"gpu",  "count", "price_per_hour", "currency", "billing",
                                       "kind", "as_of", "provider",       "source",   NULL};
    struct vf__tsv t;
    int ix[MAX_COLS];
    enum vf_err rc = vf__tsv_parse(c->arena, text, len, "prices.tsv", &t, err);
    for (size_t i = 0; !rc && cols[i]; i++)
        if ((ix[i] = vf__tsv_col(&t, cols[i])) < 0)
            rc = vf__errf(err, VF_EFORMAT, "%s: header has no column '%s'", t.origin, cols[i]);
    for (size_t i = 0; !rc && i < t.n_rows; i++) {
        struct row_ctx r = {&t, cols, ix, i, err};
        struct vf_offer *o = &out[*n];
        uint64_t v;
        o->gpu_id = field(&r, P_GPU);
        o->origin = origin;
        if (idset_find(gpu_ids, o->gpu_id, false, gpu_key, c->gpus, -1) < 0) {
            if (!strcmp(origin, "built-in"))
                continue;
            return bad(&r, P_GPU, "a card id from gpus.tsv");
        }
        if ((rc = u64_field(&r, P_COUNT, false, &v)))
            return rc;
        if (v == 0 || v > VF_MAX_GPUS)
            return bad(&r, P_COUNT, "a card count from 1 to 4096");
        o->count = (uint32_t)v;
        if (vf_parse_price(field(&r, P_PRICE_PER_HOUR), &o->price_micro, NULL))
            return bad(&r, P_PRICE_PER_HOUR, "a decimal price with at most 6 decimals");
        const char *cur = field(&r, P_CURRENCY);
        if (strlen(cur) != 3 || !isupper((unsigned char)cur[0]) ||
            !isupper((unsigned char)cur[1]) || !isupper((unsigned char)cur[2]))
            return bad(&r, P_CURRENCY, "a three-letter ISO code such as EUR");
        memcpy(o->currency, cur, 4);
        o->billing = field(&r, P_BILLING);
        if (strcmp(o->billing, "minute") && strcmp(o->billing, "second") &&
            strcmp(o->billing, "hour"))
            return bad(&r, P_BILLING, "minute, second or hour");
        o->kind = field(&r, P_KIND);
        o->as_of = field(&r, P_AS_OF);
        o->provider = field(&r, P_PROVIDER);
        o->source = field(&r, P_SOURCE);
        (*n)++;
    }
    return rc;
}

/* The offers: a data dir's prices.tsv first, then each built-in offer it does not replace (the
 * same card, count, provider and kind): the user's prices overlay ours (issue 26). */
static enum vf_err load_prices(struct vf_catalog *c, struct idset *gpu_ids, struct vf_error *err)
{
    const struct vf__embedded_file *own = embedded("prices.tsv");
    char *text = NULL;
    size_t len = 0, n = 0, lines = 1;
    const char *path = c->data_dir ? vf_arena_printf(c->arena, "%s/prices.tsv", c->data_dir) : NULL;
    enum vf_err rc =
        path ? vf__read_file(c->arena, path, VF_MAX_DATA_FILE_BYTES, &text, &len, err) : VF_ENOENT;
    if (rc && rc != VF_ENOENT)
        return rc;
    if (rc)
        text = NULL, len = 0;
    for (size_t i = 0; i < len; i++)
        lines += text[i] == '\n';
    for (size_t i = 0; own && i < own->len; i++)
        lines += own->data[i] == '\n';
    c->offers = vf_arena_alloc(c->arena, (lines + 1) * sizeof *c->offers);
    if (!c->offers)
        return vf__errf(err, VF_ENOMEM, "prices.tsv: out of memory");
    if (text && (rc = read_offers(c, gpu_ids, text, len, path, c->offers, &n, err)))
        return rc;
    size_t n_user = n;
    if (own && (rc = read_offers(c, gpu_ids, (const char *)own->data, own->len, "built-in",
                                 c->offers, &n, err)))
        return rc;
    size_t kept = n_user;
    for (size_t i = n_user; i < n; i++) {
        const struct vf_offer *o = &c->offers[i];
        bool replaced = false;
        for (size_t k = 0; k < n_user && !replaced; k++)
            replaced = !strcmp(c->offers[k].gpu_id, o->gpu_id) && c->offers[k].count == o->count &&
                       !strcmp(c->offers[k].provider, o->provider) &&
                       !strcmp(c->offers[k].kind, o->kind);
        if (!replaced)
            c->offers[kept++] = *o;
    }
    c->n_offers = kept;
    mark_derived(c);
    return VF_OK;
}

/* ----------------------------------------------------------------- models */

/* models.tsv indexes the model files: the lookup needs no JSON parsing at all, and each
 * config is parsed only when that model is resolved. */
enum { M_ID, M_ALIAS, M_NAME, M_TASK, M_FILE, M_PARAMS_REF, M_SOURCE };
static enum vf_err load_models(struct vf_catalog *c, struct vf_error *err)
{
    static const char *const cols[] = {"id",   "alias",      "name",   "task",
                                       "file", "params_ref", "source", NULL};
    struct vf__tsv t;
    int ix[MAX_COLS];
    enum vf_err rc = load_table(c, "models.tsv", cols, &t, ix, err);
    if (rc)
        return rc;
    c->models = vf_arena_alloc(c->arena, (t.n_rows + 1) * sizeof *c->models);
    if (!c->models)
        return vf__errf(err, VF_ENOMEM, "models.tsv: out of memory");
    struct idset ids, aliases;
    if ((rc = idset_init(&ids, c->arena, t.n_rows, err)) ||
        (rc = idset_init(&aliases, c->arena, t.n_rows, err)))
        return rc;
    for (size_t i = 0; i < t.n_rows; i++) {
        struct row_ctx r = {&t, cols, ix, i, err};
        struct vf_catalog_model *m = &c->models[i];
        m->id = field(&r, M_ID);
        m->alias = *field(&r, M_ALIAS) ? field(&r, M_ALIAS) : NULL;
        m->name = *field(&r, M_NAME) ? field(&r, M_NAME) : m->id;
        m->file = field(&r, M_FILE);
        if (!strchr(m->id, '/'))
            return bad(&r, M_ID, "a Hugging Face id ORG/NAME");
        const char *task = field(&r, M_TASK);
        if (!strcmp(task, "infer"))
            m->task = VF_TASK_INFER;
        else if (!strcmp(task, "image"))
            m->task = VF_TASK_IMAGE;
        else if (!strcmp(task, "video"))
            m->task = VF_TASK_VIDEO;
        else
            return bad(&r, M_TASK, "infer, image or video");
        /* LLM configs live in models/, pipelines in pipelines/ */
        const char *dir = m->task == VF_TASK_INFER ? "models/" : "pipelines/";
        size_t fl = strlen(m->file), dl = strlen(dir);
        if (strncmp(m->file, dir, dl) || fl < dl + 6 || strcmp(m->file + fl - 5, ".json") ||
            strstr(m->file, ".."))
            return bad(&r, M_FILE,
                       m->task == VF_TASK_INFER ? "models/NAME.json" : "pipelines/NAME.json");
        if (!c->data_dir && !embedded(m->file))
            return bad(&r, M_FILE, "a file that exists under data/");
        uint64_t p;
        if ((rc = u64_field(&r, M_PARAMS_REF, true, &p)))
            return rc;
        m->params_ref = p;
        long j = idset_find(&ids, m->id, true, model_id_key, c->models, (long)i);
        const char *dup = m->id;
        if (j < 0 && m->alias) {
            j = idset_find(&aliases, m->alias, true, model_alias_key, c->models, (long)i);
            dup = m->alias;
        }
        if (j >= 0)
            return vf__errf(err, VF_EFORMAT, "models.tsv:%zu: model '%s' is also on line %zu",
                            t.lines[i], dup, t.lines[j]);
    }
    c->n_models = t.n_rows;
    return VF_OK;
}

/* ------------------------------------------------------------------ public */

enum vf_err vf_catalog_open_parts(struct vf_catalog **out, const char *data_dir, unsigned parts,
                                  struct vf_error *err)
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
    struct idset gpu_ids;
    enum vf_err rc = VF_OK;
    struct stat st;
    int e = c->data_dir && stat(c->data_dir, &st) ? errno : 0;
    if (c->data_dir && (e || !S_ISDIR(st.st_mode)))
        rc = vf__errf(err, VF_ENOENT, "%s", e ? strerror(e) : "not a folder");
    if (!rc && (parts & (VF_CATALOG_GPUS | VF_CATALOG_OFFERS)))
        rc = load_gpus(c, &gpu_ids, err);
    if (!rc && (parts & VF_CATALOG_OFFERS))
        rc = load_prices(c, &gpu_ids, err);
    if (!rc && (parts & VF_CATALOG_MODELS))
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

enum vf_err vf_catalog_open(struct vf_catalog **out, const char *data_dir, struct vf_error *err)
{
    return vf_catalog_open_parts(out, data_dir, VF_CATALOG_ALL, err);
}

void vf_catalog_close(struct vf_catalog *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n_models; i++)
        if (c->models[i].loaded)
            vf__shared_free(c->models[i].loaded->shared);
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

/* The words of s (letters and digits, split at anything else, lowercased) as " w1 w2 ... ",
 * so that a match of " w1 w2 " in it is a match of whole words; "" when s has none. */
static void squeeze(const char *s, char out[132])
{
    size_t n = 1, len = 0;
    out[0] = ' ';
    for (const char *p = s; *p && len < 127; p++, len++) {
        bool w = isalnum((unsigned char)*p);
        if (w)
            out[n++] = (char)tolower((unsigned char)*p);
        else if (out[n - 1] != ' ')
            out[n++] = ' ';
    }
    if (out[n - 1] != ' ')
        out[n++] = ' ';
    out[n] = 0;
    if (n == 1)
        out[0] = 0;
}

/* Does the word sequence of ref occur whole and in order in that of s? "4090" in "rtx-4090",
 * "h100" in "h100-sxm"; "409" is not a word of "rtx-4090", so a typo never resolves to a card
 * by being a prefix of its name. */
static bool words_in(const char *ref, const char *s)
{
    char rs[132], ts[132];
    squeeze(ref, rs);
    squeeze(s, ts);
    return rs[0] && strstr(ts, rs);
}

/* Whether the words of ref are the last words of s: "3090" of "rtx-3090", not of
 * "rtx-3090-ti". */
static bool words_end(const char *ref, const char *s)
{
    char rs[132], ts[132];
    squeeze(ref, rs);
    squeeze(s, ts);
    size_t nr = strlen(rs), nt = strlen(ts);
    return nr && nr <= nt && !strcmp(ts + nt - nr, rs);
}

size_t vf_catalog_gpu_suggest(const struct vf_catalog *c, const char *ref,
                              const struct vf_gpu_spec **out, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < c->n_gpus && n < cap; i++)
        if (words_in(ref, c->gpus[i].id) || words_in(ref, c->gpus[i].name))
            out[n++] = &c->gpus[i];
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
    /* DESIGN section 8: an unambiguous alias, whole words of one card's id or name: "4090" ->
     * rtx-4090; "h100" is three cards and no answer. Of several, the one card whose id ends
     * with those words: "3090" is the RTX 3090, not the 3090 Ti; "4080" the RTX 4080 */
    const struct vf_gpu_spec *hits[8], *end = NULL;
    size_t n = vf_catalog_gpu_suggest(c, ref, hits, 8), ends = 0;
    if (n == 1)
        return hits[0];
    for (size_t i = 0; i < n; i++)
        if (words_end(ref, hits[i]->id))
            end = hits[i], ends++;
    return ends == 1 && n < 8 ? end : NULL; /* 8: there may be more (not all read) */
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
    char quant[24]; /* an Ollama tag (model.c); the answer applies its quantization */
    return vf__ollama_tag(c, ref, quant, sizeof quant);
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
