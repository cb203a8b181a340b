/* journal-admin: reading the installed server's database settings from httpd's configuration.
 *
 * An installed journal keeps DBDriver/DBDParams in httpd's configuration (Debian:
 * mods-available/journal.conf). Asking httpd for them is not possible (`apache2 -t -D DUMP_...`
 * prints neither), and a second settings file would drift from what httpd really uses. So
 * journal-admin reads the same files httpd reads, with the few rules of httpd's reader that
 * decide where these directives are: includes, ServerRoot, ${NAME} and <VirtualHost>. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <glob.h>
#include <grp.h>
#include <libgen.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <apr_hash.h>
#include <apr_strings.h>

#include "ja_conf.h"

/* Deeper than this is an include loop (httpd stops at 128; no real configuration comes near). */
#define JA_INCLUDE_DEPTH 32

typedef struct {
    apr_pool_t *p;
    ja_conf_t *out;
    const char *server_root;
    apr_hash_t *defines;
    const char *err;
} reader_t;

static int read_path(reader_t *r, const char *path, int depth);

static int failed(reader_t *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int failed(reader_t *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    r->err = apr_pvsprintf(r->p, fmt, ap);
    va_end(ap);
    return 1;
}

/* ${NAME} from Define, then from the environment (Debian's apache2ctl exports envvars). A name
 * with neither stays as written and sets *undefined, as httpd leaves it with a warning. */
static const char *substitute(reader_t *r, const char *line, int *undefined)
{
    const char *s = line, *open, *close, *val, *res = "";
    char *name;
    while ((open = strstr(s, "${")) && (close = strchr(open + 2, '}'))) {
        name = apr_pstrmemdup(r->p, open + 2, (apr_size_t)(close - open - 2));
        if (!(val = apr_hash_get(r->defines, name, APR_HASH_KEY_STRING)) && !(val = getenv(name))) {
            *undefined = 1;
            val = apr_pstrmemdup(r->p, open, (apr_size_t)(close + 1 - open));
        }
        res = apr_pstrcat(r->p, res, apr_pstrmemdup(r->p, s, (apr_size_t)(open - s)), val, NULL);
        s = close + 1;
    }
    return apr_pstrcat(r->p, res, s, NULL);
}

/* One argument as httpd splits them: a quoted string (\\ and \<quote> escaped) or a word. */
static char *next_word(apr_pool_t *p, const char **line)
{
    const char *s = *line, *start;
    char *w, *o, q;
    while (isspace((unsigned char)*s)) {
        ++s;
    }
    if (!*s) {
        *line = s;
        return NULL;
    }
    if (*s == '"' || *s == '\'') {
        q = *s++;
        w = o = apr_palloc(p, strlen(s) + 1);
        while (*s && *s != q) {
            if (*s == '\\' && (s[1] == q || s[1] == '\\')) {
                ++s;
            }
            *o++ = *s++;
        }
        *o = '\0';
        if (*s == q) {
            ++s;
        }
    } else {
        start = s;
        while (*s && !isspace((unsigned char)*s)) {
            ++s;
        }
        w = apr_pstrmemdup(p, start, (apr_size_t)(s - start));
    }
    *line = s;
    return w;
}

static const char *absolute(reader_t *r, const char *path)
{
    return path[0] == '/' ? path : apr_pstrcat(r->p, r->server_root, "/", path, NULL);
}

static int skip_entry(const struct dirent *d)
{
    return strcmp(d->d_name, ".") != 0 && strcmp(d->d_name, "..") != 0;
}

/* A directory: every file in it and below, in name order. */
static int read_dir(reader_t *r, const char *dir, int depth)
{
    struct dirent **list;
    int n, i, rc = 0;
    if ((n = scandir(dir, &list, skip_entry, alphasort)) < 0) {
        return failed(r, "cannot read the directory %s: %s", dir, strerror(errno));
    }
    for (i = 0; i < n; ++i) {
        if (rc == 0) {
            rc = read_path(r, apr_pstrcat(r->p, dir, "/", list[i]->d_name, NULL), depth + 1);
        }
        free(list[i]);
    }
    free(list);
    return rc;
}

static int include(reader_t *r, const char *where, const char *pattern, int optional, int depth)
{
    glob_t g;
    size_t i;
    int rc = 0;
    struct stat st;
    if (!strpbrk(pattern, "*?[")) {
        if (stat(pattern, &st) != 0) {
            return optional ? 0 : failed(r, "%s: Include %s: %s", where, pattern, strerror(errno));
        }
        return read_path(r, pattern, depth);
    }
    switch (glob(pattern, 0, NULL, &g)) {
    case 0:
        for (i = 0; i < g.gl_pathc && rc == 0; ++i) {
            rc = read_path(r, apr_pstrdup(r->p, g.gl_pathv[i]), depth);
        }
        globfree(&g);
        return rc;
    case GLOB_NOMATCH:
        return optional ? 0 : failed(r, "%s: Include %s: no file matches", where, pattern);
    default:
        return failed(r, "%s: Include %s: cannot expand the wildcard", where, pattern);
    }
}

static int directive(reader_t *r, const char *where, const char *name, const char *args,
                     int undefined, int depth)
{
    static const char *const known[] = {"ServerRoot", "Define", "Include", "IncludeOptional",
                                        "DBDriver", "DBDParams", "JournalDataDir"};
    size_t i;
    const char *value, *def;
    for (i = 0; i < sizeof(known) / sizeof(known[0]) && strcasecmp(name, known[i]); ++i) {
    }
    if (i == sizeof(known) / sizeof(known[0])) {
        return 0;
    }
    if (undefined) {
        return failed(r, "%s: %s uses a ${...} variable that is neither defined (Define) nor "
                         "in the environment", where, known[i]);
    }
    if (!(value = next_word(r->p, &args))) {
        return failed(r, "%s: %s needs an argument", where, known[i]);
    }
    switch (i) {
    case 0: r->server_root = value; break;
    case 1:
        def = next_word(r->p, &args);
        apr_hash_set(r->defines, value, APR_HASH_KEY_STRING, def ? def : "");
        break;
    case 2: case 3: return include(r, where, absolute(r, value), i == 3, depth + 1);
    case 4: r->out->driver = value; break;
    case 5: r->out->params = value; break;
    default: r->out->data_dir = absolute(r, value); break;
    }
    return 0;
}

/* One logical line. *skip counts the sections open inside a <VirtualHost>. */
static int line(reader_t *r, const char *where, const char *text, int *skip, int depth)
{
    const char *s = text;
    char *name;
    int undefined = 0;
    while (isspace((unsigned char)*s)) {
        ++s;
    }
    if (!*s || *s == '#') {
        return 0;
    }
    if (*s == '<') {
        if (s[1] == '/') {
            *skip -= *skip > 0;
        } else if (*skip || (!strncasecmp(s + 1, "VirtualHost", 11) &&
                             (isspace((unsigned char)s[12]) || s[12] == '>'))) {
            ++*skip;
        }
        return 0;
    }
    if (*skip) {
        return 0;
    }
    s = substitute(r, s, &undefined);
    name = next_word(r->p, &s);
    return directive(r, where, name, s, undefined, depth);
}

static int read_file(reader_t *r, const char *path, int depth)
{
    FILE *f;
    char *buf = NULL, *logical = NULL;
    size_t cap = 0;
    ssize_t n;
    int lineno = 0, first = 0, skip = 0, rc = 0;
    if (!(f = fopen(path, "r"))) {
        return failed(r, "cannot read %s: %s", path, strerror(errno));
    }
    while (rc == 0 && (n = getline(&buf, &cap, f)) >= 0) {
        ++lineno;
        while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r')) {
            buf[--n] = '\0';
        }
        if (!logical) {
            first = lineno;
        }
        logical = apr_pstrcat(r->p, logical ? logical : "", buf, NULL);
        if (n > 0 && buf[n - 1] == '\\') { /* continued on the next line */
            logical[strlen(logical) - 1] = '\0';
            continue;
        }
        rc = line(r, apr_psprintf(r->p, "%s:%d", path, first), logical, &skip, depth);
        logical = NULL;
    }
    if (rc == 0 && logical) {
        rc = line(r, apr_psprintf(r->p, "%s:%d", path, first), logical, &skip, depth);
    }
    free(buf);
    fclose(f);
    return rc;
}

static int read_path(reader_t *r, const char *path, int depth)
{
    struct stat st;
    if (depth > JA_INCLUDE_DEPTH) {
        return failed(r, "%s: includes nested more than %d deep (an include loop?)", path,
                      JA_INCLUDE_DEPTH);
    }
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        return read_dir(r, path, depth);
    }
    return read_file(r, path, depth);
}

int ja_conf_read(apr_pool_t *p, const char *file, const char *server_root, ja_conf_t *out,
                 const char **err)
{
    reader_t r;
    memset(out, 0, sizeof(*out));
    memset(&r, 0, sizeof(r));
    r.p = p;
    r.out = out;
    r.server_root = server_root;
    r.defines = apr_hash_make(p);
    out->file = file;
    if (read_path(&r, absolute(&r, file), 0) != 0) {
        *err = r.err;
        return 1;
    }
    return 0;
}

void ja_conf_default(apr_pool_t *p, const char **file, const char **server_root)
{
    const char *confdir = getenv("APACHE_CONFDIR");
    if (confdir && *confdir) {
        *server_root = confdir;
        *file = apr_pstrcat(p, confdir, "/", JA_HTTPD_PROGNAME, ".conf", NULL);
    } else {
        *server_root = JA_HTTPD_ROOT;
        *file = JA_HTTPD_ROOT "/" JA_HTTPD_PROGNAME ".conf";
    }
}

int ja_become_db_owner(apr_pool_t *p, const char *driver, const char *params, const char **err)
{
    struct stat st;
    struct passwd *pw;
    gid_t gid;
    if (geteuid() != 0 || !driver || strcmp(driver, "sqlite3") != 0 || !params || !*params ||
        !strncmp(params, "file:", 5) || !strcmp(params, ":memory:")) {
        return 0;
    }
    if (stat(params, &st) != 0 && stat(dirname(apr_pstrdup(p, params)), &st) != 0) {
        return 0; /* opening the database says what is missing */
    }
    if (st.st_uid == 0) {
        return 0;
    }
    pw = getpwuid(st.st_uid);
    gid = pw ? pw->pw_gid : st.st_gid;
    if ((pw ? initgroups(pw->pw_name, gid) : setgroups(0, NULL)) != 0 || setgid(gid) != 0 ||
        setuid(st.st_uid) != 0) {
        *err = apr_psprintf(p, "cannot work as user %ld, the owner of the database's "
                               "directory: %s", (long)st.st_uid, strerror(errno));
        return 1;
    }
    return 0;
}
