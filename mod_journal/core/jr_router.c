#include <string.h>
#include <strings.h>

#include <apr_strings.h>

#include "jr_router.h"
#include "jr_util.h"

const jr_route_t *jr_routes_for(const char *path, jr_iface_e *iface)
{
    if (!strncmp(path, "/api/v1/", 8) || !strcmp(path, "/api/v1")) {
        *iface = JR_IF_V1;
        return jr_routes_v1;
    }
    *iface = JR_IF_ADMIN;
    return jr_routes_admin;
}

/* A positive decimal id up to 2^53 - 1 (what JSON clients represent exactly). */
static int is_id(const char *s)
{
    size_t n = strlen(s), i;
    if (n == 0 || n > 16 || s[0] == '0' || (n == 16 && strcmp(s, "9007199254740991") > 0)) {
        return 0;
    }
    for (i = 0; i < n; ++i) {
        if (s[i] < '0' || s[i] > '9') {
            return 0;
        }
    }
    return 1;
}

/* Splits a raw path into decoded segments. NULL when a segment does not decode. */
static apr_array_header_t *segments(apr_pool_t *p, const char *path)
{
    apr_array_header_t *segs = apr_array_make(p, 8, sizeof(char *));
    char *copy = apr_pstrdup(p, path), *tok, *last;
    size_t n = strlen(copy);
    if (n > 1 && copy[n - 1] == '/') {
        copy[n - 1] = '\0'; /* one trailing slash is tolerated */
    }
    for (tok = apr_strtok(copy, "/", &last); tok; tok = apr_strtok(NULL, "/", &last)) {
        char *seg = jr_url_decode(p, tok, 0);
        if (!seg) {
            return NULL;
        }
        APR_ARRAY_PUSH(segs, char *) = seg;
    }
    return segs;
}

/* Matches a pattern against decoded segments without allocating: patterns are walked in
 * place, one '/'-separated piece at a time. */
static int match_pattern(apr_pool_t *p, const char *pattern, apr_array_header_t *segs,
                         apr_table_t *params)
{
    const char *ps = pattern;
    int i;
    for (i = 0; i < segs->nelts; ++i) {
        const char *s = APR_ARRAY_IDX(segs, i, char *), *end;
        size_t n;
        while (*ps == '/') {
            ++ps;
        }
        if (!*ps) {
            return 0;
        }
        end = strchr(ps, '/');
        n = end ? (size_t)(end - ps) : strlen(ps);
        if (*ps == ':' || *ps == '~') {
            if (*ps == ':' && !is_id(s)) {
                return 0;
            }
            if (params) {
                apr_table_setn(params, apr_pstrmemdup(p, ps + 1, n - 1), s);
            }
        } else if (strlen(s) != n || strncmp(ps, s, n)) {
            return 0;
        }
        ps += n;
    }
    while (*ps == '/') {
        ++ps;
    }
    return *ps == '\0';
}

jr_match_e jr_route_match(const jr_route_t *table, apr_pool_t *p, const char *method,
                          const char *path, const jr_route_t **route, apr_table_t *params,
                          const char **allow)
{
    apr_array_header_t *segs = segments(p, path);
    const jr_route_t *rt;
    const char *methods = NULL;
    if (!strcmp(method, "HEAD")) {
        method = "GET";
    }
    for (rt = table; rt->method; ++rt) {
        /* A path with a segment that does not decode matches nothing. */
        if (!segs || !match_pattern(p, rt->pattern, segs, NULL)) {
            continue;
        }
        if (!strcmp(rt->method, method)) {
            match_pattern(p, rt->pattern, segs, params);
            *route = rt;
            return JR_ROUTE_FOUND;
        }
        if (!methods || !strstr(methods, rt->method)) {
            methods = methods ? apr_pstrcat(p, methods, ", ", rt->method, NULL) : rt->method;
            if (!strcmp(rt->method, "GET")) {
                methods = apr_pstrcat(p, methods, ", HEAD", NULL);
            }
        }
    }
    *route = NULL;
    if (methods) {
        *allow = methods;
        return JR_ROUTE_BAD_METHOD;
    }
    return JR_ROUTE_NOT_FOUND;
}

const jr_route_t *jr_route_none(const jr_route_t *table)
{
    while (table->method) {
        ++table;
    }
    return table;
}

int jr_op_no_route(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    if (!ctx->allow) {
        return jr_fail(res, ctx->pool, 404, "not found");
    }
    apr_table_setn(res->headers, "Allow", ctx->allow);
    return jr_fail(res, ctx->pool, 405, "method %s is not allowed here (allowed: %s)", ctx->method,
                   ctx->allow);
}
