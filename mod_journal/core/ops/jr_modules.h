/* The operations of jr_modules.c (the route table's rows) and what other families use of it. */
#ifndef JR_MODULES_H
#define JR_MODULES_H

#include "jr_router.h"

/* Body field tables of the routes (jr_routes.c). */
extern const jr_field_t jr_fields_module_create[];
extern const jr_field_t jr_fields_module_update[];

jr_op_fn jr_op_modules_list;
jr_op_fn jr_op_modules_get;
jr_op_fn jr_op_modules_create;
jr_op_fn jr_op_modules_update;
jr_op_fn jr_op_modules_delete;
jr_op_fn jr_op_modules_restore;

/* 1 when module id exists and is not deleted (its name in *name), 0 when not, -1 on error. */
int jr_module_exists(jr_ctx_t *ctx, long long id, const char **name);

#endif
