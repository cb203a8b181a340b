/* Helpers one family lends to another that it also depends on: users to sessions, students to
 * entries and modules, queues to photo jobs and photo jobs to queues. Declared apart from the
 * lenders' headers so that no two families include each other; defined in jr_users.c,
 * jr_students.c, jr_queues.c and jr_photo_jobs.c. */
#ifndef JR_OPS_SHARED_H
#define JR_OPS_SHARED_H

#include "jr_ctx.h"
#include "jr_jw.h"

/* A user: its row (id, username, role, active, created_at, updated_at; never the password
 * hash) and its branch ids, sorted. */
typedef struct {
    jr_rows_t *rows;
    apr_array_header_t *branch_ids;
} jr_user_t;
/* 1 with *u filled, 0 when absent or unreadable. */
int jr_user_load(jr_ctx_t *ctx, long long id, jr_user_t *u);
/* The user record as the API shows it. */
void jr_user_write(jr_jw_t *w, const jr_user_t *u);

/* The key a student name is matched by: trimmed, lower-case (ASCII). */
const char *jr_student_key(apr_pool_t *p, const char *name);

/* A LIKE pattern (with ESCAPE '\\') that finds term anywhere; its wildcards match themselves. */
const char *jr_like_pattern(apr_pool_t *p, const char *term);

/* A search term as the list statements take it. like: the LIKE pattern every search checks its
 * rows with (the documented meaning). indexed: the term has JR_SEARCH_MIN_CHARS characters or
 * more and is valid UTF-8, so the trigram index can give the candidates (the *_SEARCH
 * statements); shorter terms scan (the *_LIST statements). first: the first argument of the
 * search filter, the full-text query when indexed (trigrams of the term, a superset), the
 * pattern when not. Defined in jr_students.c. */
#define JR_SEARCH_MIN_CHARS 3
typedef struct {
    const char *like, *first;
    int indexed;
} jr_search_t;
void jr_search_term(apr_pool_t *p, const char *term, jr_search_t *s);

/* Bumps a worker channel's generation and, on PostgreSQL, notifies it, in the caller's
 * transaction: the workers look at their queues once it commits. */
apr_status_t jr_queue_signal(jr_ctx_t *ctx, const char *channel);

/* Writes after the photo queue's counts whether the worker is switched on (enabled) and whether
 * a photo service is configured (service.configured), as members of the object open in w. */
void jr_photo_describe(jr_ctx_t *ctx, jr_jw_t *w);

#endif
