/* journal-admin: migrations and accounts from the command line, with the module's own core. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <apr_general.h>
#include <apr_getopt.h>
#include <apr_strings.h>

#include "jr_crypt.h"
#include "jr_ctx.h"
#include "jr_json.h"
#include "jr_log.h"
#include "jr_migrate.h"
#include "jr_users.h"
#include "jr_road.h"
#include "jr_util.h"
#include "ja_backup.h"
#include "ja_conf.h"

static void usage(FILE *out)
{
    fputs("usage: journal-admin [options] COMMAND [ARGS]\n"
          "\n"
          "commands:\n"
          "  migrate                       apply pending database migrations\n"
          "  create-user NAME --role ROLE  create a user (ROLE: admin or tutor)\n"
          "        [--branch ID]...        branch memberships (repeatable)\n"
          "        [--if-missing]          succeed without change when NAME exists\n"
          "  set-password NAME             set a new password and end the user's sessions\n"
          "  check-config                  check the database, the schema and the data directory\n"
          "  backup                        write a backup to DATA_DIR/backups (no API keys)\n"
          "  restore FILE                  restore a backup: every API key is deleted and every\n"
          "                                session ends\n"
          "\n"
          "options:\n"
          "  --config FILE                 httpd configuration to take DBDriver, DBDParams and\n"
          "                                JournalDataDir from, with the files it includes\n"
          "                                (default: " JA_HTTPD_ROOT "/" JA_HTTPD_PROGNAME ".conf)\n"
          "  --driver sqlite3|pgsql        database driver (env JOURNAL_DBD_DRIVER, default sqlite3)\n"
          "  --params PARAMS               apr_dbd parameters: the SQLite file, or a PostgreSQL\n"
          "                                conninfo (env JOURNAL_DBD_PARAMS)\n"
          "  --data-dir DIR                data directory for check-config, backup and restore\n"
          "                                (env JOURNAL_DATA_DIR, else JournalDataDir)\n"
          "  --cost N                      bcrypt cost for new passwords (4-15, default 10)\n"
          "  --generate                    generate a strong password and print it once\n"
          "\n"
          "Passwords are read from the environment variable JOURNAL_PASSWORD or, when it is\n"
          "unset, from the first line of standard input; never from the command line.\n"
          "\n"
          "The database: --params, else --config, else JOURNAL_DBD_PARAMS, else httpd's\n"
          "configuration. Run as root on SQLite, journal-admin works as the owner of the\n"
          "database's directory (the server's user on an installed system).\n",
          out);
}

typedef struct {
    const char *driver, *params, *data_dir, *role;
    const char *config, *config_read; /* --config; the httpd configuration actually read */
    int cost, generate, if_missing;
    apr_array_header_t *branches;
} opts_t;

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fail(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "journal-admin: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return 1;
}

static int open_db(apr_pool_t *p, const opts_t *o, jr_db_t **db, int migrate)
{
    const char *err = NULL;
    int applied = 0, version = 0;
    if (!o->params || !*o->params) {
        return fail("%s", "no database: give --params or set JOURNAL_DBD_PARAMS");
    }
    if (jr_db_open(db, p, o->driver, o->params, &err) != APR_SUCCESS) {
        return fail("%s", err);
    }
    if (migrate) {
        if (jr_migrate(*db, p, &applied, &version, &err) != APR_SUCCESS) {
            return fail("%s", err);
        }
        if (jr_db_prepare_all(*db) != APR_SUCCESS) {
            return fail("%s", "cannot prepare statements (see above)");
        }
    }
    return 0;
}

static const char *read_password(apr_pool_t *p, const opts_t *o)
{
    const char *env = getenv("JOURNAL_PASSWORD");
    char line[1024];
    size_t n;
    if (o->generate) {
        const char *pw = jr_random_password(p, 20);
        printf("generated password: %s\n", pw);
        return pw;
    }
    if (env && *env) {
        return env;
    }
    if (isatty(STDIN_FILENO)) {
        fprintf(stderr, "password: ");
    }
    if (!fgets(line, sizeof(line), stdin)) {
        return NULL;
    }
    n = strlen(line);
    while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r')) {
        line[--n] = '\0';
    }
    return apr_pstrdup(p, line);
}

static int check_password(const char *pw)
{
    if (!pw || strlen(pw) < 8) {
        return fail("%s", "the password must be at least 8 characters");
    }
    if (strlen(pw) > 72) {
        return fail("%s", "the password must be at most 72 bytes");
    }
    return 0;
}

/* The commands: each runs on the database find_database found; arg is the word after the
 * command's name (NULL when none), for the commands that take one. */
static int cmd_migrate(apr_pool_t *p, const opts_t *o, const char *arg)
{
    jr_db_t *db;
    const char *err = NULL;
    int applied = 0, version = 0;
    (void)arg;
    if (open_db(p, o, &db, 0) != 0) {
        return 1;
    }
    if (jr_migrate(db, p, &applied, &version, &err) != APR_SUCCESS) {
        return fail("%s", err);
    }
    printf("migrations: %d applied, schema version %d\n", applied, version);
    jr_db_close(db);
    return 0;
}

static long long user_id(apr_pool_t *p, jr_db_t *db, const char *name)
{
    jr_rows_t *rows;
    if (jr_db_select(db, p, JR_Q_LOGIN_USER, &rows, JR_ARGS(name)) != APR_SUCCESS) {
        return -1;
    }
    return rows->nrows ? jr_rows_int(rows, 0, "id", 0) : 0;
}

/* Drives the same operations as the HTTP interface, as an administrator of the console. */
static void console_ctx(jr_ctx_t *ctx, apr_pool_t *p, jr_db_t *db, jr_config_t *cfg,
                        const opts_t *o)
{
    memset(ctx, 0, sizeof(*ctx));
    memset(cfg, 0, sizeof(*cfg));
    cfg->bcrypt_cost = o->cost;
    cfg->session_ttl = 3600;
    cfg->data_dir = o->data_dir;
    ctx->pool = p;
    ctx->db = db;
    ctx->cfg = cfg;
    ctx->iface = JR_IF_ADMIN;
    ctx->client_ip = "console";
    ctx->who.authenticated = 1;
    ctx->who.role = JR_ROLE_ADMIN;
    ctx->params = apr_table_make(p, 2);
    ctx->query = apr_table_make(p, 2);
}



static int report(jr_result_t *res, const char *done)
{
    const char *err = res->error ? res->error : "failed";
    if (res->status >= 300) {
        return fail("%s", err);
    }
    printf("%s\n", done);
    return 0;
}

static int cmd_create_user(apr_pool_t *p, const opts_t *o, const char *name)
{
    jr_db_t *db;
    jr_config_t cfg;
    jr_ctx_t ctx;
    jr_result_t res;
    json_t *in, *branches;
    const char *pw;
    int i;

    if (!o->role) {
        return fail("%s", "create-user needs --role admin|tutor");
    }
    if (open_db(p, o, &db, 1) != 0) {
        return 1;
    }
    if (o->if_missing && user_id(p, db, jr_ascii_lower(p, name)) > 0) {
        printf("user %s exists\n", name);
        return 0;
    }
    if (!(pw = read_password(p, o)) || check_password(pw) != 0) {
        return pw ? 1 : fail("%s", "no password given");
    }
    console_ctx(&ctx, p, db, &cfg, o);
    jr_result_init(&res, p);
    branches = json_array();
    for (i = 0; i < o->branches->nelts; ++i) {
        json_array_append_new(branches, json_integer(APR_ARRAY_IDX(o->branches, i, long long)));
    }
    in = jr_json_own(p, json_pack("{s:s, s:s, s:s, s:o}", "username", name, "password", pw,
                                  "role", o->role, "branch_ids", branches));
    jr_road_op(&ctx, jr_op_users_create, JR_RF_WRITE, in, &res);
    return report(&res, apr_psprintf(p, "user %s created", name));
}

static int cmd_set_password(apr_pool_t *p, const opts_t *o, const char *name)
{
    jr_db_t *db;
    jr_config_t cfg;
    jr_ctx_t ctx;
    jr_result_t res;
    long long id;
    const char *pw;

    if (open_db(p, o, &db, 1) != 0) {
        return 1;
    }
    if ((id = user_id(p, db, jr_ascii_lower(p, name))) <= 0) {
        return fail("no user named %s", name);
    }
    if (!(pw = read_password(p, o)) || check_password(pw) != 0) {
        return pw ? 1 : fail("%s", "no password given");
    }
    console_ctx(&ctx, p, db, &cfg, o);
    jr_result_init(&res, p);
    apr_table_setn(ctx.params, "id", jr_i64(p, id));
    jr_road_op(&ctx, jr_op_users_update, JR_RF_WRITE,
               jr_json_own(p, json_pack("{s:s}", "password", pw)), &res);
    return report(&res, apr_psprintf(p, "password of %s changed; their sessions ended", name));
}

/* backup, or restore FILE: the data directory holds the stored files and the archives. */
static int backup_or_restore(apr_pool_t *p, const opts_t *o, const char *restore_from)
{
    jr_db_t *db;
    jr_config_t cfg;
    jr_ctx_t ctx;
    int rc;
    if (!o->data_dir) {
        return fail("%s", "backup and restore need the data directory: --data-dir DIR, "
                          "JOURNAL_DATA_DIR or JournalDataDir in the configuration");
    }
    if (open_db(p, o, &db, 1) != 0) {
        return 1;
    }
    console_ctx(&ctx, p, db, &cfg, o);
    rc = restore_from ? ja_restore(&ctx, restore_from) : ja_backup(&ctx);
    jr_db_close(db);
    return rc;
}

static int cmd_backup(apr_pool_t *p, const opts_t *o, const char *arg)
{
    (void)arg;
    return backup_or_restore(p, o, NULL);
}

static int cmd_restore(apr_pool_t *p, const opts_t *o, const char *file)
{
    return backup_or_restore(p, o, file);
}

static int cmd_check_config(apr_pool_t *p, const opts_t *o, const char *arg)
{
    jr_db_t *db;
    const char *err = NULL;
    int version = 0, latest, bad = 0;
    (void)arg;
    if (open_db(p, o, &db, 0) != 0) {
        return 1;
    }
    if (o->config_read) {
        printf("configuration: %s\n", o->config_read);
    }
    printf("database: reachable (%s)\n", o->driver);
    latest = jr_migrate_latest(db->dialect);
    if (jr_migrate_current(db, p, &version, &err) != APR_SUCCESS) {
        printf("schema: not migrated (%s)\n", err);
        bad = 1;
    } else if (version < latest) {
        printf("schema: version %d, this build needs %d: run journal-admin migrate\n", version,
               latest);
        bad = 1;
    } else {
        printf("schema: version %d (current)\n", version);
    }
    if (o->data_dir) {
        if (access(o->data_dir, W_OK | X_OK) != 0) {
            printf("data directory: %s is not a writable directory\n", o->data_dir);
            bad = 1;
        } else {
            printf("data directory: %s (writable)\n", o->data_dir);
        }
    }
    jr_db_close(db);
    return bad;
}

/* Where the database is: --driver/--params, else --config, else the environment, else httpd's
 * own configuration (an installed system keeps DBDParams there and nowhere else). */
static int find_database(apr_pool_t *p, opts_t *o)
{
    ja_conf_t conf;
    const char *err = NULL, *file = o->config, *main_file, *root;
    ja_conf_default(p, &main_file, &root);
    if (!o->params && !file && getenv("JOURNAL_DBD_PARAMS")) {
        o->params = getenv("JOURNAL_DBD_PARAMS");
        o->driver = o->driver ? o->driver : getenv("JOURNAL_DBD_DRIVER");
    }
    if (!o->params) {
        file = file ? file : main_file;
        if (ja_conf_read(p, file, root, &conf, &err) != 0) {
            return fail("%s", err);
        }
        if (!conf.params) {
            return fail("no DBDParams in %s or the files it includes (is the module enabled? "
                        "a2enmod journal): give --config FILE or --params", file);
        }
        if (!conf.driver && !o->driver) {
            return fail("no DBDriver in %s or the files it includes", file);
        }
        o->config_read = file;
        o->params = conf.params;
        o->driver = o->driver ? o->driver : conf.driver;
        o->data_dir = o->data_dir ? o->data_dir : conf.data_dir;
    }
    o->driver = o->driver ? o->driver : "sqlite3";
    if (ja_become_db_owner(p, o->driver, o->params, &err) != 0) {
        return fail("%s", err);
    }
    return 0;
}

typedef struct {
    const char *name;
    int needs_arg; /* the command is refused without the word after its name */
    int (*run)(apr_pool_t *p, const opts_t *o, const char *arg);
} command_t;

static const command_t commands[] = {
    {"migrate", 0, cmd_migrate},           {"create-user", 1, cmd_create_user},
    {"set-password", 1, cmd_set_password}, {"check-config", 0, cmd_check_config},
    {"backup", 0, cmd_backup},             {"restore", 1, cmd_restore},
    {NULL, 0, NULL},
};

static const command_t *command_named(const char *name)
{
    const command_t *c = commands;
    while (c->name && strcmp(c->name, name)) {
        ++c;
    }
    return c->name ? c : NULL;
}

/* One option into o. -1 to go on, or the exit status: 0 after --help, 1 for a bad value. */
static int take_option(opts_t *o, int c, const char *arg)
{
    long long n;
    switch (c) {
    case 'd': o->driver = arg; break;
    case 'p': o->params = arg; break;
    case 'D': o->data_dir = arg; break;
    case 'C': o->config = arg; break;
    case 'r': o->role = arg; break;
    case 'g': o->generate = 1; break;
    case 'm': o->if_missing = 1; break;
    case 'b':
        if (jr_parse_int64(arg, 1, 9007199254740991LL, &n) != 0) {
            return fail("--branch needs a positive integer, not %s", arg);
        }
        APR_ARRAY_PUSH(o->branches, long long) = n;
        break;
    case 'c':
        if (jr_parse_int64(arg, 4, 15, &n) != 0) {
            return fail("--cost must be an integer from 4 to 15, not %s", arg);
        }
        o->cost = (int)n;
        break;
    case 'h': usage(stdout); return 0;
    }
    return -1;
}

/* The options (anywhere on the line) into o, then the command and its argument. -1 to go on,
 * or the exit status: 2, with the usage, for a line not understood. */
static int parse_command_line(apr_pool_t *p, int argc, const char *const *argv, opts_t *o,
                              const command_t **cmd, const char **arg)
{
    static const apr_getopt_option_t options[] = {
        {"driver", 'd', 1, "driver"},   {"params", 'p', 1, "params"},
        {"data-dir", 'D', 1, "data"},   {"role", 'r', 1, "role"},
        {"branch", 'b', 1, "branch"},   {"cost", 'c', 1, "cost"},
        {"generate", 'g', 0, "gen"},    {"if-missing", 'm', 0, "missing"},
        {"help", 'h', 0, "help"},       {"config", 'C', 1, "config"},
        {NULL, 0, 0, NULL},
    };
    apr_getopt_t *g;
    apr_status_t rv;
    const char *optarg;
    int c, rc = -1;

    memset(o, 0, sizeof(*o));
    o->data_dir = getenv("JOURNAL_DATA_DIR");
    o->cost = 10;
    o->branches = apr_array_make(p, 4, sizeof(long long));
    apr_getopt_init(&g, p, argc, argv);
    g->interleave = 1;
    while (rc < 0 && (rv = apr_getopt_long(g, options, &c, &optarg)) == APR_SUCCESS) {
        rc = take_option(o, c, optarg);
    }
    if (rc >= 0) {
        return rc;
    }
    /* apr_getopt already named a bad option */
    *cmd = rv == APR_EOF && g->ind < argc ? command_named(g->argv[g->ind]) : NULL;
    *arg = *cmd && g->ind + 1 < argc ? g->argv[g->ind + 1] : NULL;
    if (!*cmd || ((*cmd)->needs_arg && !*arg)) {
        usage(stderr);
        return 2;
    }
    return -1;
}

int main(int argc, const char *const *argv)
{
    apr_pool_t *p;
    opts_t o;
    const command_t *cmd = NULL;
    const char *arg = NULL;
    int rc;

    /* A SQLite database created here is readable by its owner only, and so are its -wal and
     * -shm files, which SQLite creates with the database's mode. */
    umask(077);
    apr_app_initialize(&argc, &argv, NULL);
    atexit(apr_terminate);
    apr_pool_create(&p, NULL);
    jr_crypt_init();
    /* Debug lines (a statement each, JR12140) are for a server's log, not a command's output. */
    jr_log_set(NULL, NULL, JR_LOG_INFO);
    if ((rc = parse_command_line(p, argc, argv, &o, &cmd, &arg)) < 0 &&
        (rc = find_database(p, &o)) == 0) {
        rc = cmd->run(p, &o, arg);
    }
    apr_pool_destroy(p);
    return rc;
}
