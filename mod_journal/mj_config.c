/* Directives: parsed and validated while the configuration is read, so `apache2 -t`
 * reports a bad value with the directive's name and the allowed values. */
#include <apr_strings.h>
#include <http_core.h>

#include "jr_util.h"
#include "mj_private.h"

extern module AP_MODULE_DECLARE_DATA journal_module;

mj_server_conf_t *mj_conf(const server_rec *s)
{
    return ap_get_module_config(s->module_config, &journal_module);
}

void *mj_create_server_conf(apr_pool_t *p, server_rec *s)
{
    mj_server_conf_t *c = apr_pcalloc(p, sizeof(*c));
    c->data_dir = NULL;
    c->session_ttl = -1;
    c->max_body = -1;
    c->bcrypt_cost = -1;
    c->migrate = -1;
    return c;
}

void *mj_merge_server_conf(apr_pool_t *p, void *basev, void *addv)
{
    mj_server_conf_t *base = basev, *add = addv, *c = apr_pcalloc(p, sizeof(*c));
    c->data_dir = add->data_dir ? add->data_dir : base->data_dir;
    c->session_ttl = add->session_ttl >= 0 ? add->session_ttl : base->session_ttl;
    c->max_body = add->max_body >= 0 ? add->max_body : base->max_body;
    c->bcrypt_cost = add->bcrypt_cost >= 0 ? add->bcrypt_cost : base->bcrypt_cost;
    c->migrate = add->migrate >= 0 ? add->migrate : base->migrate;
    return c;
}

static const char *set_data_dir(cmd_parms *cmd, void *dc, const char *arg)
{
    mj_server_conf_t *c = mj_conf(cmd->server);
    const char *path = ap_server_root_relative(cmd->pool, arg);
    apr_finfo_t fi;
    if (!path) {
        return apr_psprintf(cmd->pool, "JournalDataDir: invalid path '%s'", arg);
    }
    if (apr_stat(&fi, path, APR_FINFO_TYPE, cmd->pool) != APR_SUCCESS || fi.filetype != APR_DIR) {
        return apr_psprintf(cmd->pool, "JournalDataDir: '%s' is not an existing directory", path);
    }
    c->data_dir = path;
    return NULL;
}

static const char *set_session_lifetime(cmd_parms *cmd, void *dc, const char *arg)
{
    long long secs;
    if (jr_parse_duration(arg, &secs) != 0 || secs < 60 || secs > 366LL * 86400) {
        return apr_psprintf(cmd->pool,
                            "JournalSessionLifetime: '%s' is not a duration between 60s and 366d "
                            "(seconds, or a number with s, m, h or d)",
                            arg);
    }
    mj_conf(cmd->server)->session_ttl = secs;
    return NULL;
}

static const char *set_max_body(cmd_parms *cmd, void *dc, const char *arg)
{
    long long bytes;
    if (jr_parse_size(arg, &bytes) != 0 || bytes < 1024 || bytes > 1024LL * 1024 * 1024) {
        return apr_psprintf(cmd->pool,
                            "JournalMaxBodySize: '%s' is not a size between 1K and 1G "
                            "(bytes, or a number with K, M or G)",
                            arg);
    }
    mj_conf(cmd->server)->max_body = bytes;
    return NULL;
}

static const char *set_bcrypt_cost(cmd_parms *cmd, void *dc, const char *arg)
{
    long long cost;
    if (jr_parse_int64(arg, 4, 15, &cost) != 0) {
        return apr_psprintf(cmd->pool, "JournalBcryptCost: '%s' is not an integer from 4 to 15",
                            arg);
    }
    mj_conf(cmd->server)->bcrypt_cost = (int)cost;
    return NULL;
}

static const char *set_migrate(cmd_parms *cmd, void *dc, int flag)
{
    mj_conf(cmd->server)->migrate = flag;
    return NULL;
}

const command_rec mj_directives[] = {
    AP_INIT_TAKE1("JournalDataDir", set_data_dir, NULL, RSRC_CONF,
                  "Directory for the journal's files (uploads, photos)"),
    AP_INIT_TAKE1("JournalSessionLifetime", set_session_lifetime, NULL, RSRC_CONF,
                  "Lifetime of a login session: seconds, or with s, m, h, d (60s to 366d)"),
    AP_INIT_TAKE1("JournalMaxBodySize", set_max_body, NULL, RSRC_CONF,
                  "Largest accepted JSON request body: bytes, or with K, M, G (1K to 1G)"),
    AP_INIT_TAKE1("JournalBcryptCost", set_bcrypt_cost, NULL, RSRC_CONF,
                  "bcrypt cost for new password hashes (4 to 15)"),
    AP_INIT_FLAG("JournalMigrate", set_migrate, NULL, RSRC_CONF,
                 "Apply database migrations at startup (On or Off)"),
    {NULL},
};
