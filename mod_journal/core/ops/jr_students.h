/* The operations of jr_students.c (the route table's rows) and what other families use of it. */
#ifndef JR_STUDENTS_H
#define JR_STUDENTS_H

#include "jr_router.h"

/* Body field tables of the routes (jr_routes.c). */
extern const jr_field_t jr_fields_student_create[];
extern const jr_field_t jr_fields_student_update[];

jr_op_fn jr_op_students_list;
jr_op_fn jr_op_students_get;
jr_op_fn jr_op_students_create;
jr_op_fn jr_op_students_update;
jr_op_fn jr_op_students_delete;

#endif
