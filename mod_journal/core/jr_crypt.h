/* Randomness, digests and password hashing: the only file that talks to OpenSSL. */
#ifndef JR_CRYPT_H
#define JR_CRYPT_H

#include <apr_pools.h>

/* Call once before threads start (fetches the digest implementation). */
int jr_crypt_init(void);

/* Frees what OpenSSL keeps for the calling thread (its random generators). For threads that
 * OpenSSL does not see end, such as mod_watchdog's: their state was reported as leaked. */
void jr_crypt_thread_end(void);

/* n random bytes from OpenSSL's CSPRNG. 0 on success. */
int jr_random_bytes(unsigned char *buf, size_t n);

/* Lower-case hex of n bytes. */
char *jr_hex(apr_pool_t *p, const unsigned char *buf, size_t n);

/* SHA-256 of s as 64 lower-case hex characters. */
char *jr_sha256_hex(apr_pool_t *p, const char *s, size_t len);

/* A new session token: 32 random bytes, hex encoded (64 characters). NULL on RNG failure. */
char *jr_new_token(apr_pool_t *p);

/* A random password of n characters from an unambiguous alphabet. */
char *jr_random_password(apr_pool_t *p, size_t n);

/* Constant-time comparison of two equal-length buffers. */
int jr_secure_equal(const void *a, const void *b, size_t n);

/* bcrypt through APR-util. Returns NULL on failure. */
char *jr_password_hash(apr_pool_t *p, const char *password, int cost);

/* 1 when password matches hash. */
int jr_password_check(const char *password, const char *hash);

#endif
