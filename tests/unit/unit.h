/* Shared declarations of the unit test suites (Check): one constructor per test file. */
#ifndef UNIT_H
#define UNIT_H

#include <apr_pools.h>
#include <check.h>

Suite *suite_util(void);      /* test_util.c: jr_util.h */
Suite *suite_json(void);      /* test_json.c: jr_json.h */
Suite *suite_crypt(void);     /* test_crypt.c: jr_crypt.h */
Suite *suite_router(void);    /* test_router.c: jr_router.h, jr_routes.c */
Suite *suite_db(void);        /* test_db*.c: jr_db.h, jr_migrate.h, jr_stmts.h */
Suite *suite_search(void);    /* test_search.c: jr_search.h, the indexed search plans */
Suite *suite_road(void);      /* test_road.c: jr_road.h */
Suite *suite_ops_records(void); /* test_ops_records.c: entries, lesson reports, keys admin */
Suite *suite_ops(void);       /* test_ops.c: branch and group operations */
Suite *suite_ops_users(void); /* test_ops_users.c: users, tutors' scope, sessions, health */
Suite *suite_time(void);      /* test_time.c: jr_time.h */
Suite *suite_keys(void);      /* test_keys.c: jr_keys.h, the key format */
Suite *suite_counters(void);  /* test_counters.c: jr_counters.h, the shared-memory store */
Suite *suite_multipart(void); /* test_multipart.c: jr_multipart.h */
Suite *suite_storage(void);   /* test_storage.c: jr_storage.h, jr_magic.h, files and photos */
Suite *suite_jw(void);        /* test_jw.c: jr_jw.h, the streaming JSON writer */
Suite *suite_topic(void);     /* test_topic.c: jr_topic.h, the lesson position */
Suite *suite_ai_describe(void); /* test_ai_describe.c: AI and worker status answers */
Suite *suite_jobs(void);      /* test_jobs.c: jr_jobs.h, jr_ai.h, jr_events.h */
Suite *suite_worker(void);    /* test_worker.c: workers/ (settings, answers, exchanges) */
Suite *suite_config(void);    /* test_config.c: jr_config.h, the directives of jr_config_list.h */
Suite *suite_log(void);       /* test_log.c: jr_log.h, tags, levels, file and line */
Suite *suite_stream(void);    /* test_stream.c: jr_stream.h, stream scope, resumption, messages */
Suite *suite_wqueue(void);    /* test_wqueue.c: jr_wqueue.h, the SQLite write queue */
Suite *suite_genshare(void);  /* test_genshare.c: jr_genshare.h, the shared generation read */
Suite *suite_rcache(void);    /* test_rcache.c: jr_rcache.h, the response cache */

/* A fresh pool per test, for suites that need nothing else:
 * tcase_add_checked_fixture(tc, unit_pool_setup, unit_pool_teardown). */
extern apr_pool_t *unit_pool;
void unit_pool_setup(void);
void unit_pool_teardown(void);

/* Removes a directory tree (test_storage.c). */
void unit_rm_rf(const char *path);

/* The operation suites share a fixture: see ops_fixture.h. */

#endif
