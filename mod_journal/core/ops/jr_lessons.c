/* Lesson reports (spec 2.4): one per group and date, with a history of every change of the
 * text (the topic is not versioned) and the AI check's fields. */
#include <string.h>

#include <apr_strings.h>

#include "jr_cursor.h"
#include "jr_error_codes.h"
#include "jr_groups.h"
#include "jr_json.h"
#include "jr_jw.h"
#include "jr_lessons.h"
#include "jr_queues.h"
#include "jr_record_events.h"
#include "jr_settings.h"
#include "jr_stmts.h"
#include "jr_time.h"
#include "jr_topic.h"
#include "jr_util.h"

#define ID_MAX 9007199254740991LL
#define TEXT_MAX 20000 /* characters: documented in docs/admin-api.md */
#define TOPIC_MAX 300

const jr_field_t jr_fields_report_create[] = {
    {.name = "group_id", .type = JR_F_INT, .required = 1, .min = 1, .max = ID_MAX},
    {.name = "lesson_date", .type = JR_F_STRING, .required = 1},
    {.name = "lesson_time", .type = JR_F_STRING, .nullable = 1},
    {.name = "text", .type = JR_F_STRING, .required = 1, .max = TEXT_MAX},
    {.name = "topic", .type = JR_F_STRING, .nullable = 1, .max = TOPIC_MAX},
    {NULL},
};

const jr_field_t jr_fields_report_update[] = {
    {.name = "group_id", .type = JR_F_INT, .min = 1, .max = ID_MAX},
    {.name = "lesson_date", .type = JR_F_STRING},
    {.name = "lesson_time", .type = JR_F_STRING, .nullable = 1},
    {.name = "text", .type = JR_F_STRING, .max = TEXT_MAX},
    {.name = "topic", .type = JR_F_STRING, .nullable = 1, .max = TOPIC_MAX},
    {NULL},
};

const jr_field_spec_t jr_fields_lessons[] = {
    {"POST /api/lesson-reports", jr_fields_report_create},
    {"PUT /api/lesson-reports/:id", jr_fields_report_update},
    {NULL, NULL},
};

void jr_report_write(jr_jw_t *w, const jr_rows_t *r, int i)
{
    const char *topic = jr_rows_get(r, i, "topic");
    jr_jw_obj(w);
    jr_jw_kint_text(w, "id", jr_rows_get(r, i, "id"));
    jr_jw_kint_text(w, "group_id", jr_rows_get(r, i, "group_id"));
    jr_jw_kint_text(w, "branch_id", jr_rows_get(r, i, "branch_id"));
    jr_jw_kstr(w, "lesson_date", jr_rows_get(r, i, "lesson_date"));
    jr_jw_kstr(w, "lesson_time", jr_rows_get(r, i, "lesson_time"));
    jr_jw_kstr(w, "text", jr_rows_get(r, i, "text"));
    jr_jw_kstr(w, "topic", topic);
    jr_jw_kstr(w, "topic_position", jr_topic_position(topic));
    jr_jw_kstr(w, "text_original", jr_rows_get(r, i, "text_original"));
    jr_jw_kstr(w, "text_ai", jr_rows_get(r, i, "text_ai"));
    jr_jw_kstr(w, "ai_status", jr_rows_get(r, i, "ai_status"));
    jr_jw_kstr(w, "ai_checked_at", jr_rows_get(r, i, "ai_checked_at"));
    jr_jw_kstr(w, "ai_error", jr_rows_get(r, i, "ai_error"));
    jr_jw_kstr(w, "created_at", jr_rows_get(r, i, "created_at"));
    jr_jw_kstr(w, "updated_at", jr_rows_get(r, i, "updated_at"));
    jr_jw_kint_text(w, "created_by", jr_rows_get(r, i, "created_by"));
    jr_jw_kint_text(w, "created_by_key", jr_rows_get(r, i, "created_by_key"));
    jr_jw_obj_end(w);
}

/* Lesson reports are deleted for good: no trash. */
static const jr_kind_t report_kind = {"lesson report", NULL, JR_Q_REPORT_GET, JR_Q_REPORT_GET,
                                      "branch_id", 0};

int jr_report_load(jr_ctx_t *ctx, jr_result_t *res, long long id, unsigned flags, jr_rows_t **row)
{
    return jr_load(ctx, res, &report_kind, id, flags, row);
}

static int reply_report(jr_ctx_t *ctx, jr_result_t *res, int status, long long id)
{
    jr_rows_t *rows;
    jr_jw_t w;
    int st;
    if ((st = jr_report_load(ctx, res, id, JR_LOAD_ROW, &rows)) != 0) {
        return st;
    }
    jr_jw_init(&w, ctx->pool, 2048);
    jr_report_write(&w, rows, 0);
    return jr_reply_jw(res, status, &w);
}

/* A date query parameter: NULL when absent, -1 with a 400 when not a real date. */
static int query_date(jr_ctx_t *ctx, jr_result_t *res, const char *name, const char **out)
{
    const char *v = apr_table_get(ctx->query, name);
    int y, m, d;
    *out = NULL;
    if (!v || !*v) {
        return 0;
    }
    if (jr_parse_date(v, &y, &m, &d) != 0) {
        jr_err_invalid(ctx, res, name, "%s must be a date YYYY-MM-DD", name);
        return -1;
    }
    *out = v;
    return 0;
}

static void sync_write(apr_pool_t *p, jr_jw_t *w, const jr_rows_t *r, int i)
{
    jr_report_write(w, r, i);
}

static const jr_sync_def_t reports_sync = {"lesson-reports", "lesson_report", JR_Q_REPORTS_SYNC,
                                           sync_write};

int jr_op_reports_list(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    long long group, branch;
    const char *g, *b, *from, *to, *scope = ctx->who.branch_json, *d, *t, *id;
    static const char *const keys[] = {"lesson_date", "sort_time", "id"};
    jr_rows_t *rows, *count;
    jr_page_t pg;
    jr_jw_t w;
    int i;

    if (jr_sync_wanted(ctx)) {
        return jr_sync_list(ctx, res, &reports_sync);
    }
    if ((group = jr_query_id(ctx, res, "group_id")) < 0 ||
        (branch = jr_query_id(ctx, res, "branch_id")) < 0 ||
        query_date(ctx, res, "date_from", &from) != 0 ||
        query_date(ctx, res, "date_to", &to) != 0 ||
        jr_page_begin(ctx, res, "lesson-reports", 3, JR_LIMIT_DEFAULT, &pg) != 0) {
        return res->status;
    }
    d = jr_page_key(&pg, 0);
    t = jr_page_key(&pg, 1);
    id = jr_page_key(&pg, 2);
    g = group ? jr_i64(p, group) : NULL;
    b = branch ? jr_i64(p, branch) : NULL;
    /* lesson_date is a calendar date of the configured zone already: compared as text. */
    if (jr_db_select(ctx->db, p, JR_Q_REPORTS_LIST, &rows,
                     JR_ARGS(g, g, b, b, from, from, to, to, scope, scope, d, d, d, t, t, id,
                             jr_page_fetch(p, &pg), jr_i64(p, pg.offset))) != APR_SUCCESS ||
        jr_db_select(ctx->db, p, JR_Q_REPORTS_COUNT, &count,
                     JR_ARGS(g, g, b, b, from, from, to, to, scope, scope)) != APR_SUCCESS) {
        return jr_err_db(ctx, res);
    }
    jr_jw_init(&w, p, 1024 * (size_t)(rows->nrows + 1));
    jr_jw_list_begin(ctx, &w, res, jr_rows_int(count, 0, "n", 0));
    for (i = 0; i < rows->nrows && jr_page_take_row(p, &pg, rows, i, keys); ++i) {
        jr_report_write(&w, rows, i);
    }
    return jr_jw_list_end(ctx, &w, res, jr_rows_int(count, 0, "n", 0), pg.limit, pg.offset);
}

int jr_op_reports_get(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    return reply_report(ctx, res, 200, jr_param_id(ctx, "id"));
}

/* Adds a version and keeps the history bounded in the same transaction: the original (the
 * create version) and the newest report_versions_max - 1 others. */
static apr_status_t add_version(jr_ctx_t *ctx, long long id, const char *text,
                                const char *source)
{
    apr_pool_t *p = ctx->pool;
    const char *rid = jr_i64(p, id);
    int max = ctx->cfg && ctx->cfg->report_versions_max > 0
                  ? ctx->cfg->report_versions_max
                  : jr_config_defaults.report_versions_max;
    if (jr_db_exec(ctx->db, p, JR_Q_VERSION_INSERT, NULL,
                   JR_ARGS(rid, text, source, jr_now_iso(p), jr_opt_i64(p, ctx->who.user_id),
                           jr_opt_i64(p, ctx->who.key_id))) != APR_SUCCESS) {
        return APR_EGENERAL;
    }
    if (!strcmp(source, "create")) {
        return APR_SUCCESS;
    }
    return jr_db_exec(ctx->db, p, JR_Q_VERSIONS_TRIM, NULL, JR_ARGS(rid, rid, jr_i64(p, max - 2)));
}

/* Validated values of a create or update. */
typedef struct {
    long long group_id, branch_id;
    const char *lesson_date, *lesson_time, *text, *topic;
} report_input_t;

static int check_report(jr_ctx_t *ctx, jr_result_t *res, report_input_t *in, long long self,
                        long long old_group)
{
    apr_pool_t *p = ctx->pool;
    jr_rows_t *rows;
    int y, m, d, h, mi;
    if (jr_parse_date(in->lesson_date, &y, &m, &d) != 0) {
        jr_err_invalid(ctx, res, "lesson_date", "lesson_date must be a real date YYYY-MM-DD");
        return -1;
    }
    if (in->lesson_time && jr_parse_hhmm(in->lesson_time, &h, &mi) != 0) {
        jr_err_invalid(ctx, res, "lesson_time", "lesson_time must be HH:MM from 00:00 to 23:59");
        return -1;
    }
    /* A report keeps its group while that group is in the trash; a new one must be live. */
    if (in->group_id != old_group) {
        if (jr_group_load(ctx, res, in->group_id, JR_LOAD_REF, &rows) != 0) {
            return -1;
        }
        in->branch_id = jr_rows_int(rows, 0, "branch_id", 0);
    }
    if (jr_db_select(ctx->db, p, JR_Q_REPORT_TAKEN, &rows,
                     JR_ARGS(jr_i64(p, in->group_id), in->lesson_date, jr_i64(p, self))) !=
        APR_SUCCESS) {
        jr_err_db(ctx, res);
        return -1;
    }
    if (rows->nrows > 0) {
        jr_err_conflict(ctx, res, "group %lld already has a lesson report on %s", in->group_id,
                        in->lesson_date);
        jr_error_code(res, "duplicate");
        jr_error_id(res, jr_rows_int(rows, 0, "id", 0));
        return -1;
    }
    return 0;
}

static const char *const conflict = "the group already has a lesson report on that date";

int jr_op_reports_create(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    const char *now = jr_now_iso(p), *status;
    report_input_t r;
    jr_rows_t *rows;
    long long id;
    int ai;

    memset(&r, 0, sizeof(r));
    r.group_id = jr_json_int(in, "group_id", 0);
    r.lesson_date = jr_json_str(in, "lesson_date", "");
    r.lesson_time = jr_json_str(in, "lesson_time", NULL);
    r.text = jr_json_str(in, "text", "");
    r.topic = jr_json_str(in, "topic", NULL);
    r.topic = r.topic && *jr_trim(p, r.topic) ? r.topic : NULL;
    if (check_report(ctx, res, &r, 0, 0) != 0) {
        return res->status;
    }
    ai = jr_setting_on(ctx, JR_SETTING_LESSON_AI_ENABLED);
    status = ai ? "pending" : NULL;
    if (jr_db_select(ctx->db, p, JR_Q_REPORT_INSERT, &rows,
                     JR_ARGS(jr_i64(p, r.group_id), jr_i64(p, r.branch_id), r.lesson_date,
                             r.lesson_time, r.text, r.topic, status, now, now,
                             jr_opt_i64(p, ctx->who.user_id), jr_opt_i64(p, ctx->who.key_id))) !=
            APR_SUCCESS ||
        rows->nrows != 1 ||
        add_version(ctx, (id = jr_rows_int(rows, 0, "id", 0)), r.text, "create") != APR_SUCCESS ||
        jr_event_report(ctx, "lesson.report", id) != APR_SUCCESS ||
        (ai && (jr_ai_queue(ctx, "lesson_report", id, r.branch_id) != APR_SUCCESS ||
                jr_event_report(ctx, "lesson_report_status", id) != APR_SUCCESS)) ||
        jr_audit(ctx, "create", "lesson_report", id, jr_json_own(p, jr_json_keys(in))) !=
            APR_SUCCESS) {
        return jr_err_write(ctx, res, conflict);
    }
    return reply_report(ctx, res, 201, id);
}

/* Writes a report's new state, a version when the text changed, and the audit row. */
static int save_report(jr_ctx_t *ctx, jr_result_t *res, long long id, const report_input_t *r,
                       const char *old_text, const char *status, const char *source,
                       const char *action, json_t *changes)
{
    apr_pool_t *p = ctx->pool;
    int text_changed = strcmp(r->text, old_text) != 0;
    if (jr_db_exec(ctx->db, p, JR_Q_REPORT_UPDATE, NULL,
                   JR_ARGS(jr_i64(p, r->group_id), jr_i64(p, r->branch_id), r->lesson_date,
                           r->lesson_time, r->text, r->topic, status, jr_now_iso(p),
                           jr_i64(p, id))) != APR_SUCCESS ||
        jr_jobs_follow(ctx, "lesson_report", id, r->branch_id) != APR_SUCCESS ||
        ((text_changed || strcmp(source, "edit")) &&
         add_version(ctx, id, r->text, source) != APR_SUCCESS) ||
        (text_changed && !strcmp(source, "edit") &&
         jr_setting_on(ctx, JR_SETTING_LESSON_AI_ENABLED) &&
         (jr_ai_queue(ctx, "lesson_report", id, r->branch_id) != APR_SUCCESS ||
          jr_event_report(ctx, "lesson_report_status", id) != APR_SUCCESS)) ||
        (!strcmp(source, "revert") &&
         jr_event_report(ctx, "lesson_report_status", id) != APR_SUCCESS) ||
        jr_audit(ctx, action, "lesson_report", id, changes) != APR_SUCCESS) {
        return jr_err_write(ctx, res, conflict);
    }
    return reply_report(ctx, res, 200, id);
}

static void current_values(const jr_rows_t *rows, report_input_t *r)
{
    r->group_id = jr_rows_int(rows, 0, "group_id", 0);
    r->lesson_date = jr_rows_get(rows, 0, "lesson_date");
    r->lesson_time = jr_rows_get(rows, 0, "lesson_time");
    r->text = jr_rows_get(rows, 0, "text");
    r->topic = jr_rows_get(rows, 0, "topic");
}

int jr_op_reports_update(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    long long id = jr_param_id(ctx, "id");
    const char *status;
    jr_rows_t *rows;
    report_input_t r;
    json_t *v;
    int st;

    if ((st = jr_report_load(ctx, res, id, JR_LOAD_ROW, &rows)) != 0) {
        return st;
    }
    current_values(rows, &r);
    r.group_id = jr_json_int(in, "group_id", r.group_id);
    r.lesson_date = jr_json_str(in, "lesson_date", r.lesson_date);
    if ((v = json_object_get(in, "lesson_time")) != NULL) {
        r.lesson_time = json_is_null(v) ? NULL : json_string_value(v);
    }
    r.text = jr_json_str(in, "text", r.text);
    /* Spec 2.4: an empty topic clears it, an absent one leaves it. */
    if ((v = json_object_get(in, "topic")) != NULL) {
        r.topic = json_is_null(v) || !*jr_trim(p, json_string_value(v)) ? NULL
                                                                        : json_string_value(v);
    }
    r.branch_id = jr_rows_int(rows, 0, "branch_id", 0);
    if (check_report(ctx, res, &r, id, jr_rows_int(rows, 0, "group_id", 0)) != 0) {
        return res->status;
    }
    status = jr_rows_get(rows, 0, "ai_status");
    if (strcmp(r.text, jr_rows_get(rows, 0, "text")) &&
        jr_setting_on(ctx, JR_SETTING_LESSON_AI_ENABLED)) {
        status = "pending";
    }
    return save_report(ctx, res, id, &r, jr_rows_get(rows, 0, "text"), status, "edit", "update",
                       jr_json_own(p, jr_json_keys(in)));
}

int jr_op_reports_delete(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    long long id = jr_param_id(ctx, "id");
    int st;
    if ((st = jr_report_load(ctx, res, id, 0, NULL)) != 0) {
        return st;
    }
    if (jr_db_exec(ctx->db, p, JR_Q_REPORT_JOBS_DELETE, NULL, JR_ARGS(jr_i64(p, id))) !=
            APR_SUCCESS ||
        jr_db_exec(ctx->db, p, JR_Q_REPORT_DELETE, NULL, JR_ARGS(jr_i64(p, id))) != APR_SUCCESS ||
        jr_audit(ctx, "delete", "lesson_report", id, NULL) != APR_SUCCESS) {
        return jr_err_write(ctx, res, NULL);
    }
    return jr_reply_ok(res, p);
}

/* One version; the columns in the order of versions_list. */
static int stream_version(void *baton, const jr_rows_t *shape, const char *const *row)
{
    jr_jw_t *w = baton;
    jr_jw_obj(w);
    jr_jw_kint_text(w, "id", row[0]);
    jr_jw_kint_text(w, "report_id", row[1]);
    jr_jw_kstr(w, "text", row[2]);
    jr_jw_kstr(w, "source", row[3]);
    jr_jw_kstr(w, "created_at", row[4]);
    jr_jw_kint_text(w, "created_by", row[5]);
    jr_jw_kint_text(w, "created_by_key", row[6]);
    jr_jw_obj_end(w);
    return 0;
}

int jr_op_reports_versions(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    const char *id = jr_i64(p, jr_param_id(ctx, "id"));
    long long limit, offset;
    jr_rows_t *count;
    jr_jw_t w;
    if (jr_list_params(ctx, res, &limit, &offset) != 0 ||
        jr_report_load(ctx, res, jr_param_id(ctx, "id"), 0, NULL) != 0) {
        return res->status;
    }
    if (jr_db_select(ctx->db, p, JR_Q_VERSIONS_COUNT, &count, JR_ARGS(id)) != APR_SUCCESS) {
        return jr_err_db(ctx, res);
    }
    jr_jw_init(&w, p, 512 * (size_t)(limit + 1));
    jr_jw_list_begin(ctx, &w, res, jr_rows_int(count, 0, "n", 0));
    if (jr_db_select_each(ctx->db, p, JR_Q_VERSIONS_LIST, stream_version, &w,
                          JR_ARGS(id, jr_i64(p, limit), jr_i64(p, offset))) != APR_SUCCESS) {
        return jr_err_db(ctx, res);
    }
    return jr_jw_list_end(ctx, &w, res, jr_rows_int(count, 0, "n", 0), limit, offset);
}

int jr_op_reports_restore_version(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    long long id = jr_param_id(ctx, "id"), vid = jr_param_id(ctx, "versionId");
    jr_rows_t *rows, *ver;
    report_input_t r;
    int st;
    if ((st = jr_report_load(ctx, res, id, JR_LOAD_ROW, &rows)) != 0) {
        return st;
    }
    if (jr_db_select(ctx->db, p, JR_Q_VERSION_GET, &ver, JR_ARGS(jr_i64(p, vid), jr_i64(p, id))) !=
        APR_SUCCESS) {
        return jr_err_db(ctx, res);
    }
    if (ver->nrows != 1) {
        return jr_err_not_found(ctx, res, "version");
    }
    current_values(rows, &r);
    r.branch_id = jr_rows_int(rows, 0, "branch_id", 0);
    r.text = jr_rows_get(ver, 0, "text");
    return save_report(ctx, res, id, &r, jr_rows_get(rows, 0, "text"),
                       jr_rows_get(rows, 0, "ai_status"), "restore", "restore_version",
                       jr_json_own(p, json_pack("[s]", "text")));
}

int jr_op_reports_ai_revert(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    long long id = jr_param_id(ctx, "id");
    jr_rows_t *rows;
    report_input_t r;
    int st;
    if ((st = jr_report_load(ctx, res, id, JR_LOAD_ROW, &rows)) != 0) {
        return st;
    }
    if (!jr_rows_get(rows, 0, "text_original")) {
        return jr_err_conflict(ctx, res,
                               "the report has no original text: the AI did not rewrite it");
    }
    current_values(rows, &r);
    r.branch_id = jr_rows_int(rows, 0, "branch_id", 0);
    r.text = jr_rows_get(rows, 0, "text_original");
    return save_report(ctx, res, id, &r, jr_rows_get(rows, 0, "text"), "reverted", "revert",
                       "ai_revert", jr_json_own(p, json_pack("[s]", "text")));
}
