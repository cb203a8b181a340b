/* jr_router.h: path matching, 404/405, parameters; the real route tables; the body pipeline. */
#include <stdlib.h>
#include <string.h>

#include <apr_pools.h>
#include <apr_strings.h>
#include <apr_tables.h>

#include "jr_counters.h"
#include "jr_error_codes.h"
#include "jr_json.h"
#include "jr_router.h"
#include "unit.h"

static apr_pool_t *pool;
static apr_table_t *params;
static const json_t *seen_in; /* what the last dummy operation received */
static int op_calls;

static void setup(void)
{
    ck_assert_int_eq(apr_pool_create(&pool, NULL), APR_SUCCESS);
    params = apr_table_make(pool, 4);
    seen_in = NULL;
    op_calls = 0;
}

static void teardown(void)
{
    apr_pool_destroy(pool);
    pool = NULL;
    params = NULL;
}

static apr_status_t op_dummy(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    seen_in = in;
    ++op_calls;
    return jr_reply_ok(res, ctx->pool);
}

static const jr_route_t things[] = {
    {"GET", "/api/things", op_dummy, JR_AUTH_NONE, JR_BODY_NONE, 0, JR_SCOPE_NONE, NULL},
    {"POST", "/api/things", op_dummy, JR_AUTH_NONE, JR_BODY_JSON, 0, JR_SCOPE_NONE, NULL},
    {"GET", "/api/things/:id", op_dummy, JR_AUTH_NONE, JR_BODY_NONE, 0, JR_SCOPE_NONE, NULL},
    {"PUT", "/api/things/:id", op_dummy, JR_AUTH_NONE, JR_BODY_JSON, 0, JR_SCOPE_NONE, NULL},
    {"DELETE", "/api/things/:id", op_dummy, JR_AUTH_NONE, JR_BODY_NONE, 0, JR_SCOPE_NONE, NULL},
    {"POST", "/api/things/:id/restore", op_dummy, JR_AUTH_NONE, JR_BODY_OPTIONAL, 0, JR_SCOPE_NONE,
     NULL},
    {"GET", "/api/bans/~ip", op_dummy, JR_AUTH_NONE, JR_BODY_NONE, 0, JR_SCOPE_NONE, NULL},
    {"DELETE", "/api/bans/~ip", op_dummy, JR_AUTH_NONE, JR_BODY_NONE, 0, JR_SCOPE_NONE, NULL},
    {NULL, NULL, NULL, JR_AUTH_NONE, JR_BODY_NONE, 0, JR_SCOPE_NONE, NULL},
};

/* Matches and returns the index of the route in `things`, or -1. */
static jr_match_e match(const char *method, const char *path, int *index, const char **allow)
{
    const jr_route_t *rt = (const jr_route_t *)&things[7]; /* anything non-NULL */
    jr_match_e m;
    *allow = NULL;
    apr_table_clear(params);
    m = jr_route_match(things, pool, method, path, &rt, params, allow);
    *index = rt ? (int)(rt - things) : -1;
    return m;
}

START_TEST(found_with_params)
{
    int i;
    const char *allow;
    ck_assert_int_eq(match("GET", "/api/things", &i, &allow), JR_ROUTE_FOUND);
    ck_assert_int_eq(i, 0);
    ck_assert(apr_is_empty_table(params));
    ck_assert_int_eq(match("POST", "/api/things", &i, &allow), JR_ROUTE_FOUND);
    ck_assert_int_eq(i, 1);
    ck_assert_int_eq(match("GET", "/api/things/42", &i, &allow), JR_ROUTE_FOUND);
    ck_assert_int_eq(i, 2);
    ck_assert_str_eq(apr_table_get(params, "id"), "42");
    ck_assert_int_eq(match("DELETE", "/api/things/7", &i, &allow), JR_ROUTE_FOUND);
    ck_assert_int_eq(i, 4);
    ck_assert_str_eq(apr_table_get(params, "id"), "7");
    ck_assert_int_eq(match("POST", "/api/things/9007199254740991/restore", &i, &allow),
                     JR_ROUTE_FOUND);
    ck_assert_int_eq(i, 5);
    ck_assert_str_eq(apr_table_get(params, "id"), "9007199254740991"); /* 2^53 - 1 */
    ck_assert_int_eq(match("GET", "/api/things/1000000000000000", &i, &allow), JR_ROUTE_FOUND);
}
END_TEST

START_TEST(not_found)
{
    static const char *const paths[] = {
        "/", "", "/api", "/api/thing", "/api/thingsx", "/apix/things", "/api/things/5/restore/x",
        "/api/things/5/undo", "/api/bans", "/other/things", "/API/things",
        "/api/things/abc", "/api/things/0", "/api/things/007", "/api/things/-1", "/api/things/+1",
        "/api/things/1.0", "/api/things/1e3", "/api/things/ 1",
        "/api/things/9007199254740992", /* 2^53: beyond what JSON clients hold exactly */
        "/api/things/9999999999999999", "/api/things/12345678901234567",
        "/api/things/99999999999999999999999",
        "/api/things/%zz", "/api/bans/%zz", "/api/bans/a%00b", "/api/bans/%4",
    };
    size_t k;
    int i;
    const char *allow;
    for (k = 0; k < sizeof(paths) / sizeof(paths[0]); ++k) {
        ck_assert_msg(match("GET", paths[k], &i, &allow) == JR_ROUTE_NOT_FOUND, "%s matched",
                      paths[k]);
        ck_assert_int_eq(i, -1);
        ck_assert(apr_is_empty_table(params));
        ck_assert_ptr_null(allow);
    }
}
END_TEST

START_TEST(bad_method_lists_allow)
{
    int i;
    const char *allow;
    ck_assert_int_eq(match("PATCH", "/api/things/5", &i, &allow), JR_ROUTE_BAD_METHOD);
    ck_assert_int_eq(i, -1);
    ck_assert_str_eq(allow, "GET, HEAD, PUT, DELETE");
    ck_assert(apr_is_empty_table(params)); /* no parameters leak out of a 405 */
    ck_assert_int_eq(match("DELETE", "/api/things", &i, &allow), JR_ROUTE_BAD_METHOD);
    ck_assert_str_eq(allow, "GET, HEAD, POST");
    ck_assert_int_eq(match("GET", "/api/things/5/restore", &i, &allow), JR_ROUTE_BAD_METHOD);
    ck_assert_str_eq(allow, "POST");
    ck_assert_int_eq(match("HEAD", "/api/things/5/restore", &i, &allow), JR_ROUTE_BAD_METHOD);
    ck_assert_str_eq(allow, "POST");
    ck_assert_int_eq(match("POST", "/api/bans/10.0.0.1", &i, &allow), JR_ROUTE_BAD_METHOD);
    ck_assert_str_eq(allow, "GET, HEAD, DELETE");
    /* Method names are case-sensitive. */
    ck_assert_int_eq(match("get", "/api/things", &i, &allow), JR_ROUTE_BAD_METHOD);
}
END_TEST

START_TEST(head_matches_get)
{
    int i;
    const char *allow;
    ck_assert_int_eq(match("HEAD", "/api/things", &i, &allow), JR_ROUTE_FOUND);
    ck_assert_int_eq(i, 0);
    ck_assert_int_eq(match("HEAD", "/api/things/9", &i, &allow), JR_ROUTE_FOUND);
    ck_assert_int_eq(i, 2);
    ck_assert_str_eq(apr_table_get(params, "id"), "9");
}
END_TEST

START_TEST(tilde_segments_are_decoded)
{
    int i;
    const char *allow;
    ck_assert_int_eq(match("GET", "/api/bans/%3A%3A1", &i, &allow), JR_ROUTE_FOUND);
    ck_assert_int_eq(i, 6);
    ck_assert_str_eq(apr_table_get(params, "ip"), "::1");
    ck_assert_int_eq(match("DELETE", "/api/bans/192.168.0.1", &i, &allow), JR_ROUTE_FOUND);
    ck_assert_int_eq(i, 7);
    ck_assert_str_eq(apr_table_get(params, "ip"), "192.168.0.1");
    /* An encoded slash stays inside its segment. */
    ck_assert_int_eq(match("GET", "/api/bans/10.0.0.0%2F8", &i, &allow), JR_ROUTE_FOUND);
    ck_assert_str_eq(apr_table_get(params, "ip"), "10.0.0.0/8");
    /* '+' is not a space in a path. */
    ck_assert_int_eq(match("GET", "/api/bans/a+b", &i, &allow), JR_ROUTE_FOUND);
    ck_assert_str_eq(apr_table_get(params, "ip"), "a+b");
}
END_TEST

START_TEST(trailing_slash_tolerated)
{
    int i;
    const char *allow;
    ck_assert_int_eq(match("GET", "/api/things/", &i, &allow), JR_ROUTE_FOUND);
    ck_assert_int_eq(i, 0);
    ck_assert_int_eq(match("GET", "/api/things/12/", &i, &allow), JR_ROUTE_FOUND);
    ck_assert_int_eq(i, 2);
    ck_assert_str_eq(apr_table_get(params, "id"), "12");
    ck_assert_int_eq(match("POST", "/api/things/12/restore/", &i, &allow), JR_ROUTE_FOUND);
    ck_assert_int_eq(i, 5);
}
END_TEST

/* ---- the real tables ----------------------------------------------------------------- */

START_TEST(admin_table_is_consistent)
{
    const jr_route_t *a, *b;
    int n = 0;
    for (a = jr_routes_admin; a->method; ++a, ++n) {
        ck_assert_msg(a->op != NULL, "%s %s has no operation", a->method, a->pattern);
        /* /share/: the page of a share link, for a parent's browser. */
        ck_assert_msg(a->pattern && (!strncmp(a->pattern, "/api/", 5) ||
                                     !strncmp(a->pattern, "/share/", 7)),
                      "pattern %s", a->pattern);
        ck_assert_msg(!strcmp(a->method, "GET") || !strcmp(a->method, "POST") ||
                          !strcmp(a->method, "PUT") || !strcmp(a->method, "DELETE"),
                      "method %s", a->method);
        for (b = a + 1; b->method; ++b) {
            ck_assert_msg(strcmp(a->method, b->method) || strcmp(a->pattern, b->pattern),
                          "duplicate route %s %s", a->method, a->pattern);
        }
        /* Writes are for admins, except signing in and out, the journal records that
         * tutors keep for their branches (the operations check the branch), the caller's
         * own read marks of notifications and the chat (a tutor reaches their own thread),
         * and share links (tutors share their branches' records; families send a link's
         * password). */
        if (strcmp(a->method, "GET") && strncmp(a->pattern, "/api/auth/", 10) &&
            strncmp(a->pattern, "/api/students", 13) && strncmp(a->pattern, "/api/entries", 12) &&
            strncmp(a->pattern, "/api/lesson-reports", 19) &&
            strncmp(a->pattern, "/api/notifications", 18) && strncmp(a->pattern, "/api/chat/", 10) &&
            strncmp(a->pattern, "/api/share", 10) && strncmp(a->pattern, "/share/", 7)) {
            ck_assert_msg(a->flags & JR_RF_ADMIN, "%s %s is not admin-only", a->method,
                          a->pattern);
            ck_assert_int_eq(a->auth, JR_AUTH_SESSION);
        }
    }
    ck_assert_int_gt(n, 10);
    /* The external interface: API keys only, under /api/v1/. */
    for (a = jr_routes_v1; a->method; ++a) {
        ck_assert_msg(a->op != NULL, "%s %s has no operation", a->method, a->pattern);
        ck_assert_msg(!strncmp(a->pattern, "/api/v1/", 8), "pattern %s", a->pattern);
        ck_assert_msg(a->auth == JR_AUTH_KEY, "%s %s without key auth", a->method, a->pattern);
        for (b = a + 1; b->method; ++b) {
            ck_assert_msg(strcmp(a->method, b->method) || strcmp(a->pattern, b->pattern),
                          "duplicate route %s %s", a->method, a->pattern);
        }
    }
}
END_TEST

START_TEST(admin_table_matches)
{
    const jr_route_t *rt = NULL;
    const char *allow = NULL;
    ck_assert_int_eq(
        jr_route_match(jr_routes_admin, pool, "GET", "/api/health", &rt, params, &allow),
        JR_ROUTE_FOUND);
    ck_assert_int_eq(rt->auth, JR_AUTH_NONE);
    ck_assert(rt->flags & JR_RF_DB_OPTIONAL);
    ck_assert_int_eq(jr_route_match(jr_routes_admin, pool, "POST", "/api/groups/3/restore", &rt,
                                    params, &allow),
                     JR_ROUTE_FOUND);
    ck_assert_str_eq(apr_table_get(params, "id"), "3");
    ck_assert_int_eq(jr_route_match(jr_routes_admin, pool, "PATCH", "/api/users/3", &rt, params,
                                    &allow),
                     JR_ROUTE_BAD_METHOD);
    ck_assert_str_eq(allow, "GET, HEAD, PUT, DELETE");
    ck_assert_int_eq(jr_route_match(jr_routes_admin, pool, "GET", "/api/nothing", &rt, params,
                                    &allow),
                     JR_ROUTE_NOT_FOUND);
    ck_assert_ptr_null(rt);
}
END_TEST

/* Spec 4.1 rule 1: the external interface has 21 endpoints (the 20 it names and
 * GET /api/v1/lesson-reports/:id). */
START_TEST(v1_table_has_21_routes)
{
    static const char *const expected[][2] = {
        {"GET", "/api/v1/me"},
        {"GET", "/api/v1/branches"},
        {"GET", "/api/v1/groups"},
        {"GET", "/api/v1/students"},
        {"GET", "/api/v1/modules"},
        {"GET", "/api/v1/entries"},
        {"GET", "/api/v1/entries/:id"},
        {"GET", "/api/v1/entries/:id/files"},
        {"POST", "/api/v1/entries"},
        {"PUT", "/api/v1/entries/:id"},
        {"DELETE", "/api/v1/entries/:id"},
        {"POST", "/api/v1/entries/:id/ai/recheck"},
        {"GET", "/api/v1/lesson-reports"},
        {"GET", "/api/v1/lesson-reports/:id"},
        {"POST", "/api/v1/lesson-reports"},
        {"DELETE", "/api/v1/lesson-reports/:id"},
        {"GET", "/api/v1/stats"},
        {"POST", "/api/v1/ai/wake"},
        {"POST", "/api/v1/photo-jobs/wake"},
        {"POST", "/api/v1/ai/requeue-failed"},
        {"POST", "/api/v1/photo-jobs/requeue-failed"},
    };
    const size_t n_expected = sizeof(expected) / sizeof(expected[0]);
    const jr_route_t *a;
    const char *listing = "";
    size_t i, n = 0;
    int found;
    for (a = jr_routes_v1; a->method; ++a, ++n) {
        listing = apr_pstrcat(pool, listing, "\n  ", a->method, " ", a->pattern, NULL);
    }
    ck_assert_msg(n == 21 && n_expected == 21, "jr_routes_v1 has %zu routes, not 21:%s", n,
                  listing);
    for (i = 0; i < n_expected; ++i) {
        found = 0;
        for (a = jr_routes_v1; a->method; ++a) {
            found += !strcmp(a->method, expected[i][0]) && !strcmp(a->pattern, expected[i][1]);
        }
        ck_assert_msg(found == 1, "%s %s appears %d times in jr_routes_v1:%s", expected[i][0],
                      expected[i][1], found, listing);
    }
}
END_TEST

START_TEST(routes_for_picks_interface)
{
    jr_iface_e iface = 0;
    ck_assert_ptr_eq(jr_routes_for("/api/v1/things", &iface), jr_routes_v1);
    ck_assert_int_eq(iface, JR_IF_V1);
    ck_assert_ptr_eq(jr_routes_for("/api/v1", &iface), jr_routes_v1);
    ck_assert_int_eq(iface, JR_IF_V1);
    ck_assert_ptr_eq(jr_routes_for("/api/v10/x", &iface), jr_routes_admin);
    ck_assert_int_eq(iface, JR_IF_ADMIN);
    ck_assert_ptr_eq(jr_routes_for("/api/users", &iface), jr_routes_admin);
    ck_assert_int_eq(iface, JR_IF_ADMIN);
}
END_TEST

/* ---- the request pipeline ------------------------------------------------------------ */

static jr_result_t run(const jr_route_t *rt, const char *ct, const char *body)
{
    jr_ctx_t ctx;
    jr_result_t res;
    memset(&ctx, 0, sizeof(ctx));
    ctx.pool = pool;
    ctx.iface = JR_IF_ADMIN;
    ctx.params = params;
    ctx.query = apr_table_make(pool, 2);
    jr_result_init(&res, pool);
    ck_assert_int_eq(jr_request_run(&ctx, rt, ct, body, body ? strlen(body) : 0, &res), res.status);
    return res;
}

static const char *error_of(const jr_result_t *res)
{
    return res->error ? res->error : "";
}

START_TEST(request_body_checks)
{
    jr_result_t res;
    res = run(&things[1], "application/json", "{\"a\": 1}");
    ck_assert_int_eq(res.status, 200);
    ck_assert_int_eq(op_calls, 1);
    ck_assert_int_eq(json_integer_value(json_object_get(seen_in, "a")), 1);

    res = run(&things[1], " Application/JSON ; charset=utf-8", "{}");
    ck_assert_int_eq(res.status, 200);
    res = run(&things[1], "application/merge-patch+json", "{}");
    ck_assert_int_eq(res.status, 200);
    ck_assert_int_eq(op_calls, 3);

    res = run(&things[1], "text/plain", "{}");
    ck_assert_int_eq(res.status, 415);
    res = run(&things[1], NULL, "{}");
    ck_assert_int_eq(res.status, 415);
    res = run(&things[1], "application/jsonx", "{}");
    ck_assert_int_eq(res.status, 415);
    res = run(&things[1], "application/json", "{\"a\": ");
    ck_assert_int_eq(res.status, 400);
    ck_assert_msg(strstr(error_of(&res), "invalid JSON") != NULL, "%s", error_of(&res));
    res = run(&things[1], "application/json", "[1]");
    ck_assert_int_eq(res.status, 400);
    ck_assert_str_eq(error_of(&res), "request body must be a JSON object");
    res = run(&things[1], "application/json", NULL);
    ck_assert_int_eq(res.status, 400);
    res = run(&things[1], "application/json", "");
    ck_assert_int_eq(res.status, 400);
    ck_assert_int_eq(op_calls, 3); /* none of the refused requests reached the operation */
}
END_TEST

START_TEST(request_optional_and_ignored_bodies)
{
    jr_result_t res;
    res = run(&things[5], NULL, NULL); /* optional: {} when absent */
    ck_assert_int_eq(res.status, 200);
    ck_assert(json_is_object(seen_in));
    ck_assert_uint_eq(json_object_size(seen_in), 0);
    res = run(&things[5], "application/json", "{\"x\": true}");
    ck_assert_int_eq(res.status, 200);
    ck_assert(json_is_true(json_object_get(seen_in, "x")));
    res = run(&things[0], "text/plain", "not json"); /* ignored entirely */
    ck_assert_int_eq(res.status, 200);
    ck_assert_ptr_null(seen_in);
}
END_TEST

START_TEST(authorize_without_database)
{
    static const jr_route_t open_rt = {"GET",        "/x", op_dummy,      JR_AUTH_NONE,
                                       JR_BODY_NONE, 0,    JR_SCOPE_NONE, NULL};
    static const jr_route_t key_rt = {"GET",        "/x", op_dummy,      JR_AUTH_KEY,
                                      JR_BODY_NONE, 0,    JR_SCOPE_NONE, NULL};
    static const jr_route_t sess_rt = {"GET",        "/x",        op_dummy,      JR_AUTH_SESSION,
                                       JR_BODY_NONE, JR_RF_ADMIN, JR_SCOPE_NONE, NULL};
    jr_credentials_t cred = {NULL, NULL};
    jr_ctx_t ctx;
    jr_result_t res;
    size_t size = jr_shmcounters_size(JR_SHM_MIN_SLOTS);
    void *region = malloc(size);
    memset(&ctx, 0, sizeof(ctx));
    ctx.pool = pool;
    jr_result_init(&res, pool);
    ck_assert_int_eq(jr_request_authorize(&ctx, &open_rt, &cred, &res), 1);
    /* Without the shared counters a key route refuses everything (no rate limit, no ban). */
    ck_assert_int_eq(jr_request_authorize(&ctx, &key_rt, &cred, &res), 0);
    ck_assert_int_eq(res.status, 503);
    ctx.counters = jr_shmcounters_attach(pool, region, size, JR_SHM_MIN_SLOTS, 1);
    ck_assert_ptr_nonnull(ctx.counters);
    jr_result_init(&res, pool);
    ck_assert_int_eq(jr_request_authorize(&ctx, &key_rt, &cred, &res), 0);
    ck_assert_int_eq(res.status, 401);
    jr_result_init(&res, pool);
    ck_assert_int_eq(jr_request_authorize(&ctx, &sess_rt, &cred, &res), 0);
    ck_assert_int_eq(res.status, 401);
    /* A malformed token is refused before any database access (ctx.db is NULL). */
    cred.session_token = "not-a-token";
    jr_result_init(&res, pool);
    ck_assert_int_eq(jr_request_authorize(&ctx, &sess_rt, &cred, &res), 0);
    ck_assert_int_eq(res.status, 401);
    ck_assert_int_eq(ctx.who.authenticated, 0);
    free(region);
}
END_TEST

/* The answer's body as text. */
static const char *body_of(const jr_result_t *res)
{
    return apr_pstrndup(pool, res->body, res->body_len);
}

/* Errors are written by the streaming writer, with the members the jansson body had, in its
 * order; a code or an id set afterwards is written in again. */
START_TEST(errors_are_written_by_the_writer)
{
    jr_result_t res;
    jr_result_init(&res, pool);
    jr_fail(&res, pool, 400, "limit must be an integer between 1 and %d", 1000);
    ck_assert_str_eq(body_of(&res), "{\"error\":\"limit must be an integer between 1 and 1000\","
                                    "\"code\":\"invalid_field\",\"param\":\"limit\"}");
    ck_assert_str_eq(res.error, "limit must be an integer between 1 and 1000");
    jr_fail(&res, pool, 409, "a \"quoted\" name is taken");
    jr_error_code(&res, "duplicate");
    jr_error_id(&res, 7);
    ck_assert_str_eq(body_of(&res), "{\"error\":\"a \\\"quoted\\\" name is taken\","
                                    "\"code\":\"duplicate\",\"id\":7}");
    ck_assert_int_eq(res.status, 409);
}
END_TEST

/* The small success answers; a success after an error carries no error. */
START_TEST(ok_answers_are_written_by_the_writer)
{
    jr_result_t res;
    jr_result_init(&res, pool);
    jr_fail(&res, pool, 503, "database unavailable");
    ck_assert_int_eq(jr_reply_ok(&res, pool), 200);
    ck_assert_str_eq(body_of(&res), "{\"ok\":true}");
    ck_assert_ptr_null(res.error);
    jr_error_code(&res, "duplicate"); /* not an error: nothing to change */
    ck_assert_str_eq(body_of(&res), "{\"ok\":true}");
    ck_assert_int_eq(jr_reply_ok_count(&res, pool, 3), 200);
    ck_assert_str_eq(body_of(&res), "{\"ok\":true,\"count\":3}");
}
END_TEST

Suite *suite_router(void)
{
    Suite *s = suite_create("router");
    TCase *tc = tcase_create("match");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, found_with_params);
    tcase_add_test(tc, not_found);
    tcase_add_test(tc, bad_method_lists_allow);
    tcase_add_test(tc, head_matches_get);
    tcase_add_test(tc, tilde_segments_are_decoded);
    tcase_add_test(tc, trailing_slash_tolerated);
    suite_add_tcase(s, tc);

    tc = tcase_create("tables");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, admin_table_is_consistent);
    tcase_add_test(tc, admin_table_matches);
    tcase_add_test(tc, routes_for_picks_interface);
    tcase_add_test(tc, v1_table_has_21_routes);
    suite_add_tcase(s, tc);

    tc = tcase_create("pipeline");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, request_body_checks);
    tcase_add_test(tc, request_optional_and_ignored_bodies);
    tcase_add_test(tc, authorize_without_database);
    suite_add_tcase(s, tc);

    tc = tcase_create("answers");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, errors_are_written_by_the_writer);
    tcase_add_test(tc, ok_answers_are_written_by_the_writer);
    suite_add_tcase(s, tc);
    return s;
}
