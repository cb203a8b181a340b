#!/bin/sh
# Every source file (.c/.h under mod_journal/, tools/ and workers/) must be named in a table of
# docs/architecture.md, as `name.c`, `name.h`, `name.[ch]` or with its directory in front.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
doc="$top/docs/architecture.md"
[ -f "$doc" ] || { echo "architecture: $doc is missing" >&2; exit 1; }
rows=$(grep '^|' "$doc")
missing=0 count=0
for dir in mod_journal tools workers; do
    [ -d "$top/$dir" ] || continue
    for f in $(cd "$top" && find "$dir" -type f \( -name '*.c' -o -name '*.h' \) | sort); do
        count=$((count + 1))
        base=$(basename "$f")
        stem=$(printf '%s' "${base%.*}" | sed 's/[.]/[.]/g')
        # `base`, `dir/base` or `stem.[ch]`, inside backticks, in a table row
        if ! printf '%s\n' "$rows" |
            grep -qE "[\`/]$(printf '%s' "$base" | sed 's/[.]/[.]/g')\`|\`$stem[.]\\[ch\\]\`"; then
            echo "architecture: $f is not named in the file tables of docs/architecture.md" >&2
            missing=1
        fi
    done
done
[ "$count" -gt 0 ] || { echo "architecture: no source files found" >&2; exit 1; }
[ "$missing" = 0 ] && echo "architecture: all $count source files are in docs/architecture.md"
exit $missing
