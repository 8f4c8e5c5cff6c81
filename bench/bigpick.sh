#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# bigpick.sh VRAMFIT [OLD_VRAMFIT] - `vramfit pick` on a --data-dir catalog of 99,998 offers
# (the most prices.tsv holds: VF_MAX_TSV_ROWS counts the header and the empty last line), each
# of its own kind so that no offer hides another and every fitting one is a row: wall time and
# peak RSS (/usr/bin/time) of the text and the --json output (issue 15: memory bounded by the
# catalog; tests/unit/t_solve.c checks the same bound on the text path). With a second binary,
# the same for it (an older build) on the same catalog.
bin=${1:-build/vramfit}
old=$2
data=$(cd "$(dirname "$0")/.." && pwd)/data
[ -x /usr/bin/time ] || { echo "bigpick.sh needs /usr/bin/time (apt-get install time)"; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM
cp "$data/gpus.tsv" "$data/models.tsv" "$dir/" && cp -r "$data/models" "$data/pipelines" "$dir/" ||
    exit 1
grep -v '^#' "$data/gpus.tsv" | tail -n +2 | cut -f1 | awk '
    { id[n++] = $1 }
    END {
        print "gpu\tcount\tprice_per_hour\tcurrency\tbilling\tkind\tas_of\tprovider\tsource"
        for (i = 0; i < 99998; i++)
            printf "%s\t%d\t%d.%02d\t%s\tminute\tspot-%d\t2026-11\tp%d\tbigpick\n", id[i % n],
                2 ^ (int(i / n) % 4), 1 + (i * 7919) % 50, i % 100, i % 8 == 7 ? "USD" : "EUR",
                i, i % 1000
    }' >"$dir/prices.tsv"
args="pick llama-3.1-8b --ctx 8k --data-dir $dir"
printf '%-44s %8s %12s %s\n' "pick llama-3.1-8b --ctx 8k, 99,998 offers" "wall s" "peak RSS MiB" \
    "exit (1: out of memory)"
for b in "$bin" $old; do
    for json in "" --json; do
        # shellcheck disable=SC2086 # args are words on purpose
        r=$(/usr/bin/time -f '%e %M %x' "$b" $args $json 2>&1 >/dev/null | tail -n 1)
        set -- $r
        printf '%-44s %8s %12s %s\n' "$b${json:+ --json}" "$1" "$(($2 / 1024))" "$3"
    done
done
