/* Modules: topics with a number of lessons. The list is public; changes are for admins. */
#include <apr_strings.h>

#include "jr_json.h"
#include "jr_jw.h"
#include "jr_ops.h"
#include "jr_stmts.h"
#include "jr_util.h"

#define MODULE_COLS                                                                      \
    "m.id, m.name, m.lessons_count, m.description, m.created_at, m.updated_at,"          \
    " (SELECT COUNT(*) FROM entries e WHERE e.module_id = m.id AND e.deleted_at IS NULL)" \
    " AS entries_count"
#define MODULE_FILTER_SQLITE \
    " FROM modules m WHERE m.deleted_at IS NULL AND (CAST(%s AS TEXT) IS NULL OR" \
    " m.name LIKE %s ESCAPE '\\' OR m.description LIKE %s ESCAPE '\\')"
#define MODULE_FILTER_PG \
    " FROM modules m WHERE m.deleted_at IS NULL AND (CAST(%s AS TEXT) IS NULL OR" \
    " m.name ILIKE %s ESCAPE '\\' OR m.description ILIKE %s ESCAPE '\\')"
#define MODULE_PAGE " ORDER BY m.name, m.id LIMIT CAST(%s AS BIGINT) OFFSET CAST(%s AS BIGINT)"

const jr_stmt_def_t jr_stmts_modules[] = {
    {"modules_list", "SELECT " MODULE_COLS MODULE_FILTER_SQLITE MODULE_PAGE,
     "SELECT " MODULE_COLS MODULE_FILTER_PG MODULE_PAGE},
    {"modules_count", "SELECT COUNT(*) AS n" MODULE_FILTER_SQLITE,
     "SELECT COUNT(*) AS n" MODULE_FILTER_PG},
    {"module_get", "SELECT " MODULE_COLS ", m.deleted_at FROM modules m WHERE m.id = " JR_INT, NULL},
    {"module_name_taken",
     "SELECT id FROM modules WHERE name = %s AND deleted_at IS NULL AND id <> " JR_INT, NULL},
    {"module_insert",
     "INSERT INTO modules (name, lessons_count, description, created_at, updated_at)"
     " VALUES (%s, CAST(%s AS INTEGER), %s, %s, %s) RETURNING id",
     NULL},
    {"module_update",
     "UPDATE modules SET name = %s, lessons_count = CAST(%s AS INTEGER), description = %s,"
     " updated_at = %s WHERE id = " JR_INT,
     NULL},
    {"module_soft_delete",
     "UPDATE modules SET deleted_at = %s, deleted_by = " JR_INT ", updated_at = %s"
     " WHERE id = " JR_INT " AND deleted_at IS NULL",
     NULL},
    {"module_unlink_entries",
     "UPDATE entries SET module_id = NULL, updated_at = %s WHERE module_id = " JR_INT, NULL},
    {"module_restore",
     "UPDATE modules SET deleted_at = NULL, deleted_by = NULL, updated_at = %s"
     " WHERE id = " JR_INT " AND deleted_at IS NOT NULL",
     NULL},
    {"module_exists", "SELECT name FROM modules WHERE id = " JR_INT " AND deleted_at IS NULL",
     NULL},
    {NULL, NULL, NULL},
};

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

/* 1 when module id exists and is not deleted (its name in *name), 0 when not, -1 on error. */
int jr_module_exists(jr_ctx_t *ctx, long long id, const char **name)
{
    jr_rows_t *rows;
    if (jr_db_select(ctx->db, ctx->pool, "module_exists", &rows,
                     JR_ARGS(jr_i64(ctx->pool, id))) != APR_SUCCESS) {
        return -1;
    }
    if (name) {
        *name = jr_rows_get(rows, 0, "name");
    }
    return rows->nrows == 1;
}

static int reply_module(jr_ctx_t *ctx, jr_result_t *res, int status, long long id, int deleted)
{
    jr_rows_t *rows;
    jr_jw_t w;
    if (jr_db_select(ctx->db, ctx->pool, "module_get", &rows, JR_ARGS(jr_i64(ctx->pool, id))) !=
        APR_SUCCESS) {
        return jr_err_db(ctx, res);
    }
    if (rows->nrows != 1 || (jr_rows_get(rows, 0, "deleted_at") != NULL) != deleted) {
        return jr_fail(res, ctx->pool, 404, deleted ? "no deleted module with this id"
                                                    : "module not found");
    }
    if (status == 0) {
        return 0; /* existence check only: nothing answered */
    }
    jr_jw_init(&w, ctx->pool, 512);
    module_write(&w, rows, 0);
    return jr_reply_jw(res, status, &w);
}

int jr_op_modules_list(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    const char *q = apr_table_get(ctx->query, "search"), *pat = NULL;
    long long limit, offset;
    jr_rows_t *rows, *count;
    jr_jw_t w;
    int i;
    if (jr_list_params(ctx, res, &limit, &offset) != 0) {
        return res->status;
    }
    if (q && *q) {
        pat = jr_like_pattern(p, jr_trim(p, q));
    }
    if (jr_db_select(ctx->db, p, "modules_list", &rows,
                     JR_ARGS(pat, pat, pat, jr_i64(p, limit), jr_i64(p, offset))) != APR_SUCCESS ||
        jr_db_select(ctx->db, p, "modules_count", &count, JR_ARGS(pat, pat, pat)) !=
            APR_SUCCESS) {
        return jr_err_db(ctx, res);
    }
    jr_jw_init(&w, p, 256 * (size_t)(rows->nrows + 1));
    jr_jw_list_begin(ctx, &w, res, jr_rows_int(count, 0, "n", 0));
    for (i = 0; i < rows->nrows; ++i) {
        module_write(&w, rows, i);
    }
    return jr_jw_list_end(ctx, &w, res, jr_rows_int(count, 0, "n", 0), limit, offset);
}

int jr_op_modules_get(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    return reply_module(ctx, res, 200, jr_param_id(ctx, "id"), 0);
}

static int name_taken(jr_ctx_t *ctx, jr_result_t *res, const char *name, long long self)
{
    jr_rows_t *rows;
    if (jr_db_select(ctx->db, ctx->pool, "module_name_taken", &rows,
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
    if (jr_db_select(ctx->db, p, "module_insert", &rows,
                     JR_ARGS(name, jr_i64(p, jr_json_int(in, "lessons_count", 0)),
                             jr_json_str(in, "description", ""), now, now)) != APR_SUCCESS ||
        rows->nrows != 1 ||
        jr_audit(ctx, "create", "module", (id = jr_rows_int(rows, 0, "id", 0)),
                 jr_json_own(p, jr_json_keys(in))) != APR_SUCCESS) {
        return jr_err_write(ctx, res, conflict);
    }
    return reply_module(ctx, res, 201, id, 0);
}

int jr_op_modules_update(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    long long id = jr_param_id(ctx, "id");
    const char *name, *desc;
    jr_rows_t *rows;

    if (jr_db_select(ctx->db, p, "module_get", &rows, JR_ARGS(jr_i64(p, id))) != APR_SUCCESS) {
        return jr_err_db(ctx, res);
    }
    if (rows->nrows != 1 || jr_rows_get(rows, 0, "deleted_at")) {
        return jr_err_not_found(ctx, res, "module");
    }
    name = jr_json_trimmed(p, in, "name");
    name = name ? name : jr_rows_get(rows, 0, "name");
    desc = json_object_get(in, "description") ? jr_json_str(in, "description", "")
                                              : jr_rows_get(rows, 0, "description");
    if (name_taken(ctx, res, name, id)) {
        return res->status;
    }
    if (jr_db_exec(ctx->db, p, "module_update", NULL,
                   JR_ARGS(name,
                           jr_i64(p, jr_json_int(in, "lessons_count",
                                                 jr_rows_int(rows, 0, "lessons_count", 0))),
                           desc, jr_now_iso(p), jr_i64(p, id))) != APR_SUCCESS ||
        jr_audit(ctx, "update", "module", id, jr_json_own(p, jr_json_keys(in))) != APR_SUCCESS) {
        return jr_err_write(ctx, res, conflict);
    }
    return reply_module(ctx, res, 200, id, 0);
}

int jr_op_modules_delete(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    long long id = jr_param_id(ctx, "id");
    const char *now = jr_now_iso(p);
    int n = 0;

    if (reply_module(ctx, res, 0, id, 0) != 0) {
        return res->status;
    }
    /* Spec: deleting a module clears module_id on its entries (restoring does not relink). */
    if (jr_db_exec(ctx->db, p, "module_soft_delete", &n,
                   JR_ARGS(now, jr_opt_i64(p, ctx->who.user_id), now,
                           jr_i64(p, id))) != APR_SUCCESS ||
        jr_db_exec(ctx->db, p, "module_unlink_entries", NULL, JR_ARGS(now, jr_i64(p, id))) !=
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

    if (jr_db_select(ctx->db, p, "module_get", &rows, JR_ARGS(jr_i64(p, id))) != APR_SUCCESS) {
        return jr_err_db(ctx, res);
    }
    if (rows->nrows != 1 || !jr_rows_get(rows, 0, "deleted_at")) {
        return jr_fail(res, p, 404, "no deleted module with this id");
    }
    if (name_taken(ctx, res, jr_rows_get(rows, 0, "name"), id)) {
        return res->status;
    }
    if (jr_db_exec(ctx->db, p, "module_restore", NULL, JR_ARGS(jr_now_iso(p), jr_i64(p, id))) !=
            APR_SUCCESS ||
        jr_audit(ctx, "restore", "module", id, NULL) != APR_SUCCESS) {
        return jr_err_write(ctx, res, conflict);
    }
    return reply_module(ctx, res, 200, id, 0);
}
