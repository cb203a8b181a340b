/* The write queue of an SQLite database: one lock per database file, shared by every process
 * that writes through this code (httpd's children, journal-worker, journal-admin) and by the
 * threads of each, taken before BEGIN IMMEDIATE and released after COMMIT or ROLLBACK.
 * Waiting writers sleep in the kernel and wake when the holder releases, instead of polling
 * in SQLite's busy handler (docs/architecture.md §7.4). */
#ifndef JR_WQUEUE_H
#define JR_WQUEUE_H

#include <apr_errno.h>

typedef struct jr_wqueue jr_wqueue_t;

/* The suffix of the lock file, next to the database: "<database>-wq". */
#define JR_WQUEUE_SUFFIX "-wq"

/* The queue of the database file db_path (an absolute path, as SQLite reports it), made on
 * first use and kept for the life of the process. APR_ENOSPC when more files than the table
 * holds are in use. */
apr_status_t jr_wqueue_of(const char *db_path, jr_wqueue_t **out);

/* Takes the lock: first the process's own mutex (the threads' queue, waited for at most
 * timeout_ms: APR_TIMEUP), then the lock file (flock: the processes' queue). APR_EBUSY at once
 * when this thread holds it already (through another connection: waiting could never end).
 * Another error: the lock file could not be opened or locked. */
apr_status_t jr_wqueue_enter(jr_wqueue_t *q, int timeout_ms);

/* Releases what jr_wqueue_enter took (the lock file, then the mutex). */
void jr_wqueue_leave(jr_wqueue_t *q);

/* The lock file's path (for messages and tests). */
const char *jr_wqueue_path(const jr_wqueue_t *q);

#endif
