#!/bin/sh
# speed.sh VRAMFIT - times `vramfit estimate` and `vramfit pick` as whole processes
# (fork + exec + embedded catalog + estimate + render), median of many runs.
# Goal (issue 2): a catalog estimate under 5 ms on the project's 2-core machines.
bin=${1:-build/vramfit}
dir=$(dirname "$0")
out=${TMPDIR:-/tmp}/vramfit-timeit.$$
cc -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -o "$out" "$dir/timeit.c" || exit 1
trap 'rm -f "$out"' EXIT
runs=${RUNS:-200}
printf '%-64s %9s %9s %9s\n' "command ($runs runs each, whole process)" "median ms" "p10 ms" "p90 ms"
row() {
    r=$("$out" "$runs" "$bin" "$@") || exit 1
    set -- "$*" $r
    printf '%-64s %9s %9s %9s\n' "$1" "$2" "$3" "$4"
}
row --version
row estimate llama-3.1-8b --ctx 32k --users 8
row estimate llama-3.1-70b --ctx 32k --users 4 --gpu h100-sxm
row estimate llama-3.1-70b --quant Q4_K_M --ctx 32k --gpu rtx-5090 --json
row estimate deepseek-v3 --ctx 8k --gpu h200
row pick llama-3.1-8b --ctx 8k
row pick llama-3.1-70b --quant Q4_K_M --ctx 32k --users 4 --hours 3
row pick deepseek-v3 --ctx 32k --json
