/* The statements of jr_ai.c (see jr_stmts.h): one X(ID, SQL) row each, or
 * X(ID, SQLite SQL, PostgreSQL SQL) where the dialects differ. */
#ifndef JR_AI_SQL_H
#define JR_AI_SQL_H

#define JR_AI_STMTS(X)                                                                             \
    X(AI_ENTRY_TEXT,                                                                               \
      "SELECT description AS text, NULL AS topic FROM entries WHERE id = " JR_INT)                 \
    X(AI_REPORT_TEXT, "SELECT text, topic FROM lesson_reports WHERE id = " JR_INT)                 \
    X(AI_JOB_HASH, "UPDATE ai_jobs SET text_hash = %s WHERE id = " JR_INT)                         \
    X(AI_ENTRY_STATE, "UPDATE entries SET ai_status = %s, ai_error = %s WHERE id = " JR_INT)       \
    X(AI_REPORT_STATUS, "UPDATE lesson_reports SET ai_status = %s WHERE id = " JR_INT)             \
    X(AI_REPORT_STATE,                                                                             \
      "UPDATE lesson_reports SET ai_status = %s, ai_error = %s WHERE id = " JR_INT)                \
    X(AI_ENTRY_SKIPPED,                                                                            \
      "UPDATE entries SET ai_status = 'skipped', ai_checked_at = %s, ai_error = NULL"              \
      " WHERE id = " JR_INT)                                                                       \
    X(AI_REPORT_SKIPPED,                                                                           \
      "UPDATE lesson_reports SET ai_status = 'skipped', ai_checked_at = %s, ai_error = NULL"       \
      " WHERE id = " JR_INT)                                                                       \
    X(AI_ENTRY_DONE,                                                                               \
      "UPDATE entries SET description = %s, description_original = %s, ai_status = 'done',"        \
      " ai_checked_at = %s, ai_error = NULL, updated_at = %s WHERE id = " JR_INT)                  \
    X(AI_REPORT_DONE,                                                                              \
      "UPDATE lesson_reports SET text = %s, text_ai = %s, text_original = %s, ai_status = "        \
      "'done',"                                                                                    \
      " ai_checked_at = %s, ai_error = NULL, updated_at = %s WHERE id = " JR_INT)                  \
    /* end of JR_AI_STMTS */

#endif
