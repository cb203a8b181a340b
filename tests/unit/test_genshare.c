/* jr_genshare.h: a read of the generation shared by the threads that ask at once. The reads
 * here are a function the test drives: each answers its own number as the generation, and may
 * be held until the test lets it end, so that who waited for which read is known exactly. */
#include <pthread.h>
#include <string.h>

#include <apr_time.h>

#include "jr_genshare.h"
#include "unit.h"

#define MAX_READERS 8

static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int calls;        /* reads made */
    int running;      /* the read under way (its number), 0 when none */
    int release_upto; /* reads up to this number may end */
    apr_status_t answer;
} fake = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0, APR_SUCCESS};

static void fake_reset(int release_upto, apr_status_t answer)
{
    pthread_mutex_lock(&fake.mu);
    fake.calls = fake.running = 0;
    fake.release_upto = release_upto;
    fake.answer = answer;
    pthread_mutex_unlock(&fake.mu);
}

static apr_status_t fake_fetch(jr_db_t *db, apr_pool_t *p, apr_uint64_t *gen)
{
    apr_status_t rv;
    int n;
    (void)db;
    (void)p;
    pthread_mutex_lock(&fake.mu);
    n = fake.running = ++fake.calls;
    pthread_cond_broadcast(&fake.cv);
    while (n > fake.release_upto) {
        pthread_cond_wait(&fake.cv, &fake.mu);
    }
    fake.running = 0;
    rv = fake.answer;
    pthread_mutex_unlock(&fake.mu);
    *gen = (apr_uint64_t)n;
    return rv;
}

static void fake_release(int upto)
{
    pthread_mutex_lock(&fake.mu);
    fake.release_upto = upto;
    pthread_cond_broadcast(&fake.cv);
    pthread_mutex_unlock(&fake.mu);
}

static void wait_for_read(int n)
{
    pthread_mutex_lock(&fake.mu);
    while (fake.running != n) {
        pthread_cond_wait(&fake.cv, &fake.mu);
    }
    pthread_mutex_unlock(&fake.mu);
}

static int waiting(jr_genshare_t *g)
{
    apr_uint64_t reads;
    int n;
    jr_genshare_counts(g, &reads, &n);
    return n;
}

static apr_uint64_t reads(jr_genshare_t *g)
{
    apr_uint64_t n;
    int w;
    jr_genshare_counts(g, &n, &w);
    return n;
}

static void wait_for_waiters(jr_genshare_t *g, int n)
{
    while (waiting(g) < n) {
        apr_sleep(1000);
    }
}

typedef struct {
    jr_genshare_t *g;
    pthread_t thread;
    apr_status_t rv;
    apr_uint64_t gen;
} reader_t;

static void *reader_run(void *data)
{
    reader_t *r = data;
    r->gen = 0;
    r->rv = jr_genshare_read(r->g, NULL, NULL, fake_fetch, &r->gen);
    return NULL;
}

static void reader_start(reader_t *r, jr_genshare_t *g)
{
    r->g = g;
    ck_assert_int_eq(pthread_create(&r->thread, NULL, reader_run, r), 0);
}

static void reader_join(reader_t *r)
{
    ck_assert_int_eq(pthread_join(r->thread, NULL), 0);
}

static apr_status_t read_now(jr_genshare_t *g, apr_uint64_t *gen)
{
    return jr_genshare_read(g, NULL, NULL, fake_fetch, gen);
}

/* first makes read number n, held; later asks while it is on its way; then both end. */
static void ask_during_a_read(jr_genshare_t *g, int n, reader_t *first, reader_t *later)
{
    reader_start(first, g);
    wait_for_read(n);
    reader_start(later, g);
    wait_for_waiters(g, 1);
    fake_release(1000);
    reader_join(first);
    reader_join(later);
}

/* A thread alone makes its own read, one per call. */
START_TEST(a_thread_alone_reads_each_time)
{
    jr_genshare_t *g = jr_genshare_create(unit_pool, JR_GENSHARE_HOLD);
    apr_uint64_t gen = 0;
    fake_reset(1000, APR_SUCCESS);
    ck_assert_int_eq(read_now(g, &gen), APR_SUCCESS);
    ck_assert_uint_eq(gen, 1);
    ck_assert_int_eq(read_now(g, &gen), APR_SUCCESS);
    ck_assert_uint_eq(gen, 2);
    ck_assert_uint_eq(reads(g), 2);
}
END_TEST

/* A thread that asks while a read is on its way never gets that read's answer (its snapshot
 * may be older than the question): it waits for the next one. The threads that ask during one
 * read all share the next: one read for all of them. */
START_TEST(threads_that_ask_during_a_read_share_the_next)
{
    jr_genshare_t *g = jr_genshare_create(unit_pool, JR_GENSHARE_HOLD);
    reader_t first, later[MAX_READERS];
    int i;
    fake_reset(0, APR_SUCCESS);
    reader_start(&first, g);
    wait_for_read(1); /* the first thread's read is on its way, and held */
    for (i = 0; i < MAX_READERS; ++i) {
        reader_start(&later[i], g);
    }
    wait_for_waiters(g, MAX_READERS);
    fake_release(1000);
    reader_join(&first);
    ck_assert_int_eq(first.rv, APR_SUCCESS);
    ck_assert_uint_eq(first.gen, 1);
    for (i = 0; i < MAX_READERS; ++i) {
        reader_join(&later[i]);
        ck_assert_int_eq(later[i].rv, APR_SUCCESS);
        ck_assert_uint_eq(later[i].gen, 2); /* the read after the one under way */
    }
    ck_assert_int_eq(fake.calls, 2);
    ck_assert_uint_eq(reads(g), 2);
}
END_TEST

/* A read that fails fails for every thread that waited for it; the next call reads again. */
START_TEST(a_failed_read_fails_its_waiters)
{
    jr_genshare_t *g = jr_genshare_create(unit_pool, JR_GENSHARE_HOLD);
    reader_t first, later;
    apr_uint64_t gen = 0;
    fake_reset(0, APR_EGENERAL);
    ask_during_a_read(g, 1, &first, &later);
    ck_assert_int_eq(first.rv, APR_EGENERAL);
    ck_assert_int_eq(later.rv, APR_EGENERAL);
    ck_assert_int_eq(fake.calls, 2);
    fake.answer = APR_SUCCESS;
    ck_assert_int_eq(read_now(g, &gen), APR_SUCCESS);
    ck_assert_uint_eq(gen, 3);
}
END_TEST

/* A read that found a write running (APR_EAGAIN) holds the reads after it back: they answer
 * APR_EAGAIN at once, without a read, until the hold is over. */
START_TEST(a_busy_read_holds_the_next_ones_back)
{
    jr_genshare_t *held = jr_genshare_create(unit_pool, apr_time_from_sec(60));
    jr_genshare_t *brief = jr_genshare_create(unit_pool, apr_time_from_msec(1));
    apr_uint64_t gen = 0;
    fake_reset(1000, APR_EAGAIN);
    ck_assert_int_eq(read_now(held, &gen), APR_EAGAIN);
    fake.answer = APR_SUCCESS;
    ck_assert_int_eq(read_now(held, &gen), APR_EAGAIN);
    ck_assert_int_eq(fake.calls, 1);
    ck_assert_uint_eq(reads(held), 1);
    fake.answer = APR_EAGAIN;
    ck_assert_int_eq(read_now(brief, &gen), APR_EAGAIN);
    apr_sleep(apr_time_from_msec(20));
    fake.answer = APR_SUCCESS;
    ck_assert_int_eq(read_now(brief, &gen), APR_SUCCESS);
    ck_assert_uint_eq(gen, 3);
}
END_TEST

/* A new generation holds the reads back only when other threads were asking at the same time
 * (writes under concurrent load); the requests of one client, one after another, always read. */
START_TEST(a_new_generation_holds_back_only_under_concurrency)
{
    jr_genshare_t *g = jr_genshare_create(unit_pool, apr_time_from_sec(60));
    reader_t first, later;
    apr_uint64_t gen = 0;
    int i;
    fake_reset(1000, APR_SUCCESS);
    for (i = 1; i <= 3; ++i) { /* every read answers a new generation: no hold */
        ck_assert_int_eq(read_now(g, &gen), APR_SUCCESS);
        ck_assert_uint_eq(gen, (apr_uint64_t)i);
    }
    fake_release(3);
    /* read 4 ends with a new generation while another thread waits for the next */
    ask_during_a_read(g, 4, &first, &later);
    ck_assert_uint_eq(first.gen, 4);
    ck_assert_uint_eq(later.gen, 5);
    ck_assert_int_eq(read_now(g, &gen), APR_EAGAIN);
    ck_assert_int_eq(fake.calls, 5);
}
END_TEST

Suite *suite_genshare(void)
{
    Suite *s = suite_create("genshare");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, unit_pool_setup, unit_pool_teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, a_thread_alone_reads_each_time);
    tcase_add_test(tc, threads_that_ask_during_a_read_share_the_next);
    tcase_add_test(tc, a_failed_read_fails_its_waiters);
    tcase_add_test(tc, a_busy_read_holds_the_next_ones_back);
    tcase_add_test(tc, a_new_generation_holds_back_only_under_concurrency);
    suite_add_tcase(s, tc);
    return s;
}
