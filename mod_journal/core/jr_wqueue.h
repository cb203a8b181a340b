/* The write queue of an SQLite database: one lock per database file, shared by every process
 * that writes through this code (httpd's children, journal-worker, journal-admin) and by the
 * threads of each, taken before BEGIN IMMEDIATE and released after COMMIT or ROLLBACK.
 * Waiting writers sleep in the kernel and wake when the holder releases, instead of polling
 * in SQLite's busy handler (docs/architecture.md §7.4). */
#ifndef JR_WQUEUE_H
#define JR_WQUEUE_H

#include <apr_errno.h>
#include <apr_general.h>

typedef struct jr_wqueue jr_wqueue_t;

/* The suffix of the lock file, next to the database: "<database>-wq". */
#define JR_WQUEUE_SUFFIX "-wq"

/* The suffix of the write generation's file, next to the database: "<database>-gen". It holds
 * one 64-bit counter, mapped shared by every process that reads or writes the database, and
 * raised by every writer before it leaves the queue: whoever reads it, then the database,
 * knows whether anything was written since it last read it (jr_rcache.h). */
#define JR_WQUEUE_GEN_SUFFIX "-gen"

/* The queue of the database file db_path (an absolute path, as SQLite reports it), made on
 * first use and kept for the life of the process. APR_ENOSPC when more files than the table
 * holds are in use. */
apr_status_t jr_wqueue_of(const char *db_path, jr_wqueue_t **out);

/* Takes the lock: first the process's own mutex (the threads' queue, waited for at most
 * timeout_ms: APR_TIMEUP), then the lock file (flock: the processes' queue). APR_EBUSY at once
 * when this thread holds it already (through another connection: waiting could never end).
 * Another error: the lock file could not be opened or locked, or the generation file could
 * not be mapped for writing (a write nobody could see is refused). */
apr_status_t jr_wqueue_enter(jr_wqueue_t *q, int timeout_ms);

/* Releases what jr_wqueue_enter took, raising the write generation first: the writer's answer
 * leaves after every process can see it. The next thread of this process in line takes the
 * turn with the lock file still locked, eight times in a row at most; then, or when no thread
 * of the process waits, the lock file is unlocked for the other processes. */
void jr_wqueue_leave(jr_wqueue_t *q);

/* The database's write generation, as it is now. Maps the generation file on first use (made
 * when missing). An error when it cannot be mapped: the caller cannot know whether anything
 * changed. */
apr_status_t jr_wqueue_generation(jr_wqueue_t *q, apr_uint64_t *gen);

/* Work that writers of this process left for a later pass over the file (the entries that
 * the search index does not hold yet, jr_db_sqlite.c): a count per file and per process.
 * _add adds n; _take returns the whole count and sets it to 0 when it is min or more, else
 * returns 0 and leaves it, so one thread of those that reach min takes it. */
void jr_wqueue_backlog_add(jr_wqueue_t *q, apr_uint32_t n);
apr_uint32_t jr_wqueue_backlog_take(jr_wqueue_t *q, apr_uint32_t min);

/* The threads of this process waiting in line for the queue (for tests). */
int jr_wqueue_waiting(jr_wqueue_t *q);

/* The lock file's path (for messages and tests). */
const char *jr_wqueue_path(const jr_wqueue_t *q);

#endif
