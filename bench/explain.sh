#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# explain.sh - `vramfit explain` throughput against `grep -c 'out of memory'` and ripgrep
# (`rg -c`) on three generated logs (issue 29), written to a temp dir under /tmp and deleted
# afterwards:
#   train  MiB (default 1024): training-progress lines (`step N`, loss, lr) with ~300 OOM
#          messages of 5 formats spread through it;
#   hf     MiB (default 1024): HF-Trainer-style output: tqdm progress bars rewritten with `\r`,
#          dict lines ({'loss': ..., 'grad_norm': ..., 'learning_rate': ..., 'epoch': ...})
#          behind an ANSI-coloured logger prefix, one CUDA OOM traceback near the end;
#   dense  MiB/4 (default 256): an OOM message of one of the 5 formats on every line.
# Runs are interleaved (vramfit, grep, rg, vramfit, ...) on the page-cached file, each tool's
# output going to a real file (GNU grep stops at the first match when its output is /dev/null);
# it prints medians of RUNS runs (default 5) of wall time and of CPU time (user + system: on a
# shared machine the wall time measures the other load too), and the maximum resident set
# (GNU time -v) of one extra vramfit run per log. ripgrep and GNU time are
# installed by tools/deps.sh when missing (Debian packages ripgrep, time).
# Usage: [RUNS=n] [LOGDIR=/tmp/dir] sh bench/explain.sh [MiB]
set -eu
MIB=${1:-1024}
cd "$(dirname "$0")/.."
sh tools/deps.sh ripgrep time
make -s build/vramfit >/dev/null
RUNS=${RUNS:-5}
T=$(mktemp -d /tmp/vramfit-explain.XXXXXX)
trap 'rm -rf "$T"' EXIT
# LOGDIR=dir: generate the logs there (under /tmp) and keep them for the next run
L=${LOGDIR:-$T}
mkdir -p "$L"

# the OOM messages (one per format) both generators draw from
OOMS='BEGIN {
  oom[0] = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which 11.06 MiB is free. Including non-PyTorch memory, this process has 23.60 GiB memory in use. Of the allocated memory 22.90 GiB is allocated by PyTorch, and 194.87 MiB is reserved by PyTorch but unallocated."
  oom[1] = "RuntimeError: CUDA out of memory. Tried to allocate 2.81 GiB (GPU 0; 23.69 GiB total capacity; 16.12 GiB already allocated; 374.94 MiB free; 19.00 GiB reserved in total by PyTorch)"
  oom[2] = "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 144817.04 MiB on device 0: cudaMalloc failed: out of memory"
  oom[3] = "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine."
  oom[4] = "[856341.770960] Out of memory: Killed process 410126 (python) total-vm:79905000kB, anon-rss:22957108kB, file-rss:72036kB"
}'

[ -s "$L/train.log" ] || awk -v mib="$MIB" "$OOMS"'
END {
  target = mib * 1048576; n = 0; bytes = 0; step = 0
  every = int(target / 100 / 300)   # ~300 OOM lines
  while (bytes < target) {
    step++
    l = sprintf("2025-01-01 12:00:%02d INFO trainer.py:812] step %d/100000 loss %.4f lr 2.0e-05 grad_norm 0.8731 tokens/s 15321 epoch 3", step % 60, step, 1.0 / (1 + step % 97))
    print l; bytes += length(l) + 1
    if (step % every == 0) { o = oom[n % 5]; n++; print o; bytes += length(o) + 1 }
  }
}' < /dev/null > "$L/train.log"

[ -s "$L/hf.log" ] || awk -v mib="$MIB" "$OOMS"'
function bar(i, total,   pct, fill, s, k) {
  pct = int(100 * i / total); fill = int(pct / 10)
  s = ""
  for (k = 0; k < 10; k++) s = s (k < fill ? "\342\226\210" : " ")
  return sprintf("\r%3d%%|%s| %d/%d [%02d:%02d<%02d:%02d,  %.2fit/s]", pct, s, i, total, int(i / 60) % 60, i % 60, int((total - i) / 60) % 60, (total - i) % 60, 3.2 + (i % 7) / 10)
}
END {
  target = mib * 1048576; bytes = 0; total = 100000
  for (i = 1; bytes < target - 4096; i++) {
    b = bar(i % total, total); printf "%s", b; bytes += length(b)
    if (i % 10 == 0) {
      l = sprintf("\n\033[32m[INFO|trainer.py:2345] 2025-01-01 12:%02d:%02d,%03d >>\033[0m {'\''loss'\'': %.4f, '\''grad_norm'\'': %.4f, '\''learning_rate'\'': %.3e, '\''epoch'\'': %.2f}\n", int(i / 60) % 60, i % 60, i % 1000, 2.0 / (1 + i % 89), 0.5 + (i % 13) / 10, 2e-5 * (1 - i / 1e9), i / 1e5)
      printf "%s", l; bytes += length(l)
    }
  }
  printf "\nTraceback (most recent call last):\n  File \"train.py\", line 88, in <module>\n    trainer.train()\n%s\n", oom[0]
}' < /dev/null > "$L/hf.log"

[ -s "$L/dense.log" ] || awk -v mib="$((MIB / 4))" "$OOMS"'
END {
  target = mib * 1048576; bytes = 0
  for (n = 0; bytes < target; n++) { o = oom[n % 5]; print o; bytes += length(o) + 1 }
}' < /dev/null > "$L/dense.log"

med() { printf '%s\n' $1 | sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# one timed run: its wall and CPU (user + system) seconds appended to the lists W$2 and C$2
timed() {
  tag=$1; shift
  /usr/bin/time -f "%e %U %S" -o "$T/time" "$@" > "$T/out.$tag" || true
  read -r w u sy < "$T/time"
  eval "W$tag=\"\$W$tag $w\"; C$tag=\"\$C$tag $(awk "BEGIN { print $u + $sy }")\""
}
for log in train hf dense; do
  F="$L/$log.log"
  SIZE=$(wc -c < "$F")
  cat "$F" > /dev/null # warm the page cache
  Wv=""; Cv=""; Wg=""; Cg=""; Wr=""; Cr=""; i=0
  while [ "$i" -lt "$RUNS" ]; do
    timed v build/vramfit explain "$F"
    timed g grep -c 'out of memory' "$F"
    timed r rg -c 'out of memory' "$F"
    i=$((i + 1))
  done
  /usr/bin/time -v build/vramfit explain "$F" > /dev/null 2> "$T/time.txt" || true
  RSS=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$T/time.txt")
  awk -v s="$SIZE" -v n="$RUNS" -v name="$log" -v rss="$RSS" \
      -v wv="$(med "$Wv")" -v cv="$(med "$Cv")" -v wg="$(med "$Wg")" -v cg="$(med "$Cg")" \
      -v wr="$(med "$Wr")" -v cr="$(med "$Cr")" -v out="$(head -1 "$T/out.v")" \
      -v gc="$(cat "$T/out.g")" 'BEGIN {
    mb = s / 1048576
    printf "%s log: %.0f MiB, medians of %d interleaved runs (wall s, CPU s = user + system)\n", name, mb, n
    printf "  %-26s wall %6.3f s %6.0f MiB/s  CPU %6.3f s %6.0f MiB/s  max RSS %d KiB\n", "vramfit explain", wv, mb / wv, cv, mb / cv, rss
    printf "  %-26s wall %6.3f s %6.0f MiB/s  CPU %6.3f s %6.0f MiB/s  (%s lines)\n", "grep -c '\''out of memory'\''", wg, mb / wg, cg, mb / cg, gc
    printf "  %-26s wall %6.3f s %6.0f MiB/s  CPU %6.3f s %6.0f MiB/s\n", "rg -c '\''out of memory'\''", wr, mb / wr, cr, mb / cr
    printf "  vramfit speed / grep: wall %.2f, CPU %.2f; / ripgrep: wall %.2f, CPU %.2f\n", wg / wv, cg / cv, wr / wv, cr / cv
    printf "  vramfit: %s\n", substr(out, 1, 90)
  }'
done
