#include <string.h>

#include <apr_hash.h>
#include <apr_strings.h>

#include "jr_json.h"
#include "jr_jw.h"
#include "jr_settings.h"
#include "jr_stmts.h"
#include "jr_time.h"
#include "jr_util.h"

typedef enum {
    S_TEXT,   /* a string, bounded; choices or a validator may narrow it */
    S_INT,    /* a JSON integer within [min, max] */
    S_SWITCH, /* true or false (JSON booleans, or the strings "true"/"false") */
    S_TFTEXT  /* only the strings "true" or "false" */
} kind_e;

typedef struct {
    const char *name;
    kind_e kind;
    const char *dflt;
    long long min, max;      /* S_INT bounds; S_TEXT maximum length in max */
    const char *choices;     /* S_TEXT: "a|b|c" */
    int (*valid)(const char *);
    int public;
} setting_def_t;

/* The system messages of the AI checks (docs/worker.md, "The answer contract"). The worker
 * appends a context line with the lesson's position and topic to the lesson prompt; the
 * answer's shape is enforced by a JSON schema, the prompts say what the fields mean. */
#define DEFAULT_PROMPT                                                                      \
    "You check a tutor's lesson report before parents read it. A report follows this "      \
    "template: it opens with one phrase that fits the lesson's position in the module "     \
    "(first lesson: \"Today we started a new module.\"; a middle lesson: \"Today we "       \
    "continued the module.\"; last lesson: \"Today we finished the module.\"; without a "   \
    "position: \"Today's lesson:\"), then says in clear, friendly sentences what was "        \
    "covered and how the group did. Keep every fact, name and number; add nothing. "        \
    "Answer with matches_template true and the text unchanged when the report already "     \
    "follows the template; otherwise with matches_template false and the report rewritten " \
    "to follow it, in the report's language."
#define DEFAULT_ENTRY_PROMPT                                                                \
    "You proofread a tutor's journal entry about a student. Correct spelling, grammar and " \
    "punctuation only. Keep the meaning, the language, the tone, every name and number; "   \
    "do not add, remove or reorder content. Answer with changed false and the text "        \
    "unchanged when there is nothing to correct; otherwise with changed true and the "      \
    "corrected text."

#define SETTING_ROW(id, name, kind, dflt, min, max, choices, valid, public) \
    [JR_SETTING_##id] = {name, S_##kind, dflt, min, max, choices, valid, public},
static const setting_def_t defs[JR_SETTING__COUNT] = {JR_SETTINGS(SETTING_ROW)};
#undef SETTING_ROW

const char *jr_setting_name(jr_setting_id_t id)
{
    return defs[id].name;
}

int jr_setting_id(const char *name)
{
    int id;
    for (id = 0; id < JR_SETTING__COUNT && strcmp(defs[id].name, name); ++id) {
    }
    return id < JR_SETTING__COUNT ? id : -1;
}

static const char stored_key[] = "jr:settings";

void jr_settings_carried(jr_ctx_t *ctx, const char *json)
{
    apr_hash_t *h = apr_hash_make(ctx->pool);
    const char *err, *name;
    json_t *obj, *v;
    if (!json || !(obj = jr_json_parse(ctx->pool, json, strlen(json), &err))) {
        return;
    }
    json_object_foreach(obj, name, v) {
        if (!json_is_string(v)) {
            return;
        }
        apr_hash_set(h, apr_pstrdup(ctx->pool, name), APR_HASH_KEY_STRING,
                     apr_pstrdup(ctx->pool, json_string_value(v)));
    }
    apr_pool_userdata_setn(h, stored_key, NULL, ctx->pool);
}

/* Stored values, read once per request. */
static apr_hash_t *stored(jr_ctx_t *ctx)
{
    apr_hash_t *h = NULL;
    jr_rows_t *rows;
    int i;
    apr_pool_userdata_get((void **)&h, stored_key, ctx->pool);
    if (h) {
        return h;
    }
    h = apr_hash_make(ctx->pool);
    if (ctx->db && jr_db_select(ctx->db, ctx->pool, JR_Q_SETTINGS_ALL, &rows, JR_NOARGS) ==
                       APR_SUCCESS) {
        for (i = 0; i < rows->nrows; ++i) {
            apr_hash_set(h, jr_rows_get(rows, i, "name"), APR_HASH_KEY_STRING,
                         jr_rows_get(rows, i, "value"));
        }
    }
    apr_pool_userdata_setn(h, stored_key, NULL, ctx->pool);
    return h;
}

const char *jr_setting(jr_ctx_t *ctx, jr_setting_id_t id)
{
    const char *v = apr_hash_get(stored(ctx), defs[id].name, APR_HASH_KEY_STRING);
    return v ? v : defs[id].dflt;
}

const char *jr_setting_known(jr_setting_id_t id, const char *stored)
{
    const char *v = stored ? stored : defs[id].dflt;
    return id == JR_SETTING_TIMEZONE && !jr_tz_valid(v) ? "UTC" : v;
}

const char *jr_setting_timezone(jr_ctx_t *ctx)
{
    return jr_setting_known(JR_SETTING_TIMEZONE, jr_setting(ctx, JR_SETTING_TIMEZONE));
}

int jr_setting_on(jr_ctx_t *ctx, jr_setting_id_t id)
{
    return !strcmp(jr_setting(ctx, id), "true");
}

/* A value as its kind's JSON type; a stored integer out of bounds stays its text. */
static void typed(jr_jw_t *w, const setting_def_t *d, const char *v)
{
    long long n;
    switch (d->kind) {
    case S_INT:
        if (jr_parse_int64(v, d->min, d->max, &n) == 0) {
            jr_jw_int(w, n);
            return;
        }
        break;
    case S_SWITCH:
        jr_jw_bool(w, !strcmp(v, "true"));
        return;
    case S_TEXT:
    case S_TFTEXT:
        break;
    }
    jr_jw_str(w, v);
}

static int in_choices(const char *choices, const char *v)
{
    size_t n = strlen(v);
    const char *c = choices;
    while (c && *c) {
        const char *bar = strchr(c, '|');
        size_t len = bar ? (size_t)(bar - c) : strlen(c);
        if (len == n && !strncmp(c, v, n)) {
            return 1;
        }
        c = bar ? bar + 1 : NULL;
    }
    return 0;
}

/* The stored text of a new value, or NULL with *err set. */
static const char *check_value(apr_pool_t *p, const setting_def_t *d, json_t *v, const char **err)
{
    const char *s = json_string_value(v);
    switch (d->kind) {
    case S_INT:
        if (!json_is_integer(v) || json_integer_value(v) < d->min ||
            json_integer_value(v) > d->max) {
            *err = jr_psprintf(p, "%s must be an integer from %lld to %lld", d->name, d->min,
                               d->max);
            return NULL;
        }
        return jr_i64(p, json_integer_value(v));
    case S_SWITCH:
        if (json_is_boolean(v)) {
            return json_is_true(v) ? "true" : "false";
        }
        if (s && (!strcmp(s, "true") || !strcmp(s, "false"))) {
            return s;
        }
        *err = apr_psprintf(p, "%s must be true or false", d->name);
        return NULL;
    case S_TFTEXT:
        if (s && (!strcmp(s, "true") || !strcmp(s, "false"))) {
            return s;
        }
        *err = apr_psprintf(p, "%s must be the string 'true' or 'false'", d->name);
        return NULL;
    case S_TEXT:
        break;
    }
    if (!s) {
        *err = apr_psprintf(p, "%s must be a string", d->name);
        return NULL;
    }
    if (d->choices && !in_choices(d->choices, s)) {
        *err = apr_psprintf(p, "%s must be one of %s", d->name, d->choices);
        return NULL;
    }
    if (d->valid && !d->valid(s)) {
        *err = apr_psprintf(p, "%s: '%s' is not %s", d->name, s,
                            d->valid == jr_tz_valid ? "an IANA time zone (e.g. Europe/Berlin)"
                                                    : "a valid value");
        return NULL;
    }
    if (jr_utf8_len(s) > (size_t)d->max) {
        *err = jr_psprintf(p, "%s must be at most %lld characters", d->name, d->max);
        return NULL;
    }
    return s;
}

static int all_settings(jr_ctx_t *ctx, jr_result_t *res, int only_public)
{
    jr_jw_t w;
    int id;
    jr_jw_init(&w, ctx->pool, 4096);
    jr_jw_obj(&w);
    for (id = 0; id < JR_SETTING__COUNT; ++id) {
        if (!only_public || defs[id].public) {
            jr_jw_key(&w, defs[id].name);
            typed(&w, &defs[id], jr_setting(ctx, id));
        }
    }
    jr_jw_obj_end(&w);
    return jr_reply_jw(res, 200, &w);
}

int jr_op_settings_get(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    return all_settings(ctx, res, 0);
}

int jr_op_public_settings(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    return all_settings(ctx, res, 1);
}

int jr_op_settings_put(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    apr_hash_t *values = apr_hash_make(p);
    const char *name, *now = jr_now_iso(p), *err = NULL;
    apr_hash_index_t *hi;
    json_t *v;

    if (json_object_size(in) == 0) {
        return jr_err_invalid(ctx, res, NULL, "the body must name at least one setting");
    }
    /* Everything is checked before anything is written: all or nothing. */
    json_object_foreach((json_t *)in, name, v) {
        int id = jr_setting_id(name);
        const setting_def_t *d = id >= 0 ? &defs[id] : NULL;
        const char *text;
        if (!d) {
            return jr_err_invalid(ctx, res, name, "unknown setting '%s'", name);
        }
        if (!(text = check_value(p, d, v, &err))) {
            return jr_fail(res, p, 400, "%s", err);
        }
        apr_hash_set(values, d->name, APR_HASH_KEY_STRING, text);
    }
    for (hi = apr_hash_first(p, values); hi; hi = apr_hash_next(hi)) {
        const void *k;
        void *val;
        apr_hash_this(hi, &k, NULL, &val);
        if (jr_db_exec(ctx->db, p, JR_Q_SETTING_UPSERT, NULL,
                       JR_ARGS(k, val, now, jr_opt_i64(p, ctx->who.user_id))) !=
            APR_SUCCESS) {
            return jr_err_write(ctx, res, NULL);
        }
    }
    if (jr_audit_ref(ctx, "update", "settings", NULL, jr_json_own(p, jr_json_keys(in))) !=
            APR_SUCCESS) {
        return jr_err_write(ctx, res, NULL);
    }
    apr_pool_userdata_setn(NULL, "jr:settings", NULL, p); /* read the new values back */
    return all_settings(ctx, res, 0);
}
