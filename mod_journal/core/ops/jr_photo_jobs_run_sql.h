/* The statements of jr_photo_jobs_run.c (see jr_stmts.h): one X(ID, SQL) row each, or
 * X(ID, SQLite SQL, PostgreSQL SQL) where the dialects differ. */
#ifndef JR_PHOTO_JOBS_RUN_SQL_H
#define JR_PHOTO_JOBS_RUN_SQL_H

/* Rows of one action, and nothing at all while the photo worker is switched off. */
#define PHOTO_WHERE(action)                                                                        \
    " AND action = '" action "' AND NOT EXISTS (SELECT 1 FROM settings"                            \
    " WHERE name = 'photo_worker_enabled' AND value = 'false')"
#define PHOTO_RETURNING                                                                            \
    " RETURNING id, 'entry' AS entity_type, entry_id AS entity_id, branch_id, attempts"

#define JR_PHOTO_JOBS_RUN_STMTS(X)                                                                 \
    JR_QUEUE_STMTS(X, PHOTO_AI, "photo_jobs", "queued", PHOTO_WHERE("ai"), PHOTO_RETURNING)        \
    JR_QUEUE_STMTS(X, PHOTO_ENHANCE, "photo_jobs", "queued", PHOTO_WHERE("enhance"),               \
                   PHOTO_RETURNING)                                                                \
    X(PHOTO_JOB_TASK,                                                                              \
      "SELECT j.action, j.params, e.deleted_at, p.stored_name FROM photo_jobs j"                   \
      " JOIN entries e ON e.id = j.entry_id LEFT JOIN photos p ON p.owner_type = 'entry'"          \
      " AND p.owner_id = j.entry_id AND p.role = 'current' WHERE j.id = " JR_INT)                  \
    X(PHOTO_JOB_STARTED,                                                                           \
      "UPDATE photo_jobs SET started_at = COALESCE(started_at, %s) WHERE id = " JR_INT)            \
    X(PHOTO_JOB_RESULT,                                                                            \
      "UPDATE photo_jobs SET result_file = %s, result_size = " JR_INT ", result_width = " JR_INT   \
      ", result_height = " JR_INT ", result_type = %s, result_sha256 = %s, finished_at = %s"       \
      " WHERE id = " JR_INT)                                                                       \
    X(PHOTO_JOB_FINISHED, "UPDATE photo_jobs SET finished_at = %s WHERE id = " JR_INT)             \
    X(PHOTO_JOB_EVENT_ROW,                                                                         \
      "SELECT id, entry_id, branch_id, action, status, last_error, result_size, result_width,"     \
      " result_height, result_type FROM photo_jobs WHERE id = " JR_INT)                            \
    X(PHOTO_JOBS_DELETE_ENTRY,                                                                     \
      "DELETE FROM photo_jobs WHERE entry_id = " JR_INT " RETURNING result_file")                  \
    /* end of JR_PHOTO_JOBS_RUN_STMTS */

#endif
