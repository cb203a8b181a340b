/* jr_jobs.h, jr_ai.h, jr_events.h: claims with leases, the guarded final update, back-off,
 * the AI checks' transitions and their events, on a migrated SQLite file; two connections
 * racing for one queue. */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <apr_strings.h>
#include <sqlite3.h>

#include "jr_ai.h"
#include "jr_crypt.h"
#include "jr_events.h"
#include "jr_json.h"
#include "jr_settings.h"
#include "jr_util.h"
#include "ops_fixture.h"
#include "jr_entries.h"
#include "jr_lessons.h"
#include "jr_queues.h"

static long long group_id;
static jr_ctx_t wctx; /* the worker's: no user, no key, client_ip "worker" */

/* Runs an operation that may answer with a serialised body (jr_jw); returns the JSON. */
static json_t *op_json(jr_op_fn *op, const char *body, int status)
{
    jr_result_t res = fx_call(op, body);
    ck_assert_msg(res.status == status, "status %d, expected %d", res.status, status);
    return fx_json(res);
}

static long long new_entry(const char *description)
{
    json_t *e;
    if (!group_id) {
        group_id = fx_new_group("G", fx_new_branch("B"));
    }
    e = op_json(jr_op_entries_create,
                jr_json_dump(fx_pool,
                             jr_json_own(fx_pool, json_pack("{s:s, s:I, s:s}", "student_name",
                                                            "Ann", "group_id",
                                                            (json_int_t)group_id,
                                                            "description", description)),
                             NULL),
                201);
    return jr_json_int(e, "id", 0);
}

/* Ad-hoc SQL about one record (a macro, so the format stays a checked literal). */
#define q(fmt, id) fx_sql(jr_psprintf(fx_pool, fmt, (long long)(id)))
#define qi(fmt, id) atoll(q(fmt, id))
#define JOB_STATE(e) q("SELECT status || ' ' || attempts FROM ai_jobs WHERE entity_id = %lld", e)
#define ENTRY_STATE(e) q("SELECT description || '|' || ai_status FROM entries WHERE id = %lld", e)

static apr_array_header_t *claim(const char *owner, int max)
{
    apr_array_header_t *tasks = NULL;
    ck_assert_int_eq(jr_ai_claim(&wctx, owner, max, 30, &tasks), APR_SUCCESS);
    return tasks;
}

#define TASK(a, i) (&APR_ARRAY_IDX((a), (i), jr_ai_task_t))

static const char *finish(const jr_ai_task_t *t, jr_ai_verdict_e v, int rewrite,
                          const char *text, long long retry_after)
{
    jr_ai_result_t r = {v, rewrite, text, v == JR_AI_APPLY ? NULL : "boom", retry_after};
    const char *what = NULL;
    ck_assert_int_eq(jr_ai_finish(&wctx, t, &r, &what), APR_SUCCESS);
    return what;
}

static void setup(void)
{
    fx_setup();
    group_id = 0;
    wctx = fx_ctx;
    memset(&wctx.who, 0, sizeof(wctx.who));
    wctx.client_ip = "worker";
}

START_TEST(claim_marks_processing)
{
    long long a = new_entry("first text"), b = new_entry("second text"), c = new_entry("third");
    apr_array_header_t *t = claim("h:1:1", 2);
    ck_assert_int_eq(t->nelts, 2);
    ck_assert_int_eq(TASK(t, 0)->job.entity_id, a); /* oldest first */
    ck_assert_int_eq(TASK(t, 1)->job.entity_id, b);
    ck_assert_int_eq(TASK(t, 0)->kind, JR_AI_ENTRY);
    ck_assert_str_eq(TASK(t, 0)->user, "first text");
    ck_assert_str_eq(TASK(t, 0)->system, jr_setting(&wctx, JR_SETTING_ENTRY_AI_PROMPT));
    ck_assert_str_eq(TASK(t, 0)->text_hash, jr_sha256_hex(fx_pool, "first text", 10));
    ck_assert_int_eq(TASK(t, 0)->job.attempts, 1);
    ck_assert_str_eq(q("SELECT status || ' ' || lease_owner || ' ' || attempts || ' ' || text_hash"
                       " FROM ai_jobs WHERE entity_id = %lld", a),
                     apr_pstrcat(fx_pool, "processing h:1:1 1 ", TASK(t, 0)->text_hash, NULL));
    ck_assert_ptr_nonnull(q("SELECT lease_until FROM ai_jobs WHERE entity_id = %lld", a));
    ck_assert_str_eq(q("SELECT ai_status FROM entries WHERE id = %lld", a), "processing");
    ck_assert_str_eq(q("SELECT ai_status FROM entries WHERE id = %lld", c), "pending");
    ck_assert_str_eq(q("SELECT json_extract(payload, '$.status') FROM events WHERE entity_id ="
                       " %lld AND type = 'ai_status' ORDER BY id DESC LIMIT 1", a),
                     "processing");
    t = claim("h:1:2", 5);
    ck_assert_int_eq(t->nelts, 1);
    ck_assert_int_eq(TASK(t, 0)->job.entity_id, c);
    ck_assert_int_eq(claim("h:1:3", 5)->nelts, 0);
}
END_TEST

START_TEST(settle_only_by_the_holder)
{
    apr_array_header_t *t;
    jr_job_t other;
    long long e = new_entry("text");
    t = claim("h:1:1", 1);
    other = TASK(t, 0)->job;
    other.owner = "h:1:2";
    ck_assert_int_eq(jr_db_begin(fx_db), APR_SUCCESS);
    ck_assert_int_eq(jr_job_settle(&wctx, &jr_queue_ai, &other, "done", 0, NULL, 0), 0);
    ck_assert_int_eq(jr_job_settle(&wctx, &jr_queue_ai, &TASK(t, 0)->job, "done", 0, NULL, 0),
                     1);
    /* once settled, not even the holder writes again */
    ck_assert_int_eq(jr_job_settle(&wctx, &jr_queue_ai, &TASK(t, 0)->job, "failed", 0, NULL,
                                   0), 0);
    ck_assert_int_eq(jr_db_commit(fx_db), APR_SUCCESS);
    ck_assert_str_eq(q("SELECT status FROM ai_jobs WHERE entity_id = %lld", e), "done");
    ck_assert_ptr_null(q("SELECT lease_owner FROM ai_jobs WHERE entity_id = %lld", e));
}
END_TEST

START_TEST(expired_lease_returns_the_job)
{
    long long e = new_entry("text"), audits;
    apr_array_header_t *a = claim("h:1:1", 1), *b;
    ck_assert_int_eq(claim("h:2:1", 1)->nelts, 0); /* held */
    fx_sql("UPDATE ai_jobs SET lease_until = '2000-01-01T00:00:00Z'");
    b = claim("h:2:2", 1);
    ck_assert_int_eq(b->nelts, 1);
    ck_assert_int_eq(TASK(b, 0)->job.attempts, 2);
    audits = fx_audit_count();
    /* the first holder's answer arrives late: it is not written */
    ck_assert_str_eq(finish(TASK(a, 0), JR_AI_APPLY, 1, "AI: late", 0), "lost");
    ck_assert_str_eq(q("SELECT description FROM entries WHERE id = %lld", e), "text");
    ck_assert_str_eq(finish(TASK(b, 0), JR_AI_APPLY, 1, "AI: text", 0), "done");
    ck_assert_str_eq(q("SELECT description || '|' || description_original || '|' || ai_status"
                       " FROM entries WHERE id = %lld", e),
                     "AI: text|text|done");
    ck_assert_ptr_nonnull(q("SELECT ai_checked_at FROM entries WHERE id = %lld", e));
    ck_assert_int_eq(fx_audit_count(), audits + 1);
    ck_assert_str_eq(fx_audit_last("action || ' ' || entity_type || ' ' || client_ip"),
                     "ai_rewrite entry worker");
    ck_assert_ptr_null(fx_audit_last("actor_user_id"));
}
END_TEST

START_TEST(a_job_that_kills_its_worker_fails)
{
    long long e = new_entry("text");
    int i;
    for (i = 1; i <= 3; ++i) {
        ck_assert_int_eq(claim("h:1:1", 1)->nelts, 1);
        fx_sql("UPDATE ai_jobs SET lease_until = '2000-01-01T00:00:00Z'");
    }
    ck_assert_int_eq(claim("h:1:2", 1)->nelts, 0);
    ck_assert_str_eq(JOB_STATE(e),
                     "failed 4");
    ck_assert_str_eq(q("SELECT ai_status FROM entries WHERE id = %lld", e), "failed");
    ck_assert_ptr_nonnull(strstr(q("SELECT ai_error FROM entries WHERE id = %lld", e),
                                 "interrupted"));
}
END_TEST

START_TEST(retries_back_off_then_fail)
{
    long long e = new_entry("text");
    apr_time_t next = 0, ra;
    apr_array_header_t *t = claim("h:1:1", 1);
    int ready = 1;
    ck_assert_str_eq(finish(TASK(t, 0), JR_AI_RETRY, 0, NULL, 0), "retry");
    ck_assert_str_eq(q("SELECT status || ' ' || attempts || ' ' || last_error FROM ai_jobs"
                       " WHERE entity_id = %lld", e),
                     "pending 1 boom");
    ck_assert_str_eq(q("SELECT ai_status || ' ' || ai_error FROM entries WHERE id = %lld", e),
                     "pending boom");
    ck_assert_int_eq(jr_parse_iso_time(q("SELECT run_after FROM ai_jobs WHERE entity_id = %lld",
                                         e), &ra), 0);
    /* 2 s after the first attempt, rounded up to a whole second */
    ck_assert_int_ge(ra, apr_time_now() + apr_time_from_sec(1));
    ck_assert_int_le(ra, apr_time_now() + apr_time_from_sec(3));
    ck_assert_int_eq(claim("h:1:2", 1)->nelts, 0);
    ck_assert_int_eq(jr_jobs_due(&wctx, &jr_queue_ai, &ready, &next), APR_SUCCESS);
    ck_assert_int_eq(ready, 0);
    ck_assert_int_eq(next, ra);

    fx_sql("UPDATE ai_jobs SET run_after = '2000-01-01T00:00:00Z'");
    ck_assert_int_eq(jr_jobs_due(&wctx, &jr_queue_ai, &ready, &next), APR_SUCCESS);
    ck_assert_int_eq(ready, 1);
    t = claim("h:1:3", 1);
    ck_assert_int_eq(TASK(t, 0)->job.attempts, 2);
    /* Retry-After longer than the back-off wins */
    ck_assert_str_eq(finish(TASK(t, 0), JR_AI_RETRY, 0, NULL, 100), "retry");
    ck_assert_int_eq(jr_parse_iso_time(q("SELECT run_after FROM ai_jobs WHERE entity_id = %lld",
                                         e), &ra), 0);
    ck_assert_int_ge(ra, apr_time_now() + apr_time_from_sec(99));
    fx_sql("UPDATE ai_jobs SET run_after = '2000-01-01T00:00:00Z'");
    t = claim("h:1:4", 1);
    ck_assert_int_eq(TASK(t, 0)->job.attempts, 3);
    ck_assert_str_eq(finish(TASK(t, 0), JR_AI_RETRY, 0, NULL, 0), "failed");
    ck_assert_str_eq(q("SELECT status FROM ai_jobs WHERE entity_id = %lld", e), "failed");
    ck_assert_str_eq(q("SELECT ai_status || ' ' || ai_error FROM entries WHERE id = %lld", e),
                     "failed boom");
}
END_TEST

START_TEST(refused_key_fails_at_once)
{
    long long e = new_entry("text");
    apr_array_header_t *t = claim("h:1:1", 1);
    ck_assert_str_eq(finish(TASK(t, 0), JR_AI_FAIL, 0, NULL, 0), "failed");
    ck_assert_str_eq(JOB_STATE(e),
                     "failed 1");
}
END_TEST

START_TEST(stale_answer_queues_again)
{
    long long e = new_entry("old text");
    apr_array_header_t *t = claim("h:1:1", 1);
    fx_set_id(&fx_ctx, e);
    op_json(jr_op_entries_update, "{\"description\": \"new text\"}", 200);
    ck_assert_str_eq(finish(TASK(t, 0), JR_AI_APPLY, 1, "AI: old text", 0), "stale");
    ck_assert_str_eq(ENTRY_STATE(e),
                     "new text|pending");
    ck_assert_ptr_null(q("SELECT description_original FROM entries WHERE id = %lld", e));
    ck_assert_str_eq(JOB_STATE(e),
                     "pending 0");
    t = claim("h:1:2", 1);
    ck_assert_str_eq(TASK(t, 0)->user, "new text");
    ck_assert_str_eq(finish(TASK(t, 0), JR_AI_APPLY, 0, NULL, 0), "skipped");
    ck_assert_str_eq(ENTRY_STATE(e),
                     "new text|skipped");
}
END_TEST

START_TEST(release_gives_the_job_back)
{
    long long e = new_entry("text");
    apr_array_header_t *t = claim("h:1:1", 1);
    ck_assert_int_eq(jr_ai_release(&wctx, TASK(t, 0)), APR_SUCCESS);
    ck_assert_str_eq(JOB_STATE(e),
                     "pending 0");
    ck_assert_ptr_null(q("SELECT lease_owner FROM ai_jobs WHERE entity_id = %lld", e));
    ck_assert_str_eq(q("SELECT ai_status FROM entries WHERE id = %lld", e), "pending");
    ck_assert_int_eq(claim("h:1:2", 1)->nelts, 1);
}
END_TEST

START_TEST(empty_text_is_skipped_without_a_request)
{
    long long e = new_entry("  ");
    ck_assert_int_eq(claim("h:1:1", 5)->nelts, 0);
    ck_assert_str_eq(q("SELECT status FROM ai_jobs WHERE entity_id = %lld", e), "done");
    ck_assert_str_eq(q("SELECT ai_status FROM entries WHERE id = %lld", e), "skipped");
}
END_TEST

START_TEST(report_rewrite_records_everything)
{
    json_t *r;
    long long id, audits;
    apr_array_header_t *t;
    op_json(jr_op_settings_put, "{\"lesson_ai_enabled\": \"true\"}", 200);
    new_entry("unused"); /* makes the group */
    fx_sql("DELETE FROM ai_jobs");
    r = op_json(jr_op_reports_create,
                jr_psprintf(fx_pool, "{\"group_id\": %lld, \"lesson_date\": \"2026-03-02\","
                                     " \"text\": \"we did sums\", \"topic\": \"Fractions 2/5\"}",
                            group_id),
                201);
    id = jr_json_int(r, "id", 0);
    ck_assert_str_eq(q("SELECT type FROM events WHERE entity_type = 'lesson_report' AND"
                       " entity_id = %lld ORDER BY id LIMIT 1", id),
                     "lesson.report");
    t = claim("h:1:1", 1);
    ck_assert_int_eq(TASK(t, 0)->kind, JR_AI_REPORT);
    ck_assert_str_eq(TASK(t, 0)->system,
                     apr_pstrcat(fx_pool, jr_setting(&wctx, JR_SETTING_LESSON_AI_PROMPT),
                                 "\n\nContext: lesson position: middle; topic: Fractions 2/5",
                                 NULL));
    audits = fx_audit_count();
    ck_assert_str_eq(finish(TASK(t, 0), JR_AI_APPLY, 1, "Today we continued: sums.", 0), "done");
    ck_assert_str_eq(q("SELECT text || '|' || text_ai || '|' || text_original || '|' || ai_status"
                       " FROM lesson_reports WHERE id = %lld", id),
                     "Today we continued: sums.|Today we continued: sums.|we did sums|done");
    ck_assert_str_eq(q("SELECT source || ' ' || text FROM lesson_report_versions WHERE"
                       " report_id = %lld ORDER BY id DESC LIMIT 1", id),
                     "ai Today we continued: sums.");
    ck_assert_ptr_null(q("SELECT created_by FROM lesson_report_versions WHERE report_id = %lld"
                         " ORDER BY id DESC LIMIT 1", id));
    ck_assert_int_eq(fx_audit_count(), audits + 1);
    ck_assert_str_eq(fx_audit_last("action || ' ' || client_ip"), "ai_rewrite worker");
    ck_assert_str_eq(q("SELECT group_concat(type, ',') FROM (SELECT type FROM events WHERE"
                       " entity_type = 'lesson_report' AND entity_id = %lld ORDER BY id)", id),
                     "lesson.report,lesson_report_status,lesson_report_status,"
                     "lesson_report_status,lesson.ai.formatted");
}
END_TEST

START_TEST(context_line)
{
    ck_assert_ptr_null(jr_ai_context_line(fx_pool, NULL));
    ck_assert_ptr_null(jr_ai_context_line(fx_pool, "   "));
    ck_assert_str_eq(jr_ai_context_line(fx_pool, "Intro 1/4"),
                     "Context: lesson position: first; topic: Intro 1/4");
    ck_assert_str_eq(jr_ai_context_line(fx_pool, " Wrap-up 4/4 "),
                     "Context: lesson position: last; topic: Wrap-up 4/4");
    ck_assert_str_eq(jr_ai_context_line(fx_pool, "Free talk"), "Context: topic: Free talk");
    ck_assert_str_eq(jr_ai_context_line(fx_pool, "Bad 5/4"), "Context: topic: Bad 5/4");
}
END_TEST

START_TEST(dead_workers_jobs_come_back)
{
    pid_t child = fork();
    long long e;
    if (child == 0) {
        _exit(0);
    }
    waitpid(child, NULL, 0);
    e = new_entry("text");
    claim(jr_psprintf(fx_pool, "thishost:%ld:1", (long)child), 1);
    new_entry("another");
    claim(jr_psprintf(fx_pool, "thishost:%ld:2", (long)getpid()), 1); /* alive: kept */
    claim(jr_psprintf(fx_pool, "otherhost:%ld:1", (long)child), 5);   /* not ours to judge */
    ck_assert_int_eq(jr_jobs_reclaim_dead(&wctx, &jr_queue_ai, "thishost", 0), 1);
    ck_assert_str_eq(q("SELECT lease_until FROM ai_jobs WHERE entity_id = %lld", e),
                     "1970-01-01T00:00:00Z");
    ck_assert_int_eq(jr_jobs_reclaim_dead(&wctx, &jr_queue_ai, "thishost", 0), 0);
}
END_TEST

START_TEST(backoff)
{
    ck_assert_int_eq(jr_job_backoff(1, 0), 2);
    ck_assert_int_eq(jr_job_backoff(2, 0), 4);
    ck_assert_int_eq(jr_job_backoff(2, 3), 4);
    ck_assert_int_eq(jr_job_backoff(2, 30), 30);
    ck_assert_int_eq(jr_job_backoff(1, 999999), 3600);
    ck_assert_int_eq(jr_job_backoff(20, 0), 300);
}
END_TEST

START_TEST(requeue_resets_the_claim)
{
    long long e = new_entry("text");
    apr_array_header_t *t = claim("h:1:1", 1);
    ck_assert_str_eq(finish(TASK(t, 0), JR_AI_FAIL, 0, NULL, 0), "failed");
    fx_sql("UPDATE ai_jobs SET lease_owner = 'x', lease_until = 'y', run_after = 'z'");
    op_json(jr_op_ai_requeue, NULL, 200);
    ck_assert_str_eq(q("SELECT status || ' ' || attempts || ' ' || COALESCE(lease_owner,"
                       " lease_until, run_after, text_hash, 'none') FROM ai_jobs WHERE"
                       " entity_id = %lld", e),
                     "pending 0 none");
    ck_assert_str_eq(q("SELECT json_extract(payload, '$.status') FROM events WHERE entity_id ="
                       " %lld ORDER BY id DESC LIMIT 1", e),
                     "pending");
}
END_TEST

START_TEST(entry_revert)
{
    long long e = new_entry("tutor's text");
    apr_array_header_t *t;
    fx_set_id(&fx_ctx, e);
    EXPECT(fx_call(jr_op_entries_ai_revert, NULL), 409, "original");
    t = claim("h:1:1", 1);
    finish(TASK(t, 0), JR_AI_APPLY, 1, "AI text", 0);
    op_json(jr_op_entries_ai_revert, NULL, 200);
    ck_assert_str_eq(q("SELECT description || '|' || description_original || '|' || ai_status"
                       " FROM entries WHERE id = %lld", e),
                     "tutor's text|tutor's text|reverted");
    ck_assert_str_eq(fx_audit_last("action"), "ai_revert");
}
END_TEST

START_TEST(events_trim)
{
    fx_sql("INSERT INTO events (type, entity_type, payload, created_at) VALUES ('x', 'entry',"
           " '{}', '2000-01-01T00:00:00Z')");
    new_entry("text"); /* new events */
    ck_assert_int_eq(jr_events_trim(&wctx, 3600), 1);
    ck_assert_int_eq(qi("SELECT COUNT(*) FROM events WHERE created_at < '2001' AND %lld", 1), 0);
    ck_assert_int_gt(qi("SELECT COUNT(*) FROM events WHERE %lld", 1), 0);
}
END_TEST

/* ---- two connections race for one queue ------------------------------------------------- */

#define RACE_JOBS 200

typedef struct {
    const char *path, *name;
    long long claimed[RACE_JOBS];
    int n;
    int failed;
    pthread_barrier_t *start; /* both racers claim from the same moment */
} racer_t;

static void *race(void *arg)
{
    racer_t *r = arg;
    apr_pool_t *p;
    jr_db_t *db;
    jr_ctx_t ctx;
    const char *err = NULL;
    apr_array_header_t *t;
    int i, k = 0;
    /* On a busy machine one thread could otherwise drain the queue before the other starts;
     * the pause after each claim lets the other connection claim in between. */
    pthread_barrier_wait(r->start);
    apr_pool_create(&p, NULL);
    if (jr_db_open(&db, p, "sqlite3", r->path, &err) != APR_SUCCESS ||
        jr_db_prepare_all(db) != APR_SUCCESS) {
        r->failed = 1;
        return NULL;
    }
    memset(&ctx, 0, sizeof(ctx));
    ctx.db = db;
    ctx.client_ip = "worker";
    ctx.params = apr_table_make(p, 1);
    ctx.query = apr_table_make(p, 1);
    for (;;) {
        apr_pool_t *it;
        apr_pool_create(&it, p);
        ctx.pool = it;
        ++k;
        if (jr_ai_claim(&ctx, jr_psprintf(it, "%s:%d", r->name, k), 1 + k % 3, 30, &t) !=
            APR_SUCCESS) {
            r->failed = 1;
            break;
        }
        if (t->nelts == 0) {
            apr_pool_destroy(it);
            break;
        }
        for (i = 0; i < t->nelts; ++i) {
            jr_ai_result_t res = {JR_AI_APPLY, 1, "AI", NULL, 0};
            const char *what;
            r->claimed[r->n++ % RACE_JOBS] = TASK(t, i)->job.id;
            if (jr_ai_finish(&ctx, TASK(t, i), &res, &what) != APR_SUCCESS ||
                strcmp(what, "done")) {
                r->failed = 1;
            }
        }
        apr_pool_destroy(it);
        apr_sleep(500);
    }
    apr_pool_destroy(p);
    return NULL;
}

START_TEST(two_connections_race)
{
    sqlite3 *conn = apr_dbd_native_handle(fx_db->driver, fx_db->handle);
    racer_t a, b;
    pthread_t ta, tb;
    pthread_barrier_t start;
    char seen[RACE_JOBS + 1];
    int i;
    new_entry("seed");
    fx_sql("DELETE FROM ai_jobs");
    fx_sql("WITH RECURSIVE k(v) AS (SELECT 1 UNION ALL SELECT v + 1 FROM k WHERE v < 200)"
           " INSERT INTO entries (student_name, group_id, branch_id, description, created_at,"
           " updated_at) SELECT 'S', group_id, branch_id, 'text ' || v, created_at, created_at"
           " FROM k, (SELECT group_id, branch_id, created_at FROM entries LIMIT 1)");
    fx_sql("INSERT INTO ai_jobs (entity_type, entity_id, branch_id, status, attempts, created_at,"
           " updated_at) SELECT 'entry', id, branch_id, 'pending', 0, created_at, created_at FROM"
           " entries WHERE description LIKE 'text %'");
    ck_assert_int_eq(atoi(fx_sql("SELECT COUNT(*) FROM ai_jobs")), RACE_JOBS);
    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    a.path = b.path = sqlite3_db_filename(conn, "main");
    a.name = "a";
    b.name = "b";
    ck_assert_int_eq(pthread_barrier_init(&start, NULL, 2), 0);
    a.start = b.start = &start;
    ck_assert_int_eq(pthread_create(&ta, NULL, race, &a), 0);
    ck_assert_int_eq(pthread_create(&tb, NULL, race, &b), 0);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    pthread_barrier_destroy(&start);
    ck_assert_int_eq(a.failed + b.failed, 0);
    ck_assert_int_eq(a.n + b.n, RACE_JOBS); /* every job once, none twice */
    ck_assert_int_gt(a.n, 0);
    ck_assert_int_gt(b.n, 0);
    memset(seen, 0, sizeof(seen));
    for (i = 0; i < a.n + b.n; ++i) {
        long long id = i < a.n ? a.claimed[i] : b.claimed[i - a.n];
        long long k = id - atoll(fx_sql("SELECT MIN(id) FROM ai_jobs"));
        ck_assert(k >= 0 && k < RACE_JOBS);
        ck_assert_int_eq(seen[k]++, 0);
    }
    ck_assert_int_eq(atoi(fx_sql("SELECT COUNT(*) FROM ai_jobs WHERE status = 'done' AND"
                                 " attempts = 1")),
                     RACE_JOBS);
    ck_assert_int_eq(atoi(fx_sql("SELECT COUNT(*) FROM entries WHERE description = 'AI'")),
                     RACE_JOBS);
}
END_TEST

/* Settings are asked for by id: every id has its own name and back, and every default passes
 * its setting's own checks (a PUT of the whole GET is accepted and changes nothing). */
START_TEST(settings_by_id)
{
    json_t *all;
    int id, other;
    for (id = 0; id < JR_SETTING__COUNT; ++id) {
        ck_assert_int_eq(jr_setting_id(jr_setting_name(id)), id);
        for (other = id + 1; other < JR_SETTING__COUNT; ++other) {
            ck_assert_msg(strcmp(jr_setting_name(id), jr_setting_name(other)), "%s twice",
                          jr_setting_name(id));
        }
    }
    ck_assert_int_eq(jr_setting_id("no_such_setting"), -1);
    ck_assert_str_eq(jr_setting_name(JR_SETTING_NOTIFY_LESSON_AI_FORMATTED),
                     "notify_lesson_ai_formatted");
    all = op_json(jr_op_settings_get, NULL, 200);
    ck_assert_int_eq(json_object_size(all), JR_SETTING__COUNT);
    ck_assert_int_eq(json_integer_value(json_object_get(all, "trash_retention_days")), 30);
    op_json(jr_op_settings_put, jr_json_dump(fx_pool, all, NULL), 200);
    ck_assert_str_eq(jr_setting(&fx_ctx, JR_SETTING_TRASH_RETENTION_DAYS), "30");
    op_json(jr_op_settings_put, "{\"trash_retention_days\": 7}", 200);
    ck_assert_str_eq(jr_setting(&fx_ctx, JR_SETTING_TRASH_RETENTION_DAYS), "7");
    ck_assert_int_eq(jr_setting_on(&fx_ctx, JR_SETTING_NOTIFY_ENABLED), 1);
}
END_TEST

/* What jr_queue_wake rests on: the marks of a transaction reach the function after its COMMIT,
 * once, together; a rollback drops them; outside a transaction they are handed at once. */
static unsigned after_marks;
static int after_calls, after_in_tx;

static void record_after_commit(jr_db_t *db, unsigned marks)
{
    after_marks |= marks;
    after_calls++;
    after_in_tx = db->in_tx;
}

START_TEST(after_commit_marks_follow_the_commit)
{
    after_marks = 0;
    after_calls = 0;
    ck_assert_int_eq(jr_db_begin(fx_db), APR_SUCCESS);
    jr_db_after_commit(fx_db, record_after_commit, 1);
    jr_db_after_commit(fx_db, record_after_commit, 2);
    ck_assert_int_eq(after_calls, 0);
    ck_assert_int_eq(jr_db_commit(fx_db), APR_SUCCESS);
    ck_assert_int_eq(after_calls, 1);
    ck_assert_uint_eq(after_marks, 3);
    ck_assert_int_eq(after_in_tx, 0);
    /* a rollback drops them; the next commit has none */
    ck_assert_int_eq(jr_db_begin(fx_db), APR_SUCCESS);
    jr_db_after_commit(fx_db, record_after_commit, 4);
    jr_db_rollback(fx_db);
    ck_assert_int_eq(jr_db_begin(fx_db), APR_SUCCESS);
    ck_assert_int_eq(jr_db_commit(fx_db), APR_SUCCESS);
    ck_assert_int_eq(after_calls, 1);
    /* outside a transaction the write has committed: at once */
    after_marks = 0;
    jr_db_after_commit(fx_db, record_after_commit, 8);
    ck_assert_int_eq(after_calls, 2);
    ck_assert_uint_eq(after_marks, 8);
}
END_TEST

Suite *suite_jobs(void)
{
    Suite *s = suite_create("jobs");
    TCase *tc = fx_tcase(s, "claims", setup, fx_teardown);
    tcase_add_test(tc, claim_marks_processing);
    tcase_add_test(tc, settle_only_by_the_holder);
    tcase_add_test(tc, expired_lease_returns_the_job);
    tcase_add_test(tc, a_job_that_kills_its_worker_fails);
    tcase_add_test(tc, retries_back_off_then_fail);
    tcase_add_test(tc, refused_key_fails_at_once);
    tcase_add_test(tc, stale_answer_queues_again);
    tcase_add_test(tc, release_gives_the_job_back);
    tcase_add_test(tc, empty_text_is_skipped_without_a_request);
    tcase_add_test(tc, report_rewrite_records_everything);
    tcase_add_test(tc, settings_by_id);
    tcase_add_test(tc, context_line);
    tcase_add_test(tc, dead_workers_jobs_come_back);
    tcase_add_test(tc, backoff);
    tcase_add_test(tc, requeue_resets_the_claim);
    tcase_add_test(tc, after_commit_marks_follow_the_commit);
    tcase_add_test(tc, entry_revert);
    tcase_add_test(tc, events_trim);
    tcase_add_test(tc, two_connections_race);
    return s;
}
