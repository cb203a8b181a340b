"""Indexed search (migration 0012): the same answers as a substring filter, from the index.

Every search is compared with a brute-force filter of the same data in Python, written from
the documented meaning: the trimmed term anywhere in the searched fields, case-insensitive for
ASCII letters on SQLite and for every letter PostgreSQL's lower() folds on PostgreSQL, `%`,
`_` and `\\` literal. Terms of one and two characters (which a trigram index cannot serve)
scan; longer ones are answered through the index (SQLite: a trigram FTS5 table, PostgreSQL:
pg_trgm GIN indexes).
"""

import sqlite3
import time

import pytest

import harness
from harness import assert_json, assert_ok, psql, sql_exec, sql_int, sql_scalar, sql_script

ENTRIES = [
    ("Anna Müller", "Fractions and decimals; 50% done"),
    ("ANNA MÜLLER", "fractions: revision_week"),
    ("Ärger Öztürk", "Straße und Maß"),
    ("ärger öztürk", "STRASSE"),
    ("Zoë O'Brien", "Bruchrechnung \\ backslash"),
    ("Łukasz Kowalski", "100% sure, under_score"),
    ("Ben Smith", 'He said "hello world"'),
    ("Chloé Dupont", "naïve café résumé"),
    ("Ab", "x"),
    ("Jo", "ab%cd_ef"),
    ("Kim", "ÉCOLE école"),
    ("Ola Nordmann", "Lesson one. Lesson two."),
]
STUDENTS = ["Anna Müller", "ANNA MÜLLER", "Ärger Öztürk", "Zoë O'Brien", "Jo", "Ab",
            "Per_cent 100%", "back\\slash", "Chloé Dupont"]
MODULES = [("Algebra I", "Equations, 50% of the course"), ("ALGEBRA II", "under_score names"),
           ("Ärger", "Öl und Straße"), ("Fr", "French for beginners"),
           ("Geometry", "Triangles \\ circles")]
# One and two characters (a scan), three and more (the index); mixed case, non-ASCII letters,
# wildcards, quotes, terms across words, terms that only match after trimming.
TERMS = ["a", "A", "ä", "Ä", "é", "É", "%", "_", "\\", '"', "ab", "AB", "Jo", "Öz", "öz", "ß",
         "50%", "0%", "%d", "b_e", "_sc", "o_w", "ärger", "ÄRGER", "rger", "müller", "MÜLLER",
         "anna m", "s said", '"hello', 'world"', "école", "ÉCOLE", "straße", "zzz", "  anna  ",
         "O'B", "o'b", "n two. L", "lesson", "\\ b", "k\\s", "per_c", "t 1", "ebra i", "ÖL U"]
ASCII_WS = " \t\r\n\v\f"


def ascii_lower(s):
    return "".join(chr(ord(c) + 32) if "A" <= c <= "Z" else c for c in s)


def folding(srv):
    """The database's case folding for search: SQLite's LIKE folds ASCII letters only;
    PostgreSQL's ILIKE folds what its lower() folds (every letter under a UTF-8 locale)."""
    if srv.db_kind == "pgsql" and sql_scalar(srv, "SELECT lower('ÄÉÖŁ')") == "äéöł":
        return str.lower
    return ascii_lower


def contains(fold, term, *fields):
    t = fold(term.strip(ASCII_WS))
    return any(t in fold(f) for f in fields)


@pytest.fixture
def dataset(fresh_server):
    # The searches here are about the statements and their plans: every request reads the
    # database (the response cache has tests of its own).
    srv = fresh_server(extra_conf="JournalRateLimitMax 1000000\nJournalResponseCache Off")
    tok = srv.admin_token
    branch, branch2 = srv.create_branch(), srv.create_branch()
    group, group2 = srv.create_group(branch["id"]), srv.create_group(branch2["id"])
    entries = {}
    for i, (name, desc) in enumerate(ENTRIES):
        g = group if i % 2 == 0 else group2
        e = assert_json(srv.api("POST", "/api/entries", token=tok, json={
            "student_name": name, "group_id": g["id"], "description": desc}), 201)
        entries[e["id"]] = (name, desc)
    students = {}
    for name in STUDENTS:
        s = assert_json(srv.api("POST", "/api/students", token=tok, json={
            "name": name, "group_id": group["id"]}), 201)
        students[s["id"]] = name
    modules = {}
    for name, desc in MODULES:
        m = assert_json(srv.api("POST", "/api/modules", token=tok, json={
            "name": name, "description": desc, "lessons_count": 1}), 201)
        modules[m["id"]] = (name, desc)
    key = assert_json(srv.api("POST", "/api/api-keys", token=tok, json={
        "name": "search", "scopes": ["read"], "rate_limit_per_min": 1000000}), 201)["key"]
    return {"srv": srv, "entries": entries, "students": students, "modules": modules,
            "key": key, "group": group, "branch": branch, "branch2": branch2}


def admin_list(srv, path, **params):
    r = srv.api("GET", path, token=srv.admin_token, params=dict(limit=1000, **params))
    items = assert_json(r, 200)
    return [x["id"] for x in items], int(r.headers["X-Total-Count"])


def v1_list(srv, key, path, **params):
    body = assert_json(srv.api("GET", path, headers={"X-Api-Key": key},
                               params=dict(limit=1000, **params)), 200)
    return [x["id"] for x in body["items"]], body["total"]


def search_entries(srv, key, term, **params):
    got = admin_list(srv, "/api/entries", search=term, **params)
    assert v1_list(srv, key, "/api/v1/entries", search=term, **params) == got, term
    return got


# ---- the same answers as a substring filter -----------------------------------------------
def assert_searches_equal_the_filter(srv, key, fold, term, entries, students, modules):
    """Entries, students and modules searched for term answer what the filter finds in
    entries {id: (name, description)}, students {id: name}, modules {id: (name, description)}.
    Returns whether any entry matched."""
    want = sorted((i for i, (n, d) in entries.items() if contains(fold, term, n, d)),
                  reverse=True)
    assert search_entries(srv, key, term) == (want, len(want)), repr(term)
    matched = bool(want)

    # Students match their name's key (ASCII lower case) on both databases alike.
    want = {i for i, n in students.items()
            if ascii_lower(term.strip(ASCII_WS)) in ascii_lower(n.strip(ASCII_WS))}
    got, total = admin_list(srv, "/api/students", search=term)
    assert (set(got), total) == (want, len(want)) and len(got) == total, repr(term)
    assert v1_list(srv, key, "/api/v1/students", search=term) == (got, total), repr(term)

    want = {i for i, (n, d) in modules.items() if contains(fold, term, n, d)}
    got, total = admin_list(srv, "/api/modules", search=term)
    assert (set(got), total) == (want, len(want)) and len(got) == total, repr(term)
    assert v1_list(srv, key, "/api/v1/modules", search=term) == (got, total), repr(term)
    return matched


def test_searches_equal_a_substring_filter(dataset):
    srv, key = dataset["srv"], dataset["key"]
    fold = folding(srv)
    for term in TERMS:
        assert_searches_equal_the_filter(srv, key, fold, term, dataset["entries"],
                                         dataset["students"], dataset["modules"])


def test_terms_without_non_ascii_case_answer_alike_on_both_databases(dataset):
    """Where the documented meanings of the two databases agree (no non-ASCII letter that
    differs from the data by case alone), the answer is the same on both: this filter is
    written once, without the database's folding."""
    srv, key = dataset["srv"], dataset["key"]
    by_name = {n: i for i, (n, _d) in dataset["entries"].items()}
    expected = {
        "ab": ["Jo", "Ab"],                      # two characters: scanned
        "oë": ["Zoë O'Brien"],                   # two characters, three bytes: scanned
        "50%": ["Anna Müller"],                  # % is a character, not a wildcard
        "b_e": [],                               # _ too: "ab%cd_ef" has "d_e", not "b_e"
        "%c": ["Jo"],
        "%d": [],
        "Łukasz": ["Łukasz Kowalski"],           # non-ASCII letters in the data's own case
        "anna m": ["ANNA MÜLLER", "Anna Müller"],
        "n two. L": [],
        "n one. l": ["Ola Nordmann"],            # across words and punctuation
        '"hello': ["Ben Smith"],
        "\\ b": ["Zoë O'Brien"],
        "zzz": [],
    }
    for term, names in expected.items():
        want = sorted((by_name[n] for n in names), reverse=True)
        assert search_entries(srv, key, term) == (want, len(want)), repr(term)


def test_paging_through_an_indexed_search(dataset):
    srv, key = dataset["srv"], dataset["key"]
    want, total = search_entries(srv, key, "e")  # one character: every row with an e
    assert total >= 8
    want, total = search_entries(srv, key, "ion")
    seen, cursor = [], None
    while True:
        params = {"search": "ion", "limit": 1}
        if cursor:
            params["cursor"] = cursor
        body = assert_json(srv.api("GET", "/api/v1/entries", headers={"X-Api-Key": key},
                                   params=params), 200)
        assert body["total"] == total
        seen += [x["id"] for x in body["items"]]
        cursor = body.get("next_cursor")
        if not cursor:
            break
    assert seen == want and total == len(want) >= 2
    assert admin_list(srv, "/api/entries", search="ion", offset=1)[0] == want[1:]
    # Filters combine with the search: the branch of each entry.
    b2 = dataset["branch2"]["id"]
    got = search_entries(srv, key, "öztürk", branch_id=b2)
    fold = folding(srv)
    want = sorted((i for i, (n, d) in dataset["entries"].items()
                   if contains(fold, "öztürk", n, d) and i in set(
                       admin_list(srv, "/api/entries", branch_id=b2)[0])), reverse=True)
    assert got == (want, len(want))


# Words whose beginnings (what the index is asked for) are found apart, in the other order, in
# the other column or another case; the term itself only in some.
NARROWING = [("Amara Okafor", "met on Monday"), ("Okafor Amara", "reversed"),
             ("Amadou Okapi", "Amara and Okafor are friends"), ("amara okafor", "lower case"),
             ("Mara Okafor", "a friend of Amara"), ("Kim", "AMARA OKAFOR in the notes"),
             ("Ama Oka", "short words"), ("Amaraokafor", "no space"),
             ("Chloé Duval", "CHLOÉ DUPONT visited"), ("Zoë Okafor", "zoë o'kafor")]
NARROWING_TERMS = ["Amara Okafor", "amara okafor", "AMARA OKAFOR", "Okafor Amara", "Ama Oka",
                   "mara Oka", "ra Okafor", "Amadou Okapi", "Amara", "Okafor", "a Oka",
                   "chloé dup", "CHLOÉ DUP", "Chloé Du", "zoë o'k", "Zoë Okafor", "aokaf",
                   "Amara Okafor met", "friend of"]


def test_searches_asking_the_index_for_word_beginnings_equal_a_substring_filter(dataset):
    """The index is asked for a few of the term's trigrams (the beginnings of its longest
    words): rows that have them apart, or only some of them, are candidates that the check
    drops; the answers stay those of the substring filter."""
    srv, key = dataset["srv"], dataset["key"]
    entries = dict(dataset["entries"])
    for name, desc in NARROWING:
        e = assert_json(srv.api("POST", "/api/entries", token=srv.admin_token, json={
            "student_name": name, "group_id": dataset["group"]["id"], "description": desc}), 201)
        entries[e["id"]] = (name, desc)
    fold = folding(srv)
    for term in NARROWING_TERMS:
        want = sorted((i for i, (n, d) in entries.items() if contains(fold, term, n, d)),
                      reverse=True)
        assert search_entries(srv, key, term) == (want, len(want)), repr(term)
    assert len(search_entries(srv, key, "Amara Okafor")[0]) == 3  # not the filter's blind spot


# ---- the index follows every write ----------------------------------------------------------
def fts_consistent(srv):
    """SQLite: FTS5's integrity check of each index's own structure (SQLite 3.40 does not
    compare an external-content index with its content), and for the descriptions' index a
    comparison with the content: every entry up to its bound (migration 0018) holds one
    trigram per position of its description, no other row holds any."""
    if srv.db_kind == "sqlite":
        for t in ("entries_fts", "entry_names_fts", "students_fts", "modules_fts"):
            sql_exec(srv, f"INSERT INTO {t} ({t}) VALUES ('integrity-check')")
        db = sqlite3.connect(str(srv.db_path), timeout=30)
        try:
            db.execute("CREATE VIRTUAL TABLE temp.v USING fts5vocab(main, entries_fts, instance)")
            held = dict(db.execute("SELECT doc, COUNT(*) FROM temp.v GROUP BY doc"))
            want = dict(db.execute(
                "SELECT id, length(description) - 2 FROM entries WHERE length(description) > 2"
                " AND id <= (SELECT upto FROM entries_fts_state)"))
        finally:
            db.close()
        assert held == want
        # The names' index holds exactly the names the entries carry (migration 0017).
        names = "SELECT group_concat(k, '|') FROM ({} ORDER BY 1)"
        assert sql_scalar(srv, names.format("SELECT name_key AS k FROM entry_names")) == \
            sql_scalar(srv, names.format("SELECT DISTINCT lower(student_name) AS k FROM entries"))


def found(srv, key, term):
    return search_entries(srv, key, term)[0]


def test_index_follows_create_update_move_trash_restore_delete(dataset):
    srv, key, tok = dataset["srv"], dataset["key"], dataset["srv"].admin_token
    group = dataset["group"]
    e = assert_json(srv.api("POST", "/api/entries", token=tok, json={
        "student_name": "Kiwi Person", "group_id": group["id"],
        "description": "notes about kiwifruit"}), 201)
    assert found(srv, key, "kiwifr") == [e["id"]]
    fts_consistent(srv)
    assert_json(srv.api("PUT", f"/api/entries/{e['id']}", token=tok, json={
        "description": "notes about mangoes"}), 200)
    assert found(srv, key, "kiwifr") == [] and found(srv, key, "mangoes") == [e["id"]]
    assert found(srv, key, "Kiwi Per") == [e["id"]]
    assert_json(srv.api("PUT", f"/api/entries/{e['id']}", token=tok, json={
        "student_name": "Papaya Person"}), 200)
    assert found(srv, key, "Kiwi Per") == [] and found(srv, key, "papaya") == [e["id"]]
    fts_consistent(srv)
    # Moved with its group to another branch: found there, not in the old branch.
    b2 = dataset["branch2"]["id"]
    assert_json(srv.api("PUT", f"/api/groups/{group['id']}", token=tok,
                        json={"branch_id": b2}), 200)
    assert search_entries(srv, key, "papaya", branch_id=b2)[0] == [e["id"]]
    assert search_entries(srv, key, "papaya", branch_id=dataset["branch"]["id"])[0] == []
    # The trash and back.
    assert_ok(srv.api("DELETE", f"/api/entries/{e['id']}", token=tok))
    assert found(srv, key, "papaya") == []
    assert_json(srv.api("POST", f"/api/trash/entry/{e['id']}/restore", token=tok), 200)
    assert found(srv, key, "papaya") == [e["id"]]
    fts_consistent(srv)
    # Deleted for good.
    assert_ok(srv.api("DELETE", f"/api/entries/{e['id']}", token=tok))
    assert_ok(srv.api("DELETE", f"/api/trash/entry/{e['id']}", token=tok))
    assert found(srv, key, "papaya") == []
    fts_consistent(srv)
    # Students (renamed, deleted) and modules (renamed, trashed, restored).
    s = assert_json(srv.api("POST", "/api/students", token=tok, json={
        "name": "Quokka Jones", "group_id": group["id"]}), 201)
    assert admin_list(srv, "/api/students", search="quokka")[0] == [s["id"]]
    assert_json(srv.api("PUT", f"/api/students/{s['id']}", token=tok,
                        json={"name": "Wombat Jones"}), 200)
    assert admin_list(srv, "/api/students", search="quokka")[0] == []
    assert admin_list(srv, "/api/students", search="wombat")[0] == [s["id"]]
    assert_ok(srv.api("DELETE", f"/api/students/{s['id']}", token=tok))
    assert admin_list(srv, "/api/students", search="wombat")[0] == []
    m = assert_json(srv.api("POST", "/api/modules", token=tok, json={
        "name": "Astronomy", "lessons_count": 1}), 201)
    assert_json(srv.api("PUT", f"/api/modules/{m['id']}", token=tok, json={
        "description": "telescopes"}), 200)
    assert admin_list(srv, "/api/modules", search="telesc")[0] == [m["id"]]
    assert_ok(srv.api("DELETE", f"/api/modules/{m['id']}", token=tok))
    assert admin_list(srv, "/api/modules", search="telesc")[0] == []
    assert_json(srv.api("POST", f"/api/trash/module/{m['id']}/restore", token=tok), 200)
    assert admin_list(srv, "/api/modules", search="telesc")[0] == [m["id"]]
    fts_consistent(srv)


def test_index_follows_a_backup_restore(dataset):
    srv, key, tok = dataset["srv"], dataset["key"], dataset["srv"].admin_token
    before = found(srv, key, "fractions")
    assert len(before) == 2
    b = assert_json(srv.api("POST", "/api/backups", token=tok), 201)
    e = assert_json(srv.api("POST", "/api/entries", token=tok, json={
        "student_name": "After Backup", "group_id": dataset["group"]["id"],
        "description": "fractions again"}), 201)
    gone = next(iter(dataset["entries"]))
    assert_ok(srv.api("DELETE", f"/api/entries/{gone}", token=tok))
    assert_json(srv.api("POST", f"/api/backups/{b['name']}/restore", token=tok), 200)
    srv._admin_token = None
    key = assert_json(srv.api("POST", "/api/api-keys", token=srv.admin_token, json={
        "name": "search2", "scopes": ["read"], "rate_limit_per_min": 1000000}), 201)["key"]  # a restore drops every key
    assert found(srv, key, "fractions") == before and e["id"] not in before
    assert found(srv, key, "after back") == []
    fts_consistent(srv)


def test_migration_indexes_the_rows_written_before_it(dataset):
    """The backfill: rows written before 0012 are found once it has run."""
    srv, key = dataset["srv"], dataset["key"]
    want = found(srv, key, "fractions")
    srv.stop()
    if srv.db_kind == "sqlite":
        undo = "".join(f"DROP TABLE {t}_fts;" for t in ("entries", "students", "modules"))
        undo += "".join(f"DROP TRIGGER {t}_fts_{op};" for t in ("entries", "students", "modules")
                        for op in ("insert", "update", "delete"))
        # 0017 gives the names an index of their own and entries_fts the descriptions only.
        undo += ("DROP TRIGGER entries_names_update; DROP TRIGGER entry_names_fts_insert;"
                 " DROP TRIGGER entry_names_fts_delete; DROP TABLE entry_names_fts;"
                 " DROP TABLE entry_names; DROP INDEX entries_student_key;"
                 # 0018 lets new entries join the descriptions' index in batches.
                 " DROP TABLE entries_fts_state;")
    else:
        undo = "".join(f"DROP INDEX {i};" for i in (
            "entries_search_trgm", "students_name_key_trgm", "modules_name_trgm",
            "modules_description_trgm"))
    # 0014 replaces the entries' indexes of 0012 on PostgreSQL, 0017 and 0018 those of SQLite:
    # all run again.
    sql_script(srv, undo + "DELETE FROM schema_migrations WHERE version IN (12, 14, 17, 18);")
    srv.start()
    assert sql_int(srv, "SELECT COUNT(*) FROM schema_migrations"
                        " WHERE version IN (12, 14, 17, 18)") == 4
    assert found(srv, key, "fractions") == want and len(want) == 2
    fts_consistent(srv)


# ---- the index serves the searches ----------------------------------------------------------
@pytest.mark.skipif(harness.DB_KIND != "pgsql", reason="PostgreSQL's index statistics")
def test_pg_search_uses_the_trigram_index(dataset):
    """A selective term on a table large enough for the planner to prefer the index: the
    trigram index is scanned (pg_stat_user_indexes), and the total matches the rows. (The
    SQLite plans are checked on the catalogue's texts: unit test search_plans_use_the_index.)"""
    srv, key = dataset["srv"], dataset["key"]
    g, b = dataset["group"]["id"], dataset["branch"]["id"]
    psql(f"INSERT INTO entries (student_name, group_id, branch_id, description, created_at,"
         f" updated_at) SELECT 'Filler ' || i, {g}, {b}, 'routine notes number ' || i,"
         f" '2026-11-01T10:00:00Z', '2026-11-01T10:00:00Z' FROM generate_series(1, 20000) i",
         dbname=srv.pg_dbname)
    # What autovacuum does after a burst of inserts: GIN's own statistics, which the planner's
    # cost of the index depends on, and the table's.
    psql("VACUUM ANALYZE entries", dbname=srv.pg_dbname)

    def scans():
        return sql_int(srv, "SELECT COALESCE(SUM(idx_scan), 0) FROM pg_stat_user_indexes"
                            " WHERE indexrelname LIKE 'entries_%_trgm'")

    fold = folding(srv)
    want = sorted((i for i, (n, d) in dataset["entries"].items()
                   if contains(fold, "Öztürk", n, d)), reverse=True)
    start = scans()
    for _ in range(8):  # past PostgreSQL's five custom plans: the generic plan too
        assert search_entries(srv, key, "Öztürk") == (want, len(want))
    deadline = time.monotonic() + 40  # backends report their statistics when idle (~10 s)
    # 16 requests (/api and /api/v1), each reading the index over both columns (migration
    # 0014) once: the total and the page's ids come from one statement.
    while scans() < start + 16 and time.monotonic() < deadline:
        time.sleep(1)
    assert scans() >= start + 16
    assert sql_int(srv, "SELECT COUNT(*) FROM pg_indexes WHERE tablename = 'entries'"
                        " AND indexdef LIKE '%gin_trgm_ops%'") == 1
    # Planning a search tests its patterns against the statistics of these columns: kept
    # short (migration 0014), it costs a fraction of the default target's.
    assert sql_scalar(srv, "SELECT string_agg(attstattarget::text, ',' ORDER BY attname)"
                           " FROM pg_attribute WHERE attrelid IN ('entries'::regclass,"
                           " 'entries_search_trgm'::regclass) AND attnum > 0"
                           " AND attname IN ('student_name', 'description', 'expr')") == "10,10,10"


@pytest.mark.skipif(harness.DB_KIND != "pgsql", reason="PostgreSQL's extension")
def test_pg_migration_names_the_fix_when_pg_trgm_cannot_be_created(fresh_server):
    """A role that does not own the database may not create the extension: migration 0012
    stops with the fix in its message and applies once a superuser created it."""
    srv = fresh_server(start=False)
    role = "jr_noext_" + srv.pg_dbname[-8:]
    psql(f"CREATE ROLE {role} LOGIN", dbname=srv.pg_dbname)
    try:
        psql(f"GRANT CREATE ON SCHEMA public TO {role}", dbname=srv.pg_dbname)
        srv.dbd_params = srv.dbd_params.replace("user=postgres", f"user={role}")
        proc = srv.admin_cli("migrate")
        assert proc.returncode != 0, proc.stdout + proc.stderr
        out = proc.stdout + proc.stderr
        assert "migration 0012 needs the pg_trgm extension" in out, out
        assert f"CREATE EXTENSION pg_trgm; in database {srv.pg_dbname}" in out, out
        assert sql_int(srv, "SELECT MAX(version) FROM schema_migrations") == 11
        psql("CREATE EXTENSION pg_trgm", dbname=srv.pg_dbname)
        proc = srv.admin_cli("migrate")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert sql_int(srv, "SELECT COUNT(*) FROM schema_migrations WHERE version IN (12, 14)") == 2
    finally:
        psql(f"REASSIGN OWNED BY {role} TO postgres", dbname=srv.pg_dbname, check=False)
        psql(f"DROP OWNED BY {role}", dbname=srv.pg_dbname, check=False)
        psql(f"DROP ROLE {role}", check=False)


# ---- the names' own index (SQLite, migration 0017) ------------------------------------------
def name_keys(srv):
    return sql_scalar(srv, "SELECT group_concat(name_key, '|') FROM"
                           " (SELECT name_key FROM entry_names ORDER BY 1)")


@pytest.mark.skipif(harness.DB_KIND != "sqlite", reason="SQLite's index of the names")
def test_names_index_keeps_each_name_once_and_drops_it_with_its_last_entry(dataset):
    srv, key, tok = dataset["srv"], dataset["key"], dataset["srv"].admin_token
    group = dataset["group"]

    def create(name, desc):
        return assert_json(srv.api("POST", "/api/entries", token=tok, json={
            "student_name": name, "group_id": group["id"], "description": desc}), 201)["id"]

    # One key for a name in any ASCII case; an entry whose name and description both match
    # is found and counted once.
    a = create("Zorba Quill", "first lesson")
    b = create("ZORBA QUILL", "Zorba Quill read aloud")
    c = create("zorba quill", "third lesson")
    assert "zorba quill" in name_keys(srv).split("|")
    assert sql_int(srv, "SELECT COUNT(*) FROM entry_names WHERE name_key = 'zorba quill'") == 1
    assert search_entries(srv, key, "rba Qui") == (sorted([a, b, c], reverse=True), 3)
    assert search_entries(srv, key, "Zorba Quill read") == ([b], 1)
    fts_consistent(srv)
    # A rename moves the entry to the new name; the old name stays while an entry has it.
    assert_json(srv.api("PUT", f"/api/entries/{a}", token=tok,
                        json={"student_name": "Yannis Quill"}), 200)
    assert found(srv, key, "zorba") == [c, b] and found(srv, key, "yannis") == [a]
    fts_consistent(srv)
    # In the trash a name is kept (the entry can come back); purged, it is gone with its last
    # entry, and nothing of it stays in the index.
    for e in (b, c):
        assert_ok(srv.api("DELETE", f"/api/entries/{e}", token=tok))
    assert found(srv, key, "zorba") == []
    assert "zorba quill" in name_keys(srv).split("|")
    assert_ok(srv.api("DELETE", f"/api/trash/entry/{b}", token=tok))
    assert "zorba quill" in name_keys(srv).split("|")
    assert_ok(srv.api("DELETE", f"/api/trash/entry/{c}", token=tok))
    assert "zorba quill" not in name_keys(srv).split("|")
    assert sql_int(srv, "SELECT COUNT(*) FROM entry_names_fts WHERE entry_names_fts MATCH"
                        " '\"zorba\"'") == 0
    fts_consistent(srv)
    # A rename to a name in another case keeps the one key.
    assert_json(srv.api("PUT", f"/api/entries/{a}", token=tok,
                        json={"student_name": "YANNIS QUILL"}), 200)
    assert found(srv, key, "yannis q") == [a]
    fts_consistent(srv)
