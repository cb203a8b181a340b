/* Periodic housekeeping through mod_watchdog: one child at a time (a singleton watchdog)
 * removes temp files a crashed child left behind, purges what has outlived
 * trash_retention_days and trims the event outbox. */
#include <pthread.h>
#include <string.h>

#include <apr_optional.h>
#include <http_core.h>
#include <mod_watchdog.h>
#include <mpm_common.h>

#include "jr_idem.h"
#include "jr_backup.h"
#include "jr_events.h"
#include "jr_notif.h"
#include "jr_chat.h"
#include "jr_trash.h"
#include "jr_storage.h"
#include "jr_crypt.h"
#include "mj_private.h"

#define WATCHDOG_NAME "mod_journal"
/* Far longer than any upload takes: every write refreshes a temp file's mtime. */
#define TMP_MAX_AGE apr_time_from_sec(86400)
/* Seconds between looks at the backup schedule. A look is a pooled connection, one settings
 * read and a directory listing; often enough that a server started after the day's time takes
 * its backup within seconds, not a minute later. */
#define BACKUP_TICK 10

static APR_OPTIONAL_FN_TYPE(ap_dbd_open) *dbd_open_fn;
static APR_OPTIONAL_FN_TYPE(ap_dbd_close) *dbd_close_fn;

/* In a child, mod_watchdog's thread and its stop belong to a pool of the configuration, which
 * a child never destroys: the thread runs on while the child destroys pchild (mod_dbd's
 * connections with it) and exits. So a callback does not start once the child is stopping,
 * and pchild's destruction waits for one that runs. Static, not in a pool: the thread may look
 * after pchild is gone. */
static pthread_mutex_t run_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t run_done = PTHREAD_COND_INITIALIZER;
static int running, stopping;

static int run_begin(void)
{
    int ok;
    pthread_mutex_lock(&run_mu);
    ok = !stopping;
    running = ok;
    pthread_mutex_unlock(&run_mu);
    return ok;
}

static void run_end(void)
{
    pthread_mutex_lock(&run_mu);
    running = 0;
    pthread_cond_broadcast(&run_done);
    pthread_mutex_unlock(&run_mu);
}

static apr_status_t stop_runs(void *data)
{
    pthread_mutex_lock(&run_mu);
    stopping = 1;
    while (running) {
        pthread_cond_wait(&run_done, &run_mu);
    }
    pthread_mutex_unlock(&run_mu);
    return APR_SUCCESS;
}

static void child_stopping(apr_pool_t *pchild, int graceful)
{
    pthread_mutex_lock(&run_mu);
    stopping = 1;
    pthread_mutex_unlock(&run_mu);
}

void mj_watchdog_child_init(apr_pool_t *pchild)
{
    /* A pre-cleanup: before pchild's subpools, mod_dbd's connections among them, go. */
    apr_pool_pre_cleanup_register(pchild, NULL, stop_runs);
}

void mj_watchdog_register_hooks(void)
{
    ap_hook_child_stopping(child_stopping, NULL, NULL, APR_HOOK_MIDDLE);
}

/* A child that dies while it receives an upload never runs the cleanup that removes its
 * temp file under JournalDataDir/tmp. */
static void sweep_tmp(server_rec *s, apr_pool_t *pool, const char *data_dir)
{
    int removed = 0, failed = 0;
    apr_status_t rv =
        jr_storage_sweep_tmp(pool, data_dir, apr_time_now() - TMP_MAX_AGE, &removed, &failed);
    if (rv != APR_SUCCESS || failed) {
        MJ_LOG(JR00041, s, rv,
               "cannot clean %s/tmp (%d old temp file(s) left)", data_dir, failed);
    }
    if (removed) {
        MJ_LOG(JR00040, s, 0,
               "removed %d temp file(s) older than a day from %s/tmp", removed,
               data_dir);
    }
}

/* Runs task with a context on a connection of its own (none while the database is down). */
static void with_db(server_rec *s, apr_pool_t *pool, void (*task)(jr_ctx_t *ctx))
{
    ap_dbd_t *dbd;
    jr_db_t *db;
    jr_ctx_t ctx;

    if (!dbd_open_fn || !(dbd = dbd_open_fn(pool, s))) {
        return; /* the database is down: next round */
    }
    /* Not on a schema older than the module's: its statements are not prepared. */
    if ((db = jr_db_use(pool, dbd->driver, dbd->handle, dbd->pool)) != NULL &&
        !jr_db_refusal(db)) {
        memset(&ctx, 0, sizeof(ctx));
        ctx.pool = pool;
        ctx.cfg = mj_conf(s);
        ctx.iface = JR_IF_ADMIN;
        ctx.client_ip = "housekeeping";
        ctx.params = apr_table_make(pool, 1);
        ctx.query = apr_table_make(pool, 1);
        ctx.db = db;
        task(&ctx);
    }
    dbd_close_fn(s, dbd);
    /* A backup draws random bytes in this thread; mod_watchdog's thread may outlive the
     * child's last look at memory, so its generator state goes now (made again next time). */
    jr_crypt_thread_end();
}

static void purge_and_trim(jr_ctx_t *ctx)
{
    jr_trash_purge_expired(ctx);
    jr_idem_purge_expired(ctx);
    jr_events_trim(ctx, ctx->cfg->event_retention);
    jr_notif_purge(ctx);
    jr_chat_purge(ctx);
}

/* A backup that failed (a full disk, say) is tried again a minute later, not at every look.
 * Only the singleton watchdog's thread reads and writes it. */
#define BACKUP_RETRY apr_time_from_sec(60)
static apr_time_t backup_retry_at;

static void scheduled_backup(jr_ctx_t *ctx)
{
    if (apr_time_now() < backup_retry_at) {
        return;
    }
    if (jr_backup_scheduled(ctx) < 0) {
        backup_retry_at = apr_time_now() + BACKUP_RETRY;
    }
}

static apr_status_t housekeeping(int state, void *data, apr_pool_t *pool)
{
    server_rec *s = data;
    if (state == AP_WATCHDOG_STATE_RUNNING && run_begin()) {
        sweep_tmp(s, pool, mj_conf(s)->data_dir);
        with_db(s, pool, purge_and_trim);
        run_end();
    }
    return APR_SUCCESS;
}

/* Every BACKUP_TICK seconds, whether today's backup is due (JournalBackupSchedule). */
static apr_status_t backup_tick(int state, void *data, apr_pool_t *pool)
{
    server_rec *s = data;
    if (state == AP_WATCHDOG_STATE_RUNNING && run_begin()) {
        if (mj_conf(s)->backup_schedule) {
            with_db(s, pool, scheduled_backup);
        }
        run_end();
    }
    return APR_SUCCESS;
}

int mj_watchdog_post_config(apr_pool_t *pconf, server_rec *s)
{
    APR_OPTIONAL_FN_TYPE(ap_watchdog_get_instance) *get_instance;
    APR_OPTIONAL_FN_TYPE(ap_watchdog_register_callback) *register_cb;
    ap_watchdog_t *wd;
    apr_status_t rv;

    get_instance = APR_RETRIEVE_OPTIONAL_FN(ap_watchdog_get_instance);
    register_cb = APR_RETRIEVE_OPTIONAL_FN(ap_watchdog_register_callback);
    dbd_open_fn = APR_RETRIEVE_OPTIONAL_FN(ap_dbd_open);
    dbd_close_fn = APR_RETRIEVE_OPTIONAL_FN(ap_dbd_close);
    if (!get_instance || !register_cb) {
        MJ_LOG(JR00030, s, 0,
               "mod_watchdog is not available: the trash is not purged "
               "automatically");
        return OK;
    }
    if ((rv = get_instance(&wd, WATCHDOG_NAME, 0, 1, pconf)) != APR_SUCCESS ||
        (rv = register_cb(wd, apr_time_from_sec(mj_conf(s)->purge_interval), s, housekeeping)) !=
            APR_SUCCESS ||
        (rv = register_cb(wd, apr_time_from_sec(BACKUP_TICK), s, backup_tick)) != APR_SUCCESS) {
        MJ_LOG(JR00031, s, rv, "cannot schedule housekeeping");
        return !OK;
    }
    return OK;
}
