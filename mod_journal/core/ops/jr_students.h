/* The operations of jr_students.c (the route table's rows) and what other families use of it. */
#ifndef JR_STUDENTS_H
#define JR_STUDENTS_H

#include "jr_load.h"
#include "jr_router.h"

/* Body field tables of the routes (jr_routes.c). */
extern const jr_field_t jr_fields_student_create[];
extern const jr_field_t jr_fields_student_update[];

/* Student id as jr_load() judges it (its group live, in the caller's branches). */
int jr_student_load(jr_ctx_t *ctx, jr_result_t *res, long long id, unsigned flags, jr_rows_t **row);

jr_op_fn jr_op_students_list;
jr_op_fn jr_op_students_get;
jr_op_fn jr_op_students_create;
jr_op_fn jr_op_students_update;
jr_op_fn jr_op_students_delete;

/* The key a student name is matched by: trimmed, lower-case (ASCII). Entries link to the
 * roster by it. */
const char *jr_student_key(apr_pool_t *p, const char *name);

#endif
