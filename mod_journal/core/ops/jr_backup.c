/* Writing backups (one read transaction, one JSON-lines file per table, the stored files),
 * and the admin endpoints that list, download and delete them. */
#include <stdlib.h>
#include <string.h>

#include <apr_dbd.h>
#include <apr_strings.h>
#include <libpq-fe.h>
#include <sqlite3.h>

#include "jr_backup.h"
#include "jr_notif.h"
#include "jr_crypt.h"
#include "jr_events.h"
#include "jr_files.h"
#include "jr_json.h"
#include "jr_jw.h"
#include "jr_log.h"
#include "jr_migrate.h"
#include "jr_stmts.h"
#include "jr_storage.h"
#include "jr_util.h"

/* Per table: select a page after a given id (PostgreSQL's driver holds a whole result in
 * memory: pages keep it to BK_PAGE rows), insert with the same columns, delete all. Tables
 * without an id are small (memberships, settings) and read at once. */
#define BK_PAGE 2000

#define COLS(name, ...) static const char *const name[] = {__VA_ARGS__, NULL}
COLS(c_branches, "id", "name", "created_at", "updated_at");
COLS(c_users, "id", "username", "password_hash", "role", "active", "created_at", "updated_at");
COLS(c_user_branches, "user_id", "branch_id");
COLS(c_groups, "id", "name", "branch_id", "tutor_id", "created_at", "updated_at", "deleted_at",
     "deleted_by");
COLS(c_students, "id", "name", "name_key", "group_id", "notes", "created_at", "updated_at",
     "created_by");
COLS(c_modules, "id", "name", "lessons_count", "description", "created_at", "updated_at",
     "deleted_at", "deleted_by");
COLS(c_entries, "id", "student_name", "student_id", "group_id", "branch_id", "description",
     "module_id", "ai_status", "files_count", "has_photo", "created_at", "updated_at",
     "created_by", "created_by_key", "deleted_at", "deleted_by", "description_original",
     "ai_checked_at", "ai_error");
COLS(c_files, "id", "entry_id", "name", "stored_name", "size", "content_type", "sha256",
     "created_at", "created_by");
COLS(c_photos, "id", "owner_type", "owner_id", "role", "stored_name", "size", "content_type",
     "sha256", "created_at", "created_by");
COLS(c_reports, "id", "group_id", "branch_id", "lesson_date", "lesson_time", "text", "topic",
     "text_original", "text_ai", "ai_status", "ai_checked_at", "ai_error", "created_at",
     "updated_at", "created_by", "created_by_key");
COLS(c_versions, "id", "report_id", "text", "source", "created_at", "created_by",
     "created_by_key");
COLS(c_settings, "name", "value", "updated_at", "updated_by");
COLS(c_share, "id", "kind", "target_id", "token_hash", "password_hash", "expires_at",
     "created_by", "created_at", "revoked_at", "last_opened_at", "open_count");
COLS(c_audit, "id", "created_at", "actor_user_id", "actor_key_id", "via_api_key", "client_ip",
     "action", "entity_type", "entity_id", "changes");
COLS(c_chat, "id", "tutor_id", "sender_id", "text", "created_at");
COLS(c_chat_reads, "tutor_id", "user_id", "last_read_id");

/* A table with an identity column, whose sequence a restore resets, and one without. */
#define BK_TABLE(var, id, name, cols, ints)                                                        \
    static const jr_backup_table_t var = {name, cols, ints, 1, JR_Q_BK_SEL_##id, JR_Q_BK_INS_##id,  \
                                          JR_Q_BK_DEL_##id, JR_Q_BK_SEQ_##id}
#define BK_TABLE_NO_ID(var, id, name, cols, ints)                                                  \
    static const jr_backup_table_t var = {name, cols, ints, 0, JR_Q_BK_SEL_##id, JR_Q_BK_INS_##id,  \
                                          JR_Q_BK_DEL_##id, JR_Q__COUNT}
BK_TABLE(t_branches, BRANCHES, "branches", c_branches, "isss");
BK_TABLE(t_users, USERS, "users", c_users, "isssiss");
BK_TABLE_NO_ID(t_user_branches, USER_BRANCHES, "user_branches", c_user_branches, "ii");
BK_TABLE(t_groups, STUDY_GROUPS, "study_groups", c_groups, "isiisssi");
BK_TABLE(t_students, STUDENTS, "students", c_students, "ississsi");
BK_TABLE(t_modules, MODULES, "modules", c_modules, "isissssi");
BK_TABLE(t_entries, ENTRIES, "entries", c_entries, "isiiisisiissiisisss");
BK_TABLE(t_files, ENTRY_FILES, "entry_files", c_files, "iississsi");
BK_TABLE(t_photos, PHOTOS, "photos", c_photos, "isississsi");
BK_TABLE(t_reports, LESSON_REPORTS, "lesson_reports", c_reports, "iiisssssssssssii");
BK_TABLE(t_versions, LESSON_REPORT_VERSIONS, "lesson_report_versions", c_versions, "iisssii");
BK_TABLE_NO_ID(t_settings, SETTINGS, "settings", c_settings, "sssi");
BK_TABLE(t_share, SHARE_LINKS, "share_links", c_share, "isisssisssi");
BK_TABLE(t_audit, AUDIT_LOG, "audit_log", c_audit, "isiiisssss");
BK_TABLE(t_chat, CHAT_MESSAGES, "chat_messages", c_chat, "iiiss");
BK_TABLE_NO_ID(t_chat_reads, CHAT_READS, "chat_reads", c_chat_reads, "iii");

const jr_backup_table_t *const jr_backup_tables[] = {
    &t_branches, &t_users, &t_user_branches, &t_groups, &t_students, &t_modules, &t_entries,
    &t_files, &t_photos, &t_reports, &t_versions, &t_settings, &t_share, &t_audit, &t_chat,
    &t_chat_reads, NULL,
};

static int backup_name_ok(const char *name)
{
    /* journal-YYYYmmddTHHMMSSZ-<8 hex>.tar.gz */
    size_t i;
    if (!name || strlen(name) != 40 || strncmp(name, "journal-", 8) ||
        strcmp(name + 33, ".tar.gz") || name[16] != 'T' || name[23] != 'Z' || name[24] != '-') {
        return 0;
    }
    for (i = 8; i < 33; ++i) {
        int digit = name[i] >= '0' && name[i] <= '9', hex = digit || (name[i] >= 'a' && name[i] <= 'f');
        if ((i < 16 || (i > 16 && i < 23)) ? !digit : (i > 24 && !hex)) {
            return 0;
        }
    }
    return 1;
}

const char *jr_backup_path(apr_pool_t *p, const char *data_dir, const char *name)
{
    return backup_name_ok(name) ? apr_pstrcat(p, data_dir, "/" JR_BACKUP_DIR "/", name, NULL)
                                : NULL;
}

/* ---- writing -------------------------------------------------------------------------- */

typedef struct {
    apr_file_t *out;
    apr_pool_t *row_pool;
    apr_array_header_t *stored; /* stored names of entry_files and photos (const char *) */
    int stored_col;             /* column of stored_name, or -1 */
    apr_pool_t *p;
    long long n;
    int page;         /* rows of the current page */
    char last[24];    /* the id of the last row written (paged tables) */
    apr_status_t rv;
} dump_t;

static int dump_row(void *baton, const jr_rows_t *shape, const char *const *row)
{
    dump_t *d = baton;
    jr_jw_t w;
    const char *text;
    size_t len;
    int c;

    apr_pool_clear(d->row_pool);
    jr_jw_init(&w, d->row_pool, 1024);
    jr_jw_obj(&w);
    for (c = 0; c < shape->ncols; ++c) {
        jr_jw_kstr(&w, shape->names[c], row[c]);
    }
    jr_jw_obj_end(&w);
    text = jr_jw_done(&w, &len);
    if ((d->rv = apr_file_write_full(d->out, text, len, NULL)) != APR_SUCCESS ||
        (d->rv = apr_file_putc('\n', d->out)) != APR_SUCCESS) {
        return 1;
    }
    if (row[0]) { /* id comes first in the paged tables */
        apr_cpystrn(d->last, row[0], sizeof(d->last));
    }
    ++d->page;
    if (d->stored_col >= 0 && row[d->stored_col]) {
        APR_ARRAY_PUSH(d->stored, const char *) = apr_pstrdup(d->p, row[d->stored_col]);
    }
    ++d->n;
    return 0;
}

static int col_index(const jr_backup_table_t *t, const char *name)
{
    int c;
    for (c = 0; t->cols[c]; ++c) {
        if (!strcmp(t->cols[c], name)) {
            return c;
        }
    }
    return -1;
}

/* Every row of a table through dump_row: page after page for tables with an id. */
static apr_status_t select_pages(jr_ctx_t *ctx, const jr_backup_table_t *t, dump_t *d)
{
    apr_pool_t *page;
    apr_status_t rv;

    if (!t->has_id) {
        return jr_db_select_each(ctx->db, d->p, t->sel, dump_row, d, JR_NOARGS);
    }
    apr_pool_create(&page, d->p);
    strcpy(d->last, "0");
    do {
        apr_pool_clear(page);
        d->page = 0;
        rv = jr_db_select_each(ctx->db, page, t->sel, dump_row, d,
                               JR_ARGS(apr_pstrdup(page, d->last)));
    } while (rv == APR_SUCCESS && d->rv == APR_SUCCESS && d->page == BK_PAGE);
    apr_pool_destroy(page);
    return rv;
}

/* Writes one table to work/<table>.jsonl and adds it to the archive. */
static apr_status_t dump_table(jr_ctx_t *ctx, jr_tar_t *tar, const char *work,
                               const jr_backup_table_t *t, dump_t *d, json_t *counts,
                               json_t *sums)
{
    apr_pool_t *p = d->p;
    const char *path = apr_pstrcat(p, work, "/", t->table, ".jsonl", NULL), *member, *sum;
    apr_off_t size;
    apr_status_t rv;

    if ((rv = apr_file_open(&d->out, path, APR_FOPEN_WRITE | APR_FOPEN_CREATE | APR_FOPEN_EXCL |
                                               APR_FOPEN_BUFFERED,
                            APR_FPROT_UREAD | APR_FPROT_UWRITE, p)) != APR_SUCCESS) {
        return rv;
    }
    d->n = 0;
    d->rv = APR_SUCCESS;
    d->stored_col = (t == &t_files || t == &t_photos) ? col_index(t, "stored_name") : -1;
    rv = select_pages(ctx, t, d);
    apr_file_close(d->out);
    if (rv != APR_SUCCESS || d->rv != APR_SUCCESS) {
        return rv != APR_SUCCESS ? rv : d->rv;
    }
    member = apr_pstrcat(p, "db/", t->table, ".jsonl", NULL);
    if ((rv = jr_storage_sha256_file(&sum, &size, p, path)) != APR_SUCCESS ||
        (rv = jr_tar_add(tar, member, path, d->row_pool)) != APR_SUCCESS) {
        return rv;
    }
    json_object_set_new(counts, t->table, json_integer(d->n));
    json_object_set_new(sums, member, json_string(sum));
    apr_file_remove(path, p);
    return APR_SUCCESS;
}

static apr_status_t add_stored(jr_ctx_t *ctx, jr_tar_t *tar, const apr_array_header_t *names,
                               json_t *sums, apr_pool_t *scratch)
{
    const char *sum;
    apr_off_t size;
    apr_status_t rv;
    int i;
    for (i = 0; i < names->nelts; ++i) {
        const char *name = APR_ARRAY_IDX(names, i, const char *);
        const char *path = jr_storage_path(scratch, ctx->cfg->data_dir, name);
        if (!path || (rv = jr_storage_sha256_file(&sum, &size, scratch, path)) != APR_SUCCESS ||
            (rv = jr_tar_add(tar, name, path, scratch)) != APR_SUCCESS) {
            JR_LOG(JR10002, 0, "backup: the stored file %s cannot be read", name ? name : "?");
            return APR_EGENERAL;
        }
        json_object_set_new(sums, name, json_string(apr_pstrdup(ctx->pool, sum)));
        apr_pool_clear(scratch);
    }
    return APR_SUCCESS;
}

static apr_status_t add_manifest(jr_ctx_t *ctx, jr_tar_t *tar, const char *work, json_t *counts,
                                 json_t *sums, int schema, apr_pool_t *scratch)
{
    apr_pool_t *p = ctx->pool;
    const char *path = apr_pstrcat(p, work, "/manifest.json", NULL);
    json_t *m = jr_json_own(
        p, json_pack("{s:s, s:i, s:i, s:s, s:s, s:O, s:O}", "format", JR_BACKUP_FORMAT,
                     "format_version", JR_BACKUP_FORMAT_VERSION, "schema_version", schema,
                     "created_at", jr_now_iso(p), "database",
                     ctx->db->dialect == JR_DB_SQLITE ? "sqlite3" : "pgsql", "counts", counts,
                     "sha256", sums));
    size_t len;
    char *text = jr_json_dump(p, m, &len);
    apr_file_t *f;
    apr_status_t rv;

    if ((rv = apr_file_open(&f, path, APR_FOPEN_WRITE | APR_FOPEN_CREATE | APR_FOPEN_EXCL,
                            APR_FPROT_UREAD | APR_FPROT_UWRITE, p)) != APR_SUCCESS) {
        return rv;
    }
    rv = apr_file_write_full(f, text, len, NULL);
    apr_file_close(f);
    return rv == APR_SUCCESS ? jr_tar_add(tar, "manifest.json", path, scratch) : rv;
}

/* The read transaction of a backup: one snapshot of every table, without SQLite's write
 * lock (jr_db_begin takes it) and, on PostgreSQL, repeatable read (not a statement apr_dbd
 * can prepare), so both go through the native handle as the migrations do. */
static apr_status_t read_tx(jr_db_t *db, int begin)
{
    void *h = apr_dbd_native_handle(db->driver, db->handle);
    if (db->dialect == JR_DB_SQLITE) {
        return sqlite3_exec(h, begin ? "BEGIN" : "COMMIT", NULL, NULL, NULL) == SQLITE_OK
                   ? APR_SUCCESS
                   : APR_EGENERAL;
    } else {
        PGresult *r = PQexec(h, begin ? "START TRANSACTION ISOLATION LEVEL REPEATABLE READ, "
                                        "READ ONLY"
                                      : "COMMIT");
        int ok = PQresultStatus(r) == PGRES_COMMAND_OK;
        PQclear(r);
        return ok ? APR_SUCCESS : APR_EGENERAL;
    }
}

/* Every table and file, from one snapshot, into the archive at tmp. */
static apr_status_t write_archive(jr_ctx_t *ctx, const char *tmp, const char *work,
                                  json_t *counts, const char **err)
{
    apr_pool_t *p = ctx->pool, *scratch;
    json_t *sums = jr_json_own(p, json_object());
    const jr_backup_table_t *const *t;
    jr_tar_t *tar;
    dump_t d;
    int schema = 0, open = 0;
    apr_status_t rv;

    memset(&d, 0, sizeof(d));
    d.p = p;
    d.stored = apr_array_make(p, 64, sizeof(const char *));
    apr_pool_create(&d.row_pool, p);
    apr_pool_create(&scratch, p);
    if ((rv = jr_migrate_current(ctx->db, p, &schema, err)) != APR_SUCCESS ||
        (rv = jr_tar_create(&tar, p, tmp)) != APR_SUCCESS) {
        *err = *err ? *err : "cannot create the archive";
        return rv;
    }
    if ((rv = read_tx(ctx->db, 1)) != APR_SUCCESS) {
        *err = "cannot start a read transaction";
        return rv;
    }
    open = 1;
    for (t = jr_backup_tables; *t && rv == APR_SUCCESS; ++t) {
        rv = dump_table(ctx, tar, work, *t, &d, counts, sums);
    }
    /* The snapshot ends here; the files it names are only ever added, never changed. */
    if (rv == APR_SUCCESS && (rv = read_tx(ctx->db, 0)) == APR_SUCCESS) {
        open = 0;
        json_object_set_new(counts, "files", json_integer(d.stored->nelts));
        if ((rv = add_stored(ctx, tar, d.stored, sums, scratch)) == APR_SUCCESS &&
            (rv = add_manifest(ctx, tar, work, counts, sums, schema, scratch)) == APR_SUCCESS) {
            rv = jr_tar_finish(tar);
        }
    }
    if (open) {
        jr_db_rollback(ctx->db);
    }
    if (rv != APR_SUCCESS && !*err) {
        *err = "writing the archive failed";
    }
    return rv;
}

static apr_status_t make_dir(apr_pool_t *p, const char *path)
{
    apr_status_t rv = apr_dir_make_recursive(path, APR_FPROT_UREAD | APR_FPROT_UWRITE |
                                                       APR_FPROT_UEXECUTE, p);
    return rv == APR_SUCCESS || APR_STATUS_IS_EEXIST(rv) ? APR_SUCCESS : rv;
}

static apr_status_t record_created(jr_ctx_t *ctx, const jr_backup_info_t *b)
{
    apr_pool_t *p = ctx->pool;
    json_t *ev = jr_json_own(p, json_pack("{s:s, s:I, s:O}", "name", b->name,
                                          "size", (json_int_t)b->size, "counts", b->counts));
    apr_status_t rv;
    if ((rv = jr_db_begin(ctx->db)) != APR_SUCCESS) {
        return rv;
    }
    if ((rv = jr_audit_ref(ctx, "create", "backup", b->name, NULL)) != APR_SUCCESS ||
        (rv = jr_event(ctx, "backup.created", 0, "backup", 0, jr_json_dump(p, ev, NULL))) !=
            APR_SUCCESS ||
        (rv = jr_notify(ctx, "backup.created", 0, "backup", 0, "Backup created",
                        apr_psprintf(p, "%s (%" APR_OFF_T_FMT " bytes)", b->name, b->size))) !=
            APR_SUCCESS) {
        jr_db_rollback(ctx->db);
        return rv;
    }
    return jr_db_commit(ctx->db);
}

apr_status_t jr_backup_create(jr_ctx_t *ctx, jr_backup_info_t *out, const char **err)
{
    apr_pool_t *p = ctx->pool;
    const char *dir = apr_pstrcat(p, ctx->cfg->data_dir, "/" JR_BACKUP_DIR, NULL), *work, *tmp;
    const char *stamp = jr_now_iso(p), *final;
    unsigned char rnd[4];
    apr_finfo_t fi;
    apr_status_t rv;

    *err = NULL;
    memset(out, 0, sizeof(*out));
    if (jr_random_bytes(rnd, sizeof(rnd)) != 0) {
        *err = "no random bytes";
        return APR_EGENERAL;
    }
    /* 2026-11-23T10:00:00Z -> 20261123T100000Z */
    out->name = apr_psprintf(p, "journal-%.4s%.2s%.2sT%.2s%.2s%.2sZ-%s.tar.gz", stamp,
                             stamp + 5, stamp + 8, stamp + 11, stamp + 14, stamp + 17,
                             jr_hex(p, rnd, sizeof(rnd)));
    work = apr_pstrcat(p, dir, "/.work-", out->name, NULL);
    tmp = apr_pstrcat(p, dir, "/.tmp-", out->name, NULL);
    final = apr_pstrcat(p, dir, "/", out->name, NULL);
    out->counts = jr_json_own(p, json_object());
    if ((rv = make_dir(p, dir)) != APR_SUCCESS || (rv = make_dir(p, work)) != APR_SUCCESS) {
        *err = "cannot make the backups directory";
        return rv;
    }
    rv = write_archive(ctx, tmp, work, out->counts, err);
    jr_backup_rmtree(p, work);
    if (rv == APR_SUCCESS && (rv = apr_file_rename(tmp, final, p)) != APR_SUCCESS) {
        *err = "cannot rename the archive into place";
    }
    if (rv != APR_SUCCESS) {
        apr_file_remove(tmp, p);
        return rv;
    }
    if (apr_stat(&fi, final, APR_FINFO_SIZE, p) == APR_SUCCESS) {
        out->size = fi.size;
    }
    if ((rv = record_created(ctx, out)) != APR_SUCCESS) {
        *err = "cannot record the backup";
    }
    return rv;
}

/* ---- the endpoints -------------------------------------------------------------------- */


int jr_op_backups_create(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    jr_backup_info_t b;
    const char *err;
    jr_jw_t w;
    if (jr_backup_create(ctx, &b, &err) != APR_SUCCESS) {
        JR_LOG(JR10003, 0, "backup failed: %s", err ? err : "unknown error");
        return jr_fail(res, ctx->pool, 500, "the backup failed; see the server's error log");
    }
    jr_jw_init(&w, ctx->pool, 512);
    jr_jw_obj(&w);
    jr_jw_kstr(&w, "name", b.name);
    jr_jw_kint(&w, "size", (long long)b.size);
    jr_jw_key(&w, "counts");
    jr_jw_json(&w, b.counts);
    jr_jw_obj_end(&w);
    return jr_reply_jw(res, 201, &w);
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

apr_array_header_t *jr_backup_names(apr_pool_t *p, const char *data_dir, apr_time_t *newest)
{
    apr_array_header_t *names = apr_array_make(p, 16, sizeof(const char *));
    apr_finfo_t fi;
    apr_dir_t *d;
    *newest = 0;
    if (apr_dir_open(&d, apr_pstrcat(p, data_dir, "/" JR_BACKUP_DIR, NULL), p) == APR_SUCCESS) {
        while (apr_dir_read(&fi, APR_FINFO_NAME | APR_FINFO_MTIME | APR_FINFO_TYPE, d) ==
               APR_SUCCESS) {
            if (fi.filetype == APR_REG && backup_name_ok(fi.name)) {
                APR_ARRAY_PUSH(names, const char *) = apr_pstrdup(p, fi.name);
                *newest = fi.mtime > *newest ? fi.mtime : *newest;
            }
        }
        apr_dir_close(d);
    }
    qsort(names->elts, (size_t)names->nelts, sizeof(const char *), name_cmp);
    return names;
}

int jr_op_backups_list(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    apr_pool_t *p = ctx->pool;
    apr_time_t newest;
    apr_array_header_t *names = jr_backup_names(p, ctx->cfg->data_dir, &newest);
    apr_finfo_t fi;
    jr_jw_t w;
    int i;

    jr_jw_init(&w, p, 1024);
    jr_jw_arr(&w);
    for (i = names->nelts - 1; i >= 0; --i) { /* names sort by time: newest first */
        const char *name = APR_ARRAY_IDX(names, i, const char *);
        if (apr_stat(&fi, jr_backup_path(p, ctx->cfg->data_dir, name),
                     APR_FINFO_SIZE | APR_FINFO_MTIME, p) == APR_SUCCESS) {
            jr_jw_obj(&w);
            jr_jw_kstr(&w, "name", name);
            jr_jw_kint(&w, "size", (long long)fi.size);
            jr_jw_kstr(&w, "created_at", jr_iso_time(p, fi.mtime));
            jr_jw_obj_end(&w);
        }
    }
    jr_jw_arr_end(&w);
    return jr_reply_jw(res, 200, &w);
}

/* The path of the backup named in the route, or NULL with a 404 in res. */
static const char *named_backup(jr_ctx_t *ctx, jr_result_t *res, apr_finfo_t *fi)
{
    const char *name = apr_table_get(ctx->params, "name");
    const char *path = jr_backup_path(ctx->pool, ctx->cfg->data_dir, name);
    if (!path || apr_stat(fi, path, APR_FINFO_SIZE | APR_FINFO_MTIME | APR_FINFO_TYPE,
                          ctx->pool) != APR_SUCCESS ||
        fi->filetype != APR_REG) {
        jr_err_not_found(ctx, res, "backup");
        return NULL;
    }
    return path;
}

int jr_op_backups_download(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    jr_file_reply_t *f;
    apr_finfo_t fi;
    const char *path = named_backup(ctx, res, &fi);
    if (!path) {
        return APR_SUCCESS;
    }
    f = apr_pcalloc(ctx->pool, sizeof(*f));
    f->path = path;
    f->size = fi.size;
    f->content_type = "application/gzip";
    f->filename = apr_table_get(ctx->params, "name");
    f->attachment = 1;
    f->etag = apr_psprintf(ctx->pool, "%" APR_OFF_T_FMT "-%" APR_TIME_T_FMT, fi.size, fi.mtime);
    f->mtime = fi.mtime;
    res->status = 200;
    res->body = NULL;
    res->file = f;
    return APR_SUCCESS;
}

int jr_op_backups_delete(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    apr_finfo_t fi;
    const char *path = named_backup(ctx, res, &fi);
    if (!path) {
        return APR_SUCCESS;
    }
    if (jr_audit_ref(ctx, "delete", "backup", apr_table_get(ctx->params, "name"), NULL) !=
        APR_SUCCESS) {
        return jr_err_write(ctx, res, NULL);
    }
    if (apr_file_remove(path, ctx->pool) != APR_SUCCESS) {
        return jr_fail(res, ctx->pool, 500, "the backup could not be deleted");
    }
    return jr_reply_ok(res, ctx->pool);
}
