/* Database access over apr_dbd: prepared statements by label, materialised results,
 * explicit transactions. The same code runs on SQLite and PostgreSQL. */
#ifndef JR_DB_H
#define JR_DB_H

#include <apr_dbd.h>
#include <apr_hash.h>
#include <apr_pools.h>

typedef enum {
    JR_DB_SQLITE = 1,
    JR_DB_PGSQL = 2
} jr_dialect_e;

/* The module's own prepared statements on one connection (see jr_db_attach). */
typedef struct jr_stmt_cache jr_stmt_cache_t;

typedef struct jr_db {
    const apr_dbd_driver_t *driver;
    apr_dbd_t *handle;
    jr_stmt_cache_t *cache;
    apr_hash_t *prepared; /* the cache's table: label -> sqlite3_stmt* or apr_dbd_prepared_t* */
    apr_pool_t *pool;
    jr_dialect_e dialect;
    int in_tx;
    const char *last_error; /* message of the last failed statement, for logs only */
} jr_db_t;

/* Rows of a select: every value is text; NULL stands for SQL NULL. */
typedef struct {
    int ncols;
    int nrows;
    const char **names;
    const char ***rows;
} jr_rows_t;

/* Builds an argument list for jr_db_select/jr_db_exec: JR_ARGS("a", NULL, b). */
#define JR_ARGS(...) \
    (int)(sizeof((const char *[]){__VA_ARGS__}) / sizeof(const char *)), (const char *[]){__VA_ARGS__}
#define JR_NOARGS 0, NULL

/* Process-wide SQLite setup, before any connection opens: multi-thread mode (no mutex per
 * connection call; each pooled connection serves one thread at a time). */
void jr_db_global_init(void);

/* Dialect of a driver name ("sqlite3", "pgsql"); 0 when unsupported. */
jr_dialect_e jr_db_dialect_of(const char *driver_name);

/* mod_dbd's connections carry a table of prepared statements (ap_dbd_t.prepared) that every
 * module using mod_dbd shares (mod_authn_dbd, mod_session_dbd, DBDPrepareSQL). The module keeps
 * its statements apart, in a cache of its own attached to the connection, and only ever
 * finalizes what it prepared itself.
 *
 * jr_db_attach prepares every statement of the catalog on a new pooled connection, into a
 * subpool of stmt_pool, which must be destroyed before the connection closes (the pool mod_dbd
 * passes to its post_connect hook); conn_pool is the connection's own pool (ap_dbd_t.pool),
 * where jr_db_use finds the cache. */
apr_status_t jr_db_attach(const apr_dbd_driver_t *driver, apr_dbd_t *handle, apr_pool_t *conn_pool,
                          apr_pool_t *stmt_pool);

/* Wraps a pooled connection for one user of it (a request), allocating from p. NULL (logged)
 * when the module's statements are not available on it. Prepares them when the connection has
 * none yet (their preparation failed when it opened), and, on PostgreSQL, again when libpq
 * reset the connection after a failure (a new server session has no prepared statements).
 * The wrapper rolls back an open transaction when p is cleared, so a failed request never
 * returns a connection to the pool mid-transaction. */
jr_db_t *jr_db_use(apr_pool_t *p, const apr_dbd_driver_t *driver, apr_dbd_t *handle,
                   apr_pool_t *conn_pool);

/* SQLite: connections that SQLite opens to this database file (mod_dbd's, the CLI's) get the
 * foreign-key setting when they open, before anyone prepares a statement on them. Turning it on
 * later expires every statement prepared earlier on the connection, and the apr_dbd sqlite3
 * driver's statements (other mod_dbd users') cannot prepare themselves again. The setting lasts
 * until pconf is cleared. */
apr_status_t jr_db_sqlite_preconfigure(apr_pool_t *pconf, const char *path);

/* Per-connection settings (SQLite: busy timeout, foreign keys, synchronous). */
apr_status_t jr_db_setup_connection(const apr_dbd_driver_t *driver, apr_dbd_t *handle);

/* Opens a connection of our own (CLI, worker, tests) and applies the connection settings.
 * Statements are not prepared: call jr_db_prepare_all after migrating. */
apr_status_t jr_db_open(jr_db_t **pdb, apr_pool_t *p, const char *driver, const char *params,
                        const char **err);
apr_status_t jr_db_prepare_all(jr_db_t *db);
void jr_db_close(jr_db_t *db);
/* A connection of our own (jr_db_open), on PostgreSQL: when libpq reset it after a failure (a
 * new server session), prepares the statements again. No-op otherwise. */
apr_status_t jr_db_revalidate(jr_db_t *db);

/* A select fails (logged, APR_EGENERAL) when a value could not be read (SQLite ran out of memory
 * converting it to text): such a NULL is never mistaken for SQL NULL. */
apr_status_t jr_db_select(jr_db_t *db, apr_pool_t *p, const char *label, jr_rows_t **out,
                          int nargs, const char **args);
apr_status_t jr_db_exec(jr_db_t *db, apr_pool_t *p, const char *label, int *nrows, int nargs,
                        const char **args);

/* Calls fn for each row of a select without materialising the result: row[c] is column c
 * as text (NULL for SQL NULL), valid only during the call (on SQLite it points into the
 * statement's own buffers). shape carries the column names (nrows 0). A non-zero return of
 * fn stops the loop. */
typedef int jr_row_fn(void *baton, const jr_rows_t *shape, const char *const *row);
apr_status_t jr_db_select_each(jr_db_t *db, apr_pool_t *p, const char *label, jr_row_fn *fn,
                               void *baton, int nargs, const char **args);

/* Test seam, set only by unit tests: when not NULL, column text is fetched through it instead of
 * sqlite3_column_text, so a test can make the read of a value fail (see jr_db.c, sq_row). */
struct sqlite3_stmt;
typedef const unsigned char *jr_db_column_text_fn(struct sqlite3_stmt *st, int col);
extern jr_db_column_text_fn *jr_db_test_column_text;

/* Write transactions: BEGIN IMMEDIATE on SQLite so the write lock is taken up front. */
apr_status_t jr_db_begin(jr_db_t *db);
apr_status_t jr_db_commit(jr_db_t *db);
void jr_db_rollback(jr_db_t *db);

/* Runs a plain statement without parameters (health checks). */
apr_status_t jr_db_ping(jr_db_t *db);

/* 1 when the last failure was a unique-constraint violation. */
int jr_db_unique_violation(const jr_db_t *db);

const char *jr_rows_get(const jr_rows_t *r, int row, const char *col);

/* The index of a column (or -1): for loops over many rows, look the index up once. */
int jr_rows_col(const jr_rows_t *r, const char *col);
#define JR_CELL(r, row, idx) ((idx) >= 0 ? (r)->rows[(row)][(idx)] : NULL)
long long jr_rows_int(const jr_rows_t *r, int row, const char *col, long long dflt);

#endif
