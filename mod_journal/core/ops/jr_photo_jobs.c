/* The photo job endpoints (docs/photos.md): queueing an enhancement, the job history, the
 * result's preview, apply and reject, the photo history (rollback, restore-original), the
 * worker switch and the photo service's health. Each is an operation of the road: a route
 * marked WRITE runs in the road's transaction, and files are unlinked only once the
 * transaction that dropped their rows committed (jr_after_commit). */
#include <string.h>

#include <apr_strings.h>
#include <curl/curl.h>

#include "jr_cursor.h"
#include "jr_entries.h"
#include "jr_json.h"
#include "jr_log.h"
#include "jr_jobs.h"
#include "jr_photo_jobs.h"
#include "jr_settings.h"
#include "jr_stmts.h"
#include "jr_storage.h"
#include "jr_util.h"

/* ---- input -------------------------------------------------------------------------------- */

const jr_field_t jr_fields_photo_enhance_ai[] = {
    {.name = "model", .type = JR_F_STRING, .min = 1, .max = 32},
    {.name = "face", .type = JR_F_STRING, .min = 1, .max = 32},
    {.name = "face_model", .type = JR_F_STRING, .min = 1, .max = 32},
    {.name = "strength", .type = JR_F_ANY},
    {NULL},
};

const jr_field_t jr_fields_photo_enhance[] = {
    {.name = "strength", .type = JR_F_ANY},
    {NULL},
};

const jr_field_t jr_fields_photo_jobs_enabled[] = {
    {.name = "enabled", .type = JR_F_BOOL, .required = 1},
    {NULL},
};

const jr_field_spec_t jr_fields_photo_jobs[] = {
    {"POST /api/entries/:id/photo/enhance-ai", jr_fields_photo_enhance_ai},
    {"POST /api/entries/:id/photo/enhance", jr_fields_photo_enhance},
    {"PUT /api/photo-jobs/enabled", jr_fields_photo_jobs_enabled},
    {NULL, NULL},
};

#define MODELS "x2plus|general-x4v3|animevideo-v3"
#define FACES "off|face|all"
#define FACE_MODELS "gfpgan|codeformer"
#define DEFAULT_MODEL "x2plus"
#define DEFAULT_STRENGTH 0.5

/* 1 when v is one of the '|'-separated choices. */
static int one_of(const char *v, const char *choices)
{
    size_t n = strlen(v);
    const char *c = choices;
    while (c) {
        if (!strncmp(c, v, n) && (c[n] == '|' || c[n] == '\0')) {
            return 1;
        }
        c = strchr(c, '|');
        c = c ? c + 1 : NULL;
    }
    return 0;
}

/* A choice of in, or dflt when absent; NULL with *err naming the field when invalid. */
static const char *choice(apr_pool_t *p, const json_t *in, const char *name, const char *choices,
                          const char *dflt, const char **err)
{
    const char *v = jr_json_str(in, name, NULL);
    if (!v) {
        return dflt;
    }
    if (!one_of(v, choices)) {
        char *list = apr_pstrdup(p, choices), *c;
        for (c = list; *c; ++c) {
            *c = *c == '|' ? ',' : *c;
        }
        *err = apr_psprintf(p, "%s must be one of %s", name, list);
        return NULL;
    }
    return v;
}

/* The job's params: the body's values over the settings' defaults. NULL with *err (naming the
 * field) when a value is invalid (the road checked the fields' names and types). */
static json_t *job_params(jr_ctx_t *ctx, const json_t *in, int ai, const char **err)
{
    apr_pool_t *p = ctx->pool;
    const json_t *s = json_object_get(in, "strength");
    const char *model = NULL, *face = NULL, *face_model = NULL;
    json_t *out;

    if (s && (!json_is_number(s) || json_number_value(s) < 0 || json_number_value(s) > 1)) {
        *err = "strength must be a number from 0 to 1";
        return NULL;
    }
    if (ai && (!(model = choice(p, in, "model", MODELS, DEFAULT_MODEL, err)) ||
               !(face = choice(p, in, "face", FACES, jr_setting(ctx, JR_SETTING_PHOTO_AI_FACE_MODE),
                               err)) ||
               !(face_model = choice(p, in, "face_model", FACE_MODELS,
                                     jr_setting(ctx, JR_SETTING_PHOTO_AI_FACE_MODEL), err)))) {
        return NULL;
    }
    out = jr_json_own(p, json_object());
    json_object_set_new(out, "strength", json_real(s ? json_number_value(s) : DEFAULT_STRENGTH));
    if (ai) {
        json_object_set_new(out, "model", json_string(model));
        json_object_set_new(out, "face", json_string(face));
        json_object_set_new(out, "face_model", json_string(face_model));
        json_object_set_new(out, "device",
                            json_string(jr_setting(ctx, JR_SETTING_PHOTO_AI_DEVICE_PREF)));
    }
    return out;
}

/* ---- output ------------------------------------------------------------------------------ */

#define ROW(c) jr_rows_get(rows, i, c)
#define NUM(w, c) jr_jw_kint_text(w, c, ROW(c))
#define STR(w, c) jr_jw_kstr(w, c, ROW(c))

static void job_write(apr_pool_t *p, jr_jw_t *w, const jr_rows_t *rows, int i)
{
    const char *text = ROW("params"), *err = NULL;
    /* The parameters as the request gave them (a stored JSON object). */
    const json_t *params = text ? jr_json_parse(p, text, strlen(text), &err) : NULL;
    jr_jw_obj(w);
    NUM(w, "id");
    NUM(w, "entry_id");
    STR(w, "action");
    jr_jw_key(w, "params");
    if (params) {
        jr_jw_json(w, params);
    } else {
        jr_jw_raw(w, "{}");
    }
    STR(w, "status");
    jr_jw_kbool(w, "applied", jr_rows_int(rows, i, "applied", 0) != 0);
    NUM(w, "attempts");
    jr_jw_kstr(w, "error", ROW("last_error"));
    STR(w, "created_at");
    STR(w, "updated_at");
    STR(w, "started_at");
    STR(w, "finished_at");
    NUM(w, "result_size");
    NUM(w, "result_width");
    NUM(w, "result_height");
    STR(w, "result_type");
    jr_jw_obj_end(w);
}

/* Answers with job id of entry as the request's transaction sees it. */
static int reply_job(jr_ctx_t *ctx, jr_result_t *res, int status, long long entry, long long job)
{
    apr_pool_t *p = ctx->pool;
    jr_rows_t *rows;
    if (jr_db_select(ctx->db, p, JR_Q_PHOTO_JOB_GET, &rows,
                     JR_ARGS(jr_i64(p, job), jr_i64(p, entry))) != APR_SUCCESS ||
        rows->nrows != 1) {
        return jr_err_db(ctx, res);
    }
    return jr_reply_row(ctx, res, status, job_write, rows, 0);
}

/* ---- lookups ----------------------------------------------------------------------------- */

/* The entry of the path, visible to the caller; 0 with the answer in res otherwise. */
static long long entry_of(jr_ctx_t *ctx, jr_result_t *res, long long *branch)
{
    long long id = jr_param_id(ctx, "id");
    jr_rows_t *rows;
    if (jr_entry_load(ctx, res, id, 0, &rows) != 0) {
        return 0;
    }
    if (branch) {
        *branch = jr_rows_int(rows, 0, "branch_id", 0);
    }
    return id;
}

/* The job of the path (JR_Q_PHOTO_JOB_GET, or JR_Q_PHOTO_JOB_LOCK in a write); NULL with the
 * answer in res. */
static jr_rows_t *job_of(jr_ctx_t *ctx, jr_result_t *res, long long entry, jr_stmt_id_t stmt)
{
    apr_pool_t *p = ctx->pool;
    jr_rows_t *rows;
    if (jr_db_select(ctx->db, p, stmt, &rows,
                     JR_ARGS(jr_i64(p, jr_param_id(ctx, "jobId")), jr_i64(p, entry))) !=
        APR_SUCCESS) {
        stmt == JR_Q_PHOTO_JOB_LOCK ? jr_err_write(ctx, res, NULL) : jr_err_db(ctx, res);
        return NULL;
    }
    if (rows->nrows != 1) {
        jr_err_not_found(ctx, res, "photo job");
        return NULL;
    }
    return rows;
}

/* The photo rows of the entry, locked for the open transaction (jr_photos.c's statement). */
static jr_rows_t *photos_locked(jr_ctx_t *ctx, long long entry)
{
    jr_rows_t *rows;
    return jr_db_select(ctx->db, ctx->pool, JR_Q_PHOTOS_LOCK_OWNER, &rows,
                        JR_ARGS("entry", jr_i64(ctx->pool, entry))) == APR_SUCCESS
               ? rows
               : NULL;
}

/* The newest row of a role (the history's top for 'previous'), -1 when none. */
static int newest(const jr_rows_t *rows, const char *role)
{
    int i, found = -1;
    for (i = 0; i < rows->nrows; ++i) {
        const char *r = jr_rows_get(rows, i, "role");
        if (r && !strcmp(r, role)) {
            found = i;
        }
    }
    return found;
}

/* The entry of the path with its photo rows locked for the road's transaction, and the index
 * of the newest row of role; -1 with the answer in res when the entry is not visible, the
 * rows cannot be read, or no photo has that role (409 missing). */
static int locked_photo(jr_ctx_t *ctx, jr_result_t *res, const char *role, const char *missing,
                        long long *entry, long long *branch, jr_rows_t **photos)
{
    int i;
    if (!(*entry = entry_of(ctx, res, branch))) {
        return -1;
    }
    if (!(*photos = photos_locked(ctx, *entry))) {
        jr_err_write(ctx, res, NULL);
        return -1;
    }
    if ((i = newest(*photos, role)) < 0) {
        jr_err_conflict(ctx, res, "%s", missing);
    }
    return i;
}

/* ---- queueing ---------------------------------------------------------------------------- */

static int enqueue(jr_ctx_t *ctx, const json_t *in, jr_result_t *res, int ai)
{
    apr_pool_t *p = ctx->pool;
    const char *err = NULL, *now = jr_now_iso(p);
    json_t *params = job_params(ctx, in, ai, &err);
    long long entry, branch = 0, job;
    jr_rows_t *photos, *ins;
    int cur;

    if (!params) {
        return jr_err_body(ctx, res, err); /* before the entry is looked up (spec 4.3) */
    }
    if ((cur = locked_photo(ctx, res, "current", "the entry has no photo to enhance", &entry,
                            &branch, &photos)) < 0) {
        return res->status;
    }
    if (jr_db_select(ctx->db, p, JR_Q_PHOTO_JOB_INSERT, &ins,
                     JR_ARGS(jr_i64(p, entry), jr_i64(p, branch), ai ? "ai" : "enhance",
                             jr_json_dump(p, params, NULL),
                             jr_rows_get(photos, cur, "sha256"), now, now,
                             jr_opt_i64(p, ctx->who.user_id))) != APR_SUCCESS ||
        ins->nrows != 1 ||
        jr_audit(ctx, "create", "photo_job", (job = jr_rows_int(ins, 0, "id", 0)),
                 jr_json_own(p, json_pack("[s,s]", "action", "params"))) != APR_SUCCESS) {
        return jr_err_write(ctx, res, NULL);
    }
    jr_queue_wake(ctx->db, "journal_photo");
    return reply_job(ctx, res, 202, entry, job);
}

int jr_op_photo_enhance_ai(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    return enqueue(ctx, in, res, 1);
}

int jr_op_photo_enhance(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    return enqueue(ctx, in, res, 0);
}

int jr_op_photo_jobs_list(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    long long entry = entry_of(ctx, res, NULL);
    jr_rows_t *rows;
    if (!entry) {
        return res->status;
    }
    if (jr_db_select(ctx->db, p, JR_Q_PHOTO_JOBS_OF_ENTRY, &rows, JR_ARGS(jr_i64(p, entry))) !=
        APR_SUCCESS) {
        return jr_err_db(ctx, res);
    }
    return jr_reply_rows(ctx, res, NULL, NULL, job_write, rows, rows->nrows, rows->nrows, 0);
}

/* ---- the result ----------------------------------------------------------------------------- */

/* 1 when the job is done and not applied (its result waits for a decision). */
static int undecided(const jr_rows_t *rows)
{
    const char *st = jr_rows_get(rows, 0, "status");
    return st && !strcmp(st, "done") && jr_rows_int(rows, 0, "applied", 0) == 0 &&
           jr_rows_get(rows, 0, "result_file");
}

static int not_undecided(jr_ctx_t *ctx, jr_result_t *res, const jr_rows_t *rows)
{
    return jr_err_conflict(ctx, res,
                           "the job is %s%s: only a done job that is not applied has a result to "
                           "apply, reject or preview",
                           jr_rows_get(rows, 0, "status"),
                           jr_rows_int(rows, 0, "applied", 0) ? " and applied" : "");
}

int jr_op_photo_job_result(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    long long entry = entry_of(ctx, res, NULL);
    jr_rows_t *rows;
    jr_file_reply_t *f;
    apr_finfo_t fi;
    const char *path;

    if (!entry || !(rows = job_of(ctx, res, entry, JR_Q_PHOTO_JOB_GET))) {
        return res->status;
    }
    if (!undecided(rows)) {
        return not_undecided(ctx, res, rows);
    }
    path = jr_storage_path(p, ctx->cfg->data_dir, jr_rows_get(rows, 0, "result_file"));
    if (!path || apr_stat(&fi, path, APR_FINFO_SIZE | APR_FINFO_MTIME | APR_FINFO_TYPE, p) !=
                     APR_SUCCESS ||
        fi.filetype != APR_REG) {
        JR_LOG(JR08003, 0, "the result of photo job %s is missing", jr_rows_get(rows, 0, "id"));
        return jr_fail(res, p, 404, "the result is no longer stored");
    }
    f = apr_pcalloc(p, sizeof(*f));
    f->path = path;
    f->size = fi.size;
    f->content_type = jr_rows_get(rows, 0, "result_type");
    f->filename = jr_psprintf(p, "photo-job-%s", jr_rows_get(rows, 0, "id"));
    f->etag = jr_rows_get(rows, 0, "result_sha256");
    f->mtime = fi.mtime;
    res->status = 200;
    res->body = NULL;
    res->file = f;
    return res->status;
}

/* ---- decisions ------------------------------------------------------------------------------ */

/* The job of the path for a decision, locked in the road's transaction and undecided. NULL
 * when res holds the answer. */
static jr_rows_t *decision_begin(jr_ctx_t *ctx, jr_result_t *res, long long *entry)
{
    jr_rows_t *job;
    if (!(*entry = entry_of(ctx, res, NULL)) ||
        !(job = job_of(ctx, res, *entry, JR_Q_PHOTO_JOB_LOCK))) {
        return NULL;
    }
    if (!undecided(job)) {
        not_undecided(ctx, res, job);
        return NULL;
    }
    return job;
}

/* Moves the entry's current photo (if any) onto the history, in the open transaction. */
static apr_status_t push_current(jr_ctx_t *ctx, const jr_rows_t *photos)
{
    int cur = newest(photos, "current");
    return cur < 0 ? APR_SUCCESS
                   : jr_db_exec(ctx->db, ctx->pool, JR_Q_PHOTO_SET_ROLE, NULL,
                                JR_ARGS("previous", jr_rows_get(photos, cur, "id")));
}

/* A new current photo row. */
static apr_status_t insert_current(jr_ctx_t *ctx, long long entry, const char *stored,
                                   const char *size, const char *type, const char *sha256)
{
    apr_pool_t *p = ctx->pool;
    jr_rows_t *ins;
    return jr_db_select(ctx->db, p, JR_Q_PHOTO_INSERT, &ins,
                        JR_ARGS("entry", jr_i64(p, entry), "current", stored, size, type, sha256,
                                jr_now_iso(p), jr_opt_i64(p, ctx->who.user_id)));
}

int jr_op_photo_job_apply(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    long long entry, id;
    jr_rows_t *job = decision_begin(ctx, res, &entry), *photos;
    if (!job) {
        return res->status;
    }
    id = jr_rows_int(job, 0, "id", 0);
    if (!(photos = photos_locked(ctx, entry)) || push_current(ctx, photos) != APR_SUCCESS ||
        insert_current(ctx, entry, jr_rows_get(job, 0, "result_file"),
                       jr_rows_get(job, 0, "result_size"), jr_rows_get(job, 0, "result_type"),
                       jr_rows_get(job, 0, "result_sha256")) != APR_SUCCESS ||
        jr_db_exec(ctx->db, p, JR_Q_PHOTO_JOB_APPLIED, NULL,
                   JR_ARGS(jr_now_iso(p), jr_i64(p, id))) != APR_SUCCESS ||
        jr_audit(ctx, "apply", "photo_job", id, NULL) != APR_SUCCESS) {
        return jr_err_write(ctx, res, NULL);
    }
    return reply_job(ctx, res, 200, entry, id);
}

int jr_op_photo_job_reject(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    long long entry, id;
    jr_rows_t *job = decision_begin(ctx, res, &entry);
    apr_array_header_t *names = apr_array_make(p, 1, sizeof(const char *));
    if (!job) {
        return res->status;
    }
    id = jr_rows_int(job, 0, "id", 0);
    if (jr_db_exec(ctx->db, p, JR_Q_PHOTO_JOB_REJECTED, NULL,
                   JR_ARGS(jr_now_iso(p), jr_i64(p, id))) != APR_SUCCESS ||
        jr_audit(ctx, "reject", "photo_job", id, NULL) != APR_SUCCESS) {
        return jr_err_write(ctx, res, NULL);
    }
    APR_ARRAY_PUSH(names, const char *) = jr_rows_get(job, 0, "result_file");
    jr_storage_unlink_after_commit(ctx, names);
    return reply_job(ctx, res, 200, entry, id);
}

/* ---- the photo history ------------------------------------------------------------------ */

/* The entry's photo as it is now: current, with how deep the history is. */
static int reply_photo(jr_ctx_t *ctx, jr_result_t *res, long long entry)
{
    apr_pool_t *p = ctx->pool;
    jr_rows_t *rows;
    jr_jw_t w;
    int i, cur, n = 0;
    if (jr_db_select(ctx->db, p, JR_Q_PHOTOS_OF_OWNER, &rows, JR_ARGS("entry", jr_i64(p, entry))) !=
        APR_SUCCESS) {
        return jr_err_db(ctx, res);
    }
    for (i = 0; i < rows->nrows; ++i) {
        n += !strcmp(jr_rows_get(rows, i, "role"), "previous");
    }
    if ((cur = newest(rows, "current")) < 0) {
        return jr_err_conflict(ctx, res, "the entry has no photo");
    }
    i = cur;
    jr_jw_init(&w, p, 256);
    jr_jw_obj(&w);
    jr_jw_kint(&w, "entry_id", entry);
    STR(&w, "content_type");
    NUM(&w, "size");
    STR(&w, "sha256");
    STR(&w, "created_at");
    jr_jw_kint(&w, "history", n);
    jr_jw_obj_end(&w);
    return jr_reply_jw(res, 200, &w);
}

int jr_op_photo_rollback(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    apr_array_header_t *names = apr_array_make(p, 1, sizeof(const char *));
    long long entry;
    jr_rows_t *photos;
    int prev, cur;
    if ((prev = locked_photo(ctx, res, "previous", "the entry has no previous photo to return to",
                             &entry, NULL, &photos)) < 0) {
        return res->status;
    }
    /* The photo rolled back from is dropped: the history is a stack. */
    if (((cur = newest(photos, "current")) >= 0 &&
         jr_db_exec(ctx->db, p, JR_Q_PHOTO_DELETE_ID, NULL,
                    JR_ARGS(jr_rows_get(photos, cur, "id"))) != APR_SUCCESS) ||
        jr_db_exec(ctx->db, p, JR_Q_PHOTO_SET_ROLE, NULL,
                   JR_ARGS("current", jr_rows_get(photos, prev, "id"))) != APR_SUCCESS ||
        jr_audit(ctx, "rollback", "entry_photo", entry, NULL) != APR_SUCCESS) {
        return jr_err_write(ctx, res, NULL);
    }
    if (cur >= 0) {
        APR_ARRAY_PUSH(names, const char *) = jr_rows_get(photos, cur, "stored_name");
        jr_storage_unlink_after_commit(ctx, names);
    }
    return reply_photo(ctx, res, entry);
}

int jr_op_photo_restore_original(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    apr_array_header_t *names = apr_array_make(p, 1, sizeof(const char *));
    jr_stored_t orig, copy;
    long long entry;
    jr_rows_t *photos;
    apr_status_t rv;
    int o, cur;

    if ((o = locked_photo(ctx, res, "original", "the entry has no original photo", &entry, NULL,
                          &photos)) < 0) {
        return res->status;
    }
    cur = newest(photos, "current");
    if (cur >= 0 && !strcmp(jr_rows_get(photos, cur, "sha256"), jr_rows_get(photos, o, "sha256"))) {
        return reply_photo(ctx, res, entry); /* the original is current already */
    }
    /* The original row keeps its own file: the current photo gets a copy of it. */
    orig.stored_name = jr_rows_get(photos, o, "stored_name");
    orig.sha256 = jr_rows_get(photos, o, "sha256");
    orig.size = (apr_off_t)jr_rows_int(photos, o, "size", 0);
    if ((rv = jr_storage_duplicate(&copy, p, ctx->cfg->data_dir, JR_STORAGE_PHOTOS, &orig)) !=
        APR_SUCCESS) {
        JR_LOG(JR08004, rv, "cannot copy the original photo of entry %lld", entry);
        return jr_fail(res, p, 500, "the original photo could not be copied");
    }
    APR_ARRAY_PUSH(names, const char *) = copy.stored_name;
    jr_storage_unlink_on_rollback(ctx, names);
    if (push_current(ctx, photos) != APR_SUCCESS ||
        insert_current(ctx, entry, copy.stored_name, jr_rows_get(photos, o, "size"),
                       jr_rows_get(photos, o, "content_type"), copy.sha256) != APR_SUCCESS ||
        jr_audit(ctx, "restore_original", "entry_photo", entry, NULL) != APR_SUCCESS) {
        return jr_err_write(ctx, res, NULL);
    }
    return reply_photo(ctx, res, entry);
}

/* ---- the worker switch and the service ---------------------------------------------------- */

int jr_op_photo_jobs_enabled(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    const char *name = jr_setting_name(JR_SETTING_PHOTO_WORKER_ENABLED);
    int on = json_is_true(json_object_get(in, "enabled"));
    jr_jw_t w;
    if (jr_db_exec(ctx->db, p, JR_Q_SETTING_UPSERT, NULL,
                   JR_ARGS(name, on ? "true" : "false", jr_now_iso(p),
                           jr_opt_i64(p, ctx->who.user_id))) != APR_SUCCESS ||
        jr_queue_signal(ctx, "journal_photo") != APR_SUCCESS ||
        jr_audit_ref(ctx, "update", "settings", NULL, jr_json_own(p, json_pack("[s]", name))) !=
            APR_SUCCESS) {
        return jr_err_write(ctx, res, NULL);
    }
    jr_jw_init(&w, p, 32);
    jr_jw_obj(&w);
    jr_jw_kbool(&w, "enabled", on);
    jr_jw_obj_end(&w);
    return jr_reply_jw(res, 200, &w);
}

#define HEALTH_TIMEOUT_MS 2000L /* spec 8: the health call in a stack status */
#define HEALTH_BODY_MAX 65536

typedef struct {
    char *buf;
    size_t len;
    apr_pool_t *pool;
} health_body_t;

static size_t health_write(char *data, size_t size, size_t n, void *baton)
{
    health_body_t *b = baton;
    size_t len = size * n;
    char *grown;
    if (b->len + len > HEALTH_BODY_MAX) {
        return 0;
    }
    grown = apr_palloc(b->pool, b->len + len + 1);
    memcpy(grown, b->buf, b->len);
    memcpy(grown + b->len, data, len);
    b->len += len;
    grown[b->len] = '\0';
    b->buf = grown;
    return len;
}

/* {ok: false, error} when the service cannot be asked. */
static int health_fail(jr_result_t *res, apr_pool_t *p, int status, const char *error)
{
    jr_jw_t w;
    jr_jw_init(&w, p, 256);
    jr_jw_obj(&w);
    jr_jw_kbool(&w, "ok", 0);
    jr_jw_kstr(&w, "error", error);
    jr_jw_obj_end(&w);
    jr_reply_jw(res, status, &w);
    res->error = error;
    return status;
}

int jr_op_photo_ai_health(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    const char *ep = ctx->cfg->photo_ai_endpoint;
    health_body_t body = {apr_pstrdup(p, ""), 0, p};
    apr_time_t t0 = apr_time_now();
    json_t *upstream;
    jr_jw_t w;
    CURLcode rc;
    long status = 0;
    CURL *h;

    if (!ep) {
        return health_fail(res, p, 502, "the photo service is not configured "
                                        "(JournalPhotoAIEndpoint)");
    }
    if (!(h = curl_easy_init())) {
        return health_fail(res, p, 502, "cannot reach the photo service");
    }
    curl_easy_setopt(h, CURLOPT_URL, apr_pstrcat(p, ep, "/health", NULL));
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, HEALTH_TIMEOUT_MS);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, health_write);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &body);
    rc = curl_easy_perform(h);
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_cleanup(h);
    if (rc == CURLE_OPERATION_TIMEDOUT) {
        return health_fail(res, p, 504, "the photo service did not answer within 2000 ms");
    }
    if (rc != CURLE_OK) {
        return health_fail(res, p, 502, "cannot connect to the photo service");
    }
    if (status != 200) {
        return health_fail(res, p, 502,
                           apr_psprintf(p, "the photo service answered HTTP %ld", status));
    }
    if (!(upstream = jr_json_own(p, json_loadb(body.buf, body.len, 0, NULL)))) {
        return health_fail(res, p, 502, "the photo service's health answer is not JSON");
    }
    jr_jw_init(&w, p, 256 + body.len);
    jr_jw_obj(&w);
    jr_jw_kbool(&w, "ok", 1);
    jr_jw_kint(&w, "latency_ms", (long long)apr_time_as_msec(apr_time_now() - t0));
    jr_jw_key(&w, "upstream");
    jr_jw_json(&w, upstream); /* the service's own answer, as it gave it */
    jr_jw_obj_end(&w);
    return jr_reply_jw(res, 200, &w);
}
