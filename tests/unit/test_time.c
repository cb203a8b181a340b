/* jr_time.h: IANA zones through ICU, strict dates and times, local day bounds across DST. */
#include <string.h>

#include <apr_pools.h>
#include <apr_strings.h>

#include "jr_time.h"
#include "jr_util.h"
#include "unit.h"

static apr_pool_t *pool;

static void setup(void)
{
    ck_assert_int_eq(apr_pool_create(&pool, NULL), APR_SUCCESS);
}

static void teardown(void)
{
    apr_pool_destroy(pool);
    pool = NULL;
}

/* The instant of an ISO timestamp (asserts that it parses). */
static apr_time_t iso(const char *s)
{
    apr_time_t t = 0;
    ck_assert_msg(jr_parse_iso_time(s, &t) == 0, "cannot parse '%s'", s);
    return t;
}

/* Asserts the bounds of a local day and that it lasts hours hours. */
static void expect_day(const char *zone, const char *date, const char *want_start,
                       const char *want_end, int hours, int line)
{
    const char *start = NULL, *end = NULL;
    apr_time_t a, b;
    ck_assert_msg(jr_tz_day_bounds(pool, zone, date, &start, &end) == 0,
                  "line %d: %s %s refused", line, zone, date);
    ck_assert_ptr_nonnull(start);
    ck_assert_ptr_nonnull(end);
    ck_assert_msg(!strcmp(start, want_start), "line %d: %s %s starts at %s, want %s", line,
                  zone, date, start, want_start);
    ck_assert_msg(!strcmp(end, want_end), "line %d: %s %s ends at %s, want %s", line, zone,
                  date, end, want_end);
    a = iso(start);
    b = iso(end);
    ck_assert_msg(b - a == apr_time_from_sec((apr_time_t)hours * 3600),
                  "line %d: %s %s lasts %lld s, want %d h", line, zone, date,
                  (long long)apr_time_sec(b - a), hours);
}
#define EXPECT_DAY(zone, date, start, end, hours)                                           \
    expect_day((zone), (date), (start), (end), (hours), __LINE__)

/* ---- zones --------------------------------------------------------------------------- */

START_TEST(tz_valid_accepts_iana_ids)
{
    ck_assert_int_eq(jr_tz_valid("Europe/Berlin"), 1);
    ck_assert_int_eq(jr_tz_valid("America/New_York"), 1);
    ck_assert_int_eq(jr_tz_valid("Pacific/Auckland"), 1);
    ck_assert_int_eq(jr_tz_valid("UTC"), 1);
}
END_TEST

START_TEST(tz_valid_rejects_others)
{
    char longid[101];
    memset(longid, 'A', sizeof(longid) - 1);
    longid[sizeof(longid) - 1] = '\0';
    ck_assert_int_eq(jr_tz_valid("Mars/Base"), 0);
    ck_assert_int_eq(jr_tz_valid(""), 0);
    ck_assert_int_eq(jr_tz_valid(NULL), 0);
    ck_assert_int_eq(jr_tz_valid("GMT+5"), 0);          /* an ICU custom id, not IANA */
    ck_assert_int_eq(jr_tz_valid("Europe/Berlin\n"), 0);
    ck_assert_int_eq(jr_tz_valid(" Europe/Berlin"), 0);
    ck_assert_int_eq(jr_tz_valid(longid), 0);
    memcpy(longid, "Europe/Berlin", 13);                /* a real id followed by padding */
    ck_assert_int_eq(jr_tz_valid(longid), 0);
    ck_assert_int_eq(jr_tz_valid("Europe/Z\xC3\xBCrich"), 0);
    ck_assert_int_eq(jr_tz_valid("\xC3\x9C"), 0);
}
END_TEST

/* ---- dates and times ----------------------------------------------------------------- */

START_TEST(parse_date_accepts_real_dates)
{
    int y = 0, m = 0, d = 0;
    ck_assert_int_eq(jr_parse_date("2024-02-29", &y, &m, &d), 0);
    ck_assert_int_eq(y, 2024);
    ck_assert_int_eq(m, 2);
    ck_assert_int_eq(d, 29);
    ck_assert_int_eq(jr_parse_date("2026-12-31", &y, &m, &d), 0);
    ck_assert_int_eq(y, 2026);
    ck_assert_int_eq(m, 12);
    ck_assert_int_eq(d, 31);
    ck_assert_int_eq(jr_parse_date("2026-01-01", &y, &m, &d), 0);
    ck_assert_int_eq(m, 1);
    ck_assert_int_eq(d, 1);
    ck_assert_int_eq(jr_parse_date("2026-04-30", &y, &m, &d), 0);
    ck_assert_int_eq(jr_parse_date("2000-02-29", &y, &m, &d), 0); /* divisible by 400 */
}
END_TEST

START_TEST(parse_date_rejects_malformed)
{
    static const char *const bad[] = {
        "2026-02-29", /* not a leap year */
        "1900-02-29", /* divisible by 100 */
        "2026-04-31", "2026-06-31", "2026-13-01", "2026-00-10", "2026-01-00", "2026-01-32",
        "2026-1-01",  "2026-01-1",  "26-01-01",   "2026/01/01", "2026-01-01 ", " 2026-01-01",
        "2026-01-01x", "2026-01-01T00:00:00Z", "", "2026-0a-01", "2026-01-+1",
    };
    size_t i;
    int y, m, d;
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); ++i) {
        ck_assert_msg(jr_parse_date(bad[i], &y, &m, &d) != 0, "'%s' was accepted", bad[i]);
    }
    ck_assert_int_ne(jr_parse_date(NULL, &y, &m, &d), 0);
}
END_TEST

START_TEST(parse_hhmm_bounds)
{
    static const char *const bad[] = {"24:00", "12:60", "7:30", "12:3", "07:30 ", "07-30",
                                      "",      "0730",  "-1:30", "07:3a", "99:99"};
    size_t i;
    int h = -1, mi = -1;
    ck_assert_int_eq(jr_parse_hhmm("00:00", &h, &mi), 0);
    ck_assert_int_eq(h, 0);
    ck_assert_int_eq(mi, 0);
    ck_assert_int_eq(jr_parse_hhmm("23:59", &h, &mi), 0);
    ck_assert_int_eq(h, 23);
    ck_assert_int_eq(mi, 59);
    ck_assert_int_eq(jr_parse_hhmm("07:05", &h, &mi), 0);
    ck_assert_int_eq(h, 7);
    ck_assert_int_eq(mi, 5);
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); ++i) {
        ck_assert_msg(jr_parse_hhmm(bad[i], &h, &mi) != 0, "'%s' was accepted", bad[i]);
    }
    ck_assert_int_ne(jr_parse_hhmm(NULL, &h, &mi), 0);
}
END_TEST

/* ---- local days ---------------------------------------------------------------------- */

START_TEST(day_bounds_berlin_dst)
{
    EXPECT_DAY("Europe/Berlin", "2026-03-29", "2026-03-28T23:00:00Z", "2026-03-29T22:00:00Z", 23);
    EXPECT_DAY("Europe/Berlin", "2026-10-25", "2026-10-24T22:00:00Z", "2026-10-25T23:00:00Z", 25);
    EXPECT_DAY("Europe/Berlin", "2026-06-15", "2026-06-14T22:00:00Z", "2026-06-15T22:00:00Z", 24);
    EXPECT_DAY("Europe/Berlin", "2026-01-15", "2026-01-14T23:00:00Z", "2026-01-15T23:00:00Z", 24);
    /* The days around the changes are ordinary. */
    EXPECT_DAY("Europe/Berlin", "2026-03-28", "2026-03-27T23:00:00Z", "2026-03-28T23:00:00Z", 24);
    EXPECT_DAY("Europe/Berlin", "2026-03-30", "2026-03-29T22:00:00Z", "2026-03-30T22:00:00Z", 24);
}
END_TEST

START_TEST(day_bounds_new_york_dst)
{
    EXPECT_DAY("America/New_York", "2026-03-08", "2026-03-08T05:00:00Z", "2026-03-09T04:00:00Z",
               23);
    EXPECT_DAY("America/New_York", "2026-11-01", "2026-11-01T04:00:00Z", "2026-11-02T05:00:00Z",
               25);
    EXPECT_DAY("America/New_York", "2026-07-04", "2026-07-04T04:00:00Z", "2026-07-05T04:00:00Z",
               24);
    EXPECT_DAY("America/New_York", "2026-01-15", "2026-01-15T05:00:00Z", "2026-01-16T05:00:00Z",
               24);
}
END_TEST

START_TEST(day_bounds_auckland_dst)
{
    EXPECT_DAY("Pacific/Auckland", "2026-04-05", "2026-04-04T11:00:00Z", "2026-04-05T12:00:00Z",
               25);
    EXPECT_DAY("Pacific/Auckland", "2026-09-27", "2026-09-26T12:00:00Z", "2026-09-27T11:00:00Z",
               23);
    EXPECT_DAY("Pacific/Auckland", "2026-06-15", "2026-06-14T12:00:00Z", "2026-06-15T12:00:00Z",
               24);
    EXPECT_DAY("Pacific/Auckland", "2026-01-15", "2026-01-14T11:00:00Z", "2026-01-15T11:00:00Z",
               24);
}
END_TEST

START_TEST(day_bounds_utc)
{
    EXPECT_DAY("UTC", "2026-03-29", "2026-03-29T00:00:00Z", "2026-03-30T00:00:00Z", 24);
    EXPECT_DAY("UTC", "2026-10-25", "2026-10-25T00:00:00Z", "2026-10-26T00:00:00Z", 24);
    EXPECT_DAY("UTC", "2024-02-29", "2024-02-29T00:00:00Z", "2024-03-01T00:00:00Z", 24);
    EXPECT_DAY("UTC", "2026-02-28", "2026-02-28T00:00:00Z", "2026-03-01T00:00:00Z", 24);
    EXPECT_DAY("UTC", "2026-12-31", "2026-12-31T00:00:00Z", "2027-01-01T00:00:00Z", 24);
}
END_TEST

START_TEST(day_bounds_year_boundary)
{
    apr_time_t next = 0;
    const char *start = NULL, *end = NULL;
    EXPECT_DAY("Pacific/Auckland", "2026-12-31", "2026-12-30T11:00:00Z", "2026-12-31T11:00:00Z",
               24);
    /* The end is where 2027-01-01 begins, and that day follows on. */
    ck_assert_int_eq(jr_tz_day_start("Pacific/Auckland", 2027, 1, 1, &next), 0);
    ck_assert_str_eq(jr_iso_time(pool, next), "2026-12-31T11:00:00Z");
    ck_assert_int_eq(jr_tz_day_bounds(pool, "Pacific/Auckland", "2027-01-01", &start, &end), 0);
    ck_assert_str_eq(start, "2026-12-31T11:00:00Z");
    ck_assert_str_eq(end, "2027-01-01T11:00:00Z");
    EXPECT_DAY("Europe/Berlin", "2026-12-31", "2026-12-30T23:00:00Z", "2026-12-31T23:00:00Z", 24);
    EXPECT_DAY("America/New_York", "2026-12-31", "2026-12-31T05:00:00Z", "2027-01-01T05:00:00Z",
               24);
}
END_TEST

START_TEST(day_start_matches_bounds)
{
    apr_time_t t = 0;
    ck_assert_int_eq(jr_tz_day_start("Europe/Berlin", 2026, 3, 29, &t), 0);
    ck_assert(t == iso("2026-03-28T23:00:00Z"));
    ck_assert_int_eq(jr_tz_day_start("Europe/Berlin", 2026, 10, 25, &t), 0);
    ck_assert(t == iso("2026-10-24T22:00:00Z"));
    ck_assert_int_eq(jr_tz_day_start("America/New_York", 2026, 11, 1, &t), 0);
    ck_assert(t == iso("2026-11-01T04:00:00Z"));
    ck_assert_int_eq(jr_tz_day_start("UTC", 2026, 1, 1, &t), 0);
    ck_assert(t == iso("2026-01-01T00:00:00Z"));
}
END_TEST

START_TEST(day_bounds_refuses_bad_date)
{
    const char *start = "untouched", *end = "untouched";
    ck_assert_int_eq(jr_tz_day_bounds(pool, "Europe/Berlin", "2026-02-29", &start, &end), -1);
    ck_assert_int_eq(jr_tz_day_bounds(pool, "Europe/Berlin", "2026-04-31", &start, &end), -1);
    ck_assert_int_eq(jr_tz_day_bounds(pool, "Europe/Berlin", "2026-13-01", &start, &end), -1);
    ck_assert_int_eq(jr_tz_day_bounds(pool, "Europe/Berlin", "2026-6-01", &start, &end), -1);
    ck_assert_int_eq(jr_tz_day_bounds(pool, "UTC", "2026-06-01 ", &start, &end), -1);
    ck_assert_int_eq(jr_tz_day_bounds(pool, "Europe/Berlin", "", &start, &end), -1);
    ck_assert_int_eq(jr_tz_day_bounds(pool, "Europe/Berlin", NULL, &start, &end), -1);
    ck_assert_str_eq(start, "untouched");
    ck_assert_str_eq(end, "untouched");
}
END_TEST

START_TEST(day_bounds_refuses_bad_zone)
{
    const char *start = "untouched", *end = "untouched";
    apr_time_t t = 42;
    ck_assert_int_eq(jr_tz_day_bounds(pool, "", "2026-06-01", &start, &end), -1);
    ck_assert_int_eq(jr_tz_day_bounds(pool, NULL, "2026-06-01", &start, &end), -1);
    ck_assert_int_eq(jr_tz_day_bounds(pool, "Mars/Base", "2026-06-01", &start, &end), -1);
    ck_assert_int_eq(jr_tz_day_bounds(pool, "Europe/Berlin\n", "2026-06-01", &start, &end), -1);
    ck_assert_str_eq(start, "untouched");
    ck_assert_str_eq(end, "untouched");
    ck_assert_int_eq(jr_tz_day_start("Mars/Base", 2026, 6, 1, &t), -1);
    ck_assert(t == 42);
}
END_TEST

START_TEST(date_of_instant_per_zone)
{
    apr_time_t t = iso("2026-06-01T23:30:00Z");
    const char *d;
    d = jr_tz_date_of(pool, "Europe/Berlin", t);
    ck_assert_ptr_nonnull(d);
    ck_assert_str_eq(d, "2026-06-02");
    d = jr_tz_date_of(pool, "America/New_York", t);
    ck_assert_ptr_nonnull(d);
    ck_assert_str_eq(d, "2026-06-01");
    d = jr_tz_date_of(pool, "Pacific/Auckland", t);
    ck_assert_ptr_nonnull(d);
    ck_assert_str_eq(d, "2026-06-02");
    d = jr_tz_date_of(pool, "UTC", t);
    ck_assert_ptr_nonnull(d);
    ck_assert_str_eq(d, "2026-06-01");
}
END_TEST

START_TEST(date_of_refuses_bad_zone)
{
    apr_time_t t = iso("2026-06-01T23:30:00Z");
    ck_assert_ptr_null(jr_tz_date_of(pool, "", t));
    ck_assert_ptr_null(jr_tz_date_of(pool, NULL, t));
    ck_assert_ptr_null(jr_tz_date_of(pool, "Mars/Base", t));
}
END_TEST

START_TEST(date_of_agrees_with_day_bounds)
{
    /* The first instant of a day belongs to it, the last one too, the end does not. */
    ck_assert_str_eq(jr_tz_date_of(pool, "Europe/Berlin", iso("2026-03-28T23:00:00Z")),
                     "2026-03-29");
    ck_assert_str_eq(jr_tz_date_of(pool, "Europe/Berlin", iso("2026-03-29T21:59:59Z")),
                     "2026-03-29");
    ck_assert_str_eq(jr_tz_date_of(pool, "Europe/Berlin", iso("2026-03-29T22:00:00Z")),
                     "2026-03-30");
    ck_assert_str_eq(jr_tz_date_of(pool, "Europe/Berlin", iso("2026-03-28T22:59:59Z")),
                     "2026-03-28");
    ck_assert_str_eq(jr_tz_date_of(pool, "Pacific/Auckland", iso("2026-12-31T11:00:00Z")),
                     "2027-01-01");
    ck_assert_str_eq(jr_tz_date_of(pool, "Pacific/Auckland", iso("2026-12-31T10:59:59Z")),
                     "2026-12-31");
}
END_TEST

Suite *suite_time(void)
{
    Suite *s = suite_create("time");
    TCase *tc = tcase_create("time");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, tz_valid_accepts_iana_ids);
    tcase_add_test(tc, tz_valid_rejects_others);
    tcase_add_test(tc, parse_date_accepts_real_dates);
    tcase_add_test(tc, parse_date_rejects_malformed);
    tcase_add_test(tc, parse_hhmm_bounds);
    tcase_add_test(tc, day_bounds_berlin_dst);
    tcase_add_test(tc, day_bounds_new_york_dst);
    tcase_add_test(tc, day_bounds_auckland_dst);
    tcase_add_test(tc, day_bounds_utc);
    tcase_add_test(tc, day_bounds_year_boundary);
    tcase_add_test(tc, day_start_matches_bounds);
    tcase_add_test(tc, day_bounds_refuses_bad_date);
    tcase_add_test(tc, day_bounds_refuses_bad_zone);
    tcase_add_test(tc, date_of_instant_per_zone);
    tcase_add_test(tc, date_of_refuses_bad_zone);
    tcase_add_test(tc, date_of_agrees_with_day_bounds);
    suite_add_tcase(s, tc);
    return s;
}
