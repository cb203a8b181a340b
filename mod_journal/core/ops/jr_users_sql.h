/* The statements of jr_users.c (see jr_stmts.h): one X(ID, SQL) row each, or
 * X(ID, SQLite SQL, PostgreSQL SQL) where the dialects differ. */
#ifndef JR_USERS_SQL_H
#define JR_USERS_SQL_H

#define USER_COLS "id, username, role, active, created_at, updated_at"

#define JR_USERS_STMTS(X)                                                                          \
    X(USERS_LIST, "SELECT " USER_COLS " FROM users ORDER BY id")                                   \
    X(USERS_BRANCHES_ALL,                                                                          \
      "SELECT user_id, branch_id FROM user_branches ORDER BY user_id, branch_id")                  \
    X(USER_GET, "SELECT " USER_COLS " FROM users WHERE id = " JR_INT)                              \
    X(USER_NAME_TAKEN, "SELECT id FROM users WHERE username = %s AND id <> CAST(%s AS BIGINT)")    \
    X(USER_INSERT,                                                                                 \
      "INSERT INTO users (username, password_hash, role, active, created_at, updated_at)"          \
      " VALUES (%s, %s, %s, CAST(%s AS INTEGER), %s, %s) RETURNING id")                            \
    X(USER_UPDATE,                                                                                 \
      "UPDATE users SET username = COALESCE(%s, username),"                                        \
      " password_hash = COALESCE(%s, password_hash), role = COALESCE(%s, role),"                   \
      " active = COALESCE(CAST(%s AS INTEGER), active), updated_at = %s WHERE id = " JR_INT)       \
    X(USER_DELETE, "DELETE FROM users WHERE id = " JR_INT)                                         \
    X(USER_BRANCH_IDS,                                                                             \
      "SELECT branch_id FROM user_branches WHERE user_id = " JR_INT " ORDER BY branch_id")         \
    X(USER_BRANCHES_CLEAR, "DELETE FROM user_branches WHERE user_id = " JR_INT)                    \
    X(USER_BRANCH_ADD,                                                                             \
      "INSERT INTO user_branches (user_id, branch_id) VALUES (" JR_INT ", " JR_INT ")")            \
    /* Run inside the write transaction: SQLite's BEGIN IMMEDIATE already serialises writers;      \
     * on PostgreSQL the rows are locked so two concurrent demotions cannot both pass. */          \
    X(ADMINS_OTHER_ACTIVE,                                                                         \
      "SELECT id FROM users WHERE role = 'admin' AND active = 1 AND id <> CAST(%s AS BIGINT)",     \
      "SELECT id FROM users WHERE role = 'admin' AND active = 1 AND id <> CAST(%s AS BIGINT)"      \
      " FOR UPDATE")                                                                               \
    X(BRANCHES_EXISTING, "SELECT id FROM branches WHERE id IN " JR_IN_JSON_SQLITE,                 \
      "SELECT id FROM branches WHERE id IN " JR_IN_JSON_PG)                                        \
    /* end of JR_USERS_STMTS */

#endif
