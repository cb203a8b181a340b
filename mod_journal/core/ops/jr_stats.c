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

/* The counts of the caller's branches and of both queues. */
typedef struct {
    jr_rows_t *records;
    jr_queue_counts_t ai, photo;
} counts_t;

static apr_status_t counts(jr_ctx_t *ctx, counts_t *c)
{
    const char *sc = ctx->who.branch_json;
    if (jr_db_select(ctx->db, ctx->pool, JR_Q_STATS_COUNTS, &c->records,
                     JR_ARGS(sc, sc, sc, sc, sc, sc, sc, sc, sc, sc)) != APR_SUCCESS ||
        c->records->nrows != 1 || jr_queue_counts(ctx, 1, &c->ai) != APR_SUCCESS ||
        jr_queue_counts(ctx, 0, &c->photo) != APR_SUCCESS) {
        return APR_EGENERAL;
    }
    return APR_SUCCESS;
}

/* One queue's counts as the member key. */
static void queue_write(jr_jw_t *w, const char *key, const jr_queue_counts_t *q)
{
    jr_jw_key(w, key);
    jr_jw_obj(w);
    jr_queue_counts_write(w, q);
    jr_jw_obj_end(w);
}

/* The counts object; with_queues: the queues' counts inside it (stats), else apart. */
static void counts_write(jr_jw_t *w, const counts_t *c, int with_queues)
{
    const jr_rows_t *r = c->records;
    jr_jw_obj(w);
    jr_jw_kint(w, "branches", jr_rows_int(r, 0, "branches", 0));
    jr_jw_kint(w, "groups", jr_rows_int(r, 0, "groups_n", 0));
    jr_jw_kint(w, "students", jr_rows_int(r, 0, "students", 0));
    jr_jw_kint(w, "entries", jr_rows_int(r, 0, "entries", 0));
    jr_jw_kint(w, "lesson_reports", jr_rows_int(r, 0, "lesson_reports", 0));
    if (with_queues) {
        queue_write(w, "ai_jobs", &c->ai);
        queue_write(w, "photo_jobs", &c->photo);
    }
    jr_jw_obj_end(w);
}

int jr_op_stats(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    counts_t c;
    jr_jw_t w;
    if (counts(ctx, &c) != APR_SUCCESS) {
        return jr_err_db(ctx, res);
    }
    jr_jw_init(&w, ctx->pool, 512);
    counts_write(&w, &c, 1);
    return jr_reply_jw(res, 200, &w);
}

/* A list of reports as the member key. */
static void reports(jr_jw_t *w, const char *key, const jr_rows_t *rows)
{
    int i;
    jr_jw_key(w, key);
    jr_jw_arr(w);
    for (i = 0; i < rows->nrows; ++i) {
        jr_report_write(w, rows, i);
    }
    jr_jw_arr_end(w);
}

int jr_op_dashboard(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    const char *sc = ctx->who.branch_json, *tz = jr_setting_timezone(ctx);
    const char *today = jr_tz_date_of(ctx->pool, tz, apr_time_now());
    counts_t c;
    jr_rows_t *recent, *todays;
    jr_jw_t w;
    if (counts(ctx, &c) != APR_SUCCESS || !today ||
        jr_db_select(ctx->db, ctx->pool, JR_Q_REPORTS_RECENT, &recent, JR_ARGS(sc, sc)) !=
            APR_SUCCESS ||
        jr_db_select(ctx->db, ctx->pool, JR_Q_REPORTS_ON, &todays, JR_ARGS(today, sc, sc)) !=
            APR_SUCCESS) {
        return jr_err_db(ctx, res);
    }
    jr_jw_init(&w, ctx->pool, 1024 * (size_t)(recent->nrows + todays->nrows + 1));
    jr_jw_obj(&w);
    reports(&w, "recent_lessons", recent);
    jr_jw_key(&w, "today");
    jr_jw_obj(&w);
    jr_jw_kstr(&w, "date", today);
    jr_jw_kstr(&w, "timezone", tz);
    reports(&w, "lessons", todays);
    jr_jw_obj_end(&w);
    jr_jw_key(&w, "counts");
    counts_write(&w, &c, 0);
    jr_jw_key(&w, "queues");
    jr_jw_obj(&w);
    queue_write(&w, "ai", &c.ai);
    queue_write(&w, "photo", &c.photo);
    jr_jw_obj_end(&w);
    jr_jw_obj_end(&w);
    return jr_reply_jw(res, 200, &w);
}
