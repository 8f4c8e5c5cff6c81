#!/bin/sh
# run.sh [--unit-only|--golden-only] BUILD_DIR [UNIT_BINARY...]
# Runs the cmocka unit binaries and the golden CLI tests; ends with "N passed, N failed".
mode=all
case "$1" in --unit-only) mode=unit; shift ;; --golden-only) mode=golden; shift ;; esac
build=$1
shift
passed=0
failed=0
if [ "$mode" != golden ]; then
    for t in "$@"; do
        out=$("$t" 2>&1)
        rc=$?
        p=$(printf '%s\n' "$out" | sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' | tail -n 1)
        f=$(printf '%s\n' "$out" | sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' | tail -n 1)
        p=${p:-0}
        f=${f:-0}
        if [ "$rc" != 0 ] && [ "$f" = 0 ]; then
            f=1 # crashed or failed outside a test
        fi
        if [ "$f" != 0 ]; then
            printf '%s\n' "$out" | grep -E 'FAILED|ERROR|error|Failure|fail' | head -40
            echo "FAIL unit $(basename "$t"): $f failed"
        else
            echo "ok   unit $(basename "$t"): $p passed"
        fi
        passed=$((passed + p))
        failed=$((failed + f))
    done
fi
if [ "$mode" = all ] && [ -d "$build/fuzz" ]; then
    # a short fuzz smoke run of every libFuzzer target (make fuzz runs them long)
    for f in "$build"/fuzz/fuzz_*; do
        [ -x "$f" ] || continue
        if sh tests/fuzz/run.sh "${FUZZ_SMOKE_SECONDS:-5}" "$f"; then
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
# suites that print "NAME: N passed, N failed" last: HTTP, the terminal UI, the browser
suite() { # NAME SCRIPT ARGS...
    name=$1
    shift
    res=$(sh "$@" 2>&1)
    printf '%s\n' "$res" | grep -v "^$name: " | grep -v '^ok '
    n_ok=$(printf '%s\n' "$res" | grep -c '^ok ')
    [ "$n_ok" -gt 0 ] && echo "ok   $name: $n_ok checks"
    sp=$(printf '%s\n' "$res" | sed -n "s/^$name: \([0-9]*\) passed, \([0-9]*\) failed$/\1/p")
    sf=$(printf '%s\n' "$res" | sed -n "s/^$name: \([0-9]*\) passed, \([0-9]*\) failed$/\2/p")
    passed=$((passed + ${sp:-0}))
    failed=$((failed + ${sf:-1}))
}
if [ "$mode" = all ]; then
    suite http tests/http/run.sh "$build/vramfit"
    suite tui tests/tui/run.sh "$build/vramfit"
    suite run tests/run/run.sh "$build/vramfit"
    suite browser tests/browser/run.sh "$build/vramfit" "$build/browser"
fi
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
