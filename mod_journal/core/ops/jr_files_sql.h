/* The statements of jr_files.c (see jr_stmts.h): one X(ID, SQL) row each, or
 * X(ID, SQLite SQL, PostgreSQL SQL) where the dialects differ. */
#ifndef JR_FILES_SQL_H
#define JR_FILES_SQL_H

#define FILE_COLS "id, entry_id, name, size, content_type, sha256, created_at"

#define JR_FILES_STMTS(X)                                                                          \
    X(FILES_LIST, "SELECT " FILE_COLS " FROM entry_files WHERE entry_id = " JR_INT                 \
                  " ORDER BY id LIMIT " JR_INT " OFFSET " JR_INT)                                  \
    X(FILES_COUNT, "SELECT COUNT(*) AS n FROM entry_files WHERE entry_id = " JR_INT)               \
    X(FILE_GET, "SELECT " FILE_COLS ", stored_name FROM entry_files WHERE id = " JR_INT            \
                " AND entry_id = " JR_INT)                                                         \
    X(FILE_INSERT,                                                                                 \
      "INSERT INTO entry_files (entry_id, name, stored_name, size, content_type, sha256,"          \
      " created_at, created_by) VALUES (" JR_INT ", %s, %s, " JR_INT ", %s, %s, %s, " JR_INT       \
      ") RETURNING id")                                                                            \
    X(FILE_DELETE, "DELETE FROM entry_files WHERE id = " JR_INT " AND entry_id = " JR_INT)         \
    X(FILES_DELETE_ENTRY,                                                                          \
      "DELETE FROM entry_files WHERE entry_id = " JR_INT " RETURNING stored_name")                 \
    /* end of JR_FILES_STMTS */

#endif
