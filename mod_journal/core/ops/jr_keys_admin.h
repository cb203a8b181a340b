/* The operations of jr_keys_admin.c (the route table's rows) and what other families use of it. */
#ifndef JR_KEYS_ADMIN_H
#define JR_KEYS_ADMIN_H

#include "jr_router.h"

/* Body field tables of the routes (jr_routes.c). */
extern const jr_field_t jr_fields_key_create[];
extern const jr_field_t jr_fields_key_update[];

jr_op_fn jr_op_keys_list;
jr_op_fn jr_op_keys_meta;
jr_op_fn jr_op_keys_get;
jr_op_fn jr_op_keys_create;
jr_op_fn jr_op_keys_update;
jr_op_fn jr_op_keys_delete;
jr_op_fn jr_op_keys_rotate;

#endif
