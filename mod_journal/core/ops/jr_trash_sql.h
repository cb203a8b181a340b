/* The statements of jr_trash.c (see jr_stmts.h): one X(ID, SQL) row each, or
 * X(ID, SQLite SQL, PostgreSQL SQL) where the dialects differ. */
#ifndef JR_TRASH_SQL_H
#define JR_TRASH_SQL_H

#define TRASH_ITEMS                                                                                \
    "SELECT 'entry' AS type, id, student_name AS name, deleted_at, deleted_by FROM entries"        \
    " WHERE deleted_at IS NOT NULL"                                                                \
    " UNION ALL SELECT 'group', id, name, deleted_at, deleted_by FROM study_groups"                \
    " WHERE deleted_at IS NOT NULL"                                                                \
    " UNION ALL SELECT 'module', id, name, deleted_at, deleted_by FROM modules"                    \
    " WHERE deleted_at IS NOT NULL"

#define JR_TRASH_STMTS(X)                                                                          \
    X(TRASH_LIST,                                                                                  \
      "SELECT type, id, name, deleted_at, deleted_by FROM (" TRASH_ITEMS ") t"                     \
      " ORDER BY deleted_at DESC, type, id LIMIT CAST(%s AS BIGINT) OFFSET CAST(%s AS BIGINT)")    \
    X(TRASH_COUNT, "SELECT COUNT(*) AS n FROM (" TRASH_ITEMS ") t")                                \
    X(TRASH_EXPIRED,                                                                               \
      "SELECT type, id FROM (" TRASH_ITEMS ") t WHERE deleted_at < %s ORDER BY type DESC, id"      \
      " LIMIT 200")                                                                                \
    X(TRASH_ENTRY_GET,                                                                             \
      "SELECT e.id, e.deleted_at, g.deleted_at AS group_deleted_at FROM entries e"                 \
      " JOIN study_groups g ON g.id = e.group_id WHERE e.id = " JR_INT)                            \
    X(ENTRY_RESTORE, "UPDATE entries SET deleted_at = NULL, deleted_by = NULL, updated_at = %s"    \
                     " WHERE id = " JR_INT " AND deleted_at IS NOT NULL")                          \
    X(ENTRY_PURGE_JOBS,                                                                            \
      "DELETE FROM ai_jobs WHERE entity_type = 'entry' AND entity_id = " JR_INT)                   \
    X(ENTRY_PURGE, "DELETE FROM entries WHERE id = " JR_INT " AND deleted_at IS NOT NULL")         \
    X(GROUP_LIVE_ENTRIES,                                                                          \
      "SELECT COUNT(*) AS n FROM entries WHERE group_id = " JR_INT " AND deleted_at IS NULL")      \
    X(GROUP_TRASHED_ENTRIES,                                                                       \
      "SELECT id FROM entries WHERE group_id = " JR_INT " AND deleted_at IS NOT NULL")             \
    X(GROUP_PURGE_STUDENTS, "DELETE FROM students WHERE group_id = " JR_INT)                       \
    X(GROUP_PURGE, "DELETE FROM study_groups WHERE id = " JR_INT " AND deleted_at IS NOT NULL")    \
    X(MODULE_PURGE, "DELETE FROM modules WHERE id = " JR_INT " AND deleted_at IS NOT NULL")        \
    /* end of JR_TRASH_STMTS */

#endif
