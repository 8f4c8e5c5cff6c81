#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# run.sh VRAMFIT [OUTDIR [DOCSDIR]] - the browser test: `vramfit serve` on an ephemeral port, the page
# driven in Debian's chromium by playwright-core (npm, no browser download of its own).
# Installs chromium when missing and run as root (CI); otherwise skips with a note. Ends with
# "browser: N passed, N failed"; a skip is "browser: 0 passed, 0 failed, N skipped", N the
# checks of test.mjs (tests/run.sh adds them to its final line). With DOCSDIR (docs) the
# screenshots are copied there too: that is how docs/page-*.png and docs/doctor-*.png are made.
bin=${1:-build/vramfit}
out=${2:-build/browser}
docs=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
chromium=$(command -v chromium || true)
if [ -z "$chromium" ] && [ "$(id -u)" = 0 ]; then
    echo "browser: installing chromium (apt-get)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium \
        >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -qq --no-install-recommends chromium >/dev/null 2>&1; }
    chromium=$(command -v chromium || true)
fi
if [ -z "$chromium" ] || ! command -v npm >/dev/null 2>&1; then
    # every check() call of test.mjs but the one reporting an exception ("run")
    n=$(grep -v 'check("run"' "$here/test.mjs" | grep -c '^ *check(')
    echo "skip browser: needs chromium and npm (as root make test installs chromium): $n checks skipped"
    echo "browser: 0 passed, 0 failed, $n skipped"
    exit 0
fi
if [ ! -d "$here/node_modules/playwright-core" ]; then
    (cd "$here" && npm install --no-audit --no-fund --silent >/dev/null 2>&1) ||
        { echo "FAIL browser: npm install playwright-core"; echo "browser: 0 passed, 1 failed"; exit 1; }
fi
mkdir -p "$out"
log=$(mktemp)
"$bin" serve --listen 127.0.0.1:0 >"$log.url" 2>"$log" &
pid=$!
trap 'kill $pid 2>/dev/null; rm -f "$log" "$log.url"' EXIT INT TERM
i=0
while [ ! -s "$log.url" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
url=$(head -n 1 "$log.url")
res=$(CHROMIUM="$chromium" node "$here/test.mjs" "$url" "$out" $docs 2>&1)
printf '%s\n' "$res"
p=$(printf '%s\n' "$res" | grep -c '^ok ')
f=$(printf '%s\n' "$res" | grep -c '^FAIL ')
[ "$p" = 0 ] && [ "$f" = 0 ] && f=1
echo "browser: $p passed, $f failed"
[ "$f" = 0 ]
