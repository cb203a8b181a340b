/* The data of the database layer: a connection as the code holds it (jr_db_t), rows, failure
 * classes. What jr_db.h's API and the backends' function table (jr_db_backend.h) are both
 * written in, so that neither needs the other's header. */
#ifndef JR_DB_TYPES_H
#define JR_DB_TYPES_H

#include <apr_dbd.h>
#include <apr_pools.h>

#include "jr_stmts.h"

/* The module's own prepared statements on one connection (see jr_db_attach). */
typedef struct jr_stmt_cache jr_stmt_cache_t;
/* One database engine's implementation (jr_db_backend.h). */
typedef struct jr_db_backend jr_db_backend_t;

/* What a failed statement was, from the engine's own code (SQLite's extended result code,
 * PostgreSQL's SQLSTATE), never from its message. */
typedef enum {
    JR_DB_OK = 0,
    JR_DB_E_OTHER,       /* anything else: a bug, a broken schema, the disk */
    JR_DB_E_UNIQUE,      /* a unique or primary key violation */
    JR_DB_E_FOREIGN_KEY, /* a reference to a row that does not exist, or a row still referenced */
    JR_DB_E_CONSTRAINT,  /* another constraint (NOT NULL, CHECK) */
    JR_DB_E_BUSY,        /* a lock, a serialization failure, a deadlock, a timeout: try again */
    JR_DB_E_GONE         /* the connection was lost */
} jr_db_error_e;

/* Writes a PostgreSQL connection holds back at most (jr_db_exec_later): one more sends them. */
#define JR_DB_HELD_MAX 8

struct jr_waker;
struct jr_genshare;

typedef struct jr_db {
    const jr_db_backend_t *be;
    const apr_dbd_driver_t *driver;
    apr_dbd_t *handle;
    void *native; /* sqlite3 * or PGconn *, from apr_dbd_native_handle */
    jr_stmt_cache_t *cache;
    apr_pool_t *pool;
    jr_dialect_e dialect;
    int in_tx;
    int tx_lazy; /* jr_db_begin_lazy: the first writing statement begins the transaction */
    void *wq;    /* SQLite: the write queue this connection holds (jr_wqueue.h), NULL when none */
    /* SQLite: while the queue is held, native and cache are its process's writing connection
     * (jr_db_sqlite.c); the request's own are kept here and put back when it is left. */
    void *own_native;
    jr_stmt_cache_t *own_cache;
    /* What must follow this transaction's COMMIT on this connection (jr_db_after_commit). */
    void (*after_commit)(struct jr_db *db, unsigned marks);
    unsigned commit_marks;
    /* The process's sender of the workers' wake-ups for this database (jr_jobs.h, jr_waker_t),
     * set by whoever made the connection; NULL: the committing thread sends them. */
    struct jr_waker *waker;
    /* PostgreSQL: the process's shared read of the write generation for this database
     * (jr_genshare.h), set by whoever made the connection; NULL: each read is its own. */
    struct jr_genshare *genshare;
    /* What must precede this transaction's COMMIT (jr_db_before_commit), and its baton. */
    apr_status_t (*before_commit)(struct jr_db *db, void *baton);
    void *before_commit_baton;
    /* PostgreSQL: what waits to travel with the next statement, in one round trip (libpq's
     * pipeline mode): this transaction's BEGIN until its first statement, and the writes of
     * jr_db_exec_later until the next statement or the COMMIT. Their arguments are copies. */
    int begin_held;
    int nheld;
    struct jr_db_held {
        jr_stmt_id_t id;
        void *stmt;
        int nargs;
        const char **args;
    } held[JR_DB_HELD_MAX];
    /* The last failure: its class, the engine's code, and its message for logs (never data
     * of a request: the messages name statements, tables and constraints). */
    jr_db_error_e error;
    int native_code;   /* SQLite: the extended result code */
    char sqlstate[6];  /* PostgreSQL: the SQLSTATE, "" otherwise */
    const char *last_error;
    char errbuf[240];
} jr_db_t;

/* Rows of a select: every value is text; NULL stands for SQL NULL. */
typedef struct {
    int ncols;
    int nrows;
    const char **names;
    const char ***rows;
} jr_rows_t;

/* A row of jr_db_select_each: row[c] is column c as text (NULL for SQL NULL); shape carries the
 * column names. Non-zero stops the rows. */
typedef int jr_row_fn(void *baton, const jr_rows_t *shape, const char *const *row);

#endif
