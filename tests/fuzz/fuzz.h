/* What the fuzz targets share: libFuzzer's entry points, APR set up once, a fresh pool per
 * input, and checks that abort (libFuzzer and the replay driver both report an abort as a
 * crash). Built twice: with clang and libFuzzer (scripts/fuzz.sh), and with the project's
 * compiler and sanitizers around tests/fuzz/replay.c for make check. */
#ifndef JR_FUZZ_H
#define JR_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <apr_general.h>
#include <apr_pools.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond)                                                                     \
    do {                                                                                     \
        if (!(cond)) {                                                                       \
            fprintf(stderr, "fuzz check failed: %s (%s:%d)\n", #cond, __FILE__, __LINE__); \
            abort();                                                                         \
        }                                                                                    \
    } while (0)

/* The parent of every input's pool. */
static inline apr_pool_t *fuzz_root(void)
{
    static apr_pool_t *root;
    if (!root) {
        FUZZ_CHECK(apr_initialize() == APR_SUCCESS);
        atexit(apr_terminate);
        FUZZ_CHECK(apr_pool_create(&root, NULL) == APR_SUCCESS);
    }
    return root;
}

static inline apr_pool_t *fuzz_pool(void)
{
    apr_pool_t *p = NULL;
    FUZZ_CHECK(apr_pool_create(&p, fuzz_root()) == APR_SUCCESS);
    return p;
}

/* The input as a C string: the parsers under test take NUL-terminated text, so bytes after an
 * embedded NUL are what a host could never pass (httpd stops at the NUL too). */
static inline char *fuzz_cstr(apr_pool_t *p, const uint8_t *data, size_t size)
{
    char *s = apr_palloc(p, size + 1);
    memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

/* Cuts *s at the first '\n': returns the line and moves *s past it (NULL at the end). */
static inline char *fuzz_line(char **s)
{
    char *line = *s, *nl;
    if (!line) {
        return NULL;
    }
    nl = strchr(line, '\n');
    if (nl) {
        *nl = '\0';
        *s = nl + 1;
    } else {
        *s = NULL;
    }
    return line;
}

#endif
