/* journal-worker: the daemon that runs the background jobs (the AI text checks today) with
 * the core library. Private declarations shared by the worker's files and its unit tests. */
#ifndef JW_H
#define JW_H

#include <apr_pools.h>
#include <apr_tables.h>
#include <curl/curl.h>

#include "jr_ai.h"
#include "jr_log.h"
#include "jr_photo_jobs.h"

/* ---- jw_config.c: the settings file (docs/worker.md, "The settings file") ---------------- */

#define JW_EXIT_CONFIG 2 /* a configuration error: the supervisor backs off */

typedef struct {
    const char *db_driver, *db_params, *data_dir, *runtime_dir;
    const char *ai_endpoint; /* NULL: AI not configured, AI jobs stay queued */
    const char *ai_model, *ai_key_file;
    long long ai_timeout; /* seconds */
    int ai_concurrency;   /* requests in flight */
    jr_log_level_e log_level;
    const char *ai_key; /* the bearer key read from ai_key_file (never logged), or NULL */
    const char *photo_ai_endpoint;   /* NULL: no photo service, ai photo jobs stay queued */
    long long photo_ai_timeout_ms;   /* a request with face restoration */
    long long photo_upscale_timeout_ms; /* a plain upscale */
    long long photo_max_size;        /* the largest result accepted (the upload cap) */
    const char *redis;               /* NULL: no Redis, events wait for the notifiers' read */
    const char *redis_password_file;
    const char *redis_password; /* read from redis_password_file (never logged), or NULL */
} jw_settings_t;

#define JW_DEFAULT_AI_TIMEOUT 60
#define JW_DEFAULT_AI_CONCURRENCY 4
#define JW_DEFAULT_PHOTO_AI_TIMEOUT_MS 600000
#define JW_DEFAULT_PHOTO_UPSCALE_TIMEOUT_MS 120000
#define JW_DEFAULT_PHOTO_MAX_SIZE (20LL * 1024 * 1024)

/* Parses the text of a settings file into s (defaults first). NULL on success, otherwise a
 * message that names the line ("line 3: unknown setting 'x'"). Does not read the key file. */
const char *jw_settings_parse(apr_pool_t *p, const char *text, jw_settings_t *s);

/* Reads and parses the file at path, then reads the key file when one is named. */
const char *jw_settings_load(apr_pool_t *p, const char *path, jw_settings_t *s);

/* The bearer key in a key file: its first line, trimmed. NULL on success, else a message
 * that never contains the key. */
const char *jw_read_key(apr_pool_t *p, const char *path, const char **key);

/* ---- jw_llm.c: one OpenAI-compatible chat completion per check ----------------------- */

/* The request body: model, the two messages, response_format json_schema (strict). */
const char *jw_llm_request(apr_pool_t *p, const char *model, jr_ai_kind_e kind,
                           const char *system, const char *user);

/* Validates a chat completion answer against the kind's schema. NULL when valid (*rewrite,
 * and *text when rewriting, filled), else a short reason (never the model's output). */
const char *jw_llm_parse(apr_pool_t *p, jr_ai_kind_e kind, const char *body, size_t len,
                         int *rewrite, const char **text);

/* What an HTTP exchange means for the check: r filled from the transfer's result, the
 * status, the server's Retry-After (seconds, 0 none) and the body. */
typedef struct {
    CURLcode rc;
    long status;
    long long retry_after;
    const char *body;
    size_t len;
    int too_large; /* the body went over the cap and was cut */
} jw_exchange_t;
void jw_llm_result(apr_pool_t *p, jr_ai_kind_e kind, const jw_exchange_t *x,
                   long long timeout, jr_ai_result_t *r);

/* ---- the worker ----------------------------------------------------------------------- */

typedef struct jw jw_t;
typedef struct jw_job jw_job_t;

/* Seconds a claim holds a job; renewed every third of it while the job runs, so a worker
 * that dies gives its jobs back within this time (at once on its own host, see
 * jr_jobs_reclaim_dead). */
#define JW_LEASE 30
/* Seconds between two looks at the queue when nothing said that work is due: the safety net
 * under the wake-ups, and when the worker gives dead workers' leases back. */
#define JW_SAFETY_POLL 30
/* Milliseconds after a SQLite wake-up at which the queue is looked at ... */
#define JW_SETTLE 2
/* ... and looked at again at these times after it, each time another connection's commit has
 * become visible since the previous look (see jw_wake.c). */
#define JW_RECHECKS {20, 100, 500, 2000, 5000}

/* A job kind: its queue and how a claimed job runs. The loop knows nothing else about it. */
typedef struct {
    const jr_queue_t *queue;
    int (*capacity)(const jw_t *w); /* jobs in flight at most; 0: this kind is not configured */
    /* Claims up to max jobs in one transaction; each becomes a jw_job_t (jw_job_new). */
    apr_status_t (*claim)(jw_t *w, jr_ctx_t *ctx, const char *owner, int max,
                          apr_array_header_t *out);
    /* Starts a claimed job's transfer on the multi handle. */
    apr_status_t (*start)(jw_t *w, jw_job_t *j);
    /* The transfer ended: decides the outcome (kept in the job until it is written). */
    void (*complete)(jw_t *w, jw_job_t *j, CURLcode rc);
    /* Writes the outcome; APR_SUCCESS when it is written (or the job was lost). */
    apr_status_t (*settle)(jw_t *w, jr_ctx_t *ctx, jw_job_t *j);
    /* Gives the job back (stopping). */
    apr_status_t (*release)(jw_t *w, jr_ctx_t *ctx, jw_job_t *j);
} jw_handler_t;

struct jw_job {
    apr_pool_t *pool; /* the job's own: destroyed when it is settled */
    const jw_handler_t *h;
    jr_job_t *job; /* the claim (id, owner) for renewals */
    void *data;    /* the handler's */
    CURL *easy;
    struct curl_slist *headers;
    char *body; /* the response, capped */
    size_t len, cap;
    size_t body_max; /* the cap; 0: the default (1 MB) */
    int too_large;
    int done; /* transfer over, outcome decided, not written yet */
    apr_time_t started;
};

/* A new job in its own pool (a child of the worker's). */
jw_job_t *jw_job_new(jw_t *w, const jw_handler_t *h);

/* Adds a configured easy handle to the worker's multi handle. */
apr_status_t jw_job_add(jw_t *w, jw_job_t *j);

/* A job that ran without a transfer (its handler's start did the work): its outcome, decided
 * in the job, is written with the others. */
void jw_job_done(jw_t *w, jw_job_t *j);

/* Accessors for handlers. */
const jw_settings_t *jw_settings(const jw_t *w);
CURLM *jw_multi(jw_t *w);

/* The AI text checks (jw_ai.c). */
extern const jw_handler_t jw_ai_handler;

/* Photo jobs (jw_photo.c): ai through the photo service, enhance with libvips in the loop. */
extern const jw_handler_t jw_photo_ai_handler;
extern const jw_handler_t jw_photo_enhance_handler;
/* Requests in flight to the photo service per worker process. */
#define JW_PHOTO_AI_CONCURRENCY 2

/* ---- jw_photo_vips.c: the image work ------------------------------------------------------ */

/* The server-side enhancement of the image at in, written to out in the source's format
 * (JPEG, PNG or WebP): EXIF orientation applied, levels stretched, mildly sharpened, by
 * strength (0 to 1). NULL on success (*type, *width, *height filled), else a short reason. */
const char *jw_vips_enhance(apr_pool_t *p, const char *in, double strength, const char *out,
                            const char **type, long long *width, long long *height);

/* Checks that the file at path is a JPEG, PNG or WebP image that decodes in full, with sane
 * dimensions. NULL when it is (*type, *width, *height filled), else a short reason. */
const char *jw_vips_check(apr_pool_t *p, const char *path, const char **type, long long *width,
                          long long *height);

/* ---- jw_wake.c: being told that work may be due --------------------------------------- */

typedef struct jw_wake jw_wake_t;

/* SQLite: inotify on the database's directory (every commit writes the -wal file).
 * PostgreSQL: LISTEN on each channel (channels: names separated by spaces) on the worker's
 * connection. *pw is NULL when no source could
 * be set up (the worker then relies on its timers and the safety poll). */
apr_status_t jw_wake_open(jw_wake_t **pw, apr_pool_t *p, jr_db_t *db, const char *db_params,
                          const char *channels);
/* The descriptor to poll, or -1. */
int jw_wake_fd(const jw_wake_t *w);
/* Consumes what arrived (never blocks). 1 when work may be due. */
int jw_wake_drain(jw_wake_t *w);
/* After the connection was reset (PostgreSQL): LISTEN again. */
apr_status_t jw_wake_reattach(jw_wake_t *w);
/* SQLite: the database's data version, which changes when another connection commits; -1
 * when unknown (PostgreSQL, no wake-up source, an error). */
long long jw_wake_version(jw_wake_t *w);

/* ---- jw_redis.c: announcing the worker's events ---------------------------------------- */

typedef struct jw_redis jw_redis_t;

/* The publisher of s's Redis, closed with p; NULL when no Redis is configured. Connects when
 * first used. */
jw_redis_t *jw_redis_open(apr_pool_t *p, const jw_settings_t *s);

/* Publishes one wake-up on JR_EVENTS_CHANNEL (after commits that wrote events). Best effort:
 * a Redis that is down or refuses is logged once per outage and tried again after a growing
 * delay; the call never waits longer than one short connection attempt. r may be NULL. */
void jw_redis_publish(jw_redis_t *r);

/* ---- jw_loop.c: the event loop ----------------------------------------------------------- */

typedef struct {
    int instance;   /* --instance N: the index of a supervised process, for logs */
    int signal_fd;  /* read end of the self-pipe the signal handlers write to */
} jw_options_t;

/* Runs until asked to stop. Returns the exit status (0 after a clean stop). */
int jw_run(apr_pool_t *p, const jw_settings_t *s, const jw_options_t *o);

/* Set by the signal handler: 1 = stop. */
extern volatile int jw_stop_requested;

#endif
