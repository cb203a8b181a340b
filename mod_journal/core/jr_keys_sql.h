/* The statements of jr_keys.c (see jr_stmts.h): one X(ID, SQL) row each, or
 * X(ID, SQLite SQL, PostgreSQL SQL) where the dialects differ. */
#ifndef JR_KEYS_SQL_H
#define JR_KEYS_SQL_H

/* The reason of a ban of one address or subject in force at a time: (value, now). */
#define KEY_BAN_OF                                                                                 \
    "(SELECT reason FROM ip_bans WHERE ip = %s AND (expires_at IS NULL OR expires_at > %s))"

#define KEY_AUTH_SQL(base, more)                                                                   \
    "SELECT COALESCE(" KEY_BAN_OF ", " KEY_BAN_OF ") AS ban_reason, k.id, k.name, k.prefix,"       \
    " k.scopes, k.rate_limit_per_min, k.branch_ids, k.expires_at, k.created_at, k.created_by,"     \
    " k.updated_at, k.rotated_at, k.last_used_at, k.last_used_ip,"                                 \
    " (SELECT value FROM settings WHERE name = %s) AS org_timezone,"                               \
    " (SELECT value FROM settings WHERE name = %s) AS org_time_format" more ", b.*"                \
    " FROM " base " LEFT JOIN api_keys k ON k.key_hash = %s"

/* Every stored setting as one JSON object of texts (jr_settings_carried). SQLite carries none
 * (NULL): there a statement costs no round trip, and the aggregate and its parse cost more
 * than reading the rows (measured: POST 3.5 % slower). */
#define KEY_SETTINGS_SQLITE ", NULL AS settings_json"
#define KEY_SETTINGS_PG                                                                            \
    ", COALESCE((SELECT json_object_agg(name, value) FROM settings)::text, '{}') AS settings_json"
#define KEY_BASE_SQLITE "(SELECT 1 AS one) b"
#define KEY_BASE_PG "(SELECT " JR_DB_SNAPSHOT_COLUMNS " FROM pg_current_snapshot() AS s) b"

#define JR_KEYS_STMTS(X)                                                                           \
    /* One round trip answers both "is this IP banned" and "which key is this", with the     \
     * settings /api/v1/me shows. The ban is looked up for the address and for its subject     \
     * (jr_ip_subject) as two primary-key lookups: "ip IN (a, b)" made SQLite build a          \
     * temporary table on every request. The one-row base keeps a row when no key matches.   \
     * On PostgreSQL the base is the statement's snapshot: the response cache's generation     \
     * (JR_DB_SNAPSHOT_COLUMNS, jr_rcache_sql.h) comes with the key, not in a round trip. */   \
    X(KEY_AUTH, KEY_AUTH_SQL(KEY_BASE_SQLITE, ""), KEY_AUTH_SQL(KEY_BASE_PG, ""))                  \
    /* A route that writes reads the settings (the checks, the notifications) before its     \
     * transaction: on PostgreSQL they come with the key, one round trip less. */            \
    X(KEY_AUTH_SETTINGS, KEY_AUTH_SQL(KEY_BASE_SQLITE, KEY_SETTINGS_SQLITE),                       \
      KEY_AUTH_SQL(KEY_BASE_PG, KEY_SETTINGS_PG))                                                  \
    X(KEY_TOUCH, "UPDATE api_keys SET last_used_at = %s, last_used_ip = %s WHERE id = " JR_INT)    \
    /* end of JR_KEYS_STMTS */

#endif
