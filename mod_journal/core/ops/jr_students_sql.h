/* The statements of jr_students.c (see jr_stmts.h): one X(ID, SQL) row each, or
 * X(ID, SQLite SQL, PostgreSQL SQL) where the dialects differ. */
#ifndef JR_STUDENTS_SQL_H
#define JR_STUDENTS_SQL_H

#define STUDENT_COLS                                                                               \
    "s.id, s.name, s.group_id, g.branch_id, s.notes, s.created_at, s.updated_at, s.created_by"
#define STUDENT_WHERE                                                                              \
    " WHERE g.deleted_at IS NULL"                                                                  \
    " AND (CAST(%s AS BIGINT) IS NULL OR s.group_id = CAST(%s AS BIGINT))"                         \
    " AND (CAST(%s AS BIGINT) IS NULL OR g.branch_id = CAST(%s AS BIGINT))"
#define STUDENT_JOIN_GROUP " JOIN study_groups g ON g.id = s.group_id"
#define STUDENT_FILTER                                                                             \
    " FROM students s" STUDENT_JOIN_GROUP STUDENT_WHERE                                            \
    /* the pattern as an expression for SQLite's sake (jr_stmts.h); the same to PostgreSQL */  \
    " AND (CAST(%s AS TEXT) IS NULL OR s.name_key LIKE " JR_PATTERN_SQLITE " ESCAPE '\\') AND "
/* The indexed search, with the same arguments (the first search argument is the full-text
 * phrase; see ENTRY_SEARCH_SQLITE in jr_entries_sql.h). */
#define STUDENT_SEARCH_SQLITE                                                                      \
    " FROM students_fts CROSS JOIN students s ON s.id = students_fts.rowid" STUDENT_JOIN_GROUP     \
    STUDENT_WHERE " AND students_fts MATCH %s AND s.name_key LIKE " JR_PATTERN_SQLITE                \
    " ESCAPE '\\' AND "
#define STUDENT_SEARCH_PG                                                                          \
    " FROM students s" STUDENT_JOIN_GROUP STUDENT_WHERE                                            \
    " AND CAST(%s AS TEXT) IS NOT NULL AND s.name_key LIKE %s ESCAPE '\\' AND "
#define STUDENT_PAGE                                                                               \
    " AND (CAST(%s AS TEXT) IS NULL OR s.name_key > %s"                                            \
    " OR (s.name_key = %s AND s.id > CAST(%s AS BIGINT)))"                                         \
    " ORDER BY s.name_key, s.id LIMIT CAST(%s AS BIGINT) OFFSET CAST(%s AS BIGINT)"

#define JR_STUDENTS_STMTS(X)                                                                       \
    X(STUDENTS_LIST,                                                                               \
      JR_SCOPED("SELECT " STUDENT_COLS ", s.name_key" STUDENT_FILTER, "g.branch_id", STUDENT_PAGE)) \
    X(STUDENTS_SEARCH,                                                                             \
      "SELECT " STUDENT_COLS ", s.name_key" STUDENT_SEARCH_SQLITE JR_SCOPE_SQLITE("g.branch_id")   \
          STUDENT_PAGE,                                                                            \
      "SELECT " STUDENT_COLS ", s.name_key" STUDENT_SEARCH_PG JR_SCOPE_PG("g.branch_id")           \
          STUDENT_PAGE)                                                                            \
    X(STUDENTS_SEARCH_COUNT,                                                                       \
      "SELECT COUNT(*) AS n" STUDENT_SEARCH_SQLITE JR_SCOPE_SQLITE("g.branch_id"),                 \
      "SELECT COUNT(*) AS n" STUDENT_SEARCH_PG JR_SCOPE_PG("g.branch_id"))                         \
    /* A student changes with its group too: moved to another branch, or to the trash (then        \
     * the student is gone from the list, a tombstone for a sync). */                              \
    X(STUDENTS_SYNC,                                                                               \
      "SELECT " STUDENT_COLS ", MAX(s.updated_at, g.updated_at) AS sync_at,"                       \
      " g.deleted_at AS sync_deleted_at FROM students s JOIN study_groups g ON g.id = s.group_id"  \
      " WHERE " JR_SCOPE_SQLITE("g.branch_id")                                                     \
          JR_SYNC_TAIL("MAX(s.updated_at, g.updated_at)", "s.id", "g.deleted_at"),                 \
      "SELECT " STUDENT_COLS ", GREATEST(s.updated_at, g.updated_at) AS sync_at,"                  \
      " g.deleted_at AS sync_deleted_at FROM students s JOIN study_groups g ON g.id = s.group_id"  \
      " WHERE " JR_SCOPE_PG("g.branch_id")                                                         \
          JR_SYNC_TAIL("GREATEST(s.updated_at, g.updated_at)", "s.id", "g.deleted_at"))            \
    X(STUDENTS_COUNT, JR_SCOPED("SELECT COUNT(*) AS n" STUDENT_FILTER, "g.branch_id", ""))         \
    X(STUDENT_GET,                                                                                 \
      "SELECT " STUDENT_COLS " FROM students s JOIN study_groups g ON g.id = s.group_id"           \
      " WHERE s.id = " JR_INT " AND g.deleted_at IS NULL")                                         \
    X(STUDENT_INSERT,                                                                              \
      "INSERT INTO students (name, name_key, group_id, notes, created_at, updated_at, created_by)" \
      " VALUES (%s, %s, " JR_INT ", %s, %s, %s, " JR_INT ") RETURNING id")                         \
    X(STUDENT_UPDATE,                                                                              \
      "UPDATE students SET name = %s, name_key = %s, group_id = " JR_INT ", notes = %s,"           \
      " updated_at = %s WHERE id = " JR_INT)                                                       \
    X(STUDENT_DELETE, "DELETE FROM students WHERE id = " JR_INT)                                   \
    /* end of JR_STUDENTS_STMTS */

#endif
