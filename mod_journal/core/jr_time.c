#include <ctype.h>
#include <string.h>

#include <apr_strings.h>
#include <unicode/ucal.h>
#include <unicode/ustring.h>

#include "jr_time.h"
#include "jr_util.h"

#define ZONE_MAX 64

/* The zone id as UTF-16 for ICU; ids are ASCII. Returns its length or -1. */
static int32_t zone_uchars(const char *zone, UChar *out)
{
    size_t n = zone ? strlen(zone) : 0, i;
    if (n == 0 || n >= ZONE_MAX) {
        return -1;
    }
    for (i = 0; i < n; ++i) {
        if ((unsigned char)zone[i] > 127) {
            return -1;
        }
        out[i] = (UChar)zone[i];
    }
    return (int32_t)n;
}

int jr_tz_valid(const char *zone)
{
    UChar id[ZONE_MAX], canon[ZONE_MAX];
    UErrorCode status = U_ZERO_ERROR;
    UBool system_id = 0;
    int32_t n = zone_uchars(zone, id);
    if (n < 0) {
        return 0;
    }
    ucal_getCanonicalTimeZoneID(id, n, canon, ZONE_MAX, &system_id, &status);
    /* ICU also accepts custom ids such as GMT+5; only system (IANA) ids count. */
    return U_SUCCESS(status) && system_id;
}

static int digits(const char *s, int n, int *out)
{
    int v = 0, i;
    for (i = 0; i < n; ++i) {
        if (!isdigit((unsigned char)s[i])) {
            return -1;
        }
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return 0;
}

int jr_parse_date(const char *s, int *y, int *m, int *d)
{
    static const int dm[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int leap, max;
    if (!s || strlen(s) != 10 || s[4] != '-' || s[7] != '-' || digits(s, 4, y) ||
        digits(s + 5, 2, m) || digits(s + 8, 2, d) || *y < 1900 || *y > 9999 || *m < 1 ||
        *m > 12) {
        return -1;
    }
    leap = (*y % 4 == 0 && *y % 100 != 0) || *y % 400 == 0;
    max = *m == 2 ? 28 + leap : dm[*m - 1];
    return *d >= 1 && *d <= max ? 0 : -1;
}

int jr_parse_hhmm(const char *s, int *h, int *mi)
{
    if (!s || strlen(s) != 5 || s[2] != ':' || digits(s, 2, h) || digits(s + 3, 2, mi) ||
        *h > 23 || *mi > 59) {
        return -1;
    }
    return 0;
}

static UCalendar *open_cal(const char *zone)
{
    UChar id[ZONE_MAX];
    UErrorCode status = U_ZERO_ERROR;
    int32_t n = zone_uchars(zone, id);
    UCalendar *cal;
    /* ucal_open falls back to GMT for ids it does not know: check first. */
    if (n < 0 || !jr_tz_valid(zone)) {
        return NULL;
    }
    cal = ucal_open(id, n, "en_US@calendar=gregorian", UCAL_GREGORIAN, &status);
    if (U_FAILURE(status)) {
        if (cal) {
            ucal_close(cal);
        }
        return NULL;
    }
    return cal;
}

int jr_tz_day_start(const char *zone, int y, int m, int d, apr_time_t *out)
{
    UErrorCode status = U_ZERO_ERROR;
    UCalendar *cal = open_cal(zone);
    UDate ms;
    if (!cal) {
        return -1;
    }
    /* Lenient: a local midnight that a DST change skips resolves to the first instant that
     * exists on that day. */
    ucal_setAttribute(cal, UCAL_LENIENT, 1);
    ucal_setAttribute(cal, UCAL_REPEATED_WALL_TIME, UCAL_WALLTIME_FIRST);
    ucal_setAttribute(cal, UCAL_SKIPPED_WALL_TIME, UCAL_WALLTIME_NEXT_VALID);
    ucal_clear(cal);
    ucal_setDateTime(cal, y, m - 1, d, 0, 0, 0, &status);
    ms = ucal_getMillis(cal, &status);
    ucal_close(cal);
    if (U_FAILURE(status)) {
        return -1;
    }
    *out = (apr_time_t)ms * 1000;
    return 0;
}

/* The date after y-m-d in the proleptic Gregorian calendar. */
static void next_day(int *y, int *m, int *d)
{
    static const int dm[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int leap = (*y % 4 == 0 && *y % 100 != 0) || *y % 400 == 0;
    int max = *m == 2 ? 28 + leap : dm[*m - 1];
    if (++*d > max) {
        *d = 1;
        if (++*m > 12) {
            *m = 1;
            ++*y;
        }
    }
}

int jr_tz_day_bounds(apr_pool_t *p, const char *zone, const char *date, const char **start,
                     const char **end)
{
    int y, m, d;
    apr_time_t a, b;
    if (jr_parse_date(date, &y, &m, &d) != 0 || jr_tz_day_start(zone, y, m, d, &a) != 0) {
        return -1;
    }
    next_day(&y, &m, &d);
    if (jr_tz_day_start(zone, y, m, d, &b) != 0) {
        return -1;
    }
    *start = jr_iso_time(p, a);
    *end = jr_iso_time(p, b);
    return 0;
}

const char *jr_tz_date_of(apr_pool_t *p, const char *zone, apr_time_t t)
{
    UErrorCode status = U_ZERO_ERROR;
    UCalendar *cal = open_cal(zone);
    int y, m, d;
    if (!cal) {
        return NULL;
    }
    ucal_setMillis(cal, (UDate)(t / 1000), &status);
    y = ucal_get(cal, UCAL_YEAR, &status);
    m = ucal_get(cal, UCAL_MONTH, &status) + 1;
    d = ucal_get(cal, UCAL_DATE, &status);
    ucal_close(cal);
    return U_SUCCESS(status) ? apr_psprintf(p, "%04d-%02d-%02d", y, m, d) : NULL;
}
