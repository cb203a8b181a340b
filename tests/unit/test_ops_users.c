/* The operations of users, tutors' branch scope, sessions, health: on a migrated SQLite file. */
#include <stdlib.h>
#include <string.h>

#include <apr_strings.h>

#include "jr_auth.h"
#include "jr_bans.h"
#include "jr_counters.h"
#include "jr_crypt.h"
#include "jr_json.h"
#include "jr_keys.h"
#include "jr_migrate.h"
#include "jr_util.h"
#include "ops_fixture.h"
#include "jr_branches.h"
#include "jr_groups.h"
#include "jr_health.h"
#include "jr_keys_admin.h"
#include "jr_users.h"
#include "jr_v1.h"

/* ---- users --------------------------------------------------------------------------- */

/* users_create with a body of the given members (a JSON text without braces). */
static jr_result_t create_user(const char *members)
{
    return fx_call(jr_op_users_create, apr_pstrcat(fx_pool, "{", members, "}", NULL));
}

#define PW "\"password\": \"longenough\""

START_TEST(users_create_refused)
{
    long long before = fx_audit_count();
    char *long_pw = apr_pstrdup(fx_pool, "\"username\": \"u\", \"role\": \"tutor\", "
                                         "\"password\": \"");
    int i;
    EXPECT(create_user("\"username\": \"u\", \"password\": \"short\", \"role\": \"tutor\""), 400,
           "password");
    EXPECT(create_user("\"username\": \"u\", " PW ", \"role\": \"boss\""), 400, "role");
    EXPECT(create_user("\"username\": \"u\", " PW), 400, "role");
    EXPECT(create_user(PW ", \"role\": \"tutor\""), 400, "username");
    EXPECT(create_user("\"username\": \"a b\", " PW ", \"role\": \"tutor\""), 400, "username");
    EXPECT(create_user("\"username\": \"u\", " PW ", \"role\": \"tutor\", \"branch_ids\": [999]"),
           400, "branch_ids");
    EXPECT(create_user("\"username\": \"ROOT\", " PW ", \"role\": \"tutor\""), 409, "root");
    for (i = 0; i < 40; ++i) { /* 40 characters but 80 bytes: bcrypt would cut it at 72 */
        long_pw = apr_pstrcat(fx_pool, long_pw, "\xC3\xA9", NULL);
    }
    EXPECT(create_user(apr_pstrcat(fx_pool, long_pw, "\"", NULL)), 400, "password");
    ck_assert_int_eq(fx_audit_count(), before);
    ck_assert_str_eq(fx_sql("SELECT COUNT(*) FROM users"), "1");
}
END_TEST

START_TEST(users_create_normalises)
{
    long long a = fx_new_branch("A"), b = fx_new_branch("B"), uid;
    jr_result_t res = fx_call(jr_op_users_create,
                           jr_psprintf(fx_pool, "{\"username\": \" Alice.S \", \"password\": "
                                             "\"wonderland\", \"role\": \"tutor\", "
                                             "\"branch_ids\": [%lld, %lld, %lld]}", b, a, b));
    const char *hash;
    ck_assert_int_eq(res.status, 201);
    uid = fx_id(&res);
    ck_assert_str_eq(jr_json_str(fx_json(res), "username", ""), "alice.s");
    ck_assert_str_eq(jr_json_str(fx_json(res), "role", ""), "tutor");
    ck_assert(json_is_true(json_object_get(fx_json(res), "active")));
    ck_assert_str_eq(jr_json_dump(fx_pool, json_object_get(fx_json(res), "branch_ids"), NULL),
                     jr_psprintf(fx_pool, "[%lld,%lld]", a, b));
    ck_assert_ptr_null(json_object_get(fx_json(res), "password_hash"));
    ck_assert_ptr_null(json_object_get(fx_json(res), "password"));
    hash = fx_sql(jr_psprintf(fx_pool, "SELECT password_hash FROM users WHERE id = %lld", uid));
    ck_assert_msg(hash && !strncmp(hash, "$2y$04$", 7), "hash %s", hash ? hash : "(null)");
    ck_assert_int_eq(jr_password_check("wonderland", hash), 1);
    /* The audit row names the fields, never the password itself. */
    ck_assert_str_eq(fx_audit_last("action || '/' || entity_type"), "create/user");
    ck_assert_ptr_nonnull(strstr(fx_audit_last("changes"), "\"password\""));
    ck_assert_ptr_null(strstr(fx_audit_last("changes"), "wonderland"));
    EXPECT(create_user("\"username\": \"ALICE.S\", " PW ", \"role\": \"admin\""), 409, "alice.s");
}
END_TEST

START_TEST(users_last_admin_protected)
{
    jr_result_t res;
    fx_set_id(&fx_ctx, fx_admin_id);
    EXPECT(fx_call(jr_op_users_update, "{\"role\": \"tutor\"}"), 409, "last active admin");
    EXPECT(fx_call(jr_op_users_update, "{\"active\": false}"), 409, "last active admin");
    EXPECT(fx_call(jr_op_users_delete, NULL), 409, "own account");
    res = create_user("\"username\": \"second\", " PW ", \"role\": \"admin\"");
    ck_assert_int_eq(res.status, 201);
    res = fx_call(jr_op_users_update, "{\"active\": false}");
    ck_assert_int_eq(res.status, 200);
    ck_assert(json_is_false(json_object_get(fx_json(res), "active")));
    ck_assert_str_eq(fx_audit_last("action || '/' || changes"), "update/[\"active\"]");
}
END_TEST

/* ---- tutors -------------------------------------------------------------------------- */

START_TEST(tutor_sees_only_own_branches)
{
    long long a = fx_new_branch("A"), b = fx_new_branch("B"), ga = fx_new_group("GA", a),
              gb = fx_new_group("GB", b),
              tid = fx_new_tutor("tina", jr_psprintf(fx_pool, "[%lld]", a));
    jr_ctx_t t;
    jr_result_t res;
    fx_tutor_ctx(&t, tid);
    ck_assert_str_eq(t.who.branch_json, jr_psprintf(fx_pool, "[%lld]", a));

    res = fx_call_as(&t, jr_op_groups_list, NULL);
    ck_assert_int_eq(res.status, 200);
    ck_assert_uint_eq(json_array_size(fx_json(res)), 1);
    ck_assert_int_eq(jr_json_int(json_array_get(fx_json(res), 0), "id", -1), ga);
    ck_assert_str_eq(apr_table_get(res.headers, "X-Total-Count"), "1");
    apr_table_setn(t.query, "branch_id", jr_i64(fx_pool, b)); /* asking for another branch */
    res = fx_call_as(&t, jr_op_groups_list, NULL);
    ck_assert_uint_eq(json_array_size(fx_json(res)), 0);
    ck_assert_str_eq(apr_table_get(res.headers, "X-Total-Count"), "0");

    fx_set_id(&t, ga);
    ck_assert_int_eq(fx_call_as(&t, jr_op_groups_get, NULL).status, 200);
    fx_set_id(&t, gb);
    EXPECT(fx_call_as(&t, jr_op_groups_get, NULL), 404, "not found");

    res = fx_call_as(&t, jr_op_branches_list, NULL);
    ck_assert_uint_eq(json_array_size(fx_json(res)), 1);
    ck_assert_int_eq(jr_json_int(json_array_get(fx_json(res), 0), "id", -1), a);
    fx_set_id(&t, b);
    EXPECT(fx_call_as(&t, jr_op_branches_get, NULL), 404, "not found");

    /* The admin still sees both. */
    res = fx_call(jr_op_groups_list, NULL);
    ck_assert_uint_eq(json_array_size(fx_json(res)), 2);
}
END_TEST

START_TEST(tutor_without_branches_sees_nothing)
{
    long long a = fx_new_branch("A"), tid = fx_new_tutor("lonely", "[]");
    jr_ctx_t t;
    jr_result_t res;
    fx_new_group("GA", a);
    fx_tutor_ctx(&t, tid);
    ck_assert_str_eq(t.who.branch_json, "[]");
    res = fx_call_as(&t, jr_op_groups_list, NULL);
    ck_assert_uint_eq(json_array_size(fx_json(res)), 0);
    res = fx_call_as(&t, jr_op_branches_list, NULL);
    ck_assert_uint_eq(json_array_size(fx_json(res)), 0);
}
END_TEST

static const char *group_body(const char *name, long long branch, long long tutor)
{
    return jr_psprintf(fx_pool, "{\"name\": \"%s\", \"branch_id\": %lld, \"tutor_id\": %lld}",
                       name, branch, tutor);
}

START_TEST(group_tutor_must_belong_to_branch)
{
    long long a = fx_new_branch("A"), b = fx_new_branch("B"),
              tid = fx_new_tutor("tom", jr_psprintf(fx_pool, "[%lld]", a)), g;
    jr_result_t res = fx_call(jr_op_groups_create, group_body("G", a, tid));
    ck_assert_int_eq(res.status, 201);
    ck_assert_int_eq(jr_json_int(fx_json(res), "tutor_id", -1), tid);
    g = fx_id(&res);
    EXPECT(fx_call(jr_op_groups_create, group_body("H", b, tid)), 400, "tutor_id");
    /* An admin may tutor any branch; a missing user may not. */
    ck_assert_int_eq(fx_call(jr_op_groups_create, group_body("H", b, fx_admin_id))
                         .status,
                     201);
    EXPECT(fx_call(jr_op_groups_create, group_body("I", b, tid + 100)), 400,
           "tutor_id");

    /* Updates: null clears the tutor, a tutor of another branch is refused. */
    fx_set_id(&fx_ctx, g);
    res = fx_call(jr_op_groups_update, "{\"tutor_id\": null}");
    ck_assert_int_eq(res.status, 200);
    ck_assert(json_is_null(json_object_get(fx_json(res), "tutor_id")));
    res = fx_call(jr_op_groups_update, jr_psprintf(fx_pool, "{\"tutor_id\": %lld}", tid));
    ck_assert_int_eq(res.status, 200);
    ck_assert_int_eq(jr_json_int(fx_json(res), "tutor_id", -1), tid);
    EXPECT(fx_call(jr_op_groups_update,
                   jr_psprintf(fx_pool, "{\"branch_id\": %lld, \"tutor_id\": %lld}", b, tid)),
           400, "tutor_id");
}
END_TEST

/* The tutor (named or kept) must belong to the branch the group ends up in: moving a group
 * must not leave it with a tutor who cannot even see it. */
START_TEST(group_move_rechecks_tutor)
{
    long long a = fx_new_branch("A"), b = fx_new_branch("B"),
              tid = fx_new_tutor("tom", jr_psprintf(fx_pool, "[%lld]", a)), g;
    jr_result_t res = fx_call(jr_op_groups_create,
                              jr_psprintf(fx_pool, "{\"name\": \"G\", \"branch_id\": %lld, "
                                                   "\"tutor_id\": %lld}", a, tid));
    ck_assert_int_eq(res.status, 201);
    g = fx_id(&res);
    fx_set_id(&fx_ctx, g);
    res = fx_call(jr_op_groups_update, jr_psprintf(fx_pool, "{\"branch_id\": %lld}", b));
    ck_assert_msg(res.status == 400 && strstr(fx_error(&res), "tutor_id"),
                  "moved to branch %lld with tutor %lld who is not assigned there: status %d %s",
                  b, tid, res.status, fx_error(&res));
    ck_assert_str_eq(fx_sql(jr_psprintf(fx_pool,
                                        "SELECT branch_id FROM study_groups WHERE id = %lld", g)),
                     jr_i64(fx_pool, a));
}
END_TEST

/* docs/admin-api.md (PUT /api/groups/:id): "The tutor checks apply only when tutor_id is
 * present in the body." A rename must not fail because the kept tutor has since been
 * deactivated or taken off the branch. */
START_TEST(group_rename_keeps_tutor_unchecked)
{
    long long a = fx_new_branch("A"), t1 = fx_new_tutor("tom", jr_psprintf(fx_pool, "[%lld]", a)),
              t2 = fx_new_tutor("tim", jr_psprintf(fx_pool, "[%lld]", a)), g1, g2;
    jr_result_t res;
    res = fx_call(jr_op_groups_create, group_body("G1", a, t1));
    g1 = fx_id(&res);
    res = fx_call(jr_op_groups_create, group_body("G2", a, t2));
    g2 = fx_id(&res);
    ck_assert(g1 > 0 && g2 > 0);
    fx_set_id(&fx_ctx, t1);
    ck_assert_int_eq(fx_call(jr_op_users_update, "{\"active\": false}").status, 200);
    fx_set_id(&fx_ctx, t2);
    ck_assert_int_eq(fx_call(jr_op_users_update, "{\"branch_ids\": []}").status, 200);

    fx_set_id(&fx_ctx, g1);
    res = fx_call(jr_op_groups_update, "{\"name\": \"G1 renamed\"}");
    ck_assert_msg(res.status == 200, "rename with an inactive tutor: %d %s", res.status,
                  fx_error(&res));
    fx_set_id(&fx_ctx, g2);
    res = fx_call(jr_op_groups_update, "{\"name\": \"G2 renamed\"}");
    ck_assert_msg(res.status == 200, "rename with a tutor off the branch: %d %s", res.status,
                  fx_error(&res));
}
END_TEST

/* ---- sessions ------------------------------------------------------------------------ */

static jr_result_t login(jr_ctx_t *c, const char *user, const char *password)
{
    return fx_call_as(c, jr_op_login,
                      jr_psprintf(fx_pool, "{\"username\": \"%s\", \"password\": \"%s\"}",
                                  user, password));
}

/* Authenticates a token on a fresh context, as a request would. */
static int session_ok(const char *token, jr_ctx_t *out)
{
    jr_result_t res;
    fx_request_ctx(out, JR_IF_ADMIN, "192.0.2.1");
    jr_result_init(&res, fx_pool);
    if (jr_auth_session(out, token, &res)) {
        return 1;
    }
    ck_assert_int_eq(res.status, 401);
    return 0;
}

START_TEST(login_session_logout)
{
    jr_ctx_t anon = fx_ctx, s;
    jr_result_t res;
    const char *token;
    apr_time_t exp;
    memset(&anon.who, 0, sizeof(anon.who));

    res = login(&anon, "  ROOT ", "rootpass1");
    ck_assert_int_eq(res.status, 200);
    token = jr_json_str(fx_json(res), "token", "");
    ck_assert_uint_eq(strlen(token), 64);
    ck_assert_int_eq(jr_parse_iso_time(jr_json_str(fx_json(res), "expires_at", ""), &exp), 0);
    ck_assert(exp > apr_time_now() + apr_time_from_sec(3500));
    ck_assert_str_eq(jr_json_str(json_object_get(fx_json(res), "user"), "username", ""), "root");
    /* Only the token's digest is stored. */
    ck_assert_str_eq(fx_sql("SELECT token_hash FROM sessions"),
                     jr_sha256_hex(fx_pool, token, strlen(token)));

    ck_assert(session_ok(token, &s));
    ck_assert_int_eq(s.who.user_id, fx_admin_id);
    ck_assert_int_eq(s.who.role, JR_ROLE_ADMIN);
    ck_assert_ptr_null(s.who.branch_json);
    res = fx_call_as(&s, jr_op_me, NULL);
    ck_assert_int_eq(res.status, 200);
    ck_assert_int_eq(jr_json_int(json_object_get(fx_json(res), "user"), "id", -1), fx_admin_id);

    ck_assert(!session_ok("", &s));
    ck_assert(!session_ok("abc", &s));
    ck_assert(!session_ok(jr_new_token(fx_pool), &s));

    ck_assert(session_ok(token, &s));
    ck_assert_int_eq(fx_call_as(&s, jr_op_logout, NULL).status, 200);
    ck_assert(!session_ok(token, &s));
}
END_TEST

START_TEST(login_refused)
{
    jr_ctx_t anon = fx_ctx;
    memset(&anon.who, 0, sizeof(anon.who));
    EXPECT(login(&anon, "root", "wrongpass"), 401, "invalid username or password");
    EXPECT(login(&anon, "nobody", "rootpass1"), 401, "invalid username or password");
    EXPECT(fx_call_as(&anon, jr_op_login, "{\"username\": \"root\"}"), 400, "password");
    ck_assert_str_eq(fx_sql("SELECT COUNT(*) FROM sessions"), "0");
}
END_TEST

START_TEST(session_expiry_and_user_changes)
{
    jr_config_t short_cfg = *fx_ctx.cfg;
    jr_ctx_t anon = fx_ctx, s;
    long long a = fx_new_branch("A"), tid = fx_new_tutor("tina", jr_psprintf(fx_pool, "[%lld]", a));
    const char *t1, *t2;
    memset(&anon.who, 0, sizeof(anon.who));

    short_cfg.session_ttl = -60; /* already expired */
    anon.cfg = &short_cfg;
    t1 = jr_json_str(fx_json(login(&anon, "tina", "tutorpass")), "token", "");
    ck_assert(!session_ok(t1, &s));
    anon.cfg = fx_ctx.cfg;

    t1 = jr_json_str(fx_json(login(&anon, "tina", "tutorpass")), "token", "");
    ck_assert(session_ok(t1, &s));
    ck_assert_int_eq(s.who.role, JR_ROLE_TUTOR);
    ck_assert_str_eq(s.who.branch_json, jr_psprintf(fx_pool, "[%lld]", a));

    /* A new password ends the sessions; the new one works, the old one no longer. */
    fx_set_id(&fx_ctx, tid);
    ck_assert_int_eq(fx_call(jr_op_users_update, "{\"password\": \"newpassword\"}").status, 200);
    ck_assert(!session_ok(t1, &s));
    EXPECT(login(&anon, "tina", "tutorpass"), 401, "invalid");
    t2 = jr_json_str(fx_json(login(&anon, "tina", "newpassword")), "token", "");
    ck_assert(session_ok(t2, &s));

    /* Deactivation ends them too and refuses the right password. */
    ck_assert_int_eq(fx_call(jr_op_users_update, "{\"active\": false}").status, 200);
    ck_assert(!session_ok(t2, &s));
    EXPECT(login(&anon, "tina", "newpassword"), 401, "invalid");
}
END_TEST

START_TEST(login_honeypot_bans_ip)
{
    jr_ctx_t anon = fx_ctx, other;
    long long before = fx_audit_count();
    memset(&anon.who, 0, sizeof(anon.who));
    anon.client_ip = "198.51.100.7";
    EXPECT(fx_call_as(&anon, jr_op_login,
                      "{\"username\": \"root\", \"password\": \"rootpass1\", "
                      "\"website\": \"http://spam.example\"}"),
           403, "banned");
    ck_assert_str_eq(fx_sql("SELECT reason FROM ip_bans WHERE ip = '198.51.100.7'"), "honeypot");
    ck_assert_int_eq(fx_audit_count(), before + 1);
    ck_assert_str_eq(fx_audit_last("action || '/' || entity_id"), "ban/198.51.100.7");
    EXPECT(login(&anon, "root", "rootpass1"), 403, "banned"); /* even the right password */
    other = anon;
    other.client_ip = "198.51.100.8";
    ck_assert_int_eq(login(&other, "root", "rootpass1").status, 200);
    ck_assert_str_eq(fx_sql("SELECT COUNT(*) FROM sessions"), "1");
}
END_TEST

/* The honeypot is looked at before anything else in the body: a robot's body need not be a
 * valid login to get its address banned. Absent, null or "" is a person's. */
START_TEST(login_honeypot_first)
{
    static const char *const robots[] = {
        "{\"website\": \"x\"}",
        "{\"username\": 5, \"website\": \"http://spam.example\"}",
        "{\"username\": \"root\", \"password\": \"rootpass1\", \"website\": \"x\", \"bogus\": 1}",
        "{\"username\": \"\", \"password\": [], \"website\": \" \"}",
        "{\"website\": 1}",
        "{\"website\": true, \"password\": \"x\"}",
    };
    static const char *const people[] = {
        "{\"website\": \"\"}", "{\"website\": null, \"password\": \"x\"}", "{\"bogus\": 1}"};
    jr_ctx_t anon = fx_ctx;
    size_t i;
    memset(&anon.who, 0, sizeof(anon.who));
    for (i = 0; i < sizeof(robots) / sizeof(*robots); ++i) {
        const char *ip = jr_psprintf(fx_pool, "198.51.100.%zu", 20 + i);
        anon.client_ip = ip;
        EXPECT(fx_call_as(&anon, jr_op_login, robots[i]), 403, "banned");
        ck_assert_msg(fx_sql(apr_pstrcat(fx_pool, "SELECT reason FROM ip_bans WHERE ip = '", ip,
                                         "' AND reason = 'honeypot'", NULL)) != NULL,
                      "%s: no ban", robots[i]);
    }
    anon.client_ip = "198.51.100.40";
    for (i = 0; i < sizeof(people) / sizeof(*people); ++i) {
        ck_assert_int_eq(fx_call_as(&anon, jr_op_login, people[i]).status, 400);
    }
    ck_assert_str_eq(fx_sql("SELECT COUNT(*) FROM ip_bans"), "6");
}
END_TEST

START_TEST(ip_subjects)
{
    static const char *const cases[][2] = {
        {"192.0.2.1", "192.0.2.1"},
        {"2001:db8:1:2::5", "2001:db8:1:2::/64"},
        {"2001:DB8:1:2:ffff:ffff:ffff:ffff", "2001:db8:1:2::/64"},
        {"2001:db8::", "2001:db8::/64"},
        {"::1", "::/64"},
        {"::ffff:192.0.2.7", "192.0.2.7"},
        {"fe80::1%eth0", "fe80::1%eth0"},
        {"housekeeping", "housekeeping"},
    };
    size_t i;
    for (i = 0; i < sizeof(cases) / sizeof(*cases); ++i) {
        ck_assert_str_eq(jr_ip_subject(fx_pool, cases[i][0]), cases[i][1]);
    }
    ck_assert_ptr_null(jr_ip_subject(fx_pool, NULL));
}
END_TEST

/* An IPv6 client is banned by its /64; the ban is listed and lifted in that form, or by any
 * address inside it. */
START_TEST(ipv6_ban_covers_the_64)
{
    jr_ctx_t anon = fx_ctx, admin = fx_ctx;
    jr_result_t res;
    memset(&anon.who, 0, sizeof(anon.who));
    anon.client_ip = "2001:db8:7:8::1";
    EXPECT(fx_call_as(&anon, jr_op_login, "{\"website\": \"x\"}"), 403, "banned");
    ck_assert_str_eq(fx_sql("SELECT ip FROM ip_bans"), "2001:db8:7:8::/64");
    ck_assert_str_eq(fx_audit_last("entity_id"), "2001:db8:7:8::/64");
    anon.client_ip = "2001:db8:7:8:abcd::99";
    EXPECT(login(&anon, "root", "rootpass1"), 403, "banned");
    anon.client_ip = "2001:db8:7:9::1"; /* the next /64 */
    ck_assert_int_eq(login(&anon, "root", "rootpass1").status, 200);
    res = fx_call(jr_op_bans_list, NULL);
    ck_assert_str_eq(jr_json_str(json_array_get(fx_json(res), 0), "ip", ""), "2001:db8:7:8::/64");

    admin.params = apr_table_make(fx_pool, 2);
    apr_table_setn(admin.params, "ip", "2001:db8:7:9::1");
    EXPECT(fx_call_as(&admin, jr_op_bans_delete, NULL), 404, "2001:db8:7:9::1");
    apr_table_setn(admin.params, "ip", "2001:db8:7:8:ffff::");
    ck_assert_int_eq(fx_call_as(&admin, jr_op_bans_delete, NULL).status, 200);
    ck_assert_str_eq(fx_sql("SELECT COUNT(*) FROM ip_bans"), "0");
    anon.client_ip = "2001:db8:7:8::2";
    EXPECT(fx_call_as(&anon, jr_op_login, "{\"website\": \"x\"}"), 403, "banned");
    apr_table_setn(admin.params, "ip", "2001:DB8:7:8:0:0:0:0/64");
    ck_assert_int_eq(fx_call_as(&admin, jr_op_bans_delete, NULL).status, 200);
    ck_assert_str_eq(fx_sql("SELECT COUNT(*) FROM ip_bans"), "0");
}
END_TEST

/* The first throttle period is 60 s; a slow machine may have seen a few of them pass. */
static void expect_retry_after(const jr_result_t *res)
{
    const char *v = apr_table_get(res->headers, "Retry-After");
    ck_assert_ptr_nonnull(v);
    ck_assert_msg(atoi(v) >= 50 && atoi(v) <= 60, "Retry-After: %s", v);
    ck_assert_ptr_nonnull(strstr(fx_error(res), apr_pstrcat(fx_pool, "retry in ", v, " s", NULL)));
}

/* A guessing run spread over three addresses (none reaches the per-address ban) throttles
 * the account: the right password is refused with 429 and Retry-After. */
START_TEST(login_throttle_per_account)
{
    static const char *const ips[] = {"192.0.2.11", "192.0.2.12", "2001:db8:5::1"};
    jr_ctx_t anon = fx_ctx, known = fx_ctx;
    jr_result_t res;
    int i;
    memset(&anon.who, 0, sizeof(anon.who));
    known.who = anon.who;
    known.client_ip = "198.51.100.99";
    ck_assert_int_eq(login(&known, "root", "rootpass1").status, 200);
    for (i = 0; i < 10; ++i) {
        anon.client_ip = ips[i % 3];
        EXPECT(login(&anon, i % 2 ? "Root" : " root", "wrong"), 401, "invalid");
    }
    for (i = 0; i < 3; ++i) {
        anon.client_ip = ips[i];
        res = login(&anon, "root", "rootpass1");
        EXPECT(res, 429, "retry in");
        expect_retry_after(&res);
    }
    ck_assert_str_eq(fx_sql("SELECT COUNT(*) FROM ip_bans"), "0");
    ck_assert_str_eq(fx_sql("SELECT COUNT(*) FROM sessions"), "1");
    /* The address the owner logged in from before still gets through. */
    ck_assert_int_eq(login(&known, "root", "rootpass1").status, 200);
    anon.client_ip = ips[0];
    ck_assert_int_eq(login(&anon, "root", "rootpass1").status, 200);

    /* Names that do not exist are throttled the same way, with the same answers. */
    for (i = 0; i < 10; ++i) {
        anon.client_ip = ips[i % 3];
        EXPECT(login(&anon, "nobody", "wrong"), 401, "invalid");
    }
    res = login(&anon, "nobody", "wrong");
    EXPECT(res, 429, "too many failed logins for this account");
    expect_retry_after(&res);
}
END_TEST

/* Without the shared counters nothing would limit guessing: logins and /api/v1 answer 503. */
START_TEST(no_counters_fails_closed)
{
    jr_ctx_t anon = fx_ctx, v1 = fx_ctx;
    jr_result_t res = fx_call(jr_op_keys_create, "{\"name\": \"k\", \"scopes\": [\"read\"]}");
    const char *key = jr_json_str(fx_json(res), "key", "");
    ck_assert_int_eq(res.status, 201);
    memset(&anon.who, 0, sizeof(anon.who));
    anon.counters = NULL;
    EXPECT(login(&anon, "root", "rootpass1"), 503, "rate limiting unavailable");
    ck_assert_str_eq(fx_sql("SELECT COUNT(*) FROM sessions"), "0");

    memset(&v1.who, 0, sizeof(v1.who));
    v1.iface = JR_IF_V1;
    v1.method = "GET";
    jr_result_init(&res, fx_pool);
    ck_assert_int_eq(jr_auth_key(&v1, key, &res), 1);
    v1.counters = NULL;
    memset(&v1.who, 0, sizeof(v1.who));
    jr_result_init(&res, fx_pool);
    ck_assert_int_eq(jr_auth_key(&v1, key, &res), 0);
    EXPECT(res, 503, "rate limiting unavailable");
    ck_assert_int_eq(v1.who.authenticated, 0);
    jr_result_init(&res, fx_pool);
    ck_assert_int_eq(jr_auth_key(&v1, "wsk_short", &res), 0);
    EXPECT(res, 503, "rate limiting unavailable");
}
END_TEST

/* The key's branch_ids as /api/v1/me shows them for the key (fresh identity each time),
 * as JSON text. */
static const char *me_branch_ids(const char *key)
{
    jr_ctx_t v1 = fx_ctx;
    jr_result_t res;
    const char *err = NULL;
    json_t *me;
    memset(&v1.who, 0, sizeof(v1.who));
    v1.iface = JR_IF_V1;
    v1.method = "GET";
    jr_result_init(&res, fx_pool);
    ck_assert_int_eq(jr_auth_key(&v1, key, &res), 1);
    jr_result_init(&res, fx_pool);
    ck_assert_int_eq(jr_op_v1_me(&v1, NULL, &res), 200);
    ck_assert_int_eq(res.status, 200);
    me = jr_json_parse(fx_pool, res.body, res.body_len, &err);
    ck_assert_ptr_nonnull(me);
    ck_assert(json_equal(json_object_get(json_object_get(me, "key"), "branch_ids"),
                         json_object_get(json_object_get(me, "user"), "branch_ids")));
    return json_is_null(json_object_get(json_object_get(me, "user"), "branch_ids"))
               ? "null"
               : jr_json_dump(fx_pool,
                              json_object_get(json_object_get(me, "user"), "branch_ids"), NULL);
}

START_TEST(key_branch_ids_empty_is_refused)
{
    static const char *const msg =
        "branch_ids: omit branch_ids or send null for an unrestricted key";
    long long b = fx_new_branch("A"), id, before;
    jr_result_t res;
    const char *key;

    before = fx_audit_count();
    res = fx_call(jr_op_keys_create,
                  "{\"name\": \"k\", \"scopes\": [\"read\"], \"branch_ids\": []}");
    ck_assert_int_eq(res.status, 400);
    ck_assert_str_eq(fx_error(&res), msg);
    ck_assert_str_eq(fx_sql("SELECT COUNT(*) FROM api_keys"), "0");
    ck_assert_int_eq(fx_audit_count(), before);

    res = fx_call(jr_op_keys_create,
                  "{\"name\": \"k\", \"scopes\": [\"read\"], \"branch_ids\": null}");
    ck_assert_int_eq(res.status, 201);
    ck_assert(json_is_null(json_object_get(fx_json(res), "branch_ids")));
    id = fx_id(&res);
    key = jr_json_str(fx_json(res), "key", "");
    ck_assert_str_eq(me_branch_ids(key), "null");

    fx_set_id(&fx_ctx, id);
    res = fx_call(jr_op_keys_update,
                  jr_psprintf(fx_pool, "{\"branch_ids\": [%lld]}", b));
    ck_assert_int_eq(res.status, 200);
    ck_assert_str_eq(me_branch_ids(key), jr_psprintf(fx_pool, "[%lld]", b));
    before = fx_audit_count();
    res = fx_call(jr_op_keys_update, "{\"name\": \"renamed\", \"branch_ids\": []}");
    ck_assert_int_eq(res.status, 400);
    ck_assert_str_eq(fx_error(&res), msg);
    ck_assert_str_eq(fx_sql("SELECT name || ' ' || branch_ids FROM api_keys"),
                     jr_psprintf(fx_pool, "k [%lld]", b));
    ck_assert_int_eq(fx_audit_count(), before);
    res = fx_call(jr_op_keys_update, "{\"branch_ids\": null}");
    ck_assert_int_eq(res.status, 200);
    ck_assert(json_is_null(json_object_get(fx_json(res), "branch_ids")));
    ck_assert_ptr_null(fx_sql("SELECT branch_ids FROM api_keys"));
    ck_assert_str_eq(me_branch_ids(key), "null");
}
END_TEST

/* ---- health -------------------------------------------------------------------------- */

START_TEST(health_reports_schema)
{
    jr_ctx_t nodb = fx_ctx;
    jr_result_t res = fx_call(jr_op_health, NULL);
    ck_assert_int_eq(res.status, 200);
    ck_assert_int_eq(jr_json_int(fx_json(res), "schema_version", -1), jr_migrate_latest(JR_DB_SQLITE));
    ck_assert_str_eq(jr_json_str(fx_json(res), "database", ""), "sqlite3");
    nodb.db = NULL;
    jr_result_init(&res, fx_pool);
    ck_assert_int_eq(jr_op_health(&nodb, NULL, &res), 503);
    ck_assert_int_eq(res.status, 503);
    ck_assert_str_eq(jr_json_str(fx_json(res), "db", ""), "unavailable");
}
END_TEST

Suite *suite_ops_users(void)
{
    Suite *s = suite_create("ops_users");
    TCase *tc = fx_tcase(s, "users", fx_setup, fx_teardown);
    tcase_add_test(tc, users_create_refused);
    tcase_add_test(tc, users_create_normalises);
    tcase_add_test(tc, users_last_admin_protected);

    tc = fx_tcase(s, "scope", fx_setup, fx_teardown);
    tcase_add_test(tc, tutor_sees_only_own_branches);
    tcase_add_test(tc, tutor_without_branches_sees_nothing);
    tcase_add_test(tc, group_tutor_must_belong_to_branch);
    tcase_add_test(tc, group_move_rechecks_tutor);
    tcase_add_test(tc, group_rename_keeps_tutor_unchecked);
    tcase_add_test(tc, health_reports_schema);

    tc = fx_tcase(s, "sessions", fx_setup, fx_teardown);
    tcase_add_test(tc, login_session_logout);
    tcase_add_test(tc, login_refused);
    tcase_add_test(tc, session_expiry_and_user_changes);
    tcase_add_test(tc, login_honeypot_bans_ip);
    tcase_add_test(tc, login_honeypot_first);
    tcase_add_test(tc, ip_subjects);
    tcase_add_test(tc, ipv6_ban_covers_the_64);
    tcase_add_test(tc, login_throttle_per_account);
    tcase_add_test(tc, no_counters_fails_closed);
    tcase_add_test(tc, key_branch_ids_empty_is_refused);
    return s;
}
