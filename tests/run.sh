#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# run.sh [--unit-only|--golden-only] BUILD_DIR [UNIT_BINARY...]
# Runs the cmocka unit binaries, the fuzz smoke run, the golden CLI tests and the suites; ends
# with "N passed, N failed", or "N passed, N failed, N skipped" when a check was skipped.
#
# Skips are counted, never silent:
# - a unit test prints one line "# SKIP <why>" per skipped check (th_skip() of
#   tests/unit/th.h); a binary's skips are the larger of that count and cmocka's
#   "[  SKIPPED ] N test(s)";
# - a suite (http, tui, run, browser, json, readme, fleet) ends with "NAME: N passed, N failed" or
#   "NAME: N passed, N failed, N skipped";
# - a fuzz target of tests/fuzz/ with no binary in BUILD_DIR/fuzz is one skip.
# Data the tests read is in the repository (tests/fixtures/): a missing fixture fails.
mode=all
case "$1" in --unit-only) mode=unit; shift ;; --golden-only) mode=golden; shift ;; esac
build=$1
shift
passed=0
failed=0
skipped=0
if [ "$mode" != golden ]; then
    for t in "$@"; do
        out=$("$t" 2>&1)
        rc=$?
        p=$(printf '%s\n' "$out" | sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' | tail -n 1)
        f=$(printf '%s\n' "$out" | sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' | tail -n 1)
        s=$(printf '%s\n' "$out" | sed -n 's/^\[  SKIPPED \] \([0-9]*\) test.*/\1/p' | tail -n 1)
        n_skip=$(printf '%s\n' "$out" | grep -c '^# SKIP ')
        p=${p:-0}
        f=${f:-0}
        s=${s:-0}
        [ "$n_skip" -gt "$s" ] && s=$n_skip
        if [ "$rc" != 0 ] && [ "$f" = 0 ]; then
            f=1 # crashed or failed outside a test
        fi
        printf '%s\n' "$out" | grep '^# SKIP ' | sed "s/^# SKIP /skip unit $(basename "$t"): /"
        if [ "$f" != 0 ]; then
            printf '%s\n' "$out" | grep -E 'FAILED|ERROR|error|Failure|fail' | head -40
            echo "FAIL unit $(basename "$t"): $f failed"
        elif [ "$s" != 0 ]; then
            echo "ok   unit $(basename "$t"): $p passed, $s skipped"
        else
            echo "ok   unit $(basename "$t"): $p passed"
        fi
        passed=$((passed + p))
        failed=$((failed + f))
        skipped=$((skipped + s))
    done
fi
if [ "$mode" = all ]; then
    # a short fuzz smoke run of every libFuzzer target (make fuzz runs them long); `make test`
    # builds them all, so a target without its binary is counted as skipped, not passed over
    for src in tests/fuzz/fuzz_*.c; do
        [ -f "$src" ] || continue
        f=$build/fuzz/$(basename "$src" .c)
        if [ ! -x "$f" ]; then
            echo "skip fuzz $(basename "$src" .c): no binary $f (make $f)"
            skipped=$((skipped + 1))
        elif FUZZ_WALL_FACTOR=2 sh tests/fuzz/run.sh "${FUZZ_SMOKE_SECONDS:-4}" "$f"; then
            passed=$((passed + 1))
        else
            failed=$((failed + 1))
        fi
    done
fi
if [ "$mode" != unit ]; then
    res=$(sh tests/golden/run.sh "$build/vramfit")
    printf '%s\n' "$res" | grep -v '^golden: '
    gp=$(printf '%s\n' "$res" | sed -n 's/^golden: \([0-9]*\) passed, \([0-9]*\) failed$/\1/p')
    gf=$(printf '%s\n' "$res" | sed -n 's/^golden: \([0-9]*\) passed, \([0-9]*\) failed$/\2/p')
    passed=$((passed + ${gp:-0}))
    failed=$((failed + ${gf:-1}))
fi
# suites that print "NAME: N passed, N failed[, N skipped]" last: HTTP, the terminal UI, the
# run monitor, the browser, the JSON validity of every --json output; a suite whose last line
# is missing (it did not run, or crashed) counts as one failure
suite() { # NAME SCRIPT ARGS...
    name=$1
    shift
    res=$(sh "$@" 2>&1)
    printf '%s\n' "$res" | grep -v "^$name: " | grep -v '^ok '
    n_ok=$(printf '%s\n' "$res" | grep -c '^ok ')
    [ "$n_ok" -gt 0 ] && echo "ok   $name: $n_ok checks"
    last=$(printf '%s\n' "$res" | grep "^$name: [0-9]* passed, [0-9]* failed" | tail -n 1)
    re="^$name: \([0-9]*\) passed, \([0-9]*\) failed\(, \([0-9]*\) skipped\)\{0,1\}$"
    sp=$(printf '%s\n' "$last" | sed -n "s/$re/\1/p")
    sf=$(printf '%s\n' "$last" | sed -n "s/$re/\2/p")
    ss=$(printf '%s\n' "$last" | sed -n "s/$re/\4/p")
    [ -n "$sp" ] || echo "FAIL $name: no \"$name: N passed, N failed\" line from $1"
    passed=$((passed + ${sp:-0}))
    failed=$((failed + ${sf:-1}))
    skipped=$((skipped + ${ss:-0}))
}
if [ "$mode" = all ]; then
    suite http tests/http/run.sh "$build/vramfit"
    suite tui tests/tui/run.sh "$build/vramfit"
    suite run tests/run/run.sh "$build/vramfit"
    suite browser tests/browser/run.sh "$build/vramfit" "$build/browser"
    suite json tests/json/run.sh "$build/vramfit"
    suite readme tests/readme/run.sh "$build/vramfit"
    # the exporter under a real Prometheus, the alert rules, dashboard and DaemonSet (issue 26)
    suite fleet tests/fleet/run.sh "$build/vramfit"
    # make install and the Debian packages, with the plain build only (a sanitizer build's
    # library needs its runtime to link a program against)
    if [ -z "${SAN:-}" ]; then
        DEB=${DEB:-1}
        export DEB
        suite install tests/install/run.sh "$build"
    fi
fi
# the final line: "N passed, N failed" as the README states it, ", N skipped" only when a
# check was skipped
if [ "$skipped" -gt 0 ]; then
    echo "$passed passed, $failed failed, $skipped skipped"
else
    echo "$passed passed, $failed failed"
fi
[ "$failed" = 0 ]
