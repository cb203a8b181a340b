/* The AI text checks of entries and lesson reports, as the worker runs them: claiming a
 * check (its messages, the record marked processing), and writing its outcome. The HTTP side
 * (the OpenAI-compatible request and the answer's validation) lives in workers/. */
#ifndef JR_AI_H
#define JR_AI_H

#include "jr_jobs.h"

typedef enum {
    JR_AI_ENTRY = 0, /* answer {"changed": boolean, "text": string} */
    JR_AI_REPORT     /* answer {"matches_template": boolean, "text": string} */
} jr_ai_kind_e;

/* A claimed check: what to send, and what identifies the text that was sent. */
typedef struct {
    jr_job_t job;
    jr_ai_kind_e kind;
    const char *system;    /* the prompt setting, then the context line (reports) */
    const char *user;      /* the text to check */
    const char *text_hash; /* SHA-256 of user, stored with the claim */
} jr_ai_task_t;

typedef enum {
    JR_AI_APPLY = 0, /* a valid answer */
    JR_AI_RETRY,     /* an attempt that failed: try again after the back-off */
    JR_AI_FAIL       /* no point in trying again (the endpoint refused the key) */
} jr_ai_verdict_e;

typedef struct {
    jr_ai_verdict_e verdict;
    int rewrite;           /* APPLY: 1 when the model rewrote the text (done), 0 (skipped) */
    const char *text;      /* APPLY with rewrite: the model's text */
    const char *error;     /* RETRY/FAIL: short, for ai_error (never a secret or model output) */
    long long retry_after; /* RETRY: seconds the server asked for (Retry-After), 0 when none */
} jr_ai_result_t;

/* The context line appended to a lesson report's system message: "Context: lesson position:
 * first; topic: ..." when the topic ends with N/M, "Context: topic: ..." otherwise, NULL
 * without a topic. */
const char *jr_ai_context_line(apr_pool_t *p, const char *topic);

/* Claims up to max checks for owner in one write transaction. Each claimed record becomes
 * 'processing' (with an ai_status / lesson_report_status event). Jobs that need no request
 * are settled on the way: an empty text is 'skipped', a record that no longer exists or a job
 * claimed more than max_attempts times (its worker kept dying) fails. *tasks receives
 * jr_ai_task_t elements in ctx->pool. */
apr_status_t jr_ai_claim(jr_ctx_t *ctx, const char *owner, int max, long long lease,
                         apr_array_header_t **tasks);

/* Writes a check's outcome in one transaction, only while the job's lease is still ours.
 * A text that changed since it was sent is not overwritten: the job is queued again.
 * *what receives "done", "skipped", "retry", "failed", "stale" or "lost" (another worker
 * holds the job now). */
apr_status_t jr_ai_finish(jr_ctx_t *ctx, const jr_ai_task_t *t, const jr_ai_result_t *r,
                          const char **what);

/* Gives a claimed check back (worker stopping): pending again at once, attempt refunded. */
apr_status_t jr_ai_release(jr_ctx_t *ctx, const jr_ai_task_t *t);

#endif
