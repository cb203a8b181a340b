/* The settings file: "name = value" lines, '#' comments and blank lines. The value runs to
 * the end of the line (trimmed), so a PostgreSQL conninfo with spaces needs no quoting, and
 * '#' inside a value is part of it. Unknown names and repeated names are errors: a typo must
 * not silently leave a default in force. */
#include <ctype.h>
#include <stddef.h>
#include <string.h>

#include <apr_file_io.h>
#include <apr_strings.h>

#include "jr_events.h"
#include "jr_util.h"
#include "jw.h"

typedef enum { T_TEXT, T_INT } type_e;

typedef struct {
    const char *name;
    type_e type;
    size_t offset; /* of a const char * or (T_INT) a long long in jw_settings_t */
    long long min, max;
} setting_t;

typedef struct {
    const char *db_driver, *db_params, *data_dir, *runtime_dir, *ai_endpoint, *ai_model,
        *ai_key_file, *log_level, *photo_ai_endpoint, *redis, *redis_password_file;
    long long ai_timeout, ai_concurrency, photo_ai_timeout_ms, photo_upscale_timeout_ms,
        photo_max_size;
} raw_t;

#define OFF(f) offsetof(raw_t, f)

static const setting_t names[] = {
    {"db_driver", T_TEXT, OFF(db_driver), 0, 0},
    {"db_params", T_TEXT, OFF(db_params), 0, 0},
    {"data_dir", T_TEXT, OFF(data_dir), 0, 0},
    {"runtime_dir", T_TEXT, OFF(runtime_dir), 0, 0},
    {"ai_endpoint", T_TEXT, OFF(ai_endpoint), 0, 0},
    {"ai_model", T_TEXT, OFF(ai_model), 0, 0},
    {"ai_key_file", T_TEXT, OFF(ai_key_file), 0, 0},
    {"ai_timeout", T_INT, OFF(ai_timeout), 1, 3600},
    {"ai_concurrency", T_INT, OFF(ai_concurrency), 1, 256},
    {"log_level", T_TEXT, OFF(log_level), 0, 0},
    {"photo_ai_endpoint", T_TEXT, OFF(photo_ai_endpoint), 0, 0},
    {"photo_ai_timeout_ms", T_INT, OFF(photo_ai_timeout_ms), 1000, 3600000},
    {"photo_upscale_timeout_ms", T_INT, OFF(photo_upscale_timeout_ms), 1000, 3600000},
    {"photo_max_size", T_INT, OFF(photo_max_size), 1024, 4LL * 1024 * 1024 * 1024},
    {"redis", T_TEXT, OFF(redis), 0, 0},
    {"redis_password_file", T_TEXT, OFF(redis_password_file), 0, 0},
    {NULL, T_TEXT, 0, 0, 0},
};

static const setting_t *lookup(const char *name)
{
    const setting_t *s;
    for (s = names; s->name && strcmp(s->name, name); ++s) {
    }
    return s->name ? s : NULL;
}

/* One "name = value" line into raw; NULL or an error (without the line number). */
static const char *parse_line(apr_pool_t *p, char *line, raw_t *raw, unsigned *seen)
{
    char *eq = strchr(line, '='), *name, *value;
    const setting_t *s;
    long long n;
    if (!eq) {
        return "expected 'name = value'";
    }
    *eq = '\0';
    name = (char *)jr_trim(p, line);
    value = (char *)jr_trim(p, eq + 1);
    if (!(s = lookup(name))) {
        return apr_psprintf(p, "unknown setting '%s'", name);
    }
    if (*seen & (1u << (s - names))) {
        return apr_psprintf(p, "%s is set twice", name);
    }
    *seen |= 1u << (s - names);
    if (s->type == T_TEXT) {
        *(const char **)((char *)raw + s->offset) = *value ? value : NULL;
        return NULL;
    }
    if (jr_parse_int64(value, s->min, s->max, &n) != 0) {
        return jr_psprintf(p, "%s must be an integer from %lld to %lld", name, s->min, s->max);
    }
    *(long long *)((char *)raw + s->offset) = n;
    return NULL;
}

static int parse_level(const char *v, jr_log_level_e *out)
{
    static const char *const levels[] = {"error", "warn", "info", "debug"};
    int i;
    for (i = 0; i < 4; ++i) {
        if (!strcmp(v, levels[i])) {
            *out = (jr_log_level_e)i;
            return 0;
        }
    }
    return -1;
}

/* An http(s) URL without its trailing slashes; NULL when it is not one. */
static const char *base_url(apr_pool_t *p, const char *url)
{
    size_t n;
    if (strncmp(url, "http://", 7) && strncmp(url, "https://", 8)) {
        return NULL;
    }
    for (n = strlen(url); n > 0 && url[n - 1] == '/'; --n) {
    }
    return apr_pstrmemdup(p, url, n);
}

/* Checks that involve the whole file; fills s. */
static const char *resolve(apr_pool_t *p, const raw_t *raw, jw_settings_t *s)
{
    const char *ep = raw->ai_endpoint, *host, *sock;
    int port;
    if (!raw->db_driver || (strcmp(raw->db_driver, "sqlite3") && strcmp(raw->db_driver, "pgsql"))) {
        return "db_driver is required: sqlite3 or pgsql";
    }
    if (!raw->db_params) {
        return "db_params is required";
    }
    if (!raw->data_dir) {
        return "data_dir is required";
    }
    if (raw->log_level && parse_level(raw->log_level, &s->log_level) != 0) {
        return "log_level must be one of error, warn, info, debug";
    }
    if (ep) {
        if (!(ep = base_url(p, ep))) {
            return "ai_endpoint must be an http:// or https:// URL";
        }
        if (!raw->ai_model) {
            return "ai_model is required when ai_endpoint is set";
        }
    }
    if (raw->photo_ai_endpoint &&
        !(s->photo_ai_endpoint = base_url(p, raw->photo_ai_endpoint))) {
        return "photo_ai_endpoint must be an http:// or https:// URL";
    }
    if (raw->redis && jr_redis_address(p, raw->redis, &host, &port, &sock) != 0) {
        return "redis must be host:port or the absolute path of a unix socket";
    }
    s->redis = raw->redis;
    s->redis_password_file = raw->redis_password_file;
    s->photo_ai_timeout_ms = raw->photo_ai_timeout_ms;
    s->photo_upscale_timeout_ms = raw->photo_upscale_timeout_ms;
    s->photo_max_size = raw->photo_max_size;
    s->db_driver = raw->db_driver;
    s->db_params = raw->db_params;
    s->data_dir = raw->data_dir;
    s->runtime_dir = raw->runtime_dir;
    s->ai_endpoint = ep;
    s->ai_model = raw->ai_model;
    s->ai_key_file = raw->ai_key_file;
    s->ai_timeout = raw->ai_timeout;
    s->ai_concurrency = (int)raw->ai_concurrency;
    return NULL;
}

const char *jw_settings_parse(apr_pool_t *p, const char *text, jw_settings_t *s)
{
    char *copy = apr_pstrdup(p, text), *line, *next;
    const char *err;
    unsigned seen = 0;
    int lineno = 0;
    raw_t raw;

    memset(s, 0, sizeof(*s));
    memset(&raw, 0, sizeof(raw));
    raw.ai_timeout = JW_DEFAULT_AI_TIMEOUT;
    raw.ai_concurrency = JW_DEFAULT_AI_CONCURRENCY;
    raw.photo_ai_timeout_ms = JW_DEFAULT_PHOTO_AI_TIMEOUT_MS;
    raw.photo_upscale_timeout_ms = JW_DEFAULT_PHOTO_UPSCALE_TIMEOUT_MS;
    raw.photo_max_size = JW_DEFAULT_PHOTO_MAX_SIZE;
    s->log_level = JR_LOG_WARN;
    for (line = copy; line; line = next) {
        const char *t;
        next = strchr(line, '\n');
        if (next) {
            *next++ = '\0';
        }
        ++lineno;
        t = jr_trim(p, line);
        if (!*t || *t == '#') {
            continue;
        }
        if ((err = parse_line(p, line, &raw, &seen)) != NULL) {
            return apr_psprintf(p, "line %d: %s", lineno, err);
        }
    }
    return resolve(p, &raw, s);
}

/* The whole of a small file; NULL with *err on failure. */
static char *slurp(apr_pool_t *p, const char *path, apr_size_t max, const char **err)
{
    apr_file_t *f;
    apr_finfo_t fi;
    apr_size_t len;
    char *buf;
    apr_status_t rv;
    char msg[120];
    if ((rv = apr_file_open(&f, path, APR_FOPEN_READ, 0, p)) != APR_SUCCESS ||
        (rv = apr_file_info_get(&fi, APR_FINFO_SIZE, f)) != APR_SUCCESS) {
        *err = apr_psprintf(p, "cannot read %s: %s", path, apr_strerror(rv, msg, sizeof(msg)));
        return NULL;
    }
    if ((apr_size_t)fi.size > max) {
        apr_file_close(f);
        *err = apr_psprintf(p, "%s is larger than %lu bytes", path, (unsigned long)max);
        return NULL;
    }
    len = (apr_size_t)fi.size;
    buf = apr_palloc(p, len + 1);
    if (len > 0 && (rv = apr_file_read_full(f, buf, len, &len)) != APR_SUCCESS) {
        apr_file_close(f);
        *err = apr_psprintf(p, "cannot read %s: %s", path, apr_strerror(rv, msg, sizeof(msg)));
        return NULL;
    }
    buf[len] = '\0';
    apr_file_close(f);
    return buf;
}

const char *jw_read_key(apr_pool_t *p, const char *path, const char **key)
{
    const char *err = NULL, *c;
    char *text = slurp(p, path, 16384, &err), *nl;
    if (!text) {
        return err;
    }
    if ((nl = strpbrk(text, "\r\n")) != NULL) {
        *nl = '\0';
    }
    *key = jr_trim(p, text);
    if (!**key) {
        return apr_psprintf(p, "the key file %s is empty", path);
    }
    for (c = *key; *c; ++c) {
        /* It becomes an HTTP header: no control characters, no spaces inside. */
        if (iscntrl((unsigned char)*c) || *c == ' ') {
            return apr_psprintf(p, "the key in %s contains a space or control character", path);
        }
    }
    return NULL;
}

const char *jw_settings_load(apr_pool_t *p, const char *path, jw_settings_t *s)
{
    const char *err = NULL;
    char *text = slurp(p, path, 65536, &err), msg[120];
    apr_status_t rv;
    if (!text) {
        return err;
    }
    if ((err = jw_settings_parse(p, text, s)) != NULL) {
        return apr_psprintf(p, "%s: %s", path, err);
    }
    if (s->ai_key_file && (err = jw_read_key(p, s->ai_key_file, &s->ai_key)) != NULL) {
        return err;
    }
    if (s->redis && s->redis_password_file &&
        (rv = jr_read_secret(p, s->redis_password_file, &s->redis_password)) != APR_SUCCESS) {
        return rv == APR_EINVAL
                   ? apr_psprintf(p, "the password file %s is empty", s->redis_password_file)
                   : apr_psprintf(p, "cannot read %s: %s", s->redis_password_file,
                                  apr_strerror(rv, msg, sizeof(msg)));
    }
    return NULL;
}
