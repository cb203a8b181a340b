/* The event outbox: one row per thing that happened, written in the transaction of the change
 * it reports, for a stream to deliver later (docs/architecture.md, "The event outbox"); the
 * batched purges of old rows. Events about entries and lesson reports, with the notifications
 * they imply: jr_record_events.h. */
#ifndef JR_EVENTS_H
#define JR_EVENTS_H

#include "jr_ctx.h"
#include "jr_settings.h"

/* The Redis channel that carries event wake-ups (docs/events.md, "Redis"): httpd's children
 * and journal-worker publish on it after a commit that wrote events; every child subscribes. */
#define JR_EVENTS_CHANNEL "mod_journal:events"

/* A Redis address as JournalRedis and the worker's redis setting give it: host:port (port 1 to
 * 65535) or the absolute path of a unix socket. 0 with either *host and *port or *sock set
 * (the other NULL), -1 when the text is neither. */
int jr_redis_address(apr_pool_t *p, const char *text, const char **host, int *port,
                     const char **sock);

/* Writes one event row in the caller's transaction and counts it in ctx->events_written.
 * payload: a serialised JSON object. The only insert into the table: every event goes through
 * here. */
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
