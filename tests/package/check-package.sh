#!/bin/sh
# make check-package: the Debian package on this machine, used as an admin would use it.
#
# Builds the package (scripts/deb.sh: out of tree, lintian), installs it with apt-get, enables it
# with a2enmod, runs configtest, starts the system's apache2 on a free loopback port, creates the
# first admin with journal-admin (which finds the database in Apache's configuration by itself),
# writes and reads entries on /api and /api/v1, reloads, removes (the data stays) and purges (it
# goes).
#
# The machine is left as it was: /etc/apache2 (ports.conf, the modules a2enmod enabled) and
# apache2's state, log and run directories are copied first, restored at the end whatever
# happened, and compared with the copy. It refuses to start where it could do harm: a system
# apache2 running, the package installed, or a /var/lib/mod_journal that a purge would delete.
# Runs as root. With systemd as PID 1 the service is driven by systemctl, otherwise apache2ctl.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
PY=/usr/bin/python3
PKG=libapache2-mod-journal
DATA=/var/lib/mod_journal
PIDFILE=/run/apache2/apache2.pid
ERRLOG=/var/log/apache2/error.log
KEEP="etc/apache2 var/lib/apache2 var/log/apache2 run/apache2 run/lock/apache2"
work=$(mktemp -d /tmp/journal-package.XXXXXX)
passed=0 failed=0 snapshot=0
export DEBIAN_FRONTEND=noninteractive
APT="apt-get -y -q -o DPkg::Lock::Timeout=300"
unset JOURNAL_DBD_DRIVER JOURNAL_DBD_PARAMS JOURNAL_DATA_DIR APACHE_CONFDIR

ok() { passed=$((passed + 1)); echo "ok - $*"; }
fail() { failed=$((failed + 1)); echo "not ok - $*" >&2; exit 1; }
check() { # description command...: a step that must succeed
    what=$1; shift
    if "$@" > "$work/out" 2>&1; then ok "$what"; else cat "$work/out" >&2; fail "$what"; fi
}

has_systemd() { [ -d /run/systemd/system ]; }
apache_pid() { pid=$(cat "$PIDFILE" 2>/dev/null) && kill -0 "$pid" 2>/dev/null && echo "$pid"; }
service() { # start | reload | stop
    if has_systemd; then
        systemctl "$1" apache2
    elif [ "$1" = reload ]; then
        apache2ctl graceful
    else
        apache2ctl "$1"
    fi
}
stopped() { # the system apache2 and its workers are gone (30 s at most)
    i=0
    while [ $i -lt 150 ]; do
        if ! apache_pid >/dev/null && ! pgrep -f '^/usr/bin/journal-worker ' >/dev/null; then
            return 0
        fi
        sleep 0.2; i=$((i + 1))
    done
    echo "apache2 or journal-worker still running:" && pgrep -af 'apache2|journal-worker'
    return 1
}
flow() { # phase [password]: tests/package/api_flow.py; each of its "ok" lines counts
    $PY "$top/tests/package/api_flow.py" "$base" "$work/state.json" "$@" > "$work/flow.out" 2>&1
    frc=$?
    cat "$work/flow.out"
    passed=$((passed + $(grep -c '^ok - ' "$work/flow.out")))
    [ $frc = 0 ] || fail "the API through the system apache2 ($1)"
}
pkg_state() { dpkg-query -W -f='${db:Status-Status}' "$PKG" 2>/dev/null || true; }
mode_owner() { stat -c '%a %U:%G' "$1"; }
manifest() { # what must be the same before and after
    for p in $KEEP; do
        if [ -e "/$p" ]; then
            find "/$p" -type d -printf '%p %M %u:%g\n' -o -printf '%p %M %u:%g %s %l\n'
            find "/$p" -type f -exec md5sum {} +
        else
            echo "absent /$p"
        fi
    done | sort
}

cleanup() {
    rc=$?
    trap - EXIT INT TERM
    if apache_pid >/dev/null; then service stop >/dev/null 2>&1; stopped >/dev/null || rc=1; fi
    case "$(pkg_state)" in not-installed|"") ;; *) $APT purge "$PKG" >/dev/null 2>&1 || rc=1 ;; esac
    rm -rf "$DATA"
    if [ $snapshot = 1 ]; then
        for p in $KEEP; do rm -rf "/${p:?}"; done
        tar -C / -xpf "$work/before.tar"
        manifest > "$work/after.manifest"
        if diff -u "$work/before.manifest" "$work/after.manifest" > "$work/diff"; then
            ok "the machine is as it was: $KEEP restored and compared, $DATA gone, no apache2"
        else
            cat "$work/diff" >&2
            failed=$((failed + 1)); echo "not ok - the machine differs from before the test" >&2
            rc=1
        fi
    fi
    [ $rc = 0 ] || [ $failed -gt 0 ] || failed=1
    echo "check-package: $passed passed, $failed failed"
    if [ $rc = 0 ] && [ $failed = 0 ]; then rm -rf "$work"; else echo "kept: $work" >&2; rc=1; fi
    exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

[ "$(id -u)" = 0 ] || fail "make check-package installs a package: run it as root"
case "$(pkg_state)" in not-installed|"") ;; *) fail "$PKG is installed here: its purge would delete its data; remove it first" ;; esac
! apache_pid >/dev/null || fail "the system apache2 is running (pid $(apache_pid)): this test starts and stops it; stop it first"
[ ! -e "$DATA" ] || fail "$DATA exists: the purge would delete it; move it away first"
port=$($PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
base="http://127.0.0.1:$port"

# ---- build ----------------------------------------------------------------------------------
check "make deb: the package builds out of tree and lintian finds nothing" \
    sh "$top/scripts/deb.sh" "$work/deb"
deb=$(ls "$work"/deb/${PKG}_*.deb)

existing=""
for p in $KEEP; do [ ! -e "/$p" ] || existing="$existing $p"; done
# shellcheck disable=SC2086
tar -C / -cpf "$work/before.tar" $existing && manifest > "$work/before.manifest" && snapshot=1

# ---- install: nothing enabled, the data directory made -------------------------------------
check "apt-get install $(basename "$deb")" $APT install "$deb"
check "the module is installed but not enabled" sh -c \
    "[ -f /usr/lib/apache2/modules/mod_journal.so ] && [ -x /usr/bin/journal-admin ] &&
     [ -x /usr/bin/journal-worker ] && [ -f /etc/apache2/mods-available/journal.conf ] &&
     [ ! -e /etc/apache2/mods-enabled/journal.load ]"
[ "$(mode_owner "$DATA")" = "700 www-data:www-data" ] || fail "$DATA: $(mode_owner "$DATA")"
ok "$DATA is 0700, www-data's"
check "journal-worker.service is installed and not enabled" sh -c \
    "[ -f /lib/systemd/system/journal-worker.service ] &&
     [ ! -e /etc/systemd/system/multi-user.target.wants/journal-worker.service ]"

# ---- enable, configure the port, check ------------------------------------------------------
check "a2enmod journal" a2enmod journal
for m in dbd remoteip reqtimeout journal; do
    [ -e "/etc/apache2/mods-enabled/$m.load" ] || fail "a2enmod journal did not enable $m"
done
ok "a2enmod journal enabled dbd, remoteip and reqtimeout with it"
printf 'Listen 127.0.0.1:%s\n' "$port" > /etc/apache2/ports.conf
check "apache2ctl configtest" apache2ctl configtest

# ---- the first admin, from the installed configuration alone --------------------------------
journal-admin create-user admin --role admin --generate > "$work/admin.out" 2>&1 ||
    { cat "$work/admin.out" >&2; fail "journal-admin create-user admin --role admin --generate"; }
password=$(sed -n 's/^generated password: //p' "$work/admin.out")
[ -n "$password" ] || fail "journal-admin printed no password: $(cat "$work/admin.out")"
ok "journal-admin create-user admin --role admin --generate (no option, no environment)"
[ "$(mode_owner "$DATA/journal.db")" = "600 www-data:www-data" ] ||
    fail "the database journal-admin made as root: $(mode_owner "$DATA/journal.db")"
ok "the database it made as root is 0600, www-data's"
check "journal-admin check-config" sh -c "journal-admin check-config > '$work/cc.out' &&
    grep -qx 'configuration: /etc/apache2/apache2.conf' '$work/cc.out' &&
    grep -qx 'data directory: $DATA (writable)' '$work/cc.out'"

# ---- serve -------------------------------------------------------------------------------------
check "start the system apache2 on 127.0.0.1:$port" service start
flow first "$password"
reloads=$(grep -c 'Doing graceful restart' "$ERRLOG" 2>/dev/null)
check "reload ($(has_systemd && echo 'systemctl reload apache2' || echo 'apache2ctl graceful'))" \
    service reload
i=0
while [ "$(grep -c 'Doing graceful restart' "$ERRLOG" 2>/dev/null)" = "$reloads" ] && [ $i -lt 100 ]; do
    sleep 0.2; i=$((i + 1))
done
[ "$(grep -c 'Doing graceful restart' "$ERRLOG")" -gt "$reloads" ] || fail "apache2 did not reload"
flow again
if grep -E ':(error|crit|alert|emerg)\]' "$ERRLOG" > "$work/problems"; then
    cat "$work/problems" >&2
    fail "problems in $ERRLOG"
fi
ok "no error in $ERRLOG"

# ---- remove keeps the data, purge deletes it ---------------------------------------------------
check "apt-get remove $PKG (apache2 running)" $APT remove "$PKG"
check "remove: module disabled and gone, data and configuration kept" sh -c \
    "[ ! -e /etc/apache2/mods-enabled/journal.load ] && [ ! -e /usr/lib/apache2/modules/mod_journal.so ] &&
     [ -f '$DATA/journal.db' ] && [ -f /etc/apache2/mods-available/journal.conf ]"
check "stop the system apache2" service stop
check "apache2 and its journal-worker are gone" stopped
check "apt-get purge $PKG" $APT purge "$PKG"
check "purge: data, configuration and a2enmod's state of the module gone" sh -c \
    "[ ! -e '$DATA' ] && ! ls /etc/apache2/mods-*/journal.* 2>/dev/null &&
     ! find /var/lib/apache2 -name journal | grep -q . && [ \"\$(dpkg-query -W -f='\${db:Status-Status}' $PKG 2>/dev/null)\" != installed ]"
