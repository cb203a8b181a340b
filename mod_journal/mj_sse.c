/* Server-sent event streams (docs/events.md). httpd 2.4 cannot park a connection and wake it
 * later, so a stream holds its worker thread; what it must not hold is a database connection
 * or a query per wake-up. One notifier thread per child reads new outbox rows once into a
 * ring and wakes every stream of the child with one condition broadcast; each stream picks
 * from the ring what its user may see.
 *
 * Wake-ups: a successful write request of any child bumps a counter in shared memory, which
 * the notifiers look at every 20 ms, and publishes on Redis when configured (mj_redis.c),
 * which reaches the notifiers of every node; a notifier also reads the outbox once a second while
 * it has streams (rows written outside httpd: the worker, journal-admin), and checks every
 * 2 s that the sessions of its streams are still valid (logout, deactivation). */
#include <string.h>

#include <ap_mpm.h>
#include <apr_atomic.h>
#include <apr_hash.h>
#include <apr_optional.h>
#include <apr_shm.h>
#include <apr_strings.h>
#include <apr_thread_cond.h>
#include <apr_thread_mutex.h>
#include <apr_thread_proc.h>
#include <http_core.h>
#include <http_protocol.h>
#include <http_request.h>
#include <mpm_common.h>

#include "jr_json.h"
#include "jr_stream.h"
#include "jr_util.h"
#include "mj_private.h"

#define RING 1024                        /* outbox rows kept for the streams of a child */
#define TICK apr_time_from_msec(20)      /* how often a notifier looks at the counter */
#define POLL apr_time_from_sec(1)        /* outbox read without a wake-up */
#define SESSION_CHECK apr_time_from_sec(2)
#define RETRY_MS 3000                    /* the reconnection delay suggested to clients */
#define BATCH 500

typedef struct {
    apr_uint64_t seq;
    jr_stream_event_t ev; /* strings owned by the ring (malloc) */
    char *message;        /* the SSE message, formatted once for every stream */
} ring_ev_t;

typedef struct stream {
    struct stream *next, *prev;
    const char *session_hash;
    unsigned check_gen; /* the session check that last saw this stream */
    int closed;         /* its session ended */
} stream_t;

static struct {
    apr_pool_t *pool;
    apr_thread_mutex_t *mu;
    apr_thread_cond_t *cond;
    ring_ev_t ring[RING];
    apr_uint64_t next_seq;
    long long max_seen; /* the highest outbox id read into the ring */
    int primed;         /* max_seen is meaningful (streams are open) */
    int nstreams, cap;
    unsigned check_gen;
    stream_t *streams;
    volatile int stopping;
    apr_thread_t *thread;
    server_rec *s;
} N;

static volatile apr_uint32_t *published; /* in shared memory: bumped after every write */
static volatile apr_uint32_t heard;      /* this child: bumped by a Redis message */

static void redis_message(void)
{
    apr_atomic_inc32(&heard);
}

static APR_OPTIONAL_FN_TYPE(ap_dbd_open) *dbd_open_fn;
static APR_OPTIONAL_FN_TYPE(ap_dbd_close) *dbd_close_fn;

/* ---- database access without holding a connection ------------------------------------ */

typedef struct {
    ap_dbd_t *dbd;
    jr_db_t *db;
} conn_t;

static int conn_open(conn_t *c, apr_pool_t *p, server_rec *s)
{
    c->db = NULL;
    if (!dbd_open_fn || !(c->dbd = dbd_open_fn(p, s))) {
        return 0;
    }
    if (!(c->db = jr_db_use(p, c->dbd->driver, c->dbd->handle, c->dbd->pool))) {
        dbd_close_fn(s, c->dbd);
        return 0;
    }
    return 1;
}

static void conn_close(conn_t *c, server_rec *s)
{
    dbd_close_fn(s, c->dbd);
    c->db = NULL;
}

/* ---- the notifier --------------------------------------------------------------------- */

static void ring_put(apr_pool_t *p, const jr_stream_event_t *ev)
{
    ring_ev_t *slot = &N.ring[N.next_seq % RING];
    free((void *)slot->ev.type);
    free(slot->message);
    slot->seq = N.next_seq++;
    slot->ev = *ev;
    slot->ev.type = strdup(ev->type);
    slot->ev.payload = NULL; /* the message holds it */
    slot->message = strdup(jr_sse_message(p, ev->id, ev->type, ev->payload));
}

/* Reads the rows after max_seen into the ring and wakes the streams. */
static void fetch_new(apr_pool_t *p)
{
    apr_array_header_t *rows;
    long long after;
    conn_t c;
    int i, more = 1;

    if (!conn_open(&c, p, N.s)) {
        return; /* the database is down: the next tick tries again */
    }
    while (more) {
        apr_thread_mutex_lock(N.mu);
        after = N.max_seen;
        apr_thread_mutex_unlock(N.mu);
        if (jr_stream_rows(c.db, p, after, BATCH, &rows) != APR_SUCCESS) {
            break;
        }
        more = rows->nelts == BATCH;
        apr_thread_mutex_lock(N.mu);
        for (i = 0; i < rows->nelts && N.primed; ++i) {
            jr_stream_event_t *ev = &APR_ARRAY_IDX(rows, i, jr_stream_event_t);
            if (ev->id > N.max_seen) {
                ring_put(p, ev);
                N.max_seen = ev->id;
            }
        }
        if (rows->nelts) {
            apr_thread_cond_broadcast(N.cond);
        }
        apr_thread_mutex_unlock(N.mu);
    }
    conn_close(&c, N.s);
}

/* Closes the streams whose session is no longer valid (logged out, expired, user
 * deactivated). Streams that open during the query are judged at the next check. */
static void check_sessions(apr_pool_t *p)
{
    json_t *hashes = jr_json_own(p, json_array());
    apr_hash_t *valid;
    unsigned gen;
    stream_t *st;
    conn_t c;
    int closed = 0;

    apr_thread_mutex_lock(N.mu);
    gen = ++N.check_gen;
    for (st = N.streams; st; st = st->next) {
        st->check_gen = gen;
        json_array_append_new(hashes, json_string(st->session_hash));
    }
    apr_thread_mutex_unlock(N.mu);
    if (!json_array_size(hashes) || !conn_open(&c, p, N.s)) {
        return;
    }
    if (jr_stream_sessions_valid(c.db, p, jr_json_dump(p, hashes, NULL), &valid) ==
        APR_SUCCESS) {
        apr_thread_mutex_lock(N.mu);
        for (st = N.streams; st; st = st->next) {
            if (st->check_gen == gen && !apr_hash_get(valid, st->session_hash,
                                                      APR_HASH_KEY_STRING)) {
                st->closed = closed = 1;
            }
        }
        if (closed) {
            apr_thread_cond_broadcast(N.cond);
        }
        apr_thread_mutex_unlock(N.mu);
    }
    conn_close(&c, N.s);
}

static void *APR_THREAD_FUNC notifier(apr_thread_t *thread, void *data)
{
    apr_pool_t *scratch;
    apr_uint32_t seen = apr_atomic_read32(published) + apr_atomic_read32(&heard);
    apr_time_t last_poll = 0, last_check = 0;

    apr_pool_create(&scratch, N.pool);
    while (!N.stopping) {
        apr_uint32_t now_pub;
        apr_time_t now;
        int active;
        apr_sleep(TICK);
        now_pub = apr_atomic_read32(published) + apr_atomic_read32(&heard);
        apr_thread_mutex_lock(N.mu);
        active = N.primed;
        apr_thread_mutex_unlock(N.mu);
        if (!active) {
            seen = now_pub;
            continue;
        }
        now = apr_time_now();
        if (now_pub != seen || now - last_poll >= POLL) {
            seen = now_pub;
            last_poll = now;
            fetch_new(scratch);
        }
        if (now - last_check >= SESSION_CHECK) {
            last_check = now;
            check_sessions(scratch);
        }
        apr_pool_clear(scratch);
    }
    apr_thread_exit(thread, APR_SUCCESS);
    return NULL;
}

static apr_status_t notifier_stop(void *data)
{
    apr_status_t rv;
    N.stopping = 1;
    if (N.mu) {
        apr_thread_mutex_lock(N.mu);
        apr_thread_cond_broadcast(N.cond);
        apr_thread_mutex_unlock(N.mu);
    }
    if (N.thread) {
        apr_thread_join(&rv, N.thread);
        N.thread = NULL;
    }
    return APR_SUCCESS;
}

/* ---- hooks ---------------------------------------------------------------------------- */

int mj_sse_post_config(apr_pool_t *pconf, server_rec *s)
{
    apr_shm_t *shm;
    apr_status_t rv;
    dbd_open_fn = APR_RETRIEVE_OPTIONAL_FN(ap_dbd_open);
    dbd_close_fn = APR_RETRIEVE_OPTIONAL_FN(ap_dbd_close);
    /* Anonymous: inherited by the children of this generation only, which is what a
     * counter of "something was written" needs. */
    if ((rv = apr_shm_create(&shm, sizeof(apr_uint32_t), NULL, pconf)) != APR_SUCCESS) {
        MJ_LOG(JR09001, s, rv, "cannot create the shared memory of the event streams");
        return !OK;
    }
    published = apr_shm_baseaddr_get(shm);
    *published = 0;
    return mj_redis_post_config(pconf, s);
}

static int reserve_of(int threads)
{
    return threads / 8 > 16 ? threads / 8 : 16;
}

void mj_sse_child_init(apr_pool_t *pchild, server_rec *s)
{
    int threads = 0;
    apr_status_t rv;
    memset(&N, 0, sizeof(N));
    N.s = s;
    apr_pool_create(&N.pool, pchild);
    ap_mpm_query(AP_MPMQ_MAX_THREADS, &threads);
    N.cap = mj_conf(s)->stream_max;
    /* An eighth of the threads, and at least 16, always serve ordinary requests. */
    if (threads > 0 && N.cap > threads - reserve_of(threads)) {
        N.cap = threads - reserve_of(threads) > 0 ? threads - reserve_of(threads) : 1;
    }
    if ((rv = apr_thread_mutex_create(&N.mu, APR_THREAD_MUTEX_DEFAULT, N.pool)) != APR_SUCCESS ||
        (rv = apr_thread_cond_create(&N.cond, N.pool)) != APR_SUCCESS ||
        (rv = apr_thread_create(&N.thread, NULL, notifier, NULL, N.pool)) != APR_SUCCESS) {
        MJ_LOG(JR09003, s, rv, "cannot start the notifier of the event streams");
        N.cap = 0; /* streams are refused in this child */
        return;
    }
    /* A pre-cleanup: it runs before the subpools (N.pool, the thread's own) are destroyed. */
    apr_pool_pre_cleanup_register(pchild, NULL, notifier_stop);
    mj_redis_child_init(pchild, redis_message);
}

/* A child that stops ends its streams, so a graceful restart or stop completes; the clients
 * reconnect with Last-Event-ID to a new child. */
static void child_stopping(apr_pool_t *pchild, int graceful)
{
    N.stopping = 1;
    if (N.mu) {
        apr_thread_mutex_lock(N.mu);
        apr_thread_cond_broadcast(N.cond);
        apr_thread_mutex_unlock(N.mu);
    }
}

/* After the response: a write that succeeded may have added outbox rows. A spurious wake-up
 * costs each notifier one indexed read. */
static int published_write(request_rec *r)
{
    if (published && r->handler && !strcmp(r->handler, MJ_HANDLER) &&
        r->method_number != M_GET && r->status < 400) {
        apr_atomic_inc32(published);
        mj_redis_publish();
    }
    return DECLINED;
}

/* ---- one stream ----------------------------------------------------------------------- */

typedef struct {
    request_rec *r;
    jr_ctx_t ctx;
    stream_t self;
    apr_uint64_t cursor; /* next ring entry to look at */
    long long last;      /* the last id sent (or the starting point) */
    long long floor;     /* ids up to here came from the database */
    apr_pool_t *iter;
    jr_stream_kind_e kind;
} sse_t;

static int json_error(request_rec *r, int status, const char *msg)
{
    jr_jw_t w;
    const char *body;
    jr_jw_init(&w, r->pool, 64);
    jr_jw_obj(&w);
    jr_jw_kstr(&w, "error", msg);
    jr_jw_obj_end(&w);
    body = jr_jw_done(&w, NULL);
    r->status = status;
    apr_table_setn(r->err_headers_out, "Cache-Control", "no-store");
    apr_table_setn(r->err_headers_out, "X-Content-Type-Options", "nosniff");
    ap_set_content_type(r, "application/json; charset=utf-8");
    ap_rputs(body, r);
    return OK;
}

/* Writes without flushing (httpd buffers it); 0 when the client is gone. */
static int put(sse_t *x, const char *text)
{
    return ap_rputs(text, x->r) >= 0 && !x->r->connection->aborted;
}

static int flush(sse_t *x)
{
    return ap_rflush(x->r) >= 0 && !x->r->connection->aborted;
}

/* Writes and flushes; 0 when the client is gone. */
static int out(sse_t *x, const char *text)
{
    return put(x, text) && flush(x);
}

/* Writes a row read from the database, when the user may see it (the caller flushes). */
static int send_event(sse_t *x, const jr_stream_event_t *ev)
{
    if (ev->id <= x->floor) {
        return 1;
    }
    x->last = x->floor = ev->id > x->last ? ev->id : x->last;
    if (!jr_stream_visible(&x->ctx, x->kind, ev)) {
        return 1;
    }
    return put(x, jr_sse_message(x->iter, ev->id, ev->type, ev->payload));
}

/* Sends every row after x->last from the database (the replay, and a stream that fell
 * behind the ring). The ring cursor is taken first, so nothing falls between the two. */
static int replay(sse_t *x)
{
    apr_array_header_t *rows;
    conn_t c;
    int i, more = 1, ok = 1;

    apr_thread_mutex_lock(N.mu);
    x->cursor = N.next_seq;
    apr_thread_mutex_unlock(N.mu);
    x->floor = x->last;
    if (!conn_open(&c, x->iter, x->r->server)) {
        return 0;
    }
    while (ok && more) {
        if (jr_stream_rows(c.db, x->iter, x->last, BATCH, &rows) != APR_SUCCESS) {
            ok = 0;
            break;
        }
        more = rows->nelts == BATCH;
        for (i = 0; ok && i < rows->nelts; ++i) {
            ok = send_event(x, &APR_ARRAY_IDX(rows, i, jr_stream_event_t));
        }
    }
    conn_close(&c, x->r->server);
    return ok && flush(x); /* what was read leaves in one flush, not one per row */
}

/* Joins the child's streams (or refuses above the cap): 1 when joined. */
static int join(sse_t *x)
{
    int ok;
    apr_thread_mutex_lock(N.mu);
    ok = N.nstreams < N.cap && !N.stopping;
    if (ok) {
        ++N.nstreams;
        if (!N.primed) {
            N.max_seen = x->last;
            N.primed = 1;
        }
        x->self.next = N.streams;
        if (N.streams) {
            N.streams->prev = &x->self;
        }
        N.streams = &x->self;
    }
    apr_thread_mutex_unlock(N.mu);
    return ok;
}

static void leave(sse_t *x)
{
    apr_thread_mutex_lock(N.mu);
    if (x->self.prev) {
        x->self.prev->next = x->self.next;
    } else {
        N.streams = x->self.next;
    }
    if (x->self.next) {
        x->self.next->prev = x->self.prev;
    }
    if (--N.nstreams == 0) {
        N.primed = 0; /* the notifier rests until the next stream */
    }
    apr_thread_mutex_unlock(N.mu);
}

/* Waits for ring entries, the heartbeat time, or the end; copies the new entries. Returns
 * 0 to end the stream, and sets *lagged when the ring overtook the stream. */
static int wait_for_events(sse_t *x, apr_time_t due, apr_array_header_t *got, int *lagged)
{
    int go_on;
    apr_thread_mutex_lock(N.mu);
    while (!N.stopping && !x->self.closed && x->cursor == N.next_seq) {
        apr_time_t now = apr_time_now();
        if (now >= due) {
            break;
        }
        apr_thread_cond_timedwait(N.cond, N.mu, due - now);
    }
    go_on = !N.stopping && !x->self.closed;
    *lagged = N.next_seq - x->cursor > RING;
    for (; go_on && !*lagged && x->cursor < N.next_seq; ++x->cursor) {
        const ring_ev_t *slot = &N.ring[x->cursor % RING];
        ring_ev_t *copy = apr_array_push(got);
        /* Only what this user may see is copied, and the message is formatted already. */
        copy->ev = slot->ev;
        copy->message = slot->ev.id > x->floor && jr_stream_visible(&x->ctx, x->kind, &slot->ev)
                            ? apr_pstrdup(x->iter, slot->message)
                            : NULL;
        copy->ev.type = NULL;
    }
    apr_thread_mutex_unlock(N.mu);
    return go_on;
}

static void run(sse_t *x)
{
    apr_interval_time_t beat = apr_time_from_sec(x->ctx.cfg->stream_heartbeat);
    apr_time_t due = apr_time_now() + beat;
    int ok = 1, lagged = 0, sent, i;

    while (ok) {
        apr_array_header_t *got;
        apr_pool_clear(x->iter);
        got = apr_array_make(x->iter, 16, sizeof(ring_ev_t));
        if (!wait_for_events(x, due, got, &lagged)) {
            break;
        }
        if (lagged) {
            ok = replay(x);
        }
        /* The events of one wake-up (a commit's come in one, up to BATCH of them) leave in
         * one flush: a flush per event cost each of 2,000 streams a write and a TCP segment
         * per event. */
        for (i = 0, sent = 0; ok && i < got->nelts; ++i) {
            const ring_ev_t *e = &APR_ARRAY_IDX(got, i, ring_ev_t);
            if (e->ev.id > x->floor) {
                x->last = x->floor = e->ev.id;
                if (e->message) {
                    ok = put(x, e->message);
                    sent = 1;
                }
            }
        }
        if (ok && sent) {
            ok = flush(x);
        }
        if (ok && apr_time_now() >= due) {
            ok = out(x, ": heartbeat\n\n");
            due = apr_time_now() + beat;
        }
    }
}

/* The starting point: Last-Event-ID (header, or last_event_id for the ticket form), else
 * the newest row. A gap that retention has trimmed gets a reset event first. Returns 0
 * with an error answered when the id is malformed. */
static int start_point(sse_t *x, jr_db_t *db, int *reset)
{
    request_rec *r = x->r;
    const char *given = apr_table_get(r->headers_in, "Last-Event-ID");
    long long lo, hi;
    *reset = 0;
    if (!given) {
        given = apr_table_get(x->ctx.query, "last_event_id");
    }
    if (jr_stream_bounds(db, r->pool, &lo, &hi) != APR_SUCCESS) {
        return -1;
    }
    if (!given || !*given) {
        x->last = hi;
        return 1;
    }
    if (jr_parse_int64(given, 0, 0x7fffffffffffffffLL, &x->last) != 0) {
        return 0;
    }
    if (!jr_stream_resumable(x->last, lo)) {
        *reset = 1;
        x->last = hi;
    }
    return 1;
}

static void stream_headers(request_rec *r)
{
    r->status = 200;
    ap_set_content_type(r, "text/event-stream; charset=utf-8");
    apr_table_setn(r->headers_out, "Cache-Control", "no-cache, no-store");
    apr_table_setn(r->headers_out, "X-Content-Type-Options", "nosniff");
    /* No compression (mod_deflate holds bytes until a flush) and no proxy buffering. */
    apr_table_setn(r->subprocess_env, "no-gzip", "1");
    apr_table_setn(r->headers_out, "X-Accel-Buffering", "no");
}

/* Authenticates and finds the starting point on one pooled connection, given back before the
 * stream starts waiting. 1 to go on, else the answer has been sent. */
static int open_stream(sse_t *x, int *reset, int *answered)
{
    request_rec *r = x->r;
    const char *qerr = NULL;
    jr_result_t res;
    conn_t c;
    int sp;

    jr_result_init(&res, r->pool);
    *answered = OK;
    if (!(x->ctx.query = jr_parse_query(r->pool, r->args, &qerr))) {
        *answered = json_error(r, 400, qerr);
        return 0;
    }
    if (!conn_open(&c, r->pool, r->server)) {
        *answered = json_error(r, 503, "database unavailable");
        return 0;
    }
    x->ctx.db = c.db;
    if (!jr_stream_identify(&x->ctx, apr_table_get(r->headers_in, "X-Auth-Token"),
                            apr_table_get(x->ctx.query, "ticket"), &res)) {
        conn_close(&c, r->server);
        *answered = json_error(r, res.status, res.error);
        return 0;
    }
    sp = start_point(x, c.db, reset);
    conn_close(&c, r->server);
    x->ctx.db = NULL;
    if (sp <= 0) {
        *answered = sp < 0 ? json_error(r, 503, "database unavailable")
                           : json_error(r, 400, "Last-Event-ID must be a non-negative integer");
        return 0;
    }
    r->user = apr_pstrdup(r->pool, x->ctx.who.username);
    x->self.session_hash = x->ctx.who.session_hash;
    return 1;
}

static int serve(request_rec *r, jr_stream_kind_e kind)
{
    sse_t *x = apr_pcalloc(r->pool, sizeof(*x));
    int reset, answered;

    x->r = r;
    x->kind = kind;
    x->ctx.pool = r->pool;
    x->ctx.cfg = mj_conf(r->server);
    x->ctx.iface = JR_IF_ADMIN;
    x->ctx.client_ip = r->useragent_ip;
    x->ctx.method = r->method;
    x->ctx.params = apr_table_make(r->pool, 1);
    if (!open_stream(x, &reset, &answered)) {
        return answered;
    }
    if (!join(x)) {
        MJ_RLOG(JR09002, r, 0, "event stream refused: this child holds its limit of %d streams",
                N.cap);
        apr_table_setn(r->err_headers_out, "Retry-After", "5");
        return json_error(r, 503, "too many event streams; retry later");
    }
    apr_pool_create(&x->iter, r->pool);
    stream_headers(r);
    if (out(x, apr_psprintf(x->iter, "retry: %d\n\n", RETRY_MS)) &&
        (!reset || out(x, jr_sse_message(x->iter, x->last, "reset",
                                         "{\"reason\":\"events were missed; reload\"}"))) &&
        replay(x)) {
        run(x);
    }
    leave(x);
    r->connection->keepalive = AP_CONN_CLOSE;
    return OK;
}

static int sse_handler(request_rec *r)
{
    const char *path = r->parsed_uri.path;
    jr_stream_kind_e kind;
    if (!r->handler || strcmp(r->handler, MJ_HANDLER) || !path) {
        return DECLINED;
    }
    if (!strcmp(path, "/api/notifications/stream")) {
        kind = JR_STREAM_NOTIFICATIONS;
    } else if (!strcmp(path, "/api/chat/stream")) {
        kind = JR_STREAM_CHAT;
    } else {
        return DECLINED;
    }
    if (r->method_number != M_GET) {
        apr_table_setn(r->err_headers_out, "Allow", "GET, HEAD");
        return json_error(r, 405, "method not allowed here (allowed: GET)");
    }
    if (r->header_only) {
        stream_headers(r);
        return OK;
    }
    return serve(r, kind);
}

void mj_sse_register_hooks(void)
{
    ap_hook_handler(sse_handler, NULL, NULL, APR_HOOK_FIRST);
    ap_hook_child_stopping(child_stopping, NULL, NULL, APR_HOOK_MIDDLE);
    ap_hook_log_transaction(published_write, NULL, NULL, APR_HOOK_MIDDLE);
}
