/* The response cache: rendered list answers kept in each process and never served once
 * anything was written. A page is stored under the database's write generation read before
 * its data (jr_db_generation) and served only while the generation is still the same, so it
 * may hold data newer than its generation, never older than what the reader could see. The
 * key holds everything else an answer depends on: the server's configuration, the interface,
 * the path and query as sent, and the caller (user or key, role, branch scope). Why and what it
 * costs: docs/architecture.md §7.15. */
#ifndef JR_RCACHE_H
#define JR_RCACHE_H

#include "jr_router.h"

/* ---- the store: a byte-bounded LRU, safe for the threads of a process ------------------- */

typedef struct jr_rcache jr_rcache_t;

/* A cached answer: status, body, and the headers the operation set, as "name\0value\0" pairs. */
typedef struct {
    int status;
    const char *body;
    size_t body_len;
    const char *headers;
    size_t headers_len;
} jr_rcache_page_t;

typedef struct {
    apr_uint64_t hits, misses, stores, evictions;
    size_t bytes, entries;
} jr_rcache_stats_t;

/* A store that holds at most budget bytes (keys, bodies, headers and bookkeeping). Lives
 * outside any pool (its pages outlive requests); NULL when memory is short. */
jr_rcache_t *jr_rcache_create(size_t budget);
void jr_rcache_destroy(jr_rcache_t *c);

/* 1 with a copy (in p) of the page stored under key for generation gen; 0 when there is none,
 * or only one of another generation. */
int jr_rcache_get(jr_rcache_t *c, const char *key, size_t klen, apr_uint64_t gen, apr_pool_t *p,
                  jr_rcache_page_t *out);

/* Stores a copy of page under key and gen, replacing the key's page, evicting the least
 * recently used ones beyond the budget. A page larger than an eighth of its shard's budget is
 * not kept: one list would push out every other. */
void jr_rcache_put(jr_rcache_t *c, const char *key, size_t klen, apr_uint64_t gen,
                   const jr_rcache_page_t *page);

void jr_rcache_stats(jr_rcache_t *c, jr_rcache_stats_t *out);

/* ---- the road's use --------------------------------------------------------------------- */

/* The key of the request in ctx (in ctx->pool): NULL when the request has no raw path. */
const char *jr_rcache_key(const jr_ctx_t *ctx, size_t *klen);

/* A request the cache may answer; filled by jr_rcache_serve for jr_rcache_keep. */
typedef struct {
    const char *key;
    size_t klen;
    apr_uint64_t gen;
    int nheaders; /* res's headers before the operation: the ones after it are the page's */
    int keep;     /* a miss whose answer may be stored */
} jr_rcache_req_t;

/* Before the operation of route: 1 when res holds the cached answer (the operation does not
 * run); 0 otherwise. Routes without JR_RF_CACHE, JournalResponseCache Off, a sync request
 * (answers that depend on the time) and an unknown generation are never answered here. */
int jr_rcache_serve(jr_ctx_t *ctx, const jr_route_t *route, jr_result_t *res,
                    jr_rcache_req_t *rq);

/* After the operation: stores a 200 answer that was rendered whole (not streamed). */
void jr_rcache_keep(jr_ctx_t *ctx, const jr_rcache_req_t *rq, jr_result_t *res);

/* ---- a statement's rows ----------------------------------------------------------------- */

/* Where the generation is cheaper than a statement (jr_db_generation_free: SQLite's counter;
 * jr_db_generation_shared: PostgreSQL's read shared by the requests that ask at once, for a
 * request that only reads), the rows of a statement that runs on most requests (the key's
 * lookup) are kept in the same store, under the generation read before them, and a request
 * whose generation is the same takes them from memory instead of running the statement. Kept
 * rows served with a snapshot's columns (JR_DB_SNAPSHOT_COLUMNS) carry the generation they are
 * served under. rq->key and rq->klen are the caller's: the statement and every argument its
 * rows depend on (the caller also decides which rows may be kept: jr_keys.c keeps no row whose
 * answer could change with the time alone). Not used with JournalResponseCache Off.
 *
 * Before the statement: 1 with the kept rows in *out (in ctx->pool); 0 otherwise, with
 * rq->keep set when rows read now may be kept (rq->gen is then the generation read before). */
int jr_rcache_rows_serve(jr_ctx_t *ctx, jr_rcache_req_t *rq, jr_rows_t **out);

/* 1 when rows may be kept for ctx's request (the cache On, a cheap generation: SQLite's, or
 * PostgreSQL's shared read for a request that only reads): a caller that gets 0 builds no key
 * and calls neither function. */
int jr_rcache_rows_on(const jr_ctx_t *ctx);

/* After the statement, for a 0 of jr_rcache_rows_serve: keeps a copy of r under rq->gen. */
void jr_rcache_rows_keep(jr_ctx_t *ctx, const jr_rcache_req_t *rq, const jr_rows_t *r);

/* The cache of this process (made on first use with its size), NULL while none was made. */
jr_rcache_t *jr_rcache_process(void);

#endif
