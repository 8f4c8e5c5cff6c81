#!/bin/sh
# tests/install/run.sh BUILD - what `make install` puts in a DESTDIR, used as a user would:
# the tree; a C program compiled with `pkg-config --cflags --libs vramfit` against the
# installed shared library and run; every man page rendered by man(1) without a warning; the
# bash completion loaded and asked for a flag and a model; the systemd unit through
# `systemd-analyze verify`; the container recipe's rules. With DEB=1 (make test as root, where
# dpkg-buildpackage is), also `make deb`, the packages installed, run and removed.
# Ends with "install: N passed, N failed[, N skipped]".
# SPDX-License-Identifier: Apache-2.0
build=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0 skip=0
ok() { echo "ok   install $1"; pass=$((pass + 1)); }
no() { echo "FAIL install $1"; fail=$((fail + 1)); }
sk() { echo "skip install $1"; skip=$((skip + 1)); }
check() { # NAME COMMAND...
    name=$1
    shift
    if "$@" >"$tmp/out" 2>&1; then ok "$name"; else no "$name"; sed 's/^/     /' "$tmp/out" | head -20; fi
}

dest=$tmp/dest
make -C "$root" -s B="$build" VRAMFIT_NO_DEPS=1 install DESTDIR="$dest" PREFIX=/usr >"$tmp/make.log" 2>&1 ||
    { cat "$tmp/make.log"; no "make install"; }

# 1. the tree: every file where the GNU conventions put it
tree_ok() {
    for f in usr/bin/vramfit usr/bin/vramfit-serve usr/lib/libvramfit.so.0.1.0 usr/lib/libvramfit.a \
        usr/include/vramfit.h usr/lib/pkgconfig/vramfit.pc usr/share/man/man1/vramfit.1 \
        usr/share/man/man1/vramfit-estimate.1 usr/share/bash-completion/completions/vramfit \
        usr/share/zsh/site-functions/_vramfit usr/share/fish/vendor_completions.d/vramfit.fish \
        usr/lib/systemd/system/vramfit.service; do
        [ -f "$dest/$f" ] || { echo "missing $f"; return 1; }
    done
    # the soname links, and no library-internal (vf__) name exported
    [ "$(readlink "$dest/usr/lib/libvramfit.so")" = libvramfit.so.0 ] || return 1
    [ "$(readlink "$dest/usr/lib/libvramfit.so.0")" = libvramfit.so.0.1.0 ] || return 1
    objdump -p "$dest/usr/lib/libvramfit.so.0.1.0" | grep -q 'SONAME *libvramfit.so.0' || return 1
    ! nm -D --defined-only "$dest/usr/lib/libvramfit.so.0.1.0" | grep -q ' vf__'
}
check "tree, soname, exported names" tree_ok

# 2. a program of the user's, built with pkg-config against the installed library
cat >"$tmp/use.c" <<'C'
#include <stdio.h>
#include <vramfit.h>
int main(void)
{
    struct vf_catalog *c = NULL;
    struct vf_error err = {0};
    if (vf_catalog_open(&c, NULL, &err))
        return 1;
    const struct vf_gpu_spec *g = vf_catalog_gpu(c, "rtx-4090");
    printf("%s %s\n", VF_VERSION, g ? g->id : "none");
    vf_catalog_close(c);
    return g ? 0 : 1;
}
C
link_ok() {
    flags=$(PKG_CONFIG_PATH="$dest/usr/lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$dest" \
        pkg-config --cflags --libs vramfit) || return 1
    # shellcheck disable=SC2086 # the flags are words
    cc -o "$tmp/use" "$tmp/use.c" $flags || return 1
    # the shared library, not the static one, is what it runs with
    LD_LIBRARY_PATH="$dest/usr/lib" ldd "$tmp/use" | grep -q "$dest/usr/lib/libvramfit.so.0" || return 1
    [ "$(LD_LIBRARY_PATH="$dest/usr/lib" "$tmp/use")" = "0.1.0 rtx-4090" ]
}
check "a C program through pkg-config, run on libvramfit.so" link_ok

# 3. every man page renders, without a warning from man/groff
man_ok() {
    n=0
    for page in "$dest"/usr/share/man/man1/*.1; do
        w=$(MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null)
        [ -z "$w" ] || { echo "$page: $w"; return 1; }
        MANWIDTH=80 man -l "$page" 2>/dev/null | grep -q "^NAME" || { echo "$page: no NAME"; return 1; }
        n=$((n + 1))
    done
    [ "$n" -eq 12 ] || { echo "$n pages, expected 12 (vramfit and 11 commands, exporter too)"; return 1; }
}
if command -v man >/dev/null 2>&1; then check "12 man pages render" man_ok; else sk "man pages (no man)"; fi

# 4. the bash completion: a flag of estimate and a catalog model
complete_ok() {
    out=$(PATH="$dest/usr/bin:$PATH" bash -c '
        . "$1"
        COMP_WORDS=(vramfit estimate --ct); COMP_CWORD=2; _vramfit; printf "%s\n" "${COMPREPLY[@]}"
        COMP_WORDS=(vramfit estimate llama-3.1-8); COMP_CWORD=2; _vramfit; printf "%s\n" "${COMPREPLY[@]}"
        COMP_WORDS=(vramfit pi); COMP_CWORD=1; _vramfit; printf "%s\n" "${COMPREPLY[@]}"
        COMP_WORDS=(vramfit estimate x --gpu rtx-40); COMP_CWORD=4; _vramfit; printf "%s\n" "${COMPREPLY[@]}"
    ' sh "$dest/usr/share/bash-completion/completions/vramfit")
    for want in --ctx --ctx-size llama-3.1-8b pick rtx-4090; do
        printf '%s\n' "$out" | grep -qx -- "$want" || { echo "no '$want' in: $out"; return 1; }
    done
}
check "bash completion: --ctx, llama-3.1-8b, pick, rtx-4090" complete_ok

# 5. the systemd unit, with ExecStart pointing at the installed binary
unit_ok() {
    sed "s|ExecStart=/usr/bin/vramfit|ExecStart=$dest/usr/bin/vramfit|" \
        "$dest/usr/lib/systemd/system/vramfit.service" >"$tmp/vramfit.service"
    # its Documentation= page is looked up with man: the installed one
    out=$(MANPATH="$dest/usr/share/man" systemd-analyze verify "$tmp/vramfit.service" 2>&1) ||
        { echo "$out"; return 1; }
    # verify warns (exit 0) on unknown settings: none allowed
    ! printf '%s\n' "$out" | grep -q "vramfit.service"
}
if command -v systemd-analyze >/dev/null 2>&1; then
    check "systemd-analyze verify vramfit.service" unit_ok
else
    sk "systemd unit (no systemd-analyze)"
fi

# 6. the container recipe: no podman/docker image here to build from, so its rules are checked
container_ok() {
    f=$root/contrib/Containerfile
    grep -q '^USER 10001' "$f" || return 1                            # not root
    grep -q 'useradd --system' "$f" || return 1
    ! grep -q '"--public"' "$f" || return 1                           # no public listen by default
    grep -q '^CMD \["serve", "--listen", "127.0.0.1:8077"\]' "$f" || return 1
    grep -q 'install DESTDIR=/staging PREFIX=/usr' "$f"              # the Makefile's own install
}
if command -v podman >/dev/null 2>&1 && podman image exists debian:12-slim 2>/dev/null; then
    check "container builds" podman build -q -f "$root/contrib/Containerfile" -t vramfit-test "$root"
else
    check "container recipe (checked: no podman or base image here)" container_ok
fi

# 7. the Debian packages: built, installed, run, removed (as root, with dpkg-buildpackage)
deb_ok() {
    make -C "$root" -s B="$build" deb >"$tmp/deb.log" 2>&1 || { tail -20 "$tmp/deb.log"; return 1; }
    lintian --fail-on error "$root/$build"/deb/*.deb >"$tmp/lintian.log" 2>&1 || { cat "$tmp/lintian.log"; return 1; }
    dpkg -i "$root/$build"/deb/libvramfit0_*.deb "$root/$build"/deb/libvramfit-dev_*.deb \
        "$root/$build"/deb/vramfit_*.deb >/dev/null || return 1
    v=$(/usr/bin/vramfit --version)
    pcflags=$(pkg-config --cflags --libs vramfit)
    # shellcheck disable=SC2086
    cc -o "$tmp/use2" "$tmp/use.c" $pcflags && "$tmp/use2" >/dev/null
    r=$?
    dpkg -r vramfit libvramfit-dev libvramfit0 >/dev/null || return 1
    [ ! -e /usr/bin/vramfit ] || { echo "/usr/bin/vramfit left behind"; return 1; }
    case $v in "vramfit 0.1.0 (commit "*) ;; *) echo "version: $v"; return 1 ;; esac
    return $r
}
if [ "${DEB:-0}" = 1 ] && [ "$(id -u)" = 0 ] && command -v dpkg-buildpackage >/dev/null 2>&1 &&
    ! dpkg-query -W vramfit >/dev/null 2>&1; then
    check "make deb; lintian; dpkg -i; vramfit --version; dpkg -r" deb_ok
else
    sk "the Debian packages (DEB=1, root, dpkg-buildpackage and no vramfit installed)"
fi

if [ "$skip" -gt 0 ]; then
    echo "install: $pass passed, $fail failed, $skip skipped"
else
    echo "install: $pass passed, $fail failed"
fi
[ "$fail" -eq 0 ]
