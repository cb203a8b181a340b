/* The core side of the event streams (docs/events.md): single-use tickets, who may open a
 * stream, which outbox rows a stream shows, the replay after Last-Event-ID and the SSE
 * message format. The glue (mj_sse.c) owns the threads, the waiting and the sockets. */
#ifndef JR_STREAM_H
#define JR_STREAM_H

#include <apr_hash.h>

#include "jr_ctx.h"
#include "jr_router.h"

typedef enum {
    JR_STREAM_NOTIFICATIONS = 0, /* notification, ai_status, lesson_report_status */
    JR_STREAM_CHAT               /* chat_message, chat_read */
} jr_stream_kind_e;

#define JR_TICKET_TTL 60 /* seconds */

/* One outbox row as a stream sees it. */
typedef struct {
    long long id;
    const char *type;
    long long branch_id; /* 0: none */
    long long entity_id; /* 0: none */
    const char *payload;
} jr_stream_event_t;

/* Who opens a stream: a session token (X-Auth-Token) or a ticket, used up here. Fills
 * ctx->who; returns 1, or 0 with the refusal in res. */
int jr_stream_identify(jr_ctx_t *ctx, const char *token, const char *ticket, jr_result_t *res);

/* Whether the caller may see an event on a stream of this kind. */
int jr_stream_visible(const jr_ctx_t *ctx, jr_stream_kind_e kind, const jr_stream_event_t *ev);

/* The outbox rows after id after (at most max), oldest first, into an array of
 * jr_stream_event_t allocated in p. */
apr_status_t jr_stream_rows(jr_db_t *db, apr_pool_t *p, long long after, int max,
                            apr_array_header_t **out);

/* The lowest and highest ids in the outbox (0, 0 when empty). */
apr_status_t jr_stream_bounds(jr_db_t *db, apr_pool_t *p, long long *lo, long long *hi);

/* Whether the outbox still holds everything after id last (a client resuming from it):
 * 0 when rows after it were trimmed by retention, so the client must reload. */
int jr_stream_resumable(long long last, long long lo);

/* An SSE message: "id: N\nevent: TYPE\ndata: JSON\n\n". */
const char *jr_sse_message(apr_pool_t *p, long long id, const char *event, const char *data);

/* Of the session hashes given (a JSON array), the ones still valid (an array of strings in
 * p): the session exists, is not expired, its user is active. */
apr_status_t jr_stream_sessions_valid(jr_db_t *db, apr_pool_t *p, const char *hashes_json,
                                      apr_hash_t **valid);

/* Operations of the road (jr_routes.c). */
jr_op_fn jr_op_stream_ticket;

#endif
