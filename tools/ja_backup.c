/* journal-admin backup and restore. The files go under the data directory as the module would
 * leave them: run as root, the CLI first becomes the directory's owner (the server's user). */
#include <stdio.h>

#include <apr_strings.h>

#include "ja_backup.h"
#include "ja_conf.h"
#include "jr_backup.h"

/* The owner of data_dir/backups (or of data_dir while it does not exist) is the identity
 * of the module's files; ja_become_db_owner applies that rule to any path. */
static int become_owner(jr_ctx_t *ctx)
{
    const char *err = NULL;
    if (ja_become_db_owner(ctx->pool, "sqlite3",
                           apr_pstrcat(ctx->pool, ctx->cfg->data_dir, "/" JR_BACKUP_DIR, NULL),
                           &err) != 0) {
        fprintf(stderr, "journal-admin: %s\n", err);
        return 1;
    }
    return 0;
}

int ja_backup(jr_ctx_t *ctx)
{
    jr_backup_info_t b;
    const char *err = NULL;
    if (become_owner(ctx) != 0) {
        return 1;
    }
    if (jr_backup_create(ctx, &b, &err) != APR_SUCCESS) {
        fprintf(stderr, "journal-admin: backup failed: %s\n", err ? err : "unknown error");
        return 1;
    }
    printf("backup %s/" JR_BACKUP_DIR "/%s (%" APR_OFF_T_FMT " bytes)\n", ctx->cfg->data_dir,
           b.name, b.size);
    return 0;
}

int ja_restore(jr_ctx_t *ctx, const char *path)
{
    jr_backup_info_t b;
    const char *err = NULL;
    int status = 0;
    if (become_owner(ctx) != 0) {
        return 1;
    }
    if (jr_backup_restore(ctx, path, &b, &status, &err) != APR_SUCCESS) {
        fprintf(stderr, "journal-admin: restore refused (%d): %s\n", status,
                err ? err : "unknown error");
        return 1;
    }
    printf("restored %s; every API key was deleted and every session ended\n", path);
    return 0;
}
