#!/bin/sh
# Validates the OpenAPI document of /api/v1 (docs/openapi/v1.yaml) against the official
# OpenAPI 3.1 schema with @seriousme/openapi-schema-validator, at the version locked in
# scripts/openapi/package-lock.json (installed from the npm registry into
# scripts/openapi/node_modules the first time; Node.js and npm come from scripts/deps.sh).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
dir="$top/scripts/openapi"
doc="${1:-$top/docs/openapi/v1.yaml}"
bin="$dir/node_modules/.bin/validate-api"
stamp="$dir/node_modules/.installed" # npm gives the installed files the tarball's old times
if [ ! -x "$bin" ] || [ ! -f "$stamp" ] || [ "$dir/package-lock.json" -nt "$stamp" ]; then
    npm ci --prefix "$dir" --no-audit --no-fund --loglevel=error >/dev/null ||
        { echo "openapi: cannot install the validator (npm ci in scripts/openapi)" >&2; exit 1; }
    touch "$stamp"
fi
out=$("$bin" "$doc" 2>&1) || { echo "$out" >&2; echo "openapi: $doc is not a valid OpenAPI document" >&2; exit 1; }
echo "openapi: $doc is a valid OpenAPI $(sed -n 's/^openapi: *//p' "$doc") document"
