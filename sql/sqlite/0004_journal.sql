-- The journal's records: students, modules, entries with files and photos, and the
-- queue of AI text checks the worker consumes.

CREATE TABLE students (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    name        TEXT NOT NULL,
    name_key    TEXT NOT NULL,  -- lower-cased, trimmed: matches entries to the roster
    group_id    INTEGER NOT NULL REFERENCES study_groups(id),
    notes       TEXT NOT NULL DEFAULT '',
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    created_by  INTEGER REFERENCES users(id) ON DELETE SET NULL
);
CREATE INDEX students_group ON students(group_id, name_key);

CREATE TABLE modules (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    name           TEXT NOT NULL,
    lessons_count  INTEGER NOT NULL DEFAULT 0,
    description    TEXT NOT NULL DEFAULT '',
    created_at     TEXT NOT NULL,
    updated_at     TEXT NOT NULL,
    deleted_at     TEXT,
    deleted_by     INTEGER REFERENCES users(id) ON DELETE SET NULL
);
CREATE UNIQUE INDEX modules_name ON modules(name) WHERE deleted_at IS NULL;

-- branch_id repeats the group's branch so scoped lists need no join; it moves with the group.
CREATE TABLE entries (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    student_name  TEXT NOT NULL,
    student_id    INTEGER REFERENCES students(id) ON DELETE SET NULL,
    group_id      INTEGER NOT NULL REFERENCES study_groups(id),
    branch_id     INTEGER NOT NULL REFERENCES branches(id),
    description   TEXT NOT NULL DEFAULT '',
    module_id     INTEGER REFERENCES modules(id) ON DELETE SET NULL,
    ai_status     TEXT,
    files_count   INTEGER NOT NULL DEFAULT 0,  -- kept by triggers on entry_files
    has_photo     INTEGER NOT NULL DEFAULT 0,  -- kept by triggers on photos
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL,
    created_by    INTEGER REFERENCES users(id) ON DELETE SET NULL,
    created_by_key INTEGER,
    deleted_at    TEXT,
    deleted_by    INTEGER REFERENCES users(id) ON DELETE SET NULL
);
CREATE INDEX entries_live ON entries(deleted_at, id);
CREATE INDEX entries_group ON entries(group_id, id);
CREATE INDEX entries_branch ON entries(branch_id, id);
CREATE INDEX entries_module ON entries(module_id);
CREATE INDEX entries_created ON entries(created_at);

-- Files live under the data directory with random names; the client's name is only a label.
CREATE TABLE entry_files (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    entry_id      INTEGER NOT NULL REFERENCES entries(id) ON DELETE CASCADE,
    name          TEXT NOT NULL,
    stored_name   TEXT NOT NULL UNIQUE,
    size          INTEGER NOT NULL,
    content_type  TEXT NOT NULL,
    sha256        TEXT NOT NULL,
    created_at    TEXT NOT NULL,
    created_by    INTEGER REFERENCES users(id) ON DELETE SET NULL
);
CREATE INDEX entry_files_entry ON entry_files(entry_id, id);

-- Photos of entries (roles current, previous, original) and cover photos of groups (cover).
CREATE TABLE photos (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    owner_type    TEXT NOT NULL CHECK (owner_type IN ('entry', 'group')),
    owner_id      INTEGER NOT NULL,
    role          TEXT NOT NULL CHECK (role IN ('current', 'previous', 'original', 'cover')),
    stored_name   TEXT NOT NULL UNIQUE,
    size          INTEGER NOT NULL,
    content_type  TEXT NOT NULL,
    sha256        TEXT NOT NULL,
    created_at    TEXT NOT NULL,
    created_by    INTEGER REFERENCES users(id) ON DELETE SET NULL
);
CREATE UNIQUE INDEX photos_owner ON photos(owner_type, owner_id, role);

-- One open check per record; done and failed rows stay as history.
CREATE TABLE ai_jobs (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    entity_type  TEXT NOT NULL CHECK (entity_type IN ('entry', 'lesson_report')),
    entity_id    INTEGER NOT NULL,
    branch_id    INTEGER,
    status       TEXT NOT NULL DEFAULT 'pending',
    attempts     INTEGER NOT NULL DEFAULT 0,
    last_error   TEXT,
    created_at   TEXT NOT NULL,
    updated_at   TEXT NOT NULL
);
CREATE UNIQUE INDEX ai_jobs_open ON ai_jobs(entity_type, entity_id)
    WHERE status IN ('pending', 'processing');
CREATE INDEX ai_jobs_status ON ai_jobs(status, id);

-- Live (not deleted) entries per branch: list totals without counting rows per request.
CREATE TABLE entry_counts (
    branch_id  INTEGER PRIMARY KEY,
    live       INTEGER NOT NULL DEFAULT 0
);

CREATE TRIGGER entries_count_insert AFTER INSERT ON entries WHEN NEW.deleted_at IS NULL
BEGIN
    INSERT OR IGNORE INTO entry_counts (branch_id, live) VALUES (NEW.branch_id, 0);
    UPDATE entry_counts SET live = live + 1 WHERE branch_id = NEW.branch_id;
END;

CREATE TRIGGER entries_count_delete AFTER DELETE ON entries WHEN OLD.deleted_at IS NULL
BEGIN
    UPDATE entry_counts SET live = live - 1 WHERE branch_id = OLD.branch_id;
END;

CREATE TRIGGER entries_count_update AFTER UPDATE OF deleted_at, branch_id ON entries
BEGIN
    UPDATE entry_counts SET live = live - 1
        WHERE branch_id = OLD.branch_id AND OLD.deleted_at IS NULL;
    INSERT OR IGNORE INTO entry_counts (branch_id, live)
        SELECT NEW.branch_id, 0 WHERE NEW.deleted_at IS NULL;
    UPDATE entry_counts SET live = live + 1
        WHERE branch_id = NEW.branch_id AND NEW.deleted_at IS NULL;
END;

CREATE TRIGGER entry_files_count_insert AFTER INSERT ON entry_files
BEGIN
    UPDATE entries SET files_count = files_count + 1 WHERE id = NEW.entry_id;
END;

CREATE TRIGGER entry_files_count_delete AFTER DELETE ON entry_files
BEGIN
    UPDATE entries SET files_count = files_count - 1 WHERE id = OLD.entry_id;
END;

CREATE TRIGGER photos_flag_insert AFTER INSERT ON photos WHEN NEW.owner_type = 'entry'
BEGIN
    UPDATE entries SET has_photo = EXISTS (SELECT 1 FROM photos WHERE owner_type = 'entry'
        AND owner_id = NEW.owner_id AND role = 'current') WHERE id = NEW.owner_id;
END;

CREATE TRIGGER photos_flag_update AFTER UPDATE ON photos WHEN NEW.owner_type = 'entry'
BEGIN
    UPDATE entries SET has_photo = EXISTS (SELECT 1 FROM photos WHERE owner_type = 'entry'
        AND owner_id = NEW.owner_id AND role = 'current') WHERE id = NEW.owner_id;
END;

CREATE TRIGGER photos_flag_delete AFTER DELETE ON photos WHEN OLD.owner_type = 'entry'
BEGIN
    UPDATE entries SET has_photo = EXISTS (SELECT 1 FROM photos WHERE owner_type = 'entry'
        AND owner_id = OLD.owner_id AND role = 'current') WHERE id = OLD.owner_id;
END;
