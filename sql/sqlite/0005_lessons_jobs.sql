-- Lesson reports with their text history, photo jobs, and the signals the worker waits on.

-- branch_id repeats the group's branch so scoped lists need no join; it moves with the group.
CREATE TABLE lesson_reports (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    group_id        INTEGER NOT NULL REFERENCES study_groups(id),
    branch_id       INTEGER NOT NULL REFERENCES branches(id),
    lesson_date     TEXT NOT NULL,
    lesson_time     TEXT,
    text            TEXT NOT NULL,
    topic           TEXT,
    text_original   TEXT,
    text_ai         TEXT,
    ai_status       TEXT,
    ai_checked_at   TEXT,
    ai_error        TEXT,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL,
    created_by      INTEGER REFERENCES users(id) ON DELETE SET NULL,
    created_by_key  INTEGER,
    UNIQUE (group_id, lesson_date)
);
CREATE INDEX lesson_reports_branch ON lesson_reports(branch_id, lesson_date);
CREATE INDEX lesson_reports_date ON lesson_reports(lesson_date, lesson_time);

-- Every change of a report's text (topic is not versioned).
CREATE TABLE lesson_report_versions (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    report_id       INTEGER NOT NULL REFERENCES lesson_reports(id) ON DELETE CASCADE,
    text            TEXT NOT NULL,
    source          TEXT NOT NULL CHECK (source IN ('create', 'edit', 'restore', 'revert', 'ai')),
    created_at      TEXT NOT NULL,
    created_by      INTEGER REFERENCES users(id) ON DELETE SET NULL,
    created_by_key  INTEGER
);
CREATE INDEX lesson_report_versions_report ON lesson_report_versions(report_id, id);

CREATE TABLE photo_jobs (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    entry_id     INTEGER NOT NULL REFERENCES entries(id) ON DELETE CASCADE,
    branch_id    INTEGER,
    action       TEXT NOT NULL,
    params       TEXT,
    status       TEXT NOT NULL DEFAULT 'queued',
    applied      INTEGER NOT NULL DEFAULT 0,
    attempts     INTEGER NOT NULL DEFAULT 0,
    last_error   TEXT,
    result_file  TEXT,
    created_at   TEXT NOT NULL,
    updated_at   TEXT NOT NULL,
    created_by   INTEGER REFERENCES users(id) ON DELETE SET NULL
);
CREATE INDEX photo_jobs_status ON photo_jobs(status, id);
CREATE INDEX photo_jobs_entry ON photo_jobs(entry_id, id);

-- Wake-ups: a worker remembers the generation it saw and waits for a higher one (on
-- PostgreSQL it also LISTENs on the channel of the same name).
CREATE TABLE worker_signals (
    name        TEXT PRIMARY KEY,
    generation  INTEGER NOT NULL DEFAULT 0,
    updated_at  TEXT NOT NULL
);
INSERT INTO worker_signals (name, generation, updated_at) VALUES ('journal_ai', 0, '1970-01-01T00:00:00Z');
INSERT INTO worker_signals (name, generation, updated_at) VALUES ('journal_photo', 0, '1970-01-01T00:00:00Z');
