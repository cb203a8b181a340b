/* jansson tied to APR pools, and one strict validator for request bodies. */
#ifndef JR_JSON_H
#define JR_JSON_H

#include <apr_pools.h>
#include <jansson.h>

/* Hands the reference on j to the pool: it is released when the pool is cleared. */
json_t *jr_json_own(apr_pool_t *p, json_t *j);

/* Parses a request body. On failure returns NULL and sets *err (a pool string with position). */
json_t *jr_json_parse(apr_pool_t *p, const char *buf, size_t len, const char **err);

/* Serialises compactly into pool memory. */
char *jr_json_dump(apr_pool_t *p, const json_t *j, size_t *len);

/* Writes a value that exists as a jansson tree before any answer is made (a backup's counts,
 * which its manifest holds too) as the next value of an answer: the one way such a value
 * joins the output path. */
struct jr_jw;
void jr_jw_json(struct jr_jw *w, const json_t *v);

typedef enum {
    JR_F_STRING = 1,   /* min/max bound the length in characters (UTF-8 code points) */
    JR_F_INT,          /* min/max bound the value */
    JR_F_BOOL,
    JR_F_INT_ARRAY,    /* min/max bound each element; max_items bounds the count */
    JR_F_STRING_ARRAY, /* min/max bound each element's length */
    JR_F_ANY
} jr_ftype_e;

typedef struct {
    const char *name;
    jr_ftype_e type;
    unsigned required : 1;
    unsigned nullable : 1;
    unsigned trim : 1;        /* strings: surrounding white space is not counted */
    long long min;
    long long max;
    int max_items;
} jr_field_t;

/* Checks obj against fields (terminated by a {NULL} entry). Unknown members, wrong types,
 * missing required members and out-of-bound values are errors. Returns NULL when the body
 * is valid, otherwise an error message that names the field. */
const char *jr_json_validate(apr_pool_t *p, const json_t *obj, const jr_field_t *fields);

/* The field tables stay static next to the operations that use them; each resource file
 * exports the list of its own ({NULL, NULL} ends it), and jr_field_catalogue (jr_fields.c)
 * lists those, NULL-terminated, so tests and fuzz targets reach every table in use. */
typedef struct {
    const char *op; /* "POST /api/users" */
    const jr_field_t *fields;
} jr_field_spec_t;

extern const jr_field_spec_t jr_fields_auth[], jr_fields_branches[], jr_fields_entries[],
    jr_fields_groups[], jr_fields_keys[], jr_fields_lessons[], jr_fields_modules[],
    jr_fields_students[], jr_fields_users[], jr_fields_chat[],
    jr_fields_photo_jobs[];
extern const jr_field_spec_t *const jr_field_catalogue[];

/* Number of UTF-8 code points in s (the body was validated as UTF-8 by jansson). */
size_t jr_utf8_len(const char *s);

/* A new array of the member names of obj (audit rows record names, never values). */
json_t *jr_json_keys(const json_t *obj);

/* Member getters that return a default when absent or null. */
const char *jr_json_str(const json_t *obj, const char *name, const char *dflt);
long long jr_json_int(const json_t *obj, const char *name, long long dflt);

/* A trimmed copy of a string member (NULL when absent or null). */
const char *jr_json_trimmed(apr_pool_t *p, const json_t *obj, const char *name);

#endif
