#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# run.sh [--update] VRAMFIT [TEST...] - black-box tests of the CLI.
#
# A test is tests/golden/NAME.test:
#   #! args: estimate llama-3.1-8b --gpu rtx-4090     (words split by the shell)
#   #! env: VAR=value ...                             (optional)
#   #! rc: 3                                          (expected exit code)
#   # free comments: how the expected numbers are derived
#   --- stdout
#   expected standard output
#   --- stderr                                        (optional: checked when present)
#   expected standard error
# Runs are deterministic: LC_ALL=C.UTF-8 (the C locale's rules with UTF-8 text; a test's env
# line may set another, LC_ALL=C gives the ASCII output), embedded catalog, fake GPU backend
# where used.
# --update rewrites the expected sections from the current output (review the diff).
update=0
[ "$1" = "--update" ] && { update=1; shift; }
bin=$1
shift
[ -x "$bin" ] || { echo "golden: no binary '$bin'"; echo "golden: 0 passed, 1 failed"; exit 1; }
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
tests=$*
[ -n "$tests" ] || tests=$(ls tests/golden/*.test 2>/dev/null)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0
for t in $tests; do
    name=$(basename "$t" .test)
    args=$(sed -n 's/^#! args: //p' "$t")
    envs=$(sed -n 's/^#! env: //p' "$t")
    want_rc=$(sed -n 's/^#! rc: //p' "$t")
    awk -v o="$tmp/want.out" -v e="$tmp/want.err" '
        /^--- stdout$/ { f = o; printf "" > o; next }
        /^--- stderr$/ { f = e; printf "" > e; next }
        f { print > f }' "$t"
    rm -f "$tmp/got.out" "$tmp/got.err"
    eval "env -i PATH=\"\$PATH\" LC_ALL=C.UTF-8 HOME=/nonexistent $envs \"\$bin\" $args" \
        >"$tmp/got.out" 2>"$tmp/got.err"
    rc=$?
    if [ "$update" = 1 ]; then
        {
            sed -n '/^--- stdout$/q;p' "$t" | sed "s/^#! rc: .*/#! rc: $rc/"
            echo "--- stdout"
            cat "$tmp/got.out"
            if [ -f "$tmp/want.err" ] || [ -s "$tmp/got.err" ]; then
                echo "--- stderr"
                cat "$tmp/got.err"
            fi
        } >"$tmp/new" && mv "$tmp/new" "$t"
        rm -f "$tmp/want.out" "$tmp/want.err"
        echo "updated $name (rc $rc)"
        continue
    fi
    ok=1
    [ "$rc" = "${want_rc:-0}" ] || { ok=0; echo "  $name: exit $rc, expected ${want_rc:-0}"; }
    if ! diff -u "$tmp/want.out" "$tmp/got.out" >"$tmp/diff"; then
        ok=0
        echo "  $name: stdout differs:"
        head -30 "$tmp/diff"
    fi
    if [ -f "$tmp/want.err" ] && ! diff -u "$tmp/want.err" "$tmp/got.err" >"$tmp/diff"; then
        ok=0
        echo "  $name: stderr differs:"
        head -30 "$tmp/diff"
    fi
    rm -f "$tmp/want.out" "$tmp/want.err"
    if [ "$ok" = 1 ]; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        echo "FAIL golden $name"
    fi
done
echo "golden: $passed passed, $failed failed"
[ "$failed" = 0 ]
