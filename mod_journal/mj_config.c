/* Directives: parsed and validated while the configuration is read, so `apache2 -t`
 * reports a bad value with the directive's name and the allowed values. Numeric directives
 * are described by a table (name, kind, bounds, field) and share one handler. */
#include <stddef.h>
#include <string.h>

#include <apr_lib.h>
#include <apr_strings.h>
#include <apr_uri.h>
#include <http_core.h>

#include "jr_counters.h"
#include "jr_util.h"
#include "mj_private.h"

extern module AP_MODULE_DECLARE_DATA journal_module;

typedef enum { NUM_INT, NUM_DURATION, NUM_SIZE } num_kind_e;

typedef struct {
    const char *name;
    num_kind_e kind;
    long long min, max;
    size_t offset; /* of a long long in mj_server_conf_t */
    const char *range; /* the allowed values, as the error message states them */
} num_directive_t;

#define FIELD(f) offsetof(mj_server_conf_t, f)

static const num_directive_t numeric[] = {
    {"JournalSessionLifetime", NUM_DURATION, 60, 366LL * 86400, FIELD(session_ttl),
     "a duration from 60s to 366d (seconds, or a number with s, m, h or d)"},
    {"JournalMaxBodySize", NUM_SIZE, 1024, 1024LL * 1024 * 1024, FIELD(max_body),
     "a size from 1K to 1G (bytes, or a number with K, M or G)"},
    {"JournalBcryptCost", NUM_INT, 4, 15, FIELD(bcrypt_cost), "an integer from 4 to 15"},
    {"JournalRateLimitDefault", NUM_INT, 1, 10000000, FIELD(rate_default),
     "an integer from 1 to 10000000 (and at most JournalRateLimitMax)"},
    {"JournalRateLimitMax", NUM_INT, 1, 10000000, FIELD(rate_max),
     "an integer from 1 to 10000000"},
    {"JournalKeyBanThreshold", NUM_INT, 1, 100000, FIELD(key_ban_threshold),
     "an integer from 1 to 100000"},
    {"JournalKeyBanWindow", NUM_DURATION, 10, 86400, FIELD(key_ban_window),
     "a duration from 10s to 1d"},
    {"JournalKeyBanDuration", NUM_DURATION, 60, 366LL * 86400, FIELD(key_ban_duration),
     "a duration from 60s to 366d"},
    {"JournalLoginBanThreshold", NUM_INT, 1, 100000, FIELD(login_ban_threshold),
     "an integer from 1 to 100000"},
    {"JournalLoginBanWindow", NUM_DURATION, 10, 86400, FIELD(login_ban_window),
     "a duration from 10s to 1d"},
    {"JournalLoginBanDuration", NUM_DURATION, 60, 366LL * 86400, FIELD(login_ban_duration),
     "a duration from 60s to 366d"},
    {"JournalHoneypotBanDuration", NUM_DURATION, 60, 366LL * 86400, FIELD(honeypot_ban_duration),
     "a duration from 60s to 366d"},
    {"JournalMaxUploadSize", NUM_SIZE, 1024, 4LL * 1024 * 1024 * 1024, FIELD(upload_max),
     "a size from 1K to 4G (bytes, or a number with K, M or G)"},
    {"JournalHousekeepingInterval", NUM_DURATION, 5, 86400, FIELD(purge_interval),
     "a duration from 5s to 1d"},
    {"JournalLoginThrottleThreshold", NUM_INT, 1, 100000, FIELD(login_throttle_threshold),
     "an integer from 1 to 100000"},
    {"JournalLoginThrottleWindow", NUM_DURATION, 10, 86400, FIELD(login_throttle_window),
     "a duration from 10s to 1d"},
    {"JournalLoginThrottleMaxBackoff", NUM_DURATION, 1, 3600,
     FIELD(login_throttle_max_backoff), "a duration from 1s to 1h"},
    {"JournalCounterSlots", NUM_INT, JR_SHM_MIN_SLOTS, JR_SHM_MAX_SLOTS, FIELD(counter_slots),
     "an integer from 64 to 1048576"},
    {"JournalReportVersionsMax", NUM_INT, 2, 100000, FIELD(report_versions_max),
     "an integer from 2 to 100000"},
    {"JournalEventRetention", NUM_DURATION, 60, 366LL * 86400, FIELD(event_retention),
     "a duration from 60s to 366d"},
};

#define NUMERIC_COUNT (sizeof(numeric) / sizeof(numeric[0]))

/* The worker processes and the AI endpoint (main server only: see set_worker_numeric). */
static const num_directive_t worker_numeric[] = {
    {"JournalWorkerProcesses", NUM_INT, 1, 16, FIELD(worker_processes),
     "an integer from 1 to 16"},
    {"JournalAITimeout", NUM_DURATION, 1, 3600, FIELD(ai_timeout),
     "a duration from 1s to 1h (seconds, or a number with s, m or h)"},
    {"JournalAIConcurrency", NUM_INT, 1, 256, FIELD(ai_concurrency),
     "an integer from 1 to 256"},
};

#define WORKER_NUMERIC_COUNT (sizeof(worker_numeric) / sizeof(worker_numeric[0]))

mj_server_conf_t *mj_conf(const server_rec *s)
{
    return ap_get_module_config(s->module_config, &journal_module);
}

static long long *num_field(mj_server_conf_t *c, const num_directive_t *d)
{
    return (long long *)((char *)c + d->offset);
}

static void numeric_unset(mj_server_conf_t *c, const num_directive_t *t, size_t n)
{
    size_t i;
    for (i = 0; i < n; ++i) {
        *num_field(c, &t[i]) = -1;
    }
}

static void numeric_merge(mj_server_conf_t *c, mj_server_conf_t *base, mj_server_conf_t *add,
                          const num_directive_t *t, size_t n)
{
    size_t i;
    for (i = 0; i < n; ++i) {
        long long v = *num_field(add, &t[i]);
        *num_field(c, &t[i]) = v >= 0 ? v : *num_field(base, &t[i]);
    }
}

static void merge_worker(mj_server_conf_t *c, const mj_server_conf_t *base,
                         const mj_server_conf_t *add);

void *mj_create_server_conf(apr_pool_t *p, server_rec *s)
{
    mj_server_conf_t *c = apr_pcalloc(p, sizeof(*c));
    numeric_unset(c, numeric, NUMERIC_COUNT);
    numeric_unset(c, worker_numeric, WORKER_NUMERIC_COUNT);
    c->migrate = -1;
    c->worker = -1;
    return c;
}

void *mj_merge_server_conf(apr_pool_t *p, void *basev, void *addv)
{
    mj_server_conf_t *base = basev, *add = addv, *c = apr_pcalloc(p, sizeof(*c));
    numeric_merge(c, base, add, numeric, NUMERIC_COUNT);
    numeric_merge(c, base, add, worker_numeric, WORKER_NUMERIC_COUNT);
    merge_worker(c, base, add);
    c->data_dir = add->data_dir ? add->data_dir : base->data_dir;
    c->upload_types = add->upload_types ? add->upload_types : base->upload_types;
    c->migrate = add->migrate >= 0 ? add->migrate : base->migrate;
    return c;
}

static const char *set_numeric(cmd_parms *cmd, void *dc, const char *arg)
{
    const num_directive_t *d = cmd->info;
    long long v;
    int rc = d->kind == NUM_DURATION ? jr_parse_duration(arg, &v)
             : d->kind == NUM_SIZE   ? jr_parse_size(arg, &v)
                                     : jr_parse_int64(arg, d->min, d->max, &v);
    if (rc != 0 || v < d->min || v > d->max) {
        return apr_psprintf(cmd->pool, "%s: '%s' is not valid: use %s", d->name, arg, d->range);
    }
    *num_field(mj_conf(cmd->server), d) = v;
    return NULL;
}

static const char *set_data_dir(cmd_parms *cmd, void *dc, const char *arg)
{
    const char *path = ap_server_root_relative(cmd->pool, arg);
    apr_finfo_t fi;
    if (!path) {
        return apr_psprintf(cmd->pool, "JournalDataDir: invalid path '%s'", arg);
    }
    if (apr_stat(&fi, path, APR_FINFO_TYPE, cmd->pool) != APR_SUCCESS || fi.filetype != APR_DIR) {
        return apr_psprintf(cmd->pool, "JournalDataDir: '%s' is not an existing directory", path);
    }
    mj_conf(cmd->server)->data_dir = path;
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

static const char *add_upload_type(cmd_parms *cmd, void *dc, const char *arg)
{
    mj_server_conf_t *c = mj_conf(cmd->server);
    if (!is_media_type(arg)) {
        return apr_psprintf(cmd->pool, "JournalUploadTypes: '%s' is not a media type such as "
                                       "application/pdf",
                            arg);
    }
    c->upload_types = c->upload_types ? apr_pstrcat(cmd->pool, c->upload_types, " ",
                                                    apr_pstrdup(cmd->pool, arg), NULL)
                                      : apr_pstrdup(cmd->pool, arg);
    return NULL;
}

static const char *set_migrate(cmd_parms *cmd, void *dc, int flag)
{
    mj_conf(cmd->server)->migrate = flag;
    return NULL;
}

/* ---- The worker processes and the AI endpoint ------------------------------------------
 * Main server only: httpd's parent runs one set of workers for the main server's database,
 * so a value inside <VirtualHost> would mean nothing. Values are checked here; the key
 * file's readability by the server's User is checked at startup (mj_worker.c). */

static void merge_worker(mj_server_conf_t *c, const mj_server_conf_t *base,
                         const mj_server_conf_t *add)
{
    c->worker = add->worker >= 0 ? add->worker : base->worker;
    c->worker_path = add->worker_path ? add->worker_path : base->worker_path;
    c->ai_endpoint = add->ai_endpoint ? add->ai_endpoint : base->ai_endpoint;
    c->ai_model = add->ai_model ? add->ai_model : base->ai_model;
    c->ai_key_file = add->ai_key_file ? add->ai_key_file : base->ai_key_file;
}

static const char *set_worker_numeric(cmd_parms *cmd, void *dc, const char *arg)
{
    const char *err = ap_check_cmd_context(cmd, GLOBAL_ONLY);
    return err ? err : set_numeric(cmd, dc, arg);
}

static const char *set_worker(cmd_parms *cmd, void *dc, int flag)
{
    const char *err = ap_check_cmd_context(cmd, GLOBAL_ONLY);
    if (!err) {
        mj_conf(cmd->server)->worker = flag;
    }
    return err;
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

static const char *set_worker_path(cmd_parms *cmd, void *dc, const char *arg)
{
    const char *err = ap_check_cmd_context(cmd, GLOBAL_ONLY);
    const char *path = err ? NULL : ap_server_root_relative(cmd->pool, arg);
    if (err) {
        return err;
    }
    if (!*arg || !path || strpbrk(path, "\r\n")) {
        return apr_psprintf(cmd->pool, "JournalWorkerPath: invalid path '%s': use the path of "
                                       "the journal-worker program", arg);
    }
    mj_conf(cmd->server)->worker_path = path;
    return NULL;
}

/* An http(s) base URL without credentials, query or fragment; trailing slashes dropped. */
static const char *set_ai_endpoint(cmd_parms *cmd, void *dc, const char *arg)
{
    const char *err = ap_check_cmd_context(cmd, GLOBAL_ONLY);
    apr_uri_t u;
    char *url;
    size_t n;
    if (err) {
        return err;
    }
    if (apr_uri_parse(cmd->pool, arg, &u) == APR_SUCCESS && (u.user || u.password)) {
        return "JournalAIEndpoint: a user name or password in the URL is not allowed: put the "
               "key in the file named by JournalAIKeyFile";
    }
    if (strlen(arg) > 2048 || !is_one_token(arg) ||
        apr_uri_parse(cmd->pool, arg, &u) != APR_SUCCESS || !u.scheme ||
        (ap_cstr_casecmp(u.scheme, "http") != 0 && ap_cstr_casecmp(u.scheme, "https") != 0) ||
        !u.hostname || !*u.hostname || u.query || u.fragment) {
        return apr_psprintf(cmd->pool, "JournalAIEndpoint: '%s' is not valid: use the http:// or "
                                       "https:// base URL of an OpenAI-compatible API, such as "
                                       "http://127.0.0.1:11434/v1 (no query or fragment)",
                            arg);
    }
    url = apr_pstrdup(cmd->pool, arg);
    for (n = strlen(url); n > 0 && url[n - 1] == '/'; --n) {
        url[n - 1] = '\0';
    }
    mj_conf(cmd->server)->ai_endpoint = url;
    return NULL;
}

static const char *set_ai_model(cmd_parms *cmd, void *dc, const char *arg)
{
    const char *err = ap_check_cmd_context(cmd, GLOBAL_ONLY);
    if (err) {
        return err;
    }
    if (!*arg || strlen(arg) > 256 || !is_one_token(arg)) {
        return apr_psprintf(cmd->pool, "JournalAIModel: '%s' is not valid: use a model name of "
                                       "1 to 256 characters without spaces, such as llama3.1",
                            arg);
    }
    mj_conf(cmd->server)->ai_model = apr_pstrdup(cmd->pool, arg);
    return NULL;
}

static const char *set_ai_key_file(cmd_parms *cmd, void *dc, const char *arg)
{
    const char *err = ap_check_cmd_context(cmd, GLOBAL_ONLY);
    const char *path = err ? NULL : ap_server_root_relative(cmd->pool, arg);
    apr_finfo_t fi;
    if (err) {
        return err;
    }
    if (!*arg || !path || strpbrk(path, "\r\n")) {
        return apr_psprintf(cmd->pool, "JournalAIKeyFile: invalid path '%s'", arg);
    }
    if (apr_stat(&fi, path, APR_FINFO_TYPE, cmd->pool) != APR_SUCCESS || fi.filetype != APR_REG) {
        return apr_psprintf(cmd->pool, "JournalAIKeyFile: '%s' is not an existing file: use a "
                                       "file that holds the API key",
                            path);
    }
    mj_conf(cmd->server)->ai_key_file = path;
    return NULL;
}

/* Defaults of the block above, and what the core needs of it. */
static const char *resolve_worker(mj_server_conf_t *c)
{
    if (c->worker < 0) {
        c->worker = 1;
    }
    if (!c->worker_path) {
        c->worker_path = MJ_DEFAULT_WORKER_PATH;
    }
    if (c->worker_processes < 0) {
        c->worker_processes = MJ_DEFAULT_WORKER_PROCESSES;
    }
    if (c->ai_timeout < 0) {
        c->ai_timeout = MJ_DEFAULT_AI_TIMEOUT;
    }
    if (c->ai_concurrency < 0) {
        c->ai_concurrency = MJ_DEFAULT_AI_CONCURRENCY;
    }
    c->core.ai_endpoint = c->ai_endpoint;
    c->core.ai_model = c->ai_model;
    c->core.worker_supervised = c->worker;
    c->core.worker_processes = (int)c->worker_processes;
    if (c->ai_endpoint && !c->ai_model) {
        return "JournalAIEndpoint needs JournalAIModel: name the model the endpoint serves";
    }
    return NULL;
}

#define WORKER_NUMERIC(i, help)                                                               \
    AP_INIT_TAKE1(worker_numeric[i].name, set_worker_numeric, (void *)&worker_numeric[i],     \
                  RSRC_CONF, help)

#define WORKER_DIRECTIVES                                                                     \
    AP_INIT_FLAG("JournalWorker", set_worker, NULL, RSRC_CONF,                                \
                 "Start and supervise the journal-worker processes (On or Off)"),             \
    WORKER_NUMERIC(0, "Number of journal-worker processes httpd supervises"),                 \
    AP_INIT_TAKE1("JournalWorkerPath", set_worker_path, NULL, RSRC_CONF,                      \
                  "Path of the journal-worker program"),                                      \
    AP_INIT_TAKE1("JournalAIEndpoint", set_ai_endpoint, NULL, RSRC_CONF,                      \
                  "Base URL of an OpenAI-compatible API for the AI text checks"),             \
    AP_INIT_TAKE1("JournalAIModel", set_ai_model, NULL, RSRC_CONF,                            \
                  "Model name sent to the AI endpoint"),                                      \
    AP_INIT_TAKE1("JournalAIKeyFile", set_ai_key_file, NULL, RSRC_CONF,                       \
                  "File holding the bearer key of the AI endpoint"),                          \
    WORKER_NUMERIC(1, "Timeout of one request to the AI endpoint"),                           \
    WORKER_NUMERIC(2, "AI requests in flight per worker process")

#define NUMERIC(i, help) \
    AP_INIT_TAKE1(numeric[i].name, set_numeric, (void *)&numeric[i], RSRC_CONF, help)

const command_rec mj_directives[] = {
    AP_INIT_TAKE1("JournalDataDir", set_data_dir, NULL, RSRC_CONF,
                  "Directory for the journal's files (uploads, photos)"),
    AP_INIT_FLAG("JournalMigrate", set_migrate, NULL, RSRC_CONF,
                 "Apply database migrations at startup (On or Off)"),
    NUMERIC(0, "Lifetime of a login session"),
    NUMERIC(1, "Largest accepted request body"),
    NUMERIC(2, "bcrypt cost for new password hashes"),
    NUMERIC(3, "rate_limit_per_min of API keys created without one"),
    NUMERIC(4, "Largest rate_limit_per_min an API key may have"),
    NUMERIC(5, "Wrong API keys from one IP, within the window, that lead to a ban"),
    NUMERIC(6, "Window in which wrong API keys are counted"),
    NUMERIC(7, "Length of a ban for API key guessing"),
    NUMERIC(8, "Failed logins from one IP, within the window, that lead to a ban"),
    NUMERIC(9, "Window in which failed logins are counted"),
    NUMERIC(10, "Length of a ban for failed logins"),
    NUMERIC(11, "Length of a ban for a filled honeypot field"),
    NUMERIC(12, "Largest accepted upload (entry file or photo)"),
    NUMERIC(13, "How often housekeeping (old temp files, the trash purge) runs"),
    NUMERIC(14, "Failed logins for one account, within the window, that throttle it"),
    NUMERIC(15, "Window in which failed logins for one account are counted"),
    NUMERIC(16, "Longest wait of a throttled account (the back-off doubles up to it)"),
    NUMERIC(17, "Slots of each table of the shared counters"),
    NUMERIC(18, "Versions kept per lesson report (the original and the newest others)"),
    NUMERIC(19, "How long outbox events are kept before housekeeping trims them"),
    AP_INIT_ITERATE("JournalUploadTypes", add_upload_type, NULL, RSRC_CONF,
                    "Media types (sniffed from the bytes) accepted as entry files"),
    WORKER_DIRECTIVES,
    {NULL},
};

/* Resolves defaults into the core's settings; checks settings that depend on each other.
 * Returns an error message or NULL. */
const char *mj_conf_resolve(apr_pool_t *p, mj_server_conf_t *c)
{
    const char *err;
#define DFLT(field, value) c->field = c->field >= 0 ? c->field : (value)
    DFLT(session_ttl, MJ_DEFAULT_SESSION_TTL);
    DFLT(max_body, MJ_DEFAULT_MAX_BODY);
    DFLT(bcrypt_cost, MJ_DEFAULT_BCRYPT_COST);
    DFLT(rate_max, JR_DEFAULT_RATE_MAX);
    DFLT(rate_default, c->rate_max < JR_DEFAULT_RATE ? c->rate_max : JR_DEFAULT_RATE);
    DFLT(key_ban_threshold, JR_DEFAULT_KEY_BAN_THRESHOLD);
    DFLT(key_ban_window, JR_DEFAULT_KEY_BAN_WINDOW);
    DFLT(key_ban_duration, JR_DEFAULT_KEY_BAN_DURATION);
    DFLT(login_ban_threshold, JR_DEFAULT_LOGIN_BAN_THRESHOLD);
    DFLT(login_ban_window, JR_DEFAULT_LOGIN_BAN_WINDOW);
    DFLT(login_ban_duration, JR_DEFAULT_LOGIN_BAN_DURATION);
    DFLT(honeypot_ban_duration, JR_DEFAULT_HONEYPOT_BAN_DURATION);
    DFLT(migrate, 1);
    DFLT(upload_max, MJ_DEFAULT_UPLOAD_MAX);
    DFLT(purge_interval, MJ_DEFAULT_PURGE_INTERVAL);
    DFLT(login_throttle_threshold, JR_DEFAULT_LOGIN_THROTTLE_THRESHOLD);
    DFLT(login_throttle_window, JR_DEFAULT_LOGIN_THROTTLE_WINDOW);
    DFLT(login_throttle_max_backoff, JR_DEFAULT_LOGIN_THROTTLE_MAX_BACKOFF);
    DFLT(counter_slots, JR_SHM_DEFAULT_SLOTS);
    DFLT(report_versions_max, JR_DEFAULT_REPORT_VERSIONS_MAX);
    DFLT(event_retention, JR_DEFAULT_EVENT_RETENTION);
#undef DFLT
    if (!c->data_dir) {
        c->data_dir = MJ_DEFAULT_DATA_DIR;
    }
    if ((err = resolve_worker(c)) != NULL) {
        return err;
    }
    if (c->rate_default > c->rate_max) {
        return jr_psprintf(p, "JournalRateLimitDefault (%lld) must not exceed "
                              "JournalRateLimitMax (%lld)", c->rate_default, c->rate_max);
    }
    c->core.session_ttl = c->session_ttl;
    c->core.bcrypt_cost = (int)c->bcrypt_cost;
    c->core.rate_default = (int)c->rate_default;
    c->core.rate_max = (int)c->rate_max;
    c->core.key_ban_threshold = (int)c->key_ban_threshold;
    c->core.key_ban_window = (int)c->key_ban_window;
    c->core.key_ban_duration = c->key_ban_duration;
    c->core.login_ban_threshold = (int)c->login_ban_threshold;
    c->core.login_ban_window = (int)c->login_ban_window;
    c->core.login_ban_duration = c->login_ban_duration;
    c->core.honeypot_ban_duration = c->honeypot_ban_duration;
    c->core.login_throttle_threshold = (int)c->login_throttle_threshold;
    c->core.login_throttle_window = (int)c->login_throttle_window;
    c->core.login_throttle_max_backoff = (int)c->login_throttle_max_backoff;
    c->core.data_dir = c->data_dir;
    c->core.upload_max = c->upload_max;
    c->core.upload_types = c->upload_types ? c->upload_types : MJ_DEFAULT_UPLOAD_TYPES;
    c->core.report_versions_max = (int)c->report_versions_max;
    c->core.event_retention = c->event_retention;
    return NULL;
}
