/* jr_storage.h, jr_magic.h, and the operations built on them (jr_files.h): entry files,
 * entry photos and group covers, driven on a migrated SQLite file and a temp data
 * directory. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <apr_file_io.h>
#include <apr_strings.h>

#include "jr_crypt.h"
#include "jr_files.h"
#include "jr_json.h"
#include "jr_magic.h"
#include "jr_storage.h"
#include "jr_util.h"
#include "ops_fixture.h"

void unit_rm_rf(const char *path)
{
    apr_pool_t *p;
    apr_dir_t *d;
    apr_finfo_t fi;
    if (apr_pool_create(&p, NULL) != APR_SUCCESS) {
        return;
    }
    if (apr_dir_open(&d, path, p) == APR_SUCCESS) {
        while (apr_dir_read(&fi, APR_FINFO_NAME | APR_FINFO_TYPE, d) == APR_SUCCESS) {
            const char *child;
            if (!strcmp(fi.name, ".") || !strcmp(fi.name, "..")) {
                continue;
            }
            child = apr_pstrcat(p, path, "/", fi.name, NULL);
            if (fi.filetype == APR_DIR) {
                unit_rm_rf(child);
            } else {
                unlink(child);
            }
        }
        apr_dir_close(d);
    }
    rmdir(path);
    apr_pool_destroy(p);
}

static char data_dir[32]; /* made and removed by the parent (unchecked fixture) */
static apr_pool_t *pool;

static void data_setup(void)
{
    strcpy(data_dir, "/tmp/jr-data-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(data_dir));
}

static void data_teardown(void)
{
    unit_rm_rf(data_dir);
}

static void setup(void)
{
    ck_assert_int_eq(apr_pool_create(&pool, NULL), APR_SUCCESS);
}

static void teardown(void)
{
    apr_pool_destroy(pool);
    pool = NULL;
}

/* A temp file under data_dir/tmp with these bytes, as the module leaves an upload. */
static const char *temp_with(apr_pool_t *p, const void *bytes, size_t len)
{
    apr_file_t *fd;
    const char *path;
    ck_assert_int_eq(jr_storage_tmpfile(&fd, &path, p, data_dir, "upload"), APR_SUCCESS);
    if (len) {
        ck_assert_int_eq(apr_file_write_full(fd, bytes, len, NULL), APR_SUCCESS);
    }
    apr_file_close(fd);
    return path;
}

static int exists(const char *path)
{
    apr_finfo_t fi;
    return apr_stat(&fi, path, APR_FINFO_TYPE, pool ? pool : fx_pool) == APR_SUCCESS;
}

static char *slurp(apr_pool_t *p, const char *path, apr_size_t *len)
{
    apr_finfo_t fi;
    apr_file_t *fd;
    char *buf;
    ck_assert_int_eq(apr_stat(&fi, path, APR_FINFO_SIZE, p), APR_SUCCESS);
    *len = (apr_size_t)fi.size;
    buf = apr_palloc(p, *len + 1);
    ck_assert_int_eq(apr_file_open(&fd, path, APR_FOPEN_READ | APR_FOPEN_BINARY, 0, p),
                     APR_SUCCESS);
    if (*len) {
        ck_assert_int_eq(apr_file_read_full(fd, buf, *len, NULL), APR_SUCCESS);
    }
    apr_file_close(fd);
    buf[*len] = '\0';
    return buf;
}

/* Regular files below dir, recursively. */
static int count_files(apr_pool_t *p, const char *dir)
{
    apr_dir_t *d;
    apr_finfo_t fi;
    int n = 0;
    if (apr_dir_open(&d, dir, p) != APR_SUCCESS) {
        return 0;
    }
    while (apr_dir_read(&fi, APR_FINFO_NAME | APR_FINFO_TYPE, d) == APR_SUCCESS) {
        if (!strcmp(fi.name, ".") || !strcmp(fi.name, "..")) {
            continue;
        }
        n += fi.filetype == APR_DIR ? count_files(p, apr_pstrcat(p, dir, "/", fi.name, NULL)) : 1;
    }
    apr_dir_close(d);
    return n;
}

#define SHA_ABC "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
#define SHA_EMPTY "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

/* ---- storage ------------------------------------------------------------------------- */

START_TEST(store_renames_into_place)
{
    const char *tmp = temp_with(pool, "abc", 3), *path;
    jr_stored_t a, b;
    apr_size_t n;

    ck_assert_int_eq(jr_storage_store(&a, pool, data_dir, JR_STORAGE_FILES, tmp), APR_SUCCESS);
    ck_assert_int_eq(exists(tmp), 0); /* renamed, not copied */
    ck_assert_int_eq(a.size, 3);
    ck_assert_str_eq(a.sha256, SHA_ABC);
    ck_assert_int_eq(jr_storage_name_valid(a.stored_name), 1);
    ck_assert_int_eq(strncmp(a.stored_name, "files/", 6), 0);
    ck_assert_int_eq(strncmp(a.stored_name + 6, a.stored_name + 9, 2), 0); /* shard = prefix */
    path = jr_storage_path(pool, data_dir, a.stored_name);
    ck_assert_str_eq(path, apr_pstrcat(pool, data_dir, "/", a.stored_name, NULL));
    ck_assert_str_eq(slurp(pool, path, &n), "abc");

    /* Every store gets a new random name, also for the same bytes. */
    tmp = temp_with(pool, "abc", 3);
    ck_assert_int_eq(jr_storage_store(&b, pool, data_dir, JR_STORAGE_PHOTOS, tmp), APR_SUCCESS);
    ck_assert_str_ne(a.stored_name, b.stored_name);
    ck_assert_int_eq(strncmp(b.stored_name, "photos/", 7), 0);
    ck_assert_str_eq(b.sha256, SHA_ABC);

    /* An empty file hashes as the empty string; a subdirectory of ours only. */
    tmp = temp_with(pool, "", 0);
    ck_assert_int_eq(jr_storage_store(&b, pool, data_dir, JR_STORAGE_FILES, tmp), APR_SUCCESS);
    ck_assert_str_eq(b.sha256, SHA_EMPTY);
    ck_assert_int_eq(b.size, 0);
    tmp = temp_with(pool, "abc", 3);
    ck_assert_int_eq(jr_storage_store(&b, pool, data_dir, "../etc", tmp), APR_EINVAL);
    ck_assert_int_eq(exists(tmp), 1);
    ck_assert_int_ne(jr_storage_store(&b, pool, data_dir, JR_STORAGE_FILES, "/nonexistent/x"),
                     APR_SUCCESS);
}
END_TEST

START_TEST(store_hashes_large_files)
{
    /* More than one read chunk: the streaming digest equals the one-shot digest. */
    apr_size_t size = 200 * 1024 + 17, i;
    char *bytes = apr_palloc(pool, size);
    jr_stored_t st;
    const char *hex;
    apr_off_t len;
    for (i = 0; i < size; ++i) {
        bytes[i] = (char)(i % 253);
    }
    ck_assert_int_eq(
        jr_storage_store(&st, pool, data_dir, JR_STORAGE_FILES, temp_with(pool, bytes, size)),
        APR_SUCCESS);
    ck_assert_int_eq(st.size, (apr_off_t)size);
    ck_assert_str_eq(st.sha256, jr_sha256_hex(pool, bytes, size));
    ck_assert_int_eq(
        jr_storage_sha256_file(&hex, &len, pool, jr_storage_path(pool, data_dir, st.stored_name)),
        APR_SUCCESS);
    ck_assert_str_eq(hex, st.sha256);
    ck_assert_int_eq(len, (apr_off_t)size);
}
END_TEST

START_TEST(stored_names)
{
    ck_assert_int_eq(jr_storage_name_valid("files/ab/ab0123456789abcdef0123456789abcd"), 1);
    ck_assert_int_eq(jr_storage_name_valid("photos/00/00000000000000000000000000000000"), 1);
    ck_assert_int_eq(jr_storage_name_valid("files/ab/ac0123456789abcdef0123456789abcd"), 0);
    ck_assert_int_eq(jr_storage_name_valid("files/AB/AB0123456789ABCDEF0123456789ABCD"), 0);
    ck_assert_int_eq(jr_storage_name_valid("files/ab/ab0123456789abcdef0123456789abc"), 0);
    ck_assert_int_eq(jr_storage_name_valid("files/ab/ab0123456789abcdef0123456789abcde"), 0);
    ck_assert_int_eq(jr_storage_name_valid("tmp/ab/ab0123456789abcdef0123456789abcd"), 0);
    ck_assert_int_eq(jr_storage_name_valid("files/../ab0123456789abcdef0123456789abcd"), 0);
    ck_assert_int_eq(jr_storage_name_valid("../files/ab/ab0123456789abcdef0123456789abcd"), 0);
    ck_assert_int_eq(jr_storage_name_valid("/etc/passwd"), 0);
    ck_assert_int_eq(jr_storage_name_valid(""), 0);
    ck_assert_int_eq(jr_storage_name_valid(NULL), 0);
    ck_assert_ptr_null(jr_storage_path(pool, data_dir, "../../etc/passwd"));
}
END_TEST

START_TEST(remove_and_duplicate)
{
    jr_stored_t st, copy;
    const char *path, *cpath;
    apr_array_header_t *names = apr_array_make(pool, 2, sizeof(const char *));
    apr_size_t n;
    jr_config_t cfg;
    jr_ctx_t ctx;

    ck_assert_int_eq(
        jr_storage_store(&st, pool, data_dir, JR_STORAGE_PHOTOS, temp_with(pool, "abc", 3)),
        APR_SUCCESS);
    ck_assert_int_eq(jr_storage_duplicate(&copy, pool, data_dir, JR_STORAGE_PHOTOS, &st),
                     APR_SUCCESS);
    ck_assert_str_ne(copy.stored_name, st.stored_name);
    ck_assert_str_eq(copy.sha256, SHA_ABC);
    ck_assert_int_eq(copy.size, 3);
    path = jr_storage_path(pool, data_dir, st.stored_name);
    cpath = jr_storage_path(pool, data_dir, copy.stored_name);

    ck_assert_int_eq(jr_storage_remove(pool, data_dir, st.stored_name), APR_SUCCESS);
    ck_assert_int_eq(exists(path), 0);
    ck_assert_str_eq(slurp(pool, cpath, &n), "abc"); /* the copy outlives the first */
    ck_assert_int_eq(jr_storage_remove(pool, data_dir, st.stored_name), APR_SUCCESS); /* gone */
    ck_assert_int_eq(jr_storage_remove(pool, data_dir, "../x"), APR_EINVAL);

    memset(&cfg, 0, sizeof(cfg));
    memset(&ctx, 0, sizeof(ctx));
    cfg.data_dir = data_dir;
    ctx.pool = pool;
    ctx.cfg = &cfg;
    APR_ARRAY_PUSH(names, const char *) = copy.stored_name;
    APR_ARRAY_PUSH(names, const char *) = "not/a/stored/name"; /* logged, skipped */
    jr_storage_unlink_all(&ctx, names);
    ck_assert_int_eq(exists(cpath), 0);
}
END_TEST

START_TEST(temp_files_go_with_the_pool)
{
    apr_pool_t *sub;
    const char *tmp, *kept;
    jr_stored_t st;
    ck_assert_int_eq(apr_pool_create(&sub, pool), APR_SUCCESS);
    tmp = apr_pstrdup(pool, temp_with(sub, "x", 1));
    kept = temp_with(sub, "y", 1);
    ck_assert_int_eq(
        strncmp(tmp, apr_pstrcat(pool, data_dir, "/tmp/upload-", NULL), strlen(data_dir) + 12), 0);
    ck_assert_int_eq(jr_storage_store(&st, sub, data_dir, JR_STORAGE_FILES, kept), APR_SUCCESS);
    st.stored_name = apr_pstrdup(pool, st.stored_name);
    apr_pool_destroy(sub);
    ck_assert_int_eq(exists(tmp), 0);
    ck_assert_int_eq(exists(jr_storage_path(pool, data_dir, st.stored_name)), 1);
}
END_TEST

static int mode_of(const char *path)
{
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    return (int)(st.st_mode & 07777);
}

START_TEST(stored_files_are_owner_only)
{
    mode_t before = umask(022); /* what httpd usually runs with */
    jr_stored_t st;
    const char *tmp = temp_with(pool, "abc", 3), *path;
    ck_assert_int_eq(mode_of(tmp), 0600);
    ck_assert_int_eq(mode_of(apr_pstrcat(pool, data_dir, "/tmp", NULL)), 0700);
    ck_assert_int_eq(jr_storage_store(&st, pool, data_dir, JR_STORAGE_PHOTOS, tmp), APR_SUCCESS);
    umask(before);
    path = jr_storage_path(pool, data_dir, st.stored_name);
    ck_assert_int_eq(mode_of(path), 0600);
    path = apr_pstrcat(pool, data_dir, "/", apr_pstrmemdup(pool, st.stored_name, 9), NULL);
    ck_assert_int_eq(mode_of(path), 0700);                                         /* shard */
    ck_assert_int_eq(mode_of(apr_pstrcat(pool, data_dir, "/photos", NULL)), 0700); /* subdir */
}
END_TEST

/* Sets a file's mtime to `age` seconds ago. */
static void age_file(const char *path, long age)
{
    apr_time_t t = apr_time_now() - apr_time_from_sec(age);
    ck_assert_int_eq(apr_file_mtime_set(path, t, pool), APR_SUCCESS);
}

START_TEST(sweep_removes_old_temp_files_only)
{
    const char *old = temp_with(pool, "old", 3), *fresh = temp_with(pool, "new", 3);
    const char *dir = apr_pstrcat(pool, data_dir, "/tmp/old-dir", NULL);
    const char *link = apr_pstrcat(pool, data_dir, "/tmp/old-link", NULL);
    int removed = -1, failed = -1;

    struct timespec link_age[2] = {{time(NULL) - 3 * 86400, 0}, {time(NULL) - 3 * 86400, 0}};

    ck_assert_int_eq(apr_dir_make(dir, APR_FPROT_OS_DEFAULT, pool), APR_SUCCESS);
    ck_assert_int_eq(symlink(fresh, link), 0);
    ck_assert_int_eq(utimensat(AT_FDCWD, link, link_age, AT_SYMLINK_NOFOLLOW), 0);
    age_file(old, 2 * 86400);
    age_file(dir, 3 * 86400);
    ck_assert_int_eq(jr_storage_sweep_tmp(pool, data_dir, apr_time_now() - apr_time_from_sec(86400),
                                          &removed, &failed),
                     APR_SUCCESS);
    ck_assert_int_eq(removed, 1);
    ck_assert_int_eq(failed, 0);
    ck_assert_int_eq(exists(old), 0);
    ck_assert_int_eq(exists(fresh), 1);
    ck_assert_int_eq(exists(dir), 1); /* only regular files are the module's temp files */
    ck_assert_int_eq(unlink(link), 0); /* an old link is not followed, nor removed */
    ck_assert_int_eq(rmdir(dir), 0);

    /* A data directory without tmp/ has nothing to sweep. */
    ck_assert_int_eq(jr_storage_sweep_tmp(pool, "/nonexistent-jr", apr_time_now(), &removed,
                                          &failed),
                     APR_SUCCESS);
    ck_assert_int_eq(removed, 0);
}
END_TEST

/* ---- magic --------------------------------------------------------------------------- */

static const unsigned char png[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0,    0,    0,
                                    13,   'I', 'H', 'D', 'R',  0,    0,    0,    1,    0,    0,
                                    0,    1,   8,   2,   0,    0,    0,    0x90, 0x77, 0x53, 0xde};
static const unsigned char jpeg[] = {0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 'J', 'F', 'I', 'F',  0,
                                     1,    1,    0,    0,    1, 0,    1,   0,   0,   0xff, 0xd9};
static const unsigned char webp[] = {'R', 'I',  'F', 'F', 0x24, 0, 0, 0, 'W',  'E', 'B', 'P',
                                     'V', 'P',  '8', ' ', 0x18, 0, 0, 0, 0x30, 1,   0,   0x9d,
                                     1,   0x2a, 1,   0,   1,    0, 0, 0, 0,    0,   0,   0};
static const unsigned char gif[] = {'G', 'I', 'F', '8', '9', 'a', 1, 0, 1, 0, 0x80, 0, 0};
static const unsigned char exe[] = {'M', 'Z', 0x90, 0, 3, 0, 0, 0, 4, 0, 0, 0, 0xff, 0xff, 0, 0};

static const char *sniff(const void *bytes, size_t len)
{
    const char *type = NULL;
    ck_assert_int_eq(jr_magic_file(&type, pool, temp_with(pool, bytes, len)), APR_SUCCESS);
    return type;
}

START_TEST(magic_sniffs_the_bytes)
{
    ck_assert_int_eq(jr_magic_init(pool), APR_SUCCESS); /* lazily opened otherwise */
    ck_assert_str_eq(sniff(png, sizeof(png)), "image/png");
    ck_assert_str_eq(sniff(jpeg, sizeof(jpeg)), "image/jpeg");
    ck_assert_str_eq(sniff(webp, sizeof(webp)), "image/webp");
    ck_assert_str_eq(sniff(gif, sizeof(gif)), "image/gif");
    ck_assert_str_eq(sniff("hello world\n", 12), "text/plain");
    ck_assert_str_eq(sniff("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n", 15), "application/pdf");
    ck_assert_str_ne(sniff(exe, sizeof(exe)), "text/plain");
    /* A name that claims an image does not make one. */
    {
        const char *type;
        const char *path = apr_pstrcat(pool, data_dir, "/tmp/looks.png", NULL);
        FILE *f = fopen(path, "wb");
        ck_assert_ptr_nonnull(f);
        fputs("not an image\n", f);
        fclose(f);
        ck_assert_int_eq(jr_magic_file(&type, pool, path), APR_SUCCESS);
        ck_assert_str_eq(type, "text/plain");
        unlink(path);
    }
}
END_TEST

START_TEST(magic_type_lists)
{
    const char *list = "application/pdf image/png  Text/Plain";
    ck_assert_int_eq(jr_magic_type_in("image/png", list), 1);
    ck_assert_int_eq(jr_magic_type_in("text/plain", list), 1);
    ck_assert_int_eq(jr_magic_type_in("application/pdf", list), 1);
    ck_assert_int_eq(jr_magic_type_in("image/pn", list), 0);
    ck_assert_int_eq(jr_magic_type_in("image", list), 0);
    ck_assert_int_eq(jr_magic_type_in("", list), 0);
    ck_assert_int_eq(jr_magic_type_in(NULL, list), 0);
    ck_assert_int_eq(jr_magic_type_in("image/png", NULL), 0);
    ck_assert_int_eq(jr_magic_type_in("image/jpeg", JR_PHOTO_TYPES), 1);
    ck_assert_int_eq(jr_magic_type_in("image/webp", JR_PHOTO_TYPES), 1);
    ck_assert_int_eq(jr_magic_type_in("image/gif", JR_PHOTO_TYPES), 0);
}
END_TEST

/* ---- operations ---------------------------------------------------------------------- */

static jr_config_t ops_cfg;
static long long branch_a, branch_b, group_a, group_b, entry_a, entry_b;

static long long new_entry(long long group, long long branch)
{
    return atoll(fx_sql(jr_psprintf(fx_pool,
                                    "INSERT INTO entries (student_name, group_id, branch_id,"
                                    " created_at, updated_at) VALUES ('Ann', %lld, %lld,"
                                    " '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z') RETURNING id",
                                    group, branch)));
}

static void ops_setup(void)
{
    unit_rm_rf(data_dir); /* each test starts with an empty data directory */
    ck_assert_int_eq(mkdir(data_dir, 0700), 0);
    fx_setup();
    pool = fx_pool;
    ops_cfg = *fx_ctx.cfg;
    ops_cfg.data_dir = data_dir;
    ops_cfg.upload_max = 64 * 1024;
    ops_cfg.upload_types = "text/plain application/pdf image/png image/jpeg";
    fx_ctx.cfg = &ops_cfg;
    branch_a = fx_new_branch("A");
    branch_b = fx_new_branch("B");
    group_a = fx_new_group("GA", branch_a);
    group_b = fx_new_group("GB", branch_b);
    entry_a = new_entry(group_a, branch_a);
    entry_b = new_entry(group_b, branch_b);
}

static void ops_teardown(void)
{
    pool = NULL;
    fx_teardown();
}

static jr_result_t run(jr_ctx_t *c, jr_op_fn *op)
{
    return fx_call_as(c, op, NULL);
}

/* Runs an upload operation on owner id with a body as the module hands it over. */
static jr_result_t send_upload(jr_ctx_t *c, jr_op_fn *op, long long id, const void *bytes,
                               size_t len, const char *content_type, const char *filename)
{
    jr_upload_t *up = apr_pcalloc(fx_pool, sizeof(*up));
    jr_result_t res;
    up->path = temp_with(fx_pool, bytes, len);
    up->size = (apr_off_t)len;
    up->content_type = content_type;
    up->filename = filename;
    c->upload = up;
    fx_set_id(c, id);
    res = run(c, op);
    c->upload = NULL;
    return res;
}

static const char *multipart(const char *name_field, const char *filename, const void *bytes,
                             size_t len, size_t *out_len)
{
    const char *head =
        apr_pstrcat(fx_pool, "--XyZ\r\nContent-Disposition: form-data; name=\"", name_field, "\"",
                    filename ? apr_pstrcat(fx_pool, "; filename=\"", filename, "\"", NULL) : "",
                    "\r\nContent-Type: application/octet-stream\r\n\r\n", NULL);
    const char *tail = "\r\n--XyZ--\r\n";
    char *body = apr_palloc(fx_pool, strlen(head) + len + strlen(tail));
    memcpy(body, head, strlen(head));
    memcpy(body + strlen(head), bytes, len);
    memcpy(body + strlen(head) + len, tail, strlen(tail));
    *out_len = strlen(head) + len + strlen(tail);
    return body;
}

#define MP_TYPE "multipart/form-data; boundary=XyZ"
#define HELLO "hello world\n"
#define SHA_HELLO "a948904f2f0f479b8f8197694b30184b0d2ed1c1cd2a1ec0fb85d299a192a447"

static void set_file_id(jr_ctx_t *c, long long id, long long file)
{
    fx_set_id(c, id);
    apr_table_setn(c->params, "fileId", jr_i64(fx_pool, file));
}

static const char *stored_path(const char *sql)
{
    const char *name = fx_sql(sql);
    ck_assert_ptr_nonnull(name);
    return jr_storage_path(fx_pool, data_dir, name);
}

START_TEST(files_upload_list_download_delete)
{
    long long before = fx_audit_count(), f1, f2;
    jr_result_t res;
    size_t len;
    const char *body, *path1, *path2;
    json_t *item;

    res = send_upload(&fx_ctx, jr_op_files_upload, entry_a, HELLO, 12, "text/plain",
                      "my%20notes%E2%82%AC.txt");
    ck_assert_msg(res.status == 201, "%d %s", res.status, fx_error(&res));
    f1 = fx_id(&res);
    ck_assert_int_gt(f1, 0);
    ck_assert_int_eq(jr_json_int(fx_json(res), "entry_id", 0), entry_a);
    ck_assert_str_eq(jr_json_str(fx_json(res), "name", ""), "my notes\xe2\x82\xac.txt");
    ck_assert_int_eq(jr_json_int(fx_json(res), "size", 0), 12);
    ck_assert_str_eq(jr_json_str(fx_json(res), "content_type", ""), "text/plain");
    ck_assert_str_eq(jr_json_str(fx_json(res), "sha256", ""), SHA_HELLO);
    ck_assert_ptr_nonnull(jr_json_str(fx_json(res), "created_at", NULL));
    ck_assert_int_eq(fx_audit_count(), before + 1);
    ck_assert_str_eq(fx_audit_last("action || '/' || entity_type || '/' || entity_id"),
                     jr_psprintf(fx_pool, "create/entry_file/%lld", f1));
    path1 = stored_path(
        jr_psprintf(fx_pool, "SELECT stored_name FROM entry_files WHERE id = %lld", f1));
    ck_assert_int_eq(exists(path1), 1);
    ck_assert_int_eq(count_files(fx_pool, apr_pstrcat(fx_pool, data_dir, "/files", NULL)), 1);

    /* multipart as a browser sends it; the client's type and path are not trusted */
    body = multipart("file", "C:\\Users\\me\\scan.png", png, sizeof(png), &len);
    res = send_upload(&fx_ctx, jr_op_files_upload, entry_a, body, len, MP_TYPE, NULL);
    ck_assert_msg(res.status == 201, "%d %s", res.status, fx_error(&res));
    f2 = fx_id(&res);
    ck_assert_str_eq(jr_json_str(fx_json(res), "name", ""), "scan.png");
    ck_assert_str_eq(jr_json_str(fx_json(res), "content_type", ""), "image/png");
    ck_assert_int_eq(jr_json_int(fx_json(res), "size", 0), (long long)sizeof(png));
    path2 = stored_path(
        jr_psprintf(fx_pool, "SELECT stored_name FROM entry_files WHERE id = %lld", f2));

    /* ?name= for a raw body */
    apr_table_setn(fx_ctx.query, "name", "from query.txt");
    res = send_upload(&fx_ctx, jr_op_files_upload, entry_b, HELLO, 12, NULL, NULL);
    apr_table_clear(fx_ctx.query);
    ck_assert_int_eq(res.status, 201);
    ck_assert_str_eq(jr_json_str(fx_json(res), "name", ""), "from query.txt");

    /* list: an array on /api, the envelope on /api/v1 */
    fx_set_id(&fx_ctx, entry_a);
    res = run(&fx_ctx, jr_op_files_list);
    ck_assert_int_eq(res.status, 200);
    ck_assert_uint_eq(json_array_size(fx_json(res)), 2);
    ck_assert_str_eq(apr_table_get(res.headers, "X-Total-Count"), "2");
    item = json_array_get(fx_json(res), 0);
    ck_assert_int_eq(jr_json_int(item, "id", 0), f1);
    ck_assert_str_eq(jr_json_str(item, "sha256", ""), SHA_HELLO);
    ck_assert_ptr_null(json_object_get(item, "stored_name"));
    ck_assert_uint_eq(json_object_size(item), 7);
    fx_ctx.iface = JR_IF_V1;
    apr_table_setn(fx_ctx.query, "limit", "1");
    res = run(&fx_ctx, jr_op_files_list);
    fx_ctx.iface = JR_IF_ADMIN;
    apr_table_clear(fx_ctx.query);
    ck_assert_int_eq(jr_json_int(fx_json(res), "total", 0), 2);
    ck_assert_int_eq(jr_json_int(fx_json(res), "limit", 0), 1);
    ck_assert_uint_eq(json_array_size(json_object_get(fx_json(res), "items")), 1);

    /* download */
    set_file_id(&fx_ctx, entry_a, f1);
    res = run(&fx_ctx, jr_op_files_download);
    ck_assert_int_eq(res.status, 200);
    ck_assert_ptr_nonnull(res.file);
    ck_assert_str_eq(res.file->path, path1);
    ck_assert_int_eq(res.file->size, 12);
    ck_assert_str_eq(res.file->content_type, "text/plain");
    ck_assert_str_eq(res.file->filename, "my notes\xe2\x82\xac.txt");
    ck_assert_int_eq(res.file->attachment, 1);
    ck_assert_str_eq(res.file->etag, SHA_HELLO);
    ck_assert_int_gt(res.file->mtime, 0);
    /* a file id of another entry, an unknown one */
    set_file_id(&fx_ctx, entry_b, f1);
    EXPECT(run(&fx_ctx, jr_op_files_download), 404, "file not found");
    EXPECT(run(&fx_ctx, jr_op_files_delete), 404, "file not found");
    set_file_id(&fx_ctx, entry_a, f2 + 100);
    EXPECT(run(&fx_ctx, jr_op_files_download), 404, "file not found");

    /* delete: the row and the audit row first, the bytes after the commit */
    before = fx_audit_count();
    set_file_id(&fx_ctx, entry_a, f1);
    res = run(&fx_ctx, jr_op_files_delete);
    ck_assert_int_eq(res.status, 200);
    ck_assert_int_eq(exists(path1), 0);
    ck_assert_int_eq(exists(path2), 1);
    ck_assert_int_eq(fx_audit_count(), before + 1);
    ck_assert_str_eq(fx_audit_last("action || '/' || entity_type"), "delete/entry_file");
    ck_assert_str_eq(fx_sql("SELECT COUNT(*) FROM entry_files"), "2");
    EXPECT(run(&fx_ctx, jr_op_files_delete), 404, "file not found");
    EXPECT(run(&fx_ctx, jr_op_files_download), 404, "file not found");

    /* a stored file that vanished is a 404, not a broken response */
    unlink(path2);
    set_file_id(&fx_ctx, entry_a, f2);
    EXPECT(run(&fx_ctx, jr_op_files_download), 404, "no longer stored");
}
END_TEST

START_TEST(files_refused)
{
    long long before = fx_audit_count();
    char long_name[300];
    size_t len;
    const char *body;

    memset(long_name, 'a', 256);
    long_name[256] = '\0';
#define UP(bytes, n, ct, name) send_upload(&fx_ctx, jr_op_files_upload, entry_a, bytes, n, ct, name)
    EXPECT(UP(exe, sizeof(exe), "text/plain", "a.txt"), 415, "not allowed");
    EXPECT(UP(gif, sizeof(gif), "image/png", "a.png"), 415, "image/gif");
    EXPECT(UP("", 0, "text/plain", "a.txt"), 400, "file is empty");
    EXPECT(UP(HELLO, 12, "text/plain", NULL), 400, "name is required");
    EXPECT(UP(HELLO, 12, "text/plain", "a%01b.txt"), 400, "control characters");
    EXPECT(UP(HELLO, 12, "text/plain", "a%C2%85b.txt"), 400, "control characters");
    EXPECT(UP(HELLO, 12, "text/plain", "%FF%FE.txt"), 400, "UTF-8");
    EXPECT(UP(HELLO, 12, "text/plain", "a%zz"), 400, "X-File-Name");
    EXPECT(UP(HELLO, 12, "text/plain", "   "), 400, "name must be 1 to 255");
    EXPECT(UP(HELLO, 12, "text/plain", "dir/"), 400, "name must be 1 to 255");
    EXPECT(UP(HELLO, 12, "text/plain", long_name), 400, "name must be 1 to 255");
    EXPECT(UP(HELLO, 12, MP_TYPE, "a.txt"), 400, "malformed multipart body");
    EXPECT(UP(HELLO, 12, "multipart/form-data", "a.txt"), 400, "malformed multipart body");
    body = multipart("upload", "a.txt", HELLO, 12, &len);
    EXPECT(UP(body, len, MP_TYPE, NULL), 400, "file is required");
    body = multipart("file", "a.txt", "", 0, &len);
    EXPECT(UP(body, len, MP_TYPE, NULL), 400, "file is empty");
    body = multipart("file", NULL, HELLO, 12, &len);
    EXPECT(UP(body, len, MP_TYPE, NULL), 400, "name is required");
    ops_cfg.upload_max = 11;
    EXPECT(UP(HELLO, 12, "text/plain", "a.txt"), 413, "11 bytes");
    ops_cfg.upload_max = 64 * 1024;
    /* no upload at all (another host, a wrong route) */
    fx_set_id(&fx_ctx, entry_a);
    EXPECT(run(&fx_ctx, jr_op_files_upload), 400, "file is required");
    /* unknown and trashed entries */
    EXPECT(send_upload(&fx_ctx, jr_op_files_upload, entry_b + 100, HELLO, 12, NULL, "a.txt"), 404,
           "entry not found");
    fx_sql(jr_psprintf(fx_pool,
                       "UPDATE entries SET deleted_at = '2026-01-02T00:00:00Z' WHERE id = %lld",
                       entry_a));
    EXPECT(UP(HELLO, 12, "text/plain", "a.txt"), 404, "entry not found");
    fx_set_id(&fx_ctx, entry_a);
    EXPECT(run(&fx_ctx, jr_op_files_list), 404, "entry not found");
#undef UP
    /* nothing was written: no rows, no audit, no stored bytes */
    ck_assert_int_eq(fx_audit_count(), before);
    ck_assert_str_eq(fx_sql("SELECT COUNT(*) FROM entry_files"), "0");
    ck_assert_int_eq(count_files(fx_pool, apr_pstrcat(fx_pool, data_dir, "/files", NULL)), 0);
}
END_TEST

START_TEST(files_branch_scope)
{
    jr_ctx_t tutor_a;
    jr_result_t res;
    long long fb;
    fx_tutor_ctx(&tutor_a, fx_new_tutor("ta", jr_psprintf(fx_pool, "[%lld]", branch_a)));

    res = send_upload(&fx_ctx, jr_op_files_upload, entry_b, HELLO, 12, NULL, "b.txt");
    ck_assert_int_eq(res.status, 201);
    fb = fx_id(&res);
    /* the tutor of branch A works on A's entries ... */
    res = send_upload(&tutor_a, jr_op_files_upload, entry_a, HELLO, 12, NULL, "a.txt");
    ck_assert_int_eq(res.status, 201);
    ck_assert_str_eq(fx_audit_last("actor_user_id"), jr_i64(fx_pool, tutor_a.who.user_id));
    /* ... and sees nothing of B's */
    EXPECT(send_upload(&tutor_a, jr_op_files_upload, entry_b, HELLO, 12, NULL, "x.txt"), 404,
           "entry not found");
    fx_set_id(&tutor_a, entry_b);
    EXPECT(run(&tutor_a, jr_op_files_list), 404, "entry not found");
    set_file_id(&tutor_a, entry_b, fb);
    EXPECT(run(&tutor_a, jr_op_files_download), 404, "entry not found");
    EXPECT(run(&tutor_a, jr_op_files_delete), 404, "entry not found");
    /* nor through its own entry */
    set_file_id(&tutor_a, entry_a, fb);
    EXPECT(run(&tutor_a, jr_op_files_download), 404, "file not found");
    ck_assert_str_eq(fx_sql("SELECT COUNT(*) FROM entry_files"), "2");
}
END_TEST

START_TEST(photos_first_replace_delete)
{
    long long before = fx_audit_count();
    const char *cur1, *orig, *cur2;
    jr_result_t res;
    size_t len;
    const char *body;

    fx_set_id(&fx_ctx, entry_a);
    EXPECT(run(&fx_ctx, jr_op_photo_get), 404, "no photo");
    EXPECT(run(&fx_ctx, jr_op_photo_original), 404, "no original photo");
    EXPECT(run(&fx_ctx, jr_op_photo_delete), 404, "no photo");

    /* the first photo: current, and a separate stored copy as the original */
    res = send_upload(&fx_ctx, jr_op_photo_upload, entry_a, png, sizeof(png), "image/jpeg", NULL);
    ck_assert_msg(res.status == 201, "%d %s", res.status, fx_error(&res));
    ck_assert_int_eq(jr_json_int(fx_json(res), "entry_id", 0), entry_a);
    ck_assert_str_eq(jr_json_str(fx_json(res), "content_type", ""), "image/png");
    ck_assert_int_eq(jr_json_int(fx_json(res), "size", 0), (long long)sizeof(png));
    ck_assert(json_is_true(json_object_get(fx_json(res), "has_original")));
    ck_assert_int_eq(fx_audit_count(), before + 1);
    ck_assert_str_eq(fx_audit_last("action || '/' || entity_type || '/' || entity_id"),
                     jr_psprintf(fx_pool, "create/entry_photo/%lld", entry_a));
    cur1 = stored_path(jr_psprintf(fx_pool,
                                   "SELECT stored_name FROM photos WHERE owner_type = 'entry'"
                                   " AND owner_id = %lld AND role = 'current'",
                                   entry_a));
    orig = stored_path(jr_psprintf(fx_pool,
                                   "SELECT stored_name FROM photos WHERE owner_type = 'entry'"
                                   " AND owner_id = %lld AND role = 'original'",
                                   entry_a));
    ck_assert_str_ne(cur1, orig);
    ck_assert_int_eq(exists(cur1) && exists(orig), 1);

    res = run(&fx_ctx, jr_op_photo_get);
    ck_assert_int_eq(res.status, 200);
    ck_assert_str_eq(res.file->path, cur1);
    ck_assert_str_eq(res.file->content_type, "image/png");
    ck_assert_int_eq(res.file->attachment, 0);
    ck_assert_str_eq(res.file->filename, jr_psprintf(fx_pool, "entry-%lld.png", entry_a));
    ck_assert_str_eq(res.file->etag, jr_sha256_hex(fx_pool, (const char *)png, sizeof(png)));

    /* replaced (multipart this time): the old current file goes, the original stays */
    body = multipart("file", "me.jpg", jpeg, sizeof(jpeg), &len);
    res = send_upload(&fx_ctx, jr_op_photo_upload, entry_a, body, len, MP_TYPE, NULL);
    ck_assert_msg(res.status == 200, "%d %s", res.status, fx_error(&res));
    ck_assert_str_eq(jr_json_str(fx_json(res), "content_type", ""), "image/jpeg");
    ck_assert(json_is_true(json_object_get(fx_json(res), "has_original")));
    ck_assert_str_eq(fx_audit_last("action || '/' || entity_type"), "update/entry_photo");
    cur2 = stored_path(jr_psprintf(fx_pool,
                                   "SELECT stored_name FROM photos WHERE owner_type = 'entry'"
                                   " AND owner_id = %lld AND role = 'current'",
                                   entry_a));
    ck_assert_int_eq(exists(cur1), 0);
    ck_assert_int_eq(exists(cur2), 1);
    ck_assert_int_eq(exists(orig), 1);
    res = run(&fx_ctx, jr_op_photo_original);
    ck_assert_int_eq(res.status, 200);
    ck_assert_str_eq(res.file->path, orig);
    ck_assert_str_eq(res.file->content_type, "image/png");
    ck_assert_str_eq(res.file->filename, jr_psprintf(fx_pool, "entry-%lld-original.png", entry_a));
    res = run(&fx_ctx, jr_op_photo_get);
    ck_assert_str_eq(res.file->content_type, "image/jpeg");

    /* refused: not a photo type, empty; nothing changes */
    before = fx_audit_count();
    EXPECT(send_upload(&fx_ctx, jr_op_photo_upload, entry_a, gif, sizeof(gif), "image/jpeg", NULL),
           415, "photo must be a JPEG, PNG or WebP image");
    EXPECT(send_upload(&fx_ctx, jr_op_photo_upload, entry_a, HELLO, 12, "image/png", NULL), 415,
           "JPEG, PNG or WebP");
    EXPECT(send_upload(&fx_ctx, jr_op_photo_upload, entry_a, "", 0, "image/png", NULL), 400,
           "empty");
    ck_assert_int_eq(fx_audit_count(), before);
    ck_assert_int_eq(count_files(fx_pool, apr_pstrcat(fx_pool, data_dir, "/photos", NULL)), 2);

    /* delete: current and original */
    fx_set_id(&fx_ctx, entry_a);
    res = run(&fx_ctx, jr_op_photo_delete);
    ck_assert_int_eq(res.status, 200);
    ck_assert_int_eq(fx_audit_count(), before + 1);
    ck_assert_str_eq(fx_audit_last("action || '/' || entity_type"), "delete/entry_photo");
    ck_assert_str_eq(fx_sql("SELECT COUNT(*) FROM photos"), "0");
    ck_assert_int_eq(count_files(fx_pool, apr_pstrcat(fx_pool, data_dir, "/photos", NULL)), 0);
    EXPECT(run(&fx_ctx, jr_op_photo_get), 404, "no photo");
    EXPECT(run(&fx_ctx, jr_op_photo_delete), 404, "no photo");

    /* after a delete, the next photo is a first photo again */
    res = send_upload(&fx_ctx, jr_op_photo_upload, entry_a, webp, sizeof(webp), NULL, NULL);
    ck_assert_int_eq(res.status, 201);
    ck_assert_str_eq(jr_json_str(fx_json(res), "content_type", ""), "image/webp");
}
END_TEST

START_TEST(photos_branch_scope)
{
    jr_ctx_t tutor_a;
    fx_tutor_ctx(&tutor_a, fx_new_tutor("ta", jr_psprintf(fx_pool, "[%lld]", branch_a)));
    ck_assert_int_eq(
        send_upload(&fx_ctx, jr_op_photo_upload, entry_b, png, sizeof(png), NULL, NULL).status,
        201);
    EXPECT(send_upload(&tutor_a, jr_op_photo_upload, entry_b, jpeg, sizeof(jpeg), NULL, NULL), 404,
           "entry not found");
    fx_set_id(&tutor_a, entry_b);
    EXPECT(run(&tutor_a, jr_op_photo_get), 404, "entry not found");
    EXPECT(run(&tutor_a, jr_op_photo_original), 404, "entry not found");
    EXPECT(run(&tutor_a, jr_op_photo_delete), 404, "entry not found");
    ck_assert_str_eq(fx_sql("SELECT COUNT(*) FROM photos"), "2");
    /* its own branch: fine */
    ck_assert_int_eq(
        send_upload(&tutor_a, jr_op_photo_upload, entry_a, jpeg, sizeof(jpeg), NULL, NULL).status,
        201);
}
END_TEST

START_TEST(group_covers)
{
    jr_ctx_t tutor_a, tutor_b;
    jr_result_t res;
    const char *first;
    long long before;
    fx_tutor_ctx(&tutor_a, fx_new_tutor("ta", jr_psprintf(fx_pool, "[%lld]", branch_a)));
    fx_tutor_ctx(&tutor_b, fx_new_tutor("tb", jr_psprintf(fx_pool, "[%lld]", branch_b)));

    /* tutors may not change covers, not even of their own branch */
    EXPECT(send_upload(&tutor_a, jr_op_cover_upload, group_a, png, sizeof(png), NULL, NULL), 403,
           "only admins");
    res = send_upload(&fx_ctx, jr_op_cover_upload, group_a, png, sizeof(png), NULL, NULL);
    ck_assert_msg(res.status == 201, "%d %s", res.status, fx_error(&res));
    ck_assert_int_eq(jr_json_int(fx_json(res), "group_id", 0), group_a);
    ck_assert_ptr_null(json_object_get(fx_json(res), "has_original"));
    ck_assert_str_eq(fx_audit_last("action || '/' || entity_type"), "create/group_cover");
    first = stored_path("SELECT stored_name FROM photos WHERE role = 'cover'");
    ck_assert_str_eq(fx_sql("SELECT COUNT(*) FROM photos"), "1"); /* no original for covers */

    res = send_upload(&fx_ctx, jr_op_cover_upload, group_a, webp, sizeof(webp), NULL, NULL);
    ck_assert_int_eq(res.status, 200);
    ck_assert_int_eq(exists(first), 0);
    ck_assert_str_eq(fx_audit_last("action || '/' || entity_type"), "update/group_cover");

    /* read: anyone who sees the group */
    fx_set_id(&tutor_a, group_a);
    res = run(&tutor_a, jr_op_cover_get);
    ck_assert_int_eq(res.status, 200);
    ck_assert_str_eq(res.file->content_type, "image/webp");
    ck_assert_str_eq(res.file->filename, jr_psprintf(fx_pool, "group-%lld.webp", group_a));
    fx_set_id(&tutor_b, group_a);
    EXPECT(run(&tutor_b, jr_op_cover_get), 404, "group not found");
    fx_set_id(&fx_ctx, group_b);
    EXPECT(run(&fx_ctx, jr_op_cover_get), 404, "no photo");
    EXPECT(send_upload(&fx_ctx, jr_op_cover_upload, group_b + 100, png, sizeof(png), NULL, NULL),
           404, "group not found");
    EXPECT(send_upload(&fx_ctx, jr_op_cover_upload, group_a, HELLO, 12, NULL, NULL), 415,
           "JPEG, PNG or WebP");

    before = fx_audit_count();
    EXPECT(run(&tutor_a, jr_op_cover_delete), 403, "only admins");
    fx_set_id(&fx_ctx, group_a);
    ck_assert_int_eq(run(&fx_ctx, jr_op_cover_delete).status, 200);
    ck_assert_int_eq(fx_audit_count(), before + 1);
    ck_assert_str_eq(fx_audit_last("action || '/' || entity_type"), "delete/group_cover");
    ck_assert_int_eq(count_files(fx_pool, apr_pstrcat(fx_pool, data_dir, "/photos", NULL)), 0);
    EXPECT(run(&fx_ctx, jr_op_cover_delete), 404, "no photo");
}
END_TEST

START_TEST(purge_helpers)
{
    apr_array_header_t *names = apr_array_make(fx_pool, 4, sizeof(const char *));
    ck_assert_int_eq(
        send_upload(&fx_ctx, jr_op_files_upload, entry_a, HELLO, 12, NULL, "a.txt").status, 201);
    ck_assert_int_eq(
        send_upload(&fx_ctx, jr_op_files_upload, entry_a, HELLO, 12, NULL, "b.txt").status, 201);
    ck_assert_int_eq(
        send_upload(&fx_ctx, jr_op_files_upload, entry_b, HELLO, 12, NULL, "c.txt").status, 201);
    ck_assert_int_eq(
        send_upload(&fx_ctx, jr_op_photo_upload, entry_a, png, sizeof(png), NULL, NULL).status,
        201);
    ck_assert_int_eq(
        send_upload(&fx_ctx, jr_op_cover_upload, group_a, png, sizeof(png), NULL, NULL).status,
        201);
    ck_assert_int_eq(count_files(fx_pool, apr_pstrcat(fx_pool, data_dir, "/files", NULL)), 3);
    ck_assert_int_eq(count_files(fx_pool, apr_pstrcat(fx_pool, data_dir, "/photos", NULL)), 3);

    /* a rolled back purge changes nothing */
    ck_assert_int_eq(jr_db_begin(fx_db), APR_SUCCESS);
    ck_assert_int_eq(jr_files_purge_entry(&fx_ctx, entry_a, names), APR_SUCCESS);
    ck_assert_int_eq(names->nelts, 4); /* two files, current and original photo */
    jr_db_rollback(fx_db);
    ck_assert_str_eq(fx_sql("SELECT COUNT(*) FROM entry_files"), "3");

    apr_array_clear(names);
    ck_assert_int_eq(jr_db_begin(fx_db), APR_SUCCESS);
    ck_assert_int_eq(jr_files_purge_entry(&fx_ctx, entry_a, names), APR_SUCCESS);
    ck_assert_int_eq(jr_photos_purge_group(&fx_ctx, group_a, names), APR_SUCCESS);
    ck_assert_int_eq(jr_db_commit(fx_db), APR_SUCCESS);
    ck_assert_int_eq(names->nelts, 5);
    jr_storage_unlink_all(&fx_ctx, names);
    ck_assert_str_eq(fx_sql("SELECT COUNT(*) FROM entry_files"), "1");
    ck_assert_str_eq(fx_sql("SELECT COUNT(*) FROM photos"), "0");
    ck_assert_int_eq(count_files(fx_pool, apr_pstrcat(fx_pool, data_dir, "/files", NULL)), 1);
    ck_assert_int_eq(count_files(fx_pool, apr_pstrcat(fx_pool, data_dir, "/photos", NULL)), 0);
}
END_TEST

Suite *suite_storage(void)
{
    Suite *s = suite_create("storage");
    TCase *tc = tcase_create("storage");
    tcase_add_unchecked_fixture(tc, data_setup, data_teardown);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, store_renames_into_place);
    tcase_add_test(tc, store_hashes_large_files);
    tcase_add_test(tc, stored_names);
    tcase_add_test(tc, remove_and_duplicate);
    tcase_add_test(tc, temp_files_go_with_the_pool);
    tcase_add_test(tc, stored_files_are_owner_only);
    tcase_add_test(tc, sweep_removes_old_temp_files_only);
    tcase_add_test(tc, magic_sniffs_the_bytes);
    tcase_add_test(tc, magic_type_lists);
    suite_add_tcase(s, tc);

    /* Each operation test gets a fresh database and an empty data directory. */
    tc = tcase_create("files and photos");
    tcase_add_unchecked_fixture(tc, fx_dir_setup, fx_dir_teardown);
    tcase_add_unchecked_fixture(tc, data_setup, data_teardown);
    tcase_add_checked_fixture(tc, ops_setup, ops_teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, files_upload_list_download_delete);
    tcase_add_test(tc, files_refused);
    tcase_add_test(tc, files_branch_scope);
    tcase_add_test(tc, photos_first_replace_delete);
    tcase_add_test(tc, photos_branch_scope);
    tcase_add_test(tc, group_covers);
    tcase_add_test(tc, purge_helpers);
    suite_add_tcase(s, tc);
    return s;
}
