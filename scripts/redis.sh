#!/bin/sh
# A throwaway redis-server for tests and benchmarks, on a loopback port, in the foreground of
# nothing: daemonised with its pid file and log in DIR.
#   redis.sh start DIR PORT [PASSWORD_FILE]   -> starts, waits until it answers PING
#   redis.sh stop DIR                         -> stops it (SIGTERM), waits until it is gone
set -eu
cmd=$1 dir=$2
case "$cmd" in
start)
    port=$3
    mkdir -p "$dir"
    auth=""
    [ -z "${4:-}" ] || auth="--requirepass $(cat "$4")"
    # shellcheck disable=SC2086
    redis-server --port "$port" --bind 127.0.0.1 --daemonize yes --save "" --appendonly no \
        --dir "$dir" --pidfile "$dir/redis.pid" --logfile "$dir/redis.log" $auth
    i=0
    until [ -s "$dir/redis.pid" ] && redis-cli -p "$port" ${4:+--no-auth-warning -a "$(cat "$4")"} ping >/dev/null 2>&1; do
        i=$((i + 1)); [ $i -lt 100 ] || { cat "$dir/redis.log" >&2; exit 1; }
        sleep 0.1
    done
    ;;
stop)
    [ -f "$dir/redis.pid" ] || exit 0
    pid=$(cat "$dir/redis.pid")
    kill "$pid" 2>/dev/null || true
    i=0
    while kill -0 "$pid" 2>/dev/null; do
        i=$((i + 1)); [ $i -lt 100 ] || { kill -9 "$pid" 2>/dev/null || true; break; }
        sleep 0.1
    done
    rm -f "$dir/redis.pid"
    ;;
*)
    echo "usage: redis.sh start|stop DIR [PORT] [PASSWORD_FILE]" >&2; exit 2 ;;
esac
