/* Database access on a pooled apr_dbd connection: the catalogue's statements by id (jr_stmts.h),
 * results as text, explicit transactions. Two backends behind one function table
 * (jr_db_sqlite.c, jr_db_pgsql.c) run the statements natively on the connection's own handle;
 * the code above them is the same for both. */
#ifndef JR_DB_H
#define JR_DB_H

#include <apr_dbd.h>
#include <apr_pools.h>

#include "jr_db_types.h"
#include "jr_stmts.h"

/* Builds an argument list for jr_db_select/jr_db_exec: JR_ARGS("a", NULL, b). */
#define JR_ARGS(...) \
    (int)(sizeof((const char *[]){__VA_ARGS__}) / sizeof(const char *)), (const char *[]){__VA_ARGS__}
#define JR_NOARGS 0, NULL

/* Process-wide setup, before any connection opens and before threads start: the statement
 * catalogue (jr_stmts_init) and SQLite's multi-thread mode (no mutex per connection call; each
 * pooled connection serves one thread at a time). */
void jr_db_global_init(void);

/* Dialect of a driver name ("sqlite3", "pgsql"); 0 when unsupported. */
jr_dialect_e jr_db_dialect_of(const char *driver_name);

/* mod_dbd's connections carry a table of prepared statements (ap_dbd_t.prepared) that every
 * module using mod_dbd shares (mod_authn_dbd, mod_session_dbd, DBDPrepareSQL). The module keeps
 * its statements apart, in a cache of its own attached to the connection, and only ever
 * finalizes what it prepared itself.
 *
 * jr_db_attach reads the connection's schema version, then prepares every statement of the
 * catalogue on a new pooled connection, into a subpool of stmt_pool, which must be destroyed
 * before the connection closes (the pool mod_dbd passes to its post_connect hook); conn_pool is
 * the connection's own pool (ap_dbd_t.pool), where jr_db_use finds the cache. A schema older
 * than the module's (JournalMigrate Off, no migration run) prepares nothing: the connection
 * gets a cache that says so (JR01030), and serves nothing (jr_db_refusal). */
apr_status_t jr_db_attach(const apr_dbd_driver_t *driver, apr_dbd_t *handle, apr_pool_t *conn_pool,
                          apr_pool_t *stmt_pool);

/* Wraps a pooled connection for one user of it (a request), allocating from p. NULL (logged)
 * when the module's statements are not available on it. Prepares them when the connection has
 * none yet (their preparation failed when it opened, JR01021), when its schema was behind and
 * has been migrated since, and on PostgreSQL again when libpq reset the connection after a
 * failure (a new server session has no prepared statements, JR01008). The wrapper rolls back
 * an open transaction when p is cleared, so a failed request never returns a connection to
 * the pool mid-transaction. */
jr_db_t *jr_db_use(apr_pool_t *p, const apr_dbd_driver_t *driver, apr_dbd_t *handle,
                   apr_pool_t *conn_pool);

/* Why requests cannot be served on db (NULL: they can): "database unavailable" without a
 * connection, the schema message when the schema is older than the module. */
const char *jr_db_refusal(const jr_db_t *db);

/* 1 when db's schema is older than the module's (*have and *need then hold both versions). */
int jr_db_schema_behind(const jr_db_t *db, int *have, int *need);

/* SQLite: connections that SQLite opens to this database file (mod_dbd's, the CLI's) get the
 * foreign-key setting when they open, before anyone prepares a statement on them. Turning it on
 * later expires every statement prepared earlier on the connection, and the apr_dbd sqlite3
 * driver's statements (other mod_dbd users') cannot prepare themselves again. The setting lasts
 * until pconf is cleared. */
apr_status_t jr_db_sqlite_preconfigure(apr_pool_t *pconf, const char *path);
/* The page cache of each SQLite connection set up from now on in this process
 * (JournalSQLiteCacheSize); 0 leaves SQLite's default. Called before any child starts. */
void jr_db_sqlite_cache_size(long long bytes);
/* How long a writer waits for SQLite's write queue, and SQLite's busy timeout, in milliseconds
 * (JournalSQLiteBusyTimeout; 5000 unless set). Called before any child starts. */
void jr_db_sqlite_busy_timeout(int ms);

/* SQLite, in a child of httpd (once, before its threads write): the write transactions of the
 * process run on one connection of its own per database file, opened on first use and closed
 * with pchild (jr_db_sqlite.c). */
void jr_db_sqlite_writers(apr_pool_t *pchild);

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
 * converting it to text): such a NULL is never mistaken for SQL NULL. nargs must be the
 * statement's number of placeholders. */
apr_status_t jr_db_select(jr_db_t *db, apr_pool_t *p, jr_stmt_id_t id, jr_rows_t **out,
                          int nargs, const char **args);
apr_status_t jr_db_exec(jr_db_t *db, apr_pool_t *p, jr_stmt_id_t id, int *nrows, int nargs,
                        const char **args);
/* A write whose outcome only the transaction's COMMIT needs (an audit row, the events): inside
 * a transaction on PostgreSQL it is held and sent with the next statement or the COMMIT, in one
 * round trip, and its failure fails that statement or the COMMIT (so the transaction is rolled
 * back). It runs at once outside a transaction and on SQLite. */
apr_status_t jr_db_exec_later(jr_db_t *db, apr_pool_t *p, jr_stmt_id_t id, int nargs,
                              const char **args);

/* Calls fn for each row of a select without holding the result in memory: row[c] is column c
 * as text (NULL for SQL NULL), valid only during the call (it points into SQLite's statement
 * or into PostgreSQL's one-row result: libpq's single-row mode). shape carries the column names
 * (nrows 0). A non-zero return of fn stops the calls (on PostgreSQL the rest of the result is
 * read and dropped, so the connection is left idle). A failure after some rows (a connection
 * lost mid-result) is a failure: the caller must not take what it saw for the whole result.
 * fn: jr_row_fn (jr_db_types.h). */
apr_status_t jr_db_select_each(jr_db_t *db, apr_pool_t *p, jr_stmt_id_t id, jr_row_fn *fn,
                               void *baton, int nargs, const char **args);

/* Test seam, set only by unit tests: when not NULL, column text is fetched through it instead of
 * sqlite3_column_text, so a test can make the read of a value fail (see jr_db_sqlite.c). */
struct sqlite3_stmt;
typedef const unsigned char *jr_db_column_text_fn(struct sqlite3_stmt *st, int col);
extern jr_db_column_text_fn *jr_db_test_column_text;

/* Write transactions: BEGIN IMMEDIATE on SQLite so the write lock is taken up front. */
apr_status_t jr_db_begin(jr_db_t *db);
/* A transaction that begins at the first statement that writes (jr_stmt_writes): reads before
 * it, and work that needs no database (a password hash, storing an upload), hold no write lock.
 * jr_db_commit and jr_db_rollback end it whether or not it began. */
void jr_db_begin_lazy(jr_db_t *db);
apr_status_t jr_db_commit(jr_db_t *db);
void jr_db_rollback(jr_db_t *db);

/* Work that must follow the transaction's COMMIT, not precede it (waking the workers: what a
 * transaction does before its COMMIT can hold its commit back, jr_jobs.h). fn runs once, on
 * this connection, right after the COMMIT succeeds, with the OR of the marks set during the
 * transaction; a rollback drops them. Outside a transaction (the write has committed) fn runs
 * at once. One fn per connection: the last one given is called. */
typedef void jr_db_after_commit_fn(jr_db_t *db, unsigned marks);
void jr_db_after_commit(jr_db_t *db, jr_db_after_commit_fn *fn, unsigned mark);

/* Work that must run last inside the transaction, right before its COMMIT (rows a transaction
 * gathers as it goes and writes with one statement: jr_event). fn runs once, on this
 * connection, with baton; its failure fails the commit (rolled back). A rollback drops it.
 * One fn per transaction. */
typedef apr_status_t jr_db_before_commit_fn(jr_db_t *db, void *baton);
void jr_db_before_commit(jr_db_t *db, jr_db_before_commit_fn *fn, void *baton);

/* The baton fn was given in this transaction, NULL when fn is not set. */
void *jr_db_before_commit_baton(const jr_db_t *db, jr_db_before_commit_fn *fn);

/* Checks the connection (apr_dbd_check_conn: libpq resets a broken one) and runs a plain
 * statement without parameters (health checks). */
apr_status_t jr_db_ping(jr_db_t *db);

/* The database's write generation: a number that changes whenever anything was written, in
 * any process or, on PostgreSQL, by any client of the server (jr_rcache.h relies on it). Read
 * it before the data it vouches for. SQLite: the counter the write queue raises
 * (jr_wqueue.h); PostgreSQL: the snapshot's xmax while no transaction with an id is running.
 * APR_EAGAIN when it cannot be known now (PostgreSQL: a write transaction is running),
 * APR_ENOTIMPL for a database without a file; another error when it could not be read.
 * carried: a row read earlier in the request that may hold the generation already (PostgreSQL:
 * the key's lookup reads the snapshot with JR_DB_SNAPSHOT_COLUMNS), or NULL. Without one, on
 * PostgreSQL with db->genshare, the threads that ask at once share one read (jr_genshare.h). */
apr_status_t jr_db_generation(jr_db_t *db, apr_pool_t *p, const jr_rows_t *carried,
                              apr_uint64_t *gen);

/* 1 when db's generation is read without a statement (SQLite, a counter). */
int jr_db_generation_free(const jr_db_t *db);

/* 1 when db's generation is read by a statement shared by the requests of the process that ask
 * at once (PostgreSQL in httpd's children: db->genshare). Without either, each read is a
 * round trip of its own (PostgreSQL outside httpd, without a carried row). */
int jr_db_generation_shared(const jr_db_t *db);

/* The class of the last failure on db (JR_DB_OK after a success). */
jr_db_error_e jr_db_error(const jr_db_t *db);

/* 1 when the last failure was a unique-constraint violation. */
int jr_db_unique_violation(const jr_db_t *db);

const char *jr_rows_get(const jr_rows_t *r, int row, const char *col);

/* The index of a column (or -1): for loops over many rows, look the index up once. */
int jr_rows_col(const jr_rows_t *r, const char *col);
#define JR_CELL(r, row, idx) ((idx) >= 0 ? (r)->rows[(row)][(idx)] : NULL)
long long jr_rows_int(const jr_rows_t *r, int row, const char *col, long long dflt);

#endif
