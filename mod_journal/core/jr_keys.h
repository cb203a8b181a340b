/* API keys: format, management (administrative interface) and authentication (/api/v1). */
#ifndef JR_KEYS_H
#define JR_KEYS_H

#include "jr_ctx.h"

/* wsk_ + 43 base62 characters (32 random bytes) + 6 base62 characters of CRC-32 over what
 * precedes them: a typo or a look-alike is refused before any database lookup, and secret
 * scanners can recognise the format. */
#define JR_KEY_PREFIX "wsk_"
#define JR_KEY_BODY_LEN 43
#define JR_KEY_CHECK_LEN 6
#define JR_KEY_LEN (4 + JR_KEY_BODY_LEN + JR_KEY_CHECK_LEN)
#define JR_KEY_SHOWN 12 /* the visible prefix: wsk_ and 8 characters */

char *jr_key_generate(apr_pool_t *p);
int jr_key_wellformed(const char *key);

/* The road's steps for an API key (jr_road.c), each returning 1 to go on or 0 with the answer
 * in res. jr_key_ban: the client address's ban (with a well-formed key, read together with the
 * key's record, kept in ctx->who.key_row for the next step); 503 without the shared counters.
 * jr_key_authenticate: the key itself (missing, unknown: 401 and a counted failure; expired),
 * then the caller's identity. jr_key_rate_limit: the key's requests per minute (429; the
 * RateLimit headers), its last use recorded. jr_key_scope: read or write (1), or by the
 * method (-1). With settings set, jr_key_ban's query brings every stored setting too, for
 * routes that read them (jr_settings_carried). */
int jr_key_ban(jr_ctx_t *ctx, const char *key, int settings, jr_result_t *res);
int jr_key_authenticate(jr_ctx_t *ctx, const char *key, jr_result_t *res);
int jr_key_rate_limit(jr_ctx_t *ctx, jr_result_t *res);
int jr_key_scope(jr_ctx_t *ctx, int write, jr_result_t *res);
/* The four in order, for callers outside the road. */
int jr_auth_key(jr_ctx_t *ctx, const char *key, jr_result_t *res);

/* The record of row i (JR_KEY_COLS, in jr_keys_admin_sql.h), never the secret. */
#include "jr_jw.h"
void jr_key_write(jr_jw_t *w, const jr_rows_t *r, int i);

#endif
