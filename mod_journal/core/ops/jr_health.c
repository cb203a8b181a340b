#include <apr_atomic.h>

#include "jr_health.h"
#include "jr_json.h"
#include "jr_jw.h"

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
    jr_jw_t w;
    jr_jw_init(&w, ctx->pool, 256);
    jr_jw_obj(&w);
    jr_jw_kstr(&w, "status", *db == 'o' ? "ok" : "error");
    jr_jw_kstr(&w, "db", db);
    jr_jw_kstr(&w, "version", JR_VERSION);
    jr_jw_kstr(&w, "database",
               ctx->db ? (ctx->db->dialect == JR_DB_PGSQL ? "pgsql" : "sqlite3") : NULL);
    jr_jw_kint(&w, "schema_version", schema);
    if (need) {
        jr_jw_kint(&w, "schema_needed", need);
    }
    jr_jw_key(&w, "ai");
    jr_jw_obj(&w);
    jr_ai_describe(&w, ctx->cfg, 0);
    jr_jw_obj_end(&w);
    jr_jw_obj_end(&w);
    return jr_reply_jw(res, *db == 'o' ? 200 : 503, &w);
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
static void workers_running(jr_jw_t *w, const char *key, const jr_config_t *cfg)
{
    jr_jw_key(w, key);
    if (cfg->worker_supervised && cfg->workers) {
        jr_jw_int(w, jr_workers_running(cfg->workers, (apr_uint32_t)apr_time_sec(apr_time_now())));
    } else {
        jr_jw_null(w);
    }
}

void jr_ai_describe(jr_jw_t *w, const jr_config_t *cfg, int detail)
{
    const jr_worker_census_t *census = cfg->worker_supervised ? cfg->workers : NULL;
    jr_jw_kbool(w, "configured", cfg->ai_endpoint != NULL);
    if (!detail) {
        workers_running(w, "workers_running", cfg);
        return;
    }
    /* Never the endpoint (it names internal hosts) and never anything of the key. */
    jr_jw_kstr(w, "model", cfg->ai_model);
    jr_jw_key(w, "workers");
    jr_jw_obj(w);
    jr_jw_kbool(w, "supervised", cfg->worker_supervised != 0);
    jr_jw_kint(w, "processes", cfg->worker_supervised ? cfg->worker_processes : 0);
    workers_running(w, "running", cfg);
    jr_jw_kint(w, "restarts",
               census ? apr_atomic_read32((apr_uint32_t *)&census->restarts) : 0);
    jr_jw_key(w, "binary");
    if (census) {
        jr_jw_bool(w, apr_atomic_read32((apr_uint32_t *)&census->binary) != 0);
    } else {
        jr_jw_null(w);
    }
    jr_jw_obj_end(w);
}
