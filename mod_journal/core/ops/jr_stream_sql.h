/* The statements of jr_stream.c (see jr_stmts.h): one X(ID, SQL) row each, or
 * X(ID, SQLite SQL, PostgreSQL SQL) where the dialects differ. */
#ifndef JR_STREAM_SQL_H
#define JR_STREAM_SQL_H

#define JR_STREAM_STMTS(X)                                                                         \
    X(TICKET_INSERT,                                                                               \
      "INSERT INTO stream_tickets (ticket_hash, session_hash, expires_at) VALUES (%s, %s, %s)")    \
    /* Used up by the one request that presents it, whichever child serves it. */                  \
    X(TICKET_TAKE, "DELETE FROM stream_tickets WHERE ticket_hash = %s AND expires_at > %s"         \
                   " RETURNING session_hash")                                                      \
    X(STREAM_SESSIONS_VALID,                                                                       \
      "SELECT s.token_hash FROM sessions s JOIN users u ON u.id = s.user_id"                       \
      " WHERE s.token_hash IN " JR_IN_JSON_SQLITE " AND s.expires_at > %s AND u.active = 1",       \
      "SELECT s.token_hash FROM sessions s JOIN users u ON u.id = s.user_id"                       \
      " WHERE s.token_hash IN (SELECT value FROM json_array_elements_text(CAST(%s AS json)))"      \
      " AND s.expires_at > %s AND u.active = 1")                                                   \
    X(STREAM_ROWS, "SELECT id, type, branch_id, entity_id, payload FROM events WHERE id > " JR_INT \
                   " ORDER BY id LIMIT " JR_INT)                                                   \
    X(STREAM_BOUNDS, "SELECT MIN(id) AS lo, MAX(id) AS hi FROM events")                            \
    /* end of JR_STREAM_STMTS */

#endif
