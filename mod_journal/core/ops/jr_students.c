/* Students: the roster of a group (and so of a branch). */
#include <apr_strings.h>

#include "jr_cursor.h"
#include "jr_groups.h"
#include "jr_json.h"
#include "jr_jw.h"
#include "jr_search.h"
#include "jr_students.h"
#include "jr_stmts.h"
#include "jr_util.h"

#define ID_MAX 9007199254740991LL

const jr_field_t jr_fields_student_create[] = {
    {.name = "name", .type = JR_F_STRING, .required = 1, .trim = 1, .min = 1, .max = 200},
    {.name = "group_id", .type = JR_F_INT, .required = 1, .min = 1, .max = ID_MAX},
    {.name = "notes", .type = JR_F_STRING, .nullable = 1, .max = 5000},
    {NULL},
};

const jr_field_t jr_fields_student_update[] = {
    {.name = "name", .type = JR_F_STRING, .trim = 1, .min = 1, .max = 200},
    {.name = "group_id", .type = JR_F_INT, .min = 1, .max = ID_MAX},
    {.name = "notes", .type = JR_F_STRING, .nullable = 1, .max = 5000},
    {NULL},
};

const jr_field_spec_t jr_fields_students[] = {
    {"POST /api/students", jr_fields_student_create},
    {"PUT /api/students/:id", jr_fields_student_update},
    {NULL, NULL},
};

/* The key a student name is matched by: trimmed, lower-case (ASCII). */
const char *jr_student_key(apr_pool_t *p, const char *name)
{
    return jr_ascii_lower(p, jr_trim(p, name));
}

static void student_write(jr_jw_t *w, const jr_rows_t *r, int i)
{
    jr_jw_obj(w);
    jr_jw_kint_text(w, "id", jr_rows_get(r, i, "id"));
    jr_jw_kstr(w, "name", jr_rows_get(r, i, "name"));
    jr_jw_kint_text(w, "group_id", jr_rows_get(r, i, "group_id"));
    jr_jw_kint_text(w, "branch_id", jr_rows_get(r, i, "branch_id"));
    jr_jw_kstr(w, "notes", jr_rows_get(r, i, "notes"));
    jr_jw_kstr(w, "created_at", jr_rows_get(r, i, "created_at"));
    jr_jw_kstr(w, "updated_at", jr_rows_get(r, i, "updated_at"));
    jr_jw_kint_text(w, "created_by", jr_rows_get(r, i, "created_by"));
    jr_jw_obj_end(w);
}

/* A student is no soft-deleted record: it goes with its group, which STUDENT_GET requires live. */
static const jr_kind_t student_kind = {"student", NULL, JR_Q_STUDENT_GET, JR_Q_STUDENT_GET,
                                       "branch_id", 0};

int jr_student_load(jr_ctx_t *ctx, jr_result_t *res, long long id, unsigned flags, jr_rows_t **row)
{
    return jr_load(ctx, res, &student_kind, id, flags, row);
}

static int reply_student(jr_ctx_t *ctx, jr_result_t *res, int status, long long id)
{
    jr_rows_t *rows;
    jr_jw_t w;
    int st;
    if ((st = jr_student_load(ctx, res, id, JR_LOAD_ROW, &rows)) != 0) {
        return st;
    }
    jr_jw_init(&w, ctx->pool, 512);
    student_write(&w, rows, 0);
    return jr_reply_jw(res, status, &w);
}

static void sync_write(apr_pool_t *p, jr_jw_t *w, const jr_rows_t *r, int i)
{
    student_write(w, r, i);
}

static const jr_sync_def_t students_sync = {"students", "student", JR_Q_STUDENTS_SYNC, sync_write};

int jr_op_students_list(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    long long limit, offset, group = jr_query_id(ctx, res, "group_id"), branch;
    const char *g, *b, *q = apr_table_get(ctx->query, "search");
    const char *scope = ctx->who.branch_json, *k0, *k1;
    jr_search_t sr = {NULL, NULL, 0};
    static const char *const keys[] = {"name_key", "id"};
    jr_rows_t *rows, *count;
    jr_page_t pg;
    jr_jw_t w;
    int i;

    if (jr_sync_wanted(ctx)) {
        return jr_sync_list(ctx, res, &students_sync);
    }
    if (group < 0 || (branch = jr_query_id(ctx, res, "branch_id")) < 0 ||
        jr_page_begin(ctx, res, "students", 2, JR_LIMIT_DEFAULT, &pg) != 0) {
        return res->status;
    }
    limit = pg.limit;
    offset = pg.offset;
    k0 = jr_page_key(&pg, 0);
    k1 = jr_page_key(&pg, 1);
    g = group ? jr_i64(p, group) : NULL;
    b = branch ? jr_i64(p, branch) : NULL;
    if (q && *q) {
        jr_search_term(p, ctx->db->dialect, jr_student_key(p, q), &sr);
    }
    if (jr_db_select(ctx->db, p, sr.indexed ? JR_Q_STUDENTS_SEARCH : JR_Q_STUDENTS_LIST, &rows,
                     JR_ARGS(g, g, b, b, sr.first, sr.like, scope, scope, k0, k0, k0, k1,
                             jr_page_fetch(p, &pg), jr_i64(p, offset))) != APR_SUCCESS ||
        jr_db_select(ctx->db, p, sr.indexed ? JR_Q_STUDENTS_SEARCH_COUNT : JR_Q_STUDENTS_COUNT,
                     &count, JR_ARGS(g, g, b, b, sr.first, sr.like, scope, scope)) != APR_SUCCESS) {
        return jr_err_db(ctx, res);
    }
    jr_jw_init(&w, p, 256 * (size_t)(rows->nrows + 1));
    jr_jw_list_begin(ctx, &w, res, jr_rows_int(count, 0, "n", 0));
    for (i = 0; i < rows->nrows && jr_page_take_row(p, &pg, rows, i, keys); ++i) {
        student_write(&w, rows, i);
    }
    return jr_jw_list_end(ctx, &w, res, jr_rows_int(count, 0, "n", 0), limit, offset);
}

int jr_op_students_get(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    return reply_student(ctx, res, 200, jr_param_id(ctx, "id"));
}

int jr_op_students_create(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    const char *name, *now = jr_now_iso(p);
    long long group, id;
    jr_rows_t *rows;
    int st;

    name = jr_json_trimmed(p, in, "name");
    group = jr_json_int(in, "group_id", 0);
    if ((st = jr_group_load(ctx, res, group, JR_LOAD_REF, NULL)) != 0) {
        return st;
    }
    if (jr_db_select(ctx->db, p, JR_Q_STUDENT_INSERT, &rows,
                     JR_ARGS(name, jr_student_key(p, name), jr_i64(p, group),
                             jr_json_str(in, "notes", ""), now, now,
                             jr_opt_i64(p, ctx->who.user_id))) !=
            APR_SUCCESS ||
        rows->nrows != 1 ||
        jr_audit(ctx, "create", "student", (id = jr_rows_int(rows, 0, "id", 0)),
                 jr_json_own(p, jr_json_keys(in))) != APR_SUCCESS) {
        return jr_err_write(ctx, res, NULL);
    }
    return reply_student(ctx, res, 201, id);
}

int jr_op_students_update(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    long long id = jr_param_id(ctx, "id"), group;
    const char *name, *notes;
    jr_rows_t *rows;
    int st;

    if ((st = jr_student_load(ctx, res, id, JR_LOAD_ROW, &rows)) != 0) {
        return st;
    }
    name = jr_json_trimmed(p, in, "name");
    name = name ? name : jr_rows_get(rows, 0, "name");
    notes = json_object_get(in, "notes") ? jr_json_str(in, "notes", "") : jr_rows_get(rows, 0, "notes");
    group = jr_json_int(in, "group_id", jr_rows_int(rows, 0, "group_id", 0));
    if ((st = jr_group_load(ctx, res, group, JR_LOAD_REF, NULL)) != 0) {
        return st;
    }
    if (jr_db_exec(ctx->db, p, JR_Q_STUDENT_UPDATE, NULL,
                   JR_ARGS(name, jr_student_key(p, name), jr_i64(p, group), notes, jr_now_iso(p),
                           jr_i64(p, id))) != APR_SUCCESS ||
        jr_audit(ctx, "update", "student", id, jr_json_own(p, jr_json_keys(in))) != APR_SUCCESS) {
        return jr_err_write(ctx, res, NULL);
    }
    return reply_student(ctx, res, 200, id);
}

int jr_op_students_delete(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    long long id = jr_param_id(ctx, "id");
    int st;
    if ((st = jr_student_load(ctx, res, id, 0, NULL)) != 0) {
        return st;
    }
    /* Entries keep their student_name; their link to the roster is cleared (FK). */
    if (jr_db_exec(ctx->db, p, JR_Q_STUDENT_DELETE, NULL, JR_ARGS(jr_i64(p, id))) != APR_SUCCESS ||
        jr_audit(ctx, "delete", "student", id, NULL) != APR_SUCCESS) {
        return jr_err_write(ctx, res, NULL);
    }
    return jr_reply_ok(res, p);
}
