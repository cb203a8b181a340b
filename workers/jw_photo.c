/* Photo jobs as two job kinds of the worker (docs/photos.md). ai: one multipart POST
 * {photo_ai_endpoint}/enhance with the photo and the job's params; the answer's bytes must
 * decode as an image of sane size before the job is done. enhance: libvips in the loop, no
 * transfer (jw_photo_vips.c). The outcome is written by jr_photo_finish. */
#include <string.h>

#include <apr_strings.h>

#include "jr_json.h"
#include "jr_storage.h"
#include "jr_util.h"
#include "jw.h"

typedef struct {
    jr_photo_task_t task;
    jr_photo_result_t result;
    curl_mime *mime;
    long timeout_ms;
} photo_job_t;

static int ai_capacity(const jw_t *w)
{
    return jw_settings(w)->photo_ai_endpoint ? JW_PHOTO_AI_CONCURRENCY : 0;
}

/* libvips runs in the loop, one job at a time. */
static int enhance_capacity(const jw_t *w)
{
    return 1;
}

static const char *copy_str(apr_pool_t *p, const char *s)
{
    return s ? apr_pstrdup(p, s) : NULL;
}

static apr_status_t claim_into(jw_t *w, jr_ctx_t *ctx, const jw_handler_t *h, const char *owner,
                               int max, apr_array_header_t *out)
{
    apr_array_header_t *tasks;
    apr_status_t rv = jr_photo_claim(ctx, h->queue, owner, max, JW_LEASE, &tasks);
    int i;
    for (i = 0; rv == APR_SUCCESS && i < tasks->nelts; ++i) {
        const jr_photo_task_t *t = &APR_ARRAY_IDX(tasks, i, jr_photo_task_t);
        jw_job_t *j = jw_job_new(w, h);
        photo_job_t *pj = apr_pcalloc(j->pool, sizeof(*pj));
        /* The claim's strings live in ctx's pool: the job keeps its own copies. */
        pj->task = *t;
        pj->task.job.entity_type = copy_str(j->pool, t->job.entity_type);
        pj->task.job.owner = copy_str(j->pool, t->job.owner);
        pj->task.action = copy_str(j->pool, t->action);
        pj->task.params = copy_str(j->pool, t->params ? t->params : "{}");
        pj->task.source = copy_str(j->pool, t->source);
        pj->result.pool = j->pool;
        j->job = &pj->task.job;
        j->data = pj;
        APR_ARRAY_PUSH(out, jw_job_t *) = j;
    }
    return rv;
}

static apr_status_t ai_claim(jw_t *w, jr_ctx_t *ctx, const char *owner, int max,
                             apr_array_header_t *out)
{
    return claim_into(w, ctx, &jw_photo_ai_handler, owner, max, out);
}

static apr_status_t enhance_claim(jw_t *w, jr_ctx_t *ctx, const char *owner, int max,
                                  apr_array_header_t *out)
{
    return claim_into(w, ctx, &jw_photo_enhance_handler, owner, max, out);
}

/* The job's params as an object (an empty one when unreadable). */
static json_t *params_of(apr_pool_t *p, const photo_job_t *pj)
{
    json_t *j = jr_json_own(p, json_loads(pj->task.params, 0, NULL));
    return json_is_object(j) ? j : jr_json_own(p, json_object());
}

/* The easy handle goes before the form it posts. */
static apr_status_t mime_cleanup(void *data)
{
    jw_job_t *j = data;
    photo_job_t *pj = j->data;
    if (j->easy) {
        curl_easy_cleanup(j->easy);
        j->easy = NULL;
    }
    curl_mime_free(pj->mime);
    pj->mime = NULL;
    return APR_SUCCESS;
}

static apr_status_t ai_start(jw_t *w, jw_job_t *j)
{
    const jw_settings_t *s = jw_settings(w);
    photo_job_t *pj = j->data;
    const char *face = jr_json_str(params_of(j->pool, pj), "face", "off");
    curl_mimepart *part;

    pj->timeout_ms = (long)(strcmp(face, "off") ? s->photo_ai_timeout_ms
                                                : s->photo_upscale_timeout_ms);
    if (!(j->easy = curl_easy_init()) || !(pj->mime = curl_mime_init(j->easy))) {
        return APR_ENOMEM;
    }
    apr_pool_cleanup_register(j->pool, j, mime_cleanup, apr_pool_cleanup_null);
    part = curl_mime_addpart(pj->mime);
    curl_mime_name(part, "image");
    if (curl_mime_filedata(part, pj->task.source) != CURLE_OK) {
        return APR_EGENERAL;
    }
    curl_mime_filename(part, "photo");
    part = curl_mime_addpart(pj->mime);
    curl_mime_name(part, "params");
    curl_mime_data(part, pj->task.params, CURL_ZERO_TERMINATED);
    curl_mime_type(part, "application/json");
    curl_easy_setopt(j->easy, CURLOPT_URL,
                     apr_pstrcat(j->pool, s->photo_ai_endpoint, "/enhance", NULL));
    curl_easy_setopt(j->easy, CURLOPT_MIMEPOST, pj->mime);
    curl_easy_setopt(j->easy, CURLOPT_TIMEOUT_MS, pj->timeout_ms);
    curl_easy_setopt(j->easy, CURLOPT_CONNECTTIMEOUT_MS,
                     pj->timeout_ms < 10000 ? pj->timeout_ms : 10000L);
    j->body_max = (size_t)s->photo_max_size;
    return jw_job_add(w, j);
}

/* A temporary file under the data directory for a result (removed with the job's pool unless
 * it is stored first). NULL on error. */
static const char *result_file(jw_t *w, jw_job_t *j)
{
    apr_file_t *fd;
    const char *path;
    if (jr_storage_tmpfile(&fd, &path, j->pool, jw_settings(w)->data_dir, "photo") !=
        APR_SUCCESS) {
        return NULL;
    }
    apr_file_close(fd);
    return path;
}

/* Writes the service's answer to a file and checks it decodes. */
static void ai_result(jw_t *w, jw_job_t *j, photo_job_t *pj)
{
    jr_photo_result_t *r = &pj->result;
    const char *path = result_file(w, j), *err;
    apr_file_t *fd;
    apr_size_t n = j->len;
    if (!path || apr_file_open(&fd, path, APR_FOPEN_WRITE | APR_FOPEN_TRUNCATE, 0, j->pool) !=
                     APR_SUCCESS) {
        r->error = "the result could not be written to the data directory";
        return;
    }
    if (apr_file_write_full(fd, j->body ? j->body : "", n, &n) != APR_SUCCESS) {
        r->error = "the result could not be written to the data directory";
    }
    apr_file_close(fd);
    if (r->error) {
        return;
    }
    if ((err = jw_vips_check(j->pool, path, &r->type, &r->width, &r->height)) != NULL) {
        r->error = err;
        return;
    }
    r->tmp_path = path;
}

static void ai_complete(jw_t *w, jw_job_t *j, CURLcode rc)
{
    photo_job_t *pj = j->data;
    jr_photo_result_t *r = &pj->result;
    curl_off_t retry_after = 0;
    long status = 0;
    curl_easy_getinfo(j->easy, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_getinfo(j->easy, CURLINFO_RETRY_AFTER, &retry_after);
    if (j->too_large) {
        r->error = jr_psprintf(j->pool, "the result is larger than the upload limit (%lld bytes)",
                                jw_settings(w)->photo_max_size);
    } else if (rc == CURLE_OPERATION_TIMEDOUT) {
        r->error = apr_psprintf(j->pool, "the photo service did not answer within %ld ms",
                                pj->timeout_ms);
    } else if (rc != CURLE_OK) {
        r->error = "cannot connect to the photo service";
    } else if (status != 200) {
        r->error = apr_psprintf(j->pool, "the photo service answered HTTP %ld", status);
        r->retry_after = (long long)retry_after;
        /* A refused request stays refused; a busy or broken service may recover. */
        r->final = status >= 400 && status < 500 && status != 408 && status != 429;
    } else {
        ai_result(w, j, pj);
    }
}

static apr_status_t enhance_start(jw_t *w, jw_job_t *j)
{
    photo_job_t *pj = j->data;
    jr_photo_result_t *r = &pj->result;
    json_t *strength = json_object_get(params_of(j->pool, pj), "strength");
    const char *path = result_file(w, j);
    j->started = apr_time_now();
    if (!path) {
        r->error = "the result could not be written to the data directory";
    } else if ((r->error = jw_vips_enhance(j->pool, pj->task.source,
                                           json_is_number(strength) ? json_number_value(strength)
                                                                    : 0.5,
                                           path, &r->type, &r->width, &r->height)) == NULL) {
        r->tmp_path = path;
    }
    jw_job_done(w, j);
    return APR_SUCCESS;
}

static void enhance_complete(jw_t *w, jw_job_t *j, CURLcode rc)
{
    /* Never called: an enhance job has no transfer. */
}

static apr_status_t photo_settle(jw_t *w, jr_ctx_t *ctx, jw_job_t *j)
{
    photo_job_t *pj = j->data;
    const jr_job_t *job = &pj->task.job;
    const char *what = "lost";
    apr_status_t rv = jr_photo_finish(ctx, j->h->queue, &pj->task, &pj->result, &what);
    if (rv != APR_SUCCESS) {
        return rv;
    }
    if (!strcmp(what, "retry") || !strcmp(what, "failed")) {
        JR_LOG(JR08010, 0, "photo job %lld (%s) of entry %lld, attempt %d: %s (%s)", job->id,
               pj->task.action, job->entity_id, job->attempts, pj->result.error, what);
    } else {
        JR_LOG(JR08011, 0, "photo job %lld (%s) of entry %lld: %s in %lld ms", job->id,
               pj->task.action, job->entity_id, what,
               (long long)apr_time_as_msec(apr_time_now() - j->started));
    }
    return APR_SUCCESS;
}

static apr_status_t photo_release(jw_t *w, jr_ctx_t *ctx, jw_job_t *j)
{
    photo_job_t *pj = j->data;
    return jr_photo_release(ctx, j->h->queue, &pj->task);
}

const jw_handler_t jw_photo_ai_handler = {
    &jr_queue_photo_ai, ai_capacity, ai_claim,     ai_start,
    ai_complete,        photo_settle, photo_release,
};

const jw_handler_t jw_photo_enhance_handler = {
    &jr_queue_photo_enhance, enhance_capacity, enhance_claim,  enhance_start,
    enhance_complete,        photo_settle,     photo_release,
};
