/* The statements of jr_jobs.c (see jr_stmts.h): one X(ID, SQL) row each, or
 * X(ID, SQLite SQL, PostgreSQL SQL) where the dialects differ. */
#ifndef JR_JOBS_SQL_H
#define JR_JOBS_SQL_H

#define AI_CLAIM_SET                                                                               \
    "UPDATE ai_jobs SET status = 'processing', lease_owner = %s, lease_until = %s,"                \
    " attempts = attempts + 1, run_after = NULL, updated_at = %s WHERE id IN (SELECT id"           \
    " FROM ai_jobs WHERE "
#define AI_CLAIM_RET " RETURNING id, entity_type, entity_id, branch_id, attempts"
#define AI_EXPIRED "status = 'processing' AND (lease_until IS NULL OR lease_until <= %s)"
#define AI_PENDING "status = 'pending' AND (run_after IS NULL OR run_after <= %s)"
#define AI_LIMIT_N " ORDER BY id LIMIT CAST(%s AS INTEGER)"

#define JR_JOBS_STMTS(X)                                                                           \
    /* Two claims rather than one OR: each walks its own index in id order. */                     \
    X(AI_CLAIM_EXPIRED, AI_CLAIM_SET AI_EXPIRED AI_LIMIT_N ")" AI_CLAIM_RET,                       \
      AI_CLAIM_SET AI_EXPIRED AI_LIMIT_N " FOR UPDATE SKIP LOCKED)" AI_CLAIM_RET)                  \
    X(AI_CLAIM_PENDING, AI_CLAIM_SET AI_PENDING AI_LIMIT_N ")" AI_CLAIM_RET,                       \
      AI_CLAIM_SET AI_PENDING AI_LIMIT_N " FOR UPDATE SKIP LOCKED)" AI_CLAIM_RET)                  \
    X(AI_RENEW, "UPDATE ai_jobs SET lease_until = %s, updated_at = %s WHERE id = " JR_INT          \
                " AND lease_owner = %s AND status = 'processing'")                                 \
    /* The final word on a job: only the lease holder's update matches. */                         \
    X(AI_SETTLE,                                                                                   \
      "UPDATE ai_jobs SET status = %s, run_after = %s, last_error = %s,"                           \
      " attempts = attempts - CAST(%s AS INTEGER), lease_owner = NULL, lease_until = NULL,"        \
      " updated_at = %s WHERE id = " JR_INT " AND lease_owner = %s AND status = 'processing'")     \
    X(AI_DUE,                                                                                      \
      "SELECT CASE WHEN EXISTS (SELECT 1 FROM ai_jobs WHERE " AI_PENDING ") THEN 1 ELSE 0 END"     \
      " AS ready, (SELECT MIN(run_after) FROM ai_jobs WHERE status = 'pending') AS next_run,"      \
      " (SELECT MIN(COALESCE(lease_until, '')) FROM ai_jobs WHERE status = 'processing')"          \
      " AS next_lease")                                                                            \
    X(AI_HELD, "SELECT id, lease_owner FROM ai_jobs WHERE status = 'processing'"                   \
               " AND substr(lease_owner, 1, length(%s)) = %s")                                     \
    X(AI_EXPIRE, "UPDATE ai_jobs SET lease_until = '1970-01-01T00:00:00Z' WHERE id = " JR_INT      \
                 " AND lease_owner = %s AND status = 'processing' AND lease_until > "              \
                 "'1970-01-01T00:00:00Z'")                                                         \
    /* end of JR_JOBS_STMTS */

#endif
