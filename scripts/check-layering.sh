#!/bin/sh
# The portable core and the worker must not include httpd headers (the core is linked into
# the CLI, the worker and the tests; the worker runs outside httpd).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
bad=$(grep -lE '#[[:space:]]*include[[:space:]]*[<"](httpd|http_[a-z_]+|ap_[a-z_]+|util_[a-z_]+|mod_[a-z_]+|unixd|mpm_common)\.h' \
      "$top"/mod_journal/core/*.[ch] "$top"/mod_journal/core/ops/*.[ch] "$top"/workers/*.[ch] 2>/dev/null || true)
if [ -n "$bad" ]; then
    echo "layering: these core or worker files include httpd headers:" >&2
    echo "$bad" >&2
    exit 1
fi
echo "layering: core and worker are free of httpd headers"
