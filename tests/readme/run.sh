#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# run.sh VRAMFIT - every example of README.md is run and its output compared with what the
# README shows. An example is a line "$ [VAR=value ...] vramfit ARGS [| filter]" inside a ```
# block, its expected output the lines after it up to the next "$ " line or the block's end
# (a trailing "  # comment" on the command line is not part of it). When the expected output
# ends with a line "...", only the lines before it are compared (the README shows the start).
# Runs as the goldens do: from the repository root, LC_ALL=C.UTF-8, no home, the embedded
# catalog; stdout and stderr together. `vramfit run` examples are not compared (their timings
# are the machine's; tests/run/run.sh checks that report) and are said so.
# Ends with "readme: N passed, N failed".
# --update rewrites each compared example's output in README.md with what the binary prints
# now (an example ending in "..." keeps as many lines as it showed): review the diff.
update=0
[ "$1" = "--update" ] && { update=1; shift; }
bin=${1:-build/vramfit}
case "$bin" in /*) ;; *) bin="$PWD/$bin" ;; esac
readme=${README:-README.md}
passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok   readme $1"; }
bad() { failed=$((failed + 1)); echo "FAIL readme $1: $2"; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM
if [ ! -x "$bin" ] || [ ! -f "$readme" ]; then
    bad "setup" "no binary '$bin' or no '$readme'"
    echo "readme: $passed passed, $failed failed"
    exit 1
fi
# split the examples: $dir/N.cmd (the command line) and $dir/N.want (the expected output)
awk -v d="$dir" '
    /^```/ { inblock = !inblock; if (!inblock) out = ""; next }
    inblock && /^\$ / {
        n++
        cmd = substr($0, 3)
        sub(/  +#.*$/, "", cmd)
        print cmd > (d "/" n ".cmd")
        close(d "/" n ".cmd")
        out = d "/" n ".want"
        printf "" > out
        next
    }
    inblock && out != "" { print > out }
    END { print n + 0 > (d "/count") }' "$readme"
n=$(cat "$dir/count")
[ "$n" -gt 0 ] || bad "examples" "no '\$ vramfit' example found in $readme"
i=1
while [ "$i" -le "$n" ]; do
    cmd=$(cat "$dir/$i.cmd")
    i=$((i + 1))
    case "$cmd" in
    *"vramfit run "*)
        echo "note readme: '$cmd' not compared (its timings are the machine's; tests/run/run.sh)"
        continue
        ;;
    *vramfit*) ;;
    *)
        bad "'$cmd'" "not a vramfit command"
        continue
        ;;
    esac
    # the first word "vramfit" is the binary under test; VAR=value words before it stay
    run=$(printf '%s\n' "$cmd" | sed 's#\(^\| \)vramfit #\1"$bin" #')
    want="$dir/$((i - 1)).want"
    env -i PATH="$PATH" LC_ALL=C.UTF-8 HOME=/nonexistent bin="$bin" sh -c "$run" \
        >"$dir/got" 2>&1
    cp "$dir/got" "$dir/$((i - 1)).got"
    if [ "$(tail -n 1 "$want")" = "..." ]; then
        k=$(($(wc -l <"$want") - 1))
        head -n "$k" "$want" >"$dir/want.cut"
        head -n "$k" "$dir/got" >"$dir/got.cut"
    else
        cp "$want" "$dir/want.cut"
        cp "$dir/got" "$dir/got.cut"
    fi
    # blank lines that end an example only separate it from the next one in the same block
    for f in "$dir/want.cut" "$dir/got.cut"; do
        awk '{ l[NR] = $0 } END { n = NR; while (n > 0 && l[n] == "") n--; for (i = 1; i <= n; i++) print l[i] }' \
            "$f" >"$f.t" && mv "$f.t" "$f"
    done
    if diff -u "$dir/want.cut" "$dir/got.cut" >"$dir/diff"; then
        ok "'$cmd'"
    else
        bad "'$cmd'" "output differs from README.md:
$(head -20 "$dir/diff")"
    fi
done
if [ "$update" = 1 ]; then
    # the same walk as the split above: each example's lines replaced by its .got file
    awk -v d="$dir" '
        function flush(next_example) {
            if (out == "")
                return
            g = d "/" n ".got"
            cut = (last == "...") ? kept : -1
            if ((getline line < g) > 0) {
                k = 0
                do {
                    if (cut >= 0 && k >= cut)
                        break
                    print line
                    k++
                } while ((getline line < g) > 0)
                close(g)
                if (cut >= 0)
                    print "..."
                if (next_example)
                    print ""
            } else {
                printf "%s", buf
            }
            out = ""
        }
        /^```/ { if (inblock) flush(0); inblock = !inblock; print; next }
        inblock && /^\$ / { flush(1); n++; print; out = "x"; buf = ""; kept = 0; last = ""; next }
        inblock && out != "" {
            buf = buf $0 "\n"
            if (last != "")
                kept++
            last = $0
            next
        }
        { print }' "$readme" >"$dir/README.new" && cp "$dir/README.new" "$readme"
    echo "updated $readme: review the diff"
fi
echo "readme: $passed passed, $failed failed"
[ "$failed" = 0 ]
