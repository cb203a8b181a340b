/* The answer of an operation: a status with its JSON body, serialised by the streaming writer
 * (jr_jw.h), or a file to send. A part of its own so that what describes an answer
 * (jr_error_codes.h) needs only the answer, not the operation's context; jr_ctx.h fills one
 * (jr_fail, jr_reply_jw). */
#ifndef JR_RESULT_H
#define JR_RESULT_H

#include <apr_tables.h>
#include <apr_time.h>

/* A file to send instead of JSON: the host streams it (Range and conditional requests
 * included). */
typedef struct {
    const char *path;
    apr_off_t size;
    const char *content_type;
    const char *filename; /* for Content-Disposition, NULL for none */
    int attachment;       /* 1: attachment, 0: inline */
    const char *etag;     /* strong validator without quotes */
    apr_time_t mtime;
} jr_file_reply_t;

typedef struct {
    apr_pool_t *pool; /* of the answer's memory */
    int status;
    apr_table_t *headers;  /* extra response headers */
    jr_file_reply_t *file; /* when set, sent instead of body (status 200) */
    const char *body;      /* the serialised JSON answer (or HTML page, see content_type) */
    size_t body_len;
    /* Of an error answer (jr_fail), what its body says, for readers in the process (the event
     * stream's own answer, the admin tool); NULL in a success. */
    const char *error;
    const char *error_code;
    const char *error_param; /* NULL: no param member */
    long long error_id;      /* > 0: the id member (jr_error_id) */
    int streamed; /* the body's beginning left through ctx->flush; body is the rest */
    const char *content_type; /* of body when it is not JSON (an HTML page); NULL: JSON */
} jr_result_t;

#endif
