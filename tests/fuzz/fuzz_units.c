/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_units.c - libFuzzer target of the unit parsers (units.c: sizes, token counts, prices,
 * counts) and the storage-type parsers, with what must hold of each answer: a parsed number is
 * never the unknown sentinel, and it prints back (exactly) to text that parses to the same
 * number. The printers run on the parsed numbers and on raw 64-bit values of the input.
 */
#include "fuzz.h"

/* The printers on v: every width, never longer than the buffer, NUL-terminated. */
static void print_all(uint64_t v)
{
    char buf[48], small[6];
    (void)vf_format_bytes(buf, sizeof buf, v, VF_FMT_IEC);
    (void)vf_format_bytes(buf, sizeof buf, v, VF_FMT_SI);
    (void)vf_format_bytes(small, sizeof small, v, VF_FMT_IEC);
    (void)vf_format_sbytes(buf, sizeof buf, (int64_t)v);
    (void)vf_format_sbytes(small, sizeof small, (int64_t)v);
    (void)vf_format_tokens(buf, sizeof buf, v);
    (void)vf__format_grouped(buf, sizeof buf, v);
    (void)vf__format_grouped(small, sizeof small, v);
    for (int d = -1; d <= 7; d++)
        (void)vf_format_price(buf, sizeof buf, v, d);
}

/* v, parsed from text, prints back to text that parses to v again. */
static void round_trip(uint64_t v, bool price)
{
    char buf[48];
    uint64_t again = 0;
    if (v == VF_UNKNOWN)
        __builtin_trap(); /* a number equal to the sentinel reads as "unknown" downstream */
    if (price) {
        vf_format_price(buf, sizeof buf, v, 6);
        if (vf_parse_price(buf, &again, NULL) || again != v)
            __builtin_trap();
    } else {
        vf_format_bytes(buf, sizeof buf, v, VF_FMT_EXACT);
        if (vf_parse_bytes(buf, &again, NULL) || again != v)
            __builtin_trap();
    }
    print_all(v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_text(data, size);
    uint64_t v;
    struct vf_error err;
    struct vf_quant q;
    enum vf_dtype dt;
    if (!s)
        return 0;
    if (!vf_parse_bytes(s, &v, &err))
        round_trip(v, false);
    if (!vf_parse_tokens(s, &v, &err)) {
        if (v > VF_MAX_CTX_TOKENS)
            __builtin_trap();
        round_trip(v, false);
    }
    if (!vf_parse_price(s, &v, &err))
        round_trip(v, true);
    if (!vf_parse_count(s, &v, &err))
        round_trip(v, false);
    (void)vf_quant_parse(s, &q, &err);
    (void)vf_kv_dtype_parse(s, &dt, &err);
    for (size_t i = 0; i + 8 <= size && i < 64; i += 8) {
        memcpy(&v, data + i, 8);
        print_all(v);
    }
    free(s);
    return 0;
}
