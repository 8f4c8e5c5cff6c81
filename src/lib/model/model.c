/* SPDX-License-Identifier: Apache-2.0 */
/*
 * model.c - turns a model reference into a struct vf_model:
 *   - a catalog id or alias: LLM configs through the same config reader that reads users'
 *     config.json files, image/video pipelines through the pipeline reader;
 *   - a path: a .gguf file (split sets too), a .safetensors file, a config.json, or a folder
 *     (a Hugging Face snapshot, also the HF cache layout models--ORG--NAME/snapshots/REV/);
 *   - a hub repo: hf:ORG/NAME[@REV][/FILE.gguf], or a bare ORG/NAME not in the catalog.
 * Mixed evidence is merged: the architecture from config.json, the exact bytes from the
 * weights' headers (which are read, never the weights).
 */
#include "internal.h"

#include "read/hub.h"
#include "read/read_gguf.h"
#include "read/read_safetensors.h"

#include <ctype.h>
#include <dirent.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_DIR_ENTRIES   4096 /* files looked at in one model folder */
#define MAX_SHARDS_REMOTE 1024 /* safetensors shards read from the hub */
#define MAX_REF_LEN       1024 /* a model reference */

/* ---------------------------------------------------------------- helpers */

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && !vf__strcasecmp(s + n - k, suffix);
}

static bool is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool is_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* Is this .gguf the first part of a split set or no split at all (it names a model)? */
static bool gguf_first_part(const char *name)
{
    const char *of = strstr(name, "-of-");
    return !of || of - name < 6 || !strncmp(of - 5, "00001", 5);
}

/* The model a safetensors header describes when no config.json comes with it: parameters and
 * exact bytes per tensor group; no architecture (estimates refuse it, inspect shows it). */
static enum vf_err model_from_tensors(struct vf_arena *a, const struct vf_safetensors *st,
                                      const char *origin, struct vf_model *m, struct vf_error *err)
{
    memset(m, 0, sizeof *m);
    m->id = vf_arena_strdup(a, origin);
    m->name = m->id;
    m->source = m->id;
    m->provenance = VF_PROV_EXACT;
    m->native.kind = VF_QK_PLAIN;
    m->native.dtype = VF_DT_BF16;
    snprintf(m->native.name, sizeof m->native.name, "as stored");
    m->native_dtype = VF_DT_BF16;
    m->groups = vf_arena_alloc(a, (st->n_tensors + 1) * sizeof *m->groups);
    if (!m->id || !m->groups)
        return vf__errf(err, VF_ENOMEM, "model: out of memory");
    for (size_t i = 0; i < st->n_tensors; i++) {
        const struct vf_tensor_info *t = &st->tensors[i];
        struct vf_tgroup *g = NULL;
        for (size_t j = 0; j < m->n_groups && !g; j++)
            if (m->groups[j].cls == t->cls && m->groups[j].layer == t->layer)
                g = &m->groups[j];
        if (!g) {
            g = &m->groups[m->n_groups++];
            g->cls = t->cls;
            g->layer = t->layer;
            g->row_elems = t->n_dims ? t->dims[t->n_dims - 1] : 1;
        }
        g->n_params = vf__sat_add(g->n_params, t->n_elems);
        g->stored_bytes = vf__sat_add(g->stored_bytes, t->bytes);
        g->n_tensors++;
    }
    m->params = st->params;
    m->params_active = st->params;
    m->exact_weight_bytes = st->weight_bytes;
    m->tensors = st->tensors;
    m->n_tensors = st->n_tensors;
    m->max_ctx_tokens = VF_UNKNOWN;
    return VF_OK;
}

/* Merges a safetensors header set into a model read from config.json. */
static enum vf_err merge_tensors(struct vf_model *m, const struct vf_safetensors *st,
                                 struct vf_error *err)
{
    if (!st->n_tensors)
        return VF_OK;
    enum vf_err rc = vf__model_apply_tensors(m, st->tensors, st->n_tensors, err);
    if (rc)
        return rc;
    m->tensors = st->tensors;
    m->n_tensors = st->n_tensors;
    return VF_OK;
}

/* ------------------------------------------------------------- local files */

static enum vf_err from_gguf_path(struct vf_arena *a, const char *path, struct vf_model *m,
                                  struct vf_error *err)
{
    struct vf_gguf g;
    enum vf_err rc = vf__gguf_read_split(a, path, &g, err);
    if (!rc)
        rc = vf_model_from_gguf(a, &g, path, m, err);
    if (!rc) {
        m->tensors = g.tensors;
        m->n_tensors = (size_t)g.n_tensors;
        m->source = vf_arena_strdup(a, path);
    }
    return rc;
}

static enum vf_err read_config_file(struct vf_arena *a, const char *path, struct vf_model *m,
                                    struct vf_error *err)
{
    char *text;
    size_t len;
    enum vf_err rc = vf__read_file(a, path, VF_MAX_CONFIG_JSON_BYTES, &text, &len, err);
    if (!rc)
        rc = vf_model_from_config(a, text, len, path, m, err);
    return rc;
}

static enum vf_err read_st_file(struct vf_arena *a, const char *path, struct vf_safetensors *st,
                                struct vf_error *err)
{
    struct vf_reader r;
    enum vf_err rc = vf_reader_open_file(&r, path, err);
    if (rc)
        return rc;
    rc = vf_safetensors_read(a, &r, st, err);
    vf_reader_close(&r);
    return rc;
}

/* The safetensors headers of folder `dir`: its index when there is one, else its single
 * *.safetensors file; *found false when there are none. */
static enum vf_err folder_tensors(struct vf_arena *a, const char *dir, struct vf_safetensors *st,
                                  bool *found, struct vf_error *err)
{
    memset(st, 0, sizeof *st);
    *found = false;
    char *index = vf_arena_printf(a, "%s/%s", dir, VF_ST_INDEX_NAME);
    if (!index)
        return vf__errf(err, VF_ENOMEM, "model: out of memory");
    if (is_file(index)) {
        *found = true;
        return vf__safetensors_read_index(a, dir, st, err);
    }
    DIR *d = opendir(dir);
    if (!d)
        return VF_OK;
    const struct dirent *e;
    char *one = NULL;
    int n = 0, seen = 0;
    while ((e = readdir(d)) && seen++ < MAX_DIR_ENTRIES)
        if (ends_with(e->d_name, ".safetensors") && n++ == 0)
            one = vf_arena_printf(a, "%s/%s", dir, e->d_name);
    closedir(d);
    if (n == 0)
        return VF_OK;
    if (n > 1)
        return vf__errf(err, VF_EFORMAT,
                        "model: '%s' holds %d .safetensors files but no %s to say which belong "
                        "together",
                        dir, n, VF_ST_INDEX_NAME);
    *found = true;
    return one ? read_st_file(a, one, st, err) : vf__errf(err, VF_ENOMEM, "model: out of memory");
}

/* The GGUF model of folder `dir`: its only .gguf file or split set. */
static enum vf_err folder_gguf(struct vf_arena *a, const char *dir, char **path, int *count,
                               struct vf_error *err)
{
    *path = NULL;
    *count = 0;
    DIR *d = opendir(dir);
    if (!d)
        return VF_OK;
    char list[VF_ERROR_MSG_MAX / 2] = "";
    const struct dirent *e;
    int seen = 0;
    while ((e = readdir(d)) && seen++ < MAX_DIR_ENTRIES) {
        if (!ends_with(e->d_name, ".gguf"))
            continue;
        if (!gguf_first_part(e->d_name)) /* a split set counts once, by its first part */
            continue;
        if (!vf__strcasecmp(e->d_name + strlen(e->d_name) - 5, ".gguf") &&
            strstr(e->d_name, "mmproj"))
            continue; /* a vision projector, not the model */
        (*count)++;
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", *list ? ", " : "",
                 e->d_name);
        if (*count == 1)
            *path = vf_arena_printf(a, "%s/%s", dir, e->d_name);
    }
    closedir(d);
    if (*count > 1)
        return vf__errf(err, VF_EINVAL, "model: '%s' holds several GGUF models (%s): name one", dir,
                        list);
    return VF_OK;
}

/* The snapshot folder of an HF cache entry models--ORG--NAME: refs/main's revision, else the
 * only snapshot. NULL when dir is no cache entry. */
static char *cache_snapshot(struct vf_arena *a, const char *dir)
{
    char *snaps = vf_arena_printf(a, "%s/snapshots", dir);
    if (!snaps || !is_dir(snaps))
        return NULL;
    char *ref = vf_arena_printf(a, "%s/refs/main", dir), *rev = NULL;
    size_t len;
    if (ref && is_file(ref) && !vf__read_file(a, ref, 256, &rev, &len, NULL)) {
        while (len && (rev[len - 1] == '\n' || rev[len - 1] == '\r'))
            rev[--len] = 0;
        char *p = vf_arena_printf(a, "%s/%s", snaps, rev);
        if (p && is_dir(p) && !strchr(rev, '/'))
            return p;
    }
    DIR *d = opendir(snaps);
    if (!d)
        return NULL;
    const struct dirent *e;
    char *only = NULL;
    int n = 0;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.' && n++ == 0)
            only = vf_arena_printf(a, "%s/%s", snaps, e->d_name);
    closedir(d);
    return n == 1 ? only : NULL;
}

static enum vf_err from_folder(struct vf_arena *a, const char *dir, struct vf_model *m,
                               struct vf_error *err)
{
    char *snap = cache_snapshot(a, dir);
    if (snap)
        dir = snap;
    char *config = vf_arena_printf(a, "%s/config.json", dir);
    if (!config)
        return vf__errf(err, VF_ENOMEM, "model: out of memory");
    if (is_file(config)) {
        enum vf_err rc = read_config_file(a, config, m, err);
        struct vf_safetensors st;
        bool found;
        if (!rc)
            rc = folder_tensors(a, dir, &st, &found, err);
        if (!rc && found)
            rc = merge_tensors(m, &st, err);
        if (!rc) {
            m->source = vf_arena_strdup(a, dir);
            m->id = m->source;
            m->name = m->source;
        }
        return rc;
    }
    char *gguf;
    int count;
    enum vf_err rc = folder_gguf(a, dir, &gguf, &count, err);
    if (rc)
        return rc;
    if (count == 1)
        return from_gguf_path(a, gguf, m, err);
    return vf__errf(err, VF_ENOENT,
                    "model: '%s' has no config.json and no .gguf file (a Hugging Face snapshot "
                    "folder, a .gguf or a .safetensors file works)",
                    dir);
}

/* The folder of file path, in *dir ("." for a bare name); VF_ENOMEM when it cannot be copied
 * (a NULL here would silently read another folder: the current one). */
static enum vf_err folder_of(struct vf_arena *a, const char *path, const char **dir,
                             struct vf_error *err)
{
    char *d = vf_arena_strdup(a, path);
    if (!d)
        return vf__errf(err, VF_ENOMEM, "model: out of memory");
    char *slash = strrchr(d, '/');
    if (slash)
        *slash = 0;
    *dir = slash ? d : ".";
    return VF_OK;
}

/* A config.json named directly, with the weights' headers beside it when they are there. */
static enum vf_err from_config_path(struct vf_arena *a, const char *path, struct vf_model *m,
                                    struct vf_error *err)
{
    const char *dir = ".";
    enum vf_err rc = read_config_file(a, path, m, err);
    if (!rc)
        rc = folder_of(a, path, &dir, err);
    if (rc)
        return rc;
    struct vf_safetensors st;
    bool found = false;
    rc = folder_tensors(a, dir, &st, &found, err);
    if (!rc && found)
        rc = merge_tensors(m, &st, err);
    return rc;
}

/* A .safetensors named directly: one shard of a sharded checkpoint stands for the whole set
 * (as a split GGUF's part); the config.json beside it, when there, gives the architecture. */
static enum vf_err from_st_path(struct vf_arena *a, const char *path, struct vf_model *m,
                                struct vf_error *err)
{
    const char *dir = ".";
    enum vf_err rc = folder_of(a, path, &dir, err);
    if (rc)
        return rc;
    char *index = vf_arena_printf(a, "%s/%s", dir, VF_ST_INDEX_NAME);
    char *config = vf_arena_printf(a, "%s/config.json", dir);
    if (!index || !config)
        return vf__errf(err, VF_ENOMEM, "model: out of memory");
    struct vf_safetensors st;
    bool found = false;
    rc =
        is_file(index) ? folder_tensors(a, dir, &st, &found, err) : read_st_file(a, path, &st, err);
    if (rc)
        return rc;
    if (is_file(config)) {
        rc = read_config_file(a, config, m, err);
        return rc ? rc : merge_tensors(m, &st, err);
    }
    return model_from_tensors(a, &st, path, m, err);
}

static enum vf_err from_path(struct vf_arena *a, const char *path, struct vf_model *m,
                             struct vf_error *err)
{
    if (is_dir(path))
        return from_folder(a, path, m, err);
    if (ends_with(path, ".gguf"))
        return from_gguf_path(a, path, m, err);
    if (ends_with(path, ".index.json")) { /* a sharded checkpoint's index: its folder */
        const char *dir = ".";
        enum vf_err rc = folder_of(a, path, &dir, err);
        return rc ? rc : from_folder(a, dir, m, err);
    }
    if (ends_with(path, ".json"))
        return from_config_path(a, path, m, err);
    if (ends_with(path, ".safetensors"))
        return from_st_path(a, path, m, err);
    return vf__errf(err, VF_EINVAL,
                    "model: cannot tell what '%s' is (expected .gguf, .safetensors, config.json "
                    "or a folder)",
                    path);
}

/* ------------------------------------------------------------------- hub */

struct hub_ref {
    char repo[256];
    char rev[128];  /* "" = main */
    char file[512]; /* "" = choose */
};

/* "hf:ORG/NAME[@REV][/FILE]" or "ORG/NAME"; false when it is not a repo id. */
static bool parse_hub_ref(const char *ref, struct hub_ref *h)
{
    memset(h, 0, sizeof *h);
    bool explicit = !strncmp(ref, "hf:", 3);
    if (explicit)
        ref += 3;
    const char *slash = strchr(ref, '/');
    if (!slash || slash == ref || !slash[1])
        return false;
    const char *end = strchr(slash + 1, '/');
    size_t repo_len = end ? (size_t)(end - ref) : strlen(ref);
    if (!explicit && end)
        return false; /* org/name/more: a path, not a repo */
    if (repo_len >= sizeof h->repo)
        return false;
    memcpy(h->repo, ref, repo_len);
    char *at = strchr(h->repo, '@');
    if (at) {
        snprintf(h->rev, sizeof h->rev, "%s", at + 1);
        *at = 0;
    }
    if (end)
        snprintf(h->file, sizeof h->file, "%s", end + 1);
    for (const char *p = h->repo; *p; p++)
        if (!(*p == '-' || *p == '_' || *p == '.' || *p == '/' || (*p >= '0' && *p <= '9') ||
              (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')))
            return false;
    return true;
}

/* The distinct shard names of an index.json's weight_map, in first-seen order. */
static enum vf_err index_shards(struct vf_arena *a, const char *text, size_t len,
                                const char *origin, const char ***out, size_t *n,
                                struct vf_error *err)
{
    json_error_t je;
    json_t *root = json_loadb(text, len, 0, &je);
    if (!root && vf__json_nomem(&je))
        return vf__errf(err, VF_ENOMEM, "safetensors: out of memory reading '%s'", origin);
    const json_t *map = root ? json_object_get(root, "weight_map") : NULL;
    if (!json_is_object(map)) {
        json_decref(root);
        return vf__errf(err, VF_EFORMAT, "safetensors: '%s': no weight_map object%s%s", origin,
                        root ? "" : ": ", root ? "" : je.text);
    }
    const char **names = vf_arena_alloc(a, MAX_SHARDS_REMOTE * sizeof *names);
    *n = 0;
    const char *key;
    json_t *v;
    enum vf_err rc = names ? VF_OK : vf__errf(err, VF_ENOMEM, "model: out of memory");
    json_object_foreach((json_t *)map, key, v)
    {
        const char *shard = json_string_value(v);
        if (rc || !shard)
            continue;
        bool seen = false;
        for (size_t i = 0; i < *n && !seen; i++)
            seen = !strcmp(names[i], shard);
        if (seen)
            continue;
        if (*n == MAX_SHARDS_REMOTE) {
            rc = vf__errf(err, VF_ELIMIT, "safetensors: '%s' names over %d shards", origin,
                          MAX_SHARDS_REMOTE);
            continue;
        }
        names[(*n)++] = vf_arena_strdup(a, shard);
    }
    (void)key;
    json_decref(root);
    *out = names;
    return rc;
}

/* Reads the headers of the repo's safetensors (index or single file) with range requests. */
static enum vf_err hub_tensors(struct vf_arena *a, struct vf_hub *h, const struct hub_ref *r,
                               const char **paths, size_t n_paths, struct vf_safetensors *out,
                               bool *found, struct vf_error *err)
{
    const char *rev = *r->rev ? r->rev : NULL;
    const char **shards = NULL;
    size_t n_shards = 0;
    memset(out, 0, sizeof *out);
    *found = false;
    for (size_t i = 0; i < n_paths; i++) {
        if (!strcmp(paths[i], VF_ST_INDEX_NAME)) {
            char *text;
            size_t len;
            enum vf_err rc = vf__hub_get(a, h, r->repo, rev, VF_ST_INDEX_NAME,
                                         VF_ST_MAX_INDEX_BYTES, &text, &len, err);
            if (rc || (rc = index_shards(a, text, len, VF_ST_INDEX_NAME, &shards, &n_shards, err)))
                return rc;
            break;
        }
    }
    if (!shards) {
        for (size_t i = 0; i < n_paths; i++)
            if (ends_with(paths[i], ".safetensors") && !strchr(paths[i], '/')) {
                if (n_shards)
                    return vf__errf(err, VF_EFORMAT,
                                    "hub: '%s' holds several .safetensors files but no %s", r->repo,
                                    VF_ST_INDEX_NAME);
                shards = &paths[i];
                n_shards = 1;
            }
    }
    if (!n_shards)
        return VF_OK;
    /* every shard's header, tensors concatenated */
    struct vf_safetensors *parts = vf_arena_alloc(a, n_shards * sizeof *parts);
    size_t total = 0;
    if (!parts)
        return vf__errf(err, VF_ENOMEM, "model: out of memory");
    for (size_t i = 0; i < n_shards; i++) {
        struct vf_reader rd;
        enum vf_err rc = vf__hub_reader(a, h, r->repo, rev, shards[i], &rd, err);
        if (rc || (rc = vf_safetensors_read(a, &rd, &parts[i], err)))
            return rc;
        total += parts[i].n_tensors;
    }
    out->tensors = vf_arena_alloc(a, (total + 1) * sizeof *out->tensors);
    if (!out->tensors)
        return vf__errf(err, VF_ENOMEM, "model: out of memory");
    for (size_t i = 0; i < n_shards; i++) {
        memcpy(out->tensors + out->n_tensors, parts[i].tensors,
               parts[i].n_tensors * sizeof *out->tensors);
        out->n_tensors += parts[i].n_tensors;
        out->weight_bytes = vf__sat_add(out->weight_bytes, parts[i].weight_bytes);
        out->params = vf__sat_add(out->params, parts[i].params);
    }
    *found = true;
    return VF_OK;
}

struct hub_part {
    struct vf_hub *h;
    const struct hub_ref *r;
};

/* Reads one GGUF file (or part) of the repo by range requests. */
static enum vf_err hub_gguf_part(void *ud, struct vf_arena *a, const char *name, struct vf_gguf *g,
                                 struct vf_error *err)
{
    const struct hub_part *p = ud;
    struct vf_reader rd;
    enum vf_err rc =
        vf__hub_reader(a, p->h, p->r->repo, *p->r->rev ? p->r->rev : NULL, name, &rd, err);
    return rc ? rc : vf_gguf_read(a, &rd, g, err);
}

/* A GGUF model of the repo (a split set read whole from its parts). */
static enum vf_err hub_gguf(struct vf_arena *a, struct vf_hub *h, const struct hub_ref *r,
                            const char *file, struct vf_model *m, struct vf_error *err)
{
    struct hub_part part = {h, r};
    struct vf_gguf g;
    enum vf_err rc = vf__gguf_read_split_with(a, file, hub_gguf_part, &part, &g, err);
    if (!rc)
        rc = vf_model_from_gguf(a, &g, file, m, err);
    if (!rc) {
        m->tensors = g.tensors;
        m->n_tensors = (size_t)g.n_tensors;
    }
    return rc;
}

static enum vf_err from_hub(struct vf_arena *a, const struct hub_ref *r, struct vf_model *m,
                            struct vf_error *err)
{
    struct vf_hub *h = NULL;
    const char *rev = *r->rev ? r->rev : NULL;
    enum vf_err rc = vf__hub_open(&h, err);
    if (rc)
        return rc;
    const char **paths = NULL;
    uint64_t *sizes = NULL;
    size_t n = 0;
    char *url = vf_arena_printf(a, "%s/%s", vf__hub_endpoint(h), r->repo);
    if (*r->file) {
        /* one named file: a GGUF header (a split set's part stands for the set) */
        if (!ends_with(r->file, ".gguf"))
            rc = vf__errf(err, VF_EINVAL,
                          "hub: '%s': only a .gguf file can be named in the repo (the rest is "
                          "read from its config.json)",
                          r->file);
        else
            rc = hub_gguf(a, h, r, r->file, m, err);
        goto done;
    }
    if ((rc = vf__hub_list(a, h, r->repo, rev, &paths, &sizes, &n, err)))
        goto done;
    bool has_config = false;
    const char *gguf = NULL;
    int n_gguf = 0;
    for (size_t i = 0; i < n; i++) {
        has_config |= !strcmp(paths[i], "config.json");
        if (ends_with(paths[i], ".gguf") && !strstr(paths[i], "mmproj") &&
            gguf_first_part(paths[i]) && n_gguf++ == 0)
            gguf = paths[i];
    }
    if (has_config) {
        char *text;
        size_t len;
        struct vf_safetensors st;
        bool found;
        if ((rc = vf__hub_get(a, h, r->repo, rev, "config.json", VF_MAX_CONFIG_JSON_BYTES, &text,
                              &len, err)) ||
            (rc = vf_model_from_config(a, text, len, "config.json", m, err)) ||
            (rc = hub_tensors(a, h, r, paths, n, &st, &found, err)))
            goto done;
        if (found)
            rc = merge_tensors(m, &st, err);
    } else if (n_gguf == 1) {
        rc = hub_gguf(a, h, r, gguf, m, err);
    } else if (n_gguf > 1) {
        rc = vf__errf(err, VF_EINVAL,
                      "hub: '%s' holds %d GGUF files and no config.json: name one, e.g. "
                      "hf:%s/%s",
                      r->repo, n_gguf, r->repo, gguf);
    } else {
        rc = vf__errf(err, VF_ENOENT, "hub: '%s' has no config.json and no .gguf file", r->repo);
    }
done:
    if (!rc) {
        m->id = vf_arena_strdup(a, r->repo);
        m->name = m->id;
        m->source = url;
    }
    vf__hub_close(h);
    return rc;
}

/* ------------------------------------------------------------- by type */

size_t vf__model_type_counts(const struct vf_model *m, struct vf__type_count *out, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; m->tensors && i < m->n_tensors; i++) {
        const struct vf_tensor_info *t = &m->tensors[i];
        const char *type = t->st_dtype;
        if (!type && !vf__ggml_type(t->ggml_type, &type, NULL, NULL))
            type = "?";
        size_t k = 0;
        while (k < n && strcmp(out[k].type, type))
            k++;
        if (k == n) {
            if (n == cap)
                continue;
            out[n++] = (struct vf__type_count){type, 0, 0, 0};
        }
        out[k].params = vf__sat_add(out[k].params, t->n_elems);
        out[k].bytes = vf__sat_add(out[k].bytes, t->bytes);
        out[k].tensors++;
    }
    for (size_t i = 1; i < n; i++) /* insertion sort, largest bytes first */
        for (size_t j = i; j > 0 && out[j].bytes > out[j - 1].bytes; j--) {
            struct vf__type_count x = out[j];
            out[j] = out[j - 1];
            out[j - 1] = x;
        }
    return n;
}

/* ------------------------------------------------------------- Ollama tags */

/* Letters and digits of s, lowercased, appended to out (of cap bytes) at *n. */
static void alnum_into(const char *s, size_t len, char *out, size_t cap, size_t *n)
{
    for (size_t i = 0; i < len && s[i] && *n + 1 < cap; i++)
        if (isalnum((unsigned char)s[i]))
            out[(*n)++] = (char)tolower((unsigned char)s[i]);
    out[*n] = 0;
}

/* Ollama names a model FAMILY:TAG, the tag's words joined by '-': the size and variant words
 * that hold a digit ("32b", "a3b", "8x7b"), words without one ("instruct", "it", "text"), and
 * last a quantization ("q4_K_M", "q8_0", "fp16"). The family and the words with a digit, letters
 * and digits only, are the catalog alias's or name's ("llama3.1" + "70b" = "llama3170b" =
 * llama-3.1-70b). */
const struct vf_catalog_model *vf__ollama_tag(const struct vf_catalog *c, const char *ref,
                                              char *quant, size_t cap)
{
    const char *colon = strchr(ref, ':');
    if (cap)
        quant[0] = 0;
    if (!colon || colon == ref || strchr(colon + 1, ':') || strchr(ref, '/') ||
        !strncmp(ref, "hf:", 3))
        return NULL;
    char key[128];
    size_t n = 0;
    alnum_into(ref, (size_t)(colon - ref), key, sizeof key, &n);
    for (const char *w = colon + 1; *w;) {
        size_t l = strcspn(w, "-");
        struct vf_quant q;
        char word[24];
        snprintf(word, sizeof word, "%.*s", (int)l, w);
        if (!w[l] && l < sizeof word && l < cap && !vf_quant_parse(word, &q, NULL))
            snprintf(quant, cap, "%s", word);
        else if (strcspn(w, "0123456789") < l)
            alnum_into(w, l, key, sizeof key, &n);
        w += l + (w[l] == '-');
    }
    for (size_t i = 0; i < c->n_models; i++) {
        char alias[128], name[128];
        size_t na = 0, nn = 0;
        const struct vf_catalog_model *m = &c->models[i];
        alnum_into(m->alias ? m->alias : "", SIZE_MAX, alias, sizeof alias, &na);
        alnum_into(m->name ? m->name : "", SIZE_MAX, name, sizeof name, &nn);
        if (!strcmp(key, alias) || !strcmp(key, name))
            return m;
    }
    return NULL;
}

/* ---------------------------------------------------------------- public */

static enum vf_err unknown(const struct vf_catalog *c, const char *ref, struct vf_error *err)
{
    const struct vf_catalog_model *near[3];
    size_t n = vf_catalog_suggest(c, ref, near, 3);
    char list[VF_ERROR_MSG_MAX] = "";
    for (size_t i = 0; i < n; i++) {
        size_t l = strlen(list);
        snprintf(list + l, sizeof list - l, "%s%s%s%s%s", i ? ", " : "", near[i]->id,
                 near[i]->alias ? " (" : "", near[i]->alias ? near[i]->alias : "",
                 near[i]->alias ? ")" : "");
    }
    if (n)
        return vf__errf(err, VF_ENOENT,
                        "unknown model '%s'\n  did you mean: %s\n  a local file or folder, or a "
                        "hub id (hf:ORG/NAME), works too",
                        ref, list);
    return vf__errf(err, VF_ENOENT,
                    "unknown model '%s'\n  'vramfit catalog models' lists the models it knows; "
                    "a local file or folder, or a hub id (hf:ORG/NAME), works too",
                    ref);
}

/* The model of catalog entry cm, read from its file into a. */
static enum vf_err from_catalog(struct vf_arena *a, const struct vf_catalog *c,
                                const struct vf_catalog_model *cm, struct vf_model *out,
                                struct vf_error *err)
{
    size_t len;
    const char *text = vf_catalog_file(a, c, cm->file, &len, err);
    if (!text)
        return err ? err->code : VF_ENOENT;
    enum vf_err rc = cm->task == VF_TASK_INFER
                         ? vf_model_from_config(a, text, len, cm->file, out, err)
                         : vf__pipeline_from_json(a, text, len, cm->file, out, err);
    if (rc)
        return rc;
    out->task = cm->task;
    out->provenance = VF_PROV_CATALOG;
    out->source = vf_arena_printf(a, "catalog %s", cm->file);
    out->id = cm->id;
    out->name = cm->name;
    out->alias = cm->alias;
    return out->source ? VF_OK : vf__errf(err, VF_ENOMEM, "%s: out of memory", cm->file);
}

enum vf_err vf_catalog_preload(struct vf_catalog *c, struct vf_error *err)
{
    for (size_t i = 0; i < c->n_models; i++) {
        struct vf_catalog_model *cm = &c->models[i];
        if (cm->loaded)
            continue;
        struct vf_model *m = vf_arena_alloc(c->arena, sizeof *m);
        if (!m)
            return vf__errf(err, VF_ENOMEM, "catalog: out of memory");
        struct vf_error e = {0};
        enum vf_err rc = from_catalog(c->arena, c, cm, m, &e);
        if (rc == VF_ENOMEM)
            return vf__errf(err, rc, "%s", e.msg);
        if (rc) /* a file that does not parse is reported when the model is asked for */
            continue;
        if (!(m->shared = vf__shared_new(c->arena)))
            return vf__errf(err, VF_ENOMEM, "catalog: out of memory");
        cm->loaded = m;
    }
    return VF_OK;
}

/* Issue 26: a hub id as huggingface_hub keeps it on disk, before any request: the cache is
 * HF_HUB_CACHE, else HF_HOME/hub, else XDG_CACHE_HOME (or ~/.cache)/huggingface/hub; the repo is
 * models--ORG--NAME there, its revision refs/REV (main by default) or REV itself, and the files
 * snapshots/COMMIT/. The path of that snapshot (or of the file named) in *out, or NULL. */
static const char *hf_cache_path(struct vf_arena *a, const struct hub_ref *h)
{
    const char *cache = getenv("HF_HUB_CACHE"), *home = getenv("HF_HOME");
    const char *xdg = getenv("XDG_CACHE_HOME"), *user = getenv("HOME");
    const char *root = cache && *cache ? cache
                       : home && *home ? vf_arena_printf(a, "%s/hub", home)
                       : xdg && *xdg   ? vf_arena_printf(a, "%s/huggingface/hub", xdg)
                       : user && *user ? vf_arena_printf(a, "%s/.cache/huggingface/hub", user)
                                       : NULL;
    char repo[sizeof h->repo];
    snprintf(repo, sizeof repo, "%s", h->repo);
    char *slash = strchr(repo, '/');
    if (!root || !slash || strstr(repo, "..") || strchr(h->rev, '/') || strstr(h->file, ".."))
        return NULL;
    *slash = '\0';
    const char *dir = vf_arena_printf(a, "%s/models--%s--%s", root, repo, slash + 1);
    const char *rev = h->rev[0] ? h->rev : "main";
    char commit[128] = "";
    FILE *f = dir ? fopen(vf_arena_printf(a, "%s/refs/%s", dir, rev), "r") : NULL;
    if (f) {
        if (!fgets(commit, sizeof commit, f))
            commit[0] = '\0';
        fclose(f);
        commit[strcspn(commit, "\r\n")] = '\0';
    } else {
        snprintf(commit, sizeof commit, "%s", rev); /* a commit given as @REV */
    }
    if (!dir || !commit[0] || strchr(commit, '/'))
        return NULL;
    const char *snap = h->file[0] ? vf_arena_printf(a, "%s/snapshots/%s/%s", dir, commit, h->file)
                                  : vf_arena_printf(a, "%s/snapshots/%s", dir, commit);
    struct stat st;
    return snap && stat(snap, &st) == 0 ? snap : NULL;
}

enum vf_err vf_model_resolve(struct vf_arena *a, const struct vf_catalog *c, const char *ref,
                             struct vf_model *out, struct vf_error *err)
{
    memset(out, 0, sizeof *out);
    if (!ref || !*ref)
        return vf__errf(err, VF_EINVAL, "no model given (a catalog id such as llama-3.1-8b)");
    if (strlen(ref) > MAX_REF_LEN)
        return vf__errf(err, VF_ELIMIT, "model reference of %zu bytes is over the limit of %d",
                        strlen(ref), MAX_REF_LEN);
    const struct vf_catalog_model *cm = strncmp(ref, "hf:", 3) ? vf_catalog_model(c, ref) : NULL;
    if (cm && cm->loaded) { /* vf_catalog_preload: shared, read-only */
        *out = *cm->loaded;
        return VF_OK;
    }
    if (cm)
        return from_catalog(a, c, cm, out, err);
    struct stat st;
    if (strncmp(ref, "hf:", 3) && stat(ref, &st) == 0)
        return from_path(a, ref, out, err);
    struct hub_ref h;
    if (parse_hub_ref(ref, &h)) {
        const char *cached = hf_cache_path(a, &h);
        if (cached)
            return from_path(a, cached, out, err);
        const char *offline = getenv("HF_HUB_OFFLINE");
        if (offline && (!strcmp(offline, "1") || !vf__strcasecmp(offline, "true")))
            return vf__errf(err, VF_ENOENT,
                            "'%s' is not in the Hugging Face cache and HF_HUB_OFFLINE is set "
                            "(huggingface-cli download %s fetches it)",
                            ref, h.repo);
        return from_hub(a, &h, out, err);
    }
    if (ends_with(ref, ".gguf") || ends_with(ref, ".safetensors") || ends_with(ref, ".json"))
        return vf__errf(err, VF_ENOENT, "cannot open '%s': no such file", ref);
    char quant[24];
    if ((cm = vf__ollama_tag(c, ref, quant, sizeof quant))) /* the answer applies the quant */
        return cm->loaded ? (*out = *cm->loaded, VF_OK) : from_catalog(a, c, cm, out, err);
    return unknown(c, ref, err);
}
