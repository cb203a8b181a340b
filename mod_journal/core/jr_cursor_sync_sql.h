/* The statements of jr_cursor_sync.c (see jr_stmts.h): one X(ID, SQL) row each, or
 * X(ID, SQLite SQL, PostgreSQL SQL) where the dialects differ. */
#ifndef JR_CURSOR_SYNC_SQL_H
#define JR_CURSOR_SYNC_SQL_H

#define JR_CURSOR_SYNC_STMTS(X)                                                                    \
    X(SYNC_TOMBSTONES,                                                                             \
      "SELECT record_id AS id, deleted_at AS sync_at, deleted_at AS sync_deleted_at"               \
      " FROM deleted_records WHERE entity = %s"                                                    \
      " AND (branch_id IS NULL OR CAST(%s AS TEXT) IS NULL OR branch_id IN " JR_IN_JSON_SQLITE     \
      ")" JR_SYNC_TAIL("deleted_at", "record_id", "NULL"),                                         \
      "SELECT record_id AS id, deleted_at AS sync_at, deleted_at AS sync_deleted_at"               \
      " FROM deleted_records WHERE entity = %s"                                                    \
      " AND (branch_id IS NULL OR CAST(%s AS TEXT) IS NULL OR branch_id IN " JR_IN_JSON_PG         \
      ")" JR_SYNC_TAIL("deleted_at", "record_id", "NULL"))                                         \
    /* end of JR_CURSOR_SYNC_STMTS */

#endif
