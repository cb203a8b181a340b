/* The OpenAI-compatible side of a check: the chat completion request, the answer's
 * validation against its schema, and what an HTTP exchange means (docs/worker.md, "The
 * answer contract" and "Failure handling"). Error texts are ours, short, and never carry the
 * key, the endpoint's body or the model's output. */
#include <string.h>

#include <apr_strings.h>
#include <jansson.h>

#include "jr_json.h"
#include "jr_util.h"
#include "jw.h"

#define TEXT_MAX 20000 /* characters: the longest entry description and report text */

static const char *flag_of(jr_ai_kind_e kind)
{
    return kind == JR_AI_ENTRY ? "changed" : "matches_template";
}

static json_t *schema(jr_ai_kind_e kind)
{
    return json_pack("{s:s, s:{s:{s:s}, s:{s:s}}, s:[s,s], s:b}", "type", "object",
                     "properties", flag_of(kind), "type", "boolean", "text", "type", "string",
                     "required", flag_of(kind), "text", "additionalProperties", 0);
}

const char *jw_llm_request(apr_pool_t *p, const char *model, jr_ai_kind_e kind,
                           const char *system, const char *user)
{
    json_t *req = json_pack(
        "{s:s, s:[{s:s, s:s}, {s:s, s:s}], s:{s:s, s:{s:s, s:b, s:o}}, s:b}", "model", model,
        "messages", "role", "system", "content", system, "role", "user", "content", user,
        "response_format", "type", "json_schema", "json_schema", "name",
        kind == JR_AI_ENTRY ? "entry_check" : "lesson_report_check", "strict", 1, "schema",
        schema(kind), "stream", 0);
    return req ? jr_json_dump(p, jr_json_own(p, req), NULL) : NULL;
}

/* The message content of a chat completion, or NULL with *why. */
static const char *content_of(const json_t *root, const char **why)
{
    json_t *msg = json_object_get(json_array_get(json_object_get(root, "choices"), 0), "message");
    json_t *refusal = json_object_get(msg, "refusal");
    if (!json_is_object(msg)) {
        *why = "the answer has no message";
        return NULL;
    }
    if (json_is_string(refusal)) {
        *why = "the model refused to answer";
        return NULL;
    }
    if (!json_is_string(json_object_get(msg, "content"))) {
        *why = "the answer's message has no text content";
        return NULL;
    }
    return json_string_value(json_object_get(msg, "content"));
}

const char *jw_llm_parse(apr_pool_t *p, jr_ai_kind_e kind, const char *body, size_t len,
                         int *rewrite, const char **text)
{
    const char *why = NULL, *content, *t;
    json_t *root, *answer, *flag;
    json_error_t e;

    if (!(root = jr_json_own(p, json_loadb(body, len, JSON_REJECT_DUPLICATES, &e)))) {
        return "the answer is not JSON";
    }
    if (!(content = content_of(root, &why))) {
        return why;
    }
    answer = jr_json_own(p, json_loads(content, JSON_REJECT_DUPLICATES, &e));
    if (!json_is_object(answer)) {
        return "the answer's content is not a JSON object";
    }
    flag = json_object_get(answer, flag_of(kind));
    if (json_object_size(answer) != 2 || !json_is_boolean(flag) ||
        !json_is_string(json_object_get(answer, "text"))) {
        return "the answer does not match the schema";
    }
    *rewrite = kind == JR_AI_ENTRY ? json_is_true(flag) : json_is_false(flag);
    if (!*rewrite) {
        return NULL;
    }
    t = json_string_value(json_object_get(answer, "text"));
    if (!*jr_trim(p, t)) {
        return "the rewritten text is empty";
    }
    if (jr_utf8_len(t) > TEXT_MAX) {
        return "the rewritten text is longer than 20000 characters";
    }
    *text = apr_pstrdup(p, t);
    return NULL;
}

/* The error of a failed exchange, with *v; NULL when the exchange succeeded. */
static const char *transfer_error(apr_pool_t *p, const jw_exchange_t *x, long long timeout,
                                  jr_ai_verdict_e *v)
{
    *v = JR_AI_RETRY;
    if (x->too_large) {
        return "the answer was larger than 1 MB";
    }
    switch (x->rc) {
    case CURLE_OK:
        break;
    case CURLE_OPERATION_TIMEDOUT:
        return jr_psprintf(p, "the AI endpoint did not answer within %lld s", timeout);
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
        return "cannot connect to the AI endpoint";
    default:
        /* curl's fixed text for the code: it names no URL, host or header. */
        return apr_pstrcat(p, "the request to the AI endpoint failed: ",
                           curl_easy_strerror(x->rc), NULL);
    }
    if (x->status == 401 || x->status == 403) {
        *v = JR_AI_FAIL;
        return jr_psprintf(p, "the AI endpoint refused the key (HTTP %ld)", x->status);
    }
    if (x->status < 200 || x->status > 299) {
        return jr_psprintf(p, "the AI endpoint answered HTTP %ld", x->status);
    }
    return NULL;
}

void jw_llm_result(apr_pool_t *p, jr_ai_kind_e kind, const jw_exchange_t *x,
                   long long timeout, jr_ai_result_t *r)
{
    const char *why;
    memset(r, 0, sizeof(*r));
    if ((r->error = transfer_error(p, x, timeout, &r->verdict)) != NULL) {
        r->retry_after = x->rc == CURLE_OK && (x->status == 429 || x->status == 503)
                             ? x->retry_after
                             : 0;
        return;
    }
    if ((why = jw_llm_parse(p, kind, x->body, x->len, &r->rewrite, &r->text)) != NULL) {
        r->verdict = JR_AI_RETRY;
        r->error = apr_pstrcat(p, "invalid answer: ", why, NULL);
        return;
    }
    r->verdict = JR_AI_APPLY;
}
