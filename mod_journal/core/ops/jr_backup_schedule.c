/* Backups that httpd takes by itself: once a day at JournalBackupSchedule (wall-clock time
 * in the journal's time zone), keeping the newest JournalBackupKeep archives. Called every
 * ten seconds by the glue's singleton watchdog; whether today's backup exists is read from the
 * backups directory, so a restarted child neither repeats nor skips it. */
#include <apr_strings.h>

#include "jr_backup.h"
#include "jr_log.h"
#include "jr_settings.h"
#include "jr_time.h"
#include "jr_util.h"

/* The moment today's backup is due: local midnight plus the schedule's hours and minutes. */
static int due_today(jr_ctx_t *ctx, apr_time_t now, apr_time_t *due)
{
    const char *zone = jr_setting_timezone(ctx), *date;
    int y, mo, d, h, mi;
    if (jr_parse_hhmm(ctx->cfg->backup_schedule, &h, &mi) != 0 ||
        !(date = jr_tz_date_of(ctx->pool, zone, now)) || jr_parse_date(date, &y, &mo, &d) != 0 ||
        jr_tz_day_start(zone, y, mo, d, due) != 0) {
        return -1;
    }
    *due += apr_time_from_sec((apr_time_t)h * 3600 + mi * 60);
    return 0;
}

int jr_backup_scheduled(jr_ctx_t *ctx)
{
    apr_pool_t *p = ctx->pool;
    const char *err = NULL;
    apr_array_header_t *names;
    apr_time_t now = apr_time_now(), due, newest;
    jr_backup_info_t b;
    int i;

    if (!ctx->cfg->backup_schedule || due_today(ctx, now, &due) != 0 || now < due) {
        return 0;
    }
    jr_backup_names(p, ctx->cfg->data_dir, &newest);
    if (newest >= due) {
        return 0; /* today's is there */
    }
    if (jr_backup_create(ctx, &b, &err) != APR_SUCCESS) {
        JR_LOG(JR10007, 0, "the scheduled backup failed: %s", err ? err : "unknown error");
        return -1;
    }
    JR_LOG(JR10006, 0, "scheduled backup %s written (%" APR_OFF_T_FMT " bytes)", b.name, b.size);
    names = jr_backup_names(p, ctx->cfg->data_dir, &newest);
    for (i = 0; i + ctx->cfg->backup_keep < names->nelts; ++i) {
        const char *name = APR_ARRAY_IDX(names, i, const char *);
        if (apr_file_remove(jr_backup_path(p, ctx->cfg->data_dir, name), p) == APR_SUCCESS) {
            JR_LOG(JR10008, 0, "removed the old backup %s (JournalBackupKeep %d)", name,
                   ctx->cfg->backup_keep);
        }
    }
    return 1;
}
