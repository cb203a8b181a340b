-- Indexed search: trigram full-text tables over the searched columns, external content (the
-- text lives once, in the base table), kept in step by triggers. The tokenizer folds case for
-- every letter, where LIKE folds ASCII only: the index finds a superset of the rows, and every
-- search checks the candidates with the same LIKE as before, so no answer changes.
CREATE VIRTUAL TABLE entries_fts USING fts5(
    student_name, description, content = 'entries', content_rowid = 'id',
    tokenize = 'trigram case_sensitive 0');
CREATE VIRTUAL TABLE students_fts USING fts5(
    name_key, content = 'students', content_rowid = 'id', tokenize = 'trigram case_sensitive 0');
CREATE VIRTUAL TABLE modules_fts USING fts5(
    name, description, content = 'modules', content_rowid = 'id',
    tokenize = 'trigram case_sensitive 0');

-- An external-content table forgets a row by being given its old values ('delete').
CREATE TRIGGER entries_fts_insert AFTER INSERT ON entries BEGIN
    INSERT INTO entries_fts (rowid, student_name, description)
        VALUES (NEW.id, NEW.student_name, NEW.description);
END;
CREATE TRIGGER entries_fts_delete AFTER DELETE ON entries BEGIN
    INSERT INTO entries_fts (entries_fts, rowid, student_name, description)
        VALUES ('delete', OLD.id, OLD.student_name, OLD.description);
END;
CREATE TRIGGER entries_fts_update AFTER UPDATE OF student_name, description ON entries BEGIN
    INSERT INTO entries_fts (entries_fts, rowid, student_name, description)
        VALUES ('delete', OLD.id, OLD.student_name, OLD.description);
    INSERT INTO entries_fts (rowid, student_name, description)
        VALUES (NEW.id, NEW.student_name, NEW.description);
END;

CREATE TRIGGER students_fts_insert AFTER INSERT ON students BEGIN
    INSERT INTO students_fts (rowid, name_key) VALUES (NEW.id, NEW.name_key);
END;
CREATE TRIGGER students_fts_delete AFTER DELETE ON students BEGIN
    INSERT INTO students_fts (students_fts, rowid, name_key) VALUES ('delete', OLD.id, OLD.name_key);
END;
CREATE TRIGGER students_fts_update AFTER UPDATE OF name_key ON students BEGIN
    INSERT INTO students_fts (students_fts, rowid, name_key) VALUES ('delete', OLD.id, OLD.name_key);
    INSERT INTO students_fts (rowid, name_key) VALUES (NEW.id, NEW.name_key);
END;

CREATE TRIGGER modules_fts_insert AFTER INSERT ON modules BEGIN
    INSERT INTO modules_fts (rowid, name, description) VALUES (NEW.id, NEW.name, NEW.description);
END;
CREATE TRIGGER modules_fts_delete AFTER DELETE ON modules BEGIN
    INSERT INTO modules_fts (modules_fts, rowid, name, description)
        VALUES ('delete', OLD.id, OLD.name, OLD.description);
END;
CREATE TRIGGER modules_fts_update AFTER UPDATE OF name, description ON modules BEGIN
    INSERT INTO modules_fts (modules_fts, rowid, name, description)
        VALUES ('delete', OLD.id, OLD.name, OLD.description);
    INSERT INTO modules_fts (rowid, name, description) VALUES (NEW.id, NEW.name, NEW.description);
END;

-- The rows written before this migration.
INSERT INTO entries_fts (entries_fts) VALUES ('rebuild');
INSERT INTO students_fts (students_fts) VALUES ('rebuild');
INSERT INTO modules_fts (modules_fts) VALUES ('rebuild');
