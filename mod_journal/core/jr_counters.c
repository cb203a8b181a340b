/* The shared-memory counter store. Each slot has its own spinlock word; the critical
 * sections are a few dozen instructions, so there is no global lock on the hot path.
 *
 * Every table is open addressing over a keyed hash (SipHash-2-4 with a secret drawn when the
 * region is created), so nobody can choose names or addresses that crowd one probe sequence.
 * A full table never stops counting: the least valuable of the probed slots is taken over
 * (see the claim functions), and a warning is logged at most once a minute per table. */
#include <sched.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>

#include "jr_counters.h"
#include "jr_crypt.h"
#include "jr_log.h"

#define MAGIC 0x4A524332u /* "JRC2": the layout below */
#define PROBES 64
#define FAIL_BUCKETS 30
#define KNOWN_SOURCES 4              /* per account: addresses that logged in to it */
#define KNOWN_TTL (30 * 86400)       /* ... remembered for a month at most */
#define IP_IDLE_REUSE 86400          /* an address slot idle this long is free */
#define LOG_EVERY 60                 /* seconds between two "table full" lines */
#define ALIGN8(n) (((n) + 7u) & ~(size_t)7u)

enum { T_KEYS, T_IPS, T_ACCTS, T_COUNT };

typedef struct {
    uint32_t magic, slots;
    uint64_t secret[2];
    uint32_t logged_at[T_COUNT]; /* last "table full" line of each table */
    uint32_t evicted[T_COUNT];   /* slots taken over since that line */
} shm_header_t;

/* Failures over a sliding window: FAIL_BUCKETS buckets of window / FAIL_BUCKETS seconds. */
typedef struct {
    uint32_t width;
    uint32_t start[FAIL_BUCKETS];
    uint32_t cnt[FAIL_BUCKETS];
} window_t;

typedef struct {
    uint32_t lock, pad;
    int64_t key_id; /* 0: free */
    uint32_t sec[JR_RATE_WINDOW];
    uint32_t cnt[JR_RATE_WINDOW];
    uint32_t last_touch;
    uint32_t last_seen;
} key_slot_t;

typedef struct {
    uint32_t lock;
    uint32_t used;
    uint32_t last_seen;
    char id[64]; /* kind + " " + ip */
    window_t w;
} ip_slot_t;

typedef struct {
    uint32_t lock;
    uint32_t used;
    uint64_t key; /* keyed hash of the account name: the name itself is never stored */
    uint32_t last_seen;
    uint32_t until; /* end of the current or the last throttle period; 0: none */
    uint32_t level; /* periods in a row: the next one lasts first << level */
    uint32_t known[KNOWN_SOURCES], known_at[KNOWN_SOURCES]; /* hashed sources, 0: none */
    window_t w;
} acct_slot_t;

typedef struct {
    shm_header_t *hdr;
    key_slot_t *keys;
    ip_slot_t *ips;
    acct_slot_t *accts;
} shm_store_t;

/* Slots per table: the configured number, rounded up to a power of two. */
static unsigned table_slots(unsigned slots)
{
    unsigned n = JR_SHM_MIN_SLOTS;
    while (n < slots && n < JR_SHM_MAX_SLOTS) {
        n *= 2;
    }
    return n;
}

static size_t keys_offset(void)
{
    return ALIGN8(sizeof(shm_header_t));
}

static size_t ips_offset(unsigned slots)
{
    return keys_offset() + ALIGN8(sizeof(key_slot_t) * slots);
}

static size_t accts_offset(unsigned slots)
{
    return ips_offset(slots) + ALIGN8(sizeof(ip_slot_t) * slots);
}

size_t jr_shmcounters_size(unsigned slots)
{
    slots = table_slots(slots);
    return accts_offset(slots) + ALIGN8(sizeof(acct_slot_t) * slots);
}

static void lock(uint32_t *l)
{
    unsigned spins = 0;
    while (__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE)) {
        while (__atomic_load_n(l, __ATOMIC_RELAXED)) {
            if (++spins % 64 == 0) {
                sched_yield();
            }
            if (spins > (1u << 22)) {
                /* Only a process that died inside the few instructions of a critical
                 * section can hold a lock this long. */
                JR_LOG(JR02001, 0, "breaking a stale counter lock");
                __atomic_store_n(l, 0, __ATOMIC_RELEASE);
                spins = 0;
            }
        }
    }
}

static void unlock(uint32_t *l)
{
    __atomic_store_n(l, 0, __ATOMIC_RELEASE);
}

/* ---- hashing ------------------------------------------------------------------------ */

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))

static void sip_round(uint64_t v[4])
{
    v[0] += v[1];
    v[1] = ROTL(v[1], 13) ^ v[0];
    v[0] = ROTL(v[0], 32);
    v[2] += v[3];
    v[3] = ROTL(v[3], 16) ^ v[2];
    v[0] += v[3];
    v[3] = ROTL(v[3], 21) ^ v[0];
    v[2] += v[1];
    v[1] = ROTL(v[1], 17) ^ v[2];
    v[2] = ROTL(v[2], 32);
}

static void sip_absorb(uint64_t v[4], uint64_t m)
{
    v[3] ^= m;
    sip_round(v);
    sip_round(v);
    v[0] ^= m;
}

/* SipHash-2-4 of a string under the region's secret. */
static uint64_t keyed_hash(const shm_store_t *st, const char *s)
{
    const uint64_t k0 = st->hdr->secret[0], k1 = st->hdr->secret[1];
    uint64_t v[4] = {k0 ^ 0x736f6d6570736575ULL, k1 ^ 0x646f72616e646f6dULL,
                     k0 ^ 0x6c7967656e657261ULL, k1 ^ 0x7465646279746573ULL};
    size_t len = strlen(s), i, j;
    uint64_t m;
    for (i = 0; i + 8 <= len; i += 8) {
        for (m = 0, j = 0; j < 8; ++j) {
            m |= (uint64_t)(unsigned char)s[i + j] << (8 * j);
        }
        sip_absorb(v, m);
    }
    for (m = (uint64_t)len << 56, j = 0; i + j < len; ++j) {
        m |= (uint64_t)(unsigned char)s[i + j] << (8 * j);
    }
    sip_absorb(v, m);
    v[2] ^= 0xff;
    for (i = 0; i < 4; ++i) {
        sip_round(v);
    }
    return v[0] ^ v[1] ^ v[2] ^ v[3];
}

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
}

/* The i-th slot of a probe sequence: double hashing over a power-of-two table. A sequence
 * visits distinct slots (the step is odd), and the sequences of neighbours do not pile up
 * into the long runs of linear probing, which would fill a probe window long before the
 * table. */
static uint32_t probe(uint64_t h, uint32_t i, uint32_t n)
{
    return (uint32_t)((h + (uint64_t)i * ((h >> 32) | 1)) & (n - 1));
}


/* Seconds from stamp to now, signed: a request stamped just before another one (threads
 * read the clock before they take the lock) must not look 136 years old. */
static int64_t age(uint32_t now, uint32_t stamp)
{
    return (int64_t)now - (int64_t)stamp;
}

/* ---- "table full" --------------------------------------------------------------------- */

/* A slot of table t was taken from a live owner. Counted; the first process that swaps the
 * minute's stamp writes one line for all of them. */
static void note_takeover(shm_store_t *st, int t, uint32_t now, uint32_t idle)
{
    uint32_t last, n;
    __atomic_add_fetch(&st->hdr->evicted[t], 1, __ATOMIC_RELAXED);
    last = __atomic_load_n(&st->hdr->logged_at[t], __ATOMIC_RELAXED);
    if ((last && age(now, last) < LOG_EVERY) ||
        !__atomic_compare_exchange_n(&st->hdr->logged_at[t], &last, now, 0, __ATOMIC_RELAXED,
                                     __ATOMIC_RELAXED)) {
        return;
    }
    n = __atomic_exchange_n(&st->hdr->evicted[t], 0, __ATOMIC_RELAXED);
#define TAKEN_OVER                                                                            \
    ": %u slot(s) taken over since the last report, the latest idle for %u s;"                \
    " raise JournalCounterSlots"
    if (t == T_KEYS) {
        JR_LOG(JR02010, 0, "rate-limit table full" TAKEN_OVER, n, idle);
    } else if (t == T_IPS) {
        JR_LOG(JR02011, 0, "failure-counter table full" TAKEN_OVER, n, idle);
    } else {
        JR_LOG(JR02012, 0, "login-throttle table full" TAKEN_OVER, n, idle);
    }
#undef TAKEN_OVER
}

/* ---- sliding windows ------------------------------------------------------------------ */

static int window_total(const window_t *w, uint32_t s, int window)
{
    int total = 0, i;
    for (i = 0; i < FAIL_BUCKETS; ++i) {
        if (w->cnt[i] && age(s, w->start[i]) < window && age(s, w->start[i]) > -window) {
            total += (int)w->cnt[i];
        }
    }
    return total;
}

/* Adds one at s; returns the total within window. */
static int window_add(window_t *w, uint32_t s, int window)
{
    uint32_t width = (uint32_t)(window + FAIL_BUCKETS - 1) / FAIL_BUCKETS, i;
    width = width ? width : 1;
    w->width = width;
    i = (s / width) % FAIL_BUCKETS;
    if (w->start[i] != (s / width) * width) {
        w->start[i] = (s / width) * width;
        w->cnt[i] = 0;
    }
    ++w->cnt[i];
    return window_total(w, s, window);
}

static int window_live(const window_t *w, uint32_t s)
{
    return window_total(w, s, (int)(w->width * FAIL_BUCKETS)) > 0;
}

/* ---- API keys ------------------------------------------------------------------------- */

static key_slot_t *key_claim(key_slot_t *s, long long key_id, uint32_t now)
{
    memset(s->sec, 0, sizeof(s->sec));
    memset(s->cnt, 0, sizeof(s->cnt));
    s->last_touch = 0;
    s->last_seen = now;
    __atomic_store_n(&s->key_id, key_id, __ATOMIC_RELEASE);
    return s;
}

/* Finds the key's slot, or else claims a free or long-idle one, or else takes over the one
 * seen longest ago; returns it locked. The whole probe sequence is searched for the key
 * before anything is claimed, so a key never gets a second slot ahead of its own. */
static key_slot_t *key_slot(shm_store_t *st, long long key_id, uint32_t now)
{
    uint64_t h = mix64((uint64_t)key_id);
    uint32_t n = st->hdr->slots, i, oldest_seen = UINT32_MAX;
    key_slot_t *oldest = NULL;
    for (i = 0; i < PROBES; ++i) {
        key_slot_t *s = &st->keys[probe(h, i, n)];
        int64_t owner = __atomic_load_n(&s->key_id, __ATOMIC_ACQUIRE);
        if (owner == key_id) {
            lock(&s->lock);
            if (s->key_id == key_id) {
                return s;
            }
            unlock(&s->lock);
        } else if (owner == 0) {
            break; /* slots are never freed, only taken over: the key is not further on */
        }
    }
    for (i = 0; i < PROBES; ++i) {
        key_slot_t *s = &st->keys[probe(h, i, n)];
        int64_t owner = __atomic_load_n(&s->key_id, __ATOMIC_ACQUIRE);
        uint32_t seen = __atomic_load_n(&s->last_seen, __ATOMIC_RELAXED);
        if (owner != 0 && owner != key_id && age(now, seen) <= 2 * JR_RATE_WINDOW) {
            if (!oldest || seen < oldest_seen) {
                oldest = s;
                oldest_seen = seen;
            }
            continue;
        }
        lock(&s->lock);
        if (s->key_id == key_id) { /* another request of this key claimed it first */
            return s;
        }
        if (s->key_id == owner) {
            return key_claim(s, key_id, now);
        }
        unlock(&s->lock);
    }
    if (!oldest) { /* every probed slot changed hands under us: take the first */
        oldest = &st->keys[probe(h, 0, n)];
    }
    lock(&oldest->lock);
    if (oldest->key_id != key_id) {
        note_takeover(st, T_KEYS, now, (uint32_t)age(now, oldest->last_seen));
        key_claim(oldest, key_id, now);
    }
    return oldest;
}

static apr_status_t shm_rate_hit(jr_counters_t *c, long long key_id, int limit, apr_time_t now,
                                 jr_rate_t *out)
{
    shm_store_t *st = c->impl;
    uint32_t s = (uint32_t)apr_time_sec(now), oldest = s, total = 0, i;
    key_slot_t *slot = key_slot(st, key_id, s);

    out->limit = limit;
    for (i = 0; i < JR_RATE_WINDOW; ++i) {
        if (slot->cnt[i] && age(s, slot->sec[i]) < JR_RATE_WINDOW &&
            age(s, slot->sec[i]) > -JR_RATE_WINDOW) {
            total += slot->cnt[i];
            oldest = slot->sec[i] < oldest ? slot->sec[i] : oldest;
        }
    }
    out->allowed = total < (uint32_t)limit;
    if (out->allowed) {
        i = s % JR_RATE_WINDOW;
        if (slot->sec[i] != s) {
            slot->sec[i] = s;
            slot->cnt[i] = 0;
        }
        ++slot->cnt[i];
        ++total;
    }
    out->remaining = total >= (uint32_t)limit ? 0 : limit - (int)total;
    out->reset = (int)(oldest + JR_RATE_WINDOW - s);
    out->reset = out->reset < 1 ? 1 : out->reset;
    out->touch = out->allowed && age(s, slot->last_touch) >= JR_RATE_WINDOW;
    if (out->touch) {
        slot->last_touch = s;
    }
    slot->last_seen = s > slot->last_seen ? s : slot->last_seen;
    unlock(&slot->lock);
    return APR_SUCCESS;
}

/* ---- failures per client address ------------------------------------------------------ */

static ip_slot_t *ip_claim(ip_slot_t *s, const char *id, uint32_t now)
{
    memset(&s->w, 0, sizeof(s->w));
    strcpy(s->id, id);
    s->used = 1;
    s->last_seen = now;
    return s;
}

/* The id's own slot anywhere in the probe sequence, locked; NULL when it has none. */
static ip_slot_t *ip_find(shm_store_t *st, const char *id, uint64_t h)
{
    uint32_t i, n = st->hdr->slots;
    for (i = 0; i < PROBES; ++i) {
        ip_slot_t *cand = &st->ips[probe(h, i, n)];
        lock(&cand->lock);
        if (cand->used && !strcmp(cand->id, id)) {
            return cand;
        }
        unlock(&cand->lock);
    }
    return NULL;
}

/* The id's slot, or a free or stale one, or else the probed slot whose address was seen
 * longest ago: an attacker who wants to push a busy address's count out has to keep a whole
 * probe sequence busier than it, with addresses of its own that are then counted instead. */
static ip_slot_t *ip_slot(shm_store_t *st, const char *id, uint32_t now)
{
    uint64_t h = keyed_hash(st, id);
    uint32_t n = st->hdr->slots, i, oldest_seen = UINT32_MAX;
    ip_slot_t *slot = ip_find(st, id, h), *oldest = NULL;
    for (i = 0; i < PROBES && !slot; ++i) {
        ip_slot_t *cand = &st->ips[probe(h, i, n)];
        lock(&cand->lock);
        if (cand->used && !strcmp(cand->id, id)) { /* claimed meanwhile by the same id */
            slot = cand;
        } else if (!cand->used || age(now, cand->last_seen) > IP_IDLE_REUSE ||
                   !window_live(&cand->w, now)) {
            slot = ip_claim(cand, id, now);
        } else {
            if (cand->last_seen < oldest_seen) {
                oldest = cand;
                oldest_seen = cand->last_seen;
            }
            unlock(&cand->lock);
        }
    }
    if (!slot) {
        slot = oldest ? oldest : &st->ips[probe(h, 0, n)];
        lock(&slot->lock);
        if (!slot->used || strcmp(slot->id, id)) {
            note_takeover(st, T_IPS, now, (uint32_t)age(now, slot->last_seen));
            ip_claim(slot, id, now);
        }
    }
    return slot;
}

static apr_status_t shm_fail_add(jr_counters_t *c, const char *kind, const char *ip, int window,
                                 apr_time_t now, int *count)
{
    shm_store_t *st = c->impl;
    char id[64];
    uint32_t s = (uint32_t)apr_time_sec(now);
    ip_slot_t *slot;

    snprintf(id, sizeof(id), "%s %s", kind, ip);
    slot = ip_slot(st, id, s);
    *count = window_add(&slot->w, s, window);
    slot->last_seen = s;
    unlock(&slot->lock);
    return APR_SUCCESS;
}

static apr_status_t shm_fail_clear(jr_counters_t *c, const char *ip)
{
    shm_store_t *st = c->impl;
    static const char *const kinds[] = {"apikey", "login"};
    size_t k;
    for (k = 0; k < sizeof(kinds) / sizeof(*kinds); ++k) {
        char id[64];
        ip_slot_t *slot;
        snprintf(id, sizeof(id), "%s %s", kinds[k], ip);
        /* Cleared slots stay "used" with an empty window: free for the taking, and no hole
         * in the probe sequences of their neighbours. */
        if ((slot = ip_find(st, id, keyed_hash(st, id))) != NULL) {
            memset(&slot->w, 0, sizeof(slot->w));
            unlock(&slot->lock);
        }
    }
    return APR_SUCCESS;
}

/* ---- login throttle per account ------------------------------------------------------- */

static int known_index(const acct_slot_t *a, uint32_t source, uint32_t now)
{
    int i;
    for (i = 0; i < KNOWN_SOURCES; ++i) {
        if (a->known[i] == source && age(now, a->known_at[i]) < KNOWN_TTL) {
            return i;
        }
    }
    return -1;
}

/* What a slot is worth keeping, lowest first: 0 nothing left (free for the taking);
 * 1 attempts being counted; 2 addresses that logged in (their pass through a throttle);
 * 3 a throttle period running. Junk names sprayed to fill the table are class 1 at most, so
 * they push out each other and idle slots, not the throttle of an attacked account (each
 * junk name would need a full threshold of attempts to reach class 3, and every attempt
 * also counts against its address). */
static int acct_class(const acct_slot_t *a, uint32_t now)
{
    int i, known = 0;
    if (!a->used) {
        return 0;
    }
    if (age(a->until, now) > 0) {
        return 3;
    }
    for (i = 0; i < KNOWN_SOURCES; ++i) {
        known = known || (a->known[i] && age(now, a->known_at[i]) < KNOWN_TTL);
    }
    if (known) {
        return 2;
    }
    /* A level to double from is worth keeping for a window after its period ended. */
    return window_live(&a->w, now) ||
                   (a->level && age(now, a->until) < (int64_t)a->w.width * FAIL_BUCKETS)
               ? 1
               : 0;
}

static acct_slot_t *acct_claim(acct_slot_t *a, uint64_t key, uint32_t now)
{
    memset(&a->w, 0, sizeof(a->w));
    memset(a->known, 0, sizeof(a->known));
    memset(a->known_at, 0, sizeof(a->known_at));
    a->until = 0;
    a->level = 0;
    a->last_seen = now;
    a->used = 1;
    __atomic_store_n(&a->key, key, __ATOMIC_RELEASE);
    return a;
}

/* The account's slot, locked: its own, else the first worthless one, else the probed one of
 * the lowest class seen longest ago. */
static acct_slot_t *acct_slot(shm_store_t *st, uint64_t key, uint32_t now)
{
    uint32_t n = st->hdr->slots, i, best_seen = UINT32_MAX;
    acct_slot_t *best = NULL;
    int best_class = 4;
    for (i = 0; i < PROBES; ++i) {
        acct_slot_t *a = &st->accts[probe(key, i, n)];
        if (__atomic_load_n(&a->key, __ATOMIC_ACQUIRE) == key) {
            lock(&a->lock);
            if (a->used && a->key == key) {
                return a;
            }
            unlock(&a->lock);
        }
    }
    for (i = 0; i < PROBES; ++i) {
        acct_slot_t *a = &st->accts[probe(key, i, n)];
        int cls;
        lock(&a->lock);
        if (a->used && a->key == key) {
            return a;
        }
        if ((cls = acct_class(a, now)) == 0) {
            return acct_claim(a, key, now);
        }
        if (cls < best_class || (cls == best_class && a->last_seen < best_seen)) {
            best = a;
            best_class = cls;
            best_seen = a->last_seen;
        }
        unlock(&a->lock);
    }
    lock(&best->lock);
    if (!(best->used && best->key == key)) {
        note_takeover(st, T_ACCTS, now, (uint32_t)age(now, best->last_seen));
        acct_claim(best, key, now);
    }
    return best;
}

static uint32_t source_hash(const shm_store_t *st, const char *source)
{
    uint32_t h = (uint32_t)keyed_hash(st, source ? source : "");
    return h ? h : 1;
}

/* 1 while a back-off is under way: the last period ended less than a window ago. */
static int in_backoff(const acct_slot_t *a, const jr_throttle_cfg_t *cfg, uint32_t now)
{
    return a->until && age(now, a->until) < cfg->window;
}

/* Starts the next throttle period: twice the last one while a back-off is under way. */
static int start_period(acct_slot_t *a, const jr_throttle_cfg_t *cfg, uint32_t now)
{
    long long period = cfg->first > 0 ? cfg->first : 1;
    uint32_t i;
    a->level = in_backoff(a, cfg, now) ? a->level + 1 : 0;
    for (i = 0; i < a->level && period < cfg->max_backoff; ++i) {
        period *= 2;
    }
    period = period > cfg->max_backoff ? cfg->max_backoff : period;
    period = period < 1 ? 1 : period;
    a->until = now + (uint32_t)period;
    return (int)period;
}

static apr_status_t shm_login_attempt(jr_counters_t *c, const char *account, const char *source,
                                      const jr_throttle_cfg_t *cfg, apr_time_t now,
                                      jr_throttle_t *out)
{
    shm_store_t *st = c->impl;
    uint32_t s = (uint32_t)apr_time_sec(now), src = source_hash(st, source);
    acct_slot_t *a = acct_slot(st, keyed_hash(st, account), s);
    int k;

    memset(out, 0, sizeof(*out));
    a->last_seen = s;
    if (age(a->until, s) > 0) {
        if ((k = known_index(a, src, s)) < 0) {
            out->refused = 1;
            out->retry_after = (int)age(a->until, s);
            unlock(&a->lock);
            return APR_SUCCESS;
        }
        a->known[k] = 0; /* one pass: a success gives it back */
        out->attempts = window_add(&a->w, s, cfg->window);
        unlock(&a->lock);
        return APR_SUCCESS;
    }
    /* Once throttled, every attempt after a period starts the next one, until a window
     * passes without attempts: the guesses left are one per period, not a threshold's
     * worth each time the first burst leaves the window. */
    out->attempts = window_add(&a->w, s, cfg->window);
    if (out->attempts >= cfg->threshold || in_backoff(a, cfg, s)) {
        out->period = start_period(a, cfg, s);
    }
    unlock(&a->lock);
    return APR_SUCCESS;
}

static apr_status_t shm_login_ok(jr_counters_t *c, const char *account, const char *source,
                                 apr_time_t now)
{
    shm_store_t *st = c->impl;
    uint32_t s = (uint32_t)apr_time_sec(now), src = source_hash(st, source);
    acct_slot_t *a = acct_slot(st, keyed_hash(st, account), s);
    int k = known_index(a, src, s), i;

    memset(&a->w, 0, sizeof(a->w));
    a->until = 0;
    a->level = 0;
    a->last_seen = s;
    if (k < 0) { /* a free entry, else the one remembered longest ago */
        for (k = 0, i = 1; i < KNOWN_SOURCES && a->known[k]; ++i) {
            if (!a->known[i] || a->known_at[i] < a->known_at[k]) {
                k = i;
            }
        }
    }
    a->known[k] = src;
    a->known_at[k] = s;
    unlock(&a->lock);
    return APR_SUCCESS;
}

static const jr_counters_ops_t shm_ops = {shm_rate_hit, shm_fail_add, shm_fail_clear,
                                          shm_login_attempt, shm_login_ok};

jr_counters_t *jr_shmcounters_attach(apr_pool_t *p, void *base, size_t size, unsigned slots,
                                     int init)
{
    shm_header_t *hdr = base;
    jr_counters_t *c;
    shm_store_t *st;
    if (slots < JR_SHM_MIN_SLOTS || slots > JR_SHM_MAX_SLOTS ||
        size < jr_shmcounters_size(slots)) {
        return NULL;
    }
    slots = table_slots(slots);
    if (init) {
        memset(base, 0, size);
        if (jr_random_bytes((unsigned char *)hdr->secret, sizeof(hdr->secret)) != 0) {
            return NULL;
        }
        hdr->slots = slots;
        hdr->magic = MAGIC;
    } else if (hdr->magic != MAGIC || hdr->slots != slots) {
        return NULL;
    }
    st = apr_pcalloc(p, sizeof(*st));
    st->hdr = hdr;
    st->keys = (key_slot_t *)((char *)base + keys_offset());
    st->ips = (ip_slot_t *)((char *)base + ips_offset(slots));
    st->accts = (acct_slot_t *)((char *)base + accts_offset(slots));
    c = apr_pcalloc(p, sizeof(*c));
    c->ops = &shm_ops;
    c->impl = st;
    return c;
}
