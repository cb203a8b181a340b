/* The operations of jr_v1.c (the route table's rows) and what other families use of it. */
#ifndef JR_V1_H
#define JR_V1_H

#include "jr_router.h"

jr_op_fn jr_op_v1_me;

#endif
