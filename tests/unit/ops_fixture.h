/* The fixture of the operation suites (test_ops*.c): a migrated temporary SQLite file, an
 * admin account and its context. Each test gets a fresh one through fx_setup/fx_teardown. */
#ifndef OPS_FIXTURE_H
#define OPS_FIXTURE_H

#include <apr_pools.h>

#include "jr_road.h"
#include "unit.h"

extern apr_pool_t *fx_pool;
extern jr_db_t *fx_db;
extern jr_ctx_t fx_ctx; /* the admin, client_ip 192.0.2.1 */
extern long long fx_admin_id;

/* Unchecked fixture (runs in the parent): the directory of the test databases, removed with
 * whatever a failed test left in it (test_db.c uses it too). */
void fx_dir_setup(void);
void fx_dir_teardown(void);
const char *fx_dir(void);
/* Checked fixture (runs in each test's process). */
void fx_setup(void);
void fx_teardown(void);

/* A test case of s on the fixture: the unchecked directory fixture, then setup_fn/teardown_fn
 * (fx_setup/fx_teardown or a suite's own that call them), a generous timeout. */
TCase *fx_tcase(Suite *s, const char *name, SFun setup_fn, SFun teardown_fn);

/* Runs an operation (body NULL: no input, as the router passes for JR_BODY_NONE). */
jr_result_t fx_call_as(jr_ctx_t *c, jr_op_fn *op, const char *body);
jr_result_t fx_call(jr_op_fn *op, const char *body);
void fx_set_id(jr_ctx_t *c, long long id);
/* The answer's body read back as JSON (NULL without one). */
json_t *fx_json(jr_result_t r);
const char *fx_error(const jr_result_t *r);
long long fx_id(const jr_result_t *r);

/* Asserts the status and that the error message contains word. */
void fx_expect(jr_result_t r, int status, const char *word, int line);
#define EXPECT(r, status, word) fx_expect((r), (status), (word), __LINE__)

/* Ad-hoc SQL through the native handle: the first column of the first row, NULL for NULL. */
const char *fx_sql(const char *sql);
long long fx_audit_count(void);
const char *fx_audit_last(const char *col);

long long fx_new_branch(const char *name);
jr_result_t fx_create_group(const char *name, long long branch);
long long fx_new_group(const char *name, long long branch);
long long fx_new_tutor(const char *name, const char *branch_ids_json);

/* A fresh, unauthenticated context on the fixture's database, as a request starts with. */
void fx_request_ctx(jr_ctx_t *c, jr_iface_e iface, const char *client_ip);

/* A tutor's context, its branch scope read from the database as a login would. */
void fx_tutor_ctx(jr_ctx_t *t, long long uid);

#endif
