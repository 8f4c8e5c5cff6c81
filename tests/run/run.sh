#!/bin/sh
# run.sh VRAMFIT - `vramfit run` on the fake GPU backend, whose table the child itself rewrites
# with its real PID (so the process-tree matching is exercised): the peak found and the
# baseline subtracted, a grandchild's memory counted, stdout and stderr byte-identical to a
# direct run, exit statuses and forwarded signals, the OOM explained, the SVG well-formed
# (xmllint), an interactive child under tmux. Ends with "run: N passed, N failed".
bin=${1:-build/vramfit}
case "$bin" in /*) ;; *) bin="$PWD/$bin" ;; esac
dir=$(mktemp -d)
trap 'rm -rf "$dir"; tmux -L vramfit-run-$$ kill-server 2>/dev/null' EXIT INT TERM
passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok   run $1"; }
bad() { failed=$((failed + 1)); echo "FAIL run $1: $2"; }
json() { sed -n "s/^  \"$1\": \\(.*\\),\\{0,1\\}\$/\\1/p" "$2" | tr -d ','; }

export VRAMFIT_GPU_BACKEND=fake VRAMFIT_FAKE_GPUS="$dir/gpus.tsv"
table() { # USED_MIB [PID MIB]...: the card with another process (PID 999999, 1 GiB) and more
    used=$1
    shift
    {
        printf 'kind\tindex\tname\ttotal\tused\tutil\tpid\tcmdline\n'
        printf 'gpu\t0\tNVIDIA GeForce RTX 4090\t24564MiB\t%sMiB\t50\t-\t-\n' "$used"
        printf 'proc\t0\tother\t-\t1024MiB\t-\t999999\tsomeone else\n'
        while [ $# -ge 2 ]; do
            printf 'proc\t0\tchild\t-\t%sMiB\t-\t%s\ttest\n' "$2" "$1"
            shift 2
        done
    } >"$VRAMFIT_FAKE_GPUS.tmp" && mv "$VRAMFIT_FAKE_GPUS.tmp" "$VRAMFIT_FAKE_GPUS"
}
table 1024
cat >"$dir/alloc.sh" <<EOS
table() { used=\$1; shift; { printf 'kind\tindex\tname\ttotal\tused\tutil\tpid\tcmdline\n'; printf 'gpu\t0\tNVIDIA GeForce RTX 4090\t24564MiB\t%sMiB\t50\t-\t-\n' "\$used"; printf 'proc\t0\tother\t-\t1024MiB\t-\t999999\tsomeone else\n'; while [ \$# -ge 2 ]; do printf 'proc\t0\tchild\t-\t%sMiB\t-\t%s\ttest\n' "\$2" "\$1"; shift 2; done; } >"$dir/gpus.tsv.tmp" && mv "$dir/gpus.tsv.tmp" "$dir/gpus.tsv"; }
EOS

# the peak: 2 GiB, then 3 GiB, then 1 GiB, by the child itself (its own PID)
cat >"$dir/peak.sh" <<EOS
. "$dir/alloc.sh"
table 3072 \$\$ 2048; sleep 0.3
table 4096 \$\$ 3072; sleep 0.3
table 2048 \$\$ 1024; sleep 0.3
table 1024
EOS
"$bin" run --report "$dir/r1.json" --plot "$dir/r1.svg" --csv "$dir/r1.csv" -- sh "$dir/peak.sh"
rc=$?
[ "$rc" = 0 ] && ok "exit status 0" || bad "exit 0" "$rc"
[ "$(json peak_tree_bytes "$dir/r1.json")" = 3221225472 ] && ok "peak 3 GiB of the child's PID" || bad "peak" "$(cat "$dir/r1.json")"
[ "$(json baseline_bytes "$dir/r1.json")" = 1073741824 ] && ok "baseline 1 GiB (another process)" || bad "baseline" "$(cat "$dir/r1.json")"
[ "$(json peak_device_delta_bytes "$dir/r1.json")" = 3221225472 ] && ok "device delta 3 GiB" || bad "delta" "$(cat "$dir/r1.json")"
if command -v xmllint >/dev/null 2>&1; then
    xmllint --noout "$dir/r1.svg" 2>"$dir/xml.err" && grep -q 'peak 3.00 GiB' "$dir/r1.svg" &&
        ok "SVG well-formed, peak marked" || bad "svg" "$(cat "$dir/xml.err")"
else
    bad "svg" "xmllint missing (libxml2-utils)"
fi
[ "$(head -1 "$dir/r1.csv")" = "t_ms,device_used_bytes,baseline_bytes,tree_bytes" ] &&
    [ "$(wc -l <"$dir/r1.csv")" -gt 10 ] && ok "CSV samples" || bad "csv" "$(head -3 "$dir/r1.csv")"

# a grandchild holding memory counts
cat >"$dir/grand.sh" <<EOS
. "$dir/alloc.sh"
sh -c ". '$dir/alloc.sh'; table 1536 \\\$\\\$ 512; sleep 0.4; table 1024" &
wait
EOS
"$bin" run --report "$dir/r2.json" -- sh "$dir/grand.sh"
[ "$(json peak_tree_bytes "$dir/r2.json")" = 536870912 ] && ok "a grandchild's 512 MiB counted" || bad "grandchild" "$(cat "$dir/r2.json")"

# the same through NVML (the stub library) fed the child's real PID: the driver path and /proc
stub="$(dirname "$bin")/tests/stub_nvml_V3.so"
if [ -f "$stub" ]; then
    cat >"$dir/nvml.sh" <<EOS
echo "\$\$ 1073741824" >"$dir/procs"; sleep 0.3
echo "\$\$ 2147483648" >"$dir/procs"; sleep 0.3
: >"$dir/procs"
EOS
    : >"$dir/procs"
    env -u VRAMFIT_GPU_BACKEND VRAMFIT_NVML_LIB="$stub" STUB_NVML_PROCS="$dir/procs" \
        "$bin" run --report "$dir/r5.json" -- sh "$dir/nvml.sh"
    [ "$(json peak_tree_bytes "$dir/r5.json")" = 2147483648 ] && ok "NVML path: the child's 2 GiB by its real PID" ||
        bad "nvml path" "$(cat "$dir/r5.json")"
else
    bad "nvml path" "no stub library at $stub (make $stub)"
fi

# output passes through untouched
sh -c 'seq 1 30000; seq 1 30000 >&2; printf "no newline"' >"$dir/o1" 2>"$dir/e1"
"$bin" run --report "$dir/r3.json" -- sh -c 'seq 1 30000; seq 1 30000 >&2; printf "no newline"' >"$dir/o2" 2>"$dir/e2"
cmp -s "$dir/o1" "$dir/o2" && ok "stdout byte-identical" || bad "stdout" "differs"
cmp -s "$dir/e1" "$dir/e2" && ok "stderr byte-identical" || bad "stderr" "differs"

# exit statuses and signals
"$bin" run --report /dev/null -- sh -c 'exit 7'
[ $? = 7 ] && ok "exit 7 passed on" || bad "exit 7" "$?"
"$bin" run --report /dev/null -- sh -c 'kill -TERM $$'
[ $? = 143 ] && ok "killed by SIGTERM: 143" || bad "signal status" "$?"
"$bin" run --report /dev/null -- /nonexistent/command 2>/dev/null
[ $? = 127 ] && ok "cannot start: 127" || bad "127" "$?"
"$bin" run --report /dev/null -- sh -c 'trap "exit 42" TERM; sleep 5 & wait' &
vp=$!
sleep 0.4
kill -TERM "$vp"
wait "$vp"
[ $? = 42 ] && ok "SIGTERM forwarded to the child" || bad "forward" "$?"

# an OOM explained with the live numbers
"$bin" run -- sh -c "cat tests/fixtures/oom/pytorch-2.2.log >&2; exit 1" 2>"$dir/oom.err"
[ $? = 1 ] && grep -q 'ran out of GPU memory' "$dir/oom.err" && grep -q '^Fixes for' "$dir/oom.err" &&
    ok "OOM explained after the output" || bad "oom" "$(tail -5 "$dir/oom.err")"
grep -q 'PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True vramfit run -- sh -c' "$dir/oom.err" &&
    ok "fragmentation: the re-run line" || bad "rerun" "$(grep -n ALLOC "$dir/oom.err" | head -3)"

# an interactive child in a terminal: it reads stdin and is not stopped
if command -v tmux >/dev/null 2>&1; then
    t() { tmux -L vramfit-run-$$ "$@"; }
    t new-session -d -s r -x 100 -y 20 "$bin run --report $dir/r4.json -- sh -c 'read x; echo got \$x; sleep 2'"
    sleep 0.6
    t send-keys -t r hello Enter
    sleep 0.6
    t capture-pane -p -t r | grep -q 'got hello' && ok "an interactive child reads the terminal" ||
        bad "interactive" "$(t capture-pane -p -t r)"
else
    bad "interactive" "tmux missing"
fi
echo "run: $passed passed, $failed failed"
[ "$failed" = 0 ]
