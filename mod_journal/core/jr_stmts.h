/* The catalog of prepared statements. Each resource file owns a table of its statements;
 * the module registers them all with mod_dbd at startup, the CLI and tests prepare them on
 * their own connections. SQL uses %s placeholders (apr_dbd turns them into ? or $N). */
#ifndef JR_STMTS_H
#define JR_STMTS_H

#include "jr_db.h"

typedef struct {
    const char *label;
    const char *sql;    /* both dialects, or SQLite when sql_pg is set */
    const char *sql_pg; /* PostgreSQL variant, or NULL */
} jr_stmt_def_t;

/* NULL-terminated list of tables, each ended by an entry with a NULL label. */
extern const jr_stmt_def_t *const jr_stmt_tables[];

const char *jr_stmt_sql(const jr_stmt_def_t *d, jr_dialect_e dialect);

/* apr_dbd's pgsql driver declares every %s parameter as varchar: integer parameters are
 * cast explicitly (harmless on SQLite). */
#define JR_INT "CAST(%s AS BIGINT)"

/* Branch scope of the caller: takes the identity's branch list (a JSON array of ids, or
 * NULL for every branch) twice. See jr_scope_args(). */
#define JR_SCOPE_SQLITE(col) \
    "(CAST(%s AS TEXT) IS NULL OR " col " IN (SELECT value FROM json_each(%s)))"
#define JR_SCOPE_PG(col)                                                     \
    "(CAST(%s AS TEXT) IS NULL OR " col " IN (SELECT CAST(value AS BIGINT) " \
    "FROM json_array_elements_text(CAST(%s AS json))))"
#define JR_SCOPED(label, head, col, tail) \
    {label, head JR_SCOPE_SQLITE(col) tail, head JR_SCOPE_PG(col) tail}

/* "Is in this JSON array of ids" for arbitrary id lists (one placeholder). */
#define JR_IN_JSON_SQLITE "(SELECT value FROM json_each(%s))"
#define JR_IN_JSON_PG "(SELECT CAST(value AS BIGINT) FROM json_array_elements_text(CAST(%s AS json)))"

extern const jr_stmt_def_t jr_stmts_core[];
extern const jr_stmt_def_t jr_stmts_auth[];
extern const jr_stmt_def_t jr_stmts_users[];
extern const jr_stmt_def_t jr_stmts_branches[];
extern const jr_stmt_def_t jr_stmts_groups[];
extern const jr_stmt_def_t jr_stmts_bans[];
extern const jr_stmt_def_t jr_stmts_keyauth[];
extern const jr_stmt_def_t jr_stmts_keys[];
extern const jr_stmt_def_t jr_stmts_audit[];
extern const jr_stmt_def_t jr_stmts_settings[];
extern const jr_stmt_def_t jr_stmts_files[];
extern const jr_stmt_def_t jr_stmts_photos[];
extern const jr_stmt_def_t jr_stmts_students[];
extern const jr_stmt_def_t jr_stmts_modules[];
extern const jr_stmt_def_t jr_stmts_entries[];
extern const jr_stmt_def_t jr_stmts_trash[];
extern const jr_stmt_def_t jr_stmts_lessons[];
extern const jr_stmt_def_t jr_stmts_queues[];
extern const jr_stmt_def_t jr_stmts_stats[];
extern const jr_stmt_def_t jr_stmts_events[];
extern const jr_stmt_def_t jr_stmts_jobs[];
extern const jr_stmt_def_t jr_stmts_ai[];
extern const jr_stmt_def_t jr_stmts_notif[];
extern const jr_stmt_def_t jr_stmts_stream[];
extern const jr_stmt_def_t jr_stmts_chat[];
extern const jr_stmt_def_t jr_stmts_idem[];
extern const jr_stmt_def_t jr_stmts_sync[];
extern const jr_stmt_def_t jr_stmts_share[];
extern const jr_stmt_def_t jr_stmts_share_public[];
extern const jr_stmt_def_t jr_stmts_backup[];
extern const jr_stmt_def_t jr_stmts_backup_restore[];
extern const jr_stmt_def_t jr_stmts_photo_jobs[];
extern const jr_stmt_def_t jr_stmts_photo_run[];

#endif
