/* See jr_storage.h. The digest is computed here with OpenSSL EVP (streaming over the file);
 * everything else that talks to OpenSSL stays in jr_crypt.c. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <apr_strings.h>
#include <openssl/evp.h>

#include "jr_crypt.h"
#include "jr_log.h"
#include "jr_storage.h"

/* Owner-only, like the files (apr_file_mktemp makes them 0600 and a rename keeps that). */
#define DIR_PERMS (APR_FPROT_UREAD | APR_FPROT_UWRITE | APR_FPROT_UEXECUTE)
#define IO_CHUNK (64 * 1024)
#define NAME_HEX 32

static int is_lower_hex(const char *s, size_t n)
{
    size_t i;
    for (i = 0; i < n; ++i) {
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) {
            return 0;
        }
    }
    return 1;
}

int jr_storage_name_valid(const char *name)
{
    static const char *const subdirs[] = {JR_STORAGE_FILES, JR_STORAGE_PHOTOS};
    size_t i, n;
    for (i = 0; name && i < sizeof(subdirs) / sizeof(subdirs[0]); ++i) {
        n = strlen(subdirs[i]);
        if (!strncmp(name, subdirs[i], n) && name[n] == '/') {
            const char *shard = name + n + 1, *file = shard + 3;
            return is_lower_hex(shard, 2) && shard[2] == '/' && strlen(file) == NAME_HEX &&
                   is_lower_hex(file, NAME_HEX) && !strncmp(shard, file, 2);
        }
    }
    return 0;
}

const char *jr_storage_path(apr_pool_t *p, const char *data_dir, const char *stored_name)
{
    if (!jr_storage_name_valid(stored_name)) {
        return NULL;
    }
    return apr_pstrcat(p, data_dir, "/", stored_name, NULL);
}

static apr_status_t remove_tmp(void *path)
{
    unlink(path); /* gone already when it was stored */
    return APR_SUCCESS;
}

apr_status_t jr_storage_tmpfile(apr_file_t **fd, const char **path, apr_pool_t *p,
                                const char *data_dir, const char *prefix)
{
    const char *dir = apr_pstrcat(p, data_dir, "/tmp", NULL);
    char *tmpl = apr_pstrcat(p, dir, "/", prefix, "-XXXXXX", NULL);
    apr_status_t rv = apr_dir_make_recursive(dir, DIR_PERMS, p);
    if (rv != APR_SUCCESS) {
        return rv;
    }
    rv = apr_file_mktemp(
        fd, tmpl,
        APR_FOPEN_CREATE | APR_FOPEN_READ | APR_FOPEN_WRITE | APR_FOPEN_EXCL | APR_FOPEN_BINARY, p);
    if (rv != APR_SUCCESS) {
        return rv;
    }
    apr_pool_cleanup_register(p, tmpl, remove_tmp, apr_pool_cleanup_null);
    *path = tmpl;
    return APR_SUCCESS;
}

apr_status_t jr_storage_sweep_tmp(apr_pool_t *p, const char *data_dir, apr_time_t before,
                                  int *removed, int *failed)
{
    const char *dir = apr_pstrcat(p, data_dir, "/tmp", NULL);
    apr_pool_t *scratch;
    apr_finfo_t fi;
    apr_dir_t *d;
    apr_status_t rv = apr_dir_open(&d, dir, p);

    *removed = *failed = 0;
    if (rv != APR_SUCCESS) {
        return APR_STATUS_IS_ENOENT(rv) ? APR_SUCCESS : rv;
    }
    apr_pool_create(&scratch, p);
    while ((rv = apr_dir_read(&fi, APR_FINFO_NAME, d)) == APR_SUCCESS || rv == APR_INCOMPLETE) {
        const char *path = apr_pstrcat(scratch, dir, "/", fi.name, NULL);
        /* lstat: a link is never followed, only regular files are ours. */
        if (apr_stat(&fi, path, APR_FINFO_LINK | APR_FINFO_TYPE | APR_FINFO_MTIME, scratch) ==
                APR_SUCCESS &&
            fi.filetype == APR_REG && fi.mtime < before) {
            if (apr_file_remove(path, scratch) == APR_SUCCESS) {
                ++*removed;
            } else {
                ++*failed;
            }
        }
        apr_pool_clear(scratch);
    }
    apr_pool_destroy(scratch);
    apr_dir_close(d);
    return APR_SUCCESS;
}

/* Hashes an open file from its start; *size is what was read. */
static apr_status_t hash_fd(unsigned char md[32], apr_off_t *size, apr_pool_t *p, apr_file_t *fd)
{
    char *buf = apr_palloc(p, IO_CHUNK);
    EVP_MD_CTX *mdctx = EVP_MD_CTX_new();
    apr_status_t rv = APR_SUCCESS;
    unsigned int mdlen = 0;

    *size = 0;
    if (!mdctx || EVP_DigestInit_ex(mdctx, EVP_sha256(), NULL) != 1) {
        EVP_MD_CTX_free(mdctx);
        return APR_EGENERAL;
    }
    for (;;) {
        apr_size_t n = IO_CHUNK;
        rv = apr_file_read(fd, buf, &n);
        if (rv == APR_EOF || (rv == APR_SUCCESS && n == 0)) {
            rv = APR_SUCCESS;
            break;
        }
        if (rv != APR_SUCCESS) {
            break;
        }
        if (EVP_DigestUpdate(mdctx, buf, n) != 1) {
            rv = APR_EGENERAL;
            break;
        }
        *size += (apr_off_t)n;
    }
    if (rv == APR_SUCCESS && (EVP_DigestFinal_ex(mdctx, md, &mdlen) != 1 || mdlen != 32)) {
        rv = APR_EGENERAL;
    }
    EVP_MD_CTX_free(mdctx);
    return rv;
}

apr_status_t jr_storage_sha256_file(const char **hex, apr_off_t *size, apr_pool_t *p,
                                    const char *path)
{
    unsigned char md[32];
    apr_file_t *fd;
    apr_status_t rv = apr_file_open(&fd, path, APR_FOPEN_READ | APR_FOPEN_BINARY, 0, p);
    if (rv != APR_SUCCESS) {
        return rv;
    }
    rv = hash_fd(md, size, p, fd);
    apr_file_close(fd);
    if (rv == APR_SUCCESS) {
        *hex = jr_hex(p, md, sizeof(md));
    }
    return rv;
}

/* Flushes a directory's entries (a rename or a new subdirectory) to disk. */
static apr_status_t sync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc;
    if (fd < 0) {
        return APR_FROM_OS_ERROR(errno);
    }
    rc = fsync(fd);
    if (rc != 0 && errno == EINVAL) { /* a file system without directory sync */
        rc = 0;
    }
    rc = rc != 0 ? errno : 0;
    close(fd);
    return rc ? APR_FROM_OS_ERROR(rc) : APR_SUCCESS;
}

static const char *parent_of(apr_pool_t *p, const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash) {
        return ".";
    }
    return slash == path ? "/" : apr_pstrmemdup(p, path, (apr_size_t)(slash - path));
}

/* Makes dir and its missing parents; a parent that gained an entry is synced. */
static apr_status_t ensure_dir(apr_pool_t *p, const char *dir, int depth)
{
    apr_status_t rv = apr_dir_make(dir, DIR_PERMS, p);
    if (APR_STATUS_IS_ENOENT(rv) && depth < 16) {
        rv = ensure_dir(p, parent_of(p, dir), depth + 1);
        if (rv == APR_SUCCESS) {
            rv = apr_dir_make(dir, DIR_PERMS, p);
        }
    }
    if (rv == APR_SUCCESS) {
        return sync_dir(parent_of(p, dir));
    }
    return APR_STATUS_IS_EEXIST(rv) ? APR_SUCCESS : rv;
}

/* A new random stored name below subdir and its directory, made when missing. */
static apr_status_t new_name(const char **name, const char **dir, apr_pool_t *p,
                             const char *data_dir, const char *subdir)
{
    unsigned char raw[NAME_HEX / 2];
    const char *hex;
    if (jr_random_bytes(raw, sizeof(raw)) != 0) {
        return APR_EGENERAL;
    }
    hex = jr_hex(p, raw, sizeof(raw));
    *name = apr_pstrcat(p, subdir, "/", apr_pstrmemdup(p, hex, 2), "/", hex, NULL);
    *dir = parent_of(p, jr_storage_path(p, data_dir, *name));
    return ensure_dir(p, *dir, 0);
}

apr_status_t jr_storage_store(jr_stored_t *out, apr_pool_t *p, const char *data_dir,
                              const char *subdir, const char *tmp_path)
{
    unsigned char md[32];
    const char *name, *dir;
    apr_file_t *fd;
    apr_off_t size = 0;
    apr_status_t rv;

    if (strcmp(subdir, JR_STORAGE_FILES) && strcmp(subdir, JR_STORAGE_PHOTOS)) {
        return APR_EINVAL;
    }
    if ((rv = apr_file_open(&fd, tmp_path, APR_FOPEN_READ | APR_FOPEN_BINARY, 0, p)) !=
        APR_SUCCESS) {
        return rv;
    }
    rv = hash_fd(md, &size, p, fd);
    if (rv == APR_SUCCESS) {
        rv = apr_file_sync(fd);
    }
    apr_file_close(fd);
    if (rv != APR_SUCCESS || (rv = new_name(&name, &dir, p, data_dir, subdir)) != APR_SUCCESS ||
        (rv = apr_file_rename(tmp_path, jr_storage_path(p, data_dir, name), p)) != APR_SUCCESS) {
        return rv;
    }
    /* The caller's pool no longer needs to remove the temp name (another file may get it). */
    apr_pool_cleanup_kill(p, tmp_path, remove_tmp);
    if ((rv = sync_dir(dir)) != APR_SUCCESS) {
        jr_storage_remove(p, data_dir, name);
        return rv;
    }
    out->stored_name = name;
    out->size = size;
    out->sha256 = jr_hex(p, md, sizeof(md));
    return APR_SUCCESS;
}

apr_status_t jr_storage_duplicate(jr_stored_t *out, apr_pool_t *p, const char *data_dir,
                                  const char *subdir, const jr_stored_t *src)
{
    const char *from = jr_storage_path(p, data_dir, src->stored_name), *name, *dir, *tmp;
    apr_file_t *fd;
    apr_status_t rv;

    if (!from) {
        return APR_EINVAL;
    }
    if ((rv = new_name(&name, &dir, p, data_dir, subdir)) != APR_SUCCESS) {
        return rv;
    }
    if (apr_file_link(from, jr_storage_path(p, data_dir, name)) == APR_SUCCESS) {
        if ((rv = sync_dir(dir)) != APR_SUCCESS) {
            jr_storage_remove(p, data_dir, name);
            return rv;
        }
        out->stored_name = name;
        out->size = src->size;
        out->sha256 = src->sha256;
        return APR_SUCCESS;
    }
    /* No hard links here: a copy through a temp file, stored like an upload. */
    if ((rv = jr_storage_tmpfile(&fd, &tmp, p, data_dir, "copy")) != APR_SUCCESS) {
        return rv;
    }
    apr_file_close(fd);
    if ((rv = apr_file_copy(from, tmp, APR_FPROT_FILE_SOURCE_PERMS, p)) != APR_SUCCESS) {
        return rv;
    }
    return jr_storage_store(out, p, data_dir, subdir, tmp);
}

apr_status_t jr_storage_remove(apr_pool_t *p, const char *data_dir, const char *stored_name)
{
    const char *path = jr_storage_path(p, data_dir, stored_name);
    if (!path) {
        return APR_EINVAL;
    }
    if (unlink(path) != 0 && errno != ENOENT) {
        return APR_FROM_OS_ERROR(errno);
    }
    return APR_SUCCESS;
}

void jr_storage_unlink_all(jr_ctx_t *ctx, const apr_array_header_t *names)
{
    int i;
    for (i = 0; names && i < names->nelts; ++i) {
        const char *name = APR_ARRAY_IDX(names, i, const char *);
        apr_status_t rv = jr_storage_remove(ctx->pool, ctx->cfg->data_dir, name);
        if (rv != APR_SUCCESS) {
            JR_LOG(JR05001, rv, "cannot remove the stored file %s",
                   name ? name : "(null)");
        }
    }
}

static void unlink_hook(jr_ctx_t *ctx, void *baton)
{
    jr_storage_unlink_all(ctx, baton);
}

void jr_storage_unlink_after_commit(jr_ctx_t *ctx, const apr_array_header_t *names)
{
    jr_after_commit(ctx, unlink_hook, (void *)names);
}

void jr_storage_unlink_on_rollback(jr_ctx_t *ctx, const apr_array_header_t *names)
{
    jr_on_rollback(ctx, unlink_hook, (void *)names);
}
