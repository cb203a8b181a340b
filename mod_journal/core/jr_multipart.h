/* multipart/form-data (RFC 7578) as browsers send it: one file field is extracted from a
 * request body stored in a file, streaming in chunks, into a new temporary file. */
#ifndef JR_MULTIPART_H
#define JR_MULTIPART_H

#include <apr_file_io.h>
#include <apr_pools.h>

#define JR_MP_BOUNDARY_MAX 70  /* RFC 2046 */
#define JR_MP_HEADERS_MAX 8192 /* the header block of one part */
#define JR_MP_CHUNK 65536      /* default read size */

typedef enum {
    JR_MP_OK = 0,
    JR_MP_MALFORMED, /* not a well-formed multipart body */
    JR_MP_NO_FIELD,  /* well-formed, without the field asked for */
    JR_MP_IO         /* reading the body or writing the part failed */
} jr_mp_status_e;

/* The extracted field. */
typedef struct {
    const char *path; /* temporary file with the part's bytes, removed with the pool */
    apr_off_t size;
    const char *filename;     /* the part's filename without any directory part; NULL when
                               * absent or empty */
    const char *content_type; /* as the client declared it; NULL when absent */
} jr_mp_part_t;

/* 1 when a Content-Type value is multipart/form-data (any parameters). */
int jr_mp_is_form_data(const char *content_type);

/* The boundary parameter of a multipart Content-Type value (quoted or not), or NULL when it
 * is missing or not 1..70 characters. */
const char *jr_mp_boundary(apr_pool_t *p, const char *content_type);

/* Reads the body at body_path and extracts the first part whose Content-Disposition is
 * form-data with name="field" into a new temporary file under data_dir/tmp (see
 * jr_storage_tmpfile). Other parts are skipped. chunk is the read size (0: JR_MP_CHUNK);
 * small values let tests split delimiters across reads. */
jr_mp_status_e jr_mp_extract(jr_mp_part_t *out, apr_pool_t *p, const char *body_path,
                             const char *boundary, const char *field, const char *data_dir,
                             apr_size_t chunk);

/* The file name of a filename parameter as sent by clients: browsers escape '"', CR and LF
 * as %22, %0D, %0A (HTML's form encoding) and old ones send a full path: these are decoded
 * and the part after the last '/' or '\' is kept. NULL when nothing remains. */
const char *jr_mp_clean_filename(apr_pool_t *p, const char *raw);

#endif
