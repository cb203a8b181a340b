/* The archive of a backup: POSIX ustar members in a gzip stream (zlib), written and read in
 * order with a fixed buffer, so memory does not grow with the size of the data. Only what a
 * backup holds is supported: regular files with names under 100 bytes. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
#include <string.h>

#include <apr_strings.h>
#include <zlib.h>

#include "jr_backup.h"

#define BLOCK 512
#define CHUNK 65536

struct jr_tar {
    gzFile gz;
    apr_off_t left; /* bytes of the current member still unread (reading) */
    apr_off_t pad;  /* padding after it */
};

static apr_status_t close_gz(void *data)
{
    jr_tar_t *t = data;
    if (t->gz) {
        gzclose(t->gz);
        t->gz = NULL;
    }
    return APR_SUCCESS;
}

static apr_status_t open_gz(jr_tar_t **pt, apr_pool_t *p, const char *path, const char *mode)
{
    jr_tar_t *t = apr_pcalloc(p, sizeof(*t));
    /* A new archive is made 0600 from the start, whatever the umask; never over a file. */
    int fd = *mode == 'w' ? open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)
                          : open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return APR_FROM_OS_ERROR(errno);
    }
    if (!(t->gz = gzdopen(fd, mode))) {
        close(fd);
        return APR_EGENERAL;
    }
    gzbuffer(t->gz, CHUNK);
    apr_pool_cleanup_register(p, t, close_gz, apr_pool_cleanup_null);
    *pt = t;
    return APR_SUCCESS;
}

apr_status_t jr_tar_create(jr_tar_t **t, apr_pool_t *p, const char *path)
{
    return open_gz(t, p, path, "wb6");
}

apr_status_t jr_tar_open(jr_tar_t **t, apr_pool_t *p, const char *path)
{
    return open_gz(t, p, path, "rb");
}

static void octal(char *field, size_t width, unsigned long long v)
{
    char tmp[32];
    snprintf(tmp, sizeof(tmp), "%0*llo", (int)width - 1, v);
    memcpy(field, tmp + strlen(tmp) - (width - 1), width - 1);
    field[width - 1] = '\0';
}

static unsigned checksum(const unsigned char *h)
{
    unsigned sum = 0, i;
    for (i = 0; i < BLOCK; ++i) {
        sum += (i >= 148 && i < 156) ? ' ' : h[i];
    }
    return sum;
}

static apr_status_t put(jr_tar_t *t, const void *buf, size_t n)
{
    return n == 0 || gzwrite(t->gz, buf, (unsigned)n) == (int)n ? APR_SUCCESS : APR_EGENERAL;
}

apr_status_t jr_tar_add(jr_tar_t *t, const char *name, const char *path, apr_pool_t *scratch)
{
    unsigned char h[BLOCK], *buf;
    apr_file_t *f;
    apr_finfo_t fi;
    apr_size_t n;
    apr_off_t done = 0;
    apr_status_t rv;

    if (strlen(name) >= 100) {
        return APR_EINVAL;
    }
    if ((rv = apr_file_open(&f, path, APR_FOPEN_READ, 0, scratch)) != APR_SUCCESS ||
        (rv = apr_file_info_get(&fi, APR_FINFO_SIZE | APR_FINFO_MTIME, f)) != APR_SUCCESS) {
        return rv;
    }
    memset(h, 0, sizeof(h));
    memcpy(h, name, strlen(name));
    octal((char *)h + 100, 8, 0600);
    octal((char *)h + 108, 8, 0);
    octal((char *)h + 116, 8, 0);
    octal((char *)h + 124, 12, (unsigned long long)fi.size);
    octal((char *)h + 136, 12, (unsigned long long)apr_time_sec(fi.mtime));
    h[156] = '0';
    memcpy(h + 257, "ustar", 6);
    memcpy(h + 263, "00", 2);
    octal((char *)h + 148, 7, checksum(h));
    if ((rv = put(t, h, BLOCK)) != APR_SUCCESS) {
        return rv;
    }
    buf = apr_palloc(scratch, CHUNK);
    /* The size in the header is the size read now: a file that changes meanwhile would
     * corrupt the archive, so exactly that many bytes are written. */
    while (done < fi.size) {
        n = (apr_size_t)(fi.size - done < CHUNK ? fi.size - done : CHUNK);
        if ((rv = apr_file_read_full(f, buf, n, NULL)) != APR_SUCCESS ||
            (rv = put(t, buf, n)) != APR_SUCCESS) {
            return rv;
        }
        done += (apr_off_t)n;
    }
    apr_file_close(f);
    memset(h, 0, sizeof(h));
    return put(t, h, (size_t)((BLOCK - fi.size % BLOCK) % BLOCK));
}

apr_status_t jr_tar_finish(jr_tar_t *t)
{
    unsigned char z[2 * BLOCK];
    int rc;
    memset(z, 0, sizeof(z));
    if (put(t, z, sizeof(z)) != APR_SUCCESS) {
        return APR_EGENERAL;
    }
    rc = gzclose(t->gz);
    t->gz = NULL;
    return rc == Z_OK ? APR_SUCCESS : APR_EGENERAL;
}

/* Reads exactly n bytes; APR_EGENERAL on a short read (a truncated or damaged stream). */
static apr_status_t get(jr_tar_t *t, void *buf, size_t n)
{
    return n == 0 || gzread(t->gz, buf, (unsigned)n) == (int)n ? APR_SUCCESS : APR_EGENERAL;
}

static apr_status_t skip(jr_tar_t *t, apr_off_t n)
{
    char buf[BLOCK];
    while (n > 0) {
        size_t k = (size_t)(n < BLOCK ? n : BLOCK);
        if (get(t, buf, k) != APR_SUCCESS) {
            return APR_EGENERAL;
        }
        n -= (apr_off_t)k;
    }
    return APR_SUCCESS;
}

static int all_zero(const unsigned char *h)
{
    size_t i;
    for (i = 0; i < BLOCK && !h[i]; ++i) {
    }
    return i == BLOCK;
}

static int parse_octal(const unsigned char *f, size_t width, unsigned long long *v)
{
    size_t i = 0;
    *v = 0;
    while (i < width && f[i] == ' ') {
        ++i;
    }
    if (i == width || f[i] < '0' || f[i] > '7') {
        return -1;
    }
    for (; i < width && f[i] >= '0' && f[i] <= '7'; ++i) {
        *v = *v * 8 + (unsigned)(f[i] - '0');
    }
    return (i == width || f[i] == '\0' || f[i] == ' ') ? 0 : -1;
}

/* The end of the archive: a second zero block, then only zeros (tar pads to its record
 * size) up to the end of a gzip stream that checks out (its CRC and length). */
static apr_status_t at_end(jr_tar_t *t, unsigned char *h)
{
    int n, err = Z_OK;
    if (get(t, h, BLOCK) != APR_SUCCESS || !all_zero(h)) {
        return APR_EGENERAL;
    }
    while ((n = gzread(t->gz, h, BLOCK)) > 0) {
        memset(h + n, 0, (size_t)(BLOCK - n));
        if (!all_zero(h)) {
            return APR_EGENERAL;
        }
    }
    gzerror(t->gz, &err);
    return n == 0 && gzeof(t->gz) && err == Z_OK ? APR_SUCCESS : APR_EGENERAL;
}

apr_status_t jr_tar_next(jr_tar_t *t, const char **name, apr_off_t *size, apr_pool_t *scratch)
{
    unsigned char h[BLOCK];
    unsigned long long sz, sum;

    *name = NULL;
    if (skip(t, t->left + t->pad) != APR_SUCCESS || get(t, h, BLOCK) != APR_SUCCESS) {
        return APR_EGENERAL;
    }
    t->left = t->pad = 0;
    if (all_zero(h)) {
        return at_end(t, h);
    }
    if (parse_octal(h + 148, 8, &sum) != 0 || sum != checksum(h) ||
        parse_octal(h + 124, 12, &sz) != 0 || (h[156] != '0' && h[156] != '\0') ||
        memchr(h, '\0', 100) == NULL || h[345] != '\0') {
        return APR_EGENERAL;
    }
    *name = apr_pstrdup(scratch, (const char *)h);
    *size = (apr_off_t)sz;
    t->left = (apr_off_t)sz;
    t->pad = (apr_off_t)((BLOCK - sz % BLOCK) % BLOCK);
    return APR_SUCCESS;
}

apr_status_t jr_tar_extract(jr_tar_t *t, const char *path, apr_pool_t *scratch)
{
    char *buf = apr_palloc(scratch, CHUNK);
    apr_file_t *f;
    apr_status_t rv;

    if ((rv = apr_file_open(&f, path, APR_FOPEN_WRITE | APR_FOPEN_CREATE | APR_FOPEN_EXCL,
                            APR_FPROT_UREAD | APR_FPROT_UWRITE, scratch)) != APR_SUCCESS) {
        return rv;
    }
    while (t->left > 0 && rv == APR_SUCCESS) {
        size_t n = (size_t)(t->left < CHUNK ? t->left : CHUNK);
        if ((rv = get(t, buf, n)) == APR_SUCCESS) {
            rv = apr_file_write_full(f, buf, n, NULL);
            t->left -= (apr_off_t)n;
        }
    }
    if (rv == APR_SUCCESS) {
        rv = apr_file_close(f);
    } else {
        apr_file_close(f);
    }
    return rv;
}

void jr_tar_close(jr_tar_t *t)
{
    close_gz(t);
}
