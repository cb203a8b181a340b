#!/bin/sh
# make deb: builds the Debian package libapache2-mod-journal from a copy of this source tree,
# whatever ./build holds, then checks it with lintian.
#   deb.sh [OUT_DIR]   (default ./build-deb): the .deb, build.log and lintian.log land there.
# The copy holds the tracked files and new ones that .gitignore does not name: no build
# directory, no generated configure (the package build runs autoreconf itself).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$top/build-deb}
case "$out" in /*) ;; *) out="$(pwd)/$out" ;; esac
src="$out/src"

want=$(sed -n 's/^AC_INIT(\[mod_journal\], \[\([^]]*\)\].*/\1/p' "$top/configure.ac")
have=$(sed -n '1s/^libapache2-mod-journal (\([^)]*\)).*/\1/p' "$top/debian/changelog")
if [ "$want" != "$have" ]; then
    echo "deb.sh: configure.ac says version $want, debian/changelog $have: add a changelog entry" >&2
    exit 1
fi

rm -rf "$out"
mkdir -p "$src"
if git -C "$top" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    (cd "$top" && git ls-files -z --cached --others --exclude-standard |
        perl -0 -ne 'chomp; print "$_\0" if -e $_' | tar --null -T - -cf -) | tar -C "$src" -xf -
else
    tar -C "$top" --exclude=./build --exclude=./build-asan --exclude=./build-fuzz \
        --exclude=./build-deb --exclude=./var --exclude=./autom4te.cache --exclude=./build-aux \
        --exclude=./m4 --exclude=./configure --exclude=./aclocal.m4 --exclude=./Makefile.in \
        --exclude=./config.h.in -cf - . | tar -C "$src" -xf -
fi

echo "deb.sh: building in $src (log: $out/build.log)"
if ! (cd "$src" && DEB_BUILD_OPTIONS="parallel=$(nproc) ${DEB_BUILD_OPTIONS:-}" \
        dpkg-buildpackage -us -uc -b) > "$out/build.log" 2>&1; then
    tail -n 60 "$out/build.log" >&2
    echo "deb.sh: the package build failed (whole log: $out/build.log)" >&2
    exit 1
fi
deb=$(ls "$out"/libapache2-mod-journal_*.deb)

# Overrides, each with its reason, are in debian/libapache2-mod-journal.lintian-overrides.
if ! lintian --fail-on error,warning --display-info "$deb" > "$out/lintian.log" 2>&1; then
    cat "$out/lintian.log" >&2
    echo "deb.sh: lintian found problems in $deb" >&2
    exit 1
fi
cat "$out/lintian.log"
echo "deb.sh: $deb"
