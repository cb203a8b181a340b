/* See jr_jobs.h. Times are the project's ISO 8601 text (second precision), compared as text:
 * a back-off ends on the next whole second at the earliest, never early. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include <apr_atomic.h>
#include <apr_strings.h>

#include "jr_jobs.h"
#include "jr_log.h"
#include "jr_stmts.h"
#include "jr_util.h"

const jr_queue_t jr_queue_ai = JR_QUEUE_DEF(AI, "ai", "journal_ai", "pending", 3);

const char *jr_job_owner(apr_pool_t *p, const char *host, long pid, unsigned long n)
{
    return jr_psprintf(p, "%s:%ld:%lu", host, pid, n);
}

static apr_status_t claim_some(jr_ctx_t *ctx, jr_stmt_id_t stmt, const char *owner, int max,
                               const char *until, const char *now, apr_array_header_t *out)
{
    apr_pool_t *p = ctx->pool;
    jr_rows_t *rows;
    int i;
    if (max <= 0) {
        return APR_SUCCESS;
    }
    if (jr_db_select(ctx->db, p, stmt, &rows, JR_ARGS(owner, until, now, now, jr_i64(p, max))) !=
        APR_SUCCESS) {
        return APR_EGENERAL;
    }
    for (i = 0; i < rows->nrows; ++i) {
        jr_job_t *j = apr_array_push(out);
        j->id = jr_rows_int(rows, i, "id", 0);
        j->entity_type = jr_rows_get(rows, i, "entity_type");
        j->entity_id = jr_rows_int(rows, i, "entity_id", 0);
        j->branch_id = jr_rows_int(rows, i, "branch_id", 0);
        j->attempts = (int)jr_rows_int(rows, i, "attempts", 1);
        j->owner = owner;
    }
    return APR_SUCCESS;
}

apr_status_t jr_jobs_claim(jr_ctx_t *ctx, const jr_queue_t *q, const char *owner, int max,
                           long long lease, apr_array_header_t **jobs)
{
    apr_pool_t *p = ctx->pool;
    apr_time_t t = apr_time_now();
    const char *now = jr_iso_time(p, t), *until = jr_iso_time(p, t + apr_time_from_sec(lease));
    apr_array_header_t *out = apr_array_make(p, max > 0 ? max : 1, sizeof(jr_job_t));
    *jobs = out;
    if (claim_some(ctx, q->st_claim_expired, owner, max, until, now, out) != APR_SUCCESS ||
        claim_some(ctx, q->st_claim_pending, owner, max - out->nelts, until, now, out) !=
            APR_SUCCESS) {
        return APR_EGENERAL;
    }
    return APR_SUCCESS;
}

/* The text of a time at which a job may run again: rounded up to the next whole second. */
static const char *not_before(apr_pool_t *p, apr_time_t t)
{
    return t ? jr_iso_time(p, t + APR_USEC_PER_SEC - 1) : NULL;
}

int jr_job_settle(jr_ctx_t *ctx, const jr_queue_t *q, const jr_job_t *job, const char *status,
                  apr_time_t run_after, const char *error, int refund)
{
    apr_pool_t *p = ctx->pool;
    int n = 0;
    if (jr_db_exec(ctx->db, p, q->st_settle, &n,
                   JR_ARGS(status, not_before(p, run_after), error, refund ? "1" : "0",
                           jr_now_iso(p), jr_i64(p, job->id), job->owner)) != APR_SUCCESS) {
        return -1;
    }
    if (n == 1 && !strcmp(status, q->waiting)) {
        /* a retry or a job given back: any worker may take it */
        jr_queue_wake(ctx->db, q->channel);
    }
    return n == 1;
}

apr_status_t jr_jobs_renew(jr_ctx_t *ctx, const jr_queue_t *q, jr_job_t *const *jobs, int n,
                           long long lease, int *lost)
{
    apr_pool_t *p = ctx->pool;
    apr_time_t t = apr_time_now();
    const char *now = jr_iso_time(p, t), *until = jr_iso_time(p, t + apr_time_from_sec(lease));
    int i, changed;
    if (n == 0) {
        return APR_SUCCESS;
    }
    if (jr_db_begin(ctx->db) != APR_SUCCESS) {
        return APR_EGENERAL;
    }
    for (i = 0; i < n; ++i) {
        changed = 0;
        if (jr_db_exec(ctx->db, p, q->st_renew, &changed,
                       JR_ARGS(until, now, jr_i64(p, jobs[i]->id), jobs[i]->owner)) !=
            APR_SUCCESS) {
            jr_db_rollback(ctx->db);
            return APR_EGENERAL;
        }
        lost[i] = changed != 1;
    }
    return jr_db_commit(ctx->db);
}

apr_status_t jr_jobs_due(jr_ctx_t *ctx, const jr_queue_t *q, int *ready, apr_time_t *next)
{
    apr_pool_t *p = ctx->pool;
    const char *now = jr_now_iso(p), *run, *lease;
    apr_time_t t;
    jr_rows_t *rows;
    *ready = 0;
    *next = 0;
    if (jr_db_select(ctx->db, p, q->st_due, &rows, JR_ARGS(now)) != APR_SUCCESS ||
        rows->nrows != 1) {
        return APR_EGENERAL;
    }
    run = jr_rows_get(rows, 0, "next_run");
    lease = jr_rows_get(rows, 0, "next_lease");
    *ready = jr_rows_int(rows, 0, "ready", 0) != 0 || (lease && strcmp(lease, now) <= 0);
    if (run && jr_parse_iso_time(run, &t) == 0) {
        *next = t;
    }
    if (lease && jr_parse_iso_time(lease, &t) == 0 && (!*next || t < *next)) {
        *next = t;
    }
    return APR_SUCCESS;
}

/* 1 when the process of a lease owner "host:pid:n" of this host is known to be gone. */
static int owner_dead(const char *owner, size_t host_len, long self_pid)
{
    char *end;
    long pid = strtol(owner + host_len, &end, 10);
    if (end == owner + host_len || *end != ':' || pid <= 0 || pid == self_pid) {
        return 0;
    }
    return kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

int jr_jobs_reclaim_dead(jr_ctx_t *ctx, const jr_queue_t *q, const char *host, long self_pid)
{
    apr_pool_t *p = ctx->pool;
    const char *prefix = apr_pstrcat(p, host, ":", NULL);
    jr_rows_t *rows;
    int i, n = 0, changed;
    if (jr_db_select(ctx->db, p, q->st_held, &rows, JR_ARGS(prefix, prefix)) != APR_SUCCESS) {
        return -1;
    }
    for (i = 0; i < rows->nrows; ++i) {
        const char *owner = jr_rows_get(rows, i, "lease_owner");
        changed = 0;
        if (!owner_dead(owner, strlen(prefix), self_pid)) {
            continue;
        }
        if (jr_db_exec(ctx->db, p, q->st_expire, &changed,
                       JR_ARGS(jr_rows_get(rows, i, "id"), owner)) != APR_SUCCESS) {
            return -1;
        }
        n += changed;
    }
    if (n > 0) {
        JR_LOG(JR07002, 0,
               "%d %s job(s) held by a worker of this host that no longer runs were "
               "returned to the queue",
               n, q->name);
    }
    return n;
}

long long jr_job_backoff(int attempt, long long retry_after)
{
    long long delay = 300;
    if (attempt >= 1 && attempt < 9) {
        delay = 1LL << attempt;
    }
    if (retry_after > delay) {
        delay = retry_after > 3600 ? 3600 : retry_after;
    }
    return delay;
}

/* The channels a wake-up can name, one bit each in the marks of jr_db_after_commit. */
static const char *const wake_channels[] = {"journal_ai", "journal_photo"};
#define WAKE_CHANNELS (sizeof(wake_channels) / sizeof(wake_channels[0]))

/* The channels whose NOTIFY this process owes: the commit that makes it non-zero sends it. */
static volatile apr_uint32_t wake_pending;
/* Held while this process's NOTIFY runs: one in flight, at most one waiting behind it. */
static pthread_mutex_t wake_sending = PTHREAD_MUTEX_INITIALIZER;

apr_status_t jr_queue_notify(jr_db_t *db, unsigned bits)
{
    const char *ch[2] = {NULL, NULL};
    apr_pool_t *p;
    jr_rows_t *rows;
    apr_status_t rv;
    size_t i;
    int n = 0;
    for (i = 0; i < WAKE_CHANNELS; ++i) {
        if (bits & (1u << i)) {
            ch[n++] = wake_channels[i];
        }
    }
    if (n == 0) {
        return APR_SUCCESS;
    }
    if ((rv = apr_pool_create(&p, db->pool)) != APR_SUCCESS) {
        return rv;
    }
    /* Two identical notifications of one transaction are delivered as one. */
    if ((rv = jr_db_select(db, p, JR_Q_SIGNAL_NOTIFY, &rows, JR_ARGS(ch[0], ch[n - 1]))) !=
        APR_SUCCESS) {
        JR_LOG(JR12160, 0,
               "the workers could not be told of new jobs on %s%s%s (NOTIFY failed: %s); "
               "their safety poll finds them",
               ch[0], n > 1 ? " and " : "", n > 1 ? ch[1] : "",
               db->last_error ? db->last_error : "unknown error");
    }
    apr_pool_destroy(p);
    return rv;
}

/* After a COMMIT that queued work (jr_db_after_commit). Every commit must be followed by a
 * NOTIFY that starts after it; one NOTIFY serves every commit that ended before it starts.
 * So a commit that finds a NOTIFY owed and not yet started adds its channels and leaves: the
 * owner takes the owed channels (and clears them) only once it may send, after this commit.
 * The NOTIFY's transaction takes the lock that orders notifications, like the writers' used
 * to, so it must not be one per commit under load. A connection with a waker (an httpd child)
 * hands the channels to it, which sends them from a thread of its own. */
static void wake_after_commit(jr_db_t *db, unsigned marks)
{
    apr_uint32_t old;
    if (db->waker) {
        db->waker->give(db->waker, marks);
        return;
    }
    do {
        old = apr_atomic_read32(&wake_pending);
    } while (apr_atomic_cas32(&wake_pending, old | (apr_uint32_t)marks, old) != old);
    if (old != 0) {
        return;
    }
    pthread_mutex_lock(&wake_sending);
    jr_queue_notify(db, apr_atomic_xchg32(&wake_pending, 0));
    pthread_mutex_unlock(&wake_sending);
}

void jr_queue_wake(jr_db_t *db, const char *channel)
{
    size_t i;
    /* SQLite: the workers hear every commit (an inotify watch on the database's files). */
    if (db->dialect != JR_DB_PGSQL) {
        return;
    }
    for (i = 0; i < WAKE_CHANNELS; ++i) {
        if (!strcmp(channel, wake_channels[i])) {
            jr_db_after_commit(db, wake_after_commit, 1u << i);
        }
    }
}

apr_status_t jr_queue_signal(jr_ctx_t *ctx, const char *channel)
{
    apr_pool_t *p = ctx->pool;
    if (jr_db_exec(ctx->db, p, JR_Q_SIGNAL_BUMP, NULL, JR_ARGS(jr_now_iso(p), channel)) !=
        APR_SUCCESS) {
        return APR_EGENERAL;
    }
    jr_queue_wake(ctx->db, channel);
    return APR_SUCCESS;
}
