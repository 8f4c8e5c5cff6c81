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

uint64_t vf__gallop(uint64_t lo, uint64_t from, uint64_t hi, bool (*pred)(uint64_t v, void *ud),
                    void *ud)
{
    if (from < lo)
        from = lo;
    if (from > hi)
        from = hi;
    if (!pred(from, ud))
        return vf_bisect(lo, from - 1 < lo ? lo : from - 1, pred, ud);
    uint64_t step = from > 1 ? from : 1, ok = from;
    while (ok < hi) {
        uint64_t next = hi - ok > step ? ok + step : hi;
        if (!pred(next, ud))
            return vf_bisect(ok, next - 1, pred, ud);
        ok = next;
        step *= 2;
    }
    return ok;
}
