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

/* JournalCounterSlots of the main server (post_config runs before the defaults are
 * resolved). */
static unsigned configured_slots(server_rec *s)
{
    long long n = mj_conf(s)->counter_slots;
    return n > 0 ? (unsigned)n : JR_SHM_DEFAULT_SLOTS;
}

int mj_shm_post_config(apr_pool_t *pconf, server_rec *s)
{
    unsigned slots = configured_slots(s);
    apr_status_t rv;
    retained = ap_retained_data_get(RETAINED_KEY);
    if (!retained) {
        retained = ap_retained_data_create(RETAINED_KEY, sizeof(*retained));
    }
    if (retained->shm) {
        if (jr_shmcounters_attach(pconf, apr_shm_baseaddr_get(retained->shm),
                                  apr_shm_size_get(retained->shm), slots, 0)) {
            return OK;
        }
        /* A restart with another JournalCounterSlots or a module with another layout: the
         * children of the old generation keep their own mapping until they exit; the new
         * generation must not attach to a region it cannot read. */
        MJ_LOG(JR02013, s, 0,
               "shared counters recreated for %u slots; counts start from zero",
               slots);
        apr_shm_destroy(retained->shm);
        retained->shm = NULL;
    }
    /* Anonymous shared memory lives in the process pool: it survives restarts. */
    rv = apr_shm_create(&retained->shm, jr_shmcounters_size(slots), NULL, s->process->pool);
    if (rv != APR_SUCCESS) {
        retained->shm = NULL;
        MJ_LOG(JR00009, s, rv, "cannot create shared memory");
        return !OK;
    }
    if (!jr_shmcounters_attach(s->process->pool, apr_shm_baseaddr_get(retained->shm),
                               apr_shm_size_get(retained->shm), slots, 1)) {
        MJ_LOG(JR00011, s, 0, "cannot initialise shared memory");
        return !OK;
    }
    return OK;
}

void mj_shm_child_init(apr_pool_t *pchild, server_rec *s)
{
    if (retained && retained->shm) {
        counters = jr_shmcounters_attach(pchild, apr_shm_baseaddr_get(retained->shm),
                                         apr_shm_size_get(retained->shm), configured_slots(s), 0);
    }
    if (!counters) {
        MJ_LOG(JR00010, s, 0,
               "shared counters unavailable: /api/v1 and logins answer 503");
    }
}
