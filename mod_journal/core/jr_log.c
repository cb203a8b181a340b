#include <stdarg.h>
#include <stdio.h>

#include <apr_strings.h>

#include "jr_log.h"

static void log_stderr(void *baton, jr_log_level_e level, apr_status_t rv, const char *msg)
{
    static const char *const names[] = {"error", "warn", "info", "debug"};
    char buf[256];
    (void)baton;
    if (rv != APR_SUCCESS) {
        fprintf(stderr, "[%s] %s (%s)\n", names[level], msg, apr_strerror(rv, buf, sizeof(buf)));
    } else {
        fprintf(stderr, "[%s] %s\n", names[level], msg);
    }
}

static jr_log_fn *log_fn = log_stderr;
static void *log_baton;

void jr_log_set(jr_log_fn *fn, void *baton)
{
    log_fn = fn ? fn : log_stderr;
    log_baton = baton;
}

void jr_log(jr_log_level_e level, apr_status_t rv, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    log_fn(log_baton, level, rv, msg);
}
