"""What the index is asked for must never change an answer.

A search of three characters or more asks the index for a few of the term's trigrams only
(jr_search_term(): the beginnings of its two longest words) and checks the candidates with
the term's own pattern. These terms are shaped to break such a plan: trigrams that span a
word boundary, repeated trigrams and words, a trigram that no row has, a term that is a whole
field, case and non-ASCII letters, wildcards and quotes, terms longer than any field. Each
answer is compared with the substring filter of test_search_index (the documented meaning),
for entries, students and modules, on the database of the run.
"""

from harness import assert_json
from test_search_index import (assert_searches_equal_the_filter, dataset,  # noqa: F401
                               folding, search_entries)

# (student name, description)
ENTRIES = [
    ("Amara Okafor", "Amara Okafor"),                 # the term is the whole of both fields
    ("Tamara Okafor", "met Amara"),                   # a word that ends with another's start
    ("Amara Okafo", "r Okafor"),                      # the term split across the two fields
    ("Okafor", "Amara"),
    ("Amaraokafor", "rokaf"),
    ("Amara  Okafor", "two spaces"),                  # the windows are there, the term is not
    ("abcabcabc", "aaaaaaa"),                         # repeated trigrams
    ("Okafor Okafor", "abc abc abc"),                 # repeated words
    ("Ben Quux", "fractions; fractions again"),
    ("Łódź Żółć", "ΑΘΉΝΑ αθήνα"),                     # non-ASCII, both cases
    ("łódź żółć", "Москва МОСКВА"),
    ("東京都 太郎", "😀😀😀 emoji 😀"),                  # three- and four-byte characters
    ("Chloé Dupont", "CAFÉ café Cafe"),
    ("50% Off", "a_b%c\\d \"quoted\" 'single'"),
    ("a b c", "x y z"),                              # no word of three characters
    ("x", "tab\there, newline\nthere"),
]
# Each shape at least once against the rows above; "Okafox" and "qqq amara" ask the index for
# trigrams that no row has, or for one that it has beside one that it has not.
TERMS = [
    "Amara Okafor", "amara okafor", "AMARA OKAFOR", "mara Okafor", "ra Oka", "a Okafor",
    "Amara Okafo", "Okafor Amara", "Amara  Okafor", "araokaf", "Okafor Okafor", "for Oka",
    "abcabc", "cabca", "aaaa", "aaaaaaaa", "abc abc", "c abc a", "Okafox", "qqq amara",
    "Amara Okafoxx", "fractions; fractions again", "fractions again", "Ben Quux",
    "łódź", "ŁÓDŹ", "Łódź Żółć", "ódź ż", "αθήνα", "ΑΘΉΝΑ", "москва", "Москва МОСКВА",
    "東京都", "京都 太", "😀😀😀", "😀 emo", "café", "CAFÉ", "afé ca", "Cafe", "50%", "0% O",
    "a_b%c", "b%c\\d", '"quoted"', "d \"q", "'single'", "a b c", "b c", "a b", "x y z",
    "tab\there", "e, newline", "Amara Okafor " * 20, "x" * 300,
]


def test_plan_shaped_terms_equal_a_substring_filter(dataset):
    srv, key, tok = dataset["srv"], dataset["key"], dataset["srv"].admin_token
    entries, students, modules = (dict(dataset[k]) for k in ("entries", "students", "modules"))
    for name, desc in ENTRIES:
        e = assert_json(srv.api("POST", "/api/entries", token=tok, json={
            "student_name": name, "group_id": dataset["group"]["id"], "description": desc}), 201)
        entries[e["id"]] = (name, desc)
        s = assert_json(srv.api("POST", "/api/students", token=tok, json={
            "name": name, "group_id": dataset["group"]["id"]}), 201)
        students[s["id"]] = name
        m = assert_json(srv.api("POST", "/api/modules", token=tok, json={
            "name": name, "description": desc, "lessons_count": 1}), 201)
        modules[m["id"]] = (name, desc)
    fold = folding(srv)
    matched = sum(assert_searches_equal_the_filter(srv, key, fold, term, entries, students,
                                                   modules) for term in TERMS)
    # The filter itself is not blind: most of these terms find rows; the whole name is in two
    # rows, not in the ones that have its words apart, split or with two spaces.
    assert matched >= 40, matched
    by_name = {n: i for i, (n, _d) in entries.items()}
    assert search_entries(srv, key, "Amara Okafor")[0] == sorted(
        (by_name["Amara Okafor"], by_name["Tamara Okafor"]), reverse=True)
