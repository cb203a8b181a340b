/* jr_counters.h: the shared-memory counter store (rolling per-key rate, per-IP failures,
 * the login throttle per account), here over a plain malloc'ed region. */
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include <apr_pools.h>
#include <apr_strings.h>
#include <apr_thread_proc.h>

#include "jr_counters.h"
#include "jr_log.h"
#include "unit.h"

#define T0_SEC 1780000020 /* 2026-05-28T20:27:00Z: a whole minute (and so of 20 s) */

static apr_pool_t *pool;
static void *region;
static size_t region_size;
static jr_counters_t *ctr;
static int warnings;

static void capture(void *baton, jr_log_level_e level, apr_status_t rv, const char *file,
                    int line, const char *msg)
{
    (void)baton;
    (void)rv;
    (void)msg;
    if (level <= JR_LOG_WARN) {
        __atomic_add_fetch(&warnings, 1, __ATOMIC_RELAXED);
    }
}

static unsigned slots;

static void setup_slots(unsigned n)
{
    ck_assert_int_eq(apr_pool_create(&pool, NULL), APR_SUCCESS);
    slots = n;
    region_size = jr_shmcounters_size(n);
    ck_assert_uint_gt(region_size, 0);
    region = malloc(region_size);
    ck_assert_ptr_nonnull(region);
    memset(region, 0xA5, region_size); /* init must zero it */
    ctr = jr_shmcounters_attach(pool, region, region_size, n, 1);
    ck_assert_ptr_nonnull(ctr);
    ck_assert_ptr_nonnull(ctr->ops);
    warnings = 0;
    jr_log_set(capture, NULL, JR_LOG_DEBUG);
}

static void setup(void)
{
    setup_slots(JR_SHM_DEFAULT_SLOTS);
}

/* The smallest table: every probe sequence covers all of it, so "full" is easy to reach. */
static void setup_small(void)
{
    setup_slots(JR_SHM_MIN_SLOTS);
}

static void teardown(void)
{
    jr_log_set(NULL, NULL, JR_LOG_DEBUG);
    free(region);
    region = NULL;
    ctr = NULL;
    apr_pool_destroy(pool);
    pool = NULL;
}

/* T0 + sec seconds. */
static apr_time_t at(long sec)
{
    return apr_time_from_sec((apr_time_t)T0_SEC + sec);
}

static jr_rate_t hit_on(jr_counters_t *c, long long key, int limit, apr_time_t now)
{
    jr_rate_t r;
    memset(&r, 0x5A, sizeof(r));
    ck_assert_int_eq(c->ops->rate_hit(c, key, limit, now, &r), APR_SUCCESS);
    return r;
}

static jr_rate_t hit(long long key, int limit, long sec)
{
    return hit_on(ctr, key, limit, at(sec));
}

/* Asserts one rate answer. reset < 0: only its range [1, 60] is checked. */
static void expect_rate(jr_rate_t r, int allowed, int limit, int remaining, int reset, int line)
{
    ck_assert_msg(r.allowed == allowed, "line %d: allowed %d, want %d", line, r.allowed,
                  allowed);
    ck_assert_msg(r.limit == limit, "line %d: limit %d, want %d", line, r.limit, limit);
    ck_assert_msg(r.remaining == remaining, "line %d: remaining %d, want %d", line,
                  r.remaining, remaining);
    ck_assert_msg(r.reset >= 1 && r.reset <= JR_RATE_WINDOW, "line %d: reset %d out of range",
                  line, r.reset);
    if (reset >= 0) {
        ck_assert_msg(r.reset == reset, "line %d: reset %d, want %d", line, r.reset, reset);
    }
}
#define EXPECT_RATE(r, allowed, limit, remaining, reset)                                    \
    expect_rate((r), (allowed), (limit), (remaining), (reset), __LINE__)

static int fail_on(jr_counters_t *c, const char *kind, const char *ip, int window,
                   apr_time_t now)
{
    int count = -12345;
    ck_assert_int_eq(c->ops->fail_add(c, kind, ip, window, now, &count), APR_SUCCESS);
    return count;
}

static int add_fail(const char *kind, const char *ip, long sec)
{
    return fail_on(ctr, kind, ip, 600, at(sec));
}

/* ---- rates --------------------------------------------------------------------------- */

START_TEST(rate_limit_counts_down)
{
    EXPECT_RATE(hit(7, 3, 0), 1, 3, 2, 60);
    EXPECT_RATE(hit(7, 3, 0), 1, 3, 1, 60);
    EXPECT_RATE(hit(7, 3, 0), 1, 3, 0, 60);
    EXPECT_RATE(hit(7, 3, 0), 0, 3, 0, 60);
    EXPECT_RATE(hit(7, 3, 0), 0, 3, 0, 60);
    /* Later in the minute: still refused, the reset counts down. */
    EXPECT_RATE(hit(7, 3, 10), 0, 3, 0, 50);
    EXPECT_RATE(hit(7, 3, 59), 0, 3, 0, 1);
    ck_assert_int_eq(warnings, 0);
}
END_TEST

START_TEST(rate_keys_have_own_budgets)
{
    EXPECT_RATE(hit(1, 3, 0), 1, 3, 2, 60);
    EXPECT_RATE(hit(1, 3, 0), 1, 3, 1, 60);
    EXPECT_RATE(hit(1, 3, 0), 1, 3, 0, 60);
    EXPECT_RATE(hit(1, 3, 0), 0, 3, 0, 60);
    EXPECT_RATE(hit(2, 3, 0), 1, 3, 2, 60);
    EXPECT_RATE(hit(2, 5, 1), 1, 5, 3, 59);
    EXPECT_RATE(hit(-1, 3, 1), 1, 3, 2, 60);
    EXPECT_RATE(hit(1LL << 40, 3, 1), 1, 3, 2, 60);
    EXPECT_RATE(hit(1, 3, 1), 0, 3, 0, 59);
}
END_TEST

START_TEST(rate_window_empties_after_a_minute)
{
    int i;
    for (i = 0; i < 3; ++i) {
        ck_assert_int_eq(hit(9, 3, 0).allowed, 1);
    }
    EXPECT_RATE(hit(9, 3, 59), 0, 3, 0, 1);
    EXPECT_RATE(hit(9, 3, 60), 1, 3, 2, 60);
    EXPECT_RATE(hit(9, 3, 60), 1, 3, 1, 60);
    EXPECT_RATE(hit(9, 3, 60), 1, 3, 0, 60);
    EXPECT_RATE(hit(9, 3, 60), 0, 3, 0, 60);
    /* Long idle (the slot may be recycled): a fresh budget. */
    EXPECT_RATE(hit(9, 3, 3600), 1, 3, 2, 60);
}
END_TEST

START_TEST(rate_window_rolls)
{
    EXPECT_RATE(hit(5, 2, 0), 1, 2, 1, 60);
    EXPECT_RATE(hit(5, 2, 30), 1, 2, 0, 30);
    EXPECT_RATE(hit(5, 2, 45), 0, 2, 0, 15);
    EXPECT_RATE(hit(5, 2, 60), 1, 2, 0, 30); /* the t=0 hit has left */
    EXPECT_RATE(hit(5, 2, 75), 0, 2, 0, 15);
    EXPECT_RATE(hit(5, 2, 89), 0, 2, 0, 1);
    EXPECT_RATE(hit(5, 2, 90), 1, 2, 0, 30); /* the t=30 hit has left */
    EXPECT_RATE(hit(5, 2, 119), 0, 2, 0, 1);
    EXPECT_RATE(hit(5, 2, 120), 1, 2, 0, 30);
}
END_TEST

START_TEST(rate_refused_hits_are_not_counted)
{
    int i;
    EXPECT_RATE(hit(11, 2, 0), 1, 2, 1, 60);
    EXPECT_RATE(hit(11, 2, 10), 1, 2, 0, 50);
    for (i = 11; i < 60; ++i) {
        ck_assert_int_eq(hit(11, 2, i).allowed, 0);
    }
    /* Only the t=0 hit has left: one more fits although 49 were refused meanwhile. */
    EXPECT_RATE(hit(11, 2, 60), 1, 2, 0, 10);
    EXPECT_RATE(hit(11, 2, 61), 0, 2, 0, 9);
}
END_TEST

START_TEST(rate_touch_once_a_minute)
{
    ck_assert_int_eq(hit(3, 100, 0).touch, 1);
    ck_assert_int_eq(hit(3, 100, 0).touch, 0);
    ck_assert_int_eq(hit(3, 100, 1).touch, 0);
    ck_assert_int_eq(hit(3, 100, 30).touch, 0);
    ck_assert_int_eq(hit(3, 100, 59).touch, 0);
    ck_assert_int_eq(hit(3, 100, 60).touch, 1);
    ck_assert_int_eq(hit(3, 100, 60).touch, 0);
    ck_assert_int_eq(hit(3, 100, 119).touch, 0);
    ck_assert_int_eq(hit(3, 100, 125).touch, 1);
    /* Per key. */
    ck_assert_int_eq(hit(4, 100, 125).touch, 1);
    ck_assert_int_eq(hit(4, 100, 126).touch, 0);
}
END_TEST

START_TEST(rate_refused_hit_does_not_touch)
{
    jr_rate_t r = hit(8, 1, 0);
    EXPECT_RATE(r, 1, 1, 0, 60);
    ck_assert_int_eq(r.touch, 1);
    r = hit(8, 2, 50); /* the key's limit was raised */
    EXPECT_RATE(r, 1, 2, 0, 10);
    ck_assert_int_eq(r.touch, 0);
    /* Back to 1: at t=70 a touch is due, but the t=50 hit fills the window. */
    r = hit(8, 1, 70);
    EXPECT_RATE(r, 0, 1, 0, 40);
    ck_assert_int_eq(r.touch, 0);
    r = hit(8, 1, 110);
    EXPECT_RATE(r, 1, 1, 0, 60);
    ck_assert_int_eq(r.touch, 1);
    r = hit(8, 1, 111);
    EXPECT_RATE(r, 0, 1, 0, 59);
    ck_assert_int_eq(r.touch, 0);
}
END_TEST

/* ---- concurrency --------------------------------------------------------------------- */

#define THREADS 8
#define HITS_PER_THREAD 1000
#define ROUNDS 16

typedef struct {
    long long key;
    apr_time_t now;
    int allowed, errors;
    const int *go;
} worker_t;

static void *APR_THREAD_FUNC worker(apr_thread_t *thd, void *data)
{
    worker_t *w = data;
    int i;
    while (!__atomic_load_n(w->go, __ATOMIC_ACQUIRE)) {
        sched_yield();
    }
    for (i = 0; i < HITS_PER_THREAD; ++i) {
        jr_rate_t r;
        if (ctr->ops->rate_hit(ctr, w->key, 500, w->now, &r) != APR_SUCCESS ||
            r.limit != 500 || r.remaining < 0 || r.remaining > 499) {
            ++w->errors;
        }
        w->allowed += r.allowed ? 1 : 0;
    }
    apr_thread_exit(thd, APR_SUCCESS);
    return NULL;
}

START_TEST(rate_concurrent_hits_are_exact)
{
    int round;
    /* Several rounds on fresh keys: the first hits race to claim the key's slot. */
    for (round = 0; round < ROUNDS; ++round) {
        apr_thread_t *t[THREADS];
        worker_t w[THREADS];
        int go = 0, i, total = 0;
        long long key = 424242 + round * 7919;
        for (i = 0; i < THREADS; ++i) {
            w[i].key = key;
            w[i].now = at(round);
            w[i].allowed = 0;
            w[i].errors = 0;
            w[i].go = &go;
            ck_assert_int_eq(apr_thread_create(&t[i], NULL, worker, &w[i], pool), APR_SUCCESS);
        }
        __atomic_store_n(&go, 1, __ATOMIC_RELEASE);
        for (i = 0; i < THREADS; ++i) {
            apr_status_t rv = APR_EGENERAL;
            ck_assert_int_eq(apr_thread_join(&rv, t[i]), APR_SUCCESS);
            ck_assert_int_eq(w[i].errors, 0);
            total += w[i].allowed;
        }
        ck_assert_msg(total == 500, "round %d: %d of %d hits allowed with limit 500", round,
                      total, THREADS * HITS_PER_THREAD);
        EXPECT_RATE(hit(key, 500, round), 0, 500, 0, 60);
    }
    ck_assert_int_eq(warnings, 0);
}
END_TEST

START_TEST(rate_many_keys)
{
    long long k;
    /* 3000 keys (database ids 1..3000) in 4096 slots: every one is counted (remaining 0,
     * not the "table full" answer, which leaves remaining at the limit) and then refused. */
    for (k = 1; k <= 3000; ++k) {
        jr_rate_t r = hit(k, 1, 0);
        ck_assert_msg(r.allowed == 1 && r.remaining == 0, "key %lld: allowed %d remaining %d",
                      k, r.allowed, r.remaining);
    }
    for (k = 1; k <= 3000; ++k) {
        jr_rate_t r = hit(k, 1, 1);
        ck_assert_msg(r.allowed == 0 && r.remaining == 0, "key %lld: allowed again", k);
    }
    ck_assert_int_eq(warnings, 0);
}
END_TEST

/* A key's count must survive other keys' slots going idle. Keys A (1500) are seen at t=0,
 * keys B (1500) at t=100, then B again at t=130, when A's slots are idle for more than two
 * windows and may be recycled, while every B key still has its hit of t=100 in the window. */
START_TEST(rate_budget_survives_idle_neighbours)
{
    long long k;
    int again = 0;
    long long first = 0;
    for (k = 1; k <= 1500; ++k) {
        ck_assert_int_eq(hit(k, 5, 0).allowed, 1);
    }
    for (k = 1; k <= 1500; ++k) {
        jr_rate_t r = hit(1000000 + k, 1, 100);
        ck_assert_msg(r.allowed == 1 && r.remaining == 0, "key %lld not counted", 1000000 + k);
    }
    for (k = 1; k <= 1500; ++k) {
        jr_rate_t r = hit(1000000 + k, 1, 130);
        if (r.allowed) {
            first = first ? first : 1000000 + k;
            ++again;
        }
    }
    ck_assert_msg(again == 0,
                  "%d of 1500 keys at their limit were allowed again (first: key %lld)", again,
                  first);
}
END_TEST

/* Requests are stamped before they take the slot's lock, so hits may arrive a second out of
 * order; a hit stamped one second earlier still sees the later ones in its minute. */
START_TEST(rate_out_of_order_stamps)
{
    EXPECT_RATE(hit(21, 2, 11), 1, 2, 1, 60);
    EXPECT_RATE(hit(21, 2, 11), 1, 2, 0, 60);
    ck_assert_int_eq(hit(21, 2, 10).allowed, 0);
    ck_assert_int_eq(hit(21, 2, 11).allowed, 0);
}
END_TEST

/* ---- failures ------------------------------------------------------------------------ */

START_TEST(fail_counts_per_kind_and_ip)
{
    int i;
    for (i = 1; i <= 5; ++i) {
        ck_assert_int_eq(add_fail("login", "192.0.2.1", 0), i);
    }
    ck_assert_int_eq(add_fail("login", "192.0.2.2", 0), 1);
    ck_assert_int_eq(add_fail("apikey", "192.0.2.1", 0), 1);
    ck_assert_int_eq(add_fail("login", "2001:db8::1", 0), 1);
    ck_assert_int_eq(add_fail("login", "192.0.2.1", 300), 6);
    ck_assert_int_eq(add_fail("login", "192.0.2.2", 300), 2);
    ck_assert_int_eq(add_fail("apikey", "192.0.2.1", 599), 2);
    ck_assert_int_eq(warnings, 0);
}
END_TEST

START_TEST(fail_window_expires)
{
    int i;
    for (i = 1; i <= 5; ++i) {
        ck_assert_int_eq(add_fail("login", "192.0.2.9", 0), i);
    }
    ck_assert_int_eq(add_fail("login", "192.0.2.9", 601), 1);
    ck_assert_int_eq(add_fail("login", "192.0.2.9", 602), 2);
    ck_assert_int_eq(add_fail("login", "192.0.2.9", 1300), 1);
}
END_TEST

START_TEST(fail_clear_forgets_the_ip)
{
    int i;
    for (i = 1; i <= 4; ++i) {
        ck_assert_int_eq(add_fail("login", "198.51.100.7", 0), i);
        ck_assert_int_eq(add_fail("apikey", "198.51.100.7", 0), i);
        ck_assert_int_eq(add_fail("login", "198.51.100.8", 0), i);
    }
    ck_assert_int_eq(ctr->ops->fail_clear(ctr, "198.51.100.7"), APR_SUCCESS);
    ck_assert_int_eq(add_fail("login", "198.51.100.7", 1), 1);
    ck_assert_int_eq(add_fail("apikey", "198.51.100.7", 1), 1);
    ck_assert_int_eq(add_fail("login", "198.51.100.8", 1), 5); /* another ip keeps its count */
    ck_assert_int_eq(ctr->ops->fail_clear(ctr, "203.0.113.1"), APR_SUCCESS); /* unknown */
    ck_assert_int_eq(add_fail("login", "198.51.100.8", 2), 6);
}
END_TEST

/* Clearing some ips must not make the others lose their counts (the cleared slots leave
 * holes in the probe sequences of their neighbours). */
START_TEST(fail_clear_keeps_neighbours)
{
    char ip[32];
    int i, lost = 0, first = -1;
    for (i = 0; i < 3000; ++i) {
        apr_snprintf(ip, sizeof(ip), "10.%d.%d.1", i / 256, i % 256);
        ck_assert_int_eq(add_fail("login", ip, 0), 1);
    }
    for (i = 0; i < 3000; i += 2) {
        apr_snprintf(ip, sizeof(ip), "10.%d.%d.1", i / 256, i % 256);
        ck_assert_int_eq(ctr->ops->fail_clear(ctr, ip), APR_SUCCESS);
    }
    for (i = 1; i < 3000; i += 2) {
        apr_snprintf(ip, sizeof(ip), "10.%d.%d.1", i / 256, i % 256);
        if (add_fail("login", ip, 1) != 2) {
            first = first < 0 ? i : first;
            ++lost;
        }
    }
    ck_assert_msg(lost == 0, "%d of 1500 ips lost their count (first: 10.%d.%d.1)", lost,
                  first / 256, first % 256);
    ck_assert_int_eq(warnings, 0);
}
END_TEST

/* ---- attaching ----------------------------------------------------------------------- */

START_TEST(attach_checks_the_region)
{
    void *zero = calloc(1, region_size);
    ck_assert_ptr_nonnull(zero);
    ck_assert_ptr_null(jr_shmcounters_attach(pool, zero, region_size, slots, 0)); /* magic */
    free(zero);
    ck_assert_ptr_null(jr_shmcounters_attach(pool, region, region_size - 1, slots, 0));
    ck_assert_ptr_null(jr_shmcounters_attach(pool, region, region_size - 1, slots, 1));
    /* Another slot count than the region was made for (a changed JournalCounterSlots). */
    ck_assert_ptr_null(jr_shmcounters_attach(pool, region, region_size, slots / 2, 0));
    ck_assert_ptr_null(jr_shmcounters_attach(pool, region, region_size, JR_SHM_MIN_SLOTS - 1, 1));
    ck_assert_ptr_null(jr_shmcounters_attach(pool, region, region_size, JR_SHM_MAX_SLOTS + 1, 1));
    ck_assert_ptr_nonnull(jr_shmcounters_attach(pool, region, region_size, slots, 0));
    ck_assert_uint_gt(jr_shmcounters_size(2 * slots), region_size);
}
END_TEST

START_TEST(attach_sees_the_same_counts)
{
    jr_counters_t *other;
    int count = 0;
    EXPECT_RATE(hit(77, 3, 0), 1, 3, 2, 60);
    EXPECT_RATE(hit(77, 3, 0), 1, 3, 1, 60);
    ck_assert_int_eq(add_fail("apikey", "192.0.2.77", 0), 1);
    ck_assert_int_eq(add_fail("apikey", "192.0.2.77", 0), 2);

    other = jr_shmcounters_attach(pool, region, region_size, slots, 0);
    ck_assert_ptr_nonnull(other);
    EXPECT_RATE(hit_on(other, 77, 3, at(1)), 1, 3, 0, 59);
    EXPECT_RATE(hit_on(other, 77, 3, at(1)), 0, 3, 0, 59);
    EXPECT_RATE(hit(77, 3, 2), 0, 3, 0, 58);
    ck_assert_int_eq(other->ops->fail_add(other, "apikey", "192.0.2.77", 600, at(1), &count),
                     APR_SUCCESS);
    ck_assert_int_eq(count, 3);
    ck_assert_int_eq(add_fail("apikey", "192.0.2.77", 2), 4);
    ck_assert_int_eq(other->ops->fail_clear(other, "192.0.2.77"), APR_SUCCESS);
    ck_assert_int_eq(add_fail("apikey", "192.0.2.77", 3), 1);

    /* Attaching again with init=1 starts over. */
    ctr = jr_shmcounters_attach(pool, region, region_size, slots, 1);
    ck_assert_ptr_nonnull(ctr);
    EXPECT_RATE(hit(77, 3, 3), 1, 3, 2, 60);
}
END_TEST

/* ---- full tables (64 slots) ----------------------------------------------------------- */

/* More keys busy at once than there are slots: every request is still counted (the table
 * used to answer "allowed" and count nothing), and the line about it comes once a minute. */
START_TEST(full_key_table_still_counts)
{
    long long k;
    for (k = 1; k <= 3 * JR_SHM_MIN_SLOTS; ++k) {
        jr_rate_t r = hit(k, 1, 0);
        ck_assert_msg(r.allowed == 1 && r.remaining == 0, "key %lld: allowed %d remaining %d",
                      k, r.allowed, r.remaining);
        r = hit(k, 1, 0);
        ck_assert_msg(r.allowed == 0, "key %lld: a second request in the minute was allowed", k);
    }
    ck_assert_int_eq(warnings, 1);
    for (k = 1000; k < 1100; ++k) {
        hit(k, 1, 59);
    }
    ck_assert_int_eq(warnings, 1); /* still the same minute */
    hit(5000, 1, 60);
    ck_assert_int_eq(warnings, 2);
}
END_TEST

/* The slot taken over is the one seen longest ago; the busier ones keep their budgets. */
START_TEST(full_key_table_takes_the_idlest_slot)
{
    long long k;
    for (k = 1; k <= JR_SHM_MIN_SLOTS; ++k) {
        ck_assert_int_eq(hit(k, 2, 0).allowed, 1);
    }
    for (k = 2; k <= JR_SHM_MIN_SLOTS; ++k) {
        ck_assert_int_eq(hit(k, 2, 5).allowed, 1); /* at their limit now; key 1 idles */
    }
    ck_assert_int_eq(warnings, 0);
    EXPECT_RATE(hit(999, 2, 10), 1, 2, 1, 60); /* takes key 1's slot */
    ck_assert_int_eq(warnings, 1);
    for (k = 2; k <= JR_SHM_MIN_SLOTS; ++k) {
        ck_assert_msg(hit(k, 2, 11).allowed == 0, "key %lld lost its count", k);
    }
}
END_TEST

START_TEST(full_failure_table_still_counts)
{
    char ip[32];
    int i;
    for (i = 0; i < JR_SHM_MIN_SLOTS; ++i) {
        apr_snprintf(ip, sizeof(ip), "192.0.2.%d", i);
        ck_assert_int_eq(fail_on(ctr, "login", ip, 600, at(i)), 1);
    }
    ck_assert_int_eq(warnings, 0);
    /* The table is full of live counts: a new address is counted (it used to get 0) in the
     * slot of 192.0.2.0, seen longest ago. */
    ck_assert_int_eq(fail_on(ctr, "login", "198.51.100.1", 600, at(100)), 1);
    ck_assert_int_eq(fail_on(ctr, "login", "198.51.100.1", 600, at(100)), 2);
    ck_assert_int_eq(warnings, 1);
    for (i = 1; i < JR_SHM_MIN_SLOTS; ++i) {
        apr_snprintf(ip, sizeof(ip), "192.0.2.%d", i);
        ck_assert_msg(fail_on(ctr, "login", ip, 600, at(101)) == 2, "%s lost its count", ip);
    }
    /* 192.0.2.0 starts over, taking the slot seen longest ago (198.51.100.1's, at 100). */
    ck_assert_int_eq(fail_on(ctr, "login", "192.0.2.0", 600, at(102)), 1);
    ck_assert_int_eq(warnings, 1); /* one line a minute */
    ck_assert_int_eq(fail_on(ctr, "login", "198.51.100.1", 600, at(161)), 1);
    ck_assert_int_eq(warnings, 2);
}
END_TEST

/* ---- login throttle ------------------------------------------------------------------- */

static const jr_throttle_cfg_t tcfg = {10, 900, 60, 900};

static jr_throttle_t attempt_from(const char *account, const char *source, long sec)
{
    jr_throttle_t t;
    memset(&t, 0x5A, sizeof(t));
    ck_assert_int_eq(ctr->ops->login_attempt(ctr, account, source, &tcfg, at(sec), &t),
                     APR_SUCCESS);
    return t;
}

static jr_throttle_t attempt(const char *account, long sec)
{
    return attempt_from(account, "203.0.113.9", sec);
}

static void login_ok(const char *account, const char *source, long sec)
{
    ck_assert_int_eq(ctr->ops->login_ok(ctr, account, source, at(sec)), APR_SUCCESS);
}

/* Ten attempts pass; the tenth starts a period (60 s), during which every attempt, from any
 * address, is refused with the time left. */
static void throttle_account(const char *account, long sec)
{
    int i;
    for (i = 1; i <= 10; ++i) {
        jr_throttle_t t = attempt_from(account, i % 2 ? "192.0.2.1" : "2001:db8::/64", sec);
        ck_assert_msg(!t.refused && t.attempts == i && t.period == (i == 10 ? 60 : 0),
                      "attempt %d: refused %d attempts %d period %d", i, t.refused, t.attempts,
                      t.period);
    }
}

START_TEST(throttle_after_threshold)
{
    jr_throttle_t t;
    throttle_account("admin", 0);
    t = attempt("admin", 0);
    ck_assert(t.refused && t.retry_after == 60);
    t = attempt_from("admin", "198.51.100.3", 45);
    ck_assert(t.refused && t.retry_after == 15);
    t = attempt("admin", 59);
    ck_assert(t.refused && t.retry_after == 1);
    /* Other accounts, known or not, are not affected. */
    t = attempt("tutor.one", 30);
    ck_assert(!t.refused && t.attempts == 1 && t.period == 0);
    ck_assert_int_eq(warnings, 0);
}
END_TEST

/* Each period that starts within the window after the last one ended lasts twice as long,
 * up to the maximum; refused attempts neither count nor extend it. */
START_TEST(throttle_backoff_doubles_to_the_cap)
{
    static const int periods[] = {120, 240, 480, 900, 900, 900};
    jr_throttle_t t;
    long now = 60;
    size_t i;
    throttle_account("admin", 0);
    for (i = 0; i < sizeof(periods) / sizeof(*periods); ++i) {
        t = attempt("admin", now);
        ck_assert_msg(!t.refused && t.period == periods[i], "period %zu: %d, want %d", i,
                      t.period, periods[i]);
        ck_assert(attempt("admin", now).refused);
        t = attempt("admin", now + periods[i] - 1);
        ck_assert(t.refused && t.retry_after == 1);
        now += periods[i];
    }
}
END_TEST

START_TEST(throttle_success_resets)
{
    jr_throttle_t t;
    int i;
    throttle_account("admin", 0);
    t = attempt("admin", 60); /* a period of 120 s starts; this attempt succeeds */
    ck_assert(!t.refused && t.period == 120);
    login_ok("admin", "203.0.113.9", 61);
    for (i = 1; i < 10; ++i) {
        t = attempt("admin", 62);
        ck_assert(!t.refused && t.attempts == i && t.period == 0);
    }
    t = attempt("admin", 62);
    ck_assert_int_eq(t.period, 60); /* back to the first period: the back-off was forgotten */
}
END_TEST

/* Attempts spread wider than the window never reach the threshold; a period long past does
 * not make the next one longer. */
START_TEST(throttle_window_slides)
{
    jr_throttle_t t;
    int i;
    for (i = 0; i < 30; ++i) {
        t = attempt("slow", i * 100L);
        ck_assert_msg(!t.refused && t.period == 0 && t.attempts == (i < 9 ? i + 1 : 9),
                      "attempt %d: attempts %d period %d", i, t.attempts, t.period);
    }
    throttle_account("late", 0);
    for (i = 1; i <= 10; ++i) {
        t = attempt("late", 60 + 900 + 1000 + i);
        ck_assert(!t.refused && t.period == (i == 10 ? 60 : 0));
    }
}
END_TEST

/* The throttle cannot lock its account's owner out for good: an address that logged in to
 * the account before passes one attempt during a period, and a success gives the pass back;
 * a failure from it uses the pass up. */
START_TEST(throttle_known_source_passes)
{
    jr_throttle_t t;
    login_ok("admin", "198.51.100.20", 0);
    throttle_account("admin", 10);
    ck_assert(attempt_from("admin", "203.0.113.66", 11).refused);
    t = attempt_from("admin", "198.51.100.20", 12);
    ck_assert(!t.refused && t.period == 0);
    login_ok("admin", "198.51.100.20", 12); /* it was the owner: everything is reset */
    t = attempt_from("admin", "203.0.113.66", 13);
    ck_assert(!t.refused && t.attempts == 1);
    login_ok("admin", "198.51.100.20", 14);

    throttle_account("admin", 20);
    ck_assert(!attempt_from("admin", "198.51.100.20", 21).refused); /* a wrong password */
    ck_assert(attempt_from("admin", "198.51.100.20", 22).refused);  /* the pass is used up */
    ck_assert(attempt_from("admin", "203.0.113.66", 22).refused);
}
END_TEST

/* Junk names that fill the table push out each other, never a running throttle nor an
 * account's known addresses. */
START_TEST(throttle_survives_a_full_table)
{
    char name[32];
    int i;
    login_ok("tutor.one", "198.51.100.1", 0);
    throttle_account("admin", 0);
    for (i = 0; i < 20 * JR_SHM_MIN_SLOTS; ++i) {
        apr_snprintf(name, sizeof(name), "junk%d", i);
        ck_assert(!attempt(name, 1 + i / 100).refused);
    }
    ck_assert_int_gt(warnings, 0);
    ck_assert_int_le(warnings, 1);
    ck_assert(attempt("admin", 30).refused);
    throttle_account("tutor.one", 31);
    ck_assert(!attempt_from("tutor.one", "198.51.100.1", 32).refused);
}
END_TEST

typedef struct {
    const int *go;
    int passed;
} login_worker_t;

static void *APR_THREAD_FUNC login_worker(apr_thread_t *thd, void *data)
{
    login_worker_t *w = data;
    int i;
    while (!__atomic_load_n(w->go, __ATOMIC_ACQUIRE)) {
        sched_yield();
    }
    for (i = 0; i < 200; ++i) {
        jr_throttle_t t;
        if (ctr->ops->login_attempt(ctr, "admin", "192.0.2.1", &tcfg, at(0), &t) ==
                APR_SUCCESS &&
            !t.refused) {
            ++w->passed;
        }
    }
    apr_thread_exit(thd, APR_SUCCESS);
    return NULL;
}

/* Parallel guesses cannot overrun the threshold: attempts are counted when they start. */
START_TEST(throttle_concurrent_attempts)
{
    apr_thread_t *t[THREADS];
    login_worker_t w[THREADS];
    int go = 0, i, total = 0;
    for (i = 0; i < THREADS; ++i) {
        w[i].go = &go;
        w[i].passed = 0;
        ck_assert_int_eq(apr_thread_create(&t[i], NULL, login_worker, &w[i], pool), APR_SUCCESS);
    }
    __atomic_store_n(&go, 1, __ATOMIC_RELEASE);
    for (i = 0; i < THREADS; ++i) {
        apr_status_t rv = APR_EGENERAL;
        ck_assert_int_eq(apr_thread_join(&rv, t[i]), APR_SUCCESS);
        total += w[i].passed;
    }
    ck_assert_int_eq(total, 10);
}
END_TEST

Suite *suite_counters(void)
{
    Suite *s = suite_create("counters");
    TCase *tc = tcase_create("counters");
    TCase *small = tcase_create("full tables");
    TCase *conc = tcase_create("concurrency");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, rate_limit_counts_down);
    tcase_add_test(tc, rate_keys_have_own_budgets);
    tcase_add_test(tc, rate_window_empties_after_a_minute);
    tcase_add_test(tc, rate_window_rolls);
    tcase_add_test(tc, rate_refused_hits_are_not_counted);
    tcase_add_test(tc, rate_touch_once_a_minute);
    tcase_add_test(tc, rate_refused_hit_does_not_touch);
    tcase_add_test(tc, rate_many_keys);
    tcase_add_test(tc, rate_budget_survives_idle_neighbours);
    tcase_add_test(tc, rate_out_of_order_stamps);
    tcase_add_test(tc, fail_counts_per_kind_and_ip);
    tcase_add_test(tc, fail_window_expires);
    tcase_add_test(tc, fail_clear_forgets_the_ip);
    tcase_add_test(tc, fail_clear_keeps_neighbours);
    tcase_add_test(tc, attach_checks_the_region);
    tcase_add_test(tc, attach_sees_the_same_counts);
    tcase_add_test(tc, throttle_after_threshold);
    tcase_add_test(tc, throttle_backoff_doubles_to_the_cap);
    tcase_add_test(tc, throttle_success_resets);
    tcase_add_test(tc, throttle_window_slides);
    tcase_add_test(tc, throttle_known_source_passes);
    suite_add_tcase(s, tc);
    tcase_add_checked_fixture(small, setup_small, teardown);
    tcase_add_test(small, full_key_table_still_counts);
    tcase_add_test(small, full_key_table_takes_the_idlest_slot);
    tcase_add_test(small, full_failure_table_still_counts);
    tcase_add_test(small, throttle_survives_a_full_table);
    suite_add_tcase(s, small);
    tcase_add_checked_fixture(conc, setup, teardown);
    tcase_set_timeout(conc, 120);
    tcase_add_test(conc, rate_concurrent_hits_are_exact);
    tcase_add_test(conc, throttle_concurrent_attempts);
    suite_add_tcase(s, conc);
    return s;
}
