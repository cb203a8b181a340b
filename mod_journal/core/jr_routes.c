/* The route tables: which endpoints exist, at a glance. */
#include "jr_ops.h"
#include "jr_backup.h"
#include "jr_share.h"

#define ADMIN JR_RF_ADMIN
#define SESSION JR_AUTH_SESSION
#define NONE JR_AUTH_NONE

const jr_route_t jr_routes_admin[] = {
    {"GET", "/api/health", jr_op_health, NONE, JR_BODY_NONE, JR_RF_DB_OPTIONAL},

    {"POST", "/api/auth/login", jr_op_login, NONE, JR_BODY_JSON, 0},
    {"POST", "/api/auth/logout", jr_op_logout, SESSION, JR_BODY_NONE, 0},
    {"GET", "/api/auth/me", jr_op_me, SESSION, JR_BODY_NONE, 0},

    {"GET", "/api/users", jr_op_users_list, SESSION, JR_BODY_NONE, ADMIN},
    {"POST", "/api/users", jr_op_users_create, SESSION, JR_BODY_JSON, ADMIN},
    {"GET", "/api/users/:id", jr_op_users_get, SESSION, JR_BODY_NONE, ADMIN},
    {"PUT", "/api/users/:id", jr_op_users_update, SESSION, JR_BODY_JSON, ADMIN},
    {"DELETE", "/api/users/:id", jr_op_users_delete, SESSION, JR_BODY_NONE, ADMIN},

    {"GET", "/api/branches", jr_op_branches_list, SESSION, JR_BODY_NONE, 0},
    {"POST", "/api/branches", jr_op_branches_create, SESSION, JR_BODY_JSON, ADMIN},
    {"GET", "/api/branches/:id", jr_op_branches_get, SESSION, JR_BODY_NONE, 0},
    {"PUT", "/api/branches/:id", jr_op_branches_update, SESSION, JR_BODY_JSON, ADMIN},
    {"DELETE", "/api/branches/:id", jr_op_branches_delete, SESSION, JR_BODY_NONE, ADMIN},

    {"GET", "/api/groups", jr_op_groups_list, SESSION, JR_BODY_NONE, 0},
    {"POST", "/api/groups", jr_op_groups_create, SESSION, JR_BODY_JSON, ADMIN},
    {"GET", "/api/groups/:id", jr_op_groups_get, SESSION, JR_BODY_NONE, 0},
    {"PUT", "/api/groups/:id", jr_op_groups_update, SESSION, JR_BODY_JSON, ADMIN},
    {"DELETE", "/api/groups/:id", jr_op_groups_delete, SESSION, JR_BODY_NONE, ADMIN},
    {"POST", "/api/groups/:id/restore", jr_op_groups_restore, SESSION, JR_BODY_NONE, ADMIN},

    {"GET", "/api/api-keys", jr_op_keys_list, SESSION, JR_BODY_NONE, ADMIN},
    {"GET", "/api/api-keys/meta", jr_op_keys_meta, SESSION, JR_BODY_NONE, ADMIN},
    {"POST", "/api/api-keys", jr_op_keys_create, SESSION, JR_BODY_JSON, ADMIN},
    {"GET", "/api/api-keys/:id", jr_op_keys_get, SESSION, JR_BODY_NONE, ADMIN},
    {"PUT", "/api/api-keys/:id", jr_op_keys_update, SESSION, JR_BODY_JSON, ADMIN},
    {"DELETE", "/api/api-keys/:id", jr_op_keys_delete, SESSION, JR_BODY_NONE, ADMIN},
    {"POST", "/api/api-keys/:id/rotate", jr_op_keys_rotate, SESSION, JR_BODY_NONE, ADMIN},

    {"GET", "/api/bans", jr_op_bans_list, SESSION, JR_BODY_NONE, ADMIN},
    {"DELETE", "/api/bans/~ip", jr_op_bans_delete, SESSION, JR_BODY_NONE, ADMIN},

    {"GET", "/api/audit", jr_op_audit_list, SESSION, JR_BODY_NONE, ADMIN},

    {"GET", "/api/students", jr_op_students_list, SESSION, JR_BODY_NONE, 0},
    {"POST", "/api/students", jr_op_students_create, SESSION, JR_BODY_JSON, 0},
    {"GET", "/api/students/:id", jr_op_students_get, SESSION, JR_BODY_NONE, 0},
    {"PUT", "/api/students/:id", jr_op_students_update, SESSION, JR_BODY_JSON, 0},
    {"DELETE", "/api/students/:id", jr_op_students_delete, SESSION, JR_BODY_NONE, 0},

    {"GET", "/api/modules", jr_op_modules_list, NONE, JR_BODY_NONE, 0},
    {"POST", "/api/modules", jr_op_modules_create, SESSION, JR_BODY_JSON, ADMIN},
    {"GET", "/api/modules/:id", jr_op_modules_get, NONE, JR_BODY_NONE, 0},
    {"PUT", "/api/modules/:id", jr_op_modules_update, SESSION, JR_BODY_JSON, ADMIN},
    {"DELETE", "/api/modules/:id", jr_op_modules_delete, SESSION, JR_BODY_NONE, ADMIN},
    {"POST", "/api/modules/:id/restore", jr_op_modules_restore, SESSION, JR_BODY_NONE, ADMIN},

    {"GET", "/api/entries", jr_op_entries_list, SESSION, JR_BODY_NONE, 0},
    {"POST", "/api/entries", jr_op_entries_create, SESSION, JR_BODY_JSON, 0},
    {"GET", "/api/entries/:id", jr_op_entries_get, SESSION, JR_BODY_NONE, 0},
    {"PUT", "/api/entries/:id", jr_op_entries_update, SESSION, JR_BODY_JSON, 0},
    {"DELETE", "/api/entries/:id", jr_op_entries_delete, SESSION, JR_BODY_NONE, 0},
    {"POST", "/api/entries/:id/ai/recheck", jr_op_entries_recheck, SESSION, JR_BODY_NONE, 0},
    {"POST", "/api/entries/:id/ai/revert", jr_op_entries_ai_revert, SESSION, JR_BODY_NONE, 0},
    {"GET", "/api/entries/:id/files", jr_op_files_list, SESSION, JR_BODY_NONE, 0},
    {"POST", "/api/entries/:id/files", jr_op_files_upload, SESSION, JR_BODY_UPLOAD, 0},
    {"GET", "/api/entries/:id/files/:fileId", jr_op_files_download, SESSION, JR_BODY_NONE, 0},
    {"DELETE", "/api/entries/:id/files/:fileId", jr_op_files_delete, SESSION, JR_BODY_NONE, 0},
    {"GET", "/api/entries/:id/photo", jr_op_photo_get, SESSION, JR_BODY_NONE, 0},
    {"POST", "/api/entries/:id/photo", jr_op_photo_upload, SESSION, JR_BODY_UPLOAD, 0},
    {"DELETE", "/api/entries/:id/photo", jr_op_photo_delete, SESSION, JR_BODY_NONE, 0},
    {"GET", "/api/entries/:id/photo/original", jr_op_photo_original, SESSION, JR_BODY_NONE, 0},
    {"GET", "/api/groups/:id/photo", jr_op_cover_get, SESSION, JR_BODY_NONE, 0},
    {"POST", "/api/groups/:id/photo", jr_op_cover_upload, SESSION, JR_BODY_UPLOAD, ADMIN},
    {"DELETE", "/api/groups/:id/photo", jr_op_cover_delete, SESSION, JR_BODY_NONE, ADMIN},

    {"GET", "/api/lesson-reports", jr_op_reports_list, SESSION, JR_BODY_NONE, 0},
    {"POST", "/api/lesson-reports", jr_op_reports_create, SESSION, JR_BODY_JSON, 0},
    {"GET", "/api/lesson-reports/:id", jr_op_reports_get, SESSION, JR_BODY_NONE, 0},
    {"PUT", "/api/lesson-reports/:id", jr_op_reports_update, SESSION, JR_BODY_JSON, 0},
    {"DELETE", "/api/lesson-reports/:id", jr_op_reports_delete, SESSION, JR_BODY_NONE, 0},
    {"GET", "/api/lesson-reports/:id/versions", jr_op_reports_versions, SESSION, JR_BODY_NONE, 0},
    {"POST", "/api/lesson-reports/:id/versions/:versionId/restore", jr_op_reports_restore_version,
     SESSION, JR_BODY_NONE, 0},
    {"POST", "/api/lesson-reports/:id/ai/revert", jr_op_reports_ai_revert, SESSION, JR_BODY_NONE,
     0},

    {"GET", "/api/dashboard", jr_op_dashboard, SESSION, JR_BODY_NONE, 0},
    {"GET", "/api/ai/status", jr_op_ai_status, SESSION, JR_BODY_NONE, 0},
    {"POST", "/api/ai/wake", jr_op_ai_wake, SESSION, JR_BODY_NONE, ADMIN},
    {"POST", "/api/ai/requeue-failed", jr_op_ai_requeue, SESSION, JR_BODY_NONE, ADMIN},
    {"GET", "/api/photo-jobs/status", jr_op_photo_status, SESSION, JR_BODY_NONE, 0},
    {"POST", "/api/photo-jobs/wake", jr_op_photo_wake, SESSION, JR_BODY_NONE, ADMIN},
    {"POST", "/api/photo-jobs/requeue-failed", jr_op_photo_requeue, SESSION, JR_BODY_NONE, ADMIN},

    {"GET", "/api/trash", jr_op_trash_list, SESSION, JR_BODY_NONE, ADMIN},
    {"POST", "/api/trash/~type/:id/restore", jr_op_trash_restore, SESSION, JR_BODY_NONE, ADMIN},
    {"DELETE", "/api/trash/~type/:id", jr_op_trash_purge, SESSION, JR_BODY_NONE, ADMIN},

    {"POST", "/api/entries/:id/photo/enhance-ai", jr_op_photo_enhance_ai, SESSION,
     JR_BODY_OPTIONAL, 0},
    {"POST", "/api/entries/:id/photo/enhance", jr_op_photo_enhance, SESSION, JR_BODY_OPTIONAL, 0},
    {"GET", "/api/entries/:id/photo/jobs", jr_op_photo_jobs_list, SESSION, JR_BODY_NONE, 0},
    {"GET", "/api/entries/:id/photo/jobs/:jobId/result", jr_op_photo_job_result, SESSION,
     JR_BODY_NONE, 0},
    {"POST", "/api/entries/:id/photo/jobs/:jobId/apply", jr_op_photo_job_apply, SESSION,
     JR_BODY_NONE, 0},
    {"POST", "/api/entries/:id/photo/jobs/:jobId/reject", jr_op_photo_job_reject, SESSION,
     JR_BODY_NONE, 0},
    {"POST", "/api/entries/:id/photo/rollback", jr_op_photo_rollback, SESSION, JR_BODY_NONE, 0},
    {"POST", "/api/entries/:id/photo/restore-original", jr_op_photo_restore_original, SESSION,
     JR_BODY_NONE, 0},
    {"PUT", "/api/photo-jobs/enabled", jr_op_photo_jobs_enabled, SESSION, JR_BODY_JSON, ADMIN},
    {"GET", "/api/photo-ai/health", jr_op_photo_ai_health, SESSION, JR_BODY_NONE, ADMIN},

    {"GET", "/api/settings", jr_op_settings_get, SESSION, JR_BODY_NONE, ADMIN},
    {"PUT", "/api/settings", jr_op_settings_put, SESSION, JR_BODY_JSON, ADMIN},
    {"GET", "/api/public-settings", jr_op_public_settings, NONE, JR_BODY_NONE, 0},

    /* Notifications and live events (docs/events.md); the streams themselves,
     * /api/notifications/stream and /api/chat/stream, are served by the glue (mj_sse.c). */
    {"GET", "/api/notification-types", jr_op_notif_types, SESSION, JR_BODY_NONE, 0},
    {"GET", "/api/notifications", jr_op_notif_list, SESSION, JR_BODY_NONE, 0},
    {"DELETE", "/api/notifications", jr_op_notif_clear, SESSION, JR_BODY_NONE, 0},
    {"GET", "/api/notifications/unread-count", jr_op_notif_unread_count, SESSION, JR_BODY_NONE, 0},
    {"POST", "/api/notifications/read-all", jr_op_notif_read_all, SESSION, JR_BODY_NONE, 0},
    {"POST", "/api/notifications/:id/read", jr_op_notif_read, SESSION, JR_BODY_NONE, 0},
    {"DELETE", "/api/notifications/:id", jr_op_notif_delete, SESSION, JR_BODY_NONE, 0},
    {"POST", "/api/auth/stream-ticket", jr_op_stream_ticket, SESSION, JR_BODY_NONE, 0},
    {"GET", "/api/chat/threads", jr_op_chat_threads, SESSION, JR_BODY_NONE, 0},
    {"GET", "/api/chat/threads/:tutorId/messages", jr_op_chat_messages, SESSION, JR_BODY_NONE, 0},
    {"POST", "/api/chat/threads/:tutorId/messages", jr_op_chat_post, SESSION, JR_BODY_JSON, 0},
    {"POST", "/api/chat/threads/:tutorId/read", jr_op_chat_read, SESSION, JR_BODY_NONE, 0},
    {"GET", "/api/share-links", jr_op_share_links_list, SESSION, JR_BODY_NONE, 0},
    {"POST", "/api/share-links", jr_op_share_links_create, SESSION, JR_BODY_JSON, 0},
    {"DELETE", "/api/share-links/:id", jr_op_share_links_revoke, SESSION, JR_BODY_NONE, 0},
    {"GET", "/api/share/~token", jr_op_share_open, NONE, JR_BODY_NONE, 0},
    {"POST", "/api/share/~token", jr_op_share_unlock, NONE, JR_BODY_JSON, 0},
    {"GET", "/api/share/~token/files/~name", jr_op_share_file, NONE, JR_BODY_NONE, 0},
    {"GET", "/share/~token", jr_op_share_page, NONE, JR_BODY_NONE, 0},
    {"POST", "/share/~token", jr_op_share_page_unlock, NONE, JR_BODY_UPLOAD, 0},

    {"POST", "/api/backups", jr_op_backups_create, SESSION, JR_BODY_NONE, ADMIN},
    {"GET", "/api/backups", jr_op_backups_list, SESSION, JR_BODY_NONE, ADMIN},
    {"GET", "/api/backups/~name/download", jr_op_backups_download, SESSION, JR_BODY_NONE, ADMIN},
    {"DELETE", "/api/backups/~name", jr_op_backups_delete, SESSION, JR_BODY_NONE, ADMIN},
    {"POST", "/api/backups/~name/restore", jr_op_backups_restore, SESSION, JR_BODY_NONE, ADMIN},
    {"POST", "/api/backups/restore", jr_op_backups_upload_restore, SESSION, JR_BODY_UPLOAD, ADMIN},

    {NULL, NULL, NULL, NONE, JR_BODY_NONE, 0},
};

/* The external interface: API keys only (see docs/integrators.md). */
#define KEY JR_AUTH_KEY

const jr_route_t jr_routes_v1[] = {
    {"GET", "/api/v1/me", jr_op_v1_me, KEY, JR_BODY_NONE, 0},
    {"GET", "/api/v1/branches", jr_op_branches_list, KEY, JR_BODY_NONE, 0},
    {"GET", "/api/v1/groups", jr_op_groups_list, KEY, JR_BODY_NONE, 0},
    {"GET", "/api/v1/students", jr_op_students_list, KEY, JR_BODY_NONE, 0},
    {"GET", "/api/v1/modules", jr_op_modules_list, KEY, JR_BODY_NONE, 0},

    {"GET", "/api/v1/entries", jr_op_entries_list, KEY, JR_BODY_NONE, 0},
    {"GET", "/api/v1/entries/:id", jr_op_entries_get, KEY, JR_BODY_NONE, 0},
    {"POST", "/api/v1/entries", jr_op_entries_create, KEY, JR_BODY_JSON, 0},
    {"PUT", "/api/v1/entries/:id", jr_op_entries_update, KEY, JR_BODY_JSON, 0},
    {"DELETE", "/api/v1/entries/:id", jr_op_entries_delete, KEY, JR_BODY_NONE, 0},
    {"POST", "/api/v1/entries/:id/ai/recheck", jr_op_entries_recheck, KEY, JR_BODY_NONE, 0},
    {"GET", "/api/v1/entries/:id/files", jr_op_files_list, KEY, JR_BODY_NONE, 0},

    {"GET", "/api/v1/lesson-reports", jr_op_reports_list, KEY, JR_BODY_NONE, 0},
    {"GET", "/api/v1/lesson-reports/:id", jr_op_reports_get, KEY, JR_BODY_NONE, 0},
    {"POST", "/api/v1/lesson-reports", jr_op_reports_create, KEY, JR_BODY_JSON, 0},
    {"DELETE", "/api/v1/lesson-reports/:id", jr_op_reports_delete, KEY, JR_BODY_NONE, 0},

    {"GET", "/api/v1/stats", jr_op_stats, KEY, JR_BODY_NONE, 0},
    {"POST", "/api/v1/ai/wake", jr_op_ai_wake, KEY, JR_BODY_NONE, 0},
    {"POST", "/api/v1/photo-jobs/wake", jr_op_photo_wake, KEY, JR_BODY_NONE, 0},
    {"POST", "/api/v1/ai/requeue-failed", jr_op_ai_requeue, KEY, JR_BODY_NONE, 0},
    {"POST", "/api/v1/photo-jobs/requeue-failed", jr_op_photo_requeue, KEY, JR_BODY_NONE, 0},

    {NULL, NULL, NULL, NONE, JR_BODY_NONE, 0},
};
