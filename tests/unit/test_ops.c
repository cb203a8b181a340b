/* The operations of branches and groups, driven directly on a migrated SQLite file. */
#include <stdio.h>
#include <string.h>

#include <apr_strings.h>

#include "jr_json.h"
#include "jr_util.h"
#include "ops_fixture.h"
#include "jr_branches.h"
#include "jr_groups.h"

/* ---- branches ------------------------------------------------------------------------ */

START_TEST(branches_create_and_list)
{
    long long before = fx_audit_count(), id;
    jr_result_t res = fx_call(jr_op_branches_create, "{\"name\": \"  North  \"}");
    ck_assert_int_eq(res.status, 201);
    id = fx_id(&res);
    ck_assert_int_gt(id, 0);
    ck_assert_str_eq(jr_json_str(fx_json(res), "name", ""), "North");
    ck_assert_ptr_nonnull(jr_json_str(fx_json(res), "created_at", NULL));
    ck_assert_int_eq(fx_audit_count(), before + 1);
    ck_assert_str_eq(fx_audit_last("action || '/' || entity_type"), "create/branch");
    ck_assert_str_eq(fx_audit_last("entity_id"), jr_i64(fx_pool, id));
    ck_assert_str_eq(fx_audit_last("actor_user_id"), jr_i64(fx_pool, fx_admin_id));
    ck_assert_str_eq(fx_audit_last("client_ip"), "192.0.2.1");
    ck_assert_str_eq(fx_audit_last("changes"), "[\"name\"]");

    fx_new_branch("South");
    res = fx_call(jr_op_branches_list, NULL);
    ck_assert_int_eq(res.status, 200);
    ck_assert_uint_eq(json_array_size(fx_json(res)), 2);
    ck_assert_str_eq(apr_table_get(res.headers, "X-Total-Count"), "2");
    ck_assert_str_eq(jr_json_str(json_array_get(fx_json(res), 0), "name", ""), "North");
    ck_assert_str_eq(jr_json_str(json_array_get(fx_json(res), 1), "name", ""), "South");
    apr_table_setn(fx_ctx.query, "limit", "1");
    apr_table_setn(fx_ctx.query, "offset", "1");
    res = fx_call(jr_op_branches_list, NULL);
    ck_assert_uint_eq(json_array_size(fx_json(res)), 1);
    ck_assert_str_eq(jr_json_str(json_array_get(fx_json(res), 0), "name", ""), "South");
    ck_assert_str_eq(apr_table_get(res.headers, "X-Total-Count"), "2");
    apr_table_setn(fx_ctx.query, "limit", "0");
    EXPECT(fx_call(jr_op_branches_list, NULL), 400, "limit");
    apr_table_clear(fx_ctx.query);

    fx_set_id(&fx_ctx, id);
    res = fx_call(jr_op_branches_get, NULL);
    ck_assert_int_eq(res.status, 200);
    ck_assert_str_eq(jr_json_str(fx_json(res), "name", ""), "North");
    fx_set_id(&fx_ctx, id + 1000);
    EXPECT(fx_call(jr_op_branches_get, NULL), 404, "not found");
}
END_TEST

START_TEST(branches_refused)
{
    long long before;
    fx_new_branch("North");
    before = fx_audit_count();
    EXPECT(fx_call(jr_op_branches_create, "{\"name\": \"North\"}"), 409, "North");
    EXPECT(fx_call(jr_op_branches_create, "{\"name\": \" North\\t\"}"), 409, "North");
    EXPECT(fx_call(jr_op_branches_create, "{\"name\": \"\"}"), 400, "name");
    EXPECT(fx_call(jr_op_branches_create, "{\"name\": \"   \"}"), 400, "name");
    EXPECT(fx_call(jr_op_branches_create, "{}"), 400, "name");
    EXPECT(fx_call(jr_op_branches_create, "{\"name\": 7}"), 400, "name");
    EXPECT(fx_call(jr_op_branches_create, "{\"name\": \"x\", \"colour\": \"red\"}"), 400, "colour");
    ck_assert_int_eq(fx_audit_count(), before); /* refusals write nothing */
    ck_assert_str_eq(fx_sql("SELECT COUNT(*) FROM branches"), "1");
}
END_TEST

START_TEST(branches_update_and_delete)
{
    long long a = fx_new_branch("A"), b = fx_new_branch("B"), before;
    jr_result_t res;
    fx_set_id(&fx_ctx, a);
    before = fx_audit_count();
    res = fx_call(jr_op_branches_update, "{\"name\": \"A2\"}");
    ck_assert_int_eq(res.status, 200);
    ck_assert_str_eq(jr_json_str(fx_json(res), "name", ""), "A2");
    ck_assert_int_eq(fx_audit_count(), before + 1);
    ck_assert_str_eq(fx_audit_last("action"), "update");
    ck_assert_int_eq(fx_call(jr_op_branches_update, "{\"name\": \"A2\"}").status, 200); /* itself */
    EXPECT(fx_call(jr_op_branches_update, "{\"name\": \"B\"}"), 409, "B");
    fx_set_id(&fx_ctx, b + 100);
    EXPECT(fx_call(jr_op_branches_update, "{\"name\": \"C\"}"), 404, "not found");
    EXPECT(fx_call(jr_op_branches_delete, NULL), 404, "not found");

    fx_new_group("G", b);
    fx_set_id(&fx_ctx, b);
    before = fx_audit_count();
    EXPECT(fx_call(jr_op_branches_delete, NULL), 409, "groups");
    ck_assert_int_eq(fx_audit_count(), before);
    fx_set_id(&fx_ctx, a);
    ck_assert_int_eq(fx_call(jr_op_branches_delete, NULL).status, 200);
    ck_assert_int_eq(fx_audit_count(), before + 1);
    ck_assert_str_eq(fx_audit_last("action || '/' || entity_id"),
                     apr_pstrcat(fx_pool, "delete/", jr_i64(fx_pool, a), NULL));
    EXPECT(fx_call(jr_op_branches_get, NULL), 404, "not found");
}
END_TEST

/* ---- groups -------------------------------------------------------------------------- */

START_TEST(groups_create_refused)
{
    long long a = fx_new_branch("A"), before = fx_audit_count();
    EXPECT(fx_create_group("G", a + 100), 400, "branch_id");
    EXPECT(fx_call(jr_op_groups_create, "{\"name\": \"G\"}"), 400, "branch_id");
    EXPECT(fx_call(jr_op_groups_create, "{\"name\": \"G\", \"branch_id\": \"1\"}"), 400,
           "branch_id");
    EXPECT(fx_call(jr_op_groups_create, "{\"name\": \"G\", \"branch_id\": 0}"), 400, "branch_id");
    EXPECT(fx_call(jr_op_groups_create, "{\"branch_id\": 1}"), 400, "name");
    EXPECT(fx_call(jr_op_groups_create,
                   jr_psprintf(fx_pool,
                               "{\"name\": \"G\", \"branch_id\": %lld, \"tutor_id\": 9999}", a)),
           400, "tutor_id");
    ck_assert_int_eq(fx_audit_count(), before);
    ck_assert_str_eq(fx_sql("SELECT COUNT(*) FROM study_groups"), "0");
}
END_TEST

START_TEST(groups_names_unique_per_branch)
{
    long long a = fx_new_branch("A"), b = fx_new_branch("B"), before = fx_audit_count(), g;
    jr_result_t res = fx_create_group("Math", a);
    ck_assert_int_eq(res.status, 201);
    g = fx_id(&res);
    ck_assert_int_eq(jr_json_int(fx_json(res), "branch_id", -1), a);
    ck_assert(json_is_null(json_object_get(fx_json(res), "tutor_id")));
    ck_assert_int_eq(fx_audit_count(), before + 1);
    ck_assert_str_eq(fx_audit_last("action || '/' || entity_type || '/' || entity_id"),
                     apr_pstrcat(fx_pool, "create/group/", jr_i64(fx_pool, g), NULL));
    EXPECT(fx_create_group("Math", a), 409, "Math");
    EXPECT(fx_create_group(" Math ", a), 409, "Math");
    ck_assert_int_eq(fx_audit_count(), before + 1);
    ck_assert_int_eq(fx_create_group("Math", b).status, 201);
    ck_assert_int_eq(fx_audit_count(), before + 2);
}
END_TEST

START_TEST(groups_soft_delete_and_restore)
{
    long long a = fx_new_branch("A"), g1 = fx_new_group("One", a), g2 = fx_new_group("Two", a);
    long long before;
    jr_result_t res;
    fx_set_id(&fx_ctx, g1);
    before = fx_audit_count();
    res = fx_call(jr_op_groups_delete, NULL);
    ck_assert_int_eq(res.status, 200);
    ck_assert(json_is_true(json_object_get(fx_json(res), "ok")));
    ck_assert_int_eq(fx_audit_count(), before + 1);
    ck_assert_str_eq(fx_audit_last("action"), "delete");
    ck_assert_str_eq(fx_sql(jr_psprintf(fx_pool,
                                        "SELECT deleted_by FROM study_groups WHERE id = %lld", g1)),
                     jr_i64(fx_pool, fx_admin_id));

    res = fx_call(jr_op_groups_list, NULL);
    ck_assert_int_eq(res.status, 200);
    ck_assert_uint_eq(json_array_size(fx_json(res)), 1);
    ck_assert_int_eq(jr_json_int(json_array_get(fx_json(res), 0), "id", -1), g2);
    ck_assert_str_eq(apr_table_get(res.headers, "X-Total-Count"), "1");
    EXPECT(fx_call(jr_op_groups_get, NULL), 404, "not found");
    EXPECT(fx_call(jr_op_groups_delete, NULL), 404, "not found");
    EXPECT(fx_call(jr_op_groups_update, "{\"name\": \"X\"}"), 404, "not found");

    res = fx_call(jr_op_groups_restore, NULL);
    ck_assert_int_eq(res.status, 200);
    ck_assert_int_eq(fx_id(&res), g1);
    ck_assert_str_eq(jr_json_str(fx_json(res), "name", ""), "One");
    ck_assert_int_eq(fx_audit_count(), before + 2);
    ck_assert_str_eq(fx_audit_last("action"), "restore");
    res = fx_call(jr_op_groups_list, NULL);
    ck_assert_uint_eq(json_array_size(fx_json(res)), 2);
    ck_assert_str_eq(apr_table_get(res.headers, "X-Total-Count"), "2");
    ck_assert_int_eq(fx_call(jr_op_groups_get, NULL).status, 200);
    EXPECT(fx_call(jr_op_groups_restore, NULL), 404, "no deleted group");
    fx_set_id(&fx_ctx, g2 + 100);
    EXPECT(fx_call(jr_op_groups_restore, NULL), 404, "no deleted group");
}
END_TEST

START_TEST(groups_restore_name_conflict)
{
    long long a = fx_new_branch("A"), g = fx_new_group("Math", a), before;
    fx_set_id(&fx_ctx, g);
    ck_assert_int_eq(fx_call(jr_op_groups_delete, NULL).status, 200);
    ck_assert_int_gt(fx_new_group("Math", a), g); /* the name is free while in the trash */
    before = fx_audit_count();
    EXPECT(fx_call(jr_op_groups_restore, NULL), 409, "Math");
    ck_assert_int_eq(fx_audit_count(), before);
    EXPECT(fx_call(jr_op_groups_get, NULL), 404, "not found");
}
END_TEST

static int count_flush(void *baton, const char *data, size_t len)
{
    ++*(int *)baton;
    return 0;
}

/* A page read into memory is written whole: its Link header and has_more are known only at
 * its end, so no byte may leave before (a page of 250 groups with long names is past the
 * writer's 64 KiB flush point). */
START_TEST(groups_page_is_written_whole)
{
    long long a = fx_new_branch("A");
    char name[201];
    int i, flushes = 0;
    jr_result_t res;
    for (i = 0; i < 260; ++i) {
        memset(name, 'n', 200);
        snprintf(name, 8, "%06d", i);
        name[6] = 'n';
        name[200] = '\0';
        fx_new_group(name, a);
    }
    fx_ctx.iface = JR_IF_V1;
    fx_ctx.flush = count_flush;
    fx_ctx.flush_baton = &flushes;
    apr_table_setn(fx_ctx.query, "limit", "250");
    res = fx_call(jr_op_groups_list, NULL);
    fx_ctx.flush = NULL;
    fx_ctx.flush_baton = NULL;
    fx_ctx.iface = JR_IF_ADMIN;
    ck_assert_int_eq(res.status, 200);
    ck_assert_int_eq(flushes, 0);
    ck_assert_int_eq(res.streamed, 0);
    ck_assert_uint_gt(res.body_len, 64 * 1024);
    ck_assert_ptr_nonnull(apr_table_get(res.headers, "Link"));
    ck_assert(json_is_true(json_object_get(fx_json(res), "has_more")));
    ck_assert_uint_eq(json_array_size(json_object_get(fx_json(res), "items")), 250);
}
END_TEST

START_TEST(groups_list_paging)
{
    long long a = fx_new_branch("A"), b = fx_new_branch("B"), g2;
    jr_result_t res;
    fx_new_group("G1", a);
    g2 = fx_new_group("G2", a);
    fx_new_group("G3", b);
    apr_table_setn(fx_ctx.query, "limit", "1");
    apr_table_setn(fx_ctx.query, "offset", "1");
    res = fx_call(jr_op_groups_list, NULL);
    ck_assert_int_eq(res.status, 200);
    ck_assert_uint_eq(json_array_size(fx_json(res)), 1);
    ck_assert_int_eq(jr_json_int(json_array_get(fx_json(res), 0), "id", -1), g2);
    ck_assert_str_eq(apr_table_get(res.headers, "X-Total-Count"), "3");
    apr_table_clear(fx_ctx.query);
    apr_table_setn(fx_ctx.query, "branch_id", jr_i64(fx_pool, b));
    res = fx_call(jr_op_groups_list, NULL);
    ck_assert_uint_eq(json_array_size(fx_json(res)), 1);
    ck_assert_str_eq(apr_table_get(res.headers, "X-Total-Count"), "1");

    /* The v1 interface wraps lists in an envelope. */
    fx_ctx.iface = JR_IF_V1;
    res = fx_call(jr_op_groups_list, NULL);
    ck_assert_int_eq(jr_json_int(fx_json(res), "total", -1), 1);
    ck_assert_int_eq(jr_json_int(fx_json(res), "limit", -1), JR_LIMIT_DEFAULT);
    ck_assert_uint_eq(json_array_size(json_object_get(fx_json(res), "items")), 1);
    fx_ctx.iface = JR_IF_ADMIN;

#define BAD_QUERY(k, v, word)                                                                  \
    apr_table_clear(fx_ctx.query);                                                                \
    apr_table_setn(fx_ctx.query, k, v);                                                           \
    EXPECT(fx_call(jr_op_groups_list, NULL), 400, word)
    BAD_QUERY("limit", "0", "limit");
    BAD_QUERY("limit", "1001", "limit");
    BAD_QUERY("limit", "ten", "limit");
    BAD_QUERY("offset", "-1", "offset");
    BAD_QUERY("branch_id", "abc", "branch_id");
    BAD_QUERY("branch_id", "0", "branch_id");
#undef BAD_QUERY
}
END_TEST

START_TEST(groups_update)
{
    long long a = fx_new_branch("A"), b = fx_new_branch("B"), g = fx_new_group("G", a), before;
    jr_result_t res;
    fx_new_group("Taken", a);
    fx_set_id(&fx_ctx, g);
    before = fx_audit_count();
    res = fx_call(jr_op_groups_update, "{\"name\": \" Renamed \"}");
    ck_assert_int_eq(res.status, 200);
    ck_assert_str_eq(jr_json_str(fx_json(res), "name", ""), "Renamed");
    ck_assert_int_eq(jr_json_int(fx_json(res), "branch_id", -1), a);
    ck_assert_int_eq(fx_audit_count(), before + 1);
    ck_assert_str_eq(fx_audit_last("action || '/' || changes"), "update/[\"name\"]");
    EXPECT(fx_call(jr_op_groups_update, "{\"name\": \"Taken\"}"), 409, "Taken");
    EXPECT(fx_call(jr_op_groups_update, "{\"name\": \"\"}"), 400, "name");
    EXPECT(fx_call(jr_op_groups_update, "{\"colour\": \"red\"}"), 400, "colour");
    EXPECT(fx_call(jr_op_groups_update, jr_psprintf(fx_pool, "{\"branch_id\": %lld}", b + 100)),
           400, "branch_id");
    ck_assert_int_eq(fx_audit_count(), before + 1);

    /* Moving to another branch: the name may be taken there. */
    fx_new_group("Renamed", b);
    EXPECT(fx_call(jr_op_groups_update, jr_psprintf(fx_pool, "{\"branch_id\": %lld}", b)), 409,
           "Renamed");
    res = fx_call(jr_op_groups_update,
                  jr_psprintf(fx_pool, "{\"branch_id\": %lld, \"name\": \"Moved\"}", b));
    ck_assert_int_eq(res.status, 200);
    ck_assert_int_eq(jr_json_int(fx_json(res), "branch_id", -1), b);
    fx_set_id(&fx_ctx, g + 100);
    EXPECT(fx_call(jr_op_groups_update, "{\"name\": \"X\"}"), 404, "not found");
}
END_TEST

/* ---- loading a record by id (jr_load) --------------------------------------------------- */

START_TEST(load_judges_scope_trash_and_refs)
{
    long long a = fx_new_branch("A"), b = fx_new_branch("B"), g = fx_new_group("G", a);
    long long tid = fx_new_tutor("tina", jr_psprintf(fx_pool, "[%lld]", b));
    jr_result_t res;
    jr_rows_t *row = NULL;
    jr_ctx_t t;

    jr_result_init(&res, fx_pool);
    ck_assert_int_eq(jr_group_load(&fx_ctx, &res, g, 0, &row), 0);
    ck_assert_int_eq(jr_rows_int(row, 0, "branch_id", 0), a);
    ck_assert_ptr_null(jr_rows_get(row, 0, "name")); /* the scope row only */
    ck_assert_int_eq(jr_group_load(&fx_ctx, &res, g, JR_LOAD_ROW, &row), 0);
    ck_assert_str_eq(jr_rows_get(row, 0, "name"), "G");
    ck_assert_int_eq(jr_group_load(&fx_ctx, &res, g + 100, 0, NULL), 404);
    ck_assert_str_eq(fx_error(&res), "group not found");
    ck_assert_int_eq(jr_group_load(&fx_ctx, &res, g + 100, JR_LOAD_REF, NULL), 400);
    ck_assert_str_eq(fx_error(&res),
                     jr_psprintf(fx_pool, "group_id: group %lld does not exist", g + 100));
    /* Another branch's record reads as absent; a branch is in its own scope. */
    fx_tutor_ctx(&t, tid);
    ck_assert_int_eq(jr_group_load(&t, &res, g, 0, NULL), 404);
    ck_assert_str_eq(fx_error(&res), "group not found");
    ck_assert_int_eq(jr_branch_load(&t, &res, a, 0, NULL), 404);
    ck_assert_int_eq(jr_branch_load(&t, &res, b, 0, NULL), 0);

    /* In the trash: absent for work on it, present for a restore. */
    ck_assert_int_eq(jr_group_load(&fx_ctx, &res, g, JR_LOAD_DELETED, NULL), 404);
    ck_assert_str_eq(fx_error(&res), "no deleted group with this id");
    fx_set_id(&fx_ctx, g);
    ck_assert_int_eq(fx_call(jr_op_groups_delete, NULL).status, 200);
    ck_assert_int_eq(jr_group_load(&fx_ctx, &res, g, 0, NULL), 404);
    ck_assert_int_eq(jr_group_load(&fx_ctx, &res, g, JR_LOAD_REF, NULL), 400);
    ck_assert_int_eq(jr_group_load(&fx_ctx, &res, g, JR_LOAD_DELETED | JR_LOAD_ROW, &row), 0);
    ck_assert_ptr_nonnull(jr_rows_get(row, 0, "deleted_at"));
}
END_TEST

Suite *suite_ops(void)
{
    Suite *s = suite_create("ops");
    TCase *tc = fx_tcase(s, "branches", fx_setup, fx_teardown);
    tcase_add_test(tc, branches_create_and_list);
    tcase_add_test(tc, branches_refused);
    tcase_add_test(tc, branches_update_and_delete);

    tc = fx_tcase(s, "groups", fx_setup, fx_teardown);
    tcase_add_test(tc, groups_create_refused);
    tcase_add_test(tc, groups_names_unique_per_branch);
    tcase_add_test(tc, groups_soft_delete_and_restore);
    tcase_add_test(tc, groups_restore_name_conflict);
    tcase_add_test(tc, groups_list_paging);
    tcase_add_test(tc, groups_page_is_written_whole);
    tcase_add_test(tc, groups_update);
    tcase_add_test(tc, load_judges_scope_trash_and_refs);
    return s;
}
