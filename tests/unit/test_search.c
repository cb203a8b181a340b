/* jr_search.h: the search term's statement arguments, and the plans of the indexed statements
 * on a migrated SQLite file. */
#include <string.h>

#include <apr_strings.h>
#include <sqlite3.h>

#include "db_fixture.h"
#include "jr_db_backend.h" /* jr_db_placeholders */
#include "jr_search.h"
#include "jr_stmts.h"

/* ---- search: the term's statement, and the plans of the indexed ones -------------------- */

/* The term's statement arguments, its use of the index checked first. */
static const jr_search_t *search_of(jr_dialect_e dialect, const char *term, int indexed)
{
    jr_search_t *sr = apr_palloc(dbt_pool, sizeof(*sr));
    jr_search_term(dbt_pool, dialect, term, sr);
    ck_assert_msg(sr->indexed == indexed, "%s: indexed %d", term, sr->indexed);
    return sr;
}

/* The trigrams a search asks the index for. */
static const char *first_of(jr_dialect_e dialect, const char *term)
{
    return search_of(dialect, term, 1)->first;
}

/* A term too short (or not UTF-8) for the index: its pattern, for the scan. */
static const char *scanned(jr_dialect_e dialect, const char *term)
{
    const jr_search_t *sr = search_of(dialect, term, 0);
    ck_assert_str_eq(sr->first, sr->like);
    return sr->like;
}

START_TEST(search_term_chooses_the_index_by_characters)
{
    /* Three characters and more: the index. The pattern is the same for both databases. */
    ck_assert_str_eq(first_of(JR_DB_SQLITE, "abc"), "\"abc\"");
    ck_assert_str_eq(search_of(JR_DB_SQLITE, "abc", 1)->like, "%abc%");
    ck_assert_str_eq(search_of(JR_DB_PGSQL, "abc", 1)->like, "%abc%");
    ck_assert_str_eq(search_of(JR_DB_SQLITE, "a\"b%_\\", 1)->like, "%a\"b\\%\\_\\\\%");
    /* Characters, not bytes: two letters of two bytes each stay a scan; three are indexed. */
    ck_assert_str_eq(scanned(JR_DB_SQLITE, "\xc3\xa4\xc3\xb6"), "%\xc3\xa4\xc3\xb6%");
    search_of(JR_DB_SQLITE, "\xc3\xa4\xc3\xb6\xc3\xbc", 1);
    scanned(JR_DB_SQLITE, "\xf0\x9f\x98\x80x"); /* a 4-byte character */
    ck_assert_str_eq(scanned(JR_DB_SQLITE, "ab"), "%ab%");
    ck_assert_str_eq(scanned(JR_DB_PGSQL, "ab"), "%ab%");
    ck_assert_str_eq(scanned(JR_DB_SQLITE, ""), "%%");
    /* Not UTF-8 (a lone continuation byte, a truncated sequence, an overlong form, a
     * surrogate): the tokenizer and LIKE could disagree on its characters, so it scans. */
    scanned(JR_DB_SQLITE, "abc\x80");
    scanned(JR_DB_SQLITE, "abc\xc3");
    scanned(JR_DB_PGSQL, "ab\xc0\xafz");
    scanned(JR_DB_SQLITE, "ab\xed\xa0\x80z");
    scanned(JR_DB_SQLITE, "ab\xf5\x80\x80\x80");
}
END_TEST

START_TEST(search_term_asks_the_index_for_word_beginnings)
{
    /* SQLite: the first trigram of each of the two longest words, in the term's order (the
     * earlier of equal lengths), quoted with '"' doubled, joined by AND. */
    ck_assert_str_eq(first_of(JR_DB_SQLITE, "Amara Okafor"), "\"Ama\" AND \"Oka\"");
    ck_assert_str_eq(first_of(JR_DB_SQLITE, "Okafor"), "\"Oka\"");
    ck_assert_str_eq(first_of(JR_DB_SQLITE, "one two three four"), "\"thr\" AND \"fou\"");
    ck_assert_str_eq(first_of(JR_DB_SQLITE, "abcd efgh ijkl"), "\"abc\" AND \"efg\"");
    ck_assert_str_eq(first_of(JR_DB_SQLITE, "ab cde fghij klm"), "\"cde\" AND \"fgh\"");
    ck_assert_str_eq(first_of(JR_DB_SQLITE, "a\"b%_\\"), "\"a\"\"b\"");
    ck_assert_str_eq(first_of(JR_DB_SQLITE, "\"\"\"\""), "\"\"\"\"\"\"\"\"");
    /* Windows are characters: "äöüß" (8 bytes) begins with "äöü". */
    ck_assert_str_eq(first_of(JR_DB_SQLITE, "\xc3\xa4\xc3\xb6\xc3\xbc\xc3\x9f"),
                     "\"\xc3\xa4\xc3\xb6\xc3\xbc\"");
    /* No word of three characters: the term's first three. */
    ck_assert_str_eq(first_of(JR_DB_SQLITE, "aa bb cc"), "\"aa \"");
    ck_assert_str_eq(first_of(JR_DB_SQLITE, "t 1"), "\"t 1\"");
    /* PostgreSQL: the same windows as a LIKE pattern, each of three ASCII letters or digits
     * followed by an ASCII character or the end; without one, the term's own pattern. */
    ck_assert_str_eq(first_of(JR_DB_PGSQL, "Amara Okafor"), "%Ama%Oka%");
    ck_assert_str_eq(first_of(JR_DB_PGSQL, "Okafor"), "%Oka%");
    ck_assert_str_eq(first_of(JR_DB_PGSQL, "Chlo\xc3\xa9 Dupont"), "%Chl%Dup%");
    ck_assert_str_eq(first_of(JR_DB_PGSQL, "Anna M\xc3\xbcller"), "%Ann%");
    ck_assert_str_eq(first_of(JR_DB_PGSQL, "Abc\xc3\xa9"), "%Abc\xc3\xa9%");
    ck_assert_str_eq(first_of(JR_DB_PGSQL, "Zo\xc3\xab O'Brien"), "%Zo\xc3\xab O'Brien%");
    ck_assert_str_eq(first_of(JR_DB_PGSQL, "50%"), "%50\\%%");
    ck_assert_str_eq(first_of(JR_DB_PGSQL, "a_b cd"), "%a\\_b cd%");
    ck_assert_str_eq(first_of(JR_DB_PGSQL, "abc1 x"), "%abc%");
}
END_TEST

/* Terms shaped to break a plan that asks the index for a part of the term: each window is a
 * piece of the term itself (never one that spans the white space between its words), repeated
 * pieces are asked for as often as they come, case stays as typed (the index and ILIKE fold),
 * and a term's length does not matter. */
START_TEST(search_term_windows_stay_inside_the_term)
{
    static const struct {
        const char *term, *fts, *pg;
    } cases[] = {
        {"ra Oka", "\"Oka\"", "%Oka%"},
        {"a Okafor", "\"Oka\"", "%Oka%"},
        {"abc abc", "\"abc\" AND \"abc\"", "%abc%abc%"},
        {"abcabc", "\"abc\"", "%abc%"},
        {"aaaaaaaa", "\"aaa\"", "%aaa%"},
        {"Okafor Okafor", "\"Oka\" AND \"Oka\"", "%Oka%Oka%"},
        {"AMARA okafor", "\"AMA\" AND \"oka\"", "%AMA%oka%"},
        {"Amara\tOkafor\n", "\"Ama\" AND \"Oka\"", "%Ama%Oka%"},
        {"Okafox qqq", "\"Oka\" AND \"qqq\"", "%Oka%qqq%"},
        {"\xc5\x81\xc3\xb3\x64\xc5\xba \xc5\xbb\xc3\xb3\xc5\x82\xc4\x87",
         "\"\xc5\x81\xc3\xb3\x64\" AND \"\xc5\xbb\xc3\xb3\xc5\x82\"",
         "%\xc5\x81\xc3\xb3\x64\xc5\xba \xc5\xbb\xc3\xb3\xc5\x82\xc4\x87%"},
        {"a b c", "\"a b\"", "%a b c%"},
        {"50% a_b", "\"50%\" AND \"a_b\"", "%50\\% a\\_b%"},
    };
    size_t i;
    char *longer = apr_palloc(dbt_pool, 301);
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
        ck_assert_str_eq(first_of(JR_DB_SQLITE, cases[i].term), cases[i].fts);
        ck_assert_str_eq(first_of(JR_DB_PGSQL, cases[i].term), cases[i].pg);
    }
    memset(longer, 'x', 300);
    longer[300] = '\0';
    ck_assert_str_eq(first_of(JR_DB_SQLITE, longer), "\"xxx\"");
    ck_assert_str_eq(first_of(JR_DB_PGSQL, longer), "%xxx%");
}
END_TEST

/* The plan of a catalogue statement, its steps joined by "; ". */
static const char *query_plan(jr_stmt_id_t id)
{
    const char *sql = jr_db_placeholders(dbt_pool, jr_stmt_sql(id, JR_DB_SQLITE), 0), *out = "";
    sqlite3_stmt *st = NULL;
    ck_assert_msg(sqlite3_prepare_v2(dbt_native(), apr_pstrcat(dbt_pool, "EXPLAIN QUERY PLAN ", sql,
                                                            NULL),
                                     -1, &st, NULL) == SQLITE_OK,
                  "%s: %s", jr_stmt_label(id), sqlite3_errmsg(dbt_native()));
    while (sqlite3_step(st) == SQLITE_ROW) {
        out = apr_pstrcat(dbt_pool, out, (const char *)sqlite3_column_text(st, 3), "; ", NULL);
    }
    sqlite3_finalize(st);
    return out;
}

START_TEST(search_plans_use_the_index)
{
    static const struct {
        jr_stmt_id_t id;
        const char *fts, *base;
    } cases[] = {
        {JR_Q_STUDENTS_SEARCH, "students_fts", "SEARCH s USING INTEGER PRIMARY KEY"},
        {JR_Q_STUDENTS_SEARCH_COUNT, "students_fts", "SEARCH s USING INTEGER PRIMARY KEY"},
        {JR_Q_MODULES_SEARCH, "modules_fts", "SEARCH m USING INTEGER PRIMARY KEY"},
        {JR_Q_MODULES_SEARCH_COUNT, "modules_fts", "SEARCH m USING INTEGER PRIMARY KEY"},
    };
    size_t i;
    const char *plan;
    dbt_open_ready();
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
        plan = query_plan(cases[i].id);
        /* The full-text table first, by its MATCH (M); each candidate's row by its id. */
        ck_assert_msg(strncmp(plan, apr_pstrcat(dbt_pool, "SCAN ", cases[i].fts, " VIRTUAL TABLE",
                                                NULL),
                              strlen(cases[i].fts) + 19) == 0 &&
                          strstr(plan, ":M") != NULL && strstr(plan, cases[i].base) != NULL,
                      "%s: %s", jr_stmt_label(cases[i].id), plan);
    }
    /* Entries: the candidates of both indexes (the descriptions' and the names', each name's
     * entries by the index on its key), each entry then read by its id; no table walked. */
    plan = query_plan(JR_Q_ENTRIES_SEARCH);
    ck_assert_msg(strncmp(plan, "SEARCH e USING INTEGER PRIMARY KEY (rowid=?)", 44) == 0 &&
                      strstr(plan, "SCAN entries_fts VIRTUAL TABLE INDEX 0:M") != NULL &&
                      strstr(plan, "SCAN entry_names_fts VIRTUAL TABLE INDEX 0:M") != NULL &&
                      strstr(plan, "SEARCH nm USING INTEGER PRIMARY KEY") != NULL &&
                      strstr(plan, "SEARCH s USING INDEX entries_student_key") != NULL &&
                      strstr(plan, "SCAN e;") == NULL && strstr(plan, "SCAN s;") == NULL,
                  "%s", plan);
    /* The page's rows by their ids, never a walk through the table, nor a sort. */
    plan = query_plan(JR_Q_ENTRIES_BY_IDS);
    ck_assert_msg(strncmp(plan, "SEARCH e USING INTEGER PRIMARY KEY (rowid=?)", 44) == 0 &&
                      strstr(plan, "SCAN e") == NULL && strstr(plan, "TEMP B-TREE") == NULL,
                  "%s", plan);
}
END_TEST

/* Executed again with new arguments, as every request binds its own, a search statement runs
 * the plan it was prepared with: SQLite prepares a statement anew when a parameter its plan
 * read is bound again (a LIKE's bare pattern is one), which cost more than the index lookup. */
START_TEST(search_statements_are_not_prepared_again_per_execution)
{
    static const jr_stmt_id_t ids[] = {
        JR_Q_ENTRIES_SEARCH,  JR_Q_ENTRIES_LIST,          JR_Q_ENTRIES_COUNT,
        JR_Q_STUDENTS_LIST,   JR_Q_STUDENTS_SEARCH,       JR_Q_STUDENTS_SEARCH_COUNT,
        JR_Q_STUDENTS_COUNT,  JR_Q_MODULES_LIST,          JR_Q_MODULES_SEARCH,
        JR_Q_MODULES_SEARCH_COUNT, JR_Q_MODULES_COUNT};
    size_t i;
    int round, k;
    sqlite3_stmt *st = NULL;
    dbt_open_ready();
    for (i = 0; i < sizeof(ids) / sizeof(ids[0]); ++i) {
        ck_assert_int_eq(sqlite3_prepare_v2(dbt_native(),
                                            jr_db_placeholders(dbt_pool,
                                                               jr_stmt_sql(ids[i], JR_DB_SQLITE), 0),
                                            -1, &st, NULL),
                         SQLITE_OK);
        for (round = 0; round < 3; ++round) {
            /* Valid for every parameter: a full-text query, a pattern, a scope, a number. */
            for (k = 1; k <= sqlite3_bind_parameter_count(st); ++k) {
                ck_assert_int_eq(sqlite3_bind_text(st, k, round ? "\"abd\"" : "\"abc\"", -1,
                                                   SQLITE_STATIC),
                                 SQLITE_OK);
            }
            while (sqlite3_step(st) == SQLITE_ROW) {
            }
            ck_assert_int_eq(sqlite3_reset(st), SQLITE_OK);
        }
        ck_assert_msg(sqlite3_stmt_status(st, SQLITE_STMTSTATUS_REPREPARE, 0) == 0,
                      "%s: prepared again %d times", jr_stmt_label(ids[i]),
                      sqlite3_stmt_status(st, SQLITE_STMTSTATUS_REPREPARE, 0));
        sqlite3_finalize(st);
    }
}
END_TEST

START_TEST(search_page_ids_are_the_newest_below_the_cursor)
{
    /* In any order, as the statements aggregate them; newest first, offset skipped, fetch
     * taken, only below the cursor's last id. */
    ck_assert_str_eq(jr_search_page_ids(dbt_pool, "[5,9,1,7,3]", NULL, 0, 3), "[9,7,5]");
    ck_assert_str_eq(jr_search_page_ids(dbt_pool, "[5,9,1,7,3]", NULL, 1, 3), "[7,5,3]");
    ck_assert_str_eq(jr_search_page_ids(dbt_pool, "[5,9,1,7,3]", "7", 0, 3), "[5,3,1]");
    ck_assert_str_eq(jr_search_page_ids(dbt_pool, "[5,9,1,7,3]", "7", 2, 3), "[1]");
    ck_assert_str_eq(jr_search_page_ids(dbt_pool, "[5,9,1,7,3]", "7", 3, 3), "[]");
    ck_assert_str_eq(jr_search_page_ids(dbt_pool, "[5,9,1,7,3]", "1", 0, 3), "[]");
    ck_assert_str_eq(jr_search_page_ids(dbt_pool, "[9223372036854775806,12]", NULL, 0, 51),
                     "[9223372036854775806,12]");
    /* No match: SQLite's empty array, PostgreSQL's NULL. */
    ck_assert_str_eq(jr_search_page_ids(dbt_pool, "[]", NULL, 0, 51), "[]");
    ck_assert_str_eq(jr_search_page_ids(dbt_pool, NULL, NULL, 0, 51), "[]");
}
END_TEST

Suite *suite_search(void)
{
    Suite *s = suite_create("search");
    TCase *tc = dbt_tcase(s, "search", dbt_setup, dbt_teardown);
    tcase_add_test(tc, search_term_chooses_the_index_by_characters);
    tcase_add_test(tc, search_term_asks_the_index_for_word_beginnings);
    tcase_add_test(tc, search_term_windows_stay_inside_the_term);
    tcase_add_test(tc, search_plans_use_the_index);
    tcase_add_test(tc, search_statements_are_not_prepared_again_per_execution);
    tcase_add_test(tc, search_page_ids_are_the_newest_below_the_cursor);
    return s;
}
