/* jr_stream.h: which events a stream shows to whom, when a resumption needs a reset, and
 * the SSE message format. */
#include <stdlib.h>
#include <string.h>

#include <apr_strings.h>

#include "jr_stream.h"
#include "unit.h"

static jr_ctx_t ctx_of(apr_pool_t *p, jr_role_e role, long long user, const char *branches)
{
    jr_ctx_t c;
    memset(&c, 0, sizeof(c));
    c.pool = p;
    c.who.role = role;
    c.who.user_id = user;
    c.who.branch_ids = apr_array_make(p, 2, sizeof(long long));
    if (branches) {
        APR_ARRAY_PUSH(c.who.branch_ids, long long) = atoll(branches);
        c.who.branch_json = apr_pstrcat(p, "[", branches, "]", NULL);
    }
    return c;
}

START_TEST(notification_stream_scope)
{
    apr_pool_t *p;
    apr_pool_create(&p, NULL);
    jr_ctx_t admin = ctx_of(p, JR_ROLE_ADMIN, 1, NULL), tutor = ctx_of(p, JR_ROLE_TUTOR, 7, "4");
    jr_stream_event_t ev = {10, "notification", 4, 3, "{}"};
    ck_assert(jr_stream_visible(&admin, JR_STREAM_NOTIFICATIONS, &ev));
    ck_assert(jr_stream_visible(&tutor, JR_STREAM_NOTIFICATIONS, &ev));
    ev.branch_id = 5; /* another branch */
    ck_assert(!jr_stream_visible(&tutor, JR_STREAM_NOTIFICATIONS, &ev));
    ev.branch_id = 0; /* no branch: admins only */
    ck_assert(!jr_stream_visible(&tutor, JR_STREAM_NOTIFICATIONS, &ev));
    ck_assert(jr_stream_visible(&admin, JR_STREAM_NOTIFICATIONS, &ev));
    ev.branch_id = 4;
    ev.type = "entry.created"; /* raw outbox rows are not streamed */
    ck_assert(!jr_stream_visible(&admin, JR_STREAM_NOTIFICATIONS, &ev));
    ev.type = "chat_message";
    ck_assert(!jr_stream_visible(&admin, JR_STREAM_NOTIFICATIONS, &ev));
    ev.type = "lesson_report_status";
    ck_assert(jr_stream_visible(&tutor, JR_STREAM_NOTIFICATIONS, &ev));
    apr_pool_destroy(p);
}
END_TEST

START_TEST(chat_stream_scope)
{
    apr_pool_t *p;
    apr_pool_create(&p, NULL);
    jr_ctx_t admin = ctx_of(p, JR_ROLE_ADMIN, 1, NULL), tutor = ctx_of(p, JR_ROLE_TUTOR, 7, "4");
    jr_stream_event_t ev = {10, "chat_message", 0, 7, "{}"};
    ck_assert(jr_stream_visible(&tutor, JR_STREAM_CHAT, &ev));
    ck_assert(jr_stream_visible(&admin, JR_STREAM_CHAT, &ev));
    ev.entity_id = 8; /* another tutor's thread */
    ck_assert(!jr_stream_visible(&tutor, JR_STREAM_CHAT, &ev));
    ev.type = "notification";
    ck_assert(!jr_stream_visible(&admin, JR_STREAM_CHAT, &ev));
    apr_pool_destroy(p);
}
END_TEST

START_TEST(resumption_and_format)
{
    apr_pool_t *p;
    apr_pool_create(&p, NULL);
    ck_assert(jr_stream_resumable(10, 0));  /* empty outbox: nothing to tell */
    ck_assert(jr_stream_resumable(10, 5));
    ck_assert(jr_stream_resumable(10, 11));  /* the next one is still there */
    ck_assert(!jr_stream_resumable(10, 12)); /* 11 may have been trimmed */
    ck_assert(jr_stream_resumable(0, 1));
    ck_assert_str_eq(jr_sse_message(p, 5000000000LL, "ai_status", "{\"a\":1}"),
                     "id: 5000000000\nevent: ai_status\ndata: {\"a\":1}\n\n");
    apr_pool_destroy(p);
}
END_TEST

Suite *suite_stream(void)
{
    Suite *s = suite_create("stream");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, notification_stream_scope);
    tcase_add_test(tc, chat_stream_scope);
    tcase_add_test(tc, resumption_and_format);
    suite_add_tcase(s, tc);
    return s;
}
