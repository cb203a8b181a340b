/* Statistics (/api/v1/stats) and the dashboard (/api/dashboard), both limited to the
 * caller's branches. */
#include <apr_strings.h>

#include "jr_json.h"
#include "jr_jw.h"
#include "jr_lessons.h"
#include "jr_queues.h"
#include "jr_stats.h"
#include "jr_settings.h"
#include "jr_stmts.h"
#include "jr_time.h"
#include "jr_util.h"

/* The counts of the caller's branches, with the dialect's branch scope. */

/* The counts object; NULL on a database error. */
static json_t *counts(jr_ctx_t *ctx)
{
    const char *sc = ctx->who.branch_json;
    jr_rows_t *r;
    if (jr_db_select(ctx->db, ctx->pool, JR_Q_STATS_COUNTS, &r,
                     JR_ARGS(sc, sc, sc, sc, sc, sc, sc, sc, sc, sc)) != APR_SUCCESS ||
        r->nrows != 1) {
        return NULL;
    }
    return json_pack("{s:I, s:I, s:I, s:I, s:I}", "branches",
                     (json_int_t)jr_rows_int(r, 0, "branches", 0), "groups",
                     (json_int_t)jr_rows_int(r, 0, "groups_n", 0), "students",
                     (json_int_t)jr_rows_int(r, 0, "students", 0), "entries",
                     (json_int_t)jr_rows_int(r, 0, "entries", 0), "lesson_reports",
                     (json_int_t)jr_rows_int(r, 0, "lesson_reports", 0));
}

int jr_op_stats(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    json_t *c = counts(ctx), *ai = jr_queue_counts(ctx, 1), *photo = jr_queue_counts(ctx, 0);
    if (!c || !ai || !photo) {
        json_decref(c);
        json_decref(ai);
        json_decref(photo);
        return jr_err_db(ctx, res);
    }
    json_object_set_new(c, "ai_jobs", ai);
    json_object_set_new(c, "photo_jobs", photo);
    return jr_reply(res, ctx->pool, 200, c);
}

/* A list of reports as a jansson array (the dashboard is small). */
static json_t *reports(jr_ctx_t *ctx, const jr_rows_t *rows)
{
    jr_jw_t w;
    size_t len;
    const char *text, *err = NULL;
    int i;
    jr_jw_init(&w, ctx->pool, 1024 * (size_t)(rows->nrows + 1));
    jr_jw_arr(&w);
    for (i = 0; i < rows->nrows; ++i) {
        jr_report_write(&w, rows, i);
    }
    jr_jw_arr_end(&w);
    text = jr_jw_done(&w, &len);
    return json_incref(jr_json_parse(ctx->pool, text, len, &err));
}

int jr_op_dashboard(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    const char *sc = ctx->who.branch_json, *tz = jr_setting_timezone(ctx);
    const char *today = jr_tz_date_of(ctx->pool, tz, apr_time_now());
    json_t *c = counts(ctx), *ai = jr_queue_counts(ctx, 1), *photo = jr_queue_counts(ctx, 0);
    jr_rows_t *recent, *todays;
    if (!c || !ai || !photo || !today ||
        jr_db_select(ctx->db, ctx->pool, JR_Q_REPORTS_RECENT, &recent, JR_ARGS(sc, sc)) !=
            APR_SUCCESS ||
        jr_db_select(ctx->db, ctx->pool, JR_Q_REPORTS_ON, &todays, JR_ARGS(today, sc, sc)) !=
            APR_SUCCESS) {
        json_decref(c);
        json_decref(ai);
        json_decref(photo);
        return jr_err_db(ctx, res);
    }
    return jr_reply(res, ctx->pool, 200,
                    json_pack("{s:o, s:{s:s, s:s, s:o}, s:o, s:{s:o, s:o}}", "recent_lessons",
                              reports(ctx, recent), "today", "date", today, "timezone", tz,
                              "lessons", reports(ctx, todays), "counts", c, "queues", "ai", ai,
                              "photo", photo));
}
