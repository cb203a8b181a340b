#!/bin/sh
# Configures (once per set of options) and builds out of tree, so the committed top-level
# Makefile stays ours.
#   build.sh [BUILD_DIR] [configure options...]
# A build directory configured with other options (by hand, or an older build.sh) is
# reconfigured and cleaned: objects compiled with other flags (say, without the sanitizers)
# must not be linked into the result.
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
stamp="$bdir/.configure-options"
want="$*"
if [ -f "$stamp" ]; then had=$(cat "$stamp"); else had="(not recorded)"; fi
if [ ! -f "$bdir/Makefile" ] || [ "$top/configure" -nt "$bdir/config.status" ] ||
   [ "$had" != "$want" ]; then
    if [ -f "$bdir/Makefile" ] && [ "$had" != "$want" ]; then
        echo "build.sh: $bdir was configured with options '$had', not '$want':" \
             "cleaning and configuring again" >&2
        make -C "$bdir" clean --no-print-directory -s >/dev/null 2>&1 || true
    fi
    rm -f "$stamp"
    (cd "$bdir" && "$top/configure" --quiet "$@")
    printf '%s\n' "$want" > "$stamp"
fi
make -C "$bdir" -j"$(nproc)" --no-print-directory
