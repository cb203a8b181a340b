/* jr_jw.h: the streaming JSON writer. Every document it writes is parsed back with jansson
 * and compared (json_equal) with the value it should be; a seeded fuzz writes random
 * documents both with the writer and with json_dumps. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <apr_pools.h>
#include <jansson.h>

#include "jr_jw.h"
#include "unit.h"

static apr_pool_t *pool;

static void setup(void)
{
    ck_assert_int_eq(apr_pool_create(&pool, NULL), APR_SUCCESS);
}

static void teardown(void)
{
    apr_pool_destroy(pool);
    pool = NULL;
}

/* A short, printable excerpt of a document for failure messages. */
static const char *excerpt(const char *s, size_t len)
{
    static char bufs[2][512];
    static int turn;
    char *buf = bufs[turn++ & 1]; /* two per message: got and want */
    size_t i, o = 0;
    for (i = 0; i < len && o + 5 < sizeof(bufs[0]); ++i) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x7f) {
            buf[o++] = (char)c;
        } else {
            o += (size_t)snprintf(buf + o, sizeof(bufs[0]) - o, "\\x%02x", c);
        }
    }
    buf[o < sizeof(bufs[0]) ? o : sizeof(bufs[0]) - 1] = '\0';
    return buf;
}

/* Parses the writer's output and compares it with expected (a new reference, consumed). */
static void check_doc(jr_jw_t *w, json_t *expected)
{
    size_t len = 0;
    const char *out = jr_jw_done(w, &len);
    json_error_t err;
    json_t *got;

    ck_assert_ptr_nonnull(out);
    ck_assert_uint_eq(strlen(out), len); /* NUL-terminated, no NUL inside */
    got = json_loadb(out, len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &err);
    ck_assert_msg(got != NULL, "the writer's output is not JSON (%s at %d): %s", err.text,
                  err.position, excerpt(out, len));
    if (!json_equal(got, expected)) {
        char *want = json_dumps(expected, JSON_COMPACT | JSON_ENCODE_ANY);
        ck_abort_msg("parsed back differently:\n got %s\nwant %s", excerpt(out, len),
                     want ? excerpt(want, strlen(want)) : "?");
    }
    json_decref(got);
    json_decref(expected);
}

static json_t *expect(const char *text)
{
    json_error_t err;
    json_t *j = json_loads(text, JSON_DECODE_ANY, &err);
    ck_assert_msg(j != NULL, "bad expectation %s: %s", text, err.text);
    return j;
}

/* The exact output, for the cases where the text itself matters. */
static void check_text(jr_jw_t *w, const char *want)
{
    size_t len;
    const char *out = jr_jw_done(w, &len);
    ck_assert_str_eq(out, want);
    ck_assert_uint_eq(len, strlen(want));
}

/* ---- structure ------------------------------------------------------------------------- */

START_TEST(empty_containers)
{
    jr_jw_t w;
    jr_jw_init(&w, pool, 0);
    jr_jw_obj(&w);
    jr_jw_obj_end(&w);
    check_text(&w, "{}");

    jr_jw_init(&w, pool, 16);
    jr_jw_arr(&w);
    jr_jw_arr_end(&w);
    check_text(&w, "[]");

    /* {"a":{},"b":[],"c":[[],{},[[]]],"d":{"e":{}}} */
    jr_jw_init(&w, pool, 1);
    jr_jw_obj(&w);
    jr_jw_key(&w, "a");
    jr_jw_obj(&w);
    jr_jw_obj_end(&w);
    jr_jw_key(&w, "b");
    jr_jw_arr(&w);
    jr_jw_arr_end(&w);
    jr_jw_key(&w, "c");
    jr_jw_arr(&w);
    jr_jw_arr(&w);
    jr_jw_arr_end(&w);
    jr_jw_obj(&w);
    jr_jw_obj_end(&w);
    jr_jw_arr(&w);
    jr_jw_arr(&w);
    jr_jw_arr_end(&w);
    jr_jw_arr_end(&w);
    jr_jw_arr_end(&w);
    jr_jw_key(&w, "d");
    jr_jw_obj(&w);
    jr_jw_key(&w, "e");
    jr_jw_obj(&w);
    jr_jw_obj_end(&w);
    jr_jw_obj_end(&w);
    jr_jw_obj_end(&w);
    check_text(&w, "{\"a\":{},\"b\":[],\"c\":[[],{},[[]]],\"d\":{\"e\":{}}}");
}
END_TEST

START_TEST(nested_values)
{
    jr_jw_t w;
    jr_jw_init(&w, pool, 64);
    jr_jw_obj(&w);
    jr_jw_kint(&w, "id", 7);
    jr_jw_kstr(&w, "name", "Anna");
    jr_jw_kstr(&w, "none", NULL);
    jr_jw_key(&w, "tags");
    jr_jw_arr(&w);
    jr_jw_str(&w, "a");
    jr_jw_int(&w, 2);
    jr_jw_null(&w);
    jr_jw_bool(&w, 1);
    jr_jw_arr(&w);
    jr_jw_obj(&w);
    jr_jw_kbool(&w, "deep", 0);
    jr_jw_key(&w, "deeper");
    jr_jw_obj(&w);
    jr_jw_kint_text(&w, "n", "-12");
    jr_jw_obj_end(&w);
    jr_jw_obj_end(&w);
    jr_jw_arr_end(&w);
    jr_jw_arr_end(&w);
    jr_jw_key(&w, "after");
    jr_jw_str(&w, "");
    jr_jw_obj_end(&w);
    check_doc(&w, expect("{\"id\":7,\"name\":\"Anna\",\"none\":null,"
                         "\"tags\":[\"a\",2,null,true,[{\"deep\":false,\"deeper\":{\"n\":-12}}]],"
                         "\"after\":\"\"}"));
}
END_TEST

/* Two siblings at every level down to the writer's documented depth. */
START_TEST(nesting_to_the_depth_limit)
{
    jr_jw_t w;
    json_t *expected = NULL;
    int i;
    jr_jw_init(&w, pool, 8);
    for (i = 0; i < JR_JW_DEPTH; ++i) {
        jr_jw_arr(&w);
        jr_jw_int(&w, i);
    }
    /* [0,[1,[2,...[31,"end"],"x"]...,"x"],"x"] */
    for (i = JR_JW_DEPTH - 1; i >= 0; --i) {
        json_t *a = json_array();
        json_array_append_new(a, json_integer(i));
        if (expected) {
            json_array_append_new(a, expected);
            json_array_append_new(a, json_string("x"));
        } else {
            json_array_append_new(a, json_string("end"));
        }
        expected = a;
    }
    jr_jw_str(&w, "end");
    for (i = 0; i < JR_JW_DEPTH; ++i) {
        jr_jw_arr_end(&w);
        if (i < JR_JW_DEPTH - 1) {
            jr_jw_str(&w, "x");
        }
    }
    check_doc(&w, expected);
}
END_TEST

/* Deeper than JR_JW_DEPTH: still well-formed (the header sets no limit for callers). */
START_TEST(nesting_beyond_the_depth_limit)
{
    enum { DEPTH = JR_JW_DEPTH + 8 };
    jr_jw_t w;
    json_t *expected = NULL;
    int i;
    jr_jw_init(&w, pool, 8);
    for (i = 0; i < DEPTH; ++i) {
        jr_jw_arr(&w);
        jr_jw_int(&w, i);
    }
    jr_jw_int(&w, -1);
    for (i = 0; i < DEPTH; ++i) {
        jr_jw_arr_end(&w);
    }
    for (i = DEPTH - 1; i >= 0; --i) {
        json_t *a = json_array();
        json_array_append_new(a, json_integer(i));
        json_array_append_new(a, expected ? expected : json_integer(-1));
        expected = a;
    }
    check_doc(&w, expected);
}
END_TEST

/* ---- strings --------------------------------------------------------------------------- */

START_TEST(string_escapes_exact)
{
    jr_jw_t w;
    jr_jw_init(&w, pool, 4);
    jr_jw_str(&w, "a\"b\\c\x01\n\t\r\b\f\x1f/\x7f" "d");
    check_text(&w, "\"a\\\"b\\\\c\\u0001\\n\\t\\r\\b\\f\\u001f/\x7f" "d\"");
}
END_TEST

START_TEST(string_escapes_round_trip)
{
    static const char *const cases[] = {
        "",
        "plain",
        "\"",
        "\\",
        "\"\"\\\\\"",
        "quote \" inside",
        "back\\slash",
        "trailing backslash\\",
        "\\\"",
        "\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f",
        "\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f",
        "line\nbreak\r\nand\ttab",
        "\x7f delete",
        "</script><!-- -->",
        "\\u0041 is not an escape here",
    };
    size_t i;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); ++i) {
        jr_jw_t w;
        json_t *exp = json_array();
        jr_jw_init(&w, pool, 1);
        jr_jw_arr(&w);
        jr_jw_str(&w, cases[i]);
        jr_jw_obj(&w);
        jr_jw_kstr(&w, cases[i], cases[i]);
        jr_jw_obj_end(&w);
        jr_jw_arr_end(&w);
        json_array_append_new(exp, json_string(cases[i]));
        json_array_append_new(exp, json_pack("{s:s}", cases[i], cases[i]));
        check_doc(&w, exp);
    }
}
END_TEST

START_TEST(utf8_is_kept_as_it_is)
{
    /* 2-, 3- and 4-byte sequences: Grüße, em dash, 日本語, U+1F600, U+10FFFF. */
    const char *s = "Gr\xC3\xBC\xC3\x9F" "e \xE2\x80\x94 \xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E "
                    "\xF0\x9F\x98\x80 \xF4\x8F\xBF\xBF";
    jr_jw_t w;
    size_t len;
    const char *out;

    jr_jw_init(&w, pool, 8);
    jr_jw_obj(&w);
    jr_jw_kstr(&w, s, s);
    jr_jw_obj_end(&w);
    out = jr_jw_done(&w, &len);
    ck_assert_ptr_nonnull(strstr(out, s)); /* written raw, not as \u escapes */
    check_doc(&w, json_pack("{s:s}", s, s));
}
END_TEST

START_TEST(keys_needing_escapes)
{
    static const char *const keys[] = {
        "", "\"", "\\", "a\"b", "a\\b", "new\nline", "\x01", "tab\tkey", "\xC3\xA9t\xC3\xA9",
        "\xF0\x9F\x98\x80", "}", "]", ":", ",", "null",
    };
    size_t i;
    jr_jw_t w;
    json_t *exp = json_object();
    jr_jw_init(&w, pool, 2);
    jr_jw_obj(&w);
    for (i = 0; i < sizeof(keys) / sizeof(keys[0]); ++i) {
        jr_jw_kint(&w, keys[i], (long long)i);
        json_object_set_new(exp, keys[i], json_integer((json_int_t)i));
    }
    jr_jw_obj_end(&w);
    check_doc(&w, exp);
}
END_TEST

/* A string of about 1 MB from a 64-byte start: the buffer grows many times. */
START_TEST(one_megabyte_string)
{
    const size_t n = 1024 * 1024;
    char *s = malloc(n + 1);
    size_t i;
    jr_jw_t w;
    ck_assert_ptr_nonnull(s);
    for (i = 0; i < n; ++i) {
        static const char alphabet[] = "abcXYZ019 \"\\\n\t\x01\x1f/{}[],:";
        s[i] = alphabet[(i * 7 + i / 13) % (sizeof(alphabet) - 1)];
    }
    s[n] = '\0';
    jr_jw_init(&w, pool, 64);
    jr_jw_arr(&w);
    jr_jw_str(&w, s);
    jr_jw_str(&w, s + n / 2);
    jr_jw_arr_end(&w);
    check_doc(&w, json_pack("[s,s]", s, s + n / 2));

    /* Every byte escaped as \u00XX: six output bytes per input byte. */
    memset(s, '\x01', n);
    jr_jw_init(&w, pool, 64);
    jr_jw_str(&w, s);
    {
        size_t len;
        jr_jw_done(&w, &len);
        ck_assert_uint_eq(len, 6 * n + 2);
    }
    check_doc(&w, json_string(s));
    free(s);
}
END_TEST

START_TEST(many_members_grow_the_buffer)
{
    jr_jw_t w;
    json_t *exp = json_array();
    int i;
    jr_jw_init(&w, pool, 0);
    jr_jw_arr(&w);
    for (i = 0; i < 100000; ++i) {
        jr_jw_int(&w, (long long)i * 1000003 - 50000000);
        json_array_append_new(exp, json_integer((json_int_t)i * 1000003 - 50000000));
    }
    jr_jw_arr_end(&w);
    check_doc(&w, exp);
}
END_TEST

/* ---- numbers, booleans, raw -------------------------------------------------------------- */

START_TEST(integers)
{
    static const long long values[] = {0,           1,         -1,        9,
                                       10,          -10,       123456789, 9007199254740993LL,
                                       LLONG_MAX,   LLONG_MIN, LLONG_MIN + 1, LLONG_MAX - 1};
    size_t i;
    jr_jw_t w;
    json_t *exp = json_array();
    jr_jw_init(&w, pool, 4);
    jr_jw_arr(&w);
    for (i = 0; i < sizeof(values) / sizeof(values[0]); ++i) {
        jr_jw_int(&w, values[i]);
        json_array_append_new(exp, json_integer((json_int_t)values[i]));
    }
    jr_jw_arr_end(&w);
    check_doc(&w, exp);

    jr_jw_init(&w, pool, 4);
    jr_jw_obj(&w);
    jr_jw_kint(&w, "min", LLONG_MIN);
    jr_jw_kint(&w, "max", LLONG_MAX);
    jr_jw_obj_end(&w);
    check_text(&w, "{\"min\":-9223372036854775808,\"max\":9223372036854775807}");
}
END_TEST

START_TEST(int_text_valid_digits)
{
    static const char *const digits[] = {"0",   "7",  "42",  "-1", "-0", "1234567890",
                                         "9223372036854775807", "-9223372036854775808"};
    size_t i;
    jr_jw_t w;
    json_t *exp = json_object();
    jr_jw_init(&w, pool, 4);
    jr_jw_obj(&w);
    for (i = 0; i < sizeof(digits) / sizeof(digits[0]); ++i) {
        char key[8];
        snprintf(key, sizeof(key), "k%zu", i);
        jr_jw_kint_text(&w, key, digits[i]);
        json_object_set_new(exp, key, json_integer((json_int_t)strtoll(digits[i], NULL, 10)));
    }
    jr_jw_obj_end(&w);
    check_doc(&w, exp);

    jr_jw_init(&w, pool, 4);
    jr_jw_arr(&w);
    jr_jw_int_text(&w, "-9223372036854775808");
    jr_jw_int_text(&w, "15");
    jr_jw_arr_end(&w);
    check_text(&w, "[-9223372036854775808,15]");
}
END_TEST

START_TEST(int_text_null_and_non_numbers)
{
    static const char *const bad[] = {"",    "abc", "12a", "a12", " 1",  "1 ",  "+1",  "1.5",
                                      "1e3", "0x10", "--1", "1-",  "NaN", "null", "true"};
    size_t i;
    jr_jw_t w;
    json_t *exp = json_array();
    jr_jw_init(&w, pool, 4);
    jr_jw_arr(&w);
    jr_jw_int_text(&w, NULL);
    json_array_append_new(exp, json_null());
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); ++i) {
        jr_jw_int_text(&w, bad[i]);
        json_array_append_new(exp, json_null());
    }
    jr_jw_arr_end(&w);
    check_doc(&w, exp);

    jr_jw_init(&w, pool, 4);
    jr_jw_obj(&w);
    jr_jw_kint_text(&w, "a", NULL);
    jr_jw_kint_text(&w, "b", "x1");
    jr_jw_kint_text(&w, "c", "5");
    jr_jw_obj_end(&w);
    check_text(&w, "{\"a\":null,\"b\":null,\"c\":5}");
}
END_TEST

/* Digit strings that are still no JSON number: a lone minus sign, leading zeros. */
START_TEST(int_text_rejects_what_json_does_not_allow)
{
    static const char *const bad[] = {"-", "007", "-01", "00"};
    char failures[256] = "";
    size_t i;
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); ++i) {
        jr_jw_t w;
        size_t len;
        const char *out;
        json_t *got;
        jr_jw_init(&w, pool, 4);
        jr_jw_arr(&w);
        jr_jw_int_text(&w, bad[i]);
        jr_jw_arr_end(&w);
        out = jr_jw_done(&w, &len);
        got = json_loadb(out, len, 0, NULL);
        if (!got || !json_is_null(json_array_get(got, 0))) {
            size_t used = strlen(failures);
            snprintf(failures + used, sizeof(failures) - used, " \"%s\" -> %s;", bad[i], out);
        }
        json_decref(got);
    }
    ck_assert_msg(!failures[0], "jr_jw_int_text wrote a non-null for:%s", failures);
}
END_TEST

START_TEST(booleans)
{
    jr_jw_t w;
    jr_jw_init(&w, pool, 4);
    jr_jw_arr(&w);
    jr_jw_bool(&w, 1);
    jr_jw_bool(&w, 0);
    jr_jw_bool(&w, 42);
    jr_jw_bool(&w, -1);
    jr_jw_obj(&w);
    jr_jw_kbool(&w, "t", 1);
    jr_jw_kbool(&w, "f", 0);
    jr_jw_obj_end(&w);
    jr_jw_arr_end(&w);
    check_text(&w, "[true,false,true,true,{\"t\":true,\"f\":false}]");
}
END_TEST

START_TEST(raw_values)
{
    jr_jw_t w;
    jr_jw_init(&w, pool, 4);
    jr_jw_obj(&w);
    jr_jw_key(&w, "pre");
    jr_jw_raw(&w, "{\"x\":[1,2,{\"y\":null}]}");
    jr_jw_key(&w, "list");
    jr_jw_arr(&w);
    jr_jw_raw(&w, "1.5");
    jr_jw_raw(&w, "\"s\"");
    jr_jw_raw(&w, "[]");
    jr_jw_int(&w, 3);
    jr_jw_raw(&w, "{}");
    jr_jw_arr_end(&w);
    jr_jw_kint(&w, "n", 1);
    jr_jw_obj_end(&w);
    check_doc(&w, expect("{\"pre\":{\"x\":[1,2,{\"y\":null}]},"
                         "\"list\":[1.5,\"s\",[],3,{}],\"n\":1}"));
}
END_TEST

START_TEST(done_is_repeatable)
{
    jr_jw_t w;
    size_t len1, len2;
    const char *a, *b;
    jr_jw_init(&w, pool, 4);
    jr_jw_arr(&w);
    jr_jw_int(&w, 1);
    jr_jw_arr_end(&w);
    a = jr_jw_done(&w, &len1);
    b = jr_jw_done(&w, NULL);
    jr_jw_done(&w, &len2);
    ck_assert_str_eq(a, "[1]");
    ck_assert_str_eq(b, "[1]");
    ck_assert_uint_eq(len1, 3);
    ck_assert_uint_eq(len2, 3);
}
END_TEST

/* ---- flushing ---------------------------------------------------------------------------- */

/* A flush callback's sink: every byte handed on, the number and largest size of the calls,
 * and a call from which on it refuses (0: never). */
typedef struct {
    char *data;
    size_t len, cap, largest;
    int calls, fail_at;
} sink_t;

static int sink_take(void *baton, const char *data, size_t len)
{
    sink_t *k = baton;
    ++k->calls;
    if (k->fail_at && k->calls >= k->fail_at) {
        return -1;
    }
    if (k->len + len > k->cap) {
        k->cap = (k->len + len) * 2;
        k->data = realloc(k->data, k->cap);
        ck_assert_ptr_nonnull(k->data);
    }
    memcpy(k->data + k->len, data, len);
    k->len += len;
    k->largest = len > k->largest ? len : k->largest;
    return 0;
}

/* An array of items objects, each with a text of text_len characters (quotes and newlines
 * among them, so escapes cross the flush points). */
static void write_items(jr_jw_t *w, int items, size_t text_len)
{
    char *text = malloc(text_len + 1);
    int i;
    size_t c;
    ck_assert_ptr_nonnull(text);
    for (c = 0; c < text_len; ++c) {
        text[c] = "lorem \"ipsum\"\n"[c % 14];
    }
    text[text_len] = '\0';
    jr_jw_arr(w);
    for (i = 0; i < items; ++i) {
        jr_jw_obj(w);
        jr_jw_kint(w, "id", i);
        jr_jw_kstr(w, "text", text);
        jr_jw_obj_end(w);
    }
    jr_jw_arr_end(w);
    free(text);
}

START_TEST(flushed_document_is_the_whole_document)
{
    sink_t k = {0};
    jr_jw_t whole, w;
    const char *all, *rest;
    size_t all_len, rest_len;

    jr_jw_init(&whole, pool, 64);
    write_items(&whole, 300, 2000);
    all = jr_jw_done(&whole, &all_len);
    ck_assert_uint_gt(all_len, 10 * JR_JW_FLUSH_AT);

    jr_jw_init(&w, pool, 512 * 301); /* sized for a whole page by the caller: clamped */
    ck_assert_uint_le(w.cap, JR_JW_FLUSH_AT);
    jr_jw_set_flush(&w, sink_take, &k);
    write_items(&w, 300, 2000);
    rest = jr_jw_done(&w, &rest_len);
    /* One buffer, reused and never grown; no call passed the flush point. */
    ck_assert_uint_le(w.cap, JR_JW_FLUSH_AT);
    ck_assert_uint_le(k.largest, JR_JW_FLUSH_AT);
    ck_assert_int_ge(k.calls, (int)(all_len / JR_JW_FLUSH_AT));
    ck_assert(jr_jw_streamed(&w));
    ck_assert_uint_eq(k.len + rest_len, all_len);
    ck_assert_int_eq(memcmp(k.data, all, k.len), 0);
    ck_assert_int_eq(memcmp(rest, all + k.len, rest_len), 0);
    free(k.data);
}
END_TEST

START_TEST(small_document_is_never_flushed)
{
    sink_t k = {0};
    jr_jw_t w;
    size_t len;
    jr_jw_init(&w, pool, 256);
    jr_jw_set_flush(&w, sink_take, &k);
    write_items(&w, 20, 1000); /* ~20 KB: a list page on the hot path */
    jr_jw_done(&w, &len);
    ck_assert_int_eq(k.calls, 0);
    ck_assert(!jr_jw_streamed(&w));
    ck_assert_uint_gt(len, 20000);
    ck_assert_uint_lt(len, JR_JW_FLUSH_AT);
}
END_TEST

/* A hold keeps the document whole up to its size; past it the first flush hands on
 * everything so far, and from then on the usual flush points apply. */
START_TEST(hold_delays_the_first_flush)
{
    sink_t k = {0};
    jr_jw_t w;
    size_t len;
    jr_jw_init(&w, pool, 256);
    jr_jw_set_flush(&w, sink_take, &k);
    jr_jw_hold(&w, 4 * JR_JW_FLUSH_AT);
    write_items(&w, 100, 2000); /* ~200 KB: past 64 KiB, under the hold */
    jr_jw_done(&w, &len);
    ck_assert_int_eq(k.calls, 0);
    ck_assert_uint_gt(len, 3 * JR_JW_FLUSH_AT);

    memset(&k, 0, sizeof(k));
    jr_jw_init(&w, pool, 256);
    jr_jw_set_flush(&w, sink_take, &k);
    jr_jw_hold(&w, 4 * JR_JW_FLUSH_AT);
    write_items(&w, 400, 2000); /* ~800 KB */
    jr_jw_done(&w, &len);
    ck_assert_int_ge(k.calls, 2);
    ck_assert_uint_gt(k.largest, 3 * JR_JW_FLUSH_AT); /* the first: all held so far */
    ck_assert_uint_le(k.largest, 4 * JR_JW_FLUSH_AT);
    ck_assert_uint_le(len, JR_JW_FLUSH_AT);
    jr_jw_hold(&w, 8 * JR_JW_FLUSH_AT); /* no effect once something left */
    ck_assert_uint_eq(w.flush_at, JR_JW_FLUSH_AT);
    free(k.data);
}
END_TEST

START_TEST(string_larger_than_the_flush_point)
{
    const size_t n = 3 * JR_JW_FLUSH_AT;
    sink_t k = {0};
    char *s = malloc(n + 1), *doc;
    const char *rest;
    size_t rest_len;
    json_error_t err;
    json_t *got;
    jr_jw_t w;

    ck_assert_ptr_nonnull(s);
    memset(s, 'a', n);
    s[n] = '\0';
    jr_jw_init(&w, pool, 64);
    jr_jw_set_flush(&w, sink_take, &k);
    jr_jw_arr(&w);
    jr_jw_str(&w, "before");
    jr_jw_str(&w, s);
    jr_jw_str(&w, "after");
    jr_jw_arr_end(&w);
    rest = jr_jw_done(&w, &rest_len);
    ck_assert_int_ge(k.calls, 1);
    doc = malloc(k.len + rest_len + 1);
    ck_assert_ptr_nonnull(doc);
    memcpy(doc, k.data, k.len);
    memcpy(doc + k.len, rest, rest_len + 1);
    got = json_loadb(doc, k.len + rest_len, 0, &err);
    ck_assert_msg(got != NULL, "not JSON: %s", err.text);
    {
        json_t *want = json_pack("[s,s,s]", "before", s, "after");
        ck_assert(json_equal(got, want));
        json_decref(want);
    }
    json_decref(got);
    free(doc);
    free(s);
    free(k.data);
}
END_TEST

START_TEST(failed_flush_drops_the_rest)
{
    sink_t k = {0};
    jr_jw_t w;
    size_t len;
    k.fail_at = 2;
    jr_jw_init(&w, pool, 64);
    jr_jw_set_flush(&w, sink_take, &k);
    write_items(&w, 400, 2000); /* ~800 KB: many flush points */
    jr_jw_done(&w, &len);
    /* Not called again once it failed (the client is gone), and memory stays bounded. */
    ck_assert_int_eq(k.calls, 2);
    ck_assert(jr_jw_streamed(&w));
    ck_assert_uint_le(w.cap, JR_JW_FLUSH_AT);
    ck_assert_uint_le(len, JR_JW_FLUSH_AT);
    free(k.data);
}
END_TEST

/* ---- fuzz ------------------------------------------------------------------------------ */

/* xorshift64*: the same sequence everywhere, for reproducible failures. */
static unsigned long long rng_state;

static unsigned long long rnd(void)
{
    unsigned long long x = rng_state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    rng_state = x;
    return x * 2685821657736338717ULL;
}

static unsigned rnd_below(unsigned n)
{
    return (unsigned)(rnd() % n);
}

/* Appends one UTF-8 encoded code point (no surrogates, no NUL). */
static size_t put_cp(char *o, unsigned long cp)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xC0 | (cp >> 6));
        o[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | (cp >> 12));
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | (cp >> 18));
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

static unsigned long rnd_cp(void)
{
    unsigned long cp;
    switch (rnd_below(10)) {
    case 0: return 1 + rnd_below(0x1f);                     /* control characters */
    case 1: return "\"\\/"[rnd_below(3)];                   /* the specials */
    case 2: return 0x7f;
    case 3: return 0x80 + rnd_below(0x800 - 0x80);          /* two bytes */
    case 4:
        cp = 0x800 + rnd_below(0x10000 - 0x800);            /* three bytes, no surrogates */
        return (cp >= 0xD800 && cp <= 0xDFFF) ? 0xFFFD : cp;
    case 5: return 0x10000 + rnd_below(0x110000 - 0x10000); /* four bytes */
    default: return 0x20 + rnd_below(0x5f);                 /* printable ASCII */
    }
}

static char *rnd_string(apr_pool_t *p)
{
    unsigned n = rnd_below(6) == 0 ? rnd_below(400) : rnd_below(12);
    char *s = apr_palloc(p, (apr_size_t)n * 4 + 1), *o = s;
    unsigned i;
    for (i = 0; i < n; ++i) {
        o += put_cp(o, rnd_cp());
    }
    *o = '\0';
    return s;
}

static long long rnd_int(void)
{
    switch (rnd_below(6)) {
    case 0: return LLONG_MIN;
    case 1: return LLONG_MAX;
    case 2: return (long long)rnd();
    case 3: return -(long long)rnd_below(1000);
    default: return (long long)rnd_below(100000);
    }
}

static json_t *rnd_value(apr_pool_t *p, int depth)
{
    unsigned kind = rnd_below(depth >= 6 ? 5 : 8);
    json_t *v;
    unsigned i, n;
    switch (kind) {
    case 0: return json_null();
    case 1: return json_boolean(rnd_below(2));
    case 2: return json_integer((json_int_t)rnd_int());
    case 3:
    case 4: return json_string(rnd_string(p));
    case 5:
    case 6:
        v = json_object();
        n = rnd_below(7);
        for (i = 0; i < n; ++i) {
            json_object_set_new(v, rnd_string(p), rnd_value(p, depth + 1));
        }
        return v;
    default:
        v = json_array();
        n = rnd_below(7);
        for (i = 0; i < n; ++i) {
            json_array_append_new(v, rnd_value(p, depth + 1));
        }
        return v;
    }
}

/* Writes a jansson value with the writer, choosing among the equivalent calls at random. */
static void write_value(jr_jw_t *w, json_t *v, int depth)
{
    char num[32];
    const char *key;
    json_t *m;
    size_t i;

    if (depth > 0 && (json_is_object(v) || json_is_array(v)) && rnd_below(12) == 0) {
        char *text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
        ck_assert_ptr_nonnull(text);
        jr_jw_raw(w, text);
        free(text);
        return;
    }
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        jr_jw_obj(w);
        json_object_foreach(v, key, m) {
            if (json_is_string(m) && rnd_below(2)) {
                jr_jw_kstr(w, key, json_string_value(m));
            } else if (json_is_integer(m) && rnd_below(2)) {
                if (rnd_below(2)) {
                    jr_jw_kint(w, key, (long long)json_integer_value(m));
                } else {
                    snprintf(num, sizeof(num), "%lld", (long long)json_integer_value(m));
                    jr_jw_kint_text(w, key, num);
                }
            } else if (json_is_boolean(m) && rnd_below(2)) {
                jr_jw_kbool(w, key, json_is_true(m) ? 1 + (int)rnd_below(5) : 0);
            } else if (json_is_null(m) && rnd_below(2)) {
                rnd_below(2) ? jr_jw_kstr(w, key, NULL) : jr_jw_kint_text(w, key, NULL);
            } else {
                jr_jw_key(w, key);
                write_value(w, m, depth + 1);
            }
        }
        jr_jw_obj_end(w);
        break;
    case JSON_ARRAY:
        jr_jw_arr(w);
        json_array_foreach(v, i, m) {
            write_value(w, m, depth + 1);
        }
        jr_jw_arr_end(w);
        break;
    case JSON_STRING: jr_jw_str(w, json_string_value(v)); break;
    case JSON_INTEGER:
        if (rnd_below(2)) {
            jr_jw_int(w, (long long)json_integer_value(v));
        } else {
            snprintf(num, sizeof(num), "%lld", (long long)json_integer_value(v));
            jr_jw_int_text(w, num);
        }
        break;
    case JSON_TRUE: jr_jw_bool(w, 1); break;
    case JSON_FALSE: jr_jw_bool(w, 0); break;
    case JSON_NULL:
        switch (rnd_below(3)) {
        case 0: jr_jw_null(w); break;
        case 1: jr_jw_str(w, NULL); break;
        default: jr_jw_int_text(w, NULL); break;
        }
        break;
    default: ck_abort_msg("unexpected value type %d", (int)json_typeof(v));
    }
}

START_TEST(fuzz_random_documents)
{
    int doc;
    rng_state = 0x9E3779B97F4A7C15ULL;
    for (doc = 0; doc < 500; ++doc) {
        apr_pool_t *p;
        json_t *v, *back;
        json_error_t err;
        jr_jw_t w;
        char *dumped;

        ck_assert_int_eq(apr_pool_create(&p, pool), APR_SUCCESS);
        /* Mostly containers at the top, sometimes a scalar. */
        v = rnd_below(8) == 0 ? rnd_value(p, 6) : (rnd_below(2) ? json_object() : json_array());
        if (json_is_object(v) || json_is_array(v)) {
            unsigned i, n = 1 + rnd_below(8);
            for (i = 0; i < n; ++i) {
                json_t *m = rnd_value(p, 1);
                if (json_is_object(v)) {
                    json_object_set_new(v, rnd_string(p), m);
                } else {
                    json_array_append_new(v, m);
                }
            }
        }
        ck_assert_ptr_nonnull(v);

        /* jansson's own round trip: the expectation itself is sound. */
        dumped = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
        ck_assert_ptr_nonnull(dumped);
        back = json_loads(dumped, JSON_DECODE_ANY, &err);
        ck_assert_msg(back && json_equal(back, v), "document %d: jansson round trip failed", doc);
        json_decref(back);
        free(dumped);

        jr_jw_init(&w, p, rnd_below(3) == 0 ? 0 : 1 + rnd_below(512));
        write_value(&w, v, 0);
        check_doc(&w, v); /* consumes v */
        apr_pool_destroy(p);
    }
}
END_TEST

Suite *suite_jw(void)
{
    Suite *s = suite_create("jw");
    TCase *tc = tcase_create("structure");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, empty_containers);
    tcase_add_test(tc, nested_values);
    tcase_add_test(tc, nesting_to_the_depth_limit);
    tcase_add_test(tc, done_is_repeatable);
    suite_add_tcase(s, tc);

    tc = tcase_create("strings");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, string_escapes_exact);
    tcase_add_test(tc, string_escapes_round_trip);
    tcase_add_test(tc, utf8_is_kept_as_it_is);
    tcase_add_test(tc, keys_needing_escapes);
    tcase_add_test(tc, one_megabyte_string);
    tcase_add_test(tc, many_members_grow_the_buffer);
    suite_add_tcase(s, tc);

    tc = tcase_create("values");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, integers);
    tcase_add_test(tc, int_text_valid_digits);
    tcase_add_test(tc, int_text_null_and_non_numbers);
    tcase_add_test(tc, booleans);
    tcase_add_test(tc, raw_values);
    suite_add_tcase(s, tc);

    tc = tcase_create("flush");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, flushed_document_is_the_whole_document);
    tcase_add_test(tc, small_document_is_never_flushed);
    tcase_add_test(tc, hold_delays_the_first_flush);
    tcase_add_test(tc, string_larger_than_the_flush_point);
    tcase_add_test(tc, failed_flush_drops_the_rest);
    suite_add_tcase(s, tc);

    tc = tcase_create("fuzz");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, fuzz_random_documents);
    suite_add_tcase(s, tc);

    /* Inputs the module does not produce today, but the writer accepts without complaint. */
    tc = tcase_create("limits");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, nesting_beyond_the_depth_limit);
    tcase_add_test(tc, int_text_rejects_what_json_does_not_allow);
    suite_add_tcase(s, tc);
    return s;
}
