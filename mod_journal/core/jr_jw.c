#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "jr_jw.h"

/* Where the next write leaves the fast path: the end of the buffer, or the flush point. */
static void set_lim(jr_jw_t *w)
{
    w->lim = w->flush && w->cap > w->flush_at ? w->flush_at : w->cap;
}

static void flush_now(jr_jw_t *w)
{
    if (!w->failed && w->flush(w->flush_baton, w->buf, w->len) != 0) {
        w->failed = 1;
    }
    w->sent += (long long)w->len;
    w->len = 0;
    w->flush_at = JR_JW_FLUSH_AT; /* a hold (jr_jw_hold) ends with the first flush */
}

/* The slow path of reserve: hand the bytes on when they would pass the flush point, and
 * grow the buffer when the write still does not fit (a string larger than the buffer). */
static void grow(jr_jw_t *w, size_t more)
{
    if (w->flush && w->len > 0 && w->len + more + 1 > w->flush_at) {
        flush_now(w);
    }
    if (w->len + more + 1 > w->cap) {
        size_t cap = w->cap * 2;
        char *bigger;
        while (cap < w->len + more + 1) {
            cap *= 2;
        }
        bigger = apr_palloc(w->pool, cap);
        memcpy(bigger, w->buf, w->len);
        w->buf = bigger;
        w->cap = cap;
    }
    set_lim(w);
}

static inline void reserve(jr_jw_t *w, size_t more)
{
    if (w->len + more + 1 > w->lim) {
        grow(w, more);
    }
}

static void put(jr_jw_t *w, const char *s, size_t n)
{
    reserve(w, n);
    memcpy(w->buf + w->len, s, n);
    w->len += n;
}

static void putc1(jr_jw_t *w, char c)
{
    reserve(w, 1);
    w->buf[w->len++] = c;
}

/* The separator before a value: none after a key, a comma after a sibling. */
static void value_start(jr_jw_t *w)
{
    if (w->after_key) {
        w->after_key = 0;
        return;
    }
    if (w->depth > 0) {
        if (!w->first[w->depth - 1]) {
            putc1(w, ',');
        }
        w->first[w->depth - 1] = 0;
    }
}

void jr_jw_init(jr_jw_t *w, apr_pool_t *p, size_t initial)
{
    memset(w, 0, sizeof(*w));
    w->pool = p;
    /* A larger document grows by doubling; a streamed one never needs more. */
    w->cap = initial < 64 ? 64 : initial > JR_JW_FLUSH_AT ? JR_JW_FLUSH_AT : initial;
    w->buf = apr_palloc(p, w->cap);
    w->lim = w->cap;
    w->flush_at = JR_JW_FLUSH_AT;
    w->first_cap = JR_JW_DEPTH;
    w->first = apr_palloc(p, (apr_size_t)w->first_cap);
}

static void open_(jr_jw_t *w, char c)
{
    value_start(w);
    putc1(w, c);
    if (w->depth == w->first_cap) { /* no depth limit: the stack grows */
        unsigned char *bigger = apr_palloc(w->pool, (apr_size_t)w->first_cap * 2);
        memcpy(bigger, w->first, (size_t)w->first_cap);
        w->first = bigger;
        w->first_cap *= 2;
    }
    w->first[w->depth++] = 1;
}

static void close_(jr_jw_t *w, char c)
{
    --w->depth;
    putc1(w, c);
}

void jr_jw_obj(jr_jw_t *w)
{
    open_(w, '{');
}

void jr_jw_obj_end(jr_jw_t *w)
{
    close_(w, '}');
}

void jr_jw_arr(jr_jw_t *w)
{
    open_(w, '[');
}

void jr_jw_arr_end(jr_jw_t *w)
{
    close_(w, ']');
}

/* 1 for the bytes a JSON string must escape (and NUL, the end). */
static const unsigned char escape_me[256] = {
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0,
};

/* Skips the bytes that need no escaping: eight at a time while a whole word lies before end
 * (the usual zero-byte tests find a byte below 0x20, a '"' or a '\\' in a word), then byte
 * by byte up to the next byte to escape or the terminating NUL. Bytes >= 0x80 are UTF-8
 * (validated when the data came in) and pass. */
static const unsigned char *plain_run(const unsigned char *p, const unsigned char *end)
{
    const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
    while (end - p >= 8) {
        uint64_t x, quote, slash;
        memcpy(&x, p, sizeof(x));
        quote = x ^ (ones * '"');
        slash = x ^ (ones * '\\');
        if (((x - ones * 0x20) & ~x & highs) | ((quote - ones) & ~quote & highs) |
            ((slash - ones) & ~slash & highs)) {
            break;
        }
        p += 8;
    }
    while (!escape_me[*p]) {
        ++p;
    }
    return p;
}

static void put_string(jr_jw_t *w, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)s, *run = p;
    const unsigned char *end = p + strlen(s);
    putc1(w, '"');
    for (;; ++p) {
        p = plain_run(p, end);
        if (!*p) {
            break;
        }
        put(w, (const char *)run, (size_t)(p - run));
        switch (*p) {
        case '"': put(w, "\\\"", 2); break;
        case '\\': put(w, "\\\\", 2); break;
        case '\n': put(w, "\\n", 2); break;
        case '\r': put(w, "\\r", 2); break;
        case '\t': put(w, "\\t", 2); break;
        case '\b': put(w, "\\b", 2); break;
        case '\f': put(w, "\\f", 2); break;
        default: {
            char u[6] = {'\\', 'u', '0', '0', hex[*p >> 4], hex[*p & 15]};
            put(w, u, 6);
        }
        }
        run = p + 1;
    }
    put(w, (const char *)run, (size_t)(p - run));
    putc1(w, '"');
}

void jr_jw_key(jr_jw_t *w, const char *key)
{
    value_start(w);
    put_string(w, key);
    putc1(w, ':');
    w->after_key = 1;
}

void jr_jw_str(jr_jw_t *w, const char *s)
{
    if (!s) {
        jr_jw_null(w);
        return;
    }
    value_start(w);
    put_string(w, s);
}

void jr_jw_int(jr_jw_t *w, long long v)
{
    char num[24];
    int n = snprintf(num, sizeof(num), "%lld", v);
    value_start(w);
    put(w, num, (size_t)n);
}

/* A JSON integer: -?(0|[1-9][0-9]*). */
static int json_integer_text(const char *d)
{
    if (*d == '-') {
        ++d;
    }
    if (*d == '0') {
        return d[1] == '\0';
    }
    if (*d < '1' || *d > '9') {
        return 0;
    }
    for (++d; *d; ++d) {
        if (*d < '0' || *d > '9') {
            return 0;
        }
    }
    return 1;
}

void jr_jw_int_text(jr_jw_t *w, const char *digits)
{
    if (!digits || !json_integer_text(digits)) {
        jr_jw_null(w); /* never emit a non-number where a number belongs */
        return;
    }
    value_start(w);
    put(w, digits, strlen(digits));
}

void jr_jw_bool(jr_jw_t *w, int v)
{
    value_start(w);
    put(w, v ? "true" : "false", v ? 4 : 5);
}

void jr_jw_null(jr_jw_t *w)
{
    value_start(w);
    put(w, "null", 4);
}

void jr_jw_raw(jr_jw_t *w, const char *json)
{
    value_start(w);
    put(w, json, strlen(json));
}

void jr_jw_kstr(jr_jw_t *w, const char *key, const char *s)
{
    jr_jw_key(w, key);
    jr_jw_str(w, s);
}

void jr_jw_kint(jr_jw_t *w, const char *key, long long v)
{
    jr_jw_key(w, key);
    jr_jw_int(w, v);
}

void jr_jw_kint_text(jr_jw_t *w, const char *key, const char *digits)
{
    jr_jw_key(w, key);
    jr_jw_int_text(w, digits);
}

void jr_jw_kbool(jr_jw_t *w, const char *key, int v)
{
    jr_jw_key(w, key);
    jr_jw_bool(w, v);
}

void jr_jw_set_flush(jr_jw_t *w, jr_jw_flush_fn *fn, void *baton)
{
    w->flush = fn;
    w->flush_baton = baton;
    set_lim(w);
}

void jr_jw_hold(jr_jw_t *w, size_t bytes)
{
    if (w->sent == 0 && bytes > w->flush_at) {
        w->flush_at = bytes;
        set_lim(w);
    }
}

int jr_jw_streamed(const jr_jw_t *w)
{
    return w->sent > 0;
}

const char *jr_jw_done(jr_jw_t *w, size_t *len)
{
    w->buf[w->len] = '\0';
    if (len) {
        *len = w->len;
    }
    return w->buf;
}
