/* Loading one record by id: the opening every operation on a record shares (jr_load.h). */
#include "jr_db.h"
#include "jr_load.h"
#include "jr_util.h"

/* 1 when the single row of rows is what the caller may work on. */
static int judged_ok(const jr_ctx_t *ctx, const jr_kind_t *kind, const jr_rows_t *rows,
                     unsigned flags)
{
    int deleted = (flags & JR_LOAD_DELETED) != 0;
    if (rows->nrows != 1) {
        return 0;
    }
    if (kind->soft && (jr_rows_get(rows, 0, "deleted_at") != NULL) != deleted) {
        return 0;
    }
    /* A row whose branch is empty (a share link of a deleted student) reads as branch 0,
     * which only a caller who sees every branch sees. */
    return !kind->branch_col ||
           jr_branch_visible(ctx, jr_rows_int(rows, 0, kind->branch_col, 0));
}

static int refuse(jr_ctx_t *ctx, jr_result_t *res, const jr_kind_t *kind, long long id,
                  unsigned flags)
{
    if (flags & JR_LOAD_REF) {
        return jr_err_invalid(ctx, res, kind->field, "%s: %s %lld does not exist", kind->field,
                              kind->noun, id);
    }
    if (flags & JR_LOAD_DELETED) {
        return jr_fail(res, ctx->pool, 404, "no deleted %s with this id", kind->noun);
    }
    return jr_err_not_found(ctx, res, kind->noun);
}

int jr_load(jr_ctx_t *ctx, jr_result_t *res, const jr_kind_t *kind, long long id, unsigned flags,
            jr_rows_t **row)
{
    jr_stmt_id_t q = (flags & JR_LOAD_ROW) ? kind->get : kind->scope;
    jr_rows_t *rows;
    int status = 0;
    if (jr_db_select(ctx->db, ctx->pool, q, &rows, JR_ARGS(jr_i64(ctx->pool, id))) !=
        APR_SUCCESS) {
        status = jr_err_db(ctx, res);
    } else if (!judged_ok(ctx, kind, rows, flags)) {
        status = refuse(ctx, res, kind, id, flags);
    } else if (row) {
        *row = rows;
    }
    return status;
}
