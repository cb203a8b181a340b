/* The operations of jr_users.c (the route table's rows) and what other families use of it. */
#ifndef JR_USERS_H
#define JR_USERS_H

#include "jr_jw.h"
#include "jr_router.h"

/* Body field tables of the routes (jr_routes.c). */
extern const jr_field_t jr_fields_user_create[];
extern const jr_field_t jr_fields_user_update[];

jr_op_fn jr_op_users_list;
jr_op_fn jr_op_users_get;
jr_op_fn jr_op_users_create;
jr_op_fn jr_op_users_update;
jr_op_fn jr_op_users_delete;

/* A user: its row (id, username, role, active, created_at, updated_at; never the password
 * hash) and its branch ids, sorted. The sessions' /api/me answers with it. */
typedef struct {
    jr_rows_t *rows;
    apr_array_header_t *branch_ids;
} jr_user_t;
/* 1 with *u filled, 0 when absent or unreadable. */
int jr_user_load(jr_ctx_t *ctx, long long id, jr_user_t *u);
/* The user record as the API shows it. */
void jr_user_write(jr_jw_t *w, const jr_user_t *u);

/* Branch ids of a user, sorted: the scope of the user's sessions. */
apr_status_t jr_user_branch_ids(jr_ctx_t *ctx, long long user_id, apr_array_header_t **out);

/* Checks that every id exists as a branch. Returns 0, or the first missing id. */
long long jr_branches_missing(jr_ctx_t *ctx, const apr_array_header_t *ids, apr_status_t *rv);

#endif
