"""SQLite: new entries join the descriptions' search index in batches (migration 0018).

Entries above entries_fts_state.upto are the backlog: the index does not hold them yet, and
every search reads them directly. A process indexes the backlog in a write transaction of its
own once its writers have added 64 entries. What a search answers never depends on it: every
search here is compared with a filter of the same data in Python, before and after the
backlog is indexed, and the index is checked to hold exactly the descriptions of the entries
up to its bound (trigram by trigram) and nothing of those above it.
"""

import re
import sqlite3

import pytest

import harness
from harness import assert_json, assert_ok, sql_exec, sql_int

pytestmark = pytest.mark.skipif(harness.DB_KIND != "sqlite",
                                reason="SQLite's full-text index (PostgreSQL: pg_trgm)")

BATCH = 64
# The test servers run two children, each with a count of its own: this many new entries
# bring at least one of them to a batch whatever the children's share.
ONE_BATCH_AT_LEAST = 2 * BATCH + 1


@pytest.fixture
def srv(fresh_server):
    srv = fresh_server(extra_conf="JournalRateLimitMax 1000000\nJournalResponseCache Off")
    srv.group = srv.create_group(srv.create_branch()["id"])
    srv.key = assert_json(srv.api("POST", "/api/api-keys", token=srv.admin_token, json={
        "name": "backlog", "scopes": ["read", "write"], "rate_limit_per_min": 1000000}),
        201)["key"]
    srv.entries = {}  # id: (name, description), as the test wrote them
    return srv


def create(srv, name, description):
    e = assert_json(srv.api("POST", "/api/v1/entries", headers={"X-Api-Key": srv.key}, json={
        "student_name": name, "group_id": srv.group["id"], "description": description}), 201)
    srv.entries[e["id"]] = (name, description)
    return e["id"]


def create_many(srv, n, word):
    return [create(srv, f"Writer {word} {i}", f"{word} lesson {i}: notes") for i in range(n)]


def upto(srv):
    return sql_int(srv, "SELECT upto FROM entries_fts_state")


def search(srv, term):
    """The ids and total of a search, the same through /api and /api/v1."""
    r = srv.api("GET", "/api/entries", token=srv.admin_token,
                params={"search": term, "limit": 1000})
    ids = [x["id"] for x in assert_json(r, 200)]
    body = assert_json(srv.api("GET", "/api/v1/entries", headers={"X-Api-Key": srv.key},
                               params={"search": term, "limit": 1000}), 200)
    assert ([x["id"] for x in body["items"]], body["total"]) == (ids, int(r.headers["X-Total-Count"]))
    return ids, body["total"]


def assert_search_is_the_filter(srv, *terms):
    for term in terms:
        want = sorted((i for i, (n, d) in srv.entries.items()
                       if term.lower() in n.lower() or term.lower() in d.lower()), reverse=True)
        assert search(srv, term) == (want, len(want)), term


def index_is_exact(srv):
    """The descriptions' index holds every entry up to its bound with exactly the trigrams of
    its description (case folded), and nothing of any other row. ASCII text only, where the
    index's folding is Python's."""
    db = sqlite3.connect(str(srv.db_path), timeout=30)
    try:
        db.execute("CREATE VIRTUAL TABLE temp.v USING fts5vocab(main, entries_fts, instance)")
        held = {}
        for term, doc in db.execute("SELECT term, doc FROM temp.v"):
            held.setdefault(doc, []).append(term)
        bound = db.execute("SELECT upto FROM entries_fts_state").fetchone()[0]
        want = {}
        for i, d in db.execute("SELECT id, description FROM entries WHERE id <= ?", (bound,)):
            assert d.isascii(), d
            grams = [d.lower()[k:k + 3] for k in range(len(d) - 2)]
            if grams:
                want[i] = sorted(grams)
        assert {doc: sorted(terms) for doc, terms in held.items()} == want
    finally:
        db.close()


def refuse_passes(srv):
    """Every pass fails (its move of the bound is refused): the backlog stays."""
    sql_exec(srv, "CREATE TRIGGER refuse_pass BEFORE UPDATE ON entries_fts_state"
                  " BEGIN SELECT RAISE(ABORT, 'refused by the test'); END")


def test_new_entries_are_found_before_they_are_indexed(srv):
    refuse_passes(srv)  # whichever process writes, nothing gets indexed
    first = create(srv, "Kiwi Person", "notes about kiwifruit")
    ids = create_many(srv, 5, "papaya") + [first]
    assert upto(srv) < min(ids)  # all in the backlog
    assert_search_is_the_filter(srv, "kiwifr", "Kiwi Per", "papaya", "lesson 3", "zzz")
    # Changed and deleted while in the backlog: the index had nothing of them to take out.
    assert_json(srv.api("PUT", f"/api/entries/{first}", token=srv.admin_token,
                        json={"description": "notes about mangoes"}), 200)
    srv.entries[first] = ("Kiwi Person", "notes about mangoes")
    gone = ids[0]
    assert_ok(srv.api("DELETE", f"/api/entries/{gone}", token=srv.admin_token))
    assert_ok(srv.api("DELETE", f"/api/trash/entry/{gone}", token=srv.admin_token))
    del srv.entries[gone]
    assert_search_is_the_filter(srv, "kiwifr", "mangoes", "papaya", "lesson 0", "notes")
    assert upto(srv) < min(ids)
    index_is_exact(srv)


def test_a_batch_indexes_the_backlog_and_answers_stay_the_same(srv):
    early = create(srv, "Early Bird", "written before the batch: kiwifruit")
    terms = ("kiwifr", "lesson 1", "batchword", "Writer batchword 12", "zzz")
    create_many(srv, 3, "batchword")
    assert_search_is_the_filter(srv, *terms)
    ids = create_many(srv, ONE_BATCH_AT_LEAST, "batchword")
    # One child reached a batch and indexed every entry there was at that moment.
    assert upto(srv) >= early + BATCH - 1
    assert upto(srv) <= max(ids)
    index_is_exact(srv)
    assert_search_is_the_filter(srv, *terms)
    # An indexed entry changed and deleted: the triggers keep the index exact.
    assert_json(srv.api("PUT", f"/api/entries/{early}", token=srv.admin_token,
                        json={"description": "now about mangoes"}), 200)
    srv.entries[early] = ("Early Bird", "now about mangoes")
    index_is_exact(srv)
    assert_search_is_the_filter(srv, "kiwifr", "mangoes")
    gone = ids[0]
    assert gone <= upto(srv)
    assert_ok(srv.api("DELETE", f"/api/entries/{gone}", token=srv.admin_token))
    assert_ok(srv.api("DELETE", f"/api/trash/entry/{gone}", token=srv.admin_token))
    del srv.entries[gone]
    index_is_exact(srv)
    assert_search_is_the_filter(srv, *terms)


def test_a_failed_pass_leaves_the_backlog_searchable(srv):
    # The pass's move of the bound is refused: its whole transaction is undone.
    refuse_passes(srv)
    before = upto(srv)
    ids = create_many(srv, ONE_BATCH_AT_LEAST, "failing")
    assert re.search(r"JR12121: indexing new entries for search failed \(they stay searchable\):"
                     r" refused by the test", srv.read_error_log())
    assert upto(srv) == before
    index_is_exact(srv)  # nothing of the failed pass stayed in the index
    assert_search_is_the_filter(srv, "failing", "lesson 100", "notes")
    # The next batch indexes the whole backlog.
    sql_exec(srv, "DROP TRIGGER refuse_pass")
    more = create_many(srv, ONE_BATCH_AT_LEAST, "second")
    assert upto(srv) >= max(ids) and upto(srv) <= max(more)
    index_is_exact(srv)
    assert_search_is_the_filter(srv, "failing", "second lesson 7", "notes")


def test_a_new_process_indexes_what_earlier_ones_left(srv):
    """The counts of new entries are the processes': entries left in the backlog by processes
    that ended are indexed by the first write of the next ones, whatever it writes."""
    refuse_passes(srv)
    ids = create_many(srv, 5, "leftover")
    assert upto(srv) < min(ids)
    sql_exec(srv, "DROP TRIGGER refuse_pass")
    srv.stop()
    srv.start()
    srv.create_group(srv.create_branch()["id"])  # a write, no entry
    assert upto(srv) == max(ids)
    index_is_exact(srv)
    assert_search_is_the_filter(srv, "leftover", "lesson 4")
