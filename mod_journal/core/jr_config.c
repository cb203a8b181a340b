/* The directives of jr_config_list.h as data: defaults, descriptors, and the generic checking,
 * merging and resolving that works on every row alike. */
#include <limits.h>
#include <string.h>

#include "jr_config.h"
#include "jr_counters.h"
#include "jr_util.h"

#ifndef JR_DEFAULT_WORKER_PATH /* the build passes $(bindir)/journal-worker */
#define JR_DEFAULT_WORKER_PATH "/usr/local/bin/journal-worker"
#endif

/* Each row's field has the type its kind stores, and an int field can hold the row's bounds. */
#define JR_DIR_TEXTUAL(kind) (JR_DIR_##kind == JR_DIR_TEXT || JR_DIR_##kind == JR_DIR_LIST)
#define ROW_CHECK(field, type, name, kind, scope, min, max, ...)                                \
    _Static_assert(_Generic(((jr_config_t *)0)->field,                                        \
                            const char *: JR_DIR_TEXTUAL(kind),                               \
                            int: !JR_DIR_TEXTUAL(kind),                                       \
                            long long: !JR_DIR_TEXTUAL(kind),                                 \
                            default: 0),                                                      \
                   name ": the field's type does not fit the kind");                          \
    _Static_assert(sizeof(((jr_config_t *)0)->field) == sizeof(long long) ||                  \
                       ((long long)(max) <= INT_MAX && (long long)(min) >= INT_MIN),          \
                   name ": the bounds do not fit an int");
JR_DIRECTIVES(ROW_CHECK)
#undef ROW_CHECK

#define ROW_DEFAULT(field, type, name, kind, scope, min, max, dflt, ...) .field = dflt,
const jr_config_t jr_config_defaults = {JR_DIRECTIVES(ROW_DEFAULT)};
#undef ROW_DEFAULT

#define ROW_DESCRIPTOR(field, type, name, kind, scope, min, max, dflt, range, help)             \
    [JR_DIRECTIVE_##field] = {name,                                                           \
                              JR_DIR_##kind,                                                  \
                              JR_DIR_##scope,                                                 \
                              offsetof(jr_config_t, field),                                   \
                              sizeof(((jr_config_t *)0)->field),                              \
                              min,                                                            \
                              max,                                                            \
                              range},
const jr_directive_t jr_directives[JR_DIRECTIVE_COUNT] = {JR_DIRECTIVES(ROW_DESCRIPTOR)};
#undef ROW_DESCRIPTOR

static int is_textual(const jr_directive_t *d)
{
    return d->kind == JR_DIR_TEXT || d->kind == JR_DIR_LIST;
}

static void *field_of(const jr_config_t *c, const jr_directive_t *d)
{
    return (char *)c + d->offset;
}

/* Numeric and flag fields are int or long long (checked above). */
static long long get_number(const jr_config_t *c, const jr_directive_t *d)
{
    const void *f = field_of(c, d);
    return d->size == sizeof(int) ? *(const int *)f : *(const long long *)f;
}

static void put_number(jr_config_t *c, const jr_directive_t *d, long long v)
{
    void *f = field_of(c, d);
    if (d->size == sizeof(int)) {
        *(int *)f = (int)v;
    } else {
        *(long long *)f = v;
    }
}

static int is_set(const jr_config_t *c, const jr_directive_t *d)
{
    return is_textual(d) ? jr_config_text(c, d) != NULL : get_number(c, d) >= 0;
}

void jr_config_unset(jr_config_t *c)
{
    const jr_directive_t *d;
    for (d = jr_directives; d < jr_directives + JR_DIRECTIVE_COUNT; ++d) {
        if (is_textual(d)) {
            jr_config_set_text(c, d, NULL);
        } else {
            put_number(c, d, -1);
        }
    }
}

void jr_config_merge(jr_config_t *c, const jr_config_t *base, const jr_config_t *add)
{
    const jr_directive_t *d;
    for (d = jr_directives; d < jr_directives + JR_DIRECTIVE_COUNT; ++d) {
        memcpy(field_of(c, d), field_of(is_set(add, d) ? add : base, d), d->size);
    }
}

const char *jr_config_set_number(apr_pool_t *p, jr_config_t *c, const jr_directive_t *d,
                                 const char *arg)
{
    long long v;
    int rc = d->kind == JR_DIR_DURATION ? jr_parse_duration(arg, &v)
             : d->kind == JR_DIR_SIZE   ? jr_parse_size(arg, &v)
                                        : jr_parse_int64(arg, d->min, d->max, &v);
    if (rc != 0 || v < d->min || v > d->max) {
        return jr_psprintf(p, "%s: '%s' is not valid: use %s", d->name, arg, d->range);
    }
    put_number(c, d, v);
    return NULL;
}

void jr_config_set_flag(jr_config_t *c, const jr_directive_t *d, int on)
{
    put_number(c, d, on ? 1 : 0);
}

void jr_config_set_text(jr_config_t *c, const jr_directive_t *d, const char *value)
{
    memcpy(field_of(c, d), &value, sizeof(value));
}

const char *jr_config_text(const jr_config_t *c, const jr_directive_t *d)
{
    const char *v;
    memcpy(&v, field_of(c, d), sizeof(v));
    return v;
}

const char *jr_config_resolve(apr_pool_t *p, jr_config_t *c)
{
    const jr_directive_t *d;
    /* Keys created without a limit get the default, but never more than the maximum. */
    if (c->rate_default < 0 && c->rate_max >= 0 &&
        c->rate_max < jr_config_defaults.rate_default) {
        c->rate_default = c->rate_max;
    }
    for (d = jr_directives; d < jr_directives + JR_DIRECTIVE_COUNT; ++d) {
        if (!is_set(c, d)) {
            memcpy(field_of(c, d), field_of(&jr_config_defaults, d), d->size);
        }
    }
    if (c->ai_endpoint && !c->ai_model) {
        return "JournalAIEndpoint needs JournalAIModel: name the model the endpoint serves";
    }
    if (c->rate_default > c->rate_max) {
        return jr_psprintf(p, "JournalRateLimitDefault (%d) must not exceed "
                              "JournalRateLimitMax (%d)", c->rate_default, c->rate_max);
    }
    return NULL;
}
