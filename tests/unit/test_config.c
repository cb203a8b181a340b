/* jr_config.h: the rows of jr_config_list.h as the module uses them. The messages are the
 * ones `apache2 -t` prints, byte for byte (docs/directives.md quotes them). */
#include <stdio.h>
#include <string.h>

#include "jr_config.h"
#include "jr_counters.h"
#include "jr_util.h"
#include "unit.h"

static int numeric(const jr_directive_t *d)
{
    return d->kind == JR_DIR_INT || d->kind == JR_DIR_DURATION || d->kind == JR_DIR_SIZE;
}

static const jr_directive_t *row(const char *name)
{
    int i;
    for (i = 0; i < JR_DIRECTIVE_COUNT; ++i) {
        if (!strcmp(jr_directives[i].name, name)) {
            return &jr_directives[i];
        }
    }
    ck_abort_msg("no directive %s", name);
    return NULL;
}

/* The field of d in c, as a number (int or long long). */
static long long number_of(const jr_config_t *c, const jr_directive_t *d)
{
    const char *f = (const char *)c + d->offset;
    return d->size == sizeof(int) ? *(const int *)f : *(const long long *)f;
}

START_TEST(rows_are_consistent)
{
    int i, j;
    for (i = 0; i < JR_DIRECTIVE_COUNT; ++i) {
        const jr_directive_t *d = &jr_directives[i];
        ck_assert_msg(!strncmp(d->name, "Journal", 7), "%s", d->name);
        for (j = 0; j < i; ++j) {
            ck_assert_msg(strcmp(jr_directives[j].name, d->name), "%s twice", d->name);
        }
        if (numeric(d)) {
            long long v = number_of(&jr_config_defaults, d);
            ck_assert_msg(d->min >= 0 && d->min <= v && v <= d->max, "%s: default %lld", d->name,
                          v);
            ck_assert_msg(d->range && *d->range, "%s has no allowed values", d->name);
        } else if (d->kind == JR_DIR_FLAG) {
            long long v = number_of(&jr_config_defaults, d);
            ck_assert_msg(v == 0 || v == 1, "%s: default %lld", d->name, v);
        } else {
            ck_assert_ptr_null(d->range);
        }
    }
}
END_TEST

/* Each numeric row takes its bounds (plain numbers: seconds, bytes) and refuses one past
 * them with its own message. */
START_TEST(numeric_rows_hold_their_bounds)
{
    int i;
    for (i = 0; i < JR_DIRECTIVE_COUNT; ++i) {
        const jr_directive_t *d = &jr_directives[i];
        long long edges[] = {d->min, d->max}, outside[] = {d->min - 1, d->max + 1};
        jr_config_t c;
        int k;
        if (!numeric(d)) {
            continue;
        }
        jr_config_unset(&c);
        for (k = 0; k < 2; ++k) {
            const char *arg = jr_psprintf(unit_pool, "%lld", edges[k]);
            const char *err = jr_config_set_number(unit_pool, &c, d, arg);
            ck_assert_msg(err == NULL, "%s %s: %s", d->name, arg, err);
            ck_assert_int_eq(number_of(&c, d), edges[k]);
        }
        for (k = 0; k < 2; ++k) {
            const char *arg = jr_psprintf(unit_pool, "%lld", outside[k]);
            const char *want =
                jr_psprintf(unit_pool, "%s: '%s' is not valid: use %s", d->name, arg, d->range);
            const char *err = jr_config_set_number(unit_pool, &c, d, arg);
            ck_assert_msg(err && !strcmp(err, want), "%s %s: %s", d->name, arg, err);
            ck_assert_int_eq(number_of(&c, d), edges[1]); /* unchanged */
        }
    }
}
END_TEST

START_TEST(messages_as_documented)
{
    static const char *const cases[][3] = {
        {"JournalBcryptCost", "99", "JournalBcryptCost: '99' is not valid: use an integer from 4 "
                                    "to 15"},
        {"JournalSessionLifetime", "10s", "JournalSessionLifetime: '10s' is not valid: use a "
                                          "duration from 60s to 366d (seconds, or a number "
                                          "with s, m, h or d)"},
        {"JournalMaxUploadSize", "5G", "JournalMaxUploadSize: '5G' is not valid: use a size from "
                                       "1K to 4G (bytes, or a number with K, M or G)"},
        {"JournalRateLimitDefault", "x", "JournalRateLimitDefault: 'x' is not valid: use an "
                                         "integer from 1 to 10000000 (and at most "
                                         "JournalRateLimitMax)"},
        {"JournalKeyBanDuration", "367d", "JournalKeyBanDuration: '367d' is not valid: use a "
                                          "duration from 60s to 366d"},
        {"JournalCounterSlots", "63", "JournalCounterSlots: '63' is not valid: use an integer "
                                      "from 64 to 1048576"},
        {"JournalAITimeout", "2h", "JournalAITimeout: '2h' is not valid: use a duration from 1s "
                                   "to 1h (seconds, or a number with s, m or h)"},
        {"JournalWorkerProcesses", "two", "JournalWorkerProcesses: 'two' is not valid: use an "
                                          "integer from 1 to 16"},
    };
    size_t i;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
        jr_config_t c;
        const char *err;
        jr_config_unset(&c);
        err = jr_config_set_number(unit_pool, &c, row(cases[i][0]), cases[i][1]);
        ck_assert_msg(err && !strcmp(err, cases[i][2]), "%s", err);
    }
}
END_TEST

START_TEST(units_are_read)
{
    jr_config_t c;
    jr_config_unset(&c);
    ck_assert_ptr_null(jr_config_set_number(unit_pool, &c, row("JournalSessionLifetime"), "7d"));
    ck_assert_int_eq(c.session_ttl, 7 * 86400);
    ck_assert_ptr_null(jr_config_set_number(unit_pool, &c, row("JournalMaxUploadSize"), "4G"));
    ck_assert_int_eq(c.upload_max, 4LL * 1024 * 1024 * 1024);
    ck_assert_ptr_null(jr_config_set_number(unit_pool, &c, row("JournalLoginBanWindow"), "15m"));
    ck_assert_int_eq(c.login_ban_window, 900);
}
END_TEST

/* A virtual host keeps what it sets and inherits the rest from the main server. */
START_TEST(merge_prefers_what_the_host_sets)
{
    jr_config_t base, add, c;
    jr_config_unset(&base);
    jr_config_unset(&add);
    memset(&c, 0xA5, sizeof(c));
    base.bcrypt_cost = 12;
    base.session_ttl = 7200;
    base.data_dir = "/srv/main";
    base.migrate = 0;
    add.session_ttl = 600;
    add.upload_types = "text/plain";
    add.worker_supervised = 0;
    jr_config_merge(&c, &base, &add);
    ck_assert_int_eq(c.bcrypt_cost, 12);
    ck_assert_int_eq(c.session_ttl, 600);
    ck_assert_str_eq(c.data_dir, "/srv/main");
    ck_assert_str_eq(c.upload_types, "text/plain");
    ck_assert_int_eq(c.migrate, 0);
    ck_assert_int_eq(c.worker_supervised, 0);
    ck_assert_int_eq(c.rate_max, -1); /* set nowhere: still unset until resolved */
    ck_assert_ptr_null(c.ai_endpoint);
}
END_TEST

START_TEST(resolve_gives_the_defaults)
{
    jr_config_t c;
    int i;
    jr_config_unset(&c);
    ck_assert_ptr_null(jr_config_resolve(unit_pool, &c));
    for (i = 0; i < JR_DIRECTIVE_COUNT; ++i) {
        const jr_directive_t *d = &jr_directives[i];
        ck_assert_msg(!memcmp((char *)&c + d->offset, (const char *)&jr_config_defaults + d->offset,
                              d->size),
                      "%s", d->name);
    }
    ck_assert_int_eq(c.session_ttl, 12 * 3600);
    ck_assert_int_eq(c.max_body, 1024 * 1024);
    ck_assert_int_eq(c.rate_default, 60);
    ck_assert_int_eq(c.rate_max, 10000);
    ck_assert_int_eq(c.counter_slots, JR_SHM_DEFAULT_SLOTS);
    ck_assert_int_eq(c.event_retention, 7 * 86400);
    ck_assert_int_eq(c.migrate, 1);
    ck_assert_int_eq(c.worker_supervised, 1);
    ck_assert_str_eq(c.data_dir, "/var/lib/mod_journal");
    ck_assert_ptr_nonnull(strstr(c.upload_types, "application/pdf"));
    ck_assert_ptr_null(c.ai_endpoint);
    /* Resolving again changes nothing. */
    c.bcrypt_cost = 5;
    ck_assert_ptr_null(jr_config_resolve(unit_pool, &c));
    ck_assert_int_eq(c.bcrypt_cost, 5);
}
END_TEST

START_TEST(rate_default_follows_a_lower_max)
{
    jr_config_t c;
    jr_config_unset(&c);
    c.rate_max = 10;
    ck_assert_ptr_null(jr_config_resolve(unit_pool, &c));
    ck_assert_int_eq(c.rate_default, 10);

    jr_config_unset(&c);
    c.rate_max = 10;
    c.rate_default = 20;
    ck_assert_str_eq(jr_config_resolve(unit_pool, &c),
                     "JournalRateLimitDefault (20) must not exceed JournalRateLimitMax (10)");
}
END_TEST

START_TEST(ai_endpoint_needs_a_model)
{
    jr_config_t c;
    jr_config_unset(&c);
    jr_config_set_text(&c, row("JournalAIEndpoint"), "http://127.0.0.1:11434/v1");
    ck_assert_str_eq(jr_config_text(&c, row("JournalAIEndpoint")), "http://127.0.0.1:11434/v1");
    ck_assert_str_eq(jr_config_resolve(unit_pool, &c),
                     "JournalAIEndpoint needs JournalAIModel: name the model the endpoint serves");
    jr_config_set_text(&c, row("JournalAIModel"), "llama3.1");
    ck_assert_ptr_null(jr_config_resolve(unit_pool, &c));
}
END_TEST

START_TEST(flags_are_stored)
{
    jr_config_t c;
    jr_config_unset(&c);
    ck_assert_int_eq(c.migrate, -1);
    jr_config_set_flag(&c, row("JournalMigrate"), 0);
    jr_config_set_flag(&c, row("JournalWorker"), 1);
    ck_assert_int_eq(c.migrate, 0);
    ck_assert_int_eq(c.worker_supervised, 1);
    ck_assert_int_eq(row("JournalWorker")->scope, JR_DIR_MAIN);
    ck_assert_int_eq(row("JournalMigrate")->scope, JR_DIR_ANY);
}
END_TEST

Suite *suite_config(void)
{
    Suite *s = suite_create("config");
    TCase *tc = tcase_create("directives");
    tcase_add_checked_fixture(tc, unit_pool_setup, unit_pool_teardown);
    tcase_add_test(tc, rows_are_consistent);
    tcase_add_test(tc, numeric_rows_hold_their_bounds);
    tcase_add_test(tc, messages_as_documented);
    tcase_add_test(tc, units_are_read);
    tcase_add_test(tc, merge_prefers_what_the_host_sets);
    tcase_add_test(tc, resolve_gives_the_defaults);
    tcase_add_test(tc, rate_default_follows_a_lower_max);
    tcase_add_test(tc, ai_endpoint_needs_a_model);
    tcase_add_test(tc, flags_are_stored);
    suite_add_tcase(s, tc);
    return s;
}
