/* The road an operation runs on: the request's transaction, the hooks that follow its end,
 * and the standard answers every operation gives the same way.
 *
 * An operation returns the HTTP status it produced (== res->status). For a route marked
 * JR_RF_WRITE the road begins the transaction before the operation, commits it when the
 * status is below 400 and rolls it back otherwise; no operation begins, commits or rolls
 * back. Work that must commit whatever the request's outcome (a ban written while answering
 * 401/403) and the work of the worker and housekeeping run in jr_tx_run's own short
 * transaction. */
#ifndef JR_ROAD_H
#define JR_ROAD_H

#include "jr_router.h"

/* Runs op with the transaction rule of flags (JR_RF_WRITE) and then the hooks registered
 * during it. Returns the answer's status. */
int jr_road_op(jr_ctx_t *ctx, jr_op_fn *op, unsigned flags, const json_t *in, jr_result_t *res);

/* Called once the request's writes are committed (files replaced or deleted can go), or,
 * for jr_on_rollback, once they are undone (a file stored for them goes). On a route that
 * does not write, the first kind runs when the answer is a success, the second otherwise. */
typedef void jr_hook_fn(jr_ctx_t *ctx, void *baton);
void jr_after_commit(jr_ctx_t *ctx, jr_hook_fn *fn, void *baton);
void jr_on_rollback(jr_ctx_t *ctx, jr_hook_fn *fn, void *baton);

/* fn in a transaction of its own, committed when it returns APR_SUCCESS and rolled back
 * otherwise. Never inside the road's transaction of a writing route. */
typedef apr_status_t jr_tx_fn(jr_ctx_t *ctx, void *baton);
apr_status_t jr_tx_run(jr_ctx_t *ctx, jr_tx_fn *fn, void *baton);

/* The standard answers. Each fills res and returns its status. */
int jr_err_db(jr_ctx_t *ctx, jr_result_t *res);       /* 503 */
int jr_err_busy(jr_ctx_t *ctx, jr_result_t *res);     /* 503, retry */
int jr_err_internal(jr_ctx_t *ctx, jr_result_t *res); /* 500 */
/* 404 "<noun> not found" */
int jr_err_not_found(jr_ctx_t *ctx, jr_result_t *res, const char *noun);
int jr_err_conflict(jr_ctx_t *ctx, jr_result_t *res, const char *fmt, ...)
    __attribute__((format(printf, 3, 4))); /* 409 */
/* 400 about one field of the input (field is kept for a machine-readable error later). */
int jr_err_invalid(jr_ctx_t *ctx, jr_result_t *res, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* A 400 with the message of a body check (jr_json_validate), which names the field. */
int jr_err_body(jr_ctx_t *ctx, jr_result_t *res, const char *msg);
/* A write statement failed: 409 conflict_msg when it was a unique violation and a message is
 * given, 500 otherwise. The road rolls the transaction back. */
int jr_err_write(jr_ctx_t *ctx, jr_result_t *res, const char *conflict_msg);

#endif
