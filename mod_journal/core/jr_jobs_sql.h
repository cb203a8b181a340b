/* The statements of jr_jobs.c (see jr_stmts.h): one X(ID, SQL) row each, or
 * X(ID, SQLite SQL, PostgreSQL SQL) where the dialects differ. A queue's statements come from
 * one macro, JR_QUEUE_STMTS, so another table can be a queue without copying the SQL. */
#ifndef JR_JOBS_SQL_H
#define JR_JOBS_SQL_H

/* The statements of a queue ID on table t whose waiting status is st ('pending', 'queued'),
 * with the ids JR_Q_<ID>_CLAIM_EXPIRED, _CLAIM_PENDING, _RENEW, _SETTLE, _DUE, _HELD and
 * _EXPIRE (jr_queue_t, JR_QUEUE_DEF in jr_jobs.h). where narrows every statement to the
 * queue's rows (" AND action = 'x'", or ""); ret is the claims' RETURNING clause. Two claims
 * rather than one OR: each walks its own index in id order. The settle is the final word on a
 * job: only the lease holder's update matches. */
#define JR_QUEUE_SET(t)                                                                            \
    "UPDATE " t " SET status = 'processing', lease_owner = %s, lease_until = %s,"                  \
    " attempts = attempts + 1, run_after = NULL, updated_at = %s WHERE id IN (SELECT id"           \
    " FROM " t " WHERE "
#define JR_QUEUE_EXPIRED "status = 'processing' AND (lease_until IS NULL OR lease_until <= %s)"
#define JR_QUEUE_WAITING(st) "status = '" st "' AND (run_after IS NULL OR run_after <= %s)"
#define JR_QUEUE_LIMIT " ORDER BY id LIMIT CAST(%s AS INTEGER)"
#define JR_QUEUE_RETURNING " RETURNING id, entity_type, entity_id, branch_id, attempts"
#define JR_QUEUE_STMTS(X, ID, t, st, where, ret)                                                   \
    X(ID##_CLAIM_EXPIRED, JR_QUEUE_SET(t) JR_QUEUE_EXPIRED where JR_QUEUE_LIMIT ")" ret,           \
      JR_QUEUE_SET(t) JR_QUEUE_EXPIRED where JR_QUEUE_LIMIT " FOR UPDATE SKIP LOCKED)" ret)        \
    X(ID##_CLAIM_PENDING, JR_QUEUE_SET(t) JR_QUEUE_WAITING(st) where JR_QUEUE_LIMIT ")" ret,       \
      JR_QUEUE_SET(t) JR_QUEUE_WAITING(st) where JR_QUEUE_LIMIT " FOR UPDATE SKIP LOCKED)" ret)    \
    X(ID##_RENEW, "UPDATE " t " SET lease_until = %s, updated_at = %s WHERE id = " JR_INT          \
                  " AND lease_owner = %s AND status = 'processing'")                               \
    X(ID##_SETTLE,                                                                                 \
      "UPDATE " t " SET status = %s, run_after = %s, last_error = %s,"                             \
      " attempts = attempts - CAST(%s AS INTEGER), lease_owner = NULL, lease_until = NULL,"        \
      " updated_at = %s WHERE id = " JR_INT " AND lease_owner = %s AND status = 'processing'")     \
    X(ID##_DUE,                                                                                    \
      "SELECT CASE WHEN EXISTS (SELECT 1 FROM " t " WHERE " JR_QUEUE_WAITING(st) where             \
      ") THEN 1 ELSE 0 END AS ready, (SELECT MIN(run_after) FROM " t " WHERE status = '" st       \
      "'" where ") AS next_run, (SELECT MIN(COALESCE(lease_until, '')) FROM " t                    \
      " WHERE status = 'processing'" where ") AS next_lease")                                      \
    X(ID##_HELD, "SELECT id, lease_owner FROM " t " WHERE status = 'processing'" where             \
                 " AND substr(lease_owner, 1, length(%s)) = %s")                                   \
    X(ID##_EXPIRE, "UPDATE " t " SET lease_until = '1970-01-01T00:00:00Z' WHERE id = " JR_INT      \
                   " AND lease_owner = %s AND status = 'processing'"                               \
                   " AND lease_until > '1970-01-01T00:00:00Z'")

#define JR_JOBS_STMTS(X)                                                                           \
    JR_QUEUE_STMTS(X, AI, "ai_jobs", "pending", "", JR_QUEUE_RETURNING)                            \
    X(SIGNAL_BUMP,                                                                                 \
      "UPDATE worker_signals SET generation = generation + 1, updated_at = %s WHERE name = %s")    \
    /* PostgreSQL only, after the writers' COMMIT (jr_queue_wake): one or two channels in one     \
     * transaction of its own, not flushed before it answers (it carries nothing durable), so     \
     * the lock that orders notifications is held for a moment, not for a WAL flush. */          \
    X(SIGNAL_NOTIFY, "SELECT %s AS a, %s AS b",                                                    \
      "SELECT set_config('synchronous_commit', 'off', true) AS a, pg_notify(%s, '') IS NULL"      \
      " AS b, pg_notify(%s, '') IS NULL AS c")                                                     \
    /* end of JR_JOBS_STMTS */

#endif
