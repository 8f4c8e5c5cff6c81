#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# layers.sh BUILD_DIR - the library's layers call one way down (DESIGN section 2, issue 15):
#   core 0 < read 1, gpu 1 < model 2 < engine 3 < solve 4 < oom 5 < render 6, answer 6
# (folders of one rank are siblings: neither calls the other). Checked on what the objects
# really link (nm: each undefined symbol of an object in src/lib/X/ must be defined in a lower
# layer or in X itself), and on the includes: a library file includes headers of its own folder
# or, as "layer/name.h", of a lower layer; the CLI and the server include only vramfit.h of
# the library. Prints each violation; exits 1 when there is one.
build=${1:-build}
rank() {
    case $1 in
    core) echo 0 ;; read | gpu) echo 1 ;; model) echo 2 ;; engine) echo 3 ;; solve) echo 4 ;;
    oom) echo 5 ;; render | answer) echo 6 ;; *) echo 99 ;;
    esac
}
bad=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
objs=$(ls "$build"/lib/*/*.o 2>/dev/null)
[ -n "$objs" ] || { echo "layers: no objects under $build/lib (build first)"; exit 1; }
# symbol -> layer of its definition
for o in $objs; do
    layer=$(basename "$(dirname "$o")")
    nm -g --defined-only "$o" | awk -v l="$layer" 'NF == 3 { print $3, l }'
done | sort >"$tmp/defs"
for o in $objs; do
    layer=$(basename "$(dirname "$o")")
    r=$(rank "$layer")
    nm -u "$o" | awk '{ print $2 }' | sort | join - "$tmp/defs" | while read -r sym def; do
        [ "$def" = "$layer" ] && continue
        d=$(rank "$def")
        if [ "$d" -ge "$r" ]; then
            echo "layers: $layer/$(basename "$o" .o).c calls $sym of $def/ (rank $d >= $r)"
        fi
    done
done >"$tmp/calls"
# includes
for f in src/lib/*/*.c src/lib/*/*.h; do
    layer=$(basename "$(dirname "$f")")
    r=$(rank "$layer")
    sed -n 's/^#include "\(.*\)"/\1/p' "$f" | while read -r h; do
        case $h in
        vramfit.h | internal.h) ;;
        */*)
            hl=${h%%/*}
            [ "$hl" = "$layer" ] || [ "$(rank "$hl")" -lt "$r" ] ||
                echo "layers: $f includes $h (a layer not below $layer)"
            [ -f "src/lib/$h" ] || echo "layers: $f includes $h, which does not exist"
            ;;
        *) [ -f "$(dirname "$f")/$h" ] || echo "layers: $f includes \"$h\" from another folder (write \"layer/$h\")" ;;
        esac
    done
done >>"$tmp/calls"
for f in src/cli/*.c src/cli/*.h src/server/*.c src/server/*.h; do
    sed -n 's/^#include "\(.*\)"/\1/p' "$f" | while read -r h; do
        # version.h: the build's identity (commit, catalog date), made by tools/version.sh
        case $h in vramfit.h | cli.h | server.h | version.h) ;; *) echo "layers: $f includes \"$h\" (the CLI and the server use vramfit.h only)" ;; esac
    done
done >>"$tmp/calls"
if [ -s "$tmp/calls" ]; then
    sort -u "$tmp/calls"
    echo "layers: $(sort -u "$tmp/calls" | wc -l) violations"
    exit 1
fi
echo "layers: ok ($(echo "$objs" | wc -w) objects, calls and includes one way down)"
