/* jr_db.h, jr_migrate.h, jr_stmts.h against a temporary SQLite file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <apr_dbd.h>
#include <apr_hash.h>
#include <apr_pools.h>
#include <apr_strings.h>
#include <sqlite3.h>

#include "jr_db.h"
#include "jr_db_backend.h" /* the statement cache */
#include "jr_json.h"
#include "jr_keys.h"
#include "jr_log.h"
#include "jr_migrate.h"
#include "jr_ops_shared.h" /* jr_search_term */
#include "jr_stmts.h"
#include "jr_util.h"
#include "ops_fixture.h" /* fx_dir_*: the directory of the test databases */
#include "jr_keys_admin.h"

static apr_pool_t *pool;
static jr_db_t *db;
static char path[64]; /* the current test database, "" when none */
static char last_log[1024];
static int log_count;

static void capture(void *baton, jr_log_level_e level, apr_status_t rv, const char *file,
                    int line, const char *msg)
{
    (void)baton;
    (void)rv;
    if (level <= JR_LOG_WARN) {
        ++log_count;
    }
    apr_cpystrn(last_log, msg, sizeof(last_log));
}

/* Removes the test database (the checked teardown). */
static void remove_files(void)
{
    static const char *const suffixes[] = {"", "-wal", "-shm", "-journal"};
    size_t i;
    for (i = 0; path[0] && i < sizeof(suffixes) / sizeof(suffixes[0]); ++i) {
        char name[sizeof(path) + 16];
        snprintf(name, sizeof(name), "%s%s", path, suffixes[i]);
        unlink(name);
    }
    path[0] = '\0';
}

static void setup(void)
{
    int fd;
    ck_assert_int_eq(apr_pool_create(&pool, NULL), APR_SUCCESS);
    snprintf(path, sizeof(path), "%s/db-XXXXXX", fx_dir());
    fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    db = NULL;
    log_count = 0;
    last_log[0] = '\0';
    jr_log_set(capture, NULL, JR_LOG_DEBUG);
}

static void teardown(void)
{
    if (db) {
        jr_db_close(db);
        db = NULL;
    }
    apr_pool_destroy(pool);
    pool = NULL;
    remove_files();
    jr_log_set(NULL, NULL, JR_LOG_DEBUG);
}

static void open_db(void)
{
    const char *err = NULL;
    apr_status_t rv = jr_db_open(&db, pool, "sqlite3", path, &err);
    ck_assert_msg(rv == APR_SUCCESS, "open: %s", err ? err : "?");
    ck_assert_ptr_nonnull(db);
}

static void open_ready(void)
{
    const char *err = NULL;
    int applied = -1, version = -1;
    open_db();
    ck_assert_msg(jr_migrate(db, pool, &applied, &version, &err) == APR_SUCCESS, "migrate: %s",
                  err ? err : "?");
    ck_assert_int_eq(jr_db_prepare_all(db), APR_SUCCESS);
}

static sqlite3 *native(void)
{
    return apr_dbd_native_handle(db->driver, db->handle);
}

/* The first column of the first row of an ad-hoc query, as text (NULL for SQL NULL). */
static const char *sql_text(const char *sql)
{
    sqlite3_stmt *st = NULL;
    const char *out = NULL;
    ck_assert_msg(sqlite3_prepare_v2(native(), sql, -1, &st, NULL) == SQLITE_OK, "%s: %s", sql,
                  sqlite3_errmsg(native()));
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
        out = apr_pstrdup(pool, (const char *)sqlite3_column_text(st, 0));
    }
    sqlite3_finalize(st);
    return out;
}

static long long sql_int(const char *sql)
{
    const char *v = sql_text(sql);
    ck_assert_msg(v != NULL, "%s gave NULL", sql);
    return atoll(v);
}

static long long insert_branch(const char *name)
{
    jr_rows_t *rows = NULL;
    const char *now = jr_now_iso(pool);
    ck_assert_int_eq(jr_db_select(db, pool, JR_Q_BRANCH_INSERT, &rows, JR_ARGS(name, now, now)),
                     APR_SUCCESS);
    ck_assert_int_eq(rows->nrows, 1);
    return jr_rows_int(rows, 0, "id", 0);
}

static int count_migrations(void)
{
    int n = 0;
    while (jr_migrations_sqlite[n].name) {
        ++n;
    }
    return n;
}

/* Every branch the scope allows (a JSON array of ids, or NULL for all). */
static jr_rows_t *list_branches(const char *scope)
{
    jr_rows_t *rows = NULL;
    ck_assert_int_eq(jr_db_select(db, pool, JR_Q_BRANCHES_LIST, &rows,
                                  JR_ARGS(scope, scope, NULL, "1000", "0")),
                     APR_SUCCESS);
    return rows;
}

/* ---- opening ------------------------------------------------------------------------- */

START_TEST(dialects)
{
    ck_assert_int_eq(jr_db_dialect_of("sqlite3"), JR_DB_SQLITE);
    ck_assert_int_eq(jr_db_dialect_of("pgsql"), JR_DB_PGSQL);
    ck_assert_int_eq(jr_db_dialect_of("SQLITE3"), 0);
    ck_assert_int_eq(jr_db_dialect_of("mysql"), 0);
    ck_assert_int_eq(jr_db_dialect_of(""), 0);
    ck_assert_int_eq(jr_db_dialect_of(NULL), 0);
}
END_TEST

START_TEST(open_failures)
{
    static jr_db_t dummy;
    jr_db_t *other = &dummy;
    const char *err = NULL;
    ck_assert_int_eq(jr_db_open(&other, pool, "mysql", path, &err), APR_EINVAL);
    ck_assert_ptr_null(other);
    ck_assert_msg(err && strstr(err, "'mysql'"), "%s", err ? err : "(null)");
    err = NULL;
    ck_assert_int_eq(jr_db_open(&other, pool, NULL, path, &err), APR_EINVAL);
    ck_assert_ptr_nonnull(err);
    err = NULL;
    ck_assert_int_ne(jr_db_open(&other, pool, "sqlite3", "/nonexistent-dir/x/y.db", &err),
                     APR_SUCCESS);
    ck_assert_ptr_null(other);
    ck_assert_ptr_nonnull(err);
}
END_TEST

static long long count_branches(jr_db_t *w)
{
    jr_rows_t *rows = NULL;
    ck_assert_int_eq(jr_db_select(w, pool, JR_Q_BRANCHES_LIST, &rows,
                                  JR_ARGS(NULL, NULL, NULL, "1000", "0")),
                     APR_SUCCESS);
    return rows->nrows;
}

START_TEST(connection_settings)
{
    open_db();
    ck_assert_int_eq(db->dialect, JR_DB_SQLITE);
    ck_assert_int_eq(db->in_tx, 0);
    ck_assert_int_eq(sql_int("PRAGMA foreign_keys"), 1);
    ck_assert_int_eq(sql_int("PRAGMA busy_timeout"), 2000);
    ck_assert_int_eq(sql_int("PRAGMA synchronous"), 1); /* NORMAL */
    ck_assert_int_eq(jr_db_ping(db), APR_SUCCESS);
}
END_TEST

/* ---- migrations ---------------------------------------------------------------------- */

START_TEST(migrate_is_idempotent)
{
    const char *err = NULL;
    int applied = -1, version = -1, latest = jr_migrate_latest(JR_DB_SQLITE), cur = -1;
    open_db();
    ck_assert_int_ge(latest, 1);
    ck_assert_int_eq(jr_migrate(db, pool, &applied, &version, &err), APR_SUCCESS);
    ck_assert_int_ge(applied, 1);
    ck_assert_int_eq(version, latest);
    ck_assert_int_eq(jr_migrate(db, pool, &applied, &version, &err), APR_SUCCESS);
    ck_assert_int_eq(applied, 0);
    ck_assert_int_eq(version, latest);
    ck_assert_int_eq(jr_migrate_current(db, pool, &cur, &err), APR_SUCCESS);
    ck_assert_int_eq(cur, latest);
    ck_assert_str_eq(sql_text("PRAGMA journal_mode"), "wal");
    ck_assert_int_eq(sql_int("SELECT COUNT(*) FROM schema_migrations"), count_migrations());
    ck_assert_int_eq(sql_int("SELECT MAX(version) FROM schema_migrations"), latest);
    ck_assert_int_eq(db->in_tx, 0);
    ck_assert_int_eq(sqlite3_get_autocommit(native()), 1); /* no transaction left open */
}
END_TEST

START_TEST(migrate_current_without_schema)
{
    const char *err = NULL;
    int version = -1;
    open_db();
    ck_assert_int_ne(jr_migrate_current(db, pool, &version, &err), APR_SUCCESS);
    ck_assert_int_eq(version, 0);
    ck_assert_ptr_nonnull(err);
}
END_TEST

START_TEST(migration_lists_agree)
{
    int i, prev = 0;
    for (i = 0; jr_migrations_sqlite[i].name; ++i) {
        ck_assert_int_gt(jr_migrations_sqlite[i].version, prev);
        prev = jr_migrations_sqlite[i].version;
        ck_assert_ptr_nonnull(jr_migrations_pgsql[i].name);
        ck_assert_int_eq(jr_migrations_pgsql[i].version, prev);
        ck_assert_str_eq(jr_migrations_pgsql[i].name, jr_migrations_sqlite[i].name);
        ck_assert_uint_gt(strlen(jr_migrations_sqlite[i].sql), 0);
        ck_assert_uint_gt(strlen(jr_migrations_pgsql[i].sql), 0);
    }
    ck_assert_ptr_null(jr_migrations_pgsql[i].name);
    ck_assert_int_eq(jr_migrate_latest(JR_DB_SQLITE), prev);
    ck_assert_int_eq(jr_migrate_latest(JR_DB_PGSQL), prev);
}
END_TEST

/* ---- the statement catalogue ---------------------------------------------------------- */

/* Placeholders of a text: -1 when a % is followed by anything but s or % (apr_dbd took any
 * letter for a placeholder; the backends turn only %s into one). */
static int placeholders(const char *sql)
{
    int n = 0;
    for (; *sql; ++sql) {
        if (*sql == '%') {
            if (sql[1] != 's' && sql[1] != '%') {
                return -1;
            }
            n += sql[1] == 's';
            ++sql;
        }
    }
    return n;
}

START_TEST(statement_catalogue)
{
    int id, other;
    for (id = 0; id < JR_Q__COUNT; ++id) {
        const char *label = jr_stmt_label(id), *sq = jr_stmt_sql(id, JR_DB_SQLITE),
                   *pg = jr_stmt_sql(id, JR_DB_PGSQL);
        /* Dense: every id has a label and a text in both dialects. */
        ck_assert_msg(label && *label, "statement %d has no label", id);
        ck_assert_msg(sq && *sq && pg && *pg, "%s lacks the SQL of a dialect", label);
        ck_assert_uint_le(strlen(label), JR_STMT_LABEL_MAX);
        ck_assert_str_eq(jr_stmt_server_name(id), apr_pstrcat(pool, "jr_", label, NULL));
        ck_assert_msg(placeholders(sq) >= 0 && placeholders(pg) >= 0,
                      "%s: a %% that is neither %%s nor %%%%", label);
        ck_assert_msg(placeholders(sq) == placeholders(pg),
                      "%s: the dialects take different arguments", label);
        ck_assert_int_eq(jr_stmt_nparams(id), placeholders(sq));
        for (other = id + 1; other < JR_Q__COUNT; ++other) {
            ck_assert_msg(strcmp(label, jr_stmt_label(other)), "duplicate label %s", label);
        }
    }
    ck_assert_int_gt(JR_Q__COUNT, 100);
    ck_assert_str_eq(jr_stmt_label(JR_Q_ENTRY_GET), "entry_get");
    ck_assert_str_eq(jr_stmt_label(JR_Q_ENTRIES_LIST_PLAIN), "entries_list_plain");
    open_ready();
    ck_assert_int_eq(db->cache->checked, 1);
    for (id = 0; id < JR_Q__COUNT; ++id) {
        void *st = NULL;
        const char *err = NULL;
        ck_assert_msg(db->cache->be->prepare(db->cache, id, &st, &err) == APR_SUCCESS,
                      "%s is not prepared: %s", jr_stmt_label(id), err ? err : "?");
        sqlite3_finalize(st);
    }
    ck_assert_int_eq(log_count, 0);
}
END_TEST

/* The catalogue is checked whole when a connection opens, but a connection keeps prepared
 * only the statements it ran: the whole catalogue held about 2 MB of SQLite's memory on every
 * pooled connection of every child. */
START_TEST(connection_keeps_only_statements_it_ran)
{
    int cur = -1, hi = -1, ran;
    jr_stmt_id_t id;
    open_ready();
    ck_assert_int_eq(sqlite3_db_status(native(), SQLITE_DBSTATUS_STMT_USED, &cur, &hi, 0),
                     SQLITE_OK);
    ck_assert_msg(cur < 64 * 1024, "%d bytes of statements held after the check", cur);
    for (id = 0; id < JR_Q__COUNT; ++id) {
        ck_assert_msg(!db->cache->stmts[id], "%s stays prepared", jr_stmt_label(id));
    }
    ck_assert_int_eq(count_branches(db), 0);
    ck_assert_int_eq(count_branches(db), 0);
    ck_assert_ptr_nonnull(db->cache->stmts[JR_Q_BRANCHES_LIST]);
    for (ran = 0, id = 0; id < JR_Q__COUNT; ++id) {
        ran += db->cache->stmts[id] != NULL;
    }
    ck_assert_int_eq(ran, 1);
    ck_assert_int_eq(log_count, 0);
}
END_TEST

/* A statement first run after the schema changed under the connection fails as a statement
 * does, and runs once the schema is back. */
START_TEST(statement_prepared_on_use_can_fail)
{
    jr_rows_t *rows = NULL;
    open_ready();
    ck_assert_int_eq(sqlite3_exec(native(), "ALTER TABLE branches RENAME TO branches_away", NULL,
                                  NULL, NULL),
                     SQLITE_OK);
    ck_assert_int_ne(jr_db_select(db, pool, JR_Q_BRANCHES_LIST, &rows,
                                  JR_ARGS(NULL, NULL, NULL, "1000", "0")),
                     APR_SUCCESS);
    ck_assert_ptr_null(rows);
    ck_assert_msg(strstr(last_log, "JR01003: cannot prepare statement branches_list: no such "
                                   "table: branches"),
                  "log: %s", last_log);
    ck_assert_int_eq(jr_db_error(db), JR_DB_E_OTHER);
    ck_assert_ptr_null(db->cache->stmts[JR_Q_BRANCHES_LIST]);
    ck_assert_int_eq(sqlite3_exec(native(), "ALTER TABLE branches_away RENAME TO branches", NULL,
                                  NULL, NULL),
                     SQLITE_OK);
    ck_assert_int_eq(count_branches(db), 0);
}
END_TEST

/* JournalSQLiteCacheSize: the page cache of the connections set up afterwards. */
START_TEST(cache_size_is_set_on_new_connections)
{
    jr_db_sqlite_cache_size(256 * 1024);
    open_db();
    jr_db_sqlite_cache_size(0);
    ck_assert_int_eq(sql_int("PRAGMA cache_size"), -256);
    jr_db_close(db);
    open_db();
    ck_assert_int_eq(sql_int("PRAGMA cache_size"), -2000); /* SQLite's own */
}
END_TEST

/* What needs the write transaction: every INSERT, UPDATE and DELETE (RETURNING or not), and a
 * SELECT that locks rows in either dialect; plain reads do not. */
START_TEST(statement_writes)
{
    static const jr_stmt_id_t writers[] = {
        JR_Q_ENTRY_INSERT,        JR_Q_ENTRY_UPDATE,       JR_Q_USER_DELETE,
        JR_Q_PHOTOS_DELETE_OWNER, JR_Q_SETTING_UPSERT,     JR_Q_AI_CLAIM_PENDING,
        JR_Q_ADMINS_OTHER_ACTIVE, JR_Q_PHOTOS_LOCK_OWNER, JR_Q_AI_REQUEUE_ENTRIES,
    };
    static const jr_stmt_id_t readers[] = {
        JR_Q_ENTRY_GET,  JR_Q_ENTRIES_LIST_PLAIN, JR_Q_ENTRIES_COUNT, JR_Q_KEY_AUTH,
        JR_Q_STATS_COUNTS, JR_Q_HEALTH_SCHEMA,    JR_Q_SIGNAL_NOTIFY, JR_Q_AI_DUE,
    };
    size_t i;
    int id, n = 0;
    for (i = 0; i < sizeof(writers) / sizeof(*writers); ++i) {
        ck_assert_msg(jr_stmt_writes(writers[i]), "%s must write", jr_stmt_label(writers[i]));
    }
    for (i = 0; i < sizeof(readers) / sizeof(*readers); ++i) {
        ck_assert_msg(!jr_stmt_writes(readers[i]), "%s only reads", jr_stmt_label(readers[i]));
    }
    /* The flag agrees with the first keyword of every text that has no row lock. */
    for (id = 0; id < JR_Q__COUNT; ++id) {
        const char *sq = jr_stmt_sql(id, JR_DB_SQLITE), *pg = jr_stmt_sql(id, JR_DB_PGSQL);
        int select = !strncmp(sq, "SELECT", 6) && !strncmp(pg, "SELECT", 6);
        int locks = strstr(sq, "FOR UPDATE") || strstr(pg, "FOR UPDATE");
        if (!locks) {
            ck_assert_msg(jr_stmt_writes(id) == !select, "%s: writes %d", jr_stmt_label(id),
                          jr_stmt_writes(id));
        }
        n += jr_stmt_writes(id);
    }
    ck_assert_int_gt(n, 40);
    ck_assert_int_lt(n, JR_Q__COUNT);
}
END_TEST

START_TEST(prepare_fails_before_migrating)
{
    open_db();
    ck_assert_int_ne(jr_db_prepare_all(db), APR_SUCCESS);
    ck_assert_msg(strstr(last_log, "JR01003") != NULL, "log: %s", last_log);
}
END_TEST

START_TEST(unknown_statement_fails)
{
    static jr_rows_t dummy;
    jr_rows_t *rows = &dummy;
    int n = -1;
    open_ready();
    ck_assert_int_ne(jr_db_select(db, pool, (jr_stmt_id_t)JR_Q__COUNT, &rows, JR_NOARGS),
                     APR_SUCCESS);
    ck_assert_ptr_null(rows);
    ck_assert_msg(strstr(last_log, "JR01004"), "log: %s", last_log);
    ck_assert_int_ne(jr_db_exec(db, pool, (jr_stmt_id_t)-1, &n, JR_NOARGS), APR_SUCCESS);
    ck_assert_int_eq(n, -1);
    /* A statement given the wrong number of arguments does not run. */
    ck_assert_int_ne(jr_db_select(db, pool, JR_Q_BRANCHES_LIST, &rows, JR_ARGS(NULL, NULL, "1")),
                     APR_SUCCESS);
    ck_assert_msg(strstr(last_log, "JR01033") && strstr(last_log, "branches_list"), "log: %s",
                  last_log);
}
END_TEST

/* ---- transactions -------------------------------------------------------------------- */

START_TEST(rollback_leaves_nothing)
{
    jr_rows_t *rows;
    open_ready();
    ck_assert_int_eq(jr_db_begin(db), APR_SUCCESS);
    ck_assert_int_eq(db->in_tx, 1);
    ck_assert_int_gt(insert_branch("North"), 0);
    ck_assert_int_ne(jr_db_begin(db), APR_SUCCESS); /* no nesting */
    jr_db_rollback(db);
    ck_assert_int_eq(db->in_tx, 0);
    ck_assert_int_eq(sqlite3_get_autocommit(native()), 1);
    rows = list_branches(NULL);
    ck_assert_int_eq(rows->nrows, 0);
    ck_assert_int_eq(sql_int("SELECT COUNT(*) FROM branches"), 0);

    ck_assert_int_eq(jr_db_begin(db), APR_SUCCESS);
    insert_branch("South");
    ck_assert_int_eq(jr_db_commit(db), APR_SUCCESS);
    ck_assert_int_eq(db->in_tx, 0);
    rows = list_branches(NULL);
    ck_assert_int_eq(rows->nrows, 1);
    ck_assert_str_eq(jr_rows_get(rows, 0, "name"), "South");
}
END_TEST

/* ---- a pooled connection shared with other mod_dbd users ------------------------------ */

/* A connection made the way mod_dbd makes one: its own pool, a subpool for prepared statements
 * that is destroyed before the connection closes, the statements registered by other modules
 * (here one, as mod_authn_dbd's AuthDBDUserPWQuery) in the shared table, then the post_connect
 * work of the module. */
typedef struct {
    apr_pool_t *pool, *stmt_pool;
    const apr_dbd_driver_t *driver;
    apr_dbd_t *handle;
    apr_hash_t *prepared; /* mod_dbd's table, shared by every module */
} dbd_conn_t;

static apr_status_t dbd_conn_close(void *data)
{
    dbd_conn_t *c = data;
    return apr_dbd_close(c->driver, c->handle);
}

static void dbd_conn_open(dbd_conn_t *c, int attach)
{
    apr_dbd_prepared_t *other = NULL;
    memset(c, 0, sizeof(*c));
    ck_assert_int_eq(apr_pool_create(&c->pool, pool), APR_SUCCESS);
    ck_assert_int_eq(apr_dbd_get_driver(c->pool, "sqlite3", &c->driver), APR_SUCCESS);
    ck_assert_int_eq(apr_dbd_open(c->driver, c->pool, path, &c->handle), APR_SUCCESS);
    apr_pool_cleanup_register(c->pool, c, dbd_conn_close, apr_pool_cleanup_null);
    ck_assert_int_eq(apr_pool_create(&c->stmt_pool, c->pool), APR_SUCCESS);
    /* mod_dbd keeps its table in stmt_pool; here it outlives it, so that a test can release
     * the module's statements and still run the other one. */
    c->prepared = apr_hash_make(c->pool);
    ck_assert_int_eq(apr_dbd_prepare(c->driver, c->pool, c->handle,
                                     "SELECT name FROM branches WHERE name = %s", "other_1",
                                     &other),
                     0);
    apr_hash_set(c->prepared, "other_1", APR_HASH_KEY_STRING, other);
    ck_assert_int_eq(jr_db_setup_connection(c->driver, c->handle), APR_SUCCESS);
    if (attach) {
        ck_assert_int_eq(jr_db_attach(c->driver, c->handle, c->pool, c->stmt_pool), APR_SUCCESS);
    }
}

/* Runs the other module's statement: 0 when it ran and found the branch. */
static int other_finds(dbd_conn_t *c, const char *name)
{
    apr_dbd_results_t *res = NULL;
    apr_dbd_row_t *row = NULL;
    const char *found = NULL;
    apr_dbd_prepared_t *st = apr_hash_get(c->prepared, "other_1", APR_HASH_KEY_STRING);
    ck_assert_ptr_nonnull(st);
    if (apr_dbd_pvselect(c->driver, pool, c->handle, &res, st, 0, name, NULL) != 0) {
        return -1;
    }
    while (apr_dbd_get_row(c->driver, pool, res, &row, -1) == 0) {
        found = apr_pstrdup(pool, apr_dbd_get_entry(c->driver, row, 0));
    }
    return found && !strcmp(found, name) ? 0 : 1;
}

START_TEST(own_statements_apart_from_other_modules)
{
    dbd_conn_t c;
    jr_db_t *w;
    int on = -1;
    open_ready();
    insert_branch("Shared");
    ck_assert_int_eq(jr_db_sqlite_preconfigure(pool, path), APR_SUCCESS);
    dbd_conn_open(&c, 1);
    /* mod_dbd's table holds only what other modules registered. */
    ck_assert_uint_eq(apr_hash_count(c.prepared), 1);
    ck_assert_ptr_null(apr_hash_get(c.prepared, "branches_list", APR_HASH_KEY_STRING));
    w = jr_db_use(pool, c.driver, c.handle, c.pool);
    ck_assert_ptr_nonnull(w);
    ck_assert_int_eq(count_branches(w), 1);
    /* The other module's statement still runs: the connection got its foreign keys when it
     * opened, not afterwards (which would have expired the statement). */
    ck_assert_int_eq(other_finds(&c, "Shared"), 0);
    sqlite3_db_config(apr_dbd_native_handle(c.driver, c.handle), SQLITE_DBCONFIG_ENABLE_FKEY, -1,
                      &on);
    ck_assert_int_eq(on, 1);
    /* The module's statements go with their pool; the other module's stay usable until the
     * connection closes. */
    apr_pool_destroy(c.stmt_pool);
    ck_assert_int_eq(other_finds(&c, "Shared"), 0);
    ck_assert_int_eq(log_count, 0);
    apr_pool_destroy(c.pool);
}
END_TEST

START_TEST(preconfigured_connection_has_foreign_keys)
{
    dbd_conn_t c;
    int on = -1;
    open_ready();
    ck_assert_int_eq(jr_db_sqlite_preconfigure(pool, path), APR_SUCCESS);
    ck_assert_int_eq(jr_db_sqlite_preconfigure(pool, path), APR_SUCCESS); /* once is enough */
    ck_assert_int_ne(jr_db_sqlite_preconfigure(pool, "/nonexistent-dir/x.db"), APR_SUCCESS);
    dbd_conn_open(&c, 0);
    sqlite3_db_config(apr_dbd_native_handle(c.driver, c.handle), SQLITE_DBCONFIG_ENABLE_FKEY, -1,
                      &on);
    ck_assert_int_eq(on, 1);
    ck_assert_int_eq(log_count, 0);
    apr_pool_destroy(c.pool);
}
END_TEST

/* mod_dbd prepares other modules' statements before the journal's hook: the busy timeout must
 * be there from the moment SQLite opens the connection, or a preparation while another process
 * checkpoints fails at once with "database is locked". */
static int busy_timeout_of(sqlite3 *conn)
{
    sqlite3_stmt *st = NULL;
    int ms = -1;
    ck_assert_int_eq(sqlite3_prepare_v2(conn, "PRAGMA busy_timeout", -1, &st, NULL), SQLITE_OK);
    if (sqlite3_step(st) == SQLITE_ROW) {
        ms = sqlite3_column_int(st, 0);
    }
    sqlite3_finalize(st);
    return ms;
}

START_TEST(preconfigured_connection_waits_for_locks_from_the_start)
{
    sqlite3 *conn = NULL;
    open_ready();
    ck_assert_int_eq(jr_db_sqlite_preconfigure(pool, path), APR_SUCCESS);
    ck_assert_int_eq(sqlite3_open(path, &conn), SQLITE_OK);
    ck_assert_int_eq(busy_timeout_of(conn), 2000);
    sqlite3_close(conn);
}
END_TEST

START_TEST(late_foreign_keys_are_reported)
{
    dbd_conn_t c;
    open_ready();
    insert_branch("Late");
    /* Not preconfigured: foreign keys are turned on after the other module prepared. */
    dbd_conn_open(&c, 1);
    ck_assert_msg(log_count == 1 && strstr(last_log, "JR01022"), "log (%d): %s", log_count,
                  last_log);
    ck_assert_int_ne(other_finds(&c, "Late"), 0); /* why jr_db_sqlite_preconfigure exists */
    apr_pool_destroy(c.pool);
}
END_TEST

START_TEST(use_prepares_when_the_connection_has_none)
{
    dbd_conn_t c;
    jr_db_t *w;
    open_ready();
    insert_branch("One");
    ck_assert_int_eq(jr_db_sqlite_preconfigure(pool, path), APR_SUCCESS);
    dbd_conn_open(&c, 0);
    w = jr_db_use(pool, c.driver, c.handle, c.pool);
    ck_assert_ptr_nonnull(w);
    ck_assert_msg(strstr(last_log, "JR01021"), "log: %s", last_log);
    ck_assert_int_eq(count_branches(w), 1);
    /* Found the next time, without preparing again. */
    log_count = 0;
    ck_assert_ptr_eq(jr_db_use(pool, c.driver, c.handle, c.pool)->cache, w->cache);
    ck_assert_int_eq(log_count, 0);
    ck_assert_uint_eq(apr_hash_count(c.prepared), 1);
    apr_pool_destroy(c.pool); /* statements finalized before the connection closes */
}
END_TEST

START_TEST(wrapper_rolls_back_on_pool_cleanup)
{
    apr_pool_t *req;
    dbd_conn_t c;
    jr_db_t *w;
    jr_rows_t *rows;
    open_ready();
    ck_assert_int_eq(jr_db_sqlite_preconfigure(pool, path), APR_SUCCESS);
    dbd_conn_open(&c, 1);
    ck_assert_int_eq(apr_pool_create(&req, pool), APR_SUCCESS);
    w = jr_db_use(req, c.driver, c.handle, c.pool);
    ck_assert_int_eq(w->dialect, JR_DB_SQLITE);
    ck_assert_int_eq(jr_db_begin(w), APR_SUCCESS);
    ck_assert_int_eq(jr_db_select(w, req, JR_Q_BRANCH_INSERT, &rows,
                                  JR_ARGS("Lost", "2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z")),
                     APR_SUCCESS);
    ck_assert_int_eq(rows->nrows, 1);
    ck_assert_int_eq(sqlite3_get_autocommit(apr_dbd_native_handle(c.driver, c.handle)), 0);
    apr_pool_destroy(req); /* a request that failed half way */
    ck_assert_int_eq(sqlite3_get_autocommit(apr_dbd_native_handle(c.driver, c.handle)), 1);
    ck_assert_int_eq(sql_int("SELECT COUNT(*) FROM branches"), 0);
    ck_assert_msg(strstr(last_log, "JR01001") != NULL, "log: %s", last_log);
    apr_pool_destroy(c.pool);
}
END_TEST

/* A schema older than the module's (JournalMigrate Off, no migration run): here its last
 * migration is forgotten, so every statement would still prepare. The connection prepares
 * nothing and refuses requests until the schema is current again, without a restart. */
START_TEST(schema_behind_serves_nothing)
{
    dbd_conn_t c;
    jr_db_t *w;
    int have = -1, need = -1, latest = jr_migrate_latest(JR_DB_SQLITE);
    open_ready();
    ck_assert_int_eq(sqlite3_exec(native(), apr_psprintf(pool, "DELETE FROM schema_migrations"
                                                               " WHERE version = %d", latest),
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    ck_assert_int_eq(jr_db_sqlite_preconfigure(pool, path), APR_SUCCESS);
    dbd_conn_open(&c, 1); /* attached all the same: the cache says why it holds nothing */
    ck_assert_msg(strstr(last_log, apr_psprintf(pool, "JR01030: database schema version %d is "
                                                      "older than this module's %d",
                                                latest - 1, latest)),
                  "log: %s", last_log);
    log_count = 0;
    w = jr_db_use(pool, c.driver, c.handle, c.pool);
    ck_assert_ptr_nonnull(w);
    ck_assert_int_eq(log_count, 0); /* said once, when the connection opened */
    ck_assert_str_eq(jr_db_refusal(w),
                     "database schema is older than this module: run journal-admin migrate");
    ck_assert_int_eq(jr_db_schema_behind(w, &have, &need), 1);
    ck_assert_int_eq(have, latest - 1);
    ck_assert_int_eq(need, latest);
    ck_assert_ptr_null(w->cache->stmts[JR_Q_BRANCHES_LIST]);
    ck_assert_str_eq(jr_db_refusal(NULL), "database unavailable");
    /* journal-admin migrate runs: the next user of the connection prepares and is served. */
    ck_assert_int_eq(sqlite3_exec(native(), apr_psprintf(pool, "INSERT INTO schema_migrations"
                                                               " (version, name, applied_at)"
                                                               " VALUES (%d, 'x', 'now')",
                                                         latest),
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    w = jr_db_use(pool, c.driver, c.handle, c.pool);
    ck_assert_ptr_nonnull(w);
    ck_assert_msg(strstr(last_log, "JR01031"), "log: %s", last_log);
    ck_assert_ptr_null(jr_db_refusal(w));
    ck_assert_int_eq(jr_db_schema_behind(w, &have, &need), 0);
    ck_assert_int_eq(count_branches(w), 0);
    apr_pool_destroy(c.pool);
}
END_TEST

START_TEST(unique_violation_detected)
{
    jr_rows_t *rows;
    const char *now;
    open_ready();
    now = jr_now_iso(pool);
    insert_branch("Same");
    log_count = 0;
    ck_assert_int_ne(jr_db_select(db, pool, JR_Q_BRANCH_INSERT, &rows, JR_ARGS("Same", now, now)),
                     APR_SUCCESS);
    ck_assert_int_eq(jr_db_unique_violation(db), 1);
    ck_assert_msg(strstr(db->last_error, "UNIQUE"), "%s", db->last_error);
    ck_assert_int_eq(jr_db_error(db), JR_DB_E_UNIQUE);
    ck_assert_int_eq(db->native_code, SQLITE_CONSTRAINT_UNIQUE);
    ck_assert_int_eq(log_count, 0); /* expected conflicts are not logged as errors */
    /* A later success clears it. */
    rows = list_branches(NULL);
    ck_assert_int_eq(jr_db_unique_violation(db), 0);
    ck_assert_int_eq(jr_db_error(db), JR_DB_OK);
    /* A foreign key failure is an error, not a conflict, and is logged. */
    ck_assert_int_ne(jr_db_select(db, pool, JR_Q_GROUP_INSERT, &rows,
                                  JR_ARGS("g", "999", NULL, now, now)),
                     APR_SUCCESS);
    ck_assert_int_eq(jr_db_unique_violation(db), 0);
    ck_assert_int_eq(jr_db_error(db), JR_DB_E_FOREIGN_KEY);
    ck_assert_msg(strstr(last_log, "JR01005"), "log: %s", last_log);
    /* Classified by SQLite's extended result code, never by the message: a trigger that fails
     * with the very words of a unique violation is another constraint, and an error. */
    ck_assert_int_eq(sqlite3_exec(native(),
                                  "CREATE TRIGGER fake BEFORE INSERT ON branches WHEN"
                                  " NEW.name = 'Fake' BEGIN SELECT RAISE(ABORT,"
                                  " 'UNIQUE constraint failed: branches.name'); END",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    log_count = 0;
    ck_assert_int_ne(jr_db_select(db, pool, JR_Q_BRANCH_INSERT, &rows, JR_ARGS("Fake", now, now)),
                     APR_SUCCESS);
    ck_assert_msg(strstr(db->last_error, "UNIQUE constraint failed"), "%s", db->last_error);
    ck_assert_int_eq(jr_db_error(db), JR_DB_E_CONSTRAINT);
    ck_assert_int_eq(jr_db_unique_violation(db), 0);
    ck_assert_int_eq(log_count, 1);
}
END_TEST

/* PostgreSQL's failures by SQLSTATE, as libpq reports it (no server needed): the message is
 * never read, and a failure without a SQLSTATE is a lost connection only when libpq says so. */
START_TEST(pgsql_sqlstates_are_classified)
{
    static const struct {
        const char *state;
        jr_db_error_e want;
    } cases[] = {
        {"23505", JR_DB_E_UNIQUE},     {"23503", JR_DB_E_FOREIGN_KEY},
        {"23502", JR_DB_E_CONSTRAINT}, {"23514", JR_DB_E_CONSTRAINT},
        {"40001", JR_DB_E_BUSY},       {"40P01", JR_DB_E_BUSY},
        {"55P03", JR_DB_E_BUSY},       {"57014", JR_DB_E_BUSY},
        {"57P01", JR_DB_E_GONE},       {"08006", JR_DB_E_GONE},
        {"42P01", JR_DB_E_OTHER},      {"22P02", JR_DB_E_OTHER},
        {"", JR_DB_E_GONE}, /* no SQLSTATE, and no connection (PQstatus(NULL) is bad) */
    };
    jr_db_t pg;
    size_t i;
    memset(&pg, 0, sizeof(pg));
    pg.be = &jr_db_backend_pgsql;
    for (i = 0; i < sizeof(cases) / sizeof(*cases); ++i) {
        apr_cpystrn(pg.sqlstate, cases[i].state, sizeof(pg.sqlstate));
        ck_assert_msg(pg.be->classify(&pg) == cases[i].want, "SQLSTATE '%s'", cases[i].state);
    }
}
END_TEST

START_TEST(busy_is_classified)
{
    jr_db_t *other = NULL;
    const char *err = NULL;
    open_ready();
    ck_assert_int_eq(jr_db_open(&other, pool, "sqlite3", path, &err), APR_SUCCESS);
    sqlite3_busy_timeout(other->native, 0);
    /* SQLite's lock held by a writer outside the write queue (the sqlite3 shell, say). */
    ck_assert_int_eq(sqlite3_exec(native(), "BEGIN IMMEDIATE", NULL, NULL, NULL), SQLITE_OK);
    ck_assert_int_ne(jr_db_begin(other), APR_SUCCESS);
    ck_assert_int_eq(jr_db_error(other), JR_DB_E_BUSY);
    ck_assert_int_eq(other->native_code, SQLITE_BUSY);
    ck_assert_msg(strstr(last_log, "JR01006: BEGIN IMMEDIATE failed: database is locked"),
                  "log: %s", last_log);
    ck_assert_int_eq(sqlite3_exec(native(), "ROLLBACK", NULL, NULL, NULL), SQLITE_OK);
    jr_db_close(other);
}
END_TEST

/* A lazy transaction begins at the first statement that writes: reads before it hold no lock,
 * a commit without a write has nothing to do. */
START_TEST(lazy_transaction_begins_at_the_first_write)
{
    open_ready();
    jr_db_begin_lazy(db);
    ck_assert_int_eq(list_branches(NULL)->nrows, 0);
    ck_assert_int_eq(db->in_tx, 0);
    ck_assert_int_eq(sqlite3_get_autocommit(native()), 1);
    insert_branch("L"); /* INSERT ... RETURNING, run as a select */
    ck_assert_int_eq(db->in_tx, 1);
    ck_assert_int_eq(sqlite3_get_autocommit(native()), 0);
    jr_db_rollback(db);
    ck_assert_int_eq(sql_int("SELECT COUNT(*) FROM branches"), 0);
    /* Disarmed by the rollback: the next write commits on its own. */
    insert_branch("M");
    ck_assert_int_eq(db->in_tx, 0);
    ck_assert_int_eq(sqlite3_get_autocommit(native()), 1);
    /* Armed again and committed without a write: nothing began, nothing to do. */
    jr_db_begin_lazy(db);
    list_branches(NULL);
    ck_assert_int_eq(jr_db_commit(db), APR_SUCCESS);
    ck_assert_int_eq(db->in_tx, 0);
    ck_assert_int_eq(db->tx_lazy, 0);
    jr_db_begin_lazy(db);
    insert_branch("N");
    ck_assert_int_eq(jr_db_commit(db), APR_SUCCESS);
    ck_assert_int_eq(sql_int("SELECT COUNT(*) FROM branches"), 2);
}
END_TEST

/* ---- results and arguments ----------------------------------------------------------- */

START_TEST(rows_accessors)
{
    jr_rows_t *rows;
    long long a, b;
    open_ready();
    a = insert_branch("Alpha");
    b = insert_branch("Beta");
    ck_assert_int_gt(b, a);
    rows = list_branches(NULL);
    ck_assert_int_eq(rows->nrows, 2);
    ck_assert_int_eq(rows->ncols, 4);
    ck_assert_str_eq(rows->names[0], "id");
    ck_assert_str_eq(jr_rows_get(rows, 0, "name"), "Alpha");
    ck_assert_str_eq(jr_rows_get(rows, 1, "name"), "Beta");
    ck_assert_int_eq(jr_rows_int(rows, 0, "id", -1), a);
    ck_assert_int_eq(jr_rows_int(rows, 1, "id", -1), b);
    ck_assert_ptr_null(jr_rows_get(rows, 2, "name"));
    ck_assert_ptr_null(jr_rows_get(rows, -1, "name"));
    ck_assert_ptr_null(jr_rows_get(rows, 0, "nope"));
    ck_assert_ptr_null(jr_rows_get(NULL, 0, "name"));
    ck_assert_int_eq(jr_rows_int(rows, 0, "name", -7), -7); /* not a number */
    ck_assert_int_eq(jr_rows_int(rows, 5, "id", -7), -7);
    ck_assert_int_eq(jr_rows_int(NULL, 0, "id", -7), -7);
    /* The scope argument: a JSON list of ids. */
    rows = list_branches(jr_psprintf(pool, "[%lld]", b));
    ck_assert_int_eq(rows->nrows, 1);
    ck_assert_int_eq(jr_rows_int(rows, 0, "id", -1), b);
    rows = list_branches("[]");
    ck_assert_int_eq(rows->nrows, 0);
}
END_TEST

START_TEST(null_argument_binds_sql_null)
{
    jr_rows_t *rows;
    const char *now;
    long long br, g;
    int n = -1;
    open_ready();
    now = jr_now_iso(pool);
    br = insert_branch("B");
    ck_assert_int_eq(jr_db_select(db, pool, JR_Q_GROUP_INSERT, &rows,
                                  JR_ARGS("G", jr_i64(pool, br), NULL, now, now)),
                     APR_SUCCESS);
    g = jr_rows_int(rows, 0, "id", 0);
    ck_assert_int_gt(g, 0);
    ck_assert_str_eq(sql_text("SELECT typeof(tutor_id) FROM study_groups"), "null");
    ck_assert_int_eq(jr_db_select(db, pool, JR_Q_GROUP_GET, &rows, JR_ARGS(jr_i64(pool, g))),
                     APR_SUCCESS);
    ck_assert_int_eq(rows->nrows, 1);
    ck_assert_ptr_null(jr_rows_get(rows, 0, "tutor_id"));
    ck_assert_ptr_null(jr_rows_get(rows, 0, "deleted_at"));
    ck_assert_int_eq(jr_rows_int(rows, 0, "tutor_id", -3), -3);
    ck_assert_str_eq(jr_rows_get(rows, 0, "name"), "G");

    ck_assert_int_eq(jr_db_exec(db, pool, JR_Q_AUDIT_INSERT, &n,
                                JR_ARGS(now, NULL, NULL, "0", NULL, "test", "thing", NULL, NULL)),
                     APR_SUCCESS);
    ck_assert_int_eq(n, 1);
    ck_assert_str_eq(sql_text("SELECT typeof(actor_user_id) || typeof(actor_key_id) ||"
                              " typeof(client_ip) || typeof(entity_id) || typeof(changes)"
                              " FROM audit_log"),
                     "nullnullnullnullnull");
    ck_assert_int_eq(sql_int("SELECT via_api_key FROM audit_log"), 0);
}
END_TEST

START_TEST(exec_counts_rows)
{
    int n = -1;
    long long id;
    open_ready();
    id = insert_branch("Old");
    ck_assert_int_eq(jr_db_exec(db, pool, JR_Q_BRANCH_UPDATE, &n,
                                JR_ARGS("New", jr_now_iso(pool), jr_i64(pool, id))),
                     APR_SUCCESS);
    ck_assert_int_eq(n, 1);
    ck_assert_int_eq(jr_db_exec(db, pool, JR_Q_BRANCH_UPDATE, &n,
                                JR_ARGS("Newer", jr_now_iso(pool), jr_i64(pool, id + 100))),
                     APR_SUCCESS);
    ck_assert_int_eq(n, 0);
    ck_assert_str_eq(sql_text("SELECT name FROM branches"), "New");
}
END_TEST

/* ---- a value that cannot be read ------------------------------------------------------ */

/* The column whose reads fail, and how. SQLite really runs out of memory (a hard heap limit at
 * the current use) while it converts the value: to UTF-16 and the read answers NULL (any
 * column), or (fail_utf8) to the UTF-8 text the module reads, which only an integer needs. */
static const char *fail_column;
static int fail_utf8, fail_count;

static const unsigned char *failing_text(sqlite3_stmt *st, int col)
{
    const unsigned char *v;
    sqlite3_int64 limit;
    if (strcmp(sqlite3_column_name(st, col), fail_column) != 0 ||
        sqlite3_column_type(st, col) == SQLITE_NULL) {
        return sqlite3_column_text(st, col);
    }
    ++fail_count;
    limit = sqlite3_hard_heap_limit64(-1);
    sqlite3_hard_heap_limit64(sqlite3_memory_used());
    v = fail_utf8 ? sqlite3_column_text(st, col) : sqlite3_column_text16(st, col);
    sqlite3_hard_heap_limit64(limit);
    /* The test is about a real failure: the conversion must have needed memory. */
    ck_assert_ptr_null(v);
    ck_assert_int_eq(sqlite3_errcode(sqlite3_db_handle(st)), SQLITE_NOMEM);
    return NULL;
}

static void fail_reads(const char *column, int utf8)
{
    fail_column = column;
    fail_utf8 = utf8;
    fail_count = 0;
    jr_db_test_column_text = failing_text;
}

static int count_rows(void *baton, const jr_rows_t *shape, const char *const *row)
{
    (void)shape;
    (void)row;
    ++*(int *)baton;
    return 0;
}

static int first_row(void *baton, const jr_rows_t *shape, const char *const *row)
{
    (void)shape;
    (void)row;
    ++*(int *)baton;
    return 1;
}

START_TEST(unreadable_value_fails_the_select)
{
    jr_rows_t *rows = NULL;
    open_ready();
    insert_branch("Readable");
    fail_reads("id", _i);
    log_count = 0;
    ck_assert_int_ne(jr_db_select(db, pool, JR_Q_BRANCHES_LIST, &rows, JR_ARGS(NULL, NULL, NULL, "10", "0")),
                     APR_SUCCESS);
    ck_assert_ptr_null(rows);
    ck_assert_int_eq(fail_count, 1);
    ck_assert_msg(log_count == 1 && strstr(last_log, "JR01020") &&
                      strstr(last_log, "branches_list"),
                  "log: %s", last_log);
    ck_assert_msg(strstr(db->last_error, "out of memory"), "%s", db->last_error);
    /* The statement is usable again afterwards. */
    jr_db_test_column_text = NULL;
    ck_assert_int_eq(list_branches(NULL)->nrows, 1);
}
END_TEST

/* The streaming path, with a caller that stops after the first row: SQLite fails the step after
 * a read that ran out of memory, but that step never comes. The row never reaches the caller. */
START_TEST(unreadable_value_fails_the_stream)
{
    int n = 0;
    open_ready();
    insert_branch("Readable");
    fail_reads("id", _i);
    ck_assert_int_ne(jr_db_select_each(db, pool, JR_Q_BRANCHES_LIST, first_row, &n,
                                       JR_ARGS(NULL, NULL, NULL, "10", "0")),
                     APR_SUCCESS);
    ck_assert_int_eq(n, 0);
    ck_assert_int_eq(fail_count, 1);
    ck_assert_msg(strstr(last_log, "JR01020"), "log: %s", last_log);
    jr_db_test_column_text = NULL;
    ck_assert_int_eq(jr_db_select_each(db, pool, JR_Q_BRANCHES_LIST, count_rows, &n,
                                       JR_ARGS(NULL, NULL, NULL, "10", "0")),
                     APR_SUCCESS);
    ck_assert_int_eq(n, 1);
}
END_TEST

START_TEST(sql_null_is_still_null)
{
    jr_rows_t *rows = NULL;
    const char *now;
    int n = 0;
    open_ready();
    now = jr_now_iso(pool);
    ck_assert_int_eq(jr_db_select(db, pool, JR_Q_GROUP_INSERT, &rows,
                                  JR_ARGS("G", jr_i64(pool, insert_branch("B")), NULL, now, now)),
                     APR_SUCCESS);
    fail_reads("tutor_id", 0); /* NULL in this row: never a failure */
    ck_assert_int_eq(jr_db_select(db, pool, JR_Q_GROUP_GET,
                                  &rows, JR_ARGS(jr_rows_get(rows, 0, "id"))),
                     APR_SUCCESS);
    ck_assert_int_eq(rows->nrows, 1);
    ck_assert_ptr_null(jr_rows_get(rows, 0, "tutor_id"));
    ck_assert_str_eq(jr_rows_get(rows, 0, "name"), "G");
    ck_assert_int_eq(jr_db_select_each(db, pool, JR_Q_GROUP_GET, count_rows, &n,
                                       JR_ARGS(jr_rows_get(rows, 0, "id"))),
                     APR_SUCCESS);
    ck_assert_int_eq(n, 1);
    ck_assert_int_eq(fail_count, 0);
    ck_assert_int_eq(log_count, 0);
}
END_TEST

/* API-key authentication on the operations fixture: a key restricted to a branch, with an
 * expiry; a failed read of any of its columns is a database error, never "unrestricted" or
 * "does not expire". */
static const char *restricted_key(void)
{
    long long b = fx_new_branch("KeyBranch");
    jr_result_t res = fx_call(jr_op_keys_create,
                              jr_psprintf(fx_pool,
                                           "{\"name\": \"k\", \"scopes\": [\"read\"], "
                                           "\"branch_ids\": [%lld], "
                                           "\"expires_at\": \"2999-01-01T00:00:00Z\"}",
                                           b));
    ck_assert_msg(res.status == 201, "create key: %d %s", res.status, fx_error(&res));
    return json_string_value(json_object_get(res.json, "key"));
}

/* The answer of a refused key, or status 0 for an accepted one. */
static jr_result_t authenticate(jr_ctx_t *c, const char *key)
{
    jr_result_t res;
    int ok;
    fx_request_ctx(c, JR_IF_V1, "192.0.2.7");
    jr_result_init(&res, fx_pool);
    ok = jr_auth_key(c, key, &res);
    if (ok) {
        res.status = 0;
    }
    return res;
}

START_TEST(key_auth_read_failure_is_503)
{
    static const char *const columns[] = {"branch_ids", "expires_at", "scopes", "id"};
    const char *key = restricted_key();
    jr_ctx_t c;
    jr_result_t res = authenticate(&c, key);
    ck_assert_int_eq(res.status, 0); /* the key works */
    ck_assert_int_eq(c.who.role, JR_ROLE_TUTOR);

    fail_reads(columns[_i % 4], _i >= 4);
    res = authenticate(&c, key);
    ck_assert_int_eq(fail_count, 1);
    ck_assert_msg(res.status == 503, "%s: status %d (%s)", fail_column, res.status,
                  fx_error(&res));
    ck_assert_int_eq(c.who.authenticated, 0);
}
END_TEST

static void reads_teardown(void)
{
    jr_db_test_column_text = NULL;
    jr_log_set(NULL, NULL, JR_LOG_DEBUG);
}

static void quiet_setup(void)
{
    jr_log_set(capture, NULL, JR_LOG_DEBUG);
}

/* A test case with its own directory of test databases and the given checked fixture. */
static TCase *db_tcase(Suite *s, const char *name, SFun setup_fn, SFun teardown_fn)
{
    return fx_tcase(s, name, setup_fn, teardown_fn);
}

/* ---- search: the term's statement, and the plans of the indexed ones -------------------- */

START_TEST(search_term_chooses_the_index_by_characters)
{
    jr_search_t sr;
    /* Three characters and more: every third trigram and the last, quoted (quotes doubled,
     * nothing else escaped), all required. */
    jr_search_term(pool, "abc", &sr);
    ck_assert_int_eq(sr.indexed, 1);
    ck_assert_str_eq(sr.first, "\"abc\"");
    ck_assert_str_eq(sr.like, "%abc%");
    jr_search_term(pool, "abcdef", &sr);
    ck_assert_str_eq(sr.first, "\"abc\" AND \"def\"");
    jr_search_term(pool, "Amara Okafor", &sr);
    ck_assert_str_eq(sr.first, "\"Ama\" AND \"ra \" AND \"Oka\" AND \"for\"");
    jr_search_term(pool, "abcdefg", &sr); /* the last window overlaps the one before */
    ck_assert_str_eq(sr.first, "\"abc\" AND \"def\" AND \"efg\"");
    jr_search_term(pool, "a\"b%_\\", &sr);
    ck_assert_int_eq(sr.indexed, 1);
    ck_assert_str_eq(sr.first, "\"a\"\"b\" AND \"%_\\\"");
    ck_assert_str_eq(sr.like, "%a\"b\\%\\_\\\\%");
    jr_search_term(pool, "\"\"\"\"", &sr); /* only quotes: 4 characters, 2 windows */
    ck_assert_str_eq(sr.first, "\"\"\"\"\"\"\"\" AND \"\"\"\"\"\"\"\"");
    /* Windows are characters: "äöüß" (8 bytes) is "äöü" and "öüß". */
    jr_search_term(pool, "\xc3\xa4\xc3\xb6\xc3\xbc\xc3\x9f", &sr);
    ck_assert_str_eq(sr.first, "\"\xc3\xa4\xc3\xb6\xc3\xbc\" AND \"\xc3\xb6\xc3\xbc\xc3\x9f\"");
    /* Characters, not bytes: two letters of two bytes each stay a scan; three are indexed. */
    jr_search_term(pool, "\xc3\xa4\xc3\xb6", &sr);
    ck_assert_int_eq(sr.indexed, 0);
    ck_assert_str_eq(sr.first, sr.like);
    ck_assert_str_eq(sr.like, "%\xc3\xa4\xc3\xb6%");
    jr_search_term(pool, "\xc3\xa4\xc3\xb6\xc3\xbc", &sr);
    ck_assert_int_eq(sr.indexed, 1);
    jr_search_term(pool, "\xf0\x9f\x98\x80x", &sr); /* a 4-byte character and one more */
    ck_assert_int_eq(sr.indexed, 0);
    jr_search_term(pool, "ab", &sr);
    ck_assert_int_eq(sr.indexed, 0);
    ck_assert_str_eq(sr.first, "%ab%");
    jr_search_term(pool, "", &sr);
    ck_assert_int_eq(sr.indexed, 0);
    ck_assert_str_eq(sr.like, "%%");
    /* Not UTF-8 (a lone continuation byte, a truncated sequence, an overlong form, a
     * surrogate): the tokenizer and LIKE could disagree on its characters, so it scans. */
    jr_search_term(pool, "abc\x80", &sr);
    ck_assert_int_eq(sr.indexed, 0);
    jr_search_term(pool, "abc\xc3", &sr);
    ck_assert_int_eq(sr.indexed, 0);
    jr_search_term(pool, "ab\xc0\xafz", &sr);
    ck_assert_int_eq(sr.indexed, 0);
    jr_search_term(pool, "ab\xed\xa0\x80z", &sr);
    ck_assert_int_eq(sr.indexed, 0);
    jr_search_term(pool, "ab\xf5\x80\x80\x80", &sr);
    ck_assert_int_eq(sr.indexed, 0);
}
END_TEST

/* The plan of a catalogue statement, its steps joined by "; ". */
static const char *query_plan(jr_stmt_id_t id)
{
    const char *sql = jr_db_placeholders(pool, jr_stmt_sql(id, JR_DB_SQLITE), 0), *out = "";
    sqlite3_stmt *st = NULL;
    ck_assert_msg(sqlite3_prepare_v2(native(), apr_pstrcat(pool, "EXPLAIN QUERY PLAN ", sql,
                                                            NULL),
                                     -1, &st, NULL) == SQLITE_OK,
                  "%s: %s", jr_stmt_label(id), sqlite3_errmsg(native()));
    while (sqlite3_step(st) == SQLITE_ROW) {
        out = apr_pstrcat(pool, out, (const char *)sqlite3_column_text(st, 3), "; ", NULL);
    }
    sqlite3_finalize(st);
    return out;
}

START_TEST(search_plans_use_the_index)
{
    static const struct {
        jr_stmt_id_t id;
        const char *fts, *base;
    } cases[] = {
        {JR_Q_ENTRIES_SEARCH, "entries_fts", "SEARCH e USING INTEGER PRIMARY KEY"},
        {JR_Q_ENTRIES_SEARCH_COUNT, "entries_fts", "SEARCH e USING INTEGER PRIMARY KEY"},
        {JR_Q_STUDENTS_SEARCH, "students_fts", "SEARCH s USING INTEGER PRIMARY KEY"},
        {JR_Q_STUDENTS_SEARCH_COUNT, "students_fts", "SEARCH s USING INTEGER PRIMARY KEY"},
        {JR_Q_MODULES_SEARCH, "modules_fts", "SEARCH m USING INTEGER PRIMARY KEY"},
        {JR_Q_MODULES_SEARCH_COUNT, "modules_fts", "SEARCH m USING INTEGER PRIMARY KEY"},
    };
    size_t i;
    const char *plan;
    open_ready();
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
        plan = query_plan(cases[i].id);
        /* The full-text table first, by its MATCH (M); each candidate's row by its id. */
        ck_assert_msg(strncmp(plan, apr_pstrcat(pool, "SCAN ", cases[i].fts, " VIRTUAL TABLE",
                                                NULL),
                              strlen(cases[i].fts) + 19) == 0 &&
                          strstr(plan, ":M") != NULL && strstr(plan, cases[i].base) != NULL,
                      "%s: %s", jr_stmt_label(cases[i].id), plan);
    }
    /* The page of entries comes from the index newest first: no sort of every match. */
    plan = query_plan(JR_Q_ENTRIES_SEARCH);
    ck_assert_msg(strstr(plan, "TEMP B-TREE") == NULL, "%s", plan);
}
END_TEST

Suite *suite_db(void)
{
    Suite *s = suite_create("db");
    TCase *tc = db_tcase(s, "db", setup, teardown);
    tcase_add_test(tc, dialects);
    tcase_add_test(tc, open_failures);
    tcase_add_test(tc, connection_settings);
    tcase_add_test(tc, migrate_is_idempotent);
    tcase_add_test(tc, migrate_current_without_schema);
    tcase_add_test(tc, migration_lists_agree);
    tcase_add_test(tc, statement_catalogue);
    tcase_add_test(tc, connection_keeps_only_statements_it_ran);
    tcase_add_test(tc, statement_prepared_on_use_can_fail);
    tcase_add_test(tc, cache_size_is_set_on_new_connections);
    tcase_add_test(tc, statement_writes);
    tcase_add_test(tc, prepare_fails_before_migrating);
    tcase_add_test(tc, unknown_statement_fails);
    tcase_add_test(tc, rollback_leaves_nothing);
    tcase_add_test(tc, own_statements_apart_from_other_modules);
    tcase_add_test(tc, preconfigured_connection_has_foreign_keys);
    tcase_add_test(tc, preconfigured_connection_waits_for_locks_from_the_start);
    tcase_add_test(tc, late_foreign_keys_are_reported);
    tcase_add_test(tc, use_prepares_when_the_connection_has_none);
    tcase_add_test(tc, wrapper_rolls_back_on_pool_cleanup);
    tcase_add_test(tc, schema_behind_serves_nothing);
    tcase_add_test(tc, unique_violation_detected);
    tcase_add_test(tc, busy_is_classified);
    tcase_add_test(tc, pgsql_sqlstates_are_classified);
    tcase_add_test(tc, lazy_transaction_begins_at_the_first_write);
    tcase_add_test(tc, rows_accessors);
    tcase_add_test(tc, null_argument_binds_sql_null);
    tcase_add_test(tc, exec_counts_rows);
    tcase_add_test(tc, search_term_chooses_the_index_by_characters);
    tcase_add_test(tc, search_plans_use_the_index);

    tc = db_tcase(s, "db_reads", setup, teardown);
    tcase_add_checked_fixture(tc, NULL, reads_teardown);
    tcase_add_loop_test(tc, unreadable_value_fails_the_select, 0, 2);
    tcase_add_loop_test(tc, unreadable_value_fails_the_stream, 0, 2);
    tcase_add_test(tc, sql_null_is_still_null);

    tc = db_tcase(s, "db_reads_keys", quiet_setup, reads_teardown);
    tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
    /* Each column fails converting to UTF-16 (0-3); the integer id also converting to the
     * UTF-8 text the module reads (7): text columns need no memory for that. */
    tcase_add_loop_test(tc, key_auth_read_failure_is_503, 0, 4);
    tcase_add_loop_test(tc, key_auth_read_failure_is_503, 7, 8);
    return s;
}
