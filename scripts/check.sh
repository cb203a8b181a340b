#!/bin/sh
# make check: static guards, unit tests, the integration suite on SQLite and on PostgreSQL,
# then all of it again against an ASan+UBSan build (leak detection on).
#
# Each step is one line:  step [--needs STEP]... NAME COMMAND...
# A step whose needed step failed (or was skipped) is not run and counts as failed: no test
# runs against the binaries of an earlier build after a build failed.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
PY=/usr/bin/python3
status=0
summary=""
failed="|"
work=$(mktemp -d /tmp/journal-check.XXXXXX)
started=$(date +%s)

# Fewer tests than this in a step means the run was narrowed or tests went missing: the step
# fails. Raise a floor when tests are added; never lower one to make a change pass.
MIN_UNIT=366
MIN_API_SQLITE=1124
MIN_API_PGSQL=1125
# Under the sanitizers three tests fewer run: test_memory's RSS bound and test_malloc_arenas are
# about glibc's malloc, which AddressSanitizer replaces.
MIN_API_SQLITE_SANITIZED=1121
MIN_API_PGSQL_SANITIZED=1122
MIN_GUIDE_EXAMPLES=44

# Whatever the caller's environment says, make check runs everything: Check's selection
# (CK_RUN_SUITE, CK_RUN_CASE, tags, CK_FORK), pytest's (PYTEST_ADDOPTS, plugins), the
# suite's own variables and sanitizer options (each step sets what it needs).
for v in $(env | sed -n -e 's/^\(CK_[A-Za-z0-9_]*\)=.*/\1/p' -e 's/^\(PYTEST_[A-Za-z0-9_]*\)=.*/\1/p' \
                        -e 's/^\([AL]SAN_OPTIONS\)=.*/\1/p' -e 's/^\(UBSAN_OPTIONS\)=.*/\1/p'); do
    unset "$v"
done
unset JOURNAL_BUILD_DIR JOURNAL_TEST_DB JOURNAL_TEST_PG_PORT JOURNAL_SANITIZE JR_UNIT_TAP

step() { # [--needs STEP]... name command...
    blocked=""
    while [ "$1" = "--needs" ]; do
        case "$failed" in *"|$2|"*) [ -n "$blocked" ] || blocked=$2 ;; esac
        shift 2
    done
    name=$1; shift
    echo "=== $name"
    t0=$(date +%s)
    if [ -n "$blocked" ]; then
        echo "not run: '$blocked' failed"
        summary="$summary\n  SKIP  $name (needs '$blocked')"
    elif "$@"; then
        summary="$summary\n  ok    $name ($(($(date +%s) - t0)) s)"
        return 0
    else
        summary="$summary\n  FAIL  $name ($(($(date +%s) - t0)) s)"
    fi
    status=1
    failed="$failed$name|"
    return 1
}

free_port() {
    $PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

at_least() { # what, count, floor
    if [ "$2" -lt "$3" ]; then
        echo "check: only $2 $1 ran, fewer than the floor of $3 (a narrowed run, or tests lost)" >&2
        return 1
    fi
    echo "check: $2 $1 passed (floor $3)"
}

# The integration tests spend most of their time waiting (for a worker's lease, a heartbeat, a
# server to start), so they run on more pytest-xdist workers than the machine has cores. Each
# test file stays on one worker (--dist loadfile): a file's tests share its fixtures and order.
# Every server of the harness has its own ports, directories and database. Six on two cores:
# measured against four, the SQLite run took 186 s instead of 236, the PostgreSQL one 226 s
# instead of 295, the sanitized PostgreSQL one 272 s instead of 346.
TEST_WORKERS=${JOURNAL_TEST_WORKERS:-6}
case "$TEST_WORKERS" in ''|*[!0-9]*|0) echo "check: JOURNAL_TEST_WORKERS must be a number from 1" >&2; exit 2 ;; esac
unset JOURNAL_TEST_WORKERS

pytest_run() { # label, floor, extra env...
    label=$1 floor=$2; shift 2
    xml="$work/$label.xml"
    rm -f "$xml"
    # -o addopts=: an ini file's addopts cannot narrow the run either.
    env "$@" $PY -m pytest tests/api -q -rs --strict-markers -p no:cacheprovider -o addopts= \
        -n "$TEST_WORKERS" --dist loadfile \
        -o junit_suite_name="$label" --junitxml="$xml" || return 1
    passed=$($PY -c 'import sys, xml.etree.ElementTree as E
r = E.parse(sys.argv[1]).getroot()
s = r if r.tag == "testsuite" else r.find("testsuite")
print(int(s.get("tests")) - sum(int(s.get(k, 0)) for k in ("failures", "errors", "skipped")))' "$xml") ||
        return 1
    at_least "API tests ($label)" "$passed" "$floor"
}

unit_tests() { # build dir [env...]: builds the Check runner and runs it in the foreground
    dir=$1; shift
    out="$work/unit-$(basename "$dir").log"
    make -C "$dir" check TESTS= --no-print-directory -s >/dev/null || return 1
    env "$@" "$dir/tests/unit/unit_tests" >"$out" 2>&1
    rc=$?
    cat "$out"
    [ $rc -eq 0 ] || return 1
    ran=$(sed -n 's/^[0-9]*%: Checks: \([0-9]*\), Failures: 0, Errors: 0$/\1/p' "$out" | tail -n 1)
    at_least "unit tests" "${ran:-0}" "$MIN_UNIT"
}

instrumented() { # build dir: the module, the CLI and the unit tests call ASan and UBSan
    dir=$1
    make -C "$dir" check TESTS= --no-print-directory -s >/dev/null || return 1
    for f in mod_journal.so journal-admin tests/unit/unit_tests; do
        syms=$(nm -D --undefined-only "$dir/$f" 2>/dev/null) || { echo "check: cannot read $dir/$f" >&2; return 1; }
        for want in __asan_report_ __ubsan_handle_; do
            if ! echo "$syms" | grep -q "$want"; then
                echo "check: $dir/$f is not built with the sanitizers (no $want* calls):" \
                     "rebuild with sh scripts/build.sh $dir --enable-sanitizers" >&2
                return 1
            fi
        done
    done
    echo "check: $dir is instrumented with ASan and UBSan"
}

pgdir="$work/pg"
pgport=$(free_port)
pg_start() {
    mkdir -p "$pgdir" && chmod 755 "$work" "$pgdir" && sh scripts/pg-cluster.sh start "$pgdir/data" "$pgport"
}
cleanup() { sh "$top/scripts/pg-cluster.sh" stop "$pgdir/data" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

# use_sigaltstack=0: GCC 12's libasan reports its own sigaltstack call at thread exit on this
# glibc as a stack-buffer-underflow (in the sanitizer runtime, not in our code).
UNIT_ASAN="detect_leaks=1:use_sigaltstack=0"

# LeakSanitizer stops the process with ptrace to look at it. A machine that refuses that (a
# sandbox, a seccomp profile) makes every leak check end in "LeakSanitizer has encountered a
# fatal error" whatever the code does. The probe tells such a machine from a working one with a
# program that leaks on purpose; where the check cannot run, the summary says so: every process
# whose check did not run is listed (the integration harness records them), nothing is silent.
lsan_not_run="$work/lsan-not-run"
lsan_probe() {
    printf '#include <stdlib.h>\nvoid *volatile p;\nint main(void){p=malloc(7);p=0;return 0;}\n' \
        >"$work/leak.c" && gcc -fsanitize=address -g -o "$work/leak" "$work/leak.c" || return 1
    ASAN_OPTIONS=detect_leaks=1 "$work/leak" >"$work/leak.out" 2>&1
    if grep -q "detected memory leaks" "$work/leak.out"; then
        echo "check: LeakSanitizer works on this machine (a planted leak was found)"
        return 0
    fi
    cat "$work/leak.out"
    echo "check: LeakSanitizer cannot run on this machine: leak checks are off for the" \
         "unit tests and the fuzz replay, and listed as not run in the integration steps" >&2
    echo "lsan probe: a planted leak was not found" >>"$lsan_not_run"
    UNIT_ASAN="detect_leaks=0:use_sigaltstack=0"
    FUZZ_LEAKS=0
    return 0
}
FUZZ_LEAKS=1

step "layering" sh scripts/check-layering.sh
step "directives documented" sh scripts/check-directives-doc.sh
step "log tags registered and documented" $PY scripts/check-log-tags.py
step "source files in docs/architecture.md" sh scripts/check-architecture.sh
step "OpenAPI document (OpenAPI 3.1 schema)" sh scripts/openapi-validate.sh
step "structure (include cycles, function length)" $PY scripts/check-structure.py
step "build" sh scripts/build.sh build
step --needs "build" "unit tests (Check)" unit_tests build
step --needs "build" "integration (SQLite)" pytest_run sqlite "$MIN_API_SQLITE" \
    JOURNAL_BUILD_DIR="$top/build" JOURNAL_TEST_DB=sqlite
step --needs "build" "docs/integrators.md examples (SQLite)" env JOURNAL_BUILD_DIR="$top/build" \
    JOURNAL_TEST_DB=sqlite $PY tests/docs/run_guide.py --at-least "$MIN_GUIDE_EXAMPLES"
step --needs "build" "make run from a clone in a private directory" env JOURNAL_BUILD_DIR="$top/build" \
    $PY -m pytest tests/run -q -rs --strict-markers -p no:cacheprovider -o addopts=
step "PostgreSQL cluster" pg_start
step --needs "build" --needs "PostgreSQL cluster" "integration (PostgreSQL)" pytest_run pgsql \
    "$MIN_API_PGSQL" JOURNAL_BUILD_DIR="$top/build" JOURNAL_TEST_DB=pgsql JOURNAL_TEST_PG_PORT="$pgport"
step "build (ASan+UBSan)" sh scripts/build.sh build-asan --enable-sanitizers
step "LeakSanitizer probe" lsan_probe
step --needs "build (ASan+UBSan)" "instrumented (ASan+UBSan)" instrumented build-asan
step --needs "instrumented (ASan+UBSan)" "unit tests (ASan+UBSan)" unit_tests build-asan \
    ASAN_OPTIONS="$UNIT_ASAN"
step --needs "instrumented (ASan+UBSan)" "fuzz corpora replay (ASan+UBSan)" \
    env JOURNAL_FUZZ_LEAKS="$FUZZ_LEAKS" sh scripts/fuzz.sh replay build-asan
step --needs "instrumented (ASan+UBSan)" "integration (SQLite, ASan+UBSan)" pytest_run \
    sqlite-sanitized "$MIN_API_SQLITE_SANITIZED" JOURNAL_BUILD_DIR="$top/build-asan" JOURNAL_TEST_DB=sqlite \
    JOURNAL_SANITIZE=1 JOURNAL_LSAN_NOT_RUN_FILE="$lsan_not_run"
step --needs "instrumented (ASan+UBSan)" --needs "PostgreSQL cluster" \
    "integration (PostgreSQL, ASan+UBSan)" pytest_run pgsql-sanitized "$MIN_API_PGSQL_SANITIZED" \
    JOURNAL_BUILD_DIR="$top/build-asan" JOURNAL_TEST_DB=pgsql JOURNAL_TEST_PG_PORT="$pgport" \
    JOURNAL_SANITIZE=1 JOURNAL_LSAN_NOT_RUN_FILE="$lsan_not_run"

if [ -s "$lsan_not_run" ]; then
    summary="$summary\n  NOTE  leak check not run in $(wc -l <"$lsan_not_run") processes"
    summary="$summary (LeakSanitizer was refused ptrace), the first of them:"
    while IFS= read -r line; do
        summary="$summary\n          $line"
    done <<EOF_NOTES
$(head -n 10 "$lsan_not_run")
EOF_NOTES
fi
printf "\n=== summary (%d s)$summary\n" $(($(date +%s) - started))
exit $status
