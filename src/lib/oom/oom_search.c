/* SPDX-License-Identifier: Apache-2.0 */
/*
 * oom_search.c - the scanner's multi-substring search (issue 29): where the first of a set of
 * literal keys (pattern triggers, anchors, context keys; 4 to 255 bytes) starts in a block of
 * text, at a few bytes' cost per byte so that ordinary log lines are skipped at memory speed.
 *
 * Two searches share the work, each owning the keys of one length:
 *  - long keys (VF__MS_LONG bytes or more): the 4 bytes at every STRIDE-th offset of the text
 *    are looked up in a bitmap of the 4-byte pieces each key holds at its offsets 0..STRIDE-1.
 *    A key occurrence starting at s holds the sample at the first grid offset >= s (at most
 *    STRIDE - 1 bytes in, and its 4 bytes still inside the key), so no occurrence is missed;
 *    a sample in the bitmap is checked against the keys that hold it there.
 *  - short keys (4 to VF__MS_LONG - 1 bytes, a handful): a Teddy-style search: the first 3
 *    bytes of each position are classified by their nibbles into 8 buckets with byte-shuffle
 *    tables (AVX2 over 32 bytes or SSSE3 over 16, chosen at run time with
 *    __builtin_cpu_supports; a scalar loop elsewhere); positions in a bucket are compared.
 * Built once from the key list, so a new key costs a few table bits, not a pass per key.
 */
#include "oom.h"

#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_X86 1
#endif

#define STRIDE (VF__MS_LONG - 3)
#define PIECE  ((size_t)16 << 10) /* both searches run over a piece before the next */
/* how far ahead the raw pass asks for the bytes it reads next (a prefetch hint: an address
 * past the mapping does not fault); 1 KiB took 5-10 % off the raw pass on the 200 MB heads of
 * the bench logs (min of 15 runs, the 2-core machine, 2026-12-03) */
#define PREFETCH     1024
#define GRAM_BITS    16
#define GRAM_HASH(g) ((uint32_t)((g)*0x9E3779B1u) >> (32 - GRAM_BITS))

static uint32_t load32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

#define PAIR_HASH(g, h) GRAM_HASH((g) ^ ((h)*0x85EBCA77u))

static void set_bit(uint64_t *bits, uint32_t h)
{
    bits[h >> 6] |= (uint64_t)1 << (h & 63);
}

static bool get_bit(const uint64_t *bits, uint32_t h)
{
    return bits[h >> 6] >> (h & 63) & 1;
}

static void add_gram(struct vf__ms *m, uint32_t g, size_t pat, size_t off)
{
    if (m->n_ent >= sizeof m->ent / sizeof m->ent[0])
        return;
    uint32_t h = GRAM_HASH(g);
    struct vf__ms_ent *e = &m->ent[m->n_ent];
    e->gram = g;
    e->pat = (uint16_t)pat;
    e->off = (uint8_t)off;
    e->len = m->len[pat];
    e->tail = m->tail[pat];
    e->next = m->head[h];
    m->head[h] = (uint16_t)++m->n_ent;
    m->bits[h >> 6] |= (uint64_t)1 << (h & 63);
}

/* A bucket of short keys while they are grouped: the nibbles its keys hold at each of the 3
 * positions (bit v of lo[k]: some key's byte k has low nibble v). */
struct group {
    uint16_t lo[3], hi[3];
};

/* How many 3-byte strings the group's tables let through (each position: any low nibble of
 * the set with any high one) - what a bucket costs in false candidates. */
static double group_cost(const struct group *g)
{
    double c = 1;
    for (int k = 0; k < 3; k++)
        c *= (double)__builtin_popcount(g->lo[k]) * (double)__builtin_popcount(g->hi[k]);
    return c;
}

static struct group group_merge(const struct group *a, const struct group *b)
{
    struct group g;
    for (int k = 0; k < 3; k++)
        g.lo[k] = a->lo[k] | b->lo[k], g.hi[k] = a->hi[k] | b->hi[k];
    return g;
}

/*
 * Puts the short keys into `buckets` buckets (8, or 7 when the AVX-512 pass keeps the last
 * for "tep"): a group per key, keys with the same first 3 bytes together, then the two groups
 * whose union lets the fewest strings through merged until that many are left (a greedy clustering:
 * keys that differ in every nibble do not share a bucket, so an ordinary word does not pass a union
 * of their nibbles). Sets short_bucket and lo/hi.
 */
static void short_buckets(struct vf__ms *m, size_t buckets)
{
    struct group g[sizeof m->shorts];
    uint8_t of[sizeof m->shorts]; /* the group of each short key */
    size_t n = 0;
    for (size_t j = 0; j < m->n_short; j++) {
        const unsigned char *p = (const unsigned char *)m->pat[m->shorts[j]];
        size_t same = 0;
        while (same < j && memcmp(m->pat[m->shorts[same]], p, 3))
            same++;
        if (same < j) {
            of[j] = of[same];
            continue;
        }
        for (int k = 0; k < 3; k++)
            g[n].lo[k] = (uint16_t)(1u << (p[k] & 15)), g[n].hi[k] = (uint16_t)(1u << (p[k] >> 4));
        of[j] = (uint8_t)n++;
    }
    while (n > buckets) {
        size_t bx = 0, by = 1;
        double best = -1;
        for (size_t x = 0; x < n; x++)
            for (size_t y = x + 1; y < n; y++) {
                struct group u = group_merge(&g[x], &g[y]);
                double c = group_cost(&u) - group_cost(&g[x]) - group_cost(&g[y]);
                if (best < 0 || c < best)
                    best = c, bx = x, by = y;
            }
        g[bx] = group_merge(&g[bx], &g[by]);
        g[by] = g[--n]; /* the last group takes by's place */
        for (size_t j = 0; j < m->n_short; j++)
            of[j] = of[j] == by ? (uint8_t)bx : of[j] == n ? (uint8_t)by : of[j];
    }
    for (size_t j = 0; j < m->n_short; j++) {
        const unsigned char *p = (const unsigned char *)m->pat[m->shorts[j]];
        unsigned b = of[j];
        m->short_bucket[m->shorts[j]] = (uint8_t)(1u << b);
        for (int k = 0; k < 3; k++) {
            m->lo[k][p[k] & 15] |= (uint8_t)(1u << b);
            m->hi[k][p[k] >> 4] |= (uint8_t)(1u << b);
            m->ex64[0][k][p[k] & 63] |= (uint8_t)(1u << b);
        }
    }
}

bool vf__ms_build(struct vf__ms *m, const char *const *pats, const uint8_t *lens, size_t n)
{
    memset(m, 0, sizeof *m);
    if (n > VF__MS_MAX)
        return false;
    for (size_t i = 0; i < n; i++) {
        const unsigned char *p = (const unsigned char *)pats[i];
        m->pat[i] = pats[i];
        m->len[i] = lens[i];
        if (lens[i] >= 4)
            m->key4[i] = load32(p);
        if (lens[i] >= VF__MS_LONG)
            m->tail[i] = load32(p + lens[i] - 4);
        if (lens[i] >= VF__MS_LONG) {
            for (size_t k = 0; k < STRIDE; k++) {
                add_gram(m, load32(p + k), i, k);
                if (k + 12 <= lens[i])
                    set_bit(m->pair_bits, PAIR_HASH(load32(p + k), load32(p + k + 8)));
                else if (k + 8 <= lens[i])
                    set_bit(m->pair4_bits, PAIR_HASH(load32(p + k), load32(p + k + 4)));
                else
                    set_bit(m->open_bits, GRAM_HASH(load32(p + k)));
            }
            continue;
        }
        if (lens[i] < 4 || m->n_short >= sizeof m->shorts / sizeof m->shorts[0])
            return false;
        m->shorts[m->n_short++] = (uint8_t)i;
    }
    m->n = n;
#ifdef HAVE_X86
    m->simd = __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512f") &&
                      __builtin_cpu_supports("avx512vbmi")
                  ? 3
              : __builtin_cpu_supports("avx2")  ? 2
              : __builtin_cpu_supports("ssse3") ? 1
                                                : 0;
#endif
    short_buckets(m, m->simd == 3 ? 7 : 8);
    /* the AVX-512 pass finds "tep" (vf__ms_raw.want_tep) in the same tables, bucket 7 */
    memcpy(m->ex64[1], m->ex64[0], sizeof m->ex64[0]);
    m->ex64[1][0]['t' & 63] |= 0x80;
    m->ex64[1][1]['e' & 63] |= 0x80;
    m->ex64[1][2]['p' & 63] |= 0x80;
    return m->n_ent < sizeof m->ent / sizeof m->ent[0];
}

/* Whether a short key of one of `buckets` starts at t + s in t[0..n): its first 4 bytes
 * compared as one word first (every key has them), the rest only then. */
static bool short_at(const struct vf__ms *m, const unsigned char *t, size_t n, size_t s,
                     unsigned buckets)
{
    if (n - s < 4)
        return false;
    uint32_t head = load32(t + s);
    for (size_t j = 0; j < m->n_short; j++) {
        size_t i = m->shorts[j];
        if ((m->short_bucket[i] & buckets) && m->key4[i] == head && s + m->len[i] <= n &&
            !memcmp(t + s + 4, m->pat[i] + 4, m->len[i] - 4u))
            return true;
    }
    return false;
}

/* The buckets the 3 bytes at p may start (scalar). */
static unsigned classify(const struct vf__ms *m, const unsigned char *p)
{
    unsigned r = 0xff;
    for (int k = 0; k < 3; k++)
        r &= (unsigned)(m->lo[k][p[k] & 15] & m->hi[k][p[k] >> 4]);
    return r;
}

/* The first short key starting in [a, b) of t[0..n) scalar from a; SIZE_MAX if none. */
static size_t short_scalar(const struct vf__ms *m, const unsigned char *t, size_t n, size_t a,
                           size_t b)
{
    for (size_t s = a; s < b && s + 3 <= n; s++) {
        unsigned r = classify(m, t + s);
        if (r && short_at(m, t, n, s, r))
            return s;
    }
    return SIZE_MAX;
}

/* The candidates of a SIMD block (bit j: position base + j, its buckets in r[j]). */
static size_t short_verify(const struct vf__ms *m, const unsigned char *t, size_t n, size_t base,
                           uint32_t bits, const uint8_t *r)
{
    while (bits) {
        unsigned j = (unsigned)__builtin_ctz(bits);
        bits &= bits - 1;
        if (short_at(m, t, n, base + j, r[j]))
            return base + j;
    }
    return SIZE_MAX;
}

#ifdef HAVE_X86
/* The nibble tables of the short keys, in registers for the AVX2 loop. */
struct teddy_avx2 {
    __m256i lo[3], hi[3], nib;
};

/* The buckets each of the 32 positions t[0..32) may start (t[0..34) readable): the byte
 * shuffles of the 3 positions' nibbles, unrolled so the tables stay in registers. */
__attribute__((target("avx2"))) static inline __m256i teddy32(const struct teddy_avx2 *k,
                                                              const unsigned char *t)
{
    __m256i r = _mm256_set1_epi8(-1);
    for (int j = 0; j < 3; j++) {
        __m256i v = _mm256_loadu_si256((const __m256i *)(t + j));
        __m256i l = _mm256_shuffle_epi8(k->lo[j], _mm256_and_si256(v, k->nib));
        __m256i h =
            _mm256_shuffle_epi8(k->hi[j], _mm256_and_si256(_mm256_srli_epi16(v, 4), k->nib));
        r = _mm256_and_si256(r, _mm256_and_si256(l, h));
    }
    return r;
}

/* The candidates of the 32 positions from t + s whose buckets are r (only those before b). */
__attribute__((target("avx2"))) static size_t
teddy_check(const struct vf__ms *m, const unsigned char *t, size_t n, size_t s, size_t b, __m256i r)
{
    uint32_t bits = ~(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(r, _mm256_setzero_si256()));
    if (b - s < 32)
        bits &= ((uint32_t)1 << (b - s)) - 1;
    if (!bits)
        return SIZE_MAX;
    uint8_t rb[32];
    _mm256_storeu_si256((__m256i *)rb, r);
    return short_verify(m, t, n, s, bits, rb);
}

__attribute__((target("avx2"))) static size_t
short_avx2(const struct vf__ms *m, const unsigned char *t, size_t n, size_t a, size_t b)
{
    struct teddy_avx2 k;
    k.nib = _mm256_set1_epi8(15);
    for (int j = 0; j < 3; j++) {
        k.lo[j] = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)m->lo[j]));
        k.hi[j] = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)m->hi[j]));
    }
    size_t s = a, x;
    /* 64 positions a round, one test for both halves (a candidate is rare) */
    for (; s + 64 <= b && s + 66 <= n; s += 64) {
        __m256i r0 = teddy32(&k, t + s), r1 = teddy32(&k, t + s + 32),
                any = _mm256_or_si256(r0, r1);
        if (_mm256_testz_si256(any, any))
            continue;
        if ((x = teddy_check(m, t, n, s, b, r0)) != SIZE_MAX ||
            (x = teddy_check(m, t, n, s + 32, b, r1)) != SIZE_MAX)
            return x;
    }
    for (; s < b && s + 34 <= n; s += 32)
        if ((x = teddy_check(m, t, n, s, b, teddy32(&k, t + s))) != SIZE_MAX)
            return x;
    return s < b ? short_scalar(m, t, n, s, b) : SIZE_MAX;
}

__attribute__((target("ssse3"))) static size_t
short_ssse3(const struct vf__ms *m, const unsigned char *t, size_t n, size_t a, size_t b)
{
    __m128i lo[3], hi[3], nib = _mm_set1_epi8(15), zero = _mm_setzero_si128();
    for (int k = 0; k < 3; k++) {
        lo[k] = _mm_loadu_si128((const __m128i *)m->lo[k]);
        hi[k] = _mm_loadu_si128((const __m128i *)m->hi[k]);
    }
    size_t s = a;
    for (; s < b && s + 18 <= n; s += 16) {
        __m128i r = _mm_set1_epi8(-1);
        for (int k = 0; k < 3; k++) {
            __m128i v = _mm_loadu_si128((const __m128i *)(t + s + k));
            __m128i l = _mm_shuffle_epi8(lo[k], _mm_and_si128(v, nib));
            __m128i h = _mm_shuffle_epi8(hi[k], _mm_and_si128(_mm_srli_epi16(v, 4), nib));
            r = _mm_and_si128(r, _mm_and_si128(l, h));
        }
        uint32_t bits = ~(uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(r, zero)) & 0xffff;
        if (b - s < 16)
            bits &= ((uint32_t)1 << (b - s)) - 1;
        if (bits) {
            uint8_t rb[16];
            _mm_storeu_si128((__m128i *)rb, r);
            size_t x = short_verify(m, t, n, s, bits, rb);
            if (x != SIZE_MAX)
                return x;
        }
    }
    return s < b ? short_scalar(m, t, n, s, b) : SIZE_MAX;
}
#endif

/* The first short key starting in [a, b). */
static size_t find_short(const struct vf__ms *m, const unsigned char *t, size_t n, size_t a,
                         size_t b)
{
    if (!m->n_short)
        return SIZE_MAX;
#ifdef HAVE_X86
    if (m->simd >= 2)
        return short_avx2(m, t, n, a, b);
    if (m->simd == 1)
        return short_ssse3(m, t, n, a, b);
#endif
    return short_scalar(m, t, n, a, b);
}

/* The leftmost long key that holds the sample at j, starting in [a, b); SIZE_MAX if none. */
static size_t long_verify(const struct vf__ms *m, const unsigned char *t, size_t n, size_t j,
                          size_t a, size_t b)
{
    uint32_t g = load32(t + j);
    size_t best = SIZE_MAX;
    for (unsigned e = m->head[GRAM_HASH(g)]; e; e = m->ent[e - 1].next) {
        const struct vf__ms_ent *x = &m->ent[e - 1];
        if (x->gram != g || j < x->off)
            continue;
        size_t s = j - x->off, l = x->len;
        /* the key's last 4 bytes first: keys that share a word with the text (a key
         * "trainer.train", a log "trainer.py") part there */
        if (s >= a && s < b && s < best && s + l <= n && load32(t + s + l - 4) == x->tail &&
            !memcmp(t + s, m->pat[x->pat], l - 4))
            best = s;
    }
    return best;
}

static bool sampled(const struct vf__ms *m, const unsigned char *t, size_t j)
{
    uint32_t h = GRAM_HASH(load32(t + j));
    return m->bits[h >> 6] >> (h & 63) & 1;
}

#ifdef HAVE_X86
/* The bits of the 8 samples of t[0..32) (the 4-byte words) in the bitmap: lane i's top bit
 * set when word i's hash is. */
__attribute__((target("avx2"))) static inline __m256i sample32(const int *words,
                                                               const unsigned char *t)
{
    const __m256i k = _mm256_set1_epi32((int)0x9E3779B1u), low5 = _mm256_set1_epi32(31);
    __m256i h = _mm256_srli_epi32(_mm256_mullo_epi32(_mm256_loadu_si256((const __m256i *)t), k),
                                  32 - GRAM_BITS);
    __m256i w = _mm256_i32gather_epi32(words, _mm256_srli_epi32(h, 5), 4);
    return _mm256_sllv_epi32(w, _mm256_sub_epi32(low5, _mm256_and_si256(h, low5)));
}

/* Whether the sample at t + at may lie in a key: a key that holds this piece and 4 bytes 8
 * (or, ending sooner, 4) further on must have those too ("trainer.py" is no "trainer.train").
 * Inline in the raw loops, so that a word the keys share with every line of a log costs no
 * call. */
static inline __attribute__((always_inline)) bool
pair_ok(const struct vf__ms *m, const unsigned char *t, size_t n, size_t at)
{
    uint32_t g = load32(t + at);
    return at + 12 > n || get_bit(m->open_bits, GRAM_HASH(g)) ||
           get_bit(m->pair_bits, PAIR_HASH(g, load32(t + at + 8))) ||
           get_bit(m->pair4_bits, PAIR_HASH(g, load32(t + at + 4)));
}

/* The samples at j + 4 i (bits of mask) whose bitmap bits are set: the first key found;
 * sifted: they passed pair_ok already (raw_sift). */
static size_t long_check(const struct vf__ms *m, const unsigned char *t, size_t n, size_t j,
                         unsigned mask, size_t a, size_t b, bool sifted)
{
    while (mask) {
        unsigned i = (unsigned)__builtin_ctz(mask);
        mask &= mask - 1;
        size_t at = j + 4 * i;
        size_t x = sifted || pair_ok(m, t, n, at) ? long_verify(m, t, n, at, a, b) : SIZE_MAX;
        if (x != SIZE_MAX)
            return x;
    }
    return SIZE_MAX;
}

/* The samples of find_long_keys from a, 16 at a time: the 16 words of 64 bytes are the
 * samples (STRIDE is 4), hashed together, their bits gathered from the bitmap. Returns the
 * first key found, or SIZE_MAX with *next: the first sample not read. */
__attribute__((target("avx2"))) static size_t long_avx2(const struct vf__ms *m,
                                                        const unsigned char *t, size_t n, size_t a,
                                                        size_t b, size_t end, size_t *next)
{
    const int *words = (const int *)m->bits; /* bit h: word h >> 5, bit h & 31 (little endian) */
    size_t j = a;
    for (; j + 64 <= n && j + 60 < end; j += 64) {
        __m256i h0 = sample32(words, t + j), h1 = sample32(words, t + j + 32);
        unsigned mask = (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(h0)) |
                        (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(h1)) << 8;
        size_t x = mask ? long_check(m, t, n, j, mask, a, b, false) : SIZE_MAX;
        if (x != SIZE_MAX)
            return x;
    }
    for (; j + 32 <= n && j + 28 < end; j += 32) {
        unsigned mask = (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(sample32(words, t + j)));
        size_t x = mask ? long_check(m, t, n, j, mask, a, b, false) : SIZE_MAX;
        if (x != SIZE_MAX)
            return x;
    }
    *next = j;
    return SIZE_MAX;
}
#endif

/* The first long key starting in [a, b) of t[0..n). */
static size_t find_long_keys(const struct vf__ms *m, const unsigned char *t, size_t n, size_t a,
                             size_t b)
{
    if (n < 4)
        return SIZE_MAX;
    size_t end = b + STRIDE - 1 < n - 3 ? b + STRIDE - 1 : n - 3; /* samples j < end */
    size_t j = a;
#ifdef HAVE_X86
    if (m->simd >= 2) {
        size_t x = long_avx2(m, t, n, a, b, end, &j);
        if (x != SIZE_MAX)
            return x;
    }
#endif
    for (; j + 3 * STRIDE < end; j += 4 * STRIDE) {
        if (!(sampled(m, t, j) | sampled(m, t, j + STRIDE) | sampled(m, t, j + 2 * STRIDE) |
              sampled(m, t, j + 3 * STRIDE)))
            continue;
        for (size_t k = 0; k < 4; k++) {
            size_t x = sampled(m, t, j + k * STRIDE) ? long_verify(m, t, n, j + k * STRIDE, a, b)
                                                     : SIZE_MAX;
            if (x != SIZE_MAX)
                return x;
        }
    }
    for (; j < end; j += STRIDE) {
        size_t x = sampled(m, t, j) ? long_verify(m, t, n, j, a, b) : SIZE_MAX;
        if (x != SIZE_MAX)
            return x;
    }
    return SIZE_MAX;
}

const char *vf__ms_find(const struct vf__ms *m, const char *text, size_t n)
{
    const unsigned char *t = (const unsigned char *)text;
    for (size_t a = 0; a < n; a += PIECE) {
        size_t b = n - a > PIECE ? a + PIECE : n;
        size_t x = find_long_keys(m, t, n, a, b);
        size_t y = find_short(m, t, n, a, x != SIZE_MAX ? x : b);
        if (y != SIZE_MAX)
            return text + y;
        if (x != SIZE_MAX)
            return text + x;
    }
    return NULL;
}

/* ------------------------------------------- raw lines: one pass (issue 29) */

/*
 * vf__ms_find_raw: what the scanner's raw path needs from a run of raw lines in one pass
 * over their bytes: the first key, or the first escape sequence whose removal would join two
 * bytes that a key holds side by side (it may make a key in the normalised text), and the
 * line breaks before it. With AVX2 the samples, the nibble classes, the escape bytes and the
 * breaks of each 64 bytes are read together (with AVX-512 "tep" too, as an eighth bucket of
 * the byte tables); elsewhere the search, the escape walk and the count run one after
 * the other, as before, with the same answer. The loops make no call: a block with something
 * to read is sifted inline (pair_ok, esc_quiet) and, if anything is left, handed back to
 * vf__ms_find_raw for block_hit (120k of the 16.8M blocks of the 1 GiB HF-Trainer bench log;
 * with a call in them the loops reloaded their tables from the stack every block: 0.170 ->
 * 0.154 s per GiB of that log's text in the cache).
 */

/* The line breaks of p[0..n) as vf__ms_breaks counts them; *cr: whether the byte before p is a
 * CR, on return whether p's last byte is (n > 0). */
static uint64_t breaks_tail(const unsigned char *p, size_t n, bool *cr)
{
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++) {
        total += (p[i] == '\n' || p[i] == '\r') && !*cr;
        *cr = p[i] == '\r';
    }
    return total;
}

/* Whether the escape byte at t + q in t[0..n) opens a run that cannot join and holds no other
 * escape byte, so that the raw loops may drop it with no length read: no key pair starts
 * with the byte before it (a colour code at a line start, as most are), and the run is one
 * CSI sequence (ESC [, parameter and intermediate bytes, a final byte within the 64 bytes
 * normalisation reads) whose next byte is no escape byte. Any other escape byte goes to
 * esc_joins, which reads its run whole: an escape byte inside a run, read as one of its own,
 * could take bytes after the run's end for its own (an OSC string cut at 64 bytes). */
static inline __attribute__((always_inline)) bool esc_quiet(const unsigned char *t, size_t n,
                                                            size_t q, const uint64_t *pairs)
{
    unsigned a = q ? t[q - 1] : '\n';
    if (pairs[a << 2] | pairs[(a << 2) + 1] | pairs[(a << 2) + 2] | pairs[(a << 2) + 3])
        return false;
    if (q + 2 >= n || t[q + 1] != '[')
        return false;
    for (size_t i = q + 2; i < n && i - q <= 64; i++) {
        unsigned c = t[i];
        if (c >= 0x40 && c <= 0x7e)
            return i + 1 < n && t[i + 1] != 0x1b;
        if (c < 0x20 || c > 0x3f)
            return false;
    }
    return false;
}

/* Whether the escape sequence run at t + q (ESC, not inside the run that ends at *skip) joins
 * two bytes a key holds side by side (bit a << 8 | b of pairs) once removed; *skip: where
 * the run ends. */
static bool esc_joins(const unsigned char *t, size_t n, size_t q, const uint64_t *pairs,
                      size_t *skip)
{
    size_t k = vf__oom_esc_len((const char *)t + q, n - q);
    unsigned a = q ? t[q - 1] : '\n', b = q + k < n ? t[q + k] : '\n';
    unsigned i = a << 8 | b;
    *skip = q + k;
    return pairs[i >> 6] >> (i & 63) & 1;
}

/* The first escape sequence in t[from..to) that joins (esc_joins), runs before *skip passed
 * over; SIZE_MAX if none. */
static size_t esc_scan(const unsigned char *t, size_t n, size_t from, size_t to,
                       const uint64_t *pairs, size_t *skip)
{
    for (size_t q = from > *skip ? from : *skip; q < to; q = *skip) {
        const unsigned char *h = memchr(t + q, 0x1b, to - q);
        if (!h)
            break;
        q = (size_t)(h - t);
        if (esc_joins(t, n, q, pairs, skip))
            return q;
    }
    return SIZE_MAX;
}

#ifdef HAVE_X86
/* What the fused loop has read so far. */
struct raw_pass {
    size_t s;      /* the next block */
    uint64_t brk;  /* breaks before it */
    bool cr;       /* the byte before it is a CR */
    size_t skip;   /* escape bytes before this belong to a run already read */
    bool want_tep; /* look for "tep" */
    size_t tep;    /* where the first "tep" starts (SIZE_MAX: none yet) */
    uint8_t r[64]; /* the buckets of the block's positions (when the nibble search hit) */
    /* where a loop stopped, at the block p->s: what its masks hold (block_hit's lm, sh, e),
     * its own breaks and whether its last byte is a CR */
    unsigned lm;
    bool sh;
    uint64_t e, blk_brk;
    bool blk_cr;
};

/* The first hit of the block at p->s: lm the samples whose bits are set, r (when sh) the
 * positions' buckets, e the escape bytes. SIZE_MAX if none. */
static size_t block_hit(const struct vf__ms *m, const unsigned char *t, size_t n,
                        const uint64_t *pairs, struct raw_pass *p, unsigned lm, bool sh, uint64_t e)
{
    size_t s = p->s, best = lm ? long_check(m, t, n, s, lm, 0, n, true) : SIZE_MAX;
    if (sh) {
        for (int h = 0; h < 2; h++) {
            uint32_t bits = 0;
            for (unsigned j = 0; j < 32; j++)
                bits |= (uint32_t)(p->r[32 * h + j] != 0) << j;
            size_t y =
                bits ? short_verify(m, t, n, s + 32u * (unsigned)h, bits, p->r + 32 * h) : SIZE_MAX;
            if (y != SIZE_MAX && y < best) {
                best = y;
                /* a long key starting before y whose sample is the next block's first */
                size_t z =
                    s + 68 <= n && y > s + 60 ? long_verify(m, t, n, s + 64, 0, y) : SIZE_MAX;
                best = z < best ? z : best;
                break;
            }
        }
    }
    while (e) {
        size_t q = s + (size_t)__builtin_ctzll(e);
        e &= e - 1;
        if (q >= best)
            break;
        if (q >= p->skip && esc_joins(t, n, q, pairs, &p->skip))
            return q;
    }
    return best;
}

/* A block's samples whose bitmap bits are set and its escape bytes, sifted inline before
 * block_hit is called: the samples that pass pair_ok, the escape bytes that are not quiet
 * (esc_quiet; the same answer as block_hit's own test), so that the lines of an ordinary log
 * (a Trainer line's "trainer.py" and colour codes) make no call. */
static inline __attribute__((always_inline)) void raw_sift(const struct vf__ms *m,
                                                           const unsigned char *t, size_t n,
                                                           size_t s, const uint64_t *pairs,
                                                           unsigned *lm, uint64_t *e)
{
    for (unsigned k = *lm; k; k &= k - 1) {
        unsigned i = (unsigned)__builtin_ctz(k);
        if (!pair_ok(m, t, n, s + 4 * i))
            *lm &= ~(1u << i);
    }
    for (uint64_t k = *e; k; k &= k - 1) {
        unsigned i = (unsigned)__builtin_ctzll(k);
        if (esc_quiet(t, n, s + i, pairs))
            *e &= ~((uint64_t)1 << i);
    }
}

/* Where a fused loop stops: p brought up to date from the loop's registers (the block at
 * st[0], tep at st[1], the breaks before the block, whether the byte before it is a CR) and,
 * at a block whose masks hold something, those masks and the block's own breaks and last CR
 * (p->blk_*). The loops keep their state in registers and make no call (a call in the loop
 * would have its constants reloaded, and rebuilt with broadcasts, every block): the block is
 * read by block_hit in vf__ms_find_raw, which then starts the loop again after it. */
static bool raw_stop(struct raw_pass *p, const size_t st[2], uint64_t total, uint64_t cr,
                     unsigned lm, bool sh, uint64_t e, uint64_t brk, uint64_t c)
{
    p->s = st[0];
    p->tep = st[1];
    p->brk = total;
    p->cr = cr;
    p->lm = lm;
    p->sh = sh;
    p->e = e;
    p->blk_brk = brk;
    p->blk_cr = c >> 63;
    return lm || sh || e;
}

/* The 64-bit mask of the bytes of t[0..64) equal to c. */
__attribute__((target("avx2"))) static inline uint64_t eq64(__m256i v0, __m256i v1, __m256i c)
{
    return (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(v0, c)) |
           (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(v1, c)) << 32;
}

/* The fused loop over whole 64-byte blocks from p->s (while 68 bytes are left): true at the
 * first block whose masks hold something (raw_stop), false with p at the first block not
 * read. */
__attribute__((target("avx2,popcnt"))) static bool raw_avx2(const struct vf__ms *m,
                                                            const unsigned char *t, size_t n,
                                                            const uint64_t *pairs,
                                                            struct raw_pass *p)
{
    const int *words = (const int *)m->bits;
    struct teddy_avx2 k;
    k.nib = _mm256_set1_epi8(15);
    for (int j = 0; j < 3; j++) {
        k.lo[j] = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)m->lo[j]));
        k.hi[j] = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)m->hi[j]));
    }
    const __m256i lf = _mm256_set1_epi8('\n'), cr = _mm256_set1_epi8('\r'),
                  esc = _mm256_set1_epi8(0x1b);
    size_t st[2] = {p->s, p->tep}; /* the block, where "tep" is first */
    uint64_t total = p->brk, prev_cr = p->cr;
    bool want = p->want_tep && st[1] == SIZE_MAX;
    for (; st[0] + 68 <= n; st[0] += 64) {
        size_t s = st[0];
        _mm_prefetch((const char *)t + s + PREFETCH, _MM_HINT_T0); /* as raw_avx512 */
        __m256i v0 = _mm256_loadu_si256((const __m256i *)(t + s));
        __m256i v1 = _mm256_loadu_si256((const __m256i *)(t + s + 32));
        uint64_t e = eq64(v0, v1, esc), c = eq64(v0, v1, cr);
        uint64_t brk = (eq64(v0, v1, lf) | c) & ~(c << 1 | prev_cr);
        if (want) {
            uint64_t tm =
                eq64(v0, v1, _mm256_set1_epi8('t')) &
                eq64(_mm256_loadu_si256((const __m256i *)(t + s + 1)),
                     _mm256_loadu_si256((const __m256i *)(t + s + 33)), _mm256_set1_epi8('e')) &
                eq64(_mm256_loadu_si256((const __m256i *)(t + s + 2)),
                     _mm256_loadu_si256((const __m256i *)(t + s + 34)), _mm256_set1_epi8('p'));
            if (tm)
                st[1] = s + (size_t)__builtin_ctzll(tm), want = false;
        }
        __m256i h0 = sample32(words, t + s), h1 = sample32(words, t + s + 32);
        unsigned lm = (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(h0)) |
                      (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(h1)) << 8;
        __m256i r0 = teddy32(&k, t + s), r1 = teddy32(&k, t + s + 32);
        __m256i any = _mm256_or_si256(r0, r1);
        bool sh = m->n_short && !_mm256_testz_si256(any, any);
        if (lm | e)
            raw_sift(m, t, n, s, pairs, &lm, &e);
        if (lm || sh || e) {
            if (sh) {
                _mm256_storeu_si256((__m256i *)p->r, r0);
                _mm256_storeu_si256((__m256i *)(p->r + 32), r1);
            }
            return raw_stop(p, st, total, prev_cr, lm, sh, e, brk, c);
        }
        total += (uint64_t)__builtin_popcountll(brk);
        prev_cr = c >> 63;
    }
    return raw_stop(p, st, total, prev_cr, 0, false, 0, 0, 0);
}
#endif

#ifdef HAVE_X86
/* raw_avx2 with AVX-512 (F and BW): the 64 bytes in one register, the 16 samples in one
 * gather, the byte compares straight into masks. */
__attribute__((target("avx512f,avx512bw,avx512vbmi,popcnt"))) static bool
raw_avx512(const struct vf__ms *m, const unsigned char *t, size_t n, const uint64_t *pairs,
           struct raw_pass *p)
{
    const int *words = (const int *)m->bits;
    size_t st[2] = {p->s, p->tep}; /* as raw_avx2 */
    uint64_t total = p->brk, prev_cr = p->cr;
    bool want = p->want_tep && st[1] == SIZE_MAX;
    /* each position's table folded on a byte's low 6 bits, one register (one 1-uop vpermb
     * where the 128-byte table took a 3-uop vpermi2b and a mask of bytes over 127: 0.155 ->
     * 0.132 s per GiB of the HF-Trainer bench log in the cache; the fold lets more positions
     * through to short_at, which compares them whole); with "tep" in bucket 7 while wanted */
    const uint8_t(*ex)[64] = m->ex64[want];
    __m512i lo0 = _mm512_loadu_si512((const void *)ex[0]), lo1 = _mm512_loadu_si512(ex[1]),
            lo2 = _mm512_loadu_si512((const void *)ex[2]);
    const __m512i lf = _mm512_set1_epi8('\n'), cr = _mm512_set1_epi8('\r'),
                  esc = _mm512_set1_epi8(0x1b), mul = _mm512_set1_epi32((int)0x9E3779B1u),
                  low5 = _mm512_set1_epi32(31), one = _mm512_set1_epi32(1),
                  keys = _mm512_set1_epi8(0x7f), tep = _mm512_set1_epi8((char)0x80);
    for (; st[0] + 68 <= n; st[0] += 64) {
        size_t s = st[0];
        /* the next pages before the hardware prefetcher, which stops at a 4 KiB page */
        _mm_prefetch((const char *)t + s + PREFETCH, _MM_HINT_T0);
        __m512i v = _mm512_loadu_si512((const void *)(t + s));
        uint64_t e = _mm512_cmpeq_epi8_mask(v, esc), c = _mm512_cmpeq_epi8_mask(v, cr);
        uint64_t brk = (_mm512_cmpeq_epi8_mask(v, lf) | c) & ~(c << 1 | prev_cr);
        __m512i h = _mm512_srli_epi32(_mm512_mullo_epi32(v, mul), 32 - GRAM_BITS);
        __m512i w = _mm512_i32gather_epi32(_mm512_srli_epi32(h, 5), words, 4);
        unsigned lm = _mm512_test_epi32_mask(_mm512_srlv_epi32(w, _mm512_and_si512(h, low5)), one);
        __m512i x1 = _mm512_loadu_si512((const void *)(t + s + 1)),
                x2 = _mm512_loadu_si512((const void *)(t + s + 2));
        /* the buckets each position's byte may start, by its low 6 bits */
        __m512i c0 = _mm512_permutexvar_epi8(v, lo0), c1 = _mm512_permutexvar_epi8(x1, lo1),
                c2 = _mm512_permutexvar_epi8(x2, lo2);
        __m512i r = _mm512_ternarylogic_epi32(c0, c1, c2, 0x80); /* c0 & c1 & c2 */
        uint64_t tm = want ? _mm512_test_epi8_mask(r, tep) : 0;
        if (tm) { /* maybe "tep" (the tables fold bytes): the first one, then tables without */
            uint64_t t3 = _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8('t')) &
                          _mm512_cmpeq_epi8_mask(x1, _mm512_set1_epi8('e')) &
                          _mm512_cmpeq_epi8_mask(x2, _mm512_set1_epi8('p'));
            if (t3) {
                st[1] = s + (size_t)__builtin_ctzll(t3), want = false;
                lo0 = _mm512_loadu_si512((const void *)m->ex64[0][0]);
                lo1 = _mm512_loadu_si512((const void *)m->ex64[0][1]);
                lo2 = _mm512_loadu_si512((const void *)m->ex64[0][2]);
            }
        }
        bool sh = m->n_short && _mm512_test_epi8_mask(r, keys);
        if (lm | e)
            raw_sift(m, t, n, s, pairs, &lm, &e);
        if (lm || sh || e) {
            if (sh)
                _mm512_storeu_si512((void *)p->r, _mm512_and_si512(r, keys));
            return raw_stop(p, st, total, prev_cr, lm, sh, e, brk, c);
        }
        total += (uint64_t)__builtin_popcountll(brk);
        prev_cr = c >> 63;
    }
    return raw_stop(p, st, total, prev_cr, 0, false, 0, 0, 0);
}
#endif

const char *vf__ms_find_raw(const struct vf__ms *m, const char *text, size_t n,
                            const uint64_t *pairs, struct vf__ms_raw *out)
{
    const unsigned char *t = (const unsigned char *)text;
    size_t x = SIZE_MAX, skip = 0, from = 0;
    bool cr = false;
    out->breaks = 0;
    out->tep = 0;
#ifdef HAVE_X86
    if (m->simd >= 2) {
        struct raw_pass p = {0};
        p.want_tep = out->want_tep;
        p.tep = SIZE_MAX;
        while (m->simd == 3 ? raw_avx512(m, t, n, pairs, &p) : raw_avx2(m, t, n, pairs, &p)) {
            x = block_hit(m, t, n, pairs, &p, p.lm, p.sh, p.e);
            if (x != SIZE_MAX) {
                if (x > p.s)
                    p.brk += breaks_tail(t + p.s, x - p.s, &p.cr);
                break;
            }
            p.brk += (uint64_t)__builtin_popcountll(p.blk_brk);
            p.cr = p.blk_cr;
            p.s += 64;
        }
        out->breaks = p.brk;
        out->tep = !p.want_tep ? 0 : p.tep != SIZE_MAX ? p.tep : p.s; /* none in the blocks read */
        if (x != SIZE_MAX)
            return text + x;
        /* the bytes left: long keys from 3 before (their samples were not read) */
        from = p.s;
        cr = p.cr;
        skip = p.skip;
        x = find_long_keys(m, t, n, from >= 3 ? from - 3 : 0, n);
        size_t y = find_short(m, t, n, from, x != SIZE_MAX ? x : n);
        x = y != SIZE_MAX ? y : x;
    }
#endif
    if (m->simd < 2) {
        const char *h = vf__ms_find(m, text, n);
        x = h ? (size_t)(h - text) : SIZE_MAX;
    }
    size_t end = x != SIZE_MAX ? x : n, q = esc_scan(t, n, from, end, pairs, &skip);
    end = q != SIZE_MAX ? q : end;
    if (!from)
        out->breaks = vf__ms_breaks(text, end);
    else if (end > from) /* a long key may start up to 3 bytes before from: none between */
        out->breaks += breaks_tail(t + from, end - from, &cr);
    return end < n ? text + end : NULL;
}

/* ------------------------------------------------------ byte scans (SSE2) */

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

size_t vf__ms_count(const char *p, size_t n, char c)
{
    size_t i = 0, total = 0;
#if defined(__SSE2__)
    __m128i k = _mm_set1_epi8(c), zero = _mm_setzero_si128();
    while (n - i >= 16) {
        /* each lane counts down by one per match (-1 bytes), at most 255 rounds */
        __m128i acc = zero;
        for (int r = 0; r < 255 && n - i >= 16; r++, i += 16)
            acc = _mm_sub_epi8(acc, _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(p + i)), k));
        __m128i sums = _mm_sad_epu8(acc, zero); /* two 64-bit sums of 8 lanes */
        total +=
            (size_t)_mm_cvtsi128_si64(sums) + (size_t)_mm_cvtsi128_si64(_mm_srli_si128(sums, 8));
    }
#endif
    for (; i < n; i++)
        total += p[i] == c;
    return total;
}

#ifdef HAVE_X86
/* vf__ms_breaks from p[i] (i >= 1) over whole 32-byte blocks; *at: where it stopped. */
__attribute__((target("avx2"))) static uint64_t breaks_avx2(const char *p, size_t n, size_t *at)
{
    const __m256i lf = _mm256_set1_epi8('\n'), cr = _mm256_set1_epi8('\r');
    const __m256i zero = _mm256_setzero_si256();
    uint64_t total = 0;
    size_t i = *at;
    while (n - i >= 32) {
        __m256i acc = zero; /* each lane counts down by one per break, at most 255 rounds */
        for (int r = 0; r < 255 && n - i >= 32; r++, i += 32) {
            __m256i v = _mm256_loadu_si256((const __m256i *)(p + i));
            __m256i w = _mm256_loadu_si256((const __m256i *)(p + i - 1)); /* the byte before */
            __m256i brk = _mm256_or_si256(_mm256_cmpeq_epi8(v, lf), _mm256_cmpeq_epi8(v, cr));
            acc = _mm256_sub_epi8(acc, _mm256_andnot_si256(_mm256_cmpeq_epi8(w, cr), brk));
        }
        __m256i sums = _mm256_sad_epu8(acc, zero);
        total += (uint64_t)_mm256_extract_epi64(sums, 0) + (uint64_t)_mm256_extract_epi64(sums, 1) +
                 (uint64_t)_mm256_extract_epi64(sums, 2) + (uint64_t)_mm256_extract_epi64(sums, 3);
    }
    *at = i;
    return total;
}
#endif

uint64_t vf__ms_breaks(const char *p, size_t n)
{
    if (!n)
        return 0;
    uint64_t total = p[0] == '\n' || p[0] == '\r';
    size_t i = 1;
#ifdef HAVE_X86
    if (__builtin_cpu_supports("avx2"))
        total += breaks_avx2(p, n, &i);
#endif
#if defined(__SSE2__)
    const __m128i lf = _mm_set1_epi8('\n'), cr = _mm_set1_epi8('\r'), zero = _mm_setzero_si128();
    while (n - i >= 16) {
        /* each lane counts down by one per break (-1 bytes), at most 255 rounds */
        __m128i acc = zero;
        for (int r = 0; r < 255 && n - i >= 16; r++, i += 16) {
            __m128i v = _mm_loadu_si128((const __m128i *)(p + i));
            __m128i w = _mm_loadu_si128((const __m128i *)(p + i - 1)); /* the byte before */
            __m128i brk = _mm_or_si128(_mm_cmpeq_epi8(v, lf), _mm_cmpeq_epi8(v, cr));
            acc = _mm_sub_epi8(acc, _mm_andnot_si128(_mm_cmpeq_epi8(w, cr), brk));
        }
        __m128i sums = _mm_sad_epu8(acc, zero);
        total += (uint64_t)_mm_cvtsi128_si64(sums) +
                 (uint64_t)_mm_cvtsi128_si64(_mm_srli_si128(sums, 8));
    }
#endif
    for (; i < n; i++)
        total += (p[i] == '\n' || p[i] == '\r') && p[i - 1] != '\r';
    return total;
}

#ifdef HAVE_X86
__attribute__((target("avx2"))) static size_t find2_avx2(const char *p, size_t n, char a, char b)
{
    __m256i ka = _mm256_set1_epi8(a), kb = _mm256_set1_epi8(b);
    size_t i = 0;
    for (; n - i >= 64; i += 64) {
        __m256i v = _mm256_loadu_si256((const __m256i *)(p + i));
        __m256i w = _mm256_loadu_si256((const __m256i *)(p + i + 32));
        __m256i x = _mm256_or_si256(_mm256_cmpeq_epi8(v, ka), _mm256_cmpeq_epi8(v, kb));
        __m256i y = _mm256_or_si256(_mm256_cmpeq_epi8(w, ka), _mm256_cmpeq_epi8(w, kb));
        if (!_mm256_testz_si256(_mm256_or_si256(x, y), _mm256_or_si256(x, y)))
            break; /* the 16-byte loop finds where */
    }
    return i;
}
#endif

const char *vf__ms_find2(const char *p, size_t n, char a, char b)
{
    size_t i = 0;
#ifdef HAVE_X86
    if (__builtin_cpu_supports("avx2"))
        i = find2_avx2(p, n, a, b);
#endif
#if defined(__SSE2__)
    __m128i ka = _mm_set1_epi8(a), kb = _mm_set1_epi8(b);
    for (; n - i >= 16; i += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(p + i));
        unsigned bits =
            (unsigned)_mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, ka), _mm_cmpeq_epi8(v, kb)));
        if (bits)
            return p + i + __builtin_ctz(bits);
    }
#endif
    for (; i < n; i++)
        if (p[i] == a || p[i] == b)
            return p + i;
    return NULL;
}

#ifdef HAVE_X86
/* vf__ms_find3 over whole 64-byte blocks from 0: where the one holding the first match (or
 * the bytes left) starts. */
__attribute__((target("avx2"))) static size_t find3_avx2(const char *p, size_t n, const char *k)
{
    __m256i k0 = _mm256_set1_epi8(k[0]), k1 = _mm256_set1_epi8(k[1]), k2 = _mm256_set1_epi8(k[2]);
    size_t i = 0;
    for (; n - i >= 66; i += 64) {
        __m256i x = _mm256_and_si256(
            _mm256_and_si256(
                _mm256_cmpeq_epi8(_mm256_loadu_si256((const __m256i *)(p + i)), k0),
                _mm256_cmpeq_epi8(_mm256_loadu_si256((const __m256i *)(p + i + 1)), k1)),
            _mm256_cmpeq_epi8(_mm256_loadu_si256((const __m256i *)(p + i + 2)), k2));
        __m256i y = _mm256_and_si256(
            _mm256_and_si256(
                _mm256_cmpeq_epi8(_mm256_loadu_si256((const __m256i *)(p + i + 32)), k0),
                _mm256_cmpeq_epi8(_mm256_loadu_si256((const __m256i *)(p + i + 33)), k1)),
            _mm256_cmpeq_epi8(_mm256_loadu_si256((const __m256i *)(p + i + 34)), k2));
        __m256i any = _mm256_or_si256(x, y);
        if (!_mm256_testz_si256(any, any))
            break; /* the 16-byte loop finds where */
    }
    return i;
}
#endif

const char *vf__ms_find3(const char *p, size_t n, const char *k)
{
    size_t i = 0;
    if (n < 3)
        return NULL;
#ifdef HAVE_X86
    if (__builtin_cpu_supports("avx2"))
        i = find3_avx2(p, n, k);
#endif
#if defined(__SSE2__)
    __m128i k0 = _mm_set1_epi8(k[0]), k1 = _mm_set1_epi8(k[1]), k2 = _mm_set1_epi8(k[2]);
    for (; n - i >= 18; i += 16) {
        __m128i e0 = _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(p + i)), k0);
        __m128i e1 = _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(p + i + 1)), k1);
        __m128i e2 = _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(p + i + 2)), k2);
        unsigned bits = (unsigned)_mm_movemask_epi8(_mm_and_si128(_mm_and_si128(e0, e1), e2));
        if (bits)
            return p + i + __builtin_ctz(bits);
    }
#endif
    for (; i + 3 <= n; i++)
        if (p[i] == k[0] && p[i + 1] == k[1] && p[i + 2] == k[2])
            return p + i;
    return NULL;
}
