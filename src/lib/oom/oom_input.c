/* SPDX-License-Identifier: Apache-2.0 */
/*
 * oom_input.c - what a paste does to a log before the scanner reads it (issue 18): a
 * carriage return is a line break (a progress bar's rewrites are lines of their own; a
 * CRLF pair, or CRs in a row before an LF, is one break), and terminal colour codes (ANSI escape
 * sequences) are removed wherever they stand, also between a number and its unit. State is kept
 * across feeds, so a sequence or a CRLF pair split between two feeds reads the same.
 */
#include "oom.h"

#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define ESC 0x1b
#define BEL 0x07
/* longest escape sequence removed; a longer one is cut there (bounded, junk-safe) */
#define SEQ_MAX 64

enum { N_TEXT, N_ESC, N_CSI, N_OSC, N_OSC_ESC };

bool vf__oom_norm_needed(const struct vf__oom_norm *st, const char *buf, size_t len)
{
    if (st->state != N_TEXT || st->after_cr)
        return true;
    /* one pass for both bytes; a CR right before its LF is left to the line reader (it drops
     * one) */
    const char *end = buf + len;
    for (const char *p = buf; (p = vf__ms_find2(p, (size_t)(end - p), ESC, '\r')) != NULL; p++)
        if (*p == ESC || p + 1 >= end || p[1] != '\n')
            return true;
    return false;
}

/* One byte inside an escape sequence: the state after it. */
static int seq_byte(struct vf__oom_norm *st, unsigned char c)
{
    if (++st->seq_len > SEQ_MAX)
        return N_TEXT;
    switch (st->state) {
    case N_ESC:
        if (c == '[')
            return N_CSI;
        if (c == ']')
            return N_OSC;
        return N_TEXT; /* a two-byte sequence (ESC 7, ESC =, ...) ends here */
    case N_CSI:
        return c >= 0x40 && c <= 0x7e ? N_TEXT : N_CSI; /* parameters until the final byte */
    case N_OSC:
        return c == BEL ? N_TEXT : c == ESC ? N_OSC_ESC : N_OSC;
    default: /* N_OSC_ESC: ESC \ ends the string */
        return c == '\\' ? N_TEXT : N_OSC;
    }
}

/* Copies the plain text in[i..) to out + *o up to the next byte that normalisation changes (an
 * escape byte or a CR), 16 bytes at a time where SSE2 is there; returns where it stopped. */
static size_t copy_plain(const char *in, size_t n, size_t i, char *out, size_t *o)
{
#if defined(__SSE2__)
    const __m128i esc = _mm_set1_epi8(ESC), cr = _mm_set1_epi8('\r');
    while (n - i >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(in + i));
        unsigned m = (unsigned)_mm_movemask_epi8(
            _mm_or_si128(_mm_cmpeq_epi8(v, esc), _mm_cmpeq_epi8(v, cr)));
        size_t k = m ? (size_t)__builtin_ctz(m) : 16;
        _mm_storeu_si128((__m128i *)(out + *o), v); /* out has room: it is at least n long */
        *o += k;
        i += k;
        if (m)
            return i;
    }
#endif
    for (; i < n && in[i] != ESC && in[i] != '\r'; i++)
        out[(*o)++] = in[i];
    return i;
}

size_t vf__oom_esc_len(const char *p, size_t n)
{
    struct vf__oom_norm st = {N_ESC, 0, false};
    size_t i = 1;
    while (i < n) {
        unsigned char c = (unsigned char)p[i];
        if (st.state == N_TEXT) {
            if (c != ESC)
                break; /* the text after the run */
            st.state = N_ESC;
            st.seq_len = 0;
        } else {
            bool in_osc = st.state == N_OSC || st.state == N_OSC_ESC;
            if (c == ESC && !in_osc) { /* it ends a broken sequence and opens the next */
                st.state = N_ESC;
                st.seq_len = 0;
                i++;
                continue;
            }
            if (!(c >= 0x20 || c == BEL || c == ESC))
                break; /* a control byte ends a broken sequence and stays (as normalize) */
            st.state = seq_byte(&st, c);
        }
        i++;
    }
    return i;
}

size_t vf__oom_normalize(struct vf__oom_norm *st, const char *in, size_t n, char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (st->state == N_TEXT && !st->after_cr) {
            i = copy_plain(in, n, i, out, &o); /* plain text: copied as one run */
            if (i == n)
                break;
        }
        unsigned char c = (unsigned char)in[i];
        bool after_cr = st->after_cr;
        st->after_cr = false;
        if (st->state != N_TEXT) {
            bool in_osc = st->state == N_OSC || st->state == N_OSC_ESC;
            if (c >= 0x20 || c == BEL || (c == ESC && in_osc)) {
                st->state = seq_byte(st, c);
                continue;
            }
            st->state = N_TEXT; /* a control byte (a line break) ends a broken sequence */
        }
        if (c == ESC) {
            st->state = N_ESC;
            st->seq_len = 0;
            continue;
        }
        if ((c == '\n' || c == '\r') && after_cr) {
            st->after_cr = c == '\r';
            continue; /* the LF of a CRLF pair (or CRs in a row): the CR broke the line */
        }
        if (c == '\r') {
            st->after_cr = true;
            c = '\n';
        }
        out[o++] = (char)c;
    }
    return o;
}
