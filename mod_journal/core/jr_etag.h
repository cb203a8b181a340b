/* Conditional requests on single records (an entry, a lesson report): an ETag on GET and PUT
 * answers, If-None-Match on GET (304), If-Match on PUT (412 when the record changed since the
 * client read it). The ETag is a hash of the record's JSON as GET answers it, so any change of
 * any field changes it, even within one second. */
#ifndef JR_ETAG_H
#define JR_ETAG_H

#include "jr_ctx.h"
#include "jr_router.h"

/* 1 when the route answers or changes one record with an ETag. */
int jr_etag_route(const jr_route_t *route);

/* Before the operation of a PUT with If-Match: 1 to go on, 0 with the answer in res (412 when
 * no tag matches the record as it is, or it is gone; an error when it cannot be read). */
int jr_etag_precondition(jr_ctx_t *ctx, const jr_route_t *route, const char *if_match,
                         jr_result_t *res);

/* After the operation: sets the ETag of a 200 answer and turns a GET whose If-None-Match
 * matches into 304 without a body. */
void jr_etag_finish(jr_ctx_t *ctx, const jr_route_t *route, const char *if_none_match,
                    jr_result_t *res);

#endif
