/* See jr_stream.h. */
#include <string.h>

#include <apr_hash.h>
#include <apr_strings.h>

#include "jr_auth.h"
#include "jr_crypt.h"
#include "jr_jw.h"
#include "jr_stmts.h"
#include "jr_stream.h"
#include "jr_util.h"

int jr_op_stream_ticket(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    const char *ticket = jr_new_token(p);
    jr_jw_t w;
    if (!ticket) {
        return jr_err_internal(ctx, res);
    }
    if (jr_db_exec(ctx->db, p, JR_Q_TICKET_INSERT, NULL,
                   JR_ARGS(jr_sha256_hex(p, ticket, strlen(ticket)), ctx->who.session_hash,
                           jr_iso_time(p, apr_time_now() + apr_time_from_sec(JR_TICKET_TTL)))) !=
        APR_SUCCESS) {
        return jr_err_write(ctx, res, NULL);
    }
    jr_jw_init(&w, p, 128);
    jr_jw_obj(&w);
    jr_jw_kstr(&w, "ticket", ticket);
    jr_jw_kint(&w, "expires_in", JR_TICKET_TTL);
    jr_jw_obj_end(&w);
    return jr_reply_jw(res, 201, &w);
}

/* The session a ticket was made from (its hash), the ticket deleted; NULL when the ticket is
 * unknown, used or expired. */
static const char *take_ticket(jr_ctx_t *ctx, const char *ticket, apr_status_t *rv)
{
    apr_pool_t *p = ctx->pool;
    jr_rows_t *rows = NULL;
    if ((*rv = jr_db_begin(ctx->db)) != APR_SUCCESS) {
        return NULL;
    }
    if ((*rv = jr_db_select(ctx->db, p, JR_Q_TICKET_TAKE, &rows,
                            JR_ARGS(jr_sha256_hex(p, ticket, strlen(ticket)), jr_now_iso(p)))) !=
        APR_SUCCESS) {
        jr_db_rollback(ctx->db);
        return NULL;
    }
    if ((*rv = jr_db_commit(ctx->db)) != APR_SUCCESS) {
        return NULL;
    }
    return rows->nrows == 1 ? jr_rows_get(rows, 0, "session_hash") : NULL;
}

static int identify_by_ticket(jr_ctx_t *ctx, const char *ticket, jr_result_t *res)
{
    const char *hash;
    apr_status_t rv;

    if (!(hash = take_ticket(ctx, ticket, &rv))) {
        if (rv == APR_SUCCESS) {
            jr_fail(res, ctx->pool, 401, "invalid, used or expired ticket");
        } else {
            jr_err_db(ctx, res);
        }
        return 0;
    }
    return jr_auth_session_hash(ctx, hash, "the ticket's session has ended", res);
}

int jr_stream_identify(jr_ctx_t *ctx, const char *token, const char *ticket, jr_result_t *res)
{
    if (ticket && *ticket && !(token && *token)) {
        return identify_by_ticket(ctx, ticket, res);
    }
    return jr_auth_session(ctx, token, res);
}

int jr_stream_visible(const jr_ctx_t *ctx, jr_stream_kind_e kind, const jr_stream_event_t *ev)
{
    if (kind == JR_STREAM_CHAT) {
        if (strcmp(ev->type, "chat_message") && strcmp(ev->type, "chat_read")) {
            return 0;
        }
        return ctx->who.role == JR_ROLE_ADMIN || ev->entity_id == ctx->who.user_id;
    }
    if (strcmp(ev->type, "notification") && strcmp(ev->type, "ai_status") &&
        strcmp(ev->type, "lesson_report_status")) {
        return 0;
    }
    if (ctx->who.role == JR_ROLE_ADMIN) {
        return 1;
    }
    /* A tutor: only records of their branches; an event without a branch is for admins. */
    return ev->branch_id != 0 && jr_branch_visible(ctx, ev->branch_id);
}

apr_status_t jr_stream_rows(jr_db_t *db, apr_pool_t *p, long long after, int max,
                            apr_array_header_t **out)
{
    jr_rows_t *rows;
    apr_status_t rv;
    int i;
    *out = apr_array_make(p, 16, sizeof(jr_stream_event_t));
    if ((rv = jr_db_select(db, p, JR_Q_STREAM_ROWS, &rows,
                           JR_ARGS(jr_i64(p, after), jr_i64(p, max)))) != APR_SUCCESS) {
        return rv;
    }
    for (i = 0; i < rows->nrows; ++i) {
        jr_stream_event_t *ev = apr_array_push(*out);
        ev->id = jr_rows_int(rows, i, "id", 0);
        ev->type = jr_rows_get(rows, i, "type");
        ev->branch_id = jr_rows_int(rows, i, "branch_id", 0);
        ev->entity_id = jr_rows_int(rows, i, "entity_id", 0);
        ev->payload = jr_rows_get(rows, i, "payload");
    }
    return APR_SUCCESS;
}

apr_status_t jr_stream_bounds(jr_db_t *db, apr_pool_t *p, long long *lo, long long *hi)
{
    jr_rows_t *rows;
    apr_status_t rv = jr_db_select(db, p, JR_Q_STREAM_BOUNDS, &rows, JR_NOARGS);
    *lo = *hi = 0;
    if (rv == APR_SUCCESS && rows->nrows == 1) {
        *lo = jr_rows_int(rows, 0, "lo", 0);
        *hi = jr_rows_int(rows, 0, "hi", 0);
    }
    return rv;
}

int jr_stream_resumable(long long last, long long lo)
{
    /* Ids only grow and rows go only by age: when the oldest row left is beyond the next id
     * the client expects, rows it has not seen may have gone. */
    return lo == 0 || lo <= last + 1;
}

const char *jr_sse_message(apr_pool_t *p, long long id, const char *event, const char *data)
{
    return jr_psprintf(p, "id: %lld\nevent: %s\ndata: %s\n\n", id, event, data);
}

apr_status_t jr_stream_sessions_valid(jr_db_t *db, apr_pool_t *p, const char *hashes_json,
                                      apr_hash_t **valid)
{
    jr_rows_t *rows;
    apr_status_t rv;
    int i;
    *valid = apr_hash_make(p);
    if ((rv = jr_db_select(db, p, JR_Q_STREAM_SESSIONS_VALID, &rows,
                           JR_ARGS(hashes_json, jr_now_iso(p)))) != APR_SUCCESS) {
        return rv;
    }
    for (i = 0; i < rows->nrows; ++i) {
        apr_hash_set(*valid, jr_rows_get(rows, i, "token_hash"), APR_HASH_KEY_STRING, "");
    }
    return APR_SUCCESS;
}
