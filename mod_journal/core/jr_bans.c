#include <arpa/inet.h>
#include <string.h>

#include <apr_strings.h>

#include "jr_bans.h"
#include "jr_counters.h"
#include "jr_json.h"
#include "jr_log.h"
#include "jr_notif.h"
#include "jr_stmts.h"
#include "jr_util.h"

const char *jr_ip_subject(apr_pool_t *p, const char *ip)
{
    struct in6_addr a;
    char buf[INET6_ADDRSTRLEN];
    if (!ip || !strchr(ip, ':') || inet_pton(AF_INET6, ip, &a) != 1) {
        return ip;
    }
    if (IN6_IS_ADDR_V4MAPPED(&a)) {
        return inet_ntop(AF_INET, &a.s6_addr[12], buf, sizeof(buf)) ? apr_pstrdup(p, buf) : ip;
    }
    memset(&a.s6_addr[8], 0, 8);
    return inet_ntop(AF_INET6, &a, buf, sizeof(buf)) ? apr_pstrcat(p, buf, "/64", NULL) : ip;
}

int jr_ban_refuse(jr_ctx_t *ctx, jr_result_t *res)
{
    return jr_fail(res, ctx->pool, 403, "this IP address is banned; ask an administrator");
}

int jr_ban_check(jr_ctx_t *ctx, jr_result_t *res)
{
    jr_rows_t *rows;
    if (!ctx->client_ip) {
        return 0;
    }
    if (jr_db_select(ctx->db, ctx->pool, JR_Q_BAN_CHECK, &rows,
                     JR_ARGS(ctx->client_ip, jr_ip_subject(ctx->pool, ctx->client_ip),
                             jr_now_iso(ctx->pool))) != APR_SUCCESS) {
        jr_err_db(ctx, res);
        return -1;
    }
    if (rows->nrows > 0) {
        jr_ban_refuse(ctx, res);
        return 1;
    }
    return 0;
}

typedef struct {
    const char *subject, *reason, *until;
} ban_t;

/* The ban's rows, in jr_tx_run's transaction: it stands whatever the request answers. */
static apr_status_t ban_write(jr_ctx_t *ctx, void *baton)
{
    const ban_t *b = baton;
    apr_pool_t *p = ctx->pool;
    const char *now = jr_now_iso(p);
    apr_status_t rv;
    /* Expired rows are cleared whenever a ban is written: the table stays small. */
    if ((rv = jr_db_exec(ctx->db, p, JR_Q_BANS_PURGE, NULL, JR_ARGS(now))) != APR_SUCCESS ||
        (rv = jr_db_exec(ctx->db, p, JR_Q_BAN_UPSERT, NULL,
                         JR_ARGS(b->subject, b->reason, now, b->until))) != APR_SUCCESS ||
        (rv = jr_audit_ref(ctx, "ban", "ip", b->subject,
                           jr_json_own(p, json_pack("[s]", b->reason)))) != APR_SUCCESS) {
        return rv;
    }
    return jr_notify(ctx, "ban.created", 0, "ip_ban", 0, "IP address banned",
                     apr_psprintf(p, "%s until %s (%s)", b->subject, b->until, b->reason));
}

apr_status_t jr_ban_add(jr_ctx_t *ctx, const char *reason, long long duration)
{
    apr_pool_t *p = ctx->pool;
    ban_t b = {jr_ip_subject(p, ctx->client_ip), reason,
               jr_iso_time(p, apr_time_now() + apr_time_from_sec(duration))};
    apr_status_t rv;

    if (!b.subject) {
        return APR_EINVAL;
    }
    if ((rv = jr_tx_run(ctx, ban_write, &b)) == APR_SUCCESS) {
        JR_LOG(JR03001, 0, "banned %s until %s (%s)", b.subject, b.until, reason);
    }
    return rv;
}

int jr_ban_count_failure(jr_ctx_t *ctx, const char *kind, int threshold, int window,
                         long long duration, const char *reason)
{
    const char *subject = jr_ip_subject(ctx->pool, ctx->client_ip);
    int count = 0;
    if (!ctx->counters || !subject ||
        ctx->counters->ops->fail_add(ctx->counters, kind, subject, window, apr_time_now(),
                                     &count) != APR_SUCCESS ||
        count < threshold) {
        return 0;
    }
    return jr_ban_add(ctx, reason, duration) == APR_SUCCESS;
}

int jr_op_bans_list(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    jr_rows_t *rows;
    jr_jw_t w;
    int i;
    if (jr_db_select(ctx->db, ctx->pool, JR_Q_BANS_LIST, &rows, JR_ARGS(jr_now_iso(ctx->pool))) !=
        APR_SUCCESS) {
        return jr_err_db(ctx, res);
    }
    jr_jw_init(&w, ctx->pool, 1024);
    jr_jw_arr(&w);
    for (i = 0; i < rows->nrows; ++i) {
        jr_jw_obj(&w);
        jr_jw_kstr(&w, "ip", jr_rows_get(rows, i, "ip"));
        jr_jw_kstr(&w, "reason", jr_rows_get(rows, i, "reason"));
        jr_jw_kstr(&w, "created_at", jr_rows_get(rows, i, "created_at"));
        jr_jw_kstr(&w, "expires_at", jr_rows_get(rows, i, "expires_at"));
        jr_jw_obj_end(&w);
    }
    jr_jw_arr_end(&w);
    return jr_reply_jw(res, 200, &w);
}

/* The subject an unban names: the listed form ("2001:db8:1:2::/64", in any spelling of the
 * network) or any address inside it. */
static const char *unban_subject(apr_pool_t *p, const char *given)
{
    size_t n = strlen(given);
    if (n > 3 && !strcmp(given + n - 3, "/64")) {
        const char *addr = apr_pstrmemdup(p, given, n - 3), *subject = jr_ip_subject(p, addr);
        return subject != addr && strchr(subject, '/') ? subject : given;
    }
    return jr_ip_subject(p, given);
}

/* A lifted ban starts from a clean slate, or the next failure would ban again. */
static void clear_failures(jr_ctx_t *ctx, void *subject)
{
    if (ctx->counters) {
        ctx->counters->ops->fail_clear(ctx->counters, subject);
    }
}

int jr_op_bans_delete(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    const char *ip = apr_table_get(ctx->params, "ip"), *subject = unban_subject(p, ip);
    int n = 0;
    if (jr_db_exec(ctx->db, p, JR_Q_BAN_DELETE, &n, JR_ARGS(ip, subject)) != APR_SUCCESS ||
        (n > 0 && jr_audit_ref(ctx, "unban", "ip", subject, NULL) != APR_SUCCESS)) {
        return jr_err_write(ctx, res, NULL);
    }
    if (n == 0) {
        return jr_fail(res, p, 404, "no ban for %s", ip);
    }
    jr_after_commit(ctx, clear_failures, (void *)subject);
    return jr_reply_ok(res, p);
}
