/* The statements of jr_photos.c (see jr_stmts.h): one X(ID, SQL) row each, or
 * X(ID, SQLite SQL, PostgreSQL SQL) where the dialects differ. */
#ifndef JR_PHOTOS_SQL_H
#define JR_PHOTOS_SQL_H

#define PHOTO_COLS                                                                                 \
    "id, owner_type, owner_id, role, stored_name, size, content_type, sha256, created_at"

#define JR_PHOTOS_STMTS(X)                                                                         \
    X(PHOTOS_OF_OWNER,                                                                             \
      "SELECT " PHOTO_COLS " FROM photos WHERE owner_type = %s AND owner_id = " JR_INT             \
      " ORDER BY id")                                                                              \
    X(PHOTO_INSERT,                                                                                \
      "INSERT INTO photos (owner_type, owner_id, role, stored_name, size, content_type, sha256,"   \
      " created_at, created_by) VALUES (%s, " JR_INT ", %s, %s, " JR_INT ", %s, %s, %s, " JR_INT   \
      ") RETURNING id")                                                                            \
    X(PHOTO_REPLACE,                                                                               \
      "UPDATE photos SET stored_name = %s, size = " JR_INT ", content_type = %s, sha256 = %s,"     \
      " created_at = %s, created_by = " JR_INT " WHERE owner_type = %s AND owner_id = " JR_INT     \
      " AND role = %s")                                                                            \
    /* Inside a write transaction: on PostgreSQL, concurrent changes of one owner's photos         \
     * wait here and then read the committed rows, so a replaced file is never lost track of       \
     * (SQLite's BEGIN IMMEDIATE serialises writers already). */                                   \
    X(PHOTOS_LOCK_OWNER,                                                                           \
      "SELECT " PHOTO_COLS " FROM photos WHERE owner_type = %s AND owner_id = " JR_INT             \
      " ORDER BY id",                                                                              \
      "SELECT " PHOTO_COLS " FROM photos WHERE owner_type = %s AND owner_id = " JR_INT             \
      " ORDER BY id FOR UPDATE")                                                                   \
    X(PHOTOS_DELETE_OWNER, "DELETE FROM photos WHERE owner_type = %s AND owner_id = " JR_INT       \
                           " RETURNING stored_name")                                               \
    /* end of JR_PHOTOS_STMTS */

#endif
