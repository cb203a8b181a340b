/* The answer of an operation: a status with a JSON document, an already serialised body, or a
 * file to send. A part of its own so that what describes an answer (jr_error_codes.h) needs
 * only the answer, not the operation's context; jr_ctx.h fills one (jr_fail, jr_reply). */
#ifndef JR_RESULT_H
#define JR_RESULT_H

#include <apr_tables.h>
#include <apr_time.h>
#include <jansson.h>

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
    int status;
    json_t *json;
    apr_table_t *headers;  /* extra response headers */
    jr_file_reply_t *file; /* when set, sent instead of json (status 200) */
    const char *body;      /* serialised JSON (streaming writer), sent instead of json */
    size_t body_len;
    int streamed; /* the body's beginning left through ctx->flush; body is the rest */
    const char *content_type; /* of body when it is not JSON (an HTML page); NULL: JSON */
} jr_result_t;

#endif
