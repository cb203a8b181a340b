/* See ops_fixture.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <unistd.h>

#include <apr_strings.h>
#include <sqlite3.h>

#include "jr_auth.h"
#include "jr_counters.h"
#include "jr_crypt.h"
#include "jr_json.h"
#include "jr_migrate.h"
#include "jr_util.h"
#include "ops_fixture.h"
#include "jr_branches.h"
#include "jr_groups.h"
#include "jr_users.h"

apr_pool_t *fx_pool;
jr_db_t *fx_db;
jr_ctx_t fx_ctx;
long long fx_admin_id;

static jr_config_t cfg;
static void *counters_region; /* the shared counters, in plain memory */
static char dir[32];  /* made by the unchecked fixture, in the parent */
static char path[64]; /* the current test database, "" when none */

/* Removes the test database (the checked teardown). */
static void remove_files(void)
{
    static const char *const suffixes[] = {"", "-wal", "-shm", "-journal"};
    size_t i;
    for (i = 0; path[0] && i < sizeof(suffixes) / sizeof(suffixes[0]); ++i) {
        char name[sizeof(path) + 16];
        snprintf(name, sizeof(name), "%s%s", path, suffixes[i]);
        unlink(name);
    }
    path[0] = '\0';
}

/* The test databases live in a directory that the parent process makes and removes around
 * a test case (an unchecked fixture): a test that fails in a forked child exits without its
 * teardown, and its files go with the directory. */
void fx_dir_setup(void)
{
    strcpy(dir, "/tmp/jr-unit-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

const char *fx_dir(void)
{
    return dir;
}

void fx_dir_teardown(void)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        char name[sizeof(dir) + 256];
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            snprintf(name, sizeof(name), "%s/%s", dir, e->d_name);
            unlink(name);
        }
    }
    if (d) {
        closedir(d);
    }
    rmdir(dir);
}

void fx_setup(void)
{
    const char *err = NULL;
    int fd, applied, version;
    jr_result_t res;

    ck_assert_int_eq(apr_pool_create(&fx_pool, NULL), APR_SUCCESS);
    snprintf(path, sizeof(path), "%s/ops-XXXXXX", dir);
    fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    ck_assert_msg(jr_db_open(&fx_db, fx_pool, "sqlite3", path, &err) == APR_SUCCESS, "%s", err);
    ck_assert_msg(jr_migrate(fx_db, fx_pool, &applied, &version, &err) == APR_SUCCESS, "%s", err);
    ck_assert_int_eq(jr_db_prepare_all(fx_db), APR_SUCCESS);

    cfg = jr_config_defaults;
    cfg.bcrypt_cost = 4;
    cfg.session_ttl = 3600;
    cfg.dummy_hash = jr_password_hash(fx_pool, "dummy password", 4);
    cfg.data_dir = NULL; /* the operations under test store no files */
    counters_region = malloc(jr_shmcounters_size(JR_SHM_MIN_SLOTS));
    ck_assert_ptr_nonnull(counters_region);
    memset(&fx_ctx, 0, sizeof(fx_ctx));
    fx_ctx.pool = fx_pool;
    fx_ctx.db = fx_db;
    fx_ctx.cfg = &cfg;
    fx_ctx.iface = JR_IF_ADMIN;
    fx_ctx.client_ip = "192.0.2.1";
    fx_ctx.who.authenticated = 1;
    fx_ctx.who.role = JR_ROLE_ADMIN;
    fx_ctx.params = apr_table_make(fx_pool, 2);
    fx_ctx.query = apr_table_make(fx_pool, 2);
    fx_ctx.counters = jr_shmcounters_attach(fx_pool, counters_region,
                                            jr_shmcounters_size(JR_SHM_MIN_SLOTS),
                                            JR_SHM_MIN_SLOTS, 1);
    ck_assert_ptr_nonnull(fx_ctx.counters);
    jr_identity_set_branches(&fx_ctx, apr_array_make(fx_pool, 1, sizeof(long long)));
    ck_assert_ptr_null(fx_ctx.who.branch_json); /* admins see every branch */

    res = fx_call(jr_op_users_create,
                  "{\"username\": \"root\", \"password\": \"rootpass1\", \"role\": \"admin\"}");
    ck_assert_int_eq(res.status, 201);
    fx_admin_id = fx_id(&res);
    ck_assert_int_gt(fx_admin_id, 0);
    fx_ctx.who.user_id = fx_admin_id;
    fx_ctx.who.username = "root";
}

void fx_teardown(void)
{
    jr_db_close(fx_db);
    fx_db = NULL;
    apr_pool_destroy(fx_pool);
    fx_pool = NULL;
    free(counters_region);
    counters_region = NULL;
    remove_files();
}

TCase *fx_tcase(Suite *s, const char *name, SFun setup_fn, SFun teardown_fn)
{
    TCase *tc = tcase_create(name);
    tcase_add_unchecked_fixture(tc, fx_dir_setup, fx_dir_teardown);
    tcase_add_checked_fixture(tc, setup_fn, teardown_fn);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    return tc;
}

/* op's route, as the server runs it (NULL for an operation that no route serves). */
static const jr_route_t *route_of(jr_op_fn *op)
{
    const jr_route_t *tables[] = {jr_routes_admin, jr_routes_v1}, *rt;
    size_t i;
    for (i = 0; i < sizeof(tables) / sizeof(tables[0]); ++i) {
        for (rt = tables[i]; rt->method; ++rt) {
            if (rt->op == op) {
                return rt;
            }
        }
    }
    return NULL;
}

/* The operation under test and what it returned, through the road. */
static jr_op_fn *inner_op;
static int inner_rc, inner_ran;

static int recording_op(jr_ctx_t *c, const json_t *in, jr_result_t *res)
{
    inner_ran = 1;
    inner_rc = inner_op(c, in, res);
    return inner_rc;
}

/* Runs op as its route does: the body parsed and checked against the route's field table,
 * the ban step of a route without credentials (login), the transaction of a writing route. */
static void road(jr_ctx_t *c, jr_op_fn *op, const char *body, jr_result_t *res)
{
    const jr_route_t *rt = route_of(op);
    jr_route_t copy;
    jr_credentials_t none = {NULL, NULL};
    inner_op = op;
    inner_ran = 0;
    if (!rt) {
        const char *err = NULL;
        const json_t *in = body ? jr_json_parse(fx_pool, body, strlen(body), &err) : NULL;
        ck_assert_msg(!body || in, "test body %s: %s", body, err ? err : "?");
        ck_assert_int_eq(jr_road_op(c, recording_op, JR_RF_WRITE, in, res), res->status);
    } else if (rt->auth != JR_AUTH_NONE || jr_request_authorize(c, rt, &none, res)) {
        copy = *rt;
        copy.op = recording_op;
        ck_assert_int_eq(
            jr_request_run(c, &copy, "application/json", body, body ? strlen(body) : 0, res),
            res->status);
    }
    if (inner_ran) {
        ck_assert_int_eq(inner_rc, res->status); /* an operation returns the status it answered */
    }
}

jr_result_t fx_call_as(jr_ctx_t *c, jr_op_fn *op, const char *body)
{
    jr_result_t res;
    jr_result_init(&res, fx_pool);
    road(c, op, body, &res);
    ck_assert_msg(res.body != NULL || (res.file && res.status == 200), "status %d without a body",
                  res.status);
    if (res.body && !res.file) {
        fx_json(res); /* asserts that the answer is JSON */
    }
    ck_assert_int_eq(fx_db->in_tx, 0); /* no operation leaves a transaction open */
    ck_assert_int_eq(
        sqlite3_get_autocommit(apr_dbd_native_handle(fx_db->driver, fx_db->handle)), 1);
    return res;
}

jr_result_t fx_call(jr_op_fn *op, const char *body)
{
    return fx_call_as(&fx_ctx, op, body);
}

void fx_set_id(jr_ctx_t *c, long long id)
{
    apr_table_setn(c->params, "id", jr_i64(fx_pool, id));
}

json_t *fx_json(jr_result_t r)
{
    const char *err = NULL;
    json_t *j;
    if (!r.body) {
        return NULL;
    }
    j = jr_json_parse(fx_pool, r.body, r.body_len, &err);
    /* The answer's start only: a check message has a bounded size. */
    ck_assert_msg(j != NULL, "answer %.*s: %s", (int)(r.body_len > 300 ? 300 : r.body_len), r.body,
                  err ? err : "?");
    return j;
}

const char *fx_error(const jr_result_t *r)
{
    return jr_json_str(fx_json(*r), "error", "");
}

void fx_request_ctx(jr_ctx_t *c, jr_iface_e iface, const char *client_ip)
{
    memset(c, 0, sizeof(*c));
    c->pool = fx_pool;
    c->db = fx_db;
    c->cfg = fx_ctx.cfg;
    c->iface = iface;
    c->method = "GET";
    c->client_ip = client_ip;
    c->params = apr_table_make(fx_pool, 2);
    c->query = apr_table_make(fx_pool, 2);
    c->counters = fx_ctx.counters; /* a request always has them (none: 503) */
}

long long fx_id(const jr_result_t *r)
{
    return jr_json_int(fx_json(*r), "id", -1);
}

void fx_expect(jr_result_t r, int status, const char *word, int line)
{
    ck_assert_msg(r.status == status, "line %d: status %d, expected %d (%s)", line, r.status,
                  status, fx_error(&r));
    ck_assert_msg(strstr(fx_error(&r), word) != NULL, "line %d: error '%s' lacks '%s'", line,
                  fx_error(&r), word);
}

const char *fx_sql(const char *sql)
{
    sqlite3 *conn = apr_dbd_native_handle(fx_db->driver, fx_db->handle);
    sqlite3_stmt *st = NULL;
    const char *out = NULL;
    ck_assert_msg(sqlite3_prepare_v2(conn, sql, -1, &st, NULL) == SQLITE_OK, "%s: %s", sql,
                  sqlite3_errmsg(conn));
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
        out = apr_pstrdup(fx_pool, (const char *)sqlite3_column_text(st, 0));
    }
    sqlite3_finalize(st);
    return out;
}

long long fx_audit_count(void)
{
    return atoll(fx_sql("SELECT COUNT(*) FROM audit_log"));
}

const char *fx_audit_last(const char *col)
{
    return fx_sql(apr_pstrcat(fx_pool, "SELECT ", col, " FROM audit_log ORDER BY id DESC LIMIT 1",
                              NULL));
}

long long fx_new_branch(const char *name)
{
    jr_result_t res =
        fx_call(jr_op_branches_create, apr_psprintf(fx_pool, "{\"name\": \"%s\"}", name));
    ck_assert_msg(res.status == 201, "branch %s: %d %s", name, res.status, fx_error(&res));
    return fx_id(&res);
}

jr_result_t fx_create_group(const char *name, long long branch)
{
    return fx_call(jr_op_groups_create,
                   jr_psprintf(fx_pool, "{\"name\": \"%s\", \"branch_id\": %lld}", name, branch));
}

long long fx_new_group(const char *name, long long branch)
{
    jr_result_t res = fx_create_group(name, branch);
    ck_assert_msg(res.status == 201, "group %s: %d %s", name, res.status, fx_error(&res));
    return fx_id(&res);
}

long long fx_new_tutor(const char *name, const char *branch_ids_json)
{
    jr_result_t res = fx_call(jr_op_users_create,
                              apr_psprintf(fx_pool,
                                           "{\"username\": \"%s\", \"password\": \"tutorpass\","
                                           " \"role\": \"tutor\", \"branch_ids\": %s}",
                                           name, branch_ids_json));
    ck_assert_msg(res.status == 201, "tutor %s: %d %s", name, res.status, fx_error(&res));
    return fx_id(&res);
}

void fx_tutor_ctx(jr_ctx_t *t, long long uid)
{
    apr_array_header_t *ids;
    *t = fx_ctx;
    t->params = apr_table_make(fx_pool, 2);
    t->query = apr_table_make(fx_pool, 2);
    t->who.user_id = uid;
    t->who.username = NULL;
    t->who.role = JR_ROLE_TUTOR;
    ck_assert_int_eq(jr_user_branch_ids(t, uid, &ids), APR_SUCCESS);
    jr_identity_set_branches(t, ids);
    ck_assert_ptr_nonnull(t->who.branch_json);
}
