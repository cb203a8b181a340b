/* The request path: route, database, authentication, body, operation, one response. */
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <apr_strings.h>
#include <http_core.h>
#include <http_protocol.h>
#include <http_request.h>
#include <util_filter.h>

#include "jr_crypt.h"
#include "jr_cursor.h"
#include "jr_etag.h"
#include "jr_idem.h"
#include "jr_json.h"
#include "jr_road.h"
#include "jr_router.h"
#include "jr_util.h"
#include "mj_private.h"

static int set_header(void *rec, const char *key, const char *value)
{
    apr_table_set(((request_rec *)rec)->err_headers_out, key, value);
    return 1;
}

static int send_file(request_rec *r, const jr_result_t *res);

/* A response that may be streamed: the flush callback's baton (ctx->flush_baton). */
typedef struct {
    request_rec *r;
    const jr_result_t *res; /* status and headers are final at the first flush */
    apr_bucket_brigade *bb; /* reused for every flush */
    apr_off_t held_back;    /* HEAD: bytes of the body produced and not sent */
    int started;            /* the headers and part of the body have left */
} mj_stream_t;

static void set_headers(request_rec *r, const jr_result_t *res)
{
    r->status = res->status;
    apr_table_setn(r->err_headers_out, "Cache-Control", "no-store");
    apr_table_setn(r->err_headers_out, "X-Content-Type-Options", "nosniff");
    apr_table_do(set_header, r, res->headers, NULL);
    ap_set_content_type(r, res->content_type ? res->content_type
                                             : "application/json; charset=utf-8");
}

/* Passes one buffer of a streamed body (and EOS at the end) down the filter chain. The bucket
 * is transient: the writer reuses its buffer, and a filter that keeps bytes past the call
 * sets them aside (copies them) itself. */
static apr_status_t pass_body(mj_stream_t *st, const char *data, size_t len, int eos)
{
    apr_bucket_alloc_t *ba = st->r->connection->bucket_alloc;
    apr_status_t rv;
    if (!st->bb) {
        st->bb = apr_brigade_create(st->r->pool, ba);
    }
    if (len > 0) {
        APR_BRIGADE_INSERT_TAIL(st->bb, apr_bucket_transient_create(data, len, ba));
    }
    if (eos) {
        APR_BRIGADE_INSERT_TAIL(st->bb, apr_bucket_eos_create(ba));
    }
    rv = ap_pass_brigade(st->r->output_filters, st->bb);
    apr_brigade_cleanup(st->bb);
    return rv;
}

/* The writer's flush callback (jr_jw_list_begin installs it): the first call sends the
 * headers, with no Content-Length (chunked, or close on HTTP/1.0). HEAD sends nothing here:
 * its headers go out at the end, with the length counted. */
static int stream_out(void *baton, const char *data, size_t len)
{
    mj_stream_t *st = baton;
    if (st->r->header_only) {
        st->held_back += (apr_off_t)len;
        return 0;
    }
    if (!st->started) {
        set_headers(st->r, st->res);
        st->started = 1;
    }
    return pass_body(st, data, len, 0) == APR_SUCCESS ? 0 : -1;
}

/* An answer that came after part of another was sent (a database error in the middle of a
 * list): the status line has gone, so the response is cut short instead. An error bucket of
 * 502 makes httpd leave out the last chunk and close the connection, as mod_proxy does for a
 * backend that fails mid-response; the client sees a truncated body, never a complete one. */
static int abort_stream(mj_stream_t *st, const jr_result_t *res)
{
    request_rec *r = st->r;
    MJ_RLOG(JR00050, r, 0,
            "the answer failed with status %d after part of it was sent; the "
            "response is cut short",
            res->status);
    r->connection->keepalive = AP_CONN_CLOSE;
    APR_BRIGADE_INSERT_TAIL(st->bb, ap_bucket_error_create(HTTP_BAD_GATEWAY, NULL, r->pool,
                                                           r->connection->bucket_alloc));
    pass_body(st, NULL, 0, 1);
    return OK;
}

/* The rest of a streamed body, after what the flushes sent. */
static int finish_stream(mj_stream_t *st, const jr_result_t *res)
{
    if (st->r->header_only) {
        set_headers(st->r, res);
        ap_set_content_length(st->r, st->held_back + (apr_off_t)res->body_len);
        return OK;
    }
    return pass_body(st, res->body, res->body_len, 1) == APR_SUCCESS ? OK : AP_FILTER_ERROR;
}

/* The one response helper: every answer of the journal leaves through here. st is NULL
 * for answers given before an operation ran. */
static int send_answer(request_rec *r, mj_stream_t *st, const jr_result_t *res)
{
    if (st && st->started && !res->streamed) {
        return abort_stream(st, res);
    }
    if (st && res->streamed) {
        return finish_stream(st, res);
    }
    if (res->file && res->status == 200) {
        return send_file(r, res);
    }
    size_t len = res->body ? res->body_len : 2;
    const char *body = res->body ? res->body : "{}";
    /* A whole answer in one buffer: sent as before, with its Content-Length. */
    set_headers(r, res);
    ap_set_content_length(r, (apr_off_t)len);
    if (!r->header_only) {
        ap_rwrite(body, (int)len, r);
    }
    return OK;
}

static int send_result(request_rec *r, const jr_result_t *res)
{
    return send_answer(r, NULL, res);
}

/* A stored file: httpd's filters then serve Range requests (byterange filter) and the
 * conditional ones (ap_meets_conditions with our ETag). */
static int send_file(request_rec *r, const jr_result_t *res)
{
    const jr_file_reply_t *f = res->file;
    apr_bucket_brigade *bb;
    apr_file_t *fd;
    int cond;

    if (apr_file_open(&fd, f->path, APR_FOPEN_READ | APR_FOPEN_BINARY, 0, r->pool) !=
        APR_SUCCESS) {
        MJ_RLOG(JR00020, r, 0, "stored file is missing");
        jr_result_t gone;
        jr_result_init(&gone, r->pool);
        jr_fail(&gone, r->pool, 404, "the file is no longer stored");
        return send_result(r, &gone);
    }
    apr_table_do(set_header, r, res->headers, NULL);
    apr_table_setn(r->headers_out, "ETag", apr_pstrcat(r->pool, "\"", f->etag, "\"", NULL));
    apr_table_setn(r->headers_out, "Cache-Control", "private, no-cache");
    apr_table_setn(r->headers_out, "X-Content-Type-Options", "nosniff");
    apr_table_setn(r->headers_out, "Content-Security-Policy", "default-src 'none'; sandbox");
    if (f->filename) {
        apr_table_setn(r->headers_out, "Content-Disposition",
                       apr_psprintf(r->pool, "%s; filename=\"%s\"; filename*=UTF-8''%s",
                                    f->attachment ? "attachment" : "inline",
                                    jr_ascii_filename(r->pool, f->filename),
                                    jr_url_encode(r->pool, f->filename)));
    }
    r->mtime = f->mtime;
    ap_set_last_modified(r);
    ap_set_content_type(r, f->content_type);
    if ((cond = ap_meets_conditions(r)) != OK) {
        jr_result_t refused;
        if (cond == HTTP_NOT_MODIFIED) {
            r->status = cond;
            return OK;
        }
        jr_result_init(&refused, r->pool);
        jr_fail(&refused, r->pool, cond, "precondition failed: the file has changed");
        return send_result(r, &refused);
    }
    ap_set_content_length(r, f->size);
    if (r->header_only) {
        return OK;
    }
    bb = apr_brigade_create(r->pool, r->connection->bucket_alloc);
    apr_brigade_insert_file(bb, fd, 0, f->size, r->pool);
    APR_BRIGADE_INSERT_TAIL(bb, apr_bucket_eos_create(r->connection->bucket_alloc));
    return ap_pass_brigade(r->output_filters, bb) == APR_SUCCESS ? OK : AP_FILTER_ERROR;
}

static apr_status_t remove_temp(void *path)
{
    apr_file_remove(path, NULL); /* gone already when the operation kept it */
    return APR_SUCCESS;
}

/* Where body bytes go: a sink returns OK or an HTTP status. */
typedef int body_sink_fn(void *baton, const char *data, apr_size_t len);
static int check_length(request_rec *r, apr_off_t cap, apr_off_t *declared);
static int pump_body(request_rec *r, apr_off_t cap, apr_size_t chunk, body_sink_fn *sink,
                     void *baton);

static int to_file(void *baton, const char *data, apr_size_t len)
{
    return apr_file_write_full(baton, data, len, NULL) == APR_SUCCESS ? OK
                                                                      : HTTP_INTERNAL_SERVER_ERROR;
}

/* Streams an upload body into a temp file under data_dir/tmp with a cap. OK or a status. */
static int read_upload(request_rec *r, const jr_config_t *conf, jr_upload_t **out)
{
    const char *dir = apr_pstrcat(r->pool, conf->data_dir, "/tmp", NULL);
    char *tmpl = apr_pstrcat(r->pool, dir, "/upload-XXXXXX", NULL);
    apr_off_t declared;
    apr_finfo_t fi;
    apr_file_t *fd;
    jr_upload_t *up;
    int status;

    if ((status = check_length(r, conf->upload_max, &declared)) != OK) {
        return status;
    }
    apr_dir_make_recursive(dir, APR_FPROT_UREAD | APR_FPROT_UWRITE | APR_FPROT_UEXECUTE, r->pool);
    if (apr_file_mktemp(&fd, tmpl, APR_FOPEN_CREATE | APR_FOPEN_READ | APR_FOPEN_WRITE |
                                        APR_FOPEN_EXCL | APR_FOPEN_BINARY,
                        r->pool) != APR_SUCCESS) {
        MJ_RLOG(JR00021, r, 0, "cannot create an upload temp file");
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    apr_pool_cleanup_register(r->pool, tmpl, remove_temp, apr_pool_cleanup_null);
    status = pump_body(r, conf->upload_max, HUGE_STRING_LEN * 4, to_file, fd);
    if (status == OK && apr_file_info_get(&fi, APR_FINFO_SIZE, fd) != APR_SUCCESS) {
        status = HTTP_INTERNAL_SERVER_ERROR;
    }
    apr_file_close(fd);
    if (status != OK) {
        return status;
    }
    up = apr_pcalloc(r->pool, sizeof(*up));
    up->path = tmpl;
    up->size = fi.size;
    up->content_type = apr_table_get(r->headers_in, "Content-Type");
    up->filename = apr_table_get(r->headers_in, "X-File-Name");
    *out = up;
    return OK;
}

static int fail(request_rec *r, jr_result_t *res, int status, const char *msg)
{
    jr_fail(res, r->pool, status, "%s", msg);
    return send_result(r, res);
}

/* The declared Content-Length: OK, 400 when malformed, 413 when over cap. */
static int check_length(request_rec *r, apr_off_t cap, apr_off_t *declared)
{
    const char *cl = apr_table_get(r->headers_in, "Content-Length");
    char *end;
    *declared = -1;
    if (!cl) {
        return OK;
    }
    if (apr_strtoff(declared, cl, &end, 10) != APR_SUCCESS || *end || *declared < 0) {
        return HTTP_BAD_REQUEST;
    }
    return *declared > cap ? HTTP_REQUEST_ENTITY_TOO_LARGE : OK;
}

/* Reads the body (chunked or not) through the input filters into sink, with a cap. */
static int pump_body(request_rec *r, apr_off_t cap, apr_size_t chunk, body_sink_fn *sink,
                     void *baton)
{
    apr_bucket_brigade *bb = apr_brigade_create(r->pool, r->connection->bucket_alloc);
    apr_off_t total = 0;
    int eos = 0, status = OK;

    while (!eos && status == OK) {
        apr_bucket *b;
        apr_status_t rv =
            ap_get_brigade(r->input_filters, bb, AP_MODE_READBYTES, APR_BLOCK_READ, chunk);
        if (rv != APR_SUCCESS) {
            return ap_map_http_request_error(rv, HTTP_BAD_REQUEST);
        }
        for (b = APR_BRIGADE_FIRST(bb); b != APR_BRIGADE_SENTINEL(bb) && status == OK;
             b = APR_BUCKET_NEXT(b)) {
            const char *data;
            apr_size_t len;
            if (APR_BUCKET_IS_EOS(b)) {
                eos = 1;
                break;
            }
            if (APR_BUCKET_IS_METADATA(b)) {
                continue;
            }
            if (apr_bucket_read(b, &data, &len, APR_BLOCK_READ) != APR_SUCCESS) {
                status = HTTP_BAD_REQUEST;
            } else if ((total += (apr_off_t)len) > cap) {
                status = HTTP_REQUEST_ENTITY_TOO_LARGE;
            } else {
                status = sink(baton, data, len);
            }
        }
        apr_brigade_cleanup(bb);
    }
    return status;
}

/* The first size of a JSON body's buffer: it doubles as bytes arrive, up to the cap, so a
 * client that declares a large body and sends little makes the server allocate little. */
#define BODY_START 8192

typedef struct {
    apr_pool_t *pool;
    char *buf;
    apr_size_t used, size, max;
} mem_sink_t;

static int to_memory(void *baton, const char *data, apr_size_t len)
{
    mem_sink_t *m = baton;
    if (m->used + len + 1 > m->size) {
        apr_size_t size = m->size;
        char *bigger;
        while (m->used + len + 1 > size) {
            size *= 2;
        }
        size = size > m->max ? m->max : size; /* pump_body keeps used + len within the cap */
        bigger = apr_palloc(m->pool, size);
        memcpy(bigger, m->buf, m->used);
        m->buf = bigger;
        m->size = size;
    }
    memcpy(m->buf + m->used, data, len);
    m->used += len;
    return OK;
}

/* Reads the whole body into memory with a cap (declared: its checked Content-Length, or -1).
 * Returns OK or an HTTP status. */
static int read_body(request_rec *r, apr_off_t cap, apr_off_t declared, char **out,
                     apr_size_t *outlen)
{
    mem_sink_t m;
    int status;

    *out = NULL;
    *outlen = 0;
    m.pool = r->pool;
    m.used = 0;
    m.max = (apr_size_t)cap + 1;
    m.size = declared >= 0 && declared < BODY_START ? (apr_size_t)declared + 1 : BODY_START;
    m.size = m.size > m.max ? m.max : m.size;
    m.buf = apr_palloc(r->pool, m.size);
    if ((status = pump_body(r, cap, HUGE_STRING_LEN, to_memory, &m)) != OK) {
        return status;
    }
    m.buf[m.used] = '\0';
    *out = m.buf;
    *outlen = m.used;
    return OK;
}

/* 1 when the request announces a body (Content-Length above 0, or chunked). */
static int has_body(request_rec *r)
{
    const char *cl = apr_table_get(r->headers_in, "Content-Length");
    return apr_table_get(r->headers_in, "Transfer-Encoding") != NULL ||
           (cl && cl[strspn(cl, "0")] != '\0');
}

/* A refusal before the body was read. The body is not read: a client that announced a large
 * one gets its answer at once and the connection is closed after it (httpd then does not
 * read the body either; it only drains what has arrived while it closes). */
static int refuse(request_rec *r, const jr_result_t *res)
{
    if (has_body(r)) {
        r->connection->keepalive = AP_CONN_CLOSE;
    }
    return send_result(r, res);
}

static const char *bearer(request_rec *r)
{
    const char *auth = apr_table_get(r->headers_in, "Authorization");
    if (auth && !strncasecmp(auth, "Bearer ", 7)) {
        return jr_trim(r->pool, auth + 7);
    }
    return NULL;
}

static int answer_body_error(request_rec *r, jr_result_t *res, int status, apr_off_t cap)
{
    if (status == HTTP_REQUEST_ENTITY_TOO_LARGE) {
        /* Do not read the rest of an oversized body: answer and close. */
        r->connection->keepalive = AP_CONN_CLOSE;
        jr_fail(res, r->pool, 413, "request body exceeds the limit of %" APR_OFF_T_FMT " bytes",
                cap);
        return send_result(r, res);
    }
    if (status >= 500) {
        return fail(r, res, 500, "internal error");
    }
    return fail(r, res, status == HTTP_REQUEST_TIME_OUT ? 408 : 400,
                "the request body could not be read");
}

/* The request's connection into ctx->db. NULL when requests can be served on it; otherwise
 * why not (no connection, or a schema older than the module's: ctx->db is then set, for the
 * health check). */
static const char *acquire_db(request_rec *r, jr_ctx_t *ctx)
{
    ap_dbd_t *dbd = mj_dbd_acquire(r);
    ctx->db = dbd ? jr_db_use(r->pool, dbd->driver, dbd->handle, dbd->pool) : NULL;
    if (ctx->db) {
        ctx->db->waker = mj_waker_of(r->server);
        ctx->db->genshare = mj_genshare_of(r->server);
    }
    return jr_db_refusal(ctx->db);
}

/* Every method a route of the journal uses. */
#define MJ_METHODS "GET, HEAD, POST, PUT, DELETE"

/* The body's type is known from the headers, so a route that takes JSON refuses another type
 * before reading. A chunked body without a Content-Type is judged once read (it may be
 * empty, which such a route accepts). */
static int body_type_ok(request_rec *r, jr_ctx_t *ctx, const jr_route_t *route,
                        jr_result_t *res)
{
    const char *ct = apr_table_get(r->headers_in, "Content-Type");
    if (!has_body(r) || (!ct && apr_table_get(r->headers_in, "Transfer-Encoding"))) {
        return 1;
    }
    return jr_request_type_ok(ctx, route, ct, res);
}

#define GO_ON (-1)

/* Takes the body the route wants: discarded, into an upload file (ctx->upload) or into
 * memory (*body, *len). GO_ON, or the handler's result once a refusal has been sent. */
static int take_body(request_rec *r, const jr_config_t *conf, const jr_route_t *route,
                     jr_ctx_t *ctx, jr_result_t *res, char **body, apr_size_t *len)
{
    apr_off_t cap = (apr_off_t)conf->max_body, declared;
    int status;
    if (route->body == JR_BODY_NONE) {
        ap_discard_request_body(r); /* an authorised request: keep the connection usable */
        return GO_ON;
    }
    if (route->body == JR_BODY_UPLOAD) {
        cap = (apr_off_t)conf->upload_max;
        status = read_upload(r, conf, &ctx->upload);
    } else if ((status = check_length(r, cap, &declared)) == OK) {
        if (!body_type_ok(r, ctx, route, res)) {
            return refuse(r, res);
        }
        status = read_body(r, cap, declared, body, len);
    }
    return status == OK ? GO_ON : answer_body_error(r, res, status, cap);
}

static void init_ctx(request_rec *r, jr_config_t *conf, jr_ctx_t *ctx,
                     jr_credentials_t *cred)
{
    memset(ctx, 0, sizeof(*ctx));
    ctx->pool = r->pool;
    ctx->cfg = conf;
    ctx->client_ip = r->useragent_ip;
    /* JournalPublicURL when set (a proxy in front changes the scheme and host); otherwise the
     * address this request used, as httpd builds its own redirects (UseCanonicalName). */
    ctx->base_url = conf->public_url ? conf->public_url : ap_construct_url(r->pool, "", r);
    ctx->method = r->method;
    ctx->raw_path = r->parsed_uri.path ? r->parsed_uri.path : "/";
    ctx->raw_args = r->args;
    ctx->params = apr_table_make(r->pool, 4);
    ctx->counters = mj_counters();
    cred->session_token = apr_table_get(r->headers_in, "X-Auth-Token");
    cred->api_key = apr_table_get(r->headers_in, "X-Api-Key");
    if (!cred->api_key) {
        cred->api_key = bearer(r);
    }
}

/* Idempotency-Key on a POST (see jr_idem.h): JR_IDEM_RUN, or res holds the answer. */
static jr_idem_e begin_idempotent(request_rec *r, jr_ctx_t *ctx, const char *path,
                                  const char *body, apr_size_t len, jr_idem_t **idem,
                                  jr_result_t *res)
{
    jr_idem_request_t rq = {apr_table_get(r->headers_in, "Idempotency-Key"), r->method, path,
                            r->args, body, len};
    return jr_idem_begin(ctx, &rq, idem, res);
}

/* 128 random bits for an id, drawn from OpenSSL 64 ids at a time per thread: one draw costs
 * about as much as the rest of a small answer, and most of it is the call, not the bytes. The
 * pid tells a forked child from the process that drew the bytes. */
static int request_id_bits(unsigned char out[16])
{
    static _Thread_local unsigned char pool[16 * 64];
    static _Thread_local size_t left;
    static _Thread_local pid_t owner;
    if (!left || owner != getpid()) {
        if (jr_random_bytes(pool, sizeof(pool)) != 0) {
            return -1;
        }
        left = sizeof(pool);
        owner = getpid();
    }
    left -= 16;
    memcpy(out, pool + left, 16);
    memset(pool + left, 0, 16);
    return 0;
}

/* X-Request-Id on every answer, and the same id in the error log (%L) and the access log
 * (%{X-Request-Id}o): mod_unique_id's id when it is loaded, else 128 random bits. */
static void set_request_id(request_rec *r)
{
    const char *id = apr_table_get(r->subprocess_env, "UNIQUE_ID");
    unsigned char raw[16];
    if (!id) {
        id = request_id_bits(raw) == 0 ? jr_hex(r->pool, raw, sizeof(raw)) : NULL;
    }
    if (!id) {
        return; /* no random source: the answer goes without an id rather than not at all */
    }
    if (!r->log_id) {
        r->log_id = id;
    }
    apr_table_setn(r->err_headers_out, "X-Request-Id", id);
}

static int handle(request_rec *r, int *gated);

/* The route step: the request's row, or the table's "no route" row (ctx->allow set for a
 * 405); *found says which. NULL for TRACE, with ctx->allow set for its 405. */
static const jr_route_t *find_route(request_rec *r, jr_ctx_t *ctx, int *found)
{
    const char *path = r->parsed_uri.path ? r->parsed_uri.path : "/", *allow = NULL;
    const jr_route_t *table = jr_routes_for(path, &ctx->iface), *route = NULL;
    jr_match_e match = jr_route_match(table, r->pool, r->method, path, &route, ctx->params, &allow);
    *found = match == JR_ROUTE_FOUND;
    ctx->allow = match == JR_ROUTE_BAD_METHOD ? allow : NULL;
    if (r->method_number == M_TRACE) {
        /* TRACE would echo the credentials (X-Api-Key, Cookie) back: refused on every path,
         * before any key check. Only /api tells which methods a known path has; /api/v1
         * never reveals without a key whether a path exists. */
        if (ctx->iface != JR_IF_ADMIN || !ctx->allow) {
            ctx->allow = MJ_METHODS;
        }
        return NULL;
    }
    return *found ? route : jr_route_none(table);
}

/* The request's turn at the gate (mj_gate.c) ends once, when its work is done. */
static void gate_release(int *gated)
{
    if (*gated) {
        *gated = 0;
        mj_gate_leave();
    }
}

int mj_handler(request_rec *r)
{
    apr_status_t rv;
    int rc;
    if (!r->handler || strcmp(r->handler, MJ_HANDLER)) {
        return DECLINED;
    }
    set_request_id(r);
    mj_current_request = r;
    if ((rv = mj_gate_enter(r, MJ_GATE_MAX_WAIT)) != APR_SUCCESS) {
        jr_result_t res;
        jr_result_init(&res, r->pool);
        jr_fail(&res, r->pool, 503, "server busy, try again");
        apr_table_setn(res.headers, "Retry-After", "1");
        if (rv == APR_TIMEUP) {
            MJ_RLOG(JR00122, r, 0, "a request waited %d s for its turn (JournalActiveRequests)",
                    (int)apr_time_sec(MJ_GATE_MAX_WAIT));
        }
        rc = refuse(r, &res);
    } else {
        int gated = 1;
        rc = handle(r, &gated);
        gate_release(&gated);
    }
    mj_current_request = NULL;
    return rc;
}

static int handle(request_rec *r, int *gated)
{
    jr_config_t *conf;
    const jr_route_t *route;
    const char *qerr = NULL, *refusal;
    const char *path = r->parsed_uri.path ? r->parsed_uri.path : "/";
    jr_credentials_t cred;
    jr_result_t res;
    jr_ctx_t ctx;
    mj_stream_t st = {r, &res, NULL, 0, 0};
    char *body = NULL;
    apr_size_t len = 0;
    int status, found;
    jr_idem_t *idem = NULL;
    conf = mj_conf(r->server);
    init_ctx(r, conf, &ctx, &cred);
    jr_result_init(&res, r->pool);
    if (!(route = find_route(r, &ctx, &found))) {
        jr_op_no_route(&ctx, NULL, &res);
        return refuse(r, &res);
    }
    /* Every refusal that does not need the body comes before it is read. */
    if (!(route->flags & JR_RF_NO_DB) && (refusal = acquire_db(r, &ctx)) != NULL &&
        !(route->flags & JR_RF_DB_OPTIONAL)) {
        jr_fail(&res, r->pool, 503, "%s", refusal);
        return refuse(r, &res);
    }
    if (!jr_request_authorize(&ctx, route, &cred, &res)) {
        return refuse(r, &res);
    }
    if (!found) { /* 404 or 405, from the headers too */
        route->op(&ctx, NULL, &res);
        return refuse(r, &res);
    }
    if (!(ctx.query = jr_parse_query(r->pool, r->args, &qerr))) {
        jr_fail(&res, r->pool, 400, "%s", qerr);
        return refuse(r, &res);
    }
    if (!jr_v1_query_ok(&ctx, route, &res)) {
        return refuse(r, &res);
    }
    if (ctx.who.username) {
        r->user = apr_pstrdup(r->pool, ctx.who.username);
    }

    if ((status = take_body(r, conf, route, &ctx, &res, &body, &len)) != GO_ON) {
        return status;
    }
    if (begin_idempotent(r, &ctx, path, body, len, &idem, &res) != JR_IDEM_RUN ||
        !jr_etag_precondition(&ctx, route, apr_table_get(r->headers_in, "If-Match"), &res)) {
        return send_result(r, &res);
    }
    ctx.flush = stream_out;
    ctx.flush_baton = &st;
    jr_request_run(&ctx, route, apr_table_get(r->headers_in, "Content-Type"), body, len, &res);
    jr_idem_end(&ctx, idem, &res);
    jr_etag_finish(&ctx, route, apr_table_get(r->headers_in, "If-None-Match"), &res);
    gate_release(gated); /* what is left is sending: a file to a slow client takes no turn */
    return send_answer(r, &st, &res);
}
