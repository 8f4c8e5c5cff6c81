#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# run.sh VRAMFIT - the fleet pieces (README "Across a fleet"), end to end on this machine:
# - contrib/vramfit-alerts.yml: `promtool check rules`, and `promtool test rules` with
#   contrib/vramfit-alerts.test.yml (each alert quiet and firing);
# - contrib/vramfit-daemonset.yaml against the vendored apps/v1 DaemonSet schema
#   (daemonset-apps-v1.schema.json, python3-jsonschema; YAML read by python3-yaml);
# - a real Prometheus (Debian's prometheus) on loopback scraping `vramfit exporter` on the fake
#   GPU backend every second; an out-of-memory error is written into a log the exporter
#   follows (and one more into a rotated log); both series, the GPU memory and
#   vramfit_oom_events_total, are read back through Prometheus's HTTP API;
# - every query of contrib/vramfit-grafana-dashboard.json names metrics the exporter serves
#   and answers in that Prometheus.
# Every wait is bounded. Ends with "fleet: N passed, N failed".
bin=${1:-build/vramfit}
here=$(dirname "$0")
passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok   fleet $1"; }
bad() { failed=$((failed + 1)); echo "FAIL fleet $1: $2"; }
finish() {
    echo "fleet: $passed passed, $failed failed"
    [ "$failed" = 0 ]
    exit
}
for tool in promtool prometheus curl python3; do
    command -v $tool >/dev/null 2>&1 || { bad "needs $tool" "make deps installs it"; finish; }
done
dir=$(mktemp -d)
exp_pid=
prom_pid=
cleanup() {
    [ -n "$exp_pid" ] && kill "$exp_pid" 2>/dev/null
    [ -n "$prom_pid" ] && kill "$prom_pid" 2>/dev/null
    wait 2>/dev/null
    rm -rf "$dir"
}
trap cleanup EXIT INT TERM

# --- alert rules --------------------------------------------------------------
if out=$(promtool check rules contrib/vramfit-alerts.yml 2>&1); then
    ok "promtool check rules: $(printf '%s' "$out" | grep -o '[0-9]* rules found')"
else
    bad "promtool check rules" "$out"
fi
if out=$(cd contrib && promtool test rules vramfit-alerts.test.yml 2>&1); then
    ok "promtool test rules: each alert quiet and firing as its test says"
else
    bad "promtool test rules" "$out"
fi

# --- the DaemonSet ------------------------------------------------------------
if out=$(python3 "$here/k8s_schema.py" "$here/daemonset-apps-v1.schema.json" \
    contrib/vramfit-daemonset.yaml 2>&1); then
    ok "daemonset: $(printf '%s\n' "$out" | grep -c '^ok') schema checks"
else
    bad "daemonset" "$out"
fi
# NVIDIA's conventions the DaemonSet promises (its header): GPU nodes, the taint, host /proc
# read-only, no GPU taken from the workloads
ds=contrib/vramfit-daemonset.yaml
if grep -q 'nvidia.com/gpu.present: "true"' $ds && grep -q 'key: nvidia.com/gpu$' $ds &&
    grep -A2 'mountPath: /host/proc' $ds | grep -q 'readOnly: true' &&
    grep -q 'value: /host$' $ds && ! grep -q 'nvidia.com/gpu: ' $ds; then
    ok "daemonset: NVIDIA nodes and taint, host /proc read-only, no nvidia.com/gpu request"
else
    bad "daemonset conventions" "see the header of $ds"
fi

# --- the exporter and a real Prometheus ------------------------------------------
export VRAMFIT_GPU_BACKEND=fake VRAMFIT_FAKE_GPUS=tests/fixtures/gpus/two-4090.tsv NODE_NAME=node-a
log=$dir/app.log
printf 'a job starts\n' >"$log"
"$bin" exporter --listen 127.0.0.1:0 --follow "$log" >"$dir/exp.out" 2>"$dir/exp.err" &
exp_pid=$!
i=0
while [ ! -s "$dir/exp.out" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
url=$(head -n 1 "$dir/exp.out")
case "$url" in http://127.0.0.1:*/) ok "exporter listens on loopback ($url)" ;;
*) bad "exporter start" "$(cat "$dir/exp.err")"; finish ;;
esac
target=${url#http://}
target=${target%/}
curl -s "${url}metrics" >"$dir/metrics"
# promtool's lint: clean but for the camelCase of dcgm-exporter's label names (modelName,
# UUID, Hostname), kept so that the series join dcgm-exporter's (README "Across a fleet")
out=$(promtool check metrics <"$dir/metrics" 2>&1 | grep -v "label names should be written in 'snake_case' not 'camelCase'")
if [ -z "$out" ] && grep -q '^vramfit_gpu_memory_used_bytes{.*modelName=' "$dir/metrics"; then
    ok "promtool check metrics: clean (dcgm-exporter's camelCase labels aside)"
else
    bad "promtool check metrics" "$out"
fi
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
prom=http://127.0.0.1:$port
cp contrib/vramfit-alerts.yml "$dir/"
cat >"$dir/prometheus.yml" <<CONF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: [vramfit-alerts.yml]
scrape_configs:
  - job_name: vramfit
    static_configs:
      - targets: ["$target"]
CONF
prometheus --config.file="$dir/prometheus.yml" --storage.tsdb.path="$dir/tsdb" \
    --web.listen-address="127.0.0.1:$port" >"$dir/prom.log" 2>&1 &
prom_pid=$!
# query EXPR -> the first result's value, or nothing
query() {
    curl -s --max-time 5 -G "$prom/api/v1/query" --data-urlencode "query=$1" |
        python3 -c 'import json,sys
r = json.load(sys.stdin)["data"]["result"]
print(r[0]["value"][1] if r else "")' 2>/dev/null
}
# wait_for EXPR WANT SECONDS: until the query answers WANT
wait_for() {
    i=0
    while [ $i -lt $(($3 * 2)) ]; do
        [ "$(query "$1")" = "$2" ] && return 0
        sleep 0.5
        i=$((i + 1))
    done
    return 1
}
if wait_for 'up{job="vramfit"}' 1 30; then
    ok "prometheus scrapes the exporter (up = 1)"
else
    bad "prometheus start" "$(tail -5 "$dir/prom.log")"
    finish
fi
# the fake backend's GPU 0: 1024MiB used = 1073741824 B (tests/fixtures/gpus/two-4090.tsv)
m='vramfit_gpu_memory_used_bytes{gpu="0",Hostname="node-a",modelName="NVIDIA GeForce RTX 4090"}'
if wait_for "$m" 1073741824 10; then ok "GPU memory read back through Prometheus: $m = 1073741824"; else
    bad "GPU memory series" "$(query "$m")"; fi
p='vramfit_process_gpu_memory_bytes{pid="4242",command="python"}'
if wait_for "$p" 1048576000 10; then ok "process memory read back: $p = 1048576000 (1000MiB)"; else
    bad "process memory series" "$(query "$p")"; fi
# an OOM happens: PyTorch 2.2's message (tests/fixtures/oom/pytorch-2.2.log) written into the
# followed log; then the log is rotated and vLLM V1's KV cache error is written into the new one
# (tests/fixtures/oom/vllm-v1-kv-cache.log)
cat tests/fixtures/oom/pytorch-2.2.log >>"$log"
o='vramfit_oom_events_total{Hostname="node-a",tool="pytorch"}'
if wait_for "$o" 1 20; then ok "the OOM read back through Prometheus: $o = 1"; else
    bad "OOM series" "'$(query "$o")'; exporter: $(tail -3 "$dir/exp.err")"; fi
cause=$(curl -s "${url}api/v1/oom/last" | python3 -c 'import json,sys; print(json.load(sys.stdin)["diagnosis"]["cause"])' 2>/dev/null)
if [ -n "$cause" ] && [ "$(query "vramfit_oom_events_total{tool=\"pytorch\",cause=\"$cause\"}")" = 1 ]; then
    ok "/api/v1/oom/last explains it (cause $cause, the counter's label)"
else
    bad "/api/v1/oom/last" "cause '$cause'"
fi
mv "$log" "$log.1"
cat tests/fixtures/oom/vllm-v1-kv-cache.log >"$log"
if wait_for 'vramfit_oom_events_total{tool="vllm"}' 1 20 &&
    wait_for 'sum(vramfit_oom_events_total{Hostname="node-a"})' 2 5; then
    ok "an OOM in the new log after rotation is counted once (vllm 1, sum 2)"
else
    bad "OOM after rotation" "$(query 'sum(vramfit_oom_events_total)')"
fi
# vLLM fails a second time: its counter goes 1 -> 2, and the alert fires on the increase (a
# series Prometheus sees for the first time fires only on an exporter it scraped 5 minutes
# before: contrib/vramfit-alerts.test.yml covers that case)
cat tests/fixtures/oom/vllm-v1-kv-cache.log >>"$log"
if wait_for 'count(ALERTS{alertname="VramfitOutOfMemory",alertstate="firing",tool="vllm"})' 1 20; then
    ok "Prometheus fires VramfitOutOfMemory for vLLM's second OOM"
else
    bad "VramfitOutOfMemory" "$(query 'ALERTS')"
fi
curl -s "${url}metrics" >"$dir/metrics"
if out=$(python3 "$here/dashboard.py" contrib/vramfit-grafana-dashboard.json "$dir/metrics" "$prom" 2>&1); then
    ok "$(printf '%s' "$out" | sed 's/^ok   //')"
else
    bad "dashboard" "$out"
fi
finish
