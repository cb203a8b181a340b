/* Between the generic database layer (jr_db.c) and its backends (jr_db_sqlite.c,
 * jr_db_pgsql.c): the function table each backend fills, the per-connection statement cache,
 * and the helpers the backends report failures through. Only jr_db*.c include it, and the unit
 * tests, which look into the cache. */
#ifndef JR_DB_BACKEND_H
#define JR_DB_BACKEND_H

#include "jr_db_types.h"

struct jr_stmt_cache {
    const jr_db_backend_t *be;
    const apr_dbd_driver_t *driver;
    apr_dbd_t *handle;      /* the connection the statements were prepared on */
    void *native;           /* its sqlite3 * or PGconn * */
    apr_pool_t *pool;       /* the cache's own pool (a subpool), destroyed before the
                             * connection closes: the statements go with it */
    apr_pool_t *conn_pool;  /* where jr_db_use finds the cache (NULL: our own connection) */
    int session;            /* PostgreSQL: the server session the statements belong to */
    int plan_mode;          /* PostgreSQL: the session's plan_cache_mode as the module left
                             * it: 0 its default, 1 force_generic_plan, -1 not known (after a
                             * failure or a rollback, which may have undone a SET) */
    int discard;            /* the statements are dropped while their session goes on */
    int schema_have;        /* the schema version read when the cache was made, and */
    int schema_need;        /* the module's: while have < need, nothing is prepared */
    int checked;            /* every statement of the catalogue prepared once on the connection
                             * (prepare_catalogue): a backend with unprepare prepares each
                             * again when it is first run */
    struct jr_wqueue *queue; /* SQLite: the write queue of the connection's file, found on
                              * first use (the table of queues is shared by the threads) */
    void *stmts[JR_Q__COUNT]; /* by statement id; NULL when not prepared */
};

struct jr_db_backend {
    const char *driver; /* the apr_dbd driver's name */
    jr_dialect_e dialect;
    void (*global_init)(void);
    /* Settings of a new connection (SQLite: busy timeout, foreign keys, synchronous). */
    apr_status_t (*setup)(void *native);
    /* Prepares statement id on c's connection; *stmt is what the backend runs it by. On a
     * failure *err holds the engine's message (PostgreSQL: in c->pool; SQLite: the
     * connection's own, valid until the next call on the connection). */
    apr_status_t (*prepare)(jr_stmt_cache_t *c, jr_stmt_id_t id, void **stmt, const char **err);
    /* Drops one prepared statement, or NULL: SQLite's statements live in the httpd process
     * (about 2 MB for the catalogue, per connection), so the catalogue is checked whole when a
     * connection opens and only the statements a connection runs stay prepared on it.
     * PostgreSQL's live in the server session and stay prepared. */
    void (*unprepare)(void *stmt);
    /* Releases the prepared statements of c (its pool is going): SQLite finalizes them;
     * PostgreSQL deallocates them when c->discard says the session goes on. */
    void (*release)(jr_stmt_cache_t *c);
    apr_status_t (*select)(jr_db_t *db, apr_pool_t *p, jr_stmt_id_t id, void *stmt,
                           jr_rows_t **out, int nargs, const char **args);
    apr_status_t (*select_each)(jr_db_t *db, apr_pool_t *p, jr_stmt_id_t id, void *stmt,
                                jr_row_fn *fn, void *baton, int nargs, const char **args);
    apr_status_t (*exec)(jr_db_t *db, apr_pool_t *p, jr_stmt_id_t id, void *stmt, int *nrows,
                         int nargs, const char **args);
    /* A statement without parameters or rows: BEGIN, COMMIT, ROLLBACK, the ping's SELECT 1.
     * A failure is recorded (jr_db_failed, JR01006) unless quiet. */
    apr_status_t (*plain)(jr_db_t *db, const char *sql, int quiet);
    /* How a write transaction begins: SQLite takes the write lock up front (BEGIN IMMEDIATE), so
     * that a transaction never fails half way turning a read lock into a write lock. */
    const char *begin_sql;
    /* Keeps BEGIN (stmt NULL) or a write of jr_db_exec_later in db->held, to be sent with the
     * next statement or the COMMIT in one round trip; args are copied into p. NULL where a
     * statement costs no round trip (SQLite): BEGIN and the write run at once. */
    apr_status_t (*hold)(jr_db_t *db, apr_pool_t *p, jr_stmt_id_t id, void *stmt, int nargs,
                         const char **args);
    /* Around a write transaction, or a writing statement outside one: SQLite queues for its
     * database's write lock (jr_wqueue.h) before BEGIN IMMEDIATE and leaves the queue after
     * COMMIT or ROLLBACK. enter fails as a busy BEGIN does (recorded, JR_DB_E_BUSY); leave
     * does nothing when db holds nothing. NULL on PostgreSQL. */
    apr_status_t (*write_enter)(jr_db_t *db);
    void (*write_leave)(jr_db_t *db);
    /* The write generation (jr_db_generation). */
    apr_status_t (*generation)(jr_db_t *db, apr_pool_t *p, const jr_rows_t *carried,
                               apr_uint64_t *gen);
    /* 1 when reading the generation costs no statement (SQLite: a shared counter), so a
     * statement's rows may be kept under it (jr_db_generation_free). */
    int generation_free;
    /* The server session of the connection (PostgreSQL's backend PID; 0 when the engine has
     * none): a changed value means the prepared statements are gone. NULL on SQLite. */
    int (*session)(void *native);
    /* schema_migrations' highest version, 0 without the table; non-zero with *err on failure. */
    int (*schema_version)(void *native, apr_pool_t *p, int *version, const char **err);
    /* The class of db's last failure, from db->native_code or db->sqlstate. */
    jr_db_error_e (*classify)(const jr_db_t *db);
};

extern const jr_db_backend_t jr_db_backend_sqlite;
extern const jr_db_backend_t jr_db_backend_pgsql;

/* Records a failure of statement id (or of a plain statement when sql is set): the backend has
 * set db->native_code or db->sqlstate; this copies msg, classifies, and logs it (JR01005 or
 * JR01006) unless it is a unique violation, which the caller answers. */
void jr_db_failed(jr_db_t *db, jr_stmt_id_t id, const char *sql, const char *msg);

/* A value or a column name that could not be read: the select fails (JR01020). */
apr_status_t jr_db_read_failure(jr_db_t *db, jr_stmt_id_t id, const char *what);

/* SQL text for a driver: placeholders %s become ? (SQLite, numbered 0) or $1, $2, ...
 * (PostgreSQL, numbered 1), %% becomes %. Allocated from p. */
const char *jr_db_placeholders(apr_pool_t *p, const char *sql, int numbered);

#endif
