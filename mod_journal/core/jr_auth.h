/* Session authentication for the administrative interface. */
#ifndef JR_AUTH_H
#define JR_AUTH_H

#include "jr_ctx.h"
#include "jr_router.h"

/* Fills ctx->who from a session token. Returns 1 when valid; otherwise fills res (401, or
 * 503 when the database fails) and returns 0. */
int jr_auth_session(jr_ctx_t *ctx, const char *token, jr_result_t *res);

/* The identity of a live session given by the SHA-256 of its token (1), or an answer in res
 * (0): 401 with the message ended when the session is unknown, expired or its user inactive. */
int jr_auth_session_hash(jr_ctx_t *ctx, const char *hash, const char *ended, jr_result_t *res);

/* Makes the identity's branch scope: admins see every branch. */
void jr_identity_set_branches(jr_ctx_t *ctx, apr_array_header_t *ids);

/* Operations of the road (jr_routes.c). */
jr_op_fn jr_op_login;
jr_op_fn jr_op_logout;
jr_op_fn jr_op_me;

#endif
