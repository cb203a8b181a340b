#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include <apr_strings.h>
#include <libpq-fe.h>
#include <sqlite3.h>

#include "jr_db.h"
#include "jr_log.h"
#include "jr_stmts.h"
#include "jr_util.h"

#define JR_SQLITE_BUSY_MS "2000"

/* The pool userdata of a mod_dbd connection's pool that holds the module's statement cache. */
#define JR_STMT_CACHE_KEY "jr:stmts"

/* PostgreSQL names the module's prepared statements jr_<label>. */
#define JR_PG_STMT_PREFIX "jr_"

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
        JR_LOG(JR01001, 0, "rolling back a transaction left open by a request");
        jr_db_rollback(db);
    }
    return APR_SUCCESS;
}

struct jr_stmt_cache {
    const apr_dbd_driver_t *driver;
    apr_dbd_t *handle;      /* the connection the statements were prepared on */
    apr_pool_t *pool;       /* the cache's own pool (a subpool), destroyed before the
                             * connection closes: the statements go with it */
    apr_pool_t *conn_pool;  /* where jr_db_use finds the cache (NULL: our own connection) */
    apr_hash_t *stmts;      /* label -> sqlite3_stmt* or apr_dbd_prepared_t* */
    jr_dialect_e dialect;
    int backend_pid;        /* PostgreSQL: the server session the statements belong to */
};

static jr_db_t *wrap(apr_pool_t *p, jr_stmt_cache_t *cache)
{
    jr_db_t *db = apr_pcalloc(p, sizeof(*db));
    db->driver = cache->driver;
    db->handle = cache->handle;
    db->cache = cache;
    db->prepared = cache->stmts;
    db->pool = p;
    db->dialect = cache->dialect;
    apr_pool_cleanup_register(p, db, rollback_on_cleanup, apr_pool_cleanup_null);
    return db;
}

/* Foreign keys on, without expiring the statements already prepared on the connection when they
 * are on already (PRAGMA foreign_keys expires them whatever the value was). */
static int sqlite_foreign_keys(sqlite3 *conn)
{
    int on = 0;
    sqlite3_db_config(conn, SQLITE_DBCONFIG_ENABLE_FKEY, -1, &on);
    if (!on) {
        if (sqlite3_next_stmt(conn, NULL)) {
            JR_LOG(JR01022, 0,
                   "SQLite connection to %s opened without foreign keys after statements "
                   "were prepared on it; turning them on now makes the statements of other "
                   "mod_dbd users fail on this connection",
                   sqlite3_db_filename(conn, "main"));
        }
        sqlite3_db_config(conn, SQLITE_DBCONFIG_ENABLE_FKEY, 1, &on);
    }
    return on;
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
                              "PRAGMA synchronous = NORMAL;",
                              NULL, NULL, &msg);
        if (rc != SQLITE_OK || !sqlite_foreign_keys(conn)) {
            JR_LOG(JR01002, 0, "SQLite connection setup failed: %s",
                   msg ? msg : sqlite3_errmsg(conn));
            sqlite3_free(msg);
            return APR_EGENERAL;
        }
    }
    return APR_SUCCESS;
}

/* The database files of jr_db_sqlite_preconfigure, by device and inode (a path may be relative
 * or reach the file through links). Written by httpd's parent while it reads its configuration,
 * before any child or thread exists; read when connections open. */
#define JR_SQLITE_FILES_MAX 16
static struct {
    dev_t dev;
    ino_t ino;
} sqlite_files[JR_SQLITE_FILES_MAX];
static int sqlite_nfiles;

static int sqlite_file_index(const struct stat *st)
{
    int i;
    for (i = 0; i < sqlite_nfiles; ++i) {
        if (sqlite_files[i].dev == st->st_dev && sqlite_files[i].ino == st->st_ino) {
            return i;
        }
    }
    return -1;
}

/* An SQLite auto-extension: runs inside sqlite3_open, before the opener prepares anything. */
static int sqlite_on_open(sqlite3 *conn, char **err, const sqlite3_api_routines *api)
{
    const char *file = sqlite3_db_filename(conn, "main");
    struct stat st;
    (void)err;
    (void)api;
    if (file && *file && stat(file, &st) == 0 && sqlite_file_index(&st) >= 0) {
        sqlite3_db_config(conn, SQLITE_DBCONFIG_ENABLE_FKEY, 1, (int *)NULL);
        /* mod_dbd prepares the other modules' statements (mod_authn_dbd, DBDPrepareSQL)
         * before any hook of ours: without a busy timeout from the start, a connection opened
         * while another process checkpoints the WAL (the last connection closing, DBDKeep 0)
         * failed its preparation at once with "database is locked" (AH00632). */
        sqlite3_busy_timeout(conn, atoi(JR_SQLITE_BUSY_MS));
    }
    return SQLITE_OK;
}

/* Before the module's code is unloaded (a restart), SQLite must forget the function. The
 * list itself is released too: cancelling leaves it allocated, and SQLite may be unloaded
 * with the module (16 bytes lost at every restart). No other user of SQLite in httpd
 * registers automatic extensions. */
static apr_status_t sqlite_forget_files(void *data)
{
    (void)data;
    sqlite3_cancel_auto_extension((void (*)(void))sqlite_on_open);
    sqlite3_reset_auto_extension();
    sqlite_nfiles = 0;
    return APR_SUCCESS;
}

apr_status_t jr_db_sqlite_preconfigure(apr_pool_t *pconf, const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        return APR_FROM_OS_ERROR(errno);
    }
    if (sqlite_file_index(&st) >= 0) {
        return APR_SUCCESS;
    }
    if (sqlite_nfiles == JR_SQLITE_FILES_MAX) {
        return APR_ENOSPC;
    }
    if (sqlite_nfiles == 0) {
        if (sqlite3_auto_extension((void (*)(void))sqlite_on_open) != SQLITE_OK) {
            return APR_EGENERAL;
        }
        apr_pool_cleanup_register(pconf, NULL, sqlite_forget_files, apr_pool_cleanup_null);
    }
    sqlite_files[sqlite_nfiles].dev = st.st_dev;
    sqlite_files[sqlite_nfiles].ino = st.st_ino;
    ++sqlite_nfiles;
    return APR_SUCCESS;
}

static apr_status_t close_on_cleanup(void *data)
{
    jr_db_close(data);
    return APR_SUCCESS;
}

/* Releases a cache when its pool goes: finalizes the native SQLite statements (before the
 * connection closes: sqlite3_close refuses a connection with statements) and detaches it from
 * its connection. PostgreSQL statements end with the server session. */
static apr_status_t release_cache(void *data)
{
    jr_stmt_cache_t *c = data;
    void *attached = NULL;
    if (c->dialect == JR_DB_SQLITE) {
        apr_hash_index_t *hi;
        for (hi = apr_hash_first(NULL, c->stmts); hi; hi = apr_hash_next(hi)) {
            void *stmt;
            apr_hash_this(hi, NULL, NULL, &stmt);
            sqlite3_finalize(stmt);
        }
    }
    if (c->conn_pool && apr_pool_userdata_get(&attached, JR_STMT_CACHE_KEY, c->conn_pool) ==
                            APR_SUCCESS &&
        attached == c) {
        apr_pool_userdata_setn(NULL, JR_STMT_CACHE_KEY, NULL, c->conn_pool);
    }
    return APR_SUCCESS;
}

/* A cache in a pool of its own under parent: a failed preparation or a replaced cache takes
 * all its memory with it. */
static jr_stmt_cache_t *cache_new(const apr_dbd_driver_t *driver, apr_dbd_t *handle,
                                  apr_pool_t *parent)
{
    apr_pool_t *pool;
    jr_stmt_cache_t *c;
    if (apr_pool_create(&pool, parent) != APR_SUCCESS) {
        return NULL;
    }
    c = apr_pcalloc(pool, sizeof(*c));
    c->driver = driver;
    c->handle = handle;
    c->pool = pool;
    c->stmts = apr_hash_make(pool);
    c->dialect = jr_db_dialect_of(apr_dbd_name(driver));
    apr_pool_cleanup_register(pool, c, release_cache, apr_pool_cleanup_null);
    return c;
}

/* Our own connection forgets its cache when the cache's pool goes first (its parent's
 * destruction), so that jr_db_close does not release it twice. */
static apr_status_t forget_cache(void *data)
{
    jr_db_t *db = data;
    db->cache = NULL;
    db->prepared = NULL;
    return APR_SUCCESS;
}

apr_status_t jr_db_open(jr_db_t **pdb, apr_pool_t *p, const char *driver_name,
                        const char *params, const char **err)
{
    const apr_dbd_driver_t *driver;
    apr_dbd_t *handle = NULL;
    const char *dberr = NULL;
    jr_stmt_cache_t *cache;
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
    if (!(cache = cache_new(driver, handle, p))) {
        *err = "out of memory";
        apr_dbd_close(driver, handle);
        return APR_ENOMEM;
    }
    db = wrap(p, cache);
    apr_pool_cleanup_register(cache->pool, db, forget_cache, apr_pool_cleanup_null);
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

/* Prepares one statement of the catalog into the cache. */
static int prepare_one(jr_stmt_cache_t *c, const jr_stmt_def_t *d, sqlite3 *conn)
{
    void *stmt = NULL, *old = apr_hash_get(c->stmts, d->label, APR_HASH_KEY_STRING);
    int rc;
    if (conn) {
        /* SQLite runs natively: sqlite3_prepare_v2 statements re-prepare themselves after
         * schema changes, and no driver-wide mutex serialises the queries. */
        rc = sqlite3_prepare_v2(conn, sqlite_sql(c->pool, jr_stmt_sql(d, c->dialect)), -1,
                                (sqlite3_stmt **)&stmt, NULL);
        if (rc == SQLITE_OK && old) {
            sqlite3_finalize(old);
        }
    } else {
        /* The server-side name carries a prefix of its own: the session's statement names
         * are shared with the other mod_dbd users of the connection. */
        rc = apr_dbd_prepare(c->driver, c->pool, c->handle, jr_stmt_sql(d, c->dialect),
                             apr_pstrcat(c->pool, JR_PG_STMT_PREFIX, d->label, NULL),
                             (apr_dbd_prepared_t **)&stmt);
    }
    if (rc != 0) {
        JR_LOG(JR01003, 0, "cannot prepare statement %s: %s", d->label,
               conn ? sqlite3_errmsg(conn) : apr_dbd_error(c->driver, c->handle, rc));
        return rc;
    }
    apr_hash_set(c->stmts, d->label, APR_HASH_KEY_STRING, stmt);
    return 0;
}

/* Prepares every statement of the catalog into the cache. On PostgreSQL it notes the server
 * session they belong to. */
static apr_status_t prepare_catalog(jr_stmt_cache_t *c)
{
    sqlite3 *conn = c->dialect == JR_DB_SQLITE ? apr_dbd_native_handle(c->driver, c->handle) : NULL;
    const jr_stmt_def_t *const *t;
    const jr_stmt_def_t *d;
    for (t = jr_stmt_tables; *t; ++t) {
        for (d = *t; d->label; ++d) {
            if (prepare_one(c, d, conn) != 0) {
                return APR_EGENERAL;
            }
        }
    }
    if (c->dialect == JR_DB_PGSQL) {
        c->backend_pid = PQbackendPID(apr_dbd_native_handle(c->driver, c->handle));
    }
    return APR_SUCCESS;
}

apr_status_t jr_db_prepare_all(jr_db_t *db)
{
    return prepare_catalog(db->cache);
}

/* PostgreSQL keeps the statements prepared before a failure under their names, in the
 * session: they are released, so that a later attempt on the session can prepare them. */
static void pg_deallocate(jr_stmt_cache_t *c)
{
    apr_hash_index_t *hi;
    for (hi = apr_hash_first(NULL, c->stmts); hi; hi = apr_hash_next(hi)) {
        const void *label;
        int n = 0;
        apr_hash_this(hi, &label, NULL, NULL);
        apr_dbd_query(c->driver, c->handle, &n,
                      apr_pstrcat(c->pool, "DEALLOCATE " JR_PG_STMT_PREFIX, label, NULL));
    }
}

static jr_stmt_cache_t *attach(const apr_dbd_driver_t *driver, apr_dbd_t *handle,
                               apr_pool_t *conn_pool, apr_pool_t *parent)
{
    jr_stmt_cache_t *c = cache_new(driver, handle, parent);
    if (!c) {
        return NULL;
    }
    if (prepare_catalog(c) != APR_SUCCESS) {
        if (c->dialect == JR_DB_PGSQL) {
            pg_deallocate(c);
        }
        apr_pool_destroy(c->pool); /* what was prepared goes now */
        return NULL;
    }
    c->conn_pool = conn_pool;
    apr_pool_userdata_setn(c, JR_STMT_CACHE_KEY, NULL, conn_pool);
    return c;
}

apr_status_t jr_db_attach(const apr_dbd_driver_t *driver, apr_dbd_t *handle, apr_pool_t *conn_pool,
                          apr_pool_t *stmt_pool)
{
    return attach(driver, handle, conn_pool, stmt_pool) ? APR_SUCCESS : APR_EGENERAL;
}

/* PostgreSQL: a connection that libpq reset after a failure is a new server session without
 * the prepared statements. A changed backend PID tells. */
static int pg_session_changed(const jr_stmt_cache_t *c)
{
    int pid = PQbackendPID(apr_dbd_native_handle(c->driver, c->handle));
    return pid != c->backend_pid && pid != 0;
}

jr_db_t *jr_db_use(apr_pool_t *p, const apr_dbd_driver_t *driver, apr_dbd_t *handle,
                   apr_pool_t *conn_pool)
{
    void *found = NULL;
    jr_stmt_cache_t *c;
    apr_pool_userdata_get(&found, JR_STMT_CACHE_KEY, conn_pool);
    c = found;
    if (c && c->handle == handle && c->dialect == JR_DB_PGSQL && pg_session_changed(c)) {
        JR_LOG(JR01008, 0, "database session was reset; preparing statements again");
        apr_pool_destroy(c->pool);
        c = NULL;
    } else if (!c || c->handle != handle) {
        JR_LOG(JR01021, 0, "the module's statements were not prepared when this "
                           "database connection opened; preparing them now");
        c = NULL;
    }
    /* Under conn_pool the statements live as long as the connection: its subpools go before
     * its cleanups, mod_dbd's closing of the connection among them. */
    if (!c && (jr_db_setup_connection(driver, handle) != APR_SUCCESS ||
               !(c = attach(driver, handle, conn_pool, conn_pool)))) {
        return NULL;
    }
    return wrap(p, c);
}

apr_status_t jr_db_revalidate(jr_db_t *db)
{
    if (!db->cache || db->dialect != JR_DB_PGSQL || !pg_session_changed(db->cache)) {
        return APR_SUCCESS;
    }
    JR_LOG(JR01008, 0, "database session was reset; preparing statements again");
    return prepare_catalog(db->cache);
}

void jr_db_close(jr_db_t *db)
{
    if (db && db->handle) {
        if (db->in_tx) {
            jr_db_rollback(db);
        }
        if (db->cache) {
            apr_pool_destroy(db->cache->pool);
        }
        apr_dbd_close(db->driver, db->handle);
        db->handle = NULL;
    }
}

static void *lookup(jr_db_t *db, const char *label)
{
    void *stmt = apr_hash_get(db->prepared, label, APR_HASH_KEY_STRING);
    if (!stmt) {
        JR_LOG(JR01004, 0, "statement %s is not prepared on this connection", label);
    }
    return stmt;
}

static void note_error(jr_db_t *db, apr_pool_t *p, const char *label, int rc)
{
    const char *msg = apr_dbd_error(db->driver, db->handle, rc);
    db->last_error = apr_pstrdup(p, msg ? msg : "unknown database error");
    if (!jr_db_unique_violation(db)) {
        JR_LOG(JR01005, 0, "statement %s failed: %s", label, db->last_error);
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
        JR_LOG(JR01005, 0, "statement %s failed: %s", label, db->last_error);
    }
    sqlite3_reset(st);
}

jr_db_column_text_fn *jr_db_test_column_text;

/* A value or a column name that could not be read: the select fails (a database error), it
 * never hands out a NULL that the caller would take for SQL NULL. */
static apr_status_t read_failure(jr_db_t *db, const char *label, const char *what)
{
    db->last_error = what;
    JR_LOG(JR01020, 0, "statement %s failed: %s", label, what);
    return APR_EGENERAL;
}

static apr_status_t sq_read_error(jr_db_t *db, const char *label, sqlite3_stmt *st,
                                  const char *what)
{
    sqlite3_reset(st);
    return read_failure(db, label, what);
}

/* Binds the arguments and reads the column names into shape: the start of a native select. */
static apr_status_t sq_start(jr_db_t *db, apr_pool_t *p, const char *label, sqlite3_stmt *st,
                             jr_rows_t *shape, int nargs, const char **args)
{
    int c;
    if (sq_bind(st, nargs, args) != SQLITE_OK) {
        sq_error(db, p, label, st);
        return APR_EGENERAL;
    }
    memset(shape, 0, sizeof(*shape));
    shape->ncols = sqlite3_column_count(st);
    shape->names = apr_palloc(p, sizeof(char *) * (apr_size_t)(shape->ncols + 1));
    for (c = 0; c < shape->ncols; ++c) {
        const char *name = sqlite3_column_name(st, c);
        if (!name) {
            return sq_read_error(db, label, st, "a column name could not be read");
        }
        shape->names[c] = apr_pstrdup(p, name);
    }
    return APR_SUCCESS;
}

/* The current row's values: copied into p, or (copy 0) pointers into the statement's buffers,
 * valid until the next step.
 *
 * sqlite3_column_text returns NULL for SQL NULL, and also when converting a value to text runs
 * out of memory. Then SQLite turns the value into NULL (its type no longer tells) and sets the
 * connection's error code to SQLITE_NOMEM, which stays for the rest of the row (each step
 * resets it). So a row with a NULL is checked once, after its values and before anyone sees
 * them, and the select fails instead of handing out a NULL that would mean "no restriction" or
 * "never expires". A row without NULLs costs nothing more. */
static inline apr_status_t sq_row(jr_db_t *db, apr_pool_t *p, const char *label,
                                  sqlite3_stmt *st, int ncols, const char **vals, int copy)
{
    jr_db_column_text_fn *text = jr_db_test_column_text ? jr_db_test_column_text
                                                        : sqlite3_column_text;
    int c, nulls = 0;
    for (c = 0; c < ncols; ++c) {
        const char *v = (const char *)text(st, c);
        if (!v) {
            nulls = 1;
        } else if (copy) {
            v = apr_pstrmemdup(p, v, (apr_size_t)sqlite3_column_bytes(st, c));
        }
        vals[c] = v;
    }
    if (nulls && sqlite3_errcode(sqlite3_db_handle(st)) == SQLITE_NOMEM) {
        return sq_read_error(db, label, st, "a value could not be read (out of memory)");
    }
    return APR_SUCCESS;
}

static apr_status_t sq_select(jr_db_t *db, apr_pool_t *p, const char *label, sqlite3_stmt *st,
                              jr_rows_t **out, int nargs, const char **args)
{
    apr_array_header_t *rows;
    jr_rows_t *r = apr_palloc(p, sizeof(*r));
    int rc;

    if (sq_start(db, p, label, st, r, nargs, args) != APR_SUCCESS) {
        return APR_EGENERAL;
    }
    rows = apr_array_make(p, 16, sizeof(const char **));
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char **vals = apr_palloc(p, sizeof(char *) * (apr_size_t)(r->ncols + 1));
        if (sq_row(db, p, label, st, r->ncols, vals, 1) != APR_SUCCESS) {
            return APR_EGENERAL;
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

/* One value of a PostgreSQL row, copied. The driver answers APR_ENOENT for SQL NULL and
 * otherwise points into the result, which libpq holds whole in memory: anything else is an
 * error, never a NULL. */
static apr_status_t pg_value(jr_db_t *db, apr_pool_t *p, const char *label, apr_dbd_row_t *row,
                             int c, const char **out)
{
    char *v = NULL;
    apr_status_t rv = apr_dbd_datum_get(db->driver, row, c, APR_DBD_TYPE_STRING, &v);
    *out = NULL;
    if (rv == APR_ENOENT) {
        return APR_SUCCESS;
    }
    if (rv != APR_SUCCESS || !v) {
        return read_failure(db, label, "a value could not be read");
    }
    *out = apr_pstrdup(p, v);
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
        const char *name = apr_dbd_get_name(db->driver, res, c);
        if (!name) {
            return read_failure(db, label, "a column name could not be read");
        }
        r->names[c] = apr_pstrdup(p, name);
    }
    rows = apr_array_make(p, 16, sizeof(const char **));
    while (apr_dbd_get_row(db->driver, p, res, &row, -1) == 0) {
        const char **vals = apr_palloc(p, sizeof(char *) * (apr_size_t)(r->ncols + 1));
        for (c = 0; c < r->ncols; ++c) {
            if (pg_value(db, p, label, row, c, &vals[c]) != APR_SUCCESS) {
                return APR_EGENERAL;
            }
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
    int rc, i;

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
    if (sq_start(db, p, label, st, &shape, nargs, args) != APR_SUCCESS) {
        return APR_EGENERAL;
    }
    row = apr_palloc(p, sizeof(char *) * (apr_size_t)(shape.ncols + 1));
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (sq_row(db, p, label, st, shape.ncols, row, 0) != APR_SUCCESS) {
            return APR_EGENERAL;
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
            JR_LOG(JR01006, 0, "%s failed: %s", sql, db->last_error);
            return APR_EGENERAL;
        }
        return APR_SUCCESS;
    }
    rc = apr_dbd_query(db->driver, db->handle, &n, sql);
    if (rc != 0) {
        const char *msg = apr_dbd_error(db->driver, db->handle, rc);
        db->last_error = msg;
        JR_LOG(JR01006, 0, "%s failed: %s", sql, msg ? msg : "?");
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
    JR_LOG(JR01007, 0, "result has no column %s", col);
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
