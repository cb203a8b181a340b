/* Key management on the administrative interface (admin session only). The secret is shown
 * once, in the answer to create and rotate; it is stored as SHA-256 and a visible prefix. */
#include <string.h>

#include <apr_strings.h>

#include "jr_crypt.h"
#include "jr_json.h"
#include "jr_jw.h"
#include "jr_keys.h"
#include "jr_keys_admin.h"
#include "jr_load.h"
#include "jr_users.h"
#include "jr_stmts.h"
#include "jr_util.h"

#define ID_MAX 9007199254740991LL

const jr_field_t jr_fields_key_create[] = {
    {.name = "name", .type = JR_F_STRING, .required = 1, .trim = 1, .min = 1, .max = 100},
    {.name = "scopes", .type = JR_F_STRING_ARRAY, .required = 1, .max_items = 2},
    {.name = "rate_limit_per_min", .type = JR_F_INT, .nullable = 1},
    {.name = "expires_at", .type = JR_F_STRING, .nullable = 1, .max = 64},
    {.name = "branch_ids", .type = JR_F_INT_ARRAY, .nullable = 1, .min = 1, .max = ID_MAX,
     .max_items = 1000},
    {NULL},
};

const jr_field_t jr_fields_key_update[] = {
    {.name = "name", .type = JR_F_STRING, .trim = 1, .min = 1, .max = 100},
    {.name = "scopes", .type = JR_F_STRING_ARRAY, .max_items = 2},
    {.name = "rate_limit_per_min", .type = JR_F_INT},
    {.name = "expires_at", .type = JR_F_STRING, .nullable = 1, .max = 64},
    {.name = "branch_ids", .type = JR_F_INT_ARRAY, .nullable = 1, .min = 1, .max = ID_MAX,
     .max_items = 1000},
    {NULL},
};

const jr_field_spec_t jr_fields_keys[] = {
    {"POST /api/api-keys", jr_fields_key_create},
    {"PUT /api/api-keys/:id", jr_fields_key_update},
    {NULL, NULL},
};

/* The members of a key's record; secret (create, rotate): the key itself, shown this once. */
static void key_write(jr_jw_t *w, const jr_rows_t *r, int i, const char *secret)
{
    char *scopes = apr_pstrdup(w->pool, jr_rows_get(r, i, "scopes")), *tok, *last;
    const char *branches = jr_rows_get(r, i, "branch_ids");
    jr_jw_obj(w);
    jr_jw_kint_text(w, "id", jr_rows_get(r, i, "id"));
    jr_jw_kstr(w, "name", jr_rows_get(r, i, "name"));
    jr_jw_kstr(w, "prefix", jr_rows_get(r, i, "prefix"));
    jr_jw_key(w, "scopes");
    jr_jw_arr(w);
    for (tok = apr_strtok(scopes, ",", &last); tok; tok = apr_strtok(NULL, ",", &last)) {
        jr_jw_str(w, tok);
    }
    jr_jw_arr_end(w);
    jr_jw_kint_text(w, "rate_limit_per_min", jr_rows_get(r, i, "rate_limit_per_min"));
    jr_jw_key(w, "branch_ids");
    /* Stored as a JSON array we wrote, or NULL for an unrestricted key. */
    if (branches && strcmp(branches, "[]")) {
        jr_jw_raw(w, branches);
    } else {
        jr_jw_null(w);
    }
    jr_jw_kstr(w, "expires_at", jr_rows_get(r, i, "expires_at"));
    jr_jw_kstr(w, "created_at", jr_rows_get(r, i, "created_at"));
    jr_jw_kint_text(w, "created_by", jr_rows_get(r, i, "created_by"));
    jr_jw_kstr(w, "updated_at", jr_rows_get(r, i, "updated_at"));
    jr_jw_kstr(w, "rotated_at", jr_rows_get(r, i, "rotated_at"));
    jr_jw_kstr(w, "last_used_at", jr_rows_get(r, i, "last_used_at"));
    jr_jw_kstr(w, "last_used_ip", jr_rows_get(r, i, "last_used_ip"));
    if (secret) {
        jr_jw_kstr(w, "key", secret);
    }
    jr_jw_obj_end(w);
}

void jr_key_write(jr_jw_t *w, const jr_rows_t *r, int i)
{
    key_write(w, r, i, NULL);
}

/* Keys belong to no branch; only admins manage them. */
static const jr_kind_t key_kind = {"API key", NULL, JR_Q_KEY_GET, JR_Q_KEY_GET, NULL, 0};

/* The key's row, NULL when absent or unreadable. */
static jr_rows_t *key_load(jr_ctx_t *ctx, long long id)
{
    jr_rows_t *rows;
    if (jr_db_select(ctx->db, ctx->pool, JR_Q_KEY_GET, &rows, JR_ARGS(jr_i64(ctx->pool, id))) !=
            APR_SUCCESS ||
        rows->nrows != 1) {
        return NULL;
    }
    return rows;
}

/* The answer of a key's record, with its secret when one is given. */
static int key_reply(jr_ctx_t *ctx, jr_result_t *res, int status, const jr_rows_t *r,
                     const char *secret)
{
    jr_jw_t w;
    jr_jw_init(&w, ctx->pool, 512);
    key_write(&w, r, 0, secret);
    return jr_reply_jw(res, status, &w);
}

int jr_op_keys_list(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    jr_rows_t *rows;
    jr_jw_t w;
    int i;
    if (jr_db_select(ctx->db, ctx->pool, JR_Q_KEYS_LIST, &rows, JR_NOARGS) != APR_SUCCESS) {
        return jr_err_db(ctx, res);
    }
    jr_jw_init(&w, ctx->pool, 512 * (size_t)(rows->nrows + 1));
    jr_jw_arr(&w);
    for (i = 0; i < rows->nrows; ++i) {
        jr_key_write(&w, rows, i);
    }
    jr_jw_arr_end(&w);
    return jr_reply_jw(res, 200, &w);
}

int jr_op_keys_meta(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    jr_jw_t w;
    jr_jw_init(&w, ctx->pool, 128);
    jr_jw_obj(&w);
    jr_jw_key(&w, "scopes");
    jr_jw_obj(&w);
    jr_jw_kbool(&w, "read", 1);
    jr_jw_kbool(&w, "write", 1);
    jr_jw_obj_end(&w);
    jr_jw_key(&w, "rate_limit_per_min");
    jr_jw_obj(&w);
    jr_jw_kint(&w, "min", 1);
    jr_jw_kint(&w, "max", ctx->cfg->rate_max);
    jr_jw_kint(&w, "default", ctx->cfg->rate_default);
    jr_jw_obj_end(&w);
    jr_jw_obj_end(&w);
    return jr_reply_jw(res, 200, &w);
}

int jr_op_keys_get(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    jr_rows_t *k = key_load(ctx, jr_param_id(ctx, "id"));
    if (!k) {
        return jr_err_not_found(ctx, res, "API key");
    }
    return key_reply(ctx, res, 200, k, NULL);
}

/* The validated, normalised values of a create or update body. NULL members: absent. */
typedef struct {
    const char *name, *scopes, *rate, *expires, *branches;
    int expires_given, branches_given;
} key_input_t;

/* scopes: a list of read and write, at least one. 0, or -1 with the answer in res. */
static int read_scopes(jr_ctx_t *ctx, const json_t *v, key_input_t *k, jr_result_t *res)
{
    int read = 0, write = 0;
    size_t i;
    json_t *e;
    json_array_foreach((json_t *)v, i, e) {
        const char *s = json_string_value(e);
        if (!strcmp(s, "read")) {
            read = 1;
        } else if (!strcmp(s, "write")) {
            write = 1;
        } else {
            jr_err_invalid(ctx, res, "scopes",
                           "scopes: '%s' is not a scope (allowed: read, write)", s);
            return -1;
        }
    }
    if (!read && !write) {
        jr_err_invalid(ctx, res, "scopes", "scopes must name at least one of read, write");
        return -1;
    }
    k->scopes = read && write ? "read,write" : read ? "read" : "write";
    return 0;
}

/* expires_at: null, or an ISO 8601 time in the future. */
static int read_expiry(jr_ctx_t *ctx, const json_t *v, key_input_t *k, jr_result_t *res)
{
    apr_time_t t;
    k->expires_given = 1;
    if (json_is_null(v)) {
        return 0;
    }
    if (jr_parse_iso_time(json_string_value(v), &t) != 0) {
        jr_err_invalid(ctx, res, "expires_at",
                       "expires_at must be an ISO 8601 timestamp such as 2027-01-31T12:00:00Z");
        return -1;
    }
    if (t <= apr_time_now()) {
        jr_err_invalid(ctx, res, "expires_at", "expires_at must be in the future");
        return -1;
    }
    k->expires = jr_iso_time(ctx->pool, t);
    return 0;
}

/* branch_ids: null (every branch) or branches that exist; never an empty list. */
static int read_branches(jr_ctx_t *ctx, const json_t *v, key_input_t *k, jr_result_t *res)
{
    apr_array_header_t *ids;
    apr_status_t rv;
    long long missing;
    k->branches_given = 1;
    if (json_is_array(v) && json_array_size(v) == 0) {
        /* "No branch" is no key at all; "every branch" is said with null or by leaving
         * the field out, so an empty list is never read as the widest access. */
        jr_err_invalid(ctx, res, "branch_ids",
                       "branch_ids: omit branch_ids or send null for an unrestricted key");
        return -1;
    }
    if (json_is_null(v)) {
        return 0;
    }
    ids = jr_ids_from_json(ctx->pool, v);
    missing = jr_branches_missing(ctx, ids, &rv);
    if (rv != APR_SUCCESS) {
        jr_err_db(ctx, res);
        return -1;
    }
    if (missing) {
        jr_err_invalid(ctx, res, "branch_ids", "branch_ids: branch %lld does not exist", missing);
        return -1;
    }
    k->branches = jr_ids_json(ctx->pool, ids);
    return 0;
}

/* The key's fields from a body the route checked. 0, or -1 with the answer in res. */
static int read_key_input(jr_ctx_t *ctx, const json_t *in, key_input_t *k, jr_result_t *res)
{
    json_t *v;
    memset(k, 0, sizeof(*k));
    k->name = jr_json_trimmed(ctx->pool, in, "name");
    if ((v = json_object_get(in, "scopes")) != NULL && read_scopes(ctx, v, k, res) != 0) {
        return -1;
    }
    if ((v = json_object_get(in, "rate_limit_per_min")) != NULL && !json_is_null(v)) {
        json_int_t n = json_integer_value(v);
        if (n < 1 || n > ctx->cfg->rate_max) {
            jr_err_invalid(ctx, res, "rate_limit_per_min",
                           "rate_limit_per_min must be an integer from 1 to %d",
                           ctx->cfg->rate_max);
            return -1;
        }
        k->rate = jr_i64(ctx->pool, n);
    }
    if ((v = json_object_get(in, "expires_at")) != NULL && read_expiry(ctx, v, k, res) != 0) {
        return -1;
    }
    if ((v = json_object_get(in, "branch_ids")) != NULL && read_branches(ctx, v, k, res) != 0) {
        return -1;
    }
    return 0;
}

/* The key's record read back after a write, with its secret after create and rotate. */
static int reply_with_secret(jr_ctx_t *ctx, jr_result_t *res, int status, long long id,
                             const char *secret)
{
    jr_rows_t *k = key_load(ctx, id);
    if (!k) {
        return jr_err_internal(ctx, res);
    }
    return key_reply(ctx, res, status, k, secret);
}

int jr_op_keys_create(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    const char *secret, *now = jr_now_iso(p);
    key_input_t k;
    jr_rows_t *rows;
    long long id;

    if (read_key_input(ctx, in, &k, res) != 0) {
        return res->status;
    }
    if (!(secret = jr_key_generate(p))) {
        return jr_err_internal(ctx, res);
    }
    if (jr_db_select(ctx->db, p, JR_Q_KEY_INSERT, &rows,
                     JR_ARGS(k.name, apr_pstrndup(p, secret, JR_KEY_SHOWN),
                             jr_sha256_hex(p, secret, strlen(secret)), k.scopes,
                             k.rate ? k.rate : jr_i64(p, ctx->cfg->rate_default), k.branches,
                             k.expires, now,
                             jr_opt_i64(p, ctx->who.user_id), now)) !=
            APR_SUCCESS ||
        rows->nrows != 1) {
        return jr_err_write(ctx, res, NULL);
    }
    id = jr_rows_int(rows, 0, "id", 0);
    if (jr_audit(ctx, "create", "api_key", id, jr_json_own(p, jr_json_keys(in))) != APR_SUCCESS) {
        return jr_err_write(ctx, res, NULL);
    }
    return reply_with_secret(ctx, res, 201, id, secret);
}

int jr_op_keys_update(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    long long id = jr_param_id(ctx, "id");
    jr_rows_t *rows;
    key_input_t k;
    int st;

    if ((st = jr_load(ctx, res, &key_kind, id, JR_LOAD_ROW, &rows)) != 0) {
        return st;
    }
    if (read_key_input(ctx, in, &k, res) != 0) {
        return res->status;
    }
    if (jr_db_exec(ctx->db, p, JR_Q_KEY_UPDATE, NULL,
                   JR_ARGS(k.name ? k.name : jr_rows_get(rows, 0, "name"),
                           k.scopes ? k.scopes : jr_rows_get(rows, 0, "scopes"),
                           k.rate ? k.rate : jr_rows_get(rows, 0, "rate_limit_per_min"),
                           k.branches_given ? k.branches : jr_rows_get(rows, 0, "branch_ids"),
                           k.expires_given ? k.expires : jr_rows_get(rows, 0, "expires_at"),
                           jr_now_iso(p), jr_i64(p, id))) != APR_SUCCESS ||
        jr_audit(ctx, "update", "api_key", id, jr_json_own(p, jr_json_keys(in))) != APR_SUCCESS) {
        return jr_err_write(ctx, res, NULL);
    }
    return reply_with_secret(ctx, res, 200, id, NULL);
}

int jr_op_keys_delete(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    long long id = jr_param_id(ctx, "id");
    int n = 0;
    if (jr_db_exec(ctx->db, p, JR_Q_KEY_DELETE, &n, JR_ARGS(jr_i64(p, id))) != APR_SUCCESS ||
        (n > 0 && jr_audit(ctx, "delete", "api_key", id, NULL) != APR_SUCCESS)) {
        return jr_err_write(ctx, res, NULL);
    }
    if (n == 0) {
        return jr_err_not_found(ctx, res, "API key");
    }
    return jr_reply_ok(res, p);
}

int jr_op_keys_rotate(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    long long id = jr_param_id(ctx, "id");
    const char *secret = jr_key_generate(p), *now = jr_now_iso(p);
    int n = 0;
    if (!secret) {
        return jr_err_internal(ctx, res);
    }
    if (jr_db_exec(ctx->db, p, JR_Q_KEY_ROTATE, &n,
                   JR_ARGS(apr_pstrndup(p, secret, JR_KEY_SHOWN),
                           jr_sha256_hex(p, secret, strlen(secret)), now, now, jr_i64(p, id))) !=
            APR_SUCCESS ||
        (n > 0 && jr_audit(ctx, "rotate", "api_key", id,
                           jr_json_own(p, json_pack("[s, s]", "key", "prefix"))) != APR_SUCCESS)) {
        return jr_err_write(ctx, res, NULL);
    }
    if (n == 0) {
        return jr_err_not_found(ctx, res, "API key");
    }
    return reply_with_secret(ctx, res, 200, id, secret);
}
