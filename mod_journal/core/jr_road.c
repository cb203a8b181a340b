#include <string.h>
#include <strings.h>

#include "jr_auth.h"
#include "jr_bans.h"
#include "jr_json.h"
#include "jr_keys.h"
#include "jr_rcache.h"
#include "jr_road.h"

/* A COMMIT that failed. A lock, a serialization failure or a lost connection is worth a retry
 * (503); a held write (jr_db_exec_later), which meets its own failure at the COMMIT, answers
 * as it would have when run at once. */
static int commit_failed(jr_ctx_t *ctx, jr_result_t *res)
{
    jr_db_error_e e = jr_db_error(ctx->db);
    if (e == JR_DB_OK || e == JR_DB_E_BUSY || e == JR_DB_E_GONE) {
        return jr_err_busy(ctx, res);
    }
    return jr_err_write(ctx, res, NULL);
}

int jr_road_op(jr_ctx_t *ctx, jr_op_fn *op, unsigned flags, const json_t *in, jr_result_t *res)
{
    int write = (flags & JR_RF_WRITE) && ctx->db, ok;
    ctx->hooks = NULL;
    /* Armed, not begun: the first statement that writes begins the transaction (jr_stmts.h),
     * so the reads and checks before it, and work without the database, hold no write lock. */
    if (write) {
        jr_db_begin_lazy(ctx->db);
    }
    op(ctx, in, res);
    /* res->status is the answer; the return value says the same, and a mismatch must not
     * commit an error's writes. */
    ok = res->status < 400;
    if (write && !ok && res->status == 500 && jr_db_error(ctx->db) == JR_DB_E_BUSY) {
        jr_err_busy(ctx, res); /* the lazy BEGIN or a write met a lock: as a failed BEGIN */
    }
    if (write && ok && jr_db_commit(ctx->db) != APR_SUCCESS) {
        jr_db_rollback(ctx->db);
        commit_failed(ctx, res);
        ok = 0;
    } else if (write && !ok) {
        jr_db_rollback(ctx->db);
    }
    jr_hooks_run(ctx, ok);
    return res->status;
}

int jr_road_commit(jr_ctx_t *ctx, jr_result_t *res)
{
    if (jr_db_commit(ctx->db) != APR_SUCCESS) {
        commit_failed(ctx, res);
        return -1;
    }
    return 0;
}

/* ---- the steps before the body ---------------------------------------------------------- */

/* Ban: the client address, for key routes (with the key's record read in the same query) and
 * rows marked BAN (login). */
static int step_ban(jr_ctx_t *ctx, const jr_route_t *route, const jr_credentials_t *cred,
                    jr_result_t *res)
{
    if (route->auth == JR_AUTH_KEY) {
        return jr_key_ban(ctx, cred->api_key, (route->flags & JR_RF_WRITE) != 0, res);
    }
    return !(route->flags & JR_RF_BAN) || jr_ban_check(ctx, res) == 0;
}

static int step_authenticate(jr_ctx_t *ctx, const jr_route_t *route, const jr_credentials_t *cred,
                             jr_result_t *res)
{
    switch (route->auth) {
    case JR_AUTH_SESSION:
        return jr_auth_session(ctx, cred->session_token, res);
    case JR_AUTH_KEY:
        return jr_key_authenticate(ctx, cred->api_key, res);
    default:
        return 1;
    }
}

static int step_rate_limit(jr_ctx_t *ctx, const jr_route_t *route, jr_result_t *res)
{
    return route->auth != JR_AUTH_KEY || jr_key_rate_limit(ctx, res);
}

static int step_scope(jr_ctx_t *ctx, const jr_route_t *route, jr_result_t *res)
{
    if (route->auth != JR_AUTH_KEY) {
        return 1;
    }
    return jr_key_scope(ctx, route->scope == JR_SCOPE_METHOD ? -1 : route->scope == JR_SCOPE_WRITE,
                        res);
}

static int step_role(jr_ctx_t *ctx, const jr_route_t *route, jr_result_t *res)
{
    if ((route->flags & JR_RF_ADMIN) && ctx->who.role != JR_ROLE_ADMIN) {
        jr_fail(res, ctx->pool, 403, "this operation requires the admin role");
        return 0;
    }
    return 1;
}

int jr_request_authorize(jr_ctx_t *ctx, const jr_route_t *route, const jr_credentials_t *cred,
                         jr_result_t *res)
{
    return step_ban(ctx, route, cred, res) && step_authenticate(ctx, route, cred, res) &&
           step_rate_limit(ctx, route, res) && step_scope(ctx, route, res) &&
           step_role(ctx, route, res);
}

/* ---- the body ---------------------------------------------------------------------------- */

static int is_json_type(const char *ct)
{
    const char *semi;
    size_t n;
    if (!ct) {
        return 0;
    }
    while (*ct == ' ') {
        ++ct;
    }
    semi = strchr(ct, ';');
    n = semi ? (size_t)(semi - ct) : strlen(ct);
    while (n > 0 && ct[n - 1] == ' ') {
        --n;
    }
    if (n == 16 && !strncasecmp(ct, "application/json", 16)) {
        return 1;
    }
    /* application/<anything>+json */
    return n > 17 && !strncasecmp(ct, "application/", 12) && !strncasecmp(ct + n - 5, "+json", 5);
}

int jr_request_type_ok(jr_ctx_t *ctx, const jr_route_t *route, const char *content_type,
                       jr_result_t *res)
{
    if ((route->body == JR_BODY_JSON || route->body == JR_BODY_OPTIONAL) &&
        !is_json_type(content_type)) {
        jr_fail(res, ctx->pool, 415, "Content-Type must be application/json");
        return 0;
    }
    return 1;
}

int jr_request_run(jr_ctx_t *ctx, const jr_route_t *route, const char *content_type,
                   const char *body, size_t len, jr_result_t *res)
{
    const json_t *in = NULL;
    int has_body = body && len > 0;
    jr_rcache_req_t cached;

    if (route->body == JR_BODY_JSON || route->body == JR_BODY_OPTIONAL) {
        if (has_body) {
            const char *err = NULL;
            json_t *j;
            if (!jr_request_type_ok(ctx, route, content_type, res)) {
                return res->status;
            }
            if (!(j = jr_json_parse(ctx->pool, body, len, &err))) {
                return jr_fail(res, ctx->pool, 400, "%s", err);
            }
            if (!json_is_object(j)) {
                return jr_fail(res, ctx->pool, 400, "request body must be a JSON object");
            }
            in = j;
        } else if (route->body == JR_BODY_JSON) {
            return jr_fail(res, ctx->pool, 400, "request body must be a JSON object");
        } else {
            in = jr_json_own(ctx->pool, json_object());
        }
    }
    if (route->fields && in) {
        const char *msg = jr_json_validate(ctx->pool, in, route->fields);
        if (msg) {
            return jr_err_body(ctx, res, msg);
        }
    }
    /* A cached list stands where the operation would read the database: every step before
     * (ban, key, rate limit, scope, role, query checks) has run for this request. */
    if (jr_rcache_serve(ctx, route, res, &cached)) {
        return res->status;
    }
    jr_road_op(ctx, route->op, route->flags, in, res);
    jr_rcache_keep(ctx, &cached, res);
    return res->status;
}
