/* Journal entries: the operations, and the lookup the operations built on entries share
 * (files, photos, photo jobs). */
#ifndef JR_ENTRIES_H
#define JR_ENTRIES_H

#include "jr_load.h"
#include "jr_router.h"

/* Entry id as jr_load() judges it: live, in the caller's branches. Without JR_LOAD_ROW the
 * row holds branch_id, group_id and deleted_at only. */
int jr_entry_load(jr_ctx_t *ctx, jr_result_t *res, long long id, unsigned flags, jr_rows_t **row);

/* Operations of the road (jr_routes.c) and the field tables of their bodies. */
extern const jr_field_t jr_fields_entry_create[];
extern const jr_field_t jr_fields_entry_update[];

jr_op_fn jr_op_entries_list;
jr_op_fn jr_op_entries_get;
jr_op_fn jr_op_entries_create;
jr_op_fn jr_op_entries_update;
jr_op_fn jr_op_entries_delete;
jr_op_fn jr_op_entries_recheck;
jr_op_fn jr_op_entries_ai_revert;

#endif
