#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# run.sh VRAMFIT - drives `vramfit top` in a detached tmux session on the fake GPU backend:
# the live view draws each GPU's bar and the process list, each process named as the
# application it is (two `python` processes: ComfyUI and a Jupyter kernel with its notebook, from
# tests/fixtures/gpus/comfy-jupyter.tsv and the kernel's environment under
# tests/fixtures/sysroot/jupyter), the arrow keys select, `k` asks before killing, naming the
# application (answered no here), `q` quits. Also the CSV fallback when not a terminal.
# Ends with "tui: N passed, N failed"; without tmux the live-view checks are counted as
# skipped: "tui: N passed, N failed, N skipped" (tests/run.sh adds them to its final line).
bin=${1:-build/vramfit}
case "$bin" in /*) ;; *) bin="$PWD/$bin" ;; esac
fake="$PWD/tests/fixtures/gpus/two-4090.tsv"
two_python="$PWD/tests/fixtures/gpus/comfy-jupyter.tsv"
sysroot="$PWD/tests/fixtures/sysroot/jupyter"
passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok   tui $1"; }
bad() { failed=$((failed + 1)); echo "FAIL tui $1: $2"; }

out=$(VRAMFIT_GPU_BACKEND=fake VRAMFIT_FAKE_GPUS="$fake" "$bin" top -n 2 -d 0.05 </dev/null | cat)
[ "$(printf '%s\n' "$out" | grep -c ', NVIDIA GeForce RTX 4090, ')" = 4 ] &&
    printf '%s\n' "$out" | grep -q '^timestamp, index, name, memory.used \[MiB\]' &&
    ok "not a terminal: CSV, 2 GPUs x 2 refreshes" || bad "csv" "$out"

if ! command -v tmux >/dev/null 2>&1; then
    # the seven live-view checks below: GPU line, bar, process list (two), kill prompt, answer,
    # quit
    echo "skip tui live view: tmux missing (make deps installs it): 7 checks skipped"
    echo "tui: $passed passed, $failed failed, 7 skipped"
    [ "$failed" = 0 ]
    exit
fi
sock=vramfit-tui-$$
t() { tmux -L "$sock" "$@"; }
trap 't kill-server 2>/dev/null' EXIT INT TERM
t new-session -d -s top -x 110 -y 30 \
    "env VRAMFIT_GPU_BACKEND=fake VRAMFIT_FAKE_GPUS=$two_python VRAMFIT_SYSROOT=$sysroot TERM=xterm $bin top -d 0.2"
sleep 1.2
screen=$(t capture-pane -p -t top)
printf '%s\n' "$screen" | grep -q 'GPU 0  NVIDIA GeForce RTX 4090  20.00 GiB / 23.99 GiB' &&
    ok "GPU 0 with its memory" || bad "gpu line" "$screen"
printf '%s\n' "$screen" | grep -q '^\[##' && ok "memory bar drawn" || bad "bar" "$screen"
# sorted by memory: ComfyUI (14 GiB) first, the kernel (6 GiB) second; both are `python`
printf '%s\n' "$screen" | grep -Eq '^ +4242 +0 +14.00 GiB +ComfyUI, python +- +python /home/ana/ComfyUI/main' &&
    ok "process list: ComfyUI" || bad "process ComfyUI" "$screen"
printf '%s\n' "$screen" | grep -Eq '^ +4243 +0 +6.00 GiB +Jupyter kernel finetune.ipynb, python +- +python -m ipykernel_launcher' &&
    ok "process list: the Jupyter kernel and its notebook" || bad "process kernel" "$screen"
t send-keys -t top Down
t send-keys -t top k
sleep 0.5
screen=$(t capture-pane -p -t top)
printf '%s\n' "$screen" | grep -q 'kill 4243 (Jupyter kernel finetune.ipynb, python)? y/n' && ok "k asks before killing, naming it" || bad "kill prompt" "$screen"
t send-keys -t top n
sleep 0.5
screen=$(t capture-pane -p -t top)
printf '%s\n' "$screen" | grep -q 'not killed' && ok "n keeps it" || bad "answer" "$screen"
t send-keys -t top q
sleep 0.6
t has-session -t top 2>/dev/null && bad "q" "still running" || ok "q quits"
echo "tui: $passed passed, $failed failed"
[ "$failed" = 0 ]
