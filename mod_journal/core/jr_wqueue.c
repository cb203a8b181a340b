/* The write queue of an SQLite database (jr_wqueue.h). Why a lock file with flock and not a
 * process-shared mutex: docs/architecture.md §7.4. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "jr_wqueue.h"

/* A thread waiting for the queue: the lock is handed to the first waiter on release, so the
 * threads of a process enter in the order they came (a plain mutex lets a newcomer overtake
 * a woken waiter, and the unlucky one waits on). */
typedef struct waiter {
    struct waiter *next;
    pthread_cond_t cond;
    int granted;
} waiter_t;

struct jr_wqueue {
    char *db_path;
    char *lock_path;
    pthread_mutex_t mu; /* guards held and the waiters; never held while waiting for the file */
    int held;           /* a thread of this process holds the queue (or waits for the file) */
    waiter_t *head, *tail;
    int fd;             /* the lock file, opened by the process in pid; -1 before */
    pid_t pid;
    /* The process whose thread holds the turn holds the lock file too (0: no process does),
     * and how many turns it has handed on with the file kept locked. Both are changed only
     * by the turn's holder. */
    pid_t file_holder;
    int streak;
    char *gen_path;
    /* The generation file's counter, mapped shared (a mapping survives fork and stays shared);
     * NULL before. gen_writable: mapped for writing. Set once under gen_mu, read without it. */
    apr_uint64_t *gen;
    int gen_writable;
    apr_uint32_t backlog; /* jr_wqueue_backlog_add(); atomic */
};

/* Turns a process hands on to its own threads before it lets the lock file go. Consecutive
 * writes of one process find its writing connection's page cache as they left it; a write of
 * another process in between empties it (jr_db_sqlite.c, docs/architecture.md §7.26). */
#define JR_WQUEUE_STREAK 8

/* As many files as jr_db_sqlite_preconfigure registers, and a few the tools open. Entries are
 * only added, and live as long as the process. */
#define JR_WQUEUE_MAX 32
static jr_wqueue_t queues[JR_WQUEUE_MAX];
static int nqueues;
static pthread_mutex_t table_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t gen_mu = PTHREAD_MUTEX_INITIALIZER;

/* The queue this thread holds: a second connection of the same thread must not wait for it. */
static _Thread_local jr_wqueue_t *held_here;

static char *path_with(const char *db_path, size_t n, const char *suffix)
{
    size_t k = strlen(suffix) + 1;
    char *s = malloc(n + k);
    if (s) {
        memcpy(s, db_path, n);
        memcpy(s + n, suffix, k);
    }
    return s;
}

static apr_status_t queue_add(const char *db_path, jr_wqueue_t **out)
{
    jr_wqueue_t *q = &queues[nqueues];
    size_t n = strlen(db_path);
    if (nqueues == JR_WQUEUE_MAX) {
        return APR_ENOSPC;
    }
    q->db_path = path_with(db_path, n, "");
    q->lock_path = path_with(db_path, n, JR_WQUEUE_SUFFIX);
    q->gen_path = path_with(db_path, n, JR_WQUEUE_GEN_SUFFIX);
    if (!q->db_path || !q->lock_path || !q->gen_path || pthread_mutex_init(&q->mu, NULL) != 0) {
        free(q->db_path);
        free(q->lock_path);
        free(q->gen_path);
        q->db_path = q->lock_path = q->gen_path = NULL;
        return APR_ENOMEM;
    }
    q->fd = -1;
    ++nqueues;
    *out = q;
    return APR_SUCCESS;
}

apr_status_t jr_wqueue_of(const char *db_path, jr_wqueue_t **out)
{
    apr_status_t rv = APR_SUCCESS;
    int i;
    *out = NULL;
    pthread_mutex_lock(&table_mu);
    for (i = 0; i < nqueues && !*out; ++i) {
        if (strcmp(queues[i].db_path, db_path) == 0) {
            *out = &queues[i];
        }
    }
    if (!*out) {
        rv = queue_add(db_path, out);
    }
    pthread_mutex_unlock(&table_mu);
    return rv;
}

/* The lock file of this process, opened once. A descriptor inherited through fork is not
 * used: flock belongs to the open file description, which parent and child would share, so
 * both would hold the lock at once. Owner-only, like the database: whoever can open the file
 * can lock it and stop every writer. Read-only is enough for flock, and lets a process that
 * may read but not write the file still queue. */
static apr_status_t open_file(jr_wqueue_t *q)
{
    pid_t pid = getpid();
    if (q->fd >= 0 && q->pid == pid) {
        return APR_SUCCESS;
    }
    if (q->fd >= 0) {
        close(q->fd);
    }
    q->fd = open(q->lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (q->fd < 0 && errno == EACCES) {
        q->fd = open(q->lock_path, O_RDONLY | O_CLOEXEC);
    }
    if (q->fd < 0) {
        return APR_FROM_OS_ERROR(errno);
    }
    q->pid = pid;
    return APR_SUCCESS;
}

/* Maps the generation file (for writing when writable, which a writer needs; a reader takes a
 * read-only mapping when that is all it may have). The file is made owner-only like the
 * lock file, and grown to the counter's size by the first process that may write it. A
 * mapping is never unmapped (a reader may hold its address), so one made read-only and then
 * needed for writing stays as a page of the process. */
static apr_status_t map_gen(jr_wqueue_t *q, int writable)
{
    struct stat st;
    void *m;
    int fd = open(q->gen_path, O_RDWR | O_CREAT | O_CLOEXEC, 0600), w = fd >= 0;
    if (fd < 0 && errno == EACCES && !writable) {
        fd = open(q->gen_path, O_RDONLY | O_CLOEXEC);
    }
    if (fd < 0) {
        return APR_FROM_OS_ERROR(errno);
    }
    if (fstat(fd, &st) != 0 ||
        (st.st_size < (off_t)sizeof(apr_uint64_t) &&
         (!w || ftruncate(fd, sizeof(apr_uint64_t)) != 0))) {
        apr_status_t rv = errno ? APR_FROM_OS_ERROR(errno) : APR_EGENERAL;
        close(fd);
        return rv;
    }
    m = mmap(NULL, sizeof(apr_uint64_t), PROT_READ | (w ? PROT_WRITE : 0), MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED) {
        return APR_FROM_OS_ERROR(errno);
    }
    __atomic_store_n(&q->gen_writable, w, __ATOMIC_RELAXED);
    __atomic_store_n(&q->gen, (apr_uint64_t *)m, __ATOMIC_RELEASE);
    return APR_SUCCESS;
}

static apr_status_t gen_ready(jr_wqueue_t *q, int writable)
{
    apr_status_t rv = APR_SUCCESS;
    if (__atomic_load_n(&q->gen, __ATOMIC_ACQUIRE) &&
        (!writable || __atomic_load_n(&q->gen_writable, __ATOMIC_RELAXED))) {
        return APR_SUCCESS;
    }
    pthread_mutex_lock(&gen_mu);
    if (!q->gen || (writable && !q->gen_writable)) {
        errno = 0;
        rv = map_gen(q, writable);
    }
    pthread_mutex_unlock(&gen_mu);
    return rv;
}

apr_status_t jr_wqueue_generation(jr_wqueue_t *q, apr_uint64_t *gen)
{
    apr_status_t rv = gen_ready(q, 0);
    /* Acquire: whatever the writer committed before raising it is visible to the reads that
     * follow (the database's own locks order them too; this keeps the counter honest). */
    *gen = rv == APR_SUCCESS ? __atomic_load_n(q->gen, __ATOMIC_ACQUIRE) : 0;
    return rv;
}

/* Gives up a place in the line (a timeout): unlinks w. */
static void unlink_waiter(jr_wqueue_t *q, waiter_t *w)
{
    waiter_t **pp = &q->head, *prev = NULL;
    while (*pp && *pp != w) {
        prev = *pp;
        pp = &(*pp)->next;
    }
    if (*pp) {
        *pp = w->next;
        if (q->tail == w) {
            q->tail = prev;
        }
    }
}

/* The threads' line: first come, first served, each waiting at most timeout_ms. */
static apr_status_t take_turn(jr_wqueue_t *q, int timeout_ms)
{
    struct timespec until;
    waiter_t w = {NULL, PTHREAD_COND_INITIALIZER, 0};
    int rc = 0;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += timeout_ms / 1000;
    until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec += 1;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&q->mu);
    if (!q->held) {
        q->held = 1;
        pthread_mutex_unlock(&q->mu);
        return APR_SUCCESS;
    }
    if (q->tail) {
        q->tail->next = &w;
    } else {
        q->head = &w;
    }
    q->tail = &w;
    while (!w.granted && rc != ETIMEDOUT) {
        rc = pthread_cond_timedwait(&w.cond, &q->mu, &until);
    }
    if (!w.granted) {
        unlink_waiter(q, &w);
    }
    pthread_mutex_unlock(&q->mu);
    pthread_cond_destroy(&w.cond);
    return w.granted ? APR_SUCCESS : APR_TIMEUP;
}

/* Hands the queue to the first waiter, or frees it; under q->mu. */
static void hand_on(jr_wqueue_t *q)
{
    waiter_t *w;
    if ((w = q->head) != NULL) {
        q->head = w->next;
        if (!q->head) {
            q->tail = NULL;
        }
        w->granted = 1; /* held stays 1: it is w's now */
        pthread_cond_signal(&w->cond);
    } else {
        q->held = 0;
    }
}

static void pass_turn(jr_wqueue_t *q)
{
    pthread_mutex_lock(&q->mu);
    hand_on(q);
    pthread_mutex_unlock(&q->mu);
}

apr_status_t jr_wqueue_enter(jr_wqueue_t *q, int timeout_ms)
{
    apr_status_t rv;
    int rc;
    if (held_here == q) {
        return APR_EBUSY;
    }
    if ((rv = take_turn(q, timeout_ms)) != APR_SUCCESS) {
        return rv;
    }
    /* Handed the turn with the file still locked (jr_wqueue_leave): nothing to wait for. */
    if (q->file_holder == getpid()) {
        held_here = q;
        return APR_SUCCESS;
    }
    /* Only the turn's holder gets here, so one thread per process waits for the file; the
     * kernel wakes it when the holder unlocks or dies. */
    if ((rv = open_file(q)) == APR_SUCCESS && (rv = gen_ready(q, 1)) == APR_SUCCESS) {
        while ((rc = flock(q->fd, LOCK_EX)) != 0 && errno == EINTR) {
        }
        rv = rc == 0 ? APR_SUCCESS : APR_FROM_OS_ERROR(errno);
    }
    if (rv == APR_SUCCESS) {
        q->file_holder = getpid();
        q->streak = 0;
    }
    if (rv != APR_SUCCESS) {
        pass_turn(q);
        return rv;
    }
    held_here = q;
    return APR_SUCCESS;
}

void jr_wqueue_leave(jr_wqueue_t *q)
{
    /* Raised after COMMIT (or ROLLBACK: a needless raise costs readers one miss) and before
     * the lock goes: the next writer's raise cannot come first, and the writer answers its
     * client only after this, so a client reads its own write. */
    __atomic_add_fetch(q->gen, 1, __ATOMIC_RELEASE);
    if (held_here == q) {
        held_here = NULL;
    }
    /* A thread of this process waiting next takes the turn with the file still locked: no
     * unlock and lock again, no race with the other processes' waiter for it. At most
     * JR_WQUEUE_STREAK times in a row; then the file goes to whichever process the kernel
     * wakes, so another process waits a few transactions more at most. Decided and handed
     * on under the mutex: a waiter cannot time out in between and leave the file locked
     * with nobody holding the turn. */
    pthread_mutex_lock(&q->mu);
    if (q->head && q->streak < JR_WQUEUE_STREAK) {
        ++q->streak;
    } else {
        q->file_holder = 0;
        flock(q->fd, LOCK_UN);
    }
    hand_on(q);
    pthread_mutex_unlock(&q->mu);
}

int jr_wqueue_waiting(jr_wqueue_t *q)
{
    waiter_t *w;
    int n = 0;
    pthread_mutex_lock(&q->mu);
    for (w = q->head; w; w = w->next) {
        ++n;
    }
    pthread_mutex_unlock(&q->mu);
    return n;
}

void jr_wqueue_backlog_add(jr_wqueue_t *q, apr_uint32_t n)
{
    __atomic_add_fetch(&q->backlog, n, __ATOMIC_RELAXED);
}

apr_uint32_t jr_wqueue_backlog_take(jr_wqueue_t *q, apr_uint32_t min)
{
    apr_uint32_t n = __atomic_load_n(&q->backlog, __ATOMIC_RELAXED);
    while (n >= min && !__atomic_compare_exchange_n(&q->backlog, &n, 0, 0, __ATOMIC_RELAXED,
                                                    __ATOMIC_RELAXED)) {
    }
    return n >= min ? n : 0;
}

const char *jr_wqueue_path(const jr_wqueue_t *q)
{
    return q->lock_path;
}
