/* Dates, times, durations and sizes (jr_time.c, jr_util.c), and the ICU day bounds in a
 * fuzzed time zone. The first line of the input is the zone; each later line (up to 8) goes
 * through every parser. Oracles: parsed values are in range; an ISO timestamp written back
 * by jr_iso_time parses to the same instant. */
#include <apr_strings.h>

#include "fuzz.h"
#include "jr_time.h"
#include "jr_util.h"

#define LINES_MAX 8

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fuzz_root();
    return 0;
}

static void calendar(apr_pool_t *p, const char *zone, int valid, const char *s)
{
    int y, m, d, h, mi;
    const char *start = NULL, *end = NULL;
    if (jr_parse_date(s, &y, &m, &d) == 0) {
        FUZZ_CHECK(y >= 1900 && y <= 9999 && m >= 1 && m <= 12 && d >= 1 && d <= 31);
        if (jr_tz_day_bounds(p, zone, s, &start, &end) == 0) {
            FUZZ_CHECK(valid && start && end);
        }
    }
    if (jr_parse_hhmm(s, &h, &mi) == 0) {
        FUZZ_CHECK(h >= 0 && h <= 23 && mi >= 0 && mi <= 59);
    }
}

static void instant(apr_pool_t *p, const char *zone, int valid, const char *s)
{
    apr_time_t t, back;
    const char *text;
    if (jr_parse_iso_time(s, &t) != 0) {
        return;
    }
    FUZZ_CHECK(t % APR_USEC_PER_SEC == 0);
    text = jr_iso_time(p, t);
    /* Offsets move an instant across the ends of the accepted years. */
    if (strlen(text) == 20 && strncmp(text, "1970", 4) >= 0) {
        FUZZ_CHECK(jr_parse_iso_time(text, &back) == 0 && back == t);
    }
    text = jr_tz_date_of(p, zone, t);
    FUZZ_CHECK(valid ? text && strlen(text) >= 10 : !text);
}

static void amounts(const char *s)
{
    long long v;
    if (jr_parse_duration(s, &v) == 0) {
        FUZZ_CHECK(v >= 0);
    }
    if (jr_parse_size(s, &v) == 0) {
        FUZZ_CHECK(v >= 0);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    apr_pool_t *p = fuzz_pool();
    char *rest = fuzz_cstr(p, data, size), *line;
    const char *zone = fuzz_line(&rest);
    int i, valid = jr_tz_valid(zone);

    for (i = 0; i < LINES_MAX && (line = fuzz_line(&rest)) != NULL; ++i) {
        calendar(p, zone, valid, line);
        instant(p, zone, valid, line);
        amounts(line);
    }
    amounts(zone);
    apr_pool_destroy(p);
    return 0;
}
