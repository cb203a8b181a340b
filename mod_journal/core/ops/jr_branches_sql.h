/* The statements of jr_branches.c (see jr_stmts.h): one X(ID, SQL) row each, or
 * X(ID, SQLite SQL, PostgreSQL SQL) where the dialects differ. */
#ifndef JR_BRANCHES_SQL_H
#define JR_BRANCHES_SQL_H

#define BRANCH_COLS "id, name, created_at, updated_at"

#define JR_BRANCHES_STMTS(X)                                                                       \
    X(BRANCHES_LIST, JR_SCOPED("SELECT " BRANCH_COLS " FROM branches WHERE ", "id",                \
                               " AND id > COALESCE(CAST(%s AS BIGINT), 0)"                         \
                               " ORDER BY id LIMIT CAST(%s AS BIGINT) OFFSET CAST(%s AS BIGINT)")) \
    X(BRANCHES_SYNC,                                                                               \
      JR_SCOPED("SELECT " BRANCH_COLS ", updated_at AS sync_at, NULL AS sync_deleted_at"           \
                " FROM branches WHERE ",                                                           \
                "id", JR_SYNC_TAIL("updated_at", "id", "NULL")))                                   \
    X(BRANCHES_COUNT, JR_SCOPED("SELECT COUNT(*) AS n FROM branches WHERE ", "id", ""))            \
    X(BRANCH_GET, "SELECT " BRANCH_COLS " FROM branches WHERE id = " JR_INT)                       \
    X(BRANCH_NAME_TAKEN, "SELECT id FROM branches WHERE name = %s AND id <> CAST(%s AS BIGINT)")   \
    X(BRANCH_INSERT,                                                                               \
      "INSERT INTO branches (name, created_at, updated_at) VALUES (%s, %s, %s) RETURNING id")      \
    X(BRANCH_UPDATE, "UPDATE branches SET name = %s, updated_at = %s WHERE id = " JR_INT)          \
    X(BRANCH_DELETE, "DELETE FROM branches WHERE id = " JR_INT)                                    \
    X(BRANCH_GROUP_COUNT, "SELECT COUNT(*) AS n FROM study_groups WHERE branch_id = " JR_INT)      \
    /* end of JR_BRANCHES_STMTS */

#endif
