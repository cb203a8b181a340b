/* The module's side of the database: finds mod_dbd's settings, migrates before the children
 * start, sets up each pooled connection and prepares the module's statements on it. */
#include <string.h>
#include <unistd.h>

#include <apr_optional.h>
#include <apr_optional_hooks.h>
#include <apr_strings.h>
#include <http_core.h>
#include <mpm_common.h>
#include <unixd.h>

#include "jr_crypt.h"
#include "jr_log.h"
#include "jr_migrate.h"
#include "jr_stmts.h"
#include "jr_wqueue.h"
#include "mj_private.h"

static APR_OPTIONAL_FN_TYPE(ap_dbd_acquire) *dbd_acquire_fn;

ap_dbd_t *mj_dbd_acquire(request_rec *r)
{
    return dbd_acquire_fn ? dbd_acquire_fn(r) : NULL;
}

/* mod_dbd keeps its settings private; its server config starts with a pointer to the public
 * dbd_cfg_t (stable across httpd 2.4). We only read the driver name and parameters. */
const dbd_cfg_t *mj_dbd_settings(server_rec *s)
{
    module *dbd = ap_find_linked_module("mod_dbd.c");
    void *svr;
    if (!dbd || !(svr = ap_get_module_config(s->module_config, dbd))) {
        return NULL;
    }
    return *(dbd_cfg_t **)svr;
}

/* JournalActiveRequests when not set, on PostgreSQL. A request's work there runs mostly in
 * PostgreSQL's backends, on the same cores: under the mixed load of make bench (2 children, 2
 * cores) 4 turns a child gave a p99 of 44 ms where 16 gave 65 ms, at the same throughput
 * (docs/architecture.md §7.21). SQLite's requests work in httpd's threads: 16. */
#define ACTIVE_REQUESTS_PGSQL 4

static void defaults_by_database(server_rec *s, const dbd_cfg_t *cfg)
{
    server_rec *sp;
    if (!cfg || jr_db_dialect_of(cfg->name) != JR_DB_PGSQL) {
        return;
    }
    for (sp = s; sp; sp = sp->next) {
        if (mj_conf(sp)->active_requests < 0) {
            mj_conf(sp)->active_requests = ACTIVE_REQUESTS_PGSQL;
        }
    }
}

int mj_db_check_config(apr_pool_t *pconf, apr_pool_t *plog, apr_pool_t *ptemp, server_rec *s)
{
    const dbd_cfg_t *cfg;
    server_rec *sp;
    if (!ap_find_linked_module("mod_dbd.c")) {
        MJ_LOG(JR00001, s, 0,
               "mod_journal needs mod_dbd: add LoadModule dbd_module");
        return !OK;
    }
    defaults_by_database(s, mj_dbd_settings(s));
    for (sp = s; sp; sp = sp->next) {
        const char *err = jr_config_resolve(ptemp, mj_conf(sp));
        if (err) {
            MJ_LOG(JR00008, sp, 0, "%s", err);
            return !OK;
        }
    }
    cfg = mj_dbd_settings(s);
    if (!cfg || !jr_db_dialect_of(cfg->name)) {
        MJ_LOG(JR00002, s, 0,
               "DBDriver must be sqlite3 or pgsql for mod_journal (found %s)",
               cfg && cfg->name ? cfg->name : "none");
        return !OK;
    }
    return OK;
}

/* As root, the database file was created by the parent: hand it to the children's user. */
static void give_sqlite_files(apr_pool_t *p, server_rec *s, const char *path)
{
    static const char *const suffixes[] = {"", "-wal", "-shm", JR_WQUEUE_SUFFIX,
                                          JR_WQUEUE_GEN_SUFFIX};
    size_t i;
    if (geteuid() != 0) {
        return;
    }
    for (i = 0; i < sizeof(suffixes) / sizeof(*suffixes); ++i) {
        const char *f = apr_pstrcat(p, path, suffixes[i], NULL);
        if (access(f, F_OK) == 0 && chown(f, ap_unixd_config.user_id, ap_unixd_config.group_id) != 0) {
            MJ_LOG(JR00003, s, errno,
                   "cannot hand %s to the server's User", f);
        }
    }
}

static int migrate_one(apr_pool_t *ptemp, server_rec *s, const dbd_cfg_t *cfg)
{
    jr_db_t *db;
    const char *err = NULL;
    int applied = 0, version = 0;
    apr_status_t rv = jr_db_open(&db, ptemp, cfg->name, cfg->params, &err);
    if (rv == APR_SUCCESS) {
        rv = jr_migrate(db, ptemp, &applied, &version, &err);
        jr_db_close(db);
    }
    if (rv != APR_SUCCESS) {
        /* err never holds DBDParams: it may contain a password. */
        MJ_LOG(JR00004, s, rv, "database migration failed: %s",
               err ? err : "unknown error");
        return !OK;
    }
    if (jr_db_dialect_of(cfg->name) == JR_DB_SQLITE) {
        give_sqlite_files(ptemp, s, cfg->params);
    }
    MJ_LOG(JR00005, s, 0, "schema version %d (%d migration(s) applied)",
           version, applied);
    return OK;
}

static int resolve_core_config(apr_pool_t *p, server_rec *s)
{
    jr_config_t *c = mj_conf(s);
    const char *err = jr_config_resolve(p, c);
    if (err) {
        MJ_LOG(JR00008, s, 0, "%s", err);
        return !OK;
    }
    /* A hash of a random password at the configured cost: checked for unknown users. */
    c->dummy_hash = jr_password_hash(p, jr_random_password(p, 24), c->bcrypt_cost);
    return OK;
}

/* Connections to the database get foreign keys when SQLite opens them, before mod_dbd prepares
 * the statements of other modules (mod_authn_dbd, DBDPrepareSQL) on them: turning them on
 * afterwards would make those statements fail. */
static void preconfigure_sqlite(apr_pool_t *pconf, server_rec *s, const char *path)
{
    apr_status_t rv = jr_db_sqlite_preconfigure(pconf, path);
    jr_db_sqlite_cache_size(mj_conf(s)->sqlite_cache);
    jr_db_sqlite_busy_timeout(mj_conf(s)->sqlite_busy_timeout);
    if (rv != APR_SUCCESS) {
        MJ_LOG(JR00070, s, rv,
               "cannot set up SQLite connections to %s as they open; other "
               "modules' statements on them (mod_authn_dbd, DBDPrepareSQL) may fail",
               path);
    }
}

int mj_db_post_config(apr_pool_t *pconf, apr_pool_t *plog, apr_pool_t *ptemp, server_rec *s)
{
    apr_hash_t *done = apr_hash_make(ptemp);
    int first_pass = ap_state_query(AP_SQ_MAIN_STATE) == AP_SQ_MS_CREATE_PRE_CONFIG;
    server_rec *sp;

    dbd_acquire_fn = APR_RETRIEVE_OPTIONAL_FN(ap_dbd_acquire);
    if (!dbd_acquire_fn) {
        MJ_LOG(JR00001, s, 0,
               "mod_journal needs mod_dbd: add LoadModule dbd_module");
        return !OK;
    }
    if (jr_crypt_init() != 0) {
        MJ_LOG(JR00006, s, 0, "OpenSSL has no SHA-256");
        return !OK;
    }
    for (sp = s; sp; sp = sp->next) {
        const dbd_cfg_t *cfg = mj_dbd_settings(sp);
        jr_dialect_e dialect = cfg ? jr_db_dialect_of(cfg->name) : 0;
        const char *key;
        if (!dialect) {
            continue; /* a server without a usable DBDriver serves no journal */
        }
        if (resolve_core_config(pconf, sp) != OK) {
            return !OK;
        }
        key = apr_pstrcat(ptemp, cfg->name, "\n", cfg->params, NULL);
        if (first_pass || apr_hash_get(done, key, APR_HASH_KEY_STRING)) {
            continue;
        }
        if (mj_conf(sp)->migrate && migrate_one(ptemp, sp, cfg) != OK) {
            return !OK;
        }
        if (dialect == JR_DB_SQLITE) {
            preconfigure_sqlite(pconf, sp, cfg->params);
        }
        apr_hash_set(done, key, APR_HASH_KEY_STRING, "");
    }
    return OK;
}

apr_status_t mj_dbd_post_connect(apr_pool_t *p, dbd_cfg_t *cfg, ap_dbd_t *dbd)
{
    jr_dialect_e dialect = jr_db_dialect_of(apr_dbd_name(dbd->driver));

    if (!dialect || jr_db_setup_connection(dbd->driver, dbd->handle) != APR_SUCCESS) {
        return dialect ? APR_EGENERAL : OK;
    }
    /* The module prepares its statements here, into a cache of its own (jr_db_attach), not
     * through mod_dbd: mod_dbd would prepare them before this hook, without a busy timeout
     * (children opening a WAL database at once then failed with "database is locked"), with
     * the sqlite3 driver's legacy statements, and into the table it shares with every other
     * module on the connection. p is cleared before the connection closes. A schema older
     * than the module's is no failure here: the connection then serves nothing (JR01030). */
    if (jr_db_attach(dbd->driver, dbd->handle, dbd->pool, p) != APR_SUCCESS) {
        MJ_LOG(JR00007, cfg->server, 0,
               "cannot prepare statements on a new connection");
        return APR_EGENERAL;
    }
    return OK;
}

void mj_db_register(void)
{
    APR_OPTIONAL_HOOK(dbd, post_connect, mj_dbd_post_connect, NULL, NULL, APR_HOOK_FIRST);
}
