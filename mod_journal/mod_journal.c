/* mod_journal: the module record and its hooks. Everything else lives in the core
 * (mod_journal/core, no httpd headers) and in the mj_*.c glue. */
#define MJ_MODULE_RECORD
#include <http_core.h>
#include <http_request.h>

#include "jr_crypt.h"
#include "jr_log.h"
#include "jr_magic.h"
#include "mj_private.h"

static void log_to_httpd(void *baton, jr_log_level_e level, apr_status_t rv, const char *msg)
{
    static const int levels[] = {APLOG_ERR, APLOG_WARNING, APLOG_INFO, APLOG_DEBUG};
    ap_log_error(APLOG_MARK, levels[level], rv, (server_rec *)baton, "%s", msg);
}

static int mj_post_config(apr_pool_t *pconf, apr_pool_t *plog, apr_pool_t *ptemp, server_rec *s)
{
    jr_log_set(log_to_httpd, s);
    if (ap_state_query(AP_SQ_MAIN_STATE) != AP_SQ_MS_CREATE_PRE_CONFIG &&
        mj_shm_post_config(pconf, s) != OK) {
        return !OK;
    }
    if (mj_db_post_config(pconf, plog, ptemp, s) != OK) {
        return !OK;
    }
    if (ap_state_query(AP_SQ_MAIN_STATE) == AP_SQ_MS_CREATE_PRE_CONFIG) {
        return OK;
    }
    if (mj_watchdog_post_config(pconf, s) != OK) {
        return !OK;
    }
    return mj_worker_post_config(pconf, ptemp, s);
}

static void mj_child_init(apr_pool_t *p, server_rec *s)
{
    /* Before any worker thread exists. */
    jr_log_set(log_to_httpd, s);
    jr_crypt_init();
    jr_magic_init(p);
    json_object_seed(0);
    mj_shm_child_init(p, s);
}

static void mj_register_hooks(apr_pool_t *p)
{
    jr_db_global_init(); /* as early as possible: before SQLite is first used */
    /* Before mod_dbd's post_config, which collects the statements to prepare. */
    static const char *const before_dbd[] = {"mod_dbd.c", NULL};
    ap_hook_check_config(mj_db_check_config, NULL, NULL, APR_HOOK_MIDDLE);
    ap_hook_check_config(mj_worker_check_config, NULL, NULL, APR_HOOK_MIDDLE);
    ap_hook_post_config(mj_post_config, NULL, before_dbd, APR_HOOK_FIRST);
    ap_hook_child_init(mj_child_init, NULL, NULL, APR_HOOK_MIDDLE);
    ap_hook_handler(mj_handler, NULL, NULL, APR_HOOK_MIDDLE);
    mj_db_register();
}

/* The only exported symbol (the build hides everything else). */
__attribute__((visibility("default"))) AP_DECLARE_MODULE(journal) = {
    STANDARD20_MODULE_STUFF,
    NULL,                  /* per-directory config */
    NULL,                  /* merge per-directory */
    mj_create_server_conf, /* per-server config */
    mj_merge_server_conf,  /* merge per-server */
    mj_directives,         /* directives */
    mj_register_hooks,
#if defined(AP_MODULE_FLAG_ALWAYS_MERGE)
    AP_MODULE_FLAG_ALWAYS_MERGE
#endif
};
