/* The share link as a plain HTML page (/share/:token) for a parent's phone: the JSON answer
 * of /api/share/:token (the same checks, counts, bans and throttle) rendered on the server,
 * every value escaped, no script, a strict Content-Security-Policy (the one style block is
 * allowed by its hash). */
#include <string.h>

#include <apr_base64.h>
#include <apr_file_io.h>
#include <apr_strings.h>

#include "jr_crypt.h"
#include "jr_json.h"
#include "jr_share.h"
#include "jr_util.h"

#define FORM_MAX 8192 /* a form with one password field */

static const char style[] =
    "body{font:16px/1.45 system-ui,sans-serif;margin:0;background:#f6f6f4;color:#222}"
    "main{max-width:40rem;margin:0 auto;padding:1rem}h1{font-size:1.5rem;margin:.5rem 0}"
    "h2{font-size:1.15rem;margin:1.5rem 0 .5rem}"
    "article{background:#fff;border-radius:.5rem;padding:.75rem;margin:.5rem 0}"
    ".meta{color:#666;font-size:.9rem;margin:0 0 .25rem}.text{white-space:pre-wrap;margin:0}"
    "img{max-width:100%;height:auto;display:block;margin-top:.5rem;border-radius:.25rem}"
    "input,button{font:inherit;padding:.5rem;margin:.25rem 0;width:100%;box-sizing:border-box}"
    ".error{color:#a00}";

/* HTML-escapes & < > " ' (the core has no httpd to ask); NULL gives "". */
static const char *esc(apr_pool_t *p, const char *s)
{
    size_t n = 0;
    const char *c;
    char *out, *o;
    if (!s) {
        return "";
    }
    for (c = s; *c; ++c) {
        n += strchr("&<>\"'", *c) ? 6 : 1;
    }
    o = out = apr_palloc(p, n + 1);
    for (c = s; *c; ++c) {
        switch (*c) {
        case '&': memcpy(o, "&amp;", 5); o += 5; break;
        case '<': memcpy(o, "&lt;", 4); o += 4; break;
        case '>': memcpy(o, "&gt;", 4); o += 4; break;
        case '"': memcpy(o, "&quot;", 6); o += 6; break;
        case '\'': memcpy(o, "&#39;", 5); o += 5; break;
        default: *o++ = *c;
        }
    }
    *o = '\0';
    return out;
}

static const char *csp(apr_pool_t *p)
{
    const char *hex = jr_sha256_hex(p, style, strlen(style));
    unsigned char raw[32];
    char *b64 = apr_palloc(p, (apr_size_t)apr_base64_encode_len(32));
    int i;
    for (i = 0; i < 32; ++i) {
        raw[i] = (unsigned char)((hex[2 * i] <= '9' ? hex[2 * i] - '0' : hex[2 * i] - 'a' + 10) * 16 +
                                 (hex[2 * i + 1] <= '9' ? hex[2 * i + 1] - '0'
                                                        : hex[2 * i + 1] - 'a' + 10));
    }
    apr_base64_encode_binary(b64, raw, 32);
    return apr_pstrcat(p, "default-src 'none'; img-src 'self'; style-src 'sha256-", b64,
                       "'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'", NULL);
}

static apr_status_t page(jr_ctx_t *ctx, jr_result_t *res, int status, const char *title,
                         const char *body)
{
    const char *html = apr_pstrcat(
        ctx->pool, "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
                   "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
                   "<meta name=\"referrer\" content=\"no-referrer\"><title>",
        esc(ctx->pool, title), "</title><style>", style, "</style></head><body><main>", body,
        "</main></body></html>\n", NULL);
    res->content_type = "text/html; charset=utf-8";
    apr_table_setn(res->headers, "Content-Security-Policy", csp(ctx->pool));
    apr_table_setn(res->headers, "Referrer-Policy", "no-referrer");
    return jr_reply_raw(res, status, html, strlen(html));
}

static const char *entries_html(apr_pool_t *p, const json_t *entries)
{
    const char *out = "";
    size_t i, j;
    json_t *e, *f;
    json_array_foreach(entries, i, e) {
        const char *module = jr_json_str(e, "module_name", NULL);
        const char *photo = jr_json_str(e, "photo_url", NULL), *files = "";
        json_array_foreach(json_object_get(e, "files"), j, f) {
            files = apr_pstrcat(p, files, "<li><a href=\"", esc(p, jr_json_str(f, "url", "")),
                                "\">", esc(p, jr_json_str(f, "name", "")), "</a></li>", NULL);
        }
        out = apr_pstrcat(
            p, out, "<article><p class=\"meta\">",
            esc(p, apr_pstrndup(p, jr_json_str(e, "created_at", ""), 10)),
            module ? " · " : "", esc(p, module), "</p><p class=\"text\">",
            esc(p, jr_json_str(e, "description", "")), "</p>",
            photo ? apr_pstrcat(p, "<img src=\"", esc(p, photo), "\" alt=\"Photo\">", NULL) : "",
            *files ? apr_pstrcat(p, "<ul>", files, "</ul>", NULL) : "", "</article>", NULL);
    }
    return out;
}

static const char *reports_html(apr_pool_t *p, const json_t *reports)
{
    const char *out = "";
    size_t i;
    json_t *r;
    json_array_foreach(reports, i, r) {
        const char *topic = jr_json_str(r, "topic", NULL), *time = jr_json_str(r, "lesson_time", NULL);
        out = apr_pstrcat(p, out, "<article><p class=\"meta\">",
                          esc(p, jr_json_str(r, "lesson_date", "")), time ? " " : "",
                          esc(p, time), topic ? " · " : "", esc(p, topic),
                          "</p><p class=\"text\">", esc(p, jr_json_str(r, "text", "")),
                          "</p></article>", NULL);
    }
    return out;
}

static apr_status_t content_page(jr_ctx_t *ctx, jr_result_t *res, const json_t *doc)
{
    apr_pool_t *p = ctx->pool;
    const char *student = jr_json_str(doc, "student_name", NULL);
    const char *group = jr_json_str(doc, "group_name", "");
    const json_t *entries = json_object_get(doc, "entries");
    const char *body = apr_pstrcat(
        p, "<h1>", esc(p, student ? student : group), "</h1>",
        student ? apr_pstrcat(p, "<p class=\"meta\">", esc(p, group), "</p>", NULL) : "",
        entries ? apr_pstrcat(p, "<h2>Journal</h2>", json_array_size(entries)
                                                         ? entries_html(p, entries)
                                                         : "<p>No entries yet.</p>",
                              NULL)
                : "",
        "<h2>Lessons</h2>",
        json_array_size(json_object_get(doc, "lesson_reports"))
            ? reports_html(p, json_object_get(doc, "lesson_reports"))
            : "<p>No lesson reports yet.</p>",
        NULL);
    return page(ctx, res, 200, student ? student : group, body);
}

static apr_status_t form_page(jr_ctx_t *ctx, jr_result_t *res, int status, const char *error)
{
    apr_pool_t *p = ctx->pool;
    const char *action = apr_pstrcat(p, "/share/", jr_url_encode(p, apr_table_get(ctx->params,
                                                                                   "token")),
                                     NULL);
    return page(ctx, res, status, "Password",
                apr_pstrcat(p, "<h1>This journal is protected</h1>",
                            error ? apr_pstrcat(p, "<p class=\"error\">", esc(p, error), "</p>",
                                                NULL)
                                  : "",
                            "<form method=\"post\" action=\"", esc(p, action),
                            "\"><label>Password <input type=\"password\" name=\"password\" "
                            "required autocomplete=\"current-password\"></label>"
                            "<button type=\"submit\">Open</button></form>",
                            NULL));
}

/* The JSON answer of the shared content, as a page. */
static apr_status_t render(jr_ctx_t *ctx, jr_result_t *res, const jr_result_t *inner, int posted)
{
    const char *err = NULL;
    const json_t *doc =
        inner->body ? jr_json_parse(ctx->pool, inner->body, inner->body_len, &err) : NULL;
    if (inner->status == 200 && doc) {
        return content_page(ctx, res, doc);
    }
    if (inner->status == 401 && json_is_true(json_object_get(doc, "password_required"))) {
        return form_page(ctx, res, 401, posted ? "Wrong password." : NULL);
    }
    if (inner->status == 429) {
        return form_page(ctx, res, 429, "Too many wrong passwords. Try again later.");
    }
    return page(ctx, res, inner->status, "Not available",
                inner->status == 404 ? "<h1>This link does not exist or has expired.</h1>"
                : inner->status == 403 ? "<h1>Access from this address is blocked.</h1>"
                                       : "<h1>Not available right now. Try again later.</h1>");
}

apr_status_t jr_op_share_page(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    jr_result_t inner;
    jr_result_init(&inner, ctx->pool);
    jr_op_share_open(ctx, NULL, &inner);
    apr_table_overlap(res->headers, inner.headers, APR_OVERLAP_TABLES_SET);
    return render(ctx, res, &inner, 0);
}

/* The password of a posted form (application/x-www-form-urlencoded), NULL when absent. */
static const char *form_password(jr_ctx_t *ctx)
{
    apr_file_t *f;
    char buf[FORM_MAX + 1];
    apr_size_t n = FORM_MAX;
    const char *err = NULL;
    apr_table_t *form;
    if (!ctx->upload || !ctx->upload->path || ctx->upload->size > FORM_MAX ||
        apr_file_open(&f, ctx->upload->path, APR_FOPEN_READ, 0, ctx->pool) != APR_SUCCESS) {
        return NULL;
    }
    if (apr_file_read(f, buf, &n) != APR_SUCCESS) {
        n = 0;
    }
    apr_file_close(f);
    buf[n] = '\0';
    form = jr_parse_query(ctx->pool, buf, &err);
    return form ? apr_table_get(form, "password") : NULL;
}

apr_status_t jr_op_share_page_unlock(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    const char *password = form_password(ctx);
    jr_result_t inner;
    if (!password || !*password) {
        return form_page(ctx, res, 400, "Enter the password.");
    }
    jr_result_init(&inner, ctx->pool);
    jr_op_share_unlock(ctx, jr_json_own(ctx->pool, json_pack("{s:s}", "password", password)),
                       &inner);
    apr_table_overlap(res->headers, inner.headers, APR_OVERLAP_TABLES_SET);
    return render(ctx, res, &inner, 1);
}
