-- New entries join the descriptions' trigram index in batches instead of one by one. FTS5
-- writes a segment of its own at the end of every statement that adds to it, and merges those
-- segments as it goes: an entry indexed by its own INSERT was nearly half of a new entry's
-- write transaction, which every writer waits for (docs/architecture.md §7.25). Indexed
-- 64 at a time, in one statement, an entry costs about a tenth of that.
--
-- entries_fts_state.upto is the highest entry id the index holds. Entries above it are the
-- backlog: every search reads them directly (the search's candidates are the index's matches
-- and the backlog, all checked by the same LIKE as before), so no answer changes. The module
-- indexes the backlog in its own short write transaction after a writer has left the write
-- queue, once its process has added 64 entries (jr_db_sqlite.c). Triggers keep the index
-- exact for the rows it holds and leave the backlog's rows alone: an update or a delete of an
-- entry the index does not hold yet has nothing to take out of it.
CREATE TABLE entries_fts_state (
    id    INTEGER PRIMARY KEY CHECK (id = 1),
    upto  INTEGER NOT NULL
);
-- Every entry is indexed at this point (the triggers of 0017 indexed each one).
INSERT INTO entries_fts_state (id, upto) VALUES (1, COALESCE((SELECT MAX(id) FROM entries), 0));

DROP TRIGGER entries_fts_insert;
DROP TRIGGER entries_fts_delete;
DROP TRIGGER entries_fts_update;

-- Ids only grow (AUTOINCREMENT), so a new entry is always in the backlog; one given an id at
-- or under upto by hand is indexed at once rather than never.
CREATE TRIGGER entries_fts_insert AFTER INSERT ON entries BEGIN
    INSERT INTO entries_fts (rowid, description)
        SELECT NEW.id, NEW.description WHERE NEW.id <= (SELECT upto FROM entries_fts_state);
    INSERT OR IGNORE INTO entry_names (name_key) VALUES (lower(NEW.student_name));
END;
CREATE TRIGGER entries_fts_delete AFTER DELETE ON entries BEGIN
    INSERT INTO entries_fts (entries_fts, rowid, description)
        SELECT 'delete', OLD.id, OLD.description
        WHERE OLD.id <= (SELECT upto FROM entries_fts_state);
    DELETE FROM entry_names WHERE name_key = lower(OLD.student_name) AND NOT EXISTS
        (SELECT 1 FROM entries WHERE lower(student_name) = lower(OLD.student_name));
END;
CREATE TRIGGER entries_fts_update AFTER UPDATE OF description ON entries
WHEN OLD.description IS NOT NEW.description
     AND OLD.id <= (SELECT upto FROM entries_fts_state) BEGIN
    INSERT INTO entries_fts (entries_fts, rowid, description)
        VALUES ('delete', OLD.id, OLD.description);
    INSERT INTO entries_fts (rowid, description) VALUES (NEW.id, NEW.description);
END;
