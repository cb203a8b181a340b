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
    const char *waiting; /* the status of a job that waits for a worker: "pending", "queued" */
    int max_attempts;    /* a claim beyond this fails the job (spec 8: 3) */
    /* Statements. claim_*: (owner, lease_until, now, due_before, limit), RETURNING id,
     * entity_type, entity_id, branch_id, attempts. renew: (lease_until, now, id, owner).
     * settle: (status, run_after, last_error, refund, now, id, owner). due: (now) -> ready,
     * next_run, next_lease. held: (host prefix x2) -> id, lease_owner. expire: (id, owner). */
    jr_stmt_id_t st_claim_expired, st_claim_pending, st_renew, st_settle, st_due, st_held,
        st_expire;
} jr_queue_t;

/* The jr_queue_t of the statements JR_QUEUE_STMTS (jr_jobs_sql.h) made with the same ID. */
#define JR_QUEUE_DEF(ID, name, channel, waiting, max_attempts)                                     \
    {name,                     channel, waiting,  max_attempts,       JR_Q_##ID##_CLAIM_EXPIRED, \
     JR_Q_##ID##_CLAIM_PENDING, JR_Q_##ID##_RENEW, JR_Q_##ID##_SETTLE, JR_Q_##ID##_DUE,            \
     JR_Q_##ID##_HELD,          JR_Q_##ID##_EXPIRE}

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
 * A job that waits again (status q->waiting) wakes the workers after the commit.
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

/* Wakes the workers of a channel ("journal_ai", "journal_photo") once the caller's write
 * transaction on db commits: every writer that makes a job wait for a worker calls it (in the
 * transaction, or after its autocommitted write). PostgreSQL: a NOTIFY after the COMMIT, in a
 * transaction of its own, not inside the writer's: a transaction that notifies takes a
 * database-wide lock at commit and holds it until its commit is flushed, so notifying writers
 * would commit one at a time. With db->waker set (an httpd child) the channels go to it once
 * the COMMIT has succeeded; otherwise the committing thread sends the NOTIFY, and the
 * concurrent commits of a process share one (docs/worker.md, "Wake-ups"). A process that dies
 * between the COMMIT and the NOTIFY leaves the job to the workers' safety poll. SQLite:
 * nothing, the workers hear every commit. */
void jr_queue_wake(jr_db_t *db, const char *channel);

/* A sender of wake-ups that runs apart from the committing threads (mj_waker.c, one per
 * database in an httpd child). give() takes the channels of a commit that has ended (bits
 * for jr_queue_notify) and must send a NOTIFY of them that starts after the call. */
typedef struct jr_waker {
    void (*give)(struct jr_waker *w, unsigned channels);
} jr_waker_t;

/* Sends the NOTIFY of channels (the bits a jr_waker_t is given) on db, in a transaction of its
 * own that is not flushed before it answers (it carries nothing durable). A failure is logged
 * (JR12160): the workers' safety poll finds the jobs. */
apr_status_t jr_queue_notify(jr_db_t *db, unsigned channels);

/* In the caller's transaction: bumps a worker channel's generation (a counter that every
 * client can read) and wakes its workers after the commit (jr_queue_wake). */
apr_status_t jr_queue_signal(jr_ctx_t *ctx, const char *channel);

/* Seconds to wait before the next attempt after a failed one: 2^attempt (2 s, 4 s, ...,
 * at most 300 s), or the server's Retry-After when longer (at most an hour). */
long long jr_job_backoff(int attempt, long long retry_after);

#endif
