/* Restoring a backup. Everything is checked before anything changes: the archive is unpacked
 * into a staging directory beside the backups (same file system) while every member is
 * hashed, and compared with the manifest; then the records are replaced in one transaction,
 * and only after its commit the staged file trees take the place of the live ones (one
 * rename each). A failure at any step before the commit leaves the database and the files
 * as they were. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <apr_dbd.h>
#include <apr_strings.h>
#include <libpq-fe.h>

#include "jr_backup.h"
#include "jr_crypt.h"
#include "jr_events.h"
#include "jr_json.h"
#include "jr_jw.h"
#include "jr_log.h"
#include "jr_migrate.h"
#include "jr_notif.h"
#include "jr_stmts.h"
#include "jr_storage.h"
#include "jr_util.h"

typedef struct {
    jr_ctx_t *ctx;
    apr_pool_t *p;
    const char *staging;
    json_t *seen;     /* member -> sha256 of what was unpacked */
    json_t *manifest; /* parsed manifest.json */
    int *status;
    const char **err;
} restore_t;

static apr_status_t refuse(restore_t *r, const char *msg)
{
    *r->status = 400;
    *r->err = msg;
    return APR_EINVAL;
}

static apr_status_t broken(restore_t *r, int status, const char *msg)
{
    *r->status = status;
    *r->err = msg;
    return APR_EGENERAL;
}

static const jr_backup_table_t *table_of_member(const char *name)
{
    const jr_backup_table_t *const *t;
    size_t n;
    if (strncmp(name, "db/", 3)) {
        return NULL;
    }
    for (t = jr_backup_tables; *t; ++t) {
        n = strlen((*t)->table);
        if (!strncmp(name + 3, (*t)->table, n) && !strcmp(name + 3 + n, ".jsonl")) {
            return *t;
        }
    }
    return NULL;
}

void jr_backup_rmtree(apr_pool_t *p, const char *dir)
{
    apr_pool_t *sub;
    apr_finfo_t fi;
    apr_dir_t *d;
    apr_pool_create(&sub, p);
    if (apr_dir_open(&d, dir, sub) == APR_SUCCESS) {
        while (apr_dir_read(&fi, APR_FINFO_NAME | APR_FINFO_TYPE, d) == APR_SUCCESS) {
            const char *path = apr_pstrcat(sub, dir, "/", fi.name, NULL);
            if (!strcmp(fi.name, ".") || !strcmp(fi.name, "..")) {
                continue;
            }
            if (fi.filetype == APR_DIR) {
                jr_backup_rmtree(sub, path);
            } else {
                apr_file_remove(path, sub);
            }
        }
        apr_dir_close(d);
    }
    apr_dir_remove(dir, sub);
    apr_pool_destroy(sub);
}

/* Unpacks one member into the staging directory and records its digest. */
static apr_status_t unpack_member(restore_t *r, jr_tar_t *tar, const char *name,
                                  apr_pool_t *scratch)
{
    const char *path = apr_pstrcat(scratch, r->staging, "/", name, NULL), *sum, *slash;
    apr_off_t size;

    if (strcmp(name, "manifest.json") && !table_of_member(name) && !jr_storage_name_valid(name)) {
        return refuse(r, "the archive holds a member that is not part of a backup");
    }
    if (json_object_get(r->seen, name)) {
        return refuse(r, "the archive holds a member twice");
    }
    slash = strrchr(path, '/');
    if (apr_dir_make_recursive(apr_pstrmemdup(scratch, path, (apr_size_t)(slash - path)),
                               APR_FPROT_UREAD | APR_FPROT_UWRITE | APR_FPROT_UEXECUTE,
                               scratch) != APR_SUCCESS) {
        return broken(r, 500, "cannot write the staging directory");
    }
    if (jr_tar_extract(tar, path, scratch) != APR_SUCCESS) {
        return refuse(r, "the archive is damaged or truncated");
    }
    if (jr_storage_sha256_file(&sum, &size, scratch, path) != APR_SUCCESS) {
        return broken(r, 500, "cannot read the staging directory");
    }
    json_object_set_new(r->seen, name, json_string(sum));
    return APR_SUCCESS;
}

static apr_status_t unpack(restore_t *r, const char *archive)
{
    apr_pool_t *scratch;
    const char *name;
    apr_off_t size;
    jr_tar_t *tar;
    apr_status_t rv = APR_SUCCESS;

    apr_pool_create(&scratch, r->p);
    if (jr_tar_open(&tar, r->p, archive) != APR_SUCCESS) {
        return refuse(r, "the archive cannot be opened");
    }
    for (;;) {
        apr_pool_clear(scratch);
        if (jr_tar_next(tar, &name, &size, scratch) != APR_SUCCESS) {
            rv = refuse(r, "the archive is damaged or truncated");
            break;
        }
        if (!name || (rv = unpack_member(r, tar, name, scratch)) != APR_SUCCESS) {
            break;
        }
    }
    jr_tar_close(tar);
    apr_pool_destroy(scratch);
    return rv;
}

static json_t *read_manifest(restore_t *r)
{
    const char *path = apr_pstrcat(r->p, r->staging, "/manifest.json", NULL);
    json_error_t e;
    json_t *m = json_load_file(path, JSON_REJECT_DUPLICATES, &e);
    return m ? jr_json_own(r->p, m) : NULL;
}

/* The manifest against what was unpacked, and against this server's schema. */
static apr_status_t verify(restore_t *r)
{
    const jr_backup_table_t *const *t;
    json_t *m, *sums, *v;
    const char *member, *dberr = NULL;
    int schema = 0;

    if (!json_object_get(r->seen, "manifest.json") || !(m = read_manifest(r)) ||
        !json_is_object(m)) {
        return refuse(r, "manifest.json is missing or not JSON");
    }
    if (strcmp(jr_json_str(m, "format", ""), JR_BACKUP_FORMAT) ||
        jr_json_int(m, "format_version", 0) != JR_BACKUP_FORMAT_VERSION) {
        return refuse(r, "format_version: not a backup of this format");
    }
    if (jr_migrate_current(r->ctx->db, r->p, &schema, &dberr) != APR_SUCCESS) {
        return broken(r, 503, "database unavailable");
    }
    if (!json_is_integer(json_object_get(m, "schema_version")) ||
        jr_json_int(m, "schema_version", 0) < 1) {
        return refuse(r, "schema_version: missing or invalid");
    }
    if (jr_json_int(m, "schema_version", 0) > schema) {
        return refuse(r, "schema_version: the backup is of a newer schema than this server's");
    }
    if (!json_is_object(sums = json_object_get(m, "sha256")) ||
        !json_is_object(json_object_get(m, "counts"))) {
        return refuse(r, "manifest.json lacks sha256 or counts");
    }
    json_object_foreach(r->seen, member, v) {
        json_t *want = json_object_get(sums, member);
        if (strcmp(member, "manifest.json") &&
            (!json_is_string(want) || strcmp(json_string_value(want), json_string_value(v)))) {
            return refuse(r, "sha256: a member does not match the manifest's checksum");
        }
    }
    json_object_foreach(sums, member, v) {
        if (!json_object_get(r->seen, member)) {
            return refuse(r, "the archive lacks a member the manifest lists");
        }
    }
    for (t = jr_backup_tables; *t; ++t) {
        if (!json_object_get(r->seen, apr_pstrcat(r->p, "db/", (*t)->table, ".jsonl", NULL))) {
            return refuse(r, "the archive lacks a table");
        }
    }
    r->manifest = m;
    return APR_SUCCESS;
}

static int is_integer_text(const char *s)
{
    long long v;
    return jr_parse_int64(s, -9007199254740991LL, 9223372036854775807LL, &v) == 0;
}

/* The arguments of one row's insert, from one JSON line; NULL when the line is not a row. */
static const char **row_args(const jr_backup_table_t *t, const char *line, apr_pool_t *p)
{
    json_error_t e;
    json_t *o = json_loads(line, JSON_REJECT_DUPLICATES, &e), *v;
    const char **args;
    int n = 0, c;

    if (!o || !json_is_object(o)) {
        json_decref(o);
        return NULL;
    }
    jr_json_own(p, o);
    while (t->cols[n]) {
        ++n;
    }
    args = apr_pcalloc(p, sizeof(*args) * (size_t)n);
    for (c = 0; c < n; ++c) {
        /* A column the backup's older schema did not have stays NULL (its default). */
        v = json_object_get(o, t->cols[c]);
        if (v && !json_is_null(v)) {
            if (!json_is_string(v) ||
                (t->int_cols[c] == 'i' && !is_integer_text(json_string_value(v)))) {
                return NULL;
            }
            args[c] = apr_pstrdup(p, json_string_value(v));
        }
    }
    return args;
}

static apr_status_t load_table(restore_t *r, const jr_backup_table_t *t)
{
    apr_pool_t *p = r->p, *row;
    const char *path = apr_pstrcat(p, r->staging, "/db/", t->table, ".jsonl", NULL);
    const char **args;
    FILE *f = fopen(path, "r");
    char *line = NULL;
    size_t cap = 0;
    long long n = 0;
    int ncols = 0;
    apr_status_t rv = APR_SUCCESS;

    if (!f) {
        return broken(r, 500, "cannot read the staging directory");
    }
    while (t->cols[ncols]) {
        ++ncols;
    }
    apr_pool_create(&row, p);
    while (rv == APR_SUCCESS && getline(&line, &cap, f) > 0) {
        apr_pool_clear(row);
        if (!(args = row_args(t, line, row))) {
            rv = refuse(r, jr_psprintf(p, "db/%s.jsonl: line %lld is not a row", t->table, n + 1));
        } else if (jr_db_exec(r->ctx->db, row, t->ins, NULL, ncols, args) != APR_SUCCESS) {
            rv = refuse(r, jr_psprintf(p, "db/%s.jsonl: line %lld cannot be restored", t->table,
                                        n + 1));
        }
        ++n;
    }
    free(line);
    fclose(f);
    apr_pool_destroy(row);
    if (rv == APR_SUCCESS &&
        n != jr_json_int(json_object_get(r->manifest, "counts"), t->table, -1)) {
        rv = refuse(r, "counts: a table's rows differ from the manifest's count");
    }
    return rv;
}

/* On PostgreSQL, the counting triggers of entries, files and photos are switched off for the
 * restore transaction (ALTER TABLE is transactional; the restore holds the tables anyway):
 * each restored row would update the same counting row again, and one transaction's
 * versions of a row cannot be pruned, so the restore slowed down with the square of the
 * entries. Through the native handle: apr_dbd prepares what it runs, and DDL cannot be
 * prepared. */
static apr_status_t counting_triggers(restore_t *r, int on)
{
    PGresult *res;
    int ok;
    if (r->ctx->db->dialect != JR_DB_PGSQL) {
        return APR_SUCCESS;
    }
    res = PQexec(apr_dbd_native_handle(r->ctx->db->driver, r->ctx->db->handle),
                 on ? "ALTER TABLE entries ENABLE TRIGGER USER;"
                      " ALTER TABLE entry_files ENABLE TRIGGER USER;"
                      " ALTER TABLE photos ENABLE TRIGGER USER"
                    : "ALTER TABLE entries DISABLE TRIGGER USER;"
                      " ALTER TABLE entry_files DISABLE TRIGGER USER;"
                      " ALTER TABLE photos DISABLE TRIGGER USER");
    ok = PQresultStatus(res) == PGRES_COMMAND_OK;
    PQclear(res);
    return ok ? APR_SUCCESS : broken(r, 500, "the records could not be replaced");
}

static apr_status_t exec0(restore_t *r, jr_stmt_id_t id)
{
    return jr_db_exec(r->ctx->db, r->p, id, NULL, JR_NOARGS);
}

/* The restore's time as every synced record's updated_at (bk_touch_*). */
static apr_status_t touch_synced(restore_t *r)
{
    static const jr_stmt_id_t touch[] = {JR_Q_BK_TOUCH_BRANCHES, JR_Q_BK_TOUCH_STUDY_GROUPS,
                                         JR_Q_BK_TOUCH_STUDENTS, JR_Q_BK_TOUCH_MODULES,
                                         JR_Q_BK_TOUCH_ENTRIES,  JR_Q_BK_TOUCH_LESSON_REPORTS};
    const char *now = jr_now_iso(r->p);
    size_t i;
    for (i = 0; i < sizeof(touch) / sizeof(touch[0]); ++i) {
        if (jr_db_exec(r->ctx->db, r->p, touch[i], NULL, JR_ARGS(now)) != APR_SUCCESS) {
            return APR_EGENERAL;
        }
    }
    return APR_SUCCESS;
}

/* Every write of the restore, in the caller's transaction. */
static apr_status_t replace_records(restore_t *r, const char *name)
{
    static const jr_stmt_id_t first[] = {JR_Q_BK_DEL_SESSIONS, JR_Q_BK_DEL_API_KEYS,
                                         JR_Q_BK_DEL_AI_JOBS, JR_Q_BK_DEL_PHOTO_JOBS};
    const jr_backup_table_t *const *t;
    size_t l;
    jr_rows_t *rows;
    int n = 0;
    apr_status_t rv;

    if (counting_triggers(r, 0) != APR_SUCCESS) {
        return APR_EGENERAL;
    }
    for (l = 0; l < sizeof(first) / sizeof(first[0]); ++l) {
        if (exec0(r, first[l]) != APR_SUCCESS) {
            return broken(r, 500, "the records could not be replaced");
        }
    }
    while (jr_backup_tables[n]) {
        ++n;
    }
    while (n-- > 0) { /* children first */
        if (exec0(r, jr_backup_tables[n]->del) !=
            APR_SUCCESS) {
            return broken(r, 500, "the records could not be replaced");
        }
    }
    if (exec0(r, JR_Q_BK_DEL_ENTRY_COUNTS) != APR_SUCCESS) {
        return broken(r, 500, "the records could not be replaced");
    }
    for (t = jr_backup_tables; *t; ++t) {
        if ((rv = load_table(r, *t)) != APR_SUCCESS) {
            return rv;
        }
        if ((*t)->has_id &&
            jr_db_select(r->ctx->db, r->p, (*t)->seq, &rows,
                         JR_NOARGS) != APR_SUCCESS) {
            return broken(r, 500, "the identity sequences could not be reset");
        }
    }
    if (exec0(r, JR_Q_BK_FILES_COUNT) != APR_SUCCESS ||
        (r->ctx->db->dialect == JR_DB_PGSQL &&
         (exec0(r, JR_Q_BK_HAS_PHOTO) != APR_SUCCESS || exec0(r, JR_Q_BK_ENTRY_COUNTS) != APR_SUCCESS)) ||
        touch_synced(r) != APR_SUCCESS || counting_triggers(r, 1) != APR_SUCCESS ||
        jr_audit_ref(r->ctx, "restore", "backup", name, NULL) != APR_SUCCESS ||
        jr_event(r->ctx, "backup.restored", 0, "backup", 0,
                 jr_json_dump(r->p,
                              jr_json_own(r->p, json_pack("{s:s, s:O}", "name", name, "counts",
                                                          json_object_get(r->manifest, "counts"))),
                              NULL)) != APR_SUCCESS ||
        jr_notify(r->ctx, "backup.restored", 0, "backup", 0, "Backup restored",
                  apr_psprintf(r->p, "The journal was restored from %s", name)) != APR_SUCCESS) {
        return broken(r, 500, "the records could not be replaced");
    }
    return APR_SUCCESS;
}

/* After the commit: the staged trees replace the live ones, one rename each. 0 when done;
 * -1 when a tree could not be moved (the staging directory must then be kept). */
static int swap_files(restore_t *r)
{
    static const char *const subs[] = {JR_STORAGE_FILES, JR_STORAGE_PHOTOS};
    size_t i;
    for (i = 0; i < sizeof(subs) / sizeof(*subs); ++i) {
        const char *live = apr_pstrcat(r->p, r->ctx->cfg->data_dir, "/", subs[i], NULL);
        const char *staged = apr_pstrcat(r->p, r->staging, "/", subs[i], NULL);
        const char *old = apr_pstrcat(r->p, r->staging, "/old-", subs[i], NULL);
        apr_dir_make(staged, APR_FPROT_UREAD | APR_FPROT_UWRITE | APR_FPROT_UEXECUTE, r->p);
        apr_file_rename(live, old, r->p);
        if (apr_file_rename(staged, live, r->p) != APR_SUCCESS) {
            apr_file_rename(old, live, r->p);
            JR_LOG(JR10004, 0, "restore: the restored %s could not be moved into place; they "
                               "stay in %s", subs[i], staged);
            return -1;
        }
    }
    return 0;
}

apr_status_t jr_backup_restore(jr_ctx_t *ctx, const char *path, jr_backup_info_t *out,
                               int *status, const char **err)
{
    apr_pool_t *p = ctx->pool;
    unsigned char rnd[8];
    restore_t r = {ctx, p, NULL, NULL, NULL, status, err};
    int keep = 0;
    apr_status_t rv;

    *status = 200;
    *err = NULL;
    memset(out, 0, sizeof(*out));
    out->name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    if (jr_random_bytes(rnd, sizeof(rnd)) != 0) {
        return broken(&r, 500, "no random bytes");
    }
    r.staging = apr_pstrcat(p, ctx->cfg->data_dir, "/" JR_BACKUP_DIR "/.restore-",
                            jr_hex(p, rnd, sizeof(rnd)), NULL);
    r.seen = jr_json_own(p, json_object());
    if (apr_dir_make_recursive(r.staging, APR_FPROT_UREAD | APR_FPROT_UWRITE | APR_FPROT_UEXECUTE,
                               p) != APR_SUCCESS) {
        return broken(&r, 500, "cannot make the staging directory");
    }
    if ((rv = unpack(&r, path)) == APR_SUCCESS && (rv = verify(&r)) == APR_SUCCESS) {
        if ((rv = jr_db_begin(ctx->db)) != APR_SUCCESS) {
            rv = broken(&r, 503, "database unavailable");
        } else if ((rv = replace_records(&r, out->name)) != APR_SUCCESS) {
            jr_db_rollback(ctx->db);
        } else if ((rv = jr_db_commit(ctx->db)) != APR_SUCCESS) {
            rv = broken(&r, 503, "the restore could not be committed");
        } else {
            keep = swap_files(&r) != 0;
            out->counts = json_object_get(r.manifest, "counts");
        }
    }
    if (!keep) {
        jr_backup_rmtree(p, r.staging);
    }
    return rv;
}

static apr_status_t restore_reply(jr_ctx_t *ctx, jr_result_t *res, const char *path)
{
    jr_backup_info_t b;
    const char *err;
    int status;
    jr_jw_t w;
    if (jr_backup_restore(ctx, path, &b, &status, &err) != APR_SUCCESS) {
        if (status >= 500) {
            JR_LOG(JR10005, 0, "restore failed: %s", err ? err : "unknown error");
        }
        return jr_fail(res, ctx->pool, status, "%s", err ? err : "the restore failed");
    }
    jr_jw_init(&w, ctx->pool, 512);
    jr_jw_obj(&w);
    jr_jw_kbool(&w, "ok", 1);
    jr_jw_kstr(&w, "name", b.name);
    jr_jw_key(&w, "counts");
    jr_jw_json(&w, b.counts);
    jr_jw_kstr(&w, "message",
               "restored; every API key was deleted and every session ended: log in again");
    jr_jw_obj_end(&w);
    return jr_reply_jw(res, 200, &w);
}

apr_status_t jr_op_backups_restore(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    const char *path = jr_backup_path(ctx->pool, ctx->cfg->data_dir,
                                      apr_table_get(ctx->params, "name"));
    apr_finfo_t fi;
    if (!path || apr_stat(&fi, path, APR_FINFO_TYPE, ctx->pool) != APR_SUCCESS ||
        fi.filetype != APR_REG) {
        return jr_fail(res, ctx->pool, 404, "backup not found");
    }
    return restore_reply(ctx, res, path);
}

apr_status_t jr_op_backups_upload_restore(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    if (!ctx->upload || !ctx->upload->path || ctx->upload->size == 0) {
        return jr_fail(res, ctx->pool, 400, "body: send the backup archive as the request body");
    }
    return restore_reply(ctx, res, ctx->upload->path);
}
