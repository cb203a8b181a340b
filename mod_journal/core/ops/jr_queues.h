/* The operations of jr_queues.c (the route table's rows) and what other families use of it. */
#ifndef JR_QUEUES_H
#define JR_QUEUES_H

#include "jr_jw.h"
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
/* The counts by status of a queue (ai: AI checks, else photo jobs) for the caller's branches. */
typedef struct {
    const char *const *states; /* every known status, NULL-terminated */
    jr_rows_t *rows;           /* status, n */
} jr_queue_counts_t;
apr_status_t jr_queue_counts(jr_ctx_t *ctx, int ai, jr_queue_counts_t *c);
/* The counts as members "status": n of the object open in w, every known status present. */
void jr_queue_counts_write(jr_jw_t *w, const jr_queue_counts_t *c);

#endif
