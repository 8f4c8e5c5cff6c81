#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# run.sh VRAMFIT - `vramfit run` on the fake GPU backend, whose table the child itself rewrites
# with its real PID (so the process-tree matching is exercised): the peak found and the
# baseline subtracted, a grandchild's memory counted, stdout and stderr byte-identical to a
# direct run, exit statuses (126, 127) and forwarded signals (TERM, QUIT, USR1), SIGPIPE on
# vramfit's stderr survived, a grandchild holding stderr (relayed; --no-wait; the second
# SIGINT), the OOM explained, the SVG well-formed
# (xmllint), an interactive child under tmux. Ends with "run: N passed, N failed".
bin=${1:-build/vramfit}
case "$bin" in /*) ;; *) bin="$PWD/$bin" ;; esac
dir=$(mktemp -d)
trap 'tmux -L vramfit-run-$$ kill-server 2>/dev/null; rm -rf "$dir"' EXIT INT TERM
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
# issue 28: a command that never started gets its error only, no memory verdict after it
VRAMFIT_GPU_BACKEND=fake VRAMFIT_FAKE_GPUS="$PWD/tests/fixtures/gpus/two-4090.tsv" \
    "$bin" run -- /nonexistent/command 2>"$dir/127.err"
rc=$?
[ $rc = 127 ] && [ "$(cat "$dir/127.err")" = "vramfit run: cannot find '/nonexistent/command': No such file or directory" ] &&
    ok "cannot start: the error only" || bad "127 text" "exit $rc: $(cat "$dir/127.err")"
"$bin" run --report /dev/null -- sh -c 'trap "exit 42" TERM; sleep 5 & wait' &
vp=$!
sleep 0.4
kill -TERM "$vp"
wait "$vp"
[ $? = 42 ] && ok "SIGTERM forwarded to the child" || bad "forward" "$?"

# every signal a job is sent is forwarded: QUIT, USR1 (the shell traps each and exits 42; its
# background sleep writes no stderr, so nothing holds the pipe after it)
for sig in QUIT USR1; do
    "$bin" run --report /dev/null -- sh -c "trap 'exit 42' $sig; sleep 3 2>/dev/null & wait" &
    vp=$!
    sleep 0.4
    kill -$sig "$vp"
    wait "$vp"
    rc=$?
    [ $rc = 42 ] && ok "SIG$sig forwarded to the child" || bad "forward $sig" "exit $rc, expected 42"
done

# found but not executable: 126 (a file without the x bit, a directory); not found: 127 above
printf 'echo never\n' >"$dir/noexec.sh"
chmod 644 "$dir/noexec.sh"
"$bin" run --report /dev/null -- "$dir/noexec.sh" 2>"$dir/126.err"
rc=$?
[ $rc = 126 ] && grep -q "cannot execute '$dir/noexec.sh'" "$dir/126.err" &&
    ok "not executable: 126, named" || bad "126" "exit $rc: $(cat "$dir/126.err")"
"$bin" run --report /dev/null -- "$dir" 2>/dev/null
rc=$?
[ $rc = 126 ] && ok "a directory: 126" || bad "126 dir" "exit $rc"

# SIGPIPE: whatever reads vramfit's stderr (head -1) goes away after the first line; the
# command keeps running to its end (it touches a file) and its status, 5, is still returned
rm -f "$dir/pipe.done" "$dir/pipe.rc"
{
    "$bin" run --report "$dir/pipe.json" -- sh -c 'i=0; while [ $i -lt 10 ]; do echo line $i >&2;
        sleep 0.05; i=$((i+1)); done; touch '"$dir/pipe.done"'; exit 5' 2>&1
    echo $? >"$dir/pipe.rc"
} | head -1 >/dev/null
[ "$(cat "$dir/pipe.rc")" = 5 ] && [ -f "$dir/pipe.done" ] &&
    [ "$(json exit_status "$dir/pipe.json")" = 5 ] && ok "SIGPIPE survived: the command ran on, exit 5" ||
    bad "sigpipe" "rc '$(cat "$dir/pipe.rc" 2>/dev/null)', done: $(ls "$dir/pipe.done" 2>&1)"

# a grandchild left behind holding stderr: the report is written when the command exits
# (0.5 s in: the file is there and vramfit still runs), the grandchild's late line is relayed
# (nothing lost), then vramfit exits with the command's status (3); duration_ms is the
# command's own (under 1000 ms), not the grandchild's 1.5 s
ms() { echo $(($(date +%s%N) / 1000000)); }
rm -f "$dir/g.json"
"$bin" run --report "$dir/g.json" -- sh -c '(sleep 1.5; echo late >&2) & exit 3' 2>"$dir/g.err" &
vp=$!
sleep 0.5
[ -f "$dir/g.json" ] && kill -0 "$vp" 2>/dev/null && ok "the report comes when the command exits" ||
    bad "report at exit" "report $(ls "$dir/g.json" 2>&1)"
wait "$vp"
rc=$?
dur=$(json duration_ms "$dir/g.json" | cut -d. -f1)
[ $rc = 3 ] && grep -q '^late$' "$dir/g.err" && [ "${dur:-9999}" -lt 1000 ] &&
    ok "the grandchild's output relayed until it closed, exit 3" ||
    bad "grandchild" "exit $rc, duration ${dur}ms: $(cat "$dir/g.err")"
# --no-wait: back when the command exits (well under the grandchild's 1.5 s)
t0=$(ms)
"$bin" run --no-wait --report /dev/null -- sh -c '(sleep 1.5; echo late >&2) & exit 3' 2>/dev/null
rc=$?
t=$(($(ms) - t0))
[ $rc = 3 ] && [ $t -lt 1000 ] && ok "--no-wait: back at the command's exit (${t} ms)" ||
    bad "no-wait" "exit $rc after $t ms"
# the second SIGINT stops the wait at once: the first is forwarded (the background subshell of
# a non-interactive sh ignores it), the second returns with the command's status (0) in well
# under the grandchild's 3 s
t0=$(ms)
"$bin" run --report /dev/null -- sh -c '(sleep 3; echo late >&2) &' 2>"$dir/s.err" &
vp=$!
sleep 0.4
kill -INT "$vp"
sleep 0.3
kill -0 "$vp" 2>/dev/null && ok "one SIGINT: still relaying" || bad "first sigint" "vramfit gone"
kill -INT "$vp"
wait "$vp"
rc=$?
t=$(($(ms) - t0))
[ $rc = 0 ] && [ $t -lt 2000 ] && ok "a second SIGINT returns at once (${t} ms)" ||
    bad "second sigint" "exit $rc after $t ms"

# an OOM explained with the live numbers
"$bin" run -- sh -c "cat tests/fixtures/oom/pytorch-2.2.log >&2; exit 1" 2>"$dir/oom.err"
[ $? = 1 ] && grep -q 'ran out of GPU memory' "$dir/oom.err" && grep -q '^Fixes for' "$dir/oom.err" &&
    ok "OOM explained after the output" || bad "oom" "$(tail -5 "$dir/oom.err")"
grep -q 'PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True vramfit run -- sh -c' "$dir/oom.err" &&
    ok "fragmentation: the re-run line" || bad "rerun" "$(grep -n ALLOC "$dir/oom.err" | head -3)"

# an interactive child in a terminal: it reads stdin and is not stopped
if command -v tmux >/dev/null 2>&1; then
    t() { tmux -L vramfit-run-$$ "$@"; }
    # the child writes what it read to a file: the pane closes when it exits, and under CI's
    # load one tmux call can take longer than the child lives (the pane was gone: "no server")
    t new-session -d -s r -x 100 -y 20 \
        "$bin run --report $dir/r4.json -- sh -c 'read x; echo got \$x >$dir/tty.out; sleep 30'"
    # the keys go once the child is reading (a loaded machine starts it late), then up to 30 s
    # for its answer (the loop ends as soon as it is there): fixed sleeps of 0.6 s failed under
    # CI's load, and 10 s once under the sanitizer build's (the pane showed the keys typed)
    sleep 1.5
    t send-keys -t r hello Enter
    i=0
    while [ $i -lt 300 ] && ! grep -q 'got hello' "$dir/tty.out" 2>/dev/null; do
        sleep 0.1
        i=$((i + 1))
    done
    grep -q 'got hello' "$dir/tty.out" 2>/dev/null && ok "an interactive child reads the terminal" ||
        bad "interactive" "pane: $(t capture-pane -p -t r 2>&1); file: $(cat "$dir/tty.out" 2>&1)"
    t kill-server 2>/dev/null
else
    bad "interactive" "tmux missing"
fi
echo "run: $passed passed, $failed failed"
[ "$failed" = 0 ]
