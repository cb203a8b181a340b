#!/bin/sh
# Installs the Debian packages the project needs to build, run and test.
# As root: installs what is missing. Otherwise: prints the exact apt-get line and exits 1.
# `deps.sh fuzz` adds clang and its runtime (libFuzzer) for make fuzz; make check needs neither.
# `deps.sh deb` adds the packaging tools for make deb and make check-package.
set -eu

PKGS="build-essential autoconf automake libtool pkg-config \
apache2 apache2-dev libapr1-dev libaprutil1-dev \
libaprutil1-dbd-sqlite3 libaprutil1-dbd-pgsql \
libjansson-dev libssl-dev libcurl4-openssl-dev libsqlite3-dev libpq-dev libicu-dev libmagic-dev zlib1g-dev \
check libsubunit-dev sqlite3 postgresql file \
python3 python3-pytest python3-pytest-xdist python3-requests python3-yaml python3-jsonschema \
wrk curl \
libhiredis-dev redis-server chromium tesseract-ocr libvips-dev python3-pil gdb"
# Node.js and npm run the OpenAPI validator (scripts/openapi-validate.sh); a Node.js from another
# source that brings its own npm is kept.
command -v npm >/dev/null 2>&1 || PKGS="$PKGS nodejs npm"
[ "${1:-}" != fuzz ] || PKGS="$PKGS clang libclang-rt-14-dev"
[ "${1:-}" != deb ] || PKGS="$PKGS debhelper dpkg-dev fakeroot lintian"

missing=""
for p in $PKGS; do
    status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
    [ "$status" = "installed" ] || missing="$missing $p"
done

[ -z "$missing" ] && exit 0

if [ "$(id -u)" != "0" ]; then
    echo "Missing packages. As root, run:" >&2
    echo "  apt-get install -y$missing" >&2
    exit 1
fi

echo "Installing:$missing"
export DEBIAN_FRONTEND=noninteractive
# Another apt (a timer's upgrade, say) may hold the lock for a while: wait for it, not fail.
APT="apt-get -o DPkg::Lock::Timeout=300"
# An install that was stopped half-way (the machine restarted, the command was killed) leaves
# packages unpacked but not configured, and apt-get then refuses everything until they are.
if [ -n "$(dpkg --audit 2>/dev/null)" ] || [ -n "$(ls -A /var/lib/dpkg/updates 2>/dev/null)" ]; then
    echo "Finishing an interrupted package installation (dpkg --configure -a)"
    dpkg --force-confold --configure -a
    $APT install -y -qq -f
fi
$APT update -qq
# shellcheck disable=SC2086
$APT install -y -qq --no-install-recommends $missing
# Debian starts the distribution's services on install; this project runs its own.
for svc in apache2 postgresql redis-server; do
    if command -v service >/dev/null 2>&1; then service "$svc" stop >/dev/null 2>&1 || true; fi
done
