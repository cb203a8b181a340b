/* Logging for the portable core: the host (module, CLI, tests) injects a sink. */
#ifndef JR_LOG_H
#define JR_LOG_H

#include <apr_errno.h>

typedef enum {
    JR_LOG_ERR = 0,
    JR_LOG_WARN,
    JR_LOG_INFO,
    JR_LOG_DEBUG
} jr_log_level_e;

typedef void jr_log_fn(void *baton, jr_log_level_e level, apr_status_t rv, const char *msg);

/* Install the sink; NULL restores the default (stderr). Call before threads start. */
void jr_log_set(jr_log_fn *fn, void *baton);

/* Messages start with our own tag, e.g. "JR01001: ...". Never pass secrets. */
void jr_log(jr_log_level_e level, apr_status_t rv, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
