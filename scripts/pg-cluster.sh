#!/bin/sh
# A throwaway PostgreSQL cluster for tests and benchmarks, on a loopback port, run as an
# unprivileged user (postgres when started as root).
#   pg-cluster.sh start DIR PORT   -> initialises (once) and starts; prints nothing on success
#   pg-cluster.sh stop DIR
#   pg-cluster.sh createdb DIR PORT NAME
# fsync is off (-F: tests need no durability) unless PG_FSYNC=on (benchmarks: as in production).
set -eu
cmd=$1 dir=$2
bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
[ -n "$bindir" ] || { echo "pg-cluster: PostgreSQL server binaries not found (apt-get install postgresql)" >&2; exit 1; }

as_pg() {
    if [ "$(id -u)" = "0" ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

case "$cmd" in
start)
    port=$3
    mkdir -p "$dir"
    [ "$(id -u)" = "0" ] && chown postgres:postgres "$dir"
    chmod 700 "$dir"
    if [ ! -f "$dir/PG_VERSION" ]; then
        as_pg "$bindir/initdb" -D "$dir" -A trust -U postgres --no-sync -E UTF8 >"$dir.initdb.log" 2>&1 ||
            { cat "$dir.initdb.log" >&2; exit 1; }
    fi
    nofsync=-F
    [ "${PG_FSYNC:-off}" = on ] && nofsync=
    as_pg "$bindir/pg_ctl" -D "$dir" -l "$dir/server.log" -w -t 60 \
        -o "-p $port -k $dir -c listen_addresses=127.0.0.1 $nofsync -c max_connections=200" start >/dev/null
    ;;
stop)
    [ -f "$dir/postmaster.pid" ] || exit 0
    as_pg "$bindir/pg_ctl" -D "$dir" -m fast -w -t 60 stop >/dev/null
    ;;
createdb)
    port=$3 name=$4
    as_pg "$bindir/createdb" -h 127.0.0.1 -p "$port" -U postgres "$name"
    ;;
*)
    echo "usage: pg-cluster.sh start|stop|createdb DIR [PORT] [NAME]" >&2; exit 2 ;;
esac
