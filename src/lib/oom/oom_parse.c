/* SPDX-License-Identifier: Apache-2.0 */
/*
 * oom_parse.c - the streaming OOM log scanner (vf_oom_scan_*): line assembly across feeds,
 * the block search (oom_search.c) run over whole lines as they are, CRs and ANSI codes in
 * place, so ordinary lines cost a fraction of one pass (steps resolved per run of lines, only
 * the lines around a hit normalised), a per-line Wu-Manber prefilter, the pattern rows of
 * oom_patterns.c (a repeated text read once: a memo), merging of multi-line messages, tool
 * hints and the log context (model, context length, batch, resolution, steps, versions).
 *
 * Memory is fixed at open: the partial line (VF_OOM_MAX_LINE), the event ring
 * (VF_OOM_MAX_EVENTS with their texts), the memo and the prefilter tables. Nothing grows
 * with input.
 */
#define _GNU_SOURCE /* memmem, memrchr */
#include "oom.h"

#include <pthread.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define TEXT_MAX   320 /* bytes of a message kept in an event */
#define STR_MAX    256 /* model name / version */
#define MAX_PATS   192 /* prefilter patterns (MASK_WORDS 64-bit words) */
#define MASK_WORDS 3
#define HINT_AFTER 8 /* lines after an event whose tool hints still refine it */
#define LONG_MIN   5 /* keys this long feed the chunk prefilter; shorter ones are lazy */
/* A line longer than VF_OOM_MAX_LINE is read in windows around each key found in it. */
#define WIN_BEFORE ((size_t)2 << 10)
#define WIN_AFTER  ((size_t)6 << 10)
/* A wrapped message: up to JOIN_LINES lines, JOIN_MAX bytes, joined with spaces. A joined
 * line that adds nothing still belongs to the message when the line before it was wrapped,
 * at least JOIN_WIDTH bytes long. */
#define JOIN_LINES    16
#define JOIN_MAX      2048
#define JOIN_WIDTH    40
#define TF_DUMP_LINES 65536 /* TensorFlow's allocator dump after its failure, in lines */
#define TAIL_MAX      2048
#define HALF_MIN      12 /* a trigger half shorter than this is too common to look for */
#define NORM_CHUNK    ((size_t)64 << 10) /* bytes normalised at a time (oom_input.c) */
/* The readings (prefilter masks, row, numbers) of the last MEMO_N texts up to MEMO_TEXT bytes
 * long: a message repeated byte for byte (a retry loop, a worker per GPU) is parsed once. */
#define MEMO_N    16
#define MEMO_TEXT 512

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
    K_JOB,
    K_PHASE,
    K_FOLLOW,
    K_BNB_CPU,
    K_TF_STAT,
    K_SYMPTOM,
    K_ANCHOR
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
    {"diffusers/", K_HINT, "diffusers"},
    /* the job a traceback shows (issue 19): training beats image/video beats inference */
    {"backward(", K_JOB, "train"},
    {"optimizer.step", K_JOB, "train"},
    {"training_step", K_JOB, "train"},
    {"_inner_training_loop", K_JOB, "train"},
    {"trainer.train", K_JOB, "train"},
    {"generation/utils.py", K_JOB, "infer"},
    {".generate(", K_JOB, "infer"},
    {"inference_mode", K_JOB, "infer"},
    {"diffusers/", K_JOB, "image"},
    {"KSampler", K_JOB, "image"},
    {"SamplerCustom", K_JOB, "image"},
    {"VAEDecode", K_JOB, "image"},
    {"stable-diffusion-webui", K_JOB, "image"},
    {"sd_samplers", K_JOB, "image"},
    {"WanVideo", K_JOB, "video"},
    {"HunyuanVideo", K_JOB, "video"},
    {"HyVideo", K_JOB, "video"},
    /* the phase (or llama.cpp buffer) that was being allocated; the last seen wins */
    {"load_tensors", K_PHASE, "weights"},
    {"llama_model_load", K_PHASE, "weights"},
    {"for kv cache", K_PHASE, "kv"},
    {"llama_kv_cache", K_PHASE, "kv"},
    {"kv_self", K_PHASE, "kv"},
    {"gallocr", K_PHASE, "compute"},
    {"compute buffer", K_PHASE, "compute"},
    {"VAEDecode", K_PHASE, "decode"},
    {"vae.decode", K_PHASE, "decode"},
    /* eager attention in a traceback (transformers' eager_attention_forward, the models'
     * own attn_weights = matmul(query, key^T) lines) */
    {"eager_attention_forward", K_PHASE, "attention"},
    {"attn_weights = torch.matmul", K_PHASE, "attention"},
    /* moving a whole diffusers pipeline to the card (the traceback's pipe.to(...) line) */
    {"pipe.to(", K_PHASE, "load"},
    {"Currently allocated", K_FOLLOW, "allocated"},
    {"Requested     ", K_FOLLOW, "requested"},
    {"Device limit", K_FOLLOW, "total"},
    {"Free (according to CUDA)", K_FOLLOW, "free"},
    {"total allocation:", K_FOLLOW, "allocated"},
    {"compiled without GPU support", K_BNB_CPU, NULL},
    /* symptoms that are not errors (symptoms.c) */
    {"% CPU/GPU", K_SYMPTOM, "ollama_cpu_split"},
    {"MiB / ", K_SYMPTOM, "nvidia_smi"},
    {"No running processes found", K_SYMPTOM, "smi_noproc"},
    {"Processes:", K_SYMPTOM, "smi_procs"},
    {"MiB |", K_SYMPTOM, "smi_row"},
    {"KV cache size:", K_SYMPTOM, "vllm_startup"},
    {"Maximum concurrency for", K_SYMPTOM, "vllm_startup"},
    /* llama.cpp's "retrying without pipeline parallelism": one of these stays whole
     * wherever a wrap breaks it */
    {"retrying without", K_SYMPTOM, "recovered"},
    {"without pipeline parallelism", K_SYMPTOM, "recovered"},
    {"this is not a failure", K_SYMPTOM, "not_a_failure"},
    /* TensorFlow's allocator "Stats:" block, lines of their own after a long dump */
    {"Limit:", K_TF_STAT, "total"},
    {"InUse:", K_TF_STAT, "allocated"},
    /* words that start an out-of-memory message whose trigger a wrap may have split: the
     * line opens a join, and the lines after it are read with it (join_line) */
    {"out of memory", K_ANCHOR, NULL},
    {"Out of memory", K_ANCHOR, NULL},
    {"OutOfMemory", K_ANCHOR, NULL},
    {"out of resource", K_ANCHOR, NULL},
    {"Tried to allocate", K_ANCHOR, NULL},
    {"ailed to allocate", K_ANCHOR, NULL},
    {"nable to allocate", K_ANCHOR, NULL},
    {"ran out of", K_ANCHOR, NULL},
    {"Memory cgroup", K_ANCHOR, NULL},
    {"oom-kill", K_ANCHOR, NULL},
    {"oom_reaper", K_ANCHOR, NULL},
    {"Killed process", K_ANCHOR, NULL},
    {"OOM when", K_ANCHOR, NULL},
    {"Resource exhausted", K_ANCHOR, NULL},
    {"llama runner", K_ANCHOR, NULL},
    {"No available memory", K_ANCHOR, NULL},
    {"max seq len", K_ANCHOR, NULL},
    {"Free memory on", K_ANCHOR, NULL},
};
#define N_CTX_KEYS (sizeof ctx_keys / sizeof ctx_keys[0])
_Static_assert(N_CTX_KEYS < 255, "context keys are numbered in a byte (prefilter.pat_key)");

/* Tool hints, weakest first: a stronger one replaces a weaker one already seen. */
static const char *const hint_rank[] = {"tensorflow", "accelerate", "diffusers", "deepspeed",
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

/* The prefilter: the same for every scanner, so it is built once per process
 * (prefilter_build, under pthread_once) and shared read-only; its tables (two Wu-Manber sets
 * of 128 KiB) were most of the cost of an open when every scanner built its own (issue 17:
 * the OOM fuzz target 1,290 -> 13,600 executions/s, every server explain request). */
struct prefilter {
    /* `all` per line, `lng` (no short keys) over whole chunks */
    const char *pats[MAX_PATS];
    uint8_t plen[MAX_PATS];
    uint32_t pre[MAX_PATS]; /* the first 4 bytes of each pattern, a cheap first check */
    size_t n_pats;
    struct wm all_wm;
    const struct wm *all; /* &all_wm */
    struct vf__ms lng;    /* the patterns of LONG_MIN bytes or more, over whole blocks */
    int row_pat[64];      /* prefilter pattern of each row's trig[0] */
    int key_pat[N_CTX_KEYS];
    /* the patterns that are context keys with an effect (not K_ANCHOR), and for each pattern
     * its first such key (table order) and the next key of the same pattern */
    uint64_t ctx_pats[MASK_WORDS];
    uint8_t pat_key[MAX_PATS], key_next[N_CTX_KEYS]; /* 1-based, 0: none */
    /* anchors: words that may open a wrapped message (K_ANCHOR keys, and each half of a
     * row's trigger, so that one half stays whole wherever a wrap breaks it) */
    uint64_t anchors[MASK_WORDS];
    char halves[64][2][128];
    /* bit a << 8 | b: some key holds the bytes a, b side by side (raw blocks: whether
     * removing an escape sequence between a and b may make a key) */
    uint64_t pairs[(1u << 16) / 64];
    enum vf_err rc; /* of the build, with msg */
    char msg[128];
};

/* What filter and match_line read in one text: a pure function of its bytes (and, for the
 * joined text, of where its lines start), so a repeated text is read from the memo. */
struct reading {
    bool hit;                    /* the prefilter found a key */
    uint64_t pre[MASK_WORDS];    /* the keys it found (context_line reads them) */
    uint64_t post[MASK_WORDS];   /* the mask match_line left (keys after a quote in code) */
    const struct vf__oom_row *r; /* the row it matched, NULL if none */
    size_t off;                  /* where the message starts */
    struct vf__oom_m m;          /* the row's reading */
};
struct memo {
    uint64_t hash, used; /* used: when last read (0: empty) */
    size_t len;
    unsigned n_at;
    uint16_t at[JOIN_LINES + 4];
    struct reading rd;
    char text[MEMO_TEXT];
};

struct vf_oom_scan {
    const struct prefilter *pf;
    struct memo *memo; /* MEMO_N entries */
    uint64_t memo_clock;
    const char *dirty_from, *dirty_at; /* next_dirty's last answer */
    /* line assembly */
    char *pend; /* VF_OOM_MAX_LINE bytes (this and the buffers below: not zeroed at open) */
    size_t pend_len;
    bool pend_open;    /* a partial line is pending */
    bool pend_counted; /* its windows were read already (it outgrew pend): lineno counts it */
    size_t pend_from;  /* keys before this offset of pend were read in a window */
    uint64_t lineno;
    struct vf__oom_norm norm;
    char *nbuf; /* NORM_CHUNK bytes */
    /* a message read over several lines (wrapped): the text so far, its lines */
    char join[JOIN_MAX];
    size_t join_len;
    uint16_t join_at[JOIN_LINES + 4]; /* where each of its lines starts in join */
    unsigned n_at;
    size_t join_prev; /* bytes of the line before the last one joined (JOIN_WIDTH) */
    unsigned join_lines;
    uint64_t join_first, join_last; /* its first and last line; join_last 0: none open */
    bool join_event;                /* the last event was read from this join */
    uint64_t join_new;              /* n_total when the join made the event (0: it did not) */
    const char *blk;                /* the block of whole lines being scanned (or NULL) */
    /* the bytes before the pending line (the end of the last block), so that a last line
     * without its newline still sees the lines before it (back_lines) */
    char tail[TAIL_MAX], *scratch; /* scratch: 2 * TAIL_MAX bytes */
    size_t tail_len;
    /* events */
    struct vf_oom_event ev[VF_OOM_MAX_EVENTS];
    char text[VF_OOM_MAX_EVENTS][TEXT_MAX];
    unsigned row_flags[VF_OOM_MAX_EVENTS];
    unsigned merge[VF_OOM_MAX_EVENTS];
    const struct vf__oom_row *row[VF_OOM_MAX_EVENTS];  /* the row that read it last */
    const struct vf__oom_row *head[VF_OOM_MAX_EVENTS]; /* the row of its first message */
    uint64_t last_line[VF_OOM_MAX_EVENTS];             /* its last line (a wrapped message) */
    uint64_t n_total;
    /* context */
    struct vf_oom_context ctx;
    char model[STR_MAX], version[STR_MAX], node[STR_MAX];
    bool version_explicit, bnb_cpu;
    const char *hint; /* strongest tool hint seen */
    uint64_t cur_step;
    struct vf_arena *arena;
    /* symptoms (symptoms.c) */
    struct vf_oom_symptom sym[VF_OOM_MAX_SYMPTOMS];
    char sym_text[VF_OOM_MAX_SYMPTOMS][TEXT_MAX], sym_name[VF_OOM_MAX_SYMPTOMS][64];
    size_t n_sym;
    bool smi_procs; /* nvidia-smi's process table header seen */
};

/* ------------------------------------------------------------ small helpers */

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

/* How many bytes from p (at most n, at most max) are printable ASCII (0x20..0x7e); p[0] is. */
static size_t ascii_run(const unsigned char *p, size_t n, size_t max)
{
    if (n > max)
        n = max;
    size_t i = 0;
#if defined(__SSE2__)
    /* c - 0x20 (wrapping) below 0x5f, compared signed after flipping the top bit */
    const __m128i lo = _mm_set1_epi8(0x20), flip = _mm_set1_epi8((char)0x80),
                  lim = _mm_set1_epi8((char)(0x5f ^ 0x80));
    for (; n - i >= 16; i += 16) {
        __m128i v =
            _mm_xor_si128(_mm_sub_epi8(_mm_loadu_si128((const __m128i *)(p + i)), lo), flip);
        unsigned bad = (unsigned)_mm_movemask_epi8(_mm_cmpgt_epi8(lim, v)) ^ 0xffff;
        if (bad)
            return i + (size_t)__builtin_ctz(bad);
    }
#endif
    while (i < n && p[i] >= 0x20 && p[i] < 0x7f)
        i++;
    return i;
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
        if (c >= 0x20 && c < 0x7f) { /* printable ASCII, most of every message: as one run */
            size_t run = ascii_run(p, (size_t)(e - p), cap - 5 - o);
            memcpy(dst + o, p, run);
            o += run;
            p += run;
            continue;
        }
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

/* Start of the line holding p, within [a, p]. */
static const char *line_start(const char *a, const char *p)
{
    const char *nl = memrchr(a, '\n', (size_t)(p - a));
    return nl ? nl + 1 : a;
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
    size_t n = strlen(p);
    for (size_t i = 0; i < s->n_pats; i++)
        if (s->plen[i] == n && !memcmp(s->pats[i], p, n))
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
static bool filter(const struct vf_oom_scan *scan, const char *text, size_t n,
                   uint64_t mask[MASK_WORDS])
{
    const struct prefilter *s = scan->pf;
    const struct wm *w = s->all;
    const unsigned char *t = (const unsigned char *)text;
    size_t m = w->m, i = m - 1;
    bool any = false;
    memset(mask, 0, MASK_WORDS * sizeof *mask);
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

/* Start of the leftmost pattern of the `lng` set (oom_search.c) in text[0..n), or NULL. */
static const char *find_long(const struct vf_oom_scan *scan, const char *text, size_t n)
{
    return vf__ms_find(&scan->pf->lng, text, n);
}

static bool bit(const uint64_t mask[MASK_WORDS], int k)
{
    return k >= 0 && (mask[k >> 6] >> (k & 63) & 1);
}

static void set_bit(uint64_t mask[MASK_WORDS], int k)
{
    mask[k >> 6] |= (uint64_t)1 << (k & 63);
}

/* The half without its leading short words ("No available memory" -> "available memory",
 * "for the cache blocks" -> "cache blocks"): a key that starts with a word is rarer in
 * ordinary lines, and cheaper for the prefilter, than one that starts "the ". */
static const char *strip_short(const char *h)
{
    for (;;) {
        size_t n = strcspn(h, " ");
        if (n > 3 || !h[n])
            return h;
        h += n + 1;
    }
}

/* The anchors: the K_ANCHOR keys, and the two halves of each row trigger of several words
 * (split at the space nearest its middle: wherever one wrap breaks it, one half stays
 * whole), each without its leading short words; one under HALF_MIN bytes is too common to
 * look for. */
static bool add_anchors(struct prefilter *s)
{
    for (size_t i = 0; i < N_CTX_KEYS; i++)
        if (ctx_keys[i].kind == K_ANCHOR)
            set_bit(s->anchors, s->key_pat[i]);
    for (size_t i = 0; i < vf__oom_n_rows && i < 64; i++) {
        const char *t = vf__oom_rows[i].trig[0];
        size_t n = strlen(t), best = 0;
        for (size_t j = 1; j + 1 < n; j++)
            if (t[j] == ' ' && (!best || (j > n / 2 ? j - n / 2 : n / 2 - j) <
                                             (best > n / 2 ? best - n / 2 : n / 2 - best)))
                best = j;
        if (!best || n >= sizeof s->halves[i][0])
            continue;
        memcpy(s->halves[i][0], t, best);
        s->halves[i][0][best] = 0;
        memcpy(s->halves[i][1], t + best + 1, n - best);
        for (int h = 0; h < 2; h++) {
            const char *w = strip_short(s->halves[i][h]);
            if (strlen(w) < HALF_MIN)
                continue;
            int k = add_pat(s, w);
            if (k < 0)
                return false;
            set_bit(s->anchors, k);
        }
    }
    return vf__oom_n_rows <= 64;
}

/* ---------------------------------------------------------------- open */

static struct prefilter prefilter;
static pthread_once_t prefilter_once = PTHREAD_ONCE_INIT;

/* The build's error in prefilter.rc and .msg (the table is static: checked at every open). */
static void prefilter_fail(const char *msg)
{
    prefilter.rc = VF_ELIMIT;
    snprintf(prefilter.msg, sizeof prefilter.msg, "oom scan: %s", msg);
}

/* Whether prefilter pattern i is a tool hint's key (all are searched over whole blocks: the
 * lines that hold one are read one by one). */
static bool hint_pat(const struct prefilter *s, size_t i)
{
    for (size_t k = 0; k < N_CTX_KEYS; k++)
        if (ctx_keys[k].kind == K_HINT && s->key_pat[k] == (int)i)
            return true;
    return false;
}

static void prefilter_build(void)
{
    struct prefilter *s = &prefilter;
    s->all = &s->all_wm;
    if (vf__oom_n_rows > sizeof s->row_pat / sizeof s->row_pat[0])
        return prefilter_fail("too many pattern rows");
    for (size_t i = 0; i < vf__oom_n_rows; i++)
        s->row_pat[i] = add_pat(s, vf__oom_rows[i].trig[0]);
    for (size_t i = 0; i < N_CTX_KEYS; i++)
        s->key_pat[i] = add_pat(s, ctx_keys[i].key);
    for (size_t i = 0; i < vf__oom_n_rows; i++)
        if (s->row_pat[i] < 0 || s->plen[s->row_pat[i]] < LONG_MIN)
            return prefilter_fail("prefilter table full");
    if (!add_anchors(s))
        return prefilter_fail("prefilter table full (anchors)");
    for (size_t i = 0; i < N_CTX_KEYS; i++) {
        /* short keys are resolved lazily (resolve()): only steps and tool hints can be */
        size_t n = strlen(ctx_keys[i].key);
        bool ok = n >= LONG_MIN || (ctx_keys[i].kind == K_STEP && strstr(ctx_keys[i].key, "tep")) ||
                  ctx_keys[i].kind == K_HINT;
        if (!ok || s->key_pat[i] < 0)
            return prefilter_fail("bad context key");
    }
    for (size_t i = N_CTX_KEYS; i-- > 0;) { /* backwards: each list in table order */
        if (ctx_keys[i].kind == K_ANCHOR)
            continue;
        set_bit(s->ctx_pats, s->key_pat[i]);
        s->key_next[i] = s->pat_key[s->key_pat[i]];
        s->pat_key[s->key_pat[i]] = (uint8_t)(i + 1);
    }
    for (size_t i = 0; i < s->n_pats; i++)
        for (size_t j = 0; j < s->plen[i]; j++) {
            unsigned char c = (unsigned char)s->pats[i][j];
            if (c == '\n' || c == '\r' || c == 0x1b)
                return prefilter_fail("a key holds a line break or an escape byte");
            if (j + 1 == s->plen[i])
                continue;
            unsigned pr = (unsigned)c << 8 | (unsigned char)s->pats[i][j + 1];
            s->pairs[pr >> 6] |= (uint64_t)1 << (pr & 63);
        }
    build_wm(s, &s->all_wm, 0);
    const char *lp[MAX_PATS];
    uint8_t ll[MAX_PATS];
    size_t n = 0;
    for (size_t i = 0; i < s->n_pats; i++)
        if (s->plen[i] >= LONG_MIN || hint_pat(s, i))
            lp[n] = s->pats[i], ll[n++] = s->plen[i];
    if (!vf__ms_build(&s->lng, lp, ll, n))
        return prefilter_fail("prefilter table full (search)");
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
    /* the big buffers in one piece, not zeroed: each is filled before it is read */
    char *big = vf__arena_take(a, VF_OOM_MAX_LINE + NORM_CHUNK + 2 * TAIL_MAX);
    if (!big)
        return vf__errf(err, VF_ENOMEM, "oom scan: out of memory (buffers)");
    s->pend = big;
    s->memo = vf_arena_alloc(a, MEMO_N * sizeof *s->memo);
    if (!s->memo)
        return vf__errf(err, VF_ENOMEM, "oom scan: out of memory (memo)");
    for (size_t i = 0; i < MEMO_N; i++)
        s->memo[i].used = 0;
    s->nbuf = s->pend + VF_OOM_MAX_LINE;
    s->scratch = s->nbuf + NORM_CHUNK;
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
    if (ev && s->lineno - s->last_line[(s->n_total - 1) % VF_OOM_MAX_EVENTS] <= HINT_AFTER)
        ev->tool = refine_tool(ev->tool, tool);
}

/* The job a line shows (struct vf_oom_context.job): the strongest seen so far. */
static void key_job(struct vf_oom_scan *s, const char *job)
{
    static const char *const rank[] = {"infer", "image", "video", "train"};
    int have = -1, got = -1;
    for (int i = 0; i < 4; i++) {
        if (s->ctx.job && !strcmp(s->ctx.job, rank[i]))
            have = i;
        if (!strcmp(job, rank[i]))
            got = i;
    }
    if (got > have)
        s->ctx.job = job;
}

/* A figure on a line after the message ("Currently allocated     : 1.2 GiB"). */
static void key_follow(struct vf_oom_scan *s, const char *field, const char *p, const char *end)
{
    struct vf_oom_event *ev = last_event(s);
    if (!ev || s->lineno - s->last_line[(s->n_total - 1) % VF_OOM_MAX_EVENTS] > 12)
        return;
    const char *c = memchr(p, ':', (size_t)(end - p));
    uint64_t *dst = follow_field(ev, field);
    if (dst)
        take(dst, vf__oom_bytes_at(c ? c + 1 : p, end, 0, NULL));
}

/* "Limit:        10990990132" / "InUse: ..." at the start of a line, in the dump after a
 * TensorFlow allocator failure (TF_DUMP_LINES): the pool's limit and what was in use. */
static void key_tf_stat(struct vf_oom_scan *s, const char *field, const char *line, const char *p,
                        const char *end)
{
    struct vf_oom_event *ev = last_event(s);
    const char *k = p - 6;
    while (line < k && (*line == ' ' || *line == '\t'))
        line++;
    if (!ev || line != k || strcmp(ev->source, "tensorflow") ||
        s->lineno - s->last_line[(s->n_total - 1) % VF_OOM_MAX_EVENTS] > TF_DUMP_LINES)
        return;
    uint64_t *dst = follow_field(ev, field);
    if (dst && *dst == VF_UNKNOWN)
        *dst = vf__oom_u64_at(p, end, NULL);
}

/* A new symptom of this kind read from the line (not counted until the caller keeps it),
 * or NULL when the table is full. */
static struct vf_oom_symptom *symptom_new(struct vf_oom_scan *s, const char *kind, const char *line,
                                          size_t len)
{
    if (s->n_sym >= VF_OOM_MAX_SYMPTOMS)
        return NULL;
    struct vf_oom_symptom *y = &s->sym[s->n_sym];
    memset(y, 0, sizeof *y);
    y->kind = kind;
    y->line = s->lineno;
    y->used_bytes = y->total_bytes = y->kv_tokens = y->per_request_tokens = VF_UNKNOWN;
    y->cpu_percent = y->gpu_percent = y->gpu = y->processes = -1;
    copy_text(s->sym_text[s->n_sym], TEXT_MAX, line, len);
    y->text = s->sym_text[s->n_sym];
    return y;
}

/* The last symptom of a kind, or NULL. */
static struct vf_oom_symptom *symptom_last(struct vf_oom_scan *s, const char *kind)
{
    for (size_t i = s->n_sym; i-- > 0;)
        if (!strcmp(s->sym[i].kind, kind))
            return &s->sym[i];
    return NULL;
}

/* nvidia-smi's process table: every GPU's row count (n < 0: one more row). */
static void smi_processes(struct vf_oom_scan *s, int n)
{
    for (size_t i = 0; i < s->n_sym; i++)
        if (!strcmp(s->sym[i].kind, "nvidia_smi"))
            s->sym[i].processes = n < 0 ? s->sym[i].processes + 1 : n;
}

/* A run that recovered: llama.cpp's buffer failures just before are no events. */
static void recovered(struct vf_oom_scan *s)
{
    while (s->n_total) {
        const struct vf_oom_event *ev = last_event(s);
        if (strcmp(ev->source, "ggml-cuda") || s->lineno - ev->line > 32)
            break;
        s->n_total--;
    }
    s->join_last = 0; /* the join read those lines: it ends */
    s->join_event = false;
}

/* A symptom key (symptoms.c reads the line). */
static void key_symptom(struct vf_oom_scan *s, const char *kind, const char *line, size_t len)
{
    struct vf_oom_symptom *y = NULL;
    if (!strcmp(kind, "smi_noproc") || !strcmp(kind, "smi_procs")) {
        smi_processes(s, 0);
        s->smi_procs = kind[4] == 'p';
    } else if (!strcmp(kind, "smi_row")) {
        if (s->smi_procs && !vf__oom_find(line, len, "MiB / "))
            smi_processes(s, -1);
    } else if (!strcmp(kind, "ollama_cpu_split")) {
        if ((y = symptom_new(s, kind, line, len)) && vf__symptom_ollama(y, line, len)) {
            copy_token(s->sym_name[s->n_sym], sizeof s->sym_name[0], line, line + len, " \t");
            y->name = s->sym_name[s->n_sym++];
        }
    } else if (!strcmp(kind, "nvidia_smi")) {
        if ((y = symptom_new(s, kind, line, len)) && vf__symptom_smi(y, line, len)) {
            if (y->gpu < 0)
                y->gpu = symptom_last(s, kind) ? symptom_last(s, kind)->gpu + 1 : 0;
            s->smi_procs = false;
            s->n_sym++;
        }
    } else if (!strcmp(kind, "vllm_startup")) {
        y = symptom_last(s, kind);
        if (y && s->lineno - y->line <= 64)
            vf__symptom_vllm(y, line, len);
        else if ((y = symptom_new(s, kind, line, len)) && vf__symptom_vllm(y, line, len))
            s->n_sym++;
    } else if (!symptom_last(s, kind) && (y = symptom_new(s, kind, line, len))) {
        if (!strcmp(kind, "recovered"))
            recovered(s);
        s->n_sym++; /* recovered, not_a_failure: the first says it */
    }
}

/* The context keys the prefilter found in the line (mask), each read by its kind. */
static void context_line(struct vf_oom_scan *s, const char *line, size_t len,
                         const uint64_t mask[MASK_WORDS])
{
    const char *end = line + len;
    /* the keys of the patterns found, in table order (a later key's effect wins) */
    uint8_t keys[N_CTX_KEYS] = {0};
    size_t n = 0;
    for (size_t w = 0; w < MASK_WORDS; w++)
        for (uint64_t b = mask[w] & s->pf->ctx_pats[w]; b; b &= b - 1)
            for (unsigned k = s->pf->pat_key[w * 64 + (unsigned)__builtin_ctzll(b)]; k;
                 k = s->pf->key_next[k - 1]) {
                size_t j = n++;
                for (; j && keys[j - 1] > k - 1; j--)
                    keys[j] = keys[j - 1];
                keys[j] = (uint8_t)(k - 1);
            }
    for (size_t x = 0; x < n; x++) {
        size_t i = keys[x];
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
        case K_JOB:
            key_job(s, k->arg);
            break;
        case K_PHASE:
            s->ctx.phase = k->arg;
            break;
        case K_FOLLOW:
            key_follow(s, k->arg, p, end);
            break;
        case K_BNB_CPU:
            s->bnb_cpu = true;
            break;
        case K_TF_STAT:
            key_tf_stat(s, k->arg, line, p, end);
            break;
        case K_SYMPTOM:
            key_symptom(s, k->arg, line, len);
            break;
        case K_ANCHOR:
            break;
        }
    }
}

/* ---------------------------------------------------------------- rows */

/* Whether the row's reading m says something the event does not know yet. */
static bool adds_to(const struct vf_oom_event *ev, const struct vf__oom_m *m)
{
    const struct vf_oom_event *n = &m->ev;
    const uint64_t have[] = {ev->requested_bytes,    ev->total_bytes,
                             ev->free_bytes,         ev->allocated_bytes,
                             ev->reserved_bytes,     ev->reserved_unallocated_bytes,
                             ev->non_pytorch_bytes,  ev->allowed_bytes,
                             ev->private_pool_bytes, ev->outside_pytorch_bytes};
    const uint64_t got[] = {n->requested_bytes,    n->total_bytes,
                            n->free_bytes,         n->allocated_bytes,
                            n->reserved_bytes,     n->reserved_unallocated_bytes,
                            n->non_pytorch_bytes,  n->allowed_bytes,
                            n->private_pool_bytes, n->outside_pytorch_bytes};
    for (size_t i = 0; i < sizeof have / sizeof have[0]; i++)
        if (have[i] == VF_UNKNOWN && got[i] != VF_UNKNOWN)
            return true;
    if (ev->device < 0 && n->device >= 0)
        return true;
    for (size_t i = 0; i < n->n_procs; i++) {
        bool seen = false;
        for (size_t j = 0; j < ev->n_procs; j++)
            seen |= ev->procs[j].pid == n->procs[i].pid;
        if (!seen)
            return true;
    }
    return false;
}

/* The figures of m into ev (a figure m gives replaces what ev said), new processes added. */
static void take_figures(struct vf_oom_event *ev, const struct vf__oom_m *m)
{
    const struct vf_oom_event *n = &m->ev;
    take(&ev->requested_bytes, n->requested_bytes);
    take(&ev->total_bytes, n->total_bytes);
    take(&ev->free_bytes, n->free_bytes);
    take(&ev->allocated_bytes, n->allocated_bytes);
    take(&ev->reserved_bytes, n->reserved_bytes);
    take(&ev->reserved_unallocated_bytes, n->reserved_unallocated_bytes);
    take(&ev->non_pytorch_bytes, n->non_pytorch_bytes);
    take(&ev->allowed_bytes, n->allowed_bytes);
    take(&ev->private_pool_bytes, n->private_pool_bytes);
    take(&ev->outside_pytorch_bytes, n->outside_pytorch_bytes);
    if (n->device >= 0)
        ev->device = n->device;
    for (size_t i = 0; i < n->n_procs; i++) {
        size_t j = 0;
        while (j < ev->n_procs && ev->procs[j].pid != n->procs[i].pid)
            j++;
        if (j < ev->n_procs && n->procs[i].bytes != VF_UNKNOWN)
            ev->procs[j].bytes = n->procs[i].bytes; /* a later line (or the whole message) */
        else if (j == ev->n_procs && j < VF_OOM_MAX_PROCS)
            ev->procs[ev->n_procs++] = n->procs[i];
    }
}

/* The row r names the event in slot (its pattern, layer, tool and message text). */
static void name_event(struct vf_oom_scan *s, size_t slot, const struct vf__oom_row *r,
                       const char *line, size_t len)
{
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
    copy_text(s->text[slot], TEXT_MAX, line, len);
    ev->text = s->text[slot];
    s->row_flags[slot] = r->flags;
    s->row[slot] = r;
}

static void merge_into(struct vf_oom_scan *s, size_t slot, const struct vf__oom_row *r,
                       const struct vf__oom_m *m, const char *line, size_t len)
{
    struct vf_oom_event *ev = &s->ev[slot];
    take_figures(ev, m);
    if ((s->row_flags[slot] & VF__OOM_WEAK) && !(r->flags & VF__OOM_WEAK)) {
        const char *backend = ev->backend, *source = ev->source;
        name_event(s, slot, r, line, len);
        ev->backend = backend, ev->source = source;
    }
    s->row[slot] = r;
    if (r->merge_lines > s->merge[slot])
        s->merge[slot] = r->merge_lines;
    ev->tool = refine_tool(
        ev->tool, strcmp(r->tool, "pytorch") && strcmp(r->tool, "unknown") ? r->tool : NULL);
}

static void new_event(struct vf_oom_scan *s, const struct vf__oom_row *r, const struct vf__oom_m *m,
                      const char *line, size_t len, uint64_t first)
{
    size_t slot = (size_t)(s->n_total % VF_OOM_MAX_EVENTS);
    s->n_total++;
    s->ev[slot] = m->ev;
    struct vf_oom_event *ev = &s->ev[slot];
    name_event(s, slot, r, line, len);
    s->head[slot] = r;
    ev->line = first;
    ev->step = s->cur_step;
    s->merge[slot] = r->merge_lines;
    s->last_line[slot] = s->lineno;
}

/* What a message says of the run (a version, a context length, a batch). */
static void take_context(struct vf_oom_scan *s, const struct vf__oom_m *m)
{
    if (m->version_hint && !s->version_explicit && strcmp(s->version, m->version_hint)) {
        /* copied as snprintf "%s" would, without its cost on every event of a dense log */
        size_t k = strnlen(m->version_hint, sizeof s->version - 1);
        memcpy(s->version, m->version_hint, k);
        s->version[k] = 0;
    }
    if (m->ctx_tokens != VF_UNKNOWN && m->ctx_tokens <= VF_MAX_CTX_TOKENS)
        s->ctx.ctx_tokens = m->ctx_tokens;
    if (m->batch != VF_UNKNOWN)
        s->ctx.batch = m->batch;
    if (m->utilization > 0)
        s->ctx.gpu_memory_utilization = m->utilization;
}

/*
 * A message read from [line, len), its first line `first`: a later line of the same layer
 * within the event's merge window completes the event before it (F-OOM-03), unless it is
 * the same row again with nothing new - another failure (10,000 identical messages are
 * 10,000 events).
 */
static void apply_match(struct vf_oom_scan *s, const struct vf__oom_row *r,
                        const struct vf__oom_m *m, const char *line, size_t len, uint64_t first)
{
    struct vf_oom_event *prev = last_event(s);
    size_t ps = (size_t)((s->n_total - 1) % VF_OOM_MAX_EVENTS);
    /* the message that opened the event again, after other lines merged into it, is the next
     * failure (llama.cpp retrying: cudaMalloc, gallocr, "failed to allocate compute buffers",
     * then cudaMalloc again) */
    bool again = prev && r == s->head[ps] && s->row[ps] != r;
    if (prev && !again && s->lineno - s->last_line[ps] <= s->merge[ps] &&
        !strcmp(prev->source, r->source) && (s->row[ps] != r || adds_to(prev, m)))
        merge_into(s, ps, r, m, line, len);
    else
        new_event(s, r, m, line, len, first);
    take_context(s, m);
}

/* The first row (table order) the text matches, its reading in *m; NULL if none. */
static const struct vf__oom_row *find_row(const struct vf_oom_scan *s, const char *line, size_t len,
                                          const uint64_t mask[MASK_WORDS], struct vf__oom_m *m)
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
        memset(m, 0, sizeof *m);
        struct vf_oom_event *ev = &m->ev;
        ev->device = -1;
        ev->requested_bytes = ev->total_bytes = ev->free_bytes = ev->allocated_bytes =
            ev->reserved_bytes = ev->reserved_unallocated_bytes = ev->non_pytorch_bytes =
                ev->allowed_bytes = ev->private_pool_bytes = ev->outside_pytorch_bytes = VF_UNKNOWN;
        ev->step = VF_UNKNOWN;
        m->ctx_tokens = m->batch = VF_UNKNOWN;
        if (r->parse && !r->parse(m, line, len, r->flags))
            continue;
        return r;
    }
    return NULL;
}

/* Whether the first occurrence of a code word (raise, return, if (, //, ...) in line[0..n)
 * opens the line or follows a space, tab or '(' - one pass over the line for all of them. */
static bool code_word(const char *line, size_t n)
{
    static const char *const words[] = {"raise ",  "return ", "case ",   "if (", "if(", "elif ",
                                        "except ", "assert ", "#define", "//",   "/*",  "throw "};
    static const uint8_t lens[] = {6, 7, 5, 4, 3, 5, 7, 7, 7, 2, 2, 6};
    unsigned seen = 0;
    for (size_t i = 0; i + 1 < n; i++) {
        char c = line[i];
        if (c != 'r' && c != 'c' && c != 'i' && c != 'e' && c != 'a' && c != '#' && c != '/' &&
            c != 't')
            continue;
        for (size_t w = 0; w < sizeof words / sizeof words[0]; w++) {
            size_t l = lens[w];
            if ((seen >> w & 1) || words[w][0] != c || words[w][1] != line[i + 1] || l > n - i ||
                memcmp(line + i, words[w], l))
                continue;
            seen |= 1u << w; /* only a word's first occurrence counts */
            if (!i || line[i - 1] == ' ' || line[i - 1] == '\t' || line[i - 1] == '(')
                return true;
        }
    }
    return false;
}

/* What in_code finds: not code, code, or a Markdown code span (which a paste of the error
 * itself also is when the message carries its figures: match_line decides). */
enum { NOT_CODE, CODE, SPAN };

/* Whether the text at t is quoted in code, not printed by a failure: a comment, a
 * raise/return/case/if statement, a Markdown code span, or a string literal opening right
 * before it in a line of code ("# handle CUDA_ERROR_OUT_OF_MEMORY", a traceback's quoted
 * source, a list of messages). Read on t's own line (from phys; a joined text holds
 * several), not before `from`; `end` ends the text. */
static int in_code(const char *from, const char *phys, const char *t, const char *end)
{
    const char *line = phys > from ? phys : from;
    size_t n = (size_t)(t - line);
    /* a literal opened on the line before: raise ValueError( / "No available memory ..." */
    if (phys > from + 1 && (t[-1] == '"' || t[-1] == '\'') && t - 1 == phys &&
        (phys[-2] == '(' || phys[-2] == ','))
        return CODE;
    if (code_word(line, n))
        return CODE;
    size_t i = 0;
    while (i < n && (line[i] == ' ' || line[i] == '\t' || line[i] == '*'))
        i++;
    if (i < n && line[i] == '#' && i + 1 < n && line[i + 1] == ' ')
        return CODE; /* a comment line (or a heading quoting a message) */
    for (const char *h = line; (h = memchr(h, '#', (size_t)(t - h))) != NULL; h++)
        if (h > line && h[-1] == ' ' && h + 1 < t && h[1] == ' ')
            return CODE; /* a comment after code */
    size_t ticks = 0, after = 0;
    const char *close = NULL;
    for (size_t k = 0; k < n; k++)
        ticks += line[k] == '`';
    for (const char *q = t; q < end && *q != '\n'; q++)
        if (*q == '`' && !after++)
            close = q;
    /* the first tick after it closes a span (no letter follows it) */
    bool closes =
        close && (close + 1 == end || !((close[1] | 32) >= 'a' && (close[1] | 32) <= 'z'));
    if (ticks % 2 || (after % 2 && closes))
        return SPAN; /* in a code span of Markdown (one a wrap opened on the line before) */
    if (!n || (t[-1] != '"' && t[-1] != '\''))
        return NOT_CODE;
    /* a JSON value, "error":"...": an API's error body (Ollama's 500 answers), not code */
    const char *c = t - 2;
    while (c > line && *c == ' ')
        c--;
    if (c > line && *c == ':' && c[-1] == '"')
        return NOT_CODE;
    for (size_t k = 0; k + 1 < n; k++)
        if (line[k] == '(' || line[k] == '[' || line[k] == '{' ||
            (line[k] == '=' && (line[k + 1] == ' ' || (k && line[k - 1] == ' '))))
            return CODE; /* a literal passed or assigned: f("...", x = "...") (not key="...") */
    /* a literal that closes on the line, then a separator: a list of them, an argument */
    const char *q = memchr(t, t[-1], (size_t)(end - t));
    while (q && q + 1 < end && q[1] == ' ')
        q++;
    return q && q + 1 < end && strchr(",)]};", q[1]) && q[1] ? CODE : NOT_CODE;
}

/* The first row the line matches outside code, its reading in *m; NULL if none. A match
 * inside code is retried on the text after its trigger. *off: where the message starts. */
static const struct vf__oom_row *match_line(const struct vf_oom_scan *s, const char *line,
                                            size_t len, uint64_t mask[MASK_WORDS],
                                            struct vf__oom_m *m, size_t *off)
{
    *off = 0;
    for (int tries = 0; tries < 4; tries++) {
        const struct vf__oom_row *r = find_row(s, line + *off, len - *off, mask, m);
        if (!r)
            return NULL;
        const char *t = vf__oom_find(line + *off, len - *off, r->trig[0]);
        const char *phys = line;
        for (unsigned i = 0; t && line == s->join && i < s->n_at; i++)
            if (line + s->join_at[i] <= t)
                phys = line + s->join_at[i];
        int code = t ? in_code(line + *off, phys, t, line + len) : NOT_CODE;
        /* a code span holding the message with its figures is the error pasted in
         * backticks (`CUDA out of memory. Tried to allocate 2.26 GiB (GPU 0; ...)`); a
         * message quoted in prose ("look for `CUDA out of memory`") has none */
        if (code == NOT_CODE || (code == SPAN && (m->ev.requested_bytes != VF_UNKNOWN ||
                                                  m->ev.total_bytes != VF_UNKNOWN)))
            return r;
        *off = (size_t)(t - line) + 1;
        if (!filter(s, line + *off, len - *off, mask))
            return NULL;
    }
    return NULL;
}

/* ------------------------------------------------------------------ memo */

/* A 64-bit hash of t[0..n) from its length and 5 of its 8-byte words (first, last and 3
 * between): only to pick memo candidates, which are compared byte for byte, so texts that
 * share those words cost a compare, never a wrong reading. */
static uint64_t text_hash(const char *t, size_t n, uint64_t h)
{
    const uint64_t k = 0x9E3779B97F4A7C15ull;
    h = (h ^ n) * k;
    if (n < 8) {
        uint64_t v = 0;
        memcpy(&v, t, n);
        h = (h ^ v) * k;
        return h ^ h >> 32;
    }
    const size_t at[5] = {0, n / 4, n / 2, n / 4 * 3, n - 8};
    for (size_t i = 0; i < 5; i++) {
        uint64_t v;
        memcpy(&v, t + (at[i] + 8 <= n ? at[i] : n - 8), 8);
        h = (h ^ v) * k;
        h ^= h >> 29;
    }
    return h ^ h >> 32;
}

/* Reads text[0..len) (the join when joined: its line starts are part of what is read) with
 * the prefilter and the rows, into *tmp or a memo entry; returns the reading (valid until the
 * next call). */
static const struct reading *read_text(struct vf_oom_scan *s, const char *text, size_t len,
                                       bool joined, struct reading *tmp)
{
    unsigned n_at = joined ? s->n_at : 0;
    struct memo *slot = NULL;
    uint64_t h = 0;
    if (len <= MEMO_TEXT) {
        h = text_hash(text, len, n_at);
        if (n_at)
            h = text_hash((const char *)s->join_at, n_at * sizeof s->join_at[0], h);
        slot = &s->memo[0];
        for (size_t i = 0; i < MEMO_N; i++) {
            struct memo *e = &s->memo[i];
            if (e->used && e->hash == h && e->len == len && e->n_at == n_at &&
                !memcmp(e->text, text, len) && !memcmp(e->at, s->join_at, n_at * sizeof e->at[0])) {
                e->used = ++s->memo_clock;
                return &e->rd;
            }
            if (e->used < slot->used)
                slot = e; /* the least recently read is replaced */
        }
    }
    struct reading *rd = slot ? &slot->rd : tmp;
    rd->hit = len >= s->pf->all->m && filter(s, text, len, rd->pre);
    memcpy(rd->post, rd->pre, sizeof rd->post);
    rd->off = 0;
    rd->r = rd->hit ? match_line(s, text, len, rd->post, &rd->m, &rd->off) : NULL;
    if (slot) {
        slot->hash = h;
        slot->len = len;
        slot->n_at = n_at;
        memcpy(slot->at, s->join_at, n_at * sizeof slot->at[0]);
        memcpy(slot->text, text, len);
        slot->used = ++s->memo_clock;
    }
    return rd;
}

/* --------------------------------------------------------- wrapped messages */

static void join_close(struct vf_oom_scan *s)
{
    s->join_last = 0;
    s->join_event = false;
}

/* Starts a join with this line; event: the line is (part of) the last event's message. */
static void join_open(struct vf_oom_scan *s, const char *line, size_t len, bool event)
{
    size_t n = len < JOIN_MAX ? len : JOIN_MAX;
    memcpy(s->join, line, n);
    s->join_len = n;
    s->join_prev = len;
    s->join_at[0] = 0;
    s->n_at = 1;
    s->join_lines = 1;
    s->join_first = s->join_last = s->lineno;
    s->join_event = event;
    s->join_new = 0;
}

/* Whether a line starts a record of its own (a timestamp, a level, a traceback line), so
 * it cannot be the wrapped rest of the line before. */
static bool record_start(const char *p, const char *end)
{
    static const char *const starts[] = {
        "Traceback", "File \"", "During handling", "The above exception", "INFO", "WARNING",
        "ERROR",     "DEBUG",   "CRITICAL"};
    size_t n = (size_t)(end - p);
    bool bracket = *p == '[';
    if (*p == '[' || *p == '(')
        p++, n--;
    for (size_t i = 0; n && i < sizeof starts / sizeof starts[0]; i++)
        if (starts[i][0] == *p && n >= strlen(starts[i]) &&
            !memcmp(p, starts[i], strlen(starts[i])))
            return true;
    /* "2024-12-16 17:10:56", "[2025-06-02 ...", "[594675.027262]" */
    int digits = 0;
    while (digits < (int)n && p[digits] >= '0' && p[digits] <= '9')
        digits++;
    if ((digits == 4 && n > 4 && (p[4] == '-' || p[4] == '/')) ||
        (digits && bracket && (size_t)digits < n && p[digits] == '.'))
        return true;
    /* syslog "Apr 25 06:31:56", dmesg -T "[Thu Dec  7 00:05:15 2017]", glog "I0315 10:1" */
    static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDecMonTueWedThuFriSatSun";
    for (size_t i = 0; n >= 5 && p[3] == ' ' && i + 3 <= sizeof months - 1; i += 3)
        if (!memcmp(p, months + i, 3) && p[3] == ' ')
            return true;
    return n >= 6 && strchr("IWEF", *p) && *p && p[1] >= '0' && p[1] <= '9' && p[2] >= '0' &&
           p[2] <= '9' && p[3] >= '0' && p[3] <= '9' && p[4] >= '0' && p[4] <= '9' && p[5] == ' ';
}

/* Whether the line continues the open join: the next line, not blank, not a record of its
 * own, and room left. */
static bool join_continues(const struct vf_oom_scan *s, const char *line, size_t len)
{
    if (!s->join_last || s->lineno != s->join_last + 1 || s->join_lines >= JOIN_LINES)
        return false;
    size_t i = 0;
    while (i < len && (line[i] == ' ' || line[i] == '\t'))
        i++;
    return i < len && !record_start(line + i, line + len) &&
           s->join_len + 1 + (len - i) <= JOIN_MAX;
}

/* A row matched the joined text: the event read from the join so far gets its figures (and,
 * when the join started it, its row and text); else the join is a new message. */
static void join_match(struct vf_oom_scan *s, const struct vf__oom_row *r,
                       const struct vf__oom_m *m)
{
    if (!s->join_event) {
        uint64_t n = s->n_total;
        apply_match(s, r, m, s->join, s->join_len, s->join_first);
        s->join_new = s->n_total > n ? s->n_total : 0;
        s->join_event = true;
        s->last_line[(s->n_total - 1) % VF_OOM_MAX_EVENTS] = s->lineno;
        return;
    }
    size_t slot = (size_t)((s->n_total - 1) % VF_OOM_MAX_EVENTS);
    if (r == s->head[slot] && s->row[slot] != r && s->ev[slot].line != s->join_first) {
        /* the event's first message again, later in the join: the next failure (as in
         * apply_match) */
        uint64_t n = s->n_total;
        apply_match(s, r, m, s->join, s->join_len, s->join_first);
        if (s->n_total > n) {
            s->join_new = s->n_total;
            s->last_line[(s->n_total - 1) % VF_OOM_MAX_EVENTS] = s->lineno;
        }
        return;
    }
    struct vf_oom_event *ev = &s->ev[slot], before = *ev;
    bool more = adds_to(ev, m);
    take_figures(ev, m);
    if (m->ev.backend && !r->backend)
        ev->backend = m->ev.backend;
    if (ev->line == s->join_first && r != s->row[slot] && r < s->row[slot]) {
        /* the whole message names a row above the one its first line matched */
        const char *tool = ev->tool;
        name_event(s, slot, r, s->join, s->join_len);
        s->head[slot] = r;
        if (strcmp(tool, "pytorch") && strcmp(tool, "unknown"))
            ev->tool = tool;
        s->merge[slot] = r->merge_lines;
    } else if (ev->line == s->join_first && more) {
        copy_text(s->text[slot], TEXT_MAX, s->join, s->join_len);
    }
    /* the message the event started with reaches this line if the line said something or
     * the line before it was wrapped (other lines joined after it, and the lines of a message
     * merged into the event, must not stretch its merge and hint windows) */
    if (ev->line == s->join_first &&
        (memcmp(&before, ev, sizeof before) || s->join_prev >= JOIN_WIDTH))
        s->last_line[slot] = s->lineno;
    take_context(s, m);
}

/* Adds the line to the join and reads the joined text again. */
static void join_line(struct vf_oom_scan *s, const char *line, size_t len)
{
    while (len && (*line == ' ' || *line == '\t'))
        line++, len--;
    s->join_prev = s->join_len - s->join_at[s->n_at - 1];
    /* one space between the lines: a line wrapped after a space keeps it ("Out \nof memory",
     * jax#788) and gets no second one, which no trigger holds */
    if (!s->join_len || (s->join[s->join_len - 1] != ' ' && s->join[s->join_len - 1] != '\t'))
        s->join[s->join_len++] = ' ';
    if (s->n_at < sizeof s->join_at / sizeof s->join_at[0])
        s->join_at[s->n_at++] = (uint16_t)s->join_len;
    memcpy(s->join + s->join_len, line, len);
    s->join_len += len;
    s->join_lines++;
    s->join_last = s->lineno;
    struct reading tmp;
    const struct reading *rd = read_text(s, s->join, s->join_len, true, &tmp);
    if (!rd->hit)
        return;
    if (rd->r) {
        join_match(s, rd->r, &rd->m);
    } else if (s->join_event && s->join_new == s->n_total) {
        /* the rest of the message says it is none ("this is not a failure", a quote in
         * code): the event its first lines made is taken back */
        s->n_total--;
        s->join_event = false;
        s->join_new = 0;
    }
}

/* Whether the line (its prefilter mask) may start a message: an anchor word or a row's
 * trigger that did not match alone. */
static bool has_anchor(const struct vf_oom_scan *s, const uint64_t mask[MASK_WORDS])
{
    for (size_t w = 0; w < MASK_WORDS; w++)
        if (mask[w] & s->pf->anchors[w])
            return true;
    for (size_t i = 0; i < vf__oom_n_rows; i++)
        if (bit(mask, s->pf->row_pat[i]))
            return true;
    return false;
}

/* Whether the line starts another message than the join's: it holds a row's trigger (that
 * did not match alone: its rest is wrapped onto the next line), or an anchor word (K_ANCHOR)
 * that is in the joined text already (a message does not repeat its own opening words). */
static bool starts_another(const struct vf_oom_scan *s, const char *line, size_t len,
                           const uint64_t mask[MASK_WORDS])
{
    for (size_t i = 0; i < vf__oom_n_rows; i++)
        if (bit(mask, s->pf->row_pat[i]) && vf__oom_find(line, len, vf__oom_rows[i].trig[0]))
            return true;
    for (size_t i = 0; i < N_CTX_KEYS; i++)
        if (ctx_keys[i].kind == K_ANCHOR && bit(mask, s->pf->key_pat[i]) &&
            vf__oom_find(line, len, ctx_keys[i].key) &&
            vf__oom_find(s->join, s->join_len, ctx_keys[i].key))
            return true;
    return false;
}

/* The figures of m the event does not know yet (the lines before a message: a wrap put
 * its first words there). True if any. */
static bool fill_figures(struct vf_oom_event *ev, const struct vf__oom_m *m)
{
    if (!adds_to(ev, m))
        return false;
    struct vf_oom_event old = *ev;
    take_figures(ev, m);
    uint64_t *now[] = {&ev->requested_bytes,  &ev->total_bytes,    &ev->free_bytes,
                       &ev->allocated_bytes,  &ev->reserved_bytes, &ev->reserved_unallocated_bytes,
                       &ev->non_pytorch_bytes};
    const uint64_t was[] = {old.requested_bytes,  old.total_bytes,
                            old.free_bytes,       old.allocated_bytes,
                            old.reserved_bytes,   old.reserved_unallocated_bytes,
                            old.non_pytorch_bytes};
    for (size_t i = 0; i < sizeof was / sizeof was[0]; i++)
        if (was[i] != VF_UNKNOWN)
            *now[i] = was[i];
    if (old.device >= 0)
        ev->device = old.device;
    return true;
}

/*
 * The lines before this one that a wrap may have split off its message ("... failed" /
 * "to allocate 2.46G (2637627392 bytes) from device:" / "CUDA_ERROR_OUT_OF_MEMORY: out
 * of memory"): when this line does not start a record, up to 3 lines before it, still in
 * the block, after the last event's lines, none blank or indented (a traceback's code),
 * back to one that starts a record.
 * Joins them and this line into s->join; returns how many lines it took (0: none).
 */
static unsigned back_lines(struct vf_oom_scan *s, const char *line, size_t len)
{
    uint64_t prev_last = s->n_total ? s->last_line[(s->n_total - 1) % VF_OOM_MAX_EVENTS] : 0;
    const char *a = line, *p = line;
    while (p < line + len && (*p == ' ' || *p == '\t'))
        p++;
    /* no line before it to take (the last event's lines end right before it): the cheap
     * test first, as every message of a log with one on each line meets it */
    if (!s->blk || a <= s->blk || s->lineno - 1 <= prev_last || p == line + len ||
        record_start(p, line + len))
        return 0;
    unsigned k = 0;
    while (k < 3 && a > s->blk && s->lineno - k - 1 > prev_last) {
        const char *ps = line_start(s->blk, a - 1);
        if (a - 1 == ps || (a - 2 == ps && *ps == '\r') || *ps == ' ' || *ps == '\t')
            break; /* a blank line, or an indented one (a traceback's code) */
        a = ps, k++;
        while (ps < line && (*ps == ' ' || *ps == '\t'))
            ps++;
        if (record_start(ps, line))
            break;
    }
    if (!k)
        return 0;
    size_t n = 0;
    s->join_at[0] = 0;
    s->n_at = 1;
    for (const char *q = a, *e = line + len; q < e && n < JOIN_MAX;) {
        /* the bytes up to the next CR or LF as one run, then that byte */
        const char *b = vf__ms_find2(q, (size_t)(e - q), '\r', '\n');
        size_t run = (size_t)((b ? b : e) - q);
        if (run > JOIN_MAX - n)
            run = JOIN_MAX - n;
        memcpy(s->join + n, q, run);
        n += run;
        q += run;
        if (q == e || n == JOIN_MAX || *q++ == '\r')
            continue;
        s->join[n++] = ' ';
        if (s->n_at < sizeof s->join_at / sizeof s->join_at[0])
            s->join_at[s->n_at++] = (uint16_t)n;
    }
    s->join_len = n;
    return k;
}

/* A message matched on this line alone: the lines before it fill what it did not say. */
static void join_back(struct vf_oom_scan *s, const struct vf__oom_row *r, const char *line,
                      size_t len)
{
    size_t slot = (size_t)((s->n_total - 1) % VF_OOM_MAX_EVENTS);
    struct vf_oom_event *ev = &s->ev[slot];
    if (ev->line != s->lineno)
        return;   /* it completed an event before */
    s->n_total--; /* the event's own lines are not "before" it */
    unsigned k = back_lines(s, line, len);
    s->n_total++;
    struct reading tmp;
    const struct reading *rd = k ? read_text(s, s->join, s->join_len, true, &tmp) : NULL;
    if (!rd || rd->r != r)
        return;
    if (fill_figures(ev, &rd->m)) {
        ev->line = s->lineno - k;
        copy_text(s->text[slot], TEXT_MAX, s->join + rd->off, s->join_len - rd->off);
    }
}

/* A line that may open a message (an anchor, a trigger that did not match alone): a join
 * of it and the lines before it, read at once. */
static void join_candidate(struct vf_oom_scan *s, const char *line, size_t len)
{
    unsigned k = back_lines(s, line, len);
    if (!k) {
        join_open(s, line, len, false);
        return;
    }
    s->join_lines = k + 1;
    s->join_first = s->lineno - k;
    s->join_last = s->lineno;
    s->join_event = false;
    struct reading tmp;
    const struct reading *rd = read_text(s, s->join, s->join_len, true, &tmp);
    if (rd->r)
        join_match(s, rd->r, &rd->m);
}

/* Where the message that row r matched starts in a window of a long line: the two words
 * before its trigger ("torch.OutOfMemoryError: CUDA"), within 64 bytes, after any ']'. */
static size_t message_start(const char *line, size_t len, const struct vf__oom_row *r, size_t off)
{
    const char *t = vf__oom_find(line + off, len - off, r->trig[0]);
    if (!t)
        return off;
    const char *p = t;
    int spaces = 0;
    while (p > line + off && t - p < 64 && p[-1] != ']' && !(p[-1] == ' ' && ++spaces == 3))
        p--;
    return (size_t)(p - line);
}

/* ---------------------------------------------------------------- lines */

/* A line (whole: joins may start or continue here) or a window of a long one. */
static void do_piece(struct vf_oom_scan *s, const char *line, size_t len, bool whole)
{
    struct reading tmp;
    const struct reading *rd = read_text(s, line, len, false, &tmp);
    bool hit = rd->hit;
    const uint64_t *mask = rd->post;
    const struct vf__oom_row *r = rd->r;
    if (hit)
        context_line(s, line, len, rd->pre); /* hints first: they may name this line's tool */
    if (r) {
        uint64_t n = s->n_total;
        size_t off = rd->off;
        if (!whole) /* a window of a long line: the message starts near its trigger */
            off = message_start(line, len, r, off);
        apply_match(s, r, &rd->m, line + off, len - off, s->lineno);
        if (whole) {
            join_back(s, r, line, len);
            join_open(s, line, len, true);
            s->join_new = s->n_total > n ? s->n_total : 0;
        } else {
            join_close(s);
        }
    } else if (whole && join_continues(s, line, len) &&
               !(hit && starts_another(s, line, len, mask))) {
        join_line(s, line, len);
    } else if (whole && hit && has_anchor(s, mask)) {
        join_candidate(s, line, len);
    } else {
        join_close(s);
    }
}

/*
 * The keys of a long line text[0..len) from offset `from`, each read in a window of
 * WIN_BEFORE bytes before it (none before *floor, the end of the last window) and
 * WIN_AFTER after. final: the line ends at len; else a window the end cuts waits. Returns
 * where the next read must search from.
 */
static size_t read_windows(struct vf_oom_scan *s, const char *text, size_t len, size_t from,
                           size_t *floor, bool final)
{
    size_t pos = from;
    const char *hit;
    join_close(s);
    while (pos < len && (hit = find_long(s, text + pos, len - pos)) != NULL) {
        size_t h = (size_t)(hit - text);
        if (!final && len - h < WIN_AFTER)
            return h;
        size_t a = h - *floor > WIN_BEFORE ? h - WIN_BEFORE : *floor;
        size_t b = len - h > WIN_AFTER ? h + WIN_AFTER : len;
        do_piece(s, text + a, b - a, false);
        pos = *floor = b;
    }
    /* no key left: one the end cuts starts in the last 255 bytes (the longest key) */
    return final || len - pos < 256 ? (pos > len ? len : pos) : len - 255;
}

/* One complete line (without its newline). */
static void do_line(struct vf_oom_scan *s, const char *line, size_t len)
{
    s->lineno++;
    if (len && line[len - 1] == '\r')
        len--;
    if (len <= VF_OOM_MAX_LINE) {
        do_piece(s, line, len, true);
        return;
    }
    size_t floor = 0;
    read_windows(s, line, len, 0, &floor, true);
}

/* ---------------------------------------------------------------- feed */

/* pend is full and its line goes on: reads the windows it holds, keeps what the next ones
 * need (the bytes before a key and a key the end cuts). */
static void pend_flush(struct vf_oom_scan *s)
{
    if (!s->pend_counted) {
        s->lineno++;
        s->pend_counted = true;
        s->pend_from = 0;
    }
    size_t floor = s->pend_from;
    size_t next = read_windows(s, s->pend, s->pend_len, s->pend_from, &floor, false);
    size_t keep = next - floor > WIN_BEFORE ? next - WIN_BEFORE : floor;
    memmove(s->pend, s->pend + keep, s->pend_len - keep);
    s->pend_len -= keep;
    s->pend_from = next - keep;
}

static void pend_add(struct vf_oom_scan *s, const char *p, size_t n)
{
    s->pend_open = true;
    while (n) {
        if (s->pend_len == VF_OOM_MAX_LINE)
            pend_flush(s); /* a long line: read in windows, memory stays bounded */
        size_t room = VF_OOM_MAX_LINE - s->pend_len;
        size_t k = n < room ? n : room;
        memcpy(s->pend + s->pend_len, p, k);
        s->pend_len += k;
        p += k;
        n -= k;
    }
}

/* The pending line ends. */
static void pend_end(struct vf_oom_scan *s)
{
    if (!s->pend_counted && s->pend_len <= TAIL_MAX) {
        /* in one piece after the bytes before it, where back_lines can read them */
        memcpy(s->scratch, s->tail, s->tail_len);
        memcpy(s->scratch + s->tail_len, s->pend, s->pend_len);
        s->blk = s->scratch;
        do_line(s, s->scratch + s->tail_len, s->pend_len);
        s->blk = NULL;
    } else if (s->pend_counted) {
        size_t len = s->pend_len, floor = s->pend_from;
        if (len && s->pend[len - 1] == '\r')
            len--;
        read_windows(s, s->pend, len, s->pend_from, &floor, true);
    } else {
        do_line(s, s->pend, s->pend_len);
    }
    s->pend_len = 0;
    s->pend_open = s->pend_counted = false;
    s->pend_from = 0;
}

/* ---------------------------------------------------------- chunk scan */

/*
 * Whole chunks of complete lines are scanned with the long-key prefilter (`lng`); only the
 * lines it hits, and the HINT_AFTER lines after an event, go through do_line. The lines in
 * between can hold only the short step keys ("step", "Step"), whose effects resolve() applies
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
    if (len < s->pf->all->m)
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

/* The last "tep" that starts in [a, q) and ends before q, NULL if none. */
static const char *prev_tep(const char *a, const char *q)
{
    while (q - a >= 3) {
        const char *t = memrchr(a + 2, 'p', (size_t)(q - a - 2));
        if (!t)
            return NULL;
        if (t[-1] == 'e' && t[-2] == 't')
            return t;
        q = t;
    }
    return NULL;
}

static uint64_t count_lines(const char *a, const char *z)
{
    return vf__ms_count(a, (size_t)(z - a), '\n');
}

/* Applies the whole lines [a, z), none holding a long key or a hint and none in an event's
 * hint window, as do_line would: line count, steps (first, last, current). */
static void resolve(struct vf_oom_scan *s, const char *a, const char *z)
{
    if (a >= z)
        return;
    s->lineno += count_lines(a, z);
    uint64_t f, l;
    /* every K_STEP key holds "tep" (checked at open) */
    if (s->ctx.first_step == VF_UNKNOWN) {
        for (const char *q = a; q < z;) {
            const char *t = vf__ms_find3(q, (size_t)(z - q), "tep");
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
        for (const char *q = z, *t; (t = prev_tep(a, q)) != NULL;) {
            const char *ls = line_start(a, t), *le = memchr(t, '\n', (size_t)(z - t));
            if (line_steps(s, ls, line_len(ls, le), &f, &l)) {
                s->ctx.last_step = s->cur_step = l;
                break;
            }
            q = ls;
        }
    }
}

/* Whether do_line must read the next line: it may continue an open join (a wrapped
 * message), or it is in the hint window of the last event. */
static bool in_window(const struct vf_oom_scan *s)
{
    if (s->join_last && s->lineno == s->join_last && s->join_lines < JOIN_LINES)
        return true;
    return s->n_total &&
           s->lineno < s->last_line[(s->n_total - 1) % VF_OOM_MAX_EVENTS] + HINT_AFTER;
}

/* Complete lines [b, e) (e just past a newline); ctx <= b: where the lines that back_lines
 * may read before them start. */
static void scan_block(struct vf_oom_scan *s, const char *ctx, const char *b, const char *e)
{
    const char *cur = b;
    s->blk = ctx;
    while (cur < e) {
        if (in_window(s)) {
            const char *nl = memchr(cur, '\n', (size_t)(e - cur));
            do_line(s, cur, (size_t)(nl - cur));
            cur = nl + 1;
            continue;
        }
        const char *hit = find_long(s, cur, (size_t)(e - cur));
        if (!hit)
            break;
        const char *ls = line_start(cur, hit), *le = memchr(hit, '\n', (size_t)(e - hit));
        resolve(s, cur, ls);
        do_line(s, ls, (size_t)(le - ls));
        cur = le + 1;
    }
    s->blk = NULL;
    resolve(s, cur, e);
}

/* Bytes with only LF line breaks and no escape sequences. */
static void feed_plain(struct vf_oom_scan *s, const char *buf, size_t len)
{
    const char *p = buf, *end = buf + len;
    if (p < end && s->pend_open) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) {
            pend_add(s, p, (size_t)(end - p));
            return;
        }
        pend_add(s, p, (size_t)(nl - p));
        pend_end(s);
        p = nl + 1;
    }
    if (p >= end)
        return;
    const char *last = memrchr(p, '\n', (size_t)(end - p));
    if (last) {
        scan_block(s, p, p, last + 1);
        size_t t = (size_t)(last + 1 - p) < TAIL_MAX ? (size_t)(last + 1 - p) : TAIL_MAX;
        memcpy(s->tail, last + 1 - t, t);
        s->tail_len = t;
        p = last + 1;
    }
    if (p < end)
        pend_add(s, p, (size_t)(end - p));
}

/* Bytes read through the normaliser (its state in s->norm), NORM_CHUNK at a time. */
static void feed_normalised(struct vf_oom_scan *s, const char *buf, size_t len)
{
    for (size_t i = 0; i < len; i += NORM_CHUNK) {
        size_t k = len - i < NORM_CHUNK ? len - i : NORM_CHUNK;
        feed_plain(s, s->nbuf, vf__oom_normalize(&s->norm, buf + i, k, s->nbuf));
    }
}

/* Bytes of any kind, normalised where they need it. */
static void feed_any(struct vf_oom_scan *s, const char *buf, size_t len)
{
    if (!len)
        return;
    if (vf__oom_norm_needed(&s->norm, buf, len))
        feed_normalised(s, buf, len);
    else
        feed_plain(s, buf, len);
}

/* ------------------------------------------------------------ raw blocks */

/*
 * The whole lines of a feed are searched as they are, CRs and escape sequences in place
 * (issue 29: a log of progress bars is not copied through the normaliser byte by byte). A
 * key the normalised text holds is in the raw text too - keys hold no CR, LF or ESC, and a
 * CR only breaks a line - except where removing an escape sequence puts two bytes side by
 * side that a key holds side by side (an unsafe junction, found with prefilter.pairs). The
 * lines with a key or an unsafe junction, and those in an event's window, are normalised with
 * the 3 lines before them (what back_lines reads) and go through scan_block; the lines
 * between are counted (a CR is a break, a CRLF pair one) and their steps read, their own
 * lines normalised when they hold a CR or an escape byte.
 */

static bool has_esc_cr(const char *p, size_t n)
{
    return vf__ms_find2(p, n, 0x1b, '\r') != NULL;
}

/* Normalises the whole lines [a, z) (a at a line start: nothing pending) into out. */
static size_t norm_lines(const char *a, const char *z, char *out)
{
    struct vf__oom_norm st = {0};
    return vf__oom_normalize(&st, a, (size_t)(z - a), out);
}

/* The whole raw lines [ls, le) of a block that starts at blk, read as normalised lines. */
static void exact_lines(struct vf_oom_scan *s, const char *blk, const char *ls, const char *le)
{
    const char *from = ls;
    for (int k = 0; k < 3 && from > blk; k++)
        from = line_start(blk, from - 1);
    if (!has_esc_cr(from, (size_t)(le - from))) {
        scan_block(s, from, ls, le);
    } else if ((size_t)(le - from) <= NORM_CHUNK) {
        size_t o = norm_lines(from, ls, s->nbuf);
        size_t n = norm_lines(ls, le, s->nbuf + o);
        scan_block(s, s->nbuf, s->nbuf + o, s->nbuf + o + n);
    } else {
        feed_normalised(s, ls, (size_t)(le - ls)); /* a long line: read as a feed of its own */
    }
}

/* The first place in the raw lines [p, e) that scan_block must read: a key, or an escape
 * sequence whose removal joins two bytes a key holds side by side (prefilter.pairs); NULL if
 * none. r: the line breaks before it (in all of [p, e) if none) and, while no step is known,
 * how far no "tep" starts, both read in the same pass. */
static const char *raw_find(const struct vf_oom_scan *s, const char *p, const char *e,
                            struct vf__ms_raw *r)
{
    r->want_tep = s->ctx.first_step == VF_UNKNOWN;
    return vf__ms_find_raw(&s->pf->lng, p, (size_t)(e - p), s->pf->pairs, r);
}

/* The steps of the raw line [ls, le) (le: its LF), as line_steps reads them from each of its
 * normalised lines: *first from the first that sets one, *last from the last. *big: it needs
 * normalising and is longer than a buffer (nothing read). */
static bool raw_steps(struct vf_oom_scan *s, const char *ls, const char *le, uint64_t *first,
                      uint64_t *last, bool *big)
{
    if (!has_esc_cr(ls, (size_t)(le - ls)))
        return line_steps(s, ls, line_len(ls, le), first, last);
    if ((size_t)(le - ls) > NORM_CHUNK) {
        *big = true;
        return false;
    }
    size_t n = norm_lines(ls, le, s->nbuf);
    bool any = false;
    uint64_t f, l;
    for (const char *p = s->nbuf, *end = s->nbuf + n; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p)), *q = nl ? nl : end;
        if (line_steps(s, p, line_len(p, q), &f, &l)) {
            if (!any)
                *first = f;
            *last = l;
            any = true;
        }
        p = q + 1;
    }
    return any;
}

/* resolve() for raw lines [a, z): none holds a key or an unsafe junction, none is in a
 * window; breaks: their line breaks, and no "tep" starts before tep (raw_find read both). A
 * line that needs normalising and is too long for it: [a, z) goes through the normaliser
 * instead. */
static void resolve_raw(struct vf_oom_scan *s, const char *a, const char *z, uint64_t breaks,
                        const char *tep)
{
    if (a >= z)
        return;
    uint64_t f, l, first = VF_UNKNOWN, last = VF_UNKNOWN;
    bool big = false;
    for (const char *q = tep; s->ctx.first_step == VF_UNKNOWN && q < z;) {
        const char *t = vf__ms_find3(q, (size_t)(z - q), "tep");
        if (!t)
            break;
        const char *ls = line_start(a, t), *le = memchr(t, '\n', (size_t)(z - t));
        if (raw_steps(s, ls, le, &f, &l, &big)) {
            first = f;
            break;
        }
        if (big)
            break;
        q = le + 1;
    }
    for (const char *q = z, *t; !big && (s->ctx.first_step != VF_UNKNOWN || first != VF_UNKNOWN) &&
                                (t = prev_tep(a, q)) != NULL;) {
        const char *ls = line_start(a, t), *le = memchr(t, '\n', (size_t)(z - t));
        if (raw_steps(s, ls, le, &f, &l, &big)) {
            last = l;
            break;
        }
        q = ls;
    }
    if (big) {
        feed_normalised(s, a, (size_t)(z - a));
        return;
    }
    s->lineno += breaks;
    if (first != VF_UNKNOWN)
        s->ctx.first_step = first;
    if (last != VF_UNKNOWN)
        s->ctx.last_step = s->cur_step = last;
}

/* The first CR or escape byte at or after p in [p, e), e if none (kept for the next call
 * from a later p in the same block). */
static const char *next_dirty(struct vf_oom_scan *s, const char *p, const char *e)
{
    if (!s->dirty_from || p < s->dirty_from || p > s->dirty_at) {
        const char *d = vf__ms_find2(p, (size_t)(e - p), 0x1b, '\r');
        s->dirty_from = p;
        s->dirty_at = d ? d : e;
    }
    return s->dirty_at;
}

/* Whole raw lines [b, e) (b at a line start, nothing pending). */
static void scan_raw(struct vf_oom_scan *s, const char *b, const char *e)
{
    const char *cur = b;
    s->dirty_from = NULL;
    while (cur < e) {
        if (in_window(s)) {
            /* the lines up to the next CR or escape byte read at once (as plain lines) when
             * the lines before them hold none either */
            const char *nl = memchr(cur, '\n', (size_t)(e - cur)), *d = next_dirty(s, cur, e);
            const char *from = cur, *z = d < e ? line_start(cur, d) : e;
            for (int k = 0; k < 3 && from > b; k++)
                from = line_start(b, from - 1);
            if (z > nl && !has_esc_cr(from, (size_t)(cur - from))) {
                scan_block(s, from, cur, z);
                cur = z;
                continue;
            }
            exact_lines(s, b, cur, nl + 1);
            cur = nl + 1;
            continue;
        }
        struct vf__ms_raw r;
        const char *hit = raw_find(s, cur, e, &r);
        if (!hit) {
            resolve_raw(s, cur, e, r.breaks, cur + r.tep);
            return;
        }
        /* the breaks of [ls, hit) are CRs of the hit's line (a CR is a break there too) */
        const char *ls = line_start(cur, hit), *le = memchr(hit, '\n', (size_t)(e - hit));
        resolve_raw(s, cur, ls, r.breaks - vf__ms_breaks(ls, (size_t)(hit - ls)), cur + r.tep);
        exact_lines(s, b, ls, le + 1);
        cur = le + 1;
    }
}

/* s->tail after the raw lines [b, e): their last TAIL_MAX bytes as normalised. */
static void raw_tail(struct vf_oom_scan *s, const char *b, const char *e)
{
    const char *t = e;
    while (t > b && (size_t)(e - t) < 2 * TAIL_MAX)
        t = line_start(b, t - 1);
    struct vf__oom_norm st = {0};
    size_t have = 0;
    for (const char *p = t; p < e;) {
        size_t k = (size_t)(e - p) < NORM_CHUNK ? (size_t)(e - p) : NORM_CHUNK;
        size_t n = vf__oom_normalize(&st, p, k, s->nbuf);
        p += k;
        size_t keep = n >= TAIL_MAX ? 0 : have < TAIL_MAX - n ? have : TAIL_MAX - n;
        memmove(s->tail, s->tail + have - keep, keep);
        size_t add = n < TAIL_MAX ? n : TAIL_MAX;
        memcpy(s->tail + keep, s->nbuf + n - add, add);
        have = keep + add;
    }
    s->tail_len = have;
}

enum vf_err vf_oom_scan_feed(struct vf_oom_scan *s, const char *buf, size_t len,
                             struct vf_error *err)
{
    if (!s || (!buf && len))
        return vf__errf(err, VF_EINVAL, "oom scan: bad arguments");
    if (!len)
        return VF_OK;
    const char *end = buf + len, *first = memchr(buf, '\n', len);
    if (!first) {
        feed_any(s, buf, len); /* a piece of one line */
        return VF_OK;
    }
    const char *last = memrchr(first, '\n', (size_t)(end - first)), *b = buf;
    if (s->pend_open || s->norm.state || s->norm.after_cr) {
        feed_any(s, buf, (size_t)(first + 1 - buf)); /* ends the line pending */
        b = first + 1;
    }
    if (b <= last) {
        scan_raw(s, b, last + 1);
        raw_tail(s, b, last + 1);
    }
    feed_any(s, last + 1, (size_t)(end - last - 1));
    return VF_OK;
}

enum vf_err vf_oom_scan_finish(struct vf_oom_scan *s, const struct vf_oom_event **events,
                               size_t *n_kept, uint64_t *n_total, const struct vf_oom_context **ctx,
                               struct vf_error *err)
{
    if (!s)
        return vf__errf(err, VF_EINVAL, "oom scan: bad arguments");
    if (s->pend_open)
        pend_end(s);
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
    s->ctx.symptoms = s->sym;
    s->ctx.n_symptoms = s->n_sym;
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
