/* The statements of jr_share.c (see jr_stmts.h): one X(ID, SQL) row each, or
 * X(ID, SQLite SQL, PostgreSQL SQL) where the dialects differ. */
#ifndef JR_SHARE_SQL_H
#define JR_SHARE_SQL_H

/* The target's group and branch come through the target itself (a student's group, or the
 * group), so the branch a link counts for is the one its target is in today. A link whose
 * student is gone has no branch: only admins see it. */
#define LINK_COLS                                                                                  \
    "l.id, l.kind, l.target_id, g.branch_id,"                                                      \
    " CASE WHEN l.password_hash IS NULL THEN 0 ELSE 1 END AS has_password, l.expires_at,"          \
    " l.created_by, l.created_at, l.revoked_at, l.last_opened_at, l.open_count"
#define LINK_FROM                                                                                  \
    " FROM share_links l LEFT JOIN students s ON l.kind = 'student' AND s.id = l.target_id"        \
    " LEFT JOIN study_groups g"                                                                    \
    " ON g.id = (CASE WHEN l.kind = 'student' THEN s.group_id ELSE l.target_id END)"
#define LINK_FILTER                                                                                \
    LINK_FROM " WHERE (CAST(%s AS TEXT) IS NULL OR l.kind = %s)"                                   \
              " AND (CAST(%s AS BIGINT) IS NULL OR l.target_id = CAST(%s AS BIGINT)) AND "

#define JR_SHARE_STMTS(X)                                                                          \
    X(SHARE_LINKS_LIST,                                                                            \
      JR_SCOPED("SELECT " LINK_COLS LINK_FILTER, "g.branch_id",                                    \
                " ORDER BY l.id DESC LIMIT CAST(%s AS BIGINT) OFFSET CAST(%s AS BIGINT)"))         \
    X(SHARE_LINKS_COUNT, JR_SCOPED("SELECT COUNT(*) AS n" LINK_FILTER, "g.branch_id", ""))         \
    X(SHARE_LINK_GET, "SELECT " LINK_COLS LINK_FROM " WHERE l.id = " JR_INT)                       \
    X(SHARE_LINK_INSERT,                                                                           \
      "INSERT INTO share_links (kind, target_id, token_hash, password_hash, expires_at,"           \
      " created_by, created_at) VALUES (%s, " JR_INT ", %s, %s, %s, " JR_INT ", %s) RETURNING id") \
    X(SHARE_LINK_REVOKE,                                                                           \
      "UPDATE share_links SET revoked_at = %s WHERE id = " JR_INT " AND revoked_at IS NULL")       \
    /* end of JR_SHARE_STMTS */

#endif
