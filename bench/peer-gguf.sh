#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# peer-gguf.sh [VRAMFIT] - issue 3: for GGUF files made with ../shared/peers/make-gguf.mjs,
# `vramfit inspect FILE --json` must report weights.bytes equal to the model buffer that real
# llama.cpp allocates for the file (CPU build via node-llama-cpp, no mmap: the exact byte count
# from llama.cpp's memory_breakdown(), see ../shared/peers/README.md). Prints one row per file
# and exits 1 on any mismatch or oracle failure; exits 0 with "skipped: ..." when node/npm or
# the peers folder are not there.
#
# Environment: PEERS (default ../shared/peers beside the repo), ORACLE_CTX (default 512),
# KEEP=1 keeps the temporary folder (printed) for a look at the files and logs.
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-build/vramfit}
case $bin in /*) ;; *) bin=$root/$bin ;; esac
peers=${PEERS:-$root/../shared/peers}
ctx=${ORACLE_CTX:-512}

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    echo "peer-gguf: skipped: node/npm not available"
    exit 0
fi
if [ ! -f "$peers/make-gguf.mjs" ] || [ ! -f "$peers/oracle.mjs" ] ||
    [ ! -f "$peers/package-lock.json" ]; then
    echo "peer-gguf: skipped: no peers folder at $peers"
    exit 0
fi
if [ ! -x "$bin" ]; then
    echo "peer-gguf: $bin not built (make build/vramfit)" >&2
    exit 2
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/vramfit-peer.XXXXXX") || exit 2
cleanup() {
    if [ "${KEEP:-0}" = 1 ]; then echo "peer-gguf: kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

# a private copy (the shared folder may be read-only), without anything generated there
mkdir "$tmp/peers" "$tmp/peers/models" || exit 2
for f in package.json package-lock.json make-gguf.mjs oracle.mjs; do
    cp "$peers/$f" "$tmp/peers/" || exit 2
done
cd "$tmp/peers" || exit 2
# --omit=optional: only the CPU build of llama.cpp (linux-x64 is a direct dependency); the
# optional CUDA/Vulkan/arm builds would add ~600 MB. Nothing is compiled (see the README).
echo "peer-gguf: npm ci in $tmp/peers ..."
if ! NODE_LLAMA_CPP_SKIP_DOWNLOAD=true npm ci --no-audit --no-fund --omit=optional \
    >"$tmp/npm.log" 2>&1; then
    tail -n 20 "$tmp/npm.log" >&2
    echo "peer-gguf: npm ci failed" >&2
    exit 2
fi

# name | make-gguf.mjs options (K-quants need rows that are multiples of 256: n_embd 512)
K="--n-embd 512 --n-ff 1024"
cat >"$tmp/sweep" <<EOF
tiny-f16|F16|--type F16
tiny-f32|F32|--type F32
tiny-bf16|BF16|--type BF16
tiny-q8_0-gqa|Q8_0|--type Q8_0 --n-head-kv 2
tiny-q4_0-gqa|Q4_0|--type Q4_0 --n-head-kv 2
tiny-q4_1|Q4_1|--type Q4_1 --n-head-kv 2
tiny-q5_0|Q5_0|--type Q5_0 --n-head-kv 4
tiny-q5_1|Q5_1|--type Q5_1
k-q4k-q6k-out|Q4_K+Q6_K out|--type Q4_K --output-type Q6_K $K
k-q4k-q6k-embd-out|Q4_K+Q6_K e+o|--type Q4_K --embd-type Q6_K --output-type Q6_K $K
k-q5k|Q5_K|--type Q5_K $K
k-q6k-tied|Q6_K tied|--type Q6_K --tied $K
k-q3k|Q3_K|--type Q3_K $K
k-q2k|Q2_K|--type Q2_K $K
k-q8_0-f16-embd|Q8_0+F16 embd|--type Q8_0 --embd-type F16 $K
gpt2-f16-al64|F16 gpt2 al64|--tokenizer gpt2 --n-vocab 600 --alignment 64
gpt2-q4k-al64|Q4_K gpt2 al64|--tokenizer gpt2 --n-vocab 768 --alignment 64 --type Q4_K $K
EOF

# jget FILE EXPR: one value from a JSON file (EXPR is a JS expression over j), "" if absent
jget() {
    node -e 'const fs=require("fs");let j;try{j=JSON.parse(fs.readFileSync(process.argv[1],"utf8"))}catch(e){process.exit(0)}
let v;try{v=('"$2"')}catch(e){}if(v!=null)console.log(String(v))' "$1"
}

fail=0
n=0
line() { printf '%-22s %-16s %12s %14s %14s %s\n' "$@"; }
line file type "gguf data B" "llama.cpp B" "vramfit B" equal?
line ---------------------- ---------------- ------------ -------------- -------------- ------
while IFS='|' read -r name type opts; do
    [ -n "$name" ] || continue
    f=models/$name.gguf
    # shellcheck disable=SC2086 # opts is a word list
    if ! node make-gguf.mjs --out "$f" $opts >"$tmp/$name.gen.json" 2>"$tmp/$name.gen.err"; then
        line "$name" "$type" - - - "ERROR (make-gguf: $(tail -n 1 "$tmp/$name.gen.err"))"
        fail=1
        continue
    fi
    data=$(jget "$tmp/$name.gen.json" "j.data_bytes")
    timeout 300 node oracle.mjs "$f" --ctx "$ctx" >"$tmp/$name.oracle.json" 2>"$tmp/$name.oracle.err"
    ref=$(jget "$tmp/$name.oracle.json" "j.llama_cpp.exact.model_bytes")
    "$bin" inspect "$f" --json >"$tmp/$name.inspect.json" 2>"$tmp/$name.inspect.err"
    got=$(jget "$tmp/$name.inspect.json" "j.weights.bytes")
    if [ -z "$ref" ]; then
        why=$(jget "$tmp/$name.oracle.json" "j.llama_cpp.error")
        eq="ERROR (oracle: ${why:-$(tail -n 1 "$tmp/$name.oracle.err")})"
        fail=1
    elif [ -z "$got" ]; then
        eq="ERROR (vramfit: $(head -n 1 "$tmp/$name.inspect.err"))"
        fail=1
    elif [ "$ref" = "$got" ]; then
        eq=yes
    else
        eq="NO ($((got - ref)))"
        fail=1
    fi
    line "$name" "$type" "${data:--}" "${ref:--}" "${got:--}" "$eq"
    n=$((n + 1))
    rm -f "$f" # the models can be large; the JSON stays for KEEP=1
done <"$tmp/sweep"

# issue 21: the real vocab GGUFs of llama.cpp's models/ folder, from the llama.cpp source that
# node-llama-cpp bundles (llama/gitRelease.bundle): every file parses, and architecture, context,
# dimensions, vocab and the f16 KV bytes per token llama.cpp allocates equal vocab-gguf.mjs's
# reading of the metadata with the npm parser.
bundle=node_modules/node-llama-cpp/llama/gitRelease.bundle
nv=0
if [ -f "$bundle" ] && command -v git >/dev/null 2>&1; then
    cp "$root/bench/vocab-gguf.mjs" . || exit 2
    mkdir -p "$tmp/vocab"
    if git clone -q --no-checkout "$bundle" "$tmp/lsrc" 2>"$tmp/clone.err" &&
        git -C "$tmp/lsrc" archive HEAD models | tar -x -C "$tmp/vocab" 2>>"$tmp/clone.err"; then
        for f in "$tmp"/vocab/models/*.gguf; do
            v=$(basename "$f" .gguf)
            if ! "$bin" inspect "$f" --json >"$tmp/$v.inspect.json" 2>"$tmp/$v.inspect.err"; then
                echo "vocab $v: ERROR (vramfit: $(head -n 1 "$tmp/$v.inspect.err"))"
                fail=1
            elif ! node vocab-gguf.mjs "$f" "$tmp/$v.inspect.json" >"$tmp/$v.vocab.json"; then
                echo "vocab $v: MISMATCH $(cat "$tmp/$v.vocab.json")"
                fail=1
            else
                echo "vocab $v: equal ($(jget "$tmp/$v.vocab.json" "JSON.stringify(j.want)"))"
            fi
            nv=$((nv + 1))
        done
    else
        echo "peer-gguf: could not read the llama.cpp bundle: $(tail -n 1 "$tmp/clone.err")"
        fail=1
    fi
fi
echo "peer-gguf: $nv vocab GGUFs of llama.cpp's models/ checked"

echo "peer-gguf: $n files; llama.cpp $(jget "$tmp/tiny-f16.oracle.json" "j.llama_cpp_release")" \
    "(node-llama-cpp $(jget "$tmp/tiny-f16.oracle.json" "j.node_llama_cpp_version"), CPU, no mmap," \
    "ctx $ctx): exact.model_bytes vs vramfit inspect --json weights.bytes"
if [ "$fail" != 0 ]; then
    echo "peer-gguf: MISMATCH (see the rows above)"
    exit 1
fi
echo "peer-gguf: all equal"
