/* Operations on the journal's records, run as their routes run them (fx_call): entries,
 * lesson reports, and API key management. */
#include <stdlib.h>
#include <string.h>

#include <apr_dbd.h>
#include <apr_strings.h>
#include <sqlite3.h>

#include "jr_keys.h"
#include "jr_util.h"
#include "ops_fixture.h"
#include "jr_entries.h"
#include "jr_keys_admin.h"
#include "jr_lessons.h"

static long long branch_id, group_id;

static void setup(void)
{
    fx_setup();
    branch_id = fx_new_branch("B");
    group_id = fx_new_group("G", branch_id);
}

static long long count(const char *sql)
{
    return atoll(fx_sql(sql));
}

/* ---- entries ------------------------------------------------------------------------------ */

START_TEST(entries_create_get_update_delete)
{
    jr_result_t res = fx_call(jr_op_entries_create,
                              jr_psprintf(fx_pool,
                                          "{\"student_name\": \"  Ann \", \"group_id\": %lld, "
                                          "\"description\": \"first\"}",
                                          group_id));
    long long id, audits = fx_audit_count();
    ck_assert_int_eq(res.status, 201);
    id = fx_id(&res);
    ck_assert_int_gt(id, 0);
    ck_assert_str_eq(jr_json_str(fx_json(res), "student_name", ""), "Ann");
    ck_assert_int_eq(jr_json_int(fx_json(res), "group_id", 0), group_id);

    fx_set_id(&fx_ctx, id);
    res = fx_call(jr_op_entries_get, NULL);
    ck_assert_int_eq(res.status, 200);
    ck_assert_str_eq(jr_json_str(fx_json(res), "description", ""), "first");

    res = fx_call(jr_op_entries_update, "{\"description\": \"second\"}");
    ck_assert_int_eq(res.status, 200);
    ck_assert_str_eq(jr_json_str(fx_json(res), "description", ""), "second");
    ck_assert_int_eq(fx_audit_count(), audits + 1);

    ck_assert_int_eq(fx_call(jr_op_entries_delete, NULL).status, 200);
    EXPECT(fx_call(jr_op_entries_get, NULL), 404, "not found");
    EXPECT(fx_call(jr_op_entries_delete, NULL), 404, "not found");
    ck_assert_int_eq(count("SELECT COUNT(*) FROM entries WHERE deleted_at IS NOT NULL"), 1);
}
END_TEST

START_TEST(entries_refused_change_nothing)
{
    long long audits = fx_audit_count();
    EXPECT(fx_call(jr_op_entries_create, jr_psprintf(fx_pool, "{\"group_id\": %lld}", group_id)),
           400, "student_name");
    EXPECT(fx_call(jr_op_entries_create, "{\"student_name\": \"A\"}"), 400, "group_id");
    EXPECT(fx_call(jr_op_entries_create,
                   jr_psprintf(fx_pool, "{\"student_name\": \"A\", \"group_id\": %lld, \"x\": 1}",
                               group_id)),
           400, "x");
    EXPECT(fx_call(jr_op_entries_create,
                   jr_psprintf(fx_pool, "{\"student_name\": \"A\", \"group_id\": %lld}",
                               group_id + 100)),
           400, "group");
    EXPECT(fx_call(jr_op_entries_create,
                   jr_psprintf(fx_pool,
                               "{\"student_name\": \"A\", \"group_id\": %lld, \"module_id\": 999}",
                               group_id)),
           400, "module");
    ck_assert_int_eq(count("SELECT COUNT(*) FROM entries"), 0);
    ck_assert_int_eq(fx_audit_count(), audits);
    fx_set_id(&fx_ctx, 999);
    EXPECT(fx_call(jr_op_entries_update, "{\"description\": \"x\"}"), 404, "not found");
}
END_TEST

START_TEST(entries_outside_the_tutors_branches)
{
    long long other = fx_new_group("H", fx_new_branch("C"));
    long long tutor = fx_new_tutor("tina", jr_psprintf(fx_pool, "[%lld]", branch_id));
    jr_ctx_t t;
    jr_result_t res =
        fx_call(jr_op_entries_create,
                jr_psprintf(fx_pool, "{\"student_name\": \"A\", \"group_id\": %lld}", other));
    long long id = fx_id(&res);
    ck_assert_int_eq(res.status, 201);
    fx_tutor_ctx(&t, tutor);
    fx_set_id(&t, id);
    EXPECT(fx_call_as(&t, jr_op_entries_get, NULL), 404, "not found");
    EXPECT(fx_call_as(&t, jr_op_entries_update, "{\"description\": \"x\"}"), 404, "not found");
    EXPECT(fx_call_as(&t, jr_op_entries_delete, NULL), 404, "not found");
    EXPECT(fx_call_as(&t, jr_op_entries_create,
                      jr_psprintf(fx_pool, "{\"student_name\": \"A\", \"group_id\": %lld}", other)),
           400, "group");
    ck_assert_int_eq(count("SELECT COUNT(*) FROM entries WHERE deleted_at IS NULL"), 1);
}
END_TEST

/* ---- lesson reports ------------------------------------------------------------------------ */

static jr_result_t new_report(const char *date, const char *text)
{
    return fx_call(jr_op_reports_create,
                   jr_psprintf(fx_pool,
                               "{\"group_id\": %lld, \"lesson_date\": \"%s\", \"text\": \"%s\"}",
                               group_id, date, text));
}

START_TEST(reports_one_per_group_and_day)
{
    jr_result_t res = new_report("2026-06-01", "first");
    long long id = fx_id(&res), audits;
    ck_assert_int_eq(res.status, 201);
    audits = fx_audit_count();
    EXPECT(new_report("2026-06-01", "again"), 409, "already has");
    ck_assert_int_eq(fx_audit_count(), audits);
    ck_assert_int_eq(count("SELECT COUNT(*) FROM lesson_reports"), 1);

    res = new_report("2026-06-02", "second");
    ck_assert_int_eq(res.status, 201);
    fx_set_id(&fx_ctx, fx_id(&res));
    EXPECT(fx_call(jr_op_reports_update, "{\"lesson_date\": \"2026-06-01\"}"), 409, "already has");
    fx_set_id(&fx_ctx, id);
    ck_assert_int_eq(fx_call(jr_op_reports_update, "{\"lesson_date\": \"2026-06-01\"}").status,
                     200); /* its own day */
}
END_TEST

START_TEST(reports_versions_and_restore)
{
    jr_result_t res = new_report("2026-06-01", "one");
    long long id = fx_id(&res);
    const char *first_version;
    fx_set_id(&fx_ctx, id);
    ck_assert_int_eq(fx_call(jr_op_reports_update, "{\"text\": \"two\"}").status, 200);
    ck_assert_int_eq(count("SELECT COUNT(*) FROM lesson_report_versions"), 2);
    first_version = fx_sql("SELECT MIN(id) FROM lesson_report_versions");
    apr_table_setn(fx_ctx.params, "versionId", first_version);
    res = fx_call(jr_op_reports_restore_version, NULL);
    ck_assert_int_eq(res.status, 200);
    ck_assert_str_eq(jr_json_str(fx_json(res), "text", ""), "one");
    apr_table_setn(fx_ctx.params, "versionId", "999");
    EXPECT(fx_call(jr_op_reports_restore_version, NULL), 404, "version");
    ck_assert_str_eq(fx_sql("SELECT text FROM lesson_reports"), "one");
}
END_TEST

START_TEST(reports_refused_change_nothing)
{
    EXPECT(fx_call(jr_op_reports_create,
                   jr_psprintf(fx_pool, "{\"group_id\": %lld, \"text\": \"t\"}", group_id)),
           400, "lesson_date");
    EXPECT(new_report("2026-13-01", "t"), 400, "lesson_date");
    EXPECT(fx_call(jr_op_reports_create,
                   jr_psprintf(fx_pool, "{\"group_id\": %lld, \"lesson_date\": \"2026-06-01\"}",
                               group_id)),
           400, "text");
    ck_assert_int_eq(count("SELECT COUNT(*) FROM lesson_reports"), 0);
    fx_set_id(&fx_ctx, 999);
    EXPECT(fx_call(jr_op_reports_get, NULL), 404, "not found");
    EXPECT(fx_call(jr_op_reports_delete, NULL), 404, "not found");
}
END_TEST

/* ---- API keys ------------------------------------------------------------------------------ */

START_TEST(keys_create_shows_the_secret_once)
{
    jr_result_t res = fx_call(jr_op_keys_create, "{\"name\": \" k \", \"scopes\": [\"read\"]}");
    const char *secret;
    long long id;
    ck_assert_int_eq(res.status, 201);
    secret = jr_json_str(fx_json(res), "key", NULL);
    ck_assert_ptr_nonnull(secret);
    ck_assert(jr_key_wellformed(secret));
    ck_assert_str_eq(jr_json_str(fx_json(res), "name", ""), "k");
    id = fx_id(&res);
    /* Only its hash is stored, and no other answer carries it. */
    ck_assert_int_eq(count(jr_psprintf(fx_pool,
                                       "SELECT COUNT(*) FROM api_keys WHERE key_hash = "
                                       "'%s'",
                                       secret)),
                     0);
    fx_set_id(&fx_ctx, id);
    res = fx_call(jr_op_keys_get, NULL);
    ck_assert_int_eq(res.status, 200);
    ck_assert_ptr_null(json_object_get(fx_json(res), "key"));
    res = fx_call(jr_op_keys_list, NULL);
    ck_assert_int_eq(res.status, 200);
    ck_assert_ptr_null(strstr(jr_json_dump(fx_pool, fx_json(res), NULL), secret));
}
END_TEST

START_TEST(keys_update_rotate_delete)
{
    jr_result_t res = fx_call(jr_op_keys_create, "{\"name\": \"k\", \"scopes\": [\"read\"]}");
    const char *old = apr_pstrdup(fx_pool, jr_json_str(fx_json(res), "key", ""));
    long long id = fx_id(&res);
    fx_set_id(&fx_ctx, id);
    res = fx_call(jr_op_keys_update, "{\"scopes\": [\"read\", \"write\"]}");
    ck_assert_int_eq(res.status, 200);
    ck_assert_int_eq(json_array_size(json_object_get(fx_json(res), "scopes")), 2);
    res = fx_call(jr_op_keys_rotate, NULL);
    ck_assert_int_eq(res.status, 200);
    ck_assert_str_ne(jr_json_str(fx_json(res), "key", old), old);
    ck_assert_int_eq(fx_call(jr_op_keys_delete, NULL).status, 200);
    EXPECT(fx_call(jr_op_keys_get, NULL), 404, "not found");
    EXPECT(fx_call(jr_op_keys_rotate, NULL), 404, "not found");
    EXPECT(fx_call(jr_op_keys_delete, NULL), 404, "not found");
    ck_assert_int_eq(count("SELECT COUNT(*) FROM api_keys"), 0);
}
END_TEST

START_TEST(keys_refused_change_nothing)
{
    long long audits = fx_audit_count();
    EXPECT(fx_call(jr_op_keys_create, "{\"scopes\": [\"read\"]}"), 400, "name");
    EXPECT(fx_call(jr_op_keys_create, "{\"name\": \"k\", \"scopes\": [\"admin\"]}"), 400, "scopes");
    EXPECT(fx_call(jr_op_keys_create, "{\"name\": \"k\", \"scopes\": []}"), 400, "scopes");
    EXPECT(fx_call(jr_op_keys_create,
                   "{\"name\": \"k\", \"scopes\": [\"read\"], \"branch_ids\": [999]}"),
           400, "branch");
    ck_assert_int_eq(count("SELECT COUNT(*) FROM api_keys"), 0);
    ck_assert_int_eq(fx_audit_count(), audits);
}
END_TEST

/* The statements a new entry runs inside its transaction, by SQLite's trace: only writes; the
 * settings are read before it, and the answer and its events' payloads are the row the insert
 * returns (no read of the entry, inside or after). Its three events are one statement. */
static int in_tx_settings, in_tx_updates, in_tx_answer, answer_after, in_tx_entry_reads,
    in_tx_event_inserts, event_inserts_after;

static int trace_stmt(unsigned type, void *ctx, void *stmt, void *sql)
{
    const char *text = sql;
    int in_tx = !sqlite3_get_autocommit(sqlite3_db_handle(stmt));
    (void)type;
    (void)ctx;
    if (strncmp(text, "--", 2) == 0) { /* a trigger's statement */
        return 0;
    }
    if (strstr(text, "LEFT JOIN modules")) {
        in_tx_answer += in_tx;
        answer_after += !in_tx;
    }
    in_tx_entry_reads += in_tx && strncmp(text, "SELECT", 6) == 0 &&
                         strstr(text, "FROM entries") != NULL;
    in_tx_settings += in_tx && strstr(text, "FROM settings") != NULL;
    in_tx_updates += in_tx && strncmp(text, "UPDATE entries", 14) == 0;
    in_tx_event_inserts += in_tx && strncmp(text, "INSERT INTO events", 18) == 0;
    event_inserts_after += !in_tx && strncmp(text, "INSERT INTO events", 18) == 0;
    return 0;
}

START_TEST(entries_create_holds_the_write_lock_only_for_its_writes)
{
    sqlite3 *conn = apr_dbd_native_handle(fx_db->driver, fx_db->handle);
    jr_result_t res;
    long long before = count("SELECT COUNT(*) FROM events");
    in_tx_settings = in_tx_updates = in_tx_answer = answer_after = in_tx_entry_reads = 0;
    in_tx_event_inserts = event_inserts_after = 0;
    sqlite3_trace_v2(conn, SQLITE_TRACE_STMT, trace_stmt, NULL);
    res = fx_call(jr_op_entries_create,
                  jr_psprintf(fx_pool, "{\"student_name\": \"Ann\", \"group_id\": %lld}",
                              group_id));
    sqlite3_trace_v2(conn, 0, NULL, NULL);
    ck_assert_int_eq(res.status, 201);
    /* The AI check is on (the default): the entry is written pending, its job queued. */
    ck_assert_str_eq(jr_json_str(fx_json(res), "ai_status", ""), "pending");
    ck_assert_int_eq(count(jr_psprintf(fx_pool, "SELECT COUNT(*) FROM ai_jobs WHERE entity_id = %lld",
                                       fx_id(&res))), 1);
    ck_assert_int_eq(answer_after, 0);
    ck_assert_int_eq(in_tx_answer, 0);
    ck_assert_int_eq(in_tx_settings, 0);
    ck_assert_int_eq(in_tx_updates, 0);
    ck_assert_int_eq(in_tx_entry_reads, 0);
    ck_assert_int_eq(in_tx_event_inserts, 1);
    ck_assert_int_eq(event_inserts_after, 0);
    /* In the order they were raised, each once. */
    ck_assert_str_eq(fx_sql(jr_psprintf(fx_pool, "SELECT group_concat(type, ' ') FROM (SELECT type"
                                                 " FROM events WHERE id > (SELECT MAX(id) - %lld"
                                                 " FROM events) ORDER BY id)",
                                        count("SELECT COUNT(*) FROM events") - before)),
                     "entry.created notification ai_status");
}
END_TEST

/* The answer to a create or an update is the row its write returned: the same record a read
 * gives, a new check pending, and an update of the text writes its pending status in the one
 * UPDATE (no second one, which would fire the touch trigger and move updated_at again). */
START_TEST(entries_answer_with_the_row_they_wrote)
{
    sqlite3 *conn = apr_dbd_native_handle(fx_db->driver, fx_db->handle);
    long long module = atoll(fx_sql("INSERT INTO modules (name, created_at, updated_at)"
                                    " VALUES ('Algebra', 'now', 'now') RETURNING id"));
    jr_result_t res = fx_call(jr_op_entries_create,
                              jr_psprintf(fx_pool,
                                          "{\"student_name\": \"Ann\", \"group_id\": %lld, "
                                          "\"module_id\": %lld, \"description\": \"one\"}",
                                          group_id, module));
    json_t *written, *read;
    ck_assert_int_eq(res.status, 201);
    written = fx_json(res);
    ck_assert_str_eq(jr_json_str(written, "module_name", ""), "Algebra");
    ck_assert_str_eq(jr_json_str(written, "ai_status", ""), "pending");
    fx_set_id(&fx_ctx, fx_id(&res));
    read = fx_json(fx_call(jr_op_entries_get, NULL));
    ck_assert_msg(json_equal(written, read), "the create's answer differs from a read");

    fx_sql("UPDATE entries SET ai_status = 'done'"); /* as the worker leaves a check */
    fx_sql("UPDATE ai_jobs SET status = 'done'");
    in_tx_settings = in_tx_updates = in_tx_answer = answer_after = 0;
    sqlite3_trace_v2(conn, SQLITE_TRACE_STMT, trace_stmt, NULL);
    res = fx_call(jr_op_entries_update, "{\"description\": \"two\"}");
    sqlite3_trace_v2(conn, 0, NULL, NULL);
    ck_assert_int_eq(res.status, 200);
    written = fx_json(res);
    ck_assert_str_eq(jr_json_str(written, "ai_status", ""), "pending");
    ck_assert_str_eq(jr_json_str(written, "description", ""), "two");
    ck_assert_int_eq(in_tx_updates, 1);
    ck_assert_int_eq(in_tx_settings, 0);
    ck_assert_int_eq(count("SELECT COUNT(*) FROM ai_jobs"), 2);
    read = fx_json(fx_call(jr_op_entries_get, NULL));
    ck_assert_msg(json_equal(written, read), "the update's answer differs from a read");

    /* Unchanged text: no new check, the status stays. */
    fx_sql("UPDATE entries SET ai_status = 'done'");
    res = fx_call(jr_op_entries_update, "{\"student_name\": \"Anna\"}");
    ck_assert_str_eq(jr_json_str(fx_json(res), "ai_status", ""), "done");
    ck_assert_int_eq(count("SELECT COUNT(*) FROM ai_jobs"), 2);
}
END_TEST

Suite *suite_ops_records(void)
{
    Suite *s = suite_create("ops_records");
    TCase *tc = fx_tcase(s, "entries", setup, fx_teardown);
    tcase_add_test(tc, entries_create_get_update_delete);
    tcase_add_test(tc, entries_create_holds_the_write_lock_only_for_its_writes);
    tcase_add_test(tc, entries_answer_with_the_row_they_wrote);
    tcase_add_test(tc, entries_refused_change_nothing);
    tcase_add_test(tc, entries_outside_the_tutors_branches);

    tc = fx_tcase(s, "lesson reports", setup, fx_teardown);
    tcase_add_test(tc, reports_one_per_group_and_day);
    tcase_add_test(tc, reports_versions_and_restore);
    tcase_add_test(tc, reports_refused_change_nothing);

    tc = fx_tcase(s, "keys", setup, fx_teardown);
    tcase_add_test(tc, keys_create_shows_the_secret_once);
    tcase_add_test(tc, keys_update_rotate_delete);
    tcase_add_test(tc, keys_refused_change_nothing);
    return s;
}
