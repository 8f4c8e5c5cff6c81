/* SPDX-License-Identifier: Apache-2.0 */
/*
 * search.c - the monotone search every solver uses: the largest value a predicate holds for.
 * It sits in core because both the engines (their own "fits with" lines) and solve/ (fit,
 * pick) call it; what is searched is theirs.
 */
#include "internal.h"

uint64_t vf_bisect(uint64_t lo, uint64_t hi, bool (*pred)(uint64_t v, void *ud), void *ud)
{
    if (hi < lo || !pred(lo, ud))
        return lo ? lo - 1 : 0;
    /* invariant: pred(lo) true; answer in [lo, hi] */
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo + 1) / 2;
        if (pred(mid, ud))
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}
