/* Idempotency-Key. The key is reserved in the database before the operation runs (an insert
 * that does nothing when the key exists), so every process and node sees it: a repeat that
 * arrives while the first request runs finds the reservation without an answer (409), a
 * repeat after it finds the answer (replayed). The reservation is its own statement, outside
 * the operation's transaction: it must be visible to others while the operation runs. */
#include <string.h>

#include <apr_strings.h>

#include "jr_crypt.h"
#include "jr_error_codes.h"
#include "jr_idem.h"
#include "jr_json.h"
#include "jr_log.h"
#include "jr_stmts.h"
#include "jr_storage.h"
#include "jr_util.h"

struct jr_idem {
    const char *owner;
    const char *key;
};

/* Visible ASCII only, 1 to JR_IDEM_KEY_MAX characters: the key is echoed in no answer, but
 * it is stored and compared byte for byte. */
static int key_valid(const char *k)
{
    size_t n = strlen(k), i;
    if (n == 0 || n > JR_IDEM_KEY_MAX) {
        return 0;
    }
    for (i = 0; i < n; ++i) {
        if ((unsigned char)k[i] < 0x21 || (unsigned char)k[i] > 0x7e) {
            return 0;
        }
    }
    return 1;
}

/* The request's fingerprint: method, path, query and body (an upload's bytes by their hash). */
static const char *fingerprint(jr_ctx_t *ctx, const jr_idem_request_t *rq)
{
    apr_pool_t *p = ctx->pool;
    const char *upload = "", *head;
    apr_off_t size;
    if (ctx->upload &&
        jr_storage_sha256_file(&upload, &size, p, ctx->upload->path) != APR_SUCCESS) {
        return NULL;
    }
    head = apr_pstrcat(p, rq->method, "\n", rq->path, "\n", rq->args ? rq->args : "", "\n",
                       upload, "\n",
                       jr_sha256_hex(p, rq->body ? rq->body : "", rq->body ? rq->body_len : 0),
                       NULL);
    return jr_sha256_hex(p, head, strlen(head));
}

/* Answers a repeat from the stored row. */
static jr_idem_e answer_repeat(jr_ctx_t *ctx, const jr_rows_t *row, const char *fp,
                               jr_result_t *res)
{
    const char *body = jr_rows_get(row, 0, "body");
    if (strcmp(jr_rows_get(row, 0, "fingerprint"), fp) != 0) {
        jr_fail(res, ctx->pool, 422,
                "Idempotency-Key: this key was used with another request (method, path, "
                "query or body differ)");
        jr_error_code(res, "idempotency_key_reused");
        return JR_IDEM_ANSWERED;
    }
    if (!jr_rows_get(row, 0, "status") || !body) {
        jr_fail(res, ctx->pool, 409,
                "Idempotency-Key: a request with this key is still running; retry later");
        jr_error_code(res, "idempotency_key_in_use");
        apr_table_setn(res->headers, "Retry-After", "1");
        return JR_IDEM_ANSWERED;
    }
    jr_reply_raw(res, (int)jr_rows_int(row, 0, "status", 500), body, strlen(body));
    apr_table_setn(res->headers, "Idempotent-Replayed", "true");
    return JR_IDEM_ANSWERED;
}

static jr_idem_e unavailable(jr_ctx_t *ctx, jr_result_t *res)
{
    JR_LOG(JR11000, 0, "Idempotency-Key: the database did not answer: %s",
           ctx->db && ctx->db->last_error ? ctx->db->last_error : "(no message)");
    jr_err_db(ctx, res);
    return JR_IDEM_ANSWERED;
}

/* The answers are kept per API key, or per user for a session; NULL for neither. */
static const char *owner_of(jr_ctx_t *ctx)
{
    apr_pool_t *p = ctx->pool;

    return ctx->who.key_id    ? apr_pstrcat(p, "key:", jr_i64(p, ctx->who.key_id), NULL)
           : ctx->who.user_id ? apr_pstrcat(p, "user:", jr_i64(p, ctx->who.user_id), NULL)
                              : NULL;
}

jr_idem_e jr_idem_begin(jr_ctx_t *ctx, const jr_idem_request_t *rq, jr_idem_t **out,
                        jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    apr_time_t t;
    const char *owner, *fp, *now, *stale, *expires;
    jr_rows_t *row;
    int tries, n = 0;

    *out = NULL;
    if (!rq->key || strcmp(rq->method, "POST") != 0) {
        return JR_IDEM_RUN;
    }
    if (!key_valid(rq->key)) {
        jr_fail(res, p, 400, "Idempotency-Key must be 1 to %d visible ASCII characters",
                JR_IDEM_KEY_MAX);
        return JR_IDEM_ANSWERED;
    }
    if (!(owner = owner_of(ctx))) {
        return JR_IDEM_RUN; /* no caller to keep the answer for (a login) */
    }
    if (!(fp = fingerprint(ctx, rq))) {
        jr_err_internal(ctx, res);
        return JR_IDEM_ANSWERED;
    }
    /* The times only now: most requests carry no key and leave above. */
    t = apr_time_now();
    now = jr_iso_time(p, t);
    stale = jr_iso_time(p, t - apr_time_from_sec(JR_IDEM_STALE_SECONDS));
    expires = jr_iso_time(p, t + apr_time_from_sec(JR_IDEM_TTL_SECONDS));
    /* Twice at most: a repeat may find the row deleted by an expiry or a release between
     * its insert and its read. */
    for (tries = 0; tries < 2; ++tries) {
        if (jr_db_exec(ctx->db, p, JR_Q_IDEM_DROP_EXPIRED, NULL,
                       JR_ARGS(owner, rq->key, now, stale)) !=
                APR_SUCCESS ||
            jr_db_exec(ctx->db, p, JR_Q_IDEM_RESERVE, &n,
                       JR_ARGS(owner, rq->key, fp, now, expires)) !=
                APR_SUCCESS) {
            return unavailable(ctx, res);
        }
        if (n == 1) {
            *out = apr_pcalloc(p, sizeof(**out));
            (*out)->owner = owner;
            (*out)->key = rq->key;
            return JR_IDEM_RUN;
        }
        if (jr_db_select(ctx->db, p, JR_Q_IDEM_GET, &row, JR_ARGS(owner, rq->key)) != APR_SUCCESS) {
            return unavailable(ctx, res);
        }
        if (row->nrows == 1) {
            return answer_repeat(ctx, row, fp, res);
        }
    }
    jr_fail(res, p, 409, "Idempotency-Key: a request with this key is still running; retry later");
    jr_error_code(res, "idempotency_key_in_use");
    return JR_IDEM_ANSWERED;
}

void jr_idem_end(jr_ctx_t *ctx, jr_idem_t *idem, const jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    apr_status_t rv;
    const char *body;

    if (!idem) {
        return;
    }
    if (res->status >= 500 || res->file || res->streamed) {
        /* Nothing that a retry should see again: the next attempt runs the operation. */
        rv = jr_db_exec(ctx->db, p, JR_Q_IDEM_RELEASE, NULL, JR_ARGS(idem->owner, idem->key));
    } else {
        body = res->body ? apr_pstrmemdup(p, res->body, res->body_len) : "{}";
        rv = jr_db_exec(ctx->db, p, JR_Q_IDEM_STORE, NULL,
                        JR_ARGS(apr_itoa(p, res->status), body, idem->owner, idem->key));
    }
    if (rv != APR_SUCCESS) {
        /* The key stays reserved without an answer until it expires: repeats get 409. */
        JR_LOG(JR11001, rv, "Idempotency-Key: the answer could not be recorded: %s",
               ctx->db->last_error ? ctx->db->last_error : "(no message)");
    }
}

int jr_idem_purge_expired(jr_ctx_t *ctx)
{
    int n = 0;
    if (jr_db_exec(ctx->db, ctx->pool, JR_Q_IDEM_PURGE, &n, JR_ARGS(jr_now_iso(ctx->pool))) !=
        APR_SUCCESS) {
        return -1;
    }
    return n;
}
