/* The trash: soft-deleted entries, groups and modules, restored or purged (now, or by the
 * periodic task after trash_retention_days). Purging removes the rows and the files. */
#include <string.h>

#include <apr_strings.h>

#include "jr_cursor.h"
#include "jr_files.h"
#include "jr_jw.h"
#include "jr_load.h"
#include "jr_log.h"
#include "jr_entries.h"
#include "jr_groups.h"
#include "jr_modules.h"
#include "jr_trash.h"
#include "jr_settings.h"
#include "jr_stmts.h"
#include "jr_storage.h"
#include "jr_util.h"

/* The instant before which trashed records are purged. */
static const char *purge_cutoff(jr_ctx_t *ctx)
{
    long long days = 30;
    jr_parse_int64(jr_setting(ctx, JR_SETTING_TRASH_RETENTION_DAYS), 1, 3650, &days);
    return jr_iso_time(ctx->pool, apr_time_now() - apr_time_from_sec(days * 86400));
}

static const char *purge_at(jr_ctx_t *ctx, const char *deleted_at)
{
    long long days = 30;
    apr_time_t t;
    jr_parse_int64(jr_setting(ctx, JR_SETTING_TRASH_RETENTION_DAYS), 1, 3650, &days);
    if (!deleted_at || jr_parse_iso_time(deleted_at, &t) != 0) {
        return NULL;
    }
    return jr_iso_time(ctx->pool, t + apr_time_from_sec(days * 86400));
}

int jr_op_trash_list(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    long long limit, offset;
    jr_rows_t *rows, *count;
    jr_jw_t w;
    int i;
    if (jr_list_params(ctx, res, &limit, &offset) != 0) {
        return res->status;
    }
    if (jr_db_select(ctx->db, p, JR_Q_TRASH_LIST, &rows, JR_ARGS(jr_i64(p, limit), jr_i64(p, offset))) !=
            APR_SUCCESS ||
        jr_db_select(ctx->db, p, JR_Q_TRASH_COUNT, &count, JR_NOARGS) != APR_SUCCESS) {
        return jr_err_db(ctx, res);
    }
    jr_jw_init(&w, p, 256 * (size_t)(rows->nrows + 1));
    jr_jw_list_begin(ctx, &w, res, jr_rows_int(count, 0, "n", 0));
    for (i = 0; i < rows->nrows; ++i) {
        jr_jw_obj(&w);
        jr_jw_kstr(&w, "type", jr_rows_get(rows, i, "type"));
        jr_jw_kint_text(&w, "id", jr_rows_get(rows, i, "id"));
        jr_jw_kstr(&w, "name", jr_rows_get(rows, i, "name"));
        jr_jw_kstr(&w, "deleted_at", jr_rows_get(rows, i, "deleted_at"));
        jr_jw_kint_text(&w, "deleted_by", jr_rows_get(rows, i, "deleted_by"));
        jr_jw_kstr(&w, "purge_at", purge_at(ctx, jr_rows_get(rows, i, "deleted_at")));
        jr_jw_obj_end(&w);
    }
    return jr_jw_list_end(ctx, &w, res, jr_rows_int(count, 0, "n", 0), limit, offset);
}

static int known_type(const char *t)
{
    return t && (!strcmp(t, "entry") || !strcmp(t, "group") || !strcmp(t, "module"));
}

/* An entry in the trash with its group's state (the trash is the admins'). */
static const jr_kind_t trashed_entry = {"entry", NULL, JR_Q_TRASH_ENTRY_GET, JR_Q_TRASH_ENTRY_GET,
                                        NULL, 1};

int jr_op_trash_restore(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    const char *type = apr_table_get(ctx->params, "type");
    long long id = jr_param_id(ctx, "id");
    jr_rows_t *rows;
    int n = 0, st;

    if (!known_type(type)) {
        return jr_fail(res, p, 404, "type must be entry, group or module");
    }
    if (!strcmp(type, "group")) {
        return jr_op_groups_restore(ctx, in, res);
    }
    if (!strcmp(type, "module")) {
        return jr_op_modules_restore(ctx, in, res);
    }
    if ((st = jr_load(ctx, res, &trashed_entry, id, JR_LOAD_DELETED, &rows)) != 0) {
        return st;
    }
    if (jr_rows_get(rows, 0, "group_deleted_at")) {
        return jr_err_conflict(ctx, res,
                               "the entry's group is in the trash: restore the group first");
    }
    if (jr_db_exec(ctx->db, p, JR_Q_ENTRY_RESTORE, &n, JR_ARGS(jr_now_iso(p), jr_i64(p, id))) !=
            APR_SUCCESS ||
        jr_audit(ctx, "restore", "entry", id, NULL) != APR_SUCCESS) {
        return jr_err_write(ctx, res, NULL);
    }
    return jr_op_entries_get(ctx, in, res);
}

/* Deletes a trashed entry's rows (files, photos, checks, the entry) in the open
 * transaction. Returns 1 when purged, 0 when there was no trashed entry, -1 on error. */
static int purge_entry(jr_ctx_t *ctx, long long id, apr_array_header_t *unlink_after)
{
    apr_pool_t *p = ctx->pool;
    const char *sid = jr_i64(p, id);
    int n = 0;
    if (jr_files_purge_entry(ctx, id, unlink_after) != APR_SUCCESS ||
        jr_db_exec(ctx->db, p, JR_Q_ENTRY_PURGE_JOBS, NULL, JR_ARGS(sid)) != APR_SUCCESS ||
        jr_db_exec(ctx->db, p, JR_Q_ENTRY_PURGE, &n, JR_ARGS(sid)) != APR_SUCCESS) {
        return -1;
    }
    return n == 1;
}

/* A trashed group goes with its trashed entries, its students and its cover; a group that
 * still has live entries is refused (409). */
static int purge_group(jr_ctx_t *ctx, long long id, apr_array_header_t *unlink_after,
                       jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    const char *sid = jr_i64(p, id);
    jr_rows_t *rows;
    int i, n = 0;
    if (jr_db_select(ctx->db, p, JR_Q_GROUP_SCOPE, &rows, JR_ARGS(sid)) != APR_SUCCESS) {
        return -1;
    }
    if (rows->nrows != 1 || !jr_rows_get(rows, 0, "deleted_at")) {
        return 0; /* not in the trash */
    }
    if (jr_db_select(ctx->db, p, JR_Q_GROUP_LIVE_ENTRIES, &rows, JR_ARGS(sid)) != APR_SUCCESS) {
        return -1;
    }
    if (jr_rows_int(rows, 0, "n", 0) > 0) {
        if (res) {
            jr_err_conflict(ctx, res, "the group still has entries outside the trash");
        }
        return -2;
    }
    if (jr_db_select(ctx->db, p, JR_Q_GROUP_TRASHED_ENTRIES, &rows, JR_ARGS(sid)) != APR_SUCCESS) {
        return -1;
    }
    for (i = 0; i < rows->nrows; ++i) {
        if (purge_entry(ctx, jr_rows_int(rows, i, "id", 0), unlink_after) < 0) {
            return -1;
        }
    }
    if (jr_photos_purge_group(ctx, id, unlink_after) != APR_SUCCESS ||
        jr_db_exec(ctx->db, p, JR_Q_GROUP_PURGE_STUDENTS, NULL, JR_ARGS(sid)) != APR_SUCCESS ||
        jr_db_exec(ctx->db, p, JR_Q_GROUP_PURGE, &n, JR_ARGS(sid)) != APR_SUCCESS) {
        return -1;
    }
    return n == 1;
}

/* Purges one trashed item in the open transaction (audited); its files' names go to
 * unlink_after. 1 purged, 0 not in the trash, -1 error, -2 refused (res filled when given). */
static int purge_one(jr_ctx_t *ctx, const char *type, long long id, jr_result_t *res,
                     apr_array_header_t *unlink_after)
{
    int rc, n = 0;
    if (!strcmp(type, "entry")) {
        rc = purge_entry(ctx, id, unlink_after);
    } else if (!strcmp(type, "group")) {
        rc = purge_group(ctx, id, unlink_after, res);
    } else {
        rc = jr_db_exec(ctx->db, ctx->pool, JR_Q_MODULE_PURGE, &n, JR_ARGS(jr_i64(ctx->pool, id))) ==
                     APR_SUCCESS
                 ? n == 1
                 : -1;
    }
    if (rc == 1 && jr_audit(ctx, "purge", type, id, NULL) != APR_SUCCESS) {
        rc = -1;
    }
    return rc;
}

int jr_op_trash_purge(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    const char *type = apr_table_get(ctx->params, "type");
    apr_array_header_t *unlink_after = apr_array_make(ctx->pool, 8, sizeof(const char *));
    int rc;
    if (!known_type(type)) {
        return jr_fail(res, ctx->pool, 404, "type must be entry, group or module");
    }
    rc = purge_one(ctx, type, jr_param_id(ctx, "id"), res, unlink_after);
    if (rc == 1) {
        /* The rows are gone for good once committed: then the bytes. */
        jr_storage_unlink_after_commit(ctx, unlink_after);
        return jr_reply_ok(res, ctx->pool);
    }
    if (rc == -2) {
        return res->status;
    }
    return rc == 0 ? jr_fail(res, ctx->pool, 404, "no %s with this id in the trash", type)
                   : jr_err_db(ctx, res);
}

/* One expired item, purged in a transaction of its own (jr_tx_run). */
typedef struct {
    const char *type;
    long long id;
    apr_array_header_t *unlink_after;
} expired_t;

static apr_status_t purge_expired_one(jr_ctx_t *ctx, void *baton)
{
    expired_t *x = baton;
    return purge_one(ctx, x->type, x->id, NULL, x->unlink_after) == 1 ? APR_SUCCESS : APR_EGENERAL;
}

int jr_trash_purge_expired(jr_ctx_t *ctx)
{
    jr_rows_t *rows;
    int i, purged = 0;
    if (jr_db_select(ctx->db, ctx->pool, JR_Q_TRASH_EXPIRED, &rows,
                     JR_ARGS(purge_cutoff(ctx))) != APR_SUCCESS) {
        return -1;
    }
    /* Modules, then groups, then entries (ORDER BY type DESC): a group purge takes its
     * trashed entries along, whatever their own purge_at. A group with live entries stays. */
    for (i = 0; i < rows->nrows; ++i) {
        expired_t x = {jr_rows_get(rows, i, "type"), jr_rows_int(rows, i, "id", 0),
                       apr_array_make(ctx->pool, 8, sizeof(const char *))};
        if (jr_tx_run(ctx, purge_expired_one, &x) == APR_SUCCESS) {
            jr_storage_unlink_all(ctx, x.unlink_after);
            ++purged;
        }
    }
    if (purged) {
        JR_LOG(JR04001, 0, "purged %d item(s) from the trash", purged);
    }
    return purged;
}
