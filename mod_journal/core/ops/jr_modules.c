/* Modules: topics with a number of lessons. The list is public; changes are for admins. */
#include <apr_strings.h>

#include "jr_cursor.h"
#include "jr_json.h"
#include "jr_jw.h"
#include "jr_modules.h"
#include "jr_search.h"
#include "jr_stmts.h"
#include "jr_util.h"

const jr_field_t jr_fields_module_create[] = {
    {.name = "name", .type = JR_F_STRING, .required = 1, .trim = 1, .min = 1, .max = 200},
    {.name = "lessons_count", .type = JR_F_INT, .min = 0, .max = 1000},
    {.name = "description", .type = JR_F_STRING, .nullable = 1, .max = 10000},
    {NULL},
};

const jr_field_t jr_fields_module_update[] = {
    {.name = "name", .type = JR_F_STRING, .trim = 1, .min = 1, .max = 200},
    {.name = "lessons_count", .type = JR_F_INT, .min = 0, .max = 1000},
    {.name = "description", .type = JR_F_STRING, .nullable = 1, .max = 10000},
    {NULL},
};

const jr_field_spec_t jr_fields_modules[] = {
    {"POST /api/modules", jr_fields_module_create},
    {"PUT /api/modules/:id", jr_fields_module_update},
    {NULL, NULL},
};

static void module_write(jr_jw_t *w, const jr_rows_t *r, int i)
{
    jr_jw_obj(w);
    jr_jw_kint_text(w, "id", jr_rows_get(r, i, "id"));
    jr_jw_kstr(w, "name", jr_rows_get(r, i, "name"));
    jr_jw_kint_text(w, "lessons_count", jr_rows_get(r, i, "lessons_count"));
    jr_jw_kstr(w, "description", jr_rows_get(r, i, "description"));
    jr_jw_kint_text(w, "entries_count", jr_rows_get(r, i, "entries_count"));
    jr_jw_kstr(w, "created_at", jr_rows_get(r, i, "created_at"));
    jr_jw_kstr(w, "updated_at", jr_rows_get(r, i, "updated_at"));
    jr_jw_obj_end(w);
}

static const jr_kind_t module_kind = {"module", "module_id", JR_Q_MODULE_GET, JR_Q_MODULE_GET,
                                      NULL, 1};

int jr_module_load(jr_ctx_t *ctx, jr_result_t *res, long long id, unsigned flags, jr_rows_t **row)
{
    return jr_load(ctx, res, &module_kind, id, flags, row);
}

static int reply_module(jr_ctx_t *ctx, jr_result_t *res, int status, long long id)
{
    jr_rows_t *rows;
    jr_jw_t w;
    int st;
    if ((st = jr_module_load(ctx, res, id, JR_LOAD_ROW, &rows)) != 0) {
        return st;
    }
    jr_jw_init(&w, ctx->pool, 512);
    module_write(&w, rows, 0);
    return jr_reply_jw(res, status, &w);
}

static void sync_write(apr_pool_t *p, jr_jw_t *w, const jr_rows_t *r, int i)
{
    module_write(w, r, i);
}

static const jr_sync_def_t modules_sync = {"modules", "module", JR_Q_MODULES_SYNC, sync_write};

int jr_op_modules_list(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    const char *q = apr_table_get(ctx->query, "search");
    static const char *const keys[] = {"name", "id"};
    jr_search_t sr = {NULL, NULL, 0};
    const char *k0, *k1;
    jr_rows_t *rows, *count;
    jr_page_t pg;
    jr_jw_t w;
    int i;
    if (jr_sync_wanted(ctx)) {
        return jr_sync_list(ctx, res, &modules_sync);
    }
    if (jr_page_begin(ctx, res, "modules", 2, JR_LIMIT_DEFAULT, &pg) != 0) {
        return res->status;
    }
    if (q && *q) {
        jr_search_term(p, ctx->db->dialect, jr_trim(p, q), &sr);
    }
    k0 = jr_page_key(&pg, 0);
    k1 = jr_page_key(&pg, 1);
    if (jr_db_select(ctx->db, p, sr.indexed ? JR_Q_MODULES_SEARCH : JR_Q_MODULES_LIST, &rows,
                     JR_ARGS(sr.first, sr.like, sr.like, k0, k0, k0, k1, jr_page_fetch(p, &pg),
                             jr_i64(p, pg.offset))) != APR_SUCCESS ||
        jr_db_select(ctx->db, p, sr.indexed ? JR_Q_MODULES_SEARCH_COUNT : JR_Q_MODULES_COUNT,
                     &count, JR_ARGS(sr.first, sr.like, sr.like)) != APR_SUCCESS) {
        return jr_err_db(ctx, res);
    }
    jr_jw_init(&w, p, 256 * (size_t)(rows->nrows + 1));
    jr_jw_list_begin(ctx, &w, res, jr_rows_int(count, 0, "n", 0));
    for (i = 0; i < rows->nrows && jr_page_take_row(p, &pg, rows, i, keys); ++i) {
        module_write(&w, rows, i);
    }
    return jr_jw_list_end(ctx, &w, res, jr_rows_int(count, 0, "n", 0), pg.limit, pg.offset);
}

int jr_op_modules_get(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    return reply_module(ctx, res, 200, jr_param_id(ctx, "id"));
}

static int name_taken(jr_ctx_t *ctx, jr_result_t *res, const char *name, long long self)
{
    jr_rows_t *rows;
    if (jr_db_select(ctx->db, ctx->pool, JR_Q_MODULE_NAME_TAKEN, &rows,
                     JR_ARGS(name, jr_i64(ctx->pool, self))) != APR_SUCCESS) {
        jr_err_db(ctx, res);
        return 1;
    }
    if (rows->nrows > 0) {
        jr_err_conflict(ctx, res, "a module named '%s' already exists", name);
        return 1;
    }
    return 0;
}

static const char *const conflict = "a module with this name already exists";

int jr_op_modules_create(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    const char *name, *now = jr_now_iso(p);
    jr_rows_t *rows;
    long long id;

    name = jr_json_trimmed(p, in, "name");
    if (name_taken(ctx, res, name, 0)) {
        return res->status;
    }
    if (jr_db_select(ctx->db, p, JR_Q_MODULE_INSERT, &rows,
                     JR_ARGS(name, jr_i64(p, jr_json_int(in, "lessons_count", 0)),
                             jr_json_str(in, "description", ""), now, now)) != APR_SUCCESS ||
        rows->nrows != 1 ||
        jr_audit(ctx, "create", "module", (id = jr_rows_int(rows, 0, "id", 0)),
                 jr_json_own(p, jr_json_keys(in))) != APR_SUCCESS) {
        return jr_err_write(ctx, res, conflict);
    }
    return reply_module(ctx, res, 201, id);
}

int jr_op_modules_update(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    long long id = jr_param_id(ctx, "id");
    const char *name, *desc;
    jr_rows_t *rows;
    int st;

    if ((st = jr_module_load(ctx, res, id, JR_LOAD_ROW, &rows)) != 0) {
        return st;
    }
    name = jr_json_trimmed(p, in, "name");
    name = name ? name : jr_rows_get(rows, 0, "name");
    desc = json_object_get(in, "description") ? jr_json_str(in, "description", "")
                                              : jr_rows_get(rows, 0, "description");
    if (name_taken(ctx, res, name, id)) {
        return res->status;
    }
    if (jr_db_exec(ctx->db, p, JR_Q_MODULE_UPDATE, NULL,
                   JR_ARGS(name,
                           jr_i64(p, jr_json_int(in, "lessons_count",
                                                 jr_rows_int(rows, 0, "lessons_count", 0))),
                           desc, jr_now_iso(p), jr_i64(p, id))) != APR_SUCCESS ||
        jr_audit(ctx, "update", "module", id, jr_json_own(p, jr_json_keys(in))) != APR_SUCCESS) {
        return jr_err_write(ctx, res, conflict);
    }
    return reply_module(ctx, res, 200, id);
}

int jr_op_modules_delete(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    long long id = jr_param_id(ctx, "id");
    const char *now = jr_now_iso(p);
    int n = 0, st;

    if ((st = jr_module_load(ctx, res, id, 0, NULL)) != 0) {
        return st;
    }
    /* Spec: deleting a module clears module_id on its entries (restoring does not relink). */
    if (jr_db_exec(ctx->db, p, JR_Q_MODULE_SOFT_DELETE, &n,
                   JR_ARGS(now, jr_opt_i64(p, ctx->who.user_id), now,
                           jr_i64(p, id))) != APR_SUCCESS ||
        jr_db_exec(ctx->db, p, JR_Q_MODULE_UNLINK_ENTRIES, NULL, JR_ARGS(now, jr_i64(p, id))) !=
            APR_SUCCESS ||
        jr_audit(ctx, "delete", "module", id, NULL) != APR_SUCCESS) {
        return jr_err_write(ctx, res, NULL);
    }
    if (n != 1) {
        return jr_err_not_found(ctx, res, "module");
    }
    return jr_reply_ok(res, p);
}

int jr_op_modules_restore(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    long long id = jr_param_id(ctx, "id");
    jr_rows_t *rows;
    int st;

    if ((st = jr_module_load(ctx, res, id, JR_LOAD_DELETED | JR_LOAD_ROW, &rows)) != 0) {
        return st;
    }
    if (name_taken(ctx, res, jr_rows_get(rows, 0, "name"), id)) {
        return res->status;
    }
    if (jr_db_exec(ctx->db, p, JR_Q_MODULE_RESTORE, NULL, JR_ARGS(jr_now_iso(p), jr_i64(p, id))) !=
            APR_SUCCESS ||
        jr_audit(ctx, "restore", "module", id, NULL) != APR_SUCCESS) {
        return jr_err_write(ctx, res, conflict);
    }
    return reply_module(ctx, res, 200, id);
}
