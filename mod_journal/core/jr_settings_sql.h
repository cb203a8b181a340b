/* The statements of jr_settings.c (see jr_stmts.h): one X(ID, SQL) row each, or
 * X(ID, SQLite SQL, PostgreSQL SQL) where the dialects differ. */
#ifndef JR_SETTINGS_SQL_H
#define JR_SETTINGS_SQL_H

#define JR_SETTINGS_STMTS(X)                                                                       \
    X(SETTINGS_ALL, "SELECT name, value FROM settings")                                            \
    X(SETTING_UPSERT,                                                                              \
      "INSERT INTO settings (name, value, updated_at, updated_by) VALUES (%s, %s, %s, " JR_INT     \
      ")"                                                                                          \
      " ON CONFLICT (name) DO UPDATE SET value = excluded.value,"                                  \
      " updated_at = excluded.updated_at, updated_by = excluded.updated_by")                       \
    /* end of JR_SETTINGS_STMTS */

#endif
