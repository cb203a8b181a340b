/* Job queues consumed by journal-worker: claims with leases, lease renewal, a guarded final
 * update, back-off. The mechanics are generic: a queue is a table with the columns status,
 * attempts, lease_owner, lease_until, run_after, last_error and the statements below; what a
 * job does lives in its handler (jr_ai.c for the AI text checks). */
#ifndef JR_JOBS_H
#define JR_JOBS_H

#include "jr_ctx.h"
#include "jr_stmts.h"

typedef struct {
    const char *name;    /* for logs: "ai" */
    const char *channel; /* worker_signals name and PostgreSQL LISTEN channel */
    int max_attempts;    /* a claim beyond this fails the job (spec 8: 3) */
    /* Statement labels. claim_*: (owner, lease_until, now, due_before, limit), RETURNING id,
     * entity_type, entity_id, branch_id, attempts. renew: (lease_until, now, id, owner).
     * settle: (status, run_after, last_error, refund, now, id, owner). due: (now) -> ready,
     * next_run, next_lease. held: (host prefix x2) -> id, lease_owner. expire: (id, owner). */
    const char *st_claim_expired, *st_claim_pending, *st_renew, *st_settle, *st_due, *st_held,
        *st_expire;
} jr_queue_t;

/* The statements of a queue on table t whose waiting status is st ('pending', 'queued'),
 * labelled pfx_claim_expired, pfx_claim_pending, ... (jr_queue_t). where narrows every
 * statement to the queue's rows (" AND action = 'x'", or ""); ret is the claims' RETURNING
 * clause. Two claims rather than one OR: each walks its own index in id order. The settle
 * is the final word on a job: only the lease holder's update matches. */
#define JR_Q_SET(t)                                                                          \
    "UPDATE " t " SET status = 'processing', lease_owner = %s, lease_until = %s,"            \
    " attempts = attempts + 1, run_after = NULL, updated_at = %s WHERE id IN (SELECT id"     \
    " FROM " t " WHERE "
#define JR_Q_EXPIRED "status = 'processing' AND (lease_until IS NULL OR lease_until <= %s)"
#define JR_Q_WAITING(st) "status = '" st "' AND (run_after IS NULL OR run_after <= %s)"
#define JR_Q_LIMIT " ORDER BY id LIMIT CAST(%s AS INTEGER)"
#define JR_QUEUE_RETURNING " RETURNING id, entity_type, entity_id, branch_id, attempts"
#define JR_QUEUE_STMTS(pfx, t, st, where, ret)                                               \
    {pfx "_claim_expired", JR_Q_SET(t) JR_Q_EXPIRED where JR_Q_LIMIT ")" ret,                \
     JR_Q_SET(t) JR_Q_EXPIRED where JR_Q_LIMIT " FOR UPDATE SKIP LOCKED)" ret},              \
    {pfx "_claim_pending", JR_Q_SET(t) JR_Q_WAITING(st) where JR_Q_LIMIT ")" ret,            \
     JR_Q_SET(t) JR_Q_WAITING(st) where JR_Q_LIMIT " FOR UPDATE SKIP LOCKED)" ret},          \
    {pfx "_renew",                                                                           \
     "UPDATE " t " SET lease_until = %s, updated_at = %s WHERE id = " JR_INT                 \
     " AND lease_owner = %s AND status = 'processing'",                                      \
     NULL},                                                                                  \
    {pfx "_settle",                                                                          \
     "UPDATE " t " SET status = %s, run_after = %s, last_error = %s,"                        \
     " attempts = attempts - CAST(%s AS INTEGER), lease_owner = NULL, lease_until = NULL,"   \
     " updated_at = %s WHERE id = " JR_INT " AND lease_owner = %s AND status = 'processing'", \
     NULL},                                                                                  \
    {pfx "_due",                                                                             \
     "SELECT CASE WHEN EXISTS (SELECT 1 FROM " t " WHERE " JR_Q_WAITING(st) where            \
     ") THEN 1 ELSE 0 END AS ready, (SELECT MIN(run_after) FROM " t " WHERE status = '" st  \
     "'" where ") AS next_run, (SELECT MIN(COALESCE(lease_until, '')) FROM " t               \
     " WHERE status = 'processing'" where ") AS next_lease",                                 \
     NULL},                                                                                  \
    {pfx "_held",                                                                            \
     "SELECT id, lease_owner FROM " t " WHERE status = 'processing'" where                   \
     " AND substr(lease_owner, 1, length(%s)) = %s",                                         \
     NULL},                                                                                  \
    {pfx "_expire",                                                                          \
     "UPDATE " t " SET lease_until = '1970-01-01T00:00:00Z' WHERE id = " JR_INT              \
     " AND lease_owner = %s AND status = 'processing' AND lease_until > '1970-01-01T00:00:00Z'", \
     NULL}

/* The jr_queue_t of statements made by JR_QUEUE_STMTS with the same pfx. */
#define JR_QUEUE_DEF(pfx, channel, max_attempts)                                             \
    {pfx, channel, max_attempts, pfx "_claim_expired", pfx "_claim_pending", pfx "_renew",   \
     pfx "_settle", pfx "_due", pfx "_held", pfx "_expire"}

/* A claimed job. owner is the lease holder's name: "host:pid:n", unique per claim. */
typedef struct {
    long long id;
    const char *entity_type;
    long long entity_id;
    long long branch_id;
    int attempts; /* attempts so far, this claim included */
    const char *owner;
} jr_job_t;

/* The AI check queue (table ai_jobs). */
extern const jr_queue_t jr_queue_ai;

/* A lease holder's name. n makes every claim's name unique within the process. */
const char *jr_job_owner(apr_pool_t *p, const char *host, long pid, unsigned long n);

/* In the caller's write transaction: claims up to max jobs, expired leases first (a job
 * whose worker died), then pending jobs whose back-off is over, oldest first. Each claim
 * counts an attempt, so a job that kills its worker cannot loop for ever. *jobs receives
 * jr_job_t elements (possibly none). PostgreSQL: FOR UPDATE SKIP LOCKED, so concurrent
 * claimers never wait for each other; SQLite: the caller's BEGIN IMMEDIATE serialises them. */
apr_status_t jr_jobs_claim(jr_ctx_t *ctx, const jr_queue_t *q, const char *owner, int max,
                           long long lease, apr_array_header_t **jobs);

/* In the caller's transaction: moves a job still held by job->owner out of 'processing'.
 * run_after 0 means at once; refund gives the claim's attempt back (a released or stale job).
 * 1 when the lease was still ours and the row changed, 0 when another worker holds the job
 * now (or it is gone), -1 on a database error. */
int jr_job_settle(jr_ctx_t *ctx, const jr_queue_t *q, const jr_job_t *job, const char *status,
                  apr_time_t run_after, const char *error, int refund);

/* Extends the leases of the jobs in its own transaction; lost[i] becomes 1 for a job that is
 * no longer ours. */
apr_status_t jr_jobs_renew(jr_ctx_t *ctx, const jr_queue_t *q, jr_job_t *const *jobs, int n,
                           long long lease, int *lost);

/* Whether a claim would find work now (*ready), and when work becomes due otherwise (*next:
 * the earliest back-off end or lease expiry, 0 when none). One cheap indexed read. */
apr_status_t jr_jobs_due(jr_ctx_t *ctx, const jr_queue_t *q, int *ready, apr_time_t *next);

/* Expires at once the leases held by processes of this host that no longer exist (a worker
 * killed with SIGKILL), so the next claim takes their jobs without waiting for the lease.
 * The number expired, or -1 on a database error. */
int jr_jobs_reclaim_dead(jr_ctx_t *ctx, const jr_queue_t *q, const char *host, long self_pid);

/* Seconds to wait before the next attempt after a failed one: 2^attempt (2 s, 4 s, ...,
 * at most 300 s), or the server's Retry-After when longer (at most an hour). */
long long jr_job_backoff(int attempt, long long retry_after);

#endif
