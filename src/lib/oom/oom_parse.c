/*
 * oom_parse.c - the streaming OOM log scanner (vf_oom_scan_*): line assembly across feeds,
 * a multi-pattern prefilter (Wu-Manber, 2-byte blocks) run over whole chunks so ordinary
 * lines cost a fraction of one pass (4-byte keys, steps and hints, resolved per run of lines),
 * the pattern rows of oom_patterns.c, merging of multi-line messages, tool hints and the
 * log context (model, context length, batch, resolution, steps, versions).
 *
 * Memory is fixed at open: the partial line (VF_OOM_MAX_LINE), the event ring
 * (VF_OOM_MAX_EVENTS with their texts); the prefilter tables are built once per process and
 * shared. Nothing grows with input.
 */
#define _GNU_SOURCE /* memmem, memrchr */
#include "oom.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TEXT_MAX   320 /* bytes of a message kept in an event */
#define STR_MAX    256 /* model name / version */
#define MAX_PATS   128 /* prefilter patterns (two 64-bit words) */
#define HINT_AFTER 8   /* lines after an event whose tool hints still refine it */
#define LONG_MIN   5   /* keys this long feed the chunk prefilter; shorter ones are lazy */

/* Context keys (besides the row triggers) the prefilter looks for. */
enum ctx_kind {
    K_STEP,
    K_MODEL_Q,
    K_MODEL_JSON,
    K_MODEL_FLAG,
    K_OLLAMA_RUN,
    K_NODE,
    K_GGUF_NAME,
    K_CTX,
    K_BATCH,
    K_RES,
    K_UTIL,
    K_VER_VLLM,
    K_VER_TORCH,
    K_HINT,
    K_FOLLOW,
    K_BNB_CPU
};
struct ctx_key {
    const char *key;
    enum ctx_kind kind;
    const char *arg; /* hint tool, or follow-line field */
};
static const struct ctx_key ctx_keys[] = {
    {"step", K_STEP, NULL},
    {"Step", K_STEP, NULL},
    {"model='", K_MODEL_Q, NULL},
    {"'model': '", K_MODEL_JSON, NULL},
    {"--model ", K_MODEL_FLAG, NULL},
    {"ollama run ", K_OLLAMA_RUN, NULL},
    {"Node Type:", K_NODE, NULL},
    {"general.name", K_GGUF_NAME, NULL},
    {"max_model_len", K_CTX, NULL},
    {"--max-model-len", K_CTX, NULL},
    {"max_seq_len=", K_CTX, NULL},
    {"n_ctx", K_CTX, NULL},
    {"num_ctx", K_CTX, NULL},
    {"batch_size", K_BATCH, NULL},
    {"--batch-size", K_BATCH, NULL},
    {"max_num_seqs", K_BATCH, NULL},
    {"resolution", K_RES, NULL},
    {"gpu_memory_utilization", K_UTIL, NULL},
    {"--gpu-memory-utilization", K_UTIL, NULL},
    {"vLLM version ", K_VER_VLLM, NULL},
    {"vLLM API server version ", K_VER_VLLM, NULL},
    {"ytorch version", K_VER_TORCH, NULL},
    {"ComfyUI", K_HINT, "comfyui"},
    {"Exception during processing", K_HINT, "comfyui"},
    {"vllm", K_HINT, "vllm"},
    {"Vllm", K_HINT, "vllm"},
    {"vLLM", K_HINT, "vllm"},
    {"ollama", K_HINT, "ollama"},
    {"Ollama", K_HINT, "ollama"},
    {"deepspeed", K_HINT, "deepspeed"},
    {"DeepSpeed", K_HINT, "deepspeed"},
    {"param_coordinator", K_HINT, "deepspeed"},
    {"sigkill_handler", K_HINT, "deepspeed"},
    {"accelerate/", K_HINT, "accelerate"},
    {"tensorflow", K_HINT, "tensorflow"},
    {"Currently allocated", K_FOLLOW, "allocated"},
    {"Requested     ", K_FOLLOW, "requested"},
    {"Device limit", K_FOLLOW, "total"},
    {"Free (according to CUDA)", K_FOLLOW, "free"},
    {"total allocation:", K_FOLLOW, "allocated"},
    {"compiled without GPU support", K_BNB_CPU, NULL},
};
#define N_CTX_KEYS (sizeof ctx_keys / sizeof ctx_keys[0])

/* Tool hints, weakest first: a stronger one replaces a weaker one already seen. */
static const char *const hint_rank[] = {"tensorflow", "accelerate", "deepspeed",
                                        "ollama",     "vllm",       "comfyui"};

/* Wu-Manber tables (2-byte blocks) over the patterns of at least `min` bytes. */
#define WM_BITS       16
#define WM_HASH(a, b) ((unsigned)(a) << 8 | (unsigned)(b))
struct wm {
    size_t min, m;
    uint8_t next[MAX_PATS];
    uint8_t shift[1u << WM_BITS];
    uint8_t head[1u << WM_BITS];
};

/* The prefilter: the same for every scanner (it depends on the tables only), built once per
 * process (prefilter_build) and shared read-only: its 260 KiB of tables were most of the cost
 * of an open (allocated, zeroed and filled per scanner before). */
struct prefilter {
    /* `all` per line, `lng` (no short keys) over whole chunks */
    const char *pats[MAX_PATS];
    uint8_t plen[MAX_PATS];
    uint32_t pre[MAX_PATS]; /* the first 4 bytes of each pattern, a cheap first check */
    size_t n_pats;
    struct wm all, lng;
    int row_pat[64]; /* prefilter pattern of each row's trig[0] */
    int key_pat[N_CTX_KEYS];
    enum vf_err rc; /* of the build, with msg */
    char msg[128];
};

struct vf_oom_scan {
    const struct prefilter *pf;
    /* line assembly */
    char pend[VF_OOM_MAX_LINE];
    size_t pend_len;
    bool pend_open; /* a partial line is pending (possibly cut) */
    uint64_t lineno;
    /* events */
    struct vf_oom_event ev[VF_OOM_MAX_EVENTS];
    char text[VF_OOM_MAX_EVENTS][TEXT_MAX];
    unsigned row_flags[VF_OOM_MAX_EVENTS];
    unsigned merge[VF_OOM_MAX_EVENTS];
    uint64_t n_total;
    /* context */
    struct vf_oom_context ctx;
    char model[STR_MAX], version[STR_MAX], node[STR_MAX];
    bool version_explicit, bnb_cpu;
    const char *hint; /* strongest tool hint seen */
    uint64_t cur_step;
    struct vf_arena *arena;
};

/* ------------------------------------------------------------ small helpers */

const char *vf__oom_find(const char *line, size_t len, const char *needle)
{
    return memmem(line, len, needle, strlen(needle));
}

uint64_t vf__oom_u64_at(const char *p, const char *end, const char **endp)
{
    while (p < end && *p == ' ')
        p++;
    uint64_t v = 0;
    const char *s = p;
    bool over = false;
    while (p < end && *p >= '0' && *p <= '9') {
        if (!vf__mul_u64(v, 10, &v) || !vf__add_u64(v, (uint64_t)(*p - '0'), &v))
            over = true;
        p++;
    }
    if (endp)
        *endp = p;
    if (p == s || over || v == VF_UNKNOWN)
        return VF_UNKNOWN;
    return v;
}

uint64_t vf__oom_bytes_at(const char *p, const char *end, unsigned flags, const char **endp)
{
    while (p < end && *p == ' ')
        p++;
    char buf[VF_MAX_NUMBER_TEXT + 8];
    size_t n = 0;
    const char *q = p;
    while (q < end && ((*q >= '0' && *q <= '9') || *q == '.') && n < VF_MAX_NUMBER_TEXT)
        buf[n++] = *q++;
    if (endp)
        *endp = q;
    if (!n || (q < end && ((*q >= '0' && *q <= '9') || *q == '.')))
        return VF_UNKNOWN; /* no number, or longer than any real size */
    const char *u = q;
    if (u < end && *u == ' ')
        u++;
    const char *us = u;
    while (u < end && u - us < 5 && ((*u >= 'A' && *u <= 'Z') || (*u >= 'a' && *u <= 'z')))
        u++;
    size_t un = (size_t)(u - us);
    /* only units vf_parse_bytes knows; "bytes"/"B" mean bytes; anything else: no unit */
    char unit[8] = "";
    if (un == 5 && !memcmp(us, "bytes", 5))
        un = 0;
    else if (un == 1 && *us == 'B')
        un = 0;
    else if (un >= 1 && un <= 3 &&
             (us[0] == 'K' || us[0] == 'M' || us[0] == 'G' || us[0] == 'T' || us[0] == 'k')) {
        memcpy(unit, us, un);
        unit[un] = 0;
        if ((flags & VF__OOM_MB_BINARY) && un == 2 && unit[1] == 'B') {
            unit[1] = 'i', unit[2] = 'B', unit[3] = 0; /* MPS "GB" is GiB */
        }
        if (unit[0] == 'k')
            unit[0] = 'K';
    } else {
        un = 0;
        u = q;
    }
    if (endp && un)
        *endp = u;
    memcpy(buf + n, unit, strlen(unit) + 1);
    uint64_t v;
    if (vf_parse_bytes(buf, &v, NULL) != VF_OK || v == VF_UNKNOWN)
        return VF_UNKNOWN;
    return v;
}

uint64_t vf__oom_bytes_after(const char *line, size_t len, const char *key, unsigned flags)
{
    const char *p = vf__oom_find(line, len, key);
    if (!p)
        return VF_UNKNOWN;
    return vf__oom_bytes_at(p + strlen(key), line + len, flags, NULL);
}

uint64_t vf__oom_u64_after(const char *line, size_t len, const char *key)
{
    const char *p = vf__oom_find(line, len, key);
    if (!p)
        return VF_UNKNOWN;
    return vf__oom_u64_at(p + strlen(key), line + len, NULL);
}

/* Copies s[0..n) into dst (cap bytes) as printable text: controls and bytes of invalid
 * UTF-8 become '?', so renderers (JSON) get valid UTF-8. Trims leading spaces. */
static void copy_text(char *dst, size_t cap, const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s, *e = p + n;
    while (p < e && (*p == ' ' || *p == '\t'))
        p++;
    size_t o = 0;
    while (p < e && o + 5 < cap) {
        unsigned c = *p;
        size_t k = c < 0x80             ? 1
                   : (c & 0xe0) == 0xc0 ? 2
                   : (c & 0xf0) == 0xe0 ? 3
                   : (c & 0xf8) == 0xf0 ? 4
                                        : 0;
        bool ok = k > 0 && (size_t)(e - p) >= k && !(k == 2 && c < 0xc2);
        for (size_t i = 1; ok && i < k; i++)
            ok = (p[i] & 0xc0) == 0x80;
        if (k == 3 && ok)
            ok = !(c == 0xe0 && p[1] < 0xa0) && !(c == 0xed && p[1] >= 0xa0);
        if (k == 4 && ok)
            ok = !(c == 0xf0 && p[1] < 0x90) && !(c > 0xf4 || (c == 0xf4 && p[1] >= 0x90));
        if (!ok || (k == 1 && (c < 0x20 || c == 0x7f))) {
            dst[o++] = c == '\t' ? ' ' : '?';
            p++;
            continue;
        }
        memcpy(dst + o, p, k);
        o += k;
        p += k;
    }
    while (o && dst[o - 1] == ' ')
        o--;
    dst[o] = 0;
}

/* A token (model name, version) up to one of the stop bytes, into dst. */
static void copy_token(char *dst, size_t cap, const char *p, const char *end, const char *stop)
{
    const char *q = p;
    while (q < end && !strchr(stop, *q) && *q)
        q++;
    if (q > p)
        copy_text(dst, cap, p, (size_t)(q - p));
}

/* ------------------------------------------------------------- prefilter */

static int add_pat(struct prefilter *s, const char *p)
{
    for (size_t i = 0; i < s->n_pats; i++)
        if (!strcmp(s->pats[i], p))
            return (int)i;
    if (s->n_pats >= MAX_PATS || strlen(p) < 4 || strlen(p) > 255)
        return -1;
    s->pats[s->n_pats] = p;
    s->plen[s->n_pats] = (uint8_t)strlen(p);
    memcpy(&s->pre[s->n_pats], p, 4);
    return (int)s->n_pats++;
}

static void build_wm(const struct prefilter *s, struct wm *w, size_t min)
{
    w->min = min;
    w->m = 255;
    for (size_t i = 0; i < s->n_pats; i++)
        if (s->plen[i] >= min && s->plen[i] < w->m)
            w->m = s->plen[i];
    memset(w->shift, (int)(w->m - 1), sizeof w->shift);
    memset(w->head, 0, sizeof w->head);
    for (size_t k = 0; k < s->n_pats; k++) {
        if (s->plen[k] < min)
            continue;
        const unsigned char *p = (const unsigned char *)s->pats[k];
        for (size_t j = 1; j < w->m; j++) {
            unsigned h = WM_HASH(p[j - 1], p[j]);
            uint8_t sh = (uint8_t)(w->m - 1 - j);
            if (sh < w->shift[h])
                w->shift[h] = sh;
            if (j == w->m - 1) {
                w->next[k] = w->head[h];
                w->head[h] = (uint8_t)(k + 1);
            }
        }
    }
}

/* Sets mask bits of every pattern in t[0..n); returns true if any. */
static bool filter(const struct vf_oom_scan *scan, const char *text, size_t n, uint64_t mask[2])
{
    const struct prefilter *s = scan->pf;
    const struct wm *w = &s->all;
    const unsigned char *t = (const unsigned char *)text;
    size_t m = w->m, i = m - 1;
    bool any = false;
    mask[0] = mask[1] = 0;
    while (i < n) {
        unsigned sh = w->shift[WM_HASH(t[i - 1], t[i])];
        if (sh) {
            i += sh;
            continue;
        }
        size_t start = i - (m - 1);
        for (unsigned k = w->head[WM_HASH(t[i - 1], t[i])]; k; k = w->next[k - 1]) {
            size_t l = s->plen[k - 1];
            if (start + l <= n && !memcmp(t + start, s->pats[k - 1], l)) {
                mask[(k - 1) >> 6] |= (uint64_t)1 << ((k - 1) & 63);
                any = true;
            }
        }
        i++;
    }
    return any;
}

/* One Wu-Manber probe of the `lng` set at window end *ip in t[0..n): the start of a
 * pattern that ends in t[0..n) found there, else SIZE_MAX; *ip moves to the next window. */
static inline size_t probe(const struct prefilter *s, const unsigned char *t, size_t n, size_t *ip)
{
    const struct wm *w = &s->lng;
    size_t i = *ip;
    unsigned h = WM_HASH(t[i - 1], t[i]);
    unsigned sh = w->shift[h];
    if (sh) {
        *ip = i + sh;
        return SIZE_MAX;
    }
    *ip = i + 1;
    size_t start = i - (w->m - 1);
    for (unsigned k = w->head[h]; k; k = w->next[k - 1]) {
        size_t l = s->plen[k - 1];
        uint32_t pre;
        if (l < w->min || start + l > n)
            continue;
        memcpy(&pre, t + start, 4);
        if (pre == s->pre[k - 1] && !memcmp(t + start + 4, s->pats[k - 1] + 4, l - 4))
            return start;
    }
    return SIZE_MAX;
}

/*
 * Start of the leftmost pattern of the `lng` set in text[0..n), or NULL. Two probes run in
 * step, one from the start and one from the middle, so their load chains overlap: the first
 * half's probe owns the matches starting before the middle (its text runs on 255 bytes, the
 * longest pattern), the second half's the rest.
 */
static const char *find_long(const struct vf_oom_scan *scan, const char *text, size_t n)
{
    const struct prefilter *s = scan->pf;
    const unsigned char *t = (const unsigned char *)text;
    size_t m = s->lng.m, x;
    size_t h = n >= 4096 ? n / 2 : n;
    size_t na = h + 255 < n ? h + 255 : n;
    size_t ia = m - 1, ib = h + m - 1, hb = SIZE_MAX;
    while (ia < na && ib < n) {
        if ((x = probe(s, t, na, &ia)) != SIZE_MAX) {
            if (x < h)
                return text + x;
            na = 0; /* the second half finds it too */
        }
        if ((hb = probe(s, t, n, &ib)) != SIZE_MAX)
            break;
    }
    while (ia < na)
        if ((x = probe(s, t, na, &ia)) != SIZE_MAX) {
            if (x < h)
                return text + x;
            break;
        }
    if (hb != SIZE_MAX)
        return text + hb;
    while (ib < n)
        if ((x = probe(s, t, n, &ib)) != SIZE_MAX)
            return text + x;
    return NULL;
}

static bool bit(const uint64_t mask[2], int k)
{
    return k >= 0 && (mask[k >> 6] >> (k & 63) & 1);
}

/* ---------------------------------------------------------------- open */

static struct prefilter prefilter;
static pthread_once_t prefilter_once = PTHREAD_ONCE_INIT;

static void prefilter_build(void)
{
    struct prefilter *s = &prefilter;
    s->rc = VF_ELIMIT;
    if (vf__oom_n_rows > sizeof s->row_pat / sizeof s->row_pat[0]) {
        snprintf(s->msg, sizeof s->msg, "oom scan: too many pattern rows");
        return;
    }
    for (size_t i = 0; i < vf__oom_n_rows; i++)
        s->row_pat[i] = add_pat(s, vf__oom_rows[i].trig[0]);
    for (size_t i = 0; i < N_CTX_KEYS; i++)
        s->key_pat[i] = add_pat(s, ctx_keys[i].key);
    for (size_t i = 0; i < vf__oom_n_rows; i++)
        if (s->row_pat[i] < 0 || s->plen[s->row_pat[i]] < LONG_MIN) {
            snprintf(s->msg, sizeof s->msg, "oom scan: prefilter table full");
            return;
        }
    for (size_t i = 0; i < N_CTX_KEYS; i++) {
        /* short keys are resolved lazily (resolve()): only steps and tool hints can be */
        size_t n = strlen(ctx_keys[i].key);
        bool ok = n >= LONG_MIN || (ctx_keys[i].kind == K_STEP && strstr(ctx_keys[i].key, "tep")) ||
                  ctx_keys[i].kind == K_HINT;
        if (!ok || s->key_pat[i] < 0) {
            snprintf(s->msg, sizeof s->msg, "oom scan: bad context key %s", ctx_keys[i].key);
            return;
        }
    }
    build_wm(s, &s->all, 0);
    build_wm(s, &s->lng, LONG_MIN);
    s->rc = VF_OK;
}

enum vf_err vf_oom_scan_open(struct vf_arena *a, struct vf_oom_scan **out, struct vf_error *err)
{
    if (!a || !out)
        return vf__errf(err, VF_EINVAL, "oom scan: no arena");
    pthread_once(&prefilter_once, prefilter_build);
    if (prefilter.rc)
        return vf__errf(err, prefilter.rc, "%s", prefilter.msg);
    struct vf_oom_scan *s = vf_arena_alloc(a, sizeof *s);
    if (!s)
        return vf__errf(err, VF_ENOMEM, "oom scan: out of memory (%zu bytes)", sizeof *s);
    s->arena = a;
    s->pf = &prefilter;
    s->ctx.ctx_tokens = s->ctx.batch = VF_UNKNOWN;
    s->ctx.first_step = s->ctx.last_step = VF_UNKNOWN;
    s->cur_step = VF_UNKNOWN;
    *out = s;
    return VF_OK;
}

/* ------------------------------------------------------------- context */

static int hint_strength(const char *t)
{
    for (size_t i = 0; i < sizeof hint_rank / sizeof hint_rank[0]; i++)
        if (t && !strcmp(t, hint_rank[i]))
            return (int)i + 1;
    return 0;
}

/* Refines a generic tool with a hint ("pytorch" -> "vllm"; "llamacpp" -> "ollama"). */
static const char *refine_tool(const char *tool, const char *hint)
{
    if (!hint)
        return tool;
    if (!strcmp(tool, "pytorch") || !strcmp(tool, "unknown"))
        return hint;
    if (!strcmp(tool, "llamacpp") && !strcmp(hint, "ollama"))
        return hint;
    return tool;
}

static struct vf_oom_event *last_event(struct vf_oom_scan *s)
{
    return s->n_total ? &s->ev[(s->n_total - 1) % VF_OOM_MAX_EVENTS] : NULL;
}

/* Sets *dst to v when v is known (a figure the line gives replaces what an earlier one said). */
static void take(uint64_t *dst, uint64_t v)
{
    if (v != VF_UNKNOWN)
        *dst = v;
}

/* The event field a K_FOLLOW key fills ("allocated", "requested", "total", "free"). */
static uint64_t *follow_field(struct vf_oom_event *ev, const char *name)
{
    if (!strcmp(name, "allocated"))
        return &ev->allocated_bytes;
    if (!strcmp(name, "requested"))
        return &ev->requested_bytes;
    if (!strcmp(name, "total"))
        return &ev->total_bytes;
    return !strcmp(name, "free") ? &ev->free_bytes : NULL;
}

/* The step number after a K_STEP key (p is past the key), VF_UNKNOWN if none. */
static uint64_t step_at(const char *p, const char *end)
{
    if (p < end && (*p == 's' || *p == '_'))
        return VF_UNKNOWN; /* "steps", "step_size" */
    const char *q = p;
    while (q < end && q - p < 3 && (*q == ' ' || *q == ':' || *q == '=' || *q == '#'))
        q++;
    return vf__oom_u64_at(q, end, NULL);
}

/*
 * The key_* functions read what follows one context key: p is past the key, end the end of
 * the line; what they find goes into s->ctx (or the event just read, for hints and
 * follow-up lines). A value that does not parse is left out.
 */
static void key_step(struct vf_oom_scan *s, const char *p, const char *end)
{
    uint64_t v = step_at(p, end);
    if (v == VF_UNKNOWN)
        return;
    if (s->ctx.first_step == VF_UNKNOWN)
        s->ctx.first_step = v;
    s->ctx.last_step = v;
    s->cur_step = v;
}

/* A context length or a batch: "max_model_len=8192", "n_ctx = 4096", "'batch_size': 8". */
static void key_number(struct vf_oom_scan *s, enum ctx_kind kind, const char *p, const char *end)
{
    const char *q = p;
    while (q < end && q - p < 4 && strchr(" \"'=:", *q) && *q)
        q++;
    if (q == p)
        return; /* "n_ctx_train", "max_model_len_x" */
    uint64_t v = vf__oom_u64_at(q, end, NULL);
    if (v == VF_UNKNOWN || v == 0)
        return;
    if (kind == K_CTX && v <= VF_MAX_CTX_TOKENS)
        s->ctx.ctx_tokens = v;
    else if (kind == K_BATCH)
        s->ctx.batch = v;
}

/* "resolution: 1280x720", "resolution (832, 480)". */
static void key_res(struct vf_oom_scan *s, const char *p, const char *end)
{
    const char *q = p;
    while (q < end && q - p < 6 && !(*q >= '0' && *q <= '9'))
        q++;
    const char *e;
    uint64_t w = vf__oom_u64_at(q, end, &e);
    if (w == VF_UNKNOWN || e >= end || (*e != 'x' && *e != ','))
        return;
    e++;
    uint64_t h = vf__oom_u64_at(e, end, NULL);
    if (w < 65536 && h < 65536 && h) {
        s->ctx.width = (uint32_t)w;
        s->ctx.height = (uint32_t)h;
    }
}

/* vLLM's utilization: a fraction in (0, 1]. */
static void key_util(struct vf_oom_scan *s, const char *p, const char *end)
{
    const char *q = p;
    while (q < end && q - p < 4 && strchr(" \"'=:", *q) && *q)
        q++;
    char buf[32];
    size_t n = 0;
    while (q < end && n + 1 < sizeof buf && ((*q >= '0' && *q <= '9') || *q == '.'))
        buf[n++] = *q++;
    buf[n] = 0;
    char *x;
    double d = strtod(buf, &x);
    if (n && x != buf && d > 0 && d <= 1)
        s->ctx.gpu_memory_utilization = d;
}

/* A version the log prints ("vLLM version 0.6.3"): it beats one a message's wording hints. */
static void key_version(struct vf_oom_scan *s, enum ctx_kind kind, const char *p, const char *end)
{
    const char *q = p;
    while (q < end && (*q == ' ' || *q == ':'))
        q++;
    char v[64] = "";
    copy_token(v, sizeof v, q, end, " ,;)\r");
    if (*v) {
        snprintf(s->version, sizeof s->version, "%s %s", kind == K_VER_VLLM ? "vllm" : "torch", v);
        s->version_explicit = true;
    }
}

/* A tool hint: the strongest seen so far, and the tool of an event a few lines before. */
static void key_hint(struct vf_oom_scan *s, const char *tool)
{
    if (hint_strength(tool) > hint_strength(s->hint))
        s->hint = tool;
    struct vf_oom_event *ev = last_event(s);
    if (ev && s->lineno - ev->line <= HINT_AFTER)
        ev->tool = refine_tool(ev->tool, tool);
}

/* A figure on a line after the message ("Currently allocated     : 1.2 GiB"). */
static void key_follow(struct vf_oom_scan *s, const char *field, const char *p, const char *end)
{
    struct vf_oom_event *ev = last_event(s);
    if (!ev || s->lineno - ev->line > 12)
        return;
    const char *c = memchr(p, ':', (size_t)(end - p));
    uint64_t *dst = follow_field(ev, field);
    if (dst)
        take(dst, vf__oom_bytes_at(c ? c + 1 : p, end, 0, NULL));
}

/* The context keys the prefilter found in the line (mask), each read by its kind. */
static void context_line(struct vf_oom_scan *s, const char *line, size_t len,
                         const uint64_t mask[2])
{
    const char *end = line + len;
    for (size_t i = 0; i < N_CTX_KEYS; i++) {
        if (!bit(mask, s->pf->key_pat[i]))
            continue;
        const struct ctx_key *k = &ctx_keys[i];
        const char *p = vf__oom_find(line, len, k->key);
        if (!p)
            continue;
        p += strlen(k->key);
        switch (k->kind) {
        case K_STEP:
            key_step(s, p, end);
            break;
        case K_MODEL_Q:
        case K_MODEL_JSON:
            copy_token(s->model, sizeof s->model, p, end, "'");
            break;
        case K_MODEL_FLAG:
        case K_OLLAMA_RUN:
            copy_token(s->model, sizeof s->model, p, end, " \t\"'");
            break;
        case K_NODE: /* "- **Node Type:** HyVideoModelLoader" */
            while (p < end && (*p == ' ' || *p == '*'))
                p++;
            copy_token(s->node, sizeof s->node, p, end, " \t*\r");
            break;
        case K_GGUF_NAME: {
            const char *q = vf__oom_find(p, (size_t)(end - p), "= ");
            if (q)
                copy_token(s->model, sizeof s->model, q + 2, end, "\r");
            break;
        }
        case K_CTX:
        case K_BATCH:
            key_number(s, k->kind, p, end);
            break;
        case K_RES:
            key_res(s, p, end);
            break;
        case K_UTIL:
            key_util(s, p, end);
            break;
        case K_VER_VLLM:
        case K_VER_TORCH:
            key_version(s, k->kind, p, end);
            break;
        case K_HINT:
            key_hint(s, k->arg);
            break;
        case K_FOLLOW:
            key_follow(s, k->arg, p, end);
            break;
        case K_BNB_CPU:
            s->bnb_cpu = true;
            break;
        }
    }
}

/* ---------------------------------------------------------------- rows */

static void apply_match(struct vf_oom_scan *s, const struct vf__oom_row *r, struct vf__oom_m *m,
                        const char *line, size_t len)
{
    struct vf_oom_event *prev = last_event(s);
    size_t slot;
    bool merge = prev && s->lineno - prev->line <= s->merge[(s->n_total - 1) % VF_OOM_MAX_EVENTS] &&
                 !strcmp(prev->source, r->source);
    if (merge) {
        slot = (size_t)((s->n_total - 1) % VF_OOM_MAX_EVENTS);
        struct vf_oom_event *ev = prev;
        const struct vf_oom_event *n = &m->ev;
        take(&ev->requested_bytes, n->requested_bytes);
        take(&ev->total_bytes, n->total_bytes);
        take(&ev->free_bytes, n->free_bytes);
        take(&ev->allocated_bytes, n->allocated_bytes);
        take(&ev->reserved_bytes, n->reserved_bytes);
        take(&ev->reserved_unallocated_bytes, n->reserved_unallocated_bytes);
        take(&ev->non_pytorch_bytes, n->non_pytorch_bytes);
        if (n->device >= 0)
            ev->device = n->device;
        for (size_t i = 0; i < n->n_procs && ev->n_procs < VF_OOM_MAX_PROCS; i++) {
            bool dup = false;
            for (size_t j = 0; j < ev->n_procs; j++)
                dup |= ev->procs[j].pid == n->procs[i].pid;
            if (!dup)
                ev->procs[ev->n_procs++] = n->procs[i];
        }
        if ((s->row_flags[slot] & VF__OOM_WEAK) && !(r->flags & VF__OOM_WEAK)) {
            ev->pattern = r->id;
            ev->tool = refine_tool(r->tool, s->hint);
            s->row_flags[slot] = r->flags;
            copy_text(s->text[slot], TEXT_MAX, line, len);
        }
        if (r->merge_lines > s->merge[slot])
            s->merge[slot] = r->merge_lines;
        ev->tool = refine_tool(
            ev->tool, strcmp(r->tool, "pytorch") && strcmp(r->tool, "unknown") ? r->tool : NULL);
    } else {
        slot = (size_t)(s->n_total % VF_OOM_MAX_EVENTS);
        s->n_total++;
        s->ev[slot] = m->ev;
        struct vf_oom_event *ev = &s->ev[slot];
        ev->pattern = r->id;
        ev->tool = refine_tool(r->tool, s->hint);
        ev->source = r->source;
        if (r->backend)
            ev->backend = r->backend;
        if (!ev->backend)
            ev->backend = "cuda";
        if (s->bnb_cpu && !strcmp(r->source, "bitsandbytes"))
            ev->backend = "cpu"; /* a CPU-only bitsandbytes build: no GPU would help */
        ev->line = s->lineno;
        ev->step = s->cur_step;
        copy_text(s->text[slot], TEXT_MAX, line, len);
        ev->text = s->text[slot];
        s->row_flags[slot] = r->flags;
        s->merge[slot] = r->merge_lines;
    }
    if (m->version_hint && !s->version_explicit)
        snprintf(s->version, sizeof s->version, "%s", m->version_hint);
    if (m->ctx_tokens != VF_UNKNOWN && m->ctx_tokens <= VF_MAX_CTX_TOKENS)
        s->ctx.ctx_tokens = m->ctx_tokens;
    if (m->batch != VF_UNKNOWN)
        s->ctx.batch = m->batch;
    if (m->utilization > 0)
        s->ctx.gpu_memory_utilization = m->utilization;
}

static void match_rows(struct vf_oom_scan *s, const char *line, size_t len, const uint64_t mask[2])
{
    for (size_t i = 0; i < vf__oom_n_rows; i++) {
        const struct vf__oom_row *r = &vf__oom_rows[i];
        if (!bit(mask, s->pf->row_pat[i]))
            continue;
        bool all = true;
        for (int t = 1; t < 3 && r->trig[t] && all; t++)
            all = vf__oom_find(line, len, r->trig[t]) != NULL;
        if (!all)
            continue;
        struct vf__oom_m m;
        memset(&m, 0, sizeof m);
        struct vf_oom_event *ev = &m.ev;
        ev->device = -1;
        ev->requested_bytes = ev->total_bytes = ev->free_bytes = ev->allocated_bytes =
            ev->reserved_bytes = ev->reserved_unallocated_bytes = ev->non_pytorch_bytes =
                VF_UNKNOWN;
        ev->step = VF_UNKNOWN;
        m.ctx_tokens = m.batch = VF_UNKNOWN;
        if (r->parse && !r->parse(&m, line, len, r->flags))
            continue;
        apply_match(s, r, &m, line, len);
        return;
    }
}

/* One complete line (without its newline), at most VF_OOM_MAX_LINE bytes. */
static void do_line(struct vf_oom_scan *s, const char *line, size_t len)
{
    s->lineno++;
    if (len && line[len - 1] == '\r')
        len--;
    if (len < s->pf->all.m)
        return;
    uint64_t mask[2];
    if (!filter(s, line, len, mask))
        return;
    context_line(s, line, len, mask); /* hints first: they may name this line's tool */
    match_rows(s, line, len, mask);
}

/* ---------------------------------------------------------------- feed */

static void pend_add(struct vf_oom_scan *s, const char *p, size_t n)
{
    size_t room = VF_OOM_MAX_LINE - s->pend_len;
    if (n > room)
        n = room; /* the rest of an over-long line is dropped: bounded memory */
    memcpy(s->pend + s->pend_len, p, n);
    s->pend_len += n;
    s->pend_open = true;
}

/* ---------------------------------------------------------- chunk scan */

/*
 * Whole chunks of complete lines are scanned with the long-key prefilter (`lng`); only the
 * lines it hits, and the HINT_AFTER lines after an event, go through do_line. The lines in
 * between can hold only short keys (steps, "vllm" hints), whose effects resolve() applies
 * for a run of such lines at once, exactly as do_line would have line by line.
 */

/* The length do_line gives the line [ls, le): cut to VF_OOM_MAX_LINE, one '\r' dropped. */
static size_t line_len(const char *ls, const char *le)
{
    size_t n = (size_t)(le - ls);
    if (n > VF_OOM_MAX_LINE)
        n = VF_OOM_MAX_LINE;
    if (n && ls[n - 1] == '\r')
        n--;
    return n;
}

/* The steps context_line takes from a line (K_STEP keys in table order): *first the first
 * value it sets, *last the last. False when it sets none. */
static bool line_steps(const struct vf_oom_scan *s, const char *line, size_t len, uint64_t *first,
                       uint64_t *last)
{
    bool any = false;
    if (len < s->pf->all.m)
        return false;
    for (size_t i = 0; i < N_CTX_KEYS; i++) {
        if (ctx_keys[i].kind != K_STEP)
            continue;
        const char *p = vf__oom_find(line, len, ctx_keys[i].key);
        if (!p)
            continue;
        uint64_t v = step_at(p + strlen(ctx_keys[i].key), line + len);
        if (v == VF_UNKNOWN)
            continue;
        if (!any)
            *first = v;
        *last = v;
        any = true;
    }
    return any;
}

/* Start of the line holding p, within [a, p]. */
static const char *line_start(const char *a, const char *p)
{
    const char *nl = memrchr(a, '\n', (size_t)(p - a));
    return nl ? nl + 1 : a;
}

/* Whether key occurs in [a, z) (whole lines) inside the part of a line do_line reads. */
static bool region_has(const char *a, const char *z, const char *key)
{
    size_t n = strlen(key);
    for (const char *q = a; (size_t)(z - q) >= n;) {
        const char *x = memchr(q, key[0], (size_t)(z - q) - n + 1);
        if (!x)
            return false;
        if (!memcmp(x, key, n) && (size_t)(x + n - line_start(a, x)) <= VF_OOM_MAX_LINE)
            return true;
        q = x + 1;
    }
    return false;
}

static uint64_t count_lines(const char *a, const char *z)
{
    uint64_t n = 0;
    for (const char *q = a; (q = memchr(q, '\n', (size_t)(z - q))) != NULL; q++)
        n++;
    return n;
}

/* Applies the whole lines [a, z), none holding a long key and none in an event's hint
 * window, as do_line would: line count, steps (first, last, current), strongest hint. */
static void resolve(struct vf_oom_scan *s, const char *a, const char *z)
{
    if (a >= z)
        return;
    s->lineno += count_lines(a, z);
    uint64_t f, l;
    /* every K_STEP key holds "tep" (checked at open) */
    if (s->ctx.first_step == VF_UNKNOWN) {
        for (const char *q = a; q < z;) {
            const char *t = memmem(q, (size_t)(z - q), "tep", 3);
            if (!t)
                break;
            const char *ls = line_start(a, t), *le = memchr(t, '\n', (size_t)(z - t));
            if (line_steps(s, ls, line_len(ls, le), &f, &l)) {
                s->ctx.first_step = f;
                break;
            }
            q = le + 1;
        }
    }
    if (s->ctx.first_step != VF_UNKNOWN) {
        for (const char *q = z; q - a >= 3;) {
            const char *t = memrchr(a + 2, 'p', (size_t)(q - a - 2));
            if (!t)
                break;
            if (t[-1] != 'e' || t[-2] != 't') {
                q = t;
                continue;
            }
            const char *ls = line_start(a, t), *le = memchr(t, '\n', (size_t)(z - t));
            if (line_steps(s, ls, line_len(ls, le), &f, &l)) {
                s->ctx.last_step = s->cur_step = l;
                break;
            }
            q = ls;
        }
    }
    for (size_t i = 0; i < N_CTX_KEYS; i++) {
        const struct ctx_key *k = &ctx_keys[i];
        if (k->kind == K_HINT && strlen(k->key) < LONG_MIN &&
            hint_strength(k->arg) > hint_strength(s->hint) && region_has(a, z, k->key))
            s->hint = k->arg;
    }
}

/* Whether the next line is in the hint window of the last event (do_line must read it). */
static bool in_window(const struct vf_oom_scan *s)
{
    const struct vf_oom_event *ev =
        s->n_total ? &s->ev[(s->n_total - 1) % VF_OOM_MAX_EVENTS] : NULL;
    return ev && s->lineno < ev->line + HINT_AFTER;
}

/* Complete lines [b, e) (e just past a newline). */
static void scan_block(struct vf_oom_scan *s, const char *b, const char *e)
{
    const char *cur = b;
    while (cur < e) {
        if (in_window(s)) {
            const char *nl = memchr(cur, '\n', (size_t)(e - cur));
            size_t n = (size_t)(nl - cur);
            do_line(s, cur, n < VF_OOM_MAX_LINE ? n : VF_OOM_MAX_LINE);
            cur = nl + 1;
            continue;
        }
        const char *hit = find_long(s, cur, (size_t)(e - cur));
        if (!hit)
            break;
        const char *ls = line_start(cur, hit), *le = memchr(hit, '\n', (size_t)(e - hit));
        resolve(s, cur, ls);
        size_t n = (size_t)(le - ls);
        do_line(s, ls, n < VF_OOM_MAX_LINE ? n : VF_OOM_MAX_LINE);
        cur = le + 1;
    }
    resolve(s, cur, e);
}

enum vf_err vf_oom_scan_feed(struct vf_oom_scan *s, const char *buf, size_t len,
                             struct vf_error *err)
{
    if (!s || (!buf && len))
        return vf__errf(err, VF_EINVAL, "oom scan: bad arguments");
    const char *p = buf, *end = buf + len;
    if (p < end && s->pend_open) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) {
            pend_add(s, p, (size_t)(end - p));
            return VF_OK;
        }
        pend_add(s, p, (size_t)(nl - p));
        do_line(s, s->pend, s->pend_len);
        s->pend_len = 0;
        s->pend_open = false;
        p = nl + 1;
    }
    if (p >= end)
        return VF_OK;
    const char *last = memrchr(p, '\n', (size_t)(end - p));
    if (last) {
        scan_block(s, p, last + 1);
        p = last + 1;
    }
    if (p < end)
        pend_add(s, p, (size_t)(end - p));
    return VF_OK;
}

enum vf_err vf_oom_scan_finish(struct vf_oom_scan *s, const struct vf_oom_event **events,
                               size_t *n_kept, uint64_t *n_total, const struct vf_oom_context **ctx,
                               struct vf_error *err)
{
    if (!s)
        return vf__errf(err, VF_EINVAL, "oom scan: bad arguments");
    if (s->pend_open) {
        do_line(s, s->pend, s->pend_len);
        s->pend_len = 0;
        s->pend_open = false;
    }
    size_t n = s->n_total < VF_OOM_MAX_EVENTS ? (size_t)s->n_total : VF_OOM_MAX_EVENTS;
    struct vf_oom_event *out = NULL;
    if (n) {
        out = vf_arena_alloc(s->arena, n * sizeof *out);
        if (!out)
            return vf__errf(err, VF_ENOMEM, "oom scan: out of memory");
        uint64_t first = s->n_total - n;
        for (size_t i = 0; i < n; i++)
            out[i] = s->ev[(first + i) % VF_OOM_MAX_EVENTS];
    }
    s->ctx.model = *s->model ? s->model : NULL;
    s->ctx.node_type = *s->node ? s->node : NULL;
    s->ctx.tool_version = *s->version ? s->version : NULL;
    if (events)
        *events = out;
    if (n_kept)
        *n_kept = n;
    if (n_total)
        *n_total = s->n_total;
    if (ctx)
        *ctx = &s->ctx;
    return VF_OK;
}
