/* The operations of jr_audit_list.c (the route table's rows) and what other families use of it. */
#ifndef JR_AUDIT_LIST_H
#define JR_AUDIT_LIST_H

#include "jr_router.h"

jr_op_fn jr_op_audit_list;

#endif
