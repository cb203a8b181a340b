/* The host's settings: one field per directive of jr_config_list.h, and what the host works
 * out at startup. The module keeps this struct as its per-server configuration, so the
 * directives reach the core without a copy; the CLI, the worker and the tests fill the
 * fields they need. */
#ifndef JR_CONFIG_H
#define JR_CONFIG_H

#include <stddef.h>

#include <apr_pools.h>

#include "jr_config_list.h"

#define JR_CONFIG_FIELD(field, type, ...) type field;

/* Durations and windows in seconds, sizes in bytes. */
typedef struct {
    JR_DIRECTIVES(JR_CONFIG_FIELD)
    const char *dummy_hash; /* bcrypt hash checked for unknown users, so timing matches */
    const struct jr_worker_census *workers; /* kept by httpd's parent; NULL when unknown */
} jr_config_t;

#undef JR_CONFIG_FIELD

typedef enum {
    JR_DIR_INT,      /* an integer */
    JR_DIR_DURATION, /* seconds, or a number with s, m, h or d */
    JR_DIR_SIZE,     /* bytes, or a number with K, M or G */
    JR_DIR_FLAG,     /* On or Off */
    JR_DIR_TEXT,     /* one value, checked by the host */
    JR_DIR_LIST      /* values appended, checked by the host */
} jr_dir_kind_e;

typedef enum {
    JR_DIR_ANY, /* server config and virtual hosts */
    JR_DIR_MAIN /* the main server only */
} jr_dir_scope_e;

/* What the code needs of a row of the list (the help text goes to the host's table). */
typedef struct {
    const char *name;
    jr_dir_kind_e kind;
    jr_dir_scope_e scope;
    size_t offset, size; /* of the field in jr_config_t */
    long long min, max;  /* numeric kinds */
    const char *range;   /* numeric kinds: the allowed values, as the message states them */
} jr_directive_t;

#define JR_DIRECTIVE_ID(field, ...) JR_DIRECTIVE_##field,
typedef enum { JR_DIRECTIVES(JR_DIRECTIVE_ID) JR_DIRECTIVE_COUNT } jr_directive_id_e;
#undef JR_DIRECTIVE_ID

/* The rows, indexed by jr_directive_id_e. */
extern const jr_directive_t jr_directives[JR_DIRECTIVE_COUNT];

/* The value of each directive when it is set nowhere. */
extern const jr_config_t jr_config_defaults;

/* Every directive unset: -1 or NULL (a new server configuration). */
void jr_config_unset(jr_config_t *c);

/* A virtual host's settings: what it sets, else what the main server has (add over base). */
void jr_config_merge(jr_config_t *c, const jr_config_t *base, const jr_config_t *add);

/* Parses arg for a numeric directive (INT, DURATION, SIZE) and stores it. Returns NULL, or
 * the message that refuses it ("<Name>: '<arg>' is not valid: use <allowed values>"). */
const char *jr_config_set_number(apr_pool_t *p, jr_config_t *c, const jr_directive_t *d,
                                 const char *arg);
/* Stores a flag (FLAG) or a value the host has checked (TEXT, LIST). */
void jr_config_set_flag(jr_config_t *c, const jr_directive_t *d, int on);
void jr_config_set_text(jr_config_t *c, const jr_directive_t *d, const char *value);
/* The current value of a TEXT or LIST directive (NULL while unset). */
const char *jr_config_text(const jr_config_t *c, const jr_directive_t *d);

/* Gives every unset directive its default, then checks the directives that depend on each
 * other. Returns NULL or the message that refuses the configuration. Resolving twice changes
 * nothing. */
const char *jr_config_resolve(apr_pool_t *p, jr_config_t *c);

#endif
