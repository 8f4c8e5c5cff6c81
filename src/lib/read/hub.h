/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hub.h - the Hugging Face hub client of libvramfit (private to the library): list a repo's
 * files, fetch small files (config.json), and read model headers with HTTP range requests,
 * never the weights. libcurl is loaded with dlopen() on first use so that commands that never
 * touch the network do not pay for its ~30 shared libraries at process start.
 *
 * URL layout (huggingface_hub's: src/huggingface_hub/hf_api.py list_repo_tree() and
 * file_download.py hf_hub_url(); constants.py for the environment variables):
 *   listing  {endpoint}/api/models/{repo}/tree/{rev}?recursive=true&expand=false
 *            a JSON array of {"type": "file"|"directory", "path": .., "size": ..},
 *            paginated with a `Link: <next>; rel="next"` header
 *   files    {endpoint}/{repo}/resolve/{rev}/{path}
 *            large files answer 302 to a CDN; Range requests follow it
 * {rev} is percent-encoded whole ("refs/pr/1" -> "refs%2Fpr%2F1"), {path} with '/' kept.
 * The hub's X-Error-Code header (GatedRepo, RepoNotFound, EntryNotFound, RevisionNotFound)
 * picks the message when it is there.
 */
#ifndef VRAMFIT_HUB_H
#define VRAMFIT_HUB_H

#include "internal.h"

/* ------------------------------------------------------------------- limits */

#define VF_HUB_DEFAULT_ENDPOINT  "https://huggingface.co"
#define VF_HUB_CURL_SONAME       "libcurl.so.4"
#define VF_HUB_CONNECT_TIMEOUT_S 10L
#define VF_HUB_TOTAL_TIMEOUT_S   60L
#define VF_HUB_MAX_REDIRECTS     5L
#define VF_HUB_MAX_SMALL_FILE    ((size_t)64 << 20)    /* vf__hub_get's ceiling on `limit` */
#define VF_HUB_MAX_LIST_PAGE     ((size_t)32 << 20)    /* one page of the tree listing */
#define VF_HUB_MAX_LIST_ENTRIES  100000                /* files of one repo */
#define VF_HUB_MAX_LIST_PAGES    1000                  /* pages of one listing */
#define VF_HUB_FIRST_RANGE       ((size_t)64 << 10)    /* the reader's first request */
#define VF_HUB_MAX_RANGE         ((size_t)16 << 20)    /* one range request */
#define VF_HUB_MAX_READER_BYTES  ((uint64_t)256 << 20) /* all ranges of one reader: headers */
#define VF_HUB_MAX_EXTENTS       4096                  /* fetched ranges of one reader */
#define VF_HUB_MAX_TOKEN         4096                  /* bytes of HF_TOKEN / the token file */
#define VF_HUB_MAX_REPO          200                   /* "owner/name" */
#define VF_HUB_MAX_REV           255
#define VF_HUB_MAX_PATH          1024
#define VF_HUB_CACHE_TTL_S       (24L * 3600) /* cached answers for a branch or tag */

/* ------------------------------------------------------------------ the hub */

/* Endpoint, token, cache directory and the dlopen'd libcurl; one thread at a time. */
struct vf_hub;

/* Where vf__hub_open_with() reads its settings (tests inject them). */
struct vf_hub_env {
    /* getenv()-like: the value of variable `name`, or NULL. NULL uses getenv(). */
    const char *(*getenv)(void *ud, const char *name);
    void *ud;
    const char *curl_lib; /* NULL: VF_HUB_CURL_SONAME */
};

/*
 * Opens a hub client from the environment: HF_ENDPOINT (default VF_HUB_DEFAULT_ENDPOINT),
 * HF_TOKEN, else the token file HF_TOKEN_PATH, else $HF_HOME/token (HF_HOME defaults to
 * $XDG_CACHE_HOME/huggingface, then ~/.cache/huggingface). The disk cache lives under
 * $XDG_CACHE_HOME/vramfit/hub (default ~/.cache/vramfit/hub; none when neither is set).
 * libcurl is loaded by the first request that needs the network (VF_EUNSUPPORTED with an
 * install hint when it cannot be). Errors: VF_EINVAL for a bad HF_ENDPOINT or token.
 * Close with vf__hub_close().
 */
enum vf_err vf__hub_open(struct vf_hub **out, struct vf_error *err);
enum vf_err vf__hub_open_with(struct vf_hub **out, const struct vf_hub_env *env,
                              struct vf_error *err);
void vf__hub_close(struct vf_hub *h); /* NULL is a no-op */

/* The endpoint in use, without a trailing '/' (for messages). */
const char *vf__hub_endpoint(const struct vf_hub *h);

/*
 * Lists the files of model repo `repo` ("owner/name") at revision `rev` (NULL: "main"),
 * recursively: (*paths)[i] and (*sizes)[i] (bytes) for i < *n, in the hub's order, all in
 * arena a. Directories are left out. Cached on disk like vf__hub_get(). Errors: VF_ENOENT
 * (404, unknown repo or revision), VF_EIO (network, 401/403, server), VF_ELIMIT (over
 * VF_HUB_MAX_LIST_ENTRIES), VF_EFORMAT (not the hub's JSON), VF_EINVAL (bad repo or rev).
 */
enum vf_err vf__hub_list(struct vf_arena *a, struct vf_hub *h, const char *repo, const char *rev,
                         const char ***paths, uint64_t **sizes, size_t *n, struct vf_error *err);

/*
 * Fetches a small file whole: {endpoint}/{repo}/resolve/{rev}/{path} (rev NULL: "main"),
 * following redirects; a file over `limit` bytes (capped at VF_HUB_MAX_SMALL_FILE) is
 * VF_ELIMIT. *data is NUL-terminated arena memory of *len bytes (len may be NULL). Answers
 * are cached on disk keyed by endpoint/repo/rev/path, for VF_HUB_CACHE_TTL_S (forever when
 * rev is a 40-hex commit); a stale copy is used when the hub cannot be reached.
 */
enum vf_err vf__hub_get(struct vf_arena *a, struct vf_hub *h, const char *repo, const char *rev,
                        const char *path, size_t limit, char **data, size_t *len,
                        struct vf_error *err);

/*
 * Sets up *r to read file `path` of `repo` (rev NULL: "main") with HTTP range requests: the
 * first VF_HUB_FIRST_RANGE bytes at once (so a missing or gated file fails here, and r->size
 * comes from Content-Range), later ranges as read() asks for them, each missing stretch
 * fetched in a request twice as large as the one before (a header that streams on needs few
 * requests). Fetched ranges stay in arena memory for the reader's life and on disk. One
 * reader fetches at most VF_HUB_MAX_READER_BYTES in all (VF_ELIMIT): headers, never weights.
 * h and a must outlive the reader; vf_reader_close() is a no-op on it.
 */
enum vf_err vf__hub_reader(struct vf_arena *a, struct vf_hub *h, const char *repo, const char *rev,
                           const char *path, struct vf_reader *r, struct vf_error *err);

#endif /* VRAMFIT_HUB_H */
