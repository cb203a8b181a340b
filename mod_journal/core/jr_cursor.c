/* The query parameters each /api/v1 endpoint reads (docs/integrators.md lists the same). */
#include <string.h>

#include <apr_strings.h>

#include "jr_cursor.h"

#define PAGE "limit,offset"

static const struct {
    const char *method, *pattern, *names;
} v1_params[] = {
    {"GET", "/api/v1/branches", PAGE},
    {"GET", "/api/v1/groups", "branch_id," PAGE},
    {"GET", "/api/v1/students", "group_id,branch_id,search," PAGE},
    {"GET", "/api/v1/modules", "search," PAGE},
    {"GET", "/api/v1/entries",
     "group_id,branch_id,module_id,student_id,student,date_from,date_to,search," PAGE},
    {"GET", "/api/v1/entries/:id/files", PAGE},
    {"GET", "/api/v1/lesson-reports", "group_id,branch_id,date_from,date_to," PAGE},
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
