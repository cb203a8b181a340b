/* jr_crypt.h: digests, tokens, random passwords, constant-time comparison, bcrypt. */
#include <string.h>

#include <apr_pools.h>

#include "jr_crypt.h"
#include "unit.h"

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

static int is_lower_hex(const char *s, size_t len)
{
    size_t i;
    if (strlen(s) != len) {
        return 0;
    }
    for (i = 0; i < len; ++i) {
        if (!strchr("0123456789abcdef", s[i]) || s[i] == '\0') {
            return 0;
        }
    }
    return 1;
}

START_TEST(sha256_known_vectors)
{
    ck_assert_int_eq(jr_crypt_init(), 0); /* idempotent */
    ck_assert_str_eq(jr_sha256_hex(pool, "", 0),
                     "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    ck_assert_str_eq(jr_sha256_hex(pool, "abc", 3),
                     "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    ck_assert_str_eq(
        jr_sha256_hex(pool, "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56),
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    /* len is honoured: bytes after it do not count, embedded NULs do. */
    ck_assert_str_eq(jr_sha256_hex(pool, "abcdef", 3),
                     "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    ck_assert_str_ne(jr_sha256_hex(pool, "a\0b", 3), jr_sha256_hex(pool, "a", 1));
}
END_TEST

START_TEST(hex_encoding)
{
    static const unsigned char bytes[] = {0x00, 0x01, 0x7f, 0x80, 0xab, 0xff, 0x10};
    ck_assert_str_eq(jr_hex(pool, bytes, sizeof(bytes)), "00017f80abff10");
    ck_assert_str_eq(jr_hex(pool, bytes, 1), "00");
    ck_assert_str_eq(jr_hex(pool, bytes, 0), "");
}
END_TEST

START_TEST(random_bytes_fill)
{
    unsigned char a[32], b[32];
    memset(a, 0, sizeof(a));
    memset(b, 0, sizeof(b));
    ck_assert_int_eq(jr_random_bytes(a, sizeof(a)), 0);
    ck_assert_int_eq(jr_random_bytes(b, sizeof(b)), 0);
    ck_assert(memcmp(a, b, sizeof(a)) != 0);
    ck_assert_int_eq(jr_random_bytes(a, 0), 0);
}
END_TEST

START_TEST(new_token_is_64_lower_hex)
{
    char *t1 = jr_new_token(pool), *t2 = jr_new_token(pool);
    ck_assert_ptr_nonnull(t1);
    ck_assert_ptr_nonnull(t2);
    ck_assert_msg(is_lower_hex(t1, 64), "bad token %s", t1);
    ck_assert_msg(is_lower_hex(t2, 64), "bad token %s", t2);
    ck_assert_str_ne(t1, t2);
}
END_TEST

START_TEST(random_password_alphabet)
{
    static const char alphabet[] =
        "abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789";
    int seen[256];
    char *pw;
    size_t i;

    memset(seen, 0, sizeof(seen));
    ck_assert_str_eq(jr_random_password(pool, 0), "");
    pw = jr_random_password(pool, 16);
    ck_assert_ptr_nonnull(pw);
    ck_assert_uint_eq(strlen(pw), 16);
    ck_assert_str_ne(pw, jr_random_password(pool, 16));

    pw = jr_random_password(pool, 20000);
    ck_assert_ptr_nonnull(pw);
    ck_assert_uint_eq(strlen(pw), 20000);
    for (i = 0; i < 20000; ++i) {
        unsigned char c = (unsigned char)pw[i];
        ck_assert_msg(!strchr("0O1lI", c), "ambiguous character '%c'", c);
        ck_assert_msg(strchr(alphabet, c) != NULL, "unexpected character 0x%02x", c);
        seen[c]++;
    }
    /* 20000 draws over 57 symbols: every symbol shows up (about 350 times each). */
    for (i = 0; i < sizeof(alphabet) - 1; ++i) {
        ck_assert_msg(seen[(unsigned char)alphabet[i]] > 150, "'%c' seen %d times", alphabet[i],
                      seen[(unsigned char)alphabet[i]]);
    }
}
END_TEST

START_TEST(secure_equal)
{
    ck_assert_int_eq(jr_secure_equal("abcdef", "abcdef", 6), 1);
    ck_assert_int_eq(jr_secure_equal("abcdef", "abcdeg", 6), 0);
    ck_assert_int_eq(jr_secure_equal("xbcdef", "abcdef", 6), 0);
    ck_assert_int_eq(jr_secure_equal("abcdef", "abcxyz", 3), 1); /* only n bytes count */
    ck_assert_int_eq(jr_secure_equal("a", "b", 0), 1);
    ck_assert_int_eq(jr_secure_equal("a\0b", "a\0c", 3), 0);
}
END_TEST

START_TEST(bcrypt_round_trip)
{
    char *h1 = jr_password_hash(pool, "correct horse", 4);
    char *h2 = jr_password_hash(pool, "correct horse", 4);
    ck_assert_ptr_nonnull(h1);
    ck_assert_ptr_nonnull(h2);
    ck_assert_msg(!strncmp(h1, "$2y$04$", 7), "unexpected hash %s", h1);
    ck_assert_uint_eq(strlen(h1), 60);
    ck_assert_str_ne(h1, h2); /* salted */
    ck_assert_int_eq(jr_password_check("correct horse", h1), 1);
    ck_assert_int_eq(jr_password_check("correct horse", h2), 1);
    ck_assert_int_eq(jr_password_check("correct horsf", h1), 0);
    ck_assert_int_eq(jr_password_check("Correct horse", h1), 0);
    ck_assert_int_eq(jr_password_check("", h1), 0);
    ck_assert_int_eq(jr_password_check("correct horse", "not a hash"), 0);
    ck_assert_int_eq(jr_password_check("correct horse", ""), 0);
}
END_TEST

START_TEST(bcrypt_empty_and_utf8)
{
    char *h = jr_password_hash(pool, "", 4);
    ck_assert_ptr_nonnull(h);
    ck_assert_int_eq(jr_password_check("", h), 1);
    ck_assert_int_eq(jr_password_check(" ", h), 0);
    h = jr_password_hash(pool, "p\xC3\xA4ssw\xC3\xB6rd", 4);
    ck_assert_ptr_nonnull(h);
    ck_assert_int_eq(jr_password_check("p\xC3\xA4ssw\xC3\xB6rd", h), 1);
    ck_assert_int_eq(jr_password_check("passwrd", h), 0);
}
END_TEST

START_TEST(bcrypt_bad_cost_fails)
{
    ck_assert_ptr_null(jr_password_hash(pool, "secret", 3));
    ck_assert_ptr_null(jr_password_hash(pool, "secret", 32));
}
END_TEST

Suite *suite_crypt(void)
{
    Suite *s = suite_create("crypt");
    TCase *tc = tcase_create("crypt");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, sha256_known_vectors);
    tcase_add_test(tc, hex_encoding);
    tcase_add_test(tc, random_bytes_fill);
    tcase_add_test(tc, new_token_is_64_lower_hex);
    tcase_add_test(tc, random_password_alphabet);
    tcase_add_test(tc, secure_equal);
    tcase_add_test(tc, bcrypt_round_trip);
    tcase_add_test(tc, bcrypt_empty_and_utf8);
    tcase_add_test(tc, bcrypt_bad_cost_fails);
    suite_add_tcase(s, tc);
    return s;
}
