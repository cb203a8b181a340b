/* Private declarations of the module glue (the only code that includes httpd headers). */
#ifndef MJ_PRIVATE_H
#define MJ_PRIVATE_H

#include <httpd.h>
#include <http_config.h>
#include <http_log.h>

#include "jr_ctx.h" /* apr_dbd.h comes before mod_dbd.h */

#include <mod_dbd.h>

#ifndef MJ_MODULE_RECORD /* mod_journal.c declares the module itself */
APLOG_USE_MODULE(journal);
#endif

#define MJ_HANDLER "journal"

/* Numeric settings are long long, -1 while unset (see the table in mj_config.c). */
typedef struct {
    const char *data_dir;
    int migrate;
    long long session_ttl, max_body, bcrypt_cost;
    long long rate_default, rate_max;
    long long key_ban_threshold, key_ban_window, key_ban_duration;
    long long login_ban_threshold, login_ban_window, login_ban_duration;
    long long honeypot_ban_duration;
    long long upload_max;
    const char *upload_types;
    long long purge_interval;
    /* The worker processes and the AI endpoint: main server only (see mj_worker.c). */
    int worker; /* JournalWorker; -1 while unset */
    const char *worker_path;
    long long worker_processes, ai_timeout, ai_concurrency;
    const char *ai_endpoint, *ai_model, *ai_key_file;
    long long login_throttle_threshold, login_throttle_window, login_throttle_max_backoff;
    long long counter_slots;
    long long report_versions_max;
    long long event_retention;
    jr_config_t core; /* resolved in post_config */
} mj_server_conf_t;

/* Defaults (documented in docs/directives.md). */
#define MJ_DEFAULT_DATA_DIR "/var/lib/mod_journal"
#define MJ_DEFAULT_SESSION_TTL (12LL * 3600)
#define MJ_DEFAULT_MAX_BODY (1024LL * 1024)
#define MJ_DEFAULT_BCRYPT_COST 10
#define MJ_DEFAULT_UPLOAD_MAX (20LL * 1024 * 1024)
#define MJ_DEFAULT_PURGE_INTERVAL 3600
#define MJ_DEFAULT_WORKER_PROCESSES 1
#define MJ_DEFAULT_AI_TIMEOUT 60
#define MJ_DEFAULT_AI_CONCURRENCY 4
#ifndef MJ_DEFAULT_WORKER_PATH /* the build passes $(bindir)/journal-worker */
#define MJ_DEFAULT_WORKER_PATH "/usr/local/bin/journal-worker"
#endif
#define MJ_DEFAULT_UPLOAD_TYPES                                                               \
    "application/pdf image/jpeg image/png image/webp image/gif text/plain text/csv "          \
    "application/msword application/vnd.openxmlformats-officedocument.wordprocessingml.document " \
    "application/vnd.oasis.opendocument.text"

extern const command_rec mj_directives[];
void *mj_create_server_conf(apr_pool_t *p, server_rec *s);
void *mj_merge_server_conf(apr_pool_t *p, void *base, void *add);
mj_server_conf_t *mj_conf(const server_rec *s);
const char *mj_conf_resolve(apr_pool_t *p, mj_server_conf_t *c);

/* mj_watchdog.c: periodic housekeeping */
int mj_watchdog_post_config(apr_pool_t *pconf, server_rec *s);

/* mj_shm.c: the shared counters (rate limits, failure counts) */
int mj_shm_post_config(apr_pool_t *pconf, server_rec *s);
void mj_shm_child_init(apr_pool_t *pchild, server_rec *s);
struct jr_counters *mj_counters(void);

/* mj_db.c */
int mj_db_post_config(apr_pool_t *pconf, apr_pool_t *plog, apr_pool_t *ptemp, server_rec *s);
int mj_db_check_config(apr_pool_t *pconf, apr_pool_t *plog, apr_pool_t *ptemp, server_rec *s);
apr_status_t mj_dbd_post_connect(apr_pool_t *p, dbd_cfg_t *cfg, ap_dbd_t *dbd);
void mj_db_register(void);
ap_dbd_t *mj_dbd_acquire(request_rec *r);

/* mj_db.c: mod_dbd's driver name and parameters of a server (NULL without DBDriver) */
const dbd_cfg_t *mj_dbd_settings(server_rec *s);

/* mj_worker.c: the journal-worker processes httpd's parent supervises */
int mj_worker_check_config(apr_pool_t *pconf, apr_pool_t *plog, apr_pool_t *ptemp,
                           server_rec *s);
int mj_worker_post_config(apr_pool_t *pconf, apr_pool_t *ptemp, server_rec *s);

/* mj_http.c */
int mj_handler(request_rec *r);

#endif
