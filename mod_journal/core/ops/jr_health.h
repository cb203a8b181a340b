/* The operations of jr_health.c (the route table's rows) and what other families use of it. */
#ifndef JR_HEALTH_H
#define JR_HEALTH_H

#include "jr_jw.h"
#include "jr_router.h"

jr_op_fn jr_op_health;
/* Whether AI is configured and what is known of the worker processes, as members of the
 * object open in w: brief for /api/health, with detail for /api/ai/status. */
void jr_ai_describe(jr_jw_t *w, const jr_config_t *cfg, int detail);
/* The processes of a census that run and are past their start delay at now (Unix seconds). */
int jr_workers_running(const jr_worker_census_t *census, apr_uint32_t now);

#endif
