/* Files of journal entries: upload (raw body or multipart), list, download, delete. */
#include <string.h>

#include <apr_strings.h>

#include "jr_cursor.h"
#include "jr_entries.h"
#include "jr_files.h"
#include "jr_photo_jobs.h"
#include "jr_json.h"
#include "jr_log.h"
#include "jr_magic.h"
#include "jr_multipart.h"
#include "jr_stmts.h"
#include "jr_storage.h"
#include "jr_util.h"

/* ---- the incoming upload ------------------------------------------------ */

/* The part after the last '/' or '\'. */
static const char *base_name(const char *s)
{
    const char *c, *base = s;
    for (c = s; *c; ++c) {
        if (*c == '/' || *c == '\\') {
            base = c + 1;
        }
    }
    return base;
}

/* Checks a client's file name: NULL when fine, else the message. */
static const char *check_name(apr_pool_t *p, const char *raw, const char **name)
{
    const unsigned char *c;
    json_t *probe;
    unsigned cf;
    *name = jr_trim(p, base_name(raw));
    if (!**name || jr_utf8_len(*name) > JR_FILE_NAME_MAX) {
        return "name must be 1 to 255 characters (without any directory part)";
    }
    if (!(probe = json_string(*name))) { /* jansson validates UTF-8 */
        return "name must be valid UTF-8";
    }
    json_decref(probe);
    for (c = (const unsigned char *)*name; *c; ++c) {
        if (*c < 0x20 || *c == 0x7f || (c[0] == 0xc2 && c[1] >= 0x80 && c[1] <= 0x9f)) {
            return "name must not contain control characters";
        }
    }
    if ((cf = jr_utf8_format_char(*name)) != 0) {
        return jr_psprintf(p, "name must not contain invisible format characters (U+%04X)", cf);
    }
    return NULL;
}

/* The name of an upload: the multipart filename, X-File-Name (percent-encoded UTF-8) or
 * ?name=. 0, or -1 with res filled. */
static int incoming_name(jr_ctx_t *ctx, jr_result_t *res, const char *part_name, jr_incoming_t *in)
{
    apr_pool_t *p = ctx->pool;
    const char *raw = part_name, *msg;
    if (!raw && ctx->upload->filename) {
        if (!(raw = jr_url_decode(p, ctx->upload->filename, 0))) {
            jr_fail(res, p, 400, "X-File-Name: invalid percent-encoding");
            return -1;
        }
    }
    if (!raw && ctx->query) {
        raw = apr_table_get(ctx->query, "name");
    }
    if (!raw) {
        jr_err_invalid(ctx, res, "name", "name is required (X-File-Name header or ?name=)");
        return -1;
    }
    if ((msg = check_name(p, raw, &in->name)) != NULL) {
        jr_err_body(ctx, res, msg);
        return -1;
    }
    return 0;
}

int jr_files_incoming(jr_ctx_t *ctx, jr_result_t *res, int want_name, jr_incoming_t *in)
{
    apr_pool_t *p = ctx->pool;
    const jr_upload_t *up = ctx->upload;
    const char *part_name = NULL;

    memset(in, 0, sizeof(*in));
    if (!up || !up->path) {
        jr_err_invalid(ctx, res, "file", "file is required");
        return -1;
    }
    if (jr_mp_is_form_data(up->content_type)) {
        const char *boundary = jr_mp_boundary(p, up->content_type);
        jr_mp_part_t part;
        jr_mp_status_e rc = boundary ? jr_mp_extract(&part, p, up->path, boundary, JR_FILES_FIELD,
                                                     ctx->cfg->data_dir, 0)
                                     : JR_MP_MALFORMED;
        if (rc == JR_MP_MALFORMED) {
            jr_err_invalid(ctx, res, "file", "malformed multipart body");
            return -1;
        }
        if (rc == JR_MP_NO_FIELD) {
            jr_err_invalid(ctx, res, "file", "file is required (multipart field '%s')",
                           JR_FILES_FIELD);
            return -1;
        }
        if (rc != JR_MP_OK) {
            JR_LOG(JR05010, 0, "cannot extract a multipart upload under %s/tmp",
                   ctx->cfg->data_dir);
            jr_fail(res, p, 500, "the upload could not be read");
            return -1;
        }
        in->path = part.path;
        in->size = part.size;
        part_name = part.filename;
    } else {
        in->path = up->path;
        in->size = up->size;
    }
    if (want_name && incoming_name(ctx, res, part_name, in) != 0) {
        return -1;
    }
    if (in->size <= 0) {
        jr_err_invalid(ctx, res, "file", "file is empty");
        return -1;
    }
    if (ctx->cfg->upload_max > 0 && in->size > ctx->cfg->upload_max) {
        jr_fail(res, p, 413, "file exceeds the limit of %lld bytes", ctx->cfg->upload_max);
        return -1;
    }
    if (jr_magic_file(&in->type, p, in->path) != APR_SUCCESS) {
        jr_fail(res, p, 500, "the file type could not be determined");
        return -1;
    }
    return 0;
}

/* ---- records ------------------------------------------------------------ */

/* A file's record; the upload knows its values before any row is read back. */
typedef struct {
    long long id, entry_id, size;
    const char *name, *content_type, *sha256, *created_at;
} file_rec_t;

static void file_rec_write(jr_jw_t *w, const file_rec_t *f)
{
    jr_jw_obj(w);
    jr_jw_kint(w, "id", f->id);
    jr_jw_kint(w, "entry_id", f->entry_id);
    jr_jw_kstr(w, "name", f->name);
    jr_jw_kint(w, "size", f->size);
    jr_jw_kstr(w, "content_type", f->content_type);
    jr_jw_kstr(w, "sha256", f->sha256);
    jr_jw_kstr(w, "created_at", f->created_at);
    jr_jw_obj_end(w);
}

static void file_write(apr_pool_t *p, jr_jw_t *w, const jr_rows_t *r, int i)
{
    file_rec_t f = {jr_rows_int(r, i, "id", 0),        jr_rows_int(r, i, "entry_id", 0),
                    jr_rows_int(r, i, "size", 0),      jr_rows_get(r, i, "name"),
                    jr_rows_get(r, i, "content_type"), jr_rows_get(r, i, "sha256"),
                    jr_rows_get(r, i, "created_at")};
    file_rec_write(w, &f);
}

/* The file row of the path (it must belong to the entry): the row, or NULL with res filled. */
static jr_rows_t *file_row(jr_ctx_t *ctx, jr_result_t *res, long long entry_id)
{
    apr_pool_t *p = ctx->pool;
    jr_rows_t *rows;
    if (jr_db_select(ctx->db, p, JR_Q_FILE_GET, &rows,
                     JR_ARGS(jr_i64(p, jr_param_id(ctx, "fileId")), jr_i64(p, entry_id))) !=
        APR_SUCCESS) {
        jr_err_db(ctx, res);
        return NULL;
    }
    if (rows->nrows != 1) {
        jr_err_not_found(ctx, res, "file");
        return NULL;
    }
    return rows;
}

int jr_op_files_list(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    long long id = jr_param_id(ctx, "id"), limit, offset;
    const char *eid = jr_i64(p, id);
    jr_rows_t *rows, *count;

    if (jr_list_params(ctx, res, &limit, &offset) != 0 || jr_entry_load(ctx, res, id, 0, NULL) != 0) {
        return res->status;
    }
    if (jr_db_select(ctx->db, p, JR_Q_FILES_LIST, &rows,
                     JR_ARGS(eid, jr_i64(p, limit), jr_i64(p, offset))) != APR_SUCCESS ||
        jr_db_select(ctx->db, p, JR_Q_FILES_COUNT, &count, JR_ARGS(eid)) != APR_SUCCESS) {
        return jr_err_db(ctx, res);
    }
    return jr_reply_rows(ctx, res, NULL, NULL, file_write, rows, jr_rows_int(count, 0, "n", 0),
                         limit, offset);
}

/* Removes a stored file: a store the database refused (on rollback), a deleted row's file
 * (after the commit). baton: the stored name. */
static void drop_stored(jr_ctx_t *ctx, void *baton)
{
    const char *stored_name = baton;
    apr_status_t rv = jr_storage_remove(ctx->pool, ctx->cfg->data_dir, stored_name);
    if (rv != APR_SUCCESS) {
        JR_LOG(JR05011, rv, "cannot remove the stored file %s", stored_name);
    }
}

int jr_op_files_upload(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    long long id = jr_param_id(ctx, "id"), fid = 0;
    const char *now = jr_now_iso(p);
    jr_incoming_t up;
    jr_stored_t st;
    jr_rows_t *rows;
    apr_status_t rv;
    file_rec_t f;
    jr_jw_t w;
    int vis;

    if (jr_entry_load(ctx, res, id, 0, NULL) != 0 || jr_files_incoming(ctx, res, 1, &up) != 0) {
        return res->status;
    }
    if (!jr_magic_type_in(up.type, ctx->cfg->upload_types)) {
        return jr_fail(res, p, 415, "file type %s is not allowed (allowed: %s)", up.type,
                       ctx->cfg->upload_types ? ctx->cfg->upload_types : "none");
    }
    if ((rv = jr_storage_store(&st, p, ctx->cfg->data_dir, JR_STORAGE_FILES, up.path)) !=
        APR_SUCCESS) {
        JR_LOG(JR05012, rv, "cannot store an upload under %s", ctx->cfg->data_dir);
        return jr_fail(res, p, 500, "the file could not be stored");
    }
    jr_on_rollback(ctx, drop_stored, (void *)st.stored_name);
    /* Again after the store: the entry may have gone to the trash meanwhile. */
    if ((vis = jr_entry_load(ctx, res, id, 0, NULL)) != 0) {
        return vis;
    }
    if (jr_db_select(
            ctx->db, p, JR_Q_FILE_INSERT, &rows,
            JR_ARGS(jr_i64(p, id), up.name, st.stored_name, jr_i64(p, st.size), up.type, st.sha256,
                    now, jr_opt_i64(p, ctx->who.user_id))) != APR_SUCCESS ||
        rows->nrows != 1 ||
        jr_audit(ctx, "create", "entry_file", (fid = jr_rows_int(rows, 0, "id", 0)),
                 jr_json_own(p, json_pack("[s,s,s,s]", "entry_id", "name", "size",
                                          "content_type"))) != APR_SUCCESS) {
        return jr_err_write(ctx, res, NULL);
    }
    f = (file_rec_t){fid, id, (long long)st.size, up.name, up.type, st.sha256, now};
    jr_jw_init(&w, p, 512);
    file_rec_write(&w, &f);
    return jr_reply_jw(res, 201, &w);
}

int jr_files_reply_stored(jr_ctx_t *ctx, jr_result_t *res, const jr_rows_t *rows, int i,
                          const char *filename, int attachment)
{
    apr_pool_t *p = ctx->pool;
    const char *path = jr_storage_path(p, ctx->cfg->data_dir, jr_rows_get(rows, i, "stored_name"));
    jr_file_reply_t *f;
    apr_finfo_t fi;
    apr_time_t t;

    if (!path ||
        apr_stat(&fi, path, APR_FINFO_SIZE | APR_FINFO_MTIME | APR_FINFO_TYPE, p) != APR_SUCCESS ||
        fi.filetype != APR_REG) {
        return 0;
    }
    f = apr_pcalloc(p, sizeof(*f));
    f->path = path;
    f->size = fi.size;
    f->content_type = jr_rows_get(rows, i, "content_type");
    f->filename = filename;
    f->attachment = attachment;
    f->etag = jr_rows_get(rows, i, "sha256");
    f->mtime = jr_parse_iso_time(jr_rows_get(rows, i, "created_at"), &t) == 0 ? t : fi.mtime;
    res->status = 200;
    res->body = NULL;
    res->file = f;
    return 1;
}

int jr_op_files_download(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    long long id = jr_param_id(ctx, "id");
    jr_rows_t *rows;

    if (jr_entry_load(ctx, res, id, 0, NULL) != 0 || !(rows = file_row(ctx, res, id))) {
        return res->status;
    }
    if (!jr_files_reply_stored(ctx, res, rows, 0, jr_rows_get(rows, 0, "name"), 1)) {
        JR_LOG(JR05013, 0, "the stored file of entry file %s is missing",
               jr_rows_get(rows, 0, "id"));
        return jr_fail(res, ctx->pool, 404, "the file is no longer stored");
    }
    return res->status;
}

int jr_op_files_delete(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    long long id = jr_param_id(ctx, "id");
    const char *fid;
    jr_rows_t *rows;
    int n = 0;

    if (jr_entry_load(ctx, res, id, 0, NULL) != 0 || !(rows = file_row(ctx, res, id))) {
        return res->status;
    }
    fid = jr_rows_get(rows, 0, "id");
    if (jr_db_exec(ctx->db, p, JR_Q_FILE_DELETE, &n, JR_ARGS(fid, jr_i64(p, id))) != APR_SUCCESS ||
        (n == 1 && jr_audit(ctx, "delete", "entry_file", jr_rows_int(rows, 0, "id", 0), NULL) !=
                       APR_SUCCESS)) {
        return jr_err_write(ctx, res, NULL);
    }
    if (n != 1) { /* deleted by a concurrent request */
        return jr_err_not_found(ctx, res, "file");
    }
    jr_after_commit(ctx, drop_stored, (void *)jr_rows_get(rows, 0, "stored_name"));
    return jr_reply_ok(res, p);
}

apr_status_t jr_files_purge_entry(jr_ctx_t *ctx, long long entry_id,
                                  apr_array_header_t *unlink_after)
{
    jr_rows_t *rows;
    apr_status_t rv;
    int i;

    /* One statement: a file added meanwhile is either deleted and listed, or kept. */
    if ((rv = jr_db_select(ctx->db, ctx->pool, JR_Q_FILES_DELETE_ENTRY, &rows,
                           JR_ARGS(jr_i64(ctx->pool, entry_id)))) != APR_SUCCESS) {
        return rv;
    }
    for (i = 0; i < rows->nrows; ++i) {
        APR_ARRAY_PUSH(unlink_after, const char *) = jr_rows_get(rows, i, "stored_name");
    }
    if ((rv = jr_photo_jobs_purge_entry(ctx, entry_id, unlink_after)) != APR_SUCCESS) {
        return rv;
    }
    return jr_photos_purge_owner(ctx, "entry", entry_id, unlink_after);
}
