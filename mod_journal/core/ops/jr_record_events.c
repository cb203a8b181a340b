/* See jr_record_events.h. Payloads are written with the streaming writer from one read of the
 * row, so an event always carries the state the transaction is about to commit. */
#include <string.h>

#include <apr_strings.h>

#include "jr_events.h"
#include "jr_jw.h"
#include "jr_notif.h"
#include "jr_record_events.h"
#include "jr_stmts.h"
#include "jr_util.h"

/* The row an event describes; NULL (with APR_EGENERAL) when it cannot be read. */
static jr_rows_t *event_row(jr_ctx_t *ctx, jr_stmt_id_t stmt, long long id)
{
    jr_rows_t *rows;
    if (jr_db_select(ctx->db, ctx->pool, stmt, &rows, JR_ARGS(jr_i64(ctx->pool, id))) !=
            APR_SUCCESS ||
        rows->nrows != 1) {
        return NULL;
    }
    return rows;
}

/* The notification an event implies, if any ("entry.created", "lesson.report",
 * "lesson.ai.formatted", and "ai.failed" for a status event whose status is failed). */
static apr_status_t implied_notification(jr_ctx_t *ctx, const char *event_type,
                                         const jr_rows_t *r, const char *entity_type)
{
    apr_pool_t *p = ctx->pool;
    long long branch = jr_rows_int(r, 0, "branch_id", 0), id = jr_rows_int(r, 0, "id", 0);
    const char *status = jr_rows_get(r, 0, "ai_status");
    const char *what = !strcmp(entity_type, "entry") ? "journal entry" : "lesson report";

    if (!strcmp(event_type, "entry.created")) {
        return jr_notify(ctx, event_type, branch, entity_type, id, "New journal entry",
                         apr_psprintf(p, "%s (group %s)", jr_rows_get(r, 0, "student_name"),
                                      jr_rows_get(r, 0, "group_id")));
    }
    if (!strcmp(event_type, "lesson.report") || !strcmp(event_type, "lesson.ai.formatted")) {
        return jr_notify(ctx, event_type, branch, entity_type, id,
                         event_type[7] == 'r' ? "New lesson report"
                                              : "Lesson report rewritten by the AI check",
                         apr_psprintf(p, "Group %s, %s", jr_rows_get(r, 0, "group_id"),
                                      jr_rows_get(r, 0, "lesson_date")));
    }
    if ((!strcmp(event_type, "ai_status") || !strcmp(event_type, "lesson_report_status")) &&
        status && !strcmp(status, "failed")) {
        const char *err = jr_rows_get(r, 0, "ai_error");
        return jr_notify(ctx, "ai.failed", branch, entity_type, id, "AI text check failed",
                         jr_psprintf(p, "The check of %s %lld failed: %s", what, id,
                                      err ? err : "no answer"));
    }
    return APR_SUCCESS;
}

static apr_status_t emit(jr_ctx_t *ctx, const char *type, const jr_rows_t *r,
                         const char *entity_type, jr_jw_t *w)
{
    apr_status_t rv;
    jr_jw_obj_end(w);
    if ((rv = jr_event(ctx, type, jr_rows_int(r, 0, "branch_id", 0), entity_type,
                       jr_rows_int(r, 0, "id", 0), jr_jw_done(w, NULL))) != APR_SUCCESS) {
        return rv;
    }
    return implied_notification(ctx, type, r, entity_type);
}

#define KSTR(w, r, key, col) jr_jw_kstr((w), (key), jr_rows_get((r), 0, (col)))
#define KINT(w, r, key, col) jr_jw_kint_text((w), (key), jr_rows_get((r), 0, (col)))

apr_status_t jr_event_entry(jr_ctx_t *ctx, const char *type, long long entry_id)
{
    jr_rows_t *r = event_row(ctx, JR_Q_EVENT_ENTRY_ROW, entry_id);
    return r ? jr_event_entry_row(ctx, type, r) : APR_EGENERAL;
}

apr_status_t jr_event_entry_row(jr_ctx_t *ctx, const char *type, const jr_rows_t *r)
{
    jr_jw_t w;
    jr_jw_init(&w, ctx->pool, 512);
    jr_jw_obj(&w);
    KINT(&w, r, "entry_id", "id");
    if (!strcmp(type, "entry.created")) {
        KINT(&w, r, "group_id", "group_id");
        KSTR(&w, r, "student_name", "student_name");
    } else {
        KSTR(&w, r, "status", "ai_status");
        KSTR(&w, r, "description", "description");
        KSTR(&w, r, "description_original", "description_original");
        KSTR(&w, r, "ai_error", "ai_error");
        KSTR(&w, r, "ai_checked_at", "ai_checked_at");
    }
    return emit(ctx, type, r, "entry", &w);
}

apr_status_t jr_event_report(jr_ctx_t *ctx, const char *type, long long report_id)
{
    jr_rows_t *r = event_row(ctx, JR_Q_EVENT_REPORT_ROW, report_id);
    jr_jw_t w;
    if (!r) {
        return APR_EGENERAL;
    }
    jr_jw_init(&w, ctx->pool, 1024);
    jr_jw_obj(&w);
    KINT(&w, r, "report_id", "id");
    if (!strcmp(type, "lesson_report_status")) {
        KSTR(&w, r, "status", "ai_status");
        KSTR(&w, r, "text", "text");
        KSTR(&w, r, "text_original", "text_original");
        KSTR(&w, r, "text_ai", "text_ai");
        KSTR(&w, r, "ai_error", "ai_error");
        KSTR(&w, r, "ai_checked_at", "ai_checked_at");
    } else {
        KINT(&w, r, "group_id", "group_id");
        KSTR(&w, r, "lesson_date", "lesson_date");
        if (!strcmp(type, "lesson.report")) {
            KSTR(&w, r, "lesson_time", "lesson_time");
            KSTR(&w, r, "topic", "topic");
            KSTR(&w, r, "ai_status", "ai_status");
        } else {
            KSTR(&w, r, "text", "text");
            KSTR(&w, r, "text_original", "text_original");
        }
    }
    return emit(ctx, type, r, "lesson_report", &w);
}
