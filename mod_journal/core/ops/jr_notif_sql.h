/* The statements of jr_notif.c (see jr_stmts.h): one X(ID, SQL) row each, or
 * X(ID, SQLite SQL, PostgreSQL SQL) where the dialects differ. */
#ifndef JR_NOTIF_SQL_H
#define JR_NOTIF_SQL_H

#define N_COLS                                                                                     \
    "SELECT n.id, n.type, n.level, n.title, n.body, n.entity_type, n.entity_id, n.branch_id,"      \
    " n.created_at, m.read_at"
/* The caller's notifications: user id, then the branch scope (twice). */
#define N_VISIBLE(scope)                                                                           \
    " FROM notifications n LEFT JOIN notification_marks m ON m.notification_id = n.id"             \
    " AND m.user_id = " JR_INT " WHERE " scope " AND m.deleted_at IS NULL"
/* unread ("1" or NULL), type twice, level twice. */
#define N_FILTERS                                                                                  \
    " AND (CAST(%s AS TEXT) IS NULL OR m.read_at IS NULL)"                                         \
    " AND (CAST(%s AS TEXT) IS NULL OR n.type = %s) AND (CAST(%s AS TEXT) IS NULL OR n.level = "   \
    "%s)"
#define N_BOTH(X, id, head, tail)                                                                  \
    X(id, head N_VISIBLE(JR_SCOPE_SQLITE("n.branch_id")) tail,                                     \
      head N_VISIBLE(JR_SCOPE_PG("n.branch_id")) tail)
/* Marks for every visible notification the user has none for yet: user, time, scope. */
#define N_MARK_NEW(col, scope)                                                                     \
    "INSERT INTO notification_marks (notification_id, user_id, " col ")"                           \
    " SELECT n.id, " JR_INT ", %s FROM notifications n WHERE " scope                               \
    " AND NOT EXISTS (SELECT 1 FROM notification_marks m WHERE m.notification_id = n.id"           \
    " AND m.user_id = " JR_INT ")"
#define N_MARK_ONE(col)                                                                            \
    "INSERT INTO notification_marks (notification_id, user_id, " col ") VALUES (" JR_INT           \
    ", " JR_INT ", %s) ON CONFLICT (user_id, notification_id) DO UPDATE SET " col                  \
    " = COALESCE(notification_marks." col ", excluded." col ")"

#define JR_NOTIF_STMTS(X)                                                                          \
    X(NOTIF_INSERT,                                                                                \
      "INSERT INTO notifications (type, level, title, body, entity_type, entity_id, branch_id,"    \
      " created_at) VALUES (%s, %s, %s, %s, %s, " JR_INT ", " JR_INT ", %s) RETURNING id")         \
    N_BOTH(X, NOTIF_LIST, N_COLS, N_FILTERS " ORDER BY n.id DESC LIMIT " JR_INT " OFFSET " JR_INT) \
    N_BOTH(X, NOTIF_COUNT, "SELECT COUNT(*) AS n", N_FILTERS)                                      \
    N_BOTH(X, NOTIF_GET, N_COLS, " AND n.id = " JR_INT)                                            \
    X(NOTIF_MARK_READ, N_MARK_ONE("read_at"))                                                      \
    X(NOTIF_MARK_DELETED, N_MARK_ONE("deleted_at"))                                                \
    X(NOTIF_READ_NEW, N_MARK_NEW("read_at", JR_SCOPE_SQLITE("n.branch_id")),                       \
      N_MARK_NEW("read_at", JR_SCOPE_PG("n.branch_id")))                                           \
    X(NOTIF_CLEAR_NEW, N_MARK_NEW("deleted_at", JR_SCOPE_SQLITE("n.branch_id")),                   \
      N_MARK_NEW("deleted_at", JR_SCOPE_PG("n.branch_id")))                                        \
    X(NOTIF_READ_OLD, "UPDATE notification_marks SET read_at = %s WHERE user_id = " JR_INT         \
                      " AND read_at IS NULL AND deleted_at IS NULL")                               \
    X(NOTIF_CLEAR_OLD, "UPDATE notification_marks SET deleted_at = %s WHERE user_id = " JR_INT     \
                       " AND deleted_at IS NULL")                                                  \
    /* In batches, as the outbox trim: short write transactions. */                                \
    X(NOTIF_PURGE,                                                                                 \
      "DELETE FROM notifications WHERE id IN (SELECT id FROM notifications WHERE created_at < %s"  \
      " ORDER BY id LIMIT 5000)")                                                                  \
    X(NOTIF_TICKETS_PURGE, "DELETE FROM stream_tickets WHERE expires_at <= %s")                    \
    /* end of JR_NOTIF_STMTS */

#endif
