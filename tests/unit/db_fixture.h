/* The fixture of the database suites (test_db*.c, test_search.c): each test gets a fresh
 * temporary SQLite file (dbt_path) in the operations fixture's directory, a pool, and the log
 * captured; dbt_db is opened by the test (dbt_open, or dbt_open_ready: migrated, prepared). */
#ifndef DB_FIXTURE_H
#define DB_FIXTURE_H

#include <apr_pools.h>
#include <sqlite3.h>

#include "jr_db.h"
#include "jr_log.h"
#include "unit.h"

extern apr_pool_t *dbt_pool;
extern jr_db_t *dbt_db;
extern char dbt_path[64]; /* the current test database, "" when none */
extern char dbt_last_log[1024];
extern int dbt_log_count; /* warnings and errors logged */

void dbt_capture(void *baton, jr_log_level_e level, apr_status_t rv, const char *file, int line,
                 const char *msg);
void dbt_setup(void);
void dbt_teardown(void);
void dbt_open(void);
void dbt_open_ready(void);
sqlite3 *dbt_native(void);
/* The first column of the first row of an ad-hoc query, as text (NULL for SQL NULL). */
const char *dbt_sql_text(const char *sql);
long long dbt_sql_int(const char *sql);
long long dbt_insert_branch(const char *name);
int dbt_count_migrations(void);
/* Every branch the scope allows (a JSON array of ids, or NULL for all). */
jr_rows_t *dbt_list_branches(const char *scope);
/* A test case with its own directory of test databases and the given checked fixture. */
TCase *dbt_tcase(Suite *s, const char *name, SFun setup_fn, SFun teardown_fn);

/* The test cases of test_db_conn.c and test_db_reads.c, added to suite_db's. */
void db_conn_tests(TCase *tc);
void db_reads_tests(Suite *s);

#endif
