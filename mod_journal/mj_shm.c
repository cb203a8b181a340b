/* Shared memory for the counters: created once in the parent and kept across graceful
 * restarts (retained data), inherited by every child. */
#include <apr_shm.h>
#include <http_core.h>

#include "jr_counters.h"
#include "mj_private.h"

#define RETAINED_KEY "mod_journal-counters"

typedef struct {
    apr_shm_t *shm;
} retained_t;

static retained_t *retained;
static jr_counters_t *counters;

jr_counters_t *mj_counters(void)
{
    return counters;
}

int mj_shm_post_config(apr_pool_t *pconf, server_rec *s)
{
    apr_status_t rv;
    retained = ap_retained_data_get(RETAINED_KEY);
    if (!retained) {
        retained = ap_retained_data_create(RETAINED_KEY, sizeof(*retained));
    }
    if (retained->shm) {
        return OK;
    }
    /* Anonymous shared memory lives in the process pool: it survives restarts. */
    rv = apr_shm_create(&retained->shm, jr_shmcounters_size(), NULL, s->process->pool);
    if (rv != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_CRIT, rv, s, "JR00009: cannot create shared memory");
        return !OK;
    }
    if (!jr_shmcounters_attach(s->process->pool, apr_shm_baseaddr_get(retained->shm),
                               apr_shm_size_get(retained->shm), 1)) {
        ap_log_error(APLOG_MARK, APLOG_CRIT, 0, s, "JR00009: cannot initialise shared memory");
        return !OK;
    }
    return OK;
}

void mj_shm_child_init(apr_pool_t *pchild, server_rec *s)
{
    if (retained && retained->shm) {
        counters = jr_shmcounters_attach(pchild, apr_shm_baseaddr_get(retained->shm),
                                         apr_shm_size_get(retained->shm), 0);
    }
    if (!counters) {
        ap_log_error(APLOG_MARK, APLOG_ERR, 0, s,
                     "JR00010: shared counters unavailable: rate limits and bans are off");
    }
}
