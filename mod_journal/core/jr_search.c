/* Search terms as the list statements take them: the LIKE pattern every search checks its rows
 * with, and what the trigram index is asked for when the term is long enough. */
#include <stdlib.h>
#include <string.h>

#include <apr_strings.h>
#include <apr_tables.h>

#include "jr_search.h"

/* How many of the term's trigrams the index is asked for. Each one asked for costs reading its
 * whole list of rows, and the common ones (a word's ending, a frequent word) list a large part
 * of the table; each one left out costs only the candidates it would have removed, which the
 * LIKE checks anyway. Two rare ones leave few candidates. */
#define SEARCH_WINDOWS 2

/* A window of the term: 3 characters from byte at (len bytes), in a word of chars characters. */
typedef struct {
    size_t at, len;
    long chars;
} window_t;

/* Appends term to o with LIKE's wildcards and its escape character escaped. */
static char *like_escaped(char *o, const char *term, size_t len)
{
    size_t i;
    for (i = 0; i < len; ++i) {
        if (term[i] == '%' || term[i] == '_' || term[i] == '\\') {
            *o++ = '\\';
        }
        *o++ = term[i];
    }
    return o;
}

/* A LIKE pattern (with ESCAPE '\\') that finds term anywhere: its wildcards match themselves. */
static const char *like_pattern(apr_pool_t *p, const char *term)
{
    char *out = apr_palloc(p, strlen(term) * 2 + 3), *o = out;
    *o++ = '%';
    o = like_escaped(o, term, strlen(term));
    *o++ = '%';
    *o = '\0';
    return out;
}

/* The number of characters of s, or -1 when it is not valid UTF-8 (the index's tokenizer and
 * LIKE could then disagree on what a character is). */
static long utf8_chars(const unsigned char *s)
{
    long n = 0;
    int more = 0;
    unsigned min = 0, cp = 0;
    for (; *s; ++s) {
        if (more > 0) {
            if ((*s & 0xC0) != 0x80) {
                return -1;
            }
            cp = (cp << 6) | (*s & 0x3F);
            if (--more == 0 && (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))) {
                return -1;
            }
            continue;
        }
        ++n;
        if (*s < 0x80) {
            continue;
        }
        more = *s >= 0xF0 ? 3 : *s >= 0xE0 ? 2 : *s >= 0xC0 ? 1 : -1;
        if (more < 0 || *s > 0xF4) {
            return -1;
        }
        min = more == 3 ? 0x10000 : more == 2 ? 0x800 : 0x80;
        cp = *s & (0x3F >> more);
    }
    return more == 0 ? n : -1;
}

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

static int is_ascii_alnum(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* Bytes of the first n characters of s (valid UTF-8 with at least n characters). */
static size_t chars_bytes(const char *s, long n)
{
    size_t b = 0;
    for (; n > 0; --n) {
        do {
            ++b;
        } while (((unsigned char)s[b] & 0xC0) == 0x80);
    }
    return b;
}

/* A window PostgreSQL's pattern may stand on: three ASCII letters or digits (pg_trgm makes one
 * trigram of them; of other characters it may make none, and then reads its whole index) that
 * are followed by an ASCII character or nothing (ILIKE folds case with lower(), which may
 * look at a letter's neighbours; ASCII ones never change how these three fold). */
static int pg_window(const char *w)
{
    return is_ascii_alnum(w[0]) && is_ascii_alnum(w[1]) && is_ascii_alnum(w[2]) &&
           (unsigned char)w[3] < 0x80;
}

/* The first window of each of the SEARCH_WINDOWS longest words of the term (words of three
 * characters or more, the earlier one of equal lengths), in the term's order; only windows
 * pg_window() accepts when pg. A word's beginning is less common than its ending (endings
 * and short words are shared by much of a language), and longer words are rarer. Returns
 * how many. */
static int pick_windows(const char *term, int pg, window_t *out)
{
    window_t w;
    size_t b = 0, end;
    int n = 0, i;
    while (term[b]) {
        if (is_space(term[b])) {
            ++b;
            continue;
        }
        w.at = b;
        w.chars = 0;
        for (end = b; term[end] && !is_space(term[end]); ++end) {
            w.chars += ((unsigned char)term[end] & 0xC0) != 0x80;
        }
        b = end;
        if (w.chars < 3 || (pg && !pg_window(term + w.at))) {
            continue;
        }
        w.len = chars_bytes(term + w.at, 3);
        for (i = n < SEARCH_WINDOWS ? n++ : SEARCH_WINDOWS; i > 0 && out[i - 1].chars < w.chars;
             --i) {
            if (i < SEARCH_WINDOWS) {
                out[i] = out[i - 1];
            }
        }
        if (i < SEARCH_WINDOWS) {
            out[i] = w;
        }
    }
    if (n == 2 && out[1].at < out[0].at) {
        w = out[0];
        out[0] = out[1];
        out[1] = w;
    }
    return n;
}

/* SQLite: the full-text query, each window a quoted string (one trigram; its own '"' doubled),
 * joined by AND. A row that contains the term contains each window, so the query finds a
 * superset of the matches, which the statements' LIKE narrows to the exact ones. */
static const char *fts_query(apr_pool_t *p, const char *term)
{
    window_t w[SEARCH_WINDOWS];
    int n = pick_windows(term, 0, w), i;
    char *out = apr_palloc(p, SEARCH_WINDOWS * 32), *o = out;
    size_t b;
    if (n == 0) { /* no word of three characters: the term's first three */
        w[0].at = 0;
        w[0].len = chars_bytes(term, 3);
        n = 1;
    }
    for (i = 0; i < n; ++i) {
        if (i > 0) {
            memcpy(o, " AND ", 5);
            o += 5;
        }
        *o++ = '"';
        for (b = w[i].at; b < w[i].at + w[i].len; ++b) {
            if (term[b] == '"') {
                *o++ = '"';
            }
            *o++ = term[b];
        }
        *o++ = '"';
    }
    *o = '\0';
    return out;
}

/* PostgreSQL: the windows in the term's order, each between wildcards. A row that contains
 * the term contains them in that order without overlap, so the pattern finds a superset, and
 * pg_trgm looks up one trigram per window instead of every trigram of the term. Without such
 * a window, the term's own pattern. */
static const char *pg_pattern(apr_pool_t *p, const char *term, const char *like)
{
    window_t w[SEARCH_WINDOWS];
    int n = pick_windows(term, 1, w), i;
    char *out = apr_palloc(p, SEARCH_WINDOWS * 7 + 2), *o = out;
    if (n == 0) {
        return like;
    }
    *o++ = '%';
    for (i = 0; i < n; ++i) {
        o = like_escaped(o, term + w[i].at, w[i].len);
        *o++ = '%';
    }
    *o = '\0';
    return out;
}

void jr_search_term(apr_pool_t *p, jr_dialect_e dialect, const char *term, jr_search_t *s)
{
    s->like = like_pattern(p, term);
    s->indexed = utf8_chars((const unsigned char *)term) >= JR_SEARCH_MIN_CHARS;
    s->first = !s->indexed                ? s->like
               : dialect == JR_DB_PGSQL ? pg_pattern(p, term, s->like)
                                        : fts_query(p, term);
}

static int newest_first(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

const char *jr_search_page_ids(apr_pool_t *p, const char *ids, const char *before,
                               long long offset, long long fetch)
{
    apr_array_header_t *below = apr_array_make(p, 64, sizeof(long long));
    long long cap = before ? apr_atoi64(before) : -1, v, i;
    const char *s = ids ? ids : "";
    char *end, *out, *o;
    while (*s) {
        if (*s < '0' || *s > '9') {
            ++s;
            continue;
        }
        v = strtoll(s, &end, 10);
        s = end;
        if (cap < 0 || v < cap) {
            APR_ARRAY_PUSH(below, long long) = v;
        }
    }
    qsort(below->elts, (size_t)below->nelts, sizeof(long long), newest_first);
    offset = offset < 0 ? 0 : offset;
    fetch = offset >= below->nelts            ? 0
            : below->nelts - offset < fetch ? below->nelts - offset
                                            : fetch;
    out = o = apr_palloc(p, (size_t)fetch * 21 + 3);
    *o++ = '[';
    for (i = 0; i < fetch; ++i) {
        o += apr_snprintf(o, 22, i ? ",%" APR_INT64_T_FMT : "%" APR_INT64_T_FMT,
                          (apr_int64_t)APR_ARRAY_IDX(below, offset + i, long long));
    }
    *o++ = ']';
    *o = '\0';
    return out;
}
