/* Runs every unit suite. Check's own environment variables apply (CK_FORK=no to run in one
 * process, e.g. under valgrind; CK_RUN_SUITE / CK_RUN_CASE to select). When JR_UNIT_TAP
 * names a file, a TAP report is written there as well. */
#include <stdlib.h>

#include <sqlite3.h>

#include <apr_general.h>

#include "jr_crypt.h"
#include "jr_log.h"
#include "jr_db.h"
#include "unit.h"

apr_pool_t *unit_pool;

void unit_pool_setup(void)
{
    ck_assert_int_eq(apr_pool_create(&unit_pool, NULL), APR_SUCCESS);
}

void unit_pool_teardown(void)
{
    apr_pool_destroy(unit_pool);
    unit_pool = NULL;
}

int main(int argc, const char *const *argv)
{
    SRunner *sr;
    const char *tap = getenv("JR_UNIT_TAP");
    int failed;

    if (apr_app_initialize(&argc, &argv, NULL) != APR_SUCCESS) {
        return EXIT_FAILURE;
    }
    atexit(apr_terminate);
    if (jr_crypt_init() != 0) {
        return EXIT_FAILURE;
    }
    /* Every statement has a debug line (JR12140): the cases that look at debug lines ask for
     * them, the others would fill the output with thousands. */
    jr_log_set(NULL, NULL, JR_LOG_INFO);
    jr_db_global_init(); /* as the module, the CLI and the worker do before anything else */
    /* jr_db_global_init turns SQLite's memory statistics off; the cases that make a read fail
     * for lack of memory set a hard heap limit at the memory in use, which needs them. SQLite
     * has not started yet, so this still applies. */
    sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 1);

    sr = srunner_create(suite_util());
    srunner_add_suite(sr, suite_json());
    srunner_add_suite(sr, suite_crypt());
    srunner_add_suite(sr, suite_router());
    srunner_add_suite(sr, suite_db());
    srunner_add_suite(sr, suite_search());
    srunner_add_suite(sr, suite_ops());
    srunner_add_suite(sr, suite_ops_users());
    srunner_add_suite(sr, suite_time());
    srunner_add_suite(sr, suite_keys());
    srunner_add_suite(sr, suite_counters());
    srunner_add_suite(sr, suite_multipart());
    srunner_add_suite(sr, suite_storage());
    srunner_add_suite(sr, suite_jw());
    srunner_add_suite(sr, suite_topic());
    srunner_add_suite(sr, suite_ai_describe());
    srunner_add_suite(sr, suite_jobs());
    srunner_add_suite(sr, suite_worker());
    srunner_add_suite(sr, suite_config());
    srunner_add_suite(sr, suite_log());
    srunner_add_suite(sr, suite_stream());
    srunner_add_suite(sr, suite_road());
    srunner_add_suite(sr, suite_ops_records());
    srunner_add_suite(sr, suite_wqueue());
    srunner_add_suite(sr, suite_rcache());
    srunner_add_suite(sr, suite_genshare());
    if (tap && *tap) {
        srunner_set_tap(sr, tap);
    }
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
