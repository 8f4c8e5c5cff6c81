#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# run.sh VRAMFIT - every command with --json output (estimate on each engine, training,
# image/video, pick, explain over every OOM fixture, inspect, catalog, smi, run) with several
# argument sets, including hostile bytes (quotes, backslashes, control characters, invalid
# UTF-8, a 10,000-character argument) in command lines, file names, logs and process tables;
# each output is checked by a JSON parser that is not ours. Errors under --json must leave
# stdout empty or print DESIGN section 8's {"error": {"code", "message", "hint"?}}.
# Called from the repository root: sh tests/json/run.sh build/vramfit. Installs nothing.
# Ends with "json: N passed, N failed".
#
# The validator: python3 (a dependency of clang-format, which `make deps` installs) with
# strict UTF-8 decoding, no NaN/Infinity, no duplicate keys, no lone surrogate escapes and
# nothing after the document (stricter than `python3 -m json.tool`, which on stdin accepts
# invalid UTF-8 through surrogateescape and takes NaN); else jq (jq 1.6 replaces invalid UTF-8
# silently, so iconv checks the bytes first).
bin=${1:-build/vramfit}
case "$bin" in /*) ;; *) bin="$PWD/$bin" ;; esac
passed=0
failed=0
notes=0
ok() { passed=$((passed + 1)); echo "ok   json $1"; }
bad() { failed=$((failed + 1)); echo "FAIL json $1: $2"; }
note() { notes=$((notes + 1)); echo "note json $1"; }
if [ ! -x "$bin" ]; then
    bad "binary" "no executable '$bin'"
    echo "json: $passed passed, $failed failed"
    exit 1
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM

# ------------------------------------------------------------------ the validator
# valid FILE [SPEC...]: 0 when FILE is one valid JSON document, else why on stdout. A SPEC is
# "error" (DESIGN section 8's error object), PATH ("model.id", "gpus.0.name": present and not
# null, so a value the renderer could not encode is not silently dropped) or PATH#N (a string
# or array of length N: nothing was cut short).
validator=${JSON_VALIDATOR:-python3} # JSON_VALIDATOR=jq runs the fallback
command -v "$validator" >/dev/null 2>&1 || validator=jq
if [ "$validator" = python3 ]; then
    cat >"$dir/valid.py" <<'EOF'
import json, sys

def constant(name):
    raise ValueError("%s is not JSON" % name)

def pairs(items):
    keys = [k for k, _ in items]
    dup = {k for k in keys if keys.count(k) > 1}
    if dup:
        raise ValueError("duplicate key %r" % sorted(dup)[0])
    return dict(items)

try:
    text = open(sys.argv[1], "rb").read().decode("utf-8")  # strict: invalid bytes fail
    if text.startswith("\ufeff"):
        raise ValueError("a byte order mark")
    doc = json.loads(text, parse_constant=constant, object_pairs_hook=pairs)
    json.dumps(doc, ensure_ascii=False).encode("utf-8")  # "\ud800" escapes fail here
    for spec in sys.argv[2:]:
        if spec == "error":  # DESIGN section 8's error shape
            e = doc.get("error") if isinstance(doc, dict) else None
            if not isinstance(e, dict) or not isinstance(e.get("code"), str) or \
                    not isinstance(e.get("message"), str) or \
                    not isinstance(e.get("hint", ""), str):
                raise ValueError('not {"error": {"code", "message", "hint"?}}')
            continue
        # PATH (a.0.b: present, not null) or PATH#N (a string or array of length N)
        path, _, want = spec.partition("#")
        v = doc
        for step in path.split("."):
            if isinstance(v, list) and step.isdigit() and int(step) < len(v):
                v = v[int(step)]
            elif isinstance(v, dict) and step in v:
                v = v[step]
            else:
                raise ValueError("no %s in the document" % path)
        if v is None:
            raise ValueError("%s is null" % path)
        if want and (not isinstance(v, (str, list)) or len(v) != int(want)):
            raise ValueError("%s: length %s, expected %s" % (path, len(v) if isinstance(v, (str, list)) else "-", want))
except Exception as x:
    print(str(x).splitlines()[0][:200] if str(x) else type(x).__name__)
    sys.exit(1)
EOF
    valid() { python3 "$dir/valid.py" "$@"; }
elif command -v jq >/dev/null 2>&1 && command -v iconv >/dev/null 2>&1; then
    valid() {
        iconv -f UTF-8 -t UTF-8 "$1" >/dev/null 2>&1 || { echo "invalid UTF-8"; return 1; }
        [ "$(jq -s length "$1" 2>&1)" = 1 ] || { jq . "$1" 2>&1 >/dev/null | head -1; echo "not one JSON document"; return 1; }
        f=$1
        shift
        for spec in "$@"; do
            if [ "$spec" = error ]; then
                jq -e '.error | (.code | type == "string") and (.message | type == "string")' \
                    "$f" >/dev/null 2>&1 || { echo 'not {"error": {"code", "message"}}'; return 1; }
                continue
            fi
            p=$(printf '%s' "${spec%%#*}" | sed 's/\.\([0-9][0-9]*\)/[\1]/g; s/^/./')
            jq -e "$p != null" "$f" >/dev/null 2>&1 || { echo "no $spec in the document"; return 1; }
            case "$spec" in *"#"*)
                jq -e "($p | length) == ${spec#*#}" "$f" >/dev/null 2>&1 || { echo "$spec: wrong length"; return 1; } ;;
            esac
        done
        return 0
    }
else
    bad "validator" "neither python3 nor jq (with iconv) is installed (python3 comes with clang-format: make deps)"
    echo "json: $passed passed, $failed failed"
    exit 1
fi

# ------------------------------------------------------------------ how a case runs
# Deterministic and offline, as the goldens: LC_ALL=C, no home, no hub, the fake GPUs.
gpus="$PWD/tests/fixtures/gpus/two-4090.tsv"
vf() {
    env -i PATH="$PATH" LC_ALL=C HOME=/nonexistent XDG_CACHE_HOME="$dir/cache" \
        HF_ENDPOINT=http://127.0.0.1:9 VRAMFIT_GPU_BACKEND=fake VRAMFIT_FAKE_GPUS="$gpus" \
        ${VF_ENV:-} "$bin" "$@"
}
n_case=0
# json NAME RCS ARGS...: ARGS end in --json; the exit status is one of RCS ("0", "0|3") and
# stdout is one valid JSON document (with the SPECs of $expect, which is then cleared)
expect=
json() {
    name=$1 rcs=$2
    shift 2
    n_case=$((n_case + 1))
    vf "$@" >"$dir/out.$n_case" 2>"$dir/err.$n_case"
    rc=$?
    case "|$rcs|" in
    *"|$rc|"*) ;;
    *)
        bad "$name" "exit $rc, expected $rcs: $(head -c 300 "$dir/err.$n_case")"
        return
        ;;
    esac
    if [ ! -s "$dir/out.$n_case" ]; then
        bad "$name" "nothing on stdout: $(head -c 300 "$dir/err.$n_case")"
    elif why=$(valid "$dir/out.$n_case" $expect); then
        ok "$name"
    else
        bad "$name" "JSON check failed ($why): $(head -c 200 "$dir/out.$n_case" | tr '\n' ' ')"
    fi
    expect=
}
# error NAME ARGS...: a failure under --json: a non-zero exit other than 3, and stdout either
# empty (noted: DESIGN section 8 wants the error there as JSON) or the error object
error() {
    name=$1
    shift
    n_case=$((n_case + 1))
    vf "$@" >"$dir/out.$n_case" 2>"$dir/err.$n_case"
    rc=$?
    if [ "$rc" = 0 ] || [ "$rc" = 3 ]; then
        bad "error $name" "exit $rc for an error"
    elif [ ! -s "$dir/out.$n_case" ]; then
        if [ -s "$dir/err.$n_case" ]; then
            ok "error $name (exit $rc, stdout empty)"
            note "error $name: exit $rc with the message as text on stderr, not {\"error\": ...} on stdout (DESIGN section 8)"
        else
            bad "error $name" "exit $rc and no message at all"
        fi
    elif why=$(valid "$dir/out.$n_case" error); then
        ok "error $name (exit $rc, the error object)"
    else
        bad "error $name" "stdout is not the error object ($why): $(head -c 200 "$dir/out.$n_case" | tr '\n' ' ')"
    fi
}

# ------------------------------------------------------------------ estimate
json "estimate generic" 0 estimate llama-3.1-8b --json
json "estimate generic 32k x 8 on an H100" 0 estimate llama-3.1-8b --ctx 32k --users 8 --gpu h100-sxm --json
json "estimate generic does not fit" 3 estimate llama-3.1-8b --ctx 32k --users 8 --gpu rtx-4090 --json
json "estimate generic 70B on a 4090 (no fit)" 3 estimate llama-3.1-70b --gpu rtx-4090 --json
json "estimate generic raw size" "0|3" estimate llama-3.1-8b --gpu 24GB --json
json "estimate generic two cards" "0|3" estimate llama-3.1-70b --quant Q4_K_M --gpu rtx-4090:2 --json
json "estimate generic local cards" "0|3" estimate llama-3.1-8b --gpu local --json
json "estimate generic fp8 kv" 0 estimate qwen3-32b --kv-dtype fp8 --weights fp8 --json
json "estimate MoE (DeepSeek-V3)" 0 estimate deepseek-v3 --ctx 8k --json
json "estimate vllm" 0 estimate llama-3.1-8b --engine vllm --json
json "estimate vllm does not fit" "0|3" estimate llama-3.1-8b --engine vllm --max-model-len 32k --users 8 --gpu rtx-4090 --json
json "estimate vllm tp 2" "0|3" estimate llama-3.1-70b --engine vllm --quant awq -tp 2 --gpu rtx-4090:2 --json
json "estimate llama.cpp" "0|3" estimate qwen3-32b --engine llama.cpp --quant Q4_K_M -c 32768 --gpu rtx-4090 --json
json "estimate llama.cpp -ctk/-ctv" "0|3" estimate llama-3.1-8b -c 32768 -np 4 -ctk q8_0 -ctv q8_0 --quant Q4_K_M --gpu 4090 --json
json "estimate llama.cpp without a card" 0 estimate llama-3.1-8b --engine llama.cpp --quant Q8_0 --json
json "estimate ollama" "0|3" estimate llama-3.1-70b --engine ollama --quant Q4_K_M --num_ctx 8192 --gpu rtx-4090 --json
json "estimate ollama without a card" 0 estimate llama-3.1-8b --engine ollama --json
json "estimate transformers" "0|3" estimate llama-3.1-8b --engine transformers --ctx 4096 --users 4 --gpu rtx-4090 --json
json "estimate transformers without a card" 0 estimate llama-3.1-8b --engine transformers --json
json "estimate train full" "0|3" estimate llama-3.1-8b --task train --method full --seq 2048 --batch 1 --gpu h100-sxm --json
json "estimate train full 8 cards zero 3" "0|3" estimate llama-3.1-8b --task train --method full --seq 2048 --zero 3 --gpu h100-sxm:8 --json
json "estimate train lora" "0|3" estimate llama-3.1-8b --task train --method lora --seq 2048 --batch 1 --gpu rtx-4090 --json
json "estimate train qlora" 0 estimate llama-3.1-8b --task train --method qlora --seq 2048 --grad-checkpointing --json
json "estimate train fsdp offload" "0|3" estimate llama-3.1-70b --task train --method full --fsdp full_shard --offload optimizer --gpu h100-sxm:8 --json
json "estimate train image pipeline lora" "0|3" estimate flux1-dev --task train --method lora --width 1024 --height 1024 --gpu rtx-4090 --json
json "estimate image comfyui" "0|3" estimate flux1-dev --task image --width 1024 --height 1024 --weights fp8 --gpu rtx-4090 --json
json "estimate image comfyui no card" 0 estimate flux1-dev --task image --json
json "estimate image diffusers" "0|3" estimate flux1-dev --task image --engine diffusers --gpu rtx-4090 --json
json "estimate image sdxl batch 4" "0|3" estimate sdxl --task image --batch 4 --gpu rtx-4090 --json
json "estimate video wan 720p" 0 estimate wan2.2-t2v-a14b --width 1280 --height 720 --frames 81 --json
json "estimate video block swap" "0|3" estimate wan2.2-t2v-a14b --task video --frames 81 --res 720p --weights fp8 --offload block-swap 20 --gpu rtx-4090 --json
json "estimate video does not fit" 3 estimate wan2.2-t2v-a14b --task video --frames 81 --res 720p --gpu rtx-3060 --json
json "estimate GGUF file" 0 estimate tests/fixtures/models/tiny-q4km.gguf --json
json "estimate safetensors folder on a card" 0 estimate tests/fixtures/models/tiny-st --gpu rtx-4090 --json

# model files whose names hold a quote, a backslash, a newline, a control byte, invalid UTF-8
hostile=$(printf 'we"ird\\na\001me\377\n\303\251') # \303\251 is a well-formed é
mkdir -p "$dir/$hostile"
cp tests/fixtures/models/tiny-q4km.gguf "$dir/$hostile/m$hostile.gguf"
cp -R tests/fixtures/models/tiny-st "$dir/$hostile/st"
expect="model.id model.name"
json "estimate a GGUF file with a hostile name" 0 estimate "$dir/$hostile/m$hostile.gguf" --json
expect="model.id"
json "estimate a folder with a hostile name" 0 estimate "$dir/$hostile/st" --json

# ------------------------------------------------------------------ pick
json "pick 8B" 0 pick llama-3.1-8b --ctx 8k --json
json "pick 70B Q4" "0|3" pick llama-3.1-70b --quant Q4_K_M --json
json "pick in USD for 10 hours" "0|3" pick llama-3.1-8b --ctx 32k --users 4 --currency USD --hours 10 --json
json "pick two cards" "0|3" pick llama-3.1-70b --gpus 2 --json
json "pick vllm" "0|3" pick qwen3-32b --engine vllm --max-model-len 16k --json
json "pick training" "0|3" pick llama-3.1-8b --task train --method lora --seq 2048 --json
json "pick image" "0|3" pick flux1-dev --task image --json
json "pick video" "0|3" pick wan2.2-t2v-a14b --task video --res 720p --frames 81 --json
expect="model.id"
json "pick a GGUF file with a hostile name" "0|3" pick "$dir/$hostile/m$hostile.gguf" --json

# ------------------------------------------------------------------ explain: every fixture
for f in tests/fixtures/oom/* tests/fixtures/explain/*; do
    [ -f "$f" ] || continue
    json "explain $(basename "$f")" "0|3" explain "$f" --json
done
json "explain with a model" "0|3" explain tests/fixtures/oom/vllm-max-seq-len.log --model meta-llama/Llama-3.1-8B-Instruct --json
json "explain with a tool and workload" "0|3" explain tests/fixtures/oom/pytorch-2.2.log --tool transformers --model llama-3.1-8b --seq 4096 --batch 8 --json
# a log with hostile bytes around a real OOM message, read from stdin
{
    printf 'step 1 "quoted" \\back\\slash \001\002\033[31mred\033[0m \377\376 caf\303\251\t\n'
    cat tests/fixtures/oom/pytorch-2.2.log
    printf '\377 trailing "junk" \\ \001\n'
} >"$dir/hostile.log"
expect="events.0.line"
json "explain a log with hostile bytes (stdin)" "0|3" explain - --json <"$dir/hostile.log"
cp "$dir/hostile.log" "$dir/$hostile/log$hostile.txt"
json "explain a log with a hostile name" "0|3" explain "$dir/$hostile/log$hostile.txt" --json

# ------------------------------------------------------------------ inspect
for m in llama-3.1-8b deepseek-v3 qwen3-32b gpt-oss-20b gemma-3-1b flux1-dev wan2.2-t2v-a14b; do
    json "inspect $m" 0 inspect "$m" --json
done
json "inspect a GGUF file" 0 inspect tests/fixtures/models/tiny-q4km.gguf --json
json "inspect a snapshot folder" 0 inspect tests/fixtures/models/tiny-st --json
json "inspect config.json" 0 inspect tests/fixtures/models/tiny-st/config.json --json
json "inspect a safetensors file" 0 inspect tests/fixtures/models/tiny-st/model.safetensors --json
expect="model.id model.name"
json "inspect a GGUF file with a hostile name" 0 inspect "$dir/$hostile/m$hostile.gguf" --json
expect="model.id"
json "inspect a folder with a hostile name" 0 inspect "$dir/$hostile/st" --json

# ------------------------------------------------------------------ catalog
json "catalog models" 0 catalog models --json
json "catalog gpus" 0 catalog gpus --json
json "catalog models search" 0 catalog models --search llama --json
json "catalog gpus search" 0 catalog gpus --search 4090 --json
json "catalog gpus search with no match" "0|3" catalog gpus --search "$hostile" --json

# ------------------------------------------------------------------ smi
json "smi two 4090s" 0 smi --json
# a process table whose command lines and names hold quotes, backslashes, control bytes,
# invalid UTF-8 and long text (TSV: no tabs or newlines inside a field)
long=$(printf '%0500d' 0 | tr 0 x)
{
    printf 'kind\tindex\tname\ttotal\tused\tutil\tpid\tcmdline\n'
    printf 'gpu\t0\tNVIDIA "Ge\\Force" \377 RTX 4090\t24564MiB\t9000MiB\t50\t-\t-\n'
    printf 'proc\t0\tpy"th\\on\001\t-\t4000MiB\t-\t4243\tpython -c "print(\\"hi\\")" \377\376 caf\303\251 \001\002\033[0m\n'
    printf 'proc\t0\t\303\274ber\t-\t4000MiB\t-\t4244\t%s %s\n' "$long" "$(printf '%s' "$hostile" | tr '\n' ' ')"
} >"$dir/hostile-gpus.tsv"
VF_ENV="VRAMFIT_FAKE_GPUS=$dir/hostile-gpus.tsv VRAMFIT_SYSROOT=$dir/no-sysroot"
expect="gpus.0.name gpus.0.processes.0.name gpus.0.processes.0.cmdline gpus.0.processes.1.name gpus.0.processes.1.cmdline"
json "smi hostile process table" 0 smi --json
# top --json: one snapshot per line (JSON Lines), each line one document, the hostile table too
n_case=$((n_case + 1))
vf top --json -n 2 -d 0.05 >"$dir/out.$n_case" 2>"$dir/err.$n_case"
rc=$?
lines=$(wc -l <"$dir/out.$n_case")
head -n 1 "$dir/out.$n_case" >"$dir/line1.$n_case"
tail -n 1 "$dir/out.$n_case" >"$dir/line2.$n_case"
if [ "$rc" = 0 ] && [ "$lines" = 2 ] && why=$(valid "$dir/line1.$n_case" timestamp gpus.0.processes.0.cmdline) &&
    why=$(valid "$dir/line2.$n_case" timestamp gpus.0.processes.1.cmdline); then
    ok "top --json: 2 snapshots, one document per line"
else
    bad "top --json" "exit $rc, $lines lines ($why): $(head -c 300 "$dir/out.$n_case")"
fi
VF_ENV=

# ------------------------------------------------------------------ run
# the report goes to stderr (the command owns stdout): children that print nothing there
# run_json NAME ARGS...: `run --json` (stderr) and `run --report FILE` (the file) both valid,
# with "command" and every argument in "argv" (and the SPECs of $expect, then cleared)
run_json() {
    name=$1
    shift
    expect="command argv#$# $expect"
    n_case=$((n_case + 1))
    vf run --json -- "$@" >/dev/null 2>"$dir/run.$n_case"
    if [ ! -s "$dir/run.$n_case" ]; then
        bad "run --json $name" "nothing on stderr"
    elif why=$(valid "$dir/run.$n_case" $expect); then
        ok "run --json $name"
    else
        bad "run --json $name" "JSON check failed ($why): $(head -c 300 "$dir/run.$n_case" | tr '\n' ' ')"
    fi
    rm -f "$dir/report.$n_case"
    vf run --report "$dir/report.$n_case" -- "$@" >/dev/null 2>&1
    if [ ! -s "$dir/report.$n_case" ]; then
        bad "run --report $name" "no report"
    elif why=$(valid "$dir/report.$n_case" $expect); then
        ok "run --report $name"
    else
        bad "run --report $name" "JSON check failed ($why): $(head -c 300 "$dir/report.$n_case" | tr '\n' ' ')"
    fi
    expect=
}
run_json "plain" true
run_json "a double quote" sh -c 'exit 0' 'say "hi"'
run_json "backslashes" sh -c 'exit 0' 'C:\path\to\file' '\' '\\' '\u0041' '\"'
run_json "a newline and a tab" sh -c 'exit 0' "$(printf 'line 1\nline 2\tcolumn')"
run_json "control bytes" sh -c 'exit 0' "$(printf 'a\001b\002c\033[31md\037e\177f')"
expect="argv.3#16" # each of the 16 bytes that is not UTF-8 or a space is one U+FFFD
run_json "invalid UTF-8" sh -c 'exit 0' "$(printf '\377\376 \300\257 \355\240\200 \364\220\200\200 \303')"
run_json "unicode" sh -c 'exit 0' "ünïcödé – 日本語 – 😀 – $(printf 'U+2028 \342\200\250 U+2029 \342\200\251')"
expect="argv.3#10000"
run_json "a 10,000-character argument" sh -c 'exit 0' "$(printf '%010000d' 0 | tr 0 '"')"
expect="argv.4#500"
run_json "everything at once" sh -c 'exit 0' "$hostile" "$long" "$(printf '"\\\n\t\001\377')"
run_json "exit status 7" sh -c 'exit 7' 'x"y'
# the command itself hostile: it cannot start (127; its message goes to stderr: --report only)
rm -f "$dir/report.cmd"
vf run --report "$dir/report.cmd" -- "$dir/$hostile/no such \"command\"" >/dev/null 2>&1
rc=$?
if [ "$rc" != 127 ]; then
    bad "run --report a hostile command that cannot start" "exit $rc, expected 127"
elif why=$(valid "$dir/report.cmd"); then
    ok "run --report a hostile command that cannot start"
else
    bad "run --report a hostile command that cannot start" "JSON check failed ($why): $(head -c 300 "$dir/report.cmd")"
fi
# a script whose own file name is hostile ("command" is argv[0]): a quote alone (issue 14's
# report), then every kind of byte
printf '#!/bin/sh\nexit 0\n' >"$dir/say\"hi\\"
chmod +x "$dir/say\"hi\\"
run_json "a script whose name holds a quote and a backslash" "$dir/say\"hi\\"

printf '#!/bin/sh\nexit 0\n' >"$dir/$hostile/s$hostile"
chmod +x "$dir/$hostile/s$hostile"
run_json "a script with a hostile file name" "$dir/$hostile/s$hostile" "$hostile"
# no GPU measured: "gpu" is null
rm -f "$dir/report.nogpu"
VF_ENV="VRAMFIT_FAKE_GPUS=$dir/no-such-table.tsv"
vf run --report "$dir/report.nogpu" -- sh -c 'exit 0' '"' >/dev/null 2>&1
VF_ENV=
if why=$(valid "$dir/report.nogpu"); then ok "run --report without a GPU"; else bad "run --report without a GPU" "$why"; fi

# ------------------------------------------------------------------ errors under --json
error "estimate unknown model" estimate no-such-model-xyz --json
error "estimate bad flag" estimate llama-3.1-8b --no-such-flag --json
error "estimate bad value" estimate llama-3.1-8b --ctx lots --json
error "estimate unknown card" estimate llama-3.1-8b --gpu voodoo5 --json
error "estimate unknown engine" estimate llama-3.1-8b --engine nope --json
error "estimate hostile model path" estimate "$dir/$hostile/missing.gguf" --json
error "estimate not a model file" estimate "$dir/hostile.log" --json
error "pick unknown model" pick no-such-model-xyz --json
error "pick bad flag" pick llama-3.1-8b --no-such-flag --json
error "inspect unknown model" inspect no-such-model-xyz --json
error "inspect hostile file" inspect "$dir/$hostile/missing.gguf" --json
error "explain missing file" explain "$dir/$hostile/missing.log" --json
error "explain bad flag" explain --no-such-flag --json
error "catalog bad kind" catalog nothing --json
error "smi bad flag" smi --no-such-flag --json
VF_ENV="VRAMFIT_FAKE_GPUS=$dir/no-such-table.tsv"
n_case=$((n_case + 1))
vf smi --json >"$dir/out.$n_case" 2>"$dir/err.$n_case"
rc=$?
VF_ENV=
# no GPU: exit 3 (answered no) with stdout empty or valid JSON
if [ "$rc" = 0 ]; then
    bad "smi without a GPU" "exit 0"
elif [ ! -s "$dir/out.$n_case" ]; then
    ok "smi without a GPU (exit $rc, stdout empty)"
    note "smi without a GPU: exit $rc with the message as text on stderr, not JSON on stdout"
elif why=$(valid "$dir/out.$n_case"); then
    ok "smi without a GPU (exit $rc, JSON)"
else
    bad "smi without a GPU" "JSON check failed ($why)"
fi
error "run bad flag" run --json --no-such-flag -- true
error "run no command" run --json --

echo "json: $passed passed, $failed failed"
[ "$failed" = 0 ]
