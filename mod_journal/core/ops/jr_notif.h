/* Notifications: the catalogue of types, raising one in the caller's transaction, the
 * per-user read marks and the retention purge (docs/events.md). */
#ifndef JR_NOTIF_H
#define JR_NOTIF_H

#include "jr_ctx.h"
#include "jr_router.h"
#include "jr_db.h"

/* The catalogue: X(type, level, switch setting id). Who receives a type follows from the branch
 * of its record: admins receive every notification, tutors those about records of their
 * branches (ban and backup notifications have no branch: admins only). Each switch is a row
 * of JR_SETTINGS (jr_settings.h). */
#define JR_NOTIFY_TYPES(X)                                        \
    X("lesson.report", "info", NOTIFY_LESSON_REPORT)             \
    X("lesson.ai.formatted", "info", NOTIFY_LESSON_AI_FORMATTED) \
    X("entry.created", "info", NOTIFY_ENTRY_CREATED)             \
    X("ai.failed", "error", NOTIFY_AI_FAILED)                    \
    X("photo.done", "info", NOTIFY_PHOTO_DONE)                   \
    X("photo.failed", "error", NOTIFY_PHOTO_FAILED)              \
    X("ban.created", "warning", NOTIFY_BAN_CREATED)              \
    X("backup.created", "info", NOTIFY_BACKUP_CREATED)           \
    X("backup.restored", "warning", NOTIFY_BACKUP_RESTORED)

/* Raises a notification of a catalogue type in the caller's transaction, unless
 * notify_enabled or the type's switch is off: a row in notifications and, for the streams,
 * an outbox event "notification" whose payload is the record. branch_id 0: none (admins
 * only); entity_id 0: none. APR_EINVAL for a type outside the catalogue. */
apr_status_t jr_notify(jr_ctx_t *ctx, const char *type, long long branch_id,
                       const char *entity_type, long long entity_id, const char *title,
                       const char *body);

/* Deletes notifications older than notify_retention_days and expired stream tickets, in
 * short transactions of their own. The number of notifications deleted, or -1. */
int jr_notif_purge(jr_ctx_t *ctx);

/* Operations of the road (jr_routes.c). */
jr_op_fn jr_op_notif_types;
jr_op_fn jr_op_notif_list;
jr_op_fn jr_op_notif_unread_count;
jr_op_fn jr_op_notif_read;
jr_op_fn jr_op_notif_read_all;
jr_op_fn jr_op_notif_delete;
jr_op_fn jr_op_notif_clear;

#endif
