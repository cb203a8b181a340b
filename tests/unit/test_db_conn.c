/* The database layer on connections made the way mod_dbd makes them (shared with other modules'
 * statements, preconfigured, cleaned up with their pool), a schema behind the module's, and the
 * classes of failures (unique violations, busy, PostgreSQL's SQLSTATEs), lazy transactions. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <apr_dbd.h>
#include <apr_hash.h>
#include <apr_pools.h>
#include <apr_strings.h>
#include <sqlite3.h>

#include "db_fixture.h"
#include "jr_db_backend.h" /* the statement cache */
#include "jr_migrate.h"
#include "jr_stmts.h"
#include "jr_util.h"

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
    ck_assert_int_eq(apr_pool_create(&c->pool, dbt_pool), APR_SUCCESS);
    ck_assert_int_eq(apr_dbd_get_driver(c->pool, "sqlite3", &c->driver), APR_SUCCESS);
    ck_assert_int_eq(apr_dbd_open(c->driver, c->pool, dbt_path, &c->handle), APR_SUCCESS);
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
    if (apr_dbd_pvselect(c->driver, dbt_pool, c->handle, &res, st, 0, name, NULL) != 0) {
        return -1;
    }
    while (apr_dbd_get_row(c->driver, dbt_pool, res, &row, -1) == 0) {
        found = apr_pstrdup(dbt_pool, apr_dbd_get_entry(c->driver, row, 0));
    }
    return found && !strcmp(found, name) ? 0 : 1;
}

static long long count_branches(jr_db_t *w)
{
    jr_rows_t *rows = NULL;
    ck_assert_int_eq(jr_db_select(w, dbt_pool, JR_Q_BRANCHES_LIST, &rows,
                                  JR_ARGS(NULL, NULL, NULL, "1000", "0")),
                     APR_SUCCESS);
    return rows->nrows;
}

START_TEST(own_statements_apart_from_other_modules)
{
    dbd_conn_t c;
    jr_db_t *w;
    int on = -1;
    dbt_open_ready();
    dbt_insert_branch("Shared");
    ck_assert_int_eq(jr_db_sqlite_preconfigure(dbt_pool, dbt_path), APR_SUCCESS);
    dbd_conn_open(&c, 1);
    /* mod_dbd's table holds only what other modules registered. */
    ck_assert_uint_eq(apr_hash_count(c.prepared), 1);
    ck_assert_ptr_null(apr_hash_get(c.prepared, "branches_list", APR_HASH_KEY_STRING));
    w = jr_db_use(dbt_pool, c.driver, c.handle, c.pool);
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
    ck_assert_int_eq(dbt_log_count, 0);
    apr_pool_destroy(c.pool);
}
END_TEST

START_TEST(preconfigured_connection_has_foreign_keys)
{
    dbd_conn_t c;
    int on = -1;
    dbt_open_ready();
    ck_assert_int_eq(jr_db_sqlite_preconfigure(dbt_pool, dbt_path), APR_SUCCESS);
    ck_assert_int_eq(jr_db_sqlite_preconfigure(dbt_pool, dbt_path), APR_SUCCESS); /* once is enough */
    ck_assert_int_ne(jr_db_sqlite_preconfigure(dbt_pool, "/nonexistent-dir/x.db"), APR_SUCCESS);
    dbd_conn_open(&c, 0);
    sqlite3_db_config(apr_dbd_native_handle(c.driver, c.handle), SQLITE_DBCONFIG_ENABLE_FKEY, -1,
                      &on);
    ck_assert_int_eq(on, 1);
    ck_assert_int_eq(dbt_log_count, 0);
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
    dbt_open_ready();
    ck_assert_int_eq(jr_db_sqlite_preconfigure(dbt_pool, dbt_path), APR_SUCCESS);
    ck_assert_int_eq(sqlite3_open(dbt_path, &conn), SQLITE_OK);
    ck_assert_int_eq(busy_timeout_of(conn), 5000);
    sqlite3_close(conn);
}
END_TEST

/* JournalSQLiteBusyTimeout: SQLite's busy timeout of the connections set up afterwards, and of
 * those that open already set up (the preconfigured file). */
START_TEST(busy_timeout_is_set_on_new_connections)
{
    sqlite3 *conn = NULL;
    jr_db_sqlite_busy_timeout(750);
    dbt_open();
    ck_assert_int_eq(dbt_sql_int("PRAGMA busy_timeout"), 750);
    ck_assert_int_eq(jr_db_sqlite_preconfigure(dbt_pool, dbt_path), APR_SUCCESS);
    ck_assert_int_eq(sqlite3_open(dbt_path, &conn), SQLITE_OK);
    ck_assert_int_eq(busy_timeout_of(conn), 750);
    sqlite3_close(conn);
    jr_db_sqlite_busy_timeout(0); /* back to the default */
    jr_db_close(dbt_db);
    dbt_open();
    ck_assert_int_eq(dbt_sql_int("PRAGMA busy_timeout"), 5000);
}
END_TEST

START_TEST(late_foreign_keys_are_reported)
{
    dbd_conn_t c;
    dbt_open_ready();
    dbt_insert_branch("Late");
    /* Not preconfigured: foreign keys are turned on after the other module prepared. */
    dbd_conn_open(&c, 1);
    ck_assert_msg(dbt_log_count == 1 && strstr(dbt_last_log, "JR01022"), "log (%d): %s", dbt_log_count,
                  dbt_last_log);
    ck_assert_int_ne(other_finds(&c, "Late"), 0); /* why jr_db_sqlite_preconfigure exists */
    apr_pool_destroy(c.pool);
}
END_TEST

START_TEST(use_prepares_when_the_connection_has_none)
{
    dbd_conn_t c;
    jr_db_t *w;
    dbt_open_ready();
    dbt_insert_branch("One");
    ck_assert_int_eq(jr_db_sqlite_preconfigure(dbt_pool, dbt_path), APR_SUCCESS);
    dbd_conn_open(&c, 0);
    w = jr_db_use(dbt_pool, c.driver, c.handle, c.pool);
    ck_assert_ptr_nonnull(w);
    ck_assert_msg(strstr(dbt_last_log, "JR01021"), "log: %s", dbt_last_log);
    ck_assert_int_eq(count_branches(w), 1);
    /* Found the next time, without preparing again. */
    dbt_log_count = 0;
    ck_assert_ptr_eq(jr_db_use(dbt_pool, c.driver, c.handle, c.pool)->cache, w->cache);
    ck_assert_int_eq(dbt_log_count, 0);
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
    dbt_open_ready();
    ck_assert_int_eq(jr_db_sqlite_preconfigure(dbt_pool, dbt_path), APR_SUCCESS);
    dbd_conn_open(&c, 1);
    ck_assert_int_eq(apr_pool_create(&req, dbt_pool), APR_SUCCESS);
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
    ck_assert_int_eq(dbt_sql_int("SELECT COUNT(*) FROM branches"), 0);
    ck_assert_msg(strstr(dbt_last_log, "JR01001") != NULL, "log: %s", dbt_last_log);
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
    dbt_open_ready();
    ck_assert_int_eq(sqlite3_exec(dbt_native(), apr_psprintf(dbt_pool, "DELETE FROM schema_migrations"
                                                               " WHERE version = %d", latest),
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    ck_assert_int_eq(jr_db_sqlite_preconfigure(dbt_pool, dbt_path), APR_SUCCESS);
    dbd_conn_open(&c, 1); /* attached all the same: the cache says why it holds nothing */
    /* The schema's version is now the highest one left (numbers may have gaps). */
    ck_assert_msg(strstr(dbt_last_log, apr_psprintf(dbt_pool, "JR01030: database schema version %d is "
                                                      "older than this module's %d",
                                                (int)dbt_sql_int("SELECT MAX(version) FROM"
                                                                 " schema_migrations"),
                                                latest)),
                  "log: %s", dbt_last_log);
    dbt_log_count = 0;
    w = jr_db_use(dbt_pool, c.driver, c.handle, c.pool);
    ck_assert_ptr_nonnull(w);
    ck_assert_int_eq(dbt_log_count, 0); /* said once, when the connection opened */
    ck_assert_str_eq(jr_db_refusal(w),
                     "database schema is older than this module: run journal-admin migrate");
    ck_assert_int_eq(jr_db_schema_behind(w, &have, &need), 1);
    ck_assert_int_eq(have, dbt_sql_int("SELECT MAX(version) FROM schema_migrations"));
    ck_assert_int_lt(have, latest);
    ck_assert_int_eq(need, latest);
    ck_assert_ptr_null(w->cache->stmts[JR_Q_BRANCHES_LIST]);
    ck_assert_str_eq(jr_db_refusal(NULL), "database unavailable");
    /* journal-admin migrate runs: the next user of the connection prepares and is served. */
    ck_assert_int_eq(sqlite3_exec(dbt_native(), apr_psprintf(dbt_pool, "INSERT INTO schema_migrations"
                                                               " (version, name, applied_at)"
                                                               " VALUES (%d, 'x', 'now')",
                                                         latest),
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    w = jr_db_use(dbt_pool, c.driver, c.handle, c.pool);
    ck_assert_ptr_nonnull(w);
    ck_assert_msg(strstr(dbt_last_log, "JR01031"), "log: %s", dbt_last_log);
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
    dbt_open_ready();
    now = jr_now_iso(dbt_pool);
    dbt_insert_branch("Same");
    dbt_log_count = 0;
    ck_assert_int_ne(jr_db_select(dbt_db, dbt_pool, JR_Q_BRANCH_INSERT, &rows, JR_ARGS("Same", now, now)),
                     APR_SUCCESS);
    ck_assert_int_eq(jr_db_unique_violation(dbt_db), 1);
    ck_assert_msg(strstr(dbt_db->last_error, "UNIQUE"), "%s", dbt_db->last_error);
    ck_assert_int_eq(jr_db_error(dbt_db), JR_DB_E_UNIQUE);
    ck_assert_int_eq(dbt_db->native_code, SQLITE_CONSTRAINT_UNIQUE);
    ck_assert_int_eq(dbt_log_count, 0); /* expected conflicts are not logged as errors */
    /* A later success clears it. */
    rows = dbt_list_branches(NULL);
    ck_assert_int_eq(jr_db_unique_violation(dbt_db), 0);
    ck_assert_int_eq(jr_db_error(dbt_db), JR_DB_OK);
    /* A foreign key failure is an error, not a conflict, and is logged. */
    ck_assert_int_ne(jr_db_select(dbt_db, dbt_pool, JR_Q_GROUP_INSERT, &rows,
                                  JR_ARGS("g", "999", NULL, now, now)),
                     APR_SUCCESS);
    ck_assert_int_eq(jr_db_unique_violation(dbt_db), 0);
    ck_assert_int_eq(jr_db_error(dbt_db), JR_DB_E_FOREIGN_KEY);
    ck_assert_msg(strstr(dbt_last_log, "JR01005"), "log: %s", dbt_last_log);
    /* Classified by SQLite's extended result code, never by the message: a trigger that fails
     * with the very words of a unique violation is another constraint, and an error. */
    ck_assert_int_eq(sqlite3_exec(dbt_native(),
                                  "CREATE TRIGGER fake BEFORE INSERT ON branches WHEN"
                                  " NEW.name = 'Fake' BEGIN SELECT RAISE(ABORT,"
                                  " 'UNIQUE constraint failed: branches.name'); END",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    dbt_log_count = 0;
    ck_assert_int_ne(jr_db_select(dbt_db, dbt_pool, JR_Q_BRANCH_INSERT, &rows, JR_ARGS("Fake", now, now)),
                     APR_SUCCESS);
    ck_assert_msg(strstr(dbt_db->last_error, "UNIQUE constraint failed"), "%s", dbt_db->last_error);
    ck_assert_int_eq(jr_db_error(dbt_db), JR_DB_E_CONSTRAINT);
    ck_assert_int_eq(jr_db_unique_violation(dbt_db), 0);
    ck_assert_int_eq(dbt_log_count, 1);
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
    dbt_open_ready();
    ck_assert_int_eq(jr_db_open(&other, dbt_pool, "sqlite3", dbt_path, &err), APR_SUCCESS);
    sqlite3_busy_timeout(other->native, 0);
    /* SQLite's lock held by a writer outside the write queue (the sqlite3 shell, say). */
    ck_assert_int_eq(sqlite3_exec(dbt_native(), "BEGIN IMMEDIATE", NULL, NULL, NULL), SQLITE_OK);
    ck_assert_int_ne(jr_db_begin(other), APR_SUCCESS);
    ck_assert_int_eq(jr_db_error(other), JR_DB_E_BUSY);
    ck_assert_int_eq(other->native_code, SQLITE_BUSY);
    ck_assert_msg(strstr(dbt_last_log, "JR01006: BEGIN IMMEDIATE failed: database is locked"),
                  "log: %s", dbt_last_log);
    ck_assert_int_eq(sqlite3_exec(dbt_native(), "ROLLBACK", NULL, NULL, NULL), SQLITE_OK);
    jr_db_close(other);
}
END_TEST

/* A lazy transaction begins at the first statement that writes: reads before it hold no lock,
 * a commit without a write has nothing to do. */
START_TEST(lazy_transaction_begins_at_the_first_write)
{
    dbt_open_ready();
    jr_db_begin_lazy(dbt_db);
    ck_assert_int_eq(dbt_list_branches(NULL)->nrows, 0);
    ck_assert_int_eq(dbt_db->in_tx, 0);
    ck_assert_int_eq(sqlite3_get_autocommit(dbt_native()), 1);
    dbt_insert_branch("L"); /* INSERT ... RETURNING, run as a select */
    ck_assert_int_eq(dbt_db->in_tx, 1);
    ck_assert_int_eq(sqlite3_get_autocommit(dbt_native()), 0);
    jr_db_rollback(dbt_db);
    ck_assert_int_eq(dbt_sql_int("SELECT COUNT(*) FROM branches"), 0);
    /* Disarmed by the rollback: the next write commits on its own. */
    dbt_insert_branch("M");
    ck_assert_int_eq(dbt_db->in_tx, 0);
    ck_assert_int_eq(sqlite3_get_autocommit(dbt_native()), 1);
    /* Armed again and committed without a write: nothing began, nothing to do. */
    jr_db_begin_lazy(dbt_db);
    dbt_list_branches(NULL);
    ck_assert_int_eq(jr_db_commit(dbt_db), APR_SUCCESS);
    ck_assert_int_eq(dbt_db->in_tx, 0);
    ck_assert_int_eq(dbt_db->tx_lazy, 0);
    jr_db_begin_lazy(dbt_db);
    dbt_insert_branch("N");
    ck_assert_int_eq(jr_db_commit(dbt_db), APR_SUCCESS);
    ck_assert_int_eq(dbt_sql_int("SELECT COUNT(*) FROM branches"), 2);
}
END_TEST

/* The catalogue is checked whole when a connection opens, but a connection keeps prepared
 * only the statements it ran: the whole catalogue held about 2 MB of SQLite's memory on every
 * pooled connection of every child. */
START_TEST(connection_keeps_only_statements_it_ran)
{
    int cur = -1, hi = -1, ran;
    jr_stmt_id_t id;
    dbt_open_ready();
    ck_assert_int_eq(sqlite3_db_status(dbt_native(), SQLITE_DBSTATUS_STMT_USED, &cur, &hi, 0),
                     SQLITE_OK);
    ck_assert_msg(cur < 64 * 1024, "%d bytes of statements held after the check", cur);
    for (id = 0; id < JR_Q__COUNT; ++id) {
        ck_assert_msg(!dbt_db->cache->stmts[id], "%s stays prepared", jr_stmt_label(id));
    }
    ck_assert_int_eq(count_branches(dbt_db), 0);
    ck_assert_int_eq(count_branches(dbt_db), 0);
    ck_assert_ptr_nonnull(dbt_db->cache->stmts[JR_Q_BRANCHES_LIST]);
    for (ran = 0, id = 0; id < JR_Q__COUNT; ++id) {
        ran += dbt_db->cache->stmts[id] != NULL;
    }
    ck_assert_int_eq(ran, 1);
    ck_assert_int_eq(dbt_log_count, 0);
}
END_TEST

/* A statement first run after the schema changed under the connection fails as a statement
 * does, and runs once the schema is back. */
START_TEST(statement_prepared_on_use_can_fail)
{
    jr_rows_t *rows = NULL;
    dbt_open_ready();
    ck_assert_int_eq(sqlite3_exec(dbt_native(), "ALTER TABLE branches RENAME TO branches_away",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    ck_assert_int_ne(jr_db_select(dbt_db, dbt_pool, JR_Q_BRANCHES_LIST, &rows,
                                  JR_ARGS(NULL, NULL, NULL, "1000", "0")),
                     APR_SUCCESS);
    ck_assert_ptr_null(rows);
    ck_assert_msg(strstr(dbt_last_log, "JR01003: cannot prepare statement branches_list: no such "
                                       "table: branches"),
                  "log: %s", dbt_last_log);
    ck_assert_int_eq(jr_db_error(dbt_db), JR_DB_E_OTHER);
    ck_assert_ptr_null(dbt_db->cache->stmts[JR_Q_BRANCHES_LIST]);
    ck_assert_int_eq(sqlite3_exec(dbt_native(), "ALTER TABLE branches_away RENAME TO branches",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    ck_assert_int_eq(count_branches(dbt_db), 0);
}
END_TEST

/* JournalSQLiteCacheSize: the page cache of the connections set up afterwards. */
START_TEST(cache_size_is_set_on_new_connections)
{
    jr_db_sqlite_cache_size(256 * 1024);
    dbt_open();
    jr_db_sqlite_cache_size(0);
    ck_assert_int_eq(dbt_sql_int("PRAGMA cache_size"), -256);
    jr_db_close(dbt_db);
    dbt_open();
    ck_assert_int_eq(dbt_sql_int("PRAGMA cache_size"), -2000); /* SQLite's own */
}
END_TEST

void db_conn_tests(TCase *tc)
{
    tcase_add_test(tc, busy_timeout_is_set_on_new_connections);
    tcase_add_test(tc, own_statements_apart_from_other_modules);
    tcase_add_test(tc, connection_keeps_only_statements_it_ran);
    tcase_add_test(tc, statement_prepared_on_use_can_fail);
    tcase_add_test(tc, cache_size_is_set_on_new_connections);
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
}
