/* Logging for the portable core: the host (module, CLI, worker, tests) injects a sink and
 * the most verbose level it writes. Messages are logged by tag (jr_log_tags.h):
 *     JR_LOG(JR01005, rv, "statement %s failed: %s", label, why);
 * The level comes from the registry; a message above the enabled level costs one comparison:
 * its arguments are not even evaluated. The sink receives the call site's file and line. */
#ifndef JR_LOG_H
#define JR_LOG_H

#include <apr_errno.h>

#include "jr_log_tags.h"

typedef enum {
    JR_LOG_OFF = -2,  /* as the enabled level: nothing is written */
    JR_LOG_CRIT = -1, /* httpd's glue only: the server does not start */
    JR_LOG_ERR = 0,
    JR_LOG_WARN,
    JR_LOG_INFO,
    JR_LOG_DEBUG
} jr_log_level_e;

/* msg is the formatted message, tag first; file and line are the call site's. */
typedef void jr_log_fn(void *baton, jr_log_level_e level, apr_status_t rv, const char *file,
                       int line, const char *msg);

/* Installs the sink and the most verbose level it writes; fn NULL is the default sink, one
 * line per message on standard error ("[warn] JR01001: ..."), which writes every level until
 * jr_log_set says otherwise. Call before threads start. */
void jr_log_set(jr_log_fn *fn, void *baton, jr_log_level_e enabled);

/* The enabled level, read by JR_LOG before it formats. Written by jr_log_set only. */
extern jr_log_level_e jr_log_enabled;

/* Each tag's level as a constant: JR_LOG_LEVEL(JR01005) is JR_LOG_ERR. */
#define JR_LOG_TAG_LEVEL(tag, level) JR_LOG_LEVEL_##tag = JR_LOG_##level,
enum jr_log_tag_levels { JR_LOG_TAGS(JR_LOG_TAG_LEVEL) };
#undef JR_LOG_TAG_LEVEL
#define JR_LOG_LEVEL(tag) ((jr_log_level_e)JR_LOG_LEVEL_##tag)

/* Logs the message of tag: a string literal format and its arguments. Never pass secrets. */
#define JR_LOG(tag, rv, ...)                                                                  \
    do {                                                                                      \
        _Static_assert(JR_LOG_LEVEL(tag) >= JR_LOG_ERR, #tag ": CRIT is for httpd's glue");   \
        if (JR_LOG_LEVEL(tag) <= jr_log_enabled) {                                            \
            jr_log_emit(JR_LOG_LEVEL(tag), (rv), __FILE__, __LINE__, #tag ": " __VA_ARGS__);  \
        }                                                                                     \
    } while (0)

/* What JR_LOG calls once the level is enabled: formats and hands the message to the sink. */
void jr_log_emit(jr_log_level_e level, apr_status_t rv, const char *file, int line,
                 const char *fmt, ...) __attribute__((format(printf, 5, 6)));

#endif
