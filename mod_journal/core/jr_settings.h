/* Application settings (spec 2.6): typed, validated, with defaults in code. */
#ifndef JR_SETTINGS_H
#define JR_SETTINGS_H

#include "jr_ctx.h"

/* The current value of a setting as stored text ("true"/"false" for switches), the default
 * when never set. Cached for the request. NULL only for an unknown name. */
const char *jr_setting(jr_ctx_t *ctx, const char *name);

/* The configured IANA time zone (falls back to UTC if the stored one became invalid). */
const char *jr_setting_timezone(jr_ctx_t *ctx);

/* 1 when the switch setting is on. */
int jr_setting_on(jr_ctx_t *ctx, const char *name);

#endif
