#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# serve.sh VRAMFIT [SECONDS] - requests per second of `vramfit serve` on loopback, measured with
# wrk (Debian package), one run after the other against one server: GET /healthz (the server's
# own ceiling), /api/v1/estimate (a catalog model at 32k context, 4 users, on an RTX 4090: the
# estimate, the fit and its solvers, the JSON) and /api/v1/pick (the README's 70B pick: every
# offer of the catalog); 2 threads, 64 connections. Each API figure is also given as a share of
# /healthz's (issue 15: the estimate at least 50 %, the pick at least 20 %).
bin=${1:-build/vramfit}
secs=${2:-30}
dir=$(dirname "$0")
# the library's part of each API request, in process (bench/apicost.c), first
lib=$(dirname "$bin")/libvramfit.a
cost=${TMPDIR:-/tmp}/vramfit-apicost.$$
if [ -f "$lib" ] && cc -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -I"$dir/../include" -o "$cost" \
    "$dir/apicost.c" "$lib" -ljansson -lm -ldl -lpthread; then
    "$cost" "${APICOST_N:-3000}"
    rm -f "$cost"
    echo
fi
command -v wrk >/dev/null 2>&1 || { echo "serve.sh needs wrk (apt-get install wrk)"; exit 1; }
out=$(mktemp)
"$bin" serve --listen 127.0.0.1:0 >"$out" 2>/dev/null &
pid=$!
trap 'kill $pid 2>/dev/null; rm -f "$out"' EXIT INT TERM
i=0
while [ ! -s "$out" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
url=$(head -n 1 "$out")
health=
for path in "healthz" "api/v1/estimate?model=llama-3.1-8b&ctx=32k&users=4&gpu=rtx-4090" \
    "api/v1/pick?model=llama-3.1-70b&quant=Q4_K_M&ctx=32k&users=4&hours=3"; do
    echo "== GET /$path ($secs s, 2 threads, 64 connections)"
    r=$(wrk -t2 -c64 -d"${secs}s" --latency "$url$path")
    printf '%s\n' "$r" | grep -E 'Requests/sec|Latency|50%|99%|Non-2xx'
    rps=$(printf '%s\n' "$r" | awk '/Requests\/sec/ { print $2 }')
    if [ -z "$health" ]; then
        health=$rps
    else
        awk -v a="$rps" -v h="$health" 'BEGIN { printf "  share of /healthz: %.1f %%\n", 100 * a / h }'
    fi
done
