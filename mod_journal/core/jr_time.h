/* Calendar dates and IANA time zones through ICU's C API (never the process-wide TZ, which
 * a threaded server cannot switch per request). */
#ifndef JR_TIME_H
#define JR_TIME_H

#include <apr_pools.h>
#include <apr_time.h>

/* 1 when zone is an IANA time zone id ICU knows ("Europe/Berlin", "UTC"). */
int jr_tz_valid(const char *zone);

/* Strict YYYY-MM-DD of a real calendar date. 0 on success. */
int jr_parse_date(const char *s, int *y, int *m, int *d);

/* Strict HH:MM from 00:00 to 23:59. 0 on success. */
int jr_parse_hhmm(const char *s, int *h, int *mi);

/* The instant at which the local day y-m-d begins in zone (its local midnight, or the first
 * existing instant of that day when a DST change skips midnight). 0 on success. */
int jr_tz_day_start(const char *zone, int y, int m, int d, apr_time_t *out);

/* [start, end) of a local day as UTC ISO timestamps: the bounds of an inclusive date filter.
 * date is YYYY-MM-DD. 0 on success. */
int jr_tz_day_bounds(apr_pool_t *p, const char *zone, const char *date, const char **start,
                     const char **end);

/* The local calendar date (YYYY-MM-DD) of instant t in zone. NULL on failure. */
const char *jr_tz_date_of(apr_pool_t *p, const char *zone, apr_time_t t);

#endif
