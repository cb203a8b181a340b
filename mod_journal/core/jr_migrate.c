#include <stdlib.h>

#include <apr_strings.h>
#include <libpq-fe.h>
#include <sqlite3.h>

#include "jr_log.h"
#include "jr_migrate.h"
#include "jr_util.h"

/* Any constant will do: it only has to be the same in every node that migrates. */
#define JR_PG_MIGRATION_LOCK "7254013"

/* ---- SQLite: native handle, sqlite3_exec runs multi-statement scripts ---------------- */

static int sq_exec(sqlite3 *c, apr_pool_t *p, const char *sql, const char **err)
{
    char *msg = NULL;
    if (sqlite3_exec(c, sql, NULL, NULL, &msg) != SQLITE_OK) {
        *err = apr_pstrdup(p, msg ? msg : sqlite3_errmsg(c));
        sqlite3_free(msg);
        return -1;
    }
    return 0;
}

static int sq_has_version(sqlite3 *c, int version, int *has, const char **err, apr_pool_t *p)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(c, "SELECT 1 FROM schema_migrations WHERE version = ?", -1, &st,
                                NULL);
    if (rc == SQLITE_OK) {
        sqlite3_bind_int(st, 1, version);
        rc = sqlite3_step(st);
        *has = rc == SQLITE_ROW;
        rc = (rc == SQLITE_ROW || rc == SQLITE_DONE) ? SQLITE_OK : rc;
    }
    if (rc != SQLITE_OK) {
        *err = apr_pstrdup(p, sqlite3_errmsg(c));
    }
    sqlite3_finalize(st);
    return rc == SQLITE_OK ? 0 : -1;
}

static int sq_record(sqlite3 *c, apr_pool_t *p, const jr_migration_t *m, const char **err)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(
        c, "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)", -1, &st,
        NULL);
    if (rc == SQLITE_OK) {
        sqlite3_bind_int(st, 1, m->version);
        sqlite3_bind_text(st, 2, m->name, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 3, jr_now_iso(p), -1, SQLITE_TRANSIENT);
        rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
    }
    if (rc != SQLITE_OK) {
        *err = apr_pstrdup(p, sqlite3_errmsg(c));
    }
    sqlite3_finalize(st);
    return rc == SQLITE_OK ? 0 : -1;
}

static int sq_current(sqlite3 *c, int *version)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(c, "SELECT COALESCE(MAX(version), 0) FROM schema_migrations", -1,
                                &st, NULL);
    *version = 0;
    if (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
        *version = sqlite3_column_int(st, 0);
    }
    sqlite3_finalize(st);
    return rc == SQLITE_OK ? 0 : -1;
}

static apr_status_t migrate_sqlite(sqlite3 *c, apr_pool_t *p, int *applied, int *version,
                                   const char **err)
{
    const jr_migration_t *m;
    /* WAL is a property of the file: set once here, it holds for every later connection. */
    if (sq_exec(c, p, "PRAGMA journal_mode = WAL;", err) ||
        sq_exec(c, p,
                "CREATE TABLE IF NOT EXISTS schema_migrations ("
                " version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL);",
                err)) {
        return APR_EGENERAL;
    }
    for (m = jr_migrations_sqlite; m->name; ++m) {
        int has = 0;
        if (sq_exec(c, p, "BEGIN IMMEDIATE;", err)) {
            return APR_EGENERAL;
        }
        if (sq_has_version(c, m->version, &has, err, p) ||
            (!has && (sq_exec(c, p, m->sql, err) || sq_record(c, p, m, err)))) {
            const char *e = apr_psprintf(p, "migration %s: %s", m->name, *err);
            sq_exec(c, p, "ROLLBACK;", err);
            *err = e;
            return APR_EGENERAL;
        }
        if (sq_exec(c, p, "COMMIT;", err)) {
            return APR_EGENERAL;
        }
        *applied += !has;
    }
    sq_current(c, version);
    return APR_SUCCESS;
}

/* ---- PostgreSQL: native handle, PQexec runs multi-statement scripts ------------------ */

static int pg_ok(PGresult *r)
{
    ExecStatusType s = PQresultStatus(r);
    return s == PGRES_COMMAND_OK || s == PGRES_TUPLES_OK;
}

static int pg_exec(PGconn *c, apr_pool_t *p, const char *sql, const char **err)
{
    PGresult *r = PQexec(c, sql);
    int ok = pg_ok(r);
    if (!ok) {
        *err = apr_pstrdup(p, PQerrorMessage(c));
    }
    PQclear(r);
    return ok ? 0 : -1;
}

static int pg_param(PGconn *c, apr_pool_t *p, const char *sql, int n, const char *const *vals,
                    int *rows, const char **err)
{
    PGresult *r = PQexecParams(c, sql, n, NULL, vals, NULL, NULL, 0);
    int ok = pg_ok(r);
    if (!ok) {
        *err = apr_pstrdup(p, PQerrorMessage(c));
    } else if (rows) {
        *rows = PQntuples(r);
    }
    PQclear(r);
    return ok ? 0 : -1;
}

static apr_status_t migrate_pgsql(PGconn *c, apr_pool_t *p, int *applied, const char **err)
{
    const jr_migration_t *m;
    apr_status_t rv = APR_SUCCESS;
    /* One node migrates at a time; the others wait and then find nothing left to do. */
    if (pg_exec(c, p, "SELECT pg_advisory_lock(" JR_PG_MIGRATION_LOCK ")", err)) {
        return APR_EGENERAL;
    }
    if (pg_exec(c, p,
                "CREATE TABLE IF NOT EXISTS schema_migrations ("
                " version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)",
                err)) {
        rv = APR_EGENERAL;
    }
    for (m = jr_migrations_pgsql; rv == APR_SUCCESS && m->name; ++m) {
        const char *v = apr_itoa(p, m->version);
        const char *rec[3];
        int rows = 0;
        rec[0] = v;
        rec[1] = m->name;
        rec[2] = jr_now_iso(p);
        if (pg_exec(c, p, "BEGIN", err) ||
            pg_param(c, p, "SELECT 1 FROM schema_migrations WHERE version = $1", 1, rec, &rows,
                     err) ||
            (rows == 0 &&
             (pg_exec(c, p, m->sql, err) ||
              pg_param(c, p,
                       "INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)",
                       3, rec, NULL, err))) ||
            pg_exec(c, p, "COMMIT", err)) {
            const char *e = apr_psprintf(p, "migration %s: %s", m->name, *err);
            pg_exec(c, p, "ROLLBACK", err);
            *err = e;
            rv = APR_EGENERAL;
            break;
        }
        *applied += rows == 0;
    }
    {
        const char *ignored;
        pg_exec(c, p, "SELECT pg_advisory_unlock(" JR_PG_MIGRATION_LOCK ")", &ignored);
    }
    return rv;
}

apr_status_t jr_migrate(jr_db_t *db, apr_pool_t *p, int *applied, int *version, const char **err)
{
    apr_status_t rv;
    *applied = 0;
    *version = 0;
    if (db->dialect == JR_DB_SQLITE) {
        rv = migrate_sqlite(apr_dbd_native_handle(db->driver, db->handle), p, applied, version, err);
    } else {
        rv = migrate_pgsql(apr_dbd_native_handle(db->driver, db->handle), p, applied, err);
        if (rv == APR_SUCCESS) {
            rv = jr_migrate_current(db, p, version, err);
        }
    }
    if (rv == APR_SUCCESS && *applied) {
        JR_LOG(JR01010, 0, "applied %d migration(s); schema version %d", *applied,
               *version);
    }
    return rv;
}

apr_status_t jr_migrate_current(jr_db_t *db, apr_pool_t *p, int *version, const char **err)
{
    *version = 0;
    if (db->dialect == JR_DB_SQLITE) {
        sqlite3 *c = apr_dbd_native_handle(db->driver, db->handle);
        if (sq_current(c, version) != 0) {
            *err = "schema_migrations is missing";
            return APR_EGENERAL;
        }
    } else {
        PGconn *c = apr_dbd_native_handle(db->driver, db->handle);
        PGresult *r = PQexec(c, "SELECT COALESCE(MAX(version), 0) FROM schema_migrations");
        if (PQresultStatus(r) != PGRES_TUPLES_OK) {
            *err = apr_pstrdup(p, PQerrorMessage(c));
            PQclear(r);
            return APR_EGENERAL;
        }
        *version = atoi(PQgetvalue(r, 0, 0));
        PQclear(r);
    }
    return APR_SUCCESS;
}
