/* Media types sniffed from the bytes of a file (libmagic), never taken from the client. */
#ifndef JR_MAGIC_H
#define JR_MAGIC_H

#include <apr_pools.h>

/* Opens the magic database once per process. Call it before threads start (child_init),
 * with a pool that lives as long as the process; the first jr_magic_file opens it lazily
 * otherwise. Returns APR_SUCCESS or APR_EGENERAL (logged). */
apr_status_t jr_magic_init(apr_pool_t *p);

/* The media type of the file at path, lower case without parameters ("image/png",
 * "text/plain", "application/x-empty" for an empty file). Serialised by a lock: libmagic
 * handles are not thread-safe. */
apr_status_t jr_magic_file(const char **type, apr_pool_t *p, const char *path);

/* 1 when type is one of the space-separated media types of list (case-insensitive). */
int jr_magic_type_in(const char *type, const char *list);

#endif
