/* Key format and /api/v1 authentication. Management operations are in jr_keys_admin.c. */
#include <string.h>

#include <apr_strings.h>

#include "jr_bans.h"
#include "jr_counters.h"
#include "jr_crypt.h"
#include "jr_json.h"
#include "jr_keys.h"
#include "jr_log.h"
#include "jr_rcache.h"
#include "jr_settings.h"
#include "jr_stmts.h"
#include "jr_util.h"

static const char b62[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/* CRC-32 (IEEE), table-driven; the table is built on first use (idempotent, so a race
 * between threads only computes the same values twice). */
static uint32_t crc_table[256];

static uint32_t crc32_of(const char *s, size_t n)
{
    uint32_t crc = 0xFFFFFFFFu;
    size_t i;
    if (!crc_table[1]) {
        uint32_t c;
        int j, k;
        for (j = 0; j < 256; ++j) {
            for (c = (uint32_t)j, k = 0; k < 8; ++k) {
                c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
            }
            crc_table[j] = c;
        }
    }
    for (i = 0; i < n; ++i) {
        crc = crc_table[(crc ^ (unsigned char)s[i]) & 0xFF] ^ (crc >> 8);
    }
    return ~crc;
}

static int is_b62(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

static void checksum(const char *s, size_t n, char out[JR_KEY_CHECK_LEN])
{
    uint32_t c = crc32_of(s, n);
    int i;
    for (i = JR_KEY_CHECK_LEN - 1; i >= 0; --i) {
        out[i] = b62[c % 62];
        c /= 62;
    }
}

char *jr_key_generate(apr_pool_t *p)
{
    unsigned char num[32];
    char *key = apr_palloc(p, JR_KEY_LEN + 1);
    int i, j;

    if (jr_random_bytes(num, sizeof(num)) != 0) {
        return NULL;
    }
    memcpy(key, JR_KEY_PREFIX, 4);
    /* The 256-bit number in base 62, most significant digit first (62^43 > 2^256). */
    for (i = JR_KEY_BODY_LEN - 1; i >= 0; --i) {
        unsigned rem = 0;
        for (j = 0; j < (int)sizeof(num); ++j) {
            unsigned cur = (rem << 8) | num[j];
            num[j] = (unsigned char)(cur / 62);
            rem = cur % 62;
        }
        key[4 + i] = b62[rem];
    }
    checksum(key, 4 + JR_KEY_BODY_LEN, key + 4 + JR_KEY_BODY_LEN);
    key[JR_KEY_LEN] = '\0';
    return key;
}

int jr_key_wellformed(const char *key)
{
    char check[JR_KEY_CHECK_LEN];
    size_t i;
    if (!key || strlen(key) != JR_KEY_LEN || strncmp(key, JR_KEY_PREFIX, 4)) {
        return 0;
    }
    for (i = 4; i < JR_KEY_LEN; ++i) {
        if (!is_b62(key[i])) {
            return 0;
        }
    }
    checksum(key, 4 + JR_KEY_BODY_LEN, check);
    return jr_secure_equal(check, key + 4 + JR_KEY_BODY_LEN, JR_KEY_CHECK_LEN);
}

/* Like a failed login, the wrong key that reaches the threshold still gets its 401; the ban
 * answers from the next request on. */
static int refuse_key(jr_ctx_t *ctx, jr_result_t *res, const char *why)
{
    const jr_config_t *c = ctx->cfg;
    jr_ban_count_failure(ctx, "apikey", c->key_ban_threshold, c->key_ban_window,
                         c->key_ban_duration, JR_BAN_APIKEY);
    jr_fail(res, ctx->pool, 401, "%s", why);
    return 0;
}

static void set_identity(jr_ctx_t *ctx, const jr_rows_t *r)
{
    const char *scopes = jr_rows_get(r, 0, "scopes"), *branches = jr_rows_get(r, 0, "branch_ids");
    const char *perr = NULL;
    apr_array_header_t *ids = apr_array_make(ctx->pool, 4, sizeof(long long));
    json_t *arr = branches ? jr_json_parse(ctx->pool, branches, strlen(branches), &perr) : NULL;

    ctx->who.authenticated = 1;
    ctx->who.via_api_key = 1;
    ctx->who.key_id = jr_rows_int(r, 0, "id", 0);
    ctx->who.key_row = r;
    ctx->who.username = apr_pstrcat(ctx->pool, "key:", jr_rows_get(r, 0, "prefix"), NULL);
    ctx->who.can_write = strstr(scopes, "write") != NULL;
    ctx->who.can_read = ctx->who.can_write || strstr(scopes, "read") != NULL;
    if (json_is_array(arr) && json_array_size(arr) > 0) {
        ctx->who.role = JR_ROLE_TUTOR;
        ids = jr_ids_from_json(ctx->pool, arr);
        ctx->who.branch_ids = ids;
        ctx->who.branch_json = jr_ids_json(ctx->pool, ids);
    } else {
        ctx->who.role = JR_ROLE_ADMIN;
        ctx->who.branch_ids = ids;
        ctx->who.branch_json = NULL;
    }
}

static void rate_headers(jr_ctx_t *ctx, jr_result_t *res, const jr_rate_t *rt)
{
    apr_pool_t *p = ctx->pool;
    apr_table_setn(res->headers, "RateLimit-Policy",
                   apr_psprintf(p, "%d;w=%d", rt->limit, JR_RATE_WINDOW));
    apr_table_setn(res->headers, "RateLimit-Limit", apr_itoa(p, rt->limit));
    apr_table_setn(res->headers, "RateLimit-Remaining", apr_itoa(p, rt->remaining));
    apr_table_setn(res->headers, "RateLimit-Reset", apr_itoa(p, rt->reset));
}

/* The key's lookup, from the response cache's store where the generation is cheap (SQLite;
 * PostgreSQL in httpd, for reads: jr_rcache_rows_on): kept by the statement, the key's hash
 * and the client's address and subject, the arguments its row depends on besides the time.
 * The time does not change a kept row's answer: only rows without a ban are kept (a ban whose
 * end has passed never matches again, and a new ban is a write), and the key's own expiry is
 * compared on every use (jr_key_authenticate). An unknown key's row is not kept: guesses must
 * not push out the keys in use. */
static apr_status_t key_lookup(jr_ctx_t *ctx, int settings, const char *key, jr_rows_t **r)
{
    apr_pool_t *p = ctx->pool;
    const char *now = jr_now_iso(p), *ip = ctx->client_ip ? ctx->client_ip : "";
    const char *subject = ctx->client_ip ? jr_ip_subject(p, ctx->client_ip) : "";
    const char *hash = jr_sha256_hex(p, key, strlen(key));
    jr_rcache_req_t rq = {NULL, 0, 0, 0, 0};
    apr_status_t rv;
    if (jr_rcache_rows_on(ctx)) {
        rq.key = apr_psprintf(p, "%pp rows key %d %s %" APR_SIZE_T_FMT ":%s %s",
                              (const void *)ctx->cfg, settings, hash, strlen(ip), ip, subject);
        rq.klen = strlen(rq.key);
        if (jr_rcache_rows_serve(ctx, &rq, r)) {
            return APR_SUCCESS;
        }
    }
    rv = jr_db_select(ctx->db, p, settings ? JR_Q_KEY_AUTH_SETTINGS : JR_Q_KEY_AUTH, r,
                      JR_ARGS(ip, now, subject, now, jr_setting_name(JR_SETTING_TIMEZONE),
                              jr_setting_name(JR_SETTING_TIME_FORMAT), hash));
    if (rv == APR_SUCCESS && (*r)->nrows == 1 && jr_rows_get(*r, 0, "id") &&
        !jr_rows_get(*r, 0, "ban_reason")) {
        jr_rcache_rows_keep(ctx, &rq, *r);
    }
    return rv;
}

int jr_key_ban(jr_ctx_t *ctx, const char *key, int settings, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    jr_rows_t *r;

    ctx->who.key_row = NULL;
    ctx->snapshot_row = NULL;
    if (!ctx->counters) {
        /* Without the shared counters a key would have no rate limit and guessing no ban:
         * refuse rather than serve unlimited. */
        jr_fail(res, p, 503, "rate limiting unavailable; try again later");
        return 0;
    }
    if (!key || !*key || !jr_key_wellformed(key)) {
        return jr_ban_check(ctx, res) == 0;
    }
    /* One query reads the address's ban and the key's record (kept for the next step), and
     * the two settings /api/v1/me answers with. */
    if (key_lookup(ctx, settings, key, &r) != APR_SUCCESS || r->nrows != 1) {
        jr_err_db(ctx, res);
        return 0;
    }
    if (jr_rows_get(r, 0, "ban_reason")) {
        jr_ban_refuse(ctx, res);
        return 0;
    }
    ctx->who.key_row = r;
    ctx->snapshot_row = r;
    if (settings) {
        jr_settings_carried(ctx, jr_rows_get(r, 0, "settings_json"));
    }
    return 1;
}

int jr_key_authenticate(jr_ctx_t *ctx, const char *key, jr_result_t *res)
{
    const jr_rows_t *r = ctx->who.key_row;
    const char *exp;
    if (!key || !*key) {
        jr_fail(res, ctx->pool, 401,
                "API key required: send it in X-Api-Key or Authorization: Bearer");
        return 0;
    }
    if (!r || !jr_rows_get(r, 0, "id")) {
        return refuse_key(ctx, res, "invalid API key");
    }
    if ((exp = jr_rows_get(r, 0, "expires_at")) != NULL &&
        strcmp(exp, jr_now_iso(ctx->pool)) <= 0) {
        jr_fail(res, ctx->pool, 401, "API key expired");
        return 0;
    }
    set_identity(ctx, r);
    return 1;
}

int jr_key_rate_limit(jr_ctx_t *ctx, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    jr_rate_t rt;
    ctx->counters->ops->rate_hit(ctx->counters, ctx->who.key_id,
                                 (int)jr_rows_int(ctx->who.key_row, 0, "rate_limit_per_min", 1),
                                 apr_time_now(), &rt);
    rate_headers(ctx, res, &rt);
    if (!rt.allowed) {
        apr_table_setn(res->headers, "Retry-After", apr_itoa(p, rt.reset));
        jr_fail(res, p, 429, "rate limit of %d requests per minute exceeded; retry in %d s",
                rt.limit, rt.reset);
        return 0;
    }
    if (rt.touch) {
        ctx->snapshot_row = NULL; /* the stamp below ends after the lookup's snapshot */
    }
    if (rt.touch && jr_db_exec(ctx->db, p, JR_Q_KEY_TOUCH, NULL,
                               JR_ARGS(jr_now_iso(p), ctx->client_ip,
                                       jr_i64(p, ctx->who.key_id))) != APR_SUCCESS) {
        JR_LOG(JR03002, 0, "could not record the last use of key %lld", ctx->who.key_id);
    }
    return 1;
}

int jr_key_scope(jr_ctx_t *ctx, int write, jr_result_t *res)
{
    if (write == -1) {
        write = jr_ctx_writes(ctx);
    }
    if (write ? !ctx->who.can_write : !ctx->who.can_read) {
        jr_fail(res, ctx->pool, 403, "this API key lacks the '%s' scope", write ? "write" : "read");
        return 0;
    }
    return 1;
}

int jr_auth_key(jr_ctx_t *ctx, const char *key, jr_result_t *res)
{
    return jr_key_ban(ctx, key, 0, res) && jr_key_authenticate(ctx, key, res) &&
           jr_key_rate_limit(ctx, res) && jr_key_scope(ctx, -1, res);
}
