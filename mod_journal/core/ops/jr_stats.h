/* The operations of jr_stats.c (the route table's rows) and what other families use of it. */
#ifndef JR_STATS_H
#define JR_STATS_H

#include "jr_router.h"

jr_op_fn jr_op_stats;
jr_op_fn jr_op_dashboard;

#endif
