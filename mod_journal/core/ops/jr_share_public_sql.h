/* The statements of jr_share_public.c (see jr_stmts.h): one X(ID, SQL) row each, or
 * X(ID, SQLite SQL, PostgreSQL SQL) where the dialects differ. */
#ifndef JR_SHARE_PUBLIC_SQL_H
#define JR_SHARE_PUBLIC_SQL_H

#define ITEMS_MAX "1000" /* JR_SHARE_ITEMS_MAX */
/* JR_SHARE_ITEMS_MAX */
#define LIVE_ENTRY " JOIN entries e ON e.id = "
#define OF_STUDENT " AND e.student_id = " JR_INT " AND e.deleted_at IS NULL"

#define JR_SHARE_PUBLIC_STMTS(X)                                                                   \
    X(SHARE_BY_TOKEN, "SELECT id, kind, target_id, password_hash FROM share_links"                 \
                      " WHERE token_hash = %s AND revoked_at IS NULL AND expires_at > %s")         \
    X(SHARE_OPENED, "UPDATE share_links SET open_count = open_count + 1, last_opened_at = %s "     \
                    "WHERE id = " JR_INT)                                                          \
    X(SHARE_STUDENT, "SELECT s.name, s.group_id, g.name AS group_name FROM students s"             \
                     " JOIN study_groups g ON g.id = s.group_id WHERE s.id = " JR_INT              \
                     " AND g.deleted_at IS NULL")                                                  \
    X(SHARE_GROUP, "SELECT g.id AS group_id, g.name AS group_name FROM study_groups g"             \
                   " WHERE g.id = " JR_INT " AND g.deleted_at IS NULL")                            \
    X(SHARE_ENTRIES,                                                                               \
      "SELECT e.id, e.created_at, e.description, m.name AS module_name FROM entries e"             \
      " LEFT JOIN modules m ON m.id = e.module_id WHERE e.student_id = " JR_INT                    \
      " AND e.deleted_at IS NULL ORDER BY e.created_at DESC, e.id DESC LIMIT " ITEMS_MAX)          \
    X(SHARE_ENTRY_FILES,                                                                           \
      "SELECT f.entry_id, f.name, f.size, f.content_type, f.stored_name FROM entry_files "         \
      "f" LIVE_ENTRY "f.entry_id WHERE 1 = 1" OF_STUDENT " ORDER BY f.entry_id, f.id")             \
    X(SHARE_ENTRY_PHOTOS,                                                                          \
      "SELECT p.owner_id AS entry_id, p.content_type, p.stored_name FROM photos p" LIVE_ENTRY      \
      "p.owner_id WHERE p.owner_type = 'entry' AND p.role = 'current'" OF_STUDENT)                 \
    X(SHARE_REPORTS,                                                                               \
      "SELECT lesson_date, lesson_time, topic, text FROM lesson_reports WHERE group_id = " JR_INT  \
      " ORDER BY lesson_date DESC, id DESC LIMIT " ITEMS_MAX)                                      \
    X(SHARE_FILE,                                                                                  \
      "SELECT f.stored_name, f.name, f.content_type, f.sha256, f.created_at, 1 AS attachment"      \
      " FROM entry_files f" LIVE_ENTRY "f.entry_id WHERE f.stored_name = %s" OF_STUDENT            \
      " UNION ALL"                                                                                 \
      " SELECT p.stored_name, 'photo' AS name, p.content_type, p.sha256, p.created_at,"            \
      " 0 AS attachment FROM photos p" LIVE_ENTRY "p.owner_id"                                     \
      " WHERE p.owner_type = 'entry' AND p.role = 'current' AND p.stored_name = %s" OF_STUDENT)    \
    /* end of JR_SHARE_PUBLIC_STMTS */

#endif
