/* The road around an operation: the transaction of a writing route, the hooks that follow its
 * end, jr_tx_run, and the standard answers. */
#include <stdlib.h>
#include <string.h>

#include "jr_backup.h"
#include "jr_share.h"
#include "ops_fixture.h"
#include "jr_auth.h"
#include "jr_events.h"
#include "jr_settings.h"
#include "jr_util.h"

static int committed_hooks, rolled_back_hooks, in_tx_seen;

static void count_commit(jr_ctx_t *ctx, void *baton)
{
    (void)ctx;
    ck_assert_str_eq(baton, "after");
    ++committed_hooks;
}

static void count_rollback(jr_ctx_t *ctx, void *baton)
{
    (void)ctx;
    ck_assert_str_eq(baton, "undo");
    ++rolled_back_hooks;
}

/* Writes an audit row, registers both hooks, and answers the status the query asks for. */
static int op_write_then(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    int status = atoi(apr_table_get(ctx->query, "status"));
    int armed = ctx->db->tx_lazy && !ctx->db->in_tx;
    ck_assert_int_eq(jr_audit(ctx, "create", "thing", 1, NULL), APR_SUCCESS);
    /* A writing route's transaction is armed when the op starts and begun by its first write. */
    in_tx_seen = armed && ctx->db->in_tx;
    jr_after_commit(ctx, count_commit, (void *)"after");
    jr_on_rollback(ctx, count_rollback, (void *)"undo");
    return status < 400 ? jr_reply_ok(res, ctx->pool) : jr_err_conflict(ctx, res, "taken");
}

static jr_result_t road(unsigned flags, const char *status)
{
    jr_result_t res;
    committed_hooks = rolled_back_hooks = in_tx_seen = 0;
    apr_table_setn(fx_ctx.query, "status", status);
    jr_result_init(&res, fx_pool);
    ck_assert_int_eq(jr_road_op(&fx_ctx, op_write_then, flags, NULL, &res), res.status);
    ck_assert_int_eq(fx_db->in_tx, 0);
    return res;
}

START_TEST(write_route_commits_below_400)
{
    long long before = fx_audit_count();
    ck_assert_int_eq(road(JR_RF_WRITE, "200").status, 200);
    ck_assert_int_eq(in_tx_seen, 1);
    ck_assert_int_eq(fx_audit_count(), before + 1);
    ck_assert_int_eq(committed_hooks, 1);
    ck_assert_int_eq(rolled_back_hooks, 0);
}
END_TEST

START_TEST(write_route_rolls_back_an_error)
{
    long long before = fx_audit_count();
    EXPECT(road(JR_RF_WRITE, "409"), 409, "taken");
    ck_assert_int_eq(fx_audit_count(), before); /* the op's write is undone */
    ck_assert_int_eq(committed_hooks, 0);
    ck_assert_int_eq(rolled_back_hooks, 1);
}
END_TEST

START_TEST(read_route_has_no_transaction)
{
    long long before = fx_audit_count();
    ck_assert_int_eq(road(0, "200").status, 200);
    ck_assert_int_eq(in_tx_seen, 0);
    ck_assert_int_eq(fx_audit_count(), before + 1); /* a statement on its own commits */
    ck_assert_int_eq(committed_hooks, 1);
    road(0, "409");
    ck_assert_int_eq(committed_hooks, 0);
    ck_assert_int_eq(rolled_back_hooks, 1);
}
END_TEST

static apr_status_t audit_and(jr_ctx_t *ctx, void *baton)
{
    ck_assert_int_eq(ctx->db->in_tx, 1);
    ck_assert_int_eq(jr_audit(ctx, "ban", "ip", 2, NULL), APR_SUCCESS);
    return *(apr_status_t *)baton;
}

START_TEST(tx_run_commits_or_rolls_back)
{
    long long before = fx_audit_count();
    apr_status_t ok = APR_SUCCESS, bad = APR_EGENERAL;
    ck_assert_int_eq(jr_tx_run(&fx_ctx, audit_and, &bad), APR_EGENERAL);
    ck_assert_int_eq(fx_audit_count(), before);
    ck_assert_int_eq(jr_tx_run(&fx_ctx, audit_and, &ok), APR_SUCCESS);
    ck_assert_int_eq(fx_audit_count(), before + 1);
    ck_assert_int_eq(fx_db->in_tx, 0);
}
END_TEST

/* jr_tx_run inside a writing route: its own transaction commits, the road's stays armed and
 * is begun by the op's next write, which the op's error then rolls back. */
static int op_tx_run_then(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    apr_status_t ok = APR_SUCCESS;
    (void)in;
    ck_assert_int_eq(jr_tx_run(ctx, audit_and, &ok), APR_SUCCESS);
    ck_assert_int_eq(ctx->db->tx_lazy, 1);
    ck_assert_int_eq(ctx->db->in_tx, 0);
    ck_assert_int_eq(jr_audit(ctx, "create", "thing", 1, NULL), APR_SUCCESS);
    ck_assert_int_eq(ctx->db->in_tx, 1);
    return jr_err_conflict(ctx, res, "taken");
}

START_TEST(tx_run_keeps_the_road_armed)
{
    long long before = fx_audit_count();
    jr_result_t res;
    jr_result_init(&res, fx_pool);
    ck_assert_int_eq(jr_road_op(&fx_ctx, op_tx_run_then, JR_RF_WRITE, NULL, &res), 409);
    ck_assert_int_eq(fx_audit_count(), before + 1); /* jr_tx_run's row only */
    ck_assert_int_eq(fx_db->in_tx, 0);
    ck_assert_int_eq(fx_db->tx_lazy, 0);
}
END_TEST

START_TEST(standard_answers)
{
    jr_result_t res;
    jr_result_init(&res, fx_pool);
    ck_assert_int_eq(jr_err_db(&fx_ctx, &res), 503);
    ck_assert_str_eq(fx_error(&res), "database unavailable");
    ck_assert_int_eq(jr_err_busy(&fx_ctx, &res), 503);
    ck_assert_str_eq(fx_error(&res), "database busy, try again");
    ck_assert_int_eq(jr_err_not_found(&fx_ctx, &res, "entry"), 404);
    ck_assert_str_eq(fx_error(&res), "entry not found");
    ck_assert_int_eq(jr_err_invalid(&fx_ctx, &res, "name", "name must be %d to %d", 1, 2), 400);
    ck_assert_str_eq(fx_error(&res), "name must be 1 to 2");
    ck_assert_int_eq(jr_err_internal(&fx_ctx, &res), 500);
    ck_assert_str_eq(fx_error(&res), "internal error");
    /* A failed write that was no unique violation is a 500, whatever message is offered. */
    ck_assert_int_eq(jr_err_write(&fx_ctx, &res, "taken"), 500);
}
END_TEST

/* A write that refers to a record deleted since the op checked it (the checks run before the
 * transaction begins) answers 409, not 500. */
START_TEST(a_write_to_a_record_removed_meanwhile_is_a_conflict)
{
    jr_result_t res;
    jr_rows_t *rows;
    long long b = fx_new_branch("Gone branch"), g = fx_new_group("Gone soon", b);
    const char *now = jr_now_iso(fx_pool);
    jr_result_init(&res, fx_pool);
    /* The group as the op saw it, and a module that has gone since. */
    ck_assert_int_ne(jr_db_select(fx_db, fx_pool, JR_Q_ENTRY_INSERT, &rows,
                                  JR_ARGS("Late", jr_i64(fx_pool, g), "late",
                                          jr_i64(fx_pool, g), jr_i64(fx_pool, b), "", "999999",
                                          NULL, now, now, NULL, NULL)),
                     APR_SUCCESS);
    ck_assert_int_eq(jr_db_error(fx_db), JR_DB_E_FOREIGN_KEY);
    ck_assert_int_eq(jr_err_write(&fx_ctx, &res, "taken"), 409);
    ck_assert_str_eq(fx_error(&res),
                     "a record this change depends on was added or removed meanwhile; read it "
                     "again and retry");
}
END_TEST

/* Routes that change and still run outside the road's transaction: login and logout write one
 * statement at a time, a share link's password writes its ban in a transaction of its own
 * (as login's), and a backup or a restore runs its own transactions (jr_backup.h). */
static int own_transactions(const jr_route_t *rt)
{
    static jr_op_fn *const ops[] = {jr_op_login,           jr_op_logout,
                                    jr_op_share_unlock,    jr_op_share_page_unlock,
                                    jr_op_backups_create,  jr_op_backups_restore,
                                    jr_op_backups_upload_restore};
    size_t i;
    for (i = 0; i < sizeof(ops) / sizeof(ops[0]); ++i) {
        if (rt->op == ops[i]) {
            return 1;
        }
    }
    return 0;
}

/* The route data the road acts on: a key route names its scope, a JSON route its field table
 * (login, settings and a share link's password check theirs in the operation), a route that
 * changes runs in the road's transaction (own_transactions names the exceptions). A route
 * whose JSON body is optional has its field table too. */
START_TEST(route_rows_carry_their_data)
{
    const jr_route_t *tables[] = {jr_routes_admin, jr_routes_v1}, *rt;
    size_t i;
    for (i = 0; i < 2; ++i) {
        for (rt = tables[i]; rt->method; ++rt) {
            int changes = strcmp(rt->method, "GET") != 0;
            int own_body = rt->op == jr_op_login || rt->op == jr_op_settings_put ||
                           rt->op == jr_op_share_unlock;
            int json = rt->body == JR_BODY_JSON || rt->body == JR_BODY_OPTIONAL;
            ck_assert_msg(rt->auth != JR_AUTH_KEY ||
                              rt->scope == (changes ? JR_SCOPE_WRITE : JR_SCOPE_READ),
                          "%s %s: scope", rt->method, rt->pattern);
            ck_assert_msg(rt->auth == JR_AUTH_KEY || rt->scope == JR_SCOPE_NONE, "%s %s: scope",
                          rt->method, rt->pattern);
            ck_assert_msg((json && !own_body) == (rt->fields != NULL),
                          "%s %s: field table", rt->method, rt->pattern);
            ck_assert_msg(changes == ((rt->flags & JR_RF_WRITE) != 0) || own_transactions(rt),
                          "%s %s: transaction", rt->method, rt->pattern);
        }
        /* The "no route" row: on /api/v1 a key and the method's scope first. */
        ck_assert_ptr_eq(rt->op, jr_op_no_route);
        ck_assert_ptr_eq(jr_route_none(tables[i]), rt);
    }
    ck_assert_int_eq(jr_route_none(jr_routes_v1)->auth, JR_AUTH_KEY);
    ck_assert_int_eq(jr_route_none(jr_routes_v1)->scope, JR_SCOPE_METHOD);
    ck_assert(jr_route_none(jr_routes_admin)->flags & JR_RF_NO_DB);
}
END_TEST

START_TEST(no_route_answers)
{
    jr_result_t res;
    jr_result_init(&res, fx_pool);
    fx_ctx.method = "PATCH";
    fx_ctx.allow = NULL;
    EXPECT((jr_op_no_route(&fx_ctx, NULL, &res), res), 404, "not found");
    jr_result_init(&res, fx_pool);
    fx_ctx.allow = "GET, HEAD";
    ck_assert_int_eq(jr_op_no_route(&fx_ctx, NULL, &res), 405);
    ck_assert_str_eq(fx_error(&res), "method PATCH is not allowed here (allowed: GET, HEAD)");
    ck_assert_str_eq(apr_table_get(res.headers, "Allow"), "GET, HEAD");
}
END_TEST

/* ---- the events of a transaction ---------------------------------------------------------- */

static long long events_count(void)
{
    return atoll(fx_sql("SELECT COUNT(*) FROM events"));
}

static apr_status_t raise_event(const char *type)
{
    return jr_event(&fx_ctx, type, 0, "thing", 1, "{}");
}

/* The rows wait for the COMMIT (even this connection sees none before it), then are written
 * in the order they were raised, more than one statement's worth among them. */
START_TEST(a_transactions_events_are_written_at_its_commit_in_order)
{
    long long before = events_count();
    static const char *types[] = {"e1", "e2", "e3", "e4", "e5", "e6"};
    int i;
    ck_assert_int_eq(jr_db_begin(fx_db), APR_SUCCESS);
    for (i = 0; i < 6; ++i) {
        ck_assert_int_eq(raise_event(types[i]), APR_SUCCESS);
    }
    ck_assert_int_eq(events_count(), before);
    ck_assert_int_eq(jr_db_commit(fx_db), APR_SUCCESS);
    ck_assert_int_eq(events_count(), before + 6);
    ck_assert_str_eq(fx_sql(jr_psprintf(fx_pool, "SELECT group_concat(type, ' ') FROM (SELECT"
                                                 " type FROM events ORDER BY id DESC LIMIT 6"
                                                 " ) AS t")),
                     "e6 e5 e4 e3 e2 e1");
}
END_TEST

/* A rollback drops what was gathered: the next transaction writes only its own; outside a
 * transaction an event is written at once. */
START_TEST(a_rolled_back_transaction_leaves_no_event)
{
    long long before = events_count();
    ck_assert_int_eq(jr_db_begin(fx_db), APR_SUCCESS);
    ck_assert_int_eq(raise_event("dropped"), APR_SUCCESS);
    jr_db_rollback(fx_db);
    ck_assert_int_eq(jr_db_begin(fx_db), APR_SUCCESS);
    ck_assert_int_eq(raise_event("kept"), APR_SUCCESS);
    ck_assert_int_eq(jr_db_commit(fx_db), APR_SUCCESS);
    ck_assert_int_eq(events_count(), before + 1);
    ck_assert_int_eq(atoll(fx_sql("SELECT COUNT(*) FROM events WHERE type = 'dropped'")), 0);
    ck_assert_int_eq(raise_event("alone"), APR_SUCCESS);
    ck_assert_int_eq(events_count(), before + 2);
}
END_TEST

/* An event that cannot be written fails the COMMIT, which undoes the transaction's other
 * writes: no answer claims a change whose events are missing. */
START_TEST(an_event_that_cannot_be_written_fails_the_commit)
{
    long long audits = fx_audit_count(), before = events_count();
    ck_assert_int_eq(jr_db_begin(fx_db), APR_SUCCESS);
    ck_assert_int_eq(jr_audit(&fx_ctx, "create", "thing", 1, NULL), APR_SUCCESS);
    ck_assert_int_eq(jr_event(&fx_ctx, "broken", 0, "thing", 1, NULL), APR_SUCCESS);
    ck_assert_int_ne(jr_db_commit(fx_db), APR_SUCCESS);
    ck_assert_int_eq(fx_db->in_tx, 0);
    ck_assert_int_eq(fx_audit_count(), audits);
    ck_assert_int_eq(events_count(), before);
}
END_TEST

/* On a writing route an event before any other write begins the transaction itself (nothing
 * waits in an armed one), and the route's error undoes it like any write. */
static int op_event_then(jr_ctx_t *ctx, const json_t *in, jr_result_t *res)
{
    (void)in;
    ck_assert_int_eq(raise_event("first"), APR_SUCCESS);
    ck_assert_int_eq(ctx->db->in_tx, 1);
    ck_assert_int_eq(raise_event("second"), APR_SUCCESS);
    return atoi(apr_table_get(ctx->query, "status")) < 400
               ? jr_reply_ok(res, ctx->pool)
               : jr_err_conflict(ctx, res, "taken");
}

START_TEST(a_routes_events_commit_and_roll_back_with_it)
{
    long long before = events_count();
    jr_result_t res;
    jr_result_init(&res, fx_pool);
    apr_table_setn(fx_ctx.query, "status", "409");
    ck_assert_int_eq(jr_road_op(&fx_ctx, op_event_then, JR_RF_WRITE, NULL, &res), 409);
    ck_assert_int_eq(events_count(), before);
    apr_table_setn(fx_ctx.query, "status", "200");
    ck_assert_int_eq(jr_road_op(&fx_ctx, op_event_then, JR_RF_WRITE, NULL, &res), 200);
    ck_assert_int_eq(events_count(), before + 2);
}
END_TEST

Suite *suite_road(void)
{
    Suite *s = suite_create("road");
    TCase *tc = fx_tcase(s, "road", fx_setup, fx_teardown);
    tcase_add_test(tc, write_route_commits_below_400);
    tcase_add_test(tc, write_route_rolls_back_an_error);
    tcase_add_test(tc, read_route_has_no_transaction);
    tcase_add_test(tc, tx_run_commits_or_rolls_back);
    tcase_add_test(tc, tx_run_keeps_the_road_armed);
    tcase_add_test(tc, standard_answers);
    tcase_add_test(tc, a_write_to_a_record_removed_meanwhile_is_a_conflict);
    tcase_add_test(tc, route_rows_carry_their_data);
    tcase_add_test(tc, no_route_answers);
    tcase_add_test(tc, a_transactions_events_are_written_at_its_commit_in_order);
    tcase_add_test(tc, a_rolled_back_transaction_leaves_no_event);
    tcase_add_test(tc, an_event_that_cannot_be_written_fails_the_commit);
    tcase_add_test(tc, a_routes_events_commit_and_roll_back_with_it);
    return s;
}
