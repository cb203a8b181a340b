/* Small helpers shared by the core: strings, numbers, time, URL decoding. */
#ifndef JR_UTIL_H
#define JR_UTIL_H

#include <stdarg.h>

#include <apr_pools.h>
#include <apr_tables.h>
#include <apr_time.h>

/* A copy of s without leading and trailing ASCII white space. */
const char *jr_trim(apr_pool_t *p, const char *s);

/* A secret kept in a file (a password): the file's first line, trimmed. APR_EINVAL when it
 * is empty; the buffer it was read into is wiped. */
apr_status_t jr_read_secret(apr_pool_t *p, const char *path, const char **out);

/* printf-style formatting into pool memory with the C library's conversions (%lld, %zu).
 * apr_psprintf has its own conversion set and prints %lld literally. */
char *jr_psprintf(apr_pool_t *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
char *jr_pvsprintf(apr_pool_t *p, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

/* Lower-case ASCII copy (usernames are case-insensitive). */
const char *jr_ascii_lower(apr_pool_t *p, const char *s);

/* Strict decimal parse of a whole string into [min, max]. Returns 0 on success. */
int jr_parse_int64(const char *s, long long min, long long max, long long *out);

/* Decimal text of n in pool memory. */
const char *jr_i64(apr_pool_t *p, long long n);

/* The same for an optional id: NULL (SQL NULL) when id is 0. */
const char *jr_opt_i64(apr_pool_t *p, long long id);

/* UTC timestamp "YYYY-MM-DDTHH:MM:SSZ" for t (apr time, microseconds). */
const char *jr_iso_time(apr_pool_t *p, apr_time_t t);
const char *jr_now_iso(apr_pool_t *p);

/* Parses an ISO 8601 timestamp with a Z or +hh:mm offset (seconds and fraction optional)
 * into apr time. Returns 0 on success. */
int jr_parse_iso_time(const char *s, apr_time_t *out);

/* Percent-decodes s (and '+' to space when form != 0). Returns NULL on a bad escape or
 * an embedded NUL. */
char *jr_url_decode(apr_pool_t *p, const char *s, int form);

/* Parses an application/x-www-form-urlencoded query string into a table (last value wins).
 * Returns NULL and sets *err on a bad escape. */
apr_table_t *jr_parse_query(apr_pool_t *p, const char *query, const char **err);

/* Percent-encodes everything but unreserved characters (RFC 3986), e.g. for filename*=. */
char *jr_url_encode(apr_pool_t *p, const char *s);

/* An ASCII-only stand-in for a file name in a quoted header parameter: quotes, backslashes,
 * control and non-ASCII characters become '_'. */
char *jr_ascii_filename(apr_pool_t *p, const char *s);

/* The first code point of general category Cf (format: U+200B, U+202E, U+2066, U+FEFF, ...)
 * in a UTF-8 string, or 0 when there is none. Such characters are invisible, and the
 * bidirectional ones reorder what follows them: "x\u202Efdp.exe" displays as "xexe.pdf". */
unsigned jr_utf8_format_char(const char *s);

/* Parses a duration such as "3600", "90s", "30m", "12h", "7d" into seconds. 0 on success. */
int jr_parse_duration(const char *s, long long *seconds);

/* Parses a byte size such as "1048576", "512K", "10M", "1G". 0 on success. */
int jr_parse_size(const char *s, long long *bytes);

#endif
