#include <string.h>

#include <apr_strings.h>
#include <libpq-fe.h>
#include <sqlite3.h>

#include "jr_db.h"
#include "jr_log.h"
#include "jr_stmts.h"
#include "jr_util.h"

#define JR_SQLITE_BUSY_MS "2000"

void jr_db_global_init(void)
{
    /* Fails harmlessly (SQLITE_MISUSE) when SQLite was initialised already. */
    sqlite3_config(SQLITE_CONFIG_MULTITHREAD);
}

jr_dialect_e jr_db_dialect_of(const char *name)
{
    if (!name) {
        return 0;
    }
    if (!strcmp(name, "sqlite3")) {
        return JR_DB_SQLITE;
    }
    if (!strcmp(name, "pgsql")) {
        return JR_DB_PGSQL;
    }
    return 0;
}

static apr_status_t rollback_on_cleanup(void *data)
{
    jr_db_t *db = data;
    if (db->in_tx) {
        jr_log(JR_LOG_WARN, 0, "JR01001: rolling back a transaction left open by a request");
        jr_db_rollback(db);
    }
    return APR_SUCCESS;
}

jr_db_t *jr_db_wrap(apr_pool_t *p, const apr_dbd_driver_t *driver, apr_dbd_t *handle,
                    apr_hash_t *prepared)
{
    jr_db_t *db = apr_pcalloc(p, sizeof(*db));
    db->driver = driver;
    db->handle = handle;
    db->prepared = prepared;
    db->pool = p;
    db->dialect = jr_db_dialect_of(apr_dbd_name(driver));
    apr_pool_cleanup_register(p, db, rollback_on_cleanup, apr_pool_cleanup_null);
    return db;
}

apr_status_t jr_db_setup_connection(const apr_dbd_driver_t *driver, apr_dbd_t *handle)
{
    if (jr_db_dialect_of(apr_dbd_name(driver)) == JR_DB_SQLITE) {
        sqlite3 *conn = apr_dbd_native_handle(driver, handle);
        char *msg = NULL;
        /* The driver's own retry loop releases its mutex between tries; a moderate
         * busy_timeout covers longer writers in other processes. */
        int rc = sqlite3_exec(conn,
                              "PRAGMA busy_timeout = " JR_SQLITE_BUSY_MS ";"
                              "PRAGMA foreign_keys = ON;"
                              "PRAGMA synchronous = NORMAL;",
                              NULL, NULL, &msg);
        if (rc != SQLITE_OK) {
            jr_log(JR_LOG_ERR, 0, "JR01002: SQLite connection setup failed: %s", msg ? msg : "?");
            sqlite3_free(msg);
            return APR_EGENERAL;
        }
    }
    return APR_SUCCESS;
}

static apr_status_t close_on_cleanup(void *data)
{
    jr_db_close(data);
    return APR_SUCCESS;
}

apr_status_t jr_db_open(jr_db_t **pdb, apr_pool_t *p, const char *driver_name,
                        const char *params, const char **err)
{
    const apr_dbd_driver_t *driver;
    apr_dbd_t *handle = NULL;
    const char *dberr = NULL;
    apr_status_t rv;
    jr_db_t *db;

    *pdb = NULL;
    if (!jr_db_dialect_of(driver_name)) {
        *err = apr_psprintf(p, "unsupported database driver '%s' (use sqlite3 or pgsql)",
                            driver_name ? driver_name : "");
        return APR_EINVAL;
    }
    apr_dbd_init(p);
    if ((rv = apr_dbd_get_driver(p, driver_name, &driver)) != APR_SUCCESS) {
        *err = apr_psprintf(p, "cannot load the apr_dbd %s driver (is libaprutil1-dbd-%s installed?)",
                            driver_name, driver_name);
        return rv;
    }
    if ((rv = apr_dbd_open_ex(driver, p, params, &handle, &dberr)) != APR_SUCCESS) {
        *err = apr_psprintf(p, "cannot open the %s database: %s", driver_name,
                            dberr ? dberr : "unknown error");
        return rv;
    }
    if ((rv = jr_db_setup_connection(driver, handle)) != APR_SUCCESS) {
        *err = "connection setup failed";
        apr_dbd_close(driver, handle);
        return rv;
    }
    db = apr_pcalloc(p, sizeof(*db));
    db->driver = driver;
    db->handle = handle;
    db->pool = p;
    db->prepared = apr_hash_make(p);
    db->dialect = jr_db_dialect_of(driver_name);
    /* Our own connection: closed (after a rollback if needed) with its pool. */
    apr_pool_cleanup_register(p, db, close_on_cleanup, apr_pool_cleanup_null);
    *pdb = db;
    return APR_SUCCESS;
}

/* apr_dbd's placeholder syntax to SQLite's: %s becomes ?, %% becomes %. */
static const char *sqlite_sql(apr_pool_t *p, const char *sql)
{
    char *out = apr_palloc(p, strlen(sql) + 1), *o = out;
    for (; *sql; ++sql) {
        if (sql[0] == '%' && sql[1] == 's') {
            *o++ = '?';
            ++sql;
        } else if (sql[0] == '%' && sql[1] == '%') {
            *o++ = '%';
            ++sql;
        } else {
            *o++ = *sql;
        }
    }
    *o = '\0';
    return out;
}

/* Finalises the native SQLite statements of a label table (once: the table is emptied). It
 * runs before the connection closes: sqlite3_close refuses a connection with statements. */
static apr_status_t finalize_all(void *data)
{
    apr_hash_t *prepared = data;
    apr_hash_index_t *hi;
    for (hi = apr_hash_first(NULL, prepared); hi; hi = apr_hash_next(hi)) {
        void *stmt;
        apr_hash_this(hi, NULL, NULL, &stmt);
        sqlite3_finalize(stmt);
    }
    apr_hash_clear(prepared);
    return APR_SUCCESS;
}

apr_status_t jr_db_prepare_into(const apr_dbd_driver_t *driver, apr_dbd_t *handle,
                                apr_hash_t *prepared, apr_pool_t *pool)
{
    jr_dialect_e dialect = jr_db_dialect_of(apr_dbd_name(driver));
    sqlite3 *conn = dialect == JR_DB_SQLITE ? apr_dbd_native_handle(driver, handle) : NULL;
    const jr_stmt_def_t *const *t;
    const jr_stmt_def_t *d;
    if (conn) {
        apr_pool_cleanup_register(pool, prepared, finalize_all, apr_pool_cleanup_null);
    }
    for (t = jr_stmt_tables; *t; ++t) {
        for (d = *t; d->label; ++d) {
            void *stmt = NULL;
            int rc;
            if (conn) {
                /* SQLite runs natively: sqlite3_prepare_v2 statements re-prepare themselves
                 * after schema changes, and no driver-wide mutex serialises the queries. */
                rc = sqlite3_prepare_v2(conn, sqlite_sql(pool, jr_stmt_sql(d, dialect)), -1,
                                        (sqlite3_stmt **)&stmt, NULL);

            } else {
                rc = apr_dbd_prepare(driver, pool, handle, jr_stmt_sql(d, dialect), d->label,
                                     (apr_dbd_prepared_t **)&stmt);
            }
            if (rc != 0) {
                jr_log(JR_LOG_ERR, 0, "JR01003: cannot prepare statement %s: %s", d->label,
                       conn ? sqlite3_errmsg(conn) : apr_dbd_error(driver, handle, rc));
                return APR_EGENERAL;
            }
            apr_hash_set(prepared, d->label, APR_HASH_KEY_STRING, stmt);
        }
    }
    return APR_SUCCESS;
}

apr_status_t jr_db_prepare_all(jr_db_t *db)
{
    return jr_db_prepare_into(db->driver, db->handle, db->prepared, db->pool);
}

#define BACKEND_KEY "jr:backend-pid"

apr_status_t jr_db_revalidate(const apr_dbd_driver_t *driver, apr_dbd_t *handle,
                              apr_hash_t *prepared, apr_pool_t *pool)
{
    PGconn *conn;
    int pid, *known;
    if (jr_db_dialect_of(apr_dbd_name(driver)) != JR_DB_PGSQL) {
        return APR_SUCCESS;
    }
    conn = apr_dbd_native_handle(driver, handle);
    pid = PQbackendPID(conn);
    known = apr_hash_get(prepared, BACKEND_KEY, APR_HASH_KEY_STRING);
    if (!known) {
        /* First sight of this connection: mod_dbd prepared the statements when it opened. */
        known = apr_palloc(pool, sizeof(*known));
        *known = pid;
        apr_hash_set(prepared, BACKEND_KEY, APR_HASH_KEY_STRING, known);
        return APR_SUCCESS;
    }
    if (*known == pid || pid == 0) {
        return APR_SUCCESS;
    }
    jr_log(JR_LOG_WARN, 0, "JR01008: database session was reset; preparing statements again");
    if (jr_db_prepare_into(driver, handle, prepared, pool) != APR_SUCCESS) {
        return APR_EGENERAL;
    }
    *known = pid;
    return APR_SUCCESS;
}

void jr_db_close(jr_db_t *db)
{
    if (db && db->handle) {
        if (db->in_tx) {
            jr_db_rollback(db);
        }
        if (db->dialect == JR_DB_SQLITE) {
            apr_pool_cleanup_run(db->pool, db->prepared, finalize_all);
        }
        apr_dbd_close(db->driver, db->handle);
        db->handle = NULL;
    }
}

static void *lookup(jr_db_t *db, const char *label)
{
    void *stmt = apr_hash_get(db->prepared, label, APR_HASH_KEY_STRING);
    if (!stmt) {
        jr_log(JR_LOG_ERR, 0, "JR01004: statement %s is not prepared on this connection", label);
    }
    return stmt;
}

static void note_error(jr_db_t *db, apr_pool_t *p, const char *label, int rc)
{
    const char *msg = apr_dbd_error(db->driver, db->handle, rc);
    db->last_error = apr_pstrdup(p, msg ? msg : "unknown database error");
    if (!jr_db_unique_violation(db)) {
        jr_log(JR_LOG_ERR, 0, "JR01005: statement %s failed: %s", label, db->last_error);
    }
}

/* Binds the arguments of a native SQLite statement (text, or NULL). */
static int sq_bind(sqlite3_stmt *st, int nargs, const char **args)
{
    int i, rc = SQLITE_OK;
    sqlite3_reset(st);
    for (i = 0; i < nargs && rc == SQLITE_OK; ++i) {
        rc = args[i] ? sqlite3_bind_text(st, i + 1, args[i], -1, SQLITE_STATIC)
                     : sqlite3_bind_null(st, i + 1);
    }
    return rc;
}

static void sq_error(jr_db_t *db, apr_pool_t *p, const char *label, sqlite3_stmt *st)
{
    const char *msg = sqlite3_errmsg(sqlite3_db_handle(st));
    db->last_error = apr_pstrdup(p, msg ? msg : "unknown database error");
    if (!jr_db_unique_violation(db)) {
        jr_log(JR_LOG_ERR, 0, "JR01005: statement %s failed: %s", label, db->last_error);
    }
    sqlite3_reset(st);
}

static apr_status_t sq_select(jr_db_t *db, apr_pool_t *p, const char *label, sqlite3_stmt *st,
                              jr_rows_t **out, int nargs, const char **args)
{
    apr_array_header_t *rows;
    jr_rows_t *r;
    int rc, c;

    if (sq_bind(st, nargs, args) != SQLITE_OK) {
        sq_error(db, p, label, st);
        return APR_EGENERAL;
    }
    r = apr_pcalloc(p, sizeof(*r));
    r->ncols = sqlite3_column_count(st);
    r->names = apr_palloc(p, sizeof(char *) * (apr_size_t)(r->ncols + 1));
    for (c = 0; c < r->ncols; ++c) {
        r->names[c] = apr_pstrdup(p, sqlite3_column_name(st, c));
    }
    rows = apr_array_make(p, 16, sizeof(const char **));
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char **vals = apr_palloc(p, sizeof(char *) * (apr_size_t)(r->ncols + 1));
        for (c = 0; c < r->ncols; ++c) {
            const unsigned char *v = sqlite3_column_text(st, c);
            vals[c] = v ? apr_pstrmemdup(p, (const char *)v, (apr_size_t)sqlite3_column_bytes(st, c))
                        : NULL;
        }
        APR_ARRAY_PUSH(rows, const char **) = vals;
    }
    if (rc != SQLITE_DONE) {
        sq_error(db, p, label, st);
        return APR_EGENERAL;
    }
    sqlite3_reset(st);
    r->nrows = rows->nelts;
    r->rows = (const char ***)rows->elts;
    *out = r;
    return APR_SUCCESS;
}

static apr_status_t sq_exec(jr_db_t *db, apr_pool_t *p, const char *label, sqlite3_stmt *st,
                            int *nrows, int nargs, const char **args)
{
    int rc;
    if (sq_bind(st, nargs, args) != SQLITE_OK) {
        sq_error(db, p, label, st);
        return APR_EGENERAL;
    }
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    }
    if (rc != SQLITE_DONE) {
        sq_error(db, p, label, st);
        return APR_EGENERAL;
    }
    if (nrows) {
        *nrows = sqlite3_changes(sqlite3_db_handle(st));
    }
    sqlite3_reset(st);
    return APR_SUCCESS;
}

apr_status_t jr_db_select(jr_db_t *db, apr_pool_t *p, const char *label, jr_rows_t **out,
                          int nargs, const char **args)
{
    void *stmt = lookup(db, label);
    apr_dbd_results_t *res = NULL;
    apr_dbd_row_t *row = NULL;
    apr_array_header_t *rows;
    jr_rows_t *r;
    int rc, c;

    *out = NULL;
    if (!stmt) {
        return APR_EGENERAL;
    }
    db->last_error = NULL;
    if (db->dialect == JR_DB_SQLITE) {
        return sq_select(db, p, label, stmt, out, nargs, args);
    }
    if ((rc = apr_dbd_pselect(db->driver, p, db->handle, &res, stmt, 1, nargs, args)) != 0) {
        note_error(db, p, label, rc);
        return APR_EGENERAL;
    }
    r = apr_pcalloc(p, sizeof(*r));
    r->ncols = apr_dbd_num_cols(db->driver, res);
    r->names = apr_palloc(p, sizeof(char *) * (apr_size_t)(r->ncols + 1));
    for (c = 0; c < r->ncols; ++c) {
        /* Copies: the pgsql driver frees its result after the last row. */
        r->names[c] = apr_pstrdup(p, apr_dbd_get_name(db->driver, res, c));
    }
    rows = apr_array_make(p, 16, sizeof(const char **));
    while (apr_dbd_get_row(db->driver, p, res, &row, -1) == 0) {
        const char **vals = apr_palloc(p, sizeof(char *) * (apr_size_t)(r->ncols + 1));
        for (c = 0; c < r->ncols; ++c) {
            char *v = NULL;
            if (apr_dbd_datum_get(db->driver, row, c, APR_DBD_TYPE_STRING, &v) != APR_SUCCESS) {
                v = NULL;
            }
            vals[c] = v ? apr_pstrdup(p, v) : NULL;
        }
        APR_ARRAY_PUSH(rows, const char **) = vals;
    }
    r->nrows = rows->nelts;
    r->rows = (const char ***)rows->elts;
    *out = r;
    return APR_SUCCESS;
}

apr_status_t jr_db_exec(jr_db_t *db, apr_pool_t *p, const char *label, int *nrows, int nargs,
                        const char **args)
{
    void *stmt = lookup(db, label);
    int n = 0, rc;
    if (!stmt) {
        return APR_EGENERAL;
    }
    db->last_error = NULL;
    if (db->dialect == JR_DB_SQLITE) {
        return sq_exec(db, p, label, stmt, nrows, nargs, args);
    }
    if ((rc = apr_dbd_pquery(db->driver, p, db->handle, &n, stmt, nargs, args)) != 0) {
        note_error(db, p, label, rc);
        return APR_EGENERAL;
    }
    if (nrows) {
        *nrows = n;
    }
    return APR_SUCCESS;
}

apr_status_t jr_db_select_each(jr_db_t *db, apr_pool_t *p, const char *label, jr_row_fn *fn,
                               void *baton, int nargs, const char **args)
{
    sqlite3_stmt *st;
    jr_rows_t shape, *all;
    const char **row;
    apr_status_t rv;
    int rc, c, i;

    if (db->dialect != JR_DB_SQLITE) {
        if ((rv = jr_db_select(db, p, label, &all, nargs, args)) != APR_SUCCESS) {
            return rv;
        }
        for (i = 0; i < all->nrows && fn(baton, all, all->rows[i]) == 0; ++i) {
        }
        return APR_SUCCESS;
    }
    if (!(st = lookup(db, label))) {
        return APR_EGENERAL;
    }
    db->last_error = NULL;
    if (sq_bind(st, nargs, args) != SQLITE_OK) {
        sq_error(db, p, label, st);
        return APR_EGENERAL;
    }
    memset(&shape, 0, sizeof(shape));
    shape.ncols = sqlite3_column_count(st);
    shape.names = apr_palloc(p, sizeof(char *) * (apr_size_t)(shape.ncols + 1));
    row = apr_palloc(p, sizeof(char *) * (apr_size_t)(shape.ncols + 1));
    for (c = 0; c < shape.ncols; ++c) {
        shape.names[c] = apr_pstrdup(p, sqlite3_column_name(st, c));
    }
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        for (c = 0; c < shape.ncols; ++c) {
            row[c] = (const char *)sqlite3_column_text(st, c);
        }
        if (fn(baton, &shape, row) != 0) {
            rc = SQLITE_DONE;
            break;
        }
    }
    if (rc != SQLITE_DONE) {
        sq_error(db, p, label, st);
        return APR_EGENERAL;
    }
    sqlite3_reset(st);
    return APR_SUCCESS;
}

static apr_status_t plain(jr_db_t *db, const char *sql)
{
    int n = 0, rc;
    if (db->dialect == JR_DB_SQLITE) {
        sqlite3 *conn = apr_dbd_native_handle(db->driver, db->handle);
        if (sqlite3_exec(conn, sql, NULL, NULL, NULL) != SQLITE_OK) {
            db->last_error = sqlite3_errmsg(conn);
            jr_log(JR_LOG_ERR, 0, "JR01006: %s failed: %s", sql, db->last_error);
            return APR_EGENERAL;
        }
        return APR_SUCCESS;
    }
    rc = apr_dbd_query(db->driver, db->handle, &n, sql);
    if (rc != 0) {
        const char *msg = apr_dbd_error(db->driver, db->handle, rc);
        db->last_error = msg;
        jr_log(JR_LOG_ERR, 0, "JR01006: %s failed: %s", sql, msg ? msg : "?");
        return APR_EGENERAL;
    }
    return APR_SUCCESS;
}

apr_status_t jr_db_begin(jr_db_t *db)
{
    apr_status_t rv = plain(db, db->dialect == JR_DB_SQLITE ? "BEGIN IMMEDIATE" : "BEGIN");
    if (rv == APR_SUCCESS) {
        db->in_tx = 1;
    }
    return rv;
}

apr_status_t jr_db_commit(jr_db_t *db)
{
    apr_status_t rv = plain(db, "COMMIT");
    if (rv != APR_SUCCESS) {
        jr_db_rollback(db);
        return rv;
    }
    db->in_tx = 0;
    return APR_SUCCESS;
}

void jr_db_rollback(jr_db_t *db)
{
    int n = 0;
    db->in_tx = 0;
    if (db->dialect == JR_DB_SQLITE) {
        sqlite3_exec(apr_dbd_native_handle(db->driver, db->handle), "ROLLBACK", NULL, NULL, NULL);
    } else {
        apr_dbd_query(db->driver, db->handle, &n, "ROLLBACK");
    }
}

apr_status_t jr_db_ping(jr_db_t *db)
{
    apr_dbd_results_t *res = NULL;
    apr_dbd_row_t *row = NULL;
    apr_pool_t *p;
    apr_status_t rv = APR_SUCCESS;
    if (apr_pool_create(&p, db->pool) != APR_SUCCESS) {
        return APR_ENOMEM;
    }
    if (apr_dbd_check_conn(db->driver, p, db->handle) != APR_SUCCESS ||
        apr_dbd_select(db->driver, p, db->handle, &res, "SELECT 1", 1) != 0) {
        rv = APR_EGENERAL;
    } else {
        while (apr_dbd_get_row(db->driver, p, res, &row, -1) == 0) {
        }
    }
    apr_pool_destroy(p);
    return rv;
}

int jr_db_unique_violation(const jr_db_t *db)
{
    const char *m = db->last_error;
    return m && (strstr(m, "UNIQUE constraint failed") || strstr(m, "duplicate key value"));
}

static int col_index(const jr_rows_t *r, const char *col)
{
    int c;
    for (c = 0; c < r->ncols; ++c) {
        if (!strcmp(r->names[c], col)) {
            return c;
        }
    }
    jr_log(JR_LOG_ERR, 0, "JR01007: result has no column %s", col);
    return -1;
}

int jr_rows_col(const jr_rows_t *r, const char *col)
{
    return r ? col_index(r, col) : -1;
}

const char *jr_rows_get(const jr_rows_t *r, int row, const char *col)
{
    int c;
    if (!r || row < 0 || row >= r->nrows || (c = col_index(r, col)) < 0) {
        return NULL;
    }
    return r->rows[row][c];
}

long long jr_rows_int(const jr_rows_t *r, int row, const char *col, long long dflt)
{
    const char *v = jr_rows_get(r, row, col);
    long long n;
    if (!v || jr_parse_int64(v, -9223372036854775807LL, 9223372036854775807LL, &n) != 0) {
        return dflt;
    }
    return n;
}
