#!/bin/sh
# make run: the journal on 127.0.0.1:${JOURNAL_PORT:-8080} in the foreground (Ctrl-C stops it).
# The data (database, stored files) lives in ${JOURNAL_DATA_DIR:-./var} and survives restarts;
# the private httpd's configuration, logs and pid file live in ./var/httpd.
#
# Started as root, the server's children run as www-data, which must reach the data directory:
# every directory above it must be searchable by www-data. When ./var is not (a clone under a
# private home directory such as /root, mode 0700), the data goes to a directory of this clone
# under /var/lib/mod_journal-dev instead, and the script says so. A JOURNAL_DATA_DIR that
# www-data cannot reach stops the script before httpd starts. The worker httpd starts runs as
# www-data too: it reads its settings file in httpd's runtime directory and runs the build's
# journal-worker. When www-data cannot reach them, they live in a directory of this clone next
# to the data's (root's, mode 0755): $clone_dir-httpd/run and $clone_dir-httpd/bin.
set -eu
umask 077 # the data directory 0700, the database and stored files 0600
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-build}
case "$build" in /*) ;; *) build="$top/$build" ;; esac

port=${JOURNAL_PORT:-8080}
admin=${JOURNAL_ADMIN_USER:-admin}
root="$top/var/httpd"
dev_base=/var/lib/mod_journal-dev

if [ "$(id -u)" = "0" ]; then user=www-data group=www-data; else user=$(id -un) group=$(id -gn); fi

as_server() { # command...: runs it as the server's user
    if [ "$(id -u)" = "0" ]; then runuser -u "$user" -- "$@"; else "$@"; fi
}

absolute() {
    case "$1" in /*) printf '%s\n' "$1" ;; *) printf '%s/%s\n' "$(pwd)" "$1" ;; esac
}

# The outermost existing directory on the way to $1 that the server's user cannot search.
closed_dir() {
    rest=${1#/} dir=""
    as_server test -x / || { echo /; return; }
    while [ -n "$rest" ]; do
        dir="$dir/${rest%%/*}"
        case "$rest" in */*) rest=${rest#*/} ;; *) rest="" ;; esac
        [ -d "$dir" ] || return 0
        as_server test -x "$dir" || { printf '%s\n' "$dir"; return; }
    done
}

mode_of() { stat -c %a "$1"; }

# A data directory of this clone that survives reboots, outside any home directory.
clone_dir="$dev_base/$(basename "$top")-$(printf '%s' "$top" | sha256sum | cut -c1-8)"

if [ -n "${JOURNAL_DATA_DIR:-}" ]; then
    data=$(absolute "$JOURNAL_DATA_DIR")
    if blocked=$(closed_dir "$(dirname "$data")") && [ -n "$blocked" ]; then
        echo "mod_journal: JOURNAL_DATA_DIR=$JOURNAL_DATA_DIR is not reachable by $user" \
             "($blocked is mode $(mode_of "$blocked") and closed to it): choose another," \
             "e.g. JOURNAL_DATA_DIR=$clone_dir" >&2
        exit 1
    fi
else
    data="$top/var"
    if blocked=$(closed_dir "$top") && [ -n "$blocked" ]; then
        data=$clone_dir
        echo "mod_journal: $user cannot reach $top/var ($blocked is mode $(mode_of "$blocked")):" \
             "the data lives in $data (JOURNAL_DATA_DIR chooses another directory)"
    fi
fi

# Parents made here are left searchable (0755); the data directory itself is private.
(umask 022 && mkdir -p "$(dirname "$data")")
mkdir -p "$data"
chmod 700 "$data"
if [ "$(id -u)" = "0" ]; then
    # The data belongs to the server's user. ./var/httpd, when it is inside, stays root's:
    # httpd's parent reads the configuration there.
    find "$data" -path "$root" -prune -o -exec chown "$user:$group" {} + \
        -exec chmod go-rwx {} +
fi
if ! as_server test -r "$data" -a -w "$data" -a -x "$data"; then
    echo "mod_journal: $user cannot write to $data: choose another data directory," \
         "e.g. JOURNAL_DATA_DIR=$clone_dir" >&2
    exit 1
fi

if [ -n "${JOURNAL_DB:-}" ]; then
    driver=pgsql params=$JOURNAL_DB
else
    driver=sqlite3 params="$data/journal.db"
fi

admin_cli() {
    JOURNAL_DBD_DRIVER=$driver JOURNAL_DBD_PARAMS=$params "$build/journal-admin" "$@"
}

admin_cli migrate
if [ -n "${JOURNAL_ADMIN_PASSWORD:-}" ]; then
    JOURNAL_PASSWORD=$JOURNAL_ADMIN_PASSWORD admin_cli create-user "$admin" --role admin --if-missing
else
    # Only prints a password when it creates the account.
    admin_cli create-user "$admin" --role admin --if-missing --generate
fi
if [ "$(id -u)" = "0" ] && [ "$driver" = sqlite3 ]; then
    for f in "$params" "$params-wal" "$params-shm"; do
        [ ! -e "$f" ] || chown "$user:$group" "$f"
    done
fi

# The private httpd's own files: opened by its parent (root when started as root).
(umask 022 && mkdir -p "$root/run" "$root/logs" "$root/conf.d" "$root/htdocs")
[ "$(id -u)" != "0" ] || chown -R 0:0 "$root" # conf.d is included by a root process

# What the worker (www-data) must reach besides the data, outside the clone when needed.
outside="$clone_dir-httpd"
reachable_dir() { # dir: makes it, root's and mode 0755, with its parents
    (umask 022 && mkdir -p "$1")
    chown 0:0 "$1" && chmod 755 "$1"
}
run_dir="$root/run"
if [ "$(id -u)" = "0" ] && blocked=$(closed_dir "$run_dir") && [ -n "$blocked" ]; then
    run_dir="$outside/run"
    reachable_dir "$outside" && reachable_dir "$run_dir"
    echo "mod_journal: $user cannot reach $root/run ($blocked is mode $(mode_of "$blocked")):" \
         "httpd's runtime directory is $run_dir"
fi
worker="$build/journal-worker"
if [ -x "$worker" ] && [ "$(id -u)" = "0" ] && ! as_server test -x "$worker"; then
    # Replaced by rename: a worker of an earlier run may still be executing the old file.
    reachable_dir "$outside" && reachable_dir "$outside/bin"
    install -m 0755 -o root -g root "$worker" "$outside/bin/journal-worker.new"
    mv -f "$outside/bin/journal-worker.new" "$outside/bin/journal-worker"
    echo "mod_journal: $user cannot run $worker: httpd runs a copy, $outside/bin/journal-worker"
    worker="$outside/bin/journal-worker"
fi

export JR_SERVER_ROOT="$root" JR_PORT="$port" JR_RUN_DIR="$run_dir" JR_LOG_DIR="$root/logs"
export JR_LOG_LEVEL=${JOURNAL_LOG_LEVEL:-warn} JR_MODULE="$build/mod_journal.so"
export JR_USER="$user" JR_GROUP="$group" JR_DBD_DRIVER="$driver" JR_DBD_PARAMS="$params"
export JR_DATA_DIR="$data" JR_DOC_ROOT="$root/htdocs"
sh "$top/scripts/render-conf.sh" "$top/conf/journal-dev.conf.in" > "$root/httpd.conf"

# The worker httpd starts and supervises, and the AI endpoint it uses (docs/worker.md).
conf_value() { # name value: refuses what cannot be a quoted httpd argument
    case "$2" in *'"'*|*'\'*|*"
"*) echo "run.sh: $1 must not contain quotes, backslashes or line breaks" >&2; exit 1 ;; esac
}
{
    echo "# Written by make run from the environment at each start; edits are lost."
    conf_value "the build directory" "$worker"
    echo "JournalWorkerPath \"$worker\""
    if [ -n "${JOURNAL_AI_ENDPOINT:-}" ]; then
        conf_value JOURNAL_AI_ENDPOINT "$JOURNAL_AI_ENDPOINT"
        echo "JournalAIEndpoint \"$JOURNAL_AI_ENDPOINT\""
    fi
    if [ -n "${JOURNAL_AI_MODEL:-}" ]; then
        conf_value JOURNAL_AI_MODEL "$JOURNAL_AI_MODEL"
        echo "JournalAIModel \"$JOURNAL_AI_MODEL\""
    fi
    if [ -n "${JOURNAL_AI_KEY_FILE:-}" ]; then
        [ -f "$JOURNAL_AI_KEY_FILE" ] || { echo "run.sh: JOURNAL_AI_KEY_FILE: no such file" >&2; exit 1; }
        key=$(cd "$(dirname "$JOURNAL_AI_KEY_FILE")" && pwd)/$(basename "$JOURNAL_AI_KEY_FILE")
        conf_value JOURNAL_AI_KEY_FILE "$key"
        echo "JournalAIKeyFile \"$key\""
    fi
} > "$root/worker.conf"

if ! out=$(/usr/sbin/apache2 -t -d "$root" -f "$root/httpd.conf" 2>&1); then
    echo "$out" >&2
    exit 1
fi
echo "mod_journal: http://127.0.0.1:$port/api (health: /api/health); data in $data;" \
     "logs in $root/logs; Ctrl-C stops."
# apache2 stops at once on SIGTERM and on Ctrl-C's SIGINT, gracefully on SIGWINCH
# (docs/operations.md, "Stopping httpd").
exec /usr/sbin/apache2 -d "$root" -f "$root/httpd.conf" -DFOREGROUND
