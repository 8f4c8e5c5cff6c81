#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# smi.sh VRAMFIT - the cost of one GPU snapshot, whole process (vramfit smi --json on the
# stub libnvidia-ml with the container /proc fixture; and on the fake backend), median of RUNS
# runs with bench/interleave.c (one command: median, p10, p90 ms); at 1 Hz, vramfit top pays one snapshot per second, so CPU share =
# snapshot time / 1 s (issue 9: under 1 % of a core).
bin=${1:-build/vramfit}
runs=${RUNS:-200}
dir=$(dirname "$0")
build=$(dirname "$bin")
cc -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -o "$build/interleave" "$dir/interleave.c" 2>/dev/null ||
    { echo "cannot build interleave"; exit 1; }
timeit() { "$build/interleave" "$@" | cut -f2-4 | tr '\t' ' '; }
make -s "$build/tests/stub_nvml_V3.so" >/dev/null 2>&1
echo "== vramfit smi --json, NVML stub + /proc fixture ($runs runs)"
VRAMFIT_NVML_LIB="$PWD/$build/tests/stub_nvml_V3.so" VRAMFIT_SYSROOT=tests/fixtures/sysroot/container \
    timeit "$runs" "$bin" smi --json
echo "== vramfit smi --json, fake backend ($runs runs)"
VRAMFIT_GPU_BACKEND=fake VRAMFIT_FAKE_GPUS=tests/fixtures/gpus/two-4090.tsv \
    timeit "$runs" "$bin" smi --json
echo "== /bin/true ($runs runs)"
timeit "$runs" /bin/true
