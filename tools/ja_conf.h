/* journal-admin: the database and data directory of an installed server, read from httpd's own
 * configuration files, and the identity under which journal-admin touches a SQLite database. */
#ifndef JA_CONF_H
#define JA_CONF_H

#include <apr_pools.h>

/* What journal-admin needs from httpd's configuration: the main server's values (the last
 * occurrence outside <VirtualHost>, as httpd itself keeps), NULL when absent. */
typedef struct {
    const char *file;     /* the file read first */
    const char *driver;   /* DBDriver */
    const char *params;   /* DBDParams: a secret, never printed */
    const char *data_dir; /* JournalDataDir, made absolute against ServerRoot */
} ja_conf_t;

/* Reads FILE and every file it includes (Include, IncludeOptional; wildcards and directories as
 * httpd expands them; relative paths against ServerRoot, which starts as server_root and
 * follows a ServerRoot directive). Conditional sections (<IfModule>, <IfDefine>, ...) are read
 * as if their condition held; <VirtualHost> sections are skipped. ${NAME} is replaced by a
 * Define'd value or the environment's. On failure returns non-zero and sets *err (which names
 * the file and line, never a DBDParams value). */
int ja_conf_read(apr_pool_t *p, const char *file, const char *server_root, ja_conf_t *out,
                 const char **err);

/* httpd's main configuration file and its ServerRoot: $APACHE_CONFDIR (Debian's way of naming
 * a second instance, /etc/apache2-NAME, as apache2ctl does) when set, else the build's apxs
 * SYSCONFDIR and PROGNAME (/etc/apache2/apache2.conf). */
void ja_conf_default(apr_pool_t *p, const char **file, const char **server_root);

/* Run as root on SQLite: becomes the owner of the database file, or of its directory when the
 * file does not exist yet, so that whatever SQLite creates there (the database, -wal, -shm)
 * belongs to the server's user as the module would leave it. Does nothing otherwise, nor when
 * that owner is root. Returns non-zero with *err when the change of identity fails. */
int ja_become_db_owner(apr_pool_t *p, const char *driver, const char *params, const char **err);

#endif
