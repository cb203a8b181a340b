-- A search that matches a student's name read every entry of every name sharing its trigrams:
-- names repeat across entries (a student has many), so each trigram of a name is in thousands
-- of entries, and the full-text index stepped through all of them (docs/architecture.md
-- §7.13). The names now have an index of their own, over the distinct names (lower-cased as
-- ASCII, as LIKE folds them), and the entries of a name are found through an index on that
-- same key; entries_fts keeps the descriptions only. A search asks both and checks every
-- candidate with the same LIKE as before, so no answer changes.
--
-- A name leaves the index with the last entry (deleted or not) that carries it: nothing of a
-- purged entry stays behind. An insert of a known name only looks it up.
DROP TRIGGER entries_fts_insert;
DROP TRIGGER entries_fts_delete;
DROP TRIGGER entries_fts_update;
DROP TABLE entries_fts;

CREATE VIRTUAL TABLE entries_fts USING fts5(
    description, content = 'entries', content_rowid = 'id',
    tokenize = 'trigram case_sensitive 0');

CREATE TABLE entry_names (
    id        INTEGER PRIMARY KEY,
    name_key  TEXT NOT NULL UNIQUE
);
CREATE VIRTUAL TABLE entry_names_fts USING fts5(
    name_key, content = 'entry_names', content_rowid = 'id',
    tokenize = 'trigram case_sensitive 0');
CREATE INDEX entries_student_key ON entries(lower(student_name));

CREATE TRIGGER entry_names_fts_insert AFTER INSERT ON entry_names BEGIN
    INSERT INTO entry_names_fts (rowid, name_key) VALUES (NEW.id, NEW.name_key);
END;
CREATE TRIGGER entry_names_fts_delete AFTER DELETE ON entry_names BEGIN
    INSERT INTO entry_names_fts (entry_names_fts, rowid, name_key)
        VALUES ('delete', OLD.id, OLD.name_key);
END;

CREATE TRIGGER entries_fts_insert AFTER INSERT ON entries BEGIN
    INSERT INTO entries_fts (rowid, description) VALUES (NEW.id, NEW.description);
    INSERT OR IGNORE INTO entry_names (name_key) VALUES (lower(NEW.student_name));
END;
CREATE TRIGGER entries_fts_delete AFTER DELETE ON entries BEGIN
    INSERT INTO entries_fts (entries_fts, rowid, description)
        VALUES ('delete', OLD.id, OLD.description);
    DELETE FROM entry_names WHERE name_key = lower(OLD.student_name) AND NOT EXISTS
        (SELECT 1 FROM entries WHERE lower(student_name) = lower(OLD.student_name));
END;
CREATE TRIGGER entries_fts_update AFTER UPDATE OF description ON entries
WHEN OLD.description IS NOT NEW.description BEGIN
    INSERT INTO entries_fts (entries_fts, rowid, description)
        VALUES ('delete', OLD.id, OLD.description);
    INSERT INTO entries_fts (rowid, description) VALUES (NEW.id, NEW.description);
END;
CREATE TRIGGER entries_names_update AFTER UPDATE OF student_name ON entries
WHEN lower(OLD.student_name) IS NOT lower(NEW.student_name) BEGIN
    INSERT OR IGNORE INTO entry_names (name_key) VALUES (lower(NEW.student_name));
    DELETE FROM entry_names WHERE name_key = lower(OLD.student_name) AND NOT EXISTS
        (SELECT 1 FROM entries WHERE lower(student_name) = lower(OLD.student_name));
END;

INSERT INTO entry_names (name_key) SELECT DISTINCT lower(student_name) FROM entries;
INSERT INTO entries_fts (entries_fts) VALUES ('rebuild');
-- A rebuilt index makes later inserts dearer until it is optimised (migration 0016).
INSERT INTO entries_fts (entries_fts) VALUES ('optimize');
INSERT INTO entry_names_fts (entry_names_fts) VALUES ('optimize');
