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

/* The values of one event row, in the order of EVENT_INSERT's placeholders. */
#define EVENT_VALUES 6

/* The rows of an insert by how many it writes: JR_EVENTS_INSERT_MAX at most per statement. */
static const jr_stmt_id_t event_inserts[JR_EVENTS_INSERT_MAX + 1] = {
    0, JR_Q_EVENT_INSERT, JR_Q_EVENT_INSERT_2, JR_Q_EVENT_INSERT_3, JR_Q_EVENT_INSERT_4};

static apr_status_t insert_events(jr_db_t *db, apr_pool_t *p, const char **values, int n)
{
    while (n > 0) {
        int k = n < JR_EVENTS_INSERT_MAX ? n : JR_EVENTS_INSERT_MAX;
        apr_status_t rv = jr_db_exec_later(db, p, event_inserts[k], k * EVENT_VALUES, values);
        if (rv != APR_SUCCESS) {
            return rv;
        }
        values += k * EVENT_VALUES;
        n -= k;
    }
    return APR_SUCCESS;
}

/* Before the COMMIT: the transaction's events (baton: their values, row after row), in the
 * order they came, in as few statements as jr_events_sql.h allows. */
static apr_status_t flush_events(jr_db_t *db, void *baton)
{
    apr_array_header_t *rows = baton;
    return insert_events(db, rows->pool, (const char **)rows->elts, rows->nelts / EVENT_VALUES);
}

apr_status_t jr_event(jr_ctx_t *ctx, const char *type, long long branch_id,
                      const char *entity_type, long long entity_id, const char *payload)
{
    apr_pool_t *p = ctx->pool;
    const char *values[EVENT_VALUES];
    apr_array_header_t *rows;
    int i;
    values[0] = type;
    values[1] = jr_opt_i64(p, branch_id);
    values[2] = entity_type;
    values[3] = jr_opt_i64(p, entity_id);
    values[4] = payload;
    values[5] = jr_now_iso(p);
    ++ctx->events_written;
    /* Outside a begun transaction the row is written at once: as a write of its own, or as
     * the first write of an armed one, which begins it (nothing gathered is ever left to a
     * transaction of jr_tx_run that runs before the armed one begins). */
    if (!ctx->db->in_tx) {
        return insert_events(ctx->db, p, values, 1);
    }
    /* In a transaction the rows wait for its end: a create that tells of its entry, its
     * notification and its AI status writes them with one statement, not three (on
     * PostgreSQL two round trips fewer), and nothing reads the events of a transaction
     * before it commits (the stream reads committed rows). */
    if (!(rows = jr_db_before_commit_baton(ctx->db, flush_events))) {
        rows = apr_array_make(p, 4 * EVENT_VALUES, sizeof(const char *));
        jr_db_before_commit(ctx->db, flush_events, rows);
    }
    for (i = 0; i < EVENT_VALUES; ++i) {
        APR_ARRAY_PUSH(rows, const char *) = values[i];
    }
    return APR_SUCCESS;
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
