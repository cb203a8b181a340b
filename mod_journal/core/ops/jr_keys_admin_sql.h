/* The statements of jr_keys_admin.c (see jr_stmts.h): one X(ID, SQL) row each, or
 * X(ID, SQLite SQL, PostgreSQL SQL) where the dialects differ. */
#ifndef JR_KEYS_ADMIN_SQL_H
#define JR_KEYS_ADMIN_SQL_H

/* Columns of a key's record, as jr_key_write() reads them. */
#define JR_KEY_COLS                                                                                \
    "id, name, prefix, scopes, rate_limit_per_min, branch_ids, expires_at, created_at,"            \
    " created_by, updated_at, rotated_at, last_used_at, last_used_ip"

#define JR_KEYS_ADMIN_STMTS(X)                                                                     \
    X(KEYS_LIST, "SELECT " JR_KEY_COLS " FROM api_keys ORDER BY id")                               \
    X(KEY_GET, "SELECT " JR_KEY_COLS " FROM api_keys WHERE id = " JR_INT)                          \
    X(KEY_INSERT,                                                                                  \
      "INSERT INTO api_keys (name, prefix, key_hash, scopes, rate_limit_per_min, branch_ids,"      \
      " expires_at, created_at, created_by, updated_at)"                                           \
      " VALUES (%s, %s, %s, %s, CAST(%s AS INTEGER), %s, %s, %s, " JR_INT ", %s) RETURNING id")    \
    X(KEY_UPDATE,                                                                                  \
      "UPDATE api_keys SET name = %s, scopes = %s, rate_limit_per_min = CAST(%s AS INTEGER),"      \
      " branch_ids = %s, expires_at = %s, updated_at = %s WHERE id = " JR_INT)                     \
    X(KEY_ROTATE,                                                                                  \
      "UPDATE api_keys SET prefix = %s, key_hash = %s, rotated_at = %s, updated_at = %s"           \
      " WHERE id = " JR_INT)                                                                       \
    X(KEY_DELETE, "DELETE FROM api_keys WHERE id = " JR_INT)                                       \
    /* end of JR_KEYS_ADMIN_STMTS */

#endif
