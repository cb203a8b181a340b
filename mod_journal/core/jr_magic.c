/* See jr_magic.h. One libmagic handle per process behind one static mutex: the module's
 * worker threads take turns, the sniff reads only the head of a file. */
#include <pthread.h>
#include <string.h>
#include <strings.h>

#include <apr_strings.h>
#include <magic.h>

#include "jr_log.h"
#include "jr_magic.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static magic_t cookie;

/* Opens the handle; the caller holds the lock. */
static apr_status_t open_locked(void)
{
    magic_t m;
    if (cookie) {
        return APR_SUCCESS;
    }
    if (!(m = magic_open(MAGIC_MIME_TYPE | MAGIC_ERROR))) {
        JR_LOG(JR05002, 0, "libmagic: cannot open a handle");
        return APR_EGENERAL;
    }
    if (magic_load(m, NULL) != 0) {
        JR_LOG(JR05003, 0, "libmagic: cannot load the magic database: %s",
               magic_error(m) ? magic_error(m) : "unknown error");
        magic_close(m);
        return APR_EGENERAL;
    }
    cookie = m;
    return APR_SUCCESS;
}

static apr_status_t close_magic(void *unused)
{
    pthread_mutex_lock(&lock);
    if (cookie) {
        magic_close(cookie);
        cookie = NULL;
    }
    pthread_mutex_unlock(&lock);
    return APR_SUCCESS;
}

apr_status_t jr_magic_init(apr_pool_t *p)
{
    apr_status_t rv;
    int opened;
    pthread_mutex_lock(&lock);
    opened = cookie == NULL;
    rv = open_locked();
    opened = opened && rv == APR_SUCCESS;
    pthread_mutex_unlock(&lock);
    if (opened && p) {
        apr_pool_cleanup_register(p, NULL, close_magic, apr_pool_cleanup_null);
    }
    return rv;
}

apr_status_t jr_magic_file(const char **type, apr_pool_t *p, const char *path)
{
    apr_status_t rv;
    char *copy = NULL, *c;

    *type = NULL;
    pthread_mutex_lock(&lock);
    if ((rv = open_locked()) == APR_SUCCESS) {
        const char *t = magic_file(cookie, path); /* owned by the handle: copied under lock */
        if (t) {
            copy = apr_pstrmemdup(p, t, strcspn(t, "; \t"));
        } else {
            JR_LOG(JR05004, 0, "libmagic: cannot sniff a file: %s",
                   magic_error(cookie) ? magic_error(cookie) : "unknown error");
            rv = APR_EGENERAL;
        }
    }
    pthread_mutex_unlock(&lock);
    if (!copy) {
        return rv;
    }
    for (c = copy; *c; ++c) {
        *c = (char)((*c >= 'A' && *c <= 'Z') ? *c - 'A' + 'a' : *c);
    }
    *type = copy;
    return *copy ? APR_SUCCESS : APR_EGENERAL;
}

int jr_magic_type_in(const char *type, const char *list)
{
    size_t n = type ? strlen(type) : 0;
    const char *s = list;
    while (n && s && *s) {
        size_t len;
        s += strspn(s, " \t,");
        len = strcspn(s, " \t,");
        if (len == n && !strncasecmp(s, type, n)) {
            return 1;
        }
        s += len;
    }
    return 0;
}
