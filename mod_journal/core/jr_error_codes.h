/* Machine-readable errors: every error body carries `error` (text for people), `code` (a
 * stable snake_case name, one table in docs/integrators.md "Error codes") and, when one field,
 * parameter or header is at fault, `param`. jr_fail derives both from the status and the
 * message (messages name their field first: "limit must be ...", "group_id: group 5 does not
 * exist", "unknown field 'x'"); the few answers whose code the status does not tell set it. */
#ifndef JR_ERROR_CODES_H
#define JR_ERROR_CODES_H

#include <apr_pools.h>

#include "jr_result.h"

/* The code and param (NULL: none) of an error made of msg for status (jr_fail calls it). */
void jr_error_describe(apr_pool_t *p, int status, const char *msg, const char **code,
                       const char **param);

/* Writes res's error members (error, code, param, id) as its body through the writer. */
void jr_error_render(jr_result_t *res);

/* Replaces the code of the error in res (after jr_fail). */
void jr_error_code(jr_result_t *res, const char *code);

/* Adds a member to the error in res: the existing record's id of a duplicate. */
void jr_error_id(jr_result_t *res, long long id);

#endif
