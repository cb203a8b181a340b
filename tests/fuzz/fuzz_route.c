/* Route matching (jr_router.c) over the real tables (jr_routes.c). The input is a request
 * line, "METHOD /path" (without a space: a GET of the whole input). Oracles: a match names a
 * route of that method with one parameter per ':'/'~' segment, ':' ones being ids; a 405
 * lists methods other than the one asked for. */
#include <apr_strings.h>
#include <apr_tables.h>

#include "fuzz.h"
#include "jr_router.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fuzz_root();
    return 0;
}

static int count_params(const char *pattern)
{
    int n = 0;
    const char *c;
    for (c = pattern; *c; ++c) {
        n += (*c == ':' || *c == '~') && c > pattern && c[-1] == '/';
    }
    return n;
}

static void check_found(apr_pool_t *p, const jr_route_t *rt, const char *method,
                        apr_table_t *params)
{
    const apr_array_header_t *elts = apr_table_elts(params);
    const apr_table_entry_t *e = (const apr_table_entry_t *)elts->elts;
    int i;

    FUZZ_CHECK(rt && rt->op);
    FUZZ_CHECK(!strcmp(rt->method, method) || (!strcmp(method, "HEAD") && !strcmp(rt->method, "GET")));
    FUZZ_CHECK(elts->nelts == count_params(rt->pattern));
    for (i = 0; i < elts->nelts; ++i) {
        const char *where = strstr(rt->pattern, apr_pstrcat(p, "/:", e[i].key, NULL));
        FUZZ_CHECK(e[i].val);
        if (where) { /* an id: 1 to 2^53 - 1, no leading zero */
            size_t n = strlen(e[i].val);
            FUZZ_CHECK(n >= 1 && n <= 16 && e[i].val[0] != '0' && strspn(e[i].val, "0123456789") == n);
        }
    }
}

static void check_allow(apr_pool_t *p, const char *method, const char *allow)
{
    char *copy, *tok, *last;
    FUZZ_CHECK(allow && *allow);
    copy = apr_pstrdup(p, allow);
    for (tok = apr_strtok(copy, ", ", &last); tok; tok = apr_strtok(NULL, ", ", &last)) {
        FUZZ_CHECK(strcmp(tok, method));
    }
}

static void match(apr_pool_t *p, const jr_route_t *table, const char *method, const char *path)
{
    apr_table_t *params = apr_table_make(p, 4);
    const jr_route_t *rt = NULL;
    const char *allow = NULL;
    switch (jr_route_match(table, p, method, path, &rt, params, &allow)) {
    case JR_ROUTE_FOUND:
        check_found(p, rt, method, params);
        break;
    case JR_ROUTE_BAD_METHOD:
        FUZZ_CHECK(!rt);
        check_allow(p, strcmp(method, "HEAD") ? method : "GET", allow);
        break;
    case JR_ROUTE_NOT_FOUND:
        FUZZ_CHECK(!rt);
        break;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    apr_pool_t *p = fuzz_pool();
    char *line = fuzz_cstr(p, data, size), *sp = strchr(line, ' ');
    const char *method = "GET", *path = line;
    jr_iface_e iface;

    if (sp) {
        *sp = '\0';
        method = line;
        path = sp + 1;
    }
    match(p, jr_routes_for(path, &iface), method, path);
    FUZZ_CHECK(iface == JR_IF_ADMIN || iface == JR_IF_V1);
    match(p, iface == JR_IF_V1 ? jr_routes_admin : jr_routes_v1, method, path);
    apr_pool_destroy(p);
    return 0;
}
