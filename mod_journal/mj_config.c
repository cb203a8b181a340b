/* Directives: parsed and validated while the configuration is read, so `apache2 -t`
 * reports a bad value with the directive's name and the allowed values. The directives are
 * the rows of core/jr_config_list.h: this file makes httpd's command table of them. Numeric
 * directives and flags share one handler each (the core checks the bounds); a TEXT or LIST
 * row has its own check_<field> below. */
#include <stddef.h>
#include <string.h>

#include <apr_lib.h>
#include <apr_strings.h>
#include <apr_uri.h>
#include <http_core.h>

#include "jr_events.h"
#include "jr_time.h"
#include "jr_util.h"
#include "mj_private.h"

extern module AP_MODULE_DECLARE_DATA journal_module;

jr_config_t *mj_conf(const server_rec *s)
{
    return ap_get_module_config(s->module_config, &journal_module);
}

void *mj_create_server_conf(apr_pool_t *p, server_rec *s)
{
    jr_config_t *c = apr_pcalloc(p, sizeof(*c));
    jr_config_unset(c);
    return c;
}

void *mj_merge_server_conf(apr_pool_t *p, void *basev, void *addv)
{
    jr_config_t *c = apr_pcalloc(p, sizeof(*c));
    jr_config_merge(c, basev, addv);
    return c;
}

/* Rows of scope MAIN are refused inside <VirtualHost> with httpd's own message. */
static const char *check_context(cmd_parms *cmd)
{
    const jr_directive_t *d = cmd->info;
    return d->scope == JR_DIR_MAIN ? ap_check_cmd_context(cmd, GLOBAL_ONLY) : NULL;
}

static const char *set_number(cmd_parms *cmd, void *dc, const char *arg)
{
    const char *err = check_context(cmd);
    return err ? err : jr_config_set_number(cmd->pool, mj_conf(cmd->server), cmd->info, arg);
}

static const char *set_flag(cmd_parms *cmd, void *dc, int on)
{
    const char *err = check_context(cmd);
    if (!err) {
        jr_config_set_flag(mj_conf(cmd->server), cmd->info, on);
    }
    return err;
}

/* The check of a TEXT or LIST row: *value holds the current value (NULL while unset) and
 * receives the new one. Returns NULL or the message that refuses arg. */
typedef const char *text_check_fn(cmd_parms *cmd, const char *arg, const char **value);

static const char *check_data_dir(cmd_parms *cmd, const char *arg, const char **value)
{
    const char *path = ap_server_root_relative(cmd->pool, arg);
    apr_finfo_t fi;
    if (!path) {
        return apr_psprintf(cmd->pool, "JournalDataDir: invalid path '%s'", arg);
    }
    if (apr_stat(&fi, path, APR_FINFO_TYPE, cmd->pool) != APR_SUCCESS || fi.filetype != APR_DIR) {
        return apr_psprintf(cmd->pool, "JournalDataDir: '%s' is not an existing directory", path);
    }
    *value = path;
    return NULL;
}
/* A media type: type/subtype of token characters. */
static int is_media_type(const char *s)
{
    const char *slash = strchr(s, '/');
    const char *c;
    if (!slash || slash == s || !slash[1] || strchr(slash + 1, '/')) {
        return 0;
    }
    for (c = s; *c; ++c) {
        if (!apr_isalnum(*c) && !strchr("/!#$&^_.+-", *c)) {
            return 0;
        }
    }
    return 1;
}

static const char *check_upload_types(cmd_parms *cmd, const char *arg, const char **value)
{
    if (!is_media_type(arg)) {
        return apr_psprintf(cmd->pool, "JournalUploadTypes: '%s' is not a media type such as "
                                       "application/pdf",
                            arg);
    }
    *value = *value ? apr_pstrcat(cmd->pool, *value, " ", arg, NULL) : apr_pstrdup(cmd->pool, arg);
    return NULL;
}

/* 1 when s has no space or control character (values go into the line-based settings file). */
static int is_one_token(const char *s)
{
    for (; *s; ++s) {
        if (apr_isspace(*s) || apr_iscntrl(*s)) {
            return 0;
        }
    }
    return 1;
}

/* The key file's readability by the server's User is checked at startup (mj_worker.c), the
 * program behind JournalWorkerPath when the workers start. */
static const char *check_worker_path(cmd_parms *cmd, const char *arg, const char **value)
{
    const char *path = ap_server_root_relative(cmd->pool, arg);
    if (!*arg || !path || strpbrk(path, "\r\n")) {
        return apr_psprintf(cmd->pool, "JournalWorkerPath: invalid path '%s': use the path of "
                                       "the journal-worker program", arg);
    }
    *value = path;
    return NULL;
}

/* An http(s) base URL without credentials, query or fragment; trailing slashes dropped.
 * name: the directive; example: what a valid value looks like. */
static const char *check_base_url(cmd_parms *cmd, const char *arg, const char **value,
                                  const char *name, const char *example)
{
    apr_uri_t u;
    char *url;
    size_t n;
    if (apr_uri_parse(cmd->pool, arg, &u) == APR_SUCCESS && (u.user || u.password)) {
        return apr_psprintf(cmd->pool, "%s: a user name or password in the URL is not allowed%s",
                            name, strcmp(name, "JournalAIEndpoint")
                                      ? ""
                                      : ": put the key in the file named by JournalAIKeyFile");
    }
    if (strlen(arg) > 2048 || !is_one_token(arg) ||
        apr_uri_parse(cmd->pool, arg, &u) != APR_SUCCESS || !u.scheme ||
        (ap_cstr_casecmp(u.scheme, "http") != 0 && ap_cstr_casecmp(u.scheme, "https") != 0) ||
        !u.hostname || !*u.hostname || u.query || u.fragment) {
        return apr_psprintf(cmd->pool, "%s: '%s' is not valid: use the http:// or https:// base "
                                       "URL of %s (no query or fragment)",
                            name, arg, example);
    }
    url = apr_pstrdup(cmd->pool, arg);
    for (n = strlen(url); n > 0 && url[n - 1] == '/'; --n) {
        url[n - 1] = '\0';
    }
    *value = url;
    return NULL;
}

static const char *check_ai_endpoint(cmd_parms *cmd, const char *arg, const char **value)
{
    return check_base_url(cmd, arg, value, "JournalAIEndpoint",
                          "an OpenAI-compatible API, such as http://127.0.0.1:11434/v1");
}

static const char *check_photo_ai_endpoint(cmd_parms *cmd, const char *arg, const char **value)
{
    return check_base_url(cmd, arg, value, "JournalPhotoAIEndpoint",
                          "the photo service, such as http://gpu1.internal:7860");
}

static const char *check_public_url(cmd_parms *cmd, const char *arg, const char **value)
{
    return check_base_url(cmd, arg, value, "JournalPublicURL",
                          "the server as families reach it, such as https://journal.example.org");
}

static const char *check_ai_model(cmd_parms *cmd, const char *arg, const char **value)
{
    if (!*arg || strlen(arg) > 256 || !is_one_token(arg)) {
        return apr_psprintf(cmd->pool, "JournalAIModel: '%s' is not valid: use a model name of "
                                       "1 to 256 characters without spaces, such as llama3.1",
                            arg);
    }
    *value = apr_pstrdup(cmd->pool, arg);
    return NULL;
}

/* A file that holds a secret: it must exist when the configuration is read. */
static const char *secret_file(cmd_parms *cmd, const char *arg, const char **value,
                               const char *what)
{
    const char *path = ap_server_root_relative(cmd->pool, arg);
    apr_finfo_t fi;
    if (!*arg || !path || strpbrk(path, "\r\n")) {
        return apr_psprintf(cmd->pool, "%s: invalid path '%s'", cmd->cmd->name, arg);
    }
    if (apr_stat(&fi, path, APR_FINFO_TYPE, cmd->pool) != APR_SUCCESS || fi.filetype != APR_REG) {
        return apr_psprintf(cmd->pool, "%s: '%s' is not an existing file: use a "
                                       "file that holds %s",
                            cmd->cmd->name, path, what);
    }
    *value = path;
    return NULL;
}

static const char *check_ai_key_file(cmd_parms *cmd, const char *arg, const char **value)
{
    return secret_file(cmd, arg, value, "the API key");
}

static const char *check_redis_password_file(cmd_parms *cmd, const char *arg,
                                             const char **value)
{
    return secret_file(cmd, arg, value, "the password");
}

/* host:port (port 1-65535) or the absolute path of a unix socket. */
static const char *check_redis(cmd_parms *cmd, const char *arg, const char **value)
{
    const char *host, *sock;
    int port;
    if (jr_redis_address(cmd->pool, arg, &host, &port, &sock) != 0) {
        return apr_psprintf(cmd->pool, "JournalRedis: '%s' is not valid: use host:port (e.g. "
                                       "127.0.0.1:6379) or the absolute path of a unix socket",
                            arg);
    }
    *value = apr_pstrdup(cmd->pool, arg);
    return NULL;
}

static const char *check_backup_schedule(cmd_parms *cmd, const char *arg, const char **value)
{
    int h, m;
    if (jr_parse_hhmm(arg, &h, &m) != 0) {
        return apr_psprintf(cmd->pool, "JournalBackupSchedule: '%s' is not valid: use a time "
                                       "of day HH:MM from 00:00 to 23:59",
                            arg);
    }
    *value = apr_pstrdup(cmd->pool, arg);
    return NULL;
}

/* check_<field> of each TEXT and LIST row, by row. */
#define TEXT_CHECK(field, type, name, kind, ...) TEXT_CHECK_##kind(field)
#define TEXT_CHECK_TEXT(field) [JR_DIRECTIVE_##field] = check_##field,
#define TEXT_CHECK_LIST TEXT_CHECK_TEXT
#define TEXT_CHECK_INT(field)
#define TEXT_CHECK_DURATION(field)
#define TEXT_CHECK_SIZE(field)
#define TEXT_CHECK_FLAG(field)
static text_check_fn *const text_checks[JR_DIRECTIVE_COUNT] = {JR_DIRECTIVES(TEXT_CHECK)};

static const char *set_text(cmd_parms *cmd, void *dc, const char *arg)
{
    const jr_directive_t *d = cmd->info;
    jr_config_t *c = mj_conf(cmd->server);
    const char *value = jr_config_text(c, d);
    const char *err = check_context(cmd);
    if (!err && !(err = text_checks[d - jr_directives](cmd, arg, &value))) {
        jr_config_set_text(c, d, value);
    }
    return err;
}

/* One command_rec per row, in the list's order. */
#define COMMAND(field, type, name, kind, scope, min, max, dflt, range, help)                     \
    COMMAND_##kind(name, (void *)&jr_directives[JR_DIRECTIVE_##field], help),
#define COMMAND_INT(name, d, help) AP_INIT_TAKE1(name, set_number, d, RSRC_CONF, help)
#define COMMAND_DURATION COMMAND_INT
#define COMMAND_SIZE COMMAND_INT
#define COMMAND_FLAG(name, d, help) AP_INIT_FLAG(name, set_flag, d, RSRC_CONF, help)
#define COMMAND_TEXT(name, d, help) AP_INIT_TAKE1(name, set_text, d, RSRC_CONF, help)
#define COMMAND_LIST(name, d, help) AP_INIT_ITERATE(name, set_text, d, RSRC_CONF, help)

const command_rec mj_directives[] = {
    JR_DIRECTIVES(COMMAND) /* each row ends with its comma */
    {NULL},
};
