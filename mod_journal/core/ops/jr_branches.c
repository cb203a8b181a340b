/* Branches: every record of the journal belongs to one through its group. */
#include <apr_strings.h>

#include "jr_cursor.h"
#include "jr_json.h"
#include "jr_branches.h"
#include "jr_stmts.h"
#include "jr_util.h"

const jr_field_t jr_fields_branch[] = {
    {.name = "name", .type = JR_F_STRING, .required = 1, .trim = 1, .min = 1, .max = 200},
    {NULL},
};

const jr_field_spec_t jr_fields_branches[] = {
    {"POST /api/branches", jr_fields_branch},
    {"PUT /api/branches/:id", jr_fields_branch},
    {NULL, NULL},
};

static void branch_write(apr_pool_t *p, jr_jw_t *w, const jr_rows_t *r, int i)
{
    jr_jw_obj(w);
    jr_jw_kint(w, "id", jr_rows_int(r, i, "id", 0));
    jr_jw_kstr(w, "name", jr_rows_get(r, i, "name"));
    jr_jw_kstr(w, "created_at", jr_rows_get(r, i, "created_at"));
    jr_jw_kstr(w, "updated_at", jr_rows_get(r, i, "updated_at"));
    jr_jw_obj_end(w);
}

/* A branch's scope is itself: a tutor sees the branches assigned to them. */
static const jr_kind_t branch_kind = {"branch", NULL, JR_Q_BRANCH_GET, JR_Q_BRANCH_GET, "id", 0};

int jr_branch_load(jr_ctx_t *ctx, jr_result_t *res, long long id, unsigned flags, jr_rows_t **row)
{
    return jr_load(ctx, res, &branch_kind, id, flags, row);
}

static const jr_sync_def_t branches_sync = {"branches", "branch", JR_Q_BRANCHES_SYNC,
                                            branch_write};

int jr_op_branches_list(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    const char *scope = ctx->who.branch_json;
    /* The administrative list is "all branches" unless the caller pages. */
    long long dflt = ctx->iface == JR_IF_ADMIN ? JR_LIMIT_MAX : JR_LIMIT_DEFAULT;
    static const char *const keys[] = {"id"};
    jr_rows_t *rows, *count;
    jr_page_t pg;
    if (jr_sync_wanted(ctx)) {
        return jr_sync_list(ctx, res, &branches_sync);
    }
    if (jr_page_begin(ctx, res, "branches", 1, dflt, &pg) != 0) {
        return res->status;
    }
    if (jr_db_select(ctx->db, p, JR_Q_BRANCHES_LIST, &rows,
                     JR_ARGS(scope, scope, jr_page_key(&pg, 0), jr_page_fetch(p, &pg),
                             jr_i64(p, pg.offset))) != APR_SUCCESS ||
        jr_db_select(ctx->db, p, JR_Q_BRANCHES_COUNT, &count, JR_ARGS(scope, scope)) != APR_SUCCESS) {
        return jr_err_db(ctx, res);
    }
    return jr_reply_rows(ctx, res, &pg, keys, branch_write, rows, jr_rows_int(count, 0, "n", 0),
                         pg.limit, pg.offset);
}

int jr_op_branches_get(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    jr_rows_t *rows;
    int st;
    if ((st = jr_branch_load(ctx, res, jr_param_id(ctx, "id"), 0, &rows)) != 0) {
        return st;
    }
    return jr_reply_row(ctx, res, 200, branch_write, rows, 0);
}

static int name_taken(jr_ctx_t *ctx, const char *name, long long self, jr_result_t *res)
{
    jr_rows_t *rows;
    if (jr_db_select(ctx->db, ctx->pool, JR_Q_BRANCH_NAME_TAKEN, &rows,
                     JR_ARGS(name, jr_i64(ctx->pool, self))) != APR_SUCCESS) {
        jr_err_db(ctx, res);
        return 1;
    }
    if (rows->nrows > 0) {
        jr_err_conflict(ctx, res, "a branch named '%s' already exists", name);
        return 1;
    }
    return 0;
}

static const char *const conflict = "a branch with this name already exists";

int jr_op_branches_create(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    const char *name, *now = jr_now_iso(p);
    jr_rows_t *rows;
    long long id;

    name = jr_json_trimmed(p, in, "name");
    if (name_taken(ctx, name, 0, res)) {
        return res->status;
    }
    if (jr_db_select(ctx->db, p, JR_Q_BRANCH_INSERT, &rows, JR_ARGS(name, now, now)) != APR_SUCCESS ||
        rows->nrows != 1) {
        return jr_err_write(ctx, res, conflict);
    }
    id = jr_rows_int(rows, 0, "id", 0);
    if (jr_audit(ctx, "create", "branch", id, jr_json_own(p, json_pack("[s]", "name"))) !=
        APR_SUCCESS) {
        return jr_err_write(ctx, res, NULL);
    }
    if (jr_branch_load(ctx, res, id, 0, &rows) != 0) {
        return jr_err_internal(ctx, res);
    }
    return jr_reply_row(ctx, res, 201, branch_write, rows, 0);
}

int jr_op_branches_update(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    long long id = jr_param_id(ctx, "id");
    const char *name;
    jr_rows_t *rows;
    int st;

    if ((st = jr_branch_load(ctx, res, id, 0, NULL)) != 0) {
        return st;
    }
    name = jr_json_trimmed(p, in, "name");
    if (name_taken(ctx, name, id, res)) {
        return res->status;
    }
    if (jr_db_exec(ctx->db, p, JR_Q_BRANCH_UPDATE, NULL, JR_ARGS(name, jr_now_iso(p), jr_i64(p, id))) !=
            APR_SUCCESS ||
        jr_audit(ctx, "update", "branch", id, jr_json_own(p, json_pack("[s]", "name"))) !=
            APR_SUCCESS) {
        return jr_err_write(ctx, res, conflict);
    }
    if (jr_branch_load(ctx, res, id, 0, &rows) != 0) {
        return jr_err_internal(ctx, res);
    }
    return jr_reply_row(ctx, res, 200, branch_write, rows, 0);
}

int jr_op_branches_delete(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    long long id = jr_param_id(ctx, "id");
    jr_rows_t *rows;
    int st;

    if ((st = jr_branch_load(ctx, res, id, 0, NULL)) != 0) {
        return st;
    }
    /* Checked inside the transaction so no group can slip in between. */
    if (jr_db_select(ctx->db, p, JR_Q_BRANCH_GROUP_COUNT, &rows, JR_ARGS(jr_i64(p, id))) !=
        APR_SUCCESS) {
        return jr_err_write(ctx, res, NULL);
    }
    if (jr_rows_int(rows, 0, "n", 0) > 0) {
        return jr_err_conflict(
            ctx, res, "the branch still has groups (also in the trash): move or purge them first");
    }
    if (jr_db_exec(ctx->db, p, JR_Q_BRANCH_DELETE, NULL, JR_ARGS(jr_i64(p, id))) != APR_SUCCESS ||
        jr_audit(ctx, "delete", "branch", id, NULL) != APR_SUCCESS) {
        return jr_err_write(ctx, res, NULL);
    }
    return jr_reply_ok(res, p);
}
