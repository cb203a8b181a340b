/* The numbered migrations this build carries (sql/sqlite and sql/pgsql, embedded into
 * jr_migrations_data.c by scripts/embed-migrations.sh) and the schema version they lead to.
 * Applying them to a database: jr_migrate.h. */
#ifndef JR_MIGRATIONS_H
#define JR_MIGRATIONS_H

#include "jr_stmts.h"

typedef struct {
    int version;
    const char *name;
    const char *sql;
} jr_migration_t;

/* In ascending order, ended by a row without a name. */
extern const jr_migration_t jr_migrations_sqlite[];
extern const jr_migration_t jr_migrations_pgsql[];

/* Highest version this build knows for a dialect: the schema the module's statements need. */
int jr_migrate_latest(jr_dialect_e dialect);

#endif
