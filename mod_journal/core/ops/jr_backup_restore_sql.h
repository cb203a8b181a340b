/* The statements of jr_backup_restore.c (see jr_stmts.h): one X(ID, SQL) row each, or
 * X(ID, SQLite SQL, PostgreSQL SQL) where the dialects differ. */
#ifndef JR_BACKUP_RESTORE_SQL_H
#define JR_BACKUP_RESTORE_SQL_H

#define JR_BACKUP_RESTORE_STMTS(X)                                                                 \
    /* Never restored, always emptied: a restore brings back no secret that was revoked since. */  \
    X(BK_DEL_API_KEYS, "DELETE FROM api_keys")                                                     \
    X(BK_DEL_SESSIONS, "DELETE FROM sessions")                                                     \
    /* Queue state is not part of a backup; it names records that are about to be replaced. */     \
    X(BK_DEL_AI_JOBS, "DELETE FROM ai_jobs")                                                       \
    X(BK_DEL_PHOTO_JOBS, "DELETE FROM photo_jobs")                                                 \
    X(BK_DEL_ENTRY_COUNTS, "DELETE FROM entry_counts")                                             \
    /* The triggers add each restored file to its entry's count: start from the truth. */          \
    X(BK_FILES_COUNT, "UPDATE entries SET files_count = (SELECT COUNT(*) FROM entry_files f"       \
                      " WHERE f.entry_id = entries.id)")                                           \
    /* PostgreSQL restores with the counting triggers off (see counting_triggers): the counts      \
     * they keep are made once at the end. On SQLite the triggers ran. */                          \
    X(BK_HAS_PHOTO, "SELECT 1 AS ok",                                                              \
      "UPDATE entries SET has_photo = CASE WHEN EXISTS (SELECT 1 FROM photos p"                    \
      " WHERE p.owner_type = 'entry' AND p.owner_id = entries.id AND p.role = 'current')"          \
      " THEN 1 ELSE 0 END")                                                                        \
    /* A restore changes every record it brings back (to the state of the backup), so each         \
     * counts as changed at the restore: an incremental sync (updated_since) then receives the     \
     * restored state, not what it saw after the backup was taken. */                              \
    X(BK_TOUCH_BRANCHES, "UPDATE branches SET updated_at = %s")                                    \
    X(BK_TOUCH_STUDY_GROUPS, "UPDATE study_groups SET updated_at = %s")                            \
    X(BK_TOUCH_STUDENTS, "UPDATE students SET updated_at = %s")                                    \
    X(BK_TOUCH_MODULES, "UPDATE modules SET updated_at = %s")                                      \
    X(BK_TOUCH_ENTRIES, "UPDATE entries SET updated_at = %s")                                      \
    X(BK_TOUCH_LESSON_REPORTS, "UPDATE lesson_reports SET updated_at = %s")                        \
    X(BK_ENTRY_COUNTS, "SELECT 1 AS ok",                                                           \
      "INSERT INTO entry_counts (branch_id, live) SELECT branch_id, COUNT(*) FROM entries"         \
      " WHERE deleted_at IS NULL GROUP BY branch_id")                                              \
    /* end of JR_BACKUP_RESTORE_STMTS */

#endif
