/* ETags of single records. The tag is computed from the answer's bytes, so it needs no column
 * and no migration; If-Match reads the record the way GET does and compares. */
#include <string.h>

#include <apr_strings.h>

#include "jr_crypt.h"
#include "jr_etag.h"
#include "jr_json.h"
#include "jr_entries.h"
#include "jr_lessons.h"

/* The record routes with their GET operation (the representation a tag stands for). */
static const struct {
    const char *pattern;
    jr_op_fn *get;
} records[] = {
    {"/api/v1/entries/:id", jr_op_entries_get},
    {"/api/entries/:id", jr_op_entries_get},
    {"/api/v1/lesson-reports/:id", jr_op_reports_get},
    {"/api/lesson-reports/:id", jr_op_reports_get},
    {NULL, NULL},
};

static jr_op_fn *getter_of(const jr_route_t *route)
{
    int i;
    if (strcmp(route->method, "GET") != 0 && strcmp(route->method, "PUT") != 0) {
        return NULL;
    }
    for (i = 0; records[i].pattern; ++i) {
        if (!strcmp(records[i].pattern, route->pattern)) {
            return records[i].get;
        }
    }
    return NULL;
}

int jr_etag_route(const jr_route_t *route)
{
    return getter_of(route) != NULL;
}

/* "\"<128 bits of SHA-256 in hex>\"" of the answer's body; NULL without a body. */
static const char *tag_of(apr_pool_t *p, const jr_result_t *res)
{
    const char *hex;
    if (res->status != 200 || res->streamed || res->file || !res->body) {
        return NULL;
    }
    hex = jr_sha256_hex(p, res->body, res->body_len);
    return hex ? apr_pstrcat(p, "\"", apr_pstrndup(p, hex, 32), "\"", NULL) : NULL;
}

/* Whether a list of entity tags (If-Match, If-None-Match) names tag; "*" names any. Weak tags
 * (W/"...") compare by their opaque part, which suits If-None-Match; If-Match passes weak=0 and
 * so never matches a weak tag (RFC 9110 13.1.1). */
static int names_tag(apr_pool_t *p, const char *list, const char *tag, int weak)
{
    char *copy = apr_pstrdup(p, list), *item, *last;
    for (item = apr_strtok(copy, ",", &last); item; item = apr_strtok(NULL, ",", &last)) {
        while (*item == ' ' || *item == '\t') {
            ++item;
        }
        item[strcspn(item, " \t")] = '\0';
        if (!strcmp(item, "*")) {
            return 1;
        }
        if (!strncmp(item, "W/", 2)) {
            if (!weak) {
                continue;
            }
            item += 2;
        }
        if (!strcmp(item, tag)) {
            return 1;
        }
    }
    return 0;
}

int jr_etag_precondition(jr_ctx_t *ctx, const jr_route_t *route, const char *if_match,
                         jr_result_t *res)
{
    jr_op_fn *get = getter_of(route);
    jr_result_t now;
    const char *tag;
    if (!if_match || !get || strcmp(route->method, "PUT") != 0) {
        return 1;
    }
    jr_result_init(&now, ctx->pool);
    get(ctx, NULL, &now); /* the status it answers is in now */
    if (now.status != 200 && now.status != 404) {
        jr_fail(res, ctx->pool, now.status >= 500 ? now.status : 503, "database unavailable");
        return 0;
    }
    tag = tag_of(ctx->pool, &now);
    if (!tag || !names_tag(ctx->pool, if_match, tag, 0)) {
        jr_fail(res, ctx->pool, 412,
                "If-Match: the record has changed since it was read (or is gone); read it "
                "again and repeat the change");
        if (tag) {
            apr_table_setn(res->headers, "ETag", tag);
        }
        return 0;
    }
    return 1;
}

void jr_etag_finish(jr_ctx_t *ctx, const jr_route_t *route, const char *if_none_match,
                    jr_result_t *res)
{
    const char *tag;
    if (!getter_of(route) || !(tag = tag_of(ctx->pool, res))) {
        return;
    }
    apr_table_setn(res->headers, "ETag", tag);
    if (if_none_match && !strcmp(route->method, "GET") &&
        names_tag(ctx->pool, if_none_match, tag, 1)) {
        jr_reply_raw(res, 304, "", 0);
    }
}
