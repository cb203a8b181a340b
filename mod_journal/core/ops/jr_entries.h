/* Journal entries: shared lookups for the operations built on entries (files, photos, AI
 * checks, trash). */
#ifndef JR_ENTRIES_H
#define JR_ENTRIES_H

#include "jr_ctx.h"
#include "jr_router.h"

/* 1 when entry id exists, is not deleted and the caller may see its branch (*branch_id and
 * *group_id filled when not NULL); 0 when not; -1 on a database error. */
int jr_entry_visible(jr_ctx_t *ctx, long long id, long long *branch_id, long long *group_id);

/* The same for a group (not deleted, in the caller's branches). */
int jr_group_visible(jr_ctx_t *ctx, long long id, long long *branch_id);

/* Answers 404/503 for a lookup result of the two functions above (0 or -1). */
apr_status_t jr_not_visible(jr_ctx_t *ctx, jr_result_t *res, int rc, const char *what);

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
