#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <apr_file_io.h>
#include <apr_strings.h>
#include <unicode/uchar.h>
#include <unicode/utf8.h>

#include "jr_util.h"

const char *jr_trim(apr_pool_t *p, const char *s)
{
    const char *end;
    while (*s && isspace((unsigned char)*s)) {
        ++s;
    }
    end = s + strlen(s);
    while (end > s && isspace((unsigned char)end[-1])) {
        --end;
    }
    return apr_pstrmemdup(p, s, (apr_size_t)(end - s));
}

apr_status_t jr_read_secret(apr_pool_t *p, const char *path, const char **out)
{
    char buf[1024];
    apr_size_t len = sizeof(buf) - 1;
    apr_file_t *f;
    apr_status_t rv = apr_file_open(&f, path, APR_FOPEN_READ, 0, p);
    if (rv != APR_SUCCESS) {
        return rv;
    }
    rv = apr_file_read_full(f, buf, len, &len);
    apr_file_close(f);
    if (rv != APR_SUCCESS && rv != APR_EOF) {
        return rv;
    }
    buf[len] = '\0';
    buf[strcspn(buf, "\r\n")] = '\0';
    *out = jr_trim(p, buf);
    memset(buf, 0, sizeof(buf));
    return **out ? APR_SUCCESS : APR_EINVAL;
}

char *jr_pvsprintf(apr_pool_t *p, const char *fmt, va_list ap)
{
    va_list copy;
    int n;
    char *buf;
    va_copy(copy, ap);
    n = vsnprintf(NULL, 0, fmt, copy);
    va_end(copy);
    if (n < 0) {
        return apr_pstrdup(p, "");
    }
    buf = apr_palloc(p, (apr_size_t)n + 1);
    vsnprintf(buf, (size_t)n + 1, fmt, ap);
    return buf;
}

char *jr_psprintf(apr_pool_t *p, const char *fmt, ...)
{
    va_list ap;
    char *s;
    va_start(ap, fmt);
    s = jr_pvsprintf(p, fmt, ap);
    va_end(ap);
    return s;
}

const char *jr_ascii_lower(apr_pool_t *p, const char *s)
{
    char *c = apr_pstrdup(p, s), *q;
    for (q = c; *q; ++q) {
        *q = (char)tolower((unsigned char)*q);
    }
    return c;
}

int jr_parse_int64(const char *s, long long min, long long max, long long *out)
{
    char *end;
    long long v;
    if (!s || !*s || isspace((unsigned char)*s) || *s == '+') {
        return -1;
    }
    errno = 0;
    v = strtoll(s, &end, 10);
    if (errno || *end || v < min || v > max) {
        return -1;
    }
    *out = v;
    return 0;
}

const char *jr_i64(apr_pool_t *p, long long n)
{
    return jr_psprintf(p, "%lld", n);
}

const char *jr_opt_i64(apr_pool_t *p, long long id)
{
    return id ? jr_i64(p, id) : NULL;
}

const char *jr_iso_time(apr_pool_t *p, apr_time_t t)
{
    apr_time_exp_t tm;
    apr_time_exp_gmt(&tm, t);
    return apr_psprintf(p, "%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                        tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

const char *jr_now_iso(apr_pool_t *p)
{
    return jr_iso_time(p, apr_time_now());
}

static int digits(const char **s, int n, int *out)
{
    int v = 0, i;
    for (i = 0; i < n; ++i) {
        if (!isdigit((unsigned char)(*s)[i])) {
            return -1;
        }
        v = v * 10 + ((*s)[i] - '0');
    }
    *s += n;
    *out = v;
    return 0;
}

static int days_in_month(int y, int m)
{
    static const int dm[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return m == 2 ? 28 + leap : dm[m - 1];
}

int jr_parse_iso_time(const char *s, apr_time_t *out)
{
    apr_time_exp_t tm;
    int y, mo, d, h, mi, sec = 0, off = 0;
    apr_time_t t;

    memset(&tm, 0, sizeof(tm));
    if (digits(&s, 4, &y) || *s++ != '-' || digits(&s, 2, &mo) || *s++ != '-' ||
        digits(&s, 2, &d) || (*s != 'T' && *s != 't' && *s != ' ')) {
        return -1;
    }
    ++s;
    if (digits(&s, 2, &h) || *s++ != ':' || digits(&s, 2, &mi)) {
        return -1;
    }
    if (*s == ':') {
        ++s;
        if (digits(&s, 2, &sec)) {
            return -1;
        }
        if (*s == '.') {
            ++s;
            if (!isdigit((unsigned char)*s)) {
                return -1;
            }
            while (isdigit((unsigned char)*s)) {
                ++s;
            }
        }
    }
    if (*s == 'Z' || *s == 'z') {
        ++s;
    } else if (*s == '+' || *s == '-') {
        int sign = *s == '-' ? -1 : 1, oh, om;
        ++s;
        if (digits(&s, 2, &oh) || *s++ != ':' || digits(&s, 2, &om) || oh > 23 || om > 59) {
            return -1;
        }
        off = sign * (oh * 3600 + om * 60);
    } else {
        return -1;
    }
    if (*s || y < 1970 || mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo) || h > 23 ||
        mi > 59 || sec > 59) {
        return -1;
    }
    tm.tm_year = y - 1900;
    tm.tm_mon = mo - 1;
    tm.tm_mday = d;
    tm.tm_hour = h;
    tm.tm_min = mi;
    tm.tm_sec = sec;
    if (apr_time_exp_gmt_get(&t, &tm) != APR_SUCCESS) {
        return -1;
    }
    *out = t - apr_time_from_sec(off);
    return 0;
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    c = tolower(c);
    return (c >= 'a' && c <= 'f') ? c - 'a' + 10 : -1;
}

char *jr_url_decode(apr_pool_t *p, const char *s, int form)
{
    char *out = apr_palloc(p, strlen(s) + 1), *o = out;
    for (; *s; ++s) {
        if (*s == '%') {
            int hi = hexval((unsigned char)s[1]), lo = hi < 0 ? -1 : hexval((unsigned char)s[2]);
            if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) {
                return NULL;
            }
            *o++ = (char)(hi * 16 + lo);
            s += 2;
        } else if (form && *s == '+') {
            *o++ = ' ';
        } else {
            *o++ = *s;
        }
    }
    *o = '\0';
    return out;
}

char *jr_url_encode(apr_pool_t *p, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    char *out = apr_palloc(p, strlen(s) * 3 + 1), *o = out;
    for (; *s; ++s) {
        unsigned char c = (unsigned char)*s;
        if (isalnum(c) || strchr("-._~", c)) {
            *o++ = (char)c;
        } else {
            *o++ = '%';
            *o++ = hex[c >> 4];
            *o++ = hex[c & 15];
        }
    }
    *o = '\0';
    return out;
}

char *jr_ascii_filename(apr_pool_t *p, const char *s)
{
    char *out = apr_pstrdup(p, s), *o;
    for (o = out; *o; ++o) {
        unsigned char c = (unsigned char)*o;
        if (c < 0x20 || c > 0x7e || c == '"' || c == '\\') {
            *o = '_';
        }
    }
    return out;
}

unsigned jr_utf8_format_char(const char *s)
{
    int32_t i = 0, len = (int32_t)strlen(s);
    UChar32 c;
    while (i < len) {
        U8_NEXT((const uint8_t *)s, i, len, c);
        if (c >= 0 && u_charType(c) == U_FORMAT_CHAR) {
            return (unsigned)c;
        }
    }
    return 0;
}

apr_table_t *jr_parse_query(apr_pool_t *p, const char *query, const char **err)
{
    apr_table_t *t = apr_table_make(p, 8);
    char *copy, *tok, *last;
    if (!query || !*query) {
        return t;
    }
    copy = apr_pstrdup(p, query);
    for (tok = apr_strtok(copy, "&", &last); tok; tok = apr_strtok(NULL, "&", &last)) {
        char *eq = strchr(tok, '='), *k, *v;
        if (eq) {
            *eq = '\0';
        }
        k = jr_url_decode(p, tok, 1);
        v = jr_url_decode(p, eq ? eq + 1 : "", 1);
        if (!k || !v) {
            *err = "malformed query string";
            return NULL;
        }
        if (*k) {
            apr_table_set(t, k, v);
        }
    }
    return t;
}

static int parse_scaled(const char *s, const char *units, const long long *mult, long long *out)
{
    char *end;
    long long v;
    const char *u;
    if (!s || !isdigit((unsigned char)*s)) {
        return -1;
    }
    errno = 0;
    v = strtoll(s, &end, 10);
    if (errno || v < 0) {
        return -1;
    }
    if (*end) {
        if (end[1] || !(u = strchr(units, tolower((unsigned char)*end)))) {
            return -1;
        }
        if (v > (long long)(9e18 / (double)mult[u - units])) {
            return -1;
        }
        v *= mult[u - units];
    }
    *out = v;
    return 0;
}

int jr_parse_duration(const char *s, long long *seconds)
{
    static const long long mult[] = {1, 60, 3600, 86400};
    return parse_scaled(s, "smhd", mult, seconds);
}

int jr_parse_size(const char *s, long long *bytes)
{
    static const long long mult[] = {1024LL, 1024LL * 1024, 1024LL * 1024 * 1024};
    return parse_scaled(s, "kmg", mult, bytes);
}
