/* Being told that work may be due, without polling the job tables.
 *
 * PostgreSQL: LISTEN on the queue's channel, on the worker's own connection. Every writer of
 * the core that makes a job wait notifies after its COMMIT (jr_queue_wake), so the job is
 * visible when the notification arrives; a writer outside the core that does not notify, or a
 * process that died before its NOTIFY, is left to the safety poll.
 *
 * SQLite has no notifications between processes. Every commit writes the -wal file next to
 * the database, so an inotify watch on the database's directory hears every writer (the
 * module, journal-admin, other workers, a sqlite3 shell) at no cost to them; the worker then
 * runs one indexed query. The last write to the -wal file comes before the commit becomes
 * visible (the writer then publishes it in the -shm index, which is mapped memory: no event),
 * usually by microseconds, but by as long as the writer is descheduled on a loaded machine.
 * So the loop looks again later and later (JW_RECHECKS), each time the database's data
 * version shows that another connection's commit has become visible meanwhile. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/inotify.h>

#include <apr_strings.h>
#include <libpq-fe.h>
#include <sqlite3.h>

#include "jr_log.h"
#include "jw.h"

struct jw_wake {
    jr_db_t *db;
    int fd;
    int broken; /* PostgreSQL: the connection failed; not polled until LISTEN runs again */
    const char *channel;
    const char *base; /* SQLite: the database's file name; its -wal, -journal count too */
    size_t base_len;
    int backend; /* PostgreSQL: the backend that LISTENs */
};

static apr_status_t listen_one(jw_wake_t *w, PGconn *conn, const char *channel)
{
    char *chan = PQescapeIdentifier(conn, channel, strlen(channel));
    char *sql;
    PGresult *res;
    int ok;
    if (!chan) {
        return APR_EGENERAL;
    }
    sql = apr_pstrcat(w->db->pool, "LISTEN ", chan, NULL);
    PQfreemem(chan);
    res = PQexec(conn, sql);
    ok = PQresultStatus(res) == PGRES_COMMAND_OK;
    PQclear(res);
    if (!ok) {
        JR_LOG(JR06020, 0, "LISTEN %s failed: %s", channel, PQerrorMessage(conn));
        return APR_EGENERAL;
    }
    return APR_SUCCESS;
}

static apr_status_t listen_pg(jw_wake_t *w)
{
    PGconn *conn = apr_dbd_native_handle(w->db->driver, w->db->handle);
    char *list = apr_pstrdup(w->db->pool, w->channel), *state = NULL, *chan;
    for (chan = apr_strtok(list, " ", &state); chan; chan = apr_strtok(NULL, " ", &state)) {
        if (listen_one(w, conn, chan) != APR_SUCCESS) {
            return APR_EGENERAL;
        }
    }
    w->fd = PQsocket(conn);
    w->backend = PQbackendPID(conn);
    w->broken = 0;
    return APR_SUCCESS;
}

static apr_status_t watch_sqlite(jw_wake_t *w, apr_pool_t *p, const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *dir = slash ? (slash == path ? "/" : apr_pstrmemdup(p, path, (apr_size_t)(slash - path)))
                            : ".";
    w->base = slash ? slash + 1 : path;
    w->base_len = strlen(w->base);
    if ((w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) < 0 ||
        inotify_add_watch(w->fd, dir, IN_MODIFY | IN_CREATE | IN_MOVED_TO) < 0) {
        JR_LOG(JR06021, errno,
               "cannot watch the database directory %s: jobs are found by the %d s "
               "safety poll only",
               dir, JW_SAFETY_POLL);
        if (w->fd >= 0) {
            close(w->fd);
        }
        w->fd = -1;
        return APR_EGENERAL;
    }
    return APR_SUCCESS;
}

static apr_status_t close_fd(void *data)
{
    jw_wake_t *w = data;
    if (w->db->dialect == JR_DB_SQLITE && w->fd >= 0) {
        close(w->fd);
    }
    w->fd = -1;
    return APR_SUCCESS;
}

apr_status_t jw_wake_open(jw_wake_t **pw, apr_pool_t *p, jr_db_t *db, const char *db_params,
                          const char *channel)
{
    jw_wake_t *w = apr_pcalloc(p, sizeof(*w));
    apr_status_t rv;
    w->db = db;
    w->fd = -1;
    w->channel = channel;
    rv = db->dialect == JR_DB_PGSQL ? listen_pg(w) : watch_sqlite(w, p, db_params);
    apr_pool_cleanup_register(p, w, close_fd, apr_pool_cleanup_null);
    *pw = rv == APR_SUCCESS ? w : NULL;
    return rv;
}

int jw_wake_fd(const jw_wake_t *w)
{
    return w && !w->broken ? w->fd : -1;
}

/* 1 when an inotify event names the database or one of its companion files. */
static int ours(const jw_wake_t *w, const struct inotify_event *e)
{
    return e->len > 0 && !strncmp(e->name, w->base, w->base_len) &&
           (e->name[w->base_len] == '\0' || e->name[w->base_len] == '-');
}

static int drain_inotify(jw_wake_t *w)
{
    char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
    int hit = 0;
    ssize_t n;
    while ((n = read(w->fd, buf, sizeof(buf))) > 0) {
        char *at = buf;
        while (at < buf + n) {
            const struct inotify_event *e = (const struct inotify_event *)at;
            hit = hit || ours(w, e);
            at += sizeof(*e) + e->len;
        }
    }
    return hit;
}

static int drain_notifies(jw_wake_t *w)
{
    PGconn *conn = apr_dbd_native_handle(w->db->driver, w->db->handle);
    PGnotify *n;
    int hit = 0;
    /* Notifications that arrived during a query are already buffered: always look. */
    if (!PQconsumeInput(conn) || PQstatus(conn) != CONNECTION_OK) {
        /* A closed socket stays readable: stop polling it, and let the loop's next look
         * fail, reconnect and LISTEN again (jw_wake_reattach). */
        w->broken = 1;
        return 1;
    }
    while ((n = PQnotifies(conn)) != NULL) {
        hit = 1;
        PQfreemem(n);
    }
    return hit;
}

int jw_wake_drain(jw_wake_t *w)
{
    if (!w || w->fd < 0 || w->broken) {
        return 0;
    }
    return w->db->dialect == JR_DB_PGSQL ? drain_notifies(w) : drain_inotify(w);
}

apr_status_t jw_wake_reattach(jw_wake_t *w)
{
    PGconn *conn;
    if (!w || w->db->dialect != JR_DB_PGSQL) {
        return APR_SUCCESS;
    }
    conn = apr_dbd_native_handle(w->db->driver, w->db->handle);
    if (!w->broken && PQbackendPID(conn) == w->backend && PQsocket(conn) == w->fd) {
        return APR_SUCCESS;
    }
    return PQstatus(conn) == CONNECTION_OK ? listen_pg(w) : APR_EGENERAL;
}

long long jw_wake_version(jw_wake_t *w)
{
    sqlite3 *conn;
    sqlite3_stmt *st = NULL;
    long long v = -1;
    if (!w || w->db->dialect != JR_DB_SQLITE) {
        return -1;
    }
    conn = apr_dbd_native_handle(w->db->driver, w->db->handle);
    /* A constant statement, prepared each time: a few microseconds, and no statement of
     * ours stays open on the connection the core manages. */
    if (sqlite3_prepare_v2(conn, "PRAGMA data_version", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW) {
        v = sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
    return v;
}
