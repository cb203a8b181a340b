/* See jr_multipart.h. A small state machine over a sliding buffer: bytes that could still be
 * the start of a delimiter stay in the buffer until the next read decides. The body is read
 * as if it began with CRLF, so the first boundary line matches the same delimiter
 * ("\r\n--" boundary) as every later one and a preamble is skipped. */
#include <string.h>
#include <strings.h>

#include <apr_strings.h>

#include "jr_multipart.h"
#include "jr_storage.h"
#include "jr_util.h"

int jr_mp_is_form_data(const char *ct)
{
    static const char mt[] = "multipart/form-data";
    if (!ct) {
        return 0;
    }
    ct += strspn(ct, " \t");
    return !strncasecmp(ct, mt, sizeof(mt) - 1) && strchr("; \t", ct[sizeof(mt) - 1]);
}

static int is_ws(char c)
{
    return c == ' ' || c == '\t';
}

/* One parameter of a header value at *s ("; key=value" or "; key="quoted""): fills key and
 * value, advances *s. Returns 1 when one was read, 0 at the end, -1 when malformed.
 * Inside quotes only \" and \\ are escapes: old clients send Windows paths unescaped. */
static int next_param(apr_pool_t *p, const char **s, const char **key, const char **value)
{
    const char *c = *s, *k;
    char *v, *o;

    while (is_ws(*c)) {
        ++c;
    }
    if (!*c) {
        return 0;
    }
    if (*c++ != ';') {
        return -1;
    }
    while (is_ws(*c) || *c == ';') { /* tolerate empty parameters ";;" */
        ++c;
    }
    if (!*c) {
        return 0;
    }
    k = c;
    while (*c && *c != '=' && *c != ';' && !is_ws(*c)) {
        ++c;
    }
    *key = apr_pstrmemdup(p, k, (apr_size_t)(c - k));
    while (is_ws(*c)) {
        ++c;
    }
    if (*c != '=' || c == k) {
        return -1;
    }
    ++c;
    while (is_ws(*c)) {
        ++c;
    }
    if (*c == '"') {
        v = o = apr_palloc(p, strlen(c) + 1);
        for (++c; *c && *c != '"'; ++c) {
            if (*c == '\\' && (c[1] == '"' || c[1] == '\\')) {
                ++c;
            }
            *o++ = *c;
        }
        if (*c != '"') {
            return -1;
        }
        *o = '\0';
        ++c;
    } else {
        const char *start = c;
        while (*c && *c != ';' && !is_ws(*c)) {
            ++c;
        }
        v = apr_pstrmemdup(p, start, (apr_size_t)(c - start));
    }
    *value = v;
    *s = c;
    return 1;
}

const char *jr_mp_boundary(apr_pool_t *p, const char *ct)
{
    const char *s, *key, *value;
    if (!jr_mp_is_form_data(ct)) {
        return NULL;
    }
    if (!(s = strpbrk(ct + strspn(ct, " \t"), "; \t"))) {
        return NULL;
    }
    while (next_param(p, &s, &key, &value) == 1) {
        if (!strcasecmp(key, "boundary")) {
            size_t n = strlen(value);
            return n >= 1 && n <= JR_MP_BOUNDARY_MAX && !strpbrk(value, "\r\n") ? value : NULL;
        }
    }
    return NULL;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    c = (char)(c | 0x20);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

const char *jr_mp_clean_filename(apr_pool_t *p, const char *raw)
{
    char *out, *o;
    const char *c, *base;
    if (!raw) {
        return NULL;
    }
    out = o = apr_palloc(p, strlen(raw) + 1);
    for (c = raw; *c; ++c) {
        if (c[0] == '%' && hexval(c[1]) >= 0 && hexval(c[2]) >= 0) {
            int b = hexval(c[1]) * 16 + hexval(c[2]);
            if (b == '"' || b == '\r' || b == '\n') {
                *o++ = (char)b;
                c += 2;
                continue;
            }
        }
        *o++ = *c;
    }
    *o = '\0';
    base = out;
    for (c = out; *c; ++c) {
        if (*c == '/' || *c == '\\') {
            base = c + 1;
        }
    }
    return *base ? base : NULL;
}

/* filename*=UTF-8''percent-encoded (RFC 5987), as some clients send non-ASCII names. */
static const char *ext_filename(apr_pool_t *p, const char *v)
{
    const char *q;
    if (strncasecmp(v, "utf-8'", 6) || !(q = strchr(v + 6, '\''))) {
        return NULL;
    }
    return jr_url_decode(p, q + 1, 0);
}

/* The headers of one part: 0, or -1 when malformed. */
typedef struct {
    const char *name, *filename, *content_type;
} part_hdr_t;

static int parse_disposition(apr_pool_t *p, const char *v, part_hdr_t *h)
{
    const char *key, *value, *fname = NULL, *fstar = NULL;
    size_t n = strcspn(v, "; \t");
    int rc;
    if (n != 9 || strncasecmp(v, "form-data", 9)) {
        return -1;
    }
    v += n;
    while ((rc = next_param(p, &v, &key, &value)) == 1) {
        if (!strcasecmp(key, "name")) {
            h->name = value;
        } else if (!strcasecmp(key, "filename")) {
            fname = value;
        } else if (!strcasecmp(key, "filename*")) {
            fstar = ext_filename(p, value);
        }
    }
    if (rc < 0 || !h->name) {
        return -1;
    }
    if (fstar) {
        const char *c, *base = fstar;
        for (c = fstar; *c; ++c) {
            if (*c == '/' || *c == '\\') {
                base = c + 1;
            }
        }
        h->filename = *base ? base : NULL;
    } else {
        h->filename = jr_mp_clean_filename(p, fname);
    }
    return 0;
}

static int parse_headers(apr_pool_t *p, const char *block, apr_size_t len, part_hdr_t *h)
{
    const char *s = block, *end = block + len;
    int seen_cd = 0;
    memset(h, 0, sizeof(*h));
    while (s < end) {
        const char *eol = s, *colon;
        const char *name, *value;
        while (eol + 1 < end && !(eol[0] == '\r' && eol[1] == '\n')) {
            ++eol;
        }
        if (eol + 1 >= end) {
            eol = end;
        }
        colon = memchr(s, ':', (apr_size_t)(eol - s));
        if (!colon || colon == s || memchr(s, '\0', (apr_size_t)(eol - s))) {
            return -1;
        }
        name = apr_pstrmemdup(p, s, (apr_size_t)(colon - s));
        name = jr_trim(p, name);
        value = jr_trim(p, apr_pstrmemdup(p, colon + 1, (apr_size_t)(eol - colon - 1)));
        if (!strcasecmp(name, "content-disposition")) {
            if (seen_cd++ || parse_disposition(p, value, h) != 0) {
                return -1;
            }
        } else if (!strcasecmp(name, "content-type")) {
            h->content_type = value;
        }
        s = eol + 2;
    }
    return seen_cd ? 0 : -1;
}

typedef struct {
    apr_file_t *in;
    char *buf;
    apr_size_t pos, len, cap, chunk;
    int eof;
} reader_t;

/* Appends up to chunk bytes after compacting. */
static jr_mp_status_e fill(reader_t *r)
{
    apr_size_t n;
    apr_status_t rv;
    if (r->pos) {
        memmove(r->buf, r->buf + r->pos, r->len - r->pos);
        r->len -= r->pos;
        r->pos = 0;
    }
    n = r->cap - r->len < r->chunk ? r->cap - r->len : r->chunk;
    if (n == 0) {
        return JR_MP_MALFORMED;
    }
    rv = apr_file_read(r->in, r->buf + r->len, &n);
    if (rv == APR_EOF || (rv == APR_SUCCESS && n == 0)) {
        r->eof = 1;
        return JR_MP_OK;
    }
    if (rv != APR_SUCCESS) {
        return JR_MP_IO;
    }
    r->len += n;
    return JR_MP_OK;
}

static apr_ssize_t find(const char *hay, apr_size_t n, const char *needle, apr_size_t m)
{
    const char *c = hay, *end = hay + n;
    while (m <= (apr_size_t)(end - c) &&
           (c = memchr(c, needle[0], (apr_size_t)(end - c) - m + 1))) {
        if (!memcmp(c, needle, m)) {
            return c - hay;
        }
        ++c;
    }
    return -1;
}

typedef enum { S_PREAMBLE, S_AFTER_DELIM, S_PADDING, S_HEADERS, S_BODY, S_DONE } state_e;

typedef struct {
    apr_pool_t *p;
    const char *field, *data_dir;
    jr_mp_part_t *out;
    apr_file_t *fd; /* open while the wanted part's bytes flow */
    int found;
} sink_t;

static jr_mp_status_e emit(sink_t *k, const char *data, apr_size_t n)
{
    if (k->fd && n) {
        if (apr_file_write_full(k->fd, data, n, NULL) != APR_SUCCESS) {
            return JR_MP_IO;
        }
        k->out->size += (apr_off_t)n;
    }
    return JR_MP_OK;
}

static jr_mp_status_e start_part(sink_t *k, const part_hdr_t *h)
{
    if (k->found || strcmp(h->name, k->field)) {
        return JR_MP_OK;
    }
    if (jr_storage_tmpfile(&k->fd, &k->out->path, k->p, k->data_dir, "part") != APR_SUCCESS) {
        return JR_MP_IO;
    }
    k->found = 1;
    k->out->size = 0;
    k->out->filename = h->filename;
    k->out->content_type = h->content_type;
    return JR_MP_OK;
}

static jr_mp_status_e end_part(sink_t *k)
{
    if (k->fd) {
        apr_status_t rv = apr_file_close(k->fd);
        k->fd = NULL;
        if (rv != APR_SUCCESS) {
            return JR_MP_IO;
        }
    }
    return JR_MP_OK;
}

/* The steps of the machine, one per state, on the n buffered bytes at b (r->pos). Each sets
 * *more when it needs another read. */

/* Preamble or a part's content: up to the next delimiter, the content goes to the sink. */
static jr_mp_status_e step_content(reader_t *r, sink_t *k, state_e *st, const char *delim,
                                   apr_size_t dlen, int *more)
{
    const char *b = r->buf + r->pos;
    apr_size_t n = r->len - r->pos;
    apr_ssize_t at;
    jr_mp_status_e rc;

    if ((at = find(b, n, delim, dlen)) >= 0) {
        if (*st == S_BODY &&
            ((rc = emit(k, b, (apr_size_t)at)) != JR_MP_OK || (rc = end_part(k)) != JR_MP_OK)) {
            return rc;
        }
        r->pos += (apr_size_t)at + dlen;
        *st = S_AFTER_DELIM;
        return JR_MP_OK;
    }
    if (n >= dlen) { /* all but a possible start of the delimiter is content */
        if (*st == S_BODY && (rc = emit(k, b, n - dlen + 1)) != JR_MP_OK) {
            return rc;
        }
        r->pos += n - dlen + 1;
    }
    *more = 1;
    return JR_MP_OK;
}

static jr_mp_status_e step_after_delim(reader_t *r, state_e *st, int *more)
{
    const char *b = r->buf + r->pos;
    if (r->len - r->pos < 2) {
        *more = 1;
    } else if (b[0] == '-' && b[1] == '-') {
        *st = S_DONE; /* the close delimiter; an epilogue is ignored */
    } else {
        *st = S_PADDING;
    }
    return JR_MP_OK;
}

static jr_mp_status_e step_padding(reader_t *r, state_e *st, int *more)
{
    const char *b = r->buf + r->pos;
    apr_size_t n = r->len - r->pos;
    while (n > 0 && is_ws(*b)) {
        ++b, --n, ++r->pos;
    }
    if (n < 2) {
        *more = 1;
        return JR_MP_OK;
    }
    if (b[0] != '\r' || b[1] != '\n') {
        return JR_MP_MALFORMED;
    }
    r->pos += 2;
    *st = S_HEADERS;
    return JR_MP_OK;
}

static jr_mp_status_e step_headers(reader_t *r, sink_t *k, state_e *st, int *more)
{
    const char *b = r->buf + r->pos;
    apr_size_t n = r->len - r->pos;
    apr_ssize_t at;
    part_hdr_t h;

    if (n >= 2 && b[0] == '\r' && b[1] == '\n') {
        at = 0; /* no header lines */
    } else if ((at = find(b, n, "\r\n\r\n", 4)) >= 0) {
        at += 2;
    } else {
        /* A block within the cap ends with a CRLF CRLF inside its first cap + 2 bytes;
         * deciding earlier would make the answer depend on how reads split the body. */
        *more = 1;
        return n >= JR_MP_HEADERS_MAX + 2 ? JR_MP_MALFORMED : JR_MP_OK;
    }
    if ((apr_size_t)at > JR_MP_HEADERS_MAX || parse_headers(k->p, b, (apr_size_t)at, &h) != 0) {
        return JR_MP_MALFORMED;
    }
    r->pos += (apr_size_t)at + 2;
    *st = S_BODY;
    return start_part(k, &h);
}

/* One step of the machine on the buffered bytes. Sets *more when it needs another read. */
static jr_mp_status_e step(reader_t *r, sink_t *k, state_e *st, const char *delim, apr_size_t dlen,
                           int *more)
{
    *more = 0;
    switch (*st) {
    case S_PREAMBLE:
    case S_BODY:
        return step_content(r, k, st, delim, dlen, more);
    case S_AFTER_DELIM:
        return step_after_delim(r, st, more);
    case S_PADDING:
        return step_padding(r, st, more);
    case S_HEADERS:
        return step_headers(r, k, st, more);
    case S_DONE:
        break;
    }
    return JR_MP_OK;
}

jr_mp_status_e jr_mp_extract(jr_mp_part_t *out, apr_pool_t *p, const char *body_path,
                             const char *boundary, const char *field, const char *data_dir,
                             apr_size_t chunk)
{
    const char *delim;
    apr_size_t dlen;
    reader_t r;
    sink_t k;
    state_e st = S_PREAMBLE;
    jr_mp_status_e rc = JR_MP_OK;

    memset(out, 0, sizeof(*out));
    if (!boundary || !*boundary || strlen(boundary) > JR_MP_BOUNDARY_MAX) {
        return JR_MP_MALFORMED;
    }
    delim = apr_pstrcat(p, "\r\n--", boundary, NULL);
    dlen = strlen(delim);
    memset(&r, 0, sizeof(r));
    memset(&k, 0, sizeof(k));
    r.chunk = chunk ? chunk : JR_MP_CHUNK;
    r.cap = r.chunk + JR_MP_HEADERS_MAX + dlen + 8;
    r.buf = apr_palloc(p, r.cap);
    memcpy(r.buf, "\r\n", 2); /* see the top of this file */
    r.len = 2;
    k.p = p;
    k.field = field;
    k.data_dir = data_dir;
    k.out = out;
    if (apr_file_open(&r.in, body_path, APR_FOPEN_READ | APR_FOPEN_BINARY, 0, p) != APR_SUCCESS) {
        return JR_MP_IO;
    }
    while (rc == JR_MP_OK && st != S_DONE) {
        int more = 0;
        rc = step(&r, &k, &st, delim, dlen, &more);
        if (rc == JR_MP_OK && more) {
            if (r.eof) {
                rc = JR_MP_MALFORMED; /* the body ends before the close delimiter */
            } else {
                rc = fill(&r);
            }
        }
    }
    apr_file_close(r.in);
    if (k.fd) {
        apr_file_close(k.fd);
    }
    if (rc != JR_MP_OK) {
        memset(out, 0, sizeof(*out));
        return rc;
    }
    return k.found ? JR_MP_OK : JR_MP_NO_FIELD;
}
