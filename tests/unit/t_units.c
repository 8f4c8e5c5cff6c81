/* SPDX-License-Identifier: Apache-2.0 */
/*
 * t_units.c - sizes, token counts, prices: parsing exactly and printing as PyTorch does.
 */
#include "th.h"

#include "internal.h"

#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t bytes(const char *s)
{
    uint64_t v = 0;
    struct vf_error err = {0};
    assert_int_equal(vf_parse_bytes(s, &v, &err), VF_OK);
    return v;
}

static void parse_sizes(void **state)
{
    (void)state;
    assert_u64(bytes("24GiB"), 24ULL << 30);
    assert_u64(bytes("24G"), 24ULL << 30);     /* bare G is binary, as PyTorch prints */
    assert_u64(bytes("24GB"), 24000000000ULL); /* GB is SI */
    assert_u64(bytes("24576MiB"), 24576ULL << 20);
    assert_u64(bytes("1024"), 1024);
    assert_u64(bytes("512 KiB"), 512 * 1024);
    /* 23.65 GiB = 23 x 2^30 + 0.65 x 2^30 = 24696061952 + 697932185.6 = 25393994137.6,
     * rounded half up to 25393994138 */
    assert_u64(bytes("23.65GiB"), 25393994138ULL);
    assert_u64(bytes("1.5TB"), 1500000000000ULL);
    assert_u64(bytes("0.5k"), 512);
}

static void reject_sizes(void **state)
{
    (void)state;
    uint64_t v;
    struct vf_error err = {0};
    assert_int_equal(vf_parse_bytes("24XB", &v, &err), VF_EINVAL);
    assert_non_null(strstr(err.msg, "bad size '24XB'"));
    assert_non_null(strstr(err.msg, "24GB = 10^9"));
    assert_int_equal(vf_parse_bytes("", &v, &err), VF_EINVAL);
    assert_int_equal(vf_parse_bytes("GiB", &v, &err), VF_EINVAL);
    assert_int_equal(vf_parse_bytes("1.5", &v, &err), VF_EINVAL); /* fractional bytes */
    assert_int_equal(vf_parse_bytes("-3GiB", &v, &err), VF_EINVAL);
    assert_int_equal(vf_parse_bytes("99999999999999999999", &v, &err), VF_ERANGE);
    assert_int_equal(vf_parse_bytes("20000000000TiB", &v, &err), VF_ERANGE);
    char longs[200];
    memset(longs, '9', sizeof longs - 1);
    longs[sizeof longs - 1] = 0;
    assert_int_equal(vf_parse_bytes(longs, &v, &err), VF_ELIMIT);
}

static void tokens(void **state)
{
    (void)state;
    uint64_t v;
    struct vf_error err = {0};
    assert_int_equal(vf_parse_tokens("32k", &v, &err), VF_OK);
    assert_u64(v, 32768);
    assert_int_equal(vf_parse_tokens("128K", &v, &err), VF_OK);
    assert_u64(v, 131072);
    assert_int_equal(vf_parse_tokens("131072", &v, &err), VF_OK);
    assert_u64(v, 131072);
    assert_int_equal(vf_parse_tokens("1M", &v, &err), VF_OK);
    assert_u64(v, 1048576);
    assert_int_equal(vf_parse_tokens("32kb", &v, &err), VF_EINVAL);
    assert_non_null(strstr(err.msg, "32k, 32K"));
    assert_int_equal(vf_parse_tokens("2000000000", &v, &err), VF_ERANGE);
}

static void prices(void **state)
{
    (void)state;
    uint64_t v;
    struct vf_error err = {0};
    assert_int_equal(vf_parse_price("0.59", &v, &err), VF_OK);
    assert_u64(v, 590000);
    assert_int_equal(vf_parse_price("3.90", &v, &err), VF_OK);
    assert_u64(v, 3900000);
    assert_int_equal(vf_parse_price("0.000190", &v, &err), VF_OK);
    assert_u64(v, 190);
    assert_int_equal(vf_parse_price("0.0000001", &v, &err), VF_EINVAL); /* 7 decimals */
    assert_int_equal(vf_parse_price("1 EUR", &v, &err), VF_EINVAL);
    char b[32];
    /* 0.76 EUR/h per minute = 0.0126666 -> 0.0127 (4 decimals, half up) */
    assert_string_equal(vf_format_price(b, sizeof b, (760000 + 30) / 60, 4), "0.0127");
    assert_string_equal(vf_format_price(b, sizeof b, 590000, 2), "0.59");
    assert_string_equal(vf_format_price(b, sizeof b, 3900000, 2), "3.90");
}

static void format(void **state)
{
    (void)state;
    char b[32];
    /* the RTX 4090's CUDA total: 24218 MiB = 23.650390625 GiB -> "23.65 GiB" */
    assert_string_equal(vf_format_bytes(b, sizeof b, 24218ULL << 20, VF_FMT_IEC), "23.65 GiB");
    /* the H100's: 81121 MiB = 79.2197265625 GiB -> "79.22 GiB" */
    assert_string_equal(vf_format_bytes(b, sizeof b, 81121ULL << 20, VF_FMT_IEC), "79.22 GiB");
    assert_string_equal(vf_format_bytes(b, sizeof b, 11596726ULL, VF_FMT_IEC), "11.06 MiB");
    assert_string_equal(vf_format_bytes(b, sizeof b, 999, VF_FMT_IEC), "999 B");
    assert_string_equal(vf_format_bytes(b, sizeof b, 25393692672ULL, VF_FMT_SI), "25.39 GB");
    assert_string_equal(vf_format_bytes(b, sizeof b, 123, VF_FMT_EXACT), "123");
    assert_string_equal(vf_format_bytes(b, sizeof b, VF_UNKNOWN, VF_FMT_IEC), "?");
    assert_string_equal(vf_format_sbytes(b, sizeof b, -(int64_t)(1ULL << 30)), "-1.00 GiB");
    assert_string_equal(vf_format_tokens(b, sizeof b, 32768), "32k");
    assert_string_equal(vf_format_tokens(b, sizeof b, 7105), "7105");
}

static void counts(void **state)
{
    (void)state;
    uint64_t v;
    assert_int_equal(vf_parse_count("4", &v, NULL), VF_OK);
    assert_u64(v, 4);
    assert_int_equal(vf_parse_count("4k", &v, NULL), VF_EINVAL);
    assert_int_equal(vf_parse_count("1.5", &v, NULL), VF_EINVAL);
}

/* The counts' fast path (plain digits, up to 19) gives what the general path gives: every
 * value below 10^19 read back from its text, with leading zeros and with spaces (the general
 * path's). A 20-digit count is the general path's: 2^64 - 2 reads, 2^64 - 1 (VF_UNKNOWN) and 2^64
 * are too large. */
static void counts_fast_path(void **state)
{
    (void)state;
    uint64_t x = 0x9E3779B97F4A7C15ULL, v = 0;
    char buf[48];
    for (int i = 0; i < 20000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        uint64_t want = x % 10000000000000000000ULL >> (i % 64);
        snprintf(buf, sizeof buf, i % 3 ? "%llu" : "00%llu ", (unsigned long long)want);
        assert_int_equal(vf_parse_count(buf, &v, NULL), VF_OK);
        assert_u64(v, want);
    }
    assert_int_equal(vf_parse_count("18446744073709551614", &v, NULL), VF_OK);
    assert_u64(v, UINT64_MAX - 1);
    /* 2^64 - 1 is VF_UNKNOWN, the library's "not known": too large as a count */
    assert_int_equal(vf_parse_count("18446744073709551615", &v, NULL), VF_ERANGE);
    assert_int_equal(vf_parse_count("18446744073709551616", &v, NULL), VF_ERANGE);
    assert_int_equal(vf_parse_count("", &v, NULL), VF_EINVAL);
    assert_int_equal(vf_parse_count("12x", &v, NULL), VF_EINVAL);
}

/* vf__strtod gives strtod's value, bit for bit, and stops where strtod stops: random
 * decimals of 1 to 24 digits with the point anywhere (past 19 digits and 2^53 the general
 * path's), and texts the fast path must hand over (signs, exponents, hex, inf). */
static void strtod_as_libc(void **state)
{
    (void)state;
    static const char *const odd[] = {"0",
                                      ".5",
                                      "5.",
                                      ".",
                                      "1e5",
                                      "1.5E-3",
                                      "0x10",
                                      " 1",
                                      "-1.5",
                                      "+2",
                                      "inf",
                                      "nan",
                                      "12abc",
                                      "3.25.1",
                                      "1e",
                                      "",
                                      "9007199254740993",
                                      "0.1",
                                      "0.3",
                                      "1e400",
                                      "123456789.0123456789012345",
                                      "00000000000000000000001"};
    char buf[40];
    uint64_t x = 88172645463325252ULL;
    for (int i = 0; i < 200000 + (int)(sizeof odd / sizeof *odd); i++) {
        const char *s = buf;
        if (i >= 200000) {
            s = odd[i - 200000];
        } else {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            int n = 1 + (int)(x % 24), dot = (int)((x >> 8) % (unsigned)(n + 2)), k = 0;
            uint64_t y = x;
            for (int d = 0; d < n; d++, y = y * 6364136223846793005ULL + 1) {
                if (d == dot)
                    buf[k++] = '.';
                buf[k++] = (char)('0' + (y >> 33) % 10);
            }
            buf[k] = 0;
        }
        char *e1, *e2;
        double a = vf__strtod(s, &e1), b = strtod(s, &e2);
        assert_memory_equal(&a, &b, sizeof a);
        assert_ptr_equal(e1, e2);
    }
}

/* The string builder's own formatting (core/sb.c, the conversions renderers use most)
 * prints what snprintf prints; formats it does not read (precision, floating point) go to
 * vsnprintf. Random widths, sides and values, the extremes of each type. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral" /* the formats are made at random */
static void sb_as_snprintf(void **state)
{
    (void)state;
    struct vf_arena *a = vf_arena_open(0);
    assert_non_null(a);
    static const char *const strs[] = {"", "a", "KV cache", "\u2588\u2588",
                                       "a long label of words"};
    static const long long ints[] = {0, 1, -1, 42, -42, INT_MIN, INT_MAX, LLONG_MIN, LLONG_MAX};
    uint64_t x = 0x2545F4914F6CDD1DULL;
    char fmt[64], want[512];
    for (int i = 0; i < 20000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        const char *side = x & 1 ? "-" : "";
        unsigned w = (unsigned)(x >> 4) % 30;
        const char *s = strs[(x >> 12) % 5];
        long long v = ints[(x >> 16) % 9];
        unsigned long long u = (unsigned long long)v ^ (x >> 20);
        struct vf__sb b;
        vf__sb_init(&b, a);
        switch ((x >> 40) % 7) {
        case 0:
            snprintf(fmt, sizeof fmt, "[%%%s%us] %%%% %%c|", side, w);
            snprintf(want, sizeof want, fmt, s, 'q');
            vf__sb_printf(&b, fmt, s, 'q');
            break;
        case 1:
            snprintf(fmt, sizeof fmt, "%%%s%ud/%%%s%ulld", side, w, side, w);
            snprintf(want, sizeof want, fmt, (int)v, v);
            vf__sb_printf(&b, fmt, (int)v, v);
            break;
        case 2:
            snprintf(fmt, sizeof fmt, "%%%s%uu %%llu %%zu", side, w);
            snprintf(want, sizeof want, fmt, (unsigned)u, u, (size_t)u);
            vf__sb_printf(&b, fmt, (unsigned)u, u, (size_t)u);
            break;
        case 3:
            snprintf(fmt, sizeof fmt, "%%lu %%%s%uld %%zd", side, w);
            snprintf(want, sizeof want, fmt, (unsigned long)u, (long)v, (ptrdiff_t)v);
            vf__sb_printf(&b, fmt, (unsigned long)u, (long)v, (ptrdiff_t)v);
            break;
        case 4:
            snprintf(fmt, sizeof fmt, "%%.2f %%%s%us %%5.1f", side, w);
            snprintf(want, sizeof want, fmt, (double)v / 7, s, (double)u);
            vf__sb_printf(&b, fmt, (double)v / 7, s, (double)u);
            break;
        case 5:
            /* zero padding, alone in its format (render_prom's "%u.%02u") */
            snprintf(fmt, sizeof fmt, "%%u.%%0%uu|%%%s%uzu", w % 4 + 1, side, w);
            snprintf(want, sizeof want, fmt, (unsigned)v, (unsigned)u % 100, (size_t)u);
            vf__sb_printf(&b, fmt, (unsigned)v, (unsigned)u % 100, (size_t)u);
            break;
        default:
            snprintf(fmt, sizeof fmt, "%%+d %%%s%ux %%08u", side, w);
            snprintf(want, sizeof want, fmt, (int)v, (unsigned)u, (unsigned)u);
            vf__sb_printf(&b, fmt, (int)v, (unsigned)u, (unsigned)u);
            break;
        }
        assert_string_equal(vf__sb_done(&b), want);
    }
    vf_arena_close(a);
}
#pragma GCC diagnostic pop

/* The library's own power and rounding (core/util.c, no libm in the binaries) against libm:
 * x^n within 2n roundings of pow's for shares in (0, 1) and counts up to 2^20 (squaring doubles
 * a relative error: 2.3e-10 at 2^20, for the MoE share of F-SPD-01), exact for small integers;
 * round() of values in [0, 2^40) exactly. */
static void powi_round_as_libm(void **state)
{
    (void)state;
    uint64_t x = 0x853C49E6748FEA9BULL;
    for (int i = 0; i < 20000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        double b = (double)(x >> 11) / 9007199254740992.0; /* [0, 1) */
        uint64_t n = (x >> 3) % (1u << 20);
        double want = pow(b, (double)n), got = vf__powi(b, n);
        assert_true(fabs(got - want) <= (double)(2 * n + 2) * 1.2e-16 * want ||
                    fabs(got - want) < 1e-300);
        double r = (double)(x >> 24) / 64.0; /* [0, 2^40), halves and quarters among them */
        assert_true(vf__round_pos(r) == round(r));
    }
    assert_true(vf__powi(3.0, 13) == 1594323.0);
    assert_true(vf__powi(0.5, 0) == 1.0);
    assert_true(vf__round_pos(2.5) == 3.0 && vf__round_pos(0.49999999999999994) == 0.0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parse_sizes),      cmocka_unit_test(reject_sizes),
        cmocka_unit_test(tokens),           cmocka_unit_test(prices),
        cmocka_unit_test(format),           cmocka_unit_test(counts),
        cmocka_unit_test(counts_fast_path), cmocka_unit_test(strtod_as_libc),
        cmocka_unit_test(sb_as_snprintf),   cmocka_unit_test(powi_round_as_libm),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
