/* The statements of jr_audit_list.c (see jr_stmts.h): one X(ID, SQL) row each, or
 * X(ID, SQLite SQL, PostgreSQL SQL) where the dialects differ. */
#ifndef JR_AUDIT_LIST_SQL_H
#define JR_AUDIT_LIST_SQL_H

#define AUDIT_FILTER                                                                               \
    " FROM audit_log WHERE (CAST(%s AS TEXT) IS NULL OR entity_type = %s)"                         \
    " AND (CAST(%s AS TEXT) IS NULL OR entity_id = %s)"                                            \
    " AND (CAST(%s AS BIGINT) IS NULL OR actor_user_id = CAST(%s AS BIGINT))"                      \
    " AND (CAST(%s AS BIGINT) IS NULL OR actor_key_id = CAST(%s AS BIGINT))"                       \
    " AND (CAST(%s AS INTEGER) IS NULL OR via_api_key = CAST(%s AS INTEGER))"

#define JR_AUDIT_LIST_STMTS(X)                                                                     \
    X(AUDIT_LIST,                                                                                  \
      "SELECT id, created_at, actor_user_id, actor_key_id, via_api_key, client_ip, action,"        \
      " entity_type, entity_id, changes" AUDIT_FILTER                                              \
      " ORDER BY id DESC LIMIT CAST(%s AS BIGINT) OFFSET CAST(%s AS BIGINT)")                      \
    X(AUDIT_COUNT, "SELECT COUNT(*) AS n" AUDIT_FILTER)                                            \
    /* end of JR_AUDIT_LIST_STMTS */

#endif
