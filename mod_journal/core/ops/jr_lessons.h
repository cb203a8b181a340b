/* The operations of jr_lessons.c (the route table's rows) and what other families use of it. */
#ifndef JR_LESSONS_H
#define JR_LESSONS_H

#include "jr_load.h"
#include "jr_router.h"

/* Body field tables of the routes (jr_routes.c). */
extern const jr_field_t jr_fields_report_create[];
extern const jr_field_t jr_fields_report_update[];

/* Lesson report id as jr_load() judges it (in the caller's branches). */
int jr_report_load(jr_ctx_t *ctx, jr_result_t *res, long long id, unsigned flags, jr_rows_t **row);

jr_op_fn jr_op_reports_list;
jr_op_fn jr_op_reports_get;
jr_op_fn jr_op_reports_create;
jr_op_fn jr_op_reports_update;
jr_op_fn jr_op_reports_delete;
jr_op_fn jr_op_reports_versions;
jr_op_fn jr_op_reports_restore_version;
jr_op_fn jr_op_reports_ai_revert;

/* Writes a lesson report row (all its columns) as JSON, topic_position included. */
struct jr_jw;
void jr_report_write(struct jr_jw *w, const jr_rows_t *r, int i);

#endif
