/* Lists: their answers on both interfaces, the query parameters each /api/v1 endpoint reads
 * (any other is refused), and paging by cursor. A cursor holds the place of the last record
 * of a page in the list's own order (its sort key and id), so the next page starts after that
 * record whatever was inserted or deleted before it; offsets shift instead. See
 * docs/integrators.md ("Lists"). */
#ifndef JR_CURSOR_H
#define JR_CURSOR_H

#include "jr_ctx.h"
#include "jr_router.h"

/* 1 when every query parameter is one the route reads; 0 with a 400 naming the first other
 * one in res. Routes of /api are not checked (the web UI's lists grow parameters freely). */
int jr_v1_query_ok(jr_ctx_t *ctx, const jr_route_t *route, jr_result_t *res);

/* Cursors travel in query strings: base64url without padding. decode: NULL when malformed. */
const char *jr_b64url_encode(apr_pool_t *p, const char *s);
const char *jr_b64url_decode(apr_pool_t *p, const char *s);

#define JR_PAGE_KEYS 3
/* A streamed /api/v1 page up to this size is sent whole, with its Link header; a larger one
 * leaves while it is read, and only its body's next_cursor says where the next page starts. */
#define JR_PAGE_WHOLE (1024 * 1024)

/* One page of a list. The list's statement takes the keyset position (jr_page_key, NULL on the
 * first page) and fetches limit + 1 rows (jr_page_fetch): the extra row only tells whether
 * there is more. */
typedef struct jr_page {
    const char *list;  /* the list's name: "entries", also its path under /api/v1 */
    int nkeys;         /* sort keys including the id, last */
    long long limit, offset;
    const char *key[JR_PAGE_KEYS]; /* the position from the cursor; NULL without one */
    const char *filters;           /* fingerprint of the filters the cursor belongs to */
    int rows;                      /* rows taken into the page */
    int has_more;
    const char *last[JR_PAGE_KEYS]; /* the keys of the page's last row */
} jr_page_t;

/* Reads limit, offset and cursor for the list (nkeys sort keys, the id last, dflt the default
 * limit). 0, or -1 with a 400 in res (a cursor of another list or other filters, a cursor
 * together with an offset). Installs the page in ctx, so the list's envelope carries
 * has_more and next_cursor. */
int jr_page_begin(jr_ctx_t *ctx, jr_result_t *res, const char *list, int nkeys, long long dflt,
                  jr_page_t *pg);

/* The i-th key of the cursor's position (NULL on a first page), and limit + 1 as text. */
const char *jr_page_key(const jr_page_t *pg, int i);
const char *jr_page_fetch(apr_pool_t *p, const jr_page_t *pg);

/* Offers a row (its sort keys, nkeys of them) to the page: 1 when it belongs to the page (write
 * it), 0 for the extra row (stop). */
int jr_page_take(apr_pool_t *p, jr_page_t *pg, const char *const *keys);

/* The same for a row of a materialised result, keys named by column. */
int jr_page_take_row(apr_pool_t *p, jr_page_t *pg, const jr_rows_t *r, int i,
                     const char *const *cols);

/* ---- list answers --------------------------------------------------------------------
 * On /api/v1 the envelope {items, total, limit, offset} with, when the list has a page
 * (jr_page_begin), has_more and next_cursor (null on the last page) and the Link header
 * to the next page; on /api a bare array with an X-Total-Count header. */

/* Streaming lists. begin fixes the answer's status (200) and, on /api, the X-Total-Count
 * header, writes "[" (/api) or the envelope's {"items":[ (/api/v1), and from then on lets
 * the writer hand its bytes to ctx->flush: res's status and headers must not change after
 * it. end closes the list (with total/limit/offset in the envelope) and fills res. An error
 * after begin is still an error answer when nothing has been sent yet; otherwise the host
 * can only cut the response short. */
void jr_jw_list_begin(jr_ctx_t *ctx, jr_jw_t *w, jr_result_t *res, long long total);
int jr_jw_list_end(jr_ctx_t *ctx, jr_jw_t *w, jr_result_t *res, long long total, long long limit,
                   long long offset);

/* Writes row i of a result as the record the API shows: the one serializer of a record kind,
 * for its own answer and for the lists it is an item of. */
typedef void jr_row_write_fn(apr_pool_t *p, jr_jw_t *w, const jr_rows_t *r, int i);

/* The answer of one record: row i of r. */
int jr_reply_row(jr_ctx_t *ctx, jr_result_t *res, int status, jr_row_write_fn *write,
                 const jr_rows_t *r, int i);

/* A list answer of the rows of r: those pg takes (keys: its sort columns), all when pg is NULL.
 * Written whole, not streamed. */
int jr_reply_rows(jr_ctx_t *ctx, jr_result_t *res, jr_page_t *pg, const char *const *keys,
                  jr_row_write_fn *write, const jr_rows_t *r, long long total, long long limit,
                  long long offset);

/* ---- sync: updated_since ----------------------------------------------------------------
 * A list with updated_since (or a sync cursor) answers the records changed at or after that
 * instant, ordered by (updated_at, id), with include_deleted=1 also the deleted ones as
 * tombstones {id, deleted_at}. Records changed in the last JR_SYNC_SETTLE_SECONDS are left
 * for the next request: a write that stamped its time but has not committed yet must not be
 * passed by the cursor (see docs/integrators.md, "Sync"). */
#define JR_SYNC_SETTLE_SECONDS 5

typedef struct {
    const char *list;   /* "entries": the path under /api/v1 */
    const char *entity; /* its tombstones in deleted_records: "entry" */
    /* Statement over the records: args scope, scope, position time, position id,
     * settle time, include_deleted (0/1), row count; columns sync_at, id, sync_deleted_at
     * and the list's own (JR_SYNC_TAIL builds its end). */
    jr_stmt_id_t stmt;
    jr_row_write_fn *write; /* the list's item, as in its pages */
} jr_sync_def_t;

/* 1 when the request asks for a sync (updated_since, or a sync cursor). */
int jr_sync_wanted(jr_ctx_t *ctx);

/* Answers the sync page of the list. */
apr_status_t jr_sync_list(jr_ctx_t *ctx, jr_result_t *res, const jr_sync_def_t *def);

#endif
