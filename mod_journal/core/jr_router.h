/* Route tables: one array per interface maps method + path pattern to an operation, the
 * kind of authentication it needs, the role, and whether it takes a JSON body. */
#ifndef JR_ROUTER_H
#define JR_ROUTER_H

#include "jr_ctx.h"

/* An operation: answers in res and returns the answer's status (see jr_road.h). */
typedef int jr_op_fn(jr_ctx_t *ctx, const json_t *in, jr_result_t *res);

typedef enum {
    JR_AUTH_NONE = 0,
    JR_AUTH_SESSION,
    JR_AUTH_KEY
} jr_auth_e;

typedef enum {
    JR_BODY_NONE = 0, /* any body is ignored */
    JR_BODY_JSON,     /* a JSON object is required */
    JR_BODY_OPTIONAL, /* a JSON object, or nothing ({} then) */
    JR_BODY_UPLOAD    /* any bytes, streamed to a temp file (ctx->upload), upload_max cap */
} jr_body_e;

#define JR_RF_ADMIN 0x1u    /* role admin required */
#define JR_RF_DB_OPTIONAL 0x2u /* the operation answers even without a database */
#define JR_RF_WRITE 0x4u       /* the operation writes: it runs in the road's transaction */

/* Path patterns: literal segments, ":name" (a positive integer id) and "~name" (any one
 * segment, percent-decoded). */
typedef struct {
    const char *method;
    const char *pattern;
    jr_op_fn *op;
    jr_auth_e auth;
    jr_body_e body;
    unsigned flags;
} jr_route_t;

typedef enum {
    JR_ROUTE_FOUND = 0,
    JR_ROUTE_NOT_FOUND,
    JR_ROUTE_BAD_METHOD
} jr_match_e;

extern const jr_route_t jr_routes_admin[];
extern const jr_route_t jr_routes_v1[];

/* The table for a request path, and which interface it is. */
const jr_route_t *jr_routes_for(const char *path, jr_iface_e *iface);

/* Matches a raw (still percent-encoded) path. On JR_ROUTE_FOUND, *route is set and params
 * holds the path parameters; on JR_ROUTE_BAD_METHOD, *allow lists the methods that exist. */
jr_match_e jr_route_match(const jr_route_t *table, apr_pool_t *p, const char *method,
                          const char *path, const jr_route_t **route, apr_table_t *params,
                          const char **allow);

/* The request pipeline around an operation, shared by every host. */
typedef struct {
    const char *session_token; /* X-Auth-Token */
    const char *api_key;       /* X-Api-Key or Authorization: Bearer */
} jr_credentials_t;

/* Authentication and role checks. Returns 1 to go on, 0 when res holds the answer. */
int jr_request_authorize(jr_ctx_t *ctx, const jr_route_t *route, const jr_credentials_t *cred,
                         jr_result_t *res);

/* Whether a body of content_type suits the route: 1, or 0 with a 415 in res when the route
 * takes JSON and the type is another. Hosts call it before reading a body they know is
 * there, so a refused body is never read. */
int jr_request_type_ok(jr_ctx_t *ctx, const jr_route_t *route, const char *content_type,
                       jr_result_t *res);

/* Checks the body (Content-Type, JSON object) and runs the operation on the road
 * (jr_road_op). body may be NULL. Returns the answer's status. */
int jr_request_run(jr_ctx_t *ctx, const jr_route_t *route, const char *content_type,
                   const char *body, size_t len, jr_result_t *res);

#endif
