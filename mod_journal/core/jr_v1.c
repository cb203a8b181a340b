/* Operations of the external interface that have no administrative twin. */
#include "jr_json.h"
#include "jr_keys.h"
#include "jr_ops.h"

apr_status_t jr_op_v1_me(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    /* The record read at authentication: no second query. */
    json_t *key = jr_json_own(ctx->pool, jr_key_json(ctx->pool, ctx->who.key_row, 0));
    json_t *ids = json_array();
    int i;
    for (i = 0; ctx->who.branch_json && i < ctx->who.branch_ids->nelts; ++i) {
        json_array_append_new(ids, json_integer(APR_ARRAY_IDX(ctx->who.branch_ids, i, long long)));
    }
    return jr_reply(res, ctx->pool, 200,
                    json_pack("{s:{s:s, s:o, s:b, s:b}, s:O}", "user", "role",
                              ctx->who.role == JR_ROLE_ADMIN ? "admin" : "tutor", "branch_ids",
                              ids, "can_read", ctx->who.can_read, "can_write", ctx->who.can_write,
                              "key", key));
}
