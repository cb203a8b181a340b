/* Share links as families open them, without an account. An unknown, expired or revoked
 * link, or one whose target is gone, answers the same 404. What is shown: names, dates,
 * topics, texts, module names, and the photos and files through the link; never user names,
 * ids of records, audit data or keys. */
#include <string.h>

#include <apr_hash.h>
#include <apr_strings.h>

#include "jr_bans.h"
#include "jr_counters.h"
#include "jr_crypt.h"
#include "jr_files.h"
#include "jr_json.h"
#include "jr_jw.h"
#include "jr_log.h"
#include "jr_share.h"
#include "jr_stmts.h"
#include "jr_storage.h"
#include "jr_util.h"

/* A link that may be opened now, and what it points at. */
typedef struct {
    long long id, target;
    const char *kind, *token, *pw_hash;
    const char *grant; /* what proves the password for this link; NULL without one */
    jr_rows_t *head;   /* share_student or share_group */
} link_t;

/* The grant: a digest of the token and the password's bcrypt hash, which only the server
 * holds. It ends with the password (a new hash) and needs no table. */
static const char *grant_of(apr_pool_t *p, const char *token, const char *pw_hash)
{
    const char *s = apr_pstrcat(p, "share-grant\n", token, "\n", pw_hash, NULL);
    return jr_sha256_hex(p, s, strlen(s));
}

static int grant_ok(const link_t *l, const char *given)
{
    return given && strlen(given) == strlen(l->grant) &&
           jr_secure_equal(given, l->grant, strlen(l->grant));
}

/* Finds an open link and its live target. 1 found; otherwise 0 with res filled (403 for a
 * banned address, 404, 503). */
static int link_find(jr_ctx_t *ctx, jr_result_t *res, link_t *l)
{
    apr_pool_t *p = ctx->pool;
    jr_rows_t *rows;
    jr_stmt_id_t target;

    memset(l, 0, sizeof(*l));
    if (jr_ban_check(ctx, res) != 0) {
        return 0;
    }
    l->token = apr_table_get(ctx->params, "token");
    if (jr_db_select(ctx->db, p, JR_Q_SHARE_BY_TOKEN, &rows,
                     JR_ARGS(jr_share_token_hash(p, l->token), jr_now_iso(p))) != APR_SUCCESS) {
        jr_err_db(ctx, res);
        return 0;
    }
    if (rows->nrows == 1) {
        l->id = jr_rows_int(rows, 0, "id", 0);
        l->kind = jr_rows_get(rows, 0, "kind");
        l->target = jr_rows_int(rows, 0, "target_id", 0);
        l->pw_hash = jr_rows_get(rows, 0, "password_hash");
        l->grant = l->pw_hash ? grant_of(p, l->token, l->pw_hash) : NULL;
        target = !strcmp(l->kind, "student") ? JR_Q_SHARE_STUDENT : JR_Q_SHARE_GROUP;
        if (jr_db_select(ctx->db, p, target, &l->head, JR_ARGS(jr_i64(p, l->target))) !=
            APR_SUCCESS) {
            jr_err_db(ctx, res);
            return 0;
        }
        if (l->head->nrows == 1) {
            return 1;
        }
    }
    jr_err_not_found(ctx, res, "share link");
    return 0;
}

/* A stored name ("photos/ab/ab12...") in an address is one segment, "photos-ab12...":
 * httpd refuses an encoded slash in a path. */
static const char *url_name(apr_pool_t *p, const char *stored_name)
{
    const char *slash = strchr(stored_name, '/'), *last = strrchr(stored_name, '/');
    return slash ? apr_pstrcat(p, apr_pstrmemdup(p, stored_name, (apr_size_t)(slash - stored_name)),
                               "-", last + 1, NULL)
                 : stored_name;
}

/* The stored name of an address's segment; NULL when it cannot be one. */
static const char *stored_name_of(apr_pool_t *p, const char *segment)
{
    const char *dash = segment ? strchr(segment, '-') : NULL, *name;
    if (!dash || strlen(dash + 1) < 2) {
        return NULL;
    }
    name = apr_pstrcat(p, apr_pstrmemdup(p, segment, (apr_size_t)(dash - segment)), "/",
                       apr_pstrmemdup(p, dash + 1, 2), "/", dash + 1, NULL);
    return jr_storage_name_valid(name) ? name : NULL;
}

/* The address of a stored file through the link (with the grant of a password link). */
static const char *file_url(apr_pool_t *p, const link_t *l, const char *stored_name)
{
    return apr_pstrcat(p, "/api/share/", l->token, "/files/", url_name(p, stored_name),
                       l->grant ? "?grant=" : "", l->grant ? l->grant : "", NULL);
}

/* Row indexes by entry id, for the files and photos of the entries shown. */
static apr_hash_t *index_by_entry(apr_pool_t *p, const jr_rows_t *r)
{
    apr_hash_t *h = apr_hash_make(p);
    int i;
    for (i = r->nrows - 1; i >= 0; --i) { /* the first row of each entry wins */
        apr_hash_set(h, jr_rows_get(r, i, "entry_id"), APR_HASH_KEY_STRING,
                     apr_pmemdup(p, &i, sizeof(i)));
    }
    return h;
}

static void write_entry_files(jr_jw_t *w, const link_t *l, const char *entry, const jr_rows_t *files,
                              apr_hash_t *idx)
{
    int *first = apr_hash_get(idx, entry, APR_HASH_KEY_STRING), i;
    jr_jw_key(w, "files");
    jr_jw_arr(w);
    for (i = first ? *first : files->nrows;
         i < files->nrows && !strcmp(jr_rows_get(files, i, "entry_id"), entry); ++i) {
        jr_jw_obj(w);
        jr_jw_kstr(w, "name", jr_rows_get(files, i, "name"));
        jr_jw_kint_text(w, "size", jr_rows_get(files, i, "size"));
        jr_jw_kstr(w, "content_type", jr_rows_get(files, i, "content_type"));
        jr_jw_kstr(w, "url", file_url(w->pool, l, jr_rows_get(files, i, "stored_name")));
        jr_jw_obj_end(w);
    }
    jr_jw_arr_end(w);
}

static apr_status_t write_entries(jr_ctx_t *ctx, jr_jw_t *w, const link_t *l)
{
    apr_pool_t *p = ctx->pool;
    const char *sid = jr_i64(p, l->target);
    jr_rows_t *rows, *files, *photos;
    apr_hash_t *fidx, *pidx;
    apr_status_t rv;
    int i, *ph;

    if ((rv = jr_db_select(ctx->db, p, JR_Q_SHARE_ENTRIES, &rows, JR_ARGS(sid))) != APR_SUCCESS ||
        (rv = jr_db_select(ctx->db, p, JR_Q_SHARE_ENTRY_FILES, &files, JR_ARGS(sid))) != APR_SUCCESS ||
        (rv = jr_db_select(ctx->db, p, JR_Q_SHARE_ENTRY_PHOTOS, &photos, JR_ARGS(sid))) !=
            APR_SUCCESS) {
        return rv;
    }
    fidx = index_by_entry(p, files);
    pidx = index_by_entry(p, photos);
    jr_jw_key(w, "entries");
    jr_jw_arr(w);
    for (i = 0; i < rows->nrows; ++i) {
        const char *id = jr_rows_get(rows, i, "id");
        jr_jw_obj(w);
        jr_jw_kstr(w, "created_at", jr_rows_get(rows, i, "created_at"));
        jr_jw_kstr(w, "description", jr_rows_get(rows, i, "description"));
        jr_jw_kstr(w, "module_name", jr_rows_get(rows, i, "module_name"));
        ph = apr_hash_get(pidx, id, APR_HASH_KEY_STRING);
        jr_jw_kstr(w, "photo_url",
                   ph ? file_url(p, l, jr_rows_get(photos, *ph, "stored_name")) : NULL);
        write_entry_files(w, l, id, files, fidx);
        jr_jw_obj_end(w);
    }
    jr_jw_arr_end(w);
    return APR_SUCCESS;
}

static apr_status_t write_reports(jr_ctx_t *ctx, jr_jw_t *w, const link_t *l)
{
    jr_rows_t *rows;
    apr_status_t rv;
    int i;
    if ((rv = jr_db_select(ctx->db, ctx->pool, JR_Q_SHARE_REPORTS, &rows,
                           JR_ARGS(jr_rows_get(l->head, 0, "group_id")))) != APR_SUCCESS) {
        return rv;
    }
    jr_jw_key(w, "lesson_reports");
    jr_jw_arr(w);
    for (i = 0; i < rows->nrows; ++i) {
        jr_jw_obj(w);
        jr_jw_kstr(w, "lesson_date", jr_rows_get(rows, i, "lesson_date"));
        jr_jw_kstr(w, "lesson_time", jr_rows_get(rows, i, "lesson_time"));
        jr_jw_kstr(w, "topic", jr_rows_get(rows, i, "topic"));
        jr_jw_kstr(w, "text", jr_rows_get(rows, i, "text"));
        jr_jw_obj_end(w);
    }
    jr_jw_arr_end(w);
    return APR_SUCCESS;
}

/* The shared content; counts the opening. */
static apr_status_t reply_content(jr_ctx_t *ctx, jr_result_t *res, const link_t *l)
{
    apr_pool_t *p = ctx->pool;
    int student = !strcmp(l->kind, "student");
    jr_jw_t w;

    if (jr_db_exec(ctx->db, p, JR_Q_SHARE_OPENED, NULL, JR_ARGS(jr_now_iso(p), jr_i64(p, l->id))) !=
        APR_SUCCESS) {
        return jr_err_db(ctx, res);
    }
    jr_jw_init(&w, p, 8192);
    jr_jw_obj(&w);
    jr_jw_kstr(&w, "kind", l->kind);
    jr_jw_kstr(&w, "student_name", student ? jr_rows_get(l->head, 0, "name") : NULL);
    jr_jw_kstr(&w, "group_name", jr_rows_get(l->head, 0, "group_name"));
    if (l->grant) {
        jr_jw_kstr(&w, "grant", l->grant);
    }
    if ((student && write_entries(ctx, &w, l) != APR_SUCCESS) ||
        write_reports(ctx, &w, l) != APR_SUCCESS) {
        return jr_err_db(ctx, res);
    }
    jr_jw_obj_end(&w);
    return jr_reply_jw(res, 200, &w);
}

static apr_status_t refuse_password(jr_ctx_t *ctx, jr_result_t *res, int status, const char *msg)
{
    jr_jw_t w;
    jr_jw_init(&w, ctx->pool, 128);
    jr_jw_obj(&w);
    jr_jw_kstr(&w, "error", msg);
    jr_jw_kbool(&w, "password_required", 1);
    jr_jw_obj_end(&w);
    jr_reply_jw(res, status, &w);
    res->error = msg;
    return status;
}

int jr_op_share_open(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    link_t l;
    if (!link_find(ctx, res, &l)) {
        return APR_SUCCESS;
    }
    if (l.grant && !grant_ok(&l, apr_table_get(ctx->query, "grant"))) {
        return refuse_password(ctx, res, 401,
                               "this link needs a password: POST {\"password\": ...} to it");
    }
    return reply_content(ctx, res, &l);
}

/* Checks a password against the link, through the link's throttle (every address together)
 * and the address's failure count (a ban after JR_SHARE_BAN_THRESHOLD). 1 when right;
 * otherwise 0 with res filled. */
static int password_ok(jr_ctx_t *ctx, jr_result_t *res, const link_t *l, const char *password)
{
    const jr_config_t *c = ctx->cfg;
    jr_throttle_cfg_t tc = {c->login_throttle_threshold, c->login_throttle_window,
                            JR_LOGIN_THROTTLE_FIRST, c->login_throttle_max_backoff};
    const char *account = apr_pstrcat(ctx->pool, "share:", jr_i64(ctx->pool, l->id), NULL);
    const char *source = jr_ip_subject(ctx->pool, ctx->client_ip);
    jr_throttle_t th;

    if (!ctx->counters || ctx->counters->ops->login_attempt(ctx->counters, account,
                                                           source ? source : "", &tc,
                                                           apr_time_now(), &th) != APR_SUCCESS) {
        jr_fail(res, ctx->pool, 503, "rate limiting unavailable; try again later");
        return 0;
    }
    if (th.refused) {
        apr_table_setn(res->headers, "Retry-After", apr_itoa(ctx->pool, th.retry_after));
        jr_fail(res, ctx->pool, 429, "too many wrong passwords for this link; retry in %d s",
                th.retry_after);
        return 0;
    }
    if (!jr_password_check(password, l->pw_hash)) {
        /* The ban itself is logged (JR03001) and audited by jr_ban_add. */
        jr_ban_count_failure(ctx, "share", JR_SHARE_BAN_THRESHOLD, JR_SHARE_BAN_WINDOW,
                             JR_SHARE_BAN_DURATION, JR_BAN_SHARE);
        refuse_password(ctx, res, 401, "password: wrong password");
        return 0;
    }
    ctx->counters->ops->login_ok(ctx->counters, account, source ? source : "", apr_time_now());
    return 1;
}

int jr_op_share_unlock(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    const char *msg;
    link_t l;
    if (!link_find(ctx, res, &l)) {
        return APR_SUCCESS;
    }
    if ((msg = jr_json_validate(ctx->pool, in, jr_fields_share[1].fields)) != NULL) {
        return jr_fail(res, ctx->pool, 400, "%s", msg);
    }
    if (l.pw_hash && !password_ok(ctx, res, &l, jr_json_str(in, "password", ""))) {
        return APR_SUCCESS;
    }
    return reply_content(ctx, res, &l);
}

int jr_op_share_file(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    const char *name = stored_name_of(p, apr_table_get(ctx->params, "name"));
    jr_rows_t *rows;
    link_t l;

    if (!link_find(ctx, res, &l)) {
        return APR_SUCCESS;
    }
    if (l.grant && !grant_ok(&l, apr_table_get(ctx->query, "grant"))) {
        return refuse_password(ctx, res, 401, "this link needs a password");
    }
    if (strcmp(l.kind, "student") || !name) {
        return jr_err_not_found(ctx, res, "file");
    }
    if (jr_db_select(ctx->db, p, JR_Q_SHARE_FILE, &rows,
                     JR_ARGS(name, jr_i64(p, l.target), name, jr_i64(p, l.target))) !=
        APR_SUCCESS) {
        return jr_err_db(ctx, res);
    }
    if (rows->nrows != 1) {
        return jr_err_not_found(ctx, res, "file");
    }
    if (!jr_files_reply_stored(ctx, res, rows, 0, jr_rows_get(rows, 0, "name"),
                               jr_rows_int(rows, 0, "attachment", 1) != 0)) {
        JR_LOG(JR10001, 0, "a file shared by link %lld is missing from storage", l.id);
        return jr_fail(res, p, 404, "the file is no longer stored");
    }
    return APR_SUCCESS;
}
