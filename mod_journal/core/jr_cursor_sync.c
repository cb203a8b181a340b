/* Sync pages: records and tombstones after a position (updated_at, id), up to the settle time.
 * Records come from the list's own statement, records deleted for good from deleted_records;
 * the two runs are merged by (time, id). */
#include <string.h>

#include <apr_strings.h>

#include "jr_cursor.h"
#include "jr_error_codes.h"
#include "jr_json.h"
#include "jr_stmts.h"
#include "jr_util.h"

/* Where a sync continues from, and what it includes. */
typedef struct {
    const char *at; /* UTC "YYYY-MM-DDTHH:MM:SSZ" */
    const char *id; /* decimal; "0" before every id of that second */
    int deleted;    /* include_deleted */
    long long limit;
} sync_pos_t;

static const char *encode(apr_pool_t *p, const char *list, const sync_pos_t *pos)
{
    jr_jw_t w;
    jr_jw_init(&w, p, 128);
    jr_jw_arr(&w);
    jr_jw_str(&w, "s");
    jr_jw_str(&w, list);
    jr_jw_int(&w, pos->deleted);
    jr_jw_str(&w, pos->at);
    jr_jw_str(&w, pos->id);
    jr_jw_arr_end(&w);
    return jr_b64url_encode(p, jr_jw_done(&w, NULL));
}

/* 1 when the cursor parameter is a sync cursor (its JSON starts with ["s"). */
static int sync_cursor(const char *c)
{
    return c && !strncmp(c, "WyJzIi", 6); /* base64 of ["s", */
}

int jr_sync_wanted(jr_ctx_t *ctx)
{
    return ctx->query && (apr_table_get(ctx->query, "updated_since") ||
                          sync_cursor(apr_table_get(ctx->query, "cursor")));
}

static int refuse(jr_ctx_t *ctx, jr_result_t *res, const char *msg)
{
    jr_fail(res, ctx->pool, 400, "%s", msg);
    return -1;
}

/* Only limit, cursor, updated_since and include_deleted go with a sync. */
static int other_filter(jr_ctx_t *ctx, jr_result_t *res)
{
    const apr_array_header_t *arr = apr_table_elts(ctx->query);
    const apr_table_entry_t *e = (const apr_table_entry_t *)arr->elts;
    int i;
    for (i = 0; i < arr->nelts; ++i) {
        if (strcmp(e[i].key, "limit") && strcmp(e[i].key, "cursor") &&
            strcmp(e[i].key, "updated_since") && strcmp(e[i].key, "include_deleted")) {
            jr_fail(res, ctx->pool, 400,
                    "%s cannot be combined with updated_since (a sync takes limit, cursor and "
                    "include_deleted only)",
                    e[i].key);
            return -1;
        }
    }
    return 0;
}

static int from_cursor(jr_ctx_t *ctx, jr_result_t *res, const char *list, const char *cursor,
                       sync_pos_t *pos)
{
    apr_pool_t *p = ctx->pool;
    const char *text = jr_b64url_decode(p, cursor), *err = NULL;
    json_t *j = text ? jr_json_parse(p, text, strlen(text), &err) : NULL;
    apr_time_t t;
    long long id;
    if (apr_table_get(ctx->query, "updated_since") || apr_table_get(ctx->query, "include_deleted")) {
        return refuse(ctx, res, "a sync cursor holds updated_since and include_deleted: send "
                                "the cursor alone");
    }
    if (!json_is_array(j) || json_array_size(j) != 5 ||
        !json_is_string(json_array_get(j, 1)) ||
        strcmp(json_string_value(json_array_get(j, 1)), list) != 0 ||
        !json_is_integer(json_array_get(j, 2)) || !json_is_string(json_array_get(j, 3)) ||
        !json_is_string(json_array_get(j, 4)) ||
        jr_parse_iso_time(json_string_value(json_array_get(j, 3)), &t) != 0 ||
        jr_parse_int64(json_string_value(json_array_get(j, 4)), 0, 9007199254740991LL, &id) !=
            0) {
        refuse(ctx, res, "cursor is not a sync cursor of this list");
        jr_error_code(res, "invalid_cursor");
        return -1;
    }
    pos->deleted = json_integer_value(json_array_get(j, 2)) != 0;
    pos->at = jr_iso_time(p, t);
    pos->id = jr_i64(p, id);
    return 0;
}

/* The position and options of the request: 0, or -1 with a 400 in res. */
static int sync_params(jr_ctx_t *ctx, jr_result_t *res, const char *list, sync_pos_t *pos)
{
    const char *since = apr_table_get(ctx->query, "updated_since");
    const char *incl = apr_table_get(ctx->query, "include_deleted");
    const char *cursor = apr_table_get(ctx->query, "cursor");
    long long offset;
    apr_time_t t;
    if (other_filter(ctx, res) != 0 ||
        jr_list_params(ctx, res, &pos->limit, &offset) != 0) {
        return -1;
    }
    if (cursor) {
        return from_cursor(ctx, res, list, cursor, pos);
    }
    if (jr_parse_iso_time(since, &t) != 0) {
        return refuse(ctx, res, "updated_since must be an ISO 8601 time with a zone, e.g. "
                                "2026-11-21T12:00:00Z");
    }
    if (incl && strcmp(incl, "0") && strcmp(incl, "1")) {
        return refuse(ctx, res, "include_deleted must be 0 or 1");
    }
    /* Times are kept to the second: a fraction counts from its whole second. */
    pos->at = jr_iso_time(ctx->pool, t);
    pos->id = "0";
    pos->deleted = incl && !strcmp(incl, "1");
    return 0;
}

static apr_status_t run(jr_ctx_t *ctx, jr_stmt_id_t id, const char *entity,
                        const sync_pos_t *pos, const char *until, jr_rows_t **out)
{
    apr_pool_t *p = ctx->pool;
    const char *scope = ctx->who.branch_json, *n = jr_i64(p, pos->limit + 1);
    const char *del = pos->deleted ? "1" : "0";
    if (entity) {
        return jr_db_select(ctx->db, p, id, out,
                            JR_ARGS(entity, scope, scope, pos->at, pos->id, until, del, n));
    }
    return jr_db_select(ctx->db, p, id, out,
                        JR_ARGS(scope, scope, pos->at, pos->id, until, del, n));
}

/* -1, 0, 1: row a of ra against row b of rb by (sync_at, id). */
static int order(const jr_rows_t *ra, int a, const jr_rows_t *rb, int b)
{
    int c = strcmp(jr_rows_get(ra, a, "sync_at"), jr_rows_get(rb, b, "sync_at"));
    long long x = jr_rows_int(ra, a, "id", 0), y = jr_rows_int(rb, b, "id", 0);
    return c ? c : (x > y) - (x < y);
}

static void write_item(apr_pool_t *p, jr_jw_t *w, const jr_sync_def_t *def, const jr_rows_t *r,
                       int i)
{
    const char *gone = jr_rows_get(r, i, "sync_deleted_at");
    if (!gone) {
        def->write(p, w, r, i);
        return;
    }
    jr_jw_obj(w);
    jr_jw_kint(w, "id", jr_rows_int(r, i, "id", 0));
    jr_jw_kstr(w, "deleted_at", gone);
    jr_jw_obj_end(w);
}

/* Writes up to limit items merged from the records and the tombstones; the position of the
 * last one in *pos; 1 when more remain. */
static int merge(apr_pool_t *p, jr_jw_t *w, const jr_sync_def_t *def, const jr_rows_t *recs,
                 const jr_rows_t *tombs, sync_pos_t *pos, int *count)
{
    int i = 0, j = 0;
    *count = 0;
    while ((i < recs->nrows || j < tombs->nrows) && *count < pos->limit) {
        int take_rec = j >= tombs->nrows || (i < recs->nrows && order(recs, i, tombs, j) < 0);
        const jr_rows_t *r = take_rec ? recs : tombs;
        int k = take_rec ? i++ : j++;
        write_item(p, w, def, r, k);
        pos->at = jr_rows_get(r, k, "sync_at");
        pos->id = jr_rows_get(r, k, "id");
        ++*count;
    }
    return i < recs->nrows || j < tombs->nrows;
}

apr_status_t jr_sync_list(jr_ctx_t *ctx, jr_result_t *res, const jr_sync_def_t *def)
{
    apr_pool_t *p = ctx->pool;
    const char *until = jr_iso_time(p, apr_time_now() -
                                           apr_time_from_sec(JR_SYNC_SETTLE_SECONDS));
    static const jr_rows_t none = {0, 0, NULL, NULL};
    const jr_rows_t *tombs = &none;
    jr_rows_t *recs, *t;
    sync_pos_t pos;
    const char *cursor;
    int more, count;
    jr_jw_t w;

    if (sync_params(ctx, res, def->list, &pos) != 0) {
        return APR_SUCCESS;
    }
    if (run(ctx, def->stmt, NULL, &pos, until, &recs) != APR_SUCCESS ||
        (pos.deleted && run(ctx, JR_Q_SYNC_TOMBSTONES, def->entity, &pos, until, &t) != APR_SUCCESS)) {
        return jr_err_db(ctx, res);
    }
    if (pos.deleted) {
        tombs = t;
    }
    jr_jw_init(&w, p, 1024 * (size_t)(recs->nrows + 1));
    jr_jw_obj(&w);
    jr_jw_key(&w, "items");
    jr_jw_arr(&w);
    more = merge(p, &w, def, recs, tombs, &pos, &count);
    jr_jw_arr_end(&w);
    cursor = encode(p, def->list, &pos);
    jr_jw_kint(&w, "total", count);
    jr_jw_kint(&w, "limit", pos.limit);
    jr_jw_kint(&w, "offset", 0);
    jr_jw_kbool(&w, "has_more", more);
    jr_jw_kstr(&w, "next_cursor", cursor);
    jr_jw_obj_end(&w);
    if (more) {
        apr_table_setn(res->headers, "Link",
                       apr_pstrcat(p, "</api/v1/", def->list, "?limit=", jr_i64(p, pos.limit),
                                   "&cursor=", cursor, ">; rel=\"next\"", NULL));
    }
    return jr_reply_jw(res, 200, &w);
}
