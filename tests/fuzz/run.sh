#!/bin/sh
# run.sh SECONDS FUZZER... - runs each libFuzzer target for SECONDS on its seed corpus
# (tests/fuzz/corpus/NAME, read only; new inputs go to a temporary folder) and prints
# "ok fuzz NAME" or "FAIL fuzz NAME" with the crash report's head. Exit 1 if any failed.
secs=$1
shift
failed=0
for f in "$@"; do
    name=$(basename "$f" | sed 's/^fuzz_//')
    work=$(mktemp -d)
    seeds=tests/fuzz/corpus/$name
    [ -d "$seeds" ] || seeds=
    if "$f" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -artifact_prefix="$work/" \
        "$work" $seeds >"$work/log" 2>&1; then
        runs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$work/log" | grep -o '[0-9]*$')
        [ -n "$runs" ] || runs=$(grep -E '^#[0-9]+' "$work/log" | tail -n 1 | sed 's/^#\([0-9]*\).*/\1/')
        echo "ok   fuzz $name: ${runs:-?} runs in ${secs}s"
    else
        echo "FAIL fuzz $name:"
        grep -E 'ERROR|SUMMARY|#0 |#1 |#2 ' "$work/log" | head -12
        failed=$((failed + 1))
    fi
    rm -rf "$work"
done
[ "$failed" = 0 ]
