/* The statements of jr_backup.c (see jr_stmts.h): one X(ID, SQL) row each, or
 * X(ID, SQLite SQL, PostgreSQL SQL) where the dialects differ. */
#ifndef JR_BACKUP_SQL_H
#define JR_BACKUP_SQL_H

#define BK_S "%s"
#define BK_I JR_INT
#define BK_PAGE_SQL "2000"
#define BK_ROWS(X, id, t, cols, vals)                                                              \
    X(BK_INS_##id, "INSERT INTO " t " (" cols ") VALUES (" vals ")")                               \
    X(BK_DEL_##id, "DELETE FROM " t)
#define BK(X, id, t, cols, order, vals)                                                            \
    X(BK_SEL_##id,                                                                                 \
      "SELECT " cols " FROM " t " WHERE id > CAST(%s AS BIGINT) ORDER BY id LIMIT " BK_PAGE_SQL)   \
    BK_ROWS(X, id, t, cols, vals)
#define BK_ALL(X, id, t, cols, order, vals)                                                        \
    X(BK_SEL_##id, "SELECT " cols " FROM " t " ORDER BY " order) BK_ROWS(X, id, t, cols, vals)

#define C_BRANCHES "id, name, created_at, updated_at"
#define C_USERS "id, username, password_hash, role, active, created_at, updated_at"
#define C_USER_BRANCHES "user_id, branch_id"
#define C_GROUPS "id, name, branch_id, tutor_id, created_at, updated_at, deleted_at, deleted_by"
#define C_STUDENTS "id, name, name_key, group_id, notes, created_at, updated_at, created_by"
#define C_MODULES                                                                                  \
    "id, name, lessons_count, description, created_at, updated_at, deleted_at, deleted_by"
#define C_ENTRIES                                                                                  \
    "id, student_name, student_id, group_id, branch_id, description, module_id, ai_status,"        \
    " files_count, has_photo, created_at, updated_at, created_by, created_by_key,"                 \
    " deleted_at, deleted_by, description_original, ai_checked_at, ai_error"
#define C_FILES                                                                                    \
    "id, entry_id, name, stored_name, size, content_type, sha256, created_at, created_by"
#define C_PHOTOS                                                                                   \
    "id, owner_type, owner_id, role, stored_name, size, content_type, sha256, created_at,"         \
    " created_by"
#define C_REPORTS                                                                                  \
    "id, group_id, branch_id, lesson_date, lesson_time, text, topic, text_original, text_ai,"      \
    " ai_status, ai_checked_at, ai_error, created_at, updated_at, created_by, created_by_key"
#define C_VERSIONS "id, report_id, text, source, created_at, created_by, created_by_key"
#define C_SETTINGS "name, value, updated_at, updated_by"
#define C_SHARE                                                                                    \
    "id, kind, target_id, token_hash, password_hash, expires_at, created_by, created_at,"          \
    " revoked_at, last_opened_at, open_count"
#define C_AUDIT                                                                                    \
    "id, created_at, actor_user_id, actor_key_id, via_api_key, client_ip, action, entity_type,"    \
    " entity_id, changes"
#define C_CHAT "id, tutor_id, sender_id, text, created_at"
#define C_CHAT_READS "tutor_id, user_id, last_read_id"
/* Identity sequences follow the highest id restored (PostgreSQL; SQLite's AUTOINCREMENT
 * follows explicit ids by itself). */
#define BK_SEQ(X, id, t)                                                                           \
    X(BK_SEQ_##id, "SELECT 1 AS ok",                                                               \
      "SELECT setval(pg_get_serial_sequence('" t "', 'id'), GREATEST(COALESCE(MAX(id), 0), 1),"    \
      " MAX(id) IS NOT NULL) AS ok FROM " t)

#define JR_BACKUP_STMTS(X)                                                                         \
    BK(X, BRANCHES, "branches", C_BRANCHES, "id", BK_I "," BK_S "," BK_S "," BK_S)                 \
    BK(X, USERS, "users", C_USERS, "id",                                                           \
       BK_I "," BK_S "," BK_S "," BK_S "," BK_I "," BK_S "," BK_S)                                 \
    BK_ALL(X, USER_BRANCHES, "user_branches", C_USER_BRANCHES, "user_id, branch_id",               \
           BK_I "," BK_I)                                                                          \
    BK(X, STUDY_GROUPS, "study_groups", C_GROUPS, "id",                                            \
       BK_I "," BK_S "," BK_I "," BK_I "," BK_S "," BK_S "," BK_S "," BK_I)                        \
    BK(X, STUDENTS, "students", C_STUDENTS, "id",                                                  \
       BK_I "," BK_S "," BK_S "," BK_I "," BK_S "," BK_S "," BK_S "," BK_I)                        \
    BK(X, MODULES, "modules", C_MODULES, "id",                                                     \
       BK_I "," BK_S "," BK_I "," BK_S "," BK_S "," BK_S "," BK_S "," BK_I)                        \
    BK(X, ENTRIES, "entries", C_ENTRIES, "id",                                                     \
       BK_I "," BK_S "," BK_I "," BK_I "," BK_I "," BK_S "," BK_I "," BK_S "," BK_I "," BK_I       \
            "," BK_S "," BK_S "," BK_I "," BK_I "," BK_S "," BK_I "," BK_S "," BK_S "," BK_S)      \
    BK(X, ENTRY_FILES, "entry_files", C_FILES, "id",                                               \
       BK_I "," BK_I "," BK_S "," BK_S "," BK_I "," BK_S "," BK_S "," BK_S "," BK_I)               \
    BK(X, PHOTOS, "photos", C_PHOTOS, "id",                                                        \
       BK_I "," BK_S "," BK_I "," BK_S "," BK_S "," BK_I "," BK_S "," BK_S "," BK_S "," BK_I)      \
    BK(X, LESSON_REPORTS, "lesson_reports", C_REPORTS, "id",                                       \
       BK_I "," BK_I "," BK_I "," BK_S "," BK_S "," BK_S "," BK_S "," BK_S "," BK_S "," BK_S       \
            "," BK_S "," BK_S "," BK_S "," BK_S "," BK_I "," BK_I)                                 \
    BK(X, LESSON_REPORT_VERSIONS, "lesson_report_versions", C_VERSIONS, "id",                      \
       BK_I "," BK_I "," BK_S "," BK_S "," BK_S "," BK_I "," BK_I)                                 \
    BK_ALL(X, SETTINGS, "settings", C_SETTINGS, "name", BK_S "," BK_S "," BK_S "," BK_I)           \
    BK(X, SHARE_LINKS, "share_links", C_SHARE, "id",                                               \
       BK_I "," BK_S "," BK_I "," BK_S "," BK_S "," BK_S "," BK_I "," BK_S "," BK_S "," BK_S       \
            "," BK_I)                                                                              \
    BK(X, AUDIT_LOG, "audit_log", C_AUDIT, "id",                                                   \
       BK_I "," BK_S "," BK_I "," BK_I "," BK_I "," BK_S "," BK_S "," BK_S "," BK_S "," BK_S)      \
    BK(X, CHAT_MESSAGES, "chat_messages", C_CHAT, "id", BK_I "," BK_I "," BK_I "," BK_S "," BK_S) \
    BK_ALL(X, CHAT_READS, "chat_reads", C_CHAT_READS, "tutor_id, user_id", BK_I "," BK_I "," BK_I) \
    BK_SEQ(X, BRANCHES, "branches")                                                                \
    BK_SEQ(X, USERS, "users")                                                                      \
    BK_SEQ(X, STUDY_GROUPS, "study_groups")                                                        \
    BK_SEQ(X, STUDENTS, "students")                                                                \
    BK_SEQ(X, MODULES, "modules")                                                                  \
    BK_SEQ(X, ENTRIES, "entries")                                                                  \
    BK_SEQ(X, ENTRY_FILES, "entry_files")                                                          \
    BK_SEQ(X, PHOTOS, "photos")                                                                    \
    BK_SEQ(X, LESSON_REPORTS, "lesson_reports")                                                    \
    BK_SEQ(X, LESSON_REPORT_VERSIONS, "lesson_report_versions")                                    \
    BK_SEQ(X, SHARE_LINKS, "share_links")                                                          \
    BK_SEQ(X, AUDIT_LOG, "audit_log")                                                              \
    BK_SEQ(X, CHAT_MESSAGES, "chat_messages")                                                      \
    /* end of JR_BACKUP_STMTS */

#endif
