/* The statements of jr_groups.c (see jr_stmts.h): one X(ID, SQL) row each, or
 * X(ID, SQLite SQL, PostgreSQL SQL) where the dialects differ. */
#ifndef JR_GROUPS_SQL_H
#define JR_GROUPS_SQL_H

#define GROUP_COLS "g.id, g.name, g.branch_id, g.tutor_id, g.created_at, g.updated_at"
#define GROUP_FILTER                                                                               \
    " FROM study_groups g WHERE g.deleted_at IS NULL"                                              \
    " AND (CAST(%s AS BIGINT) IS NULL OR g.branch_id = CAST(%s AS BIGINT)) AND "

#define JR_GROUPS_STMTS(X)                                                                         \
    X(GROUPS_LIST, JR_SCOPED("SELECT " GROUP_COLS GROUP_FILTER, "g.branch_id",                     \
                             " AND g.id > COALESCE(CAST(%s AS BIGINT), 0)"                         \
                             " ORDER BY g.id LIMIT CAST(%s AS BIGINT) OFFSET CAST(%s AS BIGINT)")) \
    X(GROUPS_SYNC,                                                                                 \
      JR_SCOPED("SELECT " GROUP_COLS ", g.updated_at AS sync_at, g.deleted_at AS sync_deleted_at"  \
                " FROM study_groups g WHERE ",                                                     \
                "g.branch_id", JR_SYNC_TAIL("g.updated_at", "g.id", "g.deleted_at")))              \
    X(GROUPS_COUNT, JR_SCOPED("SELECT COUNT(*) AS n" GROUP_FILTER, "g.branch_id", ""))             \
    X(GROUP_SCOPE, "SELECT branch_id, deleted_at FROM study_groups WHERE id = " JR_INT)            \
    X(GROUP_GET, "SELECT " GROUP_COLS ", g.deleted_at FROM study_groups g WHERE g.id = " JR_INT)   \
    X(GROUP_NAME_TAKEN, "SELECT id FROM study_groups WHERE branch_id = " JR_INT                    \
                        " AND name = %s AND deleted_at IS NULL"                                    \
                        " AND id <> CAST(%s AS BIGINT)")                                           \
    X(GROUP_INSERT, "INSERT INTO study_groups (name, branch_id, tutor_id, created_at, updated_at)" \
                    " VALUES (%s, " JR_INT ", " JR_INT ", %s, %s) RETURNING id")                   \
    X(GROUP_UPDATE, "UPDATE study_groups SET name = %s, branch_id = " JR_INT                       \
                    ", tutor_id = " JR_INT ", updated_at = %s"                                     \
                    " WHERE id = " JR_INT)                                                         \
    X(GROUP_SOFT_DELETE,                                                                           \
      "UPDATE study_groups SET deleted_at = %s, deleted_by = " JR_INT ", updated_at = %s"          \
      " WHERE id = " JR_INT " AND deleted_at IS NULL")                                             \
    X(GROUP_RESTORE,                                                                               \
      "UPDATE study_groups SET deleted_at = NULL, deleted_by = NULL, updated_at = %s"              \
      " WHERE id = " JR_INT " AND deleted_at IS NOT NULL")                                         \
    X(TUTOR_CHECK,                                                                                 \
      "SELECT u.role, u.active, (SELECT COUNT(*) FROM user_branches ub WHERE ub.user_id = u.id"    \
      " AND ub.branch_id = CAST(%s AS BIGINT)) AS member FROM users u WHERE u.id = " JR_INT)       \
    /* end of JR_GROUPS_STMTS */

#endif
