#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# inspect.sh [VRAMFIT] - issue 3: times `vramfit inspect` as whole processes (fork + exec +
# read + render, output to /dev/null; median, p10, p90 of RUNS runs, bench/interleave.c with one command) on
#   - a header-only GGUF: 40 layers, 1,003 tensors, a 151,936-token BPE vocabulary with merges
#     (6 MB of header), and
#   - a folder of config.json + model.safetensors.index.json + 100 header-only shards
#     (Llama-3.1-405B shapes, 1,137 tensors),
# both written by bench/mkbench.c with the test fixture writers; and, side by side on the same
# GGUF file, the @huggingface/gguf npm parser (gguf() with allowLocalFile) as a whole
# `node parse.mjs FILE` process (NODE_RUNS runs). Prints the table and the ratio of medians.
# Without node/npm (or when npm cannot install the package) the npm rows are skipped.
#
# Environment: RUNS (default 100), NODE_RUNS (default 20), HF_GGUF_VERSION (default 0.4.6, the
# version pinned in ../shared/peers).
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-build/vramfit}
case $bin in /*) ;; *) bin=$root/$bin ;; esac
runs=${RUNS:-100}
node_runs=${NODE_RUNS:-20}
hf_version=${HF_GGUF_VERSION:-0.4.6}
if [ ! -x "$bin" ]; then
    echo "inspect.sh: $bin not built (make build/vramfit)" >&2
    exit 2
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/vramfit-inspect.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM HUP
cflags="-O2 -std=c11 -D_POSIX_C_SOURCE=200809L"
# shellcheck disable=SC2086 # cflags is a word list
cc $cflags -o "$tmp/interleave" "$root/bench/interleave.c" || exit 2
# shellcheck disable=SC2086
cc $cflags -o "$tmp/mkbench" "$root/bench/mkbench.c" || exit 2
gguf=$tmp/bench-40L-151936vocab.header-only.gguf
st=$tmp/bench-405b-100-shards
mkdir "$st" || exit 2
"$tmp/mkbench" "$gguf" "$st" || exit 2
"$bin" inspect "$gguf" >/dev/null || exit 1
"$bin" inspect "$st" >/dev/null || exit 1

line() { printf '%-58s %5s %9s %9s %9s\n' "$@"; }
line "command (whole process, output to /dev/null)" runs "median ms" "p10 ms" "p90 ms"
# row LABEL N CMD ARGS...: times CMD N times and prints a row; $last is its median
row() {
    label=$1 n=$2
    shift 2
    r=$("$tmp/interleave" "$n" "$@" | cut -f2-4 | tr '\t' ' ') || exit 1
    [ -n "$r" ] || exit 1
    # shellcheck disable=SC2086 # r is "median p10 p90"
    set -- $r
    line "$label" "$n" "$1" "$2" "$3"
    last=$1
}
row "/bin/true (process start baseline)" "$runs" /bin/true
row "vramfit inspect GGUF (6 MB header, 1,003 tensors)" "$runs" "$bin" inspect "$gguf"
vf_gguf=$last
row "vramfit inspect GGUF --json" "$runs" "$bin" inspect "$gguf" --json
row "vramfit inspect DIR (index + 100 safetensors shards)" "$runs" "$bin" inspect "$st"
row "vramfit inspect DIR --json" "$runs" "$bin" inspect "$st" --json

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    echo "inspect.sh: @huggingface/gguf rows skipped: node/npm not available"
    exit 0
fi
mkdir "$tmp/hf" && cd "$tmp/hf" || exit 2
echo '{"private": true}' >package.json
if ! npm install --no-audit --no-fund --save-exact "@huggingface/gguf@$hf_version" \
    >"$tmp/npm.log" 2>&1; then
    tail -n 5 "$tmp/npm.log" >&2
    echo "inspect.sh: @huggingface/gguf rows skipped: npm install failed"
    exit 0
fi
cat >parse.mjs <<'EOF'
// node parse.mjs FILE [--check]: parse a local GGUF's header with @huggingface/gguf
import { gguf } from "@huggingface/gguf";
const r = await gguf(process.argv[2], { allowLocalFile: true });
if (process.argv[3] === "--check")
    console.log(`${r.tensorInfos.length} tensors, ${r.metadata["tokenizer.ggml.tokens"].length} tokens`);
EOF
check=$(node parse.mjs "$gguf" --check) || exit 1
row "node: empty script (node start baseline)" "$node_runs" node -e 0
row "node + @huggingface/gguf $hf_version gguf() on the GGUF" "$node_runs" node parse.mjs "$gguf"
hf=$last
echo "@huggingface/gguf read: $check"
awk -v a="$hf" -v b="$vf_gguf" 'BEGIN { printf "ratio of medians, @huggingface/gguf / vramfit inspect on the same GGUF: %.1fx\n", a / b }'
