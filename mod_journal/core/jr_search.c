/* Search terms as the list statements take them: the LIKE pattern every search checks its rows
 * with, and the trigram full-text query that finds the candidates of a long enough term. */
#include <string.h>

#include <apr_strings.h>

#include "jr_search.h"

/* A LIKE pattern (with ESCAPE '\\') that finds term anywhere: its wildcards match themselves. */
static const char *like_pattern(apr_pool_t *p, const char *term)
{
    char *out = apr_palloc(p, strlen(term) * 2 + 3), *o = out;
    *o++ = '%';
    for (; *term; ++term) {
        if (*term == '%' || *term == '_' || *term == '\\') {
            *o++ = '\\';
        }
        *o++ = *term;
    }
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

/* The full-text query for a term of n >= 3 characters: every third 3-character window and the
 * last one, each a quoted string (one trigram; its own '"' doubled), joined by AND. A row that
 * contains the term contains each window, so the query finds a superset of the matches, which
 * the statements' LIKE narrows to the exact ones. A third of the trigrams reads a third of the
 * doclists that the whole phrase would. */
static const char *fts_query(apr_pool_t *p, const char *term, long n)
{
    size_t *at = apr_palloc(p, (size_t)(n + 1) * sizeof(*at)), len = strlen(term), b;
    char *out = apr_palloc(p, (size_t)(n / 3 + 2) * 36 + 1), *o = out;
    long i = 0, k = 0;
    for (b = 0; b < len; ++b) {
        if (((unsigned char)term[b] & 0xC0) != 0x80) {
            at[k++] = b;
        }
    }
    at[n] = len;
    for (;;) {
        if (o != out) {
            memcpy(o, " AND ", 5);
            o += 5;
        }
        *o++ = '"';
        for (b = at[i]; b < at[i + 3]; ++b) {
            if (term[b] == '"') {
                *o++ = '"';
            }
            *o++ = term[b];
        }
        *o++ = '"';
        if (i == n - 3) {
            break;
        }
        i = i + 3 > n - 3 ? n - 3 : i + 3;
    }
    *o = '\0';
    return out;
}

void jr_search_term(apr_pool_t *p, const char *term, jr_search_t *s)
{
    long n = utf8_chars((const unsigned char *)term);
    s->like = like_pattern(p, term);
    s->indexed = n >= JR_SEARCH_MIN_CHARS;
    s->first = s->indexed ? fts_query(p, term, n) : s->like;
}
