/* The context of one operation: who asks, through which interface, with which database,
 * and the result it produces. Operations are transport-neutral: the module, the CLI and
 * the unit tests all drive them through this struct. */
#ifndef JR_CTX_H
#define JR_CTX_H

#include <apr_pools.h>
#include <apr_tables.h>
#include <jansson.h>

#include "jr_config.h"
#include "jr_db.h"
#include "jr_jw.h"
#include "jr_result.h"

#define JR_VERSION "0.1.0"

typedef enum {
    JR_ROLE_NONE = 0,
    JR_ROLE_TUTOR,
    JR_ROLE_ADMIN
} jr_role_e;

typedef enum {
    JR_IF_ADMIN = 1, /* /api, session tokens */
    JR_IF_V1 = 2     /* /api/v1, API keys */
} jr_iface_e;

/* The caller. The branch restriction lives here so that every query can apply it:
 * branch_json is NULL for "every branch", otherwise a JSON array of branch ids. */
typedef struct {
    int authenticated;
    long long user_id;
    long long key_id;
    const char *username;
    jr_role_e role;
    apr_array_header_t *branch_ids; /* of long long; all branches when branch_json is NULL */
    const char *branch_json;
    int via_api_key;
    int can_read;
    int can_write;
    const char *session_hash;
    const jr_rows_t *key_row; /* the API key's record as read at authentication */
} jr_identity_t;

/* What httpd's parent knows of the worker processes it supervises, in shared memory that
 * its children read with apr_atomic_read32 (they cannot see the parent's process table). */
#define JR_WORKER_SLOTS 16 /* JournalWorkerProcesses at most */
typedef struct jr_worker_census {
    volatile apr_uint32_t restarts; /* processes started again after one ended, since the
                                     * last (re)start of httpd */
    volatile apr_uint32_t binary;   /* 1: JournalWorkerPath was an executable file */
    /* One per supervised process: its pid (0 while none runs) and the time (Unix seconds)
     * from which it works. A process restarted after a failure first waits out its delay:
     * until then it runs no job, and the answers do not count it as running. */
    struct {
        volatile apr_uint32_t pid, from;
    } slot[JR_WORKER_SLOTS];
} jr_worker_census_t;

/* The first period of a login throttle (at most JournalLoginThrottleMaxBackoff). */
#define JR_LOGIN_THROTTLE_FIRST 60

struct jr_counters;

/* A request body the host streamed to a temporary file under data_dir/tmp (uploads). The
 * operation owns it: it renames it into place or it is removed with the request pool. */
typedef struct {
    const char *path;
    apr_off_t size;
    const char *content_type; /* as the client declared it (never trusted for storage) */
    const char *filename;     /* X-File-Name header or ?name=; NULL when not given */
} jr_upload_t;

typedef struct jr_ctx {
    apr_pool_t *pool;
    jr_db_t *db;
    const jr_config_t *cfg;
    jr_identity_t who;
    jr_iface_e iface;
    const char *client_ip;
    const char *base_url; /* scheme://host[:port] of this server for links shown to people */
    const char *method;
    /* The request's path and query string as they came (still percent-encoded); NULL outside
     * httpd. Part of the response cache's key (jr_rcache.h). */
    const char *raw_path;
    const char *raw_args;
    apr_table_t *params; /* path parameters by name */
    apr_table_t *query;  /* decoded query string */
    struct jr_counters *counters; /* shared counters (rate limits, failures); may be NULL */
    jr_upload_t *upload;          /* routes with JR_BODY_UPLOAD */
    /* Where a streamed list hands its bytes (the host's output); NULL keeps the whole answer
     * in memory. See jr_jw_list_begin (jr_cursor.h). */
    jr_jw_flush_fn *flush;
    void *flush_baton;
    struct jr_page *page; /* a list's page (jr_cursor.h): has_more, next_cursor */
    apr_array_header_t *hooks; /* run when the road's transaction ends (jr_road.h) */
    const char *allow;         /* no route for the method: the methods the path has */
    /* A row read early in the request that carries the database's snapshot (the key's lookup
     * on PostgreSQL: jr_db_generation's "carried"); NULL when none, or once the request
     * itself wrote (its own write would make the next request miss the page). */
    const jr_rows_t *snapshot_row;
    /* Outbox rows written through this context (jr_event), committed or not: the caller
     * that committed knows there is something to announce (journal-worker's Redis). */
    int events_written;
} jr_ctx_t;

void jr_result_init(jr_result_t *res, apr_pool_t *p);

/* Fills res with {"error": message}. Returns status: what the operation answered. */
int jr_fail(jr_result_t *res, apr_pool_t *p, int status, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* {"ok": true} with 200. */
int jr_reply_ok(jr_result_t *res, apr_pool_t *p);
/* {"ok": true, "count": count} with 200: how many records a bulk action changed. */
int jr_reply_ok_count(jr_result_t *res, apr_pool_t *p, long long count);
/* An answer already serialised (jr_jw). */
int jr_reply_raw(jr_result_t *res, int status, const char *body, size_t len);

/* An integer path parameter (the router guarantees its form). */
long long jr_param_id(const jr_ctx_t *ctx, const char *name);

/* 1 when ctx's request may change data: any method but GET, HEAD and OPTIONS, and work outside
 * a request (no method). */
int jr_ctx_writes(const jr_ctx_t *ctx);

/* 1 when the caller may see records of branch_id. */
int jr_branch_visible(const jr_ctx_t *ctx, long long branch_id);

/* Reads limit/offset from the query. Returns 0, or fills res with a 400 and returns -1. */
#define JR_LIMIT_DEFAULT 50
#define JR_LIMIT_MAX 1000
int jr_list_params(jr_ctx_t *ctx, jr_result_t *res, long long *limit, long long *offset);
/* The same with another default limit. */
int jr_list_params_dflt(jr_ctx_t *ctx, jr_result_t *res, long long dflt, long long *limit,
                        long long *offset);

/* Reads an optional integer id from the query ("branch_id"): 0 when absent, -1 with a 400
 * in res when malformed. */
long long jr_query_id(jr_ctx_t *ctx, jr_result_t *res, const char *name);

/* JSON array text of ids, e.g. "[1,5]". */
const char *jr_ids_json(apr_pool_t *p, const apr_array_header_t *ids);

/* Sorted, de-duplicated ids of a JSON integer array. */
apr_array_header_t *jr_ids_from_json(apr_pool_t *p, const json_t *arr);

/* Writes one audit row in the caller's transaction. changes: JSON array of field names or
 * NULL. Never pass secret values: names only. */
apr_status_t jr_audit(jr_ctx_t *ctx, const char *action, const char *entity_type,
                      long long entity_id, const json_t *changes);
/* The same for records whose identity is text (an IP ban). */
apr_status_t jr_audit_ref(jr_ctx_t *ctx, const char *action, const char *entity_type,
                          const char *entity_ref, const json_t *changes);

/* Answers with the writer's finished document. */
int jr_reply_jw(jr_result_t *res, int status, jr_jw_t *w);

/* ---- the road's services to operations (the road itself: jr_road.h) ---- */

/* Called once the request's writes are committed (files replaced or deleted can go), or,
 * for jr_on_rollback, once they are undone (a file stored for them goes). On a route that
 * does not write, the first kind runs when the answer is a success, the second otherwise. */
typedef void jr_hook_fn(jr_ctx_t *ctx, void *baton);
void jr_after_commit(jr_ctx_t *ctx, jr_hook_fn *fn, void *baton);
void jr_on_rollback(jr_ctx_t *ctx, jr_hook_fn *fn, void *baton);

/* fn in a transaction of its own, committed when it returns APR_SUCCESS and rolled back
 * otherwise. Never inside the road's transaction of a writing route. */
typedef apr_status_t jr_tx_fn(jr_ctx_t *ctx, void *baton);
apr_status_t jr_tx_run(jr_ctx_t *ctx, jr_tx_fn *fn, void *baton);

/* The standard answers. Each fills res and returns its status. */
int jr_err_db(jr_ctx_t *ctx, jr_result_t *res);       /* 503 */
int jr_err_busy(jr_ctx_t *ctx, jr_result_t *res);     /* 503, retry */
int jr_err_internal(jr_ctx_t *ctx, jr_result_t *res); /* 500 */
/* 404 "<noun> not found" */
int jr_err_not_found(jr_ctx_t *ctx, jr_result_t *res, const char *noun);
int jr_err_conflict(jr_ctx_t *ctx, jr_result_t *res, const char *fmt, ...)
    __attribute__((format(printf, 3, 4))); /* 409 */
/* 400 about one field of the input (field is kept for a machine-readable error later). */
int jr_err_invalid(jr_ctx_t *ctx, jr_result_t *res, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* A 400 with the message of a body check (jr_json_validate), which names the field. */
int jr_err_body(jr_ctx_t *ctx, jr_result_t *res, const char *msg);
/* A write statement failed: 409 conflict_msg when it was a unique violation and a message is
 * given, 500 otherwise. The road rolls the transaction back. */
int jr_err_write(jr_ctx_t *ctx, jr_result_t *res, const char *conflict_msg);

/* Runs the hooks of the request's end (committed: 1 after a commit, 0 after a rollback). */
void jr_hooks_run(jr_ctx_t *ctx, int committed);

#endif
