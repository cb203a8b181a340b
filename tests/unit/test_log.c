/* jr_log.h: messages by tag, the level checked before anything is formatted, the call site's
 * file and line handed to the sink. */
#include <stdio.h>
#include <string.h>

#include "jr_log.h"
#include "unit.h"

static struct {
    int calls;
    jr_log_level_e level;
    apr_status_t rv;
    const char *file;
    int line;
    char msg[256];
} got;

static int evaluated; /* how often an argument of a message was computed */

static void capture(void *baton, jr_log_level_e level, apr_status_t rv, const char *file,
                    int line, const char *msg)
{
    (void)baton;
    ++got.calls;
    got.level = level;
    got.rv = rv;
    got.file = file;
    got.line = line;
    snprintf(got.msg, sizeof(got.msg), "%s", msg);
}

static int counted(int v)
{
    ++evaluated;
    return v;
}

static void setup(void)
{
    memset(&got, 0, sizeof(got));
    evaluated = 0;
}

static void teardown(void)
{
    jr_log_set(NULL, NULL, JR_LOG_DEBUG);
}

START_TEST(tag_level_file_and_line_reach_the_sink)
{
    int line;
    jr_log_set(capture, NULL, JR_LOG_DEBUG);
    line = __LINE__ + 1;
    JR_LOG(JR01007, APR_ENOENT, "result has no column %s", "name");
    ck_assert_int_eq(got.calls, 1);
    ck_assert_int_eq(got.level, JR_LOG_ERR);
    ck_assert_int_eq(got.rv, APR_ENOENT);
    ck_assert_str_eq(got.msg, "JR01007: result has no column name");
    ck_assert_str_eq(got.file, __FILE__);
    ck_assert_int_eq(got.line, line);
}
END_TEST

START_TEST(levels_come_from_the_registry)
{
    ck_assert_int_eq(JR_LOG_LEVEL(JR00001), JR_LOG_CRIT);
    ck_assert_int_eq(JR_LOG_LEVEL(JR01005), JR_LOG_ERR);
    ck_assert_int_eq(JR_LOG_LEVEL(JR01001), JR_LOG_WARN);
    ck_assert_int_eq(JR_LOG_LEVEL(JR01010), JR_LOG_INFO);
    ck_assert_int_eq(JR_LOG_LEVEL(JR06016), JR_LOG_DEBUG);
}
END_TEST

/* Above the enabled level nothing is formatted: not even the arguments are computed. */
START_TEST(a_disabled_level_costs_no_formatting)
{
    jr_log_set(capture, NULL, JR_LOG_WARN);
    JR_LOG(JR01010, 0, "applied %d migration(s); schema version %d", counted(3), counted(7));
    JR_LOG(JR06016, 0, "claimed %d of %d %s job(s) as %s", counted(1), 2, "ai", "w");
    ck_assert_int_eq(evaluated, 0);
    ck_assert_int_eq(got.calls, 0);
    JR_LOG(JR01001, 0, "rolling back a transaction left open by a request");
    ck_assert_int_eq(got.calls, 1);
    ck_assert_int_eq(got.level, JR_LOG_WARN);

    jr_log_set(capture, NULL, JR_LOG_INFO);
    JR_LOG(JR01010, 0, "applied %d migration(s); schema version %d", counted(3), counted(7));
    ck_assert_int_eq(evaluated, 2);
    ck_assert_int_eq(got.calls, 2);
    ck_assert_str_eq(got.msg, "JR01010: applied 3 migration(s); schema version 7");
}
END_TEST

START_TEST(off_writes_nothing)
{
    jr_log_set(capture, NULL, JR_LOG_OFF);
    JR_LOG(JR01005, 0, "statement %s failed: %s", "x", "y");
    ck_assert_int_eq(got.calls, 0);
    ck_assert_int_eq(jr_log_enabled, JR_LOG_OFF);
}
END_TEST

Suite *suite_log(void)
{
    Suite *s = suite_create("log");
    TCase *tc = tcase_create("tags");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, tag_level_file_and_line_reach_the_sink);
    tcase_add_test(tc, levels_come_from_the_registry);
    tcase_add_test(tc, a_disabled_level_costs_no_formatting);
    tcase_add_test(tc, off_writes_nothing);
    suite_add_tcase(s, tc);
    return s;
}
