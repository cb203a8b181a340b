/* Private declarations of the module glue (the only code that includes httpd headers). */
#ifndef MJ_PRIVATE_H
#define MJ_PRIVATE_H

#include <httpd.h>
#include <http_config.h>
#include <http_log.h>

#include "jr_ctx.h" /* apr_dbd.h comes before mod_dbd.h */
#include "jr_log.h"

#include <mod_dbd.h>

#ifndef MJ_MODULE_RECORD /* mod_journal.c declares the module itself */
APLOG_USE_MODULE(journal);
#endif

#define MJ_HANDLER "journal"

/* Logging by tag (core/jr_log_tags.h), at the tag's registered level, with the glue's file and
 * line. httpd checks its LogLevel before it formats. */
#define MJ_APLOG(level)                                                                       \
    ((level) <= JR_LOG_CRIT    ? APLOG_CRIT                                                   \
     : (level) == JR_LOG_ERR  ? APLOG_ERR                                                    \
     : (level) == JR_LOG_WARN ? APLOG_WARNING                                                \
     : (level) == JR_LOG_INFO ? APLOG_INFO                                                   \
                              : APLOG_DEBUG)
#define MJ_LOG(tag, s, rv, ...)                                                               \
    ap_log_error(APLOG_MARK, MJ_APLOG(JR_LOG_LEVEL(tag)), rv, s, #tag ": " __VA_ARGS__)
#define MJ_RLOG(tag, r, rv, ...)                                                              \
    ap_log_rerror(APLOG_MARK, MJ_APLOG(JR_LOG_LEVEL(tag)), rv, r, #tag ": " __VA_ARGS__)
/* A message whose level depends on the configuration: the registry holds its most severe. */
#define MJ_LOG_AT(tag, level, s, rv, ...)                                                     \
    do {                                                                                      \
        (void)JR_LOG_LEVEL(tag); /* registered */                                             \
        ap_log_error(APLOG_MARK, MJ_APLOG(level), rv, s, #tag ": " __VA_ARGS__);              \
    } while (0)

/* mj_config.c: the directives of core/jr_config_list.h. A server's configuration is the
 * core's jr_config_t, resolved (defaults, checks across directives) with jr_config_resolve. */
extern const command_rec mj_directives[];
void *mj_create_server_conf(apr_pool_t *p, server_rec *s);
void *mj_merge_server_conf(apr_pool_t *p, void *base, void *add);
jr_config_t *mj_conf(const server_rec *s);

/* mj_watchdog.c: periodic housekeeping */
int mj_watchdog_post_config(apr_pool_t *pconf, server_rec *s);
void mj_watchdog_child_init(apr_pool_t *pchild);
void mj_watchdog_register_hooks(void);

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

/* mj_sse.c: the event streams */
int mj_sse_post_config(apr_pool_t *pconf, server_rec *s);
void mj_sse_child_init(apr_pool_t *pchild, server_rec *s);
void mj_sse_register_hooks(void);

/* mj_waker.c: the thread of a child that sends the workers' wake-ups of its commits
 * (PostgreSQL); mj_waker_of gives a server's (NULL: none, the commits send them), and
 * mj_genshare_of its database's shared read of the generation (NULL: each read its own) */
void mj_waker_child_init(apr_pool_t *pchild, server_rec *s);
struct jr_waker *mj_waker_of(server_rec *s);
struct jr_genshare *mj_genshare_of(server_rec *s);

/* mj_gate.c: JournalActiveRequests, the requests a child runs at once; the others wait in
 * order, at most MJ_GATE_MAX_WAIT (then APR_TIMEUP). */
#define MJ_GATE_MAX_WAIT apr_time_from_sec(10)
void mj_gate_child_init(apr_pool_t *pchild, server_rec *s);
apr_status_t mj_gate_enter(request_rec *r, apr_interval_time_t max_wait);
void mj_gate_leave(void);

/* mj_redis.c: publish/subscribe through Redis (JournalRedis) */
int mj_redis_post_config(apr_pool_t *pconf, server_rec *s);
void mj_redis_child_init(apr_pool_t *pchild, void (*on_message)(void));
void mj_redis_publish(void);

/* mj_http.c */
int mj_handler(request_rec *r);
/* The request this thread serves in mj_handler (NULL outside): the core's log lines name it. */
extern _Thread_local request_rec *mj_current_request;

#endif
