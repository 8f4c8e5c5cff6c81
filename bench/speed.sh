#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# speed.sh VRAMFIT - times `vramfit estimate` and `vramfit pick` as whole processes
# (fork + exec + embedded catalog + estimate + render) next to /bin/true, interleaved: each of
# RUNS rounds runs every command once (bench/interleave.c), so a busy moment of the machine
# falls on every row alike; medians of RUNS runs, and each median over /bin/true's.
# Goals (issue 15): a catalog estimate within 1.3x /bin/true, the README's 70B pick within 3x.
bin=${1:-build/vramfit}
dir=$(dirname "$0")
out=${TMPDIR:-/tmp}/vramfit-interleave.$$
cc -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -o "$out" "$dir/interleave.c" || exit 1
trap 'rm -f "$out"' EXIT
runs=${RUNS:-200}
est="estimate llama-3.1-8b --ctx 32k --users 8"
pick70="pick llama-3.1-70b --quant Q4_K_M --ctx 32k --users 4 --hours 3"
# shellcheck disable=SC2086 # the command lines are split into words on purpose
r=$("$out" "$runs" /bin/true -- "$bin" --version -- "$bin" $est \
    -- "$bin" estimate llama-3.1-70b --ctx 32k --users 4 --gpu h100-sxm \
    -- "$bin" estimate llama-3.1-70b --quant Q4_K_M --ctx 32k --gpu rtx-5090 --json \
    -- "$bin" estimate deepseek-v3 --ctx 8k --gpu h200 \
    -- "$bin" pick llama-3.1-8b --ctx 8k -- "$bin" $pick70 \
    -- "$bin" pick deepseek-v3 --ctx 32k --json) || exit 1
printf '%-80s %9s %7s %7s %8s\n' "command ($runs interleaved runs each, whole process)" \
    "median ms" "p10 ms" "p90 ms" "x true"
printf '%s\n' "$r" | while IFS='	' read -r cmd med p10 p90 ratio; do
    printf '%-80s %9s %7s %7s %8s\n' "$(printf '%s' "$cmd" | sed "s|^$bin |vramfit |")" "$med" \
        "$p10" "$p90" "$ratio"
done
ratio() { printf '%s\n' "$r" | awk -F'\t' -v c="$bin $1" '$1 == c { print $5 }'; }
e=$(ratio "$est")
p=$(ratio "$pick70")
verdict() { awk -v r="$1" -v t="$2" 'BEGIN { print (r <= t ? "met" : "MISSED") }'; }
echo
echo "catalog estimate ($est): ${e}x /bin/true (goal 1.3x: $(verdict "$e" 1.3))"
echo "README's 70B pick ($pick70): ${p}x /bin/true (goal 3x: $(verdict "$p" 3))"
