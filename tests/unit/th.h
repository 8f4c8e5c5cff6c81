/* SPDX-License-Identifier: Apache-2.0 */
/*
 * th.h - the unit-test harness: cmocka plus a few helpers shared by tests/unit/t_*.c.
 * Each t_*.c is one binary with its own main() that calls cmocka_run_group_tests().
 */
#ifndef VRAMFIT_TH_H
#define VRAMFIT_TH_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "vramfit.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Asserts two uint64_t are equal, printing both as integers. */
#define assert_u64(a, b) assert_int_equal((uint64_t)(a), (uint64_t)(b))

/*
 * The shared fixture of the estimator tests: the embedded catalog and one arena, opened by
 * th_setup and closed by th_teardown (cmocka group setup/teardown).
 */
static struct vf_catalog *th_cat;
static struct vf_arena *th_arena;

static inline int th_setup(void **state)
{
    (void)state;
    struct vf_error err = {0};
    th_arena = vf_arena_open(0);
    return vf_catalog_open(&th_cat, NULL, &err) || !th_arena;
}

static inline int th_teardown(void **state)
{
    (void)state;
    vf_catalog_close(th_cat);
    vf_arena_close(th_arena);
    return 0;
}

/* A catalog model resolved in th_arena; fails the test when it does not resolve. */
static inline struct vf_model th_model(const char *ref)
{
    struct vf_model m;
    struct vf_error err = {0};
    if (vf_model_resolve(th_arena, th_cat, ref, &m, &err))
        fail_msg("%s", err.msg);
    return m;
}

/* The bytes of the estimate's component `name`; fails the test when there is none. */
static inline uint64_t th_component(const struct vf_estimate *e, const char *name)
{
    for (size_t i = 0; i < e->n_components; i++)
        if (!strcmp(e->components[i].name, name))
            return e->components[i].bytes;
    fail_msg("no component %s", name);
    return 0;
}

/*
 * Reference data the tests read is copied into the repository (tests/fixtures/reference/,
 * its README gives the provenance); paths are relative to the repository root, where
 * tests/run.sh runs the unit binaries. A missing fixture fails the test, never skips it.
 */
#define TH_REFERENCE "tests/fixtures/reference/"

/* Opens the fixture `path` for reading; fails the test, naming the path, when it cannot. */
static inline FILE *th_fixture_open(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("fixture %s: %s (run from the repository root)", path, strerror(errno));
    return f;
}

/*
 * Skips the rest of a test whose check cannot run here for a reason outside the repository
 * (a tool that may be missing; never a missing fixture: that fails). Prints one line
 * "# SKIP <why>", which tests/run.sh counts into the "N skipped" of its final line, and
 * ends the test as skipped (cmocka counts it neither passed nor failed).
 */
#define th_skip(...)                   \
    do {                               \
        printf("# SKIP " __VA_ARGS__); \
        printf("\n");                  \
        fflush(stdout);                \
        skip();                        \
    } while (0)

#endif
