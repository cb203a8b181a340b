/* The workers' wake-ups of an httpd child on PostgreSQL (jr_queue_wake): the request threads'
 * commits that queued jobs hand their channels to one thread of the child per database,
 * which sends the NOTIFY. A request then answers without waiting for the NOTIFY's round trip,
 * and under load the commits of the child share one NOTIFY per WAKE_GAP: sent by the
 * committing thread, there was one per commit (the NOTIFY's own transaction costs the server
 * about what a small write does). The first commit after a quiet WAKE_GAP is sent at once.
 * docs/architecture.md §15 and §7.29. Each database's waker also holds the child's shared read
 * of that database's write generation (jr_genshare.h, §7.30): both are one per child and
 * database. */
#include <pthread.h>
#include <string.h>

#include <apr_hash.h>
#include <apr_optional.h>
#include <apr_strings.h>
#include <apr_thread_proc.h>

#include "jr_genshare.h"
#include "jr_jobs.h"
#include "mj_private.h"

/* At most one NOTIFY per database per child in this time: the wait it adds to a worker's
 * pick-up of a job under load, and no wait after a quiet spell. */
#define WAKE_GAP apr_time_from_msec(5)

static APR_OPTIONAL_FN_TYPE(ap_dbd_open) *dbd_open_fn;
static APR_OPTIONAL_FN_TYPE(ap_dbd_close) *dbd_close_fn;

typedef struct mj_waker {
    jr_waker_t base; /* first: jr_jobs.c hands back &base */
    server_rec *s;   /* the NOTIFY's connection comes from this server's mod_dbd pool */
    apr_pool_t *pool; /* the thread's, with an allocator of its own */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    unsigned pending; /* the channels owed, under mu */
    int stop;         /* the child is going: send what is owed and end */
    apr_thread_t *thread;
    jr_genshare_t *genshare; /* the shared read of the database's generation (jr_genshare.h) */
} mj_waker_t;

/* The waker of each server (by its server_rec), made at the child's start; read-only after. */
static apr_hash_t *by_server;

static void give(jr_waker_t *base, unsigned channels)
{
    mj_waker_t *w = (mj_waker_t *)base;
    pthread_mutex_lock(&w->mu);
    if (!w->pending) {
        pthread_cond_signal(&w->cv);
    }
    w->pending |= channels;
    pthread_mutex_unlock(&w->mu);
}

static void send_notify(mj_waker_t *w, unsigned channels)
{
    apr_pool_t *p;
    ap_dbd_t *dbd;
    jr_db_t *db;
    if (apr_pool_create(&p, w->pool) != APR_SUCCESS) {
        return;
    }
    if (!(dbd = dbd_open_fn(p, w->s))) {
        MJ_LOG(JR12162, w->s, 0,
               "the workers could not be told of new jobs (no database connection); their "
               "safety poll finds them");
    } else {
        if ((db = jr_db_use(p, dbd->driver, dbd->handle, dbd->pool)) != NULL &&
            !jr_db_refusal(db)) {
            jr_queue_notify(db, channels);
        }
        dbd_close_fn(w->s, dbd);
    }
    apr_pool_destroy(p);
}

static void *APR_THREAD_FUNC run(apr_thread_t *thread, void *data)
{
    mj_waker_t *w = data;
    apr_time_t last = 0, now;
    unsigned channels;
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (!w->pending && !w->stop) {
            pthread_cond_wait(&w->cv, &w->mu);
        }
        if (!w->pending) {
            break; /* stopping, nothing owed */
        }
        now = apr_time_now();
        if (!w->stop && now < last + WAKE_GAP) {
            /* Commits that end meanwhile join this NOTIFY. */
            pthread_mutex_unlock(&w->mu);
            apr_sleep(last + WAKE_GAP - now);
            pthread_mutex_lock(&w->mu);
            now = apr_time_now();
        }
        /* Taken after every commit that gave them has ended: the NOTIFY starts after each. */
        channels = w->pending;
        w->pending = 0;
        pthread_mutex_unlock(&w->mu);
        last = now;
        send_notify(w, channels);
        pthread_mutex_lock(&w->mu);
    }
    pthread_mutex_unlock(&w->mu);
    apr_thread_exit(thread, APR_SUCCESS);
    return NULL;
}

/* A pre-cleanup of pchild: before its subpools, mod_dbd's connections among them, go. The
 * child's request threads have ended, so nothing is given after this; what is owed is sent. */
static apr_status_t stop_waker(void *data)
{
    mj_waker_t *w = data;
    apr_status_t rv;
    pthread_mutex_lock(&w->mu);
    w->stop = 1;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
    apr_thread_join(&rv, w->thread);
    return APR_SUCCESS;
}

static mj_waker_t *start_waker(apr_pool_t *pchild, server_rec *s)
{
    apr_allocator_t *alloc;
    mj_waker_t *w = apr_pcalloc(pchild, sizeof(*w));
    apr_status_t rv;
    w->base.give = give;
    w->s = s;
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    if ((rv = apr_allocator_create(&alloc)) != APR_SUCCESS) {
        return NULL;
    }
    if ((rv = apr_pool_create_ex(&w->pool, pchild, NULL, alloc)) != APR_SUCCESS) {
        apr_allocator_destroy(alloc);
        return NULL;
    }
    apr_allocator_owner_set(alloc, w->pool);
    if ((rv = apr_thread_create(&w->thread, NULL, run, w, w->pool)) != APR_SUCCESS) {
        MJ_LOG(JR12161, s, rv,
               "cannot start the thread that wakes the workers; each commit wakes them itself");
        return NULL;
    }
    apr_pool_pre_cleanup_register(pchild, w, stop_waker);
    return w;
}

void mj_waker_child_init(apr_pool_t *pchild, server_rec *main_server)
{
    apr_hash_t *by_db = apr_hash_make(pchild);
    server_rec *s;
    dbd_open_fn = APR_RETRIEVE_OPTIONAL_FN(ap_dbd_open);
    dbd_close_fn = APR_RETRIEVE_OPTIONAL_FN(ap_dbd_close);
    by_server = apr_hash_make(pchild);
    if (!dbd_open_fn || !dbd_close_fn) {
        return;
    }
    for (s = main_server; s; s = s->next) {
        const dbd_cfg_t *cfg = mj_dbd_settings(s);
        const char *db;
        server_rec **key;
        mj_waker_t *w;
        if (!cfg || !cfg->name || strcmp(cfg->name, "pgsql") != 0) {
            continue; /* SQLite's workers hear every commit */
        }
        /* Servers on one database share its waker. */
        db = apr_pstrcat(pchild, cfg->name, "\n", cfg->params ? cfg->params : "", NULL);
        if (!(w = apr_hash_get(by_db, db, APR_HASH_KEY_STRING))) {
            if (!(w = start_waker(pchild, s))) {
                continue;
            }
            w->genshare = jr_genshare_create(pchild, JR_GENSHARE_HOLD);
            apr_hash_set(by_db, db, APR_HASH_KEY_STRING, w);
        }
        key = apr_palloc(pchild, sizeof(*key));
        *key = s;
        apr_hash_set(by_server, key, sizeof(*key), w);
    }
}

jr_waker_t *mj_waker_of(server_rec *s)
{
    mj_waker_t *w = by_server ? apr_hash_get(by_server, &s, sizeof(s)) : NULL;
    return w ? &w->base : NULL;
}

jr_genshare_t *mj_genshare_of(server_rec *s)
{
    mj_waker_t *w = by_server ? apr_hash_get(by_server, &s, sizeof(s)) : NULL;
    return w ? w->genshare : NULL;
}
