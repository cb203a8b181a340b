/* The statements of jr_idem.c (see jr_stmts.h): one X(ID, SQL) row each, or
 * X(ID, SQLite SQL, PostgreSQL SQL) where the dialects differ. */
#ifndef JR_IDEM_SQL_H
#define JR_IDEM_SQL_H

#define JR_IDEM_STMTS(X)                                                                           \
    X(IDEM_RESERVE,                                                                                \
      "INSERT INTO idempotency_keys (owner, idem_key, fingerprint, created_at, expires_at)"        \
      " VALUES (%s, %s, %s, %s, %s) ON CONFLICT (owner, idem_key) DO NOTHING")                     \
    X(IDEM_GET, "SELECT fingerprint, status, body, expires_at FROM idempotency_keys"               \
                " WHERE owner = %s AND idem_key = %s")                                             \
    /* Expired, or reserved long ago by a request that never finished (its process ended):         \
     * such a reservation would refuse every repeat until it expired. */                           \
    X(IDEM_DROP_EXPIRED, "DELETE FROM idempotency_keys WHERE owner = %s AND idem_key = %s"         \
                         " AND (expires_at <= %s OR (status IS NULL AND created_at <= %s))")       \
    X(IDEM_STORE, "UPDATE idempotency_keys SET status = " JR_INT ", body = %s"                     \
                  " WHERE owner = %s AND idem_key = %s")                                           \
    X(IDEM_RELEASE, "DELETE FROM idempotency_keys WHERE owner = %s AND idem_key = %s")             \
    X(IDEM_PURGE, "DELETE FROM idempotency_keys WHERE expires_at <= %s")                           \
    /* end of JR_IDEM_STMTS */

#endif
