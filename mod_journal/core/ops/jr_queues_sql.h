/* The statements of jr_queues.c (see jr_stmts.h): one X(ID, SQL) row each, or
 * X(ID, SQLite SQL, PostgreSQL SQL) where the dialects differ. */
#ifndef JR_QUEUES_SQL_H
#define JR_QUEUES_SQL_H

#define JR_QUEUES_STMTS(X)                                                                         \
    /* One open check per record (partial unique index): an open one is left as it is. */          \
    X(AI_JOB_OPEN,                                                                                 \
      "INSERT INTO ai_jobs (entity_type, entity_id, branch_id, status, attempts, created_at,"      \
      " updated_at) VALUES (%s, " JR_INT ", " JR_INT ", 'pending', 0, %s, %s)"                     \
      " ON CONFLICT (entity_type, entity_id) WHERE status IN ('pending', 'processing')"            \
      " DO NOTHING")                                                                               \
    X(AI_REQUEUE_ENTRIES,                                                                          \
      JR_SCOPED(                                                                                   \
          "UPDATE entries SET ai_status = 'pending' WHERE id IN (SELECT entity_id FROM ai_jobs"    \
          " WHERE entity_type = 'entry' AND status = 'failed' AND ",                               \
          "branch_id", ") RETURNING id"))                                                          \
    X(AI_REQUEUE_REPORTS,                                                                          \
      JR_SCOPED("UPDATE lesson_reports SET ai_status = 'pending' WHERE id IN (SELECT entity_id"    \
                " FROM ai_jobs WHERE entity_type = 'lesson_report' AND status = 'failed' AND ",    \
                "branch_id", ") RETURNING id"))                                                    \
    /* A failed job whose record has an open job already stays failed (one open check each). */    \
    X(AI_REQUEUE,                                                                                  \
      JR_SCOPED(                                                                                   \
          "UPDATE ai_jobs SET status = 'pending', attempts = 0, last_error = NULL,"                \
          " lease_owner = NULL, lease_until = NULL, run_after = NULL, text_hash = NULL,"           \
          " updated_at = %s WHERE status = 'failed' AND NOT EXISTS (SELECT 1 FROM ai_jobs o"       \
          " WHERE o.entity_type = ai_jobs.entity_type AND o.entity_id = ai_jobs.entity_id"         \
          " AND o.status IN ('pending', 'processing')) AND ",                                      \
          "branch_id", ""))                                                                        \
    X(PHOTO_REQUEUE,                                                                               \
      JR_SCOPED("UPDATE photo_jobs SET status = 'queued', attempts = 0, last_error = NULL,"        \
                " lease_owner = NULL, lease_until = NULL, run_after = NULL, started_at = NULL,"    \
                " finished_at = NULL, updated_at = %s WHERE status = 'failed' AND ",               \
                "branch_id", ""))                                                                  \
    /* A group moving to another branch takes its records' jobs along (history included), or       \
     * the old branch's keys would still count and requeue them. */                                \
    X(AI_JOBS_MOVE_GROUP,                                                                          \
      "UPDATE ai_jobs SET branch_id = " JR_INT " WHERE (entity_type = 'entry' AND entity_id IN"    \
      " (SELECT id FROM entries WHERE group_id = " JR_INT ")) OR (entity_type = 'lesson_report'"   \
      " AND entity_id IN (SELECT id FROM lesson_reports WHERE group_id = " JR_INT "))")            \
    X(PHOTO_JOBS_MOVE_GROUP,                                                                       \
      "UPDATE photo_jobs SET branch_id = " JR_INT                                                  \
      " WHERE entry_id IN (SELECT id FROM entries WHERE group_id = " JR_INT ")")                   \
    /* A record whose group moved to another branch takes its jobs along. */                       \
    X(AI_JOBS_FOLLOW_RECORD, "UPDATE ai_jobs SET branch_id = " JR_INT                              \
                             " WHERE entity_type = %s AND entity_id = " JR_INT)                    \
    X(PHOTO_JOBS_FOLLOW_ENTRY,                                                                     \
      "UPDATE photo_jobs SET branch_id = " JR_INT " WHERE entry_id = " JR_INT)                     \
    X(AI_STATUS_COUNTS, JR_SCOPED("SELECT status, COUNT(*) AS n FROM ai_jobs WHERE ",              \
                                  "branch_id", " GROUP BY status"))                                \
    X(PHOTO_STATUS_COUNTS, JR_SCOPED("SELECT status, COUNT(*) AS n FROM photo_jobs WHERE ",        \
                                     "branch_id", " GROUP BY status"))                             \
    /* end of JR_QUEUES_STMTS */

#endif
