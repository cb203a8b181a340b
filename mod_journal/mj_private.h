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

typedef struct {
    const char *data_dir;
    long long session_ttl;  /* seconds; -1 unset */
    long long max_body;     /* bytes; -1 unset */
    int bcrypt_cost;        /* -1 unset */
    int migrate;            /* -1 unset */
    jr_config_t core;       /* resolved in post_config */
} mj_server_conf_t;

/* Defaults (documented in docs/directives.md). */
#define MJ_DEFAULT_DATA_DIR "/var/lib/mod_journal"
#define MJ_DEFAULT_SESSION_TTL (12LL * 3600)
#define MJ_DEFAULT_MAX_BODY (1024LL * 1024)
#define MJ_DEFAULT_BCRYPT_COST 10

extern const command_rec mj_directives[];
void *mj_create_server_conf(apr_pool_t *p, server_rec *s);
void *mj_merge_server_conf(apr_pool_t *p, void *base, void *add);
mj_server_conf_t *mj_conf(const server_rec *s);

/* mj_db.c */
int mj_db_post_config(apr_pool_t *pconf, apr_pool_t *plog, apr_pool_t *ptemp, server_rec *s);
int mj_db_check_config(apr_pool_t *pconf, apr_pool_t *plog, apr_pool_t *ptemp, server_rec *s);
apr_status_t mj_dbd_post_connect(apr_pool_t *p, dbd_cfg_t *cfg, ap_dbd_t *dbd);
void mj_db_register(void);
ap_dbd_t *mj_dbd_acquire(request_rec *r);

/* mj_http.c */
int mj_handler(request_rec *r);

#endif
