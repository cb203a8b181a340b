/* Directives: parsed and validated while the configuration is read, so `apache2 -t`
 * reports a bad value with the directive's name and the allowed values. Numeric directives
 * are described by a table (name, kind, bounds, field) and share one handler. */
#include <stddef.h>
#include <string.h>

#include <apr_lib.h>
#include <apr_strings.h>
#include <http_core.h>

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
    {"JournalEventRetention", NUM_DURATION, 60, 366LL * 86400, FIELD(event_retention),
     "a duration from 60s to 366d"},
};

#define NUMERIC_COUNT (sizeof(numeric) / sizeof(numeric[0]))

mj_server_conf_t *mj_conf(const server_rec *s)
{
    return ap_get_module_config(s->module_config, &journal_module);
}

static long long *num_field(mj_server_conf_t *c, const num_directive_t *d)
{
    return (long long *)((char *)c + d->offset);
}

void *mj_create_server_conf(apr_pool_t *p, server_rec *s)
{
    mj_server_conf_t *c = apr_pcalloc(p, sizeof(*c));
    size_t i;
    for (i = 0; i < NUMERIC_COUNT; ++i) {
        *num_field(c, &numeric[i]) = -1;
    }
    c->migrate = -1;
    return c;
}

void *mj_merge_server_conf(apr_pool_t *p, void *basev, void *addv)
{
    mj_server_conf_t *base = basev, *add = addv, *c = apr_pcalloc(p, sizeof(*c));
    size_t i;
    for (i = 0; i < NUMERIC_COUNT; ++i) {
        long long v = *num_field(add, &numeric[i]);
        *num_field(c, &numeric[i]) = v >= 0 ? v : *num_field(base, &numeric[i]);
    }
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
    NUMERIC(13, "How often housekeeping (the trash purge) runs"),
    NUMERIC(14, "How long outbox events are kept before housekeeping trims them"),
    AP_INIT_ITERATE("JournalUploadTypes", add_upload_type, NULL, RSRC_CONF,
                    "Media types (sniffed from the bytes) accepted as entry files"),
    {NULL},
};

/* Resolves defaults into the core's settings; checks settings that depend on each other.
 * Returns an error message or NULL. */
const char *mj_conf_resolve(apr_pool_t *p, mj_server_conf_t *c)
{
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
    DFLT(event_retention, JR_DEFAULT_EVENT_RETENTION);
#undef DFLT
    if (!c->data_dir) {
        c->data_dir = MJ_DEFAULT_DATA_DIR;
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
    c->core.data_dir = c->data_dir;
    c->core.upload_max = c->upload_max;
    c->core.upload_types = c->upload_types ? c->upload_types : MJ_DEFAULT_UPLOAD_TYPES;
    c->core.event_retention = c->event_retention;
    return NULL;
}
