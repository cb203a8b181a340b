/* jr_topic.h: the lesson's position within its module, read from a topic ending in "N/M"
 * (spec 2.4: N = M is last, checked first; N = 1 is first; otherwise middle; N > M, M = 0 or
 * an empty topic give none). */
#include <string.h>

#include "jr_topic.h"
#include "unit.h"

/* Asserts the position of a topic; want NULL means "no position". */
#define POS(topic, want)                                                                   \
    do {                                                                                   \
        const char *got_ = jr_topic_position(topic);                                       \
        const char *want_ = (want);                                                        \
        if (want_ == NULL) {                                                               \
            ck_assert_msg(got_ == NULL, "topic \"%s\": expected no position, got \"%s\"", \
                          (topic) ? (topic) : "(null)", got_);                             \
        } else {                                                                           \
            ck_assert_msg(got_ != NULL && strcmp(got_, want_) == 0,                        \
                          "topic \"%s\": expected \"%s\", got \"%s\"",                     \
                          (topic) ? (topic) : "(null)", want_, got_ ? got_ : "(null)");    \
        }                                                                                  \
    } while (0)

START_TEST(null_and_blank_have_no_position)
{
    POS(NULL, NULL);
    POS("", NULL);
    POS("   ", NULL);
    POS("\t\n", NULL);
    POS("Intro", NULL);
}
END_TEST

START_TEST(first_middle_last)
{
    POS("3/8", "middle");
    POS("1/8", "first");
    POS("8/8", "last");
    POS("2/3", "middle");
    POS("7/8", "middle");
    POS("1/2", "first");
    POS("2/2", "last");
    POS("Fractions 3/8", "middle");
}
END_TEST

START_TEST(one_of_one_is_last_not_first)
{
    /* N = M is checked before N = 1. */
    POS("1/1", "last");
    POS("Only lesson 1/1", "last");
}
END_TEST

START_TEST(zero_or_n_over_m_have_no_position)
{
    POS("0/0", NULL);
    POS("0/5", NULL);
    POS("00/5", NULL);
    POS("6/5", NULL);
    POS("3/0", NULL);
    POS("3/000", NULL);
    POS("9/10", "middle"); /* compared as numbers, not as text ("9" > "10") */
    POS("10/9", NULL);
}
END_TEST

START_TEST(spaces_around_the_slash_and_after)
{
    POS(" 3 / 8 ", "middle");
    POS("3 /8", "middle");
    POS("3/ 8", "middle");
    POS("Topic 1   /   8", "first");
    POS("3/8\n", "middle");
    POS("8/8 \t ", "last");
}
END_TEST

START_TEST(tab_before_the_slash_is_not_a_space)
{
    /* Only ' ' is skipped around the slash; other white space only after the fraction. */
    POS("3\t/8", NULL);
    POS("3/\t8", NULL);
}
END_TEST

START_TEST(leading_zeros_do_not_count)
{
    POS("Fractions 03/08", "middle");
    POS("Lesson 001/1", "last");
    POS("01/8", "first");
    POS("1/01", "last");
    POS("0008/8", "last");
}
END_TEST

START_TEST(huge_numbers_are_compared_exactly)
{
    POS("123456789012345678901234567890/123456789012345678901234567890", "last");
    POS("123456789012345678901234567891/123456789012345678901234567890", NULL);
    POS("123456789012345678901234567889/123456789012345678901234567890", "middle");
    POS("1/123456789012345678901234567890", "first");
    POS("99999999999999999999/100000000000000000000", "middle");
    POS("100000000000000000000/99999999999999999999", NULL);
    /* Past 64 bits: a parser that overflowed would see other numbers. */
    POS("18446744073709551617/18446744073709551616", NULL);
    POS("18446744073709551616/18446744073709551617", "middle");
}
END_TEST

START_TEST(fraction_must_end_the_topic)
{
    POS("3/8 extra", NULL);
    POS("3/8.", NULL);
    POS("3/8)", NULL);
    POS("Lesson 3/8 of the module", NULL);
}
END_TEST

START_TEST(incomplete_fractions_have_no_position)
{
    POS("/8", NULL);
    POS(" /8", NULL);
    POS("3/", NULL);
    POS("/", NULL);
    POS("a/b", NULL);
    POS("a/8", NULL);
    POS("3/b", NULL);
    POS("3-8", NULL);
    POS("3\\8", NULL);
    POS("38", NULL);
}
END_TEST

START_TEST(one_two_three_reads_the_last_fraction_2_of_3_middle)
{
    /* Only the digit runs next to the last slash count: "1/2/3" is read as 2/3. */
    POS("1/2/3", "middle");
    POS("5/1/3", "first");
    POS("9/3/3", "last");
}
END_TEST

START_TEST(digits_glued_to_other_text_still_count)
{
    /* Documented in jr_topic.c: "v2.3/4" reads 3/4. A sign is not part of the number. */
    POS("v2.3/4", "middle");
    POS("x1/8", "first");
    POS("Lesson#8/8", "last");
    POS("-1/5", "first");
}
END_TEST

Suite *suite_topic(void)
{
    Suite *s = suite_create("topic");
    TCase *tc = tcase_create("position");
    tcase_add_test(tc, null_and_blank_have_no_position);
    tcase_add_test(tc, first_middle_last);
    tcase_add_test(tc, one_of_one_is_last_not_first);
    tcase_add_test(tc, zero_or_n_over_m_have_no_position);
    tcase_add_test(tc, spaces_around_the_slash_and_after);
    tcase_add_test(tc, tab_before_the_slash_is_not_a_space);
    tcase_add_test(tc, leading_zeros_do_not_count);
    tcase_add_test(tc, huge_numbers_are_compared_exactly);
    tcase_add_test(tc, fraction_must_end_the_topic);
    tcase_add_test(tc, incomplete_fractions_have_no_position);
    tcase_add_test(tc, one_two_three_reads_the_last_fraction_2_of_3_middle);
    tcase_add_test(tc, digits_glued_to_other_text_still_count);
    suite_add_tcase(s, tc);
    return s;
}
