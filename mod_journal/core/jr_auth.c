#include <ctype.h>
#include <string.h>

#include <apr_strings.h>

#include "jr_auth.h"
#include "jr_bans.h"
#include "jr_crypt.h"
#include "jr_counters.h"
#include "jr_json.h"
#include "jr_log.h"
#include "jr_stmts.h"
#include "jr_users.h"
#include "jr_util.h"

static const char *const bad_login = "invalid username or password";

static int is_token(const char *t)
{
    size_t i;
    if (!t || strlen(t) != 64) {
        return 0;
    }
    for (i = 0; i < 64; ++i) {
        if (!isxdigit((unsigned char)t[i])) {
            return 0;
        }
    }
    return 1;
}

void jr_identity_set_branches(jr_ctx_t *ctx, apr_array_header_t *ids)
{
    ctx->who.branch_ids = ids;
    ctx->who.branch_json =
        ctx->who.role == JR_ROLE_ADMIN ? NULL : jr_ids_json(ctx->pool, ids);
}

int jr_auth_session_hash(jr_ctx_t *ctx, const char *hash, const char *ended, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    apr_array_header_t *branches;
    jr_rows_t *rows;

    if (jr_db_select(ctx->db, p, JR_Q_SESSION_LOOKUP, &rows, JR_ARGS(hash, jr_now_iso(p))) !=
        APR_SUCCESS) {
        jr_err_db(ctx, res);
        return 0;
    }
    if (rows->nrows != 1) {
        jr_fail(res, p, 401, "%s", ended);
        return 0;
    }
    ctx->who.authenticated = 1;
    ctx->who.user_id = jr_rows_int(rows, 0, "user_id", 0);
    ctx->who.username = jr_rows_get(rows, 0, "username");
    ctx->who.role = !strcmp(jr_rows_get(rows, 0, "role"), "admin") ? JR_ROLE_ADMIN : JR_ROLE_TUTOR;
    ctx->who.session_hash = hash;
    if (jr_user_branch_ids(ctx, ctx->who.user_id, &branches) != APR_SUCCESS) {
        jr_err_db(ctx, res);
        return 0;
    }
    jr_identity_set_branches(ctx, branches);
    return 1;
}

int jr_auth_session(jr_ctx_t *ctx, const char *token, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;

    if (!token || !*token) {
        jr_fail(res, p, 401, "authentication required: send the session token in X-Auth-Token");
        return 0;
    }
    if (!is_token(token)) {
        jr_fail(res, p, 401, "invalid or expired session");
        return 0;
    }
    return jr_auth_session_hash(ctx, jr_sha256_hex(p, token, strlen(token)),
                                "invalid or expired session", res);
}

static const jr_field_t login_fields[] = {
    {.name = "username", .type = JR_F_STRING, .required = 1, .min = 1, .max = 200},
    {.name = "password", .type = JR_F_STRING, .required = 1, .min = 1, .max = 1024},
    /* A honeypot: people never see this field, form-filling robots do. */
    {.name = "website", .type = JR_F_STRING, .nullable = 1, .max = 2000},
    {NULL},
};

/* Only robots fill a field that people never see. Any value but absent, null or "" counts,
 * whatever else the body holds: a robot need not send a valid login to be recognised. */
static int honeypot_filled(const json_t *in)
{
    json_t *v = json_object_get(in, "website");
    return v && !json_is_null(v) && !(json_is_string(v) && json_string_length(v) == 0);
}

const jr_field_spec_t jr_fields_auth[] = {
    {"POST /api/auth/login", login_fields},
    {NULL, NULL},
};

/* The account name as the log may show it: a user name's own alphabet, anything else '?'. */
static const char *loggable_name(apr_pool_t *p, const char *name)
{
    char *out = apr_pstrndup(p, name, 64), *c;
    for (c = out; *c; ++c) {
        if (!isalnum((unsigned char)*c) && !strchr("._@-", *c)) {
            *c = '?';
        }
    }
    return out;
}

/* Reserves an attempt in the account's throttle. 0 to go on; otherwise fills res with the
 * 429 of a throttled account and returns -1. */
static int throttle_attempt(jr_ctx_t *ctx, const char *account, const char *source,
                            jr_throttle_t *th, jr_result_t *res)
{
    const jr_config_t *c = ctx->cfg;
    jr_throttle_cfg_t tc = {c->login_throttle_threshold, c->login_throttle_window,
                            JR_LOGIN_THROTTLE_FIRST, c->login_throttle_max_backoff};
    if (ctx->counters->ops->login_attempt(ctx->counters, account, source ? source : "", &tc,
                                          apr_time_now(), th) != APR_SUCCESS) {
        jr_fail(res, ctx->pool, 503, "rate limiting unavailable; try again later");
        return -1;
    }
    if (th->refused) {
        apr_table_setn(res->headers, "Retry-After", apr_itoa(ctx->pool, th->retry_after));
        jr_fail(res, ctx->pool, 429, "too many failed logins for this account; retry in %d s",
                th->retry_after);
        return -1;
    }
    return 0;
}

/* Checks a login body: honeypot, shape, the account's throttle, the password. Returns
 * the user's id, or 0 with res filled. */
static long long login_verify(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    const char *msg, *username, *password, *source = jr_ip_subject(p, ctx->client_ip);
    jr_throttle_t th;
    jr_rows_t *rows;
    int ok;

    /* The road checked the address's ban (the route is marked BAN). */
    if (honeypot_filled(in)) {
        jr_ban_add(ctx, JR_BAN_HONEYPOT, ctx->cfg->honeypot_ban_duration);
        jr_ban_refuse(ctx, res);
        return 0;
    }
    if ((msg = jr_json_validate(p, in, login_fields)) != NULL) {
        jr_err_body(ctx, res, msg);
        return 0;
    }
    if (!ctx->counters) {
        /* Neither the account's throttle nor the address's ban could count: fail closed. */
        jr_fail(res, p, 503, "rate limiting unavailable; try again later");
        return 0;
    }
    username = jr_ascii_lower(p, jr_trim(p, jr_json_str(in, "username", "")));
    password = jr_json_str(in, "password", "");
    if (jr_db_select(ctx->db, p, JR_Q_LOGIN_USER, &rows, JR_ARGS(username)) != APR_SUCCESS) {
        jr_err_db(ctx, res);
        return 0;
    }
    /* Unknown names are throttled exactly like real ones: a 429 tells nothing either. */
    if (throttle_attempt(ctx, username, source, &th, res) != 0) {
        return 0;
    }
    if (rows->nrows == 1 && jr_rows_int(rows, 0, "active", 0) == 1) {
        ok = jr_password_check(password, jr_rows_get(rows, 0, "password_hash"));
    } else {
        /* Unknown and inactive users cost one bcrypt check too, so timing tells nothing. */
        jr_password_check(password, ctx->cfg->dummy_hash);
        ok = 0;
    }
    if (!ok) {
        if (th.period) {
            JR_LOG(JR03010, 0,
                   "%d failed logins for account '%s' within %d s; its logins are "
                   "refused for %d s",
                   th.attempts, loggable_name(p, username), ctx->cfg->login_throttle_window,
                   th.period);
        }
        jr_ban_count_failure(ctx, "login", ctx->cfg->login_ban_threshold,
                             ctx->cfg->login_ban_window, ctx->cfg->login_ban_duration,
                             JR_BAN_LOGIN);
        jr_fail(res, p, 401, "%s", bad_login);
        return 0;
    }
    ctx->counters->ops->login_ok(ctx->counters, username, source ? source : "", apr_time_now());
    return jr_rows_int(rows, 0, "id", 0);
}

int jr_op_login(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    const char *token, *expires;
    long long uid;
    jr_user_t user;
    jr_jw_t w;

    if (!(uid = login_verify(ctx, in, res))) {
        return res->status;
    }
    token = jr_new_token(p);
    if (!token) {
        return jr_err_internal(ctx, res);
    }
    expires = jr_iso_time(p, apr_time_now() + apr_time_from_sec(ctx->cfg->session_ttl));
    if (jr_db_exec(ctx->db, p, JR_Q_SESSION_PURGE, NULL, JR_ARGS(jr_now_iso(p))) != APR_SUCCESS ||
        jr_db_exec(ctx->db, p, JR_Q_SESSION_INSERT, NULL,
                   JR_ARGS(jr_sha256_hex(p, token, strlen(token)), jr_i64(p, uid), jr_now_iso(p),
                           expires, ctx->client_ip)) != APR_SUCCESS) {
        return jr_err_write(ctx, res, NULL);
    }
    ctx->who.user_id = uid;
    if (!jr_user_load(ctx, uid, &user)) {
        return jr_err_internal(ctx, res);
    }
    jr_jw_init(&w, p, 512);
    jr_jw_obj(&w);
    jr_jw_kstr(&w, "token", token);
    jr_jw_kstr(&w, "expires_at", expires);
    jr_jw_key(&w, "user");
    jr_user_write(&w, &user);
    jr_jw_obj_end(&w);
    return jr_reply_jw(res, 200, &w);
}

int jr_op_logout(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    if (jr_db_exec(ctx->db, ctx->pool, JR_Q_SESSION_DELETE, NULL, JR_ARGS(ctx->who.session_hash)) !=
        APR_SUCCESS) {
        return jr_err_db(ctx, res);
    }
    return jr_reply_ok(res, ctx->pool);
}

int jr_op_me(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    jr_user_t user;
    jr_jw_t w;
    if (!jr_user_load(ctx, ctx->who.user_id, &user)) {
        return jr_fail(res, ctx->pool, 401, "invalid or expired session");
    }
    jr_jw_init(&w, ctx->pool, 512);
    jr_jw_obj(&w);
    jr_jw_key(&w, "user");
    jr_user_write(&w, &user);
    jr_jw_obj_end(&w);
    return jr_reply_jw(res, 200, &w);
}
