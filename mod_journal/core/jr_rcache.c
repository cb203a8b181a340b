/* The response cache (jr_rcache.h). Pages live in malloc'd memory, outside every pool: they
 * outlive the requests that made them. The store is split into shards, each with its own
 * lock, hash table and LRU list, so threads answering different lists rarely meet; a lock is
 * held for a lookup and a copy, never while an answer is rendered. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <apr_strings.h>

#include "jr_cursor.h"
#include "jr_log.h"
#include "jr_rcache.h"

#define SHARDS 8
#define BUCKETS 512 /* per shard; chains stay short at the page counts a budget allows */

typedef struct entry {
    struct entry *hnext;       /* the bucket's chain */
    struct entry *prev, *next; /* the shard's LRU list, newest first */
    apr_uint64_t hash, gen;
    size_t klen, body_len, headers_len, size;
    int status;
    char data[]; /* key, body, headers */
} entry_t;

typedef struct {
    pthread_mutex_t mu;
    entry_t *buckets[BUCKETS];
    entry_t *newest, *oldest;
    size_t bytes, budget, entries;
    apr_uint64_t hits, misses, stores, evictions;
} shard_t;

struct jr_rcache {
    shard_t shard[SHARDS];
};

/* FNV-1a, then a finalizer that spreads every bit over the top ones (the shard): keys that
 * differ in their last bytes only (a page number) would otherwise share a shard. */
static apr_uint64_t hash_of(const char *key, size_t klen)
{
    apr_uint64_t h = 14695981039346656037ULL;
    size_t i;
    for (i = 0; i < klen; ++i) {
        h = (h ^ (unsigned char)key[i]) * 1099511628211ULL;
    }
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    return h ^ (h >> 33);
}

jr_rcache_t *jr_rcache_create(size_t budget)
{
    jr_rcache_t *c = calloc(1, sizeof(*c));
    int i;
    for (i = 0; c && i < SHARDS; ++i) {
        pthread_mutex_init(&c->shard[i].mu, NULL);
        c->shard[i].budget = budget / SHARDS;
    }
    return c;
}

void jr_rcache_destroy(jr_rcache_t *c)
{
    int i;
    entry_t *e, *next;
    for (i = 0; c && i < SHARDS; ++i) {
        for (e = c->shard[i].newest; e; e = next) {
            next = e->next;
            free(e);
        }
        pthread_mutex_destroy(&c->shard[i].mu);
    }
    free(c);
}

static shard_t *shard_of(jr_rcache_t *c, apr_uint64_t h)
{
    return &c->shard[h >> 61]; /* the top 3 bits: SHARDS is 8 */
}

static entry_t **slot_of(shard_t *s, apr_uint64_t h, const char *key, size_t klen)
{
    entry_t **pp = &s->buckets[h % BUCKETS];
    while (*pp && ((*pp)->hash != h || (*pp)->klen != klen || memcmp((*pp)->data, key, klen))) {
        pp = &(*pp)->hnext;
    }
    return pp;
}

static void lru_unlink(shard_t *s, entry_t *e)
{
    *(e->prev ? &e->prev->next : &s->newest) = e->next;
    *(e->next ? &e->next->prev : &s->oldest) = e->prev;
    e->prev = e->next = NULL;
}

static void lru_front(shard_t *s, entry_t *e)
{
    e->prev = NULL;
    e->next = s->newest;
    *(s->newest ? &s->newest->prev : &s->oldest) = e;
    s->newest = e;
}

/* Takes e (at *pp) out of the shard; the caller frees it once the lock is gone. */
static entry_t *detach(shard_t *s, entry_t **pp)
{
    entry_t *e = *pp;
    *pp = e->hnext;
    lru_unlink(s, e);
    s->bytes -= e->size;
    --s->entries;
    return e;
}

int jr_rcache_get(jr_rcache_t *c, const char *key, size_t klen, apr_uint64_t gen, apr_pool_t *p,
                  jr_rcache_page_t *out)
{
    apr_uint64_t h = hash_of(key, klen);
    shard_t *s = shard_of(c, h);
    entry_t **pp, *e, *gone = NULL;
    char *copy = NULL;

    pthread_mutex_lock(&s->mu);
    pp = slot_of(s, h, key, klen);
    if ((e = *pp) != NULL && e->gen == gen) {
        lru_unlink(s, e);
        lru_front(s, e);
        /* One block: body, a NUL after it (a body is text), then the headers. */
        copy = apr_palloc(p, e->body_len + 1 + e->headers_len);
        memcpy(copy, e->data + klen, e->body_len);
        copy[e->body_len] = '\0';
        memcpy(copy + e->body_len + 1, e->data + klen + e->body_len, e->headers_len);
        out->status = e->status;
        out->body = copy;
        out->body_len = e->body_len;
        out->headers = copy + e->body_len + 1;
        out->headers_len = e->headers_len;
        ++s->hits;
    } else {
        /* A page of an older generation is never served again. A newer one (kept by a reader
         * that saw a later write than this one) stays for the readers of its generation. */
        gone = e && e->gen < gen ? detach(s, pp) : NULL;
        ++s->misses;
    }
    pthread_mutex_unlock(&s->mu);
    free(gone);
    return copy != NULL;
}

void jr_rcache_put(jr_rcache_t *c, const char *key, size_t klen, apr_uint64_t gen,
                   const jr_rcache_page_t *page)
{
    apr_uint64_t h = hash_of(key, klen);
    shard_t *s = shard_of(c, h);
    size_t size = sizeof(entry_t) + klen + page->body_len + page->headers_len;
    entry_t **pp, *e, *freed = NULL, *old;

    if (size > s->budget / 8 || !(e = malloc(size))) {
        return;
    }
    memset(e, 0, sizeof(*e));
    e->hash = h;
    e->gen = gen;
    e->klen = klen;
    e->body_len = page->body_len;
    e->headers_len = page->headers_len;
    e->size = size;
    e->status = page->status;
    memcpy(e->data, key, klen);
    memcpy(e->data + klen, page->body, page->body_len);
    memcpy(e->data + klen + page->body_len, page->headers, page->headers_len);

    pthread_mutex_lock(&s->mu);
    pp = slot_of(s, h, key, klen);
    if (*pp && (*pp)->gen > gen) {
        freed = e; /* a newer page came first: it stays */
    } else {
        if (*pp) {
            old = detach(s, pp);
            old->hnext = freed;
            freed = old;
        }
        e->hnext = s->buckets[h % BUCKETS];
        s->buckets[h % BUCKETS] = e;
        lru_front(s, e);
        s->bytes += size;
        ++s->entries;
        ++s->stores;
        while (s->bytes > s->budget && s->oldest != e) {
            old = s->oldest;
            old = detach(s, slot_of(s, old->hash, old->data, old->klen));
            old->hnext = freed;
            freed = old;
            ++s->evictions;
        }
    }
    pthread_mutex_unlock(&s->mu);
    while (freed) {
        old = freed->hnext;
        free(freed);
        freed = old;
    }
}

void jr_rcache_stats(jr_rcache_t *c, jr_rcache_stats_t *out)
{
    int i;
    memset(out, 0, sizeof(*out));
    for (i = 0; i < SHARDS; ++i) {
        shard_t *s = &c->shard[i];
        pthread_mutex_lock(&s->mu);
        out->hits += s->hits;
        out->misses += s->misses;
        out->stores += s->stores;
        out->evictions += s->evictions;
        out->bytes += s->bytes;
        out->entries += s->entries;
        pthread_mutex_unlock(&s->mu);
    }
}

/* ---- the road's use ---------------------------------------------------------------------- */

static jr_rcache_t *process_cache;
static pthread_mutex_t process_mu = PTHREAD_MUTEX_INITIALIZER;

jr_rcache_t *jr_rcache_process(void)
{
    return __atomic_load_n(&process_cache, __ATOMIC_ACQUIRE);
}

/* The process's cache, made by the first request that wants one (with the main server's
 * JournalResponseCacheSize, which every virtual host shares). */
static jr_rcache_t *cache_for(const jr_config_t *cfg)
{
    jr_rcache_t *c = jr_rcache_process();
    if (!c) {
        pthread_mutex_lock(&process_mu);
        if (!process_cache) {
            __atomic_store_n(&process_cache, jr_rcache_create((size_t)cfg->response_cache_size),
                             __ATOMIC_RELEASE);
        }
        c = process_cache;
        pthread_mutex_unlock(&process_mu);
    }
    return c;
}

/* Each part with its length, so no value can pass for the end of another. */
const char *jr_rcache_key(const jr_ctx_t *ctx, size_t *klen)
{
    const char *args = ctx->raw_args ? ctx->raw_args : "";
    const char *scope = ctx->who.branch_json ? ctx->who.branch_json : "*";
    const char *base = ctx->base_url ? ctx->base_url : "";
    const char *k;
    if (!ctx->raw_path) {
        return NULL;
    }
    k = apr_psprintf(ctx->pool,
                     "%pp %d %" APR_SIZE_T_FMT ":%s %" APR_SIZE_T_FMT ":%s?%d %" APR_INT64_T_FMT
                     " %" APR_INT64_T_FMT " %d %" APR_SIZE_T_FMT ":%s %" APR_SIZE_T_FMT ":%s",
                     (const void *)ctx->cfg, (int)ctx->iface, strlen(ctx->raw_path),
                     ctx->raw_path, strlen(args), args, ctx->raw_args != NULL,
                     (apr_int64_t)ctx->who.user_id, (apr_int64_t)ctx->who.key_id,
                     (int)ctx->who.role, strlen(scope), scope, strlen(base), base);
    *klen = strlen(k);
    return k;
}

/* The generation, or 0 when there is none to trust now. A failure other than a running write
 * (PostgreSQL) or a database without a file is logged once per process. */
static int generation(jr_ctx_t *ctx, apr_uint64_t *gen)
{
    static int told;
    apr_status_t rv = jr_db_generation(ctx->db, ctx->pool, ctx->snapshot_row, gen);
    if (rv != APR_SUCCESS && rv != APR_EAGAIN && rv != APR_ENOTIMPL &&
        !__atomic_exchange_n(&told, 1, __ATOMIC_RELAXED)) {
        JR_LOG(JR12000, rv, "the response cache is not used: the database's write generation "
                            "cannot be read");
    }
    return rv == APR_SUCCESS;
}

static void page_headers(const jr_rcache_page_t *pg, jr_result_t *res)
{
    const char *h = pg->headers, *end = pg->headers + pg->headers_len;
    while (h < end) {
        const char *v = h + strlen(h) + 1;
        apr_table_setn(res->headers, h, v);
        h = v + strlen(v) + 1;
    }
}

int jr_rcache_serve(jr_ctx_t *ctx, const jr_route_t *route, jr_result_t *res,
                    jr_rcache_req_t *rq)
{
    jr_rcache_page_t pg;
    jr_rcache_t *c;
    memset(rq, 0, sizeof(*rq));
    if (!(route->flags & JR_RF_CACHE) || ctx->cfg->response_cache != 1 || !ctx->db ||
        !ctx->query || jr_sync_wanted(ctx) || !(rq->key = jr_rcache_key(ctx, &rq->klen)) ||
        !(c = cache_for(ctx->cfg)) || !generation(ctx, &rq->gen)) {
        return 0;
    }
    if (!jr_rcache_get(c, rq->key, rq->klen, rq->gen, ctx->pool, &pg)) {
        rq->nheaders = apr_table_elts(res->headers)->nelts;
        rq->keep = 1;
        return 0;
    }
    res->status = pg.status;
    res->body = pg.body;
    res->body_len = pg.body_len;
    page_headers(&pg, res);
    JR_LOG(JR12001, 0, "response cache: %s answered from generation %" APR_UINT64_T_FMT,
           ctx->raw_path, rq->gen);
    return 1;
}

/* Copies s with its NUL to d; returns the byte after it. */
static char *append_z(char *d, const char *s)
{
    size_t n = strlen(s) + 1;
    memcpy(d, s, n);
    return d + n;
}

void jr_rcache_keep(jr_ctx_t *ctx, const jr_rcache_req_t *rq, jr_result_t *res)
{
    const apr_array_header_t *arr = apr_table_elts(res->headers);
    const apr_table_entry_t *hd = (const apr_table_entry_t *)arr->elts;
    jr_rcache_page_t pg;
    char *h;
    int i;
    if (!rq->keep || res->status != 200 || res->streamed || res->file || res->content_type ||
        !res->body) {
        return;
    }
    pg = (jr_rcache_page_t){res->status, res->body, res->body_len, NULL, 0};
    /* The headers the operation added (X-Total-Count, Link): those before it are this
     * request's own (RateLimit-*). */
    for (i = rq->nheaders; i < arr->nelts; ++i) {
        pg.headers_len += strlen(hd[i].key) + strlen(hd[i].val) + 2;
    }
    pg.headers = h = apr_palloc(ctx->pool, pg.headers_len + 1);
    for (i = rq->nheaders; i < arr->nelts; ++i) {
        h = append_z(h, hd[i].key);
        h = append_z(h, hd[i].val);
    }
    jr_rcache_put(cache_for(ctx->cfg), rq->key, rq->klen, rq->gen, &pg);
    JR_LOG(JR12002, 0, "response cache: kept %s under generation %" APR_UINT64_T_FMT,
           ctx->raw_path, rq->gen);
}

/* ---- a statement's rows ------------------------------------------------------------------ */

/* Rows kept as a page: status holds the column count, the body the row count (an int), then
 * each name with its NUL, then each value as "\1value\0", or "\0" for SQL NULL. */
static size_t rows_size(const jr_rows_t *r)
{
    size_t n = sizeof(int);
    int i, j;
    for (i = 0; i < r->ncols; ++i) {
        n += strlen(r->names[i]) + 1;
    }
    for (j = 0; j < r->nrows; ++j) {
        for (i = 0; i < r->ncols; ++i) {
            n += r->rows[j][i] ? strlen(r->rows[j][i]) + 2 : 1;
        }
    }
    return n;
}

static const char *next_z(const char **s)
{
    const char *v = *s;
    *s += strlen(v) + 1;
    return v;
}

static jr_rows_t *rows_of(apr_pool_t *p, const jr_rcache_page_t *pg)
{
    jr_rows_t *r = apr_pcalloc(p, sizeof(*r));
    const char *s = pg->body + sizeof(int);
    int i, j;
    memcpy(&r->nrows, pg->body, sizeof(int));
    r->ncols = pg->status;
    r->names = apr_palloc(p, sizeof(*r->names) * (size_t)r->ncols + 1);
    r->rows = apr_palloc(p, sizeof(*r->rows) * (size_t)r->nrows + 1);
    for (i = 0; i < r->ncols; ++i) {
        r->names[i] = next_z(&s);
    }
    for (j = 0; j < r->nrows; ++j) {
        r->rows[j] = apr_palloc(p, sizeof(**r->rows) * (size_t)r->ncols + 1);
        for (i = 0; i < r->ncols; ++i) {
            r->rows[j][i] = *s++ ? next_z(&s) : NULL;
        }
    }
    return r;
}

/* Kept rows that carry a snapshot (JR_DB_SNAPSHOT_COLUMNS: the key's lookup on PostgreSQL)
 * carry the one of their statement, older than this request. They are served under gen, read
 * for this request after it arrived and before its data: the generation they carry is gen,
 * with no write running, which is what the rest of the request may rely on (jr_db_generation's
 * "carried"), without a read of its own. */
static void carry_generation(apr_pool_t *p, jr_rows_t *r, apr_uint64_t gen)
{
    int c_gen = -1, c_busy = -1, i, j;
    for (i = 0; i < r->ncols; ++i) {
        c_gen = strcmp(r->names[i], "snap_gen") ? c_gen : i;
        c_busy = strcmp(r->names[i], "snap_busy") ? c_busy : i;
    }
    if (c_gen < 0 || c_busy < 0) {
        return; /* SQLite's rows carry none */
    }
    for (j = 0; j < r->nrows; ++j) {
        r->rows[j][c_gen] = apr_psprintf(p, "%" APR_UINT64_T_FMT, gen);
        r->rows[j][c_busy] = "0";
    }
}

int jr_rcache_rows_on(const jr_ctx_t *ctx)
{
    /* A request that writes moves the generation itself, so no row it kept would serve the
     * next one: where the generation costs a statement, even a shared one, it reads none and
     * runs its statements, the first of which brings the snapshot (§7.30). */
    return ctx->cfg->response_cache == 1 &&
           (jr_db_generation_free(ctx->db) ||
            (jr_db_generation_shared(ctx->db) && !jr_ctx_writes(ctx)));
}

int jr_rcache_rows_serve(jr_ctx_t *ctx, jr_rcache_req_t *rq, jr_rows_t **out)
{
    jr_rcache_page_t pg;
    jr_rcache_t *c;
    rq->keep = 0;
    if (!jr_rcache_rows_on(ctx) || !(c = cache_for(ctx->cfg)) || !generation(ctx, &rq->gen)) {
        return 0;
    }
    if (!jr_rcache_get(c, rq->key, rq->klen, rq->gen, ctx->pool, &pg)) {
        rq->keep = 1;
        return 0;
    }
    *out = rows_of(ctx->pool, &pg);
    carry_generation(ctx->pool, *out, rq->gen);
    JR_LOG(JR12003, 0, "response cache: a statement's rows taken from generation %" APR_UINT64_T_FMT,
           rq->gen);
    return 1;
}

void jr_rcache_rows_keep(jr_ctx_t *ctx, const jr_rcache_req_t *rq, const jr_rows_t *r)
{
    size_t n;
    char *body, *d;
    jr_rcache_page_t pg;
    int i, j;
    if (!rq->keep) {
        return;
    }
    n = rows_size(r);
    d = (body = apr_palloc(ctx->pool, n)) + sizeof(int);
    pg = (jr_rcache_page_t){r->ncols, body, n, "", 0};
    memcpy(body, &r->nrows, sizeof(int));
    for (i = 0; i < r->ncols; ++i) {
        d = append_z(d, r->names[i]);
    }
    for (j = 0; j < r->nrows; ++j) {
        for (i = 0; i < r->ncols; ++i) {
            *d++ = r->rows[j][i] != NULL;
            d = r->rows[j][i] ? append_z(d, r->rows[j][i]) : d;
        }
    }
    jr_rcache_put(cache_for(ctx->cfg), rq->key, rq->klen, rq->gen, &pg);
}
