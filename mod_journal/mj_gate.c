/* The admission gate (JournalActiveRequests): at most that many of a child's threads run the
 * journal's requests at once; the others wait their turn, first come first served.
 *
 * Why: a child has many threads (keep-alive connections, event streams), and on a few cores
 * every runnable thread slows the others, including the one holding SQLite's write queue,
 * whose every writer then waits longer (docs/architecture.md §7.21). Fewer threads in the MPM
 * would bound that too, but the MPM's own wait for a free thread is not in order: some
 * connections wait far longer than others. Here a thread that cannot run waits on a condition
 * of its own in a queue; a finishing request hands its place to the head of the queue. */
#include <apr_thread_cond.h>
#include <apr_thread_mutex.h>
#include <apr_time.h>

#include "mj_private.h"

typedef struct waiter {
    struct waiter *next;
    apr_thread_cond_t *cond;
    int admitted;
} waiter_t;

static struct {
    apr_thread_mutex_t *mutex; /* NULL: no gate in this child */
    int limit, active;
    waiter_t *head, *tail;
} gate;

void mj_gate_child_init(apr_pool_t *pchild, server_rec *s)
{
    int limit = mj_conf(s)->active_requests;
    gate.mutex = NULL;
    if (limit > 0 &&
        apr_thread_mutex_create(&gate.mutex, APR_THREAD_MUTEX_DEFAULT, pchild) != APR_SUCCESS) {
        gate.mutex = NULL; /* requests then run as they come */
        return;
    }
    gate.limit = limit;
    gate.active = 0;
    gate.head = gate.tail = NULL;
}

/* Takes the waiter out of the queue (its wait timed out). Under the mutex. */
static void unlink_waiter(waiter_t *w)
{
    waiter_t **pp = &gate.head, *prev = NULL;
    while (*pp && *pp != w) {
        prev = *pp;
        pp = &(*pp)->next;
    }
    if (*pp) {
        *pp = w->next;
        if (gate.tail == w) {
            gate.tail = prev;
        }
    }
}

/* Waits for the turn of a request that found the gate full. Under the mutex. */
static apr_status_t wait_turn(request_rec *r, apr_interval_time_t max_wait)
{
    waiter_t w = {NULL, NULL, 0}, *q;
    apr_time_t deadline = apr_time_now() + max_wait;
    int ahead = 0;
    if (apr_thread_cond_create(&w.cond, r->pool) != APR_SUCCESS) {
        return APR_EGENERAL;
    }
    for (q = gate.head; q; q = q->next) {
        ahead++;
    }
    if (gate.tail) {
        gate.tail->next = &w;
    } else {
        gate.head = &w;
    }
    gate.tail = &w;
    MJ_RLOG(JR00123, r, 0, "a request waits for its turn, %d ahead of it", ahead);
    while (!w.admitted) { /* a wake-up without the turn (spurious) waits again */
        apr_interval_time_t left = deadline - apr_time_now();
        apr_status_t rv =
            left > 0 ? apr_thread_cond_timedwait(w.cond, gate.mutex, left) : APR_TIMEUP;
        if (rv != APR_SUCCESS && !w.admitted) { /* out of time, or the wait failed */
            unlink_waiter(&w);
            return rv;
        }
    }
    return APR_SUCCESS; /* the place handed over by mj_gate_leave() */
}

apr_status_t mj_gate_enter(request_rec *r, apr_interval_time_t max_wait)
{
    apr_status_t rv = APR_SUCCESS;
    if (!gate.mutex) {
        return APR_SUCCESS;
    }
    apr_thread_mutex_lock(gate.mutex);
    if (gate.active < gate.limit && !gate.head) {
        gate.active++;
    } else {
        rv = wait_turn(r, max_wait);
    }
    apr_thread_mutex_unlock(gate.mutex);
    return rv;
}

void mj_gate_leave(void)
{
    waiter_t *w;
    if (!gate.mutex) {
        return;
    }
    apr_thread_mutex_lock(gate.mutex);
    if ((w = gate.head) != NULL) { /* the place passes on: active stays */
        gate.head = w->next;
        if (!gate.head) {
            gate.tail = NULL;
        }
        w->admitted = 1;
        apr_thread_cond_signal(w->cond);
    } else {
        gate.active--;
    }
    apr_thread_mutex_unlock(gate.mutex);
}
