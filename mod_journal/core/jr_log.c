#include <stdarg.h>
#include <stdio.h>

#include <apr_strings.h>

#include "jr_log.h"

static void log_stderr(void *baton, jr_log_level_e level, apr_status_t rv, const char *file,
                       int line, const char *msg)
{
    static const char *const names[] = {"error", "warn", "info", "debug"};
    char buf[256];
    (void)baton;
    level = level < JR_LOG_ERR ? JR_LOG_ERR : level; /* CRIT is the glue's (never JR_LOG) */
    if (rv != APR_SUCCESS) {
        fprintf(stderr, "[%s] %s (%s)\n", names[level], msg, apr_strerror(rv, buf, sizeof(buf)));
    } else {
        fprintf(stderr, "[%s] %s\n", names[level], msg);
    }
}

static jr_log_fn *log_fn = log_stderr;
static void *log_baton;
jr_log_level_e jr_log_enabled = JR_LOG_DEBUG;

void jr_log_set(jr_log_fn *fn, void *baton, jr_log_level_e enabled)
{
    log_fn = fn ? fn : log_stderr;
    log_baton = baton;
    jr_log_enabled = enabled;
}

void jr_log_emit(jr_log_level_e level, apr_status_t rv, const char *file, int line,
                 const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    log_fn(log_baton, level, rv, file, line, msg);
}
