/* Files of journal entries, photos of entries and cover photos of groups (jr_files.c,
 * jr_photos.c). Bytes are stored by jr_storage, types are sniffed by jr_magic; rows are
 * written in one transaction with the audit row, only after the bytes are safe on disk. */
#ifndef JR_FILES_H
#define JR_FILES_H

#include "jr_router.h"

/* The field of a multipart/form-data upload that carries the file. */
#define JR_FILES_FIELD "file"
/* The media types accepted as photos (sniffed). */
#define JR_PHOTO_TYPES "image/jpeg image/png image/webp"
/* The longest file name, in characters. */
#define JR_FILE_NAME_MAX 255

/* jr_files.c: /api/entries/:id/files and /api/v1/entries/:id/files */
jr_op_fn jr_op_files_list;     /* GET: records (array on /api, envelope on /api/v1) */
jr_op_fn jr_op_files_upload;   /* POST, JR_BODY_UPLOAD: raw body or multipart -> 201 */
jr_op_fn jr_op_files_download; /* GET .../files/:fileId: the bytes, as an attachment */
jr_op_fn jr_op_files_delete;   /* DELETE .../files/:fileId -> {"ok":true} */

/* jr_photos.c: /api/entries/:id/photo and /api/groups/:id/photo */
jr_op_fn jr_op_photo_upload;   /* POST, JR_BODY_UPLOAD: 201 first photo, 200 replaced */
jr_op_fn jr_op_photo_get;      /* GET: the current photo, inline */
jr_op_fn jr_op_photo_original; /* GET .../photo/original: the first photo ever uploaded */
jr_op_fn jr_op_photo_delete;   /* DELETE: current and original -> {"ok":true} */
jr_op_fn jr_op_cover_upload;   /* POST, JR_BODY_UPLOAD, admins only */
jr_op_fn jr_op_cover_get;      /* GET */
jr_op_fn jr_op_cover_delete;   /* DELETE, admins only */

/* For the trash purge: delete the rows of an entry's files and photos (or of a group's
 * cover) inside the caller's transaction, and push their stored names (const char *) onto
 * unlink_after. No audit row: the caller audits the purge. After the commit, the caller
 * passes unlink_after to jr_storage_unlink_all (jr_storage.h); after a rollback it drops
 * the list. */
apr_status_t jr_files_purge_entry(jr_ctx_t *ctx, long long entry_id,
                                  apr_array_header_t *unlink_after);
apr_status_t jr_photos_purge_group(jr_ctx_t *ctx, long long group_id,
                                   apr_array_header_t *unlink_after);

/* ---- shared by jr_files.c and jr_photos.c ---- */

/* An upload as the operations see it, after multipart extraction and checks. */
typedef struct {
    const char *path; /* the bytes (a temp file under data_dir/tmp) */
    apr_off_t size;
    const char *name; /* the client's file name, checked (only when asked for) */
    const char *type; /* the media type sniffed from the bytes */
} jr_incoming_t;

/* Reads ctx->upload: a multipart/form-data body (the field "file") or the raw body; the
 * name (when want_name) from the part's filename, X-File-Name or ?name=; refuses an empty
 * or oversized file; sniffs the type. Returns 0, or -1 with the answer in res. */
int jr_files_incoming(jr_ctx_t *ctx, jr_result_t *res, int want_name, jr_incoming_t *in);

/* Answers with the bytes of a stored file: row i of rows gives stored_name, content_type,
 * sha256 and created_at. 1 when res holds the file; 0 when the bytes are missing from the
 * data directory (res untouched: the caller logs and answers 404). */
int jr_files_reply_stored(jr_ctx_t *ctx, jr_result_t *res, const jr_rows_t *rows, int i,
                          const char *filename, int attachment);

/* The photo rows of an owner ("entry" or "group"): deletes them in the caller's
 * transaction and pushes their stored names. */
apr_status_t jr_photos_purge_owner(jr_ctx_t *ctx, const char *owner_type, long long owner_id,
                                   apr_array_header_t *unlink_after);

#endif
