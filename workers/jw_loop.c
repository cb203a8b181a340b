/* The worker's one event loop: libcurl's multi interface runs the requests in flight, and
 * curl_multi_poll also waits on the self-pipe of the signal handlers and on the wake-up
 * source (inotify or the LISTEN connection). Database work happens between polls, in short
 * transactions; an idle worker sleeps until woken, until a back-off or lease ends, or until
 * the safety poll. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <apr_strings.h>

#include "jr_migrate.h"
#include "jr_util.h"
#include "jw.h"

#define BODY_MAX (1024 * 1024) /* the largest answer accepted */
#define STOP_GRACE 2           /* seconds jobs in flight get to finish after SIGTERM */
#define DB_RETRY_MAX 5         /* seconds between reconnection attempts, at most */

volatile int jw_stop_requested;

static const jw_handler_t *const handlers[] = {&jw_ai_handler, &jw_photo_ai_handler,
                                               &jw_photo_enhance_handler, NULL};
static const int recheck_ms[] = JW_RECHECKS;

struct jw {
    apr_pool_t *pool;
    const jw_settings_t *set;
    const jw_options_t *opt;
    jr_db_t *db;
    jr_config_t cfg;
    CURLM *multi;
    jw_wake_t *wake;
    const char *host;
    unsigned long claims;
    apr_array_header_t *jobs; /* jw_job_t *: transfers running or outcomes not yet written */
    apr_time_t check_at;      /* look at the queues then; 0: only when woken */
    apr_time_t woken_at;      /* SQLite: the last wake-up ... */
    apr_time_t recheck_at;    /* ... and when to see whether to look again after it */
    int recheck_step;         /* index in JW_RECHECKS */
    long long seen_version;   /* SQLite: the data version at the last look */
    apr_time_t poll_at, renew_at, settle_at, stop_at;
    int more;      /* the last claim filled every free slot: claim again when one frees */
    int db_errors; /* consecutive database failures (back-off) */
    int stopping;
    int finished_stopping; /* outcomes written since SIGTERM */
    jw_redis_t *redis;     /* NULL: no Redis configured */
    int announce;          /* steps since the last publish wrote events */
};

const jw_settings_t *jw_settings(const jw_t *w)
{
    return w->set;
}

CURLM *jw_multi(jw_t *w)
{
    return w->multi;
}

static apr_status_t job_cleanup(void *data)
{
    jw_job_t *j = data;
    if (j->easy) {
        curl_easy_cleanup(j->easy);
        j->easy = NULL;
    }
    curl_slist_free_all(j->headers);
    j->headers = NULL;
    return APR_SUCCESS;
}

jw_job_t *jw_job_new(jw_t *w, const jw_handler_t *h)
{
    apr_pool_t *p;
    jw_job_t *j;
    apr_pool_create(&p, w->pool);
    j = apr_pcalloc(p, sizeof(*j));
    j->pool = p;
    j->h = h;
    apr_pool_cleanup_register(p, j, job_cleanup, apr_pool_cleanup_null);
    return j;
}

static size_t on_body(char *data, size_t size, size_t n, void *baton)
{
    jw_job_t *j = baton;
    size_t len = size * n;
    if (j->len + len > (j->body_max ? j->body_max : BODY_MAX)) {
        j->too_large = 1;
        return 0; /* ends the transfer with CURLE_WRITE_ERROR */
    }
    if (j->len + len + 1 > j->cap) {
        size_t cap = j->cap ? j->cap : 4096;
        char *buf;
        while (cap < j->len + len + 1) {
            cap *= 2;
        }
        buf = apr_palloc(j->pool, cap);
        if (j->len) {
            memcpy(buf, j->body, j->len);
        }
        j->body = buf;
        j->cap = cap;
    }
    memcpy(j->body + j->len, data, len);
    j->len += len;
    j->body[j->len] = '\0';
    return len;
}

apr_status_t jw_job_add(jw_t *w, jw_job_t *j)
{
    curl_easy_setopt(j->easy, CURLOPT_PRIVATE, j);
    curl_easy_setopt(j->easy, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(j->easy, CURLOPT_WRITEDATA, j);
    curl_easy_setopt(j->easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(j->easy, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(j->easy, CURLOPT_USERAGENT, "journal-worker/" JR_VERSION);
    j->started = apr_time_now();
    if (curl_multi_add_handle(w->multi, j->easy) != CURLM_OK) {
        return APR_EGENERAL;
    }
    APR_ARRAY_PUSH(w->jobs, jw_job_t *) = j;
    return APR_SUCCESS;
}

void jw_job_done(jw_t *w, jw_job_t *j)
{
    j->done = 1;
    APR_ARRAY_PUSH(w->jobs, jw_job_t *) = j;
    w->settle_at = apr_time_now();
}

/* Takes a job out of the loop and frees it. */
static void job_drop(jw_t *w, int i)
{
    jw_job_t *j = APR_ARRAY_IDX(w->jobs, i, jw_job_t *);
    if (j->easy) {
        curl_multi_remove_handle(w->multi, j->easy);
    }
    APR_ARRAY_IDX(w->jobs, i, jw_job_t *) = APR_ARRAY_IDX(w->jobs, w->jobs->nelts - 1, jw_job_t *);
    --w->jobs->nelts;
    apr_pool_destroy(j->pool);
}

/* A context for one database step, in a scratch pool the caller destroys. */
static void scratch(jw_t *w, jr_ctx_t *ctx, apr_pool_t **tmp)
{
    apr_pool_create(tmp, w->pool);
    memset(ctx, 0, sizeof(*ctx));
    ctx->pool = *tmp;
    ctx->db = w->db;
    ctx->cfg = &w->cfg;
    ctx->iface = JR_IF_ADMIN;
    ctx->client_ip = "worker"; /* the actor of the worker's audit rows (no user, no key) */
    ctx->params = apr_table_make(*tmp, 1);
    ctx->query = apr_table_make(*tmp, 1);
}

/* Ends a step begun with scratch. Its transactions are over (committed, or rolled back on
 * an error): when it wrote events, the streams are told after the turn (announce). */
static void scratch_end(jw_t *w, jr_ctx_t *ctx, apr_pool_t *tmp)
{
    w->announce |= ctx->events_written > 0;
    apr_pool_destroy(tmp);
}

/* One publish for every step of a turn that wrote events: the notifiers read all of them. */
static void announce(jw_t *w)
{
    if (w->announce) {
        w->announce = 0;
        jw_redis_publish(w->redis);
    }
}

/* A database step failed: look again later, after checking the connection (PostgreSQL
 * resets a broken one; its statements and its LISTEN are then set up again). */
static void db_failed(jw_t *w, const char *what)
{
    apr_time_t now = apr_time_now();
    long long delay = w->db_errors < 3 ? 1LL << w->db_errors : DB_RETRY_MAX;
    char msg[256];
    size_t n;
    ++w->db_errors;
    apr_cpystrn(msg, w->db->last_error ? w->db->last_error : "database error", sizeof(msg));
    for (n = strlen(msg); n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == ' '); --n) {
        msg[n - 1] = '\0'; /* libpq ends its messages with a newline */
    }
    JR_LOG(JR06030, 0, "%s failed (%s); trying again in %lld s", what, msg, delay);
    if (jr_db_ping(w->db) == APR_SUCCESS && jr_db_revalidate(w->db) == APR_SUCCESS) {
        jw_wake_reattach(w->wake);
    }
    w->check_at = now + apr_time_from_sec(delay);
}

static int in_flight(const jw_t *w, const jw_handler_t *h)
{
    int i, n = 0;
    for (i = 0; i < w->jobs->nelts; ++i) {
        n += APR_ARRAY_IDX(w->jobs, i, jw_job_t *)->h == h;
    }
    return n;
}

/* When a handler's queue next has work: *next (0 when nothing is scheduled). -1 on error. */
static int due(jw_t *w, jr_ctx_t *ctx, const jw_handler_t *h, apr_time_t *next)
{
    int ready = 0;
    if (jr_jobs_due(ctx, h->queue, &ready, next) != APR_SUCCESS) {
        return -1;
    }
    return ready;
}

/* Claims up to free jobs of h and starts them; the number claimed, -1 on error. */
static int claim(jw_t *w, jr_ctx_t *ctx, const jw_handler_t *h, int free)
{
    apr_array_header_t *got = apr_array_make(ctx->pool, free, sizeof(jw_job_t *));
    const char *owner = jr_job_owner(ctx->pool, w->host, (long)getpid(), ++w->claims);
    int i;
    if (h->claim(w, ctx, owner, free, got) != APR_SUCCESS) {
        return -1;
    }
    JR_LOG(JR06016, 0, "claimed %d of %d %s job(s) as %s", got->nelts, free,
           h->queue->name, owner);
    for (i = 0; i < got->nelts; ++i) {
        jw_job_t *j = APR_ARRAY_IDX(got, i, jw_job_t *);
        if (h->start(w, j) != APR_SUCCESS) {
            JR_LOG(JR06013, 0, "cannot start %s job %lld: giving it back",
                   h->queue->name, j->job->id);
            h->release(w, ctx, j);
            apr_pool_destroy(j->pool);
        }
    }
    return got->nelts;
}

/* One look at a handler's queue: claim what is due into the free slots, else schedule the
 * next look. Returns -1 on a database error. */
static int look_at(jw_t *w, jr_ctx_t *ctx, const jw_handler_t *h, apr_time_t *next)
{
    int cap = h->capacity(w), free = cap - in_flight(w, h), ready, n;
    apr_time_t when = 0;
    if (cap <= 0) {
        return 0;
    }
    if (free <= 0) {
        w->more = 1; /* a finishing job looks again */
        return 0;
    }
    if (!w->more && (ready = due(w, ctx, h, &when)) <= 0) {
        *next = when && (!*next || when < *next) ? when : *next;
        return ready;
    }
    if ((n = claim(w, ctx, h, free)) < 0) {
        return -1;
    }
    w->more = n == free;
    if (n == 0) {
        /* Due but taken by another worker (or locked by its claim): not a busy loop. */
        when = apr_time_now() + apr_time_from_msec(100);
        *next = !*next || when < *next ? when : *next;
    } else if (!w->more && due(w, ctx, h, &when) >= 0 && when) {
        *next = !*next || when < *next ? when : *next;
    }
    return 0;
}

static void look(jw_t *w)
{
    const jw_handler_t *const *h;
    apr_time_t next = 0;
    apr_pool_t *tmp;
    jr_ctx_t ctx;
    scratch(w, &ctx, &tmp);
    w->check_at = 0;
    w->seen_version = jw_wake_version(w->wake); /* before the queries: they see at least it */
    for (h = handlers; *h; ++h) {
        if (look_at(w, &ctx, *h, &next) < 0) {
            db_failed(w, "looking at the queue");
            scratch_end(w, &ctx, tmp);
            return;
        }
    }
    w->db_errors = 0;
    jw_wake_reattach(w->wake); /* a no-op unless the connection was reset */
    /* A time in text has whole seconds: look a little after it, not a little before. */
    w->check_at = next ? next + apr_time_from_msec(5) : 0;
    scratch_end(w, &ctx, tmp);
}

/* Transfers that ended: their outcome is decided now and written by settle_all. */
static void collect(jw_t *w)
{
    CURLMsg *msg;
    int left;
    while ((msg = curl_multi_info_read(w->multi, &left)) != NULL) {
        jw_job_t *j = NULL;
        if (msg->msg != CURLMSG_DONE) {
            continue;
        }
        curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&j);
        curl_multi_remove_handle(w->multi, j->easy);
        j->h->complete(w, j, msg->data.result);
        curl_easy_cleanup(j->easy);
        j->easy = NULL;
        j->done = 1;
        w->settle_at = apr_time_now();
    }
}

/* Writes the outcomes of ended transfers, one short transaction each. A write that fails
 * (the database is busy or away) is tried again while the lease lasts. */
static void settle_all(jw_t *w)
{
    apr_pool_t *tmp;
    jr_ctx_t ctx;
    int i, wrote = 0, failed = 0;
    w->settle_at = 0;
    for (i = w->jobs->nelts - 1; i >= 0; --i) {
        jw_job_t *j = APR_ARRAY_IDX(w->jobs, i, jw_job_t *);
        if (!j->done) {
            continue;
        }
        scratch(w, &ctx, &tmp);
        if (j->h->settle(w, &ctx, j) == APR_SUCCESS) {
            job_drop(w, i);
            ++wrote;
            w->finished_stopping += w->stopping;
        } else {
            ++failed;
        }
        scratch_end(w, &ctx, tmp);
    }
    if (failed) {
        db_failed(w, "writing a job's outcome");
        w->settle_at = apr_time_now() + apr_time_from_msec(500);
    } else if (wrote && w->more && !w->stopping) {
        w->check_at = apr_time_now(); /* slots are free and the queue was not empty */
    }
}

/* Extends the leases of every job in flight; a job whose lease was lost is abandoned (its
 * outcome could not be written anyway). */
static void renew(jw_t *w)
{
    const jw_handler_t *const *h;
    apr_pool_t *tmp;
    jr_ctx_t ctx;
    w->renew_at = apr_time_now() + apr_time_from_sec(JW_LEASE / 3);
    for (h = handlers; *h; ++h) {
        jr_job_t **jobs;
        int *lost, *idx, i, n = 0;
        scratch(w, &ctx, &tmp);
        jobs = apr_palloc(tmp, sizeof(*jobs) * (size_t)(w->jobs->nelts + 1));
        lost = apr_pcalloc(tmp, sizeof(int) * (size_t)(w->jobs->nelts + 1));
        idx = apr_palloc(tmp, sizeof(int) * (size_t)(w->jobs->nelts + 1));
        for (i = 0; i < w->jobs->nelts; ++i) {
            jw_job_t *j = APR_ARRAY_IDX(w->jobs, i, jw_job_t *);
            if (j->h == *h) {
                idx[n] = i;
                jobs[n++] = j->job;
            }
        }
        if (jr_jobs_renew(&ctx, (*h)->queue, jobs, n, JW_LEASE, lost) != APR_SUCCESS) {
            db_failed(w, "renewing leases");
            w->renew_at = apr_time_now() + apr_time_from_sec(1);
        } else {
            for (i = n - 1; i >= 0; --i) {
                if (lost[i]) {
                    JR_LOG(JR06012, 0, "the lease of %s job %lld was lost: "
                           "another worker has it now", (*h)->queue->name, jobs[i]->id);
                    job_drop(w, idx[i]);
                }
            }
        }
        scratch_end(w, &ctx, tmp);
    }
}

/* The safety poll: look at the queues, and give back the jobs of dead workers of this host
 * (a worker killed with SIGKILL holds leases nobody would renew). */
static void safety_poll(jw_t *w)
{
    const jw_handler_t *const *h;
    apr_pool_t *tmp;
    jr_ctx_t ctx;
    w->poll_at = apr_time_now() + apr_time_from_sec(JW_SAFETY_POLL);
    w->check_at = apr_time_now();
    for (h = handlers; *h; ++h) {
        if ((*h)->capacity(w) > 0) {
            scratch(w, &ctx, &tmp);
            jr_jobs_reclaim_dead(&ctx, (*h)->queue, w->host, (long)getpid());
            scratch_end(w, &ctx, tmp);
        }
    }
}

/* Gives back every job still in flight (stopping). */
static void release_all(jw_t *w)
{
    apr_pool_t *tmp;
    jr_ctx_t ctx;
    int back = 0;
    settle_all(w); /* outcomes already decided are written, not thrown away */
    while (w->jobs->nelts > 0) {
        jw_job_t *j = APR_ARRAY_IDX(w->jobs, w->jobs->nelts - 1, jw_job_t *);
        scratch(w, &ctx, &tmp);
        if (j->h->release(w, &ctx, j) != APR_SUCCESS) {
            JR_LOG(JR06014, 0, "cannot give %s job %lld back: it returns to the "
                   "queue when its lease ends", j->h->queue->name, j->job->id);
        } else {
            ++back;
        }
        scratch_end(w, &ctx, tmp);
        job_drop(w, w->jobs->nelts - 1);
    }
    if (w->finished_stopping + back > 0) {
        JR_LOG(JR06015, 0, "stopping: %d job(s) finished, %d given back", w->finished_stopping,
               back);
    }
}

static void earliest(apr_time_t *t, apr_time_t candidate)
{
    if (candidate && (!*t || candidate < *t)) {
        *t = candidate;
    }
}

/* Milliseconds until the next timer (curl's own timers are added by curl_multi_poll). */
static int poll_timeout(const jw_t *w)
{
    apr_time_t t = w->poll_at, now = apr_time_now();
    earliest(&t, w->stopping ? 0 : w->check_at);
    earliest(&t, w->stopping ? 0 : w->recheck_at);
    earliest(&t, w->jobs->nelts ? w->renew_at : 0);
    earliest(&t, w->settle_at);
    earliest(&t, w->stopping ? w->stop_at : 0);
    if (t <= now) {
        return 0;
    }
    return (int)((t - now + 999) / 1000);
}

static void drain_signals(int fd)
{
    char buf[64];
    while (read(fd, buf, sizeof(buf)) > 0) {
    }
}

/* Takes what the wake-up source has; schedules a look when work may be due. */
static int woken(jw_t *w)
{
    apr_time_t now;
    if (!jw_wake_drain(w->wake)) {
        return 0;
    }
    now = apr_time_now();
    if (w->db->dialect == JR_DB_SQLITE) {
        /* The writes to the -wal file come before the commit is visible: look when the
         * writer has most likely finished, then again while commits keep appearing. */
        earliest(&w->check_at, now + apr_time_from_msec(JW_SETTLE));
        w->woken_at = now;
        w->recheck_step = 0;
        w->recheck_at = now + apr_time_from_msec(recheck_ms[0]);
    } else {
        w->check_at = now; /* NOTIFY is delivered after the commit */
    }
    return 1;
}

/* Waits for a transfer, a signal, a wake-up or the next timer, then moves the transfers on. */
static void wait_once(jw_t *w)
{
    struct curl_waitfd fds[2];
    unsigned n = 0;
    int running = 0, wfd = jw_wake_fd(w->wake);
    memset(fds, 0, sizeof(fds));
    fds[n].fd = w->opt->signal_fd;
    fds[n++].events = CURL_WAIT_POLLIN;
    if (wfd >= 0) {
        fds[n].fd = wfd;
        fds[n++].events = CURL_WAIT_POLLIN;
    }
    /* libpq may hold notifications read during our own queries (our own commits notify
     * too): the socket would not wake the poll for them. */
    if (!woken(w) || w->stopping) {
        curl_multi_poll(w->multi, fds, n, poll_timeout(w), NULL);
    }
    curl_multi_perform(w->multi, &running);
    drain_signals(w->opt->signal_fd);
    woken(w);
}

/* SQLite: one of the later looks after a wake-up, when a commit of another connection has
 * become visible since the previous look (one cheap read of the data version otherwise). */
static void recheck(jw_t *w, apr_time_t now)
{
    long long v = jw_wake_version(w->wake);
    if (v < 0 || v != w->seen_version) {
        w->check_at = now;
    }
    if (++w->recheck_step < (int)(sizeof(recheck_ms) / sizeof(recheck_ms[0]))) {
        w->recheck_at = w->woken_at + apr_time_from_msec(recheck_ms[w->recheck_step]);
    } else {
        w->recheck_at = 0;
    }
}

/* One turn of the loop's timers and queues. */
static void turn(jw_t *w)
{
    apr_time_t now = apr_time_now();
    if (jw_stop_requested && !w->stopping) {
        w->stopping = 1;
        w->stop_at = now + apr_time_from_sec(STOP_GRACE);
        JR_LOG(JR06004, 0, "stopping: no new claims, %d job(s) in flight",
               w->jobs->nelts);
    }
    collect(w);
    if (w->settle_at && w->settle_at <= now) {
        settle_all(w);
    }
    if (w->jobs->nelts && w->renew_at <= now) {
        renew(w);
    }
    if (w->stopping) {
        announce(w);
        return;
    }
    if (w->poll_at <= now) {
        safety_poll(w);
    }
    if (w->recheck_at && w->recheck_at <= now) {
        recheck(w, now);
    }
    if (w->check_at && w->check_at <= now) {
        look(w);
    }
    announce(w);
}

static void loop(jw_t *w)
{
    for (;;) {
        turn(w);
        if (w->stopping && (w->jobs->nelts == 0 || apr_time_now() >= w->stop_at)) {
            break;
        }
        wait_once(w);
    }
    release_all(w);
    announce(w);
}

/* Opens the database the module migrated (the worker never migrates). 0, or an exit status. */
static int open_db(jw_t *w)
{
    const char *err = NULL;
    int version = 0, need;
    if (jr_db_open(&w->db, w->pool, w->set->db_driver, w->set->db_params, &err) !=
        APR_SUCCESS) {
        JR_LOG(JR06002, 0, "%s", err);
        return 1;
    }
    need = jr_migrate_latest(w->db->dialect);
    if (jr_migrate_current(w->db, w->pool, &version, &err) != APR_SUCCESS || version < need) {
        JR_LOG(JR06003, 0,
               "the database schema is version %d, this worker needs %d: httpd "
               "applies the migrations at startup (or journal-admin migrate)",
               version, need);
        return 1;
    }
    if (jr_db_prepare_all(w->db) != APR_SUCCESS) {
        return 1;
    }
    return 0;
}

static int setup(jw_t *w)
{
    char host[256];
    int rc;
    if ((rc = open_db(w)) != 0) {
        return rc;
    }
    if (gethostname(host, sizeof(host) - 1) != 0) {
        strcpy(host, "localhost");
    }
    host[sizeof(host) - 1] = '\0';
    w->host = apr_pstrdup(w->pool, host);
    w->cfg.data_dir = w->set->data_dir;
    w->jobs = apr_array_make(w->pool, 16, sizeof(jw_job_t *));
    if (!(w->multi = curl_multi_init())) {
        return 1;
    }
    curl_multi_setopt(w->multi, CURLMOPT_MAX_HOST_CONNECTIONS, (long)w->set->ai_concurrency);
    w->redis = jw_redis_open(w->pool, w->set);
    jw_wake_open(&w->wake, w->pool, w->db, w->set->db_params,
                 apr_pstrcat(w->pool, jr_queue_ai.channel, " ", jr_queue_photo_ai.channel, NULL));
    return 0;
}

int jw_run(apr_pool_t *p, const jw_settings_t *s, const jw_options_t *o)
{
    jw_t w;
    int rc;
    memset(&w, 0, sizeof(w));
    w.pool = p;
    w.set = s;
    w.opt = o;
    if ((rc = setup(&w)) == 0) {
        JR_LOG(JR06001, 0, "worker %d started (%s, AI %s, photo service %s)", o->instance,
               s->db_driver, s->ai_endpoint ? "configured" : "not configured: AI jobs stay queued",
               s->photo_ai_endpoint ? "configured"
                                    : "not configured: ai photo jobs stay queued");
        w.poll_at = apr_time_now(); /* the first turn looks at once and reclaims */
        loop(&w);
        JR_LOG(JR06005, 0, "worker %d stopped", o->instance);
    }
    if (w.multi) {
        curl_multi_cleanup(w.multi);
    }
    return rc;
}
