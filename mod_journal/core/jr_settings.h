/* Application settings (spec 2.6): typed, validated, with defaults in code. */
#ifndef JR_SETTINGS_H
#define JR_SETTINGS_H

#include "jr_ctx.h"
#include "jr_router.h"

/* Every setting, once: X(ID, name, kind, default, min, max, choices, validator, public)
 *   kind    TEXT    a string of at most max characters; choices ("a|b|c") or a validator
 *                   (int fn(const char *)) may narrow it
 *           INT     a JSON integer within [min, max]
 *           SWITCH  true or false (JSON booleans, or the strings "true" and "false")
 *           TFTEXT  only the strings "true" or "false"
 *   public  1 when GET /api/settings/public shows it to anyone
 * The ids (JR_SETTING_TIMEZONE) are what the code asks for, so a misspelt setting does not
 * compile; the names are the API's. The list is expanded in jr_settings.c, which defines the
 * long defaults it names (DEFAULT_PROMPT, DEFAULT_ENTRY_PROMPT). A new setting is one row. */
/* clang-format off */
#define JR_SETTINGS(X) \
    X(TIMEZONE, "timezone", TEXT, "UTC", 0, 64, NULL, jr_tz_valid, 1)                              \
    X(TIME_FORMAT, "time_format", TEXT, "24h", 0, 3, "24h|12h", NULL, 1)                           \
    X(LESSON_AI_ENABLED, "lesson_ai_enabled", TFTEXT, "false", 0, 0, NULL, NULL, 0)                \
    X(ENTRY_AI_ENABLED, "entry_ai_enabled", TFTEXT, "true", 0, 0, NULL, NULL, 0)                   \
    X(LESSON_AI_PROMPT, "lesson_ai_prompt", TEXT, DEFAULT_PROMPT, 0, 20000, NULL, NULL, 0)         \
    X(ENTRY_AI_PROMPT, "entry_ai_prompt", TEXT, DEFAULT_ENTRY_PROMPT, 0, 20000, NULL, NULL, 0)     \
    X(CHAT_RETENTION_DAYS, "chat_retention_days", INT, "90", 1, 3650, NULL, NULL, 0)               \
    X(NOTIFY_ENABLED, "notify_enabled", SWITCH, "true", 0, 0, NULL, NULL, 0)                       \
    X(NOTIFY_RETENTION_DAYS, "notify_retention_days", INT, "30", 1, 3650, NULL, NULL, 0)           \
    /* One switch per notification type (JR_NOTIFY_TYPES in jr_notif.h names them). */             \
    X(NOTIFY_LESSON_REPORT, "notify_lesson_report", SWITCH, "true", 0, 0, NULL, NULL, 0)           \
    X(NOTIFY_LESSON_AI_FORMATTED, "notify_lesson_ai_formatted", SWITCH, "true", 0, 0, NULL, NULL, 0)\
    X(NOTIFY_ENTRY_CREATED, "notify_entry_created", SWITCH, "true", 0, 0, NULL, NULL, 0)           \
    X(NOTIFY_AI_FAILED, "notify_ai_failed", SWITCH, "true", 0, 0, NULL, NULL, 0)                   \
    X(NOTIFY_PHOTO_DONE, "notify_photo_done", SWITCH, "true", 0, 0, NULL, NULL, 0)                 \
    X(NOTIFY_PHOTO_FAILED, "notify_photo_failed", SWITCH, "true", 0, 0, NULL, NULL, 0)             \
    X(NOTIFY_BAN_CREATED, "notify_ban_created", SWITCH, "true", 0, 0, NULL, NULL, 0)               \
    X(NOTIFY_BACKUP_CREATED, "notify_backup_created", SWITCH, "true", 0, 0, NULL, NULL, 0)         \
    X(NOTIFY_BACKUP_RESTORED, "notify_backup_restored", SWITCH, "true", 0, 0, NULL, NULL, 0)       \
    X(PHOTO_AI_FACE_MODE, "photo_ai_face_mode", TEXT, "off", 0, 4, "off|face|all", NULL, 0)        \
    X(PHOTO_AI_FACE_MODEL, "photo_ai_face_model", TEXT, "gfpgan", 0, 10, "gfpgan|codeformer",      \
      NULL, 0)                                                                                     \
    X(PHOTO_AI_DEVICE_PREF, "photo_ai_device_pref", TEXT, "auto", 0, 4, "auto|cpu|cuda", NULL, 0)  \
    X(PHOTO_WORKER_ENABLED, "photo_worker_enabled", SWITCH, "true", 0, 0, NULL, NULL, 0)           \
    X(TRASH_RETENTION_DAYS, "trash_retention_days", INT, "30", 1, 3650, NULL, NULL, 0)
/* clang-format on */

#define JR_SETTING_ENUM_ROW_(id, ...) JR_SETTING_##id,
typedef enum { JR_SETTINGS(JR_SETTING_ENUM_ROW_) JR_SETTING__COUNT } jr_setting_id_t;
#undef JR_SETTING_ENUM_ROW_

/* The current value of a setting as stored text ("true"/"false" for switches), the default
 * when never set. Cached for the request. */
const char *jr_setting(jr_ctx_t *ctx, jr_setting_id_t id);

/* The setting's name in the API ("timezone"). */
const char *jr_setting_name(jr_setting_id_t id);

/* The id of a setting's name; -1 when no setting has it. */
int jr_setting_id(const char *name);

/* The configured IANA time zone (falls back to UTC if the stored one became invalid). */
const char *jr_setting_timezone(jr_ctx_t *ctx);

/* What jr_setting() gives (jr_setting_timezone() for the time zone) for a value that another
 * statement read from the settings table (NULL: never set). /api/v1/me takes its two from the
 * key's query, one round trip instead of two. */
const char *jr_setting_known(jr_setting_id_t id, const char *stored);

/* The stored settings as another statement of the request read them: json is an object of
 * name: text. jr_setting() then reads no more. NULL (not carried) or a json that cannot be
 * read leaves it to read them itself. */
void jr_settings_carried(jr_ctx_t *ctx, const char *json);

/* 1 when the switch setting is on. */
int jr_setting_on(jr_ctx_t *ctx, jr_setting_id_t id);

/* Operations of the road (jr_routes.c). */
jr_op_fn jr_op_settings_get;
jr_op_fn jr_op_settings_put;
jr_op_fn jr_op_public_settings;

#endif
