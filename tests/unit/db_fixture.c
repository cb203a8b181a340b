/* The fixture of the database suites (test_db*.c, test_search.c): a temporary SQLite file per
 * test, the log captured, ad-hoc SQL through the native handle. */
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
#include "jr_log.h"
#include "jr_migrate.h"
#include "jr_util.h"
#include "ops_fixture.h" /* fx_dir_*: the directory of the test databases */

apr_pool_t *dbt_pool;
jr_db_t *dbt_db;
char dbt_path[64]; /* the current test database, "" when none */
char dbt_last_log[1024];
int dbt_log_count;

void dbt_capture(void *baton, jr_log_level_e level, apr_status_t rv, const char *file,
                    int line, const char *msg)
{
    (void)baton;
    (void)rv;
    if (level <= JR_LOG_WARN) {
        ++dbt_log_count;
    }
    apr_cpystrn(dbt_last_log, msg, sizeof(dbt_last_log));
}

/* Removes the test database (the checked teardown). */
static void remove_files(void)
{
    static const char *const suffixes[] = {"", "-wal", "-shm", "-journal"};
    size_t i;
    for (i = 0; dbt_path[0] && i < sizeof(suffixes) / sizeof(suffixes[0]); ++i) {
        char name[sizeof(dbt_path) + 16];
        snprintf(name, sizeof(name), "%s%s", dbt_path, suffixes[i]);
        unlink(name);
    }
    dbt_path[0] = '\0';
}

void dbt_setup(void)
{
    int fd;
    ck_assert_int_eq(apr_pool_create(&dbt_pool, NULL), APR_SUCCESS);
    snprintf(dbt_path, sizeof(dbt_path), "%s/db-XXXXXX", fx_dir());
    fd = mkstemp(dbt_path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    dbt_db = NULL;
    dbt_log_count = 0;
    dbt_last_log[0] = '\0';
    jr_log_set(dbt_capture, NULL, JR_LOG_DEBUG);
}

void dbt_teardown(void)
{
    if (dbt_db) {
        jr_db_close(dbt_db);
        dbt_db = NULL;
    }
    apr_pool_destroy(dbt_pool);
    dbt_pool = NULL;
    remove_files();
    jr_log_set(NULL, NULL, JR_LOG_DEBUG);
}

void dbt_open(void)
{
    const char *err = NULL;
    apr_status_t rv = jr_db_open(&dbt_db, dbt_pool, "sqlite3", dbt_path, &err);
    ck_assert_msg(rv == APR_SUCCESS, "open: %s", err ? err : "?");
    ck_assert_ptr_nonnull(dbt_db);
}

void dbt_open_ready(void)
{
    const char *err = NULL;
    int applied = -1, version = -1;
    dbt_open();
    ck_assert_msg(jr_migrate(dbt_db, dbt_pool, &applied, &version, &err) == APR_SUCCESS, "migrate: %s",
                  err ? err : "?");
    ck_assert_int_eq(jr_db_prepare_all(dbt_db), APR_SUCCESS);
}

sqlite3 *dbt_native(void)
{
    return apr_dbd_native_handle(dbt_db->driver, dbt_db->handle);
}

/* The first column of the first row of an ad-hoc query, as text (NULL for SQL NULL). */
const char *dbt_sql_text(const char *sql)
{
    sqlite3_stmt *st = NULL;
    const char *out = NULL;
    ck_assert_msg(sqlite3_prepare_v2(dbt_native(), sql, -1, &st, NULL) == SQLITE_OK, "%s: %s", sql,
                  sqlite3_errmsg(dbt_native()));
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
        out = apr_pstrdup(dbt_pool, (const char *)sqlite3_column_text(st, 0));
    }
    sqlite3_finalize(st);
    return out;
}

long long dbt_sql_int(const char *sql)
{
    const char *v = dbt_sql_text(sql);
    ck_assert_msg(v != NULL, "%s gave NULL", sql);
    return atoll(v);
}

long long dbt_insert_branch(const char *name)
{
    jr_rows_t *rows = NULL;
    const char *now = jr_now_iso(dbt_pool);
    ck_assert_int_eq(jr_db_select(dbt_db, dbt_pool, JR_Q_BRANCH_INSERT, &rows, JR_ARGS(name, now, now)),
                     APR_SUCCESS);
    ck_assert_int_eq(rows->nrows, 1);
    return jr_rows_int(rows, 0, "id", 0);
}

int dbt_count_migrations(void)
{
    int n = 0;
    while (jr_migrations_sqlite[n].name) {
        ++n;
    }
    return n;
}

/* Every branch the scope allows (a JSON array of ids, or NULL for all). */
jr_rows_t *dbt_list_branches(const char *scope)
{
    jr_rows_t *rows = NULL;
    ck_assert_int_eq(jr_db_select(dbt_db, dbt_pool, JR_Q_BRANCHES_LIST, &rows,
                                  JR_ARGS(scope, scope, NULL, "1000", "0")),
                     APR_SUCCESS);
    return rows;
}

/* A test case with its own directory of test databases and the given checked fixture. */
TCase *dbt_tcase(Suite *s, const char *name, SFun setup_fn, SFun teardown_fn)
{
    return fx_tcase(s, name, setup_fn, teardown_fn);
}
