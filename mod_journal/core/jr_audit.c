#include "jr_ctx.h"
#include "jr_json.h"
#include "jr_stmts.h"
#include "jr_util.h"

apr_status_t jr_audit(jr_ctx_t *ctx, const char *action, const char *entity_type,
                      long long entity_id, const json_t *changes)
{
    return jr_audit_ref(ctx, action, entity_type, entity_id ? jr_i64(ctx->pool, entity_id) : NULL,
                        changes);
}

apr_status_t jr_audit_ref(jr_ctx_t *ctx, const char *action, const char *entity_type,
                          const char *entity_ref, const json_t *changes)
{
    apr_pool_t *p = ctx->pool;
    const char *ch = NULL;
    if (changes && json_array_size(changes) > 0) {
        ch = jr_json_dump(p, changes, NULL);
    }
    return jr_db_exec_later(ctx->db, p, JR_Q_AUDIT_INSERT,
                            JR_ARGS(jr_now_iso(p), jr_opt_i64(p, ctx->who.user_id),
                                    jr_opt_i64(p, ctx->who.key_id),
                                    ctx->who.via_api_key ? "1" : "0", ctx->client_ip, action,
                                    entity_type, entity_ref, ch));
}
