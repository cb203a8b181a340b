/* The audit log, newest first, for administrators. */
#include <string.h>

#include <apr_strings.h>

#include "jr_json.h"
#include "jr_jw.h"
#include "jr_audit_list.h"
#include "jr_stmts.h"
#include "jr_util.h"

static void audit_write(apr_pool_t *p, jr_jw_t *w, const jr_rows_t *r, int i)
{
    const char *ch = jr_rows_get(r, i, "changes"), *err = NULL;
    const char *actor = jr_rows_get(r, i, "actor_key_id")
                            ? apr_pstrcat(p, "key:", jr_rows_get(r, i, "actor_key_id"), NULL)
                        : jr_rows_get(r, i, "actor_user_id")
                            ? apr_pstrcat(p, "user:", jr_rows_get(r, i, "actor_user_id"), NULL)
                            : NULL;
    jr_jw_obj(w);
    jr_jw_kint(w, "id", jr_rows_int(r, i, "id", 0));
    jr_jw_kstr(w, "created_at", jr_rows_get(r, i, "created_at"));
    jr_jw_kstr(w, "actor", actor);
    jr_jw_kint_text(w, "actor_user_id", jr_rows_get(r, i, "actor_user_id"));
    jr_jw_kint_text(w, "actor_key_id", jr_rows_get(r, i, "actor_key_id"));
    jr_jw_kbool(w, "via_api_key", jr_rows_int(r, i, "via_api_key", 0) == 1);
    jr_jw_kstr(w, "client_ip", jr_rows_get(r, i, "client_ip"));
    jr_jw_kstr(w, "action", jr_rows_get(r, i, "action"));
    jr_jw_kstr(w, "entity_type", jr_rows_get(r, i, "entity_type"));
    jr_jw_kstr(w, "entity_id", jr_rows_get(r, i, "entity_id"));
    /* The stored field names, as jr_audit wrote them (compact JSON); unreadable text: none. */
    jr_jw_key(w, "changes");
    jr_jw_raw(w, ch && jr_json_parse(p, ch, strlen(ch), &err) ? ch : "[]");
    jr_jw_obj_end(w);
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
    jr_jw_t w;
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
    /* The envelope on both interfaces: the audit log has always answered it. */
    jr_jw_init(&w, p, 4096);
    jr_jw_obj(&w);
    jr_jw_key(&w, "items");
    jr_jw_arr(&w);
    for (i = 0; i < rows->nrows; ++i) {
        audit_write(p, &w, rows, i);
    }
    jr_jw_arr_end(&w);
    jr_jw_kint(&w, "total", jr_rows_int(count, 0, "n", 0));
    jr_jw_kint(&w, "limit", limit);
    jr_jw_kint(&w, "offset", offset);
    jr_jw_obj_end(&w);
    return jr_reply_jw(res, 200, &w);
}
