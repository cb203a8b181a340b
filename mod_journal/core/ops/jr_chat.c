/* The tutor/admin chat (docs/events.md, "Chat"): one thread per tutor, between that tutor
 * and the admins. A thread is named by its tutor's user id; a tutor reaches only their own
 * (another's is 404, as for records outside one's branches). Every message and every read
 * mark writes an outbox event for GET /api/chat/stream. */
#include <string.h>

#include "jr_events.h"
#include "jr_json.h"
#include "jr_jw.h"
#include "jr_log.h"
#include "jr_chat.h"
#include "jr_settings.h"
#include "jr_stmts.h"
#include "jr_util.h"

const jr_field_t jr_fields_chat_message[] = {
    {.name = "text", .type = JR_F_STRING, .required = 1, .trim = 1, .min = 1, .max = 4000},
    {NULL},
};

const jr_field_spec_t jr_fields_chat[] = {
    {"POST /api/chat/threads/:tutorId/messages", jr_fields_chat_message},
    {NULL, NULL},
};

static void write_message(jr_jw_t *w, const jr_rows_t *r, int i)
{
    jr_jw_obj(w);
    jr_jw_kint_text(w, "id", jr_rows_get(r, i, "id"));
    jr_jw_kint_text(w, "tutor_id", jr_rows_get(r, i, "tutor_id"));
    jr_jw_kint_text(w, "sender_id", jr_rows_get(r, i, "sender_id"));
    jr_jw_kstr(w, "text", jr_rows_get(r, i, "text"));
    jr_jw_kstr(w, "created_at", jr_rows_get(r, i, "created_at"));
    jr_jw_obj_end(w);
}

/* The thread of the path: its tutor's id, or 0 with a 404 (or 503) in res. */
static long long thread_of(jr_ctx_t *ctx, jr_result_t *res)
{
    long long tutor = jr_param_id(ctx, "tutorId");
    jr_rows_t *rows;
    if (ctx->who.role != JR_ROLE_ADMIN && tutor != ctx->who.user_id) {
        jr_err_not_found(ctx, res, "chat thread");
        return 0;
    }
    if (jr_db_select(ctx->db, ctx->pool, JR_Q_CHAT_TUTOR, &rows,
                     JR_ARGS(jr_i64(ctx->pool, tutor))) != APR_SUCCESS) {
        jr_err_db(ctx, res);
        return 0;
    }
    if (rows->nrows != 1) {
        jr_err_not_found(ctx, res, "chat thread");
        return 0;
    }
    return tutor;
}

int jr_op_chat_threads(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    const char *me = jr_i64(p, ctx->who.user_id);
    const char *only = ctx->who.role == JR_ROLE_ADMIN ? NULL : me;
    jr_rows_t *rows;
    jr_jw_t w;
    int i;

    if (ctx->who.role != JR_ROLE_ADMIN && ctx->who.role != JR_ROLE_TUTOR) {
        return jr_fail(res, p, 403, "the chat is for tutors and admins");
    }
    if (jr_db_select(ctx->db, p, JR_Q_CHAT_THREADS, &rows, JR_ARGS(me, me, only, only)) !=
        APR_SUCCESS) {
        return jr_err_db(ctx, res);
    }
    jr_jw_init(&w, p, 256 + (size_t)rows->nrows * 256);
    jr_jw_arr(&w);
    for (i = 0; i < rows->nrows; ++i) {
        jr_jw_obj(&w);
        jr_jw_kint_text(&w, "tutor_id", jr_rows_get(rows, i, "tutor_id"));
        jr_jw_kstr(&w, "tutor_username", jr_rows_get(rows, i, "username"));
        jr_jw_key(&w, "last_message");
        if (jr_rows_get(rows, i, "id")) {
            write_message(&w, rows, i);
        } else {
            jr_jw_null(&w);
        }
        jr_jw_kint_text(&w, "unread", jr_rows_get(rows, i, "unread"));
        jr_jw_obj_end(&w);
    }
    jr_jw_arr_end(&w);
    return jr_reply_jw(res, 200, &w);
}

int jr_op_chat_messages(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    long long tutor, limit, offset, before;
    jr_rows_t *rows;
    jr_jw_t w;
    int i;

    if (!(tutor = thread_of(ctx, res)) || jr_list_params(ctx, res, &limit, &offset) != 0 ||
        (before = jr_query_id(ctx, res, "before_id")) < 0) {
        return APR_SUCCESS;
    }
    if (jr_db_select(ctx->db, p, JR_Q_CHAT_MESSAGES, &rows,
                     JR_ARGS(jr_i64(p, tutor), jr_opt_i64(p, before), jr_opt_i64(p, before),
                             jr_i64(p, limit))) != APR_SUCCESS) {
        return jr_err_db(ctx, res);
    }
    /* The newest `limit` before before_id, oldest first: a page reads top to bottom. */
    jr_jw_init(&w, p, 256 + (size_t)rows->nrows * 256);
    jr_jw_arr(&w);
    for (i = rows->nrows - 1; i >= 0; --i) {
        write_message(&w, rows, i);
    }
    jr_jw_arr_end(&w);
    return jr_reply_jw(res, 200, &w);
}

int jr_op_chat_post(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    long long tutor;
    jr_rows_t *rows;
    jr_jw_t w;

    if (!(tutor = thread_of(ctx, res))) {
        return res->status;
    }
    if (jr_db_select(ctx->db, p, JR_Q_CHAT_INSERT, &rows,
                     JR_ARGS(jr_i64(p, tutor), jr_i64(p, ctx->who.user_id),
                             jr_json_trimmed(p, in, "text"), jr_now_iso(p))) != APR_SUCCESS ||
        rows->nrows != 1) {
        return jr_err_write(ctx, res, NULL);
    }
    jr_jw_init(&w, p, 512);
    write_message(&w, rows, 0);
    if (jr_event(ctx, "chat_message", 0, "chat_thread", tutor, jr_jw_done(&w, NULL)) !=
        APR_SUCCESS) {
        return jr_err_write(ctx, res, NULL);
    }
    return jr_reply_raw(res, 201, jr_jw_done(&w, NULL), strlen(jr_jw_done(&w, NULL)));
}

int jr_op_chat_read(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    long long tutor, last;
    jr_rows_t *rows;
    const char *payload;

    if (!(tutor = thread_of(ctx, res))) {
        return res->status;
    }
    if (jr_db_select(ctx->db, p, JR_Q_CHAT_LAST, &rows, JR_ARGS(jr_i64(p, tutor))) != APR_SUCCESS) {
        return jr_err_write(ctx, res, NULL);
    }
    last = jr_rows_int(rows, 0, "last", 0);
    payload = jr_psprintf(p, "{\"tutor_id\":%lld,\"user_id\":%lld,\"last_read_id\":%lld}", tutor,
                          ctx->who.user_id, last);
    if (jr_db_exec(ctx->db, p, JR_Q_CHAT_READ, NULL,
                   JR_ARGS(jr_i64(p, tutor), jr_i64(p, ctx->who.user_id), jr_i64(p, last))) !=
            APR_SUCCESS ||
        jr_event(ctx, "chat_read", 0, "chat_thread", tutor, payload) != APR_SUCCESS) {
        return jr_err_write(ctx, res, NULL);
    }
    return jr_reply_raw(res, 200, payload, strlen(payload));
}

int jr_chat_purge(jr_ctx_t *ctx)
{
    long long days;
    int n = jr_purge_days(ctx, JR_Q_CHAT_PURGE, JR_SETTING_CHAT_RETENTION_DAYS, &days);
    if (n > 0) {
        JR_LOG(JR09009, 0, "housekeeping removed %d chat messages older than %lld days", n, days);
    }
    return n;
}
