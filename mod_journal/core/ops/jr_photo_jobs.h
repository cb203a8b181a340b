/* Photo jobs (spec 3.4, docs/photos.md): an entry's photo enhanced by the AI photo service
 * (action "ai") or by the worker itself with libvips (action "enhance"); the result is kept
 * as a stored file until it is applied (it becomes the entry's photo, the old one goes onto
 * the photo history) or rejected. The operations live in jr_photo_jobs.c; the worker's side
 * (claims, outcomes) in jr_photo_jobs_run.c; the HTTP and image work in workers/jw_photo*.c. */
#ifndef JR_PHOTO_JOBS_H
#define JR_PHOTO_JOBS_H

#include "jr_jobs.h"
#include "jr_router.h"
#include "jr_storage.h"

/* The two queues on table photo_jobs: one job kind each, so a worker without a photo
 * service runs enhance jobs and leaves ai jobs queued. Both wake on journal_photo, and both
 * take nothing while the setting photo_worker_enabled is false. */
extern const jr_queue_t jr_queue_photo_ai;
extern const jr_queue_t jr_queue_photo_enhance;

/* Bounds of a result the worker accepts (besides the upload cap). */
#define JR_PHOTO_MAX_SIDE 20000
#define JR_PHOTO_MAX_PIXELS (200LL * 1000 * 1000)

/* A claimed job: what to do, and to which file. */
typedef struct {
    jr_job_t job;
    const char *action; /* "ai" or "enhance" */
    const char *params; /* the job's params, a JSON object in text */
    const char *source; /* absolute path of the entry's current photo */
} jr_photo_task_t;

/* What the worker made of a job. */
typedef struct {
    apr_pool_t *pool;      /* outlives the attempts to write the outcome */
    const char *tmp_path;  /* the result under data_dir/tmp (NULL when the attempt failed) */
    const char *type;      /* its media type */
    long long width, height;
    const char *error;     /* a failed attempt: short, ours (never the service's words) */
    long long retry_after; /* seconds the service asked for, 0 when none */
    int final;             /* 1: no point in trying again */
    jr_stored_t stored;    /* set by jr_photo_finish once the result is stored, so that a
                            * write tried again (the database was away) stores it once */
} jr_photo_result_t;

/* Claims up to max jobs of queue q in one write transaction, each with its photo. Jobs that
 * cannot run are failed on the way (the entry or its photo is gone, or the job was claimed
 * more than max_attempts times), with a photo.failed event. *tasks receives jr_photo_task_t
 * elements in ctx->pool. */
apr_status_t jr_photo_claim(jr_ctx_t *ctx, const jr_queue_t *q, const char *owner, int max,
                            long long lease, apr_array_header_t **tasks);

/* Writes a job's outcome while its lease is still ours: a result is stored under the data
 * directory and the job becomes done (photo.done event); a failed attempt waits for its
 * back-off, or fails the job at the last attempt (photo.failed event). *what: "done",
 * "retry", "failed" or "lost" (another worker holds the job; nothing written). */
apr_status_t jr_photo_finish(jr_ctx_t *ctx, const jr_queue_t *q, const jr_photo_task_t *t,
                             jr_photo_result_t *r, const char **what);

/* Gives a claimed job back (worker stopping): queued again at once, attempt refunded. */
apr_status_t jr_photo_release(jr_ctx_t *ctx, const jr_queue_t *q, const jr_photo_task_t *t);

/* In the caller's transaction (an entry purged for good): the result files of its jobs are
 * added to unlink_after (the rows go with the entry). */
apr_status_t jr_photo_jobs_purge_entry(jr_ctx_t *ctx, long long entry_id,
                                       apr_array_header_t *unlink_after);

/* Writes a photo.done / photo.failed event of a job in the caller's transaction. */
apr_status_t jr_photo_event(jr_ctx_t *ctx, const char *type, long long job_id);

/* Operations of the road (jr_routes.c) and the field tables of their bodies. */
extern const jr_field_t jr_fields_photo_enhance_ai[];
extern const jr_field_t jr_fields_photo_enhance[];
extern const jr_field_t jr_fields_photo_jobs_enabled[];

jr_op_fn jr_op_photo_enhance_ai;
jr_op_fn jr_op_photo_enhance;
jr_op_fn jr_op_photo_jobs_list;
jr_op_fn jr_op_photo_job_result;
jr_op_fn jr_op_photo_job_apply;
jr_op_fn jr_op_photo_job_reject;
jr_op_fn jr_op_photo_rollback;
jr_op_fn jr_op_photo_restore_original;
jr_op_fn jr_op_photo_jobs_enabled;
jr_op_fn jr_op_photo_ai_health;

#endif
