/* Counters shared by every child and thread: per-key request rates over a rolling minute,
 * failure counts per client address and the login throttle per account. Behind a small
 * function table so another store (Redis) can serve a cluster; jr_shmcounters_* implements it
 * over a shared memory region given by the host. */
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

/* The login throttle of one account (see login_attempt). */
typedef struct {
    int threshold;   /* attempts within window that start a throttle period */
    int window;      /* seconds */
    int first;       /* length of the first period, seconds */
    int max_backoff; /* periods double up to this length, seconds */
} jr_throttle_cfg_t;

typedef struct {
    int refused;     /* 1: inside a throttle period; answer without checking the password */
    int retry_after; /* when refused: seconds until the period ends (at least 1) */
    int attempts;    /* attempts within the window, this one included (when not refused) */
    int period;      /* this attempt started a throttle period of so many seconds, else 0 */
} jr_throttle_t;

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
    /* Reserves one login attempt for account (the lower-cased user name) from source (the
     * client's ban subject). Inside a throttle period the attempt is refused, unless source
     * logged in to account before: such a source passes one attempt, and a success gives the
     * pass back. Otherwise the attempt counts as a failure until login_ok clears it, so
     * concurrent attempts cannot overrun the threshold; reaching the threshold starts a
     * period, and each period started within the window after the previous one ended lasts
     * twice as long, up to max_backoff. */
    apr_status_t (*login_attempt)(jr_counters_t *c, const char *account, const char *source,
                                  const jr_throttle_cfg_t *cfg, apr_time_t now,
                                  jr_throttle_t *out);
    /* A successful login: forgets the account's attempts and back-off, remembers source. */
    apr_status_t (*login_ok)(jr_counters_t *c, const char *account, const char *source,
                             apr_time_t now);
} jr_counters_ops_t;

struct jr_counters {
    const jr_counters_ops_t *ops;
    void *impl;
};

/* Shared-memory store: three tables (API keys, client addresses, accounts) of the same
 * number of slots, fixed at startup. When a table is full, the least valuable slot of the
 * probed ones is taken over (logged at most once a minute per table); nothing is ever
 * left uncounted. */
#define JR_SHM_DEFAULT_SLOTS 4096
#define JR_SHM_MIN_SLOTS 64
#define JR_SHM_MAX_SLOTS 1048576
size_t jr_shmcounters_size(unsigned slots);
/* init: 1 in the process that creates the region (zeroes it, draws the hash secret), 0 to
 * attach to an existing one; NULL when the region does not hold a store of this version and
 * size, or slots is out of range. */
jr_counters_t *jr_shmcounters_attach(apr_pool_t *p, void *base, size_t size, unsigned slots,
                                     int init);

#endif
