#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# accuracy-llamacpp.sh [VRAMFIT] - issue 4: the llama.cpp estimator against real llama.cpp.
# Makes a sweep of GGUF files with ../shared/peers/make-gguf.mjs (dense and GQA, three
# sizes, F16/Q4_0/Q8_0/Q4_K), runs oracle.mjs (llama.cpp's CPU build via node-llama-cpp, no
# mmap: real buffer sizes) and `vramfit estimate FILE --engine llama.cpp --cpu ... --json`
# for contexts 512..32768, FA on/off, f16/q8_0/q4_0 KV and 1 or 4 sequences, and prints per
# case the model, KV, compute and output buffers (oracle vs ours, error %) with the median
# and the largest error of each. Exits 0 with "skipped: ..." when node/npm or the peers
# folder are missing; 1 when a run fails.
#
# The oracle sets n_ubatch = n_batch = min(ctx x seqs, 512); we pass the same -b/-ub.
# Model bytes are compared exactly (memory_breakdown()), KV and output as llama.cpp prints
# them (MiB, 2 decimals), compute as exact context bytes minus the printed KV.
#
# The peer: node-llama-cpp 3.21.1's own closed-form estimate of the same config (its v1
# heuristic, GgufInsights.estimateModelResourceRequirements / estimateContextResource-
# Requirements with gpuLayers 0, which oracle.mjs runs before loading). v1 gives the model
# bytes and one context figure (KV + compute), so the peer columns compare those two: ctx_ref
# is llama.cpp's exact context bytes, ctx_ours our KV + compute, ctx_peer v1's, and "ours<=" is
# yes when our model and context errors are both at most the peer's. (Its v2 estimate runs
# llama.cpp itself with no_alloc, so it is the oracle, not a peer.)
#
# Environment: PEERS (default ../shared/peers beside the repo), QUICK=1 (a third of the
# cases), KEEP=1 keeps the temporary folder.
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-build/vramfit}
case $bin in /*) ;; *) bin=$root/$bin ;; esac
peers=${PEERS:-$root/../shared/peers}

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    echo "accuracy-llamacpp: skipped: node/npm not available"
    exit 0
fi
if [ ! -f "$peers/make-gguf.mjs" ] || [ ! -f "$peers/oracle.mjs" ]; then
    echo "accuracy-llamacpp: skipped: no peers folder at $peers"
    exit 0
fi
if [ ! -x "$bin" ]; then
    echo "accuracy-llamacpp: $bin not built (make build/vramfit)" >&2
    exit 2
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/vramfit-acc.XXXXXX") || exit 2
cleanup() {
    if [ "${KEEP:-0}" = 1 ]; then echo "accuracy-llamacpp: kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

if [ -d "$peers/node_modules/node-llama-cpp" ]; then
    work=$peers # a working copy with node_modules already (read-only is fine: we write to tmp)
else
    mkdir "$tmp/peers" || exit 2
    for f in package.json package-lock.json make-gguf.mjs oracle.mjs; do
        cp "$peers/$f" "$tmp/peers/" || exit 2
    done
    echo "accuracy-llamacpp: npm ci in $tmp/peers ..."
    if ! (cd "$tmp/peers" && NODE_LLAMA_CPP_SKIP_DOWNLOAD=true npm ci --no-audit --no-fund \
        --omit=optional >"$tmp/npm.log" 2>&1); then
        tail -n 20 "$tmp/npm.log" >&2
        exit 2
    fi
    work=$tmp/peers
fi
mkdir "$tmp/models" || exit 2

# name | make-gguf.mjs options (sparse: a full-size file whose data is a hole)
cat >"$tmp/models.txt" <<MODELS
s-f16|--n-layer 4 --n-embd 256 --n-head 8 --n-ff 768 --n-vocab 512 --type F16
s-q8-gqa|--n-layer 4 --n-embd 512 --n-head 8 --n-head-kv 2 --n-ff 1536 --n-vocab 4000 --type Q8_0
m-q4k-gqa|--n-layer 8 --n-embd 1024 --n-head 16 --n-head-kv 4 --n-ff 2816 --n-vocab 16000 --type Q4_K
l-q4_0-gqa|--n-layer 16 --n-embd 2048 --n-head 32 --n-head-kv 8 --n-ff 5632 --n-vocab 32000 --type Q4_0
MODELS
# ctx | seqs | fa | kv type
if [ "${QUICK:-0}" = 1 ]; then
    cat >"$tmp/cases.txt" <<CASES
512|1|off|f16
4096|1|on|q8_0
8192|4|off|f16
CASES
else
    cat >"$tmp/cases.txt" <<CASES
512|1|off|f16
512|1|on|f16
4096|1|off|f16
4096|1|on|f16
4096|1|on|q8_0
4096|1|on|q4_0
32768|1|off|f16
32768|1|on|q8_0
2048|4|off|f16
8192|4|on|q8_0
CASES
fi

vals() { # FILE EXPR...: one line of values from a JSON file ("-" when absent)
    f=$1
    shift
    node -e 'const fs=require("fs");let j={};try{j=JSON.parse(fs.readFileSync(process.argv[1],"utf8"))}catch(e){}
const out=[];for(const e of process.argv.slice(2)){let v;try{v=Function("j","return ("+e+")")(j)}catch(x){}out.push(v==null?"-":String(v))}console.log(out.join(" "))' "$f" "$@"
}
row() {
    printf '%-11s %6s %2s %-3s %-4s %10s %10s %7s %8s %8s %10s %10s %7s %5s %5s %10s %10s %10s %8s %8s %6s\n' "$@"
}
row model ctx np fa kv model_ref model_ours err kv_ref kv_ours comp_ref comp_ours err% out_r \
    out_o ctx_ref ctx_ours ctx_peer ours% peer% ours\<=
fail=0
: >"$tmp/errs"
while IFS='|' read -r name mopts; do
    [ -n "$name" ] || continue
    f=$tmp/models/$name.gguf
    # shellcheck disable=SC2086 # mopts is a word list
    if ! node "$work/make-gguf.mjs" --out "$f" --sparse --ctx 65536 $mopts >/dev/null 2>"$tmp/gen.err"; then
        echo "$name: make-gguf failed: $(tail -n 1 "$tmp/gen.err")"
        fail=1
        continue
    fi
    while IFS='|' read -r ctx np fa kv; do
        [ -n "$ctx" ] || continue
        ub=$((ctx * np < 512 ? ctx * np : 512))
        o=$tmp/$name-$ctx-$np-$fa-$kv
        (cd "$work" && timeout 300 node oracle.mjs "$f" --ctx "$ctx" --seqs "$np" --fa "$fa" \
            --batch "$ub" --type-k "$kv" --type-v "$kv") >"$o.oracle.json" 2>"$o.oracle.err"
        "$bin" estimate "$f" --engine llama.cpp --cpu -c $((ctx * np)) -np "$np" -fa "$fa" \
            -b "$ub" -ub "$ub" -ctk "$kv" -ctv "$kv" --json >"$o.ours.json" 2>"$o.ours.err"
        set -- $(vals "$o.oracle.json" "j.llama_cpp.exact.model_bytes" "j.llama_cpp.kv_buffer_mib" \
            "j.llama_cpp.exact.context_bytes" "j.llama_cpp.output_buffer_mib" \
            "j.node_llama_cpp_estimate.v1_heuristic.model_cpu_ram_bytes" \
            "j.node_llama_cpp_estimate.v1_heuristic.context_cpu_ram_bytes")
        mr=$1 kr=$2 cb=$3 outr=$4 mp=$5 cp=$6
        set -- $(vals "$o.ours.json" \
            'j.components.find(c=>c.name=="model_buffer").bytes' \
            '(j.components.find(c=>c.name=="kv_buffer").bytes/1048576).toFixed(2)' \
            'j.components.find(c=>c.name=="compute_buffer").bytes' \
            '(j.components.find(c=>c.name=="output_buffer").bytes/1048576).toFixed(2)' \
            'j.components.find(c=>c.name=="kv_buffer").bytes')
        mo=$1 ko=$2 co=$3 outo=$4 kb=$5
        if [ "$mr" = - ] || [ "$mo" = - ]; then
            row "$name" "$ctx" "$np" "$fa" "$kv" "${mr}" "${mo}" ERROR - - - - - - - - - - - - -
            fail=1
            continue
        fi
        set -- $(node -e 'const [mr,mo,kr,ko,cb,co,kb,mp,cp]=process.argv.slice(1).map(Number);
const cr=cb-Math.round(kr*1048576);const me=(mo-mr)/mr*100,ce=(co-cr)/cr*100;
const xo=kb+co,xe=(xo-cb)/cb*100,pe=(cp-cb)/cb*100,pm=(mp-mr)/mr*100;
const ok=Number.isFinite(pe)?(Math.abs(xe)<=Math.abs(pe)+1e-9&&Math.abs(me)<=Math.abs(pm)+1e-9?"yes":"no"):"-";
console.log(cr, me.toFixed(2), ce.toFixed(2), (Number(ko)-kr).toFixed(2), xo, xe.toFixed(2),
  Number.isFinite(pe)?pe.toFixed(2):"-", ok)' "$mr" "$mo" "$kr" "$ko" "$cb" "$co" "$kb" "$mp" "$cp")
        cr=$1 me=$2 ce=$3 kd=$4 xo=$5 xe=$6 pe=$7 ok=$8
        row "$name" "$ctx" "$np" "$fa" "$kv" "$mr" "$mo" "$me" "$kr" "$ko" \
            "$cr" "$co" "$ce" "$outr" "$outo" "$cb" "$xo" "$cp" "$xe" "$pe" "$ok"
        echo "$me $kd $ce $xe $pe $ok" >>"$tmp/errs"
    done <"$tmp/cases.txt"
    rm -f "$f"
done <"$tmp/models.txt"

node -e 'const fs=require("fs");const r=fs.readFileSync(process.argv[1],"utf8").trim().split("\n").filter(Boolean).map(l=>l.split(" ").map(Number));
const st=(i)=>{const a=r.map(x=>Math.abs(x[i])).sort((p,q)=>p-q);return a.length?[a[a.length>>1].toFixed(2),a[a.length-1].toFixed(2)]:["-","-"]};
const [m,k,c,x,p]=[0,1,2,3,4].map(st);
const raw=fs.readFileSync(process.argv[1],"utf8").trim().split("\n").filter(Boolean).map(l=>l.split(" "));
const w5=raw.filter(a=>Math.abs(Number(a[2]))<=5).length,ex=raw.filter(a=>Number(a[2])===0).length;
const yes=raw.filter(a=>a[5]==="yes").length,peer=raw.filter(a=>a[5]!=="-").length;
console.log(`accuracy-llamacpp: ${r.length} cases; |error| median/max: model ${m[0]}%/${m[1]}%, KV ${k[0]}/${k[1]} MiB, compute ${c[0]}%/${c[1]}%`);
console.log(`accuracy-llamacpp: compute within 5 % in ${w5}/${r.length} (0.00 % in ${ex}); context (KV + compute) ours ${x[0]}%/${x[1]}%, peer node-llama-cpp v1 ${p[0]}%/${p[1]}%; ours at least as close as the peer in ${yes}/${peer}`)' "$tmp/errs"
exit $fail
