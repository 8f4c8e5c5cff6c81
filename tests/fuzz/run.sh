#!/bin/sh
# run.sh SECONDS FUZZER... - runs each libFuzzer target for SECONDS on its seed corpus
# (tests/fuzz/corpus/NAME, read only; new inputs go to a temporary folder), one target at a
# time in one process (one core), and prints "ok fuzz NAME: RUNS runs in SECONDSs (CPU C s),
# cov COV ft FT" (cov and ft from libFuzzer's last line) or "FAIL fuzz NAME" with the crash
# report's head. Exit 1 if any failed. FUZZ_KEEP=DIR keeps each target's log and the inputs it
# found in DIR/NAME/ (the campaign of bench/README.md).
secs=$1
shift
failed=0
for f in "$@"; do
    name=$(basename "$f" | sed 's/^fuzz_//')
    work=$(mktemp -d)
    seeds=tests/fuzz/corpus/$name
    [ -d "$seeds" ] || seeds=
    mkdir "$work/new"
    # CPU seconds of the run: /usr/bin/time when there, else not reported
    timer=
    [ -x /usr/bin/time ] && timer="/usr/bin/time -f %U+%S -o $work/cpu"
    if TMPDIR=$work $timer "$f" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
        -artifact_prefix="$work/" "$work/new" $seeds >"$work/log" 2>&1; then
        runs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$work/log" | grep -o '[0-9]*$')
        [ -n "$runs" ] || runs=$(grep -E '^#[0-9]+' "$work/log" | tail -n 1 | sed 's/^#\([0-9]*\).*/\1/')
        last=$(grep -E '^#[0-9]+.*cov: ' "$work/log" | tail -n 1)
        cov=$(printf '%s' "$last" | sed -n 's/.*cov: \([0-9]*\).*/\1/p')
        ft=$(printf '%s' "$last" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
        cpu=$( [ -s "$work/cpu" ] && tail -n 1 "$work/cpu" | awk -F+ '{ printf "%.1f", $1 + $2 }')
        echo "ok   fuzz $name: ${runs:-?} runs in ${secs}s (CPU ${cpu:-?} s), cov ${cov:-?} ft ${ft:-?}"
    else
        echo "FAIL fuzz $name:"
        grep -E 'ERROR|SUMMARY|#0 |#1 |#2 |#3 ' "$work/log" | head -12
        failed=$((failed + 1))
    fi
    if [ -n "$FUZZ_KEEP" ]; then
        mkdir -p "$FUZZ_KEEP/$name"
        cp -r "$work/." "$FUZZ_KEEP/$name/"
    fi
    rm -rf "$work"
done
[ "$failed" = 0 ]
