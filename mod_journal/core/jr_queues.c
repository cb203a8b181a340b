/* The queues the worker daemon consumes: AI text checks (entries, lesson reports) and photo
 * jobs. Wake-ups bump a generation the worker waits on (and NOTIFY on PostgreSQL);
 * requeueing puts failed jobs back, limited to the caller's branches. */
#include <string.h>

#include <apr_strings.h>

#include "jr_events.h"
#include "jr_json.h"
#include "jr_ops.h"
#include "jr_stmts.h"
#include "jr_util.h"

const jr_stmt_def_t jr_stmts_queues[] = {
    /* One open check per record (partial unique index): an open one is left as it is. */
    {"ai_job_open",
     "INSERT INTO ai_jobs (entity_type, entity_id, branch_id, status, attempts, created_at,"
     " updated_at) VALUES (%s, " JR_INT ", " JR_INT ", 'pending', 0, %s, %s)"
     " ON CONFLICT (entity_type, entity_id) WHERE status IN ('pending', 'processing')"
     " DO NOTHING",
     NULL},
    {"signal_bump",
     "UPDATE worker_signals SET generation = generation + 1, updated_at = %s WHERE name = %s",
     NULL},
    /* PostgreSQL only (the worker LISTENs); SQLite workers watch the generation. */
    {"signal_notify", "SELECT %s AS ok", "SELECT pg_notify(%s, '') IS NULL AS ok"},
    JR_SCOPED("ai_requeue_entries",
              "UPDATE entries SET ai_status = 'pending' WHERE id IN (SELECT entity_id FROM ai_jobs"
              " WHERE entity_type = 'entry' AND status = 'failed' AND ",
              "branch_id", ") RETURNING id"),
    JR_SCOPED("ai_requeue_reports",
              "UPDATE lesson_reports SET ai_status = 'pending' WHERE id IN (SELECT entity_id"
              " FROM ai_jobs WHERE entity_type = 'lesson_report' AND status = 'failed' AND ",
              "branch_id", ") RETURNING id"),
    /* A failed job whose record has an open job already stays failed (one open check each). */
    JR_SCOPED("ai_requeue",
              "UPDATE ai_jobs SET status = 'pending', attempts = 0, last_error = NULL,"
              " lease_owner = NULL, lease_until = NULL, run_after = NULL, text_hash = NULL,"
              " updated_at = %s WHERE status = 'failed' AND NOT EXISTS (SELECT 1 FROM ai_jobs o"
              " WHERE o.entity_type = ai_jobs.entity_type AND o.entity_id = ai_jobs.entity_id"
              " AND o.status IN ('pending', 'processing')) AND ",
              "branch_id", ""),
    JR_SCOPED("photo_requeue",
              "UPDATE photo_jobs SET status = 'queued', attempts = 0, last_error = NULL,"
              " lease_owner = NULL, lease_until = NULL, run_after = NULL, started_at = NULL,"
              " finished_at = NULL, updated_at = %s WHERE status = 'failed' AND ",
              "branch_id", ""),
    /* A group moving to another branch takes its records' jobs along (history included), or
     * the old branch's keys would still count and requeue them. */
    {"ai_jobs_move_group",
     "UPDATE ai_jobs SET branch_id = " JR_INT " WHERE (entity_type = 'entry' AND entity_id IN"
     " (SELECT id FROM entries WHERE group_id = " JR_INT ")) OR (entity_type = 'lesson_report'"
     " AND entity_id IN (SELECT id FROM lesson_reports WHERE group_id = " JR_INT "))",
     NULL},
    {"photo_jobs_move_group",
     "UPDATE photo_jobs SET branch_id = " JR_INT
     " WHERE entry_id IN (SELECT id FROM entries WHERE group_id = " JR_INT ")",
     NULL},
    /* A record whose group moved to another branch takes its jobs along. */
    {"ai_jobs_follow_record",
     "UPDATE ai_jobs SET branch_id = " JR_INT " WHERE entity_type = %s AND entity_id = " JR_INT,
     NULL},
    {"photo_jobs_follow_entry",
     "UPDATE photo_jobs SET branch_id = " JR_INT " WHERE entry_id = " JR_INT,
     NULL},
    JR_SCOPED("ai_status_counts", "SELECT status, COUNT(*) AS n FROM ai_jobs WHERE ",
              "branch_id", " GROUP BY status"),
    JR_SCOPED("photo_status_counts", "SELECT status, COUNT(*) AS n FROM photo_jobs WHERE ",
              "branch_id", " GROUP BY status"),
    {NULL, NULL, NULL},
};

apr_status_t jr_ai_queue(jr_ctx_t *ctx, const char *entity_type, long long id, long long branch)
{
    apr_pool_t *p = ctx->pool;
    const char *now = jr_now_iso(p);
    return jr_db_exec(ctx->db, p, "ai_job_open", NULL,
                      JR_ARGS(entity_type, jr_i64(p, id), jr_i64(p, branch), now, now));
}

apr_status_t jr_jobs_follow(jr_ctx_t *ctx, const char *entity_type, long long id, long long branch)
{
    apr_pool_t *p = ctx->pool;
    const char *b = jr_i64(p, branch), *i = jr_i64(p, id);
    apr_status_t rv = jr_db_exec(ctx->db, p, "ai_jobs_follow_record", NULL,
                                 JR_ARGS(b, entity_type, i));
    if (rv == APR_SUCCESS && !strcmp(entity_type, "entry")) {
        rv = jr_db_exec(ctx->db, p, "photo_jobs_follow_entry", NULL, JR_ARGS(b, i));
    }
    return rv;
}

apr_status_t jr_queue_signal(jr_ctx_t *ctx, const char *channel)
{
    apr_pool_t *p = ctx->pool;
    jr_rows_t *rows;
    if (jr_db_exec(ctx->db, p, "signal_bump", NULL, JR_ARGS(jr_now_iso(p), channel)) !=
            APR_SUCCESS ||
        (ctx->db->dialect == JR_DB_PGSQL &&
         jr_db_select(ctx->db, p, "signal_notify", &rows, JR_ARGS(channel)) != APR_SUCCESS)) {
        return APR_EGENERAL;
    }
    return APR_SUCCESS;
}

static apr_status_t wake(jr_ctx_t *ctx, jr_result_t *res, const char *channel)
{
    apr_pool_t *p = ctx->pool;
    if (jr_tx_begin(ctx, res) != APR_SUCCESS) {
        return APR_SUCCESS;
    }
    if (jr_queue_signal(ctx, channel) != APR_SUCCESS ||
        jr_audit_ref(ctx, "wake", "queue", channel, NULL) != APR_SUCCESS) {
        return jr_tx_fail(ctx, res, NULL);
    }
    if (jr_tx_commit(ctx, res) != APR_SUCCESS) {
        return APR_SUCCESS;
    }
    return jr_reply_ok(res, p);
}

apr_status_t jr_op_ai_wake(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    return wake(ctx, res, "journal_ai");
}

apr_status_t jr_op_photo_wake(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    return wake(ctx, res, "journal_photo");
}

/* Sets the records of failed AI checks pending again, each with its status event. */
static apr_status_t requeue_records(jr_ctx_t *ctx, const char *label, int entries)
{
    const char *scope = ctx->who.branch_json;
    jr_rows_t *rows;
    int i;
    if (jr_db_select(ctx->db, ctx->pool, label, &rows, JR_ARGS(scope, scope)) != APR_SUCCESS) {
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

static apr_status_t requeue(jr_ctx_t *ctx, jr_result_t *res, int ai)
{
    apr_pool_t *p = ctx->pool;
    const char *scope = ctx->who.branch_json, *now = jr_now_iso(p);
    int n = 0;
    if (jr_tx_begin(ctx, res) != APR_SUCCESS) {
        return APR_SUCCESS;
    }
    if ((ai && (requeue_records(ctx, "ai_requeue_entries", 1) != APR_SUCCESS ||
                requeue_records(ctx, "ai_requeue_reports", 0) != APR_SUCCESS ||
                jr_db_exec(ctx->db, p, "ai_requeue", &n, JR_ARGS(now, scope, scope)) !=
                    APR_SUCCESS)) ||
        (!ai &&
         jr_db_exec(ctx->db, p, "photo_requeue", &n, JR_ARGS(now, scope, scope)) != APR_SUCCESS) ||
        jr_queue_signal(ctx, ai ? "journal_ai" : "journal_photo") != APR_SUCCESS ||
        jr_audit_ref(ctx, "requeue_failed", "queue", ai ? "journal_ai" : "journal_photo",
                     NULL) != APR_SUCCESS) {
        return jr_tx_fail(ctx, res, NULL);
    }
    if (jr_tx_commit(ctx, res) != APR_SUCCESS) {
        return APR_SUCCESS;
    }
    return jr_reply(res, p, 200, json_pack("{s:b, s:i}", "ok", 1, "count", n));
}

apr_status_t jr_op_ai_requeue(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    return requeue(ctx, res, 1);
}

apr_status_t jr_op_photo_requeue(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    return requeue(ctx, res, 0);
}

/* {status: count} for the caller's branches, with every known status present. */
json_t *jr_queue_counts(jr_ctx_t *ctx, int ai)
{
    static const char *const ai_states[] = {"pending", "processing", "done", "failed", NULL};
    static const char *const photo_states[] = {"queued", "processing", "done", "failed",
                                               "rejected", NULL};
    const char *const *st;
    const char *scope = ctx->who.branch_json;
    json_t *out = json_object();
    jr_rows_t *rows;
    int i;
    for (st = ai ? ai_states : photo_states; *st; ++st) {
        json_object_set_new(out, *st, json_integer(0));
    }
    if (jr_db_select(ctx->db, ctx->pool, ai ? "ai_status_counts" : "photo_status_counts", &rows,
                     JR_ARGS(scope, scope)) != APR_SUCCESS) {
        json_decref(out);
        return NULL;
    }
    for (i = 0; i < rows->nrows; ++i) {
        json_object_set_new(out, jr_rows_get(rows, i, "status"),
                            json_integer(jr_rows_int(rows, i, "n", 0)));
    }
    return out;
}

apr_status_t jr_op_ai_status(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    json_t *c = jr_queue_counts(ctx, 1);
    return c ? jr_reply(res, ctx->pool, 200, jr_ai_describe(ctx->cfg, c, 1))
             : jr_fail(res, ctx->pool, 503, "database unavailable");
}

apr_status_t jr_op_photo_status(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    json_t *c = jr_queue_counts(ctx, 0);
    return c ? jr_reply(res, ctx->pool, 200, jr_photo_describe(ctx, c))
             : jr_fail(res, ctx->pool, 503, "database unavailable");
}
