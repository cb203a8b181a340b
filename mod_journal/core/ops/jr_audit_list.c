/* The audit log, newest first, for administrators. */
#include <string.h>

#include <apr_strings.h>

#include "jr_json.h"
#include "jr_audit_list.h"
#include "jr_stmts.h"
#include "jr_util.h"

static json_t *opt_int(const jr_rows_t *r, int i, const char *col)
{
    return jr_rows_get(r, i, col) ? json_integer(jr_rows_int(r, i, col, 0)) : json_null();
}

static json_t *audit_json(apr_pool_t *p, const jr_rows_t *r, int i)
{
    const char *ch = jr_rows_get(r, i, "changes"), *ip = jr_rows_get(r, i, "client_ip");
    const char *ent = jr_rows_get(r, i, "entity_id"), *err = NULL;
    const char *actor = jr_rows_get(r, i, "actor_key_id")
                            ? apr_pstrcat(p, "key:", jr_rows_get(r, i, "actor_key_id"), NULL)
                        : jr_rows_get(r, i, "actor_user_id")
                            ? apr_pstrcat(p, "user:", jr_rows_get(r, i, "actor_user_id"), NULL)
                            : NULL;
    json_t *changes = ch ? jr_json_parse(p, ch, strlen(ch), &err) : NULL;
    return json_pack("{s:I, s:s, s:o, s:o, s:o, s:b, s:o, s:s, s:s, s:o, s:o}", "id",
                     (json_int_t)jr_rows_int(r, i, "id", 0), "created_at",
                     jr_rows_get(r, i, "created_at"), "actor",
                     actor ? json_string(actor) : json_null(), "actor_user_id",
                     opt_int(r, i, "actor_user_id"), "actor_key_id", opt_int(r, i, "actor_key_id"),
                     "via_api_key", jr_rows_int(r, i, "via_api_key", 0) == 1, "client_ip",
                     ip ? json_string(ip) : json_null(), "action", jr_rows_get(r, i, "action"),
                     "entity_type", jr_rows_get(r, i, "entity_type"), "entity_id",
                     ent ? json_string(ent) : json_null(), "changes",
                     changes ? json_incref(changes) : json_array());
}

/* actor=user:N, key:N or N (a user id). */
static int parse_actor(const char *s, const char **user, const char **key)
{
    long long id;
    const char *num = s;
    const char **dst = user;
    if (!strncmp(s, "user:", 5)) {
        num = s + 5;
    } else if (!strncmp(s, "key:", 4)) {
        num = s + 4;
        dst = key;
    }
    if (jr_parse_int64(num, 1, 9007199254740991LL, &id) != 0) {
        return -1;
    }
    *dst = num;
    return 0;
}

int jr_op_audit_list(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    const char *type = apr_table_get(ctx->query, "entity_type");
    const char *ent = apr_table_get(ctx->query, "entity_id");
    const char *actor = apr_table_get(ctx->query, "actor");
    const char *via = apr_table_get(ctx->query, "via_api_key");
    const char *user = NULL, *key = NULL, *v = NULL;
    long long limit, offset;
    jr_rows_t *rows, *count;
    json_t *items;
    int i;

    if (jr_list_params(ctx, res, &limit, &offset) != 0) {
        return res->status;
    }
    if (actor && *actor && parse_actor(actor, &user, &key) != 0) {
        return jr_err_invalid(ctx, res, "actor", "actor must be user:ID, key:ID or a user id");
    }
    if (via && *via) {
        if (!strcmp(via, "true") || !strcmp(via, "1")) {
            v = "1";
        } else if (!strcmp(via, "false") || !strcmp(via, "0")) {
            v = "0";
        } else {
            return jr_err_invalid(ctx, res, "via_api_key", "via_api_key must be true or false");
        }
    }
    type = type && *type ? type : NULL;
    ent = ent && *ent ? ent : NULL;
    if (jr_db_select(ctx->db, p, JR_Q_AUDIT_LIST, &rows,
                     JR_ARGS(type, type, ent, ent, user, user, key, key, v, v, jr_i64(p, limit),
                             jr_i64(p, offset))) != APR_SUCCESS ||
        jr_db_select(ctx->db, p, JR_Q_AUDIT_COUNT, &count,
                     JR_ARGS(type, type, ent, ent, user, user, key, key, v, v)) != APR_SUCCESS) {
        return jr_err_db(ctx, res);
    }
    items = json_array();
    for (i = 0; i < rows->nrows; ++i) {
        json_array_append_new(items, audit_json(p, rows, i));
    }
    return jr_reply(res, p, 200,
                    json_pack("{s:o, s:I, s:I, s:I}", "items", items, "total",
                              (json_int_t)jr_rows_int(count, 0, "n", 0), "limit",
                              (json_int_t)limit, "offset", (json_int_t)offset));
}
