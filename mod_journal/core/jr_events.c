/* See jr_events.h. */
#include <string.h>

#include <apr_strings.h>

#include "jr_events.h"
#include "jr_log.h"
#include "jr_settings.h"
#include "jr_stmts.h"
#include "jr_util.h"

int jr_redis_address(apr_pool_t *p, const char *text, const char **host, int *port,
                     const char **sock)
{
    const char *colon = strrchr(text, ':');
    long long n;
    *host = *sock = NULL;
    *port = 0;
    if (text[0] == '/') {
        if (strpbrk(text, "\r\n")) {
            return -1;
        }
        *sock = apr_pstrdup(p, text);
        return 0;
    }
    if (!colon || colon == text || strpbrk(text, "/ \r\n") ||
        jr_parse_int64(colon + 1, 1, 65535, &n) != 0) {
        return -1;
    }
    *host = apr_pstrmemdup(p, text, (apr_size_t)(colon - text));
    *port = (int)n;
    return 0;
}

apr_status_t jr_event(jr_ctx_t *ctx, const char *type, long long branch_id,
                      const char *entity_type, long long entity_id, const char *payload)
{
    apr_pool_t *p = ctx->pool;
    ++ctx->events_written;
    return jr_db_exec(ctx->db, p, JR_Q_EVENT_INSERT, NULL,
                      JR_ARGS(type, jr_opt_i64(p, branch_id), entity_type,
                              jr_opt_i64(p, entity_id), payload, jr_now_iso(p)));
}

int jr_purge_batched(jr_ctx_t *ctx, jr_stmt_id_t id, const char *cutoff)
{
    int n = 0, batch;
    do {
        batch = 0;
        if (jr_db_begin(ctx->db) != APR_SUCCESS) {
            return -1;
        }
        if (jr_db_exec(ctx->db, ctx->pool, id, &batch, JR_ARGS(cutoff)) != APR_SUCCESS) {
            jr_db_rollback(ctx->db);
            return -1;
        }
        if (jr_db_commit(ctx->db) != APR_SUCCESS) {
            return -1;
        }
        n += batch;
    } while (batch == JR_PURGE_BATCH);
    return n;
}

int jr_purge_days(jr_ctx_t *ctx, jr_stmt_id_t id, jr_setting_id_t setting, long long *days)
{
    *days = 30;
    jr_parse_int64(jr_setting(ctx, setting), 1, 3650, days);
    return jr_purge_batched(
        ctx, id, jr_iso_time(ctx->pool, apr_time_now() - apr_time_from_sec(*days * 86400)));
}

int jr_events_trim(jr_ctx_t *ctx, long long max_age)
{
    apr_pool_t *p = ctx->pool;
    const char *cutoff = jr_iso_time(p, apr_time_now() - apr_time_from_sec(max_age));
    int n = jr_purge_batched(ctx, JR_Q_EVENTS_TRIM, cutoff);
    if (n > 0) {
        JR_LOG(JR07001, 0, "housekeeping removed %d events older than %lld s", n,
               max_age);
    }
    return n;
}
