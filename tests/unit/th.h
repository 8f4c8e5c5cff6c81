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

/* Asserts two uint64_t are equal, printing both as integers. */
#define assert_u64(a, b) assert_int_equal((uint64_t)(a), (uint64_t)(b))

#endif
