/* The statements of jr_lessons.c (see jr_stmts.h): one X(ID, SQL) row each, or
 * X(ID, SQLite SQL, PostgreSQL SQL) where the dialects differ. */
#ifndef JR_LESSONS_SQL_H
#define JR_LESSONS_SQL_H

#define REPORT_COLS                                                                                \
    "r.id, r.group_id, r.branch_id, r.lesson_date, r.lesson_time, r.text, r.topic,"                \
    " r.text_original, r.text_ai, r.ai_status, r.ai_checked_at, r.ai_error,"                       \
    " r.created_at, r.updated_at, r.created_by, r.created_by_key"
#define REPORT_FILTER                                                                              \
    " FROM lesson_reports r WHERE (CAST(%s AS BIGINT) IS NULL OR r.group_id = CAST(%s AS BIGINT))" \
    " AND (CAST(%s AS BIGINT) IS NULL OR r.branch_id = CAST(%s AS BIGINT))"                        \
    " AND (CAST(%s AS TEXT) IS NULL OR r.lesson_date >= %s)"                                       \
    " AND (CAST(%s AS TEXT) IS NULL OR r.lesson_date <= %s) AND "

#define JR_LESSONS_STMTS(X)                                                                        \
    /* No time sorts after every time of its day; the cursor's position is (date, time or '',      \
     * id). */                                                                                     \
    X(REPORTS_LIST,                                                                                \
      JR_SCOPED("SELECT " REPORT_COLS ", COALESCE(r.lesson_time, '') AS sort_time" REPORT_FILTER,  \
                "r.branch_id",                                                                     \
                " AND (CAST(%s AS TEXT) IS NULL OR r.lesson_date < %s OR (r.lesson_date = %s"      \
                " AND (COALESCE(r.lesson_time, '') < %s OR (COALESCE(r.lesson_time, '') = %s"      \
                " AND r.id < CAST(%s AS BIGINT)))))"                                               \
                " ORDER BY r.lesson_date DESC, COALESCE(r.lesson_time, '') DESC, r.id DESC"        \
                " LIMIT CAST(%s AS BIGINT) OFFSET CAST(%s AS BIGINT)"))                            \
    X(REPORTS_SYNC,                                                                                \
      JR_SCOPED("SELECT " REPORT_COLS ", r.updated_at AS sync_at, NULL AS sync_deleted_at"         \
                " FROM lesson_reports r WHERE ",                                                   \
                "r.branch_id", JR_SYNC_TAIL("r.updated_at", "r.id", "NULL")))                      \
    X(REPORTS_COUNT, JR_SCOPED("SELECT COUNT(*) AS n" REPORT_FILTER, "r.branch_id", ""))           \
    X(REPORT_GET, "SELECT " REPORT_COLS " FROM lesson_reports r WHERE r.id = " JR_INT)             \
    X(REPORT_TAKEN,                                                                                \
      "SELECT id FROM lesson_reports WHERE group_id = " JR_INT " AND lesson_date = %s"             \
      " AND id <> " JR_INT)                                                                        \
    X(REPORT_INSERT,                                                                               \
      "INSERT INTO lesson_reports (group_id, branch_id, lesson_date, lesson_time, text, topic,"    \
      " ai_status, created_at, updated_at, created_by, created_by_key)"                            \
      " VALUES (" JR_INT ", " JR_INT ", %s, %s, %s, %s, %s, %s, %s, " JR_INT ", " JR_INT           \
      ") RETURNING id")                                                                            \
    X(REPORT_UPDATE,                                                                               \
      "UPDATE lesson_reports SET group_id = " JR_INT ", branch_id = " JR_INT ", lesson_date = %s," \
      " lesson_time = %s, text = %s, topic = %s, ai_status = %s, updated_at = %s"                  \
      " WHERE id = " JR_INT)                                                                       \
    X(REPORT_DELETE, "DELETE FROM lesson_reports WHERE id = " JR_INT)                              \
    X(REPORT_JOBS_DELETE,                                                                          \
      "DELETE FROM ai_jobs WHERE entity_type = 'lesson_report' AND entity_id = " JR_INT)           \
    X(VERSION_INSERT,                                                                              \
      "INSERT INTO lesson_report_versions (report_id, text, source, created_at, created_by,"       \
      " created_by_key) VALUES (" JR_INT ", %s, %s, %s, " JR_INT ", " JR_INT ")")                  \
    /* stream_version reads the columns in this order. */                                          \
    X(VERSIONS_LIST, "SELECT id, report_id, text, source, created_at, created_by, created_by_key"  \
                     " FROM lesson_report_versions WHERE report_id = " JR_INT " ORDER BY id DESC"  \
                     " LIMIT " JR_INT " OFFSET " JR_INT)                                           \
    X(VERSIONS_COUNT,                                                                              \
      "SELECT COUNT(*) AS n FROM lesson_report_versions WHERE report_id = " JR_INT)                \
    /* Drops the versions older than the newest N + 1 that are not the original (N is the          \
     * parameter); nothing while there are fewer. */                                               \
    X(VERSIONS_TRIM,                                                                               \
      "DELETE FROM lesson_report_versions WHERE report_id = " JR_INT " AND source <> 'create'"     \
      " AND id < (SELECT id FROM lesson_report_versions WHERE report_id = " JR_INT                 \
      " AND source <> 'create' ORDER BY id DESC LIMIT 1 OFFSET " JR_INT ")")                       \
    X(VERSION_GET,                                                                                 \
      "SELECT id, text FROM lesson_report_versions WHERE id = " JR_INT " AND report_id = " JR_INT) \
    X(REPORTS_MOVE_BRANCH,                                                                         \
      "UPDATE lesson_reports SET branch_id = " JR_INT " WHERE group_id = " JR_INT)                 \
    /* end of JR_LESSONS_STMTS */

#endif
