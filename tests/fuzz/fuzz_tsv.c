/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_tsv.c - libFuzzer target: the TSV reader the catalog and the fake GPU backend use,
 * and the size/token/price parsers on each field.
 */
#include "internal.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    struct vf_arena *a = vf_arena_open((size_t)64 << 20);
    struct vf__tsv t;
    if (a && !vf__tsv_parse(a, (const char *)data, size, "fuzz.tsv", &t, NULL)) {
        for (size_t i = 0; i < t.n_rows; i++)
            for (size_t j = 0; j < t.n_cols; j++) {
                uint64_t v;
                (void)vf_parse_bytes(t.rows[i][j], &v, NULL);
                (void)vf_parse_tokens(t.rows[i][j], &v, NULL);
                (void)vf_parse_price(t.rows[i][j], &v, NULL);
            }
    }
    vf_arena_close(a);
    return 0;
}
