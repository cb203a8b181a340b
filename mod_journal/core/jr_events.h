/* The event outbox: one row per thing that happened, written in the transaction of the change
 * it reports, for a stream to deliver later (docs/architecture.md, "The event outbox"); the
 * batched purges of old rows. Events about entries and lesson reports, with the notifications
 * they imply: jr_record_events.h. */
#ifndef JR_EVENTS_H
#define JR_EVENTS_H

#include "jr_ctx.h"
#include "jr_settings.h"

/* Writes one event row in the caller's transaction. payload: a serialised JSON object. The
 * only insert into the table: every event goes through here. */
apr_status_t jr_event(jr_ctx_t *ctx, const char *type, long long branch_id,
                      const char *entity_type, long long entity_id, const char *payload);

/* Runs a batched delete (a statement taking one cutoff time, deleting at most
 * JR_PURGE_BATCH rows) in short transactions until a batch is short. The rows deleted, or
 * -1 on a database error. */
#define JR_PURGE_BATCH 5000
int jr_purge_batched(jr_ctx_t *ctx, jr_stmt_id_t id, const char *cutoff);

/* The same with the cutoff "now minus the days of a retention setting" (a valid value of
 * the setting, else its default); *days says which was used. */
int jr_purge_days(jr_ctx_t *ctx, jr_stmt_id_t id, jr_setting_id_t setting, long long *days);

/* Deletes events older than max_age seconds, in its own transaction. The number deleted, or
 * -1 on a database error. */
int jr_events_trim(jr_ctx_t *ctx, long long max_age);

#endif
