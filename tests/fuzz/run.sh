#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# run.sh SECONDS FUZZER... - runs each libFuzzer target for SECONDS of CPU time on its seed
# corpus (tests/fuzz/corpus/NAME, read only; new inputs go to a temporary folder), one target at
# a time in one process (one core): the process's CPU time is read from /proc every second and
# the run is interrupted (SIGINT: libFuzzer prints its final figures and exits) once it has had
# SECONDS, so a busy machine gives each target the same work, not the same wall time; the wall
# time is capped all the same at FUZZ_WALL_FACTOR x SECONDS (default 4). Prints "ok fuzz NAME:
# RUNS runs in CPU s CPU (WALL s wall), cov COV ft FT" (cov and ft from libFuzzer's last line)
# or "FAIL fuzz NAME" with the crash report's head. Exit 1 if any failed. FUZZ_KEEP=DIR keeps
# each target's log and the inputs it found in DIR/NAME/ (the campaign of bench/README.md).
secs=$1
shift
failed=0
hz=$(getconf CLK_TCK 2>/dev/null || echo 100)
factor=${FUZZ_WALL_FACTOR:-4}
for f in "$@"; do
    name=$(basename "$f" | sed 's/^fuzz_//')
    work=$(mktemp -d)
    seeds=tests/fuzz/corpus/$name
    [ -d "$seeds" ] || seeds=
    mkdir "$work/new"
    start=$(date +%s)
    TMPDIR=$work "$f" -max_total_time=$((secs * factor)) -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="$work/" \
        "$work/new" $seeds >"$work/log" 2>&1 &
    pid=$!
    ticks=0
    stopped=
    while kill -0 "$pid" 2>/dev/null; do
        t=$(awk '{ print $14 + $15 }' "/proc/$pid/stat" 2>/dev/null)
        [ -n "$t" ] && ticks=$t
        if [ "$ticks" -ge $((secs * hz)) ]; then
            kill -INT "$pid" 2>/dev/null
            stopped=1
            break
        fi
        sleep 1
    done
    wait "$pid"
    rc=$?
    # libFuzzer exits 72 when interrupted (clang 14 has no -interrupted_exitcode)
    [ "$rc" = 72 ] && [ -n "$stopped" ] && grep -q 'run interrupted; exiting' "$work/log" && rc=0
    wall=$(($(date +%s) - start))
    cpu=$(awk -v t="$ticks" -v hz="$hz" 'BEGIN { printf "%.0f", t / hz }')
    if [ "$rc" = 0 ] && ! grep -q 'ERROR: libFuzzer\|ERROR: AddressSanitizer\|runtime error' "$work/log"; then
        runs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$work/log" | grep -o '[0-9]*$')
        [ -n "$runs" ] || runs=$(grep -E '^#[0-9]+' "$work/log" | tail -n 1 | sed 's/^#\([0-9]*\).*/\1/')
        last=$(grep -E '^#[0-9]+.*cov: ' "$work/log" | tail -n 1)
        cov=$(printf '%s' "$last" | sed -n 's/.*cov: \([0-9]*\).*/\1/p')
        ft=$(printf '%s' "$last" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
        echo "ok   fuzz $name: ${runs:-?} runs in ${cpu} s CPU (${wall} s wall), cov ${cov:-?} ft ${ft:-?}"
    else
        echo "FAIL fuzz $name:"
        grep -E 'ERROR|SUMMARY|runtime error|#0 |#1 |#2 |#3 ' "$work/log" | head -12
        failed=$((failed + 1))
    fi
    if [ -n "$FUZZ_KEEP" ]; then
        mkdir -p "$FUZZ_KEEP/$name"
        cp -r "$work/." "$FUZZ_KEEP/$name/"
    fi
    rm -rf "$work"
done
[ "$failed" = 0 ]
