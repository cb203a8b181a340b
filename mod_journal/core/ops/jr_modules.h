/* The operations of jr_modules.c (the route table's rows) and what other families use of it. */
#ifndef JR_MODULES_H
#define JR_MODULES_H

#include "jr_load.h"
#include "jr_router.h"

/* Body field tables of the routes (jr_routes.c). */
extern const jr_field_t jr_fields_module_create[];
extern const jr_field_t jr_fields_module_update[];

/* Module id as jr_load() judges it (live; in the trash with JR_LOAD_DELETED). */
int jr_module_load(jr_ctx_t *ctx, jr_result_t *res, long long id, unsigned flags, jr_rows_t **row);

jr_op_fn jr_op_modules_list;
jr_op_fn jr_op_modules_get;
jr_op_fn jr_op_modules_create;
jr_op_fn jr_op_modules_update;
jr_op_fn jr_op_modules_delete;
jr_op_fn jr_op_modules_restore;

#endif
