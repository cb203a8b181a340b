#include <string.h>

#include <apr_strings.h>

#include "jr_json.h"
#include "jr_jw.h"
#include "jr_util.h"

static apr_status_t json_release(void *data)
{
    json_decref((json_t *)data);
    return APR_SUCCESS;
}

json_t *jr_json_own(apr_pool_t *p, json_t *j)
{
    if (j) {
        apr_pool_cleanup_register(p, j, json_release, apr_pool_cleanup_null);
    }
    return j;
}

json_t *jr_json_parse(apr_pool_t *p, const char *buf, size_t len, const char **err)
{
    json_error_t jerr;
    json_t *j = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!j) {
        char *c;
        /* jansson quotes the raw bytes near the error, which need not be UTF-8: the message
         * goes into a JSON answer, so it is kept to printable ASCII. */
        for (c = jerr.text; *c; ++c) {
            if ((unsigned char)*c < 0x20 || (unsigned char)*c > 0x7e) {
                *c = '?';
            }
        }
        *err = jr_psprintf(p, "invalid JSON at line %d column %d: %s", jerr.line, jerr.column,
                            jerr.text);
        return NULL;
    }
    return jr_json_own(p, j);
}

typedef struct {
    apr_pool_t *pool;
    char *buf;
    size_t len, cap;
} dump_buf_t;

static int dump_chunk(const char *data, size_t size, void *baton)
{
    dump_buf_t *b = baton;
    if (b->len + size + 1 > b->cap) {
        size_t cap = b->cap * 2 > b->len + size + 1 ? b->cap * 2 : b->len + size + 1;
        char *bigger = apr_palloc(b->pool, cap);
        memcpy(bigger, b->buf, b->len);
        b->buf = bigger;
        b->cap = cap;
    }
    memcpy(b->buf + b->len, data, size);
    b->len += size;
    return 0;
}

char *jr_json_dump(apr_pool_t *p, const json_t *j, size_t *len)
{
    /* One pass: json_dumpb(NULL, 0) would serialise everything once just to size it. */
    dump_buf_t b;
    b.pool = p;
    b.cap = 1024;
    b.len = 0;
    b.buf = apr_palloc(p, b.cap);
    json_dump_callback(j, dump_chunk, &b, JSON_COMPACT);
    b.buf[b.len] = '\0';
    if (len) {
        *len = b.len;
    }
    return b.buf;
}

void jr_jw_json(jr_jw_t *w, const json_t *v)
{
    jr_jw_raw(w, v ? jr_json_dump(w->pool, v, NULL) : "null");
}

size_t jr_utf8_len(const char *s)
{
    size_t n = 0;
    for (; *s; ++s) {
        if (((unsigned char)*s & 0xC0) != 0x80) {
            ++n;
        }
    }
    return n;
}

static const char *check_string(apr_pool_t *p, const jr_field_t *f, const char *s)
{
    size_t n;
    if (f->trim) {
        s = jr_trim(p, s);
    }
    n = jr_utf8_len(s);
    if (f->min > 0 && (long long)n < f->min) {
        return f->min == 1 ? jr_psprintf(p, "%s must not be empty", f->name)
                           : jr_psprintf(p, "%s must be at least %lld characters", f->name, f->min);
    }
    if (f->max > 0 && (long long)n > f->max) {
        return jr_psprintf(p, "%s must be at most %lld characters", f->name, f->max);
    }
    return NULL;
}

static const char *check_int(apr_pool_t *p, const jr_field_t *f, const char *label, json_t *v)
{
    long long n;
    if (!json_is_integer(v)) {
        return jr_psprintf(p, "%s must be an integer", label);
    }
    n = json_integer_value(v);
    if ((f->min || f->max) && (n < f->min || n > f->max)) {
        return jr_psprintf(p, "%s must be between %lld and %lld", label, f->min, f->max);
    }
    return NULL;
}

static const char *check_array(apr_pool_t *p, const jr_field_t *f, json_t *v)
{
    size_t i;
    json_t *e;
    if (!json_is_array(v)) {
        return jr_psprintf(p, "%s must be an array", f->name);
    }
    if (f->max_items > 0 && json_array_size(v) > (size_t)f->max_items) {
        return jr_psprintf(p, "%s must have at most %d items", f->name, f->max_items);
    }
    json_array_foreach(v, i, e) {
        const char *msg;
        if (f->type == JR_F_INT_ARRAY) {
            msg = check_int(p, f, jr_psprintf(p, "%s[%zu]", f->name, i), e);
        } else if (!json_is_string(e)) {
            msg = jr_psprintf(p, "%s[%zu] must be a string", f->name, i);
        } else {
            msg = check_string(p, f, json_string_value(e));
        }
        if (msg) {
            return msg;
        }
    }
    return NULL;
}

static const char *check_field(apr_pool_t *p, const jr_field_t *f, json_t *v)
{
    if (json_is_null(v)) {
        return f->nullable ? NULL : jr_psprintf(p, "%s must not be null", f->name);
    }
    switch (f->type) {
    case JR_F_STRING:
        if (!json_is_string(v)) {
            return jr_psprintf(p, "%s must be a string", f->name);
        }
        return check_string(p, f, json_string_value(v));
    case JR_F_INT:
        return check_int(p, f, f->name, v);
    case JR_F_BOOL:
        return json_is_boolean(v) ? NULL : jr_psprintf(p, "%s must be true or false", f->name);
    case JR_F_INT_ARRAY:
    case JR_F_STRING_ARRAY:
        return check_array(p, f, v);
    case JR_F_ANY:
        return NULL;
    }
    return jr_psprintf(p, "%s has an unsupported type", f->name);
}

const char *jr_json_validate(apr_pool_t *p, const json_t *obj, const jr_field_t *fields)
{
    const char *key;
    json_t *v;
    const jr_field_t *f;

    if (!json_is_object(obj)) {
        return "request body must be a JSON object";
    }
    json_object_foreach((json_t *)obj, key, v) {
        for (f = fields; f->name && strcmp(f->name, key); ++f) {
        }
        if (!f->name) {
            return jr_psprintf(p, "unknown field '%s'", key);
        }
    }
    for (f = fields; f->name; ++f) {
        const char *msg;
        v = json_object_get(obj, f->name);
        if (!v) {
            if (f->required) {
                return jr_psprintf(p, "%s is required", f->name);
            }
            continue;
        }
        if ((msg = check_field(p, f, v)) != NULL) {
            return msg;
        }
    }
    return NULL;
}

const char *jr_json_str(const json_t *obj, const char *name, const char *dflt)
{
    json_t *v = json_object_get(obj, name);
    return json_is_string(v) ? json_string_value(v) : dflt;
}

long long jr_json_int(const json_t *obj, const char *name, long long dflt)
{
    json_t *v = json_object_get(obj, name);
    return json_is_integer(v) ? json_integer_value(v) : dflt;
}

const char *jr_json_trimmed(apr_pool_t *p, const json_t *obj, const char *name)
{
    const char *s = jr_json_str(obj, name, NULL);
    return s ? jr_trim(p, s) : NULL;
}

json_t *jr_json_keys(const json_t *obj)
{
    json_t *names = json_array();
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)obj, key, v) {
        json_array_append_new(names, json_string(key));
    }
    return names;
}
