/* The statements of jr_events.c (see jr_stmts.h): one X(ID, SQL) row each, or
 * X(ID, SQLite SQL, PostgreSQL SQL) where the dialects differ. */
#ifndef JR_EVENTS_SQL_H
#define JR_EVENTS_SQL_H

/* One event row's values; the inserts of 1 to JR_EVENTS_INSERT_MAX rows (jr_event gathers a
 * transaction's events and writes them at its end). */
#define JR_EVENTS_INSERT_MAX 4
#define EV_ROW "(%s, " JR_INT ", %s, " JR_INT ", %s, %s)"
#define EV_INTO                                                                                    \
    "INSERT INTO events (type, branch_id, entity_type, entity_id, payload, created_at) VALUES "

#define JR_EVENTS_STMTS(X)                                                                         \
    X(EVENT_INSERT, EV_INTO EV_ROW)                                                                \
    X(EVENT_INSERT_2, EV_INTO EV_ROW ", " EV_ROW)                                                  \
    X(EVENT_INSERT_3, EV_INTO EV_ROW ", " EV_ROW ", " EV_ROW)                                      \
    X(EVENT_INSERT_4, EV_INTO EV_ROW ", " EV_ROW ", " EV_ROW ", " EV_ROW)                          \
    X(EVENT_ENTRY_ROW,                                                                             \
      "SELECT id, branch_id, group_id, student_name, description, description_original,"           \
      " ai_status, ai_error, ai_checked_at FROM entries WHERE id = " JR_INT)                       \
    X(EVENT_REPORT_ROW,                                                                            \
      "SELECT id, branch_id, group_id, lesson_date, lesson_time, topic, text, text_original,"      \
      " text_ai, ai_status, ai_error, ai_checked_at FROM lesson_reports WHERE id = " JR_INT)       \
    /* In batches: one short write transaction each, however much has piled up. */                 \
    X(EVENTS_TRIM, "DELETE FROM events WHERE id IN (SELECT id FROM events WHERE created_at < %s"   \
                   " ORDER BY id LIMIT 5000)")                                                     \
    /* end of JR_EVENTS_STMTS */

#endif
