/* See jr_events.h. Payloads are written with the streaming writer from one read of the row,
 * so an event always carries the state the transaction is about to commit. */
#include <string.h>

#include <apr_strings.h>

#include "jr_events.h"
#include "jr_jw.h"
#include "jr_log.h"
#include "jr_notif.h"
#include "jr_settings.h"
#include "jr_stmts.h"
#include "jr_util.h"

int jr_redis_address(apr_pool_t *p, const char *text, const char **host, int *port,
                     const char **sock)
{
    const char *colon = strrchr(text, ':');
    long long n;
    *host = *sock = NULL;
    *port = 0;
    if (text[0] == '/') {
        if (strpbrk(text, "\r\n")) {
            return -1;
        }
        *sock = apr_pstrdup(p, text);
        return 0;
    }
    if (!colon || colon == text || strpbrk(text, "/ \r\n") ||
        jr_parse_int64(colon + 1, 1, 65535, &n) != 0) {
        return -1;
    }
    *host = apr_pstrmemdup(p, text, (apr_size_t)(colon - text));
    *port = (int)n;
    return 0;
}

apr_status_t jr_event(jr_ctx_t *ctx, const char *type, long long branch_id,
                      const char *entity_type, long long entity_id, const char *payload)
{
    apr_pool_t *p = ctx->pool;
    ++ctx->events_written;
    return jr_db_exec(ctx->db, p, JR_Q_EVENT_INSERT, NULL,
                      JR_ARGS(type, jr_opt_i64(p, branch_id), entity_type,
                              jr_opt_i64(p, entity_id), payload, jr_now_iso(p)));
}

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

static apr_status_t emit(jr_ctx_t *ctx, const char *type, const jr_rows_t *r,
                         const char *entity_type, jr_jw_t *w)
{
    apr_status_t rv;
    jr_jw_obj_end(w);
    if ((rv = jr_event(ctx, type, jr_rows_int(r, 0, "branch_id", 0), entity_type,
                       jr_rows_int(r, 0, "id", 0), jr_jw_done(w, NULL))) != APR_SUCCESS) {
        return rv;
    }
    return jr_notify_event(ctx, type, r, entity_type);
}

#define KSTR(w, r, key, col) jr_jw_kstr((w), (key), jr_rows_get((r), 0, (col)))
#define KINT(w, r, key, col) jr_jw_kint_text((w), (key), jr_rows_get((r), 0, (col)))

apr_status_t jr_event_entry(jr_ctx_t *ctx, const char *type, long long entry_id)
{
    jr_rows_t *r = event_row(ctx, JR_Q_EVENT_ENTRY_ROW, entry_id);
    jr_jw_t w;
    if (!r) {
        return APR_EGENERAL;
    }
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

int jr_purge_batched(jr_ctx_t *ctx, jr_stmt_id_t id, const char *cutoff)
{
    int n = 0, batch;
    do {
        batch = 0;
        if (jr_db_begin(ctx->db) != APR_SUCCESS) {
            return -1;
        }
        if (jr_db_exec(ctx->db, ctx->pool, id, &batch, JR_ARGS(cutoff)) != APR_SUCCESS) {
            jr_db_rollback(ctx->db);
            return -1;
        }
        if (jr_db_commit(ctx->db) != APR_SUCCESS) {
            return -1;
        }
        n += batch;
    } while (batch == JR_PURGE_BATCH);
    return n;
}

int jr_purge_days(jr_ctx_t *ctx, jr_stmt_id_t id, jr_setting_id_t setting, long long *days)
{
    *days = 30;
    jr_parse_int64(jr_setting(ctx, setting), 1, 3650, days);
    return jr_purge_batched(
        ctx, id, jr_iso_time(ctx->pool, apr_time_now() - apr_time_from_sec(*days * 86400)));
}

int jr_events_trim(jr_ctx_t *ctx, long long max_age)
{
    apr_pool_t *p = ctx->pool;
    const char *cutoff = jr_iso_time(p, apr_time_now() - apr_time_from_sec(max_age));
    int n = jr_purge_batched(ctx, JR_Q_EVENTS_TRIM, cutoff);
    if (n > 0) {
        JR_LOG(JR07001, 0, "housekeeping removed %d events older than %lld s", n,
               max_age);
    }
    return n;
}
