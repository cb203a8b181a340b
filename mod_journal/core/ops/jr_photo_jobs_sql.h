/* The statements of jr_photo_jobs.c (see jr_stmts.h): one X(ID, SQL) row each, or
 * X(ID, SQLite SQL, PostgreSQL SQL) where the dialects differ. */
#ifndef JR_PHOTO_JOBS_SQL_H
#define JR_PHOTO_JOBS_SQL_H

#define PHOTO_JOB_COLS                                                                             \
    "id, entry_id, action, params, status, applied, attempts, last_error, result_file,"            \
    " result_size, result_width, result_height, result_type, result_sha256, created_at,"           \
    " updated_at, started_at, finished_at"

#define JR_PHOTO_JOBS_STMTS(X)                                                                     \
    X(PHOTO_JOB_INSERT,                                                                            \
      "INSERT INTO photo_jobs (entry_id, branch_id, action, params, status, applied, attempts,"    \
      " source_sha256, created_at, updated_at, created_by) VALUES (" JR_INT ", " JR_INT            \
      ", %s, %s, 'queued', 0, 0, %s, %s, %s, " JR_INT ") RETURNING id")                            \
    X(PHOTO_JOBS_OF_ENTRY, "SELECT " PHOTO_JOB_COLS " FROM photo_jobs WHERE entry_id = " JR_INT    \
                           " ORDER BY id DESC")                                                    \
    X(PHOTO_JOB_GET, "SELECT " PHOTO_JOB_COLS " FROM photo_jobs WHERE id = " JR_INT                \
                     " AND entry_id = " JR_INT)                                                    \
    /* In the write transaction that changes the job: PostgreSQL makes a concurrent apply and      \
     * reject wait here and then see the committed row. */                                         \
    X(PHOTO_JOB_LOCK,                                                                              \
      "SELECT " PHOTO_JOB_COLS " FROM photo_jobs WHERE id = " JR_INT " AND entry_id = " JR_INT,    \
      "SELECT " PHOTO_JOB_COLS " FROM photo_jobs WHERE id = " JR_INT " AND entry_id = " JR_INT     \
      " FOR UPDATE")                                                                               \
    X(PHOTO_JOB_APPLIED, "UPDATE photo_jobs SET applied = 1, result_file = NULL, updated_at = %s"  \
                         " WHERE id = " JR_INT)                                                    \
    X(PHOTO_JOB_REJECTED, "UPDATE photo_jobs SET status = 'rejected', result_file = NULL,"         \
                          " updated_at = %s WHERE id = " JR_INT)                                   \
    X(PHOTO_SET_ROLE, "UPDATE photos SET role = %s WHERE id = " JR_INT)                            \
    X(PHOTO_DELETE_ID, "DELETE FROM photos WHERE id = " JR_INT)                                    \
    /* end of JR_PHOTO_JOBS_STMTS */

#endif
