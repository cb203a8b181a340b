/* jr_util.h: strings, numbers, time, URL decoding, durations and sizes. */
#include <limits.h>
#include <string.h>

#include <apr_pools.h>
#include <apr_strings.h>
#include <apr_tables.h>

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

/* ---- strings ------------------------------------------------------------------------- */

START_TEST(trim_strips_ascii_space)
{
    ck_assert_str_eq(jr_trim(pool, "  abc  "), "abc");
    ck_assert_str_eq(jr_trim(pool, "\t\r\n abc def \n"), "abc def");
    ck_assert_str_eq(jr_trim(pool, "abc"), "abc");
    ck_assert_str_eq(jr_trim(pool, "   "), "");
    ck_assert_str_eq(jr_trim(pool, ""), "");
    ck_assert_str_eq(jr_trim(pool, " a "), "a");
}
END_TEST

START_TEST(trim_returns_a_copy)
{
    const char *src = "abc";
    const char *t = jr_trim(pool, src);
    ck_assert_ptr_ne(t, src);
    ck_assert_str_eq(t, "abc");
}
END_TEST

START_TEST(ascii_lower_copies)
{
    const char *src = "Alice.SMITH@Example-1_X";
    ck_assert_str_eq(jr_ascii_lower(pool, src), "alice.smith@example-1_x");
    ck_assert_str_eq(src, "Alice.SMITH@Example-1_X"); /* the input is untouched */
    ck_assert_str_eq(jr_ascii_lower(pool, ""), "");
    /* Bytes above 0x7F (UTF-8) pass through unchanged. */
    ck_assert_str_eq(jr_ascii_lower(pool, "\xC3\x89T\xC3\xA9"), "\xC3\x89t\xC3\xA9");
}
END_TEST

/* ---- integers ------------------------------------------------------------------------ */

START_TEST(parse_int64_accepts_plain_decimals)
{
    long long v = -1;
    ck_assert_int_eq(jr_parse_int64("0", 0, 10, &v), 0);
    ck_assert_int_eq(v, 0);
    ck_assert_int_eq(jr_parse_int64("42", 0, 100, &v), 0);
    ck_assert_int_eq(v, 42);
    ck_assert_int_eq(jr_parse_int64("-17", -20, 0, &v), 0);
    ck_assert_int_eq(v, -17);
    ck_assert_int_eq(jr_parse_int64("9223372036854775807", LLONG_MIN, LLONG_MAX, &v), 0);
    ck_assert(v == LLONG_MAX);
    ck_assert_int_eq(jr_parse_int64("-9223372036854775808", LLONG_MIN, LLONG_MAX, &v), 0);
    ck_assert(v == LLONG_MIN);
}
END_TEST

START_TEST(parse_int64_bounds_are_inclusive)
{
    long long v = 0;
    ck_assert_int_eq(jr_parse_int64("1", 1, 1000, &v), 0);
    ck_assert_int_eq(jr_parse_int64("1000", 1, 1000, &v), 0);
    ck_assert_int_eq(v, 1000);
    v = 77;
    ck_assert_int_ne(jr_parse_int64("0", 1, 1000, &v), 0);
    ck_assert_int_ne(jr_parse_int64("1001", 1, 1000, &v), 0);
    ck_assert_int_ne(jr_parse_int64("-1", 0, 10, &v), 0);
    ck_assert_int_eq(v, 77); /* untouched on failure */
}
END_TEST

START_TEST(parse_int64_rejects_malformed)
{
    static const char *const bad[] = {
        "",     " 1",   "1 ",   "+1",  "\t1", "1\n", "-",   "+",  "1a", "a1",
        "0x10", "1e3",  "1.0",  "--1", "- 1", "1,000", "\xD9\xA1", "12 34",
        "9223372036854775808",                   /* overflow */
        "-9223372036854775809",                  /* underflow */
        "99999999999999999999999999999999",
    };
    size_t i;
    long long v = 5;
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); ++i) {
        ck_assert_msg(jr_parse_int64(bad[i], LLONG_MIN, LLONG_MAX, &v) != 0,
                      "'%s' was accepted", bad[i]);
    }
    ck_assert_int_ne(jr_parse_int64(NULL, 0, 10, &v), 0);
    ck_assert_int_eq(v, 5);
}
END_TEST

START_TEST(i64_and_psprintf_handle_long_long)
{
    /* Regression: apr_psprintf has its own conversions and does not do %lld. */
    ck_assert_str_eq(jr_i64(pool, 0), "0");
    ck_assert_str_eq(jr_i64(pool, -1), "-1");
    ck_assert_str_eq(jr_i64(pool, 9007199254740993LL), "9007199254740993");
    ck_assert_str_eq(jr_i64(pool, LLONG_MAX), "9223372036854775807");
    ck_assert_str_eq(jr_i64(pool, LLONG_MIN), "-9223372036854775808");
    ck_assert_str_eq(jr_psprintf(pool, "%lld|%zu|%s|%05d", 123456789012345LL, (size_t)42, "x", 7),
                     "123456789012345|42|x|00007");
    ck_assert_str_eq(jr_psprintf(pool, "%s", ""), "");
}
END_TEST

START_TEST(psprintf_long_output)
{
    char big[5001];
    char *s;
    memset(big, 'z', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    s = jr_psprintf(pool, "<%s>", big);
    ck_assert_uint_eq(strlen(s), 5002);
    ck_assert_int_eq(s[0], '<');
    ck_assert_int_eq(s[5001], '>');
}
END_TEST

/* ---- time ---------------------------------------------------------------------------- */

static const char *reformat(const char *in)
{
    apr_time_t t;
    if (jr_parse_iso_time(in, &t) != 0) {
        return NULL;
    }
    return jr_iso_time(pool, t);
}

START_TEST(iso_time_known_values)
{
    apr_time_t t = 1;
    ck_assert_str_eq(jr_iso_time(pool, 0), "1970-01-01T00:00:00Z");
    ck_assert_str_eq(jr_iso_time(pool, apr_time_from_sec(946684800)), "2000-01-01T00:00:00Z");
    /* Sub-second parts are dropped, not rounded. */
    ck_assert_str_eq(jr_iso_time(pool, apr_time_from_sec(946684800) + 999999),
                     "2000-01-01T00:00:00Z");
    ck_assert_int_eq(jr_parse_iso_time("1970-01-01T00:00:00Z", &t), 0);
    ck_assert(t == 0);
    ck_assert_int_eq(jr_parse_iso_time("2000-01-01T00:00:00Z", &t), 0);
    ck_assert(t == apr_time_from_sec(946684800));
    ck_assert_int_eq(jr_parse_iso_time("2038-01-19T03:14:08Z", &t), 0); /* past 32 bits */
    ck_assert(t == apr_time_from_sec(2147483648LL));
}
END_TEST

START_TEST(iso_time_round_trip_and_offsets)
{
    ck_assert_str_eq(reformat("2026-03-15T10:20:30Z"), "2026-03-15T10:20:30Z");
    ck_assert_str_eq(reformat("2026-03-15t10:20:30z"), "2026-03-15T10:20:30Z");
    ck_assert_str_eq(reformat("2026-03-15 10:20:30Z"), "2026-03-15T10:20:30Z");
    ck_assert_str_eq(reformat("2026-03-15T10:20Z"), "2026-03-15T10:20:00Z");
    ck_assert_str_eq(reformat("2026-03-15T12:20:30+02:00"), "2026-03-15T10:20:30Z");
    ck_assert_str_eq(reformat("2026-03-15T04:50:30-05:30"), "2026-03-15T10:20:30Z");
    ck_assert_str_eq(reformat("2026-03-15T10:20:30+00:00"), "2026-03-15T10:20:30Z");
    /* Offsets cross day, month and year boundaries. */
    ck_assert_str_eq(reformat("2026-01-01T01:00:00+02:00"), "2025-12-31T23:00:00Z");
    ck_assert_str_eq(reformat("2024-02-28T22:00:00-05:30"), "2024-02-29T03:30:00Z");
    /* Fractions are accepted and ignored. */
    ck_assert_str_eq(reformat("2026-03-15T10:20:30.5Z"), "2026-03-15T10:20:30Z");
    ck_assert_str_eq(reformat("2026-03-15T10:20:30.999999+01:00"), "2026-03-15T09:20:30Z");
}
END_TEST

START_TEST(iso_time_now_is_current)
{
    apr_time_t t, before = apr_time_sec(apr_time_now());
    ck_assert_int_eq(jr_parse_iso_time(jr_now_iso(pool), &t), 0);
    ck_assert(apr_time_sec(t) >= before && apr_time_sec(t) <= before + 2);
}
END_TEST

START_TEST(iso_time_calendar_validation)
{
    apr_time_t t;
    ck_assert_int_eq(jr_parse_iso_time("2024-02-29T00:00:00Z", &t), 0); /* leap year */
    ck_assert_int_eq(jr_parse_iso_time("2000-02-29T00:00:00Z", &t), 0); /* 400 rule */
    ck_assert_int_ne(jr_parse_iso_time("2026-02-29T00:00:00Z", &t), 0);
    ck_assert_int_ne(jr_parse_iso_time("2100-02-29T00:00:00Z", &t), 0); /* 100 rule */
    ck_assert_int_ne(jr_parse_iso_time("2026-04-31T00:00:00Z", &t), 0);
    ck_assert_int_eq(jr_parse_iso_time("2026-12-31T23:59:59Z", &t), 0);
    ck_assert_int_ne(jr_parse_iso_time("2026-13-01T00:00:00Z", &t), 0);
    ck_assert_int_ne(jr_parse_iso_time("2026-00-10T00:00:00Z", &t), 0);
    ck_assert_int_ne(jr_parse_iso_time("2026-01-00T00:00:00Z", &t), 0);
    ck_assert_int_ne(jr_parse_iso_time("2026-01-32T00:00:00Z", &t), 0);
    ck_assert_int_ne(jr_parse_iso_time("2026-01-01T24:00:00Z", &t), 0);
    ck_assert_int_ne(jr_parse_iso_time("2026-01-01T23:60:00Z", &t), 0);
    ck_assert_int_ne(jr_parse_iso_time("2026-01-01T23:59:60Z", &t), 0);
    ck_assert_int_ne(jr_parse_iso_time("1969-12-31T23:59:59Z", &t), 0);
}
END_TEST

START_TEST(iso_time_syntax_errors)
{
    static const char *const bad[] = {
        "",
        "2026-03-15",                 /* no time */
        "2026-03-15T10:20:30",        /* no zone */
        "2026-03-15T10:20:30+0200",   /* offset without colon */
        "2026-03-15T10:20:30+02",     /* truncated offset */
        "2026-03-15T10:20:30+24:00",  /* offset hour */
        "2026-03-15T10:20:30+02:60",  /* offset minute */
        "2026-03-15T10:20:30.Z",      /* empty fraction */
        "2026-03-15T10:20:30Zjunk",   /* trailing text */
        "2026-3-15T10:20:30Z",        /* one-digit month */
        "26-03-15T10:20:30Z",
        "2026/03/15T10:20:30Z",
        "2026-03-15X10:20:30Z",
        "2026-03-15T1:20:30Z",
        "2026-03-15T10:20:3Z",
        "2026-03-15T10-20-30Z",
        "abcd-ef-ghTij:kl:mnZ",
    };
    size_t i;
    apr_time_t t = 12345;
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); ++i) {
        ck_assert_msg(jr_parse_iso_time(bad[i], &t) != 0, "'%s' was accepted", bad[i]);
    }
    ck_assert(t == 12345);
}
END_TEST

/* ---- URL decoding and query strings -------------------------------------------------- */

START_TEST(url_decode_escapes)
{
    ck_assert_str_eq(jr_url_decode(pool, "a%2Fb", 0), "a/b");
    ck_assert_str_eq(jr_url_decode(pool, "a%2fb", 0), "a/b");
    ck_assert_str_eq(jr_url_decode(pool, "%3A%3A1", 0), "::1");
    ck_assert_str_eq(jr_url_decode(pool, "%C3%A9t%C3%A9", 0), "\xC3\xA9t\xC3\xA9");
    ck_assert_str_eq(jr_url_decode(pool, "100%25", 0), "100%");
    ck_assert_str_eq(jr_url_decode(pool, "plain", 0), "plain");
    ck_assert_str_eq(jr_url_decode(pool, "", 0), "");
}
END_TEST

START_TEST(url_decode_plus_only_in_forms)
{
    ck_assert_str_eq(jr_url_decode(pool, "a+b", 0), "a+b");
    ck_assert_str_eq(jr_url_decode(pool, "a+b", 1), "a b");
    ck_assert_str_eq(jr_url_decode(pool, "a%2Bb", 1), "a+b");
    ck_assert_str_eq(jr_url_decode(pool, "a%20b", 0), "a b");
}
END_TEST

START_TEST(url_decode_rejects_bad_escapes)
{
    static const char *const bad[] = {"%", "a%", "%4", "a%4", "%G0", "%0G", "%zz", "% 1",
                                      "%00", "a%00b", "%-1", "%%"};
    size_t i;
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); ++i) {
        ck_assert_msg(jr_url_decode(pool, bad[i], 0) == NULL, "'%s' was accepted", bad[i]);
        ck_assert_msg(jr_url_decode(pool, bad[i], 1) == NULL, "'%s' was accepted (form)", bad[i]);
    }
}
END_TEST

START_TEST(parse_query_basic)
{
    const char *err = NULL;
    apr_table_t *t = jr_parse_query(pool, "a=1&b=x%20y&c&d=&e=p+q&f=%3D%26", &err);
    ck_assert_ptr_nonnull(t);
    ck_assert_ptr_null(err);
    ck_assert_str_eq(apr_table_get(t, "a"), "1");
    ck_assert_str_eq(apr_table_get(t, "b"), "x y");
    ck_assert_str_eq(apr_table_get(t, "c"), "");
    ck_assert_str_eq(apr_table_get(t, "d"), "");
    ck_assert_str_eq(apr_table_get(t, "e"), "p q");
    ck_assert_str_eq(apr_table_get(t, "f"), "=&");
    ck_assert_ptr_null(apr_table_get(t, "g"));
}
END_TEST

START_TEST(parse_query_edge_cases)
{
    const char *err = NULL;
    apr_table_t *t;

    t = jr_parse_query(pool, "limit=1&limit=2&&=orphan&offset=3=4", &err);
    ck_assert_ptr_nonnull(t);
    ck_assert_str_eq(apr_table_get(t, "limit"), "2"); /* last value wins */
    ck_assert_int_eq(apr_table_elts(t)->nelts, 2);    /* empty names are dropped */
    ck_assert_str_eq(apr_table_get(t, "offset"), "3=4");

    t = jr_parse_query(pool, "", &err);
    ck_assert_ptr_nonnull(t);
    ck_assert(apr_is_empty_table(t));
    t = jr_parse_query(pool, NULL, &err);
    ck_assert_ptr_nonnull(t);
    ck_assert(apr_is_empty_table(t));
    ck_assert_ptr_null(err);
}
END_TEST

START_TEST(parse_query_bad_escape)
{
    const char *err = NULL;
    ck_assert_ptr_null(jr_parse_query(pool, "a=1&b=%zz", &err));
    ck_assert_ptr_nonnull(err);
    err = NULL;
    ck_assert_ptr_null(jr_parse_query(pool, "a%00=1", &err));
    ck_assert_ptr_nonnull(err);
    err = NULL;
    ck_assert_ptr_null(jr_parse_query(pool, "x=%4", &err));
    ck_assert_ptr_nonnull(err);
}
END_TEST

/* ---- durations and sizes ------------------------------------------------------------- */

START_TEST(parse_duration_units)
{
    long long s = -1;
    ck_assert_int_eq(jr_parse_duration("90", &s), 0);
    ck_assert_int_eq(s, 90);
    ck_assert_int_eq(jr_parse_duration("90s", &s), 0);
    ck_assert_int_eq(s, 90);
    ck_assert_int_eq(jr_parse_duration("30m", &s), 0);
    ck_assert_int_eq(s, 1800);
    ck_assert_int_eq(jr_parse_duration("12h", &s), 0);
    ck_assert_int_eq(s, 43200);
    ck_assert_int_eq(jr_parse_duration("7d", &s), 0);
    ck_assert_int_eq(s, 604800);
    ck_assert_int_eq(jr_parse_duration("0", &s), 0);
    ck_assert_int_eq(s, 0);
    ck_assert_int_eq(jr_parse_duration("3600", &s), 0);
    ck_assert_int_eq(s, 3600);
}
END_TEST

START_TEST(parse_duration_rejects)
{
    static const char *const bad[] = {"1w", "", "-5", "+5", " 5", "5 ", "s", "5ss", "5sm",
                                      "1.5h", "5y", "h5", "99999999999999999999",
                                      "9223372036854775807d"};
    size_t i;
    long long s = 42;
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); ++i) {
        ck_assert_msg(jr_parse_duration(bad[i], &s) != 0, "'%s' was accepted", bad[i]);
    }
    ck_assert_int_ne(jr_parse_duration(NULL, &s), 0);
    ck_assert_int_eq(s, 42);
}
END_TEST

START_TEST(parse_size_units)
{
    long long b = -1;
    ck_assert_int_eq(jr_parse_size("1024", &b), 0);
    ck_assert_int_eq(b, 1024);
    ck_assert_int_eq(jr_parse_size("512K", &b), 0);
    ck_assert_int_eq(b, 524288);
    ck_assert_int_eq(jr_parse_size("512k", &b), 0);
    ck_assert_int_eq(b, 524288);
    ck_assert_int_eq(jr_parse_size("10M", &b), 0);
    ck_assert_int_eq(b, 10485760);
    ck_assert_int_eq(jr_parse_size("1G", &b), 0);
    ck_assert_int_eq(b, 1073741824);
    ck_assert_int_eq(jr_parse_size("8G", &b), 0);
    ck_assert(b == 8589934592LL);
}
END_TEST

START_TEST(parse_size_rejects)
{
    static const char *const bad[] = {"1T", "", "-1", "-1K", "1KB", "K", "1 K", "1.5M", "1b",
                                      "99999999999999999999G", "9000000000G"};
    size_t i;
    long long b = 42;
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); ++i) {
        ck_assert_msg(jr_parse_size(bad[i], &b) != 0, "'%s' was accepted", bad[i]);
    }
    ck_assert_int_eq(b, 42);
}
END_TEST

/* ---- Unicode format characters (Cf) --------------------------------------------------- */

START_TEST(format_char_found_anywhere)
{
    ck_assert_uint_eq(jr_utf8_format_char("invoice\xE2\x80\xAE" "fdp.exe"), 0x202E); /* RLO */
    ck_assert_uint_eq(jr_utf8_format_char("\xE2\x80\x8B"), 0x200B);  /* zero width space */
    ck_assert_uint_eq(jr_utf8_format_char("a\xE2\x81\xA6" "b"), 0x2066); /* left-to-right isolate */
    ck_assert_uint_eq(jr_utf8_format_char("\xEF\xBB\xBFname.pdf"), 0xFEFF); /* BOM */
    ck_assert_uint_eq(jr_utf8_format_char("soft\xC2\xADhyphen"), 0x00AD);
    ck_assert_uint_eq(jr_utf8_format_char("x.pdf\xF3\xA0\x80\x81"), 0xE0001); /* tag */
    ck_assert_uint_eq(jr_utf8_format_char("a\xE2\x80\x8D" "b\xE2\x80\xAE"), 0x200D); /* first */
}
END_TEST

START_TEST(format_char_absent_in_ordinary_text)
{
    ck_assert_uint_eq(jr_utf8_format_char(""), 0);
    ck_assert_uint_eq(jr_utf8_format_char("report.pdf"), 0);
    /* accents, CJK, Cyrillic, Hebrew, an emoji, a no-break space (Zs), an en dash */
    ck_assert_uint_eq(jr_utf8_format_char("R\xC3\xA9sum\xC3\xA9 \xE6\x97\xA5\xE6\x9C\xAC "
                                           "\xD0\xB6 \xD7\xA9 \xF0\x9F\x98\x80\xC2\xA0"
                                           "\xE2\x80\x93.pdf"),
                      0);
}
END_TEST

Suite *suite_util(void)
{
    Suite *s = suite_create("util");
    TCase *tc = tcase_create("strings");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, trim_strips_ascii_space);
    tcase_add_test(tc, trim_returns_a_copy);
    tcase_add_test(tc, ascii_lower_copies);
    tcase_add_test(tc, parse_int64_accepts_plain_decimals);
    tcase_add_test(tc, parse_int64_bounds_are_inclusive);
    tcase_add_test(tc, parse_int64_rejects_malformed);
    tcase_add_test(tc, i64_and_psprintf_handle_long_long);
    tcase_add_test(tc, psprintf_long_output);
    tcase_add_test(tc, format_char_found_anywhere);
    tcase_add_test(tc, format_char_absent_in_ordinary_text);
    suite_add_tcase(s, tc);

    tc = tcase_create("time");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, iso_time_known_values);
    tcase_add_test(tc, iso_time_round_trip_and_offsets);
    tcase_add_test(tc, iso_time_now_is_current);
    tcase_add_test(tc, iso_time_calendar_validation);
    tcase_add_test(tc, iso_time_syntax_errors);
    suite_add_tcase(s, tc);

    tc = tcase_create("url");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, url_decode_escapes);
    tcase_add_test(tc, url_decode_plus_only_in_forms);
    tcase_add_test(tc, url_decode_rejects_bad_escapes);
    tcase_add_test(tc, parse_query_basic);
    tcase_add_test(tc, parse_query_edge_cases);
    tcase_add_test(tc, parse_query_bad_escape);
    suite_add_tcase(s, tc);

    tc = tcase_create("units");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, parse_duration_units);
    tcase_add_test(tc, parse_duration_rejects);
    tcase_add_test(tc, parse_size_units);
    tcase_add_test(tc, parse_size_rejects);
    suite_add_tcase(s, tc);
    return s;
}
