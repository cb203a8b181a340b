#include "jr_stmts.h"

const jr_stmt_def_t *const jr_stmt_tables[] = {
    jr_stmts_core,  jr_stmts_auth,    jr_stmts_users, jr_stmts_branches, jr_stmts_groups,
    jr_stmts_bans,  jr_stmts_keyauth, jr_stmts_keys,  jr_stmts_audit,    jr_stmts_settings,
    jr_stmts_students, jr_stmts_modules, jr_stmts_entries, jr_stmts_files, jr_stmts_photos, jr_stmts_trash,
    jr_stmts_lessons, jr_stmts_queues, jr_stmts_stats, jr_stmts_events, jr_stmts_jobs, jr_stmts_ai,
    jr_stmts_notif, jr_stmts_stream, jr_stmts_chat,
    jr_stmts_idem, jr_stmts_sync,
    jr_stmts_share, jr_stmts_share_public, jr_stmts_backup, jr_stmts_backup_restore,
    jr_stmts_photo_jobs, jr_stmts_photo_run,
    NULL,
};

const char *jr_stmt_sql(const jr_stmt_def_t *d, jr_dialect_e dialect)
{
    return (dialect == JR_DB_PGSQL && d->sql_pg) ? d->sql_pg : d->sql;
}
