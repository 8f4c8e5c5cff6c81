#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# explain.sh - explain throughput on a generated 1 GiB log vs `grep -c 'out of memory'`.
# Generates the log in a temp dir (deleted afterwards): training-progress lines with a few
# hundred OOM messages of several formats. Times `build/vramfit explain FILE` when the CLI
# has it, else bench/oomscan (the scanner alone); medians of RUNS runs (default 3).
# Usage: [RUNS=n] sh bench/explain.sh [MiB]
set -eu
MIB=${1:-1024}
cd "$(dirname "$0")/.."
make -s build/libvramfit.a >/dev/null
CC=${CC:-cc}
$CC -O2 -std=c11 -Iinclude -o build/oomscan bench/oomscan.c build/libvramfit.a \
    $(pkg-config --libs jansson 2>/dev/null) -lm
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
awk -v mib="$MIB" 'BEGIN {
  oom[0] = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which 11.06 MiB is free. Including non-PyTorch memory, this process has 23.60 GiB memory in use. Of the allocated memory 22.90 GiB is allocated by PyTorch, and 194.87 MiB is reserved by PyTorch but unallocated."
  oom[1] = "RuntimeError: CUDA out of memory. Tried to allocate 2.81 GiB (GPU 0; 23.69 GiB total capacity; 16.12 GiB already allocated; 374.94 MiB free; 19.00 GiB reserved in total by PyTorch)"
  oom[2] = "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 144817.04 MiB on device 0: cudaMalloc failed: out of memory"
  oom[3] = "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine."
  oom[4] = "[856341.770960] Out of memory: Killed process 410126 (python) total-vm:79905000kB, anon-rss:22957108kB, file-rss:72036kB"
  target = mib * 1048576; n = 0; bytes = 0; step = 0
  every = int(target / 100 / 300)   # ~300 OOM lines
  while (bytes < target) {
    step++
    l = sprintf("2025-01-01 12:00:%02d INFO trainer.py:812] step %d/100000 loss %.4f lr 2.0e-05 grad_norm 0.8731 tokens/s 15321 epoch 3", step % 60, step, 1.0 / (1 + step % 97))
    print l; bytes += length(l) + 1
    if (step % every == 0) { o = oom[n % 5]; n++; print o; bytes += length(o) + 1 }
  }
}' > "$T/log"
SIZE=$(wc -c < "$T/log")
cat "$T/log" > /dev/null # warm the page cache
now() { date +%s.%N; }
if [ -x build/vramfit ] && build/vramfit explain --help >/dev/null 2>&1; then
  TOOL="build/vramfit explain"
else
  TOOL="build/oomscan"
fi
RUNS=${RUNS:-3}
E=""; GT=""; i=0
while [ "$i" -lt "$RUNS" ]; do
  t0=$(now); OUT=$($TOOL "$T/log" | head -1); t1=$(now)
  G=$(grep -c 'out of memory' "$T/log"); t2=$(now)
  E="$E $(awk "BEGIN { print $t1 - $t0 }")"; GT="$GT $(awk "BEGIN { print $t2 - $t1 }")"
  i=$((i + 1))
done
med() { printf '%s\n' $1 | sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
awk -v s="$SIZE" -v e="$(med "$E")" -v gr="$(med "$GT")" -v n="$RUNS" -v tool="$TOOL" -v out="$OUT" -v g="$G" 'BEGIN {
  printf "log: %.0f MiB; medians of %d runs\n", s / 1048576, n
  printf "%-28s %6.3f s  %7.0f MiB/s  (%s)\n", tool, e, s / 1048576 / e, out
  printf "%-28s %6.3f s  %7.0f MiB/s  (%s lines)\n", "grep -c '\''out of memory'\''", gr, s / 1048576 / gr, g
  printf "ratio explain/grep speed: %.2f (aim >= 0.5)\n", gr / e
}'
