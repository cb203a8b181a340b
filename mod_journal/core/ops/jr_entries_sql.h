/* The statements of jr_entries.c (see jr_stmts.h): one X(ID, SQL) row each, or
 * X(ID, SQLite SQL, PostgreSQL SQL) where the dialects differ. */
#ifndef JR_ENTRIES_SQL_H
#define JR_ENTRIES_SQL_H

/* An entry's record: its columns, qualified by E ("e." or nothing), and its module's name. */
#define ENTRY_RECORD(E, MODULE_NAME)                                                               \
    E "id, " E "student_name, " E "student_id, " E "group_id, " E "branch_id, " E "description, "  \
    E "module_id, " MODULE_NAME " AS module_name, " E "ai_status, " E "created_at, "               \
    E "updated_at, " E "created_by, " E "created_by_key, " E "files_count, " E "has_photo, "        \
    E "description_original, " E "ai_checked_at, " E "ai_error"
#define ENTRY_COLS ENTRY_RECORD("e.", "m.name")
/* HINT: "" or an index hint for entries (SQLite's " NOT INDEXED"). */
#define ENTRY_FROM_HINTED(HINT) " FROM entries e" HINT " LEFT JOIN modules m ON m.id = e.module_id"
#define ENTRY_FROM ENTRY_FROM_HINTED("")
/* The same record, returned by the write itself (SQLite's RETURNING takes no table alias): the
 * answer to a create or an update is the row as that request wrote it, whatever the worker
 * does after the commit. */
#define ENTRY_RETURNING                                                                            \
    " RETURNING " ENTRY_RECORD("", "(SELECT m.name FROM modules m WHERE m.id = entries.module_id)")
/* Filters: group, branch, module, student id, student name, from, to. */
#define ENTRY_WHERE                                                                                \
    " WHERE e.deleted_at IS NULL"                                                                  \
    " AND (CAST(%s AS BIGINT) IS NULL OR e.group_id = CAST(%s AS BIGINT))"                         \
    " AND (CAST(%s AS BIGINT) IS NULL OR e.branch_id = CAST(%s AS BIGINT))"                        \
    " AND (CAST(%s AS BIGINT) IS NULL OR e.module_id = CAST(%s AS BIGINT))"                        \
    " AND (CAST(%s AS BIGINT) IS NULL OR e.student_id = CAST(%s AS BIGINT))"                       \
    " AND (CAST(%s AS TEXT) IS NULL OR lower(e.student_name) = lower(%s))"                         \
    " AND (CAST(%s AS TEXT) IS NULL OR e.created_at >= %s)"                                        \
    " AND (CAST(%s AS TEXT) IS NULL OR e.created_at < %s)"
/* The term's pattern, PAT: JR_PATTERN_SQLITE on SQLite (jr_stmts.h), "%s" on PostgreSQL. */
#define ENTRY_LIKE(LIKE, PAT)                                                                      \
    "(e.student_name " LIKE " " PAT " ESCAPE '\\' OR e.description " LIKE " " PAT " ESCAPE '\\')"
/* ... and the search, optional (a term too short for the index, or none: a scan). */
#define ENTRY_FILTER(LIKE, PAT)                                                                    \
    ENTRY_WHERE " AND (CAST(%s AS TEXT) IS NULL OR " ENTRY_LIKE(LIKE, PAT) ") AND "
/* The indexed search (jr_search_term()) takes the same arguments, the first search argument
 * being what the index is asked for (a superset of the matches). SQLite: the candidates are
 * the entries whose description the trigram index finds and the entries of every name the
 * names' own index finds (migration 0017: a name repeats across many entries, so its
 * trigrams are in thousands of rows of a shared index, and in a few of the names'), and the
 * entries the descriptions' index does not hold yet (its backlog above
 * entries_fts_state.upto, migration 0018, read by a range of ids). An IN list is a set, so
 * an entry found twice is read once (UNION ALL: no second sort to drop it). Each is read by
 * its id (NOT INDEXED: by the IN list's ids, never an index walk that tests each row against
 * the list), and LIKE keeps exactly today's matches (the index folds more than ASCII).
 * name_key is lower-case already, but lower() on both sides of the join is what lets SQLite
 * use entries_student_key: against the bare column it compares with the column's affinity
 * and walks the entries instead. PostgreSQL: the first argument is a LIKE pattern of a few
 * of the term's trigrams, served by the trigram index on both columns together (migration
 * 0014), and the ILIKE of the term checks each candidate; no index serves that one, so the
 * planner cannot add every trigram of the term back as a second index scan. Neither may sit
 * behind "$n IS NULL OR", which a generic plan could not use an index for. */
#define ENTRY_SEARCH_SQLITE                                                                        \
    ENTRY_WHERE " AND e.id IN (SELECT rowid FROM entries_fts WHERE entries_fts MATCH %s"            \
                " UNION ALL SELECT s.id FROM entry_names_fts CROSS JOIN entry_names nm"            \
                " ON nm.id = entry_names_fts.rowid CROSS JOIN entries s"                           \
                " ON lower(s.student_name) = lower(nm.name_key) WHERE entry_names_fts MATCH %="    \
                " UNION ALL SELECT b.id FROM entries b"                                            \
                " WHERE b.id > (SELECT upto FROM entries_fts_state))"                              \
                " AND " ENTRY_LIKE("LIKE", JR_PATTERN_SQLITE) " AND "
#define ENTRY_SEARCH_PG                                                                            \
    ENTRY_WHERE " AND (e.student_name || ' ' || e.description) ILIKE %s ESCAPE '\\'"               \
                " AND " ENTRY_LIKE("ILIKE", "%s") " AND "
/* The cursor's position (the last id seen; none on a first page), then the page. A plain range
 * on the id, so the index walk starts at the position instead of filtering from the top. */
#define ENTRY_PAGE                                                                                 \
    " AND e.id < COALESCE(CAST(%s AS BIGINT), 9223372036854775807)"                                \
    " ORDER BY e.id DESC LIMIT CAST(%s AS BIGINT) OFFSET CAST(%s AS BIGINT)"

/* The hot path's total, a column of every row of its page: an uncorrelated subquery, run once
 * per statement by both databases, so that the page and its total are one round trip. */
#define ENTRY_TOTAL_PLAIN(SCOPE)                                                                   \
    "(SELECT COALESCE(SUM(live), 0) FROM entry_counts WHERE " SCOPE("branch_id") ") AS total"

/* The entry's student, found in the write itself (no round trip of its own before it): the
 * first student of the entry's group whose name key is the entry's, or none. */
#define ENTRY_STUDENT                                                                              \
    "(SELECT s.id FROM students s WHERE s.group_id = " JR_INT " AND s.name_key = %s"               \
    " ORDER BY s.id LIMIT 1)"
#define ENTRY_UPDATE_SET                                                                           \
    "UPDATE entries SET student_name = %s, student_id = " ENTRY_STUDENT ", group_id = " JR_INT ","  \
    " branch_id = " JR_INT ", description = %s, module_id = " JR_INT ", ai_status = %s,"
#define ENTRY_UPDATE_WHERE " WHERE id = " JR_INT " AND deleted_at IS NULL" ENTRY_RETURNING

#define JR_ENTRIES_STMTS(X)                                                                        \
    /* The hot path: no filter but the caller's branches, the total from entry_counts. */          \
    X(ENTRIES_LIST_PLAIN,                                                                          \
      JR_SCOPED("SELECT " ENTRY_COLS ENTRY_FROM " WHERE e.deleted_at IS NULL AND ", "e.branch_id", \
                ENTRY_PAGE))                                                                       \
    X(ENTRIES_TOTAL_PLAIN,                                                                         \
      JR_SCOPED("SELECT COALESCE(SUM(live), 0) AS n FROM entry_counts WHERE ", "branch_id", ""))   \
    /* The same page with its total on every row, run on PostgreSQL (jr_entries.c, list_plain). */ \
    X(ENTRIES_PAGE_PLAIN,                                                                          \
      "SELECT " ENTRY_TOTAL_PLAIN(JR_SCOPE_SQLITE) ", " ENTRY_COLS ENTRY_FROM                       \
      " WHERE e.deleted_at IS NULL AND " JR_SCOPE_SQLITE("e.branch_id") ENTRY_PAGE,                 \
      "SELECT " ENTRY_TOTAL_PLAIN(JR_SCOPE_PG) ", " ENTRY_COLS ENTRY_FROM                           \
      " WHERE e.deleted_at IS NULL AND " JR_SCOPE_PG("e.branch_id") ENTRY_PAGE)                     \
    X(ENTRIES_LIST,                                                                                \
      "SELECT " ENTRY_COLS ENTRY_FROM ENTRY_FILTER("LIKE", JR_PATTERN_SQLITE)                   \
          JR_SCOPE_SQLITE("e.branch_id") ENTRY_PAGE,                                               \
      "SELECT " ENTRY_COLS ENTRY_FROM ENTRY_FILTER("ILIKE", "%s") JR_SCOPE_PG("e.branch_id")       \
          ENTRY_PAGE)                                                                              \
    X(ENTRIES_COUNT,                                                                               \
      "SELECT COUNT(*) AS n FROM entries e" ENTRY_FILTER("LIKE", JR_PATTERN_SQLITE)             \
          JR_SCOPE_SQLITE("e.branch_id"),                                                          \
      "SELECT COUNT(*) AS n FROM entries e" ENTRY_FILTER("ILIKE", "%s")                            \
          JR_SCOPE_PG("e.branch_id"))                                                              \
    /* An indexed search: the number of matches and all their ids (a JSON array) from one      \
     * evaluation of the index; the page's ids are taken from those (jr_search_page_ids()),    \
     * its rows read by id (ENTRIES_BY_IDS). */                                                   \
    X(ENTRIES_SEARCH,                                                                              \
      "SELECT COUNT(*) AS n, json_group_array(e.id) AS ids FROM entries e NOT INDEXED"             \
          ENTRY_SEARCH_SQLITE JR_SCOPE_SQLITE("e.branch_id"),                                      \
      "SELECT COUNT(*) AS n, json_agg(e.id) AS ids FROM entries e" ENTRY_SEARCH_PG                 \
          JR_SCOPE_PG("e.branch_id"))                                                              \
    /* SQLite reads each row by its id (NOT INDEXED: through entries_live it took two lookups   \
     * a row and a sort). PostgreSQL orders on e.id + 0: on e.id it could walk the primary key   \
     * backwards testing every row against the list. */                                          \
    X(ENTRIES_BY_IDS,                                                                              \
      "SELECT " ENTRY_COLS ENTRY_FROM_HINTED(" NOT INDEXED") " WHERE e.id IN " JR_IN_JSON_SQLITE   \
      " AND e.deleted_at IS NULL ORDER BY e.id DESC",                                              \
      "SELECT " ENTRY_COLS ENTRY_FROM " WHERE e.id IN " JR_IN_JSON_PG                              \
      " AND e.deleted_at IS NULL ORDER BY e.id + 0 DESC")                                          \
    X(ENTRIES_SYNC,                                                                                \
      JR_SCOPED("SELECT " ENTRY_COLS                                                               \
                ", e.updated_at AS sync_at, e.deleted_at AS sync_deleted_at" ENTRY_FROM " WHERE ", \
                "e.branch_id", JR_SYNC_TAIL("e.updated_at", "e.id", "e.deleted_at")))              \
    X(ENTRY_GET, "SELECT " ENTRY_COLS ", e.deleted_at" ENTRY_FROM " WHERE e.id = " JR_INT)         \
    X(ENTRY_SCOPE, "SELECT branch_id, group_id, deleted_at FROM entries WHERE id = " JR_INT)       \
    X(ENTRY_INSERT,                                                                                \
      "INSERT INTO entries (student_name, student_id, group_id, branch_id, description,"           \
      " module_id, ai_status, created_at, updated_at, created_by, created_by_key)"                 \
      " VALUES (%s, " ENTRY_STUDENT ", " JR_INT ", " JR_INT ", %s, " JR_INT ", %s, %s, %s, " JR_INT \
      ", " JR_INT ")" ENTRY_RETURNING)                                                                \
    /* SQLite: the later of the request's time and the statement's own clock, the one the      \
     * touch trigger (an AFTER trigger, unseen by RETURNING) would set when the time is the      \
     * row's old one: so the returned row is the stored one even across a second's turn.         \
     * PostgreSQL's touch trigger runs BEFORE the row is written, and RETURNING sees it. */      \
    X(ENTRY_UPDATE,                                                                                \
      ENTRY_UPDATE_SET " updated_at = max(%s, replace(datetime('now'), ' ', 'T') || 'Z')"          \
      ENTRY_UPDATE_WHERE,                                                                          \
      ENTRY_UPDATE_SET " updated_at = %s" ENTRY_UPDATE_WHERE)                                      \
    X(ENTRY_SOFT_DELETE,                                                                           \
      "UPDATE entries SET deleted_at = %s, deleted_by = " JR_INT ", updated_at = %s"               \
      " WHERE id = " JR_INT " AND deleted_at IS NULL")                                             \
    X(ENTRY_SET_AI_STATUS, "UPDATE entries SET ai_status = %s WHERE id = " JR_INT)                 \
    X(ENTRY_AI_REVERT,                                                                             \
      "UPDATE entries SET description = description_original, ai_status = 'reverted',"             \
      " updated_at = %s WHERE id = " JR_INT " AND deleted_at IS NULL"                              \
      " AND description_original IS NOT NULL")                                                     \
    X(ENTRIES_MOVE_BRANCH, "UPDATE entries SET branch_id = " JR_INT " WHERE group_id = " JR_INT)   \
    /* end of JR_ENTRIES_STMTS */

#endif
