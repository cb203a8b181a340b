/* jr_db.h, jr_migrate.h, jr_stmts.h against a temporary SQLite file: opening, migrations, the
 * statement catalogue, transactions, results and arguments. The pooled connections of mod_dbd
 * and the error classes are in test_db_conn.c, unreadable values in test_db_reads.c. */
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
#include "jr_json.h"
#include "jr_migrate.h"
#include "jr_stmts.h"
#include "jr_util.h"

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
    ck_assert_int_eq(jr_db_open(&other, dbt_pool, "mysql", dbt_path, &err), APR_EINVAL);
    ck_assert_ptr_null(other);
    ck_assert_msg(err && strstr(err, "'mysql'"), "%s", err ? err : "(null)");
    err = NULL;
    ck_assert_int_eq(jr_db_open(&other, dbt_pool, NULL, dbt_path, &err), APR_EINVAL);
    ck_assert_ptr_nonnull(err);
    err = NULL;
    ck_assert_int_ne(jr_db_open(&other, dbt_pool, "sqlite3", "/nonexistent-dir/x/y.db", &err),
                     APR_SUCCESS);
    ck_assert_ptr_null(other);
    ck_assert_ptr_nonnull(err);
}
END_TEST

START_TEST(connection_settings)
{
    dbt_open();
    ck_assert_int_eq(dbt_db->dialect, JR_DB_SQLITE);
    ck_assert_int_eq(dbt_db->in_tx, 0);
    ck_assert_int_eq(dbt_sql_int("PRAGMA foreign_keys"), 1);
    ck_assert_int_eq(dbt_sql_int("PRAGMA busy_timeout"), 5000); /* the default */
    ck_assert_int_eq(dbt_sql_int("PRAGMA synchronous"), 1); /* NORMAL */
    ck_assert_int_eq(jr_db_ping(dbt_db), APR_SUCCESS);
}
END_TEST

/* ---- migrations ---------------------------------------------------------------------- */

START_TEST(migrate_is_idempotent)
{
    const char *err = NULL;
    int applied = -1, version = -1, latest = jr_migrate_latest(JR_DB_SQLITE), cur = -1;
    dbt_open();
    ck_assert_int_ge(latest, 1);
    ck_assert_int_eq(jr_migrate(dbt_db, dbt_pool, &applied, &version, &err), APR_SUCCESS);
    ck_assert_int_ge(applied, 1);
    ck_assert_int_eq(version, latest);
    ck_assert_int_eq(jr_migrate(dbt_db, dbt_pool, &applied, &version, &err), APR_SUCCESS);
    ck_assert_int_eq(applied, 0);
    ck_assert_int_eq(version, latest);
    ck_assert_int_eq(jr_migrate_current(dbt_db, dbt_pool, &cur, &err), APR_SUCCESS);
    ck_assert_int_eq(cur, latest);
    ck_assert_str_eq(dbt_sql_text("PRAGMA journal_mode"), "wal");
    ck_assert_int_eq(dbt_sql_int("SELECT COUNT(*) FROM schema_migrations"), dbt_count_migrations());
    ck_assert_int_eq(dbt_sql_int("SELECT MAX(version) FROM schema_migrations"), latest);
    ck_assert_int_eq(dbt_db->in_tx, 0);
    ck_assert_int_eq(sqlite3_get_autocommit(dbt_native()), 1); /* no transaction left open */
}
END_TEST

START_TEST(migrate_current_without_schema)
{
    const char *err = NULL;
    int version = -1;
    dbt_open();
    ck_assert_int_ne(jr_migrate_current(dbt_db, dbt_pool, &version, &err), APR_SUCCESS);
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

/* Placeholders of a text: -1 when a % is followed by anything but s, = or %, or when a %=
 * (the previous placeholder again) has no placeholder before it (apr_dbd took any letter for
 * a placeholder; the backends turn only %s and %= into one). */
static int placeholders(const char *sql)
{
    int n = 0;
    for (; *sql; ++sql) {
        if (*sql == '%') {
            if ((sql[1] != 's' && sql[1] != '%' && sql[1] != '=') || (sql[1] == '=' && n == 0)) {
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
        ck_assert_str_eq(jr_stmt_server_name(id), apr_pstrcat(dbt_pool, "jr_", label, NULL));
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
    dbt_open_ready();
    ck_assert_int_eq(dbt_db->cache->checked, 1);
    for (id = 0; id < JR_Q__COUNT; ++id) {
        void *st = NULL;
        const char *err = NULL;
        ck_assert_msg(dbt_db->cache->be->prepare(dbt_db->cache, id, &st, &err) == APR_SUCCESS,
                      "%s is not prepared: %s", jr_stmt_label(id), err ? err : "?");
        sqlite3_finalize(st);
    }
    ck_assert_int_eq(dbt_log_count, 0);
}
END_TEST

/* "%=" is the parameter before it again: one argument, used twice, in both dialects. A bare
 * "?" after it is numbered on by SQLite, so the arguments after it keep their places. */
START_TEST(a_parameter_can_be_used_again)
{
    static const char sql[] = "SELECT %s AS a, %= AS b, %s AS c, '%%' AS d";
    sqlite3_stmt *st = NULL;
    ck_assert_str_eq(jr_db_placeholders(dbt_pool, sql, 1), "SELECT $1 AS a, $1 AS b, $2 AS c, '%' AS d");
    ck_assert_str_eq(jr_db_placeholders(dbt_pool, sql, 0), "SELECT ? AS a, ?1 AS b, ? AS c, '%' AS d");
    ck_assert_int_eq(placeholders(sql), 2);
    ck_assert_int_eq(placeholders("SELECT %= AS b"), -1);
    dbt_open_ready();
    ck_assert_int_eq(sqlite3_prepare_v2(dbt_native(), jr_db_placeholders(dbt_pool, sql, 0), -1, &st,
                                        NULL),
                     SQLITE_OK);
    ck_assert_int_eq(sqlite3_bind_parameter_count(st), 2);
    sqlite3_bind_text(st, 1, "one", -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, "two", -1, SQLITE_STATIC);
    ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
    ck_assert_str_eq((const char *)sqlite3_column_text(st, 1), "one");
    ck_assert_str_eq((const char *)sqlite3_column_text(st, 2), "two");
    sqlite3_finalize(st);
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
    dbt_open();
    ck_assert_int_ne(jr_db_prepare_all(dbt_db), APR_SUCCESS);
    ck_assert_msg(strstr(dbt_last_log, "JR01003") != NULL, "log: %s", dbt_last_log);
}
END_TEST

START_TEST(unknown_statement_fails)
{
    static jr_rows_t dummy;
    jr_rows_t *rows = &dummy;
    int n = -1;
    dbt_open_ready();
    ck_assert_int_ne(jr_db_select(dbt_db, dbt_pool, (jr_stmt_id_t)JR_Q__COUNT, &rows, JR_NOARGS),
                     APR_SUCCESS);
    ck_assert_ptr_null(rows);
    ck_assert_msg(strstr(dbt_last_log, "JR01004"), "log: %s", dbt_last_log);
    ck_assert_int_ne(jr_db_exec(dbt_db, dbt_pool, (jr_stmt_id_t)-1, &n, JR_NOARGS), APR_SUCCESS);
    ck_assert_int_eq(n, -1);
    /* A statement given the wrong number of arguments does not run. */
    ck_assert_int_ne(jr_db_select(dbt_db, dbt_pool, JR_Q_BRANCHES_LIST, &rows, JR_ARGS(NULL, NULL, "1")),
                     APR_SUCCESS);
    ck_assert_msg(strstr(dbt_last_log, "JR01033") && strstr(dbt_last_log, "branches_list"), "log: %s",
                  dbt_last_log);
}
END_TEST

/* ---- transactions -------------------------------------------------------------------- */

START_TEST(rollback_leaves_nothing)
{
    jr_rows_t *rows;
    dbt_open_ready();
    ck_assert_int_eq(jr_db_begin(dbt_db), APR_SUCCESS);
    ck_assert_int_eq(dbt_db->in_tx, 1);
    ck_assert_int_gt(dbt_insert_branch("North"), 0);
    ck_assert_int_ne(jr_db_begin(dbt_db), APR_SUCCESS); /* no nesting */
    jr_db_rollback(dbt_db);
    ck_assert_int_eq(dbt_db->in_tx, 0);
    ck_assert_int_eq(sqlite3_get_autocommit(dbt_native()), 1);
    rows = dbt_list_branches(NULL);
    ck_assert_int_eq(rows->nrows, 0);
    ck_assert_int_eq(dbt_sql_int("SELECT COUNT(*) FROM branches"), 0);

    ck_assert_int_eq(jr_db_begin(dbt_db), APR_SUCCESS);
    dbt_insert_branch("South");
    ck_assert_int_eq(jr_db_commit(dbt_db), APR_SUCCESS);
    ck_assert_int_eq(dbt_db->in_tx, 0);
    rows = dbt_list_branches(NULL);
    ck_assert_int_eq(rows->nrows, 1);
    ck_assert_str_eq(jr_rows_get(rows, 0, "name"), "South");
}
END_TEST

/* ---- results and arguments ----------------------------------------------------------- */

START_TEST(rows_accessors)
{
    jr_rows_t *rows;
    long long a, b;
    dbt_open_ready();
    a = dbt_insert_branch("Alpha");
    b = dbt_insert_branch("Beta");
    ck_assert_int_gt(b, a);
    rows = dbt_list_branches(NULL);
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
    rows = dbt_list_branches(jr_psprintf(dbt_pool, "[%lld]", b));
    ck_assert_int_eq(rows->nrows, 1);
    ck_assert_int_eq(jr_rows_int(rows, 0, "id", -1), b);
    rows = dbt_list_branches("[]");
    ck_assert_int_eq(rows->nrows, 0);
}
END_TEST

START_TEST(null_argument_binds_sql_null)
{
    jr_rows_t *rows;
    const char *now;
    long long br, g;
    int n = -1;
    dbt_open_ready();
    now = jr_now_iso(dbt_pool);
    br = dbt_insert_branch("B");
    ck_assert_int_eq(jr_db_select(dbt_db, dbt_pool, JR_Q_GROUP_INSERT, &rows,
                                  JR_ARGS("G", jr_i64(dbt_pool, br), NULL, now, now)),
                     APR_SUCCESS);
    g = jr_rows_int(rows, 0, "id", 0);
    ck_assert_int_gt(g, 0);
    ck_assert_str_eq(dbt_sql_text("SELECT typeof(tutor_id) FROM study_groups"), "null");
    ck_assert_int_eq(jr_db_select(dbt_db, dbt_pool, JR_Q_GROUP_GET, &rows, JR_ARGS(jr_i64(dbt_pool, g))),
                     APR_SUCCESS);
    ck_assert_int_eq(rows->nrows, 1);
    ck_assert_ptr_null(jr_rows_get(rows, 0, "tutor_id"));
    ck_assert_ptr_null(jr_rows_get(rows, 0, "deleted_at"));
    ck_assert_int_eq(jr_rows_int(rows, 0, "tutor_id", -3), -3);
    ck_assert_str_eq(jr_rows_get(rows, 0, "name"), "G");

    ck_assert_int_eq(jr_db_exec(dbt_db, dbt_pool, JR_Q_AUDIT_INSERT, &n,
                                JR_ARGS(now, NULL, NULL, "0", NULL, "test", "thing", NULL, NULL)),
                     APR_SUCCESS);
    ck_assert_int_eq(n, 1);
    ck_assert_str_eq(dbt_sql_text("SELECT typeof(actor_user_id) || typeof(actor_key_id) ||"
                              " typeof(client_ip) || typeof(entity_id) || typeof(changes)"
                              " FROM audit_log"),
                     "nullnullnullnullnull");
    ck_assert_int_eq(dbt_sql_int("SELECT via_api_key FROM audit_log"), 0);
}
END_TEST

START_TEST(exec_counts_rows)
{
    int n = -1;
    long long id;
    dbt_open_ready();
    id = dbt_insert_branch("Old");
    ck_assert_int_eq(jr_db_exec(dbt_db, dbt_pool, JR_Q_BRANCH_UPDATE, &n,
                                JR_ARGS("New", jr_now_iso(dbt_pool), jr_i64(dbt_pool, id))),
                     APR_SUCCESS);
    ck_assert_int_eq(n, 1);
    ck_assert_int_eq(jr_db_exec(dbt_db, dbt_pool, JR_Q_BRANCH_UPDATE, &n,
                                JR_ARGS("Newer", jr_now_iso(dbt_pool), jr_i64(dbt_pool, id + 100))),
                     APR_SUCCESS);
    ck_assert_int_eq(n, 0);
    ck_assert_str_eq(dbt_sql_text("SELECT name FROM branches"), "New");
}
END_TEST

Suite *suite_db(void)
{
    Suite *s = suite_create("db");
    TCase *tc = dbt_tcase(s, "db", dbt_setup, dbt_teardown);
    tcase_add_test(tc, dialects);
    tcase_add_test(tc, open_failures);
    tcase_add_test(tc, connection_settings);
    tcase_add_test(tc, migrate_is_idempotent);
    tcase_add_test(tc, migrate_current_without_schema);
    tcase_add_test(tc, migration_lists_agree);
    tcase_add_test(tc, statement_catalogue);
    tcase_add_test(tc, a_parameter_can_be_used_again);
    tcase_add_test(tc, statement_writes);
    tcase_add_test(tc, prepare_fails_before_migrating);
    tcase_add_test(tc, unknown_statement_fails);
    tcase_add_test(tc, rollback_leaves_nothing);
    db_conn_tests(tc);
    tcase_add_test(tc, rows_accessors);
    tcase_add_test(tc, null_argument_binds_sql_null);
    tcase_add_test(tc, exec_counts_rows);
    db_reads_tests(s);
    return s;
}
