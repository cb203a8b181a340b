#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <apr_strings.h>

#include "jr_ctx.h"
#include "jr_error_codes.h"
#include "jr_json.h"
#include "jr_jw.h"
#include "jr_log.h"
#include "jr_util.h"

void jr_result_init(jr_result_t *res, apr_pool_t *p)
{
    res->pool = p;
    res->status = 500;
    res->error = NULL;
    res->error_code = NULL;
    res->error_param = NULL;
    res->error_id = 0;
    res->body = NULL;
    res->body_len = 0;
    res->streamed = 0;
    res->file = NULL;
    res->content_type = NULL;
    res->headers = apr_table_make(p, 4);
}

int jr_fail(jr_result_t *res, apr_pool_t *p, int status, const char *fmt, ...)
{
    va_list ap;
    char *msg;
    va_start(ap, fmt);
    msg = jr_pvsprintf(p, fmt, ap);
    va_end(ap);
    res->status = status;
    res->error = msg;
    res->error_id = 0;
    jr_error_describe(p, status, msg, &res->error_code, &res->error_param);
    res->streamed = 0;
    jr_error_render(res);
    apr_table_unset(res->headers, "X-Total-Count"); /* of a list that failed after its start */
    return status;
}

int jr_reply_raw(jr_result_t *res, int status, const char *body, size_t len)
{
    res->status = status;
    res->error = NULL;
    res->body = body;
    res->body_len = len;
    res->streamed = 0;
    return status;
}

/* {"ok": true}, with "count" when count >= 0. */
static int reply_ok(jr_result_t *res, apr_pool_t *p, long long count)
{
    jr_jw_t w;
    jr_jw_init(&w, p, 32);
    jr_jw_obj(&w);
    jr_jw_kbool(&w, "ok", 1);
    if (count >= 0) {
        jr_jw_kint(&w, "count", count);
    }
    jr_jw_obj_end(&w);
    return jr_reply_jw(res, 200, &w);
}

int jr_reply_ok(jr_result_t *res, apr_pool_t *p)
{
    return reply_ok(res, p, -1);
}

int jr_reply_ok_count(jr_result_t *res, apr_pool_t *p, long long count)
{
    return reply_ok(res, p, count < 0 ? 0 : count);
}

long long jr_param_id(const jr_ctx_t *ctx, const char *name)
{
    const char *v = apr_table_get(ctx->params, name);
    return v ? atoll(v) : 0;
}

int jr_ctx_writes(const jr_ctx_t *ctx)
{
    const char *m = ctx->method;
    return !m || (strcmp(m, "GET") && strcmp(m, "HEAD") && strcmp(m, "OPTIONS"));
}

int jr_branch_visible(const jr_ctx_t *ctx, long long branch_id)
{
    int i;
    if (!ctx->who.branch_json) {
        return 1;
    }
    for (i = 0; i < ctx->who.branch_ids->nelts; ++i) {
        if (APR_ARRAY_IDX(ctx->who.branch_ids, i, long long) == branch_id) {
            return 1;
        }
    }
    return 0;
}

int jr_list_params(jr_ctx_t *ctx, jr_result_t *res, long long *limit, long long *offset)
{
    return jr_list_params_dflt(ctx, res, JR_LIMIT_DEFAULT, limit, offset);
}

int jr_list_params_dflt(jr_ctx_t *ctx, jr_result_t *res, long long dflt, long long *limit,
                        long long *offset)
{
    const char *l = apr_table_get(ctx->query, "limit");
    const char *o = apr_table_get(ctx->query, "offset");
    *limit = dflt;
    *offset = 0;
    if (l && jr_parse_int64(l, 1, JR_LIMIT_MAX, limit) != 0) {
        jr_fail(res, ctx->pool, 400, "limit must be an integer between 1 and %d", JR_LIMIT_MAX);
        return -1;
    }
    if (o && jr_parse_int64(o, 0, 1000000000LL, offset) != 0) {
        jr_fail(res, ctx->pool, 400, "offset must be a non-negative integer");
        return -1;
    }
    return 0;
}

long long jr_query_id(jr_ctx_t *ctx, jr_result_t *res, const char *name)
{
    const char *v = apr_table_get(ctx->query, name);
    long long id;
    if (!v || !*v) {
        return 0;
    }
    if (jr_parse_int64(v, 1, 9007199254740991LL, &id) != 0) {
        jr_fail(res, ctx->pool, 400, "%s must be a positive integer", name);
        return -1;
    }
    return id;
}

const char *jr_ids_json(apr_pool_t *p, const apr_array_header_t *ids)
{
    char *out = apr_pstrdup(p, "[");
    int i;
    for (i = 0; i < ids->nelts; ++i) {
        out = jr_psprintf(p, "%s%s%lld", out, i ? "," : "", APR_ARRAY_IDX(ids, i, long long));
    }
    return apr_pstrcat(p, out, "]", NULL);
}

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

apr_array_header_t *jr_ids_from_json(apr_pool_t *p, const json_t *arr)
{
    apr_array_header_t *ids = apr_array_make(p, 4, sizeof(long long));
    size_t i;
    json_t *v;
    int n = 0, k;
    json_array_foreach((json_t *)arr, i, v) {
        APR_ARRAY_PUSH(ids, long long) = json_integer_value(v);
    }
    if (ids->nelts > 1) {
        qsort(ids->elts, (size_t)ids->nelts, sizeof(long long), cmp_ll);
        for (k = 0; k < ids->nelts; ++k) {
            long long x = APR_ARRAY_IDX(ids, k, long long);
            if (n == 0 || APR_ARRAY_IDX(ids, n - 1, long long) != x) {
                APR_ARRAY_IDX(ids, n++, long long) = x;
            }
        }
        ids->nelts = n;
    }
    return ids;
}

int jr_reply_jw(jr_result_t *res, int status, jr_jw_t *w)
{
    size_t len;
    const char *body = jr_jw_done(w, &len);
    jr_reply_raw(res, status, body, len);
    res->streamed = jr_jw_streamed(w);
    return status;
}

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

void jr_hooks_run(jr_ctx_t *ctx, int committed)
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

apr_status_t jr_tx_run(jr_ctx_t *ctx, jr_tx_fn *fn, void *baton)
{
    /* Called while the road's transaction is armed and not yet begun, it must leave it armed:
     * its commit or rollback ends the lazy state. */
    int armed = ctx->db->tx_lazy && !ctx->db->in_tx;
    apr_status_t rv = jr_db_begin(ctx->db);
    if (rv != APR_SUCCESS) {
        return rv;
    }
    if ((rv = fn(ctx, baton)) != APR_SUCCESS) {
        jr_db_rollback(ctx->db);
    } else if ((rv = jr_db_commit(ctx->db)) != APR_SUCCESS) {
        jr_db_rollback(ctx->db);
    }
    if (armed) {
        jr_db_begin_lazy(ctx->db);
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
        jr_fail(res, ctx->pool, 409, "%s", conflict_msg);
        jr_error_code(res, "duplicate");
        return res->status;
    }
    /* The op checked the records its write depends on before the write, outside the
     * transaction (the road begins it at the first write): a record it refers to removed
     * meanwhile, or one added that now refers to a record being deleted, by another request or
     * a restore, is a conflict of the two, not a fault of the server. A retry checks again
     * and gets the op's own answer. */
    if (jr_db_error(ctx->db) == JR_DB_E_FOREIGN_KEY) {
        return jr_err_conflict(ctx, res, "a record this change depends on was added or "
                                         "removed meanwhile; read it again and retry");
    }
    return jr_err_internal(ctx, res);
}
