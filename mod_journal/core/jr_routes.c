/* The route tables: which endpoints exist, at a glance. */
#include "jr_files.h"
#include "jr_audit_list.h"
#include "jr_auth.h"
#include "jr_bans.h"
#include "jr_branches.h"
#include "jr_chat.h"
#include "jr_entries.h"
#include "jr_groups.h"
#include "jr_health.h"
#include "jr_keys_admin.h"
#include "jr_lessons.h"
#include "jr_modules.h"
#include "jr_notif.h"
#include "jr_photo_jobs.h"
#include "jr_queues.h"
#include "jr_settings.h"
#include "jr_stats.h"
#include "jr_stream.h"
#include "jr_students.h"
#include "jr_trash.h"
#include "jr_users.h"
#include "jr_v1.h"
#include "jr_backup.h"
#include "jr_share.h"

#define ADMIN JR_RF_ADMIN
#define WRITE JR_RF_WRITE /* the road's transaction */
#define BAN JR_RF_BAN
#define DB_OPTIONAL JR_RF_DB_OPTIONAL
#define CACHE JR_RF_CACHE /* the response cache may answer it (jr_rcache.h) */
#define NOBODY JR_BODY_NONE
#define JSON JR_BODY_JSON
#define UPLOAD JR_BODY_UPLOAD
#define OPTIONAL JR_BODY_OPTIONAL
#define S_NONE JR_SCOPE_NONE
#define S_READ JR_SCOPE_READ
#define S_WRITE JR_SCOPE_WRITE
#define NOFIELDS NULL
#define SESSION JR_AUTH_SESSION
#define NONE JR_AUTH_NONE

const jr_route_t jr_routes_admin[] = {
    {"GET", "/api/health", jr_op_health, NONE, NOBODY, DB_OPTIONAL, S_NONE, NOFIELDS},

    {"POST", "/api/auth/login", jr_op_login, NONE, JSON, BAN, S_NONE, NOFIELDS},
    {"POST", "/api/auth/logout", jr_op_logout, SESSION, NOBODY, 0, S_NONE, NOFIELDS},
    {"GET", "/api/auth/me", jr_op_me, SESSION, NOBODY, 0, S_NONE, NOFIELDS},

    {"GET", "/api/users", jr_op_users_list, SESSION, NOBODY, ADMIN, S_NONE, NOFIELDS},
    {"POST", "/api/users", jr_op_users_create,
     SESSION, JSON, ADMIN | WRITE, S_NONE, jr_fields_user_create},
    {"GET", "/api/users/:id", jr_op_users_get, SESSION, NOBODY, ADMIN, S_NONE, NOFIELDS},
    {"PUT", "/api/users/:id", jr_op_users_update,
     SESSION, JSON, ADMIN | WRITE, S_NONE, jr_fields_user_update},
    {"DELETE", "/api/users/:id", jr_op_users_delete,
     SESSION, NOBODY, ADMIN | WRITE, S_NONE, NOFIELDS},

    {"GET", "/api/branches", jr_op_branches_list, SESSION, NOBODY, CACHE, S_NONE, NOFIELDS},
    {"POST", "/api/branches", jr_op_branches_create,
     SESSION, JSON, ADMIN | WRITE, S_NONE, jr_fields_branch},
    {"GET", "/api/branches/:id", jr_op_branches_get, SESSION, NOBODY, 0, S_NONE, NOFIELDS},
    {"PUT", "/api/branches/:id", jr_op_branches_update,
     SESSION, JSON, ADMIN | WRITE, S_NONE, jr_fields_branch},
    {"DELETE", "/api/branches/:id", jr_op_branches_delete,
     SESSION, NOBODY, ADMIN | WRITE, S_NONE, NOFIELDS},

    {"GET", "/api/groups", jr_op_groups_list, SESSION, NOBODY, CACHE, S_NONE, NOFIELDS},
    {"POST", "/api/groups", jr_op_groups_create,
     SESSION, JSON, ADMIN | WRITE, S_NONE, jr_fields_group_create},
    {"GET", "/api/groups/:id", jr_op_groups_get, SESSION, NOBODY, 0, S_NONE, NOFIELDS},
    {"PUT", "/api/groups/:id", jr_op_groups_update,
     SESSION, JSON, ADMIN | WRITE, S_NONE, jr_fields_group_update},
    {"DELETE", "/api/groups/:id", jr_op_groups_delete,
     SESSION, NOBODY, ADMIN | WRITE, S_NONE, NOFIELDS},
    {"POST", "/api/groups/:id/restore", jr_op_groups_restore,
     SESSION, NOBODY, ADMIN | WRITE, S_NONE, NOFIELDS},

    {"GET", "/api/api-keys", jr_op_keys_list, SESSION, NOBODY, ADMIN, S_NONE, NOFIELDS},
    {"GET", "/api/api-keys/meta", jr_op_keys_meta, SESSION, NOBODY, ADMIN, S_NONE, NOFIELDS},
    {"POST", "/api/api-keys", jr_op_keys_create,
     SESSION, JSON, ADMIN | WRITE, S_NONE, jr_fields_key_create},
    {"GET", "/api/api-keys/:id", jr_op_keys_get, SESSION, NOBODY, ADMIN, S_NONE, NOFIELDS},
    {"PUT", "/api/api-keys/:id", jr_op_keys_update,
     SESSION, JSON, ADMIN | WRITE, S_NONE, jr_fields_key_update},
    {"DELETE", "/api/api-keys/:id", jr_op_keys_delete,
     SESSION, NOBODY, ADMIN | WRITE, S_NONE, NOFIELDS},
    {"POST", "/api/api-keys/:id/rotate", jr_op_keys_rotate,
     SESSION, NOBODY, ADMIN | WRITE, S_NONE, NOFIELDS},

    {"GET", "/api/bans", jr_op_bans_list, SESSION, NOBODY, ADMIN, S_NONE, NOFIELDS},
    {"DELETE", "/api/bans/~ip", jr_op_bans_delete,
     SESSION, NOBODY, ADMIN | WRITE, S_NONE, NOFIELDS},

    {"GET", "/api/audit", jr_op_audit_list, SESSION, NOBODY, ADMIN, S_NONE, NOFIELDS},

    {"GET", "/api/students", jr_op_students_list, SESSION, NOBODY, CACHE, S_NONE, NOFIELDS},
    {"POST", "/api/students", jr_op_students_create,
     SESSION, JSON, WRITE, S_NONE, jr_fields_student_create},
    {"GET", "/api/students/:id", jr_op_students_get, SESSION, NOBODY, 0, S_NONE, NOFIELDS},
    {"PUT", "/api/students/:id", jr_op_students_update,
     SESSION, JSON, WRITE, S_NONE, jr_fields_student_update},
    {"DELETE", "/api/students/:id", jr_op_students_delete,
     SESSION, NOBODY, WRITE, S_NONE, NOFIELDS},

    {"GET", "/api/modules", jr_op_modules_list, NONE, NOBODY, CACHE, S_NONE, NOFIELDS},
    {"POST", "/api/modules", jr_op_modules_create,
     SESSION, JSON, ADMIN | WRITE, S_NONE, jr_fields_module_create},
    {"GET", "/api/modules/:id", jr_op_modules_get, NONE, NOBODY, 0, S_NONE, NOFIELDS},
    {"PUT", "/api/modules/:id", jr_op_modules_update,
     SESSION, JSON, ADMIN | WRITE, S_NONE, jr_fields_module_update},
    {"DELETE", "/api/modules/:id", jr_op_modules_delete,
     SESSION, NOBODY, ADMIN | WRITE, S_NONE, NOFIELDS},
    {"POST", "/api/modules/:id/restore", jr_op_modules_restore,
     SESSION, NOBODY, ADMIN | WRITE, S_NONE, NOFIELDS},

    {"GET", "/api/entries", jr_op_entries_list, SESSION, NOBODY, CACHE, S_NONE, NOFIELDS},
    {"POST", "/api/entries", jr_op_entries_create,
     SESSION, JSON, WRITE, S_NONE, jr_fields_entry_create},
    {"GET", "/api/entries/:id", jr_op_entries_get, SESSION, NOBODY, 0, S_NONE, NOFIELDS},
    {"PUT", "/api/entries/:id", jr_op_entries_update,
     SESSION, JSON, WRITE, S_NONE, jr_fields_entry_update},
    {"DELETE", "/api/entries/:id", jr_op_entries_delete, SESSION, NOBODY, WRITE, S_NONE, NOFIELDS},
    {"POST", "/api/entries/:id/ai/recheck", jr_op_entries_recheck,
     SESSION, NOBODY, WRITE, S_NONE, NOFIELDS},
    {"POST", "/api/entries/:id/ai/revert", jr_op_entries_ai_revert,
     SESSION, NOBODY, WRITE, S_NONE, NOFIELDS},
    {"GET", "/api/entries/:id/files", jr_op_files_list, SESSION, NOBODY, 0, S_NONE, NOFIELDS},
    {"POST", "/api/entries/:id/files", jr_op_files_upload,
     SESSION, UPLOAD, WRITE, S_NONE, NOFIELDS},
    {"GET", "/api/entries/:id/files/:fileId", jr_op_files_download,
     SESSION, NOBODY, 0, S_NONE, NOFIELDS},
    {"DELETE", "/api/entries/:id/files/:fileId", jr_op_files_delete,
     SESSION, NOBODY, WRITE, S_NONE, NOFIELDS},
    {"GET", "/api/entries/:id/photo", jr_op_photo_get, SESSION, NOBODY, 0, S_NONE, NOFIELDS},
    {"POST", "/api/entries/:id/photo", jr_op_photo_upload,
     SESSION, UPLOAD, WRITE, S_NONE, NOFIELDS},
    {"DELETE", "/api/entries/:id/photo", jr_op_photo_delete,
     SESSION, NOBODY, WRITE, S_NONE, NOFIELDS},
    {"GET", "/api/entries/:id/photo/original", jr_op_photo_original,
     SESSION, NOBODY, 0, S_NONE, NOFIELDS},
    {"GET", "/api/groups/:id/photo", jr_op_cover_get, SESSION, NOBODY, 0, S_NONE, NOFIELDS},
    {"POST", "/api/groups/:id/photo", jr_op_cover_upload,
     SESSION, UPLOAD, ADMIN | WRITE, S_NONE, NOFIELDS},
    {"DELETE", "/api/groups/:id/photo", jr_op_cover_delete,
     SESSION, NOBODY, ADMIN | WRITE, S_NONE, NOFIELDS},

    {"GET", "/api/lesson-reports", jr_op_reports_list, SESSION, NOBODY, CACHE, S_NONE, NOFIELDS},
    {"POST", "/api/lesson-reports", jr_op_reports_create,
     SESSION, JSON, WRITE, S_NONE, jr_fields_report_create},
    {"GET", "/api/lesson-reports/:id", jr_op_reports_get, SESSION, NOBODY, 0, S_NONE, NOFIELDS},
    {"PUT", "/api/lesson-reports/:id", jr_op_reports_update,
     SESSION, JSON, WRITE, S_NONE, jr_fields_report_update},
    {"DELETE", "/api/lesson-reports/:id", jr_op_reports_delete,
     SESSION, NOBODY, WRITE, S_NONE, NOFIELDS},
    {"GET", "/api/lesson-reports/:id/versions", jr_op_reports_versions,
     SESSION, NOBODY, 0, S_NONE, NOFIELDS},
    {"POST", "/api/lesson-reports/:id/versions/:versionId/restore", jr_op_reports_restore_version,
     SESSION, NOBODY, WRITE, S_NONE, NOFIELDS},
    {"POST", "/api/lesson-reports/:id/ai/revert", jr_op_reports_ai_revert,
     SESSION, NOBODY, WRITE, S_NONE, NOFIELDS},

    {"GET", "/api/dashboard", jr_op_dashboard, SESSION, NOBODY, 0, S_NONE, NOFIELDS},
    {"GET", "/api/ai/status", jr_op_ai_status, SESSION, NOBODY, 0, S_NONE, NOFIELDS},
    {"POST", "/api/ai/wake", jr_op_ai_wake, SESSION, NOBODY, ADMIN | WRITE, S_NONE, NOFIELDS},
    {"POST", "/api/ai/requeue-failed", jr_op_ai_requeue,
     SESSION, NOBODY, ADMIN | WRITE, S_NONE, NOFIELDS},
    {"GET", "/api/photo-jobs/status", jr_op_photo_status, SESSION, NOBODY, 0, S_NONE, NOFIELDS},
    {"POST", "/api/photo-jobs/wake", jr_op_photo_wake,
     SESSION, NOBODY, ADMIN | WRITE, S_NONE, NOFIELDS},
    {"POST", "/api/photo-jobs/requeue-failed", jr_op_photo_requeue,
     SESSION, NOBODY, ADMIN | WRITE, S_NONE, NOFIELDS},

    {"GET", "/api/trash", jr_op_trash_list, SESSION, NOBODY, ADMIN, S_NONE, NOFIELDS},
    {"POST", "/api/trash/~type/:id/restore", jr_op_trash_restore,
     SESSION, NOBODY, ADMIN | WRITE, S_NONE, NOFIELDS},
    {"DELETE", "/api/trash/~type/:id", jr_op_trash_purge,
     SESSION, NOBODY, ADMIN | WRITE, S_NONE, NOFIELDS},

    {"POST", "/api/entries/:id/photo/enhance-ai", jr_op_photo_enhance_ai,
     SESSION, OPTIONAL, WRITE, S_NONE, jr_fields_photo_enhance_ai},
    {"POST", "/api/entries/:id/photo/enhance", jr_op_photo_enhance,
     SESSION, OPTIONAL, WRITE, S_NONE, jr_fields_photo_enhance},
    {"GET", "/api/entries/:id/photo/jobs", jr_op_photo_jobs_list,
     SESSION, NOBODY, 0, S_NONE, NOFIELDS},
    {"GET", "/api/entries/:id/photo/jobs/:jobId/result", jr_op_photo_job_result,
     SESSION, NOBODY, 0, S_NONE, NOFIELDS},
    {"POST", "/api/entries/:id/photo/jobs/:jobId/apply", jr_op_photo_job_apply,
     SESSION, NOBODY, WRITE, S_NONE, NOFIELDS},
    {"POST", "/api/entries/:id/photo/jobs/:jobId/reject", jr_op_photo_job_reject,
     SESSION, NOBODY, WRITE, S_NONE, NOFIELDS},
    {"POST", "/api/entries/:id/photo/rollback", jr_op_photo_rollback,
     SESSION, NOBODY, WRITE, S_NONE, NOFIELDS},
    {"POST", "/api/entries/:id/photo/restore-original", jr_op_photo_restore_original,
     SESSION, NOBODY, WRITE, S_NONE, NOFIELDS},
    {"PUT", "/api/photo-jobs/enabled", jr_op_photo_jobs_enabled,
     SESSION, JSON, ADMIN | WRITE, S_NONE, jr_fields_photo_jobs_enabled},
    {"GET", "/api/photo-ai/health", jr_op_photo_ai_health, SESSION, NOBODY, ADMIN, S_NONE, NOFIELDS},

    {"GET", "/api/settings", jr_op_settings_get, SESSION, NOBODY, ADMIN, S_NONE, NOFIELDS},
    {"PUT", "/api/settings", jr_op_settings_put, SESSION, JSON, ADMIN | WRITE, S_NONE, NOFIELDS},
    {"GET", "/api/public-settings", jr_op_public_settings, NONE, NOBODY, 0, S_NONE, NOFIELDS},

    /* Notifications and live events (docs/events.md); the streams themselves,
     * /api/notifications/stream and /api/chat/stream, are served by the glue (mj_sse.c). */
    {"GET", "/api/notification-types", jr_op_notif_types, SESSION, NOBODY, 0, S_NONE, NOFIELDS},
    {"GET", "/api/notifications", jr_op_notif_list, SESSION, NOBODY, 0, S_NONE, NOFIELDS},
    {"DELETE", "/api/notifications", jr_op_notif_clear, SESSION, NOBODY, WRITE, S_NONE, NOFIELDS},
    {"GET", "/api/notifications/unread-count", jr_op_notif_unread_count,
     SESSION, NOBODY, 0, S_NONE, NOFIELDS},
    {"POST", "/api/notifications/read-all", jr_op_notif_read_all,
     SESSION, NOBODY, WRITE, S_NONE, NOFIELDS},
    {"POST", "/api/notifications/:id/read", jr_op_notif_read,
     SESSION, NOBODY, WRITE, S_NONE, NOFIELDS},
    {"DELETE", "/api/notifications/:id", jr_op_notif_delete,
     SESSION, NOBODY, WRITE, S_NONE, NOFIELDS},
    {"POST", "/api/auth/stream-ticket", jr_op_stream_ticket,
     SESSION, NOBODY, WRITE, S_NONE, NOFIELDS},
    {"GET", "/api/chat/threads", jr_op_chat_threads, SESSION, NOBODY, 0, S_NONE, NOFIELDS},
    {"GET", "/api/chat/threads/:tutorId/messages", jr_op_chat_messages,
     SESSION, NOBODY, 0, S_NONE, NOFIELDS},
    {"POST", "/api/chat/threads/:tutorId/messages", jr_op_chat_post,
     SESSION, JSON, WRITE, S_NONE, jr_fields_chat_message},
    {"POST", "/api/chat/threads/:tutorId/read", jr_op_chat_read,
     SESSION, NOBODY, WRITE, S_NONE, NOFIELDS},
    {"GET", "/api/share-links", jr_op_share_links_list, SESSION, NOBODY, 0, S_NONE, NOFIELDS},
    {"POST", "/api/share-links", jr_op_share_links_create,
     SESSION, JSON, WRITE, S_NONE, jr_fields_share_link_create},
    {"DELETE", "/api/share-links/:id", jr_op_share_links_revoke,
     SESSION, NOBODY, WRITE, S_NONE, NOFIELDS},
    /* The public side of a share link writes one statement at a time (its open count, a ban
     * after wrong passwords), as before any transaction. */
    {"GET", "/api/share/~token", jr_op_share_open, NONE, NOBODY, 0, S_NONE, NOFIELDS},
    {"POST", "/api/share/~token", jr_op_share_unlock, NONE, JSON, 0, S_NONE, NOFIELDS},
    {"GET", "/api/share/~token/files/~name", jr_op_share_file, NONE, NOBODY, 0, S_NONE, NOFIELDS},
    {"GET", "/share/~token", jr_op_share_page, NONE, NOBODY, 0, S_NONE, NOFIELDS},
    {"POST", "/share/~token", jr_op_share_page_unlock, NONE, UPLOAD, 0, S_NONE, NOFIELDS},

    /* A backup reads in one transaction and records itself in another; a restore replaces
     * the records in its own (jr_backup.h): neither runs in the road's. */
    {"POST", "/api/backups", jr_op_backups_create, SESSION, NOBODY, ADMIN, S_NONE, NOFIELDS},
    {"GET", "/api/backups", jr_op_backups_list, SESSION, NOBODY, ADMIN, S_NONE, NOFIELDS},
    {"GET", "/api/backups/~name/download", jr_op_backups_download,
     SESSION, NOBODY, ADMIN, S_NONE, NOFIELDS},
    {"DELETE", "/api/backups/~name", jr_op_backups_delete,
     SESSION, NOBODY, ADMIN | WRITE, S_NONE, NOFIELDS},
    {"POST", "/api/backups/~name/restore", jr_op_backups_restore,
     SESSION, NOBODY, ADMIN, S_NONE, NOFIELDS},
    {"POST", "/api/backups/restore", jr_op_backups_upload_restore,
     SESSION, UPLOAD, ADMIN, S_NONE, NOFIELDS},

    /* No route: 404 or 405 at once, without a database. */
    {NULL, NULL, jr_op_no_route, NONE, NOBODY, JR_RF_NO_DB, S_NONE, NOFIELDS},
};

/* The external interface: API keys only (see docs/integrators.md). */
#define KEY JR_AUTH_KEY

const jr_route_t jr_routes_v1[] = {
    {"GET", "/api/v1/me", jr_op_v1_me, KEY, NOBODY, 0, S_READ, NOFIELDS},
    {"GET", "/api/v1/branches", jr_op_branches_list, KEY, NOBODY, CACHE, S_READ, NOFIELDS},
    {"GET", "/api/v1/groups", jr_op_groups_list, KEY, NOBODY, CACHE, S_READ, NOFIELDS},
    {"GET", "/api/v1/students", jr_op_students_list, KEY, NOBODY, CACHE, S_READ, NOFIELDS},
    {"GET", "/api/v1/modules", jr_op_modules_list, KEY, NOBODY, CACHE, S_READ, NOFIELDS},

    {"GET", "/api/v1/entries", jr_op_entries_list, KEY, NOBODY, CACHE, S_READ, NOFIELDS},
    {"GET", "/api/v1/entries/:id", jr_op_entries_get, KEY, NOBODY, 0, S_READ, NOFIELDS},
    {"POST", "/api/v1/entries", jr_op_entries_create,
     KEY, JSON, WRITE, S_WRITE, jr_fields_entry_create},
    {"PUT", "/api/v1/entries/:id", jr_op_entries_update,
     KEY, JSON, WRITE, S_WRITE, jr_fields_entry_update},
    {"DELETE", "/api/v1/entries/:id", jr_op_entries_delete, KEY, NOBODY, WRITE, S_WRITE, NOFIELDS},
    {"POST", "/api/v1/entries/:id/ai/recheck", jr_op_entries_recheck,
     KEY, NOBODY, WRITE, S_WRITE, NOFIELDS},
    {"GET", "/api/v1/entries/:id/files", jr_op_files_list, KEY, NOBODY, 0, S_READ, NOFIELDS},

    {"GET", "/api/v1/lesson-reports", jr_op_reports_list, KEY, NOBODY, CACHE, S_READ, NOFIELDS},
    {"GET", "/api/v1/lesson-reports/:id", jr_op_reports_get, KEY, NOBODY, 0, S_READ, NOFIELDS},
    {"POST", "/api/v1/lesson-reports", jr_op_reports_create,
     KEY, JSON, WRITE, S_WRITE, jr_fields_report_create},
    {"DELETE", "/api/v1/lesson-reports/:id", jr_op_reports_delete,
     KEY, NOBODY, WRITE, S_WRITE, NOFIELDS},

    {"GET", "/api/v1/stats", jr_op_stats, KEY, NOBODY, 0, S_READ, NOFIELDS},
    {"POST", "/api/v1/ai/wake", jr_op_ai_wake, KEY, NOBODY, WRITE, S_WRITE, NOFIELDS},
    {"POST", "/api/v1/photo-jobs/wake", jr_op_photo_wake, KEY, NOBODY, WRITE, S_WRITE, NOFIELDS},
    {"POST", "/api/v1/ai/requeue-failed", jr_op_ai_requeue, KEY, NOBODY, WRITE, S_WRITE, NOFIELDS},
    {"POST", "/api/v1/photo-jobs/requeue-failed", jr_op_photo_requeue,
     KEY, NOBODY, WRITE, S_WRITE, NOFIELDS},

    /* No route: the key first, so that without one no path reveals whether it exists. */
    {NULL, NULL, jr_op_no_route, KEY, NOBODY, 0, JR_SCOPE_METHOD, NOFIELDS},
};
