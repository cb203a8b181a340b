/* The operations of jr_branches.c (the route table's rows) and what other families use of it. */
#ifndef JR_BRANCHES_H
#define JR_BRANCHES_H

#include "jr_load.h"
#include "jr_router.h"

/* Body field tables of the routes (jr_routes.c). */
extern const jr_field_t jr_fields_branch[];

/* Branch id as jr_load() judges it (one of the caller's). */
int jr_branch_load(jr_ctx_t *ctx, jr_result_t *res, long long id, unsigned flags, jr_rows_t **row);

jr_op_fn jr_op_branches_list;
jr_op_fn jr_op_branches_get;
jr_op_fn jr_op_branches_create;
jr_op_fn jr_op_branches_update;
jr_op_fn jr_op_branches_delete;

#endif
