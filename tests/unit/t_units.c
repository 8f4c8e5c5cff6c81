/* SPDX-License-Identifier: Apache-2.0 */
/*
 * t_units.c - sizes, token counts, prices: parsing exactly and printing as PyTorch does.
 */
#include "th.h"

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parse_sizes), cmocka_unit_test(reject_sizes), cmocka_unit_test(tokens),
        cmocka_unit_test(prices),      cmocka_unit_test(format),       cmocka_unit_test(counts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
