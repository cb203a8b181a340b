#!/bin/sh
# Every directive the module defines must be documented in docs/directives.md.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
# Directive names appear quoted in mj_config.c: in AP_INIT_* lines and in the numeric table.
names=$(grep -ohE '"Journal[A-Za-z]+"' "$top"/mod_journal/mj_config.c | tr -d '"' | sort -u)
[ -n "$names" ] || { echo "directives: none found in the sources" >&2; exit 1; }
missing=0
for n in $names; do
    if ! grep -q "^## $n\$" "$top/docs/directives.md" 2>/dev/null; then
        echo "directives: $n is not documented in docs/directives.md (needs a '## $n' section)" >&2
        missing=1
    fi
done
[ "$missing" = 0 ] && echo "directives: all $(echo "$names" | wc -l) documented"
exit $missing
