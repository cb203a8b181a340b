#include <stdarg.h>

#include <apr_strings.h>

#include "jr_road.h"
#include "jr_util.h"

typedef struct {
    jr_hook_fn *fn;
    void *baton;
    int on_commit; /* 1: after a commit, 0: after a rollback */
} hook_t;

static void hook_add(jr_ctx_t *ctx, jr_hook_fn *fn, void *baton, int on_commit)
{
    hook_t *h;
    if (!ctx->hooks) {
        ctx->hooks = apr_array_make(ctx->pool, 2, sizeof(hook_t));
    }
    h = apr_array_push(ctx->hooks);
    h->fn = fn;
    h->baton = baton;
    h->on_commit = on_commit;
}

void jr_after_commit(jr_ctx_t *ctx, jr_hook_fn *fn, void *baton)
{
    hook_add(ctx, fn, baton, 1);
}

void jr_on_rollback(jr_ctx_t *ctx, jr_hook_fn *fn, void *baton)
{
    hook_add(ctx, fn, baton, 0);
}

static void hooks_run(jr_ctx_t *ctx, int committed)
{
    apr_array_header_t *hooks = ctx->hooks;
    int i;
    ctx->hooks = NULL;
    for (i = 0; hooks && i < hooks->nelts; ++i) {
        const hook_t *h = &APR_ARRAY_IDX(hooks, i, hook_t);
        if (h->on_commit == committed) {
            h->fn(ctx, h->baton);
        }
    }
}

int jr_road_op(jr_ctx_t *ctx, jr_op_fn *op, unsigned flags, const json_t *in, jr_result_t *res)
{
    int write = (flags & JR_RF_WRITE) && ctx->db, ok;
    ctx->hooks = NULL;
    if (write && jr_db_begin(ctx->db) != APR_SUCCESS) {
        return jr_err_busy(ctx, res);
    }
    op(ctx, in, res);
    /* res->status is the answer; the return value says the same, and a mismatch must not
     * commit an error's writes. */
    ok = res->status < 400;
    if (write && ok && jr_db_commit(ctx->db) != APR_SUCCESS) {
        jr_db_rollback(ctx->db);
        jr_err_busy(ctx, res);
        ok = 0;
    } else if (write && !ok) {
        jr_db_rollback(ctx->db);
    }
    hooks_run(ctx, ok);
    return res->status;
}

apr_status_t jr_tx_run(jr_ctx_t *ctx, jr_tx_fn *fn, void *baton)
{
    apr_status_t rv = jr_db_begin(ctx->db);
    if (rv != APR_SUCCESS) {
        return rv;
    }
    if ((rv = fn(ctx, baton)) != APR_SUCCESS) {
        jr_db_rollback(ctx->db);
        return rv;
    }
    if ((rv = jr_db_commit(ctx->db)) != APR_SUCCESS) {
        jr_db_rollback(ctx->db);
    }
    return rv;
}

int jr_err_db(jr_ctx_t *ctx, jr_result_t *res)
{
    return jr_fail(res, ctx->pool, 503, "database unavailable");
}

int jr_err_busy(jr_ctx_t *ctx, jr_result_t *res)
{
    return jr_fail(res, ctx->pool, 503, "database busy, try again");
}

int jr_err_internal(jr_ctx_t *ctx, jr_result_t *res)
{
    return jr_fail(res, ctx->pool, 500, "internal error");
}

int jr_err_not_found(jr_ctx_t *ctx, jr_result_t *res, const char *noun)
{
    return jr_fail(res, ctx->pool, 404, "%s not found", noun);
}

int jr_err_conflict(jr_ctx_t *ctx, jr_result_t *res, const char *fmt, ...)
{
    va_list ap;
    const char *msg;
    va_start(ap, fmt);
    msg = jr_pvsprintf(ctx->pool, fmt, ap);
    va_end(ap);
    return jr_fail(res, ctx->pool, 409, "%s", msg);
}

int jr_err_invalid(jr_ctx_t *ctx, jr_result_t *res, const char *field, const char *fmt, ...)
{
    va_list ap;
    const char *msg;
    (void)field;
    va_start(ap, fmt);
    msg = jr_pvsprintf(ctx->pool, fmt, ap);
    va_end(ap);
    return jr_fail(res, ctx->pool, 400, "%s", msg);
}

int jr_err_body(jr_ctx_t *ctx, jr_result_t *res, const char *msg)
{
    return jr_fail(res, ctx->pool, 400, "%s", msg);
}

int jr_err_write(jr_ctx_t *ctx, jr_result_t *res, const char *conflict_msg)
{
    if (conflict_msg && jr_db_unique_violation(ctx->db)) {
        return jr_fail(res, ctx->pool, 409, "%s", conflict_msg);
    }
    return jr_err_internal(ctx, res);
}
