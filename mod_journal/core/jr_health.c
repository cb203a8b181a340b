#include "jr_ops.h"
#include "jr_json.h"

apr_status_t jr_op_health(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    jr_rows_t *rows = NULL;
    const char *db = "ok";
    long long schema = 0;

    if (!ctx->db) {
        db = "unavailable";
    } else if (jr_db_select(ctx->db, ctx->pool, "health_schema", &rows, JR_NOARGS) !=
               APR_SUCCESS) {
        db = "error";
    } else {
        schema = jr_rows_int(rows, 0, "version", 0);
    }
    return jr_reply(res, ctx->pool, *db == 'o' ? 200 : 503,
                    json_pack("{s:s, s:s, s:s, s:s?, s:I}", "status", *db == 'o' ? "ok" : "error",
                              "db", db, "version", JR_VERSION, "database",
                              ctx->db ? (ctx->db->dialect == JR_DB_PGSQL ? "pgsql" : "sqlite3")
                                      : NULL,
                              "schema_version", (json_int_t)schema));
}
