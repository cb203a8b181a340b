#!/bin/sh
# make run: the journal on 127.0.0.1:${JOURNAL_PORT:-8080} in the foreground (Ctrl-C stops it).
# Data lives in ${JOURNAL_DATA_DIR:-./var} and survives restarts.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-build}
case "$build" in /*) ;; *) build="$top/$build" ;; esac

port=${JOURNAL_PORT:-8080}
data=${JOURNAL_DATA_DIR:-$top/var}
mkdir -p "$data"
data=$(cd "$data" && pwd)
admin=${JOURNAL_ADMIN_USER:-admin}
root="$data/httpd"
mkdir -p "$root/run" "$root/logs" "$root/conf.d" "$root/htdocs"

if [ "$(id -u)" = "0" ]; then user=www-data group=www-data; else user=$(id -un) group=$(id -gn); fi

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

if [ "$(id -u)" = "0" ]; then
    chown -R "$user:$group" "$data"
    chmod 755 "$data"
fi

export JR_SERVER_ROOT="$root" JR_PORT="$port" JR_RUN_DIR="$root/run" JR_LOG_DIR="$root/logs"
export JR_LOG_LEVEL=${JOURNAL_LOG_LEVEL:-warn} JR_MODULE="$build/mod_journal.so"
export JR_USER="$user" JR_GROUP="$group" JR_DBD_DRIVER="$driver" JR_DBD_PARAMS="$params"
export JR_DATA_DIR="$data" JR_DOC_ROOT="$root/htdocs"
sh "$top/scripts/render-conf.sh" "$top/conf/journal-dev.conf.in" > "$root/httpd.conf"

# The worker httpd starts and supervises, and the AI endpoint it uses (docs/worker.md).
conf_value() { # name value: refuses what cannot be a quoted httpd argument
    case "$2" in *'"'*|*'\'*|*"
"*) echo "run.sh: $1 must not contain quotes, backslashes or line breaks" >&2; exit 1 ;; esac
}
worker="$build/journal-worker"
{
    echo "# Written by make run from the environment at each start; edits are lost."
    if [ -x "$worker" ] && [ "$(id -u)" = "0" ] && ! runuser -u "$user" -- test -x "$worker"; then
        echo "run.sh: $user cannot run $worker (a private directory?): no worker runs" >&2
        echo "JournalWorker Off"
    else
        echo "JournalWorkerPath \"$worker\""
    fi
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
echo "mod_journal: http://127.0.0.1:$port/api (health: /api/health); logs in $root/logs; Ctrl-C stops."
# apache2 stops gracefully on SIGTERM; Ctrl-C's SIGINT is turned into the same.
exec /usr/sbin/apache2 -d "$root" -f "$root/httpd.conf" -DFOREGROUND
