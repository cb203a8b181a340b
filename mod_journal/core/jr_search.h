/* Search terms as the list statements take them (entries, students, modules): one meaning of a
 * search for every list that offers one. */
#ifndef JR_SEARCH_H
#define JR_SEARCH_H

#include <apr_pools.h>

#include "jr_stmts.h"

/* A search term as the list statements take it. like: the LIKE pattern every search checks its
 * rows with (the documented meaning). indexed: the term has JR_SEARCH_MIN_CHARS characters or
 * more and is valid UTF-8, so the trigram index can give the candidates (the *_SEARCH
 * statements); shorter terms scan (the *_LIST statements). first: the first argument of the
 * search filter, what the index is asked for when indexed (a superset of the matches), the
 * pattern when not: on SQLite a full-text query of a few of the term's trigrams, on PostgreSQL
 * a LIKE pattern of the same trigrams in the term's order (or the pattern itself when they
 * cannot stand for it). */
#define JR_SEARCH_MIN_CHARS 3
typedef struct {
    const char *like, *first;
    int indexed;
} jr_search_t;
void jr_search_term(apr_pool_t *p, jr_dialect_e dialect, const char *term, jr_search_t *s);

/* The page of a search from the ids of all its matches (a JSON array of integers in any order,
 * as the statements aggregate them; NULL for none): the ids below before (the cursor's last
 * id, NULL on a first page), newest first, offset skipped, at most fetch of them, as a JSON
 * array. */
const char *jr_search_page_ids(apr_pool_t *p, const char *ids, const char *before,
                               long long offset, long long fetch);

#endif
