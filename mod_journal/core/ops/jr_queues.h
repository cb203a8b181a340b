/* The operations of jr_queues.c (the route table's rows) and what other families use of it. */
#ifndef JR_QUEUES_H
#define JR_QUEUES_H

#include "jr_router.h"

jr_op_fn jr_op_ai_wake;
jr_op_fn jr_op_photo_wake;
jr_op_fn jr_op_ai_requeue;
jr_op_fn jr_op_photo_requeue;
jr_op_fn jr_op_ai_status;
jr_op_fn jr_op_photo_status;
/* Opens an AI check of a record ("entry" or "lesson_report") in the caller's transaction,
 * unless one is open already. */
apr_status_t jr_ai_queue(jr_ctx_t *ctx, const char *entity_type, long long id, long long branch);
/* Moves a record's jobs (AI checks; photo jobs of an entry) to the record's branch, in the
 * caller's transaction: a record whose group moved must not stay counted, or requeued, by
 * the old branch. */
apr_status_t jr_jobs_follow(jr_ctx_t *ctx, const char *entity_type, long long id, long long branch);
/* {status: count} of a queue for the caller's branches (a new reference); NULL on error. */
json_t *jr_queue_counts(jr_ctx_t *ctx, int ai);

#endif
