/* Backups of the main records and their stored files, independent of the database: one
 * gzip-compressed tar archive with manifest.json (format and schema versions, counts, the
 * SHA-256 of every member), one JSON-lines file per table (db/<table>.jsonl) and the stored
 * files under their stored names. API keys, sessions, bans, counters and the event outbox
 * are never in it. jr_backup.c writes and manages archives, jr_backup_restore.c checks and
 * restores one, jr_backup_tar.c reads and writes the tar format. */
#ifndef JR_BACKUP_H
#define JR_BACKUP_H

#include <apr_file_io.h>

#include "jr_router.h"

#define JR_BACKUP_FORMAT "mod_journal-backup"
#define JR_BACKUP_FORMAT_VERSION 1
#define JR_BACKUP_DIR "backups"

/* One table of the backup: its name and columns, and whether each column is an integer
 * (bound with a cast: PostgreSQL does not turn text into a number by itself). */
typedef struct {
    const char *table;
    const char *const *cols;
    const char *int_cols; /* one character per column: 'i' integer, 's' text */
    int has_id;           /* an identity column "id" (its sequence is reset on restore) */
    jr_stmt_id_t sel, ins, del; /* a page (or all rows), one row in, every row out */
    jr_stmt_id_t seq;           /* the identity sequence's reset (has_id only) */
} jr_backup_table_t;

/* In the order a restore inserts them (parents first). NULL-terminated. */
extern const jr_backup_table_t *const jr_backup_tables[];

/* What a backup or a restore produced. */
typedef struct {
    const char *name; /* file name under data_dir/backups */
    apr_off_t size;
    json_t *counts; /* {table: rows, ..., "files": n} (pool-owned) */
} jr_backup_info_t;

/* Writes a new archive from one read transaction, through a temporary name, mode 0600;
 * then records the audit row and the backup.created event in one write transaction.
 * err: a message for the log on failure. */
apr_status_t jr_backup_create(jr_ctx_t *ctx, jr_backup_info_t *out, const char **err);

/* Checks the archive at path (manifest, every checksum, schema version), then replaces the
 * records in one transaction (deleting every API key and session, writing the audit row and
 * the backup.restored event) and swaps the stored files. On any failure nothing changes.
 * *status: 400 for an archive refused (err says why), 500/503 otherwise. */
apr_status_t jr_backup_restore(jr_ctx_t *ctx, const char *path, jr_backup_info_t *out,
                               int *status, const char **err);

/* The names of the archives in data_dir/backups, oldest first (names sort by time), and the
 * newest one's mtime in *newest (0 when there is none). */
apr_array_header_t *jr_backup_names(apr_pool_t *p, const char *data_dir, apr_time_t *newest);

/* Takes today's scheduled backup when JournalBackupSchedule is set, its time has passed and
 * no archive was written since, then removes the oldest beyond JournalBackupKeep. 1 when a
 * backup was written, 0 when none was due, -1 on failure (logged). */
int jr_backup_scheduled(jr_ctx_t *ctx);

/* Removes a work or staging directory with everything in it. */
void jr_backup_rmtree(apr_pool_t *p, const char *dir);

/* data_dir/backups/name when name is a backup's name, else NULL. */
const char *jr_backup_path(apr_pool_t *p, const char *data_dir, const char *name);

/* ---- jr_backup_tar.c ---- */
typedef struct jr_tar jr_tar_t;
/* A gzip-compressed tar archive, written or read in order. */
apr_status_t jr_tar_create(jr_tar_t **t, apr_pool_t *p, const char *path);
/* Appends the file at path as member name (a regular file, mode 0600). */
apr_status_t jr_tar_add(jr_tar_t *t, const char *name, const char *path, apr_pool_t *scratch);
/* Writes the end of the archive and closes it (flushes to disk). */
apr_status_t jr_tar_finish(jr_tar_t *t);
apr_status_t jr_tar_open(jr_tar_t **t, apr_pool_t *p, const char *path);
/* The next member: *name NULL at the end of the archive. APR_EGENERAL for a damaged or
 * truncated archive. */
apr_status_t jr_tar_next(jr_tar_t *t, const char **name, apr_off_t *size, apr_pool_t *scratch);
/* Copies the current member's bytes to a new file at path (mode 0600). */
apr_status_t jr_tar_extract(jr_tar_t *t, const char *path, apr_pool_t *scratch);
void jr_tar_close(jr_tar_t *t);

jr_op_fn jr_op_backups_create;   /* POST /api/backups: 201 {name, size, counts} */
jr_op_fn jr_op_backups_list;     /* GET /api/backups */
jr_op_fn jr_op_backups_download; /* GET /api/backups/~name/download */
jr_op_fn jr_op_backups_delete;   /* DELETE /api/backups/~name */
jr_op_fn jr_op_backups_restore;  /* POST /api/backups/~name/restore */
jr_op_fn jr_op_backups_upload_restore; /* POST /api/backups/restore (JR_BODY_UPLOAD) */

#endif
