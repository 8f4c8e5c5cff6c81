/* SPDX-License-Identifier: Apache-2.0 */
/*
 * t_limits.c - no silent truncation in result building (issue 14): a table of an estimate
 * that is full marks it incomplete (vf_estimate then fails with VF_ELIMIT naming the limit),
 * and texts are kept whole, never cut at a buffer's size.
 */
#include "th.h"

#include "internal.h"

static void test_assumptions_past_the_table(void **state)
{
    (void)state;
    struct vf_arena *a = vf_arena_open(0);
    struct vf_estimate e;
    memset(&e, 0, sizeof e);
    for (int i = 0; i < VF_MAX_ASSUMPTIONS; i++)
        vf__assume(a, &e, "assumption %d", i);
    assert_null(e.incomplete); /* 24 fit */
    vf__assume(a, &e, "the 25th");
    assert_int_equal(e.n_assumptions, VF_MAX_ASSUMPTIONS);
    assert_non_null(e.incomplete);
    assert_non_null(strstr(e.incomplete, "VF_MAX_ASSUMPTIONS"));
    vf_arena_close(a);
}

static void test_texts_kept_whole(void **state)
{
    (void)state;
    struct vf_arena *a = vf_arena_open(0);
    struct vf_estimate f;
    memset(&f, 0, sizeof f);
    char big[1001];
    memset(big, 'x', 1000);
    big[1000] = 0;
    vf__assume(a, &f, "%s", big);
    vf__line(a, &f, "%s", big);
    /* 1000 bytes, twice the old 512-byte buffer */
    assert_int_equal(strlen(f.assumptions[0]), 1000);
    assert_int_equal(strlen(f.lines[0]), 1000);
    assert_null(f.incomplete);
    for (int i = 0; i <= VF_MAX_COMPONENTS; i++)
        vf__add_component(&f, "weights", 1, NULL, NULL);
    assert_int_equal(f.n_components, VF_MAX_COMPONENTS);
    assert_non_null(strstr(f.incomplete, "VF_MAX_COMPONENTS"));
    vf_arena_close(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_assumptions_past_the_table),
        cmocka_unit_test(test_texts_kept_whole),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
