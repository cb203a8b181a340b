/* The query parameters each /api/v1 endpoint reads (docs/integrators.md lists the same). */
#include <string.h>

#include <apr_base64.h>
#include <apr_lib.h>
#include <apr_strings.h>

#include "jr_crypt.h"
#include "jr_cursor.h"
#include "jr_error_codes.h"
#include "jr_json.h"
#include "jr_jw.h"
#include "jr_util.h"

#define PAGE "limit,offset"
#define CURSOR PAGE ",cursor,updated_since,include_deleted"

static const struct {
    const char *method, *pattern, *names;
} v1_params[] = {
    {"GET", "/api/v1/branches", CURSOR},
    {"GET", "/api/v1/groups", "branch_id," CURSOR},
    {"GET", "/api/v1/students", "group_id,branch_id,search," CURSOR},
    {"GET", "/api/v1/modules", "search," CURSOR},
    {"GET", "/api/v1/entries",
     "group_id,branch_id,module_id,student_id,student,date_from,date_to,search," CURSOR},
    {"GET", "/api/v1/entries/:id/files", PAGE},
    {"GET", "/api/v1/lesson-reports", "group_id,branch_id,date_from,date_to," CURSOR},
    {NULL, NULL, NULL},
};

/* The parameters a route reads, comma-separated ("" for none). */
static const char *query_names(const jr_route_t *route)
{
    int i;
    for (i = 0; v1_params[i].method; ++i) {
        if (!strcmp(v1_params[i].method, route->method) &&
            !strcmp(v1_params[i].pattern, route->pattern)) {
            return v1_params[i].names;
        }
    }
    return "";
}

/* 1 when name is one of the comma-separated names. */
static int listed(const char *names, const char *name)
{
    size_t n = strlen(name);
    const char *s = names;
    while (*s) {
        const char *end = strchr(s, ',');
        size_t len = end ? (size_t)(end - s) : strlen(s);
        if (len == n && !strncmp(s, name, n)) {
            return 1;
        }
        s += len + (end ? 1 : 0);
    }
    return 0;
}

int jr_v1_query_ok(jr_ctx_t *ctx, const jr_route_t *route, jr_result_t *res)
{
    const apr_array_header_t *arr;
    const apr_table_entry_t *e;
    const char *names;
    int i;
    if (ctx->iface != JR_IF_V1 || !ctx->query) {
        return 1;
    }
    names = query_names(route);
    arr = apr_table_elts(ctx->query);
    e = (const apr_table_entry_t *)arr->elts;
    for (i = 0; i < arr->nelts; ++i) {
        if (!listed(names, e[i].key)) {
            jr_fail(res, ctx->pool, 400, "unknown query parameter '%s' (this endpoint reads: %s)",
                    e[i].key, *names ? names : "none");
            return 0;
        }
    }
    return 1;
}

/* ---- cursors ---------------------------------------------------------------------------- */

/* Text <-> base64url without padding (a cursor goes into query strings unescaped). */
const char *jr_b64url_encode(apr_pool_t *p, const char *s)
{
    char *out = apr_palloc(p, (apr_size_t)apr_base64_encode_len((int)strlen(s)));
    char *c;
    apr_base64_encode(out, s, (int)strlen(s));
    for (c = out; *c; ++c) {
        *c = *c == '+' ? '-' : *c == '/' ? '_' : *c;
        if (*c == '=') {
            *c = '\0';
            break;
        }
    }
    return out;
}

const char *jr_b64url_decode(apr_pool_t *p, const char *s)
{
    size_t n = strlen(s), i;
    char *std, *out;
    int len;
    if (n == 0 || n > 4096 || n % 4 == 1) {
        return NULL;
    }
    std = apr_palloc(p, n + 3);
    for (i = 0; i < n; ++i) {
        char c = s[i];
        if (!apr_isalnum(c) && c != '-' && c != '_') {
            return NULL;
        }
        std[i] = c == '-' ? '+' : c == '_' ? '/' : c;
    }
    while (i % 4) {
        std[i++] = '=';
    }
    std[i] = '\0';
    out = apr_palloc(p, (apr_size_t)apr_base64_decode_len(std) + 1);
    len = apr_base64_decode(out, std);
    out[len] = '\0';
    return out;
}

/* The filters a cursor belongs to: every query parameter but limit, offset and cursor,
 * sorted by name. A cursor used with other filters would continue another list. */
static const char *filters_of(jr_ctx_t *ctx)
{
    const apr_array_header_t *arr = apr_table_elts(ctx->query);
    const apr_table_entry_t *e = (const apr_table_entry_t *)arr->elts;
    apr_array_header_t *parts = apr_array_make(ctx->pool, arr->nelts, sizeof(char *));
    const char *all = "";
    int i, j;
    for (i = 0; i < arr->nelts; ++i) {
        if (strcmp(e[i].key, "limit") && strcmp(e[i].key, "offset") && strcmp(e[i].key, "cursor")) {
            APR_ARRAY_PUSH(parts, const char *) =
                apr_pstrcat(ctx->pool, jr_url_encode(ctx->pool, e[i].key), "=",
                            jr_url_encode(ctx->pool, e[i].val), NULL);
        }
    }
    for (i = 1; i < parts->nelts; ++i) { /* a handful of names: insertion sort */
        const char *x = APR_ARRAY_IDX(parts, i, const char *);
        for (j = i; j > 0 && strcmp(APR_ARRAY_IDX(parts, j - 1, const char *), x) > 0; --j) {
            APR_ARRAY_IDX(parts, j, const char *) = APR_ARRAY_IDX(parts, j - 1, const char *);
        }
        APR_ARRAY_IDX(parts, j, const char *) = x;
    }
    for (i = 0; i < parts->nelts; ++i) {
        all = apr_pstrcat(ctx->pool, all, i ? "&" : "", APR_ARRAY_IDX(parts, i, const char *),
                          NULL);
    }
    return all;
}

/* 64 bits of the filters' hash: enough to tell another request's cursor. */
static const char *filters_tag(apr_pool_t *p, const jr_page_t *pg)
{
    return apr_pstrndup(p, jr_sha256_hex(p, pg->filters, strlen(pg->filters)), 16);
}

static const char *page_cursor(apr_pool_t *p, const jr_page_t *pg, const char *const *keys)
{
    jr_jw_t w;
    int i;
    jr_jw_init(&w, p, 128);
    jr_jw_arr(&w);
    jr_jw_str(&w, "p");
    jr_jw_str(&w, pg->list);
    jr_jw_str(&w, filters_tag(p, pg));
    jr_jw_arr(&w);
    for (i = 0; i < pg->nkeys; ++i) {
        jr_jw_str(&w, keys[i]); /* NULL: null */
    }
    jr_jw_arr_end(&w);
    jr_jw_arr_end(&w);
    return jr_b64url_encode(p, jr_jw_done(&w, NULL));
}

/* Fills pg->key from a cursor; 0, or -1 when it is not a cursor of this list and filters. */
static int page_from_cursor(apr_pool_t *p, jr_page_t *pg, const char *cursor)
{
    const char *text = jr_b64url_decode(p, cursor), *err = NULL;
    json_t *j = text ? jr_json_parse(p, text, strlen(text), &err) : NULL, *keys;
    int i;
    if (!json_is_array(j) || json_array_size(j) != 4 ||
        !json_is_string(json_array_get(j, 0)) ||
        strcmp(json_string_value(json_array_get(j, 0)), "p") != 0 ||
        !json_is_string(json_array_get(j, 1)) ||
        strcmp(json_string_value(json_array_get(j, 1)), pg->list) != 0 ||
        !json_is_string(json_array_get(j, 2)) ||
        strcmp(json_string_value(json_array_get(j, 2)), filters_tag(p, pg)) != 0 ||
        !json_is_array(keys = json_array_get(j, 3)) ||
        json_array_size(keys) != (size_t)pg->nkeys) {
        return -1;
    }
    for (i = 0; i < pg->nkeys; ++i) {
        json_t *v = json_array_get(keys, (size_t)i);
        if (!json_is_string(v) && !(json_is_null(v) && i < pg->nkeys - 1)) {
            return -1;
        }
        pg->key[i] = json_is_string(v) ? apr_pstrdup(p, json_string_value(v)) : "";
    }
    return 0;
}

int jr_page_begin(jr_ctx_t *ctx, jr_result_t *res, const char *list, int nkeys, long long dflt,
                  jr_page_t *pg)
{
    const char *cursor = apr_table_get(ctx->query, "cursor");
    memset(pg, 0, sizeof(*pg));
    pg->list = list;
    pg->nkeys = nkeys;
    if (jr_list_params_dflt(ctx, res, dflt, &pg->limit, &pg->offset) != 0) {
        return -1;
    }
    pg->filters = filters_of(ctx);
    if (cursor) {
        if (apr_table_get(ctx->query, "offset")) {
            jr_fail(res, ctx->pool, 400, "cursor and offset cannot be combined");
            return -1;
        }
        if (page_from_cursor(ctx->pool, pg, cursor) != 0) {
            jr_fail(res, ctx->pool, 400,
                    "cursor is not a cursor of this list with these filters (send the filters "
                    "of the first page unchanged)");
            jr_error_code(res, "invalid_cursor");
            return -1;
        }
    }
    ctx->page = pg;
    return 0;
}

const char *jr_page_key(const jr_page_t *pg, int i)
{
    return i < pg->nkeys ? pg->key[i] : NULL;
}

const char *jr_page_fetch(apr_pool_t *p, const jr_page_t *pg)
{
    return jr_i64(p, pg->limit + 1);
}

int jr_page_take(apr_pool_t *p, jr_page_t *pg, const char *const *keys)
{
    int i;
    if (pg->rows >= pg->limit) {
        pg->has_more = 1;
        return 0;
    }
    ++pg->rows;
    for (i = 0; i < pg->nkeys; ++i) {
        pg->last[i] = keys[i] ? apr_pstrdup(p, keys[i]) : NULL;
    }
    return 1;
}

int jr_page_take_row(apr_pool_t *p, jr_page_t *pg, const jr_rows_t *r, int i,
                     const char *const *cols)
{
    const char *keys[JR_PAGE_KEYS];
    int k;
    for (k = 0; k < pg->nkeys; ++k) {
        keys[k] = jr_rows_get(r, i, cols[k]);
    }
    return jr_page_take(p, pg, keys);
}

/* The cursor after the page, or NULL on the last page. */
static const char *next_cursor(jr_ctx_t *ctx, const jr_page_t *pg)
{
    return pg->has_more ? page_cursor(ctx->pool, pg, pg->last) : NULL;
}

static void set_link(jr_ctx_t *ctx, jr_result_t *res, const jr_page_t *pg, const char *cursor)
{
    const char *q = pg->filters;
    q = apr_pstrcat(ctx->pool, q, *q ? "&" : "", "limit=", jr_i64(ctx->pool, pg->limit),
                    "&cursor=", cursor, NULL);
    apr_table_setn(res->headers, "Link",
                   apr_pstrcat(ctx->pool, "</api/v1/", pg->list, "?", q, ">; rel=\"next\"", NULL));
}

/* The page of a /api/v1 list: 1 with its next cursor in *cursor (NULL on the last page) and
 * the Link header set; 0 when the answer has no page members. */
static int page_out(jr_ctx_t *ctx, jr_result_t *res, const char **cursor)
{
    const jr_page_t *pg = ctx->page;
    if (!pg || ctx->iface != JR_IF_V1) {
        return 0;
    }
    *cursor = next_cursor(ctx, pg);
    if (*cursor) {
        set_link(ctx, res, pg, *cursor);
    }
    return 1;
}

/* The page's members of the envelope (see jr_cursor.h, "list answers"). */
static void page_envelope(jr_ctx_t *ctx, jr_jw_t *w, jr_result_t *res)
{
    const char *cursor;
    if (page_out(ctx, res, &cursor)) {
        jr_jw_kbool(w, "has_more", ctx->page->has_more);
        jr_jw_kstr(w, "next_cursor", cursor);
    }
}

static void list_begin(jr_ctx_t *ctx, jr_jw_t *w, jr_result_t *res, long long total)
{
    res->status = 200;
    if (ctx->iface == JR_IF_V1) {
        jr_jw_obj(w);
        jr_jw_key(w, "items");
    } else {
        apr_table_setn(res->headers, "X-Total-Count", jr_i64(ctx->pool, total));
    }
    jr_jw_arr(w);
}

void jr_jw_list_begin(jr_ctx_t *ctx, jr_jw_t *w, jr_result_t *res, long long total)
{
    list_begin(ctx, w, res, total);
    jr_jw_set_flush(w, ctx->flush, ctx->flush_baton);
    /* A /api/v1 page's Link header follows from its last item, and headers leave with the
     * first bytes: pages up to JR_PAGE_WHOLE leave whole, with it. */
    if (ctx->iface == JR_IF_V1 && ctx->page) {
        jr_jw_hold(w, JR_PAGE_WHOLE);
    }
}

int jr_jw_list_end(jr_ctx_t *ctx, jr_jw_t *w, jr_result_t *res, long long total, long long limit,
                   long long offset)
{
    jr_jw_arr_end(w);
    if (ctx->iface == JR_IF_V1) {
        jr_jw_kint(w, "total", total);
        jr_jw_kint(w, "limit", limit);
        jr_jw_kint(w, "offset", offset);
        page_envelope(ctx, w, res);
        jr_jw_obj_end(w);
    }
    return jr_reply_jw(res, 200, w);
}

int jr_reply_row(jr_ctx_t *ctx, jr_result_t *res, int status, jr_row_write_fn *write,
                 const jr_rows_t *r, int i)
{
    jr_jw_t w;
    jr_jw_init(&w, ctx->pool, 512);
    write(ctx->pool, &w, r, i);
    return jr_reply_jw(res, status, &w);
}

int jr_reply_rows(jr_ctx_t *ctx, jr_result_t *res, jr_page_t *pg, const char *const *keys,
                  jr_row_write_fn *write, const jr_rows_t *r, long long total, long long limit,
                  long long offset)
{
    jr_jw_t w;
    int i;
    /* Not streamed: the rows are in memory already, and the page's Link header is set at
     * the end. */
    jr_jw_init(&w, ctx->pool, 4096);
    list_begin(ctx, &w, res, total);
    for (i = 0; i < r->nrows && (!pg || jr_page_take_row(ctx->pool, pg, r, i, keys)); ++i) {
        write(ctx->pool, &w, r, i);
    }
    return jr_jw_list_end(ctx, &w, res, total, limit, offset);
}
