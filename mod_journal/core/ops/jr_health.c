#include <apr_atomic.h>

#include "jr_health.h"
#include "jr_json.h"

/* The database half of the health answer: "ok", "unavailable" (no connection), "schema behind"
 * (its schema is older than the module's: *need is set) or "error" (the query failed). */
static const char *db_state(jr_ctx_t *ctx, long long *schema, int *need)
{
    jr_rows_t *rows = NULL;
    int have;
    if (!ctx->db) {
        return "unavailable";
    }
    if (jr_db_schema_behind(ctx->db, &have, need)) {
        *schema = have;
        return "schema behind";
    }
    if (jr_db_select(ctx->db, ctx->pool, JR_Q_HEALTH_SCHEMA, &rows, JR_NOARGS) != APR_SUCCESS) {
        return "error";
    }
    *schema = jr_rows_int(rows, 0, "version", 0);
    return "ok";
}

int jr_op_health(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    long long schema = 0;
    int need = 0;
    const char *db = db_state(ctx, &schema, &need);
    json_t *out = json_pack(
        "{s:s, s:s, s:s, s:s?, s:I}", "status", *db == 'o' ? "ok" : "error", "db", db, "version",
        JR_VERSION, "database",
        ctx->db ? (ctx->db->dialect == JR_DB_PGSQL ? "pgsql" : "sqlite3") : NULL,
        "schema_version", (json_int_t)schema);
    if (need) {
        json_object_set_new(out, "schema_needed", json_integer(need));
    }
    json_object_set_new(out, "ai", jr_ai_describe(ctx->cfg, NULL, 0));
    return jr_reply(res, ctx->pool, *db == 'o' ? 200 : 503, out);
}

int jr_workers_running(const jr_worker_census_t *census, apr_uint32_t now)
{
    int i, n = 0;
    for (i = 0; i < JR_WORKER_SLOTS; ++i) {
        /* apr_atomic_read32 takes a non-const pointer; it only reads. */
        volatile apr_uint32_t *pid = (volatile apr_uint32_t *)&census->slot[i].pid;
        volatile apr_uint32_t *from = (volatile apr_uint32_t *)&census->slot[i].from;
        n += apr_atomic_read32(pid) != 0 && apr_atomic_read32(from) <= now;
    }
    return n;
}

/* Worker processes at work, as httpd's parent counts them: null when this httpd does not
 * supervise them (they may run elsewhere, nobody here knows). */
static json_t *workers_running(const jr_config_t *cfg)
{
    return cfg->worker_supervised && cfg->workers
               ? json_integer(jr_workers_running(cfg->workers,
                                                 (apr_uint32_t)apr_time_sec(apr_time_now())))
               : json_null();
}

json_t *jr_ai_describe(const jr_config_t *cfg, json_t *into, int detail)
{
    const jr_worker_census_t *census = cfg->worker_supervised ? cfg->workers : NULL;
    json_t *out = into ? into : json_object();
    json_object_set_new(out, "configured", json_boolean(cfg->ai_endpoint != NULL));
    if (!detail) {
        json_object_set_new(out, "workers_running", workers_running(cfg));
        return out;
    }
    /* Never the endpoint (it names internal hosts) and never anything of the key. */
    json_object_set_new(out, "model", cfg->ai_model ? json_string(cfg->ai_model) : json_null());
    json_object_set_new(
        out, "workers",
        json_pack("{s:b, s:i, s:o, s:I, s:o}", "supervised", cfg->worker_supervised != 0,
                  "processes", cfg->worker_supervised ? cfg->worker_processes : 0, "running",
                  workers_running(cfg), "restarts",
                  (json_int_t)(census ? apr_atomic_read32((apr_uint32_t *)&census->restarts) : 0),
                  "binary",
                  census ? json_boolean(apr_atomic_read32((apr_uint32_t *)&census->binary))
                         : json_null()));
    return out;
}
