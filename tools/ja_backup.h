/* journal-admin backup and restore: the module's own backup code (jr_backup.h) on the CLI's
 * connection, for cron and for moving a journal between SQLite and PostgreSQL. */
#ifndef JA_BACKUP_H
#define JA_BACKUP_H

#include "jr_ctx.h"

/* Writes a backup to ctx->cfg->data_dir/backups and prints its name. 0, or 1 after a message. */
int ja_backup(jr_ctx_t *ctx);
/* Restores the archive at path. 0, or 1 after a message (nothing changed then). */
int ja_restore(jr_ctx_t *ctx, const char *path);

#endif
