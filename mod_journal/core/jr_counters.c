/* The shared-memory counter store. Each slot has its own spinlock word; the critical
 * sections are a few dozen instructions, so there is no global lock on the hot path. */
#include <sched.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>

#include "jr_counters.h"
#include "jr_log.h"

#define MAGIC 0x4A524331u /* "JRC1" */
#define PROBES 64
#define FAIL_BUCKETS 30

typedef struct {
    uint32_t magic, key_slots, ip_slots, pad;
} shm_header_t;

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
    uint32_t width, last_seen;
    char id[64]; /* kind + " " + ip */
    uint32_t start[FAIL_BUCKETS];
    uint32_t cnt[FAIL_BUCKETS];
} ip_slot_t;

typedef struct {
    shm_header_t *hdr;
    key_slot_t *keys;
    ip_slot_t *ips;
} shm_store_t;

size_t jr_shmcounters_size(void)
{
    return sizeof(shm_header_t) + sizeof(key_slot_t) * JR_SHM_KEY_SLOTS +
           sizeof(ip_slot_t) * JR_SHM_IP_SLOTS;
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
                jr_log(JR_LOG_WARN, 0, "JR02001: breaking a stale counter lock");
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

static uint32_t mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (uint32_t)x;
}

static uint32_t fnv1a(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; ++s) {
        h = (h ^ (unsigned char)*s) * 16777619u;
    }
    return h;
}

/* Seconds from stamp to now, signed: a request stamped just before another one (threads
 * read the clock before they take the lock) must not look 136 years old. */
static int64_t age(uint32_t now, uint32_t stamp)
{
    return (int64_t)now - (int64_t)stamp;
}

/* Finds the key's slot, or else claims a free or long-idle one, and returns it locked; NULL
 * when the table is full. The whole probe sequence is searched for the key before anything
 * is claimed, so a key never gets a second slot ahead of its own. */
static key_slot_t *key_slot(shm_store_t *st, long long key_id, uint32_t now)
{
    uint32_t n = st->hdr->key_slots, h = mix64((uint64_t)key_id), i;
    for (i = 0; i < PROBES; ++i) {
        key_slot_t *s = &st->keys[(h + i) % n];
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
        key_slot_t *s = &st->keys[(h + i) % n];
        int64_t owner = __atomic_load_n(&s->key_id, __ATOMIC_ACQUIRE);
        if (owner != 0 && owner != key_id &&
            age(now, __atomic_load_n(&s->last_seen, __ATOMIC_RELAXED)) <= 2 * JR_RATE_WINDOW) {
            continue;
        }
        lock(&s->lock);
        if (s->key_id == key_id) { /* another request of this key claimed it first */
            return s;
        }
        if (s->key_id == owner) {
            memset(s->sec, 0, sizeof(s->sec));
            memset(s->cnt, 0, sizeof(s->cnt));
            s->last_touch = 0;
            s->last_seen = now;
            __atomic_store_n(&s->key_id, key_id, __ATOMIC_RELEASE);
            return s;
        }
        unlock(&s->lock);
    }
    return NULL;
}

static apr_status_t shm_rate_hit(jr_counters_t *c, long long key_id, int limit, apr_time_t now,
                                 jr_rate_t *out)
{
    shm_store_t *st = c->impl;
    uint32_t s = (uint32_t)apr_time_sec(now), oldest = s, total = 0, i;
    key_slot_t *slot = key_slot(st, key_id, s);

    out->limit = limit;
    if (!slot) {
        jr_log(JR_LOG_WARN, 0, "JR02002: rate-limit table full; request of key %lld not counted",
               key_id);
        out->allowed = 1;
        out->remaining = limit;
        out->reset = JR_RATE_WINDOW;
        out->touch = 0;
        return APR_SUCCESS;
    }
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

static int fail_total(const ip_slot_t *slot, uint32_t s, int window)
{
    int total = 0, i;
    for (i = 0; i < FAIL_BUCKETS; ++i) {
        if (slot->cnt[i] && age(s, slot->start[i]) < window && age(s, slot->start[i]) > -window) {
            total += (int)slot->cnt[i];
        }
    }
    return total;
}

static apr_status_t shm_fail_add(jr_counters_t *c, const char *kind, const char *ip, int window,
                                 apr_time_t now, int *count)
{
    shm_store_t *st = c->impl;
    char id[64];
    uint32_t s = (uint32_t)apr_time_sec(now), n = st->hdr->ip_slots, h, i, width;
    ip_slot_t *slot = NULL;

    snprintf(id, sizeof(id), "%s %s", kind, ip);
    h = fnv1a(id);
    width = (uint32_t)(window + FAIL_BUCKETS - 1) / FAIL_BUCKETS;
    width = width ? width : 1;
    /* First the id's own slot anywhere in the probe sequence, then a free or stale one. */
    for (i = 0; i < PROBES && !slot; ++i) {
        ip_slot_t *cand = &st->ips[(h + i) % n];
        lock(&cand->lock);
        if (cand->used && !strcmp(cand->id, id)) {
            slot = cand;
        } else {
            unlock(&cand->lock);
        }
    }
    for (i = 0; i < PROBES && !slot; ++i) {
        ip_slot_t *cand = &st->ips[(h + i) % n];
        lock(&cand->lock);
        if (!cand->used || age(s, cand->last_seen) > 86400 ||
            fail_total(cand, s, (int)(cand->width * FAIL_BUCKETS)) == 0) {
            memset(cand->start, 0, sizeof(cand->start));
            memset(cand->cnt, 0, sizeof(cand->cnt));
            strcpy(cand->id, id);
            cand->used = 1;
            slot = cand;
        } else {
            unlock(&cand->lock);
        }
    }
    if (!slot) {
        jr_log(JR_LOG_WARN, 0, "JR02003: failure-counter table full; failure not counted");
        *count = 0;
        return APR_SUCCESS;
    }
    slot->width = width;
    i = (s / width) % FAIL_BUCKETS;
    if (slot->start[i] != (s / width) * width) {
        slot->start[i] = (s / width) * width;
        slot->cnt[i] = 0;
    }
    ++slot->cnt[i];
    slot->last_seen = s;
    *count = fail_total(slot, s, window);
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
        uint32_t h, i, n = st->hdr->ip_slots;
        snprintf(id, sizeof(id), "%s %s", kinds[k], ip);
        h = fnv1a(id);
        for (i = 0; i < PROBES; ++i) {
            ip_slot_t *cand = &st->ips[(h + i) % n];
            lock(&cand->lock);
            if (cand->used && !strcmp(cand->id, id)) {
                cand->used = 0;
                memset(cand->cnt, 0, sizeof(cand->cnt));
            }
            unlock(&cand->lock);
        }
    }
    return APR_SUCCESS;
}

static const jr_counters_ops_t shm_ops = {shm_rate_hit, shm_fail_add, shm_fail_clear};

jr_counters_t *jr_shmcounters_attach(apr_pool_t *p, void *base, size_t size, int init)
{
    jr_counters_t *c;
    shm_store_t *st;
    if (size < jr_shmcounters_size()) {
        return NULL;
    }
    if (init) {
        memset(base, 0, size);
        ((shm_header_t *)base)->magic = MAGIC;
        ((shm_header_t *)base)->key_slots = JR_SHM_KEY_SLOTS;
        ((shm_header_t *)base)->ip_slots = JR_SHM_IP_SLOTS;
    } else if (((shm_header_t *)base)->magic != MAGIC) {
        return NULL;
    }
    st = apr_pcalloc(p, sizeof(*st));
    st->hdr = base;
    st->keys = (key_slot_t *)(st->hdr + 1);
    st->ips = (ip_slot_t *)(st->keys + JR_SHM_KEY_SLOTS);
    c = apr_pcalloc(p, sizeof(*c));
    c->ops = &shm_ops;
    c->impl = st;
    return c;
}
