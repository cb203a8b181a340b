#!/bin/sh
# Renders a config template: every @NAME@ is replaced by the value of $JR_NAME.
# Usage: render-conf.sh TEMPLATE > OUTPUT. Fails when a placeholder has no value.
set -eu
exec perl -pe 's/\@([A-Z_]+)\@/exists $ENV{"JR_$1"} ? $ENV{"JR_$1"} : die "render-conf: JR_$1 is not set\n"/ge' "$1"
