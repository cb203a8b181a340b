/* Numbered schema migrations (jr_migrations.h), applied idempotently. */
#ifndef JR_MIGRATE_H
#define JR_MIGRATE_H

#include "jr_db.h"
#include "jr_migrations.h"

/* Applies every migration not yet recorded in schema_migrations, each in its own transaction
 * together with its record. Safe to run concurrently from several processes or nodes.
 * *applied receives how many ran, *version the schema version afterwards. */
apr_status_t jr_migrate(jr_db_t *db, apr_pool_t *p, int *applied, int *version, const char **err);

/* The recorded schema version (0 when none). */
apr_status_t jr_migrate_current(jr_db_t *db, apr_pool_t *p, int *version, const char **err);

#endif
