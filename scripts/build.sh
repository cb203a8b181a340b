#!/bin/sh
# Configures (once) and builds out of tree, so the committed top-level Makefile stays ours.
#   build.sh [BUILD_DIR] [configure options...]
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
bdir=${1:-build}
[ $# -gt 0 ] && shift
case "$bdir" in /*) ;; *) bdir="$top/$bdir" ;; esac

if [ ! -x "$top/configure" ] || [ "$top/configure.ac" -nt "$top/configure" ] ||
   [ "$top/Makefile.am" -nt "$top/Makefile.in" ]; then
    (cd "$top" && autoreconf -fi >/dev/null 2>&1) || (cd "$top" && autoreconf -fi)
fi
mkdir -p "$bdir"
if [ ! -f "$bdir/Makefile" ] || [ "$top/configure" -nt "$bdir/config.status" ]; then
    (cd "$bdir" && "$top/configure" --quiet "$@")
fi
make -C "$bdir" -j"$(nproc)" --no-print-directory
