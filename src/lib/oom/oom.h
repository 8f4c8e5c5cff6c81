/* SPDX-License-Identifier: Apache-2.0 */
/*
 * oom.h - private declarations of the oom/ folder: shared by oom_patterns.c (the pattern
 * table and its row parsers) and oom_parse.c (the streaming scanner), and by diagnose.c and
 * advise.c (the diagnosis vf_explain() builds on). Not part of the public API.
 */
#ifndef VRAMFIT_OOM_H
#define VRAMFIT_OOM_H

#include "internal.h"

#include <string.h>

/* Row flags. */
#define VF__OOM_WEAK      1u /* a generic line: a stronger row merged into it takes its name */
#define VF__OOM_MB_BINARY 2u /* "GB"/"MB"/"KB" labels are binary (PyTorch MPS format_size) */

/*
 * A row parser: fills what the line says into ev (numbers, device, procs, version hints).
 * Returns false when the line is not this message after all (the row does not match).
 * Only fields the line names are touched; the scanner pre-sets every number to VF_UNKNOWN
 * (ctx_tokens and batch too) and device to -1.
 */
struct vf__oom_m {
    struct vf_oom_event ev;   /* numbers, device, procs */
    const char *version_hint; /* static text: "torch>=2.4 (torch.OutOfMemoryError)" */
    uint64_t ctx_tokens;      /* a context length the message names (vLLM max seq len) */
    uint64_t batch;           /* a batch the message names (vLLM max_num_seqs) */
    double utilization;       /* vLLM gpu_memory_utilization in the message, 0 if none */
};
typedef bool (*vf__oom_parse_fn)(struct vf__oom_m *m, const char *line, size_t len, unsigned flags);

struct vf__oom_row {
    const char *id;      /* stable name, becomes vf_oom_event.pattern */
    const char *trig[3]; /* all must occur in the line; trig[0] feeds the prefilter */
    const char *tool;    /* default tool; "pytorch"/"unknown" may be refined by log hints */
    const char *source;  /* the layer that printed it */
    const char *backend; /* cuda, rocm, mps, xpu, cpu (NULL: from the message) */
    unsigned flags;
    unsigned merge_lines;   /* a later line of the same source within this many lines merges */
    vf__oom_parse_fn parse; /* may be NULL: the match alone is the event */
    const char *fixture;    /* tests/fixtures/oom/<fixture> */
};

extern const struct vf__oom_row vf__oom_rows[];
extern const size_t vf__oom_n_rows;

/* --- helpers the row parsers use (oom_parse.c) --- */

/* First occurrence of needle in line[0..len), or NULL. The lines a row reads are short (a few
 * hundred bytes): memchr on the needle's first byte and a compare beat memmem's set-up there;
 * inline, so a literal needle's length is known at compile time. */
static inline const char *vf__oom_find(const char *line, size_t len, const char *needle)
{
    size_t n = strlen(needle);
    if (n < 2 || n > len)
        return n > len ? NULL : n ? memchr(line, needle[0], len) : line;
    const char *end = line + len - n + 1;
    for (const char *p = line; (p = memchr(p, needle[0], (size_t)(end - p))) != NULL; p++)
        if (p[1] == needle[1] && !memcmp(p + 2, needle + 2, n - 2))
            return p;
    return NULL;
}
/* The byte count written at p ("2.00 GiB", "1.02GiB", "151851674624", "8.89 GB" with
 * VF__OOM_MB_BINARY); *endp gets the byte after it. VF_UNKNOWN when absent or overflowing. */
uint64_t vf__oom_bytes_at(const char *p, const char *end, unsigned flags, const char **endp);
/* The byte count right after the first `key` in the line (VF_UNKNOWN if none). */
uint64_t vf__oom_bytes_after(const char *line, size_t len, const char *key, unsigned flags);
/* A plain decimal integer right after `key` (spaces skipped); VF_UNKNOWN if none/overflow. */
uint64_t vf__oom_u64_after(const char *line, size_t len, const char *key);
/* A decimal integer at p; VF_UNKNOWN if none or over UINT64_MAX - 1. */
uint64_t vf__oom_u64_at(const char *p, const char *end, const char **endp);

/* --- the multi-substring search (oom_search.c) --- */

#define VF__MS_MAX  192 /* keys */
#define VF__MS_LONG 7   /* keys this long are found by sampling, shorter ones by nibble class */
struct vf__ms_ent {
    uint32_t gram; /* 4 bytes of a key */
    uint32_t tail; /* the key's last 4 bytes (checked first: one cache line per candidate) */
    uint8_t len;   /* the key's length */
    uint16_t pat;  /* the key */
    uint16_t next; /* 1-based, in the same hash chain */
    uint8_t off;   /* where the 4 bytes stand in it */
};
struct vf__ms {
    const char *pat[VF__MS_MAX];
    uint8_t len[VF__MS_MAX];
    uint32_t key4[VF__MS_MAX]; /* each key's first 4 bytes (keys are at least 4 long) */
    uint32_t tail[VF__MS_MAX]; /* the last 4 bytes of each long key */
    size_t n;
    uint64_t bits[(1u << 16) / 64]; /* 4-byte pieces of the long keys, hashed */
    /* a sampled piece with the 4 bytes 8 further on (keys that hold both), hashed; with the
     * 4 bytes right after it (keys that end before those 8 further bytes); and the pieces
     * some key holds where it ends before those 4 (never filtered) */
    uint64_t pair_bits[(1u << 16) / 64], pair4_bits[(1u << 16) / 64], open_bits[(1u << 16) / 64];
    uint16_t head[1u << 16]; /* their chains in ent (1-based) */
    struct vf__ms_ent ent[VF__MS_MAX * (VF__MS_LONG - 3)];
    size_t n_ent;
    uint8_t lo[3][16], hi[3][16]; /* short keys: buckets by nibble of their first 3 bytes */
    /* the same by a byte's low 6 bits (the AVX-512 pass's vpermb); [1] with bucket 7 for
     * "tep" (that pass merges the short keys into 7 buckets) */
    uint8_t ex64[2][3][64];
    uint8_t shorts[32], short_bucket[VF__MS_MAX];
    size_t n_short;
    int simd; /* 3 AVX-512 (F, BW, VBMI: the raw pass; AVX2 elsewhere), 2 AVX2, 1 SSSE3, 0 scalar */
};
/* Builds m over the keys pats[0..n) (lens[i] bytes each, at least 4, lasting as long as m).
 * False when they do not fit its tables. */
bool vf__ms_build(struct vf__ms *m, const char *const *pats, const uint8_t *lens, size_t n);
/* Start of the leftmost key occurrence that lies wholly in text[0..n), or NULL. */
const char *vf__ms_find(const struct vf__ms *m, const char *text, size_t n);
/* What vf__ms_find_raw counts on its way. */
struct vf__ms_raw {
    uint64_t breaks; /* the line breaks (vf__ms_breaks) before the place found, or in all */
    bool want_tep;   /* in: note where "tep" (what the step keys share) is first */
    size_t tep;      /* out: no "tep" starts before text + tep (0: not looked for) */
};
/* The first place in the raw lines text[0..n) (the byte before text is no CR) that the
 * scanner must read normalised: a key, or an escape sequence run (not counting one inside a
 * run) whose removal puts side by side two bytes a, b with bit a << 8 | b set in pairs (the
 * byte before text, and after its end, count as LF); NULL if none. */
const char *vf__ms_find_raw(const struct vf__ms *m, const char *text, size_t n,
                            const uint64_t *pairs, struct vf__ms_raw *out);
/* How many bytes of p[0..n) are c. */
size_t vf__ms_count(const char *p, size_t n, char c);
/* How many line breaks p[0..n) holds as normalisation reads them: an LF or a CR that does not
 * follow a CR (a CRLF pair, CRs in a row: one). The byte before p is not a CR. */
uint64_t vf__ms_breaks(const char *p, size_t n);
/* The first occurrence of the 3 bytes k[0..3) in p[0..n), or NULL. */
const char *vf__ms_find3(const char *p, size_t n, const char *k);
/* The first byte of p[0..n) that is a or b, or NULL. */
const char *vf__ms_find2(const char *p, size_t n, char a, char b);

/* --- reading a file descriptor (oom_reader.c) --- */

/* vf_oom_scan_fd with a window of `window` bytes (rounded down to pages; the tests use small
 * ones to put messages across window edges). */
enum vf_err vf__oom_scan_fd_window(struct vf_oom_scan *s, int fd, uint64_t *offset, size_t window,
                                   const char *name, struct vf_error *err);
/* A test seam: called (when set) after each window is mapped, before it is read (the tests cut
 * the file short there). */
extern void (*vf__oom_reader_mapped)(int fd, uint64_t base, size_t len);

/* --- input normalisation (oom_input.c) --- */

/* What a feed left half read: an escape sequence, or a CR whose LF may come next. */
struct vf__oom_norm {
    int state;
    unsigned seq_len;
    bool after_cr;
};
/* Whether buf needs vf__oom_normalize: it holds an escape byte or a CR that is not the
 * first half of a CRLF pair (or a sequence or CR is pending from the last feed). */
bool vf__oom_norm_needed(const struct vf__oom_norm *st, const char *buf, size_t len);
/* How many bytes from p (p[0] is ESC, p[0..n) readable) vf__oom_normalize removes there: the
 * escape sequence and any that follow it at once. */
size_t vf__oom_esc_len(const char *p, size_t n);
/* Copies in[0..n) to out (at least n bytes) without escape sequences, every CR or CRLF as
 * one LF; returns the bytes written. */
size_t vf__oom_normalize(struct vf__oom_norm *st, const char *in, size_t n, char *out);

/* --- symptoms that are not errors (symptoms.c) --- */

/* Read one line of `ollama ps`, of nvidia-smi's table, of vLLM's KV cache summary into y
 * (its numbers); false when the line is not that after all. */
bool vf__symptom_ollama(struct vf_oom_symptom *y, const char *line, size_t len);
bool vf__symptom_smi(struct vf_oom_symptom *y, const char *line, size_t len);
bool vf__symptom_vllm(struct vf_oom_symptom *y, const char *line, size_t len);
/* Writes each symptom's sentences (says) into the arena. */
void vf__symptoms_explain(struct vf_arena *a, const struct vf_oom_context *ctx);

/* --- the diagnosis (diagnose.c), completed by advise.c --- */

/* Fills *d (zeroed first) from one event and the log's context (may be NULL): the cause,
 * secondary causes and evidence (F-OOM-10..19). What did not fit d's tables, or an arena
 * out of memory, is named in d->incomplete. Returns VF_OK; err is unused. */
enum vf_err vf__diagnose(struct vf_arena *a, const struct vf_oom_event *ev,
                         const struct vf_oom_context *ctx, struct vf_diagnosis *d,
                         struct vf_error *err);
/* Names why d is incomplete; the first reason is kept (vf_explain() turns it into an error). */
void vf__diagnose_incomplete(struct vf_diagnosis *d, const char *why);
/* Appends an evidence sentence (NULL: the arena ran out formatting it); NULL or a full
 * table marks d incomplete instead. */
void vf__diagnose_add(struct vf_diagnosis *d, const char *s);

#endif /* VRAMFIT_OOM_H */
