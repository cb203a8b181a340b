/* Operations, one family per file. Each is a jr_op_fn: (ctx, validated input, result). */
#ifndef JR_OPS_H
#define JR_OPS_H

#include "jr_router.h"

/* Body field tables of the routes (jr_routes.c), one per operation that takes a JSON body. */
extern const jr_field_t jr_fields_branch[], jr_fields_entry_create[], jr_fields_entry_update[],
    jr_fields_group_create[], jr_fields_group_update[], jr_fields_key_create[],
    jr_fields_key_update[], jr_fields_report_create[], jr_fields_report_update[],
    jr_fields_module_create[], jr_fields_module_update[], jr_fields_student_create[],
    jr_fields_student_update[], jr_fields_user_create[], jr_fields_user_update[],
    jr_fields_chat_message[], jr_fields_photo_enhance_ai[], jr_fields_photo_enhance[],
    jr_fields_photo_jobs_enabled[];

/* jr_health.c */
jr_op_fn jr_op_health;
/* Whether AI is configured and what is known of the worker processes, added to `into` (or a
 * new object when NULL): brief for /api/health, with detail for /api/ai/status. */
json_t *jr_ai_describe(const jr_config_t *cfg, json_t *into, int detail);
/* The processes of a census that run and are past their start delay at now (Unix seconds). */
int jr_workers_running(const jr_worker_census_t *census, apr_uint32_t now);

/* jr_auth.c */
jr_op_fn jr_op_login;
jr_op_fn jr_op_logout;
jr_op_fn jr_op_me;

/* jr_users.c */
jr_op_fn jr_op_users_list;
jr_op_fn jr_op_users_get;
jr_op_fn jr_op_users_create;
jr_op_fn jr_op_users_update;
jr_op_fn jr_op_users_delete;

/* jr_branches.c */
jr_op_fn jr_op_branches_list;
jr_op_fn jr_op_branches_get;
jr_op_fn jr_op_branches_create;
jr_op_fn jr_op_branches_update;
jr_op_fn jr_op_branches_delete;

/* jr_groups.c */
jr_op_fn jr_op_groups_list;
jr_op_fn jr_op_groups_get;
jr_op_fn jr_op_groups_create;
jr_op_fn jr_op_groups_update;
jr_op_fn jr_op_groups_delete;
jr_op_fn jr_op_groups_restore;

/* jr_bans.c */
jr_op_fn jr_op_bans_list;
jr_op_fn jr_op_bans_delete;

/* jr_keys_admin.c */
jr_op_fn jr_op_keys_list;
jr_op_fn jr_op_keys_meta;
jr_op_fn jr_op_keys_get;
jr_op_fn jr_op_keys_create;
jr_op_fn jr_op_keys_update;
jr_op_fn jr_op_keys_delete;
jr_op_fn jr_op_keys_rotate;

/* jr_audit_list.c */
jr_op_fn jr_op_audit_list;

/* jr_settings.c */
jr_op_fn jr_op_settings_get;
jr_op_fn jr_op_settings_put;
jr_op_fn jr_op_public_settings;

/* jr_students.c */
jr_op_fn jr_op_students_list;
jr_op_fn jr_op_students_get;
jr_op_fn jr_op_students_create;
jr_op_fn jr_op_students_update;
jr_op_fn jr_op_students_delete;

/* jr_modules.c */
jr_op_fn jr_op_modules_list;
jr_op_fn jr_op_modules_get;
jr_op_fn jr_op_modules_create;
jr_op_fn jr_op_modules_update;
jr_op_fn jr_op_modules_delete;
jr_op_fn jr_op_modules_restore;

/* jr_entries.c */
jr_op_fn jr_op_entries_list;
jr_op_fn jr_op_entries_get;
jr_op_fn jr_op_entries_create;
jr_op_fn jr_op_entries_update;
jr_op_fn jr_op_entries_delete;
jr_op_fn jr_op_entries_recheck;
jr_op_fn jr_op_entries_ai_revert;

/* jr_trash.c */
jr_op_fn jr_op_trash_list;
jr_op_fn jr_op_trash_restore;
jr_op_fn jr_op_trash_purge;
/* Purges what has been in the trash longer than trash_retention_days; the number purged,
 * or -1 on a database error. For the periodic task. */
int jr_trash_purge_expired(jr_ctx_t *ctx);

/* jr_lessons.c */
jr_op_fn jr_op_reports_list;
jr_op_fn jr_op_reports_get;
jr_op_fn jr_op_reports_create;
jr_op_fn jr_op_reports_update;
jr_op_fn jr_op_reports_delete;
jr_op_fn jr_op_reports_versions;
jr_op_fn jr_op_reports_restore_version;
jr_op_fn jr_op_reports_ai_revert;

/* jr_queues.c */
jr_op_fn jr_op_ai_wake;
jr_op_fn jr_op_photo_wake;
jr_op_fn jr_op_ai_requeue;
jr_op_fn jr_op_photo_requeue;
jr_op_fn jr_op_ai_status;
jr_op_fn jr_op_photo_status;
/* Opens an AI check of a record ("entry" or "lesson_report") in the caller's transaction,
 * unless one is open already. */
apr_status_t jr_ai_queue(jr_ctx_t *ctx, const char *entity_type, long long id, long long branch);
/* Moves a record's jobs (AI checks; photo jobs of an entry) to the record's branch, in the
 * caller's transaction: a record whose group moved must not stay counted, or requeued, by
 * the old branch. */
apr_status_t jr_jobs_follow(jr_ctx_t *ctx, const char *entity_type, long long id, long long branch);
/* {status: count} of a queue for the caller's branches (a new reference); NULL on error. */
json_t *jr_queue_counts(jr_ctx_t *ctx, int ai);

/* Bumps a worker channel's generation and, on PostgreSQL, notifies it, in the caller's
 * transaction: the workers look at their queues once it commits. */
apr_status_t jr_queue_signal(jr_ctx_t *ctx, const char *channel);

/* jr_photo_jobs.c */
jr_op_fn jr_op_photo_enhance_ai;
jr_op_fn jr_op_photo_enhance;
jr_op_fn jr_op_photo_jobs_list;
jr_op_fn jr_op_photo_job_result;
jr_op_fn jr_op_photo_job_apply;
jr_op_fn jr_op_photo_job_reject;
jr_op_fn jr_op_photo_rollback;
jr_op_fn jr_op_photo_restore_original;
jr_op_fn jr_op_photo_jobs_enabled;
jr_op_fn jr_op_photo_ai_health;
/* Adds to the photo queue's counts whether the worker is switched on (enabled) and whether a
 * photo service is configured (service.configured). Returns into. */
json_t *jr_photo_describe(jr_ctx_t *ctx, json_t *into);

/* jr_stats.c */
jr_op_fn jr_op_stats;
jr_op_fn jr_op_dashboard;

/* jr_v1.c */
jr_op_fn jr_op_v1_me;

/* jr_notif.c */
jr_op_fn jr_op_notif_types;
jr_op_fn jr_op_notif_list;
jr_op_fn jr_op_notif_unread_count;
jr_op_fn jr_op_notif_read;
jr_op_fn jr_op_notif_read_all;
jr_op_fn jr_op_notif_delete;
jr_op_fn jr_op_notif_clear;

/* jr_stream.c */
jr_op_fn jr_op_stream_ticket;

/* jr_chat.c */
jr_op_fn jr_op_chat_threads;
jr_op_fn jr_op_chat_messages;
jr_op_fn jr_op_chat_post;
jr_op_fn jr_op_chat_read;
/* Purges chat messages older than chat_retention_days; the number, or -1. */
int jr_chat_purge(jr_ctx_t *ctx);

/* Shared helpers. */

/* Writes a lesson report row (all its columns) as JSON, topic_position included. */
struct jr_jw;
void jr_report_write(struct jr_jw *w, const jr_rows_t *r, int i);

/* 1 when module id exists and is not deleted (its name in *name), 0 when not, -1 on error. */
int jr_module_exists(jr_ctx_t *ctx, long long id, const char **name);

/* The key a student name is matched by: trimmed, lower-case (ASCII). */
const char *jr_student_key(apr_pool_t *p, const char *name);

/* A LIKE pattern (with ESCAPE '\\') that finds term anywhere; its wildcards match themselves. */
const char *jr_like_pattern(apr_pool_t *p, const char *term);

/* A search term as the list statements take it. like: the LIKE pattern every search checks its
 * rows with (the documented meaning). indexed: the term has JR_SEARCH_MIN_CHARS characters or
 * more and is valid UTF-8, so the trigram index can give the candidates (the *_SEARCH
 * statements); shorter terms scan (the *_LIST statements). first: the first argument of the
 * search filter, the full-text query when indexed (trigrams of the term, a superset), the
 * pattern when not. */
#define JR_SEARCH_MIN_CHARS 3
typedef struct {
    const char *like, *first;
    int indexed;
} jr_search_t;
void jr_search_term(apr_pool_t *p, const char *term, jr_search_t *s);

/* An API key's record (never the secret). NULL when absent. */
json_t *jr_key_load(jr_ctx_t *ctx, long long id);

/* The user record as the API shows it (never the password hash). NULL when absent. */
json_t *jr_user_load(jr_ctx_t *ctx, long long id);

/* Checks that every id exists as a branch. Returns 0, or the first missing id. */
long long jr_branches_missing(jr_ctx_t *ctx, const apr_array_header_t *ids, apr_status_t *rv);

#endif
