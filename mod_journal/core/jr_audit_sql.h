/* The statements of jr_audit.c (see jr_stmts.h): one X(ID, SQL) row each, or
 * X(ID, SQLite SQL, PostgreSQL SQL) where the dialects differ. */
#ifndef JR_AUDIT_SQL_H
#define JR_AUDIT_SQL_H

#define JR_AUDIT_STMTS(X)                                                                          \
    X(AUDIT_INSERT,                                                                                \
      "INSERT INTO audit_log (created_at, actor_user_id, actor_key_id, via_api_key, client_ip,"    \
      " action, entity_type, entity_id, changes) VALUES (%s, " JR_INT ", " JR_INT                  \
      ", CAST(%s AS INTEGER), %s, %s, %s, %s, %s)")                                                \
    X(HEALTH_SCHEMA, "SELECT COALESCE(MAX(version), 0) AS version FROM schema_migrations")         \
    /* end of JR_AUDIT_STMTS */

#endif
