/* See jr_ai.h. Entries and lesson reports differ only in columns, prompt setting and event
 * type (the kinds table); a report's rewrite also records a version and a
 * lesson.ai.formatted event. */
#include <string.h>

#include <apr_strings.h>

#include "jr_ai.h"
#include "jr_crypt.h"
#include "jr_json.h"
#include "jr_log.h"
#include "jr_record_events.h"
#include "jr_settings.h"
#include "jr_stmts.h"
#include "jr_topic.h"
#include "jr_util.h"

typedef struct {
    const char *entity_type; /* ai_jobs.entity_type */
    jr_setting_id_t prompt;  /* the setting holding the system message */
    jr_stmt_id_t st_text, st_state, st_skipped, st_done;
    const char *status_event;
    apr_status_t (*emit)(jr_ctx_t *ctx, const char *type, long long id);
    const char *changes; /* fields a rewrite changes, for the audit row */
} kind_t;

static const kind_t kinds[] = {
    [JR_AI_ENTRY] = {"entry", JR_SETTING_ENTRY_AI_PROMPT, JR_Q_AI_ENTRY_TEXT, JR_Q_AI_ENTRY_STATE,
                     JR_Q_AI_ENTRY_SKIPPED, JR_Q_AI_ENTRY_DONE, "ai_status", jr_event_entry,
                     "[\"description\",\"description_original\"]"},
    [JR_AI_REPORT] = {"lesson_report", JR_SETTING_LESSON_AI_PROMPT, JR_Q_AI_REPORT_TEXT,
                      JR_Q_AI_REPORT_STATE, JR_Q_AI_REPORT_SKIPPED, JR_Q_AI_REPORT_DONE,
                      "lesson_report_status",
                      jr_event_report, "[\"text\",\"text_ai\",\"text_original\"]"},
};

#define GONE "the record no longer exists"
#define INTERRUPTED "the check was interrupted too often (its worker stopped while running it)"

const char *jr_ai_context_line(apr_pool_t *p, const char *topic)
{
    const char *pos;
    topic = topic ? jr_trim(p, topic) : NULL;
    if (!topic || !*topic) {
        return NULL;
    }
    pos = jr_topic_position(topic);
    return pos ? apr_pstrcat(p, "Context: lesson position: ", pos, "; topic: ", topic, NULL)
               : apr_pstrcat(p, "Context: topic: ", topic, NULL);
}

/* The record's text and topic; 0 when the record is gone, -1 on error. */
static int load_text(jr_ctx_t *ctx, const kind_t *k, long long id, const char **text,
                     const char **topic)
{
    jr_rows_t *rows;
    if (jr_db_select(ctx->db, ctx->pool, k->st_text, &rows, JR_ARGS(jr_i64(ctx->pool, id))) !=
        APR_SUCCESS) {
        return -1;
    }
    if (rows->nrows != 1) {
        return 0;
    }
    *text = jr_rows_get(rows, 0, "text");
    *text = *text ? *text : "";
    *topic = jr_rows_get(rows, 0, "topic");
    return 1;
}

/* The record's ai_status (and ai_error, NULL clears it), with its status event. */
static apr_status_t set_state(jr_ctx_t *ctx, const kind_t *k, long long id, const char *status,
                              const char *error)
{
    if (jr_db_exec(ctx->db, ctx->pool, k->st_state, NULL,
                   JR_ARGS(status, error, jr_i64(ctx->pool, id))) != APR_SUCCESS) {
        return APR_EGENERAL;
    }
    return k->emit(ctx, k->status_event, id);
}

static apr_status_t set_skipped(jr_ctx_t *ctx, const kind_t *k, long long id)
{
    apr_pool_t *p = ctx->pool;
    if (jr_db_exec(ctx->db, p, k->st_skipped, NULL, JR_ARGS(jr_now_iso(p), jr_i64(p, id))) !=
        APR_SUCCESS) {
        return APR_EGENERAL;
    }
    return k->emit(ctx, k->status_event, id);
}

static const kind_t *kind_of(const char *entity_type, jr_ai_kind_e *kind)
{
    *kind = strcmp(entity_type, "entry") ? JR_AI_REPORT : JR_AI_ENTRY;
    return &kinds[*kind];
}

/* A job that needs no request: settled in the claim transaction. */
static apr_status_t settle_now(jr_ctx_t *ctx, const kind_t *k, const jr_job_t *j, int found,
                               const char *text)
{
    if (!found) {
        return jr_job_settle(ctx, &jr_queue_ai, j, "failed", 0, GONE, 0) < 0 ? APR_EGENERAL
                                                                           : APR_SUCCESS;
    }
    if (j->attempts > jr_queue_ai.max_attempts) {
        JR_LOG(JR07003, 0, "AI check %lld of %s %lld failed: %s", j->id,
               k->entity_type, j->entity_id, INTERRUPTED);
        return jr_job_settle(ctx, &jr_queue_ai, j, "failed", 0, INTERRUPTED, 0) < 0 ||
                       set_state(ctx, k, j->entity_id, "failed", INTERRUPTED) != APR_SUCCESS
                   ? APR_EGENERAL
                   : APR_SUCCESS;
    }
    /* Nothing to check in an empty text. */
    return jr_job_settle(ctx, &jr_queue_ai, j, "done", 0, NULL, 0) < 0 ||
                   set_skipped(ctx, k, j->entity_id) != APR_SUCCESS
               ? APR_EGENERAL
               : APR_SUCCESS;
}

/* Marks a claimed job's record processing and builds its messages; NULL when the job was
 * settled instead (or on error: *rv). */
static jr_ai_task_t *prepare(jr_ctx_t *ctx, const jr_job_t *j, apr_status_t *rv)
{
    apr_pool_t *p = ctx->pool;
    jr_ai_kind_e kind;
    const kind_t *k = kind_of(j->entity_type, &kind);
    const char *text = NULL, *topic = NULL, *context;
    jr_ai_task_t *t;
    int found = load_text(ctx, k, j->entity_id, &text, &topic);

    *rv = APR_SUCCESS;
    if (found < 0) {
        *rv = APR_EGENERAL;
        return NULL;
    }
    if (!found || j->attempts > jr_queue_ai.max_attempts || !*jr_trim(p, text)) {
        *rv = settle_now(ctx, k, j, found, text);
        return NULL;
    }
    t = apr_pcalloc(p, sizeof(*t));
    t->job = *j;
    t->kind = kind;
    t->user = text;
    t->text_hash = jr_sha256_hex(p, text, strlen(text));
    t->system = jr_setting(ctx, k->prompt);
    if (kind == JR_AI_REPORT && (context = jr_ai_context_line(p, topic)) != NULL) {
        t->system = apr_pstrcat(p, t->system, "\n\n", context, NULL);
    }
    if (jr_db_exec(ctx->db, p, JR_Q_AI_JOB_HASH, NULL, JR_ARGS(t->text_hash, jr_i64(p, j->id))) !=
            APR_SUCCESS ||
        jr_db_exec(ctx->db, p, kind == JR_AI_ENTRY ? JR_Q_ENTRY_SET_AI_STATUS : JR_Q_AI_REPORT_STATUS,
                   NULL, JR_ARGS("processing", jr_i64(p, j->entity_id))) != APR_SUCCESS ||
        k->emit(ctx, k->status_event, j->entity_id) != APR_SUCCESS) {
        *rv = APR_EGENERAL;
        return NULL;
    }
    return t;
}

apr_status_t jr_ai_claim(jr_ctx_t *ctx, const char *owner, int max, long long lease,
                         apr_array_header_t **tasks)
{
    apr_array_header_t *jobs, *out = apr_array_make(ctx->pool, max > 0 ? max : 1,
                                                    sizeof(jr_ai_task_t));
    apr_status_t rv = APR_SUCCESS;
    int i;
    *tasks = out;
    if (jr_db_begin(ctx->db) != APR_SUCCESS) {
        return APR_EGENERAL;
    }
    if (jr_jobs_claim(ctx, &jr_queue_ai, owner, max, lease, &jobs) != APR_SUCCESS) {
        jr_db_rollback(ctx->db);
        return APR_EGENERAL;
    }
    for (i = 0; i < jobs->nelts && rv == APR_SUCCESS; ++i) {
        jr_ai_task_t *t = prepare(ctx, &APR_ARRAY_IDX(jobs, i, jr_job_t), &rv);
        if (t) {
            APR_ARRAY_PUSH(out, jr_ai_task_t) = *t;
        }
    }
    if (rv != APR_SUCCESS) {
        jr_db_rollback(ctx->db);
        out->nelts = 0;
        return rv;
    }
    if ((rv = jr_db_commit(ctx->db)) != APR_SUCCESS) {
        out->nelts = 0;
    }
    return rv;
}

/* The record's rewrite: new text, the original kept, an audit row (the worker is the actor),
 * and for a report a version of kind ai and a lesson.ai.formatted event. */
static apr_status_t rewrite(jr_ctx_t *ctx, const kind_t *k, const jr_ai_task_t *t,
                            const char *text)
{
    apr_pool_t *p = ctx->pool;
    const char *now = jr_now_iso(p), *id = jr_i64(p, t->job.entity_id);
    const char *none = NULL; /* a version by the worker: no user, no key */
    apr_status_t rv;
    json_t *changes = jr_json_own(p, json_loads(k->changes, 0, NULL));
    rv = t->kind == JR_AI_ENTRY
             ? jr_db_exec(ctx->db, p, k->st_done, NULL, JR_ARGS(text, t->user, now, now, id))
             : jr_db_exec(ctx->db, p, k->st_done, NULL,
                          JR_ARGS(text, text, t->user, now, now, id));
    if (rv != APR_SUCCESS || jr_audit(ctx, "ai_rewrite", k->entity_type, t->job.entity_id,
                                      changes) != APR_SUCCESS ||
        k->emit(ctx, k->status_event, t->job.entity_id) != APR_SUCCESS) {
        return APR_EGENERAL;
    }
    if (t->kind == JR_AI_REPORT &&
        (jr_db_exec(ctx->db, p, JR_Q_VERSION_INSERT, NULL, JR_ARGS(id, text, "ai", now, none, none)) !=
             APR_SUCCESS ||
         jr_event_report(ctx, "lesson.ai.formatted", t->job.entity_id) != APR_SUCCESS)) {
        return APR_EGENERAL;
    }
    return APR_SUCCESS;
}

/* The outcome of a current (not stale) check; *what as in jr_ai_finish. -1 lost. */
static int settle_result(jr_ctx_t *ctx, const kind_t *k, const jr_ai_task_t *t,
                         const jr_ai_result_t *r, const char **what)
{
    const jr_job_t *j = &t->job;
    long long id = j->entity_id;
    int held;
    if (r->verdict == JR_AI_APPLY) {
        *what = r->rewrite ? "done" : "skipped";
        if ((held = jr_job_settle(ctx, &jr_queue_ai, j, "done", 0, NULL, 0)) != 1) {
            return held;
        }
        return (r->rewrite ? rewrite(ctx, k, t, r->text) : set_skipped(ctx, k, id)) ==
                       APR_SUCCESS
                   ? 1
                   : -1;
    }
    if (r->verdict == JR_AI_RETRY && j->attempts < jr_queue_ai.max_attempts) {
        apr_time_t at = apr_time_now() +
                        apr_time_from_sec(jr_job_backoff(j->attempts, r->retry_after));
        *what = "retry";
        if ((held = jr_job_settle(ctx, &jr_queue_ai, j, "pending", at, r->error, 0)) != 1) {
            return held;
        }
        return set_state(ctx, k, id, "pending", r->error) == APR_SUCCESS ? 1 : -1;
    }
    *what = "failed";
    if ((held = jr_job_settle(ctx, &jr_queue_ai, j, "failed", 0, r->error, 0)) != 1) {
        return held;
    }
    return set_state(ctx, k, id, "failed", r->error) == APR_SUCCESS ? 1 : -1;
}

apr_status_t jr_ai_finish(jr_ctx_t *ctx, const jr_ai_task_t *t, const jr_ai_result_t *r,
                          const char **what)
{
    apr_pool_t *p = ctx->pool;
    const kind_t *k = &kinds[t->kind];
    const char *text = NULL, *topic = NULL;
    int found, held;

    *what = "lost";
    if (jr_db_begin(ctx->db) != APR_SUCCESS) {
        return APR_EGENERAL;
    }
    found = load_text(ctx, k, t->job.entity_id, &text, &topic);
    if (found == 0) {
        *what = "failed";
        held = jr_job_settle(ctx, &jr_queue_ai, &t->job, "failed", 0, GONE, 0);
    } else if (found > 0 && strcmp(jr_sha256_hex(p, text, strlen(text)), t->text_hash) != 0) {
        /* Edited while the check ran: the answer is about an old text. Check the new one. */
        *what = "stale";
        held = jr_job_settle(ctx, &jr_queue_ai, &t->job, "pending", 0, NULL, 1);
        if (held == 1 && set_state(ctx, k, t->job.entity_id, "pending", NULL) != APR_SUCCESS) {
            held = -1;
        }
    } else {
        held = found < 0 ? -1 : settle_result(ctx, k, t, r, what);
    }
    if (held != 1) {
        jr_db_rollback(ctx->db);
        if (held == 0) {
            *what = "lost";
            return APR_SUCCESS;
        }
        return APR_EGENERAL;
    }
    return jr_db_commit(ctx->db);
}

apr_status_t jr_ai_release(jr_ctx_t *ctx, const jr_ai_task_t *t)
{
    const kind_t *k = &kinds[t->kind];
    int held;
    if (jr_db_begin(ctx->db) != APR_SUCCESS) {
        return APR_EGENERAL;
    }
    held = jr_job_settle(ctx, &jr_queue_ai, &t->job, "pending", 0, NULL, 1);
    if (held < 0 || (held == 1 && set_state(ctx, k, t->job.entity_id, "pending", NULL) !=
                                      APR_SUCCESS)) {
        jr_db_rollback(ctx->db);
        return APR_EGENERAL;
    }
    return jr_db_commit(ctx->db);
}
