/* The SQLite backend: sqlite3_prepare_v2 and sqlite3_step on the pooled connection's own
 * handle (apr_dbd_native_handle), for the reasons in docs/architecture.md §7.3. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <apr_strings.h>
#include <apr_tables.h>
#include <sqlite3.h>

#include "jr_db.h"
#include "jr_db_backend.h"
#include "jr_log.h"
#include "jr_wqueue.h"

static void sq_global_init(void)
{
    /* Each fails harmlessly (SQLITE_MISUSE) when SQLite was initialised already. Without
     * memory statistics, which nothing here reads, SQLite's every allocation no longer takes
     * one mutex shared by all threads: writers holding the write queue waited for it behind
     * readers (docs/architecture.md §7.25). */
    sqlite3_config(SQLITE_CONFIG_MULTITHREAD);
    sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

/* Foreign keys on, without expiring the statements already prepared on the connection when they
 * are on already (PRAGMA foreign_keys expires them whatever the value was). */
static int sq_foreign_keys(sqlite3 *conn)
{
    int on = 0;
    sqlite3_db_config(conn, SQLITE_DBCONFIG_ENABLE_FKEY, -1, &on);
    if (!on) {
        if (sqlite3_next_stmt(conn, NULL)) {
            JR_LOG(JR01022, 0,
                   "SQLite connection to %s opened without foreign keys after statements "
                   "were prepared on it; turning them on now makes the statements of other "
                   "mod_dbd users fail on this connection",
                   sqlite3_db_filename(conn, "main"));
        }
        sqlite3_db_config(conn, SQLITE_DBCONFIG_ENABLE_FKEY, 1, &on);
    }
    return on;
}

/* How long a writer waits for the write queue, and SQLite's busy timeout
 * (JournalSQLiteBusyTimeout; this default in journal-admin and journal-worker). Set by httpd's
 * parent while it reads its configuration, before any child starts. */
#define JR_SQLITE_BUSY_DEFAULT_MS 5000
static int sqlite_busy_ms = JR_SQLITE_BUSY_DEFAULT_MS;

void jr_db_sqlite_busy_timeout(int ms)
{
    sqlite_busy_ms = ms > 0 ? ms : JR_SQLITE_BUSY_DEFAULT_MS;
}

/* KiB of page cache per connection (JournalSQLiteCacheSize); 0: SQLite's default (2000 KiB),
 * for journal-admin and journal-worker. Set by httpd's parent while it reads its
 * configuration, before any child starts. */
static long long sqlite_cache_kib;

void jr_db_sqlite_cache_size(long long bytes)
{
    sqlite_cache_kib = bytes / 1024;
}

/* ---- WAL checkpoints, outside the write queue ------------------------------------------------ */

/* SQLite's own threshold (wal_autocheckpoint's default): a checkpoint is due once the WAL holds
 * this many frames after a commit. */
#define JR_SQLITE_CHECKPOINT_FRAMES 1000

/* The connection whose last commit left a checkpoint due, in the thread that committed. */
static _Thread_local sqlite3 *checkpoint_due;

/* Inside the queue: how long a checkpoint waits for another connection's to end, and how long
 * a restart waits at each of its locks for the readers of older frames (SQLite's busy timeout,
 * which starts over at each lock: it takes one per reader slot). */
#define JR_SQLITE_CHECKPOINTER_WAIT_MS 100
#define JR_SQLITE_READERS_WAIT_MS 20

/* Outside the queue, a passive checkpoint: it copies what no reader still needs and waits for
 * nobody. Busy when another connection checkpoints already (SQLite never waits for that lock),
 * which is enough there. Inside it, a restart: it waits for the readers of older frames to end
 * (readers that begin meanwhile need no frame once all are copied), copies every frame, and
 * the next writer starts the WAL over; a passive one lets it start over only when no reader
 * happens to be at work, which under a steady load is never. A restart that cannot wait long
 * enough copies what it can, as a passive one. */
static void sq_checkpoint(sqlite3 *conn, const char *schema, int inside)
{
    int rc, frames = -1, waited = 0;
    if (inside) {
        sqlite3_busy_timeout(conn, JR_SQLITE_READERS_WAIT_MS);
    }
    /* frames stays -1 when the checkpoint did not run: another one holds the lock. */
    while ((rc = sqlite3_wal_checkpoint_v2(
                conn, schema, inside ? SQLITE_CHECKPOINT_RESTART : SQLITE_CHECKPOINT_PASSIVE,
                &frames, NULL)) == SQLITE_BUSY &&
           frames < 0 && inside && waited++ < JR_SQLITE_CHECKPOINTER_WAIT_MS) {
        sqlite3_sleep(1);
    }
    if (inside) {
        sqlite3_busy_timeout(conn, sqlite_busy_ms);
    }
    if (rc != SQLITE_OK && rc != SQLITE_BUSY && rc != SQLITE_LOCKED) {
        JR_LOG(JR12120, 0, "WAL checkpoint of %s failed: %s", sqlite3_db_filename(conn, schema),
               sqlite3_errmsg(conn));
    }
}

/* Replaces SQLite's automatic checkpoint, which runs inside COMMIT: there every writer of
 * every process waits in the write queue while one copies the WAL into the database and
 * syncs both files (docs/architecture.md §7.20). A commit past the threshold only notes that
 * a checkpoint is due, and sq_write_leave runs it once the queue is free.
 *
 * But the WAL starts over from its beginning only when a writer begins with every frame
 * copied, and a checkpoint outside the queue is always overtaken by the next writer's frames:
 * under a steady stream of writes the WAL would grow without end (measured: 1.2 GB in 8 s).
 * So a commit that finds it at twice the threshold checkpoints inside the queue: the
 * checkpoints outside have copied all but the last few transactions' frames, and with no
 * writer behind it this one copies the rest.
 *
 * A passive one there let the WAL start over only in a moment without readers: under a
 * steady mixed load there was none, every commit checkpointed inside the queue (syncing both
 * files while every writer waited), and the WAL still grew without end (136 MB in the 10 s of
 * test_memory.py). A restart waits for the readers of older frames instead, briefly (about a
 * list's time under load); one that could not wait long enough is tried again once the WAL
 * has grown by a quarter of the threshold (docs/architecture.md §7.20). */
static int sq_wal_hook(void *arg, sqlite3 *conn, const char *schema, int frames)
{
    /* A checkpoint outside the queue per quarter of the threshold, not per commit: each one
     * syncs both files, however few frames it copies. */
    static int last_quarter;
    /* The WAL's frames at the last checkpoint inside the queue; 0 since it started over. */
    static int inside_at;
    int quarter = frames / (JR_SQLITE_CHECKPOINT_FRAMES / 4), at;
    (void)arg;
    if (frames < 2 * JR_SQLITE_CHECKPOINT_FRAMES) {
        __atomic_store_n(&inside_at, 0, __ATOMIC_RELAXED);
    } else if (!(at = __atomic_load_n(&inside_at, __ATOMIC_RELAXED)) ||
               frames >= at + JR_SQLITE_CHECKPOINT_FRAMES / 4) {
        __atomic_store_n(&inside_at, frames, __ATOMIC_RELAXED);
        sq_checkpoint(conn, schema, 1);
        return SQLITE_OK;
    }
    if (frames >= JR_SQLITE_CHECKPOINT_FRAMES && strcmp(schema, "main") == 0 &&
        __atomic_exchange_n(&last_quarter, quarter, __ATOMIC_RELAXED) != quarter) {
        checkpoint_due = conn;
    }
    return SQLITE_OK;
}

/* ---- the entries' search index, in batches (migration 0018) ---------------------------------- */

/* A process indexes its backlog once its writers have added this many entries; a pass takes at
 * most JR_SQLITE_INDEX_PASS of them, so a backlog left by a bulk load is worked through in
 * short transactions that other writers can come between. */
#define JR_SQLITE_INDEX_BATCH 64
#define JR_SQLITE_INDEX_PASS "1000"

/* Entries this thread's transaction added (the update hook runs in the writing thread). */
static _Thread_local apr_uint32_t entries_added;

static void sq_update_hook(void *arg, int op, const char *schema, const char *table,
                           sqlite3_int64 rowid)
{
    (void)arg;
    (void)rowid;
    if (op == SQLITE_INSERT && strcmp(table, "entries") == 0 && strcmp(schema, "main") == 0) {
        ++entries_added;
    }
}

/* One statement adds the backlog's entries to the index, however many, as one segment: per
 * entry about a tenth of what an INSERT of its own costs (docs/architecture.md §7.25). It takes
 * the ids of the next JR_SQLITE_INDEX_PASS above the bound (ids only grow, and every writer
 * waits while this runs: no id under the new bound can appear later), moves the bound in the
 * same transaction, and says whether entries above it are left. Fixed text, no value from
 * outside. */
static const char index_backlog_sql[] =
    "BEGIN IMMEDIATE;"
    "INSERT INTO entries_fts (rowid, description) SELECT id, description FROM entries"
    " WHERE id > (SELECT upto FROM entries_fts_state)"
    " AND id <= (SELECT upto + " JR_SQLITE_INDEX_PASS " FROM entries_fts_state);"
    "UPDATE entries_fts_state SET upto = max(upto, min(upto + " JR_SQLITE_INDEX_PASS ","
    " COALESCE((SELECT MAX(id) FROM entries), 0)));"
    "SELECT COALESCE((SELECT MAX(id) FROM entries), 0) > upto FROM entries_fts_state;"
    "COMMIT;";

static int sq_int_of(void *data, int ncols, char **vals, char **names)
{
    (void)names;
    *(int *)data = ncols > 0 && vals[0] ? atoi(vals[0]) : 0;
    return 0;
}

static apr_status_t sq_setup(void *native)
{
    sqlite3 *conn = native;
    char *msg = NULL;
    char sql[160];
    /* The busy timeout covers writers in other threads and processes. Every pooled connection
     * of every child keeps a page cache of its own: its size bounds what the connections of a
     * child hold together (docs/operations.md, "Memory"). Numbers of our own configuration,
     * no text from outside. */
    int rc, n = apr_snprintf(sql, sizeof(sql),
                             "PRAGMA busy_timeout = %d; PRAGMA synchronous = NORMAL;",
                             sqlite_busy_ms);
    if (sqlite_cache_kib) {
        apr_snprintf(sql + n, sizeof(sql) - (size_t)n, "PRAGMA cache_size = -%" APR_INT64_T_FMT ";",
                     (apr_int64_t)sqlite_cache_kib);
    }
    rc = sqlite3_exec(conn, sql, NULL, NULL, &msg);
    if (rc != SQLITE_OK || !sq_foreign_keys(conn)) {
        JR_LOG(JR01002, 0, "SQLite connection setup failed: %s",
               msg ? msg : sqlite3_errmsg(conn));
        sqlite3_free(msg);
        return APR_EGENERAL;
    }
    sqlite3_wal_hook(conn, sq_wal_hook, NULL);
    sqlite3_update_hook(conn, sq_update_hook, NULL);
    return APR_SUCCESS;
}

/* ---- foreign keys when a connection opens (jr_db_sqlite_preconfigure) ----------------------- */

/* The database files of jr_db_sqlite_preconfigure, by device and inode (a path may be relative
 * or reach the file through links). Written by httpd's parent while it reads its configuration,
 * before any child or thread exists; read when connections open. */
#define JR_SQLITE_FILES_MAX 16
static struct {
    dev_t dev;
    ino_t ino;
} sqlite_files[JR_SQLITE_FILES_MAX];
static int sqlite_nfiles;

static int sqlite_file_index(const struct stat *st)
{
    int i;
    for (i = 0; i < sqlite_nfiles; ++i) {
        if (sqlite_files[i].dev == st->st_dev && sqlite_files[i].ino == st->st_ino) {
            return i;
        }
    }
    return -1;
}

/* An SQLite auto-extension: runs inside sqlite3_open, before the opener prepares anything. */
static int sqlite_on_open(sqlite3 *conn, char **err, const sqlite3_api_routines *api)
{
    const char *file = sqlite3_db_filename(conn, "main");
    struct stat st;
    (void)err;
    (void)api;
    if (file && *file && stat(file, &st) == 0 && sqlite_file_index(&st) >= 0) {
        sqlite3_db_config(conn, SQLITE_DBCONFIG_ENABLE_FKEY, 1, (int *)NULL);
        /* mod_dbd prepares the other modules' statements (mod_authn_dbd, DBDPrepareSQL)
         * before any hook of ours: without a busy timeout from the start, a connection opened
         * while another process checkpoints the WAL (the last connection closing, DBDKeep 0)
         * failed its preparation at once with "database is locked" (AH00632). */
        sqlite3_busy_timeout(conn, sqlite_busy_ms);
    }
    return SQLITE_OK;
}

/* Before the module's code is unloaded (a restart), SQLite must forget the function. The
 * list itself is released too: cancelling leaves it allocated, and SQLite may be unloaded
 * with the module (16 bytes lost at every restart). No other user of SQLite in httpd
 * registers automatic extensions. */
static apr_status_t sqlite_forget_files(void *data)
{
    (void)data;
    sqlite3_cancel_auto_extension((void (*)(void))sqlite_on_open);
    sqlite3_reset_auto_extension();
    sqlite_nfiles = 0;
    return APR_SUCCESS;
}

apr_status_t jr_db_sqlite_preconfigure(apr_pool_t *pconf, const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        return APR_FROM_OS_ERROR(errno);
    }
    if (sqlite_file_index(&st) >= 0) {
        return APR_SUCCESS;
    }
    if (sqlite_nfiles == JR_SQLITE_FILES_MAX) {
        return APR_ENOSPC;
    }
    if (sqlite_nfiles == 0) {
        if (sqlite3_auto_extension((void (*)(void))sqlite_on_open) != SQLITE_OK) {
            return APR_EGENERAL;
        }
        apr_pool_cleanup_register(pconf, NULL, sqlite_forget_files, apr_pool_cleanup_null);
    }
    sqlite_files[sqlite_nfiles].dev = st.st_dev;
    sqlite_files[sqlite_nfiles].ino = st.st_ino;
    ++sqlite_nfiles;
    return APR_SUCCESS;
}

/* ---- the statement cache ------------------------------------------------------------------- */

/* sqlite3_prepare_v2 statements prepare themselves again after schema changes, and no
 * driver-wide mutex serialises the queries. */
static apr_status_t sq_prepare(jr_stmt_cache_t *c, jr_stmt_id_t id, void **stmt,
                               const char **err)
{
    sqlite3_stmt *st = NULL;
    apr_pool_t *scratch;
    apr_status_t rv = APR_SUCCESS;
    /* A connection prepares a statement while it serves a request, and the connection's pool
     * shares its allocator with the other connections of the child: the text goes to a pool
     * of its own (SQLite keeps its own copy), and the message stays SQLite's, which the caller
     * reads before the connection's next call. */
    if (apr_pool_create_unmanaged_ex(&scratch, NULL, NULL) != APR_SUCCESS) {
        *err = "out of memory";
        return APR_ENOMEM;
    }
    if (sqlite3_prepare_v2(c->native,
                           jr_db_placeholders(scratch, jr_stmt_sql(id, JR_DB_SQLITE), 0), -1,
                           &st, NULL) != SQLITE_OK) {
        *err = sqlite3_errmsg(c->native);
        rv = APR_EGENERAL;
    } else {
        if (*stmt) {
            sqlite3_finalize(*stmt);
        }
        *stmt = st;
    }
    apr_pool_destroy(scratch);
    return rv;
}

static void sq_unprepare(void *stmt)
{
    sqlite3_finalize(stmt);
}

static void sq_release(jr_stmt_cache_t *c)
{
    int id;
    for (id = 0; id < JR_Q__COUNT; ++id) {
        if (c->stmts[id]) {
            sqlite3_finalize(c->stmts[id]);
            c->stmts[id] = NULL;
        }
    }
}

/* ---- statements ---------------------------------------------------------------------------- */

static void sq_error(jr_db_t *db, jr_stmt_id_t id, sqlite3_stmt *st)
{
    sqlite3 *conn = sqlite3_db_handle(st);
    db->native_code = sqlite3_extended_errcode(conn);
    jr_db_failed(db, id, NULL, sqlite3_errmsg(conn));
    sqlite3_reset(st);
}

/* Binds the arguments of a statement (text, or NULL). */
static apr_status_t sq_bind(jr_db_t *db, jr_stmt_id_t id, sqlite3_stmt *st, int nargs,
                            const char **args)
{
    int i, rc = SQLITE_OK;
    sqlite3_reset(st);
    for (i = 0; i < nargs && rc == SQLITE_OK; ++i) {
        rc = args[i] ? sqlite3_bind_text(st, i + 1, args[i], -1, SQLITE_STATIC)
                     : sqlite3_bind_null(st, i + 1);
    }
    if (rc != SQLITE_OK) {
        sq_error(db, id, st);
        return APR_EGENERAL;
    }
    return APR_SUCCESS;
}

jr_db_column_text_fn *jr_db_test_column_text;

static apr_status_t sq_read_error(jr_db_t *db, jr_stmt_id_t id, sqlite3_stmt *st,
                                  const char *what)
{
    sqlite3_reset(st);
    return jr_db_read_failure(db, id, what);
}

/* Binds the arguments and reads the column names into shape: the start of a select. */
static apr_status_t sq_start(jr_db_t *db, apr_pool_t *p, jr_stmt_id_t id, sqlite3_stmt *st,
                             jr_rows_t *shape, int nargs, const char **args)
{
    int c;
    if (sq_bind(db, id, st, nargs, args) != APR_SUCCESS) {
        return APR_EGENERAL;
    }
    memset(shape, 0, sizeof(*shape));
    shape->ncols = sqlite3_column_count(st);
    shape->names = apr_palloc(p, sizeof(char *) * (apr_size_t)(shape->ncols + 1));
    for (c = 0; c < shape->ncols; ++c) {
        const char *name = sqlite3_column_name(st, c);
        if (!name) {
            return sq_read_error(db, id, st, "a column name could not be read");
        }
        shape->names[c] = apr_pstrdup(p, name);
    }
    return APR_SUCCESS;
}

/* The current row's values: copied into p, or (copy 0) pointers into the statement's buffers,
 * valid until the next step.
 *
 * sqlite3_column_text returns NULL for SQL NULL, and also when converting a value to text runs
 * out of memory. Then SQLite turns the value into NULL (its type no longer tells) and sets the
 * connection's error code to SQLITE_NOMEM, which stays for the rest of the row (each step
 * resets it). So a row with a NULL is checked once, after its values and before anyone sees
 * them, and the select fails instead of handing out a NULL that would mean "no restriction" or
 * "never expires". A row without NULLs costs nothing more. */
static inline apr_status_t sq_row(jr_db_t *db, apr_pool_t *p, jr_stmt_id_t id,
                                  sqlite3_stmt *st, int ncols, const char **vals, int copy)
{
    jr_db_column_text_fn *text = jr_db_test_column_text ? jr_db_test_column_text
                                                        : sqlite3_column_text;
    int c, nulls = 0;
    for (c = 0; c < ncols; ++c) {
        const char *v = (const char *)text(st, c);
        if (!v) {
            nulls = 1;
        } else if (copy) {
            v = apr_pstrmemdup(p, v, (apr_size_t)sqlite3_column_bytes(st, c));
        }
        vals[c] = v;
    }
    if (nulls && sqlite3_errcode(sqlite3_db_handle(st)) == SQLITE_NOMEM) {
        return sq_read_error(db, id, st, "a value could not be read (out of memory)");
    }
    return APR_SUCCESS;
}

static apr_status_t sq_select(jr_db_t *db, apr_pool_t *p, jr_stmt_id_t id, void *stmt,
                              jr_rows_t **out, int nargs, const char **args)
{
    sqlite3_stmt *st = stmt;
    apr_array_header_t *rows;
    jr_rows_t *r = apr_palloc(p, sizeof(*r));
    int rc;

    if (sq_start(db, p, id, st, r, nargs, args) != APR_SUCCESS) {
        return APR_EGENERAL;
    }
    rows = apr_array_make(p, 16, sizeof(const char **));
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char **vals = apr_palloc(p, sizeof(char *) * (apr_size_t)(r->ncols + 1));
        if (sq_row(db, p, id, st, r->ncols, vals, 1) != APR_SUCCESS) {
            return APR_EGENERAL;
        }
        APR_ARRAY_PUSH(rows, const char **) = vals;
    }
    if (rc != SQLITE_DONE) {
        sq_error(db, id, st);
        return APR_EGENERAL;
    }
    sqlite3_reset(st);
    r->nrows = rows->nelts;
    r->rows = (const char ***)rows->elts;
    *out = r;
    return APR_SUCCESS;
}

static apr_status_t sq_select_each(jr_db_t *db, apr_pool_t *p, jr_stmt_id_t id, void *stmt,
                                   jr_row_fn *fn, void *baton, int nargs, const char **args)
{
    sqlite3_stmt *st = stmt;
    jr_rows_t shape;
    const char **row;
    int rc;

    if (sq_start(db, p, id, st, &shape, nargs, args) != APR_SUCCESS) {
        return APR_EGENERAL;
    }
    row = apr_palloc(p, sizeof(char *) * (apr_size_t)(shape.ncols + 1));
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (sq_row(db, p, id, st, shape.ncols, row, 0) != APR_SUCCESS) {
            return APR_EGENERAL;
        }
        if (fn(baton, &shape, row) != 0) {
            rc = SQLITE_DONE;
            break;
        }
    }
    if (rc != SQLITE_DONE) {
        sq_error(db, id, st);
        return APR_EGENERAL;
    }
    sqlite3_reset(st);
    return APR_SUCCESS;
}

static apr_status_t sq_exec(jr_db_t *db, apr_pool_t *p, jr_stmt_id_t id, void *stmt, int *nrows,
                            int nargs, const char **args)
{
    sqlite3_stmt *st = stmt;
    int rc;
    (void)p;
    if (sq_bind(db, id, st, nargs, args) != APR_SUCCESS) {
        return APR_EGENERAL;
    }
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    }
    if (rc != SQLITE_DONE) {
        sq_error(db, id, st);
        return APR_EGENERAL;
    }
    if (nrows) {
        *nrows = sqlite3_changes(sqlite3_db_handle(st));
    }
    sqlite3_reset(st);
    return APR_SUCCESS;
}

/* ---- plain statements ------------------------------------------------------------------------ */

static apr_status_t sq_plain(jr_db_t *db, const char *sql, int quiet)
{
    if (sqlite3_exec(db->native, sql, NULL, NULL, NULL) != SQLITE_OK) {
        if (!quiet) {
            db->native_code = sqlite3_extended_errcode(db->native);
            jr_db_failed(db, 0, sql, sqlite3_errmsg(db->native));
        }
        return APR_EGENERAL;
    }
    return APR_SUCCESS;
}

static int sq_schema_version(void *native, apr_pool_t *p, int *version, const char **err)
{
    int exists = 0;
    *version = 0;
    if (sqlite3_exec(native,
                     "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'"
                     " AND name = 'schema_migrations'",
                     sq_int_of, &exists, NULL) != SQLITE_OK ||
        (exists && sqlite3_exec(native, "SELECT MAX(version) FROM schema_migrations", sq_int_of,
                                version, NULL) != SQLITE_OK)) {
        *err = apr_pstrdup(p, sqlite3_errmsg(native));
        return -1;
    }
    return 0;
}

/* ---- the write queue ----------------------------------------------------------------------- */

/* The write queue of db's file, APR_ENOTIMPL for a database without a file (":memory:", a
 * temporary one: no other writer, no queue). Looked up once per connection. */
static apr_status_t queue_of(jr_db_t *db, jr_wqueue_t **q)
{
    const char *file;
    apr_status_t rv;
    if (db->cache && db->cache->queue) {
        *q = db->cache->queue;
        return APR_SUCCESS;
    }
    file = sqlite3_db_filename(db->native, "main");
    if (!file || !*file) {
        return APR_ENOTIMPL;
    }
    if ((rv = jr_wqueue_of(file, q)) == APR_SUCCESS && db->cache) {
        db->cache->queue = *q;
    }
    return rv;
}

/* ---- one connection per process for writes ------------------------------------------------- */

/* SQLite in WAL mode empties a connection's page cache whenever another connection has written
 * since its last transaction, and with every pooled connection of every child taking turns at
 * writing, each write read every page it touched again (docs/architecture.md §7.26). So the
 * write transactions of a process run on one connection of its own, whose cache keeps what
 * the previous writes of the process read: whoever holds the write queue uses it, one thread
 * at a time. httpd's children only (jr_db_sqlite_writers); journal-worker and journal-admin
 * write on their own connection. */
typedef struct {
    jr_wqueue_t *q;
    jr_db_t *db;
    apr_time_t failed; /* when it last could not be opened: tried again a minute later */
} writer_t;

static apr_pool_t *writers_parent; /* set in a child of httpd; NULL: no writing connections */
static pid_t writers_pid;
static writer_t writers[JR_SQLITE_FILES_MAX];
static int nwriters;
static pthread_mutex_t writers_mu = PTHREAD_MUTEX_INITIALIZER;

static apr_status_t writers_close(void *data)
{
    int i;
    (void)data;
    for (i = 0; i < nwriters; ++i) {
        if (writers[i].db) {
            apr_pool_destroy(writers[i].db->pool);
        }
    }
    nwriters = 0;
    writers_parent = NULL;
    return APR_SUCCESS;
}

void jr_db_sqlite_writers(apr_pool_t *pchild)
{
    writers_parent = pchild;
    writers_pid = getpid();
    apr_pool_cleanup_register(pchild, NULL, writers_close, apr_pool_cleanup_null);
}

/* The writing connection of q's file, opened on first use; NULL when there is none (then the
 * request's own connection writes, as before). Called by the thread that holds q: nobody else
 * in the process uses the connection meanwhile. Each connection has an unmanaged pool of its
 * own, made and released without touching any pool the threads share. */
static jr_db_t *writer_of(jr_db_t *db, jr_wqueue_t *q)
{
    writer_t *w = NULL;
    apr_pool_t *p;
    const char *err = NULL;
    jr_db_t *wdb = NULL;
    int i;
    if (!writers_parent || writers_pid != getpid()) {
        return NULL;
    }
    pthread_mutex_lock(&writers_mu);
    for (i = 0; i < nwriters && !w; ++i) {
        w = writers[i].q == q ? &writers[i] : NULL;
    }
    if (!w && nwriters < JR_SQLITE_FILES_MAX) {
        w = &writers[nwriters++];
        w->q = q;
    }
    pthread_mutex_unlock(&writers_mu);
    if (!w || w->db || (w->failed && apr_time_now() - w->failed < apr_time_from_sec(60))) {
        return w ? w->db : NULL;
    }
    if (apr_pool_create_unmanaged_ex(&p, NULL, NULL) != APR_SUCCESS) {
        return NULL;
    }
    if (jr_db_open(&wdb, p, "sqlite3", sqlite3_db_filename(db->native, "main"), &err) !=
            APR_SUCCESS ||
        jr_db_prepare_all(wdb) != APR_SUCCESS) {
        JR_LOG(JR12122, 0, "cannot open the connection for writes (writes use their own): %s",
               err ? err : "the module's statements cannot be prepared on it");
        apr_pool_destroy(p);
        w->failed = apr_time_now();
        return NULL;
    }
    w->db = wdb;
    /* The first write of a process indexes what processes before it left in the backlog
     * (their counts went with them). */
    jr_wqueue_backlog_add(q, JR_SQLITE_INDEX_BATCH);
    return wdb;
}

/* A writing connection left inside a transaction (its ROLLBACK failed) would fail every later
 * write of the process: rolled back here, or else closed, to be opened again at the next
 * write. With q held. */
static void writer_settle(jr_wqueue_t *q, sqlite3 *conn)
{
    int i;
    if (sqlite3_get_autocommit(conn)) {
        return;
    }
    sqlite3_exec(conn, "ROLLBACK", NULL, NULL, NULL);
    if (sqlite3_get_autocommit(conn)) {
        return;
    }
    JR_LOG(JR12123, 0, "the connection for writes was left inside a transaction; closed");
    pthread_mutex_lock(&writers_mu);
    for (i = 0; i < nwriters; ++i) {
        if (writers[i].q == q && writers[i].db) {
            apr_pool_destroy(writers[i].db->pool);
            writers[i].db = NULL;
        }
    }
    pthread_mutex_unlock(&writers_mu);
}

/* Runs after the writer has left the queue, in a write transaction of its own (on the
 * process's writing connection when it has one): the writers that wait meanwhile wait for one
 * short pass instead of each indexing its own entry. A pass that fails leaves the backlog as
 * it was (searches read it directly) for the next batch to try again. Returns the connection
 * it wrote on, NULL when it did not get in. */
static sqlite3 *sq_index_backlog(jr_db_t *db, jr_wqueue_t *q)
{
    char *msg = NULL;
    int more = 0;
    jr_db_t *w;
    sqlite3 *conn;
    if (jr_wqueue_enter(q, sqlite_busy_ms) != APR_SUCCESS) {
        return NULL;
    }
    w = writer_of(db, q);
    conn = w ? w->native : db->native;
    if (sqlite3_exec(conn, index_backlog_sql, sq_int_of, &more, &msg) != SQLITE_OK) {
        JR_LOG(JR12121, 0, "indexing new entries for search failed (they stay searchable): %s",
               msg ? msg : sqlite3_errmsg(conn));
        sqlite3_free(msg);
        if (w) {
            writer_settle(q, conn); /* rolled back, or closed when that fails */
        } else if (!sqlite3_get_autocommit(conn)) {
            sqlite3_exec(conn, "ROLLBACK", NULL, NULL, NULL);
        }
    } else if (more) {
        jr_wqueue_backlog_add(q, JR_SQLITE_INDEX_BATCH); /* the next writer goes on */
    }
    jr_wqueue_leave(q);
    return conn;
}

/* The wait for the queue is bounded like SQLite's own: a writer that cannot get in within the
 * busy timeout answers as a busy BEGIN did. */
static apr_status_t sq_write_enter(jr_db_t *db)
{
    jr_wqueue_t *q = NULL;
    apr_status_t rv;
    char why[64];
    if (db->wq || (rv = queue_of(db, &q)) == APR_ENOTIMPL) {
        return APR_SUCCESS;
    }
    if (rv == APR_SUCCESS && (rv = jr_wqueue_enter(q, sqlite_busy_ms)) == APR_SUCCESS) {
        jr_db_t *w = writer_of(db, q);
        db->wq = q;
        if (w) {
            db->own_native = db->native;
            db->own_cache = db->cache;
            db->native = w->native;
            db->cache = w->cache;
        }
        return APR_SUCCESS;
    }
    db->native_code = rv == APR_TIMEUP || rv == APR_EBUSY ? SQLITE_BUSY : SQLITE_CANTOPEN;
    apr_snprintf(why, sizeof(why), "the write queue did not move within %d ms", sqlite_busy_ms);
    jr_db_failed(db, 0, "BEGIN IMMEDIATE",
                 rv == APR_TIMEUP  ? why
                 : rv == APR_EBUSY ? "this thread holds the write queue through another "
                                     "connection"
                                   : "the write queue's lock file could not be locked");
    return rv;
}

static void sq_write_leave(jr_db_t *db)
{
    jr_wqueue_t *q = db->wq;
    void *wrote_on = db->native, *indexed_on = NULL;
    if (db->own_native) { /* the writing connection goes back before the queue is left */
        writer_settle(q, db->native);
        db->native = db->own_native;
        db->cache = db->own_cache;
        db->own_native = NULL;
        db->own_cache = NULL;
    }
    if (q) {
        if (entries_added) {
            jr_wqueue_backlog_add(q, entries_added);
        }
        jr_wqueue_leave(q);
        db->wq = NULL;
    }
    entries_added = 0;
    if (q && jr_wqueue_backlog_take(q, JR_SQLITE_INDEX_BATCH)) {
        indexed_on = sq_index_backlog(db, q);
    }
    /* Due after this thread's commit or its pass's: run on the request's own connection (the
     * writing one belongs to whoever holds the queue now). */
    if (checkpoint_due && (checkpoint_due == wrote_on || checkpoint_due == indexed_on)) {
        checkpoint_due = NULL;
        sq_checkpoint(db->native, "main", 0);
    }
}

/* The counter next to the write queue: every writer of the file raises it (jr_wqueue.h). */
static apr_status_t sq_generation(jr_db_t *db, apr_pool_t *p, const jr_rows_t *carried,
                                  apr_uint64_t *gen)
{
    jr_wqueue_t *q = NULL;
    apr_status_t rv;
    (void)p;
    (void)carried; /* a shared counter: no statement to save */
    if ((rv = queue_of(db, &q)) == APR_SUCCESS) {
        rv = jr_wqueue_generation(q, gen);
    }
    return rv;
}

/* Extended result codes say which constraint failed; the message is never read. */
static jr_db_error_e sq_classify(const jr_db_t *db)
{
    switch (db->native_code) {
    case SQLITE_CONSTRAINT_UNIQUE:
    case SQLITE_CONSTRAINT_PRIMARYKEY:
        return JR_DB_E_UNIQUE;
    case SQLITE_CONSTRAINT_FOREIGNKEY:
        return JR_DB_E_FOREIGN_KEY;
    default:
        break;
    }
    switch (db->native_code & 0xff) {
    case SQLITE_CONSTRAINT:
        return JR_DB_E_CONSTRAINT;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        return JR_DB_E_BUSY;
    default:
        return JR_DB_E_OTHER;
    }
}

const jr_db_backend_t jr_db_backend_sqlite = {
    .driver = "sqlite3",
    .dialect = JR_DB_SQLITE,
    .global_init = sq_global_init,
    .setup = sq_setup,
    .prepare = sq_prepare,
    .unprepare = sq_unprepare,
    .release = sq_release,
    .select = sq_select,
    .select_each = sq_select_each,
    .exec = sq_exec,
    .plain = sq_plain,
    .begin_sql = "BEGIN IMMEDIATE",
    .write_enter = sq_write_enter,
    .write_leave = sq_write_leave,
    .generation = sq_generation,
    .generation_free = 1,
    .session = NULL,
    .schema_version = sq_schema_version,
    .classify = sq_classify,
};
