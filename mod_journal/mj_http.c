/* The request path: route, database, authentication, body, operation, one response. */
#include <string.h>
#include <strings.h>

#include <apr_strings.h>
#include <http_core.h>
#include <http_protocol.h>
#include <http_request.h>
#include <util_filter.h>

#include "jr_json.h"
#include "jr_router.h"
#include "jr_util.h"
#include "mj_private.h"

static int set_header(void *rec, const char *key, const char *value)
{
    apr_table_set(((request_rec *)rec)->err_headers_out, key, value);
    return 1;
}

static int send_file(request_rec *r, const jr_result_t *res);

/* The one response helper: every answer of the journal leaves through here. */
static int send_result(request_rec *r, const jr_result_t *res)
{
    if (res->file && res->status == 200) {
        return send_file(r, res);
    }
    size_t len = res->body_len;
    const char *body = res->body;
    if (!body) {
        body = jr_json_dump(r->pool, res->json ? res->json : json_object(), &len);
    }
    r->status = res->status;
    apr_table_setn(r->err_headers_out, "Cache-Control", "no-store");
    apr_table_setn(r->err_headers_out, "X-Content-Type-Options", "nosniff");
    apr_table_do(set_header, r, res->headers, NULL);
    ap_set_content_type(r, "application/json; charset=utf-8");
    ap_set_content_length(r, (apr_off_t)len);
    if (!r->header_only) {
        ap_rwrite(body, (int)len, r);
    }
    return OK;
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
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, "JR00020: stored file is missing");
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
static int read_upload(request_rec *r, const mj_server_conf_t *conf, jr_upload_t **out)
{
    const char *dir = apr_pstrcat(r->pool, conf->data_dir, "/tmp", NULL);
    char *tmpl = apr_pstrcat(r->pool, dir, "/upload-XXXXXX", NULL);
    apr_off_t declared;
    apr_finfo_t fi;
    apr_file_t *fd;
    jr_upload_t *up;
    int status;

    if ((status = check_length(r, conf->core.upload_max, &declared)) != OK) {
        return status;
    }
    apr_dir_make_recursive(dir, APR_FPROT_UREAD | APR_FPROT_UWRITE | APR_FPROT_UEXECUTE, r->pool);
    if (apr_file_mktemp(&fd, tmpl, APR_FOPEN_CREATE | APR_FOPEN_READ | APR_FOPEN_WRITE |
                                        APR_FOPEN_EXCL | APR_FOPEN_BINARY,
                        r->pool) != APR_SUCCESS) {
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, "JR00021: cannot create an upload temp file");
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    apr_pool_cleanup_register(r->pool, tmpl, remove_temp, apr_pool_cleanup_null);
    status = pump_body(r, conf->core.upload_max, HUGE_STRING_LEN * 4, to_file, fd);
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

typedef struct {
    apr_pool_t *pool;
    char *buf;
    apr_size_t used, size;
} mem_sink_t;

static int to_memory(void *baton, const char *data, apr_size_t len)
{
    mem_sink_t *m = baton;
    if (m->used + len + 1 > m->size) {
        char *bigger;
        while (m->used + len + 1 > m->size) {
            m->size *= 2;
        }
        bigger = apr_palloc(m->pool, m->size);
        memcpy(bigger, m->buf, m->used);
        m->buf = bigger;
    }
    memcpy(m->buf + m->used, data, len);
    m->used += len;
    return OK;
}

/* Reads the whole body into memory with a cap. Returns OK or an HTTP status. */
static int read_body(request_rec *r, apr_off_t cap, char **out, apr_size_t *outlen)
{
    mem_sink_t m;
    apr_off_t declared;
    int status;

    *out = NULL;
    *outlen = 0;
    if ((status = check_length(r, cap, &declared)) != OK) {
        return status;
    }
    m.pool = r->pool;
    m.used = 0;
    m.size = declared >= 0 ? (apr_size_t)declared + 1 : 8192;
    m.buf = apr_palloc(r->pool, m.size);
    if ((status = pump_body(r, cap, HUGE_STRING_LEN, to_memory, &m)) != OK) {
        return status;
    }
    m.buf[m.used] = '\0';
    *out = m.buf;
    *outlen = m.used;
    return OK;
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

static int acquire_db(request_rec *r, jr_ctx_t *ctx)
{
    ap_dbd_t *dbd = mj_dbd_acquire(r);
    ctx->db = dbd ? jr_db_use(r->pool, dbd->driver, dbd->handle, dbd->pool) : NULL;
    return ctx->db != NULL;
}

/* Key authentication for a path that matched no route: 1 to go on, 0 when res holds the
 * refusal. */
static int authorize_v1(request_rec *r, jr_ctx_t *ctx, const jr_credentials_t *cred,
                        jr_result_t *res)
{
    static const jr_route_t any = {"GET", "", NULL, JR_AUTH_KEY, JR_BODY_NONE, 0};
    if (!acquire_db(r, ctx)) {
        jr_fail(res, r->pool, 503, "database unavailable");
        return 0;
    }
    return jr_request_authorize(ctx, &any, cred, res);
}

int mj_handler(request_rec *r)
{
    mj_server_conf_t *conf;
    const jr_route_t *table, *route = NULL;
    const char *allow = NULL, *qerr = NULL;
    jr_credentials_t cred;
    jr_result_t res;
    jr_ctx_t ctx;
    char *body = NULL;
    apr_size_t len = 0;
    int status;
    jr_match_e match;

    if (!r->handler || strcmp(r->handler, MJ_HANDLER)) {
        return DECLINED;
    }
    conf = mj_conf(r->server);
    memset(&ctx, 0, sizeof(ctx));
    ctx.pool = r->pool;
    ctx.cfg = &conf->core;
    ctx.client_ip = r->useragent_ip;
    ctx.method = r->method;
    ctx.params = apr_table_make(r->pool, 4);
    jr_result_init(&res, r->pool);

    ctx.counters = mj_counters();
    cred.session_token = apr_table_get(r->headers_in, "X-Auth-Token");
    cred.api_key = apr_table_get(r->headers_in, "X-Api-Key");
    if (!cred.api_key) {
        cred.api_key = bearer(r);
    }
    table = jr_routes_for(r->parsed_uri.path ? r->parsed_uri.path : "/", &ctx.iface);
    match = jr_route_match(table, r->pool, r->method, r->parsed_uri.path ? r->parsed_uri.path : "/",
                           &route, ctx.params, &allow);
    if (match != JR_ROUTE_FOUND) {
        ap_discard_request_body(r);
        /* On /api/v1 everything needs a key, also the answer that a path does not exist. */
        if (ctx.iface == JR_IF_V1 && !authorize_v1(r, &ctx, &cred, &res)) {
            return send_result(r, &res);
        }
        if (match == JR_ROUTE_NOT_FOUND) {
            return fail(r, &res, 404, "not found");
        }
        apr_table_setn(res.headers, "Allow", allow);
        jr_fail(&res, r->pool, 405, "method %s is not allowed here (allowed: %s)", r->method, allow);
        return send_result(r, &res);
    }
    if (!acquire_db(r, &ctx) && !(route->flags & JR_RF_DB_OPTIONAL)) {
        ap_discard_request_body(r);
        return fail(r, &res, 503, "database unavailable");
    }
    if (!jr_request_authorize(&ctx, route, &cred, &res)) {
        ap_discard_request_body(r);
        return send_result(r, &res);
    }
    if (!(ctx.query = jr_parse_query(r->pool, r->args, &qerr))) {
        ap_discard_request_body(r);
        return fail(r, &res, 400, qerr);
    }
    if (ctx.who.username) {
        r->user = apr_pstrdup(r->pool, ctx.who.username);
    }

    if (route->body == JR_BODY_NONE) {
        ap_discard_request_body(r);
    } else if (route->body == JR_BODY_UPLOAD) {
        if ((status = read_upload(r, conf, &ctx.upload)) != OK) {
            return answer_body_error(r, &res, status, (apr_off_t)conf->core.upload_max);
        }
    } else if ((status = read_body(r, (apr_off_t)conf->max_body, &body, &len)) != OK) {
        return answer_body_error(r, &res, status, (apr_off_t)conf->max_body);
    }
    if (jr_request_run(&ctx, route, apr_table_get(r->headers_in, "Content-Type"), body, len,
                       &res) != APR_SUCCESS) {
        return fail(r, &res, 500, "internal error");
    }
    return send_result(r, &res);
}
