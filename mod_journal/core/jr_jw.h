/* A streaming JSON writer: appends to one growing buffer in pool memory, no tree. For list
 * responses and hot paths; jansson stays for parsing and small documents. Callers write
 * well-formed structures (begin/end pairs); commas are placed automatically. */
#ifndef JR_JW_H
#define JR_JW_H

#include <apr_pools.h>

/* The initial size of the open-container stack; it grows as needed (no depth limit). */
#define JR_JW_DEPTH 16

typedef struct jr_jw {
    apr_pool_t *pool;
    char *buf;
    size_t len, cap;
    int depth;
    unsigned char *first; /* per open container: 1 while it is still empty */
    int first_cap;
    int after_key;
} jr_jw_t;

void jr_jw_init(jr_jw_t *w, apr_pool_t *p, size_t initial);

void jr_jw_obj(jr_jw_t *w);
void jr_jw_obj_end(jr_jw_t *w);
void jr_jw_arr(jr_jw_t *w);
void jr_jw_arr_end(jr_jw_t *w);
void jr_jw_key(jr_jw_t *w, const char *key);

void jr_jw_str(jr_jw_t *w, const char *s);  /* NULL writes null */
void jr_jw_int(jr_jw_t *w, long long v);
void jr_jw_int_text(jr_jw_t *w, const char *digits); /* a decimal from the database; NULL: null */
void jr_jw_bool(jr_jw_t *w, int v);
void jr_jw_null(jr_jw_t *w);
void jr_jw_raw(jr_jw_t *w, const char *json); /* already-serialised JSON value */

/* key + value shorthands */
void jr_jw_kstr(jr_jw_t *w, const char *key, const char *s);
void jr_jw_kint(jr_jw_t *w, const char *key, long long v);
void jr_jw_kint_text(jr_jw_t *w, const char *key, const char *digits);
void jr_jw_kbool(jr_jw_t *w, const char *key, int v);

/* The finished document (NUL-terminated) and its length. */
const char *jr_jw_done(jr_jw_t *w, size_t *len);

#endif
