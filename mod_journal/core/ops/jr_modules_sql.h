/* The statements of jr_modules.c (see jr_stmts.h): one X(ID, SQL) row each, or
 * X(ID, SQLite SQL, PostgreSQL SQL) where the dialects differ. */
#ifndef JR_MODULES_SQL_H
#define JR_MODULES_SQL_H

#define MODULE_COLS                                                                                \
    "m.id, m.name, m.lessons_count, m.description, m.created_at, m.updated_at,"                    \
    " (SELECT COUNT(*) FROM entries e WHERE e.module_id = m.id AND e.deleted_at IS NULL)"          \
    " AS entries_count"
#define MODULE_LIKE(LIKE, PAT)                                                                     \
    "(m.name " LIKE " " PAT " ESCAPE '\\' OR m.description " LIKE " " PAT " ESCAPE '\\')"
#define MODULE_FILTER_SQLITE                                                                       \
    " FROM modules m WHERE m.deleted_at IS NULL AND (CAST(%s AS TEXT) IS NULL OR"                  \
    " " MODULE_LIKE("LIKE", JR_PATTERN_SQLITE) ")"
#define MODULE_FILTER_PG                                                                           \
    " FROM modules m WHERE m.deleted_at IS NULL AND (CAST(%s AS TEXT) IS NULL OR"                  \
    " " MODULE_LIKE("ILIKE", "%s") ")"
/* The indexed search, with the same arguments (see ENTRY_SEARCH_SQLITE in jr_entries_sql.h). */
#define MODULE_SEARCH_SQLITE                                                                       \
    " FROM modules_fts CROSS JOIN modules m ON m.id = modules_fts.rowid"                           \
    " WHERE m.deleted_at IS NULL AND modules_fts MATCH %s AND "                                    \
    MODULE_LIKE("LIKE", JR_PATTERN_SQLITE)
#define MODULE_SEARCH_PG                                                                           \
    " FROM modules m WHERE m.deleted_at IS NULL AND CAST(%s AS TEXT) IS NOT NULL AND "             \
    MODULE_LIKE("ILIKE", "%s")
/* The cursor's position (name, id), then the page. */
#define MODULE_PAGE                                                                                \
    " AND (CAST(%s AS TEXT) IS NULL OR m.name > %s OR (m.name = %s"                                \
    " AND m.id > CAST(%s AS BIGINT)))"                                                             \
    " ORDER BY m.name, m.id LIMIT CAST(%s AS BIGINT) OFFSET CAST(%s AS BIGINT)"

#define JR_MODULES_STMTS(X)                                                                        \
    X(MODULES_LIST, "SELECT " MODULE_COLS MODULE_FILTER_SQLITE MODULE_PAGE,                        \
      "SELECT " MODULE_COLS MODULE_FILTER_PG MODULE_PAGE)                                          \
    X(MODULES_SEARCH, "SELECT " MODULE_COLS MODULE_SEARCH_SQLITE MODULE_PAGE,                      \
      "SELECT " MODULE_COLS MODULE_SEARCH_PG MODULE_PAGE)                                          \
    X(MODULES_SEARCH_COUNT, "SELECT COUNT(*) AS n" MODULE_SEARCH_SQLITE,                           \
      "SELECT COUNT(*) AS n" MODULE_SEARCH_PG)                                                     \
    X(MODULES_SYNC,                                                                                \
      "SELECT " MODULE_COLS                                                                        \
      ", m.updated_at AS sync_at, m.deleted_at AS sync_deleted_at" /* Modules belong to no branch: \
                                                                      the two scope arguments are  \
                                                                      taken and ignored. */        \
      " FROM modules m WHERE (CAST(%s AS TEXT) IS NULL OR CAST(%s AS TEXT) IS NOT "                \
      "NULL)" JR_SYNC_TAIL("m.updated_at", "m.id", "m.deleted_at"))                                \
    X(MODULES_COUNT, "SELECT COUNT(*) AS n" MODULE_FILTER_SQLITE,                                  \
      "SELECT COUNT(*) AS n" MODULE_FILTER_PG)                                                     \
    X(MODULE_GET, "SELECT " MODULE_COLS ", m.deleted_at FROM modules m WHERE m.id = " JR_INT)      \
    X(MODULE_NAME_TAKEN,                                                                           \
      "SELECT id FROM modules WHERE name = %s AND deleted_at IS NULL AND id <> " JR_INT)           \
    X(MODULE_INSERT,                                                                               \
      "INSERT INTO modules (name, lessons_count, description, created_at, updated_at)"             \
      " VALUES (%s, CAST(%s AS INTEGER), %s, %s, %s) RETURNING id")                                \
    X(MODULE_UPDATE,                                                                               \
      "UPDATE modules SET name = %s, lessons_count = CAST(%s AS INTEGER), description = %s,"       \
      " updated_at = %s WHERE id = " JR_INT)                                                       \
    X(MODULE_SOFT_DELETE,                                                                          \
      "UPDATE modules SET deleted_at = %s, deleted_by = " JR_INT ", updated_at = %s"               \
      " WHERE id = " JR_INT " AND deleted_at IS NULL")                                             \
    X(MODULE_UNLINK_ENTRIES,                                                                       \
      "UPDATE entries SET module_id = NULL, updated_at = %s WHERE module_id = " JR_INT)            \
    X(MODULE_RESTORE, "UPDATE modules SET deleted_at = NULL, deleted_by = NULL, updated_at = %s"   \
                      " WHERE id = " JR_INT " AND deleted_at IS NOT NULL")                         \
    /* end of JR_MODULES_STMTS */

#endif
