#!/bin/sh
# make check: static guards, unit tests, the integration suite on SQLite and on PostgreSQL,
# and the integration suite again against an ASan+UBSan build of the module.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
PY=/usr/bin/python3
status=0
summary=""

step() { # name, command...
    name=$1; shift
    echo "=== $name"
    if "$@"; then summary="$summary\n  ok    $name"; else summary="$summary\n  FAIL  $name"; status=1; fi
}

free_port() {
    $PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

pytest_run() { # label, extra env...
    label=$1; shift
    env "$@" $PY -m pytest tests/api -q -p no:cacheprovider -o junit_suite_name="$label"
}

step "layering" sh scripts/check-layering.sh
step "directives documented" sh scripts/check-directives-doc.sh
step "source files in docs/architecture.md" sh scripts/check-architecture.sh
step "build" sh scripts/build.sh build
unit_tests() { # build dir [env...]: builds the Check runner and runs it in the foreground
    dir=$1; shift
    make -C "$dir" check TESTS= --no-print-directory -s >/dev/null && env "$@" "$dir/tests/unit/unit_tests"
}

step "unit tests (Check)" unit_tests build

step "integration (SQLite)" pytest_run sqlite JOURNAL_BUILD_DIR="$top/build" JOURNAL_TEST_DB=sqlite
step "make run from a clone in a private directory" env JOURNAL_BUILD_DIR="$top/build" \
    $PY -m pytest tests/run -q -rs -p no:cacheprovider

pgdir=$(mktemp -d /tmp/journal-pg.XXXXXX)
pgport=$(free_port)
cleanup() { sh "$top/scripts/pg-cluster.sh" stop "$pgdir/data" 2>/dev/null; rm -rf "$pgdir"; }
trap cleanup EXIT INT TERM
chmod 755 "$pgdir"
if sh scripts/pg-cluster.sh start "$pgdir/data" "$pgport"; then
    step "integration (PostgreSQL)" pytest_run pgsql JOURNAL_BUILD_DIR="$top/build" \
        JOURNAL_TEST_DB=pgsql JOURNAL_TEST_PG_PORT="$pgport"
else
    summary="$summary\n  FAIL  PostgreSQL cluster did not start"; status=1
fi

step "build (ASan+UBSan)" sh scripts/build.sh build-asan --enable-sanitizers
# use_sigaltstack=0: GCC 12's libasan reports its own sigaltstack call at thread exit on this
# glibc as a stack-buffer-underflow (in the sanitizer runtime, not in our code).
step "unit tests (ASan+UBSan)" unit_tests build-asan ASAN_OPTIONS=use_sigaltstack=0
step "fuzz corpora replay (ASan+UBSan)" sh scripts/fuzz.sh replay build-asan
step "integration (SQLite, ASan+UBSan module)" pytest_run sanitized JOURNAL_BUILD_DIR="$top/build-asan" \
    JOURNAL_TEST_DB=sqlite JOURNAL_SANITIZE=1

printf "\n=== summary$summary\n"
exit $status
