/* Groups: belong to a branch, may have a tutor; soft delete with restore. */
#include <string.h>

#include <apr_strings.h>

#include "jr_cursor.h"
#include "jr_json.h"
#include "jr_groups.h"
#include "jr_users.h"
#include "jr_stmts.h"
#include "jr_util.h"

#define ID_MAX 9007199254740991LL

const jr_field_t jr_fields_group_create[] = {
    {.name = "name", .type = JR_F_STRING, .required = 1, .trim = 1, .min = 1, .max = 200},
    {.name = "branch_id", .type = JR_F_INT, .required = 1, .min = 1, .max = ID_MAX},
    {.name = "tutor_id", .type = JR_F_INT, .nullable = 1, .min = 1, .max = ID_MAX},
    {NULL},
};

const jr_field_t jr_fields_group_update[] = {
    {.name = "name", .type = JR_F_STRING, .trim = 1, .min = 1, .max = 200},
    {.name = "branch_id", .type = JR_F_INT, .min = 1, .max = ID_MAX},
    {.name = "tutor_id", .type = JR_F_INT, .nullable = 1, .min = 1, .max = ID_MAX},
    {NULL},
};

const jr_field_spec_t jr_fields_groups[] = {
    {"POST /api/groups", jr_fields_group_create},
    {"PUT /api/groups/:id", jr_fields_group_update},
    {NULL, NULL},
};

static void group_write(apr_pool_t *p, jr_jw_t *w, const jr_rows_t *r, int i)
{
    jr_jw_obj(w);
    jr_jw_kint(w, "id", jr_rows_int(r, i, "id", 0));
    jr_jw_kstr(w, "name", jr_rows_get(r, i, "name"));
    jr_jw_kint(w, "branch_id", jr_rows_int(r, i, "branch_id", 0));
    jr_jw_kint_text(w, "tutor_id", jr_rows_get(r, i, "tutor_id"));
    jr_jw_kstr(w, "created_at", jr_rows_get(r, i, "created_at"));
    jr_jw_kstr(w, "updated_at", jr_rows_get(r, i, "updated_at"));
    jr_jw_obj_end(w);
}

static const jr_kind_t group_kind = {"group", "group_id", JR_Q_GROUP_GET, JR_Q_GROUP_SCOPE,
                                     "branch_id", 1};

int jr_group_load(jr_ctx_t *ctx, jr_result_t *res, long long id, unsigned flags, jr_rows_t **row)
{
    return jr_load(ctx, res, &group_kind, id, flags, row);
}

static const jr_sync_def_t groups_sync = {"groups", "group", JR_Q_GROUPS_SYNC, group_write};

int jr_op_groups_list(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    long long branch = jr_query_id(ctx, res, "branch_id");
    const char *b, *scope = ctx->who.branch_json;
    static const char *const keys[] = {"id"};
    jr_rows_t *rows, *count;
    jr_page_t pg;

    if (jr_sync_wanted(ctx)) {
        return jr_sync_list(ctx, res, &groups_sync);
    }
    if (branch < 0 || jr_page_begin(ctx, res, "groups", 1, JR_LIMIT_DEFAULT, &pg) != 0) {
        return res->status;
    }
    b = branch ? jr_i64(p, branch) : NULL;
    if (jr_db_select(ctx->db, p, JR_Q_GROUPS_LIST, &rows,
                     JR_ARGS(b, b, scope, scope, jr_page_key(&pg, 0), jr_page_fetch(p, &pg),
                             jr_i64(p, pg.offset))) !=
            APR_SUCCESS ||
        jr_db_select(ctx->db, p, JR_Q_GROUPS_COUNT, &count, JR_ARGS(b, b, scope, scope)) !=
            APR_SUCCESS) {
        return jr_err_db(ctx, res);
    }
    return jr_reply_rows(ctx, res, &pg, keys, group_write, rows, jr_rows_int(count, 0, "n", 0),
                         pg.limit, pg.offset);
}

int jr_op_groups_get(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    jr_rows_t *rows;
    int st;
    if ((st = jr_group_load(ctx, res, jr_param_id(ctx, "id"), JR_LOAD_ROW, &rows)) != 0) {
        return st;
    }
    return jr_reply_row(ctx, res, 200, group_write, rows, 0);
}

/* Every check of a group's fields against the database, before any write. */
static int check_group(jr_ctx_t *ctx, jr_result_t *res, long long self, const char *name,
                       long long branch, long long tutor)
{
    apr_pool_t *p = ctx->pool;
    jr_rows_t *rows;
    apr_array_header_t *one = apr_array_make(p, 1, sizeof(long long));
    apr_status_t rv;

    APR_ARRAY_PUSH(one, long long) = branch;
    if (jr_branches_missing(ctx, one, &rv) || rv != APR_SUCCESS) {
        if (rv != APR_SUCCESS) {
            jr_err_db(ctx, res);
        } else {
            jr_err_invalid(ctx, res, "branch_id", "branch_id: branch %lld does not exist", branch);
        }
        return -1;
    }
    if (tutor) {
        if (jr_db_select(ctx->db, p, JR_Q_TUTOR_CHECK, &rows,
                         JR_ARGS(jr_i64(p, branch), jr_i64(p, tutor))) != APR_SUCCESS) {
            jr_err_db(ctx, res);
            return -1;
        }
        if (rows->nrows != 1 || jr_rows_int(rows, 0, "active", 0) != 1) {
            jr_err_invalid(ctx, res, "tutor_id",
                           "tutor_id: user %lld does not exist or is inactive", tutor);
            return -1;
        }
        if (!strcmp(jr_rows_get(rows, 0, "role"), "tutor") &&
            jr_rows_int(rows, 0, "member", 0) == 0) {
            jr_err_invalid(ctx, res, "tutor_id",
                           "tutor_id: user %lld is not assigned to branch %lld", tutor, branch);
            return -1;
        }
    }
    if (jr_db_select(ctx->db, p, JR_Q_GROUP_NAME_TAKEN, &rows,
                     JR_ARGS(jr_i64(p, branch), name, jr_i64(p, self))) != APR_SUCCESS) {
        jr_err_db(ctx, res);
        return -1;
    }
    if (rows->nrows > 0) {
        jr_err_conflict(ctx, res, "a group named '%s' already exists in branch %lld", name, branch);
        return -1;
    }
    return 0;
}

static const char *const conflict = "a group with this name already exists in the branch";

int jr_op_groups_create(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    const char *name, *now = jr_now_iso(p);
    long long branch, tutor, id;
    jr_rows_t *rows;

    name = jr_json_trimmed(p, in, "name");
    branch = jr_json_int(in, "branch_id", 0);
    tutor = jr_json_int(in, "tutor_id", 0);
    if (check_group(ctx, res, 0, name, branch, tutor) != 0) {
        return res->status;
    }
    if (jr_db_select(ctx->db, p, JR_Q_GROUP_INSERT, &rows,
                     JR_ARGS(name, jr_i64(p, branch), tutor ? jr_i64(p, tutor) : NULL, now, now)) !=
            APR_SUCCESS ||
        rows->nrows != 1) {
        return jr_err_write(ctx, res, conflict);
    }
    id = jr_rows_int(rows, 0, "id", 0);
    if (jr_audit(ctx, "create", "group", id, jr_json_own(p, jr_json_keys(in))) != APR_SUCCESS) {
        return jr_err_write(ctx, res, NULL);
    }
    if (jr_group_load(ctx, res, id, JR_LOAD_ROW, &rows) != 0) {
        return jr_err_internal(ctx, res);
    }
    return jr_reply_row(ctx, res, 201, group_write, rows, 0);
}

int jr_op_groups_update(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    long long id = jr_param_id(ctx, "id"), branch, tutor;
    const char *name;
    jr_rows_t *rows;
    json_t *t;
    int st;

    if ((st = jr_group_load(ctx, res, id, JR_LOAD_ROW, &rows)) != 0) {
        return st;
    }
    name = jr_json_trimmed(p, in, "name");
    name = name ? name : jr_rows_get(rows, 0, "name");
    branch = jr_json_int(in, "branch_id", jr_rows_int(rows, 0, "branch_id", 0));
    t = json_object_get(in, "tutor_id");
    tutor = t ? (json_is_null(t) ? 0 : json_integer_value(t)) : jr_rows_int(rows, 0, "tutor_id", 0);
    if (!jr_branch_visible(ctx, branch)) {
        return jr_err_invalid(ctx, res, "branch_id", "branch_id: branch %lld does not exist",
                              branch);
    }
    /* A tutor named in the body is checked; a kept tutor only when the group changes branch. */
    if (check_group(ctx, res, id, name, branch,
                    (t && !json_is_null(t)) || branch != jr_rows_int(rows, 0, "branch_id", 0)
                        ? tutor
                        : 0) != 0) {
        return res->status;
    }
    if (jr_db_exec(ctx->db, p, JR_Q_GROUP_UPDATE, NULL,
                   JR_ARGS(name, jr_i64(p, branch), tutor ? jr_i64(p, tutor) : NULL, jr_now_iso(p),
                           jr_i64(p, id))) != APR_SUCCESS ||
        /* entries carry their group's branch (scoped lists read it without a join) */
        jr_db_exec(ctx->db, p, JR_Q_ENTRIES_MOVE_BRANCH, NULL,
                   JR_ARGS(jr_i64(p, branch), jr_i64(p, id))) != APR_SUCCESS ||
        jr_db_exec(ctx->db, p, JR_Q_REPORTS_MOVE_BRANCH, NULL,
                   JR_ARGS(jr_i64(p, branch), jr_i64(p, id))) != APR_SUCCESS ||
        jr_db_exec(ctx->db, p, JR_Q_AI_JOBS_MOVE_GROUP, NULL,
                   JR_ARGS(jr_i64(p, branch), jr_i64(p, id), jr_i64(p, id))) != APR_SUCCESS ||
        jr_db_exec(ctx->db, p, JR_Q_PHOTO_JOBS_MOVE_GROUP, NULL,
                   JR_ARGS(jr_i64(p, branch), jr_i64(p, id))) != APR_SUCCESS ||
        jr_audit(ctx, "update", "group", id, jr_json_own(p, jr_json_keys(in))) != APR_SUCCESS) {
        return jr_err_write(ctx, res, conflict);
    }
    if (jr_group_load(ctx, res, id, JR_LOAD_ROW, &rows) != 0) {
        return jr_err_internal(ctx, res);
    }
    return jr_reply_row(ctx, res, 200, group_write, rows, 0);
}

int jr_op_groups_delete(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    long long id = jr_param_id(ctx, "id");
    const char *now = jr_now_iso(p);
    int n = 0, st;

    if ((st = jr_group_load(ctx, res, id, 0, NULL)) != 0) {
        return st;
    }
    if (jr_db_exec(ctx->db, p, JR_Q_GROUP_SOFT_DELETE, &n,
                   JR_ARGS(now, jr_opt_i64(p, ctx->who.user_id), now,
                           jr_i64(p, id))) != APR_SUCCESS ||
        (n == 1 && jr_audit(ctx, "delete", "group", id, NULL) != APR_SUCCESS)) {
        return jr_err_write(ctx, res, NULL);
    }
    if (n != 1) { /* deleted by a concurrent request */
        return jr_err_not_found(ctx, res, "group");
    }
    return jr_reply_ok(res, p);
}

int jr_op_groups_restore(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    long long id = jr_param_id(ctx, "id");
    jr_rows_t *rows, *taken;
    int st;

    if ((st = jr_group_load(ctx, res, id, JR_LOAD_DELETED | JR_LOAD_ROW, &rows)) != 0) {
        return st;
    }
    if (jr_db_select(ctx->db, p, JR_Q_GROUP_NAME_TAKEN, &taken,
                     JR_ARGS(jr_rows_get(rows, 0, "branch_id"), jr_rows_get(rows, 0, "name"),
                             jr_i64(p, id))) != APR_SUCCESS) {
        return jr_err_db(ctx, res);
    }
    if (taken->nrows > 0) {
        return jr_err_conflict(ctx, res,
                               "another group named '%s' exists in the branch: rename it first",
                               jr_rows_get(rows, 0, "name"));
    }
    if (jr_db_exec(ctx->db, p, JR_Q_GROUP_RESTORE, NULL, JR_ARGS(jr_now_iso(p), jr_i64(p, id))) !=
            APR_SUCCESS ||
        jr_audit(ctx, "restore", "group", id, NULL) != APR_SUCCESS) {
        return jr_err_write(ctx, res, conflict);
    }
    if (jr_group_load(ctx, res, id, JR_LOAD_ROW, &rows) != 0) {
        return jr_err_internal(ctx, res);
    }
    return jr_reply_row(ctx, res, 200, group_write, rows, 0);
}
