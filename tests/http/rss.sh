#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# rss.sh PORT PID HTTPLOAD - the server's memory under load: 20,000 requests to each endpoint
# over keep-alive connections; its resident set after them must be within 5 MB of what it was
# after the first 1,000 (issue 14: a leak of even 256 bytes a request would show as 4.9 MB).
# Prints "ok ..." / "FAIL ..." lines for tests/http/run.sh to count.
port=$1 pid=$2 load=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf 'hello, no error here\n' >"$tmp/none.log"
rss() { sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$pid/status"; }
# METHOD PATH STATUS [BODYFILE]: the endpoint, the status every answer must have
check() {
    method=$1 path=$2 status=$3 body=$4
    if ! "$load" 127.0.0.1 "$port" 1000 "$status" "$method" "$path" $body 2>"$tmp/err"; then
        echo "FAIL http rss $method $path: $(cat "$tmp/err")"
        return
    fi
    before=$(rss)
    if ! "$load" 127.0.0.1 "$port" 19000 "$status" "$method" "$path" $body 2>"$tmp/err"; then
        echo "FAIL http rss $method $path: $(cat "$tmp/err")"
        return
    fi
    after=$(rss)
    grow=$((after - before))
    if [ "$grow" -le 5120 ]; then
        echo "ok   http rss $method $path: ${before} kB after 1,000, ${after} kB after 20,000"
    else
        echo "FAIL http rss $method $path: grew ${grow} kB (${before} -> ${after} kB) over 19,000 requests"
    fi
}
check GET "/api/v1/estimate?model=llama-3.1-8b&ctx=8k&gpu=rtx-4090" 200
check POST "/api/v1/estimate" 200 tests/fixtures/http/estimate-body.json
check GET "/api/v1/estimate?model=llama-3.1-8b&force=/etc/passwd" 400
check GET "/api/v1/pick?model=llama-3.2-1b&ctx=4k&gpus=8" 200
check POST "/api/v1/explain?model=llama-3.1-8b" 200 tests/fixtures/oom/pytorch-2.2.log
check POST "/api/v1/explain" 200 "$tmp/none.log"
check GET "/api/v1/inspect?model=llama-3.1-8b" 200
check GET "/api/v1/models?q=qwen" 200
check GET "/api/v1/gpus" 200
check GET "/api/v1/smi" 200
check GET "/api/v1/version" 200
check GET "/metrics" 200
check GET "/healthz" 200
check GET "/" 200
check GET "/api/v1/nothing" 404
