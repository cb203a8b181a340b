/* mod_journal: the module record and its hooks. Everything else lives in the core
 * (mod_journal/core, no httpd headers) and in the mj_*.c glue. */
#define MJ_MODULE_RECORD
#include <stdlib.h>
#include <strings.h>
#include <sys/stat.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
/* AddressSanitizer replaces malloc; its mallopt() refuses everything. */
#if defined(__SANITIZE_ADDRESS__)
#define MJ_MALLOC_IS_GLIBC 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MJ_MALLOC_IS_GLIBC 0
#endif
#endif
#if !defined(MJ_MALLOC_IS_GLIBC) && defined(__GLIBC__) && defined(M_ARENA_MAX)
#define MJ_MALLOC_IS_GLIBC 1
#endif
#ifndef MJ_MALLOC_IS_GLIBC
#define MJ_MALLOC_IS_GLIBC 0
#endif

#include <ap_expr.h>
#include <ap_mmn.h>
#include <http_core.h>
#include <http_request.h>

#include "jr_crypt.h"
#include "jr_log.h"
#include "jr_magic.h"
#include "mj_private.h"

_Thread_local request_rec *mj_current_request;

/* The core's messages go to the main server's error log with the core's file and line; while
 * this thread serves a request, as lines of that request (its id and client). */
static void log_to_httpd(void *baton, jr_log_level_e level, apr_status_t rv, const char *file,
                         int line, const char *msg)
{
    if (mj_current_request) {
        ap_log_rerror(file, line, APLOG_MODULE_INDEX, MJ_APLOG(level), rv, mj_current_request,
                      "%s", msg);
        return;
    }
    ap_log_error(file, line, APLOG_MODULE_INDEX, MJ_APLOG(level), rv, (server_rec *)baton, "%s",
                 msg);
}

/* Installs the sink with the most verbose level httpd writes for this module on s (LogLevel),
 * so the core formats nothing httpd would drop. */
static void log_through_httpd(server_rec *s)
{
    int have = ap_get_server_module_loglevel(s, APLOG_MODULE_INDEX);
    int level = JR_LOG_DEBUG;
    while (level > JR_LOG_OFF && MJ_APLOG(level) > have) {
        --level;
    }
    jr_log_set(log_to_httpd, s, (jr_log_level_e)level);
}

static int mj_post_config(apr_pool_t *pconf, apr_pool_t *plog, apr_pool_t *ptemp, server_rec *s)
{
    mode_t umask_before;
    int rc;

    log_through_httpd(s);
    if (ap_state_query(AP_SQ_MAIN_STATE) != AP_SQ_MS_CREATE_PRE_CONFIG &&
        mj_shm_post_config(pconf, s) != OK) {
        return !OK;
    }
    /* Migrating may create the SQLite database: owner-only (SQLite gives its -wal and -shm
     * files the database's mode). The parent is single-threaded here, and the umask of the
     * rest of httpd is left as it was. */
    umask_before = umask(077);
    rc = mj_db_post_config(pconf, plog, ptemp, s);
    umask(umask_before);
    if (rc != OK) {
        return !OK;
    }
    if (ap_state_query(AP_SQ_MAIN_STATE) == AP_SQ_MS_CREATE_PRE_CONFIG) {
        return OK;
    }
    if (mj_watchdog_post_config(pconf, s) != OK || mj_sse_post_config(pconf, s) != OK) {
        return !OK;
    }
    return mj_worker_post_config(pconf, ptemp, s);
}

/* glibc gives each thread that meets a locked arena a new one, up to 8 per core, and keeps the
 * freed memory of every arena: a child's memory grows with its threads' concurrent requests,
 * not with what they hold (docs/architecture.md §7.16). Set before the worker threads exist;
 * an admin's MALLOC_ARENA_MAX in httpd's environment is left to malloc. */
static void limit_malloc_arenas(server_rec *s)
{
#if MJ_MALLOC_IS_GLIBC
    int arenas = mj_conf(s)->malloc_arenas;
    if (arenas > 0 && !getenv("MALLOC_ARENA_MAX") && mallopt(M_ARENA_MAX, arenas) != 1) {
        MJ_LOG(JR00121, s, 0, "malloc refused %d arenas (JournalMallocArenas); its default stays",
               arenas);
    }
#else
    (void)s;
#endif
}

static void mj_child_init(apr_pool_t *p, server_rec *s)
{
    /* Before any worker thread exists. */
    log_through_httpd(s);
    limit_malloc_arenas(s);
    jr_crypt_init();
    jr_magic_init(p);
    json_object_seed(0);
    mj_shm_child_init(p, s);
    mj_sse_child_init(p, s);
    mj_gate_child_init(p, s);
    mj_watchdog_child_init(p);
    mj_waker_child_init(p, s);
    jr_db_sqlite_writers(p);
}

/* 1 when the merged per-directory configuration hands the request to our handler
 * (SetHandler journal). */
static int handler_is_journal(request_rec *r)
{
    const core_dir_config *d = ap_get_core_module_config(r->per_dir_config);
    const char *handler = d->handler;
#if AP_MODULE_MAGIC_AT_LEAST(20120211, 53)
    if (d->expr_handler) {
        const char *err = NULL;
        handler = ap_expr_str_exec(r, d->expr_handler, &err);
        if (err) {
            handler = NULL;
        }
    }
#endif
    return handler && !strcasecmp(handler, MJ_HANDLER);
}

/* The journal's requests have no file behind them, so they are claimed here, the way
 * mod_proxy claims its own: core's directory walk and its .htaccess lookups never run for
 * them (they fail with 403 when a parent of the DocumentRoot is closed to the server's
 * user), and httpd's TRACE echo, itself a map_to_storage hook, never answers on our
 * locations. SetHandler is applied only later (fixups), and core has reset
 * r->per_dir_config to the server defaults before this hook, so the <Location> sections
 * are merged here; the walk is cached, and core's own walk after this hook reuses it. */
static int mj_map_to_storage(request_rec *r)
{
    ap_conf_vector_t *defaults = r->per_dir_config;
    if (ap_location_walk(r) == OK && handler_is_journal(r)) {
        return OK;
    }
    r->per_dir_config = defaults; /* core walks the directories from the defaults */
    return DECLINED;
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
    /* Before core's directory walk and http_core's TRACE (both later in this hook). */
    ap_hook_map_to_storage(mj_map_to_storage, NULL, NULL, APR_HOOK_FIRST);
    ap_hook_handler(mj_handler, NULL, NULL, APR_HOOK_MIDDLE);
    mj_db_register();
    mj_sse_register_hooks();
    mj_watchdog_register_hooks();
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
