#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# deps.sh [--quiet] PKG... - install the Debian packages vramfit needs when they are missing.
# As root it runs apt-get; otherwise it prints the exact command and fails.
quiet=0
[ "$1" = "--quiet" ] && { quiet=1; shift; }
missing=""
for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
        missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$quiet" = 1 ] && [ "$(id -u)" != 0 ]; then
    echo "vramfit: missing Debian packages:$missing (run 'make deps')" >&2
    exit 0
fi
if [ "$(id -u)" = 0 ]; then
    echo "installing Debian packages:$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq --no-install-recommends $missing >/dev/null ||
        { echo "deps: apt-get install$missing failed" >&2; exit 1; }
else
    echo "vramfit needs these Debian packages:$missing" >&2
    echo "run:  sudo apt-get install -y$missing" >&2
    exit 1
fi
