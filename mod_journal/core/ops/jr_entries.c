/* Journal entries (spec 2.3): both interfaces share these operations. An entry's
 * student_name is free text; it links to a student of the entry's group whose name matches
 * (trimmed, case-insensitive), so the roster can grow after the journal. */
#include <string.h>

#include <apr_strings.h>

#include "jr_cursor.h"
#include "jr_entries.h"
#include "jr_groups.h"
#include "jr_json.h"
#include "jr_jw.h"
#include "jr_load.h"
#include "jr_modules.h"
#include "jr_queues.h"
#include "jr_record_events.h"
#include "jr_road.h"
#include "jr_search.h"
#include "jr_settings.h"
#include "jr_students.h"
#include "jr_stmts.h"
#include "jr_time.h"
#include "jr_util.h"

#define ID_MAX 9007199254740991LL
#define DESCRIPTION_MAX 20000

const jr_field_t jr_fields_entry_create[] = {
    {.name = "student_name", .type = JR_F_STRING, .required = 1, .trim = 1, .min = 1, .max = 200},
    {.name = "group_id", .type = JR_F_INT, .required = 1, .min = 1, .max = ID_MAX},
    {.name = "description", .type = JR_F_STRING, .nullable = 1, .max = DESCRIPTION_MAX},
    {.name = "module_id", .type = JR_F_INT, .nullable = 1, .min = 1, .max = ID_MAX},
    {NULL},
};

const jr_field_t jr_fields_entry_update[] = {
    {.name = "student_name", .type = JR_F_STRING, .trim = 1, .min = 1, .max = 200},
    {.name = "group_id", .type = JR_F_INT, .min = 1, .max = ID_MAX},
    {.name = "description", .type = JR_F_STRING, .nullable = 1, .max = DESCRIPTION_MAX},
    {.name = "module_id", .type = JR_F_INT, .nullable = 1, .min = 1, .max = ID_MAX},
    {NULL},
};

const jr_field_spec_t jr_fields_entries[] = {
    {"POST /api/entries", jr_fields_entry_create},
    {"PUT /api/entries/:id", jr_fields_entry_update},
    {NULL, NULL},
};

static const jr_kind_t entry_kind = {"entry", NULL, JR_Q_ENTRY_GET, JR_Q_ENTRY_SCOPE, "branch_id", 1};

int jr_entry_load(jr_ctx_t *ctx, jr_result_t *res, long long id, unsigned flags, jr_rows_t **row)
{
    return jr_load(ctx, res, &entry_kind, id, flags, row);
}

/* Column indexes of an entry row, resolved once per result. */
typedef struct {
    int id, student_name, student_id, group_id, branch_id, description, module_id, module_name,
        ai_status, files_count, has_photo, created_at, updated_at, created_by, created_by_key,
        description_original, ai_checked_at, ai_error;
} entry_cols_t;

static void entry_cols(const jr_rows_t *r, entry_cols_t *c)
{
#define COL(f) c->f = jr_rows_col(r, #f)
    COL(id);
    COL(student_name);
    COL(student_id);
    COL(group_id);
    COL(branch_id);
    COL(description);
    COL(module_id);
    COL(module_name);
    COL(ai_status);
    COL(files_count);
    COL(has_photo);
    COL(created_at);
    COL(updated_at);
    COL(created_by);
    COL(created_by_key);
    COL(description_original);
    COL(ai_checked_at);
    COL(ai_error);
#undef COL
}

/* One row (column texts in the order of the result) written as an entry record. */
static void entry_write(jr_jw_t *w, const char *const *row, const entry_cols_t *c)
{
#define CELL(idx) ((idx) >= 0 ? row[(idx)] : NULL)
    const char *photo = CELL(c->has_photo);
    jr_jw_obj(w);
    jr_jw_kint_text(w, "id", CELL(c->id));
    jr_jw_kstr(w, "student_name", CELL(c->student_name));
    jr_jw_kint_text(w, "student_id", CELL(c->student_id));
    jr_jw_kint_text(w, "group_id", CELL(c->group_id));
    jr_jw_kint_text(w, "branch_id", CELL(c->branch_id));
    jr_jw_kstr(w, "description", CELL(c->description));
    jr_jw_kint_text(w, "module_id", CELL(c->module_id));
    jr_jw_kstr(w, "module_name", CELL(c->module_name));
    jr_jw_kstr(w, "ai_status", CELL(c->ai_status));
    jr_jw_kstr(w, "ai_checked_at", CELL(c->ai_checked_at));
    jr_jw_kstr(w, "ai_error", CELL(c->ai_error));
    jr_jw_kstr(w, "description_original", CELL(c->description_original));
    jr_jw_kint_text(w, "files_count", CELL(c->files_count));
    jr_jw_kbool(w, "has_photo", photo && strcmp(photo, "0") != 0);
    jr_jw_kstr(w, "created_at", CELL(c->created_at));
    jr_jw_kstr(w, "updated_at", CELL(c->updated_at));
    jr_jw_kint_text(w, "created_by", CELL(c->created_by));
    jr_jw_kint_text(w, "created_by_key", CELL(c->created_by_key));
    jr_jw_obj_end(w);
#undef CELL
}

/* The writer of a streamed entry list: column indexes resolved on the first row. With
 * ctx set, the rows carry the list's total (JR_Q_ENTRIES_PAGE_PLAIN): the envelope begins
 * with the first row, which brings it. */
typedef struct {
    jr_jw_t *w;
    entry_cols_t cols;
    int seen;
    jr_page_t *page;
    apr_pool_t *pool;
    jr_ctx_t *ctx;
    jr_result_t *res;
    long long total;
} entry_stream_t;

static int stream_entry(void *baton, const jr_rows_t *shape, const char *const *row)
{
    entry_stream_t *es = baton;
    const char *id;
    if (!es->seen++) {
        entry_cols(shape, &es->cols);
        if (es->ctx) {
            int t = jr_rows_col(shape, "total");
            es->total = t >= 0 && row[t] ? apr_atoi64(row[t]) : 0;
            jr_jw_list_begin(es->ctx, es->w, es->res, es->total);
        }
    }
    id = es->cols.id >= 0 ? row[es->cols.id] : NULL;
    if (!jr_page_take(es->pool, es->page, &id)) {
        return 1; /* the row after the page: there is more */
    }
    entry_write(es->w, row, &es->cols);
    return 0;
}

/* The first row of rows (ENTRY_COLS or ENTRY_RETURNING) as the answer. */
static int reply_row(jr_ctx_t *ctx, jr_result_t *res, int status, const jr_rows_t *rows)
{
    entry_cols_t cols;
    jr_jw_t w;
    jr_jw_init(&w, ctx->pool, 1024);
    entry_cols(rows, &cols);
    entry_write(&w, rows->rows[0], &cols);
    return jr_reply_jw(res, status, &w);
}

static int reply_entry(jr_ctx_t *ctx, jr_result_t *res, int status, long long id)
{
    jr_rows_t *rows;
    int st;
    if ((st = jr_entry_load(ctx, res, id, JR_LOAD_ROW, &rows)) != 0) {
        return st;
    }
    return reply_row(ctx, res, status, rows);
}

/* A create's or update's answer, the row its write returned: the road's transaction ends
 * first (a failed commit answers 503), so the answer is written without the write lock. The
 * worker, woken by the commit, may move the entry on at once; the answer still shows what this
 * request wrote (a new check as pending). */
static int reply_written(jr_ctx_t *ctx, jr_result_t *res, int status, const jr_rows_t *rows)
{
    return jr_road_commit(ctx, res) == 0 ? reply_row(ctx, res, status, rows) : res->status;
}

/* A date filter's bound: the start of the day (from) or of the next day (to), in the
 * configured time zone. 0 on success, -1 with a 400 in res. */
static int date_bound(jr_ctx_t *ctx, jr_result_t *res, const char *name, int upper,
                      const char **out)
{
    const char *v = apr_table_get(ctx->query, name), *start, *end;
    *out = NULL;
    if (!v || !*v) {
        return 0;
    }
    if (jr_tz_day_bounds(ctx->pool, jr_setting_timezone(ctx), v, &start, &end) != 0) {
        jr_err_invalid(ctx, res, name, "%s must be a date YYYY-MM-DD", name);
        return -1;
    }
    *out = upper ? end : start;
    return 0;
}

static void sync_write(apr_pool_t *p, jr_jw_t *w, const jr_rows_t *r, int i)
{
    entry_cols_t cols;
    entry_cols(r, &cols);
    entry_write(w, r->rows[i], &cols);
}

static const jr_sync_def_t entries_sync = {"entries", "entry", JR_Q_ENTRIES_SYNC, sync_write};

/* The filters of the entry list, as its statements take them (NULL: none): group, branch,
 * module, student id, student name, from, to. Non-zero (the answer in res) when one is bad. */
static int entry_filters(jr_ctx_t *ctx, jr_result_t *res, const char **f)
{
    static const char *const ids[] = {"group_id", "branch_id", "module_id", "student_id"};
    const char *name = apr_table_get(ctx->query, "student");
    long long id;
    int i;
    for (i = 0; i < 4; ++i) {
        if ((id = jr_query_id(ctx, res, ids[i])) < 0) {
            return 1;
        }
        f[i] = id ? jr_i64(ctx->pool, id) : NULL;
    }
    /* lower() on both sides: each database folds case the same way for both. */
    f[4] = name && *name ? jr_trim(ctx->pool, name) : NULL;
    return date_bound(ctx, res, "date_from", 0, &f[5]) != 0 ||
           date_bound(ctx, res, "date_to", 1, &f[6]) != 0;
}

/* The total of the hot path on its own, and the envelope's beginning. Non-zero (the answer
 * in res) on a database failure. */
static int list_total(jr_ctx_t *ctx, jr_result_t *res, entry_stream_t *es)
{
    const char *scope = ctx->who.branch_json;
    jr_rows_t *count;
    if (jr_db_select(ctx->db, ctx->pool, JR_Q_ENTRIES_TOTAL_PLAIN, &count,
                     JR_ARGS(scope, scope)) != APR_SUCCESS) {
        jr_err_db(ctx, res);
        return -1;
    }
    es->total = jr_rows_int(count, 0, "n", 0);
    jr_jw_list_begin(ctx, es->w, res, es->total);
    return 0;
}

/* The hot path, no filter. On PostgreSQL the page brings its total (one round trip instead
 * of two), and the total is read on its own only when the page is empty. SQLite has no round
 * trip to save, and a total on every row would be made text once per row: it counts first. */
static int list_plain(jr_ctx_t *ctx, jr_result_t *res, entry_stream_t *es)
{
    apr_pool_t *p = ctx->pool;
    const char *scope = ctx->who.branch_json;
    jr_page_t *pg = es->page;
    const char *key = jr_page_key(pg, 0), *fetch = jr_page_fetch(p, pg);
    const char *offset = jr_i64(p, pg->offset);
    int with_total = ctx->db->dialect == JR_DB_PGSQL;
    if (!with_total && list_total(ctx, res, es) != 0) {
        return res->status;
    }
    es->ctx = with_total ? ctx : NULL;
    es->res = res;
    if ((with_total || es->total > 0) &&
        (with_total ? jr_db_select_each(ctx->db, p, JR_Q_ENTRIES_PAGE_PLAIN, stream_entry, es,
                                        JR_ARGS(scope, scope, scope, scope, key, fetch, offset))
                    : jr_db_select_each(ctx->db, p, JR_Q_ENTRIES_LIST_PLAIN, stream_entry, es,
                                        JR_ARGS(scope, scope, key, fetch, offset))) !=
            APR_SUCCESS) {
        return jr_err_db(ctx, res);
    }
    if (with_total && !es->seen && list_total(ctx, res, es) != 0) {
        return res->status;
    }
    return jr_jw_list_end(ctx, es->w, res, es->total, pg->limit, pg->offset);
}

int jr_op_entries_list(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    const char *f[7], *q = apr_table_get(ctx->query, "search");
    const char *scope = ctx->who.branch_json, *ids;
    long long total;
    jr_rows_t *count;
    jr_jw_t w;
    jr_page_t pg;
    entry_stream_t es = {&w, {0}, 0, &pg, p, NULL, NULL, 0};
    jr_search_t sr = {NULL, NULL, 0};

    if (jr_sync_wanted(ctx)) {
        return jr_sync_list(ctx, res, &entries_sync);
    }
    if (entry_filters(ctx, res, f) != 0 ||
        jr_page_begin(ctx, res, "entries", 1, JR_LIMIT_DEFAULT, &pg) != 0) {
        return res->status;
    }
    if (q && *q) {
        jr_search_term(p, ctx->db->dialect, jr_trim(p, q), &sr);
    }
    jr_jw_init(&w, p, 512 * (size_t)(pg.limit + 1));
    if (!f[0] && !f[1] && !f[2] && !f[3] && !f[4] && !f[5] && !f[6] && !sr.like) {
        return list_plain(ctx, res, &es);
    }
#define ENTRY_ARGS                                                                                 \
    f[0], f[0], f[1], f[1], f[2], f[2], f[3], f[3], f[4], f[4], f[5], f[5], f[6], f[6], sr.first,  \
        sr.like, sr.like, scope, scope
#define PAGE_ARGS jr_page_key(&pg, 0), jr_page_fetch(p, &pg), jr_i64(p, pg.offset)
    /* An indexed search reads its total and the ids of its matches at once (the index is read
     * once), its page by those ids. */
    if ((sr.indexed ? jr_db_select(ctx->db, p, JR_Q_ENTRIES_SEARCH, &count, JR_ARGS(ENTRY_ARGS))
                    : jr_db_select(ctx->db, p, JR_Q_ENTRIES_COUNT, &count,
                                   JR_ARGS(ENTRY_ARGS))) != APR_SUCCESS) {
        return jr_err_db(ctx, res);
    }
    /* Rows go from the statement straight into the writer, and from there to the client. */
    total = jr_rows_int(count, 0, "n", 0);
    ids = sr.indexed ? jr_search_page_ids(p, jr_rows_get(count, 0, "ids"), jr_page_key(&pg, 0),
                                          pg.offset, pg.limit + 1)
                     : NULL;
    jr_jw_list_begin(ctx, &w, res, total);
    /* Nothing matches: no page to read (a search for nothing costs one index lookup). */
    if (total > 0 &&
        (sr.indexed ? jr_db_select_each(ctx->db, p, JR_Q_ENTRIES_BY_IDS, stream_entry, &es,
                                        JR_ARGS(ids))
                    : jr_db_select_each(ctx->db, p, JR_Q_ENTRIES_LIST, stream_entry, &es,
                                        JR_ARGS(ENTRY_ARGS, PAGE_ARGS))) != APR_SUCCESS) {
        return jr_err_db(ctx, res);
    }
#undef ENTRY_ARGS
#undef PAGE_ARGS
    return jr_jw_list_end(ctx, &w, res, total, pg.limit, pg.offset);
}

int jr_op_entries_get(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    return reply_entry(ctx, res, 200, jr_param_id(ctx, "id"));
}

/* The open job of an entry whose status is already pending, and its ai_status event: from
 * written, the row the caller's write returned (queuing a job changes no entry), or read
 * when it is NULL. */
static apr_status_t queue_job(jr_ctx_t *ctx, long long id, long long branch,
                              const jr_rows_t *written)
{
    if (jr_ai_queue(ctx, "entry", id, branch) != APR_SUCCESS) {
        return APR_EGENERAL;
    }
    return written ? jr_event_entry_row(ctx, "ai_status", written)
                   : jr_event_entry(ctx, "ai_status", id);
}

/* The AI check of an entry: status pending (an ai_status event) and an open job. */
static apr_status_t queue_check(jr_ctx_t *ctx, long long id, long long branch)
{
    if (jr_db_exec(ctx->db, ctx->pool, JR_Q_ENTRY_SET_AI_STATUS, NULL,
                   JR_ARGS("pending", jr_i64(ctx->pool, id))) != APR_SUCCESS) {
        return APR_EGENERAL;
    }
    return queue_job(ctx, id, branch, NULL);
}

/* The validated values of a create or update: every check against the database. */
typedef struct {
    const char *student_name;
    long long group_id, branch_id, module_id;
    const char *description;
} entry_input_t;

static int check_entry(jr_ctx_t *ctx, jr_result_t *res, entry_input_t *e, long long old_group)
{
    jr_rows_t *rows;
    /* An entry keeps its group even while that group is in the trash; a new group must be
     * live and visible. */
    if (e->group_id != old_group) {
        if (jr_group_load(ctx, res, e->group_id, JR_LOAD_REF, &rows) != 0) {
            return -1;
        }
        e->branch_id = jr_rows_int(rows, 0, "branch_id", 0);
    }
    if (e->module_id && jr_module_load(ctx, res, e->module_id, JR_LOAD_REF, NULL) != 0) {
        return -1;
    }
    return 0;
}

static int checks_on(jr_ctx_t *ctx)
{
    return jr_setting_on(ctx, JR_SETTING_ENTRY_AI_ENABLED);
}

int jr_op_entries_create(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    const char *now = jr_now_iso(p);
    entry_input_t e;
    jr_rows_t *rows;
    long long id;
    int checks;

    memset(&e, 0, sizeof(e));
    e.student_name = jr_json_trimmed(p, in, "student_name");
    e.group_id = jr_json_int(in, "group_id", 0);
    e.module_id = jr_json_int(in, "module_id", 0);
    e.description = jr_json_str(in, "description", "");
    if (check_entry(ctx, res, &e, 0) != 0) {
        return res->status;
    }
    /* A checked entry is written pending at once: no second version of the row (an UPDATE
     * and its WAL) in the transaction, and the settings are read before it begins. */
    checks = checks_on(ctx);
    if (jr_db_select(ctx->db, p, JR_Q_ENTRY_INSERT, &rows,
                     JR_ARGS(e.student_name, jr_i64(p, e.group_id),
                             jr_student_key(p, e.student_name), jr_i64(p, e.group_id),
                             jr_i64(p, e.branch_id), e.description, jr_opt_i64(p, e.module_id),
                             checks ? "pending" : NULL, now, now, jr_opt_i64(p, ctx->who.user_id),
                             jr_opt_i64(p, ctx->who.key_id))) != APR_SUCCESS ||
        rows->nrows != 1 || (id = jr_rows_int(rows, 0, "id", 0)) <= 0 ||
        jr_event_entry_row(ctx, "entry.created", rows) != APR_SUCCESS ||
        (checks && queue_job(ctx, id, e.branch_id, rows) != APR_SUCCESS) ||
        jr_audit(ctx, "create", "entry", id, jr_json_own(p, jr_json_keys(in))) != APR_SUCCESS) {
        return jr_err_write(ctx, res, NULL);
    }
    return reply_written(ctx, res, 201, rows);
}

int jr_op_entries_update(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    long long id = jr_param_id(ctx, "id");
    const char *status;
    json_t *mod = json_object_get(in, "module_id");
    entry_input_t e;
    jr_rows_t *rows;
    int check, st;

    if ((st = jr_entry_load(ctx, res, id, JR_LOAD_ROW, &rows)) != 0) {
        return st;
    }
    memset(&e, 0, sizeof(e));
    e.student_name = jr_json_trimmed(p, in, "student_name");
    e.student_name = e.student_name ? e.student_name : jr_rows_get(rows, 0, "student_name");
    e.group_id = jr_json_int(in, "group_id", jr_rows_int(rows, 0, "group_id", 0));
    e.module_id = mod ? (json_is_null(mod) ? 0 : json_integer_value(mod))
                      : jr_rows_int(rows, 0, "module_id", 0);
    e.description = json_object_get(in, "description") ? jr_json_str(in, "description", "")
                                                      : jr_rows_get(rows, 0, "description");
    e.branch_id = jr_rows_int(rows, 0, "branch_id", 0);
    if (check_entry(ctx, res, &e, jr_rows_int(rows, 0, "group_id", 0)) != 0) {
        return res->status;
    }
    /* A changed text is checked again: written pending by the update itself, the settings
     * read before the transaction begins. */
    check = strcmp(e.description, jr_rows_get(rows, 0, "description")) != 0 && checks_on(ctx);
    status = check ? "pending" : jr_rows_get(rows, 0, "ai_status");
    if (jr_db_select(ctx->db, p, JR_Q_ENTRY_UPDATE, &rows,
                     JR_ARGS(e.student_name, jr_i64(p, e.group_id),
                             jr_student_key(p, e.student_name), jr_i64(p, e.group_id),
                             jr_i64(p, e.branch_id), e.description, jr_opt_i64(p, e.module_id),
                             status, jr_now_iso(p), jr_i64(p, id))) != APR_SUCCESS) {
        return jr_err_write(ctx, res, NULL);
    }
    if (rows->nrows != 1) { /* deleted since it was read */
        return jr_err_not_found(ctx, res, "entry");
    }
    if (jr_jobs_follow(ctx, "entry", id, e.branch_id) != APR_SUCCESS ||
        (check && queue_job(ctx, id, e.branch_id, rows) != APR_SUCCESS) ||
        jr_audit(ctx, "update", "entry", id, jr_json_own(p, jr_json_keys(in))) != APR_SUCCESS) {
        return jr_err_write(ctx, res, NULL);
    }
    return reply_written(ctx, res, 200, rows);
}

int jr_op_entries_delete(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    long long id = jr_param_id(ctx, "id");
    const char *now = jr_now_iso(p);
    int n = 0, st;

    if ((st = jr_entry_load(ctx, res, id, 0, NULL)) != 0) {
        return st;
    }
    if (jr_db_exec(ctx->db, p, JR_Q_ENTRY_SOFT_DELETE, &n,
                   JR_ARGS(now, jr_opt_i64(p, ctx->who.user_id), now, jr_i64(p, id))) !=
            APR_SUCCESS ||
        (n == 1 && jr_audit(ctx, "delete", "entry", id, NULL) != APR_SUCCESS)) {
        return jr_err_write(ctx, res, NULL);
    }
    if (n != 1) {
        return jr_err_not_found(ctx, res, "entry");
    }
    return jr_reply_ok(res, p);
}

int jr_op_entries_recheck(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    long long id = jr_param_id(ctx, "id");
    jr_rows_t *rows;
    int st;
    if ((st = jr_entry_load(ctx, res, id, 0, &rows)) != 0) {
        return st;
    }
    if (queue_check(ctx, id, jr_rows_int(rows, 0, "branch_id", 0)) != APR_SUCCESS ||
        jr_audit(ctx, "recheck", "entry", id, NULL) != APR_SUCCESS) {
        return jr_err_write(ctx, res, NULL);
    }
    return jr_reply_ok(res, p);
}

/* Returns an entry rewritten by the AI check to the tutor's text (description_original
 * stays, as for lesson reports). */
int jr_op_entries_ai_revert(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    long long id = jr_param_id(ctx, "id");
    jr_rows_t *rows;
    int n = 0, st;
    if ((st = jr_entry_load(ctx, res, id, JR_LOAD_ROW, &rows)) != 0) {
        return st;
    }
    if (!jr_rows_get(rows, 0, "description_original")) {
        return jr_err_conflict(ctx, res,
                               "the entry has no original text: the AI did not rewrite it");
    }
    if (jr_db_exec(ctx->db, p, JR_Q_ENTRY_AI_REVERT, &n, JR_ARGS(jr_now_iso(p), jr_i64(p, id))) !=
            APR_SUCCESS ||
        (n == 1 && (jr_event_entry(ctx, "ai_status", id) != APR_SUCCESS ||
                    jr_audit(ctx, "ai_revert", "entry", id,
                             jr_json_own(p, json_pack("[s]", "description"))) != APR_SUCCESS))) {
        return jr_err_write(ctx, res, NULL);
    }
    /* n is 0 only when the entry went to the trash meanwhile: the answer is then 404. */
    return reply_entry(ctx, res, 200, id);
}
