/* The statements of jr_bans.c (see jr_stmts.h): one X(ID, SQL) row each, or
 * X(ID, SQLite SQL, PostgreSQL SQL) where the dialects differ. */
#ifndef JR_BANS_SQL_H
#define JR_BANS_SQL_H

#define JR_BANS_STMTS(X)                                                                           \
    /* The address itself too: a ban written before IPv6 was banned by /64 still holds. */         \
    X(BAN_CHECK, "SELECT reason, expires_at FROM ip_bans WHERE ip IN (%s, %s)"                     \
                 " AND (expires_at IS NULL OR expires_at > %s)")                                   \
    X(BAN_UPSERT,                                                                                  \
      "INSERT INTO ip_bans (ip, reason, created_at, expires_at) VALUES (%s, %s, %s, %s)"           \
      " ON CONFLICT (ip) DO UPDATE SET reason = excluded.reason,"                                  \
      " created_at = excluded.created_at, expires_at = excluded.expires_at")                       \
    X(BANS_LIST, "SELECT ip, reason, created_at, expires_at FROM ip_bans"                          \
                 " WHERE expires_at IS NULL OR expires_at > %s ORDER BY created_at DESC, ip")      \
    X(BAN_DELETE, "DELETE FROM ip_bans WHERE ip IN (%s, %s)")                                      \
    X(BANS_PURGE, "DELETE FROM ip_bans WHERE expires_at IS NOT NULL AND expires_at <= %s")         \
    /* end of JR_BANS_STMTS */

#endif
