#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# fleet-screenshot.sh VRAMFIT [OUT.png] - makes docs/fleet.png, README's picture of "Across a
# fleet": `vramfit exporter` on the fake GPU backend (two RTX 4090; GPU 0 fills up over a
# minute as a job's memory grows, then falls when the job dies of an OOM that the exporter
# reads in the log it follows), scraped every second by Debian's Prometheus on loopback, and
# Prometheus's own graph page in Debian's chromium (playwright-core of tests/browser). Takes
# about two minutes. Needs prometheus, chromium, node (make deps; tests/browser/run.sh).
set -e
bin=${1:-build/vramfit}
out=${2:-docs/fleet.png}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
[ -d "$root/tests/browser/node_modules/playwright-core" ] ||
    (cd "$root/tests/browser" && npm install --no-audit --no-fund --silent >/dev/null)
dir=$(mktemp -d)
pids=
trap 'for p in $pids; do kill $p 2>/dev/null; done; rm -rf "$dir"' EXIT INT TERM
gpus=$dir/gpus.tsv
# the fake backend reads this file at each scrape: GPU 0 at MiB $1, GPU 1 at MiB $2
write_gpus() {
    printf 'kind\tindex\tname\ttotal\tused\tutil\tpid\tcmdline\n' >"$gpus.tmp"
    printf 'gpu\t0\tNVIDIA GeForce RTX 4090\t24564MiB\t%sMiB\t97\t-\t-\n' "$1" >>"$gpus.tmp"
    printf 'proc\t0\tpython\t-\t%sMiB\t-\t4242\ttrain.py\n' "$(($1 - 400))" >>"$gpus.tmp"
    printf 'gpu\t1\tNVIDIA GeForce RTX 4090\t24564MiB\t%sMiB\t60\t-\t-\n' "$2" >>"$gpus.tmp"
    printf 'proc\t1\tvllm\t-\t%sMiB\t-\t5151\tvllm serve\n' "$(($2 - 400))" >>"$gpus.tmp"
    mv "$gpus.tmp" "$gpus"
}
write_gpus 2000 21500
export VRAMFIT_GPU_BACKEND=fake VRAMFIT_FAKE_GPUS=$gpus NODE_NAME=gpu-node-1
log=$dir/train.log
printf 'epoch 1\n' >"$log"
"$bin" exporter --listen 127.0.0.1:0 --follow "$log" >"$dir/exp.url" 2>"$dir/exp.log" &
pids="$pids $!"
sleep 1
target=$(head -n 1 "$dir/exp.url" | sed 's|http://||; s|/$||')
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >"$dir/prometheus.yml" <<CONF
global: {scrape_interval: 1s, evaluation_interval: 1s}
scrape_configs:
  - job_name: vramfit
    static_configs: [{targets: ["$target"]}]
CONF
prometheus --config.file="$dir/prometheus.yml" --storage.tsdb.path="$dir/tsdb" \
    --web.listen-address="127.0.0.1:$port" >"$dir/prom.log" 2>&1 &
pids="$pids $!"
# 100 s: GPU 0 grows 2000 -> 24400 MiB from 10 s to 70 s, its job dies of an OOM (PyTorch's
# message in the log), then restarts; GPU 1 (vLLM) stays near 21.5 GiB
t=0
while [ $t -lt 100 ]; do
    if [ $t -lt 10 ]; then g0=2000; elif [ $t -lt 70 ]; then g0=$((2000 + (t - 10) * 373)); else g0=2600; fi
    g1=$((21500 + (t % 7) * 40))
    write_gpus $g0 $g1
    [ $t = 70 ] && cat "$root/tests/fixtures/oom/pytorch-2.2.log" >>"$log"
    sleep 1
    t=$((t + 1))
done
CHROMIUM=$(command -v chromium) node "$here/fleet-screenshot.mjs" "http://127.0.0.1:$port" "$out"
ls -l "$out"
