#!/bin/sh
# Every directive of the list the module is built from (mod_journal/core/jr_config_list.h,
# read through the C preprocessor) has its `## Name` section in docs/directives.md and a row
# in the summary table there; the section states the directive's context, and for a numeric
# directive its validation message as the module prints it. Sections of directives that no
# longer exist fail too.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
doc="$top/docs/directives.md"
list="$top/mod_journal/core/jr_config_list.h"
[ -f "$doc" ] || { echo "directives: $doc is missing" >&2; exit 1; }

# One line per row: "Name|KIND|SCOPE|allowed values" (NULL for the non-numeric kinds).
rows=$(printf '#include "%s"\n#define ROW(f, t, name, kind, scope, min, max, d, range, h) @@ name|kind|scope|range\nJR_DIRECTIVES(ROW)\n' "$list" |
       ${CC:-cc} -E -P -x c - |
       tr '\n' ' ' | sed 's/@@/\n/g' |
       sed -e 's/^ *//' -e 's/ *$//' -e 's/" *"//g' -e 's/"//g' -e 's/ *| */|/g' | grep -v '^$')
[ -n "$rows" ] || { echo "directives: no rows found in $list" >&2; exit 1; }

# The lines of one section of the doc: from its heading to the next.
section() {
    awk -v h="## $1" '$0 == h {on = 1; next} /^## / {on = 0} on' "$doc"
}

missing=0 count=0
while IFS='|' read -r name kind scope range; do
    count=$((count + 1))
    if ! grep -q "^## $name\$" "$doc"; then
        echo "directives: $name is not documented in docs/directives.md (needs a '## $name' section)" >&2
        missing=1
        continue
    fi
    if ! grep -qF "| [$name](#" "$doc"; then
        echo "directives: $name has no row in the summary table of docs/directives.md" >&2
        missing=1
    fi
    text=$(section "$name")
    case $scope in
        MAIN) context="server config" ;;
        *) context="server config, virtual host" ;;
    esac
    if ! printf '%s\n' "$text" | grep -qxF -- "- **Context:** $context"; then
        echo "directives: the section of $name must say '- **Context:** $context'" >&2
        missing=1
    fi
    case $kind in
        INT | DURATION | SIZE)
            message="\`$name: '<value>' is not valid: use $range\`"
            if ! printf '%s\n' "$text" | grep -qF -- "$message"; then
                echo "directives: the section of $name must quote its message $message" >&2
                missing=1
            fi
            ;;
    esac
done <<EOF
$rows
EOF

names=$(printf '%s\n' "$rows" | cut -d'|' -f1)
for h in $(sed -n 's/^## \(Journal[A-Za-z]*\)$/\1/p' "$doc"); do
    if ! printf '%s\n' "$names" | grep -qx "$h"; then
        echo "directives: docs/directives.md documents $h, which jr_config_list.h does not define" >&2
        missing=1
    fi
done
[ "$missing" = 0 ] && echo "directives: all $count documented"
exit $missing
