/* Request bodies: jr_json_parse, then jr_json_validate against every field table in use
 * (jr_field_catalogue), and the serialiser. Oracles: a body that validates has only known
 * members and every required one, with strings of a bounded length; what jr_json_dump
 * writes parses back to an equal value. */
#include "fuzz.h"
#include "jr_json.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fuzz_root();
    return 0;
}

static void check_valid(const json_t *obj, const jr_field_t *fields)
{
    const jr_field_t *f;
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)obj, key, v) {
        for (f = fields; f->name && strcmp(f->name, key); ++f) {
        }
        FUZZ_CHECK(f->name);
    }
    for (f = fields; f->name; ++f) {
        v = json_object_get(obj, f->name);
        FUZZ_CHECK(v || !f->required);
        if (json_is_string(v) && !f->trim && f->max > 0) {
            FUZZ_CHECK(jr_utf8_len(json_string_value(v)) <= (size_t)f->max);
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    apr_pool_t *p = fuzz_pool();
    const char *err = NULL;
    json_t *j = jr_json_parse(p, (const char *)data, size, &err);
    const jr_field_spec_t *const *spec;
    const jr_field_spec_t *s;

    if (!j) {
        FUZZ_CHECK(err && *err);
    } else {
        size_t n = 0;
        const char *text = jr_json_dump(p, j, &n);
        json_t *back = jr_json_parse(p, text, n, &err);
        FUZZ_CHECK(strlen(text) == n);
        FUZZ_CHECK(back && json_equal(j, back));
        for (spec = jr_field_catalogue; *spec; ++spec) {
            for (s = *spec; s->op; ++s) {
                const char *msg = jr_json_validate(p, j, s->fields);
                if (!msg) {
                    check_valid(j, s->fields);
                } else {
                    FUZZ_CHECK(*msg);
                }
            }
        }
        json_decref(jr_json_keys(j));
    }
    apr_pool_destroy(p);
    return 0;
}
