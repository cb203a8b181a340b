#!/bin/sh
# The portable core must not include httpd headers (it is linked into the CLI and the tests).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
bad=$(grep -lE '#[[:space:]]*include[[:space:]]*[<"](httpd|http_[a-z_]+|ap_[a-z_]+|util_[a-z_]+|mod_[a-z_]+|unixd|mpm_common)\.h' \
      "$top"/mod_journal/core/*.[ch] 2>/dev/null || true)
if [ -n "$bad" ]; then
    echo "layering: these core files include httpd headers:" >&2
    echo "$bad" >&2
    exit 1
fi
echo "layering: core is free of httpd headers"
