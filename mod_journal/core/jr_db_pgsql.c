/* The PostgreSQL backend: libpq on the pooled connection's own PGconn (apr_dbd_native_handle).
 * mod_dbd still opens, checks (apr_dbd_check_conn resets a broken connection) and pools the
 * connections; the module prepares its statements in the session under names of its own
 * (jr_<label>), runs them with text parameters, and streams long selects in libpq's
 * single-row mode. Every call leaves the connection idle, as the other mod_dbd users of the
 * same connection (mod_authn_dbd through apr_dbd) expect it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <apr_strings.h>
#include <libpq-fe.h>

#include "jr_db.h"
#include "jr_db_backend.h"
#include "jr_genshare.h"
#include "jr_log.h"

/* Parameters are declared as varchar, as apr_dbd's pgsql driver declared them: the catalogue's
 * SQL casts what is not text (JR_INT). */
#define JR_PG_VARCHAR_OID 1043

/* ---- failures -------------------------------------------------------------------------------- */

/* The failure of res (or of the connection when res holds none): the SQLSTATE, and for the log
 * the severity and primary message only. The DETAIL of a message can quote a row's values
 * (a CHECK constraint prints the whole failing row): it is left out. */
static void pg_failed(jr_db_t *db, jr_stmt_id_t id, const char *sql, const PGresult *res)
{
    const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
    const char *severity = res ? PQresultErrorField(res, PG_DIAG_SEVERITY) : NULL;
    const char *primary = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
    char msg[sizeof(db->errbuf)];
    if (db->cache) {
        db->cache->plan_mode = -1; /* the failed round trip may have undone its SET */
    }
    apr_cpystrn(db->sqlstate, state ? state : "", sizeof(db->sqlstate));
    db->native_code = 0;
    if (primary) {
        snprintf(msg, sizeof(msg), "%s:  %s", severity ? severity : "ERROR", primary);
    } else {
        apr_cpystrn(msg, PQerrorMessage(db->native), sizeof(msg));
    }
    jr_db_failed(db, id, sql, msg);
}

/* ---- the statement cache ------------------------------------------------------------------- */

static apr_status_t pg_prepare(jr_stmt_cache_t *c, jr_stmt_id_t id, void **stmt, const char **err)
{
    int i, n = jr_stmt_nparams(id);
    Oid *types = apr_palloc(c->pool, sizeof(Oid) * (apr_size_t)(n + 1));
    const char *name = jr_stmt_server_name(id);
    PGresult *res;
    apr_status_t rv = APR_SUCCESS;
    for (i = 0; i < n; ++i) {
        types[i] = JR_PG_VARCHAR_OID;
    }
    res = PQprepare(c->native, name, jr_db_placeholders(c->pool, jr_stmt_sql(id, JR_DB_PGSQL), 1),
                    n, types);
    if (PQresultStatus(res) != PGRES_COMMAND_OK) {
        char *msg = apr_pstrdup(c->pool, PQerrorMessage(c->native));
        size_t len = strlen(msg);
        while (len > 0 && (msg[len - 1] == '\n' || msg[len - 1] == ' ')) {
            msg[--len] = '\0'; /* libpq ends its messages with a newline */
        }
        *err = msg;
        rv = APR_EGENERAL;
    } else {
        *stmt = (void *)name; /* statements run by name */
    }
    PQclear(res);
    return rv;
}

/* The session's statement names outlive a failed preparation: released, so that a later
 * attempt on the same session can prepare them under the same names. */
static void pg_release(jr_stmt_cache_t *c)
{
    int id;
    char sql[96];
    for (id = 0; c->discard && id < JR_Q__COUNT; ++id) {
        if (c->stmts[id]) {
            snprintf(sql, sizeof(sql), "DEALLOCATE \"%s\"", jr_stmt_server_name(id));
            PQclear(PQexec(c->native, sql));
        }
    }
    memset(c->stmts, 0, sizeof(c->stmts));
}

/* ---- statements ---------------------------------------------------------------------------- */

/* Column names copied into p: a shape outlives the result it was read from. */
static const char **pg_names(apr_pool_t *p, const PGresult *res, int ncols)
{
    const char **names = apr_palloc(p, sizeof(char *) * (apr_size_t)(ncols + 1));
    int c;
    for (c = 0; c < ncols; ++c) {
        names[c] = apr_pstrdup(p, PQfname(res, c));
    }
    return names;
}

/* Row r of res: pointers into the result. libpq holds every value as text whatever its
 * type; PQgetisnull tells SQL NULL from the empty string. */
static void pg_row(const PGresult *res, int r, int ncols, const char **vals)
{
    int c;
    for (c = 0; c < ncols; ++c) {
        vals[c] = PQgetisnull(res, r, c) ? NULL : PQgetvalue(res, r, c);
    }
}

static apr_status_t clear_result(void *res)
{
    PQclear(res);
    return APR_SUCCESS;
}

/* ---- what travels together ------------------------------------------------------------------ */

/* A step of a round trip: a prepared statement (stmt set), or a plain one (sql set). A plain
 * step made for statement id (its plan mode: of_id) fails as that statement. */
typedef struct {
    jr_stmt_id_t id;
    const char *stmt, *sql;
    int nargs;
    const char **args;
    int of_id;
} pg_step_t;

static int pg_ok(const PGresult *res)
{
    ExecStatusType st = PQresultStatus(res);
    return st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK;
}

static int pg_send(PGconn *conn, const pg_step_t *s)
{
    return s->stmt ? PQsendQueryPrepared(conn, s->stmt, s->nargs, s->args, NULL, NULL, 0)
                   : PQsendQueryParams(conn, s->sql, 0, NULL, NULL, NULL, NULL, 0);
}

/* A failed step, recorded as its statement's failure. */
static void pg_step_failed(jr_db_t *db, const pg_step_t *s, const PGresult *res)
{
    pg_failed(db, s->id, s->stmt || s->of_id ? NULL : s->sql, res);
}

/* ---- generic plans ---------------------------------------------------------------------------- */

/* PostgreSQL plans a prepared statement for its parameters (a custom plan) until a generic plan
 * is estimated no dearer, and a parameter in LIMIT is estimated as a tenth of the table: the
 * hot page (ORDER BY id LIMIT $n) was planned again on every execution, planning taking longer
 * than running it. These statements run with plan_cache_mode = force_generic_plan: each plan is
 * the same for every value of their parameters (primary keys, the branch scope, the page's
 * bounds). The indexed entry search and its page by ids too: the trigram index is their only
 * index condition whatever the term (the term's windows are a parameter of the index scan),
 * and planning them for each term cost more than running them (§7.28). Every other statement
 * keeps the database's default: the scans of a short term and the optional filters need plans
 * made for their values (docs/architecture.md §7.24). The setting is a session's; it is changed
 * only when the next statement wants the other one, in the same round trip as that statement
 * where it can be. */
static const jr_stmt_id_t generic_plans[] = {
    JR_Q_KEY_AUTH, JR_Q_ENTRIES_PAGE_PLAIN, JR_Q_ENTRIES_SEARCH, JR_Q_ENTRIES_BY_IDS,
};

static int wants_generic(jr_stmt_id_t id)
{
    size_t i;
    for (i = 0; i < sizeof(generic_plans) / sizeof(generic_plans[0]); ++i) {
        if (generic_plans[i] == id) {
            return 1;
        }
    }
    return 0;
}

/* Statements that read no table have nothing to plan: they run in whichever mode the session
 * is in. The workers' NOTIFY, which a child's waker sends between requests on their pooled
 * connections (§7.29), and the read of the snapshot, which comes before every request's first
 * statement (§7.30), would otherwise switch the mode back and forth. */
static int plan_indifferent(jr_stmt_id_t id)
{
    return id == JR_Q_SIGNAL_NOTIFY || id == JR_Q_RCACHE_SNAPSHOT;
}

static int plan_differs(const jr_db_t *db, jr_stmt_id_t id)
{
    return db->cache && !plan_indifferent(id) && db->cache->plan_mode != wants_generic(id);
}

/* The step that gives statement id the plan mode it wants, or NULL when the session has it.
 * The mode is noted as set: a failure of the round trip marks it unknown (pg_failed). */
static const char *plan_switch(jr_db_t *db, jr_stmt_id_t id)
{
    if (id >= JR_Q__COUNT || !plan_differs(db, id)) {
        return NULL;
    }
    db->cache->plan_mode = wants_generic(id);
    return db->cache->plan_mode ? "SET plan_cache_mode = force_generic_plan"
                                : "RESET plan_cache_mode";
}

/* At debug level, the steps that travel together (JR12141): the tests count round trips. */
static void pg_log_steps(const pg_step_t *steps, int n)
{
    char line[512];
    size_t len = 0;
    int i;
    if (JR_LOG_LEVEL(JR12141) > jr_log_enabled) {
        return;
    }
    line[0] = '\0';
    for (i = 0; i < n && len < sizeof(line); ++i) {
        len += (size_t)snprintf(line + len, sizeof(line) - len, "%s%s", i ? " " : "",
                                steps[i].stmt ? jr_stmt_label(steps[i].id) : steps[i].sql);
    }
    JR_LOG(JR12141, 0, "one round trip: %s", line);
}

/* The steps of a round trip into steps (room for JR_DB_HELD_MAX + 3); their count. What db
 * held is handed over. */
static int pg_steps(jr_db_t *db, jr_stmt_id_t plan_for, const pg_step_t *last, pg_step_t *steps)
{
    const char *plan = plan_switch(db, plan_for);
    int i, n = 0;
    if (db->begin_held) {
        steps[n++] = (pg_step_t){0, NULL, "BEGIN", 0, NULL, 0};
    }
    for (i = 0; i < db->nheld; ++i) {
        const struct jr_db_held *h = &db->held[i];
        steps[n++] = (pg_step_t){h->id, h->stmt, NULL, h->nargs, h->args, 0};
    }
    if (plan) {
        steps[n++] = (pg_step_t){plan_for, NULL, plan, 0, NULL, 1};
    }
    if (last) {
        steps[n++] = *last;
    }
    db->begin_held = 0;
    db->nheld = 0;
    return n;
}

/* What db holds (its BEGIN, its held writes), the plan mode statement plan_for wants
 * (JR_Q__COUNT: none), then last (NULL: nothing more), in one round trip:
 * libpq's pipeline mode, ended by one Sync. The server runs the steps in order and skips the rest
 * after a failure (inside the transaction, which the caller then rolls back). Returns last's
 * result when every step succeeded (a placeholder result when last is NULL); NULL otherwise, the
 * first failure recorded. The connection is left idle and out of pipeline mode. */
static PGresult *pg_pipeline(jr_db_t *db, jr_stmt_id_t plan_for, const pg_step_t *last)
{
    PGconn *conn = db->native;
    pg_step_t steps[JR_DB_HELD_MAX + 3];
    PGresult *res, *out = NULL;
    int i, n = pg_steps(db, plan_for, last, steps), sent = 0, failed = -1;

    pg_log_steps(steps, n);
    if (!PQenterPipelineMode(conn)) {
        pg_step_failed(db, &steps[0], NULL);
        return NULL;
    }
    while (sent < n && pg_send(conn, &steps[sent])) {
        ++sent;
    }
    if (!PQpipelineSync(conn)) {
        sent = -1; /* nothing can be read back: the connection is gone */
    }
    for (i = 0; i < sent; ++i) {
        while ((res = PQgetResult(conn)) != NULL) {
            if (failed < 0 && !pg_ok(res) && PQresultStatus(res) != PGRES_PIPELINE_ABORTED) {
                failed = i;
                pg_step_failed(db, &steps[i], res);
            }
            if (i == n - 1 && last && failed < 0 && !out) {
                out = res;
            } else {
                PQclear(res);
            }
        }
    }
    if (sent >= 0) {
        PQclear(PQgetResult(conn)); /* the Sync's */
    }
    if (sent != n && failed < 0) { /* libpq could not send a step */
        failed = sent < 0 ? n - 1 : sent;
        pg_step_failed(db, &steps[failed], NULL);
    }
    PQexitPipelineMode(conn);
    if (failed >= 0) {
        PQclear(out);
        return NULL;
    }
    return out ? out : PQmakeEmptyPGresult(conn, PGRES_COMMAND_OK);
}

/* Sends what db holds, in a round trip of its own. */
static apr_status_t pg_send_held(jr_db_t *db)
{
    PGresult *res = pg_pipeline(db, JR_Q__COUNT, NULL);
    if (!res) {
        return APR_EGENERAL;
    }
    PQclear(res);
    return APR_SUCCESS;
}

/* Statement id's result after what db holds, or NULL when it or a held step failed (recorded). */
static PGresult *pg_run(jr_db_t *db, jr_stmt_id_t id, void *stmt, int nargs, const char **args)
{
    pg_step_t step = {id, stmt, NULL, nargs, args, 0};
    PGresult *res;
    if (db->begin_held || db->nheld || plan_differs(db, id)) {
        return pg_pipeline(db, id, &step);
    }
    res = PQexecPrepared(db->native, stmt, nargs, args, NULL, NULL, 0);
    if (!pg_ok(res)) {
        pg_failed(db, id, NULL, res);
        PQclear(res);
        return NULL;
    }
    return res;
}

static apr_status_t pg_hold(jr_db_t *db, apr_pool_t *p, jr_stmt_id_t id, void *stmt, int nargs,
                            const char **args)
{
    struct jr_db_held *h;
    int i;
    if (!stmt) {
        db->begin_held = 1;
        return APR_SUCCESS;
    }
    if (db->nheld == JR_DB_HELD_MAX && pg_send_held(db) != APR_SUCCESS) {
        return APR_EGENERAL;
    }
    h = &db->held[db->nheld++];
    h->id = id;
    h->stmt = stmt;
    h->nargs = nargs;
    h->args = apr_palloc(p, sizeof(char *) * (apr_size_t)(nargs + 1));
    for (i = 0; i < nargs; ++i) {
        h->args[i] = args[i] ? apr_pstrdup(p, args[i]) : NULL;
    }
    return APR_SUCCESS;
}

/* A select read whole: the rows point into the PGresult, which lives as long as p (no copy of
 * the values, one array of pointers per row). */
static apr_status_t pg_select(jr_db_t *db, apr_pool_t *p, jr_stmt_id_t id, void *stmt,
                              jr_rows_t **out, int nargs, const char **args)
{
    PGresult *res = pg_run(db, id, stmt, nargs, args);
    const char **vals;
    jr_rows_t *r;
    int i;
    if (!res) {
        return APR_EGENERAL;
    }
    apr_pool_cleanup_register(p, res, clear_result, apr_pool_cleanup_null);
    r = apr_palloc(p, sizeof(*r));
    r->ncols = PQnfields(res);
    r->nrows = PQntuples(res);
    r->names = pg_names(p, res, r->ncols);
    r->rows = apr_palloc(p, sizeof(char **) * (apr_size_t)(r->nrows + 1));
    vals = apr_palloc(p, sizeof(char *) * (apr_size_t)r->nrows * (apr_size_t)(r->ncols + 1));
    for (i = 0; i < r->nrows; ++i, vals += r->ncols + 1) {
        pg_row(res, i, r->ncols, vals);
        r->rows[i] = vals;
    }
    *out = r;
    return APR_SUCCESS;
}

/* The rows of one result of a streamed select, handed to fn until it says stop. */
static int pg_each_row(const PGresult *res, jr_rows_t *shape, const char **row, jr_row_fn *fn,
                       void *baton)
{
    int i, n = PQntuples(res);
    for (i = 0; i < n; ++i) {
        pg_row(res, i, shape->ncols, row);
        if (fn(baton, shape, row) != 0) {
            return 1;
        }
    }
    return 0;
}

/* Single-row mode: libpq hands over each row as it arrives, in a result of its own, so the
 * memory held is one row's whatever the size of the select. The loop reads every result
 * until libpq has none left, also after fn said stop or a failure: the connection must be idle
 * for whoever runs the next query on it. */
static apr_status_t pg_select_each(jr_db_t *db, apr_pool_t *p, jr_stmt_id_t id, void *stmt,
                                   jr_row_fn *fn, void *baton, int nargs, const char **args)
{
    PGconn *conn = db->native;
    jr_rows_t shape = {0, 0, NULL, NULL};
    const char **row = NULL;
    PGresult *res;
    apr_status_t rv = APR_SUCCESS;
    int stop = 0;

    /* sent first: single-row mode is not pipelined */
    if (db->begin_held || db->nheld || plan_differs(db, id)) {
        if (!(res = pg_pipeline(db, id, NULL))) {
            return APR_EGENERAL;
        }
        PQclear(res);
    }
    if (!PQsendQueryPrepared(conn, stmt, nargs, args, NULL, NULL, 0)) {
        pg_failed(db, id, NULL, NULL);
        return APR_EGENERAL;
    }
    PQsetSingleRowMode(conn); /* when refused, the rows come in one result: still right */
    while ((res = PQgetResult(conn)) != NULL) {
        ExecStatusType st = PQresultStatus(res);
        if (st == PGRES_SINGLE_TUPLE || st == PGRES_TUPLES_OK) {
            if (!row) {
                shape.ncols = PQnfields(res);
                shape.names = pg_names(p, res, shape.ncols);
                row = apr_palloc(p, sizeof(char *) * (apr_size_t)(shape.ncols + 1));
            }
            stop = stop || rv != APR_SUCCESS || pg_each_row(res, &shape, row, fn, baton);
        } else if (rv == APR_SUCCESS) {
            pg_failed(db, id, NULL, res);
            rv = APR_EGENERAL;
        }
        PQclear(res);
    }
    return rv;
}

static apr_status_t pg_exec(jr_db_t *db, apr_pool_t *p, jr_stmt_id_t id, void *stmt, int *nrows,
                            int nargs, const char **args)
{
    PGresult *res = pg_run(db, id, stmt, nargs, args);
    (void)p;
    if (!res) {
        return APR_EGENERAL;
    }
    if (nrows) {
        *nrows = atoi(PQcmdTuples(res));
    }
    PQclear(res);
    return APR_SUCCESS;
}

/* ---- plain statements ------------------------------------------------------------------------ */

static apr_status_t pg_plain(jr_db_t *db, const char *sql, int quiet)
{
    PGresult *res;
    apr_status_t rv = APR_SUCCESS;
    /* The COMMIT, with the writes it waited for. A quiet statement (ROLLBACK, the ping) never
     * travels with them: a rollback drops them first, and the ping runs outside transactions. */
    if (db->begin_held || db->nheld) {
        pg_step_t step = {0, NULL, sql, 0, NULL, 0};
        if (!(res = pg_pipeline(db, JR_Q__COUNT, &step))) {
            return APR_EGENERAL;
        }
        PQclear(res);
        return APR_SUCCESS;
    }
    if (db->cache && !strcmp(sql, "ROLLBACK")) {
        db->cache->plan_mode = -1; /* a SET of the transaction is undone */
    }
    res = PQexec(db->native, sql);
    if (PQresultStatus(res) != PGRES_COMMAND_OK && PQresultStatus(res) != PGRES_TUPLES_OK) {
        if (!quiet) {
            pg_failed(db, 0, sql, res);
        }
        rv = APR_EGENERAL;
    }
    PQclear(res);
    return rv;
}

static int pg_session(void *native)
{
    return PQbackendPID(native);
}

/* One round trip each: whether the table exists (to_regclass), then its highest version. */
static int pg_int_query(PGconn *conn, apr_pool_t *p, const char *sql, int *out, const char **err)
{
    PGresult *res = PQexec(conn, sql);
    int ok = PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1;
    if (ok) {
        *out = atoi(PQgetvalue(res, 0, 0));
    } else {
        *err = apr_pstrdup(p, PQerrorMessage(conn));
    }
    PQclear(res);
    return ok ? 0 : -1;
}

static int pg_schema_version(void *native, apr_pool_t *p, int *version, const char **err)
{
    int exists = 0;
    *version = 0;
    if (pg_int_query(native, p,
                     "SELECT CASE WHEN to_regclass('schema_migrations') IS NULL THEN 0 ELSE 1 END",
                     &exists, err) != 0) {
        return -1;
    }
    return exists ? pg_int_query(native, p,
                                 "SELECT COALESCE(MAX(version), 0) FROM schema_migrations",
                                 version, err)
                  : 0;
}

/* Every write assigns its transaction an id, and a snapshot's xmax is one past the newest id
 * that has ended. While no transaction with an id runs (the snapshot lists none in progress),
 * two snapshots with the same xmax saw the same ended transactions: nothing committed in
 * between. Read-only transactions get no id, so readers do not change it (docs/architecture.md
 * §7.15). A row the request read earlier with JR_DB_SNAPSHOT_COLUMNS (the key's lookup) holds
 * a snapshot taken after the request arrived and before its data: the same guarantee without
 * a round trip of its own. The generation the snapshot's columns r (JR_DB_SNAPSHOT_COLUMNS)
 * give. */
static apr_status_t snapshot_generation(const jr_rows_t *r, apr_uint64_t *gen)
{
    const char *busy = jr_rows_get(r, 0, "snap_busy"), *xmax = jr_rows_get(r, 0, "snap_gen");
    if (!busy || !xmax) {
        return APR_EGENERAL;
    }
    if (strcmp(busy, "0") != 0) {
        return APR_EAGAIN;
    }
    *gen = (apr_uint64_t)apr_strtoi64(xmax, NULL, 10);
    return APR_SUCCESS;
}

/* The generation read now, with a statement of its own. */
static apr_status_t pg_snapshot_now(jr_db_t *db, apr_pool_t *p, apr_uint64_t *gen)
{
    jr_rows_t *rows;
    apr_status_t rv = jr_db_select(db, p, JR_Q_RCACHE_SNAPSHOT, &rows, JR_NOARGS);
    return rv == APR_SUCCESS ? snapshot_generation(rows, gen) : APR_EGENERAL;
}

static apr_status_t pg_generation(jr_db_t *db, apr_pool_t *p, const jr_rows_t *carried,
                                  apr_uint64_t *gen)
{
    if (jr_rows_get(carried, 0, "snap_busy") && jr_rows_get(carried, 0, "snap_gen")) {
        return snapshot_generation(carried, gen);
    }
    /* The threads of the process that ask at once share one read (jr_genshare.h). */
    return db->genshare ? jr_genshare_read(db->genshare, db, p, pg_snapshot_now, gen)
                        : pg_snapshot_now(db, p, gen);
}

/* SQLSTATE classes: 23 integrity constraints, 40 transaction rollback, 08 connection, 57P
 * operator intervention (the server ending the session). */
static jr_db_error_e pg_classify(const jr_db_t *db)
{
    const char *s = db->sqlstate;
    if (!*s) {
        return PQstatus(db->native) == CONNECTION_BAD ? JR_DB_E_GONE : JR_DB_E_OTHER;
    }
    if (!strcmp(s, "23505")) {
        return JR_DB_E_UNIQUE;
    }
    if (!strcmp(s, "23503")) {
        return JR_DB_E_FOREIGN_KEY;
    }
    if (!strncmp(s, "23", 2)) {
        return JR_DB_E_CONSTRAINT;
    }
    if (!strcmp(s, "40001") || !strcmp(s, "40P01") || !strcmp(s, "55P03") ||
        !strcmp(s, "57014")) {
        return JR_DB_E_BUSY; /* serialization, deadlock, lock not available, statement timeout */
    }
    if (!strncmp(s, "08", 2) || !strncmp(s, "57P", 3)) {
        return JR_DB_E_GONE;
    }
    return JR_DB_E_OTHER;
}

const jr_db_backend_t jr_db_backend_pgsql = {
    .driver = "pgsql",
    .dialect = JR_DB_PGSQL,
    .global_init = NULL,
    .setup = NULL,
    .prepare = pg_prepare,
    .release = pg_release,
    .select = pg_select,
    .select_each = pg_select_each,
    .exec = pg_exec,
    .plain = pg_plain,
    .begin_sql = "BEGIN",
    .hold = pg_hold,
    .write_enter = NULL,
    .write_leave = NULL,
    .generation = pg_generation,
    .session = pg_session,
    .schema_version = pg_schema_version,
    .classify = pg_classify,
};
