/* Counters shared by every child and thread: per-key request rates over a rolling minute and
 * per-IP failure counts. Behind a small function table so another store (Redis) can serve a
 * cluster; jr_shmcounters_* implements it over a shared memory region given by the host. */
#ifndef JR_COUNTERS_H
#define JR_COUNTERS_H

#include <apr_pools.h>
#include <apr_time.h>

#define JR_RATE_WINDOW 60 /* seconds: the rolling minute */

typedef struct {
    int allowed;   /* 1 when this request fits in the window (and was counted) */
    int limit;
    int remaining; /* after this request */
    int reset;     /* seconds until the oldest counted request leaves the window */
    int touch;     /* 1 at most once a minute per key: time to record last use */
} jr_rate_t;

typedef struct jr_counters jr_counters_t;

typedef struct {
    /* Counts one request of key_id against limit per rolling minute. */
    apr_status_t (*rate_hit)(jr_counters_t *c, long long key_id, int limit, apr_time_t now,
                             jr_rate_t *out);
    /* Adds one failure of a kind ("apikey", "login") for ip; *count: failures in the window. */
    apr_status_t (*fail_add)(jr_counters_t *c, const char *kind, const char *ip, int window,
                             apr_time_t now, int *count);
    /* Forgets the failures of ip (all kinds), e.g. when an admin lifts its ban. */
    apr_status_t (*fail_clear)(jr_counters_t *c, const char *ip);
} jr_counters_ops_t;

struct jr_counters {
    const jr_counters_ops_t *ops;
    void *impl;
};

/* Shared-memory store. Sizes are fixed at startup; a full table degrades to "allowed" with a
 * logged warning rather than refusing service. */
#define JR_SHM_KEY_SLOTS 8192
#define JR_SHM_IP_SLOTS 4096
size_t jr_shmcounters_size(void);
/* init: 1 in the process that creates the region (zeroes it), 0 to attach. */
jr_counters_t *jr_shmcounters_attach(apr_pool_t *p, void *base, size_t size, int init);

#endif
