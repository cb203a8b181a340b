/* Events about an entry or a lesson report: the payload read from the record as the caller's
 * transaction has it, the row in the outbox (jr_events.h), and the notification the event
 * implies (jr_notif.h), itself an outbox event: so this part sits above both. */
#ifndef JR_RECORD_EVENTS_H
#define JR_RECORD_EVENTS_H

#include "jr_ctx.h"

/* Events about an entry, built from the row as it is now in the caller's transaction:
 * "ai_status" (entry_id, status, description, description_original, ai_error,
 * ai_checked_at) or "entry.created" (entry_id, group_id, student_name). */
apr_status_t jr_event_entry(jr_ctx_t *ctx, const char *type, long long entry_id);

/* The same from the entry's row that the caller's own write returned (its first row, with at
 * least the columns of an entry's record), when nothing in the transaction changes the row
 * after that write: no read. */
apr_status_t jr_event_entry_row(jr_ctx_t *ctx, const char *type, const jr_rows_t *r);

/* The same for a lesson report: "lesson_report_status" (report_id, status, text,
 * text_original, text_ai, ai_error, ai_checked_at), "lesson.report" (report_id, group_id,
 * lesson_date, lesson_time, topic, ai_status) and "lesson.ai.formatted" (report_id,
 * group_id, lesson_date, text, text_original). */
apr_status_t jr_event_report(jr_ctx_t *ctx, const char *type, long long report_id);

#endif
