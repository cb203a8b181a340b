/* A streaming JSON writer: appends to one growing buffer in pool memory, no tree. For list
 * responses and hot paths; jansson stays for parsing and small documents. Callers write
 * well-formed structures (begin/end pairs); commas are placed automatically.
 *
 * With a flush callback the buffer is handed on (to the client) whenever it would pass
 * JR_JW_FLUSH_AT bytes and is then reused, so a long list costs one buffer, not its whole
 * size. Without one the whole document stays in the buffer. */
#ifndef JR_JW_H
#define JR_JW_H

#include <apr_pools.h>

/* The initial size of the open-container stack; it grows as needed (no depth limit). */
#define JR_JW_DEPTH 16

/* Bytes the buffer holds before they are handed to the flush callback. */
#define JR_JW_FLUSH_AT (64 * 1024)

/* Takes len bytes of the document; returns 0, or non-zero when they cannot be delivered (the
 * writer then drops everything it writes from there on). */
typedef int jr_jw_flush_fn(void *baton, const char *data, size_t len);

typedef struct jr_jw {
    apr_pool_t *pool;
    char *buf;
    size_t len, cap;
    size_t lim;      /* writes beyond it take the slow path: cap, or at most flush_at */
    size_t flush_at; /* JR_JW_FLUSH_AT, or a larger first flush (jr_jw_hold) */
    jr_jw_flush_fn *flush;
    void *flush_baton;
    long long sent; /* bytes handed to flush so far */
    int failed;     /* flush failed: the rest is dropped */
    int depth;
    unsigned char *first; /* per open container: 1 while it is still empty */
    int first_cap;
    int after_key;
} jr_jw_t;

/* initial is the buffer's first size, at most JR_JW_FLUSH_AT (it doubles as needed). */
void jr_jw_init(jr_jw_t *w, apr_pool_t *p, size_t initial);

/* From now on, hands the buffer to fn every JR_JW_FLUSH_AT bytes (NULL fn: never). */
void jr_jw_set_flush(jr_jw_t *w, jr_jw_flush_fn *fn, void *baton);
/* The first flush waits until the document passes bytes (later ones come every
 * JR_JW_FLUSH_AT): a document whose headers are known only at its end (a page's Link) leaves
 * whole up to that size. No effect once something was flushed. */
void jr_jw_hold(jr_jw_t *w, size_t bytes);
/* 1 once part of the document has left through the flush callback (or was dropped). */
int jr_jw_streamed(const jr_jw_t *w);

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

/* The finished document (NUL-terminated) and its length; after flushes, the part not yet
 * handed on. */
const char *jr_jw_done(jr_jw_t *w, size_t *len);

#endif
