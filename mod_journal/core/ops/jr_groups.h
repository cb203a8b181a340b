/* The operations of jr_groups.c (the route table's rows) and what other families use of it. */
#ifndef JR_GROUPS_H
#define JR_GROUPS_H

#include "jr_load.h"
#include "jr_router.h"

/* Body field tables of the routes (jr_routes.c). */
extern const jr_field_t jr_fields_group_create[];
extern const jr_field_t jr_fields_group_update[];

/* Group id as jr_load() judges it (live, in the caller's branches; in the trash with
 * JR_LOAD_DELETED). Without JR_LOAD_ROW the row holds branch_id and deleted_at only. */
int jr_group_load(jr_ctx_t *ctx, jr_result_t *res, long long id, unsigned flags, jr_rows_t **row);

jr_op_fn jr_op_groups_list;
jr_op_fn jr_op_groups_get;
jr_op_fn jr_op_groups_create;
jr_op_fn jr_op_groups_update;
jr_op_fn jr_op_groups_delete;
jr_op_fn jr_op_groups_restore;

#endif
