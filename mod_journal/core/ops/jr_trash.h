/* The operations of jr_trash.c (the route table's rows) and what other families use of it. */
#ifndef JR_TRASH_H
#define JR_TRASH_H

#include "jr_router.h"

jr_op_fn jr_op_trash_list;
jr_op_fn jr_op_trash_restore;
jr_op_fn jr_op_trash_purge;
/* Purges what has been in the trash longer than trash_retention_days; the number purged,
 * or -1 on a database error. For the periodic task. */
int jr_trash_purge_expired(jr_ctx_t *ctx);

#endif
