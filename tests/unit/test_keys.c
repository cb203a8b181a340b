/* jr_keys.h: the format of API keys (generation and the well-formedness check). */
#include <string.h>

#include <apr_pools.h>
#include <apr_strings.h>

#include "jr_keys.h"
#include "unit.h"

static const char b62[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

static apr_pool_t *pool;

static void setup(void)
{
    ck_assert_int_eq(apr_pool_create(&pool, NULL), APR_SUCCESS);
}

static void teardown(void)
{
    apr_pool_destroy(pool);
    pool = NULL;
}

static int is_b62(char c)
{
    return c != '\0' && strchr(b62, c) != NULL;
}

/* A fresh key, checked for shape. */
static char *new_key(void)
{
    char *k = jr_key_generate(pool);
    size_t i;
    ck_assert_ptr_nonnull(k);
    ck_assert_uint_eq(strlen(k), 53);
    ck_assert_msg(!strncmp(k, "wsk_", 4), "bad prefix: %s", k);
    for (i = 4; i < 53; ++i) {
        ck_assert_msg(is_b62(k[i]), "non-base62 character at %zu: %s", i, k);
    }
    return k;
}

/* Another base62 character than c. */
static char other_b62(char c)
{
    return c == 'a' ? 'b' : 'a';
}

START_TEST(generate_shape)
{
    char *k = new_key();
    ck_assert_int_eq(JR_KEY_LEN, 53);
    ck_assert_int_eq(jr_key_wellformed(k), 1);
}
END_TEST

START_TEST(generate_differs)
{
    char *a = new_key(), *b = new_key();
    ck_assert_str_ne(a, b);
    /* Not just the checksum: the random bodies differ. */
    ck_assert_int_ne(strncmp(a, b, 4 + JR_KEY_BODY_LEN), 0);
}
END_TEST

START_TEST(generate_many_wellformed)
{
    int i;
    for (i = 0; i < 1000; ++i) {
        char *k = new_key();
        ck_assert_msg(jr_key_wellformed(k) == 1, "generated key #%d refused: %s", i, k);
    }
}
END_TEST

START_TEST(wellformed_rejects_basic)
{
    char *k = new_key();
    char *tok = apr_pstrdup(pool, "0123456789abcdef0123456789abcdef"
                                  "0123456789abcdef0123456789abcdef");
    ck_assert_uint_eq(strlen(tok), 64);
    ck_assert_int_eq(jr_key_wellformed(NULL), 0);
    ck_assert_int_eq(jr_key_wellformed(""), 0);
    ck_assert_int_eq(jr_key_wellformed("wsk_"), 0);
    ck_assert_int_eq(jr_key_wellformed(tok), 0);           /* a session token */
    ck_assert_int_eq(jr_key_wellformed(tok + 11), 0);      /* 53 hex characters */
    ck_assert_int_eq(jr_key_wellformed(k), 1);
}
END_TEST

START_TEST(wellformed_rejects_wrong_prefix)
{
    char *k = new_key();
    static const char *const prefixes[] = {"wsx_", "WSK_", "wsk-", "xsk_", "wsk0"};
    size_t i;
    for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); ++i) {
        char *c = apr_pstrdup(pool, k);
        memcpy(c, prefixes[i], 4);
        ck_assert_msg(jr_key_wellformed(c) == 0, "accepted %s", c);
    }
}
END_TEST

START_TEST(wellformed_rejects_changed_body)
{
    static const int pos[] = {4, 5, 10, 20, 30, 40, 45, 46};
    char *k = new_key();
    size_t i;
    for (i = 0; i < sizeof(pos) / sizeof(pos[0]); ++i) {
        char *c = apr_pstrdup(pool, k);
        c[pos[i]] = other_b62(c[pos[i]]);
        ck_assert_msg(jr_key_wellformed(c) == 0, "body change at %d accepted: %s", pos[i], c);
    }
    /* Every position, with a few replacement characters each. */
    for (i = 4; i < 4 + JR_KEY_BODY_LEN; ++i) {
        const char *repl = "0Zz9";
        for (; *repl; ++repl) {
            char *c = apr_pstrdup(pool, k);
            if (c[i] == *repl) {
                continue;
            }
            c[i] = *repl;
            ck_assert_msg(jr_key_wellformed(c) == 0, "body change at %zu accepted: %s", i, c);
        }
    }
    /* Two neighbours swapped. */
    for (i = 4; i + 1 < 4 + JR_KEY_BODY_LEN; ++i) {
        char *c = apr_pstrdup(pool, k), t;
        if (c[i] == c[i + 1]) {
            continue;
        }
        t = c[i];
        c[i] = c[i + 1];
        c[i + 1] = t;
        ck_assert_msg(jr_key_wellformed(c) == 0, "swap at %zu accepted: %s", i, c);
    }
}
END_TEST

START_TEST(wellformed_rejects_changed_checksum)
{
    char *k = new_key();
    size_t i;
    for (i = 4 + JR_KEY_BODY_LEN; i < JR_KEY_LEN; ++i) {
        char *c = apr_pstrdup(pool, k);
        c[i] = other_b62(c[i]);
        ck_assert_msg(jr_key_wellformed(c) == 0, "checksum change at %zu accepted: %s", i, c);
    }
}
END_TEST

START_TEST(wellformed_rejects_wrong_length)
{
    char *k = new_key();
    char *shorter = apr_pstrndup(pool, k, JR_KEY_LEN - 1);
    char *longer = apr_pstrcat(pool, k, "a", NULL);
    char *longer0 = apr_pstrcat(pool, "0", k, NULL);
    ck_assert_uint_eq(strlen(shorter), 52);
    ck_assert_uint_eq(strlen(longer), 54);
    ck_assert_int_eq(jr_key_wellformed(shorter), 0);
    ck_assert_int_eq(jr_key_wellformed(longer), 0);
    ck_assert_int_eq(jr_key_wellformed(longer0), 0);
    ck_assert_int_eq(jr_key_wellformed(apr_pstrcat(pool, k, "\n", NULL)), 0);
    ck_assert_int_eq(jr_key_wellformed(apr_pstrcat(pool, k, " ", NULL)), 0);
    /* Body one short, checksum intact. */
    ck_assert_int_eq(jr_key_wellformed(apr_pstrcat(pool, apr_pstrndup(pool, k, 46),
                                                   k + 47, NULL)),
                     0);
    ck_assert_int_eq(jr_key_wellformed(k), 1);
}
END_TEST

START_TEST(wellformed_rejects_non_base62)
{
    static const char bad[] = {'-', '_', ' ', '+', '/', '=', '.', '\x7f', '\xc3'};
    static const int pos[] = {4, 25, 46, 47, 52};
    char *k = new_key();
    size_t i, j;
    for (i = 0; i < sizeof(bad); ++i) {
        for (j = 0; j < sizeof(pos) / sizeof(pos[0]); ++j) {
            char *c = apr_pstrdup(pool, k);
            c[pos[j]] = bad[i];
            ck_assert_msg(jr_key_wellformed(c) == 0, "'%c' at %d accepted", bad[i], pos[j]);
        }
    }
}
END_TEST

/* The first body character is the most significant base62 digit of a 256-bit number:
 * 2^256 / 62^42 = 60.7, so it ranges over '0'..'y' (digits 0..60; 'y' with p = 1.16%) and
 * can never be 'z'. Over 2000 keys each of the 61 possible symbols appears (the rarest, 'y',
 * is missed with p < 1e-10); a 'z' would mean the digits are not most significant first. */
START_TEST(first_body_symbol_covers_base62)
{
    int seen[62] = {0}, i;
    for (i = 0; i < 2000; ++i) {
        char *k = jr_key_generate(pool);
        const char *p;
        ck_assert_ptr_nonnull(k);
        p = is_b62(k[4]) ? strchr(b62, k[4]) : NULL;
        ck_assert_msg(p != NULL, "bad first body character in %s", k);
        ++seen[p - b62];
    }
    for (i = 0; i < 61; ++i) {
        ck_assert_msg(seen[i] > 0, "'%c' never appears first in 2000 keys", b62[i]);
    }
    ck_assert_msg(seen[61] == 0, "'z' appears first in %d keys: 43 digits of a 256-bit number"
                  " cannot start with 61", seen[61]);
}
END_TEST

Suite *suite_keys(void)
{
    Suite *s = suite_create("keys");
    TCase *tc = tcase_create("keys");
    tcase_add_checked_fixture(tc, setup, teardown);
    /* A thousand keys take well under a second, but past Check's 4 s default under the
     * sanitizers on a machine busy with the integration suite. */
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, generate_shape);
    tcase_add_test(tc, generate_differs);
    tcase_add_test(tc, generate_many_wellformed);
    tcase_add_test(tc, wellformed_rejects_basic);
    tcase_add_test(tc, wellformed_rejects_wrong_prefix);
    tcase_add_test(tc, wellformed_rejects_changed_body);
    tcase_add_test(tc, wellformed_rejects_changed_checksum);
    tcase_add_test(tc, wellformed_rejects_wrong_length);
    tcase_add_test(tc, wellformed_rejects_non_base62);
    tcase_add_test(tc, first_body_symbol_covers_base62);
    suite_add_tcase(s, tc);
    return s;
}
