/* The road a request takes through the core: its steps before the body (ban, authentication,
 * rate limit, scope, role), the body's checks, and the operation in the request's transaction.
 *
 * An operation returns the HTTP status it produced (== res->status). For a route marked
 * JR_RF_WRITE the road begins the transaction before the operation, commits it when the
 * status is below 400 and rolls it back otherwise; no operation begins, commits or rolls
 * back, except through jr_road_commit. Work that must commit whatever the request's outcome
 * (a ban written while answering 401/403) and the work of the worker and housekeeping run in
 * jr_tx_run's own short transaction. */
#ifndef JR_ROAD_H
#define JR_ROAD_H

#include "jr_router.h"

/* Runs op with the transaction rule of flags (JR_RF_WRITE) and then the hooks registered
 * during it. Returns the answer's status. */
int jr_road_op(jr_ctx_t *ctx, jr_op_fn *op, unsigned flags, const json_t *in, jr_result_t *res);

/* Commits the road's transaction before the operation renders (or reads) its answer, so that
 * this work holds no write lock (on SQLite, the write queue of every process: docs/
 * architecture.md §7.20). After it the operation only reads; the road's own commit then finds
 * nothing to do. A read that fails afterwards answers 500 for a write that stays committed, as
 * a lost answer would. 0, or -1 with the 503 of a failed commit in res (rolled back). */
int jr_road_commit(jr_ctx_t *ctx, jr_result_t *res);

#endif
