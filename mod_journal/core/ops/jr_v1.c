/* Operations of the external interface that have no administrative twin. */
#include "jr_json.h"
#include "jr_keys.h"
#include "jr_v1.h"
#include "jr_settings.h"

int jr_op_v1_me(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    jr_jw_t w;
    jr_jw_init(&w, ctx->pool, 1024);
    jr_jw_obj(&w);
    jr_jw_key(&w, "user");
    jr_jw_obj(&w);
    jr_jw_kstr(&w, "role", ctx->who.role == JR_ROLE_ADMIN ? "admin" : "tutor");
    /* null: every branch; an array: exactly those (never empty for a key). */
    jr_jw_key(&w, "branch_ids");
    if (ctx->who.branch_json) {
        jr_jw_raw(&w, ctx->who.branch_json);
    } else {
        jr_jw_null(&w);
    }
    jr_jw_kbool(&w, "can_read", ctx->who.can_read);
    jr_jw_kbool(&w, "can_write", ctx->who.can_write);
    jr_jw_obj_end(&w);
    /* The record read at authentication: no second query. */
    jr_jw_key(&w, "key");
    jr_key_write(&w, ctx->who.key_row, 0);
    /* Date filters (date_from, date_to) count days in this zone; clients show times in it. Both
     * were read with the key (jr_key_ban). */
    jr_jw_key(&w, "organisation");
    jr_jw_obj(&w);
    jr_jw_kstr(&w, "timezone", jr_setting_known(JR_SETTING_TIMEZONE,
                                                jr_rows_get(ctx->who.key_row, 0, "org_timezone")));
    jr_jw_kstr(&w, "time_format",
               jr_setting_known(JR_SETTING_TIME_FORMAT,
                                jr_rows_get(ctx->who.key_row, 0, "org_time_format")));
    jr_jw_obj_end(&w);
    jr_jw_obj_end(&w);
    return jr_reply_jw(res, 200, &w);
}
