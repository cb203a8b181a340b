/* IP bans: a database row (shared by every node, survives restarts); the failures that lead
 * to one are counted in the shared counters, so a bad attempt costs no database write. */
#ifndef JR_BANS_H
#define JR_BANS_H

#include "jr_ctx.h"
#include "jr_router.h"

#define JR_BAN_APIKEY "apikey-bruteforce"
#define JR_BAN_LOGIN "login-bruteforce"
#define JR_BAN_HONEYPOT "honeypot"

/* What bans and failure counts apply to: an IPv4 address as it is; an IPv6 address's /64
 * network, written "2001:db8:1:2::/64" (one subscriber is usually given a whole /64, so
 * counting single addresses would give an attacker 2^64 fresh ones); an IPv4-mapped IPv6
 * address as its IPv4 address. Anything that is not an address is returned unchanged. */
const char *jr_ip_subject(apr_pool_t *p, const char *ip);

/* 1 when the caller's IP is banned (fills res with 403), 0 when not, -1 on a database error
 * (res holds a 503). */
int jr_ban_check(jr_ctx_t *ctx, jr_result_t *res);

/* Fills res with the 403 of a banned caller. */
int jr_ban_refuse(jr_ctx_t *ctx, jr_result_t *res);

/* Bans the caller's subject (see jr_ip_subject) for duration seconds, in its own
 * transaction, audited. */
apr_status_t jr_ban_add(jr_ctx_t *ctx, const char *reason, long long duration);

/* Counts a failure of kind ("apikey", "login") for the caller's subject and bans it once the
 * threshold is reached within the window. Returns 1 when this failure led to a ban. */
int jr_ban_count_failure(jr_ctx_t *ctx, const char *kind, int threshold, int window,
                         long long duration, const char *reason);

/* Operations of the road (jr_routes.c). */
jr_op_fn jr_op_bans_list;
jr_op_fn jr_op_bans_delete;

#endif
