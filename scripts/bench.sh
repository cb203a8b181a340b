#!/bin/sh
# make bench: every performance aim in one table (bench/bench_aims.py), on SQLite and on
# PostgreSQL in one run. JOURNAL_TEST_DB=sqlite|pgsql (or BENCH_DBS) runs one database; a
# PostgreSQL run uses JOURNAL_TEST_PG_PORT's cluster if given, else a throwaway cluster on
# BENCH_PG_PORT (55433, fsync on) in a temporary directory, stopped and removed at the end.
# The knobs of bench/bench_aims.py (BENCH_ENTRIES, BENCH_ROUNDS, BENCH_DURATION,
# BENCH_MIXED_SECONDS, ...) pass through. make bench-hot runs bench/bench.py.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
dbs=${BENCH_DBS:-${JOURNAL_TEST_DB:-sqlite pgsql}}
export BENCH_DBS="$dbs"
pgdir=
cleanup() {
    if [ -n "$pgdir" ]; then
        sh scripts/pg-cluster.sh stop "$pgdir/data" || true
        rm -rf "$pgdir"
    fi
}
case " $dbs " in
*" pgsql "*)
    if [ -z "${JOURNAL_TEST_PG_PORT:-}" ]; then
        pgdir=$(mktemp -d /tmp/jr-bench-pg.XXXXXX)
        chmod 755 "$pgdir"
        trap cleanup EXIT INT TERM
        PG_FSYNC=on sh scripts/pg-cluster.sh start "$pgdir/data" "${BENCH_PG_PORT:-55433}"
        export JOURNAL_TEST_PG_PORT="${BENCH_PG_PORT:-55433}"
    fi
    ;;
esac
/usr/bin/python3 bench/bench_aims.py
