/* Settings validation (jr_settings.c): the body of PUT /api/settings through the request
 * pipeline (jr_request_run) into an in-memory SQLite database, then read back as GET
 * /api/settings and /api/public-settings. The stored values are removed after each input,
 * so every run starts from the defaults. Oracles: the answer is 200 or a 400 that says why;
 * no transaction stays open; after a 200 each named setting reads back and the time zone
 * is one ICU knows. */
#include <string.h>

#include <apr_strings.h>
#include <sqlite3.h>

#include "fuzz.h"
#include "jr_json.h"
#include "jr_log.h"
#include "jr_migrate.h"
#include "jr_settings.h"
#include "jr_time.h"

static jr_db_t *db;
static jr_config_t cfg;
static const jr_route_t *put_route;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    apr_pool_t *root = fuzz_root();
    apr_table_t *params = apr_table_make(root, 2);
    const char *err = NULL, *allow = NULL;
    int applied, version;

    jr_log_set(NULL, NULL, JR_LOG_OFF); /* the migrations' progress lines */
    jr_db_global_init();
    FUZZ_CHECK(jr_db_open(&db, root, "sqlite3", ":memory:", &err) == APR_SUCCESS);
    FUZZ_CHECK(jr_migrate(db, root, &applied, &version, &err) == APR_SUCCESS);
    FUZZ_CHECK(jr_db_prepare_all(db) == APR_SUCCESS);
    FUZZ_CHECK(jr_route_match(jr_routes_admin, root, "PUT", "/api/settings", &put_route, params,
                              &allow) == JR_ROUTE_FOUND);
    cfg.data_dir = "/nonexistent";
    return 0;
}

static void context(jr_ctx_t *ctx, apr_pool_t *p)
{
    memset(ctx, 0, sizeof(*ctx));
    ctx->pool = p;
    ctx->db = db;
    ctx->cfg = &cfg;
    ctx->iface = JR_IF_ADMIN;
    ctx->client_ip = "192.0.2.1";
    ctx->method = "PUT";
    ctx->who.authenticated = 1;
    ctx->who.role = JR_ROLE_ADMIN;
    ctx->who.username = "root";
    ctx->params = apr_table_make(p, 1);
    ctx->query = apr_table_make(p, 1);
}

static void read_back(jr_ctx_t *ctx, const json_t *in)
{
    jr_result_t res;
    const char *name;
    json_t *v;

    json_object_foreach((json_t *)in, name, v) {
        int id = jr_setting_id(name);
        FUZZ_CHECK(id >= 0 && jr_setting(ctx, (jr_setting_id_t)id) != NULL);
    }
    FUZZ_CHECK(jr_tz_valid(jr_setting_timezone(ctx)));
    jr_result_init(&res, ctx->pool);
    FUZZ_CHECK(jr_op_public_settings(ctx, NULL, &res) == 200 && res.status == 200);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    apr_pool_t *p = fuzz_pool();
    jr_ctx_t ctx;
    jr_result_t res;
    const char *err = NULL;
    json_t *in, *out;

    context(&ctx, p);
    jr_result_init(&res, p);
    FUZZ_CHECK(jr_request_run(&ctx, put_route, "application/json", (const char *)data, size,
                              &res) == res.status);
    FUZZ_CHECK(!db->in_tx);
    FUZZ_CHECK(res.status == 200 || res.status == 400);
    /* Every answer is a JSON document written by the writer. */
    FUZZ_CHECK(res.body && (out = jr_json_parse(p, res.body, res.body_len, &err)) != NULL);
    if (res.status == 400) {
        FUZZ_CHECK(res.error && *res.error);
        FUZZ_CHECK(!strcmp(jr_json_str(out, "error", ""), res.error));
    } else {
        FUZZ_CHECK((in = jr_json_parse(p, (const char *)data, size, &err)) != NULL);
        read_back(&ctx, in);
    }
    FUZZ_CHECK(sqlite3_exec(apr_dbd_native_handle(db->driver, db->handle),
                            "DELETE FROM settings; DELETE FROM audit_log;", NULL, NULL,
                            NULL) == SQLITE_OK);
    apr_pool_destroy(p);
    return 0;
}
