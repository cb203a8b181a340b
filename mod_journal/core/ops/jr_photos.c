/* Photos: the photo of an entry (role current, and the first one ever uploaded kept as role
 * original) and the cover photo of a group (role cover). JPEG, PNG and WebP only, sniffed
 * from the bytes. A replaced file is unlinked only after the transaction committed. */
#include <string.h>

#include <apr_strings.h>

#include "jr_entries.h"
#include "jr_files.h"
#include "jr_groups.h"
#include "jr_json.h"
#include "jr_log.h"
#include "jr_magic.h"
#include "jr_stmts.h"
#include "jr_storage.h"
#include "jr_util.h"

/* The two kinds of photo owners. */
typedef struct {
    const char *owner_type; /* photos.owner_type, also the word of a 404 */
    const char *role;       /* the role served, replaced and deleted */
    const char *audit_type;
    const char *id_key; /* of the record */
    int keep_original;  /* the first photo is kept as role original as well */
    /* The owner as the caller may see it (jr_entries.h, jr_groups.h). */
    int (*owner_load)(jr_ctx_t *ctx, jr_result_t *res, long long id, unsigned flags,
                      jr_rows_t **row);
} kind_t;

static const kind_t entry_photo = {"entry", "current", "entry_photo", "entry_id", 1,
                                   jr_entry_load};
static const kind_t group_cover = {"group", "cover", "group_cover", "group_id", 0,
                                   jr_group_load};

static const char *const changed_concurrently =
    "the photo was changed by another request at the same time, try again";

/* The photo rows of an owner; lock: inside the write transaction that changes them. */
static apr_status_t load(jr_ctx_t *ctx, const kind_t *k, long long id, int lock, jr_rows_t **rows)
{
    return jr_db_select(ctx->db, ctx->pool, lock ? JR_Q_PHOTOS_LOCK_OWNER : JR_Q_PHOTOS_OF_OWNER, rows,
                        JR_ARGS(k->owner_type, jr_i64(ctx->pool, id)));
}

static int find_role(const jr_rows_t *rows, const char *role)
{
    int i;
    for (i = 0; i < rows->nrows; ++i) {
        const char *r = jr_rows_get(rows, i, "role");
        if (r && !strcmp(r, role)) {
            return i;
        }
    }
    return -1;
}

static int photo_reply(jr_result_t *res, apr_pool_t *p, int status, const kind_t *k, long long id,
                       const char *type, long long size, const char *sha256,
                       const char *created_at, int has_original)
{
    jr_jw_t w;
    jr_jw_init(&w, p, 256);
    jr_jw_obj(&w);
    jr_jw_kint(&w, k->id_key, id);
    jr_jw_kstr(&w, "content_type", type);
    jr_jw_kint(&w, "size", size);
    jr_jw_kstr(&w, "sha256", sha256);
    jr_jw_kstr(&w, "created_at", created_at);
    if (k->keep_original) {
        jr_jw_kbool(&w, "has_original", has_original);
    }
    jr_jw_obj_end(&w);
    return jr_reply_jw(res, status, &w);
}

static void drop(jr_ctx_t *ctx, const char *stored_name)
{
    apr_status_t rv;
    if (stored_name &&
        (rv = jr_storage_remove(ctx->pool, ctx->cfg->data_dir, stored_name)) != APR_SUCCESS) {
        JR_LOG(JR05020, rv, "cannot remove the stored file %s", stored_name);
    }
}

/* drop as a hook of the road (jr_after_commit, jr_on_rollback); baton: the stored name. */
static void drop_hook(jr_ctx_t *ctx, void *baton)
{
    drop(ctx, baton);
}

/* Writes the rows of a stored upload in the open transaction. */
static apr_status_t write_rows(jr_ctx_t *ctx, const kind_t *k, long long id, const jr_rows_t *rows,
                               const char *type, const jr_stored_t *st, const jr_stored_t *orig,
                               const char *now)
{
    apr_pool_t *p = ctx->pool;
    const char *oid = jr_i64(p, id), *by = jr_opt_i64(p, ctx->who.user_id);
    jr_rows_t *ins;
    apr_status_t rv;
    int cur = find_role(rows, k->role);

    if (cur >= 0) {
        rv = jr_db_exec(ctx->db, p, JR_Q_PHOTO_REPLACE, NULL,
                        JR_ARGS(st->stored_name, jr_i64(p, st->size), type, st->sha256, now, by,
                                k->owner_type, oid, k->role));
    } else {
        rv = jr_db_select(ctx->db, p, JR_Q_PHOTO_INSERT, &ins,
                          JR_ARGS(k->owner_type, oid, k->role, st->stored_name, jr_i64(p, st->size),
                                  type, st->sha256, now, by));
    }
    if (rv == APR_SUCCESS && orig && find_role(rows, "original") < 0) {
        rv = jr_db_select(ctx->db, p, JR_Q_PHOTO_INSERT, &ins,
                          JR_ARGS(k->owner_type, oid, "original", orig->stored_name,
                                  jr_i64(p, orig->size), type, orig->sha256, now, by));
    }
    if (rv == APR_SUCCESS) {
        rv = jr_audit(ctx, cur >= 0 ? "update" : "create", k->audit_type, id,
                      jr_json_own(p, json_pack("[s,s,s]", "content_type", "size", "sha256")));
    }
    return rv;
}

static int upload(jr_ctx_t *ctx, jr_result_t *res, const kind_t *k)
{
    apr_pool_t *p = ctx->pool;
    long long id = jr_param_id(ctx, "id");
    const char *now = jr_now_iso(p);
    jr_stored_t st, orig_copy, *orig = NULL;
    jr_incoming_t up;
    jr_rows_t *rows;
    apr_status_t rv;
    int vis, cur, had_orig;

    if (k->owner_load(ctx, res, id, 0, NULL) != 0 || jr_files_incoming(ctx, res, 0, &up) != 0) {
        return res->status;
    }
    if (!jr_magic_type_in(up.type, JR_PHOTO_TYPES)) {
        return jr_fail(res, p, 415, "photo must be a JPEG, PNG or WebP image (the file is %s)",
                       up.type);
    }
    if (load(ctx, k, id, 0, &rows) != APR_SUCCESS) {
        return jr_err_db(ctx, res);
    }
    if ((rv = jr_storage_store(&st, p, ctx->cfg->data_dir, JR_STORAGE_PHOTOS, up.path)) !=
        APR_SUCCESS) {
        JR_LOG(JR05021, rv, "cannot store a photo under %s", ctx->cfg->data_dir);
        return jr_fail(res, p, 500, "the photo could not be stored");
    }
    if (k->keep_original && find_role(rows, "original") < 0) {
        if ((rv = jr_storage_duplicate(&orig_copy, p, ctx->cfg->data_dir, JR_STORAGE_PHOTOS,
                                       &st)) != APR_SUCCESS) {
            JR_LOG(JR05022, rv, "cannot keep the original of a photo under %s",
                   ctx->cfg->data_dir);
            drop(ctx, st.stored_name);
            return jr_fail(res, p, 500, "the photo could not be stored");
        }
        orig = &orig_copy;
    }
    jr_on_rollback(ctx, drop_hook, (void *)st.stored_name);
    if (orig) {
        jr_on_rollback(ctx, drop_hook, (void *)orig->stored_name);
    }
    /* Again after the store: what another request changed meanwhile counts. */
    if ((vis = k->owner_load(ctx, res, id, 0, NULL)) != 0 ||
        load(ctx, k, id, 1, &rows) != APR_SUCCESS) {
        return vis == 0 ? jr_err_write(ctx, res, NULL) : vis;
    }
    if (write_rows(ctx, k, id, rows, up.type, &st, orig, now) != APR_SUCCESS) {
        return jr_err_write(ctx, res, changed_concurrently);
    }
    cur = find_role(rows, k->role);
    had_orig = find_role(rows, "original") >= 0;
    if (cur >= 0) {
        jr_after_commit(ctx, drop_hook, (void *)jr_rows_get(rows, cur, "stored_name"));
    }
    if (orig && had_orig) { /* an original appeared meanwhile: the copy is not needed */
        jr_after_commit(ctx, drop_hook, (void *)orig->stored_name);
    }
    return photo_reply(res, p, cur >= 0 ? 200 : 201, k, id, up.type, (long long)st.size,
                       st.sha256, now, had_orig || orig);
}

static const char *extension_of(const char *type)
{
    if (!strcmp(type, "image/png")) {
        return "png";
    }
    if (!strcmp(type, "image/webp")) {
        return "webp";
    }
    return !strcmp(type, "image/jpeg") ? "jpg" : "bin";
}

static int serve(jr_ctx_t *ctx, jr_result_t *res, const kind_t *k, const char *role)
{
    apr_pool_t *p = ctx->pool;
    long long id = jr_param_id(ctx, "id");
    const char *path, *type;
    jr_file_reply_t *f;
    jr_rows_t *rows;
    apr_finfo_t fi;
    apr_time_t t;
    int i;

    if (k->owner_load(ctx, res, id, 0, NULL) != 0) {
        return res->status;
    }
    if (load(ctx, k, id, 0, &rows) != APR_SUCCESS) {
        return jr_err_db(ctx, res);
    }
    if ((i = find_role(rows, role)) < 0) {
        return jr_fail(res, p, 404, strcmp(role, "original") ? "no photo" : "no original photo");
    }
    path = jr_storage_path(p, ctx->cfg->data_dir, jr_rows_get(rows, i, "stored_name"));
    if (!path ||
        apr_stat(&fi, path, APR_FINFO_SIZE | APR_FINFO_MTIME | APR_FINFO_TYPE, p) != APR_SUCCESS ||
        fi.filetype != APR_REG) {
        JR_LOG(JR05023, 0, "the stored %s photo of %s %lld is missing", role,
               k->owner_type, id);
        return jr_fail(res, p, 404, "the photo is no longer stored");
    }
    type = jr_rows_get(rows, i, "content_type");
    f = apr_pcalloc(p, sizeof(*f));
    f->path = path;
    f->size = fi.size;
    f->content_type = type;
    f->filename = jr_psprintf(p, "%s-%lld%s.%s", k->owner_type, id,
                              strcmp(role, "original") ? "" : "-original", extension_of(type));
    f->attachment = 0;
    f->etag = jr_rows_get(rows, i, "sha256");
    f->mtime = jr_parse_iso_time(jr_rows_get(rows, i, "created_at"), &t) == 0 ? t : fi.mtime;
    res->status = 200;
    res->body = NULL;
    res->file = f;
    return res->status;
}

/* Deletes the rows of an owner in the open transaction; *n is how many there were. */
static apr_status_t purge(jr_ctx_t *ctx, const char *owner_type, long long owner_id,
                          apr_array_header_t *unlink_after, int *n)
{
    jr_rows_t *rows;
    apr_status_t rv;
    int i;

    *n = 0;
    if ((rv = jr_db_select(ctx->db, ctx->pool, JR_Q_PHOTOS_DELETE_OWNER, &rows,
                           JR_ARGS(owner_type, jr_i64(ctx->pool, owner_id)))) != APR_SUCCESS) {
        return rv;
    }
    for (i = 0; i < rows->nrows; ++i) {
        APR_ARRAY_PUSH(unlink_after, const char *) = jr_rows_get(rows, i, "stored_name");
    }
    *n = rows->nrows;
    return APR_SUCCESS;
}

apr_status_t jr_photos_purge_owner(jr_ctx_t *ctx, const char *owner_type, long long owner_id,
                                   apr_array_header_t *unlink_after)
{
    int n;
    return purge(ctx, owner_type, owner_id, unlink_after, &n);
}

apr_status_t jr_photos_purge_group(jr_ctx_t *ctx, long long group_id,
                                   apr_array_header_t *unlink_after)
{
    return jr_photos_purge_owner(ctx, "group", group_id, unlink_after);
}

static int remove_all(jr_ctx_t *ctx, jr_result_t *res, const kind_t *k)
{
    apr_pool_t *p = ctx->pool;
    long long id = jr_param_id(ctx, "id");
    apr_array_header_t *names = apr_array_make(p, 4, sizeof(const char *));
    jr_rows_t *rows;
    int n = 0;

    if (k->owner_load(ctx, res, id, 0, NULL) != 0) {
        return res->status;
    }
    if (load(ctx, k, id, 0, &rows) != APR_SUCCESS) {
        return jr_err_db(ctx, res);
    }
    if (rows->nrows == 0) {
        return jr_fail(res, p, 404, "no photo");
    }
    if (purge(ctx, k->owner_type, id, names, &n) != APR_SUCCESS ||
        (n > 0 && jr_audit(ctx, "delete", k->audit_type, id, NULL) != APR_SUCCESS)) {
        return jr_err_write(ctx, res, NULL);
    }
    if (n == 0) { /* deleted by a concurrent request */
        return jr_fail(res, p, 404, "no photo");
    }
    jr_storage_unlink_after_commit(ctx, names);
    return jr_reply_ok(res, p);
}

static int admin_only(jr_ctx_t *ctx, jr_result_t *res)
{
    if (ctx->who.role != JR_ROLE_ADMIN) {
        jr_fail(res, ctx->pool, 403, "only admins may change the cover photo of a group");
        return 0;
    }
    return 1;
}

int jr_op_photo_upload(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    return upload(ctx, res, &entry_photo);
}

int jr_op_photo_get(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    return serve(ctx, res, &entry_photo, "current");
}

int jr_op_photo_original(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    return serve(ctx, res, &entry_photo, "original");
}

int jr_op_photo_delete(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    return remove_all(ctx, res, &entry_photo);
}

int jr_op_cover_upload(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    return admin_only(ctx, res) ? upload(ctx, res, &group_cover) : res->status;
}

int jr_op_cover_get(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    return serve(ctx, res, &group_cover, "cover");
}

int jr_op_cover_delete(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    return admin_only(ctx, res) ? remove_all(ctx, res, &group_cover) : res->status;
}
