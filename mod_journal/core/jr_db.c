/* The generic database layer: finds the backend of a connection, keeps the module's statement
 * cache on mod_dbd's pooled connections (h8-dbd: docs/architecture.md §7.2), checks the schema
 * version, and dispatches every statement through the backend's function table. */
#include <stdio.h>
#include <string.h>

#include <apr_strings.h>

#include "jr_db.h"
#include "jr_db_backend.h"
#include "jr_log.h"
#include "jr_migrations.h"
#include "jr_util.h"

/* The pool userdata of a mod_dbd connection's pool that holds the module's statement cache. */
#define JR_STMT_CACHE_KEY "jr:stmts"

#define JR_SCHEMA_BEHIND \
    "database schema is older than this module: run journal-admin migrate"

static const jr_db_backend_t *const backends[] = {&jr_db_backend_sqlite, &jr_db_backend_pgsql,
                                                  NULL};

static const jr_db_backend_t *backend_of(const char *name)
{
    const jr_db_backend_t *const *b;
    for (b = backends; name && *b; ++b) {
        if (!strcmp((*b)->driver, name)) {
            return *b;
        }
    }
    return NULL;
}

void jr_db_global_init(void)
{
    const jr_db_backend_t *const *b;
    jr_stmts_init();
    for (b = backends; *b; ++b) {
        if ((*b)->global_init) {
            (*b)->global_init();
        }
    }
}

jr_dialect_e jr_db_dialect_of(const char *name)
{
    const jr_db_backend_t *be = backend_of(name);
    return be ? be->dialect : 0;
}

/* ---- failures ----------------------------------------------------------------------------- */

void jr_db_failed(jr_db_t *db, jr_stmt_id_t id, const char *sql, const char *msg)
{
    apr_cpystrn(db->errbuf, msg && *msg ? msg : "unknown database error", sizeof(db->errbuf));
    /* The first line: libpq ends its messages with a newline, and explains a lost connection
     * on the lines after. */
    db->errbuf[strcspn(db->errbuf, "\n")] = '\0';
    db->last_error = db->errbuf;
    db->error = db->be->classify(db);
    if (db->error == JR_DB_E_UNIQUE) {
        return; /* the operation answers it (409), it is no error of the module */
    }
    if (sql) {
        JR_LOG(JR01006, 0, "%s failed: %s", sql, db->last_error);
    } else {
        JR_LOG(JR01005, 0, "statement %s failed: %s", jr_stmt_label(id),
               db->last_error);
    }
}

apr_status_t jr_db_read_failure(jr_db_t *db, jr_stmt_id_t id, const char *what)
{
    db->last_error = what;
    db->error = JR_DB_E_OTHER;
    JR_LOG(JR01020, 0, "statement %s failed: %s", jr_stmt_label(id), what);
    return APR_EGENERAL;
}

jr_db_error_e jr_db_error(const jr_db_t *db)
{
    return db->error;
}

int jr_db_unique_violation(const jr_db_t *db)
{
    return db->error == JR_DB_E_UNIQUE;
}

const char *jr_db_placeholders(apr_pool_t *p, const char *sql, int numbered)
{
    /* "$" or "?" and a number of at most 3 digits replace the 2 bytes of "%s" or "%=". */
    char *out = apr_palloc(p, 2 * strlen(sql) + 1), *o = out;
    int n = 0;
    for (; *sql; ++sql) {
        if (sql[0] == '%' && sql[1] == 's') {
            o = numbered ? o + sprintf(o, "$%d", ++n) : (*o = '?', ++n, o + 1);
            ++sql;
        } else if (sql[0] == '%' && sql[1] == '=' && n > 0) {
            /* The previous parameter again: SQLite numbers a later bare "?" one past the
             * highest number it has seen, which this one is. */
            o += sprintf(o, numbered ? "$%d" : "?%d", n);
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

/* ---- the statement cache of a connection --------------------------------------------------- */

/* Leaves the write queue if db holds it (SQLite). */
static void write_leave(jr_db_t *db)
{
    if (db->be->write_leave) {
        db->be->write_leave(db);
    }
}

static apr_status_t rollback_on_cleanup(void *data)
{
    jr_db_t *db = data;
    if (db->in_tx) {
        JR_LOG(JR01001, 0, "rolling back a transaction left open by a request");
        jr_db_rollback(db);
    }
    write_leave(db); /* whatever happened before: a queue left held would stop every writer */
    return APR_SUCCESS;
}

static jr_db_t *wrap(apr_pool_t *p, jr_stmt_cache_t *cache)
{
    jr_db_t *db = apr_pcalloc(p, sizeof(*db));
    db->be = cache->be;
    db->driver = cache->driver;
    db->handle = cache->handle;
    db->native = cache->native;
    db->cache = cache;
    db->pool = p;
    db->dialect = cache->be->dialect;
    apr_pool_cleanup_register(p, db, rollback_on_cleanup, apr_pool_cleanup_null);
    return db;
}

static int behind(const jr_stmt_cache_t *c)
{
    return c->schema_have < c->schema_need;
}

/* Releases a cache when its pool goes: the backend finalizes (SQLite, before the connection
 * closes: sqlite3_close refuses a connection with statements) or deallocates (PostgreSQL, when
 * the session goes on) what the module prepared, and the cache is detached from its
 * connection. */
static apr_status_t release_cache(void *data)
{
    jr_stmt_cache_t *c = data;
    void *attached = NULL;
    c->be->release(c);
    if (c->conn_pool && apr_pool_userdata_get(&attached, JR_STMT_CACHE_KEY, c->conn_pool) ==
                            APR_SUCCESS &&
        attached == c) {
        apr_pool_userdata_setn(NULL, JR_STMT_CACHE_KEY, NULL, c->conn_pool);
    }
    return APR_SUCCESS;
}

/* A cache in a pool of its own under parent: a failed preparation or a replaced cache takes
 * all its memory with it. */
static jr_stmt_cache_t *cache_new(const jr_db_backend_t *be, const apr_dbd_driver_t *driver,
                                  apr_dbd_t *handle, apr_pool_t *parent)
{
    apr_pool_t *pool;
    jr_stmt_cache_t *c;
    if (apr_pool_create(&pool, parent) != APR_SUCCESS) {
        return NULL;
    }
    c = apr_pcalloc(pool, sizeof(*c));
    c->be = be;
    c->driver = driver;
    c->handle = handle;
    c->native = apr_dbd_native_handle(driver, handle);
    c->pool = pool;
    c->session = be->session ? be->session(c->native) : 0;
    c->plan_mode = -1; /* a session the module used before may have been left in either mode */
    apr_pool_cleanup_register(pool, c, release_cache, apr_pool_cleanup_null);
    return c;
}

/* Prepares statement id into the cache; the engine's message (JR01003) when it cannot. */
static const char *prepare_one(jr_stmt_cache_t *c, jr_stmt_id_t id)
{
    const char *err = NULL;
    if (c->be->prepare(c, id, &c->stmts[id], &err) == APR_SUCCESS) {
        return NULL;
    }
    err = err ? err : "unknown error";
    JR_LOG(JR01003, 0, "cannot prepare statement %s: %s", jr_stmt_label(id), err);
    c->stmts[id] = NULL;
    return err;
}

/* Prepares every statement of the catalogue on the connection (a statement the schema cannot
 * serve fails the connection here, not a request later); notes the server session they belong
 * to. A backend with unprepare keeps none of them: each is prepared again when first run. */
static apr_status_t prepare_catalogue(jr_stmt_cache_t *c)
{
    int id;
    for (id = 0; id < JR_Q__COUNT; ++id) {
        if (prepare_one(c, id)) {
            return APR_EGENERAL;
        }
        if (c->be->unprepare) {
            c->be->unprepare(c->stmts[id]);
            c->stmts[id] = NULL;
        }
    }
    c->session = c->be->session ? c->be->session(c->native) : 0;
    c->checked = 1;
    return APR_SUCCESS;
}

/* Statement id of a checked catalogue, not prepared on the connection yet: prepared now and
 * kept. A failure (the schema changed since the check) fails the statement. */
static void *prepare_on_use(jr_db_t *db, jr_stmt_id_t id)
{
    const char *err = prepare_one(db->cache, id);
    if (err) {
        apr_cpystrn(db->errbuf, err, sizeof(db->errbuf));
        db->last_error = db->errbuf;
        db->error = JR_DB_E_OTHER;
    }
    return db->cache->stmts[id];
}

/* The schema version of the cache's connection, against the module's. APR_EGENERAL (logged)
 * when it cannot be read. */
static apr_status_t read_schema(jr_stmt_cache_t *c, int quiet)
{
    const char *err = NULL;
    c->schema_need = jr_migrate_latest(c->be->dialect);
    if (c->be->schema_version(c->native, c->pool, &c->schema_have, &err) != 0) {
        JR_LOG(JR01032, 0, "cannot read the database's schema version: %s",
               err ? err : "unknown error");
        return APR_EGENERAL;
    }
    if (behind(c) && !quiet) {
        JR_LOG(JR01030, 0,
               "database schema version %d is older than this module's %d: nothing is "
               "served until journal-admin migrate has run",
               c->schema_have, c->schema_need);
    }
    return APR_SUCCESS;
}

static void cache_drop(jr_stmt_cache_t *c, int discard)
{
    c->discard = discard;
    apr_pool_destroy(c->pool);
}

/* A new cache on the connection, attached to conn_pool: prepared, or (schema behind) empty.
 * NULL when the schema cannot be read or a statement cannot be prepared. */
static jr_stmt_cache_t *attach(const jr_db_backend_t *be, const apr_dbd_driver_t *driver,
                               apr_dbd_t *handle, apr_pool_t *conn_pool, apr_pool_t *parent)
{
    jr_stmt_cache_t *c = cache_new(be, driver, handle, parent);
    if (!c) {
        return NULL;
    }
    if (read_schema(c, 0) != APR_SUCCESS) {
        cache_drop(c, 0);
        return NULL;
    }
    if (!behind(c) && prepare_catalogue(c) != APR_SUCCESS) {
        cache_drop(c, 1); /* what was prepared goes now */
        return NULL;
    }
    c->conn_pool = conn_pool;
    apr_pool_userdata_setn(c, JR_STMT_CACHE_KEY, NULL, conn_pool);
    return c;
}

apr_status_t jr_db_attach(const apr_dbd_driver_t *driver, apr_dbd_t *handle, apr_pool_t *conn_pool,
                          apr_pool_t *stmt_pool)
{
    const jr_db_backend_t *be = backend_of(apr_dbd_name(driver));
    jr_stmts_init();
    return be && attach(be, driver, handle, conn_pool, stmt_pool) ? APR_SUCCESS : APR_EGENERAL;
}

/* PostgreSQL: a connection that libpq reset after a failure is a new server session without
 * the prepared statements. A changed session tells. */
static int session_changed(const jr_stmt_cache_t *c)
{
    int s = c->be->session ? c->be->session(c->native) : 0;
    return s != c->session && s != 0;
}

/* A cache found on the connection, or NULL when a new one must be made (logged why). */
static jr_stmt_cache_t *cache_usable(jr_stmt_cache_t *c, apr_dbd_t *handle)
{
    if (!c || c->handle != handle) {
        JR_LOG(JR01021, 0, "the module's statements were not prepared when this "
                           "database connection opened; preparing them now");
        return NULL;
    }
    if (session_changed(c)) {
        JR_LOG(JR01008, 0, "database session was reset; preparing statements again");
        cache_drop(c, 0);
        return NULL;
    }
    if (behind(c)) {
        /* Look again: journal-admin migrate may have run since. */
        if (read_schema(c, 1) != APR_SUCCESS || behind(c)) {
            return c;
        }
        JR_LOG(JR01031, 0,
               "the database schema is now at version %d; preparing the module's statements",
               c->schema_have);
        cache_drop(c, 0);
        return NULL;
    }
    return c;
}

jr_db_t *jr_db_use(apr_pool_t *p, const apr_dbd_driver_t *driver, apr_dbd_t *handle,
                   apr_pool_t *conn_pool)
{
    const jr_db_backend_t *be = backend_of(apr_dbd_name(driver));
    void *found = NULL;
    jr_stmt_cache_t *c;
    if (!be) {
        return NULL;
    }
    apr_pool_userdata_get(&found, JR_STMT_CACHE_KEY, conn_pool);
    c = cache_usable(found, handle);
    /* Under conn_pool the statements live as long as the connection: its subpools go before
     * its cleanups, mod_dbd's closing of the connection among them. */
    if (!c && (jr_db_setup_connection(driver, handle) != APR_SUCCESS ||
               !(c = attach(be, driver, handle, conn_pool, conn_pool)))) {
        return NULL;
    }
    return wrap(p, c);
}

const char *jr_db_refusal(const jr_db_t *db)
{
    if (!db) {
        return "database unavailable";
    }
    return db->cache && behind(db->cache) ? JR_SCHEMA_BEHIND : NULL;
}

int jr_db_schema_behind(const jr_db_t *db, int *have, int *need)
{
    if (!db || !db->cache || !behind(db->cache)) {
        return 0;
    }
    *have = db->cache->schema_have;
    *need = db->cache->schema_need;
    return 1;
}

apr_status_t jr_db_setup_connection(const apr_dbd_driver_t *driver, apr_dbd_t *handle)
{
    const jr_db_backend_t *be = backend_of(apr_dbd_name(driver));
    return be && be->setup ? be->setup(apr_dbd_native_handle(driver, handle)) : APR_SUCCESS;
}

/* ---- connections of our own -------------------------------------------------------------- */

static apr_status_t close_on_cleanup(void *data)
{
    jr_db_close(data);
    return APR_SUCCESS;
}

/* Our own connection forgets its cache when the cache's pool goes first (its parent's
 * destruction), so that jr_db_close does not release it twice. */
static apr_status_t forget_cache(void *data)
{
    jr_db_t *db = data;
    db->cache = NULL;
    return APR_SUCCESS;
}

apr_status_t jr_db_open(jr_db_t **pdb, apr_pool_t *p, const char *driver_name,
                        const char *params, const char **err)
{
    const jr_db_backend_t *be = backend_of(driver_name);
    const apr_dbd_driver_t *driver;
    apr_dbd_t *handle = NULL;
    const char *dberr = NULL;
    jr_stmt_cache_t *cache;
    apr_status_t rv;
    jr_db_t *db;

    *pdb = NULL;
    if (!be) {
        *err = apr_psprintf(p, "unsupported database driver '%s' (use sqlite3 or pgsql)",
                            driver_name ? driver_name : "");
        return APR_EINVAL;
    }
    jr_stmts_init();
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
    if (!(cache = cache_new(be, driver, handle, p))) {
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

apr_status_t jr_db_prepare_all(jr_db_t *db)
{
    return prepare_catalogue(db->cache);
}

apr_status_t jr_db_revalidate(jr_db_t *db)
{
    if (!db->cache || !session_changed(db->cache)) {
        return APR_SUCCESS;
    }
    JR_LOG(JR01008, 0, "database session was reset; preparing statements again");
    memset(db->cache->stmts, 0, sizeof(db->cache->stmts)); /* they went with the session */
    return prepare_catalogue(db->cache);
}

void jr_db_close(jr_db_t *db)
{
    if (db && db->handle) {
        if (db->in_tx) {
            jr_db_rollback(db);
        }
        write_leave(db);
        if (db->cache) {
            apr_pool_destroy(db->cache->pool);
        }
        apr_dbd_close(db->driver, db->handle);
        db->handle = NULL;
    }
}

/* ---- statements --------------------------------------------------------------------------- */

/* Statement id (a valid one: statement() checked it) as prepared on the connection db uses
 * now (prepared here on first use); NULL, logged, when it cannot be. */
static void *prepared(jr_db_t *db, jr_stmt_id_t id)
{
    void *stmt = db->cache ? db->cache->stmts[id] : NULL;
    if (!stmt && db->cache && db->cache->checked && !(stmt = prepare_on_use(db, id))) {
        return NULL;
    }
    if (!stmt) {
        JR_LOG(JR01004, 0, "statement %s is not prepared on this connection",
               jr_stmt_label(id));
    }
    return stmt;
}

/* The prepared statement id, after the checks every statement passes: it exists, takes nargs
 * parameters, and begins a lazy transaction when it writes; NULL (logged) otherwise. The queue
 * is entered before the statement is looked up: on SQLite, entering it may put the process's
 * writing connection in the place of the request's (jr_db_sqlite.c). */
static void *statement(jr_db_t *db, jr_stmt_id_t id, int nargs, int *alone)
{
    void *stmt;
    int began;
    db->last_error = NULL;
    db->error = JR_DB_OK;
    *alone = 0;
    if ((unsigned)id >= JR_Q__COUNT) {
        JR_LOG(JR01004, 0, "statement %s is not prepared on this connection", "(unknown)");
        return NULL;
    }
    if (nargs != jr_stmt_nparams(id)) {
        JR_LOG(JR01033, 0, "statement %s takes %d parameter(s), not %d",
               jr_stmt_label(id), jr_stmt_nparams(id), nargs);
        return NULL;
    }
    /* At debug level, one line per statement: the tests count a request's round trips. */
    JR_LOG(JR12140, 0, "statement %s", jr_stmt_label(id));
    began = db->tx_lazy && !db->in_tx && jr_stmt_writes(id);
    if (began && jr_db_begin(db) != APR_SUCCESS) {
        return NULL;
    }
    /* A write outside a transaction is a transaction of its own: it queues as one does. */
    *alone = !db->in_tx && !db->wq && jr_stmt_writes(id) && db->be->write_enter;
    if (*alone && db->be->write_enter(db) != APR_SUCCESS) {
        *alone = 0;
        return NULL;
    }
    if (!(stmt = prepared(db, id))) { /* nothing was written: what this began ends here */
        if (began) {
            jr_db_rollback(db);
        } else if (*alone) {
            write_leave(db);
        }
        *alone = 0;
    }
    return stmt;
}

/* After a statement: leaves the queue that statement() entered for it alone. */
static apr_status_t statement_done(jr_db_t *db, int alone, apr_status_t rv)
{
    if (alone) {
        write_leave(db);
    }
    return rv;
}

apr_status_t jr_db_select(jr_db_t *db, apr_pool_t *p, jr_stmt_id_t id, jr_rows_t **out,
                          int nargs, const char **args)
{
    int alone = 0;
    void *stmt = statement(db, id, nargs, &alone);
    *out = NULL;
    return stmt ? statement_done(db, alone, db->be->select(db, p, id, stmt, out, nargs, args))
                : APR_EGENERAL;
}

apr_status_t jr_db_exec(jr_db_t *db, apr_pool_t *p, jr_stmt_id_t id, int *nrows, int nargs,
                        const char **args)
{
    int alone = 0;
    void *stmt = statement(db, id, nargs, &alone);
    return stmt ? statement_done(db, alone, db->be->exec(db, p, id, stmt, nrows, nargs, args))
                : APR_EGENERAL;
}

apr_status_t jr_db_exec_later(jr_db_t *db, apr_pool_t *p, jr_stmt_id_t id, int nargs,
                              const char **args)
{
    int alone = 0;
    void *stmt = statement(db, id, nargs, &alone);
    if (!stmt) {
        return APR_EGENERAL;
    }
    if (db->in_tx && db->be->hold) {
        return db->be->hold(db, p, id, stmt, nargs, args);
    }
    return statement_done(db, alone, db->be->exec(db, p, id, stmt, NULL, nargs, args));
}

apr_status_t jr_db_select_each(jr_db_t *db, apr_pool_t *p, jr_stmt_id_t id, jr_row_fn *fn,
                               void *baton, int nargs, const char **args)
{
    int alone = 0;
    void *stmt = statement(db, id, nargs, &alone);
    return stmt ? statement_done(db, alone,
                                 db->be->select_each(db, p, id, stmt, fn, baton, nargs, args))
                : APR_EGENERAL;
}

/* ---- transactions ------------------------------------------------------------------------- */

/* On SQLite the write queue is entered before BEGIN IMMEDIATE (jr_wqueue.h) and left after
 * the transaction ends, on every path: a failed BEGIN, COMMIT, ROLLBACK, the pool's cleanup. */
apr_status_t jr_db_begin(jr_db_t *db)
{
    apr_status_t rv = db->be->write_enter && !db->in_tx ? db->be->write_enter(db) : APR_SUCCESS;
    if (rv == APR_SUCCESS &&
        (rv = db->be->hold ? db->be->hold(db, NULL, 0, NULL, 0, NULL)
                           : db->be->plain(db, db->be->begin_sql, 0)) == APR_SUCCESS) {
        db->in_tx = 1;
    } else if (!db->in_tx) {
        write_leave(db);
    }
    return rv != APR_SUCCESS ? APR_EGENERAL : rv;
}

void jr_db_begin_lazy(jr_db_t *db)
{
    db->tx_lazy = 1;
}

static void after_commit(jr_db_t *db)
{
    unsigned marks = db->commit_marks;
    db->commit_marks = 0;
    if (marks && db->after_commit) {
        db->after_commit(db, marks);
    }
}

void jr_db_after_commit(jr_db_t *db, jr_db_after_commit_fn *fn, unsigned mark)
{
    db->after_commit = fn;
    db->commit_marks |= mark;
    if (!db->in_tx) {
        after_commit(db);
    }
}

void jr_db_before_commit(jr_db_t *db, jr_db_before_commit_fn *fn, void *baton)
{
    db->before_commit = fn;
    db->before_commit_baton = baton;
}

void *jr_db_before_commit_baton(const jr_db_t *db, jr_db_before_commit_fn *fn)
{
    return db->before_commit == fn ? db->before_commit_baton : NULL;
}

apr_status_t jr_db_commit(jr_db_t *db)
{
    jr_db_before_commit_fn *before = db->before_commit;
    apr_status_t rv;
    /* Taken off first: its own statements must not run it again, and a failure drops it. */
    db->before_commit = NULL;
    if (before && (rv = before(db, db->before_commit_baton)) != APR_SUCCESS) {
        jr_db_rollback(db);
        return rv;
    }
    db->tx_lazy = 0;
    if (!db->in_tx) {
        return APR_SUCCESS; /* a lazy transaction that nothing began */
    }
    if (db->begin_held && !db->nheld) {
        db->begin_held = 0; /* a BEGIN without a statement never reached the server */
    } else if ((rv = db->be->plain(db, "COMMIT", 0)) != APR_SUCCESS) {
        jr_db_rollback(db);
        return rv;
    }
    db->in_tx = 0;
    write_leave(db);
    after_commit(db);
    return APR_SUCCESS;
}

void jr_db_rollback(jr_db_t *db)
{
    db->tx_lazy = 0;
    db->before_commit = NULL;
    db->in_tx = 0;
    db->commit_marks = 0;
    db->nheld = 0; /* held writes are dropped; a transaction whose BEGIN is still held never
                    * reached the server */
    if (db->begin_held) {
        db->begin_held = 0;
    } else {
        db->be->plain(db, "ROLLBACK", 1);
    }
    write_leave(db);
}

apr_status_t jr_db_generation(jr_db_t *db, apr_pool_t *p, const jr_rows_t *carried,
                              apr_uint64_t *gen)
{
    *gen = 0;
    return db->be->generation(db, p, carried, gen);
}

int jr_db_generation_free(const jr_db_t *db)
{
    return db && db->be->generation_free;
}

int jr_db_generation_shared(const jr_db_t *db)
{
    return db && db->genshare;
}

apr_status_t jr_db_ping(jr_db_t *db)
{
    apr_pool_t *p;
    apr_status_t rv;
    if (apr_pool_create(&p, db->pool) != APR_SUCCESS) {
        return APR_ENOMEM;
    }
    rv = apr_dbd_check_conn(db->driver, p, db->handle) == APR_SUCCESS
             ? db->be->plain(db, "SELECT 1", 1)
             : APR_EGENERAL;
    apr_pool_destroy(p);
    return rv;
}

/* ---- rows --------------------------------------------------------------------------------- */

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
