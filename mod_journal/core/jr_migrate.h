/* Numbered schema migrations, embedded at build time, applied idempotently. */
#ifndef JR_MIGRATE_H
#define JR_MIGRATE_H

#include "jr_db.h"

typedef struct {
    int version;
    const char *name;
    const char *sql;
} jr_migration_t;

extern const jr_migration_t jr_migrations_sqlite[];
extern const jr_migration_t jr_migrations_pgsql[];

/* Highest version this build knows for a dialect. */
int jr_migrate_latest(jr_dialect_e dialect);

/* Applies every migration not yet recorded in schema_migrations, each in its own transaction
 * together with its record. Safe to run concurrently from several processes or nodes.
 * *applied receives how many ran, *version the schema version afterwards. */
apr_status_t jr_migrate(jr_db_t *db, apr_pool_t *p, int *applied, int *version, const char **err);

/* The recorded schema version (0 when none). */
apr_status_t jr_migrate_current(jr_db_t *db, apr_pool_t *p, int *version, const char **err);

#endif
