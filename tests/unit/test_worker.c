/* workers/: the settings file, the key file, the chat completion request, the answer's
 * validation and what an HTTP exchange means for a check. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <apr_strings.h>

#include "jr_json.h"
#include "jw.h"
#include "unit.h"

static apr_pool_t *pool;

static void setup(void)
{
    ck_assert_int_eq(apr_pool_create(&pool, NULL), APR_SUCCESS);
}

static void teardown(void)
{
    apr_pool_destroy(pool);
}

#define BASE "db_driver = sqlite3\ndb_params = /var/lib/j/journal.db\ndata_dir = /var/lib/j\n"

static const char *parse(const char *text, jw_settings_t *s)
{
    return jw_settings_parse(pool, text, s);
}

START_TEST(settings_full)
{
    jw_settings_t s;
    const char *text =
        "# the module writes this\n"
        "\n"
        "db_driver = pgsql\n"
        "  db_params =  host=127.0.0.1 port=5432 dbname=j user=w password=a#b  \n"
        "data_dir=/srv/j\n"
        "runtime_dir = /run/apache2\n"
        "ai_endpoint = http://127.0.0.1:11434/v1/\n"
        "ai_model = llama3.1:8b\n"
        "ai_key_file = /etc/j/ai.key\n"
        "ai_timeout = 90\n"
        "ai_concurrency = 16\n"
        "log_level = debug\n";
    ck_assert_ptr_null(parse(text, &s));
    ck_assert_str_eq(s.db_driver, "pgsql");
    /* the value runs to the end of the line: spaces and '#' belong to it */
    ck_assert_str_eq(s.db_params, "host=127.0.0.1 port=5432 dbname=j user=w password=a#b");
    ck_assert_str_eq(s.data_dir, "/srv/j");
    ck_assert_str_eq(s.runtime_dir, "/run/apache2");
    ck_assert_str_eq(s.ai_endpoint, "http://127.0.0.1:11434/v1"); /* trailing slash dropped */
    ck_assert_str_eq(s.ai_model, "llama3.1:8b");
    ck_assert_str_eq(s.ai_key_file, "/etc/j/ai.key");
    ck_assert_ptr_null(s.ai_key); /* the parser never reads the key file */
    ck_assert_int_eq(s.ai_timeout, 90);
    ck_assert_int_eq(s.ai_concurrency, 16);
    ck_assert_int_eq(s.log_level, JR_LOG_DEBUG);
}
END_TEST

START_TEST(settings_defaults)
{
    jw_settings_t s;
    ck_assert_ptr_null(parse(BASE "ai_endpoint =\n", &s));
    ck_assert_ptr_null(s.ai_endpoint); /* empty: AI not configured */
    ck_assert_ptr_null(s.runtime_dir);
    ck_assert_int_eq(s.ai_timeout, JW_DEFAULT_AI_TIMEOUT);
    ck_assert_int_eq(s.ai_concurrency, JW_DEFAULT_AI_CONCURRENCY);
    ck_assert_int_eq(s.log_level, JR_LOG_WARN);
}
END_TEST

static void refused(const char *text, const char *message)
{
    jw_settings_t s;
    const char *err = parse(text, &s);
    ck_assert_msg(err != NULL, "accepted: %s", text);
    ck_assert_msg(strstr(err, message) != NULL, "'%s' lacks '%s'", err, message);
}

START_TEST(settings_refused)
{
    refused(BASE "ai_timout = 5\n", "line 4: unknown setting 'ai_timout'");
    refused("# c\n" BASE "db_params = /x\n", "line 5: db_params is set twice");
    refused(BASE "just words\n", "line 4: expected 'name = value'");
    refused(BASE "ai_timeout = 0\n", "ai_timeout must be an integer from 1 to 3600");
    refused(BASE "ai_concurrency = many\n", "ai_concurrency must be an integer from 1 to 256");
    refused("db_params = x\ndata_dir = y\n", "db_driver is required");
    refused("db_driver = mysql\ndb_params = x\ndata_dir = y\n", "db_driver is required");
    refused("db_driver = sqlite3\ndata_dir = y\n", "db_params is required");
    refused("db_driver = sqlite3\ndb_params = x\n", "data_dir is required");
    refused(BASE "log_level = loud\n", "log_level must be one of");
    refused(BASE "ai_endpoint = ftp://x\nai_model = m\n", "http:// or https://");
    refused(BASE "ai_endpoint = http://x/v1\n", "ai_model is required");
}
END_TEST

START_TEST(settings_photo)
{
    jw_settings_t s;
    ck_assert_ptr_null(parse(BASE "photo_ai_endpoint = http://gpu1:7860//\n"
                                  "photo_ai_timeout_ms = 300000\n"
                                  "photo_upscale_timeout_ms = 1000\n"
                                  "photo_max_size = 1048576\n",
                             &s));
    ck_assert_str_eq(s.photo_ai_endpoint, "http://gpu1:7860");
    ck_assert_int_eq(s.photo_ai_timeout_ms, 300000);
    ck_assert_int_eq(s.photo_upscale_timeout_ms, 1000);
    ck_assert_int_eq(s.photo_max_size, 1048576);
    ck_assert_ptr_null(s.ai_endpoint); /* the two services are configured apart */
    ck_assert_ptr_null(parse(BASE, &s));
    ck_assert_ptr_null(s.photo_ai_endpoint);
    ck_assert_int_eq(s.photo_ai_timeout_ms, 600000); /* spec 8 */
    ck_assert_int_eq(s.photo_upscale_timeout_ms, JW_DEFAULT_PHOTO_UPSCALE_TIMEOUT_MS);
    ck_assert_int_eq(s.photo_max_size, JW_DEFAULT_PHOTO_MAX_SIZE);
    refused(BASE "photo_ai_endpoint = gpu1:7860\n", "photo_ai_endpoint must be an http://");
    refused(BASE "photo_ai_timeout_ms = 999\n", "from 1000 to 3600000");
    refused(BASE "photo_upscale_timeout_ms = 3600001\n", "from 1000 to 3600000");
    refused(BASE "photo_max_size = 1023\n", "photo_max_size must be an integer from 1024");
}
END_TEST

static const char *key_file(const char *content)
{
    char *path = apr_pstrdup(pool, "/tmp/jr-unit-key-XXXXXX");
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, content, strlen(content)), (int)strlen(content));
    close(fd);
    return path;
}

START_TEST(key_file_read)
{
    const char *key = NULL, *err, *path = key_file("  sk-abc123 \nsecond line\n");
    ck_assert_ptr_null(jw_read_key(pool, path, &key));
    ck_assert_str_eq(key, "sk-abc123");
    unlink(path);
    path = key_file("\n");
    ck_assert_ptr_nonnull(strstr(jw_read_key(pool, path, &key), "empty"));
    unlink(path);
    path = key_file("sk-a b\n");
    err = jw_read_key(pool, path, &key);
    ck_assert_ptr_nonnull(strstr(err, "space"));
    ck_assert_ptr_null(strstr(err, "sk-a")); /* never the key itself */
    unlink(path);
    ck_assert_ptr_nonnull(strstr(jw_read_key(pool, "/nonexistent/key", &key), "cannot read"));
}
END_TEST

START_TEST(settings_redis)
{
    jw_settings_t s;
    const char *pw = key_file(" s3cret pass \nsecond\n"), *conf, *err;
    ck_assert_ptr_null(
        parse(BASE "redis = 127.0.0.1:6379\nredis_password_file = /etc/j/r\n", &s));
    ck_assert_str_eq(s.redis, "127.0.0.1:6379");
    ck_assert_str_eq(s.redis_password_file, "/etc/j/r");
    ck_assert_ptr_null(s.redis_password); /* the parser never reads the file */
    ck_assert_ptr_null(parse(BASE "redis = /run/redis/redis.sock\n", &s));
    ck_assert_str_eq(s.redis, "/run/redis/redis.sock");
    ck_assert_ptr_null(parse(BASE, &s));
    ck_assert_ptr_null(s.redis);
    refused(BASE "redis = localhost\n", "redis must be host:port or the absolute path");
    refused(BASE "redis = host:0\n", "redis must be host:port");
    refused(BASE "redis = host:70000\n", "redis must be host:port");
    refused(BASE "redis = a b:1\n", "redis must be host:port");

    /* loading reads the password: its first line, trimmed (spaces inside are kept) */
    conf = key_file(apr_pstrcat(pool, BASE "redis = 127.0.0.1:1\nredis_password_file = ", pw,
                                "\n", NULL));
    ck_assert_ptr_null(jw_settings_load(pool, conf, &s));
    ck_assert_str_eq(s.redis_password, "s3cret pass");
    unlink(conf);
    conf = key_file(BASE "redis = 127.0.0.1:1\nredis_password_file = /nonexistent/pw\n");
    err = jw_settings_load(pool, conf, &s);
    ck_assert_ptr_nonnull(err);
    ck_assert_ptr_nonnull(strstr(err, "cannot read /nonexistent/pw"));
    unlink(conf);
    unlink(pw);
    pw = key_file("\n");
    conf = key_file(apr_pstrcat(pool, BASE "redis = 127.0.0.1:1\nredis_password_file = ", pw,
                                "\n", NULL));
    ck_assert_ptr_nonnull(strstr(jw_settings_load(pool, conf, &s), "is empty"));
    unlink(conf);
    unlink(pw);
}
END_TEST

/* A listening socket nobody answers on: a Redis that hangs. Its port in *port. */
static int silent_server(int *port)
{
    struct sockaddr_in a;
    socklen_t len = sizeof(a);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    ck_assert_int_eq(listen(fd, 16), 0);
    ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    *port = ntohs(a.sin_port);
    return fd;
}

/* A Redis that refuses or hangs costs one short attempt, then nothing until the back-off
 * ends: the worker's loop is never held up by it. */
START_TEST(redis_down_does_not_block)
{
    jw_settings_t s;
    jw_redis_t *r;
    apr_time_t t0;
    int i, port, fd;
    ck_assert_ptr_null(parse(BASE, &s));
    ck_assert_ptr_null(jw_redis_open(pool, &s)); /* not configured */
    jw_redis_publish(NULL);
    ck_assert_ptr_null(parse(BASE "redis = 127.0.0.1:1\n", &s));
    r = jw_redis_open(pool, &s);
    ck_assert_ptr_nonnull(r);
    for (i = 0; i < 100; ++i) {
        jw_redis_publish(r);
    }
    fd = silent_server(&port);
    ck_assert_ptr_null(parse(apr_psprintf(pool, BASE "redis = 127.0.0.1:%d\n", port), &s));
    r = jw_redis_open(pool, &s);
    t0 = apr_time_now();
    for (i = 0; i < 20; ++i) {
        jw_redis_publish(r); /* the first waits for its answer's timeout (200 ms) */
    }
    ck_assert_int_lt(apr_time_now() - t0, apr_time_from_msec(1500));
    close(fd);
}
END_TEST

START_TEST(request_body)
{
    const char *body = jw_llm_request(pool, "m1", JR_AI_REPORT, "sys", "user text");
    json_error_t e;
    json_t *j = jr_json_own(pool, json_loads(body, 0, &e)), *rf, *schema;
    ck_assert_ptr_nonnull(j);
    ck_assert_str_eq(jr_json_str(j, "model", ""), "m1");
    ck_assert_str_eq(jr_json_str(json_array_get(json_object_get(j, "messages"), 0), "role", ""),
                     "system");
    ck_assert_str_eq(jr_json_str(json_array_get(json_object_get(j, "messages"), 0), "content",
                                 ""),
                     "sys");
    ck_assert_str_eq(jr_json_str(json_array_get(json_object_get(j, "messages"), 1), "content",
                                 ""),
                     "user text");
    rf = json_object_get(j, "response_format");
    ck_assert_str_eq(jr_json_str(rf, "type", ""), "json_schema");
    ck_assert(json_is_true(json_object_get(json_object_get(rf, "json_schema"), "strict")));
    schema = json_object_get(json_object_get(rf, "json_schema"), "schema");
    ck_assert_str_eq(jr_json_dump(pool, schema, NULL),
                     "{\"type\":\"object\",\"properties\":{\"matches_template\":{\"type\":"
                     "\"boolean\"},\"text\":{\"type\":\"string\"}},\"required\":["
                     "\"matches_template\",\"text\"],\"additionalProperties\":false}");
    body = jw_llm_request(pool, "m1", JR_AI_ENTRY, "sys", "u");
    ck_assert_ptr_nonnull(strstr(body, "\"required\":[\"changed\",\"text\"]"));
}
END_TEST

/* A chat completion whose message content is content (a JSON string literal's text). */
static const char *completion(const char *content)
{
    json_t *c = json_pack("{s:[{s:{s:s, s:s}}]}", "choices", "message", "role", "assistant",
                          "content", content);
    return jr_json_dump(pool, jr_json_own(pool, c), NULL);
}

static const char *parse_answer(jr_ai_kind_e kind, const char *body, int *rewrite,
                                const char **text)
{
    *rewrite = -1;
    *text = NULL;
    return jw_llm_parse(pool, kind, body, strlen(body), rewrite, text);
}

START_TEST(answers_valid)
{
    int rw;
    const char *t;
    ck_assert_ptr_null(parse_answer(JR_AI_ENTRY,
                                    completion("{\"changed\": true, \"text\": \"Fixed.\"}"), &rw,
                                    &t));
    ck_assert_int_eq(rw, 1);
    ck_assert_str_eq(t, "Fixed.");
    ck_assert_ptr_null(parse_answer(JR_AI_ENTRY,
                                    completion("{\"text\": \"same\", \"changed\": false}"), &rw,
                                    &t));
    ck_assert_int_eq(rw, 0);
    ck_assert_ptr_null(parse_answer(JR_AI_REPORT,
                                    completion("{\"matches_template\": true, \"text\": \"x\"}"),
                                    &rw, &t));
    ck_assert_int_eq(rw, 0);
    ck_assert_ptr_null(parse_answer(JR_AI_REPORT,
                                    completion("{\"matches_template\": false, \"text\": \"y\"}"),
                                    &rw, &t));
    ck_assert_int_eq(rw, 1);
    ck_assert_str_eq(t, "y");
}
END_TEST

static void invalid(jr_ai_kind_e kind, const char *body, const char *why)
{
    int rw;
    const char *t, *err = parse_answer(kind, body, &rw, &t);
    ck_assert_msg(err != NULL, "accepted: %s", body);
    ck_assert_msg(strstr(err, why) != NULL, "'%s' lacks '%s'", err, why);
}

START_TEST(answers_invalid)
{
    char *long_text = apr_palloc(pool, 20010);
    memset(long_text, 'a', 20005);
    long_text[20005] = '\0';
    invalid(JR_AI_ENTRY, "{not json", "not JSON");
    invalid(JR_AI_ENTRY, "{\"choices\": []}", "no message");
    invalid(JR_AI_ENTRY, "{\"choices\": [{\"message\": {\"content\": null}}]}", "no text");
    invalid(JR_AI_ENTRY,
            "{\"choices\": [{\"message\": {\"content\": null, \"refusal\": \"no\"}}]}",
            "refused");
    invalid(JR_AI_ENTRY, completion("{\"changed\": tru"), "not a JSON object");
    invalid(JR_AI_ENTRY, completion("[true, \"x\"]"), "not a JSON object");
    invalid(JR_AI_ENTRY, completion("{\"changed\": \"yes\", \"text\": \"x\"}"), "schema");
    invalid(JR_AI_ENTRY, completion("{\"changed\": true}"), "schema");
    invalid(JR_AI_ENTRY, completion("{\"changed\": true, \"text\": \"x\", \"why\": \"\"}"),
            "schema");
    invalid(JR_AI_ENTRY, completion("{\"matches_template\": true, \"text\": \"x\"}"), "schema");
    invalid(JR_AI_REPORT, completion("{\"changed\": true, \"text\": \"x\"}"), "schema");
    invalid(JR_AI_ENTRY, completion("{\"changed\": true, \"text\": 5}"), "schema");
    invalid(JR_AI_ENTRY, completion("{\"changed\": true, \"changed\": true, \"text\": \"x\"}"),
            "not a JSON object");
    invalid(JR_AI_ENTRY, completion("{\"changed\": true, \"text\": \"  \"}"), "empty");
    invalid(JR_AI_ENTRY,
            completion(apr_pstrcat(pool, "{\"changed\": true, \"text\": \"", long_text, "\"}",
                                   NULL)),
            "longer than 20000");
}
END_TEST

static jr_ai_result_t exchange(CURLcode rc, long status, long long retry_after,
                               const char *body)
{
    jw_exchange_t x = {rc, status, retry_after, body, strlen(body), 0};
    jr_ai_result_t r;
    jw_llm_result(pool, JR_AI_ENTRY, &x, 60, &r);
    return r;
}

START_TEST(exchanges)
{
    const char *ok = completion("{\"changed\": true, \"text\": \"T\"}");
    jw_exchange_t big = {CURLE_WRITE_ERROR, 200, 0, "", 0, 1};
    jr_ai_result_t r = exchange(CURLE_OK, 200, 0, ok);
    ck_assert_int_eq(r.verdict, JR_AI_APPLY);
    ck_assert_int_eq(r.rewrite, 1);
    ck_assert_str_eq(r.text, "T");

    r = exchange(CURLE_OK, 401, 0, "{\"error\": \"sk-secret is wrong\"}");
    ck_assert_int_eq(r.verdict, JR_AI_FAIL);
    ck_assert_str_eq(r.error, "the AI endpoint refused the key (HTTP 401)");
    ck_assert_int_eq(exchange(CURLE_OK, 403, 0, "").verdict, JR_AI_FAIL);

    r = exchange(CURLE_OK, 429, 7, "slow down");
    ck_assert_int_eq(r.verdict, JR_AI_RETRY);
    ck_assert_int_eq(r.retry_after, 7);
    ck_assert_str_eq(r.error, "the AI endpoint answered HTTP 429");
    r = exchange(CURLE_OK, 500, 7, "<html>stack trace</html>");
    ck_assert_int_eq(r.verdict, JR_AI_RETRY);
    ck_assert_int_eq(r.retry_after, 0); /* only 429 and 503 carry a Retry-After we honour */
    ck_assert_str_eq(r.error, "the AI endpoint answered HTTP 500");
    ck_assert_int_eq(exchange(CURLE_OK, 503, 9, "").retry_after, 9);

    r = exchange(CURLE_OPERATION_TIMEDOUT, 0, 0, "");
    ck_assert_int_eq(r.verdict, JR_AI_RETRY);
    ck_assert_str_eq(r.error, "the AI endpoint did not answer within 60 s");
    ck_assert_str_eq(exchange(CURLE_COULDNT_CONNECT, 0, 0, "").error,
                     "cannot connect to the AI endpoint");
    r = exchange(CURLE_OK, 200, 0, completion("The answer is: {\"changed\": true}"));
    ck_assert_int_eq(r.verdict, JR_AI_RETRY);
    ck_assert_str_eq(r.error, "invalid answer: the answer's content is not a JSON object");
    jw_llm_result(pool, JR_AI_ENTRY, &big, 60, &r);
    ck_assert_int_eq(r.verdict, JR_AI_RETRY);
    ck_assert_str_eq(r.error, "the answer was larger than 1 MB");
}
END_TEST

Suite *suite_worker(void)
{
    Suite *s = suite_create("worker");
    TCase *tc = tcase_create("worker");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, settings_full);
    tcase_add_test(tc, settings_defaults);
    tcase_add_test(tc, settings_refused);
    tcase_add_test(tc, settings_photo);
    tcase_add_test(tc, key_file_read);
    tcase_add_test(tc, settings_redis);
    tcase_add_test(tc, redis_down_does_not_block);
    tcase_add_test(tc, request_body);
    tcase_add_test(tc, answers_valid);
    tcase_add_test(tc, answers_invalid);
    tcase_add_test(tc, exchanges);
    suite_add_tcase(s, tc);
    return s;
}
