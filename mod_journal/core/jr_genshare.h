/* One read of the database's write generation shared by the threads of a process that ask at
 * the same time (PostgreSQL, where each read is a round trip: jr_db_generation).
 *
 * A thread that asks needs a snapshot taken after it asked, never an older one (the response
 * cache's rule, jr_rcache.h). So it waits for the next read that starts after it asked, and
 * when none is on its way it makes that read itself, on its own connection; every thread that
 * asked before that read started takes its answer. Under load one statement answers all the
 * requests of a process that arrived while the one before was on its way.
 * docs/architecture.md §7.30. */
#ifndef JR_GENSHARE_H
#define JR_GENSHARE_H

#include <apr_pools.h>
#include <apr_time.h>

#include "jr_db_types.h"

typedef struct jr_genshare jr_genshare_t;

/* Reads the generation now, on db (a statement): what a shared read runs. */
typedef apr_status_t jr_genshare_fetch_fn(jr_db_t *db, apr_pool_t *p, apr_uint64_t *gen);

/* How long reads answer APR_EAGAIN without a statement after a read that found writes going
 * on (jr_genshare_read). */
#define JR_GENSHARE_HOLD apr_time_from_msec(10)

/* A sharer for one database, in p (made where the process's threads start), with holds of
 * hold (JR_GENSHARE_HOLD). NULL when memory is short. */
jr_genshare_t *jr_genshare_create(apr_pool_t *p, apr_interval_time_t hold);

/* The generation from a read that started after this call began: fetch's status and *gen.
 * The thread that makes the read runs fetch on db, with p; the others wait for it.
 * For the hold after a read that found a write running (the generation then says nothing:
 * jr_db.h), or a new generation while other threads were asking too, reads answer APR_EAGAIN
 * at once: under writes a request does not wait for an answer that would not let it use what
 * is kept. The requests of one client, one after another, are never held back by a new
 * generation. */
apr_status_t jr_genshare_read(jr_genshare_t *g, jr_db_t *db, apr_pool_t *p,
                              jr_genshare_fetch_fn *fetch, apr_uint64_t *gen);

/* For the unit tests: the reads made since the sharer was created, and the threads waiting for
 * another's read now. */
void jr_genshare_counts(jr_genshare_t *g, apr_uint64_t *reads, int *waiting);

#endif
