/* User accounts (admin only): roles, branch memberships, active flag, passwords. */
#include <ctype.h>
#include <string.h>

#include <apr_strings.h>

#include "jr_crypt.h"
#include "jr_json.h"
#include "jr_users.h"
#include "jr_stmts.h"
#include "jr_util.h"

#define ID_MAX 9007199254740991LL

const jr_field_t jr_fields_user_create[] = {
    {.name = "username", .type = JR_F_STRING, .required = 1, .trim = 1, .min = 1, .max = 64},
    {.name = "password", .type = JR_F_STRING, .required = 1, .min = 8, .max = 72},
    {.name = "role", .type = JR_F_STRING, .required = 1},
    {.name = "active", .type = JR_F_BOOL},
    {.name = "branch_ids", .type = JR_F_INT_ARRAY, .min = 1, .max = ID_MAX, .max_items = 1000},
    {NULL},
};

const jr_field_t jr_fields_user_update[] = {
    {.name = "username", .type = JR_F_STRING, .trim = 1, .min = 1, .max = 64},
    {.name = "password", .type = JR_F_STRING, .min = 8, .max = 72},
    {.name = "role", .type = JR_F_STRING},
    {.name = "active", .type = JR_F_BOOL},
    {.name = "branch_ids", .type = JR_F_INT_ARRAY, .min = 1, .max = ID_MAX, .max_items = 1000},
    {NULL},
};

const jr_field_spec_t jr_fields_users[] = {
    {"POST /api/users", jr_fields_user_create},
    {"PUT /api/users/:id", jr_fields_user_update},
    {NULL, NULL},
};

/* Row i of a users statement with its branch ids. */
static void user_write(jr_jw_t *w, const jr_rows_t *rows, int i, const apr_array_header_t *ids)
{
    int k;
    jr_jw_obj(w);
    jr_jw_kint(w, "id", jr_rows_int(rows, i, "id", 0));
    jr_jw_kstr(w, "username", jr_rows_get(rows, i, "username"));
    jr_jw_kstr(w, "role", jr_rows_get(rows, i, "role"));
    jr_jw_kbool(w, "active", jr_rows_int(rows, i, "active", 0) == 1);
    jr_jw_key(w, "branch_ids");
    jr_jw_arr(w);
    for (k = 0; k < ids->nelts; ++k) {
        jr_jw_int(w, APR_ARRAY_IDX(ids, k, long long));
    }
    jr_jw_arr_end(w);
    jr_jw_kstr(w, "created_at", jr_rows_get(rows, i, "created_at"));
    jr_jw_kstr(w, "updated_at", jr_rows_get(rows, i, "updated_at"));
    jr_jw_obj_end(w);
}

apr_status_t jr_user_branch_ids(jr_ctx_t *ctx, long long user_id, apr_array_header_t **out)
{
    jr_rows_t *rows;
    apr_status_t rv;
    int i;
    *out = apr_array_make(ctx->pool, 4, sizeof(long long));
    rv = jr_db_select(ctx->db, ctx->pool, JR_Q_USER_BRANCH_IDS, &rows,
                      JR_ARGS(jr_i64(ctx->pool, user_id)));
    if (rv != APR_SUCCESS) {
        return rv;
    }
    for (i = 0; i < rows->nrows; ++i) {
        APR_ARRAY_PUSH(*out, long long) = jr_rows_int(rows, i, "branch_id", 0);
    }
    return APR_SUCCESS;
}

void jr_user_write(jr_jw_t *w, const jr_user_t *u)
{
    user_write(w, u->rows, 0, u->branch_ids);
}

int jr_user_load(jr_ctx_t *ctx, long long id, jr_user_t *u)
{
    return jr_db_select(ctx->db, ctx->pool, JR_Q_USER_GET, &u->rows,
                        JR_ARGS(jr_i64(ctx->pool, id))) == APR_SUCCESS &&
           u->rows->nrows == 1 && jr_user_branch_ids(ctx, id, &u->branch_ids) == APR_SUCCESS;
}

/* The answer of one user. */
static int user_reply(jr_ctx_t *ctx, jr_result_t *res, int status, const jr_user_t *u)
{
    jr_jw_t w;
    jr_jw_init(&w, ctx->pool, 256);
    jr_user_write(&w, u);
    return jr_reply_jw(res, status, &w);
}

long long jr_branches_missing(jr_ctx_t *ctx, const apr_array_header_t *ids, apr_status_t *rv)
{
    jr_rows_t *rows;
    int i, j;
    *rv = APR_SUCCESS;
    if (ids->nelts == 0) {
        return 0;
    }
    *rv = jr_db_select(ctx->db, ctx->pool, JR_Q_BRANCHES_EXISTING, &rows,
                       JR_ARGS(jr_ids_json(ctx->pool, ids)));
    if (*rv != APR_SUCCESS) {
        return 0;
    }
    for (i = 0; i < ids->nelts; ++i) {
        long long want = APR_ARRAY_IDX(ids, i, long long);
        for (j = 0; j < rows->nrows && jr_rows_int(rows, j, "id", 0) != want; ++j) {
        }
        if (j == rows->nrows) {
            return want;
        }
    }
    return 0;
}

int jr_op_users_list(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    jr_rows_t *users, *links;
    apr_array_header_t *ids = apr_array_make(ctx->pool, 8, sizeof(long long));
    jr_jw_t w;
    int i, k = 0;
    if (jr_db_select(ctx->db, ctx->pool, JR_Q_USERS_LIST, &users, JR_NOARGS) != APR_SUCCESS ||
        jr_db_select(ctx->db, ctx->pool, JR_Q_USERS_BRANCHES_ALL, &links, JR_NOARGS) !=
            APR_SUCCESS) {
        return jr_err_db(ctx, res);
    }
    jr_jw_init(&w, ctx->pool, 4096);
    jr_jw_arr(&w);
    for (i = 0; i < users->nrows; ++i) {
        long long uid = jr_rows_int(users, i, "id", 0);
        apr_array_clear(ids);
        /* Both lists are ordered by user id: one merge pass. */
        while (k < links->nrows && jr_rows_int(links, k, "user_id", 0) < uid) {
            ++k;
        }
        for (; k < links->nrows && jr_rows_int(links, k, "user_id", 0) == uid; ++k) {
            APR_ARRAY_PUSH(ids, long long) = jr_rows_int(links, k, "branch_id", 0);
        }
        user_write(&w, users, i, ids);
    }
    jr_jw_arr_end(&w);
    return jr_reply_jw(res, 200, &w);
}

int jr_op_users_get(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    jr_user_t u;
    if (!jr_user_load(ctx, jr_param_id(ctx, "id"), &u)) {
        return jr_err_not_found(ctx, res, "user");
    }
    return user_reply(ctx, res, 200, &u);
}

static const char *check_username(apr_pool_t *p, const char *name)
{
    const char *c;
    for (c = name; *c; ++c) {
        if (!isalnum((unsigned char)*c) && !strchr("._@-", *c)) {
            return "username may contain only letters, digits and . _ @ -";
        }
    }
    return NULL;
}

/* Validation shared by create and update, before any write. Fills the normalised values. */
typedef struct {
    const char *username;
    const char *hash;
    const char *role;
    const char *active;
    apr_array_header_t *branch_ids; /* NULL: unchanged */
} user_input_t;

static int read_user_input(jr_ctx_t *ctx, const json_t *in, long long self_id, user_input_t *u,
                           jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    const char *password = jr_json_str(in, "password", NULL), *msg;
    json_t *v;
    jr_rows_t *rows;
    apr_status_t rv;
    long long missing;

    memset(u, 0, sizeof(*u));
    if ((u->username = jr_json_trimmed(p, in, "username")) != NULL) {
        u->username = jr_ascii_lower(p, u->username);
        if ((msg = check_username(p, u->username)) != NULL) {
            jr_err_body(ctx, res, msg);
            return -1;
        }
    }
    if ((u->role = jr_json_str(in, "role", NULL)) && strcmp(u->role, "admin") &&
        strcmp(u->role, "tutor")) {
        jr_err_invalid(ctx, res, "role", "role must be 'admin' or 'tutor'");
        return -1;
    }
    if (password && strlen(password) > 72) {
        jr_err_invalid(ctx, res, "password", "password must be at most 72 bytes");
        return -1;
    }
    if ((v = json_object_get(in, "active")) != NULL) {
        u->active = json_is_true(v) ? "1" : "0";
    }
    if ((v = json_object_get(in, "branch_ids")) != NULL) {
        u->branch_ids = jr_ids_from_json(p, v);
        missing = jr_branches_missing(ctx, u->branch_ids, &rv);
        if (rv != APR_SUCCESS) {
            jr_err_db(ctx, res);
            return -1;
        }
        if (missing) {
            jr_err_invalid(ctx, res, "branch_ids", "branch_ids: branch %lld does not exist",
                           missing);
            return -1;
        }
    }
    if (u->username) {
        if (jr_db_select(ctx->db, p, JR_Q_USER_NAME_TAKEN, &rows,
                         JR_ARGS(u->username, jr_i64(p, self_id))) != APR_SUCCESS) {
            jr_err_db(ctx, res);
            return -1;
        }
        if (rows->nrows > 0) {
            jr_err_conflict(ctx, res, "username '%s' is already taken", u->username);
            return -1;
        }
    }
    if (password && !(u->hash = jr_password_hash(p, password, ctx->cfg->bcrypt_cost))) {
        jr_err_internal(ctx, res);
        return -1;
    }
    return 0;
}

static apr_status_t write_branches(jr_ctx_t *ctx, long long uid, const apr_array_header_t *ids)
{
    apr_pool_t *p = ctx->pool;
    const char *u = jr_i64(p, uid);
    int i;
    if (jr_db_exec(ctx->db, p, JR_Q_USER_BRANCHES_CLEAR, NULL, JR_ARGS(u)) != APR_SUCCESS) {
        return APR_EGENERAL;
    }
    for (i = 0; i < ids->nelts; ++i) {
        if (jr_db_exec(ctx->db, p, JR_Q_USER_BRANCH_ADD, NULL,
                       JR_ARGS(u, jr_i64(p, APR_ARRAY_IDX(ids, i, long long)))) != APR_SUCCESS) {
            return APR_EGENERAL;
        }
    }
    return APR_SUCCESS;
}

int jr_op_users_create(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    const char *now = jr_now_iso(p);
    user_input_t u;
    jr_rows_t *rows;
    long long uid;
    jr_user_t user;

    if (read_user_input(ctx, in, 0, &u, res) != 0) {
        return res->status;
    }
    if (jr_db_select(ctx->db, p, JR_Q_USER_INSERT, &rows,
                     JR_ARGS(u.username, u.hash, u.role, u.active ? u.active : "1", now, now)) !=
            APR_SUCCESS ||
        rows->nrows != 1) {
        return jr_err_write(ctx, res, "username is already taken");
    }
    uid = jr_rows_int(rows, 0, "id", 0);
    if ((u.branch_ids && write_branches(ctx, uid, u.branch_ids) != APR_SUCCESS) ||
        jr_audit(ctx, "create", "user", uid, jr_json_own(p, jr_json_keys(in))) != APR_SUCCESS) {
        return jr_err_write(ctx, res, NULL);
    }
    if (!jr_user_load(ctx, uid, &user)) {
        return jr_err_internal(ctx, res);
    }
    return user_reply(ctx, res, 201, &user);
}

/* The last active admin must stay an active admin, or nobody can administer the journal. */
static int would_orphan_admins(jr_ctx_t *ctx, const jr_user_t *target, int removing, int *err)
{
    jr_rows_t *rows;
    *err = 0;
    if (!removing || strcmp(jr_rows_get(target->rows, 0, "role"), "admin") ||
        jr_rows_int(target->rows, 0, "active", 0) != 1) {
        return 0;
    }
    if (jr_db_select(ctx->db, ctx->pool, JR_Q_ADMINS_OTHER_ACTIVE, &rows,
                     JR_ARGS(jr_rows_get(target->rows, 0, "id"))) !=
        APR_SUCCESS) {
        *err = 1;
        return 0;
    }
    return rows->nrows == 0;
}

int jr_op_users_update(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    long long id = jr_param_id(ctx, "id");
    jr_user_t target, user;
    user_input_t u;
    int removing, dberr;

    if (!jr_user_load(ctx, id, &target)) {
        return jr_err_not_found(ctx, res, "user");
    }
    if (read_user_input(ctx, in, id, &u, res) != 0) {
        return res->status;
    }
    removing = (u.role && !strcmp(u.role, "tutor")) || (u.active && !strcmp(u.active, "0"));
    if (would_orphan_admins(ctx, &target, removing, &dberr) || dberr) {
        return dberr ? jr_err_db(ctx, res)
                     : jr_err_conflict(ctx, res,
                                       "the last active admin cannot be demoted or deactivated");
    }
    if (jr_db_exec(ctx->db, p, JR_Q_USER_UPDATE, NULL,
                   JR_ARGS(u.username, u.hash, u.role, u.active, jr_now_iso(p), jr_i64(p, id))) !=
            APR_SUCCESS ||
        (u.branch_ids && write_branches(ctx, id, u.branch_ids) != APR_SUCCESS) ||
        /* A new password or a deactivation ends the user's sessions. */
        ((u.hash || (u.active && !strcmp(u.active, "0"))) &&
         jr_db_exec(ctx->db, p, JR_Q_SESSION_DELETE_USER, NULL, JR_ARGS(jr_i64(p, id))) !=
             APR_SUCCESS) ||
        jr_audit(ctx, "update", "user", id, jr_json_own(p, jr_json_keys(in))) != APR_SUCCESS) {
        return jr_err_write(ctx, res, "username is already taken");
    }
    if (!jr_user_load(ctx, id, &user)) {
        return jr_err_internal(ctx, res);
    }
    return user_reply(ctx, res, 200, &user);
}

int jr_op_users_delete(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    long long id = jr_param_id(ctx, "id");
    jr_user_t target;
    int dberr;

    if (!jr_user_load(ctx, id, &target)) {
        return jr_err_not_found(ctx, res, "user");
    }
    if (id == ctx->who.user_id) {
        return jr_err_conflict(ctx, res, "you cannot delete your own account");
    }
    if (would_orphan_admins(ctx, &target, 1, &dberr) || dberr) {
        return dberr ? jr_err_db(ctx, res)
                     : jr_err_conflict(ctx, res, "the last active admin cannot be deleted");
    }
    if (jr_db_exec(ctx->db, p, JR_Q_USER_DELETE, NULL, JR_ARGS(jr_i64(p, id))) != APR_SUCCESS ||
        jr_audit(ctx, "delete", "user", id, NULL) != APR_SUCCESS) {
        return jr_err_write(ctx, res, NULL);
    }
    return jr_reply_ok(res, p);
}
