/* A read of the write generation shared by the threads that ask at once (jr_genshare.h). */
#include <pthread.h>

#include <apr_time.h>

#include "jr_genshare.h"

struct jr_genshare {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    /* Reads started and ended; one at a time, so they end in the order they started. */
    apr_uint64_t started, ended;
    /* The last ended read's answer, and whether a read ever gave a generation. */
    apr_status_t rv;
    apr_uint64_t gen;
    int have_gen;
    /* Threads waiting for a read of another thread. */
    int waiting;
    /* Until then reads answer APR_EAGAIN; how long a hold lasts (jr_genshare_create). */
    apr_time_t hold_until;
    apr_interval_time_t hold;
};

static apr_status_t destroy(void *data)
{
    jr_genshare_t *g = data;
    pthread_cond_destroy(&g->cv);
    pthread_mutex_destroy(&g->mu);
    return APR_SUCCESS;
}

jr_genshare_t *jr_genshare_create(apr_pool_t *p, apr_interval_time_t hold)
{
    jr_genshare_t *g = apr_pcalloc(p, sizeof(*g));
    if (!g || pthread_mutex_init(&g->mu, NULL) != 0) {
        return NULL;
    }
    g->hold = hold;
    if (pthread_cond_init(&g->cv, NULL) != 0) {
        pthread_mutex_destroy(&g->mu);
        return NULL;
    }
    apr_pool_cleanup_register(p, g, destroy, apr_pool_cleanup_null);
    return g;
}

/* Under g->mu: makes read number g->started + 1 with the mutex released, then publishes it.
 * A read that found a write running holds the reads after it back (jr_genshare.h): under a
 * stream of writes nearly every snapshot has one running, and a request would wait for the
 * read only to run its own statements after it (its key's lookup then brings the snapshot, as
 * without a sharer). So does a read that found a new generation while other threads were
 * asking too: under concurrent writes nothing kept under the last one can be served. A thread
 * that asks alone (one client's requests one after another) is never held back by a new
 * generation. */
static void make_read(jr_genshare_t *g, jr_db_t *db, apr_pool_t *p, jr_genshare_fetch_fn *fetch)
{
    apr_uint64_t gen = 0;
    apr_status_t rv;
    g->started++;
    pthread_mutex_unlock(&g->mu);
    rv = fetch(db, p, &gen);
    pthread_mutex_lock(&g->mu);
    if (rv == APR_EAGAIN ||
        (rv == APR_SUCCESS && g->have_gen && gen != g->gen && g->waiting > 0)) {
        g->hold_until = apr_time_now() + g->hold;
    }
    if (rv == APR_SUCCESS) {
        g->have_gen = 1;
        g->gen = gen;
    }
    g->rv = rv;
    g->ended = g->started;
    pthread_cond_broadcast(&g->cv);
}

apr_status_t jr_genshare_read(jr_genshare_t *g, jr_db_t *db, apr_pool_t *p,
                              jr_genshare_fetch_fn *fetch, apr_uint64_t *gen)
{
    apr_uint64_t need;
    apr_status_t rv;
    pthread_mutex_lock(&g->mu);
    if (apr_time_now() < g->hold_until) {
        pthread_mutex_unlock(&g->mu);
        return APR_EAGAIN;
    }
    /* A read already on its way may have taken its snapshot before this call: the answer must
     * come from the one after it, or a later one. */
    need = g->started + 1;
    while (g->ended < need) {
        if (g->started == g->ended) {
            make_read(g, db, p, fetch); /* none on its way: this thread reads */
        } else {
            g->waiting++;
            pthread_cond_wait(&g->cv, &g->mu);
            g->waiting--;
        }
    }
    if ((rv = g->rv) == APR_SUCCESS) {
        *gen = g->gen;
    }
    pthread_mutex_unlock(&g->mu);
    return rv;
}

void jr_genshare_counts(jr_genshare_t *g, apr_uint64_t *reads, int *waiting)
{
    pthread_mutex_lock(&g->mu);
    *reads = g->ended;
    *waiting = g->waiting;
    pthread_mutex_unlock(&g->mu);
}
