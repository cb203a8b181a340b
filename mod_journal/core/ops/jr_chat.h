/* The operations of jr_chat.c (the route table's rows) and what other families use of it. */
#ifndef JR_CHAT_H
#define JR_CHAT_H

#include "jr_router.h"

/* Body field tables of the routes (jr_routes.c). */
extern const jr_field_t jr_fields_chat_message[];

jr_op_fn jr_op_chat_threads;
jr_op_fn jr_op_chat_messages;
jr_op_fn jr_op_chat_post;
jr_op_fn jr_op_chat_read;
/* Purges chat messages older than chat_retention_days; the number, or -1. */
int jr_chat_purge(jr_ctx_t *ctx);

#endif
