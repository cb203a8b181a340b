/* The statements of jr_chat.c (see jr_stmts.h): one X(ID, SQL) row each, or
 * X(ID, SQLite SQL, PostgreSQL SQL) where the dialects differ. */
#ifndef JR_CHAT_SQL_H
#define JR_CHAT_SQL_H

#define MSG_COLS "id, tutor_id, sender_id, text, created_at"

#define JR_CHAT_STMTS(X)                                                                           \
    X(CHAT_TUTOR, "SELECT id FROM users WHERE id = " JR_INT " AND role = 'tutor'")                 \
    /* Threads with their last message and the caller's unread count: the caller twice, then       \
     * one tutor id (or NULL for all) twice. */                                                    \
    X(CHAT_THREADS,                                                                                \
      "SELECT u.id AS tutor_id, u.username, m.id, m.sender_id, m.text, m.created_at,"              \
      " (SELECT COUNT(*) FROM chat_messages x WHERE x.tutor_id = u.id AND x.id >"                  \
      " COALESCE((SELECT r.last_read_id FROM chat_reads r WHERE r.tutor_id = u.id"                 \
      " AND r.user_id = " JR_INT "), 0) AND (x.sender_id IS NULL OR x.sender_id <> " JR_INT        \
      ")) AS unread"                                                                               \
      " FROM users u LEFT JOIN chat_messages m ON m.id ="                                          \
      " (SELECT MAX(id) FROM chat_messages WHERE tutor_id = u.id)"                                 \
      " WHERE u.role = 'tutor' AND (CAST(%s AS BIGINT) IS NULL OR u.id = " JR_INT ")"              \
      " ORDER BY COALESCE(m.id, 0) DESC, u.id")                                                    \
    X(CHAT_MESSAGES,                                                                               \
      "SELECT " MSG_COLS " FROM chat_messages WHERE tutor_id = " JR_INT                            \
      " AND (CAST(%s AS BIGINT) IS NULL OR id < " JR_INT ") ORDER BY id DESC LIMIT " JR_INT)       \
    X(CHAT_INSERT,                                                                                 \
      "INSERT INTO chat_messages (tutor_id, sender_id, text, created_at) VALUES (" JR_INT          \
      ", " JR_INT ", %s, %s) RETURNING " MSG_COLS)                                                 \
    X(CHAT_LAST,                                                                                   \
      "SELECT COALESCE(MAX(id), 0) AS last FROM chat_messages WHERE tutor_id = " JR_INT)           \
    X(CHAT_READ,                                                                                   \
      "INSERT INTO chat_reads (tutor_id, user_id, last_read_id) VALUES (" JR_INT ", " JR_INT       \
      ", " JR_INT ") ON CONFLICT (tutor_id, user_id) DO UPDATE SET last_read_id = CASE WHEN"       \
      " excluded.last_read_id > chat_reads.last_read_id THEN excluded.last_read_id"                \
      " ELSE chat_reads.last_read_id END")                                                         \
    X(CHAT_PURGE,                                                                                  \
      "DELETE FROM chat_messages WHERE id IN (SELECT id FROM chat_messages WHERE created_at < %s"  \
      " ORDER BY id LIMIT 5000)")                                                                  \
    /* end of JR_CHAT_STMTS */

#endif
