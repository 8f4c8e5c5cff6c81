#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# score.sh VRAMFIT - scores estimates against measurements: reads rows
#   id|measured|unit|vramfit arguments
# on stdin (unit: GiB, GB = 1e9 B, tokens = the fit's longest sequence, or GiB-ctx: GiB that
# do not count the CUDA context, as torch.cuda.max_memory_reserved() reports), runs
# `vramfit estimate ARGS --json` for each and prints measured, ours and the error; then the
# median |error| and how many rows are within LIMIT % (default 15). Used by
# accuracy-train.sh and accuracy-diffusion.sh.
bin=${1:-build/vramfit}
limit=${LIMIT:-15}
[ -x "$bin" ] || { echo "missing $bin (make)"; exit 1; }
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
printf '%-44s %12s %12s %8s\n' case measured ours error
while IFS='|' read -r id meas unit args; do
    [ -n "$id" ] || continue
    # shellcheck disable=SC2086
    json=$("$bin" estimate $args --json 2>&1)
    if [ "$unit" = tokens ]; then
        ours=$(printf '%s\n' "$json" | sed -n 's/^ *"max_ctx_tokens": \([0-9]*\).*/\1/p')
    else
        ours=$(printf '%s\n' "$json" | sed -n 's/^  "total_bytes": \([0-9]*\).*/\1/p')
    fi
    if [ -z "$ours" ]; then
        printf '%-44s %12s %12s %8s\n' "$id" "$meas" "error" "-"
        printf '%s\n' "$json" | head -3
        continue
    fi
    awk -v id="$id" -v m="$meas" -v u="$unit" -v o="$ours" 'BEGIN {
        if (u == "GiB-ctx") { v = (o - 419430400) / 1073741824; u = "GiB" }
        else if (u == "GiB") v = o / 1073741824; else if (u == "GB") v = o / 1e9; else v = o;
        e = (v - m) / m * 100;
        if (u == "tokens") printf "%-44s %12d %12d %+7.1f%%\n", id, m, v, e;
        else printf "%-44s %8.2f %s %8.2f %s %+7.1f%%\n", id, m, u, v, u, e;
    }'
done | tee "$tmp"
awk -v lim="$limit" '$NF != "-" && $NF ~ /%$/ { e = $NF; sub(/%/, "", e); e = e + 0; a[n++] = e < 0 ? -e : e }
     END { if (!n) exit; for (i = 0; i < n; i++) for (j = i + 1; j < n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
           med = n % 2 ? a[(n - 1) / 2] : (a[n / 2 - 1] + a[n / 2]) / 2;
           w = 0; for (i = 0; i < n; i++) w += a[i] <= lim;
           printf "\n%d cases: median |error| %.1f %%, %d within %d %%\n", n, med, w, lim }' "$tmp"
