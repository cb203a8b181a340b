/* Percent-decoding and query strings (jr_util.c), and the small string helpers next to them.
 * Oracles: encoding then decoding gives the input back, in both modes; decoding never grows
 * a string; a refused query string says why. */
#include <ctype.h>

#include <apr_strings.h>
#include <apr_tables.h>

#include "fuzz.h"
#include "jr_util.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fuzz_root();
    return 0;
}

static int table_entry_ok(void *rec, const char *key, const char *value)
{
    FUZZ_CHECK(key && *key && value);
    return 1;
}

static void strings(apr_pool_t *p, const char *s)
{
    const char *t = jr_trim(p, s), *c;
    size_t n = strlen(t);
    long long v;

    FUZZ_CHECK(n <= strlen(s));
    FUZZ_CHECK(n == 0 || (!isspace((unsigned char)t[0]) && !isspace((unsigned char)t[n - 1])));
    t = jr_ascii_filename(p, s);
    FUZZ_CHECK(strlen(t) == strlen(s));
    for (c = t; *c; ++c) {
        FUZZ_CHECK(*c >= 0x20 && *c <= 0x7e && *c != '"' && *c != '\\');
    }
    if (jr_parse_int64(s, -1000000, 1000000, &v) == 0) {
        FUZZ_CHECK(v >= -1000000 && v <= 1000000);
        FUZZ_CHECK(jr_parse_int64(jr_i64(p, v), -1000000, 1000000, &v) == 0);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    apr_pool_t *p = fuzz_pool();
    const char *s = fuzz_cstr(p, data, size), *err = NULL, *enc, *dec;
    apr_table_t *q;
    int form;

    for (form = 0; form <= 1; ++form) {
        dec = jr_url_decode(p, s, form);
        FUZZ_CHECK(!dec || strlen(dec) <= strlen(s));
    }
    enc = jr_url_encode(p, s);
    FUZZ_CHECK(strspn(enc, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~%") ==
               strlen(enc));
    for (form = 0; form <= 1; ++form) {
        dec = jr_url_decode(p, enc, form);
        FUZZ_CHECK(dec && !strcmp(dec, s));
    }
    q = jr_parse_query(p, s, &err);
    FUZZ_CHECK(q || (err && *err));
    if (q) {
        apr_table_do(table_entry_ok, NULL, q, NULL);
    }
    strings(p, s);
    apr_pool_destroy(p);
    return 0;
}
