/* jr_json.h: parsing request bodies, the field validator, pool ownership. */
#include <string.h>

#include <apr_pools.h>
#include <apr_strings.h>

#include "jr_json.h"
#include "jr_router.h"
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

static json_t *parse(const char *text)
{
    const char *err = NULL;
    json_t *j = jr_json_parse(pool, text, strlen(text), &err);
    ck_assert_msg(j != NULL, "cannot parse %s: %s", text, err ? err : "?");
    return j;
}

/* ---- parsing ------------------------------------------------------------------------- */

START_TEST(parse_valid)
{
    const char *err = "untouched";
    const char *text = "{\"a\": 1, \"b\": [true, null], \"c\": \"\xC3\xA9\"}";
    json_t *j = jr_json_parse(pool, text, strlen(text), &err);
    ck_assert_ptr_nonnull(j);
    ck_assert_str_eq(err, "untouched");
    ck_assert(json_is_object(j));
    ck_assert_int_eq(json_integer_value(json_object_get(j, "a")), 1);
    ck_assert_str_eq(json_string_value(json_object_get(j, "c")), "\xC3\xA9");
    ck_assert_uint_eq(j->refcount, 1); /* the pool holds the only reference */

    /* len is honoured: what follows it is not read. */
    j = jr_json_parse(pool, "{}trailing garbage", 2, &err);
    ck_assert_ptr_nonnull(j);
    ck_assert_uint_eq(json_object_size(j), 0);
    ck_assert_ptr_nonnull(parse("[1, 2]"));
}
END_TEST

START_TEST(parse_invalid)
{
    static const char *const bad[] = {
        "", "{", "{\"a\":}", "[1,]", "{'a':1}", "{\"a\":1}}", "nul", "{\"a\":01}",
        "{\"a\":\"x\\u0000y\"}", /* embedded NUL */
        "{\"a\":\"\xFF\"}",      /* not UTF-8 */
    };
    size_t i;
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); ++i) {
        const char *err = NULL;
        ck_assert_msg(jr_json_parse(pool, bad[i], strlen(bad[i]), &err) == NULL, "%s accepted",
                      bad[i]);
        ck_assert_ptr_nonnull(err);
        ck_assert_msg(strstr(err, "invalid JSON at line 1 column") != NULL, "message: %s", err);
    }
}
END_TEST

/* jansson quotes the bytes near an error; a body that is not UTF-8 must still get an error
 * message that fits in the JSON answer (found by fuzzing: the 400 went out as "{}"). */
START_TEST(parse_error_message_is_json_text)
{
    static const char *const bad[] = {
        "{\"a\": \"it\\ud4\xC8\x9B\x99\"}", /* a bad escape followed by raw bytes */
        "{\"a\xFF\": 1}",
        "{\"a\": \"\x01\x7F\xE2\x82\"}",
    };
    size_t i;
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); ++i) {
        const char *err = NULL;
        json_t *msg;
        ck_assert_ptr_null(jr_json_parse(pool, bad[i], strlen(bad[i]), &err));
        ck_assert_ptr_nonnull(err);
        msg = json_string(err);
        ck_assert_msg(msg != NULL, "case %zu: the message is not UTF-8", i);
        json_decref(msg);
        ck_assert_msg(strstr(err, "invalid JSON at line 1 column") != NULL, "message: %s", err);
    }
}
END_TEST

START_TEST(parse_rejects_duplicate_keys)
{
    const char *err = NULL;
    const char *text = "{\"name\": \"a\", \"role\": \"tutor\", \"role\": \"admin\"}";
    ck_assert_ptr_null(jr_json_parse(pool, text, strlen(text), &err));
    ck_assert_ptr_nonnull(err);
    ck_assert_msg(strstr(err, "duplicate") != NULL, "message: %s", err);
    /* Nested objects too. */
    text = "{\"a\": {\"x\": 1, \"x\": 2}}";
    err = NULL;
    ck_assert_ptr_null(jr_json_parse(pool, text, strlen(text), &err));
    ck_assert_ptr_nonnull(err);
}
END_TEST

START_TEST(dump_compact)
{
    size_t len = 0;
    json_t *j = jr_json_own(pool, json_pack("{s:i, s:[i,i], s:s}", "a", 1, "b", 2, 3, "c", "x y"));
    char *s = jr_json_dump(pool, j, &len);
    ck_assert_str_eq(s, "{\"a\":1,\"b\":[2,3],\"c\":\"x y\"}");
    ck_assert_uint_eq(len, strlen(s));
    ck_assert_str_eq(jr_json_dump(pool, jr_json_own(pool, json_array()), NULL), "[]");
}
END_TEST

/* ---- ownership ----------------------------------------------------------------------- */

START_TEST(own_releases_with_the_pool)
{
    apr_pool_t *sub;
    json_t *j = json_object();
    ck_assert_int_eq(apr_pool_create(&sub, pool), APR_SUCCESS);
    json_incref(j); /* our own reference keeps it observable */
    ck_assert_uint_eq(j->refcount, 2);
    ck_assert_ptr_eq(jr_json_own(sub, j), j);
    ck_assert_uint_eq(j->refcount, 2);
    apr_pool_clear(sub);
    ck_assert_uint_eq(j->refcount, 1);
    apr_pool_destroy(sub);
    ck_assert_uint_eq(j->refcount, 1); /* released once, not twice */
    json_decref(j);
    ck_assert_ptr_null(jr_json_own(pool, NULL));
}
END_TEST

/* ---- validation ---------------------------------------------------------------------- */

static const jr_field_t fields[] = {
    {.name = "name", .type = JR_F_STRING, .required = 1, .trim = 1, .min = 1, .max = 3},
    {.name = "code", .type = JR_F_STRING, .max = 3},
    {.name = "note", .type = JR_F_STRING, .nullable = 1, .min = 2, .max = 10},
    {.name = "age", .type = JR_F_INT, .min = 1, .max = 120},
    {.name = "big", .type = JR_F_INT},
    {.name = "flag", .type = JR_F_BOOL},
    {.name = "ids", .type = JR_F_INT_ARRAY, .min = 1, .max = 100, .max_items = 3},
    {.name = "tags", .type = JR_F_STRING_ARRAY, .min = 1, .max = 4},
    {.name = "extra", .type = JR_F_ANY, .nullable = 1},
    {NULL},
};

static const char *check(const char *text)
{
    return jr_json_validate(pool, parse(text), fields);
}

/* Asserts that text is refused with a message containing each of the words. */
#define REFUSED(text, w1, w2)                                                       \
    do {                                                                            \
        const char *m_ = check(text);                                               \
        ck_assert_msg(m_ != NULL, "accepted: %s", text);                            \
        ck_assert_msg(strstr(m_, w1) && strstr(m_, w2), "%s -> '%s'", text, m_);    \
    } while (0)
#define ACCEPTED(text)                                                              \
    do {                                                                            \
        const char *m_ = check(text);                                               \
        ck_assert_msg(m_ == NULL, "%s -> '%s'", text, m_);                          \
    } while (0)

START_TEST(validate_accepts_valid)
{
    ACCEPTED("{\"name\": \"abc\"}");
    ACCEPTED("{\"name\": \"a\", \"code\": \"xyz\", \"note\": \"hello\", \"age\": 30, "
             "\"big\": -9007199254740991, \"flag\": false, \"ids\": [1, 100], "
             "\"tags\": [\"a\", \"abcd\"], \"extra\": {\"x\": [1]}}");
}
END_TEST

START_TEST(validate_unknown_and_required)
{
    REFUSED("{\"name\": \"a\", \"colour\": \"red\"}", "unknown field", "'colour'");
    REFUSED("{}", "name", "required");
    REFUSED("{\"age\": 3}", "name", "required");
    ck_assert_str_eq(jr_json_validate(pool, jr_json_own(pool, json_array()), fields),
                     "request body must be a JSON object");
}
END_TEST

START_TEST(validate_wrong_types_name_the_field)
{
    REFUSED("{\"name\": 5}", "name", "string");
    REFUSED("{\"name\": [\"a\"]}", "name", "string");
    REFUSED("{\"name\": \"a\", \"age\": \"5\"}", "age", "integer");
    REFUSED("{\"name\": \"a\", \"age\": 5.5}", "age", "integer");
    REFUSED("{\"name\": \"a\", \"age\": 1.0}", "age", "integer");
    REFUSED("{\"name\": \"a\", \"age\": true}", "age", "integer");
    REFUSED("{\"name\": \"a\", \"flag\": 1}", "flag", "true or false");
    REFUSED("{\"name\": \"a\", \"flag\": \"true\"}", "flag", "true or false");
    REFUSED("{\"name\": \"a\", \"ids\": 5}", "ids", "array");
    REFUSED("{\"name\": \"a\", \"ids\": {}}", "ids", "array");
    REFUSED("{\"name\": \"a\", \"ids\": [1, \"2\"]}", "ids[1]", "integer");
    REFUSED("{\"name\": \"a\", \"tags\": \"a\"}", "tags", "array");
    REFUSED("{\"name\": \"a\", \"tags\": [\"a\", 7]}", "tags[1]", "string");
}
END_TEST

START_TEST(validate_string_length_in_code_points)
{
    ACCEPTED("{\"name\": \"h\xC3\xA9\xC3\xA9\"}");                            /* 5 bytes */
    ACCEPTED("{\"name\": \"\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E\"}");         /* 9 bytes */
    ACCEPTED("{\"name\": \"\xF0\x9F\x98\x80\xF0\x9F\x98\x80\xF0\x9F\x98\x80\"}"); /* 12 */
    ACCEPTED("{\"name\": \"\\u00e9\\u00e9\\u00e9\"}");
    REFUSED("{\"name\": \"\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E" "x\"}", "name", "at most 3");
    REFUSED("{\"name\": \"abcd\"}", "name", "at most 3 characters");
    ck_assert_uint_eq(jr_utf8_len(""), 0);
    ck_assert_uint_eq(jr_utf8_len("abc"), 3);
    ck_assert_uint_eq(jr_utf8_len("h\xC3\xA9llo"), 5);
    ck_assert_uint_eq(jr_utf8_len("\xF0\x9F\x98\x80"), 1);
}
END_TEST

START_TEST(validate_trim_flag)
{
    ACCEPTED("{\"name\": \"  ab \\t\"}");       /* trimmed: 2 characters */
    ACCEPTED("{\"name\": \"\\n abc \\r\\n\"}"); /* trimmed: 3 characters */
    REFUSED("{\"name\": \"   \"}", "name", "must not be empty");
    REFUSED("{\"name\": \"\"}", "name", "must not be empty");
    /* Without the flag white space counts. */
    REFUSED("{\"name\": \"a\", \"code\": \" ab \"}", "code", "at most 3");
    ACCEPTED("{\"name\": \"a\", \"code\": \" ab\"}");
    ACCEPTED("{\"name\": \"a\", \"code\": \"\"}"); /* no minimum */
}
END_TEST

START_TEST(validate_nullable)
{
    ACCEPTED("{\"name\": \"a\", \"note\": null}");
    ACCEPTED("{\"name\": \"a\", \"extra\": null}");
    REFUSED("{\"name\": null}", "name", "must not be null");
    REFUSED("{\"name\": \"a\", \"age\": null}", "age", "must not be null");
    REFUSED("{\"name\": \"a\", \"ids\": null}", "ids", "must not be null");
    REFUSED("{\"name\": \"a\", \"note\": \"x\"}", "note", "at least 2 characters");
}
END_TEST

START_TEST(validate_int_bounds)
{
    ACCEPTED("{\"name\": \"a\", \"age\": 1}");
    ACCEPTED("{\"name\": \"a\", \"age\": 120}");
    REFUSED("{\"name\": \"a\", \"age\": 0}", "age", "between 1 and 120");
    REFUSED("{\"name\": \"a\", \"age\": 121}", "age", "between 1 and 120");
    REFUSED("{\"name\": \"a\", \"age\": -5}", "age", "between 1 and 120");
    REFUSED("{\"name\": \"a\", \"age\": 9223372036854775807}", "age", "between");
    /* No bounds when min and max are both 0. */
    ACCEPTED("{\"name\": \"a\", \"big\": 9223372036854775807}");
    ACCEPTED("{\"name\": \"a\", \"big\": 0}");
}
END_TEST

START_TEST(validate_int_arrays)
{
    ACCEPTED("{\"name\": \"a\", \"ids\": []}");
    ACCEPTED("{\"name\": \"a\", \"ids\": [1, 2, 3]}");
    REFUSED("{\"name\": \"a\", \"ids\": [1, 2, 3, 4]}", "ids", "at most 3 items");
    REFUSED("{\"name\": \"a\", \"ids\": [0]}", "ids[0]", "between 1 and 100");
    REFUSED("{\"name\": \"a\", \"ids\": [5, 101]}", "ids[1]", "between 1 and 100");
    REFUSED("{\"name\": \"a\", \"ids\": [5, null]}", "ids[1]", "integer");
    REFUSED("{\"name\": \"a\", \"ids\": [[1]]}", "ids[0]", "integer");
}
END_TEST

START_TEST(validate_string_arrays)
{
    ACCEPTED("{\"name\": \"a\", \"tags\": []}");
    ACCEPTED("{\"name\": \"a\", \"tags\": [\"\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\", \"x\"]}");
    REFUSED("{\"name\": \"a\", \"tags\": [\"abcde\"]}", "tags", "at most 4");
    REFUSED("{\"name\": \"a\", \"tags\": [\"ab\", \"\"]}", "tags", "must not be empty");
    REFUSED("{\"name\": \"a\", \"tags\": [null]}", "tags[0]", "string");
}
END_TEST

/* ---- helpers ------------------------------------------------------------------------- */

static int has_string(const json_t *arr, const char *s)
{
    size_t i;
    json_t *v;
    json_array_foreach(arr, i, v) {
        if (json_is_string(v) && !strcmp(json_string_value(v), s)) {
            return 1;
        }
    }
    return 0;
}

START_TEST(keys_lists_member_names)
{
    json_t *obj = parse("{\"username\": \"bob\", \"password\": \"s3cret!!\", \"role\": null}");
    json_t *keys = jr_json_keys(obj);
    ck_assert(json_is_array(keys));
    ck_assert_uint_eq(json_array_size(keys), 3);
    ck_assert(has_string(keys, "username"));
    ck_assert(has_string(keys, "password"));
    ck_assert(has_string(keys, "role"));
    ck_assert(!has_string(keys, "s3cret!!")); /* names, never values */
    ck_assert(!has_string(keys, "bob"));
    ck_assert_uint_eq(keys->refcount, 1);
    json_decref(keys);

    keys = jr_json_keys(parse("{}"));
    ck_assert(json_is_array(keys));
    ck_assert_uint_eq(json_array_size(keys), 0);
    json_decref(keys);
}
END_TEST

START_TEST(member_getters)
{
    json_t *obj = parse("{\"s\": \"  x y  \", \"i\": 42, \"n\": null, \"f\": 1.5, \"b\": true}");
    ck_assert_str_eq(jr_json_str(obj, "s", "d"), "  x y  ");
    ck_assert_str_eq(jr_json_str(obj, "i", "d"), "d");
    ck_assert_str_eq(jr_json_str(obj, "n", "d"), "d");
    ck_assert_str_eq(jr_json_str(obj, "missing", "d"), "d");
    ck_assert_ptr_null(jr_json_str(obj, "missing", NULL));
    ck_assert_int_eq(jr_json_int(obj, "i", -1), 42);
    ck_assert_int_eq(jr_json_int(obj, "f", -1), -1);
    ck_assert_int_eq(jr_json_int(obj, "b", -1), -1);
    ck_assert_int_eq(jr_json_int(obj, "s", -1), -1);
    ck_assert_int_eq(jr_json_int(obj, "n", -1), -1);
    ck_assert_str_eq(jr_json_trimmed(pool, obj, "s"), "x y");
    ck_assert_ptr_null(jr_json_trimmed(pool, obj, "n"));
    ck_assert_ptr_null(jr_json_trimmed(pool, obj, "missing"));
}
END_TEST

/* The catalogue reaches a field table for every route that takes a JSON body (settings
 * have their own typed table in jr_settings.c), and each table is well formed. */
static const jr_field_t *catalogued(const char *op)
{
    const jr_field_spec_t *const *list, *s;
    for (list = jr_field_catalogue; *list; ++list) {
        for (s = *list; s->op; ++s) {
            if (!strcmp(s->op, op)) {
                return s->fields;
            }
        }
    }
    return NULL;
}

START_TEST(catalogue_covers_json_routes)
{
    const jr_route_t *rt;
    const jr_field_spec_t *const *list, *s;
    const jr_field_t *f, *g;
    int routes = 0, specs = 0;

    for (rt = jr_routes_admin; rt->method; ++rt) {
        const char *op = apr_pstrcat(pool, rt->method, " ", rt->pattern, NULL);
        if ((rt->body != JR_BODY_JSON && rt->body != JR_BODY_OPTIONAL) ||
            !strcmp(op, "PUT /api/settings")) {
            continue;
        }
        ++routes;
        ck_assert_msg(catalogued(op) != NULL, "%s has no field table in jr_field_catalogue", op);
    }
    for (list = jr_field_catalogue; *list; ++list) {
        for (s = *list; s->op; ++s, ++specs) {
            ck_assert_ptr_nonnull(s->fields);
            ck_assert_ptr_nonnull(s->fields[0].name);
            for (f = s->fields; f->name; ++f) {
                ck_assert_msg(f->type >= JR_F_STRING && f->type <= JR_F_ANY, "%s", f->name);
                ck_assert_msg(f->max == 0 || f->min <= f->max, "%s: %s bounds", s->op, f->name);
                for (g = s->fields; g != f; ++g) {
                    ck_assert_msg(strcmp(g->name, f->name), "%s: %s twice", s->op, f->name);
                }
            }
        }
    }
    ck_assert_int_eq(specs, routes);
}
END_TEST

Suite *suite_json(void)
{
    Suite *s = suite_create("json");
    TCase *tc = tcase_create("parse");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, parse_valid);
    tcase_add_test(tc, parse_invalid);
    tcase_add_test(tc, parse_error_message_is_json_text);
    tcase_add_test(tc, parse_rejects_duplicate_keys);
    tcase_add_test(tc, dump_compact);
    tcase_add_test(tc, own_releases_with_the_pool);
    suite_add_tcase(s, tc);

    tc = tcase_create("validate");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, validate_accepts_valid);
    tcase_add_test(tc, validate_unknown_and_required);
    tcase_add_test(tc, validate_wrong_types_name_the_field);
    tcase_add_test(tc, validate_string_length_in_code_points);
    tcase_add_test(tc, validate_trim_flag);
    tcase_add_test(tc, validate_nullable);
    tcase_add_test(tc, validate_int_bounds);
    tcase_add_test(tc, validate_int_arrays);
    tcase_add_test(tc, validate_string_arrays);
    tcase_add_test(tc, catalogue_covers_json_routes);
    suite_add_tcase(s, tc);

    tc = tcase_create("helpers");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, keys_lists_member_names);
    tcase_add_test(tc, member_getters);
    suite_add_tcase(s, tc);
    return s;
}
