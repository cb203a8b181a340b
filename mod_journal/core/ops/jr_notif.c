/* See jr_notif.h. Who sees a notification is decided when it is read (by its branch), so a
 * notification is one row whatever the number of recipients; per-user state (read, removed)
 * lives in notification_marks, written only when a user acts. */
#include <string.h>

#include <apr_strings.h>

#include "jr_cursor.h"
#include "jr_events.h"
#include "jr_jw.h"
#include "jr_log.h"
#include "jr_notif.h"
#include "jr_settings.h"
#include "jr_stmts.h"
#include "jr_util.h"

typedef struct {
    const char *type, *level;
    jr_setting_id_t setting;
} notif_type_t;

#define NOTIF_ROW(t, l, s) {t, l, JR_SETTING_##s},
static const notif_type_t types[] = {JR_NOTIFY_TYPES(NOTIF_ROW){NULL, NULL, JR_SETTING__COUNT}};

static const notif_type_t *type_of(const char *type)
{
    const notif_type_t *t;
    for (t = types; t->type && strcmp(t->type, type); ++t) {
    }
    return t->type ? t : NULL;
}

/* One notification as JSON; read_at is the caller's (NULL in a stream event: it is new). */
static void write_record(jr_jw_t *w, const jr_rows_t *r, int i)
{
    jr_jw_obj(w);
    jr_jw_kint_text(w, "id", jr_rows_get(r, i, "id"));
    jr_jw_kstr(w, "type", jr_rows_get(r, i, "type"));
    jr_jw_kstr(w, "level", jr_rows_get(r, i, "level"));
    jr_jw_kstr(w, "title", jr_rows_get(r, i, "title"));
    jr_jw_kstr(w, "body", jr_rows_get(r, i, "body"));
    jr_jw_kstr(w, "entity_type", jr_rows_get(r, i, "entity_type"));
    jr_jw_kint_text(w, "entity_id", jr_rows_get(r, i, "entity_id"));
    jr_jw_kint_text(w, "branch_id", jr_rows_get(r, i, "branch_id"));
    jr_jw_kstr(w, "created_at", jr_rows_get(r, i, "created_at"));
    jr_jw_kstr(w, "read_at", jr_rows_get(r, i, "read_at"));
    jr_jw_obj_end(w);
}

apr_status_t jr_notify(jr_ctx_t *ctx, const char *type, long long branch_id,
                       const char *entity_type, long long entity_id, const char *title,
                       const char *body)
{
    apr_pool_t *p = ctx->pool;
    const notif_type_t *t = type_of(type);
    const char *now = jr_now_iso(p);
    jr_rows_t *rows;
    apr_status_t rv;
    jr_jw_t w;

    if (!t) {
        return APR_EINVAL;
    }
    if (!jr_setting_on(ctx, JR_SETTING_NOTIFY_ENABLED) || !jr_setting_on(ctx, t->setting)) {
        return APR_SUCCESS;
    }
    if ((rv = jr_db_select(ctx->db, p, JR_Q_NOTIF_INSERT, &rows,
                           JR_ARGS(type, t->level, title, body, entity_type,
                                   jr_opt_i64(p, entity_id), jr_opt_i64(p, branch_id), now))) !=
        APR_SUCCESS) {
        return rv;
    }
    if (rows->nrows != 1) {
        return APR_EGENERAL;
    }
    jr_jw_init(&w, p, 512);
    jr_jw_obj(&w);
    jr_jw_kint_text(&w, "id", jr_rows_get(rows, 0, "id"));
    jr_jw_kstr(&w, "type", type);
    jr_jw_kstr(&w, "level", t->level);
    jr_jw_kstr(&w, "title", title);
    jr_jw_kstr(&w, "body", body);
    jr_jw_kstr(&w, "entity_type", entity_type);
    jr_jw_kint_text(&w, "entity_id", jr_opt_i64(p, entity_id));
    jr_jw_kint_text(&w, "branch_id", jr_opt_i64(p, branch_id));
    jr_jw_kstr(&w, "created_at", now);
    jr_jw_kstr(&w, "read_at", NULL);
    jr_jw_obj_end(&w);
    return jr_event(ctx, "notification", branch_id, "notification",
                    jr_rows_int(rows, 0, "id", 0), jr_jw_done(&w, NULL));
}

int jr_notif_purge(jr_ctx_t *ctx)
{
    long long days;
    int n = jr_purge_days(ctx, JR_Q_NOTIF_PURGE, JR_SETTING_NOTIFY_RETENTION_DAYS, &days);
    if (n > 0) {
        JR_LOG(JR09000, 0, "housekeeping removed %d notifications older than %lld days", n, days);
    }
    if (jr_purge_batched(ctx, JR_Q_NOTIF_TICKETS_PURGE, jr_now_iso(ctx->pool)) < 0) {
        return -1;
    }
    return n;
}

/* ---- the endpoints ------------------------------------------------------------------- */

/* The caller, then the scope: the arguments every visible-set statement starts with. */
#define WHO(ctx) jr_i64((ctx)->pool, (ctx)->who.user_id), (ctx)->who.branch_json, (ctx)->who.branch_json

int jr_op_notif_types(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    int master = jr_setting_on(ctx, JR_SETTING_NOTIFY_ENABLED);
    const notif_type_t *t;
    jr_jw_t w;
    jr_jw_init(&w, ctx->pool, 2048);
    jr_jw_arr(&w);
    for (t = types; t->type; ++t) {
        int branch = strncmp(t->type, "ban.", 4) && strncmp(t->type, "backup.", 7);
        jr_jw_obj(&w);
        jr_jw_kstr(&w, "type", t->type);
        jr_jw_kstr(&w, "level", t->level);
        jr_jw_kstr(&w, "switch", jr_setting_name(t->setting));
        jr_jw_kbool(&w, "enabled", master && jr_setting_on(ctx, t->setting));
        jr_jw_kstr(&w, "recipients", branch ? "admins, tutors of the branch" : "admins");
        jr_jw_obj_end(&w);
    }
    jr_jw_arr_end(&w);
    return jr_reply_jw(res, 200, &w);
}

/* Reads the list filters; 0, or -1 with a 400 in res. */
static int list_filters(jr_ctx_t *ctx, jr_result_t *res, const char **unread, const char **type,
                        const char **level)
{
    const char *u = apr_table_get(ctx->query, "unread");
    *type = apr_table_get(ctx->query, "type");
    *level = apr_table_get(ctx->query, "level");
    *unread = NULL;
    if (u && (!strcmp(u, "1") || !strcmp(u, "true"))) {
        *unread = "1";
    } else if (u && strcmp(u, "0") && strcmp(u, "false")) {
        jr_fail(res, ctx->pool, 400, "unread must be 1 or 0");
        return -1;
    }
    if (*type && !type_of(*type)) {
        jr_fail(res, ctx->pool, 400, "type: unknown notification type '%s'", *type);
        return -1;
    }
    if (*level && strcmp(*level, "info") && strcmp(*level, "warning") && strcmp(*level, "error")) {
        jr_fail(res, ctx->pool, 400, "level must be info, warning or error");
        return -1;
    }
    return 0;
}

int jr_op_notif_list(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    const char *unread, *type, *level;
    long long limit, offset;
    jr_rows_t *rows, *count;
    jr_jw_t w;
    int i;

    if (jr_list_params(ctx, res, &limit, &offset) != 0 ||
        list_filters(ctx, res, &unread, &type, &level) != 0) {
        return APR_SUCCESS;
    }
    if (jr_db_select(ctx->db, p, JR_Q_NOTIF_COUNT, &count,
                     JR_ARGS(WHO(ctx), unread, type, type, level, level)) != APR_SUCCESS ||
        jr_db_select(ctx->db, p, JR_Q_NOTIF_LIST, &rows,
                     JR_ARGS(WHO(ctx), unread, type, type, level, level, jr_i64(p, limit),
                             jr_i64(p, offset))) != APR_SUCCESS) {
        return jr_err_db(ctx, res);
    }
    jr_jw_init(&w, p, 256 + (size_t)rows->nrows * 256);
    jr_jw_list_begin(ctx, &w, res, jr_rows_int(count, 0, "n", 0));
    for (i = 0; i < rows->nrows; ++i) {
        write_record(&w, rows, i);
    }
    return jr_jw_list_end(ctx, &w, res, jr_rows_int(count, 0, "n", 0), limit, offset);
}

int jr_op_notif_unread_count(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    jr_rows_t *count;
    jr_jw_t w;
    if (jr_db_select(ctx->db, ctx->pool, JR_Q_NOTIF_COUNT, &count,
                     JR_ARGS(WHO(ctx), "1", NULL, NULL, NULL, NULL)) != APR_SUCCESS) {
        return jr_err_db(ctx, res);
    }
    jr_jw_init(&w, ctx->pool, 32);
    jr_jw_obj(&w);
    jr_jw_kint(&w, "count", jr_rows_int(count, 0, "n", 0));
    jr_jw_obj_end(&w);
    return jr_reply_jw(res, 200, &w);
}

/* Marks one visible notification (read_at or deleted_at) and answers with the record. */
static apr_status_t mark_one(jr_ctx_t *ctx, jr_result_t *res, jr_stmt_id_t mark, int answer)
{
    apr_pool_t *p = ctx->pool;
    const char *id = jr_i64(p, jr_param_id(ctx, "id"));
    jr_rows_t *rows;
    jr_jw_t w;

    if (jr_db_select(ctx->db, p, JR_Q_NOTIF_GET, &rows, JR_ARGS(WHO(ctx), id)) != APR_SUCCESS) {
        return jr_err_db(ctx, res);
    }
    if (rows->nrows != 1) {
        return jr_err_not_found(ctx, res, "notification");
    }
    if (jr_db_exec(ctx->db, p, mark, NULL,
                   JR_ARGS(id, jr_i64(p, ctx->who.user_id), jr_now_iso(p))) != APR_SUCCESS ||
        (answer && jr_db_select(ctx->db, p, JR_Q_NOTIF_GET, &rows, JR_ARGS(WHO(ctx), id)) !=
                       APR_SUCCESS)) {
        return jr_err_write(ctx, res, NULL);
    }
    if (!answer) {
        return jr_reply_ok(res, p);
    }
    jr_jw_init(&w, p, 512);
    write_record(&w, rows, 0);
    return jr_reply_jw(res, 200, &w);
}

/* Marks every visible notification of the caller; answers {ok, count}. */
static apr_status_t mark_all(jr_ctx_t *ctx, jr_result_t *res, jr_stmt_id_t mark_new,
                             jr_stmt_id_t mark_old)
{
    apr_pool_t *p = ctx->pool;
    const char *me = jr_i64(p, ctx->who.user_id), *now = jr_now_iso(p);
    int added = 0, changed = 0;
    if (jr_db_exec(ctx->db, p, mark_old, &changed, JR_ARGS(now, me)) != APR_SUCCESS ||
        jr_db_exec(ctx->db, p, mark_new, &added,
                   JR_ARGS(me, now, ctx->who.branch_json, ctx->who.branch_json, me)) !=
            APR_SUCCESS) {
        return jr_err_write(ctx, res, NULL);
    }
    return jr_reply_ok_count(res, p, added + changed);
}

int jr_op_notif_read(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    return mark_one(ctx, res, JR_Q_NOTIF_MARK_READ, 1);
}

int jr_op_notif_delete(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    return mark_one(ctx, res, JR_Q_NOTIF_MARK_DELETED, 0);
}

int jr_op_notif_read_all(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    return mark_all(ctx, res, JR_Q_NOTIF_READ_NEW, JR_Q_NOTIF_READ_OLD);
}

int jr_op_notif_clear(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    return mark_all(ctx, res, JR_Q_NOTIF_CLEAR_NEW, JR_Q_NOTIF_CLEAR_OLD);
}
