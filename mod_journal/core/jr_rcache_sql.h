/* The statement of jr_rcache.c (see jr_stmts.h). SQLite's generation is a counter in a file
 * (jr_wqueue.h), so its text is never run; it only keeps the catalogue the same in both. */
#ifndef JR_RCACHE_SQL_H
#define JR_RCACHE_SQL_H

/* snap_gen: the snapshot's xmax; snap_busy: 1 while a transaction with an id is running (the
 * snapshot's in-progress list is not empty), when the xmax says nothing (jr_db_pgsql.c). The
 * key's lookup (jr_keys_sql.h) reads the same columns, so a request with a key needs no
 * statement of its own for the generation. */
#define JR_DB_SNAPSHOT_COLUMNS                                                                     \
    "CAST(pg_snapshot_xmax(s) AS TEXT) AS snap_gen,"                                               \
    " CASE WHEN EXISTS (SELECT 1 FROM pg_snapshot_xip(s)) THEN 1 ELSE 0 END AS snap_busy"

#define JR_RCACHE_STMTS(X)                                                                         \
    X(RCACHE_SNAPSHOT, "SELECT '0' AS snap_gen, 1 AS snap_busy",                                   \
      "SELECT " JR_DB_SNAPSHOT_COLUMNS " FROM pg_current_snapshot() AS s")                         \
    /* end of JR_RCACHE_STMTS */

#endif
