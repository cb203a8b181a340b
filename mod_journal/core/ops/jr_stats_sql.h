/* The statements of jr_stats.c (see jr_stmts.h): one X(ID, SQL) row each, or
 * X(ID, SQLite SQL, PostgreSQL SQL) where the dialects differ. */
#ifndef JR_STATS_SQL_H
#define JR_STATS_SQL_H

#define STATS_COUNTS_SQL(SCOPE)                                                                    \
    "SELECT (SELECT COUNT(*) FROM branches b WHERE " SCOPE("b.id") ") AS branches,"                \
    " (SELECT COUNT(*) FROM study_groups g WHERE g.deleted_at IS NULL AND "                        \
    SCOPE("g.branch_id") ") AS groups_n,"                                                          \
    " (SELECT COUNT(*) FROM students s JOIN study_groups g ON g.id = s.group_id"                   \
    " WHERE g.deleted_at IS NULL AND " SCOPE("g.branch_id") ") AS students,"                       \
    " (SELECT COALESCE(SUM(live), 0) FROM entry_counts c WHERE "                                   \
    SCOPE("c.branch_id") ") AS entries,"                                                           \
    " (SELECT COUNT(*) FROM lesson_reports r WHERE " SCOPE("r.branch_id")                          \
    ") AS lesson_reports"

#define JR_STATS_STMTS(X)                                                                          \
    X(STATS_COUNTS, STATS_COUNTS_SQL(JR_SCOPE_SQLITE), STATS_COUNTS_SQL(JR_SCOPE_PG))              \
    X(REPORTS_RECENT,                                                                              \
      JR_SCOPED(                                                                                   \
          "SELECT r.id, r.group_id, r.branch_id, r.lesson_date, r.lesson_time, r.text,"            \
          " r.topic, r.text_original, r.text_ai, r.ai_status, r.ai_checked_at, r.ai_error,"        \
          " r.created_at, r.updated_at, r.created_by, r.created_by_key"                            \
          " FROM lesson_reports r WHERE ",                                                         \
          "r.branch_id", " ORDER BY r.created_at DESC, r.id DESC LIMIT 10"))                       \
    X(REPORTS_ON,                                                                                  \
      JR_SCOPED(                                                                                   \
          "SELECT r.id, r.group_id, r.branch_id, r.lesson_date, r.lesson_time, r.text,"            \
          " r.topic, r.text_original, r.text_ai, r.ai_status, r.ai_checked_at, r.ai_error,"        \
          " r.created_at, r.updated_at, r.created_by, r.created_by_key"                            \
          " FROM lesson_reports r WHERE r.lesson_date = %s AND ",                                  \
          "r.branch_id", " ORDER BY r.lesson_time NULLS LAST, r.id"))                              \
    /* end of JR_STATS_STMTS */

#endif
