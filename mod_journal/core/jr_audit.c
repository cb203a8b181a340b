#include "jr_ctx.h"
#include "jr_json.h"
#include "jr_stmts.h"
#include "jr_util.h"

const jr_stmt_def_t jr_stmts_core[] = {
    {"audit_insert",
     "INSERT INTO audit_log (created_at, actor_user_id, actor_key_id, via_api_key, client_ip,"
     " action, entity_type, entity_id, changes) VALUES (%s, " JR_INT ", " JR_INT ", CAST(%s AS INTEGER), %s, %s, %s, %s, %s)",
     NULL},
    {"health_schema", "SELECT COALESCE(MAX(version), 0) AS version FROM schema_migrations", NULL},
    {NULL, NULL, NULL},
};

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
    return jr_db_exec(ctx->db, p, "audit_insert", NULL,
                      JR_ARGS(jr_now_iso(p), jr_opt_i64(p, ctx->who.user_id),
                              jr_opt_i64(p, ctx->who.key_id),
                              ctx->who.via_api_key ? "1" : "0", ctx->client_ip, action,
                              entity_type, entity_ref, ch));
}
