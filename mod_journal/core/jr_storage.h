/* Stored files (entry files, photos) under the data directory. Bytes arrive in a temporary
 * file under data_dir/tmp; storing hashes it, flushes it to disk and renames it to
 * data_dir/<subdir>/<2 hex>/<32 random hex>, so a name from a client is never a path. The
 * database keeps the relative "stored name"; only names of that exact form are accepted
 * back. */
#ifndef JR_STORAGE_H
#define JR_STORAGE_H

#include <apr_file_io.h>
#include <apr_pools.h>
#include <apr_tables.h>

#include "jr_ctx.h"

#define JR_STORAGE_FILES "files"
#define JR_STORAGE_PHOTOS "photos"

typedef struct {
    const char *stored_name; /* relative to data_dir, e.g. "files/3f/3f09...c1" */
    apr_off_t size;
    const char *sha256; /* 64 lower-case hex characters */
} jr_stored_t;

/* 1 when name has the form <subdir>/<2 hex>/<32 hex> with the first two hex digits
 * repeated and subdir one of ours. */
int jr_storage_name_valid(const char *name);

/* Absolute path of a stored name (NULL when the name is not valid). */
const char *jr_storage_path(apr_pool_t *p, const char *data_dir, const char *stored_name);

/* A new empty temporary file in data_dir/tmp (made when missing), open for writing. It is
 * removed when p is cleared unless jr_storage_store moves it into place first. */
apr_status_t jr_storage_tmpfile(apr_file_t **fd, const char **path, apr_pool_t *p,
                                const char *data_dir, const char *prefix);

/* Removes the regular files in data_dir/tmp last modified before `before`: what a child left
 * when it died between creating a temp file and its pool cleanup. *removed counts them, and
 * *failed those that could not be removed. A missing tmp directory is not an error. */
apr_status_t jr_storage_sweep_tmp(apr_pool_t *p, const char *data_dir, apr_time_t before,
                                  int *removed, int *failed);

/* SHA-256 (hex) and size of a file, read in chunks. */
apr_status_t jr_storage_sha256_file(const char **hex, apr_off_t *size, apr_pool_t *p,
                                    const char *path);

/* Moves tmp_path (a file on the same file system, under data_dir/tmp) into place under
 * data_dir/subdir with a random name: hashes it, fsyncs it, renames it and fsyncs the
 * directory. On failure the temporary file is left where it was. */
apr_status_t jr_storage_store(jr_stored_t *out, apr_pool_t *p, const char *data_dir,
                              const char *subdir, const char *tmp_path);

/* A second stored file with the same bytes as src (a hard link, or a copy where links are
 * not possible), e.g. a backup of a photo that outlives the first one. */
apr_status_t jr_storage_duplicate(jr_stored_t *out, apr_pool_t *p, const char *data_dir,
                                  const char *subdir, const jr_stored_t *src);

/* Unlinks a stored file. A file that is already gone is not an error; an invalid name is
 * (APR_EINVAL) and nothing is touched. */
apr_status_t jr_storage_remove(apr_pool_t *p, const char *data_dir, const char *stored_name);

/* Unlinks every stored name of the array (const char *), after the transaction that
 * dropped their rows committed. Failures are logged, not returned. */
void jr_storage_unlink_all(jr_ctx_t *ctx, const apr_array_header_t *names);
/* The same, registered to run once the request's transaction committed (jr_after_commit). */
void jr_storage_unlink_after_commit(jr_ctx_t *ctx, const apr_array_header_t *names);
/* The same once it rolled back: files stored for rows that were refused (jr_on_rollback). */
void jr_storage_unlink_on_rollback(jr_ctx_t *ctx, const apr_array_header_t *names);

#endif
