/* The statements of jr_auth.c (see jr_stmts.h): one X(ID, SQL) row each, or
 * X(ID, SQLite SQL, PostgreSQL SQL) where the dialects differ. */
#ifndef JR_AUTH_SQL_H
#define JR_AUTH_SQL_H

#define JR_AUTH_STMTS(X)                                                                           \
    X(SESSION_LOOKUP, "SELECT s.user_id, s.expires_at, u.username, u.role FROM sessions s"         \
                      " JOIN users u ON u.id = s.user_id"                                          \
                      " WHERE s.token_hash = %s AND s.expires_at > %s AND u.active = 1")           \
    X(SESSION_INSERT,                                                                              \
      "INSERT INTO sessions (token_hash, user_id, created_at, expires_at, client_ip)"              \
      " VALUES (%s, " JR_INT ", %s, %s, %s)")                                                      \
    X(SESSION_DELETE, "DELETE FROM sessions WHERE token_hash = %s")                                \
    X(SESSION_DELETE_USER, "DELETE FROM sessions WHERE user_id = " JR_INT)                         \
    X(SESSION_PURGE, "DELETE FROM sessions WHERE expires_at <= %s")                                \
    X(LOGIN_USER, "SELECT id, password_hash, active FROM users WHERE username = %s")               \
    /* end of JR_AUTH_STMTS */

#endif
