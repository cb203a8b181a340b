/* See jr_migrations.h. */
#include "jr_migrations.h"

int jr_migrate_latest(jr_dialect_e dialect)
{
    const jr_migration_t *m = dialect == JR_DB_PGSQL ? jr_migrations_pgsql : jr_migrations_sqlite;
    int v = 0;
    for (; m->name; ++m) {
        v = m->version > v ? m->version : v;
    }
    return v;
}
