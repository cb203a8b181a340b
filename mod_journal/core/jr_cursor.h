/* Query parameters of /api/v1: each endpoint names the ones it reads, and a request that
 * sends another is refused, so a misspelt or unsupported filter (say updated_since on a server
 * that does not know it) never silently widens a list. */
#ifndef JR_CURSOR_H
#define JR_CURSOR_H

#include "jr_ctx.h"
#include "jr_router.h"

/* 1 when every query parameter is one the route reads; 0 with a 400 naming the first other
 * one in res. Routes of /api are not checked (the web UI's lists grow parameters freely). */
int jr_v1_query_ok(jr_ctx_t *ctx, const jr_route_t *route, jr_result_t *res);

#endif
