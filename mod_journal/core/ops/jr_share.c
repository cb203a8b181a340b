/* Share links as their creators see them: create (the token shown once), list, revoke. The
 * token is stored as SHA-256, a password as bcrypt; neither ever leaves in a listing. */
#include <string.h>

#include <apr_strings.h>

#include "jr_crypt.h"
#include "jr_cursor.h"
#include "jr_groups.h"
#include "jr_json.h"
#include "jr_jw.h"
#include "jr_load.h"
#include "jr_share.h"
#include "jr_students.h"
#include "jr_stmts.h"
#include "jr_util.h"

#define ID_MAX 9007199254740991LL

const jr_field_t jr_fields_share_link_create[] = {
    {.name = "kind", .type = JR_F_STRING, .required = 1, .max = 20},
    {.name = "target_id", .type = JR_F_INT, .required = 1, .min = 1, .max = ID_MAX},
    /* bcrypt reads at most 72 bytes. */
    {.name = "password", .type = JR_F_STRING, .nullable = 1, .min = 6, .max = 72},
    {.name = "expires_at", .type = JR_F_STRING, .nullable = 1, .max = 64},
    {NULL},
};

static const jr_field_t unlock_fields[] = {
    {.name = "password", .type = JR_F_STRING, .required = 1, .min = 1, .max = 1024},
    {NULL},
};

const jr_field_spec_t jr_fields_share[] = {
    {"POST /api/share-links", jr_fields_share_link_create},
    {"POST /api/share/~token", unlock_fields},
    {NULL, NULL},
};

const char *jr_share_token_hash(apr_pool_t *p, const char *token)
{
    return jr_sha256_hex(p, token, strlen(token));
}

static void link_write(jr_jw_t *w, const jr_rows_t *r, int i)
{
    jr_jw_obj(w);
    jr_jw_kint_text(w, "id", jr_rows_get(r, i, "id"));
    jr_jw_kstr(w, "kind", jr_rows_get(r, i, "kind"));
    jr_jw_kint_text(w, "target_id", jr_rows_get(r, i, "target_id"));
    jr_jw_kint_text(w, "branch_id", jr_rows_get(r, i, "branch_id"));
    jr_jw_kbool(w, "has_password", jr_rows_int(r, i, "has_password", 0) != 0);
    jr_jw_kstr(w, "expires_at", jr_rows_get(r, i, "expires_at"));
    jr_jw_kint_text(w, "created_by", jr_rows_get(r, i, "created_by"));
    jr_jw_kstr(w, "created_at", jr_rows_get(r, i, "created_at"));
    jr_jw_kstr(w, "revoked_at", jr_rows_get(r, i, "revoked_at"));
    jr_jw_kstr(w, "last_opened_at", jr_rows_get(r, i, "last_opened_at"));
    jr_jw_kint_text(w, "open_count", jr_rows_get(r, i, "open_count"));
}

/* A link without a branch (its student deleted) is the admins' alone (jr_load.h). */
static const jr_kind_t link_kind = {"share link", NULL, JR_Q_SHARE_LINK_GET, JR_Q_SHARE_LINK_GET,
                                    "branch_id", 0};

int jr_op_share_links_list(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    const char *kind = apr_table_get(ctx->query, "kind"), *scope = ctx->who.branch_json, *t;
    long long limit, offset, target = jr_query_id(ctx, res, "target_id"), total;
    jr_rows_t *rows, *count;
    jr_jw_t w;
    int i;

    if (target < 0 || jr_list_params(ctx, res, &limit, &offset) != 0) {
        return APR_SUCCESS;
    }
    if (kind && strcmp(kind, "student") && strcmp(kind, "group")) {
        return jr_fail(res, p, 400, "kind must be student or group");
    }
    t = target ? jr_i64(p, target) : NULL;
    if (jr_db_select(ctx->db, p, JR_Q_SHARE_LINKS_LIST, &rows,
                     JR_ARGS(kind, kind, t, t, scope, scope, jr_i64(p, limit),
                             jr_i64(p, offset))) != APR_SUCCESS ||
        jr_db_select(ctx->db, p, JR_Q_SHARE_LINKS_COUNT, &count,
                     JR_ARGS(kind, kind, t, t, scope, scope)) != APR_SUCCESS) {
        return jr_err_db(ctx, res);
    }
    total = jr_rows_int(count, 0, "n", 0);
    jr_jw_init(&w, p, 320 * (size_t)(rows->nrows + 1));
    jr_jw_list_begin(ctx, &w, res, total);
    for (i = 0; i < rows->nrows; ++i) {
        link_write(&w, rows, i);
        jr_jw_obj_end(&w);
    }
    return jr_jw_list_end(ctx, &w, res, total, limit, offset);
}

/* 0 when the caller may share the target; otherwise the status answered in res, a 400 naming
 * target_id when it does not exist for them. */
static int target_check(jr_ctx_t *ctx, jr_result_t *res, const char *kind, long long id)
{
    int st = !strcmp(kind, "group") ? jr_group_load(ctx, res, id, 0, NULL)
                                    : jr_student_load(ctx, res, id, 0, NULL);
    if (st == 404) {
        st = jr_fail(res, ctx->pool, 400, "target_id: %s %lld does not exist", kind, id);
    }
    return st;
}

/* The expiry of a new link: given (in the future, within the longest lifetime) or the
 * default lifetime. NULL with a 400 in res. */
static const char *link_expiry(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    const char *given = jr_json_str(in, "expires_at", NULL);
    long long max = ctx->cfg->share_ttl_max, dflt = ctx->cfg->share_ttl;
    apr_time_t now = apr_time_now(), t;

    if (!given) {
        return jr_iso_time(ctx->pool, now + apr_time_from_sec(dflt < max ? dflt : max));
    }
    if (jr_parse_iso_time(given, &t) != 0) {
        jr_fail(res, ctx->pool, 400,
                "expires_at must be an ISO 8601 timestamp such as 2027-01-31T12:00:00Z");
        return NULL;
    }
    if (t <= now) {
        jr_fail(res, ctx->pool, 400, "expires_at must be in the future");
        return NULL;
    }
    if (t > now + apr_time_from_sec(max)) {
        jr_fail(res, ctx->pool, 400, "expires_at may be at most %lld %s ahead",
                max % 86400 ? max / 3600 : max / 86400, max % 86400 ? "hours" : "days");
        return NULL;
    }
    return jr_iso_time(ctx->pool, t);
}

/* The new link's record with its token and address: the only answer that holds them. */
static apr_status_t reply_created(jr_ctx_t *ctx, jr_result_t *res, long long id, const char *token)
{
    jr_rows_t *rows;
    jr_jw_t w;
    if (jr_load(ctx, res, &link_kind, id, 0, &rows) != 0) {
        return jr_err_internal(ctx, res);
    }
    jr_jw_init(&w, ctx->pool, 512);
    link_write(&w, rows, 0);
    jr_jw_kstr(&w, "token", token);
    jr_jw_kstr(&w, "url", apr_pstrcat(ctx->pool, ctx->base_url ? ctx->base_url : "", "/share/",
                                      token, NULL));
    jr_jw_obj_end(&w);
    return jr_reply_jw(res, 201, &w);
}

int jr_op_share_links_create(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    const char *kind, *expires, *password;
    const char *token, *pw_hash = NULL, *now = jr_now_iso(p);
    long long target, id;
    jr_rows_t *rows;
    int st;

    kind = jr_json_str(in, "kind", "");
    target = jr_json_int(in, "target_id", 0);
    if (strcmp(kind, "student") && strcmp(kind, "group")) {
        return jr_fail(res, p, 400, "kind must be student or group");
    }
    if ((st = target_check(ctx, res, kind, target)) != 0) {
        return st;
    }
    if (!(expires = link_expiry(ctx, in, res))) {
        return APR_SUCCESS;
    }
    if ((password = jr_json_str(in, "password", NULL)) != NULL &&
        !(pw_hash = jr_password_hash(p, password, ctx->cfg->bcrypt_cost))) {
        return jr_err_internal(ctx, res);
    }
    if (!(token = jr_new_token(p))) {
        return jr_err_internal(ctx, res);
    }
    token = apr_pstrcat(p, JR_SHARE_TOKEN_PREFIX, token, NULL);
    if (jr_db_select(ctx->db, p, JR_Q_SHARE_LINK_INSERT, &rows,
                     JR_ARGS(kind, jr_i64(p, target), jr_share_token_hash(p, token), pw_hash,
                             expires, jr_opt_i64(p, ctx->who.user_id), now)) != APR_SUCCESS ||
        rows->nrows != 1 ||
        jr_audit(ctx, "create", "share_link", (id = jr_rows_int(rows, 0, "id", 0)),
                 jr_json_own(p, jr_json_keys(in))) != APR_SUCCESS) {
        return jr_err_write(ctx, res, NULL);
    }
    return reply_created(ctx, res, id, token);
}

int jr_op_share_links_revoke(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    long long id = jr_param_id(ctx, "id");
    int n = 0, st;

    if ((st = jr_load(ctx, res, &link_kind, id, 0, NULL)) != 0) {
        return st;
    }
    /* Revoking twice keeps the first moment and writes no second audit row. */
    if (jr_db_exec(ctx->db, p, JR_Q_SHARE_LINK_REVOKE, &n, JR_ARGS(jr_now_iso(p), jr_i64(p, id))) !=
            APR_SUCCESS ||
        (n > 0 && jr_audit(ctx, "revoke", "share_link", id, NULL) != APR_SUCCESS)) {
        return jr_err_write(ctx, res, NULL);
    }
    return jr_reply_ok(res, p);
}
