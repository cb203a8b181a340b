/* The AI text checks as a job kind of the worker: a claimed check becomes one POST
 * {endpoint}/chat/completions; its answer becomes the record's new state (jr_ai.c). */
#include <string.h>

#include <apr_strings.h>

#include "jr_log.h"
#include "jr_util.h"
#include "jw.h"

typedef struct {
    jr_ai_task_t task;
    jr_ai_result_t result;
} ai_job_t;

static int ai_capacity(const jw_t *w)
{
    const jw_settings_t *s = jw_settings(w);
    return s->ai_endpoint ? s->ai_concurrency : 0;
}

static const char *copy_str(apr_pool_t *p, const char *s)
{
    return s ? apr_pstrdup(p, s) : NULL;
}

static apr_status_t ai_claim(jw_t *w, jr_ctx_t *ctx, const char *owner, int max,
                             apr_array_header_t *out)
{
    apr_array_header_t *tasks;
    apr_status_t rv = jr_ai_claim(ctx, owner, max, JW_LEASE, &tasks);
    int i;
    for (i = 0; rv == APR_SUCCESS && i < tasks->nelts; ++i) {
        const jr_ai_task_t *t = &APR_ARRAY_IDX(tasks, i, jr_ai_task_t);
        jw_job_t *j = jw_job_new(w, &jw_ai_handler);
        ai_job_t *a = apr_pcalloc(j->pool, sizeof(*a));
        /* The claim's strings live in ctx's pool: the job keeps its own copies. */
        a->task = *t;
        a->task.job.entity_type = copy_str(j->pool, t->job.entity_type);
        a->task.job.owner = copy_str(j->pool, t->job.owner);
        a->task.system = copy_str(j->pool, t->system);
        a->task.user = copy_str(j->pool, t->user);
        a->task.text_hash = copy_str(j->pool, t->text_hash);
        j->job = &a->task.job;
        j->data = a;
        APR_ARRAY_PUSH(out, jw_job_t *) = j;
    }
    return rv;
}

static apr_status_t ai_start(jw_t *w, jw_job_t *j)
{
    const jw_settings_t *s = jw_settings(w);
    ai_job_t *a = j->data;
    const char *body = jw_llm_request(j->pool, s->ai_model, a->task.kind, a->task.system,
                                      a->task.user);
    long timeout_ms = (long)s->ai_timeout * 1000;
    if (!body || !(j->easy = curl_easy_init())) {
        return APR_ENOMEM;
    }
    j->headers = curl_slist_append(NULL, "Content-Type: application/json");
    j->headers = curl_slist_append(j->headers, "Accept: application/json");
    if (s->ai_key) {
        /* The key's only way out of the key file. */
        char *auth = apr_pstrcat(j->pool, "Authorization: Bearer ", s->ai_key, NULL);
        j->headers = curl_slist_append(j->headers, auth);
        memset(auth, 0, strlen(auth));
    }
    curl_easy_setopt(j->easy, CURLOPT_URL,
                     apr_pstrcat(j->pool, s->ai_endpoint, "/chat/completions", NULL));
    curl_easy_setopt(j->easy, CURLOPT_HTTPHEADER, j->headers);
    curl_easy_setopt(j->easy, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(j->easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body));
    curl_easy_setopt(j->easy, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(j->easy, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms < 10000 ? timeout_ms : 10000L);
    return jw_job_add(w, j);
}

static void ai_complete(jw_t *w, jw_job_t *j, CURLcode rc)
{
    ai_job_t *a = j->data;
    jw_exchange_t x;
    curl_off_t retry_after = 0;
    memset(&x, 0, sizeof(x));
    x.rc = rc;
    curl_easy_getinfo(j->easy, CURLINFO_RESPONSE_CODE, &x.status);
    curl_easy_getinfo(j->easy, CURLINFO_RETRY_AFTER, &retry_after);
    x.retry_after = (long long)retry_after;
    x.body = j->body ? j->body : "";
    x.len = j->len;
    x.too_large = j->too_large;
    jw_llm_result(j->pool, a->task.kind, &x, jw_settings(w)->ai_timeout, &a->result);
}

static apr_status_t ai_settle(jw_t *w, jr_ctx_t *ctx, jw_job_t *j)
{
    ai_job_t *a = j->data;
    const jr_job_t *job = &a->task.job;
    const char *what = "lost";
    apr_status_t rv = jr_ai_finish(ctx, &a->task, &a->result, &what);
    if (rv != APR_SUCCESS) {
        return rv;
    }
    if (!strcmp(what, "retry") || !strcmp(what, "failed")) {
        JR_LOG(JR06010, 0, "AI check %lld of %s %lld, attempt %d: %s (%s)",
               job->id, job->entity_type, job->entity_id, job->attempts, a->result.error, what);
    } else {
        JR_LOG(JR06011, 0, "AI check %lld of %s %lld: %s", job->id,
               job->entity_type, job->entity_id, what);
    }
    return APR_SUCCESS;
}

static apr_status_t ai_release(jw_t *w, jr_ctx_t *ctx, jw_job_t *j)
{
    ai_job_t *a = j->data;
    return jr_ai_release(ctx, &a->task);
}

const jw_handler_t jw_ai_handler = {
    &jr_queue_ai, ai_capacity, ai_claim, ai_start, ai_complete, ai_settle, ai_release,
};
