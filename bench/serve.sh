#!/bin/sh
# serve.sh VRAMFIT [SECONDS] - requests per second of `vramfit serve` on loopback, measured with
# wrk (Debian package): GET /api/v1/estimate (a catalog model at 32k context, 4 users, on an
# RTX 4090: the estimate, the fit and its solvers, the JSON) and GET /healthz for the server's
# own ceiling; 2 threads, 64 connections.
bin=${1:-build/vramfit}
secs=${2:-30}
command -v wrk >/dev/null 2>&1 || { echo "serve.sh needs wrk (apt-get install wrk)"; exit 1; }
out=$(mktemp)
"$bin" serve --listen 127.0.0.1:0 >"$out" 2>/dev/null &
pid=$!
trap 'kill $pid 2>/dev/null; rm -f "$out"' EXIT INT TERM
i=0
while [ ! -s "$out" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
url=$(head -n 1 "$out")
for path in "api/v1/estimate?model=llama-3.1-8b&ctx=32k&users=4&gpu=rtx-4090" "healthz"; do
    echo "== GET /$path ($secs s, 2 threads, 64 connections)"
    wrk -t2 -c64 -d"${secs}s" --latency "$url$path" | grep -E 'Requests/sec|Latency|50%|99%|Non-2xx'
done
