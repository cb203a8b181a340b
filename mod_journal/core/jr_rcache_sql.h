/* The statement of jr_rcache.c (see jr_stmts.h). SQLite's generation is a counter in a file
 * (jr_wqueue.h), so its text is never run; it only keeps the catalogue the same in both. */
#ifndef JR_RCACHE_SQL_H
#define JR_RCACHE_SQL_H

/* gen: the snapshot's xmax; busy: 1 while a transaction with an id is running (the snapshot's
 * in-progress list is not empty), when the xmax says nothing (jr_db_pgsql.c). */
#define JR_RCACHE_STMTS(X)                                                                         \
    X(RCACHE_SNAPSHOT, "SELECT '0' AS gen, 1 AS busy",                                             \
      "SELECT CAST(pg_snapshot_xmax(s) AS TEXT) AS gen,"                                           \
      " CASE WHEN EXISTS (SELECT 1 FROM pg_snapshot_xip(s)) THEN 1 ELSE 0 END AS busy"             \
      " FROM pg_current_snapshot() AS s")                                                          \
    /* end of JR_RCACHE_STMTS */

#endif
