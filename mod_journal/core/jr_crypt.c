#include <stdlib.h>
#include <string.h>

#include <apr_md5.h>
#include <apr_strings.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include "jr_crypt.h"

static EVP_MD *sha256_md;

/* httpd unloads the module at every restart and at stop, and this pointer goes with it: give
 * the digest back first. atexit() in a shared object runs when the object is unloaded (or at
 * exit), and before OpenSSL's own exit handler, which was registered earlier by the fetch. */
static void crypt_release(void)
{
    EVP_MD_free(sha256_md);
    sha256_md = NULL;
}

int jr_crypt_init(void)
{
    if (!sha256_md && (sha256_md = EVP_MD_fetch(NULL, "SHA256", NULL)) != NULL) {
        atexit(crypt_release);
    }
    return sha256_md ? 0 : -1;
}

void jr_crypt_thread_end(void)
{
    OPENSSL_thread_stop();
}

int jr_random_bytes(unsigned char *buf, size_t n)
{
    return RAND_bytes(buf, (int)n) == 1 ? 0 : -1;
}

char *jr_hex(apr_pool_t *p, const unsigned char *buf, size_t n)
{
    static const char digits[] = "0123456789abcdef";
    char *out = apr_palloc(p, n * 2 + 1);
    size_t i;
    for (i = 0; i < n; ++i) {
        out[2 * i] = digits[buf[i] >> 4];
        out[2 * i + 1] = digits[buf[i] & 15];
    }
    out[n * 2] = '\0';
    return out;
}

char *jr_sha256_hex(apr_pool_t *p, const char *s, size_t len)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    if (!sha256_md && jr_crypt_init() != 0) {
        return NULL;
    }
    if (EVP_Digest(s, len, md, &mdlen, sha256_md, NULL) != 1) {
        return NULL;
    }
    return jr_hex(p, md, mdlen);
}

char *jr_new_token(apr_pool_t *p)
{
    unsigned char raw[32];
    char *hex;
    if (jr_random_bytes(raw, sizeof(raw)) != 0) {
        return NULL;
    }
    hex = jr_hex(p, raw, sizeof(raw));
    OPENSSL_cleanse(raw, sizeof(raw));
    return hex;
}

char *jr_random_password(apr_pool_t *p, size_t n)
{
    /* No 0/O, 1/l/I: the password is read off a terminal once. 57 symbols. */
    static const char alphabet[] = "abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789";
    const size_t k = sizeof(alphabet) - 1;
    char *out = apr_palloc(p, n + 1);
    size_t i = 0;
    while (i < n) {
        unsigned char b;
        if (jr_random_bytes(&b, 1) != 0) {
            return NULL;
        }
        if (b < 256 - (256 % k)) { /* rejection sampling keeps it uniform */
            out[i++] = alphabet[b % k];
        }
    }
    out[n] = '\0';
    return out;
}

int jr_secure_equal(const void *a, const void *b, size_t n)
{
    return CRYPTO_memcmp(a, b, n) == 0;
}

char *jr_password_hash(apr_pool_t *p, const char *password, int cost)
{
    unsigned char salt[16];
    char out[128];
    if (jr_random_bytes(salt, sizeof(salt)) != 0) {
        return NULL;
    }
    if (apr_bcrypt_encode(password, (unsigned int)cost, salt, sizeof(salt), out, sizeof(out)) !=
        APR_SUCCESS) {
        return NULL;
    }
    return apr_pstrdup(p, out);
}

int jr_password_check(const char *password, const char *hash)
{
    return apr_password_validate(password, hash) == APR_SUCCESS;
}
