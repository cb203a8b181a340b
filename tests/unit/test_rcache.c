/* jr_rcache.h: the store (generations, the byte budget, least recently used first out, threads)
 * and the key (everything an answer depends on). */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <apr_strings.h>

#include "jr_rcache.h"
#include "unit.h"

static jr_rcache_page_t page_of(const char *body, const char *headers, size_t headers_len)
{
    jr_rcache_page_t pg = {200, body, strlen(body), headers, headers_len};
    return pg;
}

static void put(jr_rcache_t *c, const char *key, apr_uint64_t gen, const char *body)
{
    jr_rcache_page_t pg = page_of(body, "", 0);
    jr_rcache_put(c, key, strlen(key), gen, &pg);
}

/* The body kept under key for gen, or NULL. */
static const char *get(jr_rcache_t *c, const char *key, apr_uint64_t gen)
{
    jr_rcache_page_t pg;
    return jr_rcache_get(c, key, strlen(key), gen, unit_pool, &pg) ? pg.body : NULL;
}

START_TEST(a_page_is_served_only_in_its_generation)
{
    jr_rcache_t *c = jr_rcache_create(1 << 20);
    jr_rcache_page_t pg = page_of("[1,2]", "X-Total-Count\0" "2\0", 16), out;
    jr_rcache_stats_t st;
    jr_rcache_put(c, "k", 1, 7, &pg);
    ck_assert(jr_rcache_get(c, "k", 1, 7, unit_pool, &out));
    ck_assert_int_eq(out.status, 200);
    ck_assert_str_eq(out.body, "[1,2]");
    ck_assert_uint_eq(out.body_len, 5);
    ck_assert_uint_eq(out.headers_len, 16);
    ck_assert_int_eq(memcmp(out.headers, "X-Total-Count\0" "2\0", 16), 0);
    ck_assert_ptr_null(get(c, "k", 8)); /* a write came: never again */
    ck_assert_ptr_null(get(c, "k", 7)); /* the page of 7 went with the miss */
    ck_assert_ptr_null(get(c, "other", 7));
    jr_rcache_stats(c, &st);
    ck_assert_uint_eq(st.hits, 1);
    ck_assert_uint_eq(st.misses, 3);
    ck_assert_uint_eq(st.entries, 0);
    ck_assert_uint_eq(st.bytes, 0);
    jr_rcache_destroy(c);
}
END_TEST

START_TEST(an_older_page_does_not_replace_a_newer_one)
{
    jr_rcache_t *c = jr_rcache_create(1 << 20);
    put(c, "k", 9, "new");
    put(c, "k", 8, "old"); /* a reader that read the generation before the last write */
    ck_assert_ptr_null(get(c, "k", 8)); /* nor does an older reader's lookup remove it */
    ck_assert_str_eq(get(c, "k", 9), "new");
    put(c, "k", 10, "newer");
    ck_assert_str_eq(get(c, "k", 10), "newer");
    jr_rcache_destroy(c);
}
END_TEST

START_TEST(the_budget_evicts_the_least_recently_used)
{
    /* 8 shards of 64 KiB and pages of 4 KiB: about 15 fit in a shard, each under an eighth of
     * its budget. */
    jr_rcache_t *c = jr_rcache_create(8 * 64 * 1024);
    char *body = apr_palloc(unit_pool, 4001);
    jr_rcache_stats_t st;
    int i;
    memset(body, 'a', 4000);
    body[4000] = '\0';
    for (i = 0; i < 400; ++i) {
        put(c, apr_psprintf(unit_pool, "page-%d", i), 1, body);
        /* page-0 is read after every store: it stays the most recently used */
        ck_assert_msg(get(c, "page-0", 1) != NULL, "page-0 evicted after %d stores", i);
    }
    jr_rcache_stats(c, &st);
    ck_assert_uint_le(st.bytes, 8 * 64 * 1024);
    ck_assert_uint_gt(st.evictions, 0);
    ck_assert_uint_eq(st.stores, 400);
    ck_assert_ptr_null(get(c, "page-1", 1)); /* the oldest ones went */
    ck_assert_ptr_nonnull(get(c, "page-399", 1));
    jr_rcache_destroy(c);
}
END_TEST

START_TEST(a_page_over_an_eighth_of_its_shard_is_not_kept)
{
    jr_rcache_t *c = jr_rcache_create(8 * 64 * 1024);
    char *big = apr_palloc(unit_pool, 9001);
    memset(big, 'b', 9000);
    big[9000] = '\0';
    put(c, "big", 1, big);
    ck_assert_ptr_null(get(c, "big", 1));
    big[7000] = '\0';
    put(c, "big", 1, big);
    ck_assert_ptr_nonnull(get(c, "big", 1));
    jr_rcache_destroy(c);
}
END_TEST

typedef struct {
    jr_rcache_t *c;
    int id;
    int wrong;
} worker_t;

static void *churn(void *data)
{
    worker_t *w = data;
    apr_pool_t *p;
    int i;
    apr_pool_create(&p, NULL);
    for (i = 0; i < 20000; ++i) {
        char key[32], body[64];
        jr_rcache_page_t pg;
        apr_uint64_t gen = (apr_uint64_t)(i / 100);
        snprintf(key, sizeof(key), "k%d", i % 37);
        snprintf(body, sizeof(body), "%s@%llu", key, (unsigned long long)gen);
        if (jr_rcache_get(w->c, key, strlen(key), gen, p, &pg)) {
            w->wrong += strcmp(pg.body, body) != 0; /* always the key's page of gen */
        } else {
            pg = page_of(body, "", 0);
            jr_rcache_put(w->c, key, strlen(key), gen, &pg);
        }
        if (i % 1000 == 0) {
            apr_pool_clear(p);
        }
    }
    apr_pool_destroy(p);
    return NULL;
}

START_TEST(threads_share_the_store)
{
    enum { N = 8 };
    jr_rcache_t *c = jr_rcache_create(64 * 1024);
    pthread_t t[N];
    worker_t w[N];
    jr_rcache_stats_t st;
    int i;
    for (i = 0; i < N; ++i) {
        w[i] = (worker_t){c, i, 0};
        ck_assert_int_eq(pthread_create(&t[i], NULL, churn, &w[i]), 0);
    }
    for (i = 0; i < N; ++i) {
        pthread_join(t[i], NULL);
        ck_assert_int_eq(w[i].wrong, 0);
    }
    jr_rcache_stats(c, &st);
    ck_assert_uint_gt(st.hits, 0);
    ck_assert_uint_le(st.bytes, 64 * 1024);
    jr_rcache_destroy(c);
}
END_TEST

/* ---- the key ------------------------------------------------------------------------------ */

static jr_config_t cfg_a, cfg_b;

static void base_ctx(jr_ctx_t *c)
{
    memset(c, 0, sizeof(*c));
    c->pool = unit_pool;
    c->cfg = &cfg_a;
    c->iface = JR_IF_V1;
    c->raw_path = "/api/v1/entries";
    c->raw_args = "limit=50";
    c->base_url = "http://127.0.0.1:8080";
    c->who.key_id = 3;
    c->who.role = JR_ROLE_ADMIN;
}

static const char *key_of(const jr_ctx_t *c)
{
    size_t n;
    const char *k = jr_rcache_key(c, &n);
    ck_assert_ptr_nonnull(k);
    ck_assert_uint_eq(n, strlen(k));
    return k;
}

START_TEST(the_key_holds_everything_an_answer_depends_on)
{
    jr_ctx_t a, b;
    const char *ka;
    int i;
    base_ctx(&a);
    ka = key_of(&a);
    base_ctx(&b);
    ck_assert_str_eq(key_of(&b), ka); /* the same request, the same key */
    for (i = 0; i < 11; ++i) {
        base_ctx(&b);
        switch (i) {
        case 0: b.cfg = &cfg_b; break;                        /* another virtual host */
        case 1: b.iface = JR_IF_ADMIN; break;
        case 2: b.raw_path = "/api/v1/students"; break;
        case 3: b.raw_args = "limit=49"; break;
        case 4: b.raw_args = NULL; break;
        case 5: b.who.key_id = 4; break;                      /* another key */
        case 6: b.who.user_id = 3; b.who.key_id = 0; break;   /* a user with the key's id */
        case 7: b.who.role = JR_ROLE_TUTOR; break;
        case 8: b.who.branch_json = "[1]"; break;             /* a key restricted to a branch */
        case 9: b.base_url = "http://other:8080"; break;
        default: b.raw_path = "/api/v1/entries?limit=50"; b.raw_args = ""; break;
        }
        ck_assert_msg(strcmp(key_of(&b), ka) != 0, "variant %d has the same key", i);
    }
    /* Two scopes never meet: every branch versus a list, one list versus another. */
    base_ctx(&a);
    base_ctx(&b);
    a.who.branch_json = "[1,2]";
    b.who.branch_json = "[1]";
    ck_assert_str_ne(key_of(&a), key_of(&b));
    /* Lengths delimit the parts: moving text from the path into the query changes the key. */
    a.raw_path = "/a";
    a.raw_args = "b";
    b.raw_path = "/a b";
    b.raw_args = "";
    ck_assert_str_ne(key_of(&a), key_of(&b));
    a.raw_path = NULL;
    ck_assert_ptr_null(jr_rcache_key(&a, &(size_t){0}));
}
END_TEST

Suite *suite_rcache(void)
{
    Suite *s = suite_create("rcache");
    TCase *tc = tcase_create("rcache");
    tcase_add_checked_fixture(tc, unit_pool_setup, unit_pool_teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, a_page_is_served_only_in_its_generation);
    tcase_add_test(tc, an_older_page_does_not_replace_a_newer_one);
    tcase_add_test(tc, the_budget_evicts_the_least_recently_used);
    tcase_add_test(tc, a_page_over_an_eighth_of_its_shard_is_not_kept);
    tcase_add_test(tc, threads_share_the_store);
    tcase_add_test(tc, the_key_holds_everything_an_answer_depends_on);
    suite_add_tcase(s, tc);
    return s;
}
