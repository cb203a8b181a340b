/* multipart/form-data (jr_multipart.c). The first line of the input is the Content-Type
 * value, the rest is the body, written to a file as the module stores it. The body is read
 * twice, with the default read size and with reads of a few bytes, so delimiters and header
 * blocks fall across reads. Oracles: both readings agree (status, name, type, bytes); the
 * extracted part is a piece of the body; boundaries and file names keep their documented
 * form. */
#include <fcntl.h>
#include <unistd.h>

#include <apr_file_io.h>
#include <apr_strings.h>

#include "fuzz.h"
#include "jr_multipart.h"

static char dir[64];
static char body_path[96];

static void cleanup(void)
{
    char tmp[80];
    unlink(body_path);
    snprintf(tmp, sizeof(tmp), "%s/tmp", dir);
    rmdir(tmp); /* parts are removed with each input's pool */
    rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    const char *base = getenv("TMPDIR");
    fuzz_root();
    snprintf(dir, sizeof(dir), "%s/jr-fuzz-mp-XXXXXX", base && *base ? base : "/tmp");
    FUZZ_CHECK(mkdtemp(dir) != NULL);
    snprintf(body_path, sizeof(body_path), "%s/body", dir);
    atexit(cleanup);
    return 0;
}

static void write_body(const uint8_t *data, size_t size)
{
    int fd = open(body_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    FUZZ_CHECK(fd >= 0);
    FUZZ_CHECK(size == 0 || write(fd, data, size) == (ssize_t)size);
    FUZZ_CHECK(close(fd) == 0);
}

/* The bytes of an extracted part. */
static char *part_bytes(apr_pool_t *p, const jr_mp_part_t *part)
{
    apr_file_t *f;
    apr_finfo_t fi;
    char *buf = apr_palloc(p, (apr_size_t)part->size + 1);
    apr_size_t n = (apr_size_t)part->size;
    FUZZ_CHECK(apr_file_open(&f, part->path, APR_FOPEN_READ | APR_FOPEN_BINARY, 0, p) == APR_SUCCESS);
    FUZZ_CHECK(apr_file_info_get(&fi, APR_FINFO_SIZE, f) == APR_SUCCESS && fi.size == part->size);
    FUZZ_CHECK(n == 0 || apr_file_read_full(f, buf, n, NULL) == APR_SUCCESS);
    apr_file_close(f);
    return buf;
}

static int same_str(const char *a, const char *b)
{
    return a == b || (a && b && !strcmp(a, b));
}

static void check_filename(const char *name)
{
    FUZZ_CHECK(!name || (*name && !strpbrk(name, "/\\")));
}

static void extract(apr_pool_t *p, const char *boundary, const uint8_t *body, size_t len)
{
    jr_mp_part_t a, b;
    jr_mp_status_e ra, rb;
    /* 1 to 7 bytes per read for small bodies; larger ones keep about a hundred reads. */
    apr_size_t small = 1 + len % 7 + len / 128;

    ra = jr_mp_extract(&a, p, body_path, boundary, "file", dir, 0);
    rb = jr_mp_extract(&b, p, body_path, boundary, "file", dir, small);
    FUZZ_CHECK(ra == rb);
    FUZZ_CHECK(ra != JR_MP_IO);
    if (ra != JR_MP_OK) {
        FUZZ_CHECK(!a.path && !b.path);
        return;
    }
    FUZZ_CHECK(a.size == b.size && a.size <= (apr_off_t)len);
    FUZZ_CHECK(same_str(a.filename, b.filename) && same_str(a.content_type, b.content_type));
    check_filename(a.filename);
    {
        const char *x = part_bytes(p, &a), *y = part_bytes(p, &b);
        FUZZ_CHECK(!memcmp(x, y, (size_t)a.size));
        FUZZ_CHECK(a.size == 0 || memmem(body, len, x, (size_t)a.size));
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    apr_pool_t *p = fuzz_pool();
    const uint8_t *nl = memchr(data, '\n', size);
    size_t ct_len = nl ? (size_t)(nl - data) : size;
    const uint8_t *body = nl ? nl + 1 : data + size;
    size_t body_len = size - (size_t)(body - data);
    const char *ct = fuzz_cstr(p, data, ct_len);
    const char *boundary = jr_mp_boundary(p, ct);

    if (boundary) {
        size_t n = strlen(boundary);
        FUZZ_CHECK(jr_mp_is_form_data(ct));
        FUZZ_CHECK(n >= 1 && n <= JR_MP_BOUNDARY_MAX && !strpbrk(boundary, "\r\n"));
    }
    check_filename(jr_mp_clean_filename(p, ct));
    write_body(body, body_len);
    /* Without a usable Content-Type the body is still read with a fixed boundary: the
     * corpus reaches the body parser either way. */
    extract(p, boundary ? boundary : "X", body, body_len);
    apr_pool_destroy(p);
    return 0;
}
