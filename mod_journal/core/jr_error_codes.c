/* The codes of error answers; docs/integrators.md ("Error codes") lists the same table. */
#include <string.h>

#include <apr_lib.h>
#include <apr_strings.h>

#include "jr_error_codes.h"
#include "jr_jw.h"

static const struct {
    int status;
    const char *code;
} by_status[] = {
    {400, "invalid_request"},   {401, "unauthorized"},     {403, "forbidden"},
    {404, "not_found"},         {405, "method_not_allowed"}, {408, "request_timeout"},
    {409, "conflict"},          {412, "precondition_failed"}, {413, "body_too_large"},
    {415, "unsupported_media_type"}, {422, "unprocessable"}, {429, "rate_limited"},
    {500, "internal_error"},    {502, "upstream_failed"},  {503, "unavailable"},
    {504, "upstream_timeout"},  {0, NULL},
};

/* Messages that name the value at fault in quotes after a fixed opening. */
static const struct {
    const char *opening;
    const char *code;
} quoted[] = {
    {"unknown field '", "unknown_field"},
    {"unknown query parameter '", "unknown_parameter"},
    {"unknown setting '", "unknown_field"},
    {NULL, NULL},
};

/* The field a message starts with ("limit must ...", "group_id: ...", "tags[2] must ..."), or
 * NULL when it starts with prose. */
static char *leading_name(apr_pool_t *p, const char *msg)
{
    size_t n = 0;
    const char *rest;
    static const char *const verbs[] = {": ", " must ", " is ", " has ", NULL};
    int i;
    while (apr_isalnum(msg[n]) || msg[n] == '_' || msg[n] == '-' || msg[n] == '[' ||
           msg[n] == ']') {
        ++n;
    }
    if (n == 0) {
        return NULL;
    }
    rest = msg + n;
    for (i = 0; verbs[i]; ++i) {
        if (!strncmp(rest, verbs[i], strlen(verbs[i]))) {
            return apr_pstrndup(p, msg, n);
        }
    }
    return NULL;
}

void jr_error_describe(apr_pool_t *p, int status, const char *msg, const char **code_out,
                       const char **param_out)
{
    const char *code = "error";
    char *param = NULL;
    int i;
    for (i = 0; by_status[i].code; ++i) {
        if (by_status[i].status == status) {
            code = by_status[i].code;
        }
    }
    if (status == 400) {
        for (i = 0; quoted[i].opening && !param; ++i) {
            size_t n = strlen(quoted[i].opening);
            const char *end;
            if (!strncmp(msg, quoted[i].opening, n) && (end = strchr(msg + n, '\''))) {
                param = apr_pstrndup(p, msg + n, (apr_size_t)(end - msg - n));
                code = quoted[i].code;
            }
        }
        if (!param && (param = leading_name(p, msg)) != NULL) {
            code = "invalid_field";
        }
    }
    *code_out = code;
    *param_out = param;
}

void jr_error_render(jr_result_t *res)
{
    jr_jw_t w;
    jr_jw_init(&w, res->pool, 128);
    jr_jw_obj(&w);
    jr_jw_kstr(&w, "error", res->error);
    jr_jw_kstr(&w, "code", res->error_code);
    if (res->error_param) {
        jr_jw_kstr(&w, "param", res->error_param);
    }
    if (res->error_id > 0) {
        jr_jw_kint(&w, "id", res->error_id);
    }
    jr_jw_obj_end(&w);
    res->body = jr_jw_done(&w, &res->body_len);
}

void jr_error_code(jr_result_t *res, const char *code)
{
    if (res->error) {
        res->error_code = code;
        jr_error_render(res);
    }
}

void jr_error_id(jr_result_t *res, long long id)
{
    if (res->error) {
        res->error_id = id;
        jr_error_render(res);
    }
}
