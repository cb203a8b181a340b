/* jr_ai_describe: what /api/health and /api/ai/status say about AI and the worker processes.
 * Never the endpoint, never anything of the key; counts only from the census httpd's parent
 * keeps, and null where this httpd cannot know. */
#include <stdlib.h>
#include <string.h>

#include "jr_health.h"
#include "jr_json.h"
#include "unit.h"

/* The members jr_ai_describe writes after counts (NULL: none), read back as JSON. */
static json_t *described(apr_pool_t *p, const jr_config_t *cfg, int detail, const char *counts)
{
    jr_jw_t w;
    size_t len;
    const char *text, *err = NULL;
    json_t *j;
    jr_jw_init(&w, p, 64);
    jr_jw_obj(&w);
    if (counts) {
        jr_jw_kint(&w, counts, 4);
    }
    jr_ai_describe(&w, cfg, detail);
    jr_jw_obj_end(&w);
    text = jr_jw_done(&w, &len);
    j = jr_json_parse(p, text, len, &err);
    ck_assert_msg(j != NULL, "%s: %s", text, err ? err : "?");
    return j;
}

/* Sorted keys: the expected texts do not depend on the members' order. */
static char *dump(json_t *j)
{
    return json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT);
}

/* Asserts both answers for cfg: brief (health) and detailed (AI status). */
static void expect(const jr_config_t *cfg, const char *brief, const char *detail)
{
    const char *want[] = {brief, detail};
    apr_pool_t *p;
    int i;
    apr_pool_create(&p, NULL);
    for (i = 0; i < 2; ++i) {
        char *got = dump(described(p, cfg, i, NULL));
        ck_assert_msg(strcmp(got, want[i]) == 0, "got %s, want %s", got, want[i]);
        free(got);
    }
    apr_pool_destroy(p);
}

#define UNKNOWN_WORKERS                                                                    \
    "{\"configured\":false,\"model\":null,\"workers\":{\"binary\":null,\"processes\":0,"        \
    "\"restarts\":0,\"running\":null,\"supervised\":false}}"

START_TEST(not_configured_not_supervised)
{
    jr_config_t cfg;
    memset(&cfg, 0, sizeof(cfg));
    expect(&cfg, "{\"configured\":false,\"workers_running\":null}", UNKNOWN_WORKERS);
}
END_TEST

/* A census of three slots: two processes at work, one slot empty. */
static void two_running(jr_worker_census_t *census)
{
    memset(census, 0, sizeof(*census));
    census->slot[0].pid = 4101;
    census->slot[2].pid = 4103;
    census->slot[2].from = 1000;
}

START_TEST(configured_and_supervised)
{
    jr_worker_census_t census;
    jr_config_t cfg;
    two_running(&census);
    census.restarts = 5;
    census.binary = 1;
    memset(&cfg, 0, sizeof(cfg));
    cfg.ai_endpoint = "http://10.1.2.3:11434/v1";
    cfg.ai_model = "llama3.1";
    cfg.worker_supervised = 1;
    cfg.worker_processes = 3;
    cfg.workers = &census;
    expect(&cfg, "{\"configured\":true,\"workers_running\":2}",
           "{\"configured\":true,\"model\":\"llama3.1\",\"workers\":{\"binary\":true,"
           "\"processes\":3,\"restarts\":5,\"running\":2,\"supervised\":true}}");
}
END_TEST

START_TEST(off_ignores_the_census)
{
    /* JournalWorker Off: workers may run on another host; this httpd knows nothing of them. */
    jr_worker_census_t census;
    jr_config_t cfg;
    two_running(&census);
    census.restarts = 3;
    census.binary = 1;
    memset(&cfg, 0, sizeof(cfg));
    cfg.worker_processes = 2;
    cfg.workers = &census;
    expect(&cfg, "{\"configured\":false,\"workers_running\":null}", UNKNOWN_WORKERS);
}
END_TEST

START_TEST(a_process_waiting_out_its_delay_is_not_running)
{
    /* Restarted after a failure, it waits before it works: not counted until then. */
    jr_worker_census_t census;
    two_running(&census);
    census.slot[1].pid = 4102;
    census.slot[1].from = 2000;
    ck_assert_int_eq(jr_workers_running(&census, 1999), 2);
    ck_assert_int_eq(jr_workers_running(&census, 2000), 3);
    census.slot[0].pid = 0; /* ended: its slot waits for the next process */
    ck_assert_int_eq(jr_workers_running(&census, 2000), 2);
    ck_assert_int_eq(jr_workers_running(&census, 999), 0);
}
END_TEST

START_TEST(added_to_the_queue_counts)
{
    jr_config_t cfg;
    apr_pool_t *p;
    json_t *out;
    apr_pool_create(&p, NULL);
    memset(&cfg, 0, sizeof(cfg));
    out = described(p, &cfg, 1, "pending");
    ck_assert_int_eq(json_integer_value(json_object_get(out, "pending")), 4);
    ck_assert(json_is_false(json_object_get(out, "configured")));
    ck_assert(json_is_object(json_object_get(out, "workers")));
    apr_pool_destroy(p);
}
END_TEST

Suite *suite_ai_describe(void)
{
    Suite *s = suite_create("ai_describe");
    TCase *tc = tcase_create("ai_describe");
    tcase_add_test(tc, not_configured_not_supervised);
    tcase_add_test(tc, configured_and_supervised);
    tcase_add_test(tc, off_ignores_the_census);
    tcase_add_test(tc, a_process_waiting_out_its_delay_is_not_running);
    tcase_add_test(tc, added_to_the_queue_counts);
    suite_add_tcase(s, tc);
    return s;
}
