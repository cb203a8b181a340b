/* Idempotency-Key on POST: the first answer to a key is kept (status and body, 24 hours, per
 * caller) and given again to a repeat, so a client may retry a POST whose answer it never
 * saw without creating a second record. See docs/integrators.md ("Retrying safely"). */
#ifndef JR_IDEM_H
#define JR_IDEM_H

#include "jr_ctx.h"

/* How long an answer is kept. */
#define JR_IDEM_TTL_SECONDS (24 * 3600)
/* A reservation without an answer this old belongs to a request whose process ended (no
 * request runs this long): a repeat then runs the operation again. */
#define JR_IDEM_STALE_SECONDS 600
/* The longest key accepted (visible ASCII characters). */
#define JR_IDEM_KEY_MAX 255

/* What a request is compared by: a repeat must be the same request. */
typedef struct {
    const char *key;    /* the Idempotency-Key header */
    const char *method;
    const char *path;
    const char *args;   /* the raw query string, or NULL */
    const char *body;   /* a JSON body in memory, or NULL */
    size_t body_len;
} jr_idem_request_t;

/* A reservation made by jr_idem_begin, ended by jr_idem_end. */
typedef struct jr_idem jr_idem_t;

typedef enum {
    JR_IDEM_RUN = 0, /* run the operation (*out is the reservation, or NULL without a key) */
    JR_IDEM_ANSWERED /* res holds the answer: a replay, or a refusal (400, 409, 422, 503) */
} jr_idem_e;

/* Called after authentication and after the body was read, before the operation. Without a
 * key, or for a caller without an identity (a login), answers JR_IDEM_RUN with *out NULL. */
jr_idem_e jr_idem_begin(jr_ctx_t *ctx, const jr_idem_request_t *rq, jr_idem_t **out,
                        jr_result_t *res);

/* Records the operation's answer for later repeats. An answer of 5xx is not kept (the
 * reservation is released so a retry runs the operation again). */
void jr_idem_end(jr_ctx_t *ctx, jr_idem_t *idem, const jr_result_t *res);

/* Deletes answers past their 24 hours; the number deleted, or -1 on a database error. */
int jr_idem_purge_expired(jr_ctx_t *ctx);

#endif
