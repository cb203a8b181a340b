/* The catalogue of the module's SQL statements. Each resource family lists its statements in
 * its own header (jr_<family>_sql.h) as an X-macro of rows
 *
 *     X(ID, SQL)                          one text for both dialects
 *     X(ID, SQLite SQL, PostgreSQL SQL)   where the dialects differ
 *     X(ID, JR_SCOPED(head, col, tail))   a query limited to the caller's branches
 *
 * and JR_STMT_CATALOGUE joins the lists. From it come the statement ids (JR_Q_<ID>, an enum the
 * compiler checks at every call site), the texts (jr_stmts.c), the labels for logs and
 * PostgreSQL's server-side names (the id in lower case: JR_Q_ENTRY_GET is "entry_get", prepared
 * as "jr_entry_get"). SQL uses %s placeholders (%% for a literal %), turned into ? or $N when a
 * connection prepares the catalogue. Nothing here includes a header of the core: the family
 * lists are macros, expanded in jr_stmts.c. */
#ifndef JR_STMTS_H
#define JR_STMTS_H

typedef enum {
    JR_DB_SQLITE = 1,
    JR_DB_PGSQL = 2
} jr_dialect_e;

/* PostgreSQL parameters are declared as varchar (as apr_dbd's pgsql driver did): integer
 * parameters are cast explicitly (harmless on SQLite). */
#define JR_INT "CAST(%s AS BIGINT)"

/* A LIKE pattern parameter on SQLite: an expression, never a bare parameter. SQLite's LIKE
 * optimisation reads a bare parameter's value while planning and then marks the statement as
 * expired whenever that parameter is bound again, so every execution prepared the statement
 * anew (docs/architecture.md §7.13). */
#define JR_PATTERN_SQLITE "CAST(%s AS TEXT)"

/* Branch scope of the caller: takes the identity's branch list (a JSON array of ids, or
 * NULL for every branch) twice. See jr_scope_args(). */
#define JR_SCOPE_SQLITE(col) \
    "(CAST(%s AS TEXT) IS NULL OR " col " IN (SELECT value FROM json_each(%s)))"
#define JR_SCOPE_PG(col)                                                     \
    "(CAST(%s AS TEXT) IS NULL OR " col " IN (SELECT CAST(value AS BIGINT) " \
    "FROM json_array_elements_text(CAST(%s AS json))))"
/* The two texts of a scoped query, as one catalogue row takes them. */
#define JR_SCOPED(head, col, tail) head JR_SCOPE_SQLITE(col) tail, head JR_SCOPE_PG(col) tail

/* "Is in this JSON array of ids" for arbitrary id lists (one placeholder). */
#define JR_IN_JSON_SQLITE "(SELECT value FROM json_each(%s))"
#define JR_IN_JSON_PG "(SELECT CAST(value AS BIGINT) FROM json_array_elements_text(CAST(%s AS json)))"

/* The end of a sync statement, after the caller's scope: at is the record's change time, id
 * its id, del its deletion time (NULL for lists without soft delete). The position is a row
 * value, so an index on (at, id) starts the walk there. */
#define JR_SYNC_TAIL(at, id, del)                                                           \
    " AND (" at ", " id ") > (%s, CAST(%s AS BIGINT))"                                      \
    " AND " at " <= %s AND (CAST(%s AS BIGINT) = 1 OR " del " IS NULL)"                      \
    " ORDER BY " at ", " id " LIMIT CAST(%s AS BIGINT)"

#include "jr_ai_sql.h"
#include "jr_audit_list_sql.h"
#include "jr_audit_sql.h"
#include "jr_backup_restore_sql.h"
#include "jr_backup_sql.h"
#include "jr_auth_sql.h"
#include "jr_bans_sql.h"
#include "jr_branches_sql.h"
#include "jr_chat_sql.h"
#include "jr_cursor_sync_sql.h"
#include "jr_entries_sql.h"
#include "jr_events_sql.h"
#include "jr_files_sql.h"
#include "jr_groups_sql.h"
#include "jr_idem_sql.h"
#include "jr_jobs_sql.h"
#include "jr_keys_admin_sql.h"
#include "jr_keys_sql.h"
#include "jr_lessons_sql.h"
#include "jr_modules_sql.h"
#include "jr_notif_sql.h"
#include "jr_photo_jobs_run_sql.h"
#include "jr_photo_jobs_sql.h"
#include "jr_photos_sql.h"
#include "jr_queues_sql.h"
#include "jr_rcache_sql.h"
#include "jr_settings_sql.h"
#include "jr_share_public_sql.h"
#include "jr_share_sql.h"
#include "jr_stats_sql.h"
#include "jr_stream_sql.h"
#include "jr_students_sql.h"
#include "jr_trash_sql.h"
#include "jr_users_sql.h"

/* Every statement of the module. A new family adds its list here. */
#define JR_STMT_CATALOGUE(X)                                                                       \
    JR_AUDIT_STMTS(X)                                                                              \
    JR_AUTH_STMTS(X)                                                                               \
    JR_USERS_STMTS(X)                                                                              \
    JR_BRANCHES_STMTS(X)                                                                           \
    JR_GROUPS_STMTS(X)                                                                             \
    JR_BANS_STMTS(X)                                                                               \
    JR_KEYS_STMTS(X)                                                                               \
    JR_KEYS_ADMIN_STMTS(X)                                                                         \
    JR_AUDIT_LIST_STMTS(X)                                                                         \
    JR_SETTINGS_STMTS(X)                                                                           \
    JR_STUDENTS_STMTS(X)                                                                           \
    JR_MODULES_STMTS(X)                                                                            \
    JR_ENTRIES_STMTS(X)                                                                            \
    JR_FILES_STMTS(X)                                                                              \
    JR_PHOTOS_STMTS(X)                                                                             \
    JR_TRASH_STMTS(X)                                                                              \
    JR_LESSONS_STMTS(X)                                                                            \
    JR_QUEUES_STMTS(X)                                                                             \
    JR_STATS_STMTS(X)                                                                              \
    JR_EVENTS_STMTS(X)                                                                             \
    JR_JOBS_STMTS(X)                                                                               \
    JR_AI_STMTS(X)                                                                                 \
    JR_NOTIF_STMTS(X)                                                                              \
    JR_STREAM_STMTS(X)                                                                             \
    JR_CHAT_STMTS(X)                                                                               \
    JR_IDEM_STMTS(X)                                                                               \
    JR_CURSOR_SYNC_STMTS(X)                                                                        \
    JR_SHARE_STMTS(X)                                                                              \
    JR_SHARE_PUBLIC_STMTS(X)                                                                       \
    JR_BACKUP_STMTS(X)                                                                             \
    JR_BACKUP_RESTORE_STMTS(X)                                                                     \
    JR_PHOTO_JOBS_STMTS(X)                                                                         \
    JR_PHOTO_JOBS_RUN_STMTS(X)                                                                     \
    JR_RCACHE_STMTS(X)

/* Statement ids: dense from 0, JR_Q__COUNT of them. */
#define JR_Q_ENUM_ROW_(id, ...) JR_Q_##id,
typedef enum {
    JR_STMT_CATALOGUE(JR_Q_ENUM_ROW_) JR_Q__COUNT
} jr_stmt_id_t;
#undef JR_Q_ENUM_ROW_

/* The longest label a statement may have: PostgreSQL's identifiers hold 63 bytes, and the
 * server-side name adds "jr_". Checked when jr_stmts.c compiles. */
#define JR_STMT_LABEL_MAX 56

/* Derives the labels, the parameter counts and the write flags from the catalogue. Called once
 * per process before any thread starts (jr_db_global_init, jr_db_open); calling it again does
 * nothing. The functions below need it. */
void jr_stmts_init(void);

/* "entry_get" for JR_Q_ENTRY_GET: for logs. */
const char *jr_stmt_label(jr_stmt_id_t id);

/* "jr_entry_get": the name of the statement prepared in a PostgreSQL session, which other
 * mod_dbd users of the connection share. */
const char *jr_stmt_server_name(jr_stmt_id_t id);

/* The statement's text for a dialect, with %s placeholders. */
const char *jr_stmt_sql(jr_stmt_id_t id, jr_dialect_e dialect);

/* The number of %s placeholders (the same in both dialects). */
int jr_stmt_nparams(jr_stmt_id_t id);

/* 1 when the statement needs the write transaction: its first keyword (in either dialect) is not
 * SELECT (INSERT, UPDATE, DELETE, or a WITH that writes), or it is a SELECT ... FOR UPDATE that
 * locks rows until the transaction ends. A transaction begun lazily begins at the first such
 * statement. */
int jr_stmt_writes(jr_stmt_id_t id);

#endif
