/* Route tables: one array per interface maps method + path pattern to an operation, the
 * kind of authentication it needs, the role, and whether it takes a JSON body. */
#ifndef JR_ROUTER_H
#define JR_ROUTER_H

#include "jr_ctx.h"
#include "jr_json.h"

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

#define JR_RF_ADMIN 0x1u       /* role admin required */
#define JR_RF_DB_OPTIONAL 0x2u /* the operation answers even without a database */
#define JR_RF_WRITE 0x4u       /* the operation writes: it runs in the road's transaction */
#define JR_RF_BAN 0x8u         /* a banned client address is refused first (key routes always) */
#define JR_RF_NO_DB 0x10u      /* the answer needs no database: no connection is taken */
#define JR_RF_CACHE 0x20u      /* a list whose answers the response cache may keep (jr_rcache.h) */

/* What an API key must allow (key routes). */
typedef enum {
    JR_SCOPE_NONE = 0, /* routes without a key */
    JR_SCOPE_READ,
    JR_SCOPE_WRITE,
    JR_SCOPE_METHOD /* the "no route" row: write for a method that changes, read otherwise */
} jr_scope_e;

/* Path patterns: literal segments, ":name" (a positive integer id) and "~name" (any one
 * segment, percent-decoded). Each table ends with its "no route" row (method NULL): the road
 * a path without a route takes, so that on /api/v1 the key is checked before 404 or 405.
 * fields: the body's field table, checked before the operation runs (NULL: the operation
 * checks its body itself). */
typedef struct {
    const char *method;
    const char *pattern;
    jr_op_fn *op;
    jr_auth_e auth;
    jr_body_e body;
    unsigned flags;
    jr_scope_e scope;
    const jr_field_t *fields;
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

/* The table's "no route" row: the road a path without a route takes. */
const jr_route_t *jr_route_none(const jr_route_t *table);
/* The "no route" rows' operation: 404, or 405 with Allow when ctx->allow is set. */
jr_op_fn jr_op_no_route;

/* The request pipeline around an operation, shared by every host. */
typedef struct {
    const char *session_token; /* X-Auth-Token */
    const char *api_key;       /* X-Api-Key or Authorization: Bearer */
} jr_credentials_t;

/* The road's steps before the body, each once and in this order: ban, authentication, rate
 * limit, scope, role (jr_road.c). Returns 1 to go on, 0 when res holds the answer. */
int jr_request_authorize(jr_ctx_t *ctx, const jr_route_t *route, const jr_credentials_t *cred,
                         jr_result_t *res);

/* Whether a body of content_type suits the route: 1, or 0 with a 415 in res when the route
 * takes JSON and the type is another. Hosts call it before reading a body they know is
 * there, so a refused body is never read. */
int jr_request_type_ok(jr_ctx_t *ctx, const jr_route_t *route, const char *content_type,
                       jr_result_t *res);

/* Checks the body (Content-Type, JSON object, the route's field table) and runs the operation
 * on the road (jr_road_op). body may be NULL. Returns the answer's status. */
int jr_request_run(jr_ctx_t *ctx, const jr_route_t *route, const char *content_type,
                   const char *body, size_t len, jr_result_t *res);

#endif
