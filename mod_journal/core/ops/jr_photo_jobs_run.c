/* The worker's side of photo jobs (see jr_photo_jobs.h): the two queues, claims with the
 * photo to work on, outcomes, events. The queue mechanics are jr_jobs.c's. */
#include <string.h>

#include <apr_strings.h>

#include "jr_events.h"
#include "jr_log.h"
#include "jr_notif.h"
#include "jr_photo_jobs.h"
#include "jr_stmts.h"
#include "jr_storage.h"
#include "jr_util.h"

/* The two queues' statements: JR_PHOTO_JOBS_RUN_STMTS (jr_photo_jobs_run_sql.h). */
const jr_queue_t jr_queue_photo_ai =
    JR_QUEUE_DEF(PHOTO_AI, "photo_ai", "journal_photo", "queued", 3);
const jr_queue_t jr_queue_photo_enhance =
    JR_QUEUE_DEF(PHOTO_ENHANCE, "photo_enhance", "journal_photo", "queued", 3);

#define GONE "the entry or its photo no longer exists"
#define INTERRUPTED "the job was interrupted too often (its worker stopped while running it)"

apr_status_t jr_photo_event(jr_ctx_t *ctx, const char *type, long long job_id)
{
    apr_pool_t *p = ctx->pool;
    jr_rows_t *r;
    jr_jw_t w;
    if (jr_db_select(ctx->db, p, JR_Q_PHOTO_JOB_EVENT_ROW, &r, JR_ARGS(jr_i64(p, job_id))) !=
            APR_SUCCESS ||
        r->nrows != 1) {
        return APR_EGENERAL;
    }
    jr_jw_init(&w, p, 256);
    jr_jw_obj(&w);
    jr_jw_kint_text(&w, "job_id", jr_rows_get(r, 0, "id"));
    jr_jw_kint_text(&w, "entry_id", jr_rows_get(r, 0, "entry_id"));
    jr_jw_kint_text(&w, "branch_id", jr_rows_get(r, 0, "branch_id"));
    jr_jw_kstr(&w, "action", jr_rows_get(r, 0, "action"));
    jr_jw_kstr(&w, "status", jr_rows_get(r, 0, "status"));
    jr_jw_kstr(&w, "error", jr_rows_get(r, 0, "last_error"));
    jr_jw_kint_text(&w, "result_size", jr_rows_get(r, 0, "result_size"));
    jr_jw_kint_text(&w, "result_width", jr_rows_get(r, 0, "result_width"));
    jr_jw_kint_text(&w, "result_height", jr_rows_get(r, 0, "result_height"));
    jr_jw_obj_end(&w);
    if (jr_event(ctx, type, jr_rows_int(r, 0, "branch_id", 0), "photo_job", job_id,
                 jr_jw_done(&w, NULL)) != APR_SUCCESS) {
        return APR_EGENERAL;
    }
    return jr_notify(ctx, type, jr_rows_int(r, 0, "branch_id", 0), "photo_job", job_id,
                     type[6] == 'd' ? "Photo job done" : "Photo job failed",
                     jr_psprintf(p, "Photo %s job %lld of entry %s: %s", jr_rows_get(r, 0, "action"),
                                 job_id, jr_rows_get(r, 0, "entry_id"),
                                 type[6] == 'd'                    ? "the result is ready to apply"
                                 : jr_rows_get(r, 0, "last_error") ? jr_rows_get(r, 0, "last_error")
                                                                   : "no answer"));
}

/* Fails a job for good, with its event, in the open transaction; -1 error, 0 lost, 1 done. */
static int fail_job(jr_ctx_t *ctx, const jr_queue_t *q, const jr_job_t *j, const char *error)
{
    apr_pool_t *p = ctx->pool;
    int held = jr_job_settle(ctx, q, j, "failed", 0, error, 0);
    if (held == 1 &&
        (jr_db_exec(ctx->db, p, JR_Q_PHOTO_JOB_FINISHED, NULL,
                    JR_ARGS(jr_now_iso(p), jr_i64(p, j->id))) != APR_SUCCESS ||
         jr_photo_event(ctx, "photo.failed", j->id) != APR_SUCCESS)) {
        return -1;
    }
    return held;
}

/* The task of a claimed job; NULL when the job was failed instead (or on error: *rv). */
static jr_photo_task_t *prepare(jr_ctx_t *ctx, const jr_queue_t *q, const jr_job_t *j,
                                apr_status_t *rv)
{
    apr_pool_t *p = ctx->pool;
    const char *stored;
    jr_photo_task_t *t;
    jr_rows_t *rows;

    *rv = APR_EGENERAL;
    if (jr_db_select(ctx->db, p, JR_Q_PHOTO_JOB_TASK, &rows, JR_ARGS(jr_i64(p, j->id))) !=
        APR_SUCCESS) {
        return NULL;
    }
    stored = rows->nrows == 1 ? jr_rows_get(rows, 0, "stored_name") : NULL;
    if (!stored || jr_rows_get(rows, 0, "deleted_at") || j->attempts > q->max_attempts) {
        const char *why = stored && !jr_rows_get(rows, 0, "deleted_at") ? INTERRUPTED : GONE;
        JR_LOG(JR08001, 0, "photo job %lld of entry %lld failed: %s", j->id, j->entity_id, why);
        *rv = fail_job(ctx, q, j, why) < 0 ? APR_EGENERAL : APR_SUCCESS;
        return NULL;
    }
    if (jr_db_exec(ctx->db, p, JR_Q_PHOTO_JOB_STARTED, NULL,
                   JR_ARGS(jr_now_iso(p), jr_i64(p, j->id))) != APR_SUCCESS) {
        return NULL;
    }
    t = apr_pcalloc(p, sizeof(*t));
    t->job = *j;
    t->action = jr_rows_get(rows, 0, "action");
    t->params = jr_rows_get(rows, 0, "params");
    t->source = jr_storage_path(p, ctx->cfg->data_dir, stored);
    *rv = t->source ? APR_SUCCESS : APR_EGENERAL;
    return t->source ? t : NULL;
}

apr_status_t jr_photo_claim(jr_ctx_t *ctx, const jr_queue_t *q, const char *owner, int max,
                            long long lease, apr_array_header_t **tasks)
{
    apr_array_header_t *jobs,
        *out = apr_array_make(ctx->pool, max > 0 ? max : 1, sizeof(jr_photo_task_t));
    apr_status_t rv = APR_SUCCESS;
    int i;
    *tasks = out;
    if (jr_db_begin(ctx->db) != APR_SUCCESS) {
        return APR_EGENERAL;
    }
    if (jr_jobs_claim(ctx, q, owner, max, lease, &jobs) != APR_SUCCESS) {
        jr_db_rollback(ctx->db);
        return APR_EGENERAL;
    }
    for (i = 0; i < jobs->nelts && rv == APR_SUCCESS; ++i) {
        jr_photo_task_t *t = prepare(ctx, q, &APR_ARRAY_IDX(jobs, i, jr_job_t), &rv);
        if (t) {
            APR_ARRAY_PUSH(out, jr_photo_task_t) = *t;
        }
    }
    if (rv != APR_SUCCESS || (rv = jr_db_commit(ctx->db)) != APR_SUCCESS) {
        if (rv != APR_SUCCESS) {
            jr_db_rollback(ctx->db);
        }
        out->nelts = 0;
    }
    return rv;
}

/* A result: done, with its file and figures, and the photo.done event. */
static int settle_done(jr_ctx_t *ctx, const jr_queue_t *q, const jr_photo_task_t *t,
                       const jr_photo_result_t *r, const jr_stored_t *st)
{
    apr_pool_t *p = ctx->pool;
    int held = jr_job_settle(ctx, q, &t->job, "done", 0, NULL, 0);
    if (held != 1) {
        return held;
    }
    if (jr_db_exec(ctx->db, p, JR_Q_PHOTO_JOB_RESULT, NULL,
                   JR_ARGS(st->stored_name, jr_i64(p, st->size), jr_i64(p, r->width),
                           jr_i64(p, r->height), r->type, st->sha256, jr_now_iso(p),
                           jr_i64(p, t->job.id))) != APR_SUCCESS ||
        jr_photo_event(ctx, "photo.done", t->job.id) != APR_SUCCESS) {
        return -1;
    }
    return 1;
}

static int settle_failed(jr_ctx_t *ctx, const jr_queue_t *q, const jr_photo_task_t *t,
                         const jr_photo_result_t *r, const char **what)
{
    const jr_job_t *j = &t->job;
    if (!r->final && j->attempts < q->max_attempts) {
        apr_time_t at =
            apr_time_now() + apr_time_from_sec(jr_job_backoff(j->attempts, r->retry_after));
        *what = "retry";
        return jr_job_settle(ctx, q, j, "queued", at, r->error, 0);
    }
    *what = "failed";
    return fail_job(ctx, q, j, r->error);
}

apr_status_t jr_photo_finish(jr_ctx_t *ctx, const jr_queue_t *q, const jr_photo_task_t *t,
                             jr_photo_result_t *r, const char **what)
{
    jr_stored_t *st = &r->stored;
    apr_status_t rv;
    int held;

    *what = "lost";
    /* The file first, under its final random name (in the job's pool: it outlives this
     * step): the row that names it commits after. */
    if (r->tmp_path && !st->stored_name) {
        if ((rv = jr_storage_store(st, ctx->pool, ctx->cfg->data_dir, JR_STORAGE_PHOTOS,
                                   r->tmp_path)) != APR_SUCCESS) {
            JR_LOG(JR08002, rv, "cannot store the result of photo job %lld under %s",
                   t->job.id, ctx->cfg->data_dir);
            memset(st, 0, sizeof(*st));
            r->tmp_path = NULL;
            r->error = "the result could not be stored";
        } else {
            st->stored_name = apr_pstrdup(r->pool, st->stored_name);
            st->sha256 = apr_pstrdup(r->pool, st->sha256);
        }
    }
    if (jr_db_begin(ctx->db) != APR_SUCCESS) {
        return APR_EGENERAL;
    }
    if (st->stored_name) {
        *what = "done";
        held = settle_done(ctx, q, t, r, st);
    } else {
        held = settle_failed(ctx, q, t, r, what);
    }
    if (held != 1) {
        jr_db_rollback(ctx->db);
        if (held == 0) {
            *what = "lost"; /* another worker has the job: our result is nobody's */
            if (st->stored_name) {
                jr_storage_remove(ctx->pool, ctx->cfg->data_dir, st->stored_name);
            }
            return APR_SUCCESS;
        }
        return APR_EGENERAL;
    }
    return jr_db_commit(ctx->db);
}

apr_status_t jr_photo_release(jr_ctx_t *ctx, const jr_queue_t *q, const jr_photo_task_t *t)
{
    if (jr_db_begin(ctx->db) != APR_SUCCESS) {
        return APR_EGENERAL;
    }
    if (jr_job_settle(ctx, q, &t->job, "queued", 0, NULL, 1) < 0) {
        jr_db_rollback(ctx->db);
        return APR_EGENERAL;
    }
    return jr_db_commit(ctx->db);
}

apr_status_t jr_photo_jobs_purge_entry(jr_ctx_t *ctx, long long entry_id,
                                       apr_array_header_t *unlink_after)
{
    jr_rows_t *rows;
    int i;
    if (jr_db_select(ctx->db, ctx->pool, JR_Q_PHOTO_JOBS_DELETE_ENTRY, &rows,
                     JR_ARGS(jr_i64(ctx->pool, entry_id))) != APR_SUCCESS) {
        return APR_EGENERAL;
    }
    for (i = 0; i < rows->nrows; ++i) {
        const char *name = jr_rows_get(rows, i, "result_file");
        if (name) {
            APR_ARRAY_PUSH(unlink_after, const char *) = name;
        }
    }
    return APR_SUCCESS;
}
