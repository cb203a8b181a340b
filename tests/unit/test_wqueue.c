/* jr_wqueue.h, the write queue of an SQLite database, and how jr_db.c enters and leaves it. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <apr_strings.h>
#include <sqlite3.h>

#include "jr_db.h"
#include "jr_log.h"
#include "jr_migrate.h"
#include "jr_rcache.h"
#include "jr_stmts.h"
#include "jr_util.h"
#include "jr_wqueue.h"
#include "unit.h"

static char dir[64];
static char dbpath[96];

static void setup(void)
{
    unit_pool_setup();
    strcpy(dir, "/tmp/jr-wq-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(dbpath, sizeof(dbpath), "%s/journal.db", dir);
}

static void teardown(void)
{
    unit_pool_teardown();
    unit_rm_rf(dir);
    jr_log_set(NULL, NULL, JR_LOG_DEBUG);
}

/* Whether anyone (this process through the queue, or another process) holds the lock file:
 * a descriptor of its own conflicts with both. */
static int held(const char *lock_path)
{
    int fd = open(lock_path, O_RDONLY | O_CLOEXEC), busy;
    ck_assert_int_ge(fd, 0);
    busy = flock(fd, LOCK_EX | LOCK_NB) != 0;
    ck_assert(!busy || errno == EWOULDBLOCK);
    close(fd);
    return busy;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

START_TEST(lock_file_next_to_the_database)
{
    jr_wqueue_t *q, *again;
    ck_assert_int_eq(jr_wqueue_of(dbpath, &q), APR_SUCCESS);
    ck_assert_int_eq(jr_wqueue_of(dbpath, &again), APR_SUCCESS);
    ck_assert_ptr_eq(q, again);
    ck_assert_str_eq(jr_wqueue_path(q), apr_pstrcat(unit_pool, dbpath, "-wq", NULL));
    ck_assert_int_eq(jr_wqueue_enter(q, 1000), APR_SUCCESS);
    ck_assert(held(jr_wqueue_path(q)));
    jr_wqueue_leave(q);
    ck_assert(!held(jr_wqueue_path(q)));
}
END_TEST

/* Runs fn(arg) in four threads at once and waits for all of them. */
static void in_four_threads(void *(*fn)(void *), void *arg)
{
    pthread_t t[4];
    int i;
    for (i = 0; i < 4; ++i) {
        ck_assert_int_eq(pthread_create(&t[i], NULL, fn, arg), 0);
    }
    for (i = 0; i < 4; ++i) {
        pthread_join(t[i], NULL);
    }
}

/* ---- the backlog count ------------------------------------------------------------------- */

typedef struct {
    jr_wqueue_t *q;
    apr_uint32_t taken, takes, small;
} backlog_t;

static void *backlog_writer(void *data)
{
    backlog_t *b = data;
    int i;
    for (i = 0; i < 5000; ++i) {
        apr_uint32_t n;
        jr_wqueue_backlog_add(b->q, 1);
        if ((n = jr_wqueue_backlog_take(b->q, 64)) != 0) {
            __atomic_add_fetch(&b->taken, n, __ATOMIC_SEQ_CST);
            __atomic_add_fetch(&b->takes, 1, __ATOMIC_SEQ_CST);
            if (n < 64) {
                __atomic_add_fetch(&b->small, 1, __ATOMIC_SEQ_CST);
            }
        }
    }
    return NULL;
}

/* Four threads count 20,000 rows and take the count whenever it reaches 64: nothing is lost
 * or taken twice, and nobody takes less than 64. */
START_TEST(the_backlog_is_taken_whole_by_one_thread_at_a_time)
{
    backlog_t b = {0};
    ck_assert_int_eq(jr_wqueue_of(dbpath, &b.q), APR_SUCCESS);
    ck_assert_uint_eq(jr_wqueue_backlog_take(b.q, 1), 0);
    jr_wqueue_backlog_add(b.q, 63);
    ck_assert_uint_eq(jr_wqueue_backlog_take(b.q, 64), 0); /* below: left as it was */
    jr_wqueue_backlog_add(b.q, 1);
    ck_assert_uint_eq(jr_wqueue_backlog_take(b.q, 64), 64);
    ck_assert_uint_eq(jr_wqueue_backlog_take(b.q, 1), 0);
    in_four_threads(backlog_writer, &b);
    ck_assert_uint_eq(b.taken + jr_wqueue_backlog_take(b.q, 1), 20000);
    ck_assert_uint_ge(b.takes, 20000 / 64 / 2);
    ck_assert_uint_eq(b.small, 0);
}
END_TEST

/* ---- threads of one process -------------------------------------------------------------- */

typedef struct {
    jr_wqueue_t *q;
    volatile int inside, overlaps, entered;
    int timeout_ms;
    apr_status_t rv;
} shared_t;

static void *writer(void *data)
{
    shared_t *s = data;
    int i;
    for (i = 0; i < 40; ++i) {
        ck_assert_int_eq(jr_wqueue_enter(s->q, 10000), APR_SUCCESS);
        if (__atomic_add_fetch(&s->inside, 1, __ATOMIC_SEQ_CST) != 1) {
            __atomic_add_fetch(&s->overlaps, 1, __ATOMIC_SEQ_CST);
        }
        usleep(200);
        __atomic_sub_fetch(&s->inside, 1, __ATOMIC_SEQ_CST);
        jr_wqueue_leave(s->q);
    }
    return NULL;
}

/* flock is per open file description, which the threads share: without the mutex they would
 * all hold it at once. */
START_TEST(threads_queue_one_at_a_time)
{
    shared_t s = {0};
    ck_assert_int_eq(jr_wqueue_of(dbpath, &s.q), APR_SUCCESS);
    in_four_threads(writer, &s);
    ck_assert_int_eq(s.overlaps, 0);
    ck_assert(!held(jr_wqueue_path(s.q)));
}
END_TEST

static void *enter_once(void *data)
{
    shared_t *s = data;
    s->rv = jr_wqueue_enter(s->q, s->timeout_ms);
    s->entered = s->rv == APR_SUCCESS;
    if (s->entered) {
        jr_wqueue_leave(s->q);
    }
    return NULL;
}

START_TEST(a_waiting_thread_gives_up_after_its_timeout)
{
    shared_t s = {0};
    pthread_t t;
    double start;
    ck_assert_int_eq(jr_wqueue_of(dbpath, &s.q), APR_SUCCESS);
    ck_assert_int_eq(jr_wqueue_enter(s.q, 1000), APR_SUCCESS);
    s.timeout_ms = 150;
    start = now_s();
    ck_assert_int_eq(pthread_create(&t, NULL, enter_once, &s), 0);
    pthread_join(t, NULL);
    ck_assert_int_eq(s.rv, APR_TIMEUP);
    ck_assert(now_s() - start >= 0.14);
    jr_wqueue_leave(s.q);
    /* Free again: the next one enters at once. */
    s.timeout_ms = 1000;
    ck_assert_int_eq(pthread_create(&t, NULL, enter_once, &s), 0);
    pthread_join(t, NULL);
    ck_assert_int_eq(s.rv, APR_SUCCESS);
}
END_TEST

typedef struct {
    jr_wqueue_t *q;
    int id;
    int *order, *n;
    pthread_mutex_t *mu;
} lined_t;

static void *enter_in_line(void *data)
{
    lined_t *l = data;
    ck_assert_int_eq(jr_wqueue_enter(l->q, 20000), APR_SUCCESS);
    pthread_mutex_lock(l->mu);
    l->order[(*l->n)++] = l->id;
    pthread_mutex_unlock(l->mu);
    jr_wqueue_leave(l->q);
    return NULL;
}

/* Threads enter in the order they came: the turn is handed to the first in line. */
START_TEST(threads_enter_in_the_order_they_came)
{
    enum { N = 5 };
    pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    int order[N], n = 0, i;
    lined_t l[N];
    pthread_t t[N];
    jr_wqueue_t *q;
    ck_assert_int_eq(jr_wqueue_of(dbpath, &q), APR_SUCCESS);
    ck_assert_int_eq(jr_wqueue_enter(q, 1000), APR_SUCCESS);
    for (i = 0; i < N; ++i) {
        l[i] = (lined_t){q, i, order, &n, &mu};
        ck_assert_int_eq(pthread_create(&t[i], NULL, enter_in_line, &l[i]), 0);
        usleep(150000); /* in line before the next one comes */
    }
    jr_wqueue_leave(q);
    for (i = 0; i < N; ++i) {
        pthread_join(t[i], NULL);
    }
    ck_assert_int_eq(n, N);
    for (i = 0; i < N; ++i) {
        ck_assert_int_eq(order[i], i);
    }
}
END_TEST

/* A thread that leaves and comes straight back goes behind the one that waited. */
START_TEST(a_returning_holder_does_not_overtake_a_waiter)
{
    shared_t s = {0};
    pthread_t t;
    int i;
    ck_assert_int_eq(jr_wqueue_of(dbpath, &s.q), APR_SUCCESS);
    s.timeout_ms = 20000;
    for (i = 0; i < 5; ++i) {
        s.entered = 0;
        ck_assert_int_eq(jr_wqueue_enter(s.q, 1000), APR_SUCCESS);
        ck_assert_int_eq(pthread_create(&t, NULL, enter_once, &s), 0);
        usleep(150000); /* the other thread is in line */
        jr_wqueue_leave(s.q);
        ck_assert_int_eq(jr_wqueue_enter(s.q, 20000), APR_SUCCESS);
        ck_assert_msg(s.entered, "round %d: the returning holder overtook the waiter", i);
        jr_wqueue_leave(s.q);
        pthread_join(t, NULL);
    }
}
END_TEST

START_TEST(the_holding_thread_is_refused_at_once)
{
    jr_wqueue_t *q;
    double start;
    ck_assert_int_eq(jr_wqueue_of(dbpath, &q), APR_SUCCESS);
    ck_assert_int_eq(jr_wqueue_enter(q, 1000), APR_SUCCESS);
    start = now_s();
    ck_assert_int_eq(jr_wqueue_enter(q, 5000), APR_EBUSY);
    ck_assert(now_s() - start < 1.0);
    jr_wqueue_leave(q);
    ck_assert_int_eq(jr_wqueue_enter(q, 1000), APR_SUCCESS);
    jr_wqueue_leave(q);
}
END_TEST

/* ---- other processes ------------------------------------------------------------------- */

/* A child that takes the lock file with flock, as another process of the module would, tells
 * the parent through the pipe, and holds it until it is killed. */
static pid_t child_holding(const char *lock_path)
{
    int p[2];
    char c;
    pid_t pid;
    ck_assert_int_eq(pipe(p), 0);
    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        int fd = open(lock_path, O_RDWR | O_CREAT, 0660);
        if (fd < 0 || flock(fd, LOCK_EX) != 0 || write(p[1], "x", 1) != 1) {
            _exit(1);
        }
        for (;;) {
            pause();
        }
    }
    close(p[1]);
    ck_assert_int_eq(read(p[0], &c, 1), 1);
    close(p[0]);
    return pid;
}

/* Waits up to secs for flag; whether it was set. */
static int wait_for(volatile int *flag, double secs)
{
    double until = now_s() + secs;
    while (!*flag && now_s() < until) {
        usleep(10000);
    }
    return *flag;
}

START_TEST(a_killed_holder_frees_the_queue)
{
    shared_t s = {0};
    pthread_t t;
    pid_t pid;
    int status;
    ck_assert_int_eq(jr_wqueue_of(dbpath, &s.q), APR_SUCCESS);
    pid = child_holding(jr_wqueue_path(s.q));
    s.timeout_ms = 1000;
    ck_assert_int_eq(pthread_create(&t, NULL, enter_once, &s), 0);
    ck_assert(!wait_for(&s.entered, 0.4)); /* it waits for the other process */
    ck_assert_int_eq(kill(pid, SIGKILL), 0);
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(wait_for(&s.entered, 10.0)); /* the kernel released the dead holder's lock */
    pthread_join(t, NULL);
    ck_assert_int_eq(s.rv, APR_SUCCESS);
}
END_TEST

/* The child process pid got in after all: it exited 0 and wrote its byte to done_fd. */
static void child_entered(pid_t pid, int done_fd, int go[2])
{
    int status;
    char c;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ck_assert_int_eq(read(done_fd, &c, 1), 1);
    close(done_fd);
    close(go[0]);
    close(go[1]);
}

/* A child forked after the parent opened the lock file must not use the inherited descriptor:
 * flock would see parent and child as one holder. (httpd forks its children from a parent
 * that holds no queue; so does this test.) */
START_TEST(a_forked_child_queues_behind_its_parent)
{
    jr_wqueue_t *q;
    int go[2], done[2];
    char c;
    pid_t pid;
    ck_assert_int_eq(jr_wqueue_of(dbpath, &q), APR_SUCCESS);
    ck_assert_int_eq(jr_wqueue_enter(q, 1000), APR_SUCCESS); /* opens the file */
    jr_wqueue_leave(q);
    ck_assert_int_eq(pipe(go), 0);
    ck_assert_int_eq(pipe(done), 0);
    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        int ok = read(go[0], &c, 1) == 1 && jr_wqueue_enter(q, 1000) == APR_SUCCESS;
        _exit(ok && write(done[1], "x", 1) == 1 ? 0 : 1);
    }
    close(done[1]);
    ck_assert_int_eq(jr_wqueue_enter(q, 1000), APR_SUCCESS);
    ck_assert_int_eq(write(go[1], "x", 1), 1);
    fcntl(done[0], F_SETFL, O_NONBLOCK);
    usleep(400000);
    errno = 0;
    ck_assert_int_eq(read(done[0], &c, 1), -1); /* still waiting behind the parent */
    ck_assert_int_eq(errno, EAGAIN);
    jr_wqueue_leave(q);
    child_entered(pid, done[0], go);
}
END_TEST

/* Enters, says so, holds the turn until told to go (s->inside set back to 0), leaves. */
static void *enter_and_hold(void *data)
{
    shared_t *s = data;
    s->rv = jr_wqueue_enter(s->q, s->timeout_ms);
    s->entered = s->rv == APR_SUCCESS;
    if (s->entered) {
        s->inside = 1;
        while (__atomic_load_n(&s->inside, __ATOMIC_SEQ_CST)) {
            usleep(5000);
        }
        jr_wqueue_leave(s->q);
    }
    return NULL;
}

/* The next thread of the holder's process takes the turn with the lock file still locked: a
 * process waiting for the file does not get in between. It gets in once the holder's process
 * has no thread in line. */
START_TEST(the_next_thread_of_the_process_keeps_the_file)
{
    shared_t s = {0};
    pthread_t t;
    int go[2], done[2], i;
    char c;
    pid_t pid;
    ck_assert_int_eq(jr_wqueue_of(dbpath, &s.q), APR_SUCCESS);
    ck_assert_int_eq(pipe(go), 0);
    ck_assert_int_eq(pipe(done), 0);
    pid = fork(); /* from a process that holds nothing, as httpd forks its children */
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        int ok = read(go[0], &c, 1) == 1 && jr_wqueue_enter(s.q, 10000) == APR_SUCCESS;
        _exit(ok && write(done[1], "x", 1) == 1 ? 0 : 1);
    }
    close(done[1]);
    ck_assert_int_eq(jr_wqueue_enter(s.q, 1000), APR_SUCCESS);
    fcntl(done[0], F_SETFL, O_NONBLOCK);
    ck_assert_int_eq(write(go[1], "x", 1), 1);
    usleep(300000); /* the other process waits for the file */
    s.timeout_ms = 10000;
    ck_assert_int_eq(pthread_create(&t, NULL, enter_and_hold, &s), 0);
    for (i = 0; i < 1000 && jr_wqueue_waiting(s.q) == 0; ++i) {
        usleep(5000); /* until this process's next thread is in line */
    }
    ck_assert_int_eq(jr_wqueue_waiting(s.q), 1);
    jr_wqueue_leave(s.q);
    ck_assert(wait_for(&s.entered, 5.0));
    usleep(300000);
    errno = 0;
    ck_assert_int_eq(read(done[0], &c, 1), -1); /* still waiting: the file was not let go */
    ck_assert_int_eq(errno, EAGAIN);
    __atomic_store_n(&s.inside, 0, __ATOMIC_SEQ_CST); /* the thread leaves, nobody in line */
    pthread_join(t, NULL);
    child_entered(pid, done[0], go);
}
END_TEST

/* ---- jr_db.c: entered before BEGIN IMMEDIATE, left on every way out ----------------------- */

static jr_db_t *open_db(apr_pool_t *p)
{
    jr_db_t *db = NULL;
    const char *err = NULL;
    int applied, version;
    ck_assert_msg(jr_db_open(&db, p, "sqlite3", dbpath, &err) == APR_SUCCESS, "open: %s",
                  err ? err : "?");
    ck_assert_msg(jr_migrate(db, p, &applied, &version, &err) == APR_SUCCESS, "migrate: %s",
                  err ? err : "?");
    ck_assert_int_eq(jr_db_prepare_all(db), APR_SUCCESS);
    return db;
}

static apr_status_t insert_branch(jr_db_t *db, const char *name)
{
    jr_rows_t *rows = NULL;
    const char *now = jr_now_iso(unit_pool);
    return jr_db_select(db, unit_pool, JR_Q_BRANCH_INSERT, &rows, JR_ARGS(name, now, now));
}

/* The branches in the file, read by a connection of SQLite's own. */
static int count_branches(void)
{
    sqlite3 *c = NULL;
    sqlite3_stmt *st = NULL;
    int n = -1;
    ck_assert_int_eq(sqlite3_open_v2(dbpath, &c, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    ck_assert_int_eq(sqlite3_prepare_v2(c, "SELECT COUNT(*) FROM branches", -1, &st, NULL),
                     SQLITE_OK);
    if (sqlite3_step(st) == SQLITE_ROW) {
        n = sqlite3_column_int(st, 0);
    }
    sqlite3_finalize(st);
    sqlite3_close(c);
    return n;
}

static const char *lock_path(void)
{
    return apr_pstrcat(unit_pool, dbpath, JR_WQUEUE_SUFFIX, NULL);
}

START_TEST(transactions_hold_the_queue_until_they_end)
{
    jr_db_t *db = open_db(unit_pool);
    jr_log_set(NULL, NULL, JR_LOG_OFF); /* the failed statement's JR01005 */
    ck_assert_int_eq(jr_db_begin(db), APR_SUCCESS);
    ck_assert(held(lock_path()));
    ck_assert_int_eq(insert_branch(db, "A"), APR_SUCCESS);
    ck_assert_int_eq(jr_db_commit(db), APR_SUCCESS);
    ck_assert(!held(lock_path()));
    /* A statement that fails half way, then the rollback. */
    ck_assert_int_eq(jr_db_begin(db), APR_SUCCESS);
    ck_assert_int_ne(insert_branch(db, "A"), APR_SUCCESS);
    ck_assert(held(lock_path()));
    jr_db_rollback(db);
    ck_assert(!held(lock_path()));
    /* The lazy transaction: reads hold nothing, the first write enters. */
    jr_db_begin_lazy(db);
    ck_assert(!held(lock_path()));
    ck_assert_int_eq(insert_branch(db, "B"), APR_SUCCESS);
    ck_assert(held(lock_path()));
    ck_assert_int_eq(jr_db_commit(db), APR_SUCCESS);
    ck_assert(!held(lock_path()));
    /* A write outside a transaction enters and leaves around itself. */
    ck_assert_int_eq(insert_branch(db, "C"), APR_SUCCESS);
    ck_assert(!held(lock_path()));
}
END_TEST

/* Pages the connection read into its cache since the last call. */
static int cache_misses(void *native)
{
    int cur = 0, hi = 0;
    sqlite3_db_status(native, SQLITE_DBSTATUS_CACHE_MISS, &cur, &hi, 1);
    return cur;
}

/* In httpd's children the write transactions of every connection of the process run on one
 * writing connection, whose page cache outlives them: after one connection's write, the
 * next connection's write reads no page again. Each connection has its own back after its
 * transaction, and once pchild goes, writes run on their own connections, which read again
 * what another connection wrote since. */
START_TEST(writes_of_a_process_run_on_one_connection)
{
    apr_pool_t *child;
    jr_db_t *a = open_db(unit_pool), *b = open_db(unit_pool);
    void *a_own = a->native, *b_own = b->native, *w;
    ck_assert_int_eq(apr_pool_create(&child, unit_pool), APR_SUCCESS);
    jr_db_sqlite_writers(child);
    ck_assert_int_eq(jr_db_begin(a), APR_SUCCESS);
    w = a->native;
    ck_assert_ptr_ne(w, a_own);
    ck_assert_ptr_ne(w, b_own);
    ck_assert_int_eq(insert_branch(a, "A"), APR_SUCCESS);
    ck_assert_int_eq(jr_db_commit(a), APR_SUCCESS);
    ck_assert_ptr_eq(a->native, a_own);
    cache_misses(w);
    jr_db_begin_lazy(b); /* entered at the first write */
    ck_assert_int_eq(insert_branch(b, "B"), APR_SUCCESS);
    ck_assert_ptr_eq(b->native, w);
    ck_assert_int_eq(jr_db_commit(b), APR_SUCCESS);
    ck_assert_int_eq(cache_misses(w), 0);
    ck_assert_ptr_eq(b->native, b_own);
    ck_assert_int_eq(insert_branch(a, "C"), APR_SUCCESS); /* alone: a transaction of its own */
    ck_assert_int_eq(cache_misses(w), 0);
    ck_assert_ptr_eq(a->native, a_own);
    ck_assert(!held(lock_path()));
    /* A failed statement and the rollback leave the writing connection usable. */
    jr_log_set(NULL, NULL, JR_LOG_OFF); /* the failed statement's JR01005 */
    ck_assert_int_eq(jr_db_begin(a), APR_SUCCESS);
    ck_assert_int_ne(insert_branch(a, "A"), APR_SUCCESS);
    jr_db_rollback(a);
    ck_assert_ptr_eq(a->native, a_own);
    ck_assert(!held(lock_path()));
    apr_pool_destroy(child);
    ck_assert_int_eq(jr_db_begin(b), APR_SUCCESS);
    ck_assert_ptr_eq(b->native, b_own);
    cache_misses(b_own);
    ck_assert_int_eq(insert_branch(b, "D"), APR_SUCCESS);
    ck_assert_int_eq(jr_db_commit(b), APR_SUCCESS);
    ck_assert_int_gt(cache_misses(b_own), 0); /* a's writes emptied its cache */
    ck_assert_int_eq(count_branches(), 4);
}
END_TEST

START_TEST(a_pool_cleanup_leaves_the_queue)
{
    apr_pool_t *req;
    jr_db_t *db;
    ck_assert_int_eq(apr_pool_create(&req, unit_pool), APR_SUCCESS);
    db = open_db(req);
    jr_log_set(NULL, NULL, JR_LOG_OFF);
    ck_assert_int_eq(jr_db_begin(db), APR_SUCCESS);
    ck_assert_int_eq(insert_branch(db, "Lost"), APR_SUCCESS);
    ck_assert(held(lock_path()));
    apr_pool_destroy(req); /* a request that ended half way */
    ck_assert(!held(lock_path()));
    db = open_db(unit_pool);
    ck_assert_int_eq(jr_db_begin(db), APR_SUCCESS);
    jr_db_rollback(db);
}
END_TEST

/* A second connection of the thread that holds the queue cannot write: busy at once, as a
 * busy BEGIN, also for a write outside a transaction. */
START_TEST(a_second_connection_of_the_holder_is_busy)
{
    jr_db_t *one = open_db(unit_pool), *two = open_db(unit_pool);
    jr_log_set(NULL, NULL, JR_LOG_OFF);
    ck_assert_int_eq(jr_db_begin(one), APR_SUCCESS);
    ck_assert_int_ne(jr_db_begin(two), APR_SUCCESS);
    ck_assert_int_eq(jr_db_error(two), JR_DB_E_BUSY);
    ck_assert_int_ne(insert_branch(two, "X"), APR_SUCCESS);
    ck_assert_int_eq(jr_db_error(two), JR_DB_E_BUSY);
    ck_assert(held(lock_path()));
    jr_db_rollback(one);
    ck_assert(!held(lock_path()));
    ck_assert_int_eq(insert_branch(two, "X"), APR_SUCCESS);
}
END_TEST

/* ---- the write generation ------------------------------------------------------------------ */

static apr_uint64_t generation_of(jr_db_t *db)
{
    apr_uint64_t gen = 0;
    ck_assert_int_eq(jr_db_generation(db, unit_pool, NULL, &gen), APR_SUCCESS);
    return gen;
}

/* Every way a write leaves the queue raises the generation, which every connection and every
 * process of the file reads; reads leave it as it is. */
START_TEST(every_write_raises_the_shared_generation)
{
    jr_db_t *one = open_db(unit_pool), *two = open_db(unit_pool);
    apr_uint64_t g = generation_of(one);
    jr_rows_t *rows;
    int status;
    pid_t pid;
    ck_assert_int_eq(jr_db_select(one, unit_pool, JR_Q_RCACHE_SNAPSHOT, &rows, JR_NOARGS),
                     APR_SUCCESS); /* a read */
    ck_assert(generation_of(two) == g);
    ck_assert_int_eq(insert_branch(one, "A"), APR_SUCCESS); /* a statement of its own */
    ck_assert(generation_of(two) == g + 1);
    ck_assert_int_eq(jr_db_begin(one), APR_SUCCESS);
    ck_assert_int_eq(insert_branch(one, "B"), APR_SUCCESS);
    ck_assert(generation_of(two) == g + 1); /* not before the commit */
    ck_assert_int_eq(jr_db_commit(one), APR_SUCCESS);
    ck_assert(generation_of(two) == g + 2);
    pid = fork(); /* another process writes; this one sees it */
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        jr_db_t *db = open_db(unit_pool);
        _exit(insert_branch(db, "C") == APR_SUCCESS ? 0 : 1);
    }
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ck_assert(generation_of(one) == g + 3);
    ck_assert_int_eq(
        access(apr_pstrcat(unit_pool, dbpath, JR_WQUEUE_GEN_SUFFIX, NULL), F_OK), 0);
}
END_TEST

/* jr_rcache_rows_*: a statement's rows, kept whole (names, values, SQL NULL, several rows),
 * are served only while the generation read before them is the current one. */
START_TEST(a_statements_rows_are_served_only_in_their_generation)
{
    static jr_config_t cfg;
    jr_ctx_t ctx;
    jr_rcache_req_t rq = {.key = "unit rows", .klen = 9};
    static const char *names[] = {"id", "name", "note"};
    static const char *one[] = {"1", "A", "x"}, *two[] = {"2", "", NULL};
    static const char **both[] = {one, two};
    jr_rows_t rows_made = {3, 2, names, both}, *rows = &rows_made, *kept = NULL;
    int i, j;
    memset(&ctx, 0, sizeof(ctx));
    cfg.response_cache = 1;
    cfg.response_cache_size = 1 << 20;
    ctx.pool = unit_pool;
    ctx.cfg = &cfg;
    ctx.db = open_db(unit_pool);
    ck_assert_int_eq(insert_branch(ctx.db, "A"), APR_SUCCESS);
    ck_assert_int_eq(jr_rcache_rows_serve(&ctx, &rq, &kept), 0);
    ck_assert(rq.keep);
    jr_rcache_rows_keep(&ctx, &rq, rows);
    ck_assert_int_eq(jr_rcache_rows_serve(&ctx, &rq, &kept), 1);
    ck_assert_int_eq(kept->nrows, rows->nrows);
    ck_assert_int_eq(kept->ncols, rows->ncols);
    for (i = 0; i < rows->ncols; ++i) {
        ck_assert_str_eq(kept->names[i], rows->names[i]);
        for (j = 0; j < rows->nrows; ++j) {
            ck_assert_pstr_eq(kept->rows[j][i], rows->rows[j][i]);
        }
    }
    ck_assert_ptr_null(kept->rows[1][2]);
    ck_assert_str_eq(kept->rows[1][1], "");
    ck_assert_int_eq(insert_branch(ctx.db, "C"), APR_SUCCESS); /* a write: a new generation */
    ck_assert_int_eq(jr_rcache_rows_serve(&ctx, &rq, &kept), 0);
    ck_assert(rq.keep);
    cfg.response_cache = 0; /* JournalResponseCache Off: neither served nor kept */
    ck_assert_int_eq(jr_rcache_rows_serve(&ctx, &rq, &kept), 0);
    ck_assert(!rq.keep);
}
END_TEST

/* A writer that cannot raise the generation does not write: its change would be invisible to
 * every cache. */
START_TEST(a_write_that_cannot_raise_the_generation_is_refused)
{
    jr_db_t *db;
    apr_uint64_t g;
    ck_assert_int_eq(mkdir(apr_pstrcat(unit_pool, dbpath, JR_WQUEUE_GEN_SUFFIX, NULL), 0700), 0);
    db = open_db(unit_pool);
    jr_log_set(NULL, NULL, JR_LOG_OFF);
    ck_assert_int_ne(jr_db_generation(db, unit_pool, NULL, &g), APR_SUCCESS);
    ck_assert_int_ne(insert_branch(db, "A"), APR_SUCCESS);
    ck_assert_int_ne(jr_db_begin(db), APR_SUCCESS);
    ck_assert(!held(lock_path()));
    ck_assert_int_eq(count_branches(), 0);
}
END_TEST

/* ---- WAL checkpoints: never while the queue is held ------------------------------------------ */

/* The default VFS with the database file's xSync watched. A checkpoint copies the WAL into the
 * database file and syncs it; a commit (WAL, synchronous = NORMAL) never syncs that file. (A
 * commit that starts the WAL over syncs the WAL's new header, inside the queue: SQLite needs
 * it there, and it is one sync per 1,000 frames.) */
static sqlite3_vfs watch_vfs, *real_vfs;
static const sqlite3_io_methods *real_io;
static sqlite3_io_methods watch_io;
static int watching, syncs, syncs_held;

static int watch_sync(sqlite3_file *f, int flags)
{
    if (watching) {
        ++syncs;
        syncs_held += held(lock_path());
    }
    return real_io->xSync(f, flags);
}

static int watch_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags, int *out)
{
    int rc = real_vfs->xOpen(real_vfs, name, f, flags, out);
    (void)vfs;
    if (rc == SQLITE_OK && f->pMethods && (flags & SQLITE_OPEN_MAIN_DB) && name &&
        strcmp(name, dbpath) == 0) {
        ck_assert(!real_io || real_io == f->pMethods);
        real_io = f->pMethods;
        watch_io = *real_io;
        watch_io.xSync = watch_sync;
        f->pMethods = &watch_io;
    }
    return rc;
}

START_TEST(checkpoints_run_after_the_queue_is_left)
{
    jr_db_t *db;
    char *name = apr_palloc(unit_pool, 8001);
    int i, n;
    real_vfs = sqlite3_vfs_find(NULL);
    watch_vfs = *real_vfs;
    watch_vfs.zName = "jr-watch";
    watch_vfs.xOpen = watch_open;
    ck_assert_int_eq(sqlite3_vfs_register(&watch_vfs, 1), SQLITE_OK);
    db = open_db(unit_pool);
    syncs = syncs_held = 0;
    watching = 1;
    /* Each branch with an 8 KB name is a few pages: SQLite's threshold of 1,000 WAL frames
     * is passed several times. */
    for (i = 0; i < 400; ++i) {
        memset(name, 'a', 8000);
        apr_snprintf(name, 8001, "%05d", i);
        name[5] = ' ';
        name[8000] = '\0';
        ck_assert_int_eq(jr_db_begin(db), APR_SUCCESS);
        ck_assert_int_eq(insert_branch(db, name), APR_SUCCESS);
        ck_assert_int_eq(jr_db_commit(db), APR_SUCCESS);
    }
    n = syncs; /* before the close, whose own checkpoint would count */
    watching = 0;
    jr_db_close(db);
    sqlite3_vfs_unregister(&watch_vfs);
    ck_assert_msg(n > 0, "no checkpoint ran");
    ck_assert_msg(syncs_held == 0, "%d of %d syncs ran inside the write queue", syncs_held, n);
    ck_assert_int_eq(count_branches(), 400);
}
END_TEST

/* Writers in threads, each through its connection: the next writer begins while the one
 * before checkpoints outside the queue, so only a checkpoint inside it lets the WAL start
 * over. */
static void *branch_writer(void *data)
{
    apr_pool_t *p;
    jr_db_t *db = NULL;
    const char *err = NULL, *now;
    char *name;
    int i, failed = 0;
    ck_assert_int_eq(apr_pool_create_unmanaged_ex(&p, NULL, NULL), APR_SUCCESS);
    ck_assert_int_eq(jr_db_open(&db, p, "sqlite3", dbpath, &err), APR_SUCCESS);
    ck_assert_int_eq(jr_db_prepare_all(db), APR_SUCCESS);
    name = apr_palloc(p, 8001);
    now = jr_now_iso(p);
    for (i = 0; i < 250; ++i) {
        jr_rows_t *rows = NULL;
        memset(name, 'b', 8000);
        apr_snprintf(name, 8001, "%s-%04d", (const char *)data, i);
        name[strlen(name)] = ' ';
        name[8000] = '\0';
        failed |= jr_db_begin(db) != APR_SUCCESS ||
                  jr_db_select(db, p, JR_Q_BRANCH_INSERT, &rows, JR_ARGS(name, now, now)) !=
                      APR_SUCCESS ||
                  jr_db_commit(db) != APR_SUCCESS;
    }
    jr_db_close(db);
    apr_pool_destroy(p);
    return failed ? (void *)"a write failed" : NULL;
}

/* Four branch writers of 250 branches each, 1,000 in all; then, the WAL's size. The WAL file
 * keeps the size it reached (SQLite writes it over from the start). 1,000 branches of 8 KB are
 * some 4,000 frames; the WAL may hold twice the threshold and a few transactions more. */
static void write_branches_in_four_threads(void)
{
    static const char *names[] = {"t1", "t2", "t3", "t4"};
    pthread_t t[4];
    struct stat st;
    void *failed;
    int i;
    for (i = 0; i < 4; ++i) {
        ck_assert_int_eq(pthread_create(&t[i], NULL, branch_writer, (void *)names[i]), 0);
    }
    for (i = 0; i < 4; ++i) {
        ck_assert_int_eq(pthread_join(t[i], &failed), 0);
        ck_assert_msg(!failed, "%s", (const char *)failed);
    }
    ck_assert_int_eq(count_branches(), 1000);
    ck_assert_int_eq(stat(apr_pstrcat(unit_pool, dbpath, "-wal", NULL), &st), 0);
    ck_assert_int_lt(st.st_size, 2600 * (4096 + 24));
}

START_TEST(the_wal_stays_bounded_under_concurrent_writers)
{
    jr_db_t *db = open_db(unit_pool);
    write_branches_in_four_threads();
    jr_db_close(db);
}
END_TEST

/* Readers that overlap, so that one is always at work: each reads in a transaction of a few
 * milliseconds, as a list under load does, until the writers are done. */
static volatile int readers_go;

static void *overlapping_reader(void *data)
{
    sqlite3 *conn = NULL;
    int failed = 0;
    (void)data;
    ck_assert_int_eq(sqlite3_open_v2(dbpath, &conn, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    sqlite3_busy_timeout(conn, 2000);
    while (__atomic_load_n(&readers_go, __ATOMIC_ACQUIRE)) {
        failed |= sqlite3_exec(conn, "BEGIN; SELECT count(*) FROM branches;", NULL, NULL,
                               NULL) != SQLITE_OK;
        usleep(3000);
        failed |= sqlite3_exec(conn, "COMMIT", NULL, NULL, NULL) != SQLITE_OK;
    }
    sqlite3_close(conn);
    return failed ? (void *)"a read failed" : NULL;
}

START_TEST(the_wal_stays_bounded_under_readers_that_never_pause)
{
    pthread_t r[3];
    void *failed;
    jr_db_t *db = open_db(unit_pool);
    int i;
    __atomic_store_n(&readers_go, 1, __ATOMIC_RELEASE);
    for (i = 0; i < 3; ++i) {
        ck_assert_int_eq(pthread_create(&r[i], NULL, overlapping_reader, NULL), 0);
        usleep(1000);
    }
    /* Without the restart inside the queue, the WAL held all of the writes' 4,000-odd
     * frames: no writer ever began with no reader at work. */
    write_branches_in_four_threads();
    __atomic_store_n(&readers_go, 0, __ATOMIC_RELEASE);
    for (i = 0; i < 3; ++i) {
        ck_assert_int_eq(pthread_join(r[i], &failed), 0);
        ck_assert_msg(!failed, "%s", (const char *)failed);
    }
    jr_db_close(db);
}
END_TEST

Suite *suite_wqueue(void)
{
    Suite *s = suite_create("wqueue");
    TCase *tc = tcase_create("wqueue");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, lock_file_next_to_the_database);
    tcase_add_test(tc, the_backlog_is_taken_whole_by_one_thread_at_a_time);
    tcase_add_test(tc, threads_queue_one_at_a_time);
    tcase_add_test(tc, a_waiting_thread_gives_up_after_its_timeout);
    tcase_add_test(tc, threads_enter_in_the_order_they_came);
    tcase_add_test(tc, a_returning_holder_does_not_overtake_a_waiter);
    tcase_add_test(tc, the_holding_thread_is_refused_at_once);
    tcase_add_test(tc, a_killed_holder_frees_the_queue);
    tcase_add_test(tc, a_forked_child_queues_behind_its_parent);
    tcase_add_test(tc, the_next_thread_of_the_process_keeps_the_file);
    tcase_add_test(tc, transactions_hold_the_queue_until_they_end);
    tcase_add_test(tc, a_pool_cleanup_leaves_the_queue);
    tcase_add_test(tc, writes_of_a_process_run_on_one_connection);
    tcase_add_test(tc, a_second_connection_of_the_holder_is_busy);
    tcase_add_test(tc, every_write_raises_the_shared_generation);
    tcase_add_test(tc, a_write_that_cannot_raise_the_generation_is_refused);
    tcase_add_test(tc, a_statements_rows_are_served_only_in_their_generation);
    tcase_add_test(tc, checkpoints_run_after_the_queue_is_left);
    tcase_add_test(tc, the_wal_stays_bounded_under_concurrent_writers);
    tcase_add_test(tc, the_wal_stays_bounded_under_readers_that_never_pause);
    suite_add_tcase(s, tc);
    return s;
}
