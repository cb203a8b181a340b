/* The queues the worker daemon consumes: AI text checks (entries, lesson reports) and photo
 * jobs. Wake-ups bump a generation (and NOTIFY after the commit on PostgreSQL);
 * requeueing puts failed jobs back, limited to the caller's branches. */
#include <string.h>

#include <apr_strings.h>

#include "jr_json.h"
#include "jr_health.h"
#include "jr_jobs.h"
#include "jr_queues.h"
#include "jr_record_events.h"
#include "jr_settings.h"
#include "jr_stmts.h"
#include "jr_util.h"

apr_status_t jr_ai_queue(jr_ctx_t *ctx, const char *entity_type, long long id, long long branch)
{
    apr_pool_t *p = ctx->pool;
    const char *now = jr_now_iso(p);
    if (jr_db_exec_later(ctx->db, p, JR_Q_AI_JOB_OPEN,
                         JR_ARGS(entity_type, jr_i64(p, id), jr_i64(p, branch), now, now)) !=
        APR_SUCCESS) {
        return APR_EGENERAL;
    }
    jr_queue_wake(ctx->db, "journal_ai");
    return APR_SUCCESS;
}

apr_status_t jr_jobs_follow(jr_ctx_t *ctx, const char *entity_type, long long id, long long branch)
{
    apr_pool_t *p = ctx->pool;
    const char *b = jr_i64(p, branch), *i = jr_i64(p, id);
    apr_status_t rv = jr_db_exec_later(ctx->db, p, JR_Q_AI_JOBS_FOLLOW_RECORD,
                                       JR_ARGS(b, entity_type, i));
    if (rv == APR_SUCCESS && !strcmp(entity_type, "entry")) {
        rv = jr_db_exec_later(ctx->db, p, JR_Q_PHOTO_JOBS_FOLLOW_ENTRY, JR_ARGS(b, i));
    }
    return rv;
}

static int wake(jr_ctx_t *ctx, jr_result_t *res, const char *channel)
{
    apr_pool_t *p = ctx->pool;
    if (jr_queue_signal(ctx, channel) != APR_SUCCESS ||
        jr_audit_ref(ctx, "wake", "queue", channel, NULL) != APR_SUCCESS) {
        return jr_err_write(ctx, res, NULL);
    }
    return jr_reply_ok(res, p);
}

int jr_op_ai_wake(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    return wake(ctx, res, "journal_ai");
}

int jr_op_photo_wake(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    return wake(ctx, res, "journal_photo");
}

/* Sets the records of failed AI checks pending again, each with its status event. */
static apr_status_t requeue_records(jr_ctx_t *ctx, jr_stmt_id_t stmt, int entries)
{
    const char *scope = ctx->who.branch_json;
    jr_rows_t *rows;
    int i;
    if (jr_db_select(ctx->db, ctx->pool, stmt, &rows, JR_ARGS(scope, scope)) != APR_SUCCESS) {
        return APR_EGENERAL;
    }
    for (i = 0; i < rows->nrows; ++i) {
        long long id = jr_rows_int(rows, i, "id", 0);
        if ((entries ? jr_event_entry(ctx, "ai_status", id)
                     : jr_event_report(ctx, "lesson_report_status", id)) != APR_SUCCESS) {
            return APR_EGENERAL;
        }
    }
    return APR_SUCCESS;
}

static int requeue(jr_ctx_t *ctx, jr_result_t *res, int ai)
{
    apr_pool_t *p = ctx->pool;
    const char *scope = ctx->who.branch_json, *now = jr_now_iso(p);
    int n = 0;
    if ((ai && (requeue_records(ctx, JR_Q_AI_REQUEUE_ENTRIES, 1) != APR_SUCCESS ||
                requeue_records(ctx, JR_Q_AI_REQUEUE_REPORTS, 0) != APR_SUCCESS ||
                jr_db_exec(ctx->db, p, JR_Q_AI_REQUEUE, &n, JR_ARGS(now, scope, scope)) !=
                    APR_SUCCESS)) ||
        (!ai &&
         jr_db_exec(ctx->db, p, JR_Q_PHOTO_REQUEUE, &n, JR_ARGS(now, scope, scope)) !=
             APR_SUCCESS) ||
        jr_queue_signal(ctx, ai ? "journal_ai" : "journal_photo") != APR_SUCCESS ||
        jr_audit_ref(ctx, "requeue_failed", "queue", ai ? "journal_ai" : "journal_photo",
                     NULL) != APR_SUCCESS) {
        return jr_err_write(ctx, res, NULL);
    }
    return jr_reply_ok_count(res, p, n);
}

int jr_op_ai_requeue(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    return requeue(ctx, res, 1);
}

int jr_op_photo_requeue(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    return requeue(ctx, res, 0);
}

static const char *const ai_states[] = {"pending", "processing", "done", "failed", NULL};
static const char *const photo_states[] = {"queued", "processing", "done", "failed", "rejected",
                                           NULL};

apr_status_t jr_queue_counts(jr_ctx_t *ctx, int ai, jr_queue_counts_t *c)
{
    const char *scope = ctx->who.branch_json;
    c->states = ai ? ai_states : photo_states;
    return jr_db_select(ctx->db, ctx->pool, ai ? JR_Q_AI_STATUS_COUNTS : JR_Q_PHOTO_STATUS_COUNTS,
                        &c->rows, JR_ARGS(scope, scope));
}

/* The row of a status, or -1. */
static int status_row(const jr_rows_t *rows, const char *status)
{
    int i;
    for (i = 0; i < rows->nrows; ++i) {
        if (!strcmp(jr_rows_get(rows, i, "status"), status)) {
            return i;
        }
    }
    return -1;
}

void jr_queue_counts_write(jr_jw_t *w, const jr_queue_counts_t *c)
{
    const char *const *st;
    int i, k;
    for (st = c->states; *st; ++st) {
        k = status_row(c->rows, *st);
        jr_jw_kint(w, *st, k < 0 ? 0 : jr_rows_int(c->rows, k, "n", 0));
    }
    /* A status the module does not know (a newer worker's) is still counted. */
    for (i = 0; i < c->rows->nrows; ++i) {
        const char *s = jr_rows_get(c->rows, i, "status");
        for (st = c->states; *st && strcmp(*st, s); ++st) {
        }
        if (!*st) {
            jr_jw_kint(w, s, jr_rows_int(c->rows, i, "n", 0));
        }
    }
}

/* Writes after the photo queue's counts whether the worker is switched on (enabled) and whether
 * a photo service is configured (service.configured), as members of the object open in w. */
static void photo_describe(jr_ctx_t *ctx, jr_jw_t *w)
{
    jr_jw_kbool(w, "enabled", jr_setting_on(ctx, JR_SETTING_PHOTO_WORKER_ENABLED));
    jr_jw_key(w, "service");
    jr_jw_obj(w);
    jr_jw_kbool(w, "configured", ctx->cfg->photo_ai_endpoint != NULL);
    jr_jw_obj_end(w);
}

static int status_reply(jr_ctx_t *ctx, jr_result_t *res, int ai)
{
    jr_queue_counts_t c;
    jr_jw_t w;
    if (jr_queue_counts(ctx, ai, &c) != APR_SUCCESS) {
        return jr_err_db(ctx, res);
    }
    jr_jw_init(&w, ctx->pool, 512);
    jr_jw_obj(&w);
    jr_queue_counts_write(&w, &c);
    if (ai) {
        jr_ai_describe(&w, ctx->cfg, 1);
    } else {
        photo_describe(ctx, &w);
    }
    jr_jw_obj_end(&w);
    return jr_reply_jw(res, 200, &w);
}

int jr_op_ai_status(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    return status_reply(ctx, res, 1);
}

int jr_op_photo_status(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    return status_reply(ctx, res, 0);
}
