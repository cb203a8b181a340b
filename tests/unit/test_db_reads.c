/* Values the database cannot hand over (SQLite out of memory while it converts one): a failed
 * read is a failed select or stream, never a NULL, and a key's authentication answers 503. */
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
#include "jr_json.h"
#include "jr_keys.h"
#include "jr_keys_admin.h"
#include "jr_stmts.h"
#include "jr_util.h"
#include "ops_fixture.h"

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
    dbt_open_ready();
    dbt_insert_branch("Readable");
    fail_reads("id", _i);
    dbt_log_count = 0;
    ck_assert_int_ne(jr_db_select(dbt_db, dbt_pool, JR_Q_BRANCHES_LIST, &rows, JR_ARGS(NULL, NULL, NULL, "10", "0")),
                     APR_SUCCESS);
    ck_assert_ptr_null(rows);
    ck_assert_int_eq(fail_count, 1);
    ck_assert_msg(dbt_log_count == 1 && strstr(dbt_last_log, "JR01020") &&
                      strstr(dbt_last_log, "branches_list"),
                  "log: %s", dbt_last_log);
    ck_assert_msg(strstr(dbt_db->last_error, "out of memory"), "%s", dbt_db->last_error);
    /* The statement is usable again afterwards. */
    jr_db_test_column_text = NULL;
    ck_assert_int_eq(dbt_list_branches(NULL)->nrows, 1);
}
END_TEST

/* The streaming path, with a caller that stops after the first row: SQLite fails the step after
 * a read that ran out of memory, but that step never comes. The row never reaches the caller. */
START_TEST(unreadable_value_fails_the_stream)
{
    int n = 0;
    dbt_open_ready();
    dbt_insert_branch("Readable");
    fail_reads("id", _i);
    ck_assert_int_ne(jr_db_select_each(dbt_db, dbt_pool, JR_Q_BRANCHES_LIST, first_row, &n,
                                       JR_ARGS(NULL, NULL, NULL, "10", "0")),
                     APR_SUCCESS);
    ck_assert_int_eq(n, 0);
    ck_assert_int_eq(fail_count, 1);
    ck_assert_msg(strstr(dbt_last_log, "JR01020"), "log: %s", dbt_last_log);
    jr_db_test_column_text = NULL;
    ck_assert_int_eq(jr_db_select_each(dbt_db, dbt_pool, JR_Q_BRANCHES_LIST, count_rows, &n,
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
    dbt_open_ready();
    now = jr_now_iso(dbt_pool);
    ck_assert_int_eq(jr_db_select(dbt_db, dbt_pool, JR_Q_GROUP_INSERT, &rows,
                                  JR_ARGS("G", jr_i64(dbt_pool, dbt_insert_branch("B")), NULL, now, now)),
                     APR_SUCCESS);
    fail_reads("tutor_id", 0); /* NULL in this row: never a failure */
    ck_assert_int_eq(jr_db_select(dbt_db, dbt_pool, JR_Q_GROUP_GET,
                                  &rows, JR_ARGS(jr_rows_get(rows, 0, "id"))),
                     APR_SUCCESS);
    ck_assert_int_eq(rows->nrows, 1);
    ck_assert_ptr_null(jr_rows_get(rows, 0, "tutor_id"));
    ck_assert_str_eq(jr_rows_get(rows, 0, "name"), "G");
    ck_assert_int_eq(jr_db_select_each(dbt_db, dbt_pool, JR_Q_GROUP_GET, count_rows, &n,
                                       JR_ARGS(jr_rows_get(rows, 0, "id"))),
                     APR_SUCCESS);
    ck_assert_int_eq(n, 1);
    ck_assert_int_eq(fail_count, 0);
    ck_assert_int_eq(dbt_log_count, 0);
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
    return json_string_value(json_object_get(fx_json(res), "key"));
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
    jr_log_set(dbt_capture, NULL, JR_LOG_DEBUG);
}

void db_reads_tests(Suite *s)
{
    TCase *tc = dbt_tcase(s, "db_reads", dbt_setup, dbt_teardown);
    tcase_add_checked_fixture(tc, NULL, reads_teardown);
    tcase_add_loop_test(tc, unreadable_value_fails_the_select, 0, 2);
    tcase_add_loop_test(tc, unreadable_value_fails_the_stream, 0, 2);
    tcase_add_test(tc, sql_null_is_still_null);

    tc = dbt_tcase(s, "db_reads_keys", quiet_setup, reads_teardown);
    tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
    /* Each column fails converting to UTF-16 (0-3); the integer id also converting to the
     * UTF-8 text the module reads (7): text columns need no memory for that. */
    tcase_add_loop_test(tc, key_auth_read_failure_is_503, 0, 4);
    tcase_add_loop_test(tc, key_auth_read_failure_is_503, 7, 8);
}
