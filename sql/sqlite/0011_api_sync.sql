-- Idempotency-Key: the first answer to a POST, kept 24 hours per caller ("key:<id>" for an
-- API key, "user:<id>" for a session) so a retried request is answered again instead of run
-- again. status is NULL while the first request still runs.
CREATE TABLE idempotency_keys (
    owner        TEXT NOT NULL,
    idem_key     TEXT NOT NULL,
    fingerprint  TEXT NOT NULL,  -- sha256 of method, path, query and body
    status       INTEGER,
    body         TEXT,
    created_at   TEXT NOT NULL,
    expires_at   TEXT NOT NULL,
    PRIMARY KEY (owner, idem_key)
);
CREATE INDEX idempotency_keys_expiry ON idempotency_keys(expires_at);

-- Sync (updated_since): records deleted for good leave a tombstone here, so a client that
-- syncs later still learns of the deletion. branch_id scopes it like the record was (NULL:
-- every caller may see it, a module). Written by the triggers below, kept as long as the
-- journal (a few dozen bytes each).
CREATE TABLE deleted_records (
    entity      TEXT NOT NULL,
    record_id   INTEGER NOT NULL,
    branch_id   INTEGER,
    deleted_at  TEXT NOT NULL
);
CREATE INDEX deleted_records_sync ON deleted_records(entity, deleted_at, record_id);

CREATE TRIGGER branches_tombstone AFTER DELETE ON branches BEGIN
    INSERT INTO deleted_records VALUES ('branch', OLD.id, OLD.id,
                                        strftime('%Y-%m-%dT%H:%M:%SZ', 'now'));
END;
CREATE TRIGGER study_groups_tombstone AFTER DELETE ON study_groups BEGIN
    INSERT INTO deleted_records VALUES ('group', OLD.id, OLD.branch_id,
                                        strftime('%Y-%m-%dT%H:%M:%SZ', 'now'));
END;
CREATE TRIGGER students_tombstone AFTER DELETE ON students BEGIN
    INSERT INTO deleted_records VALUES ('student', OLD.id,
        (SELECT branch_id FROM study_groups WHERE id = OLD.group_id),
        strftime('%Y-%m-%dT%H:%M:%SZ', 'now'));
END;
CREATE TRIGGER modules_tombstone AFTER DELETE ON modules BEGIN
    INSERT INTO deleted_records VALUES ('module', OLD.id, NULL,
                                        strftime('%Y-%m-%dT%H:%M:%SZ', 'now'));
END;
CREATE TRIGGER entries_tombstone AFTER DELETE ON entries BEGIN
    INSERT INTO deleted_records VALUES ('entry', OLD.id, OLD.branch_id,
                                        strftime('%Y-%m-%dT%H:%M:%SZ', 'now'));
END;
CREATE TRIGGER lesson_reports_tombstone AFTER DELETE ON lesson_reports BEGIN
    INSERT INTO deleted_records VALUES ('lesson_report', OLD.id, OLD.branch_id,
                                        strftime('%Y-%m-%dT%H:%M:%SZ', 'now'));
END;

-- Every change of an entry or a lesson report moves its updated_at, also the changes that do
-- not set it themselves (the AI checker's status and text, a file or photo count, a move with
-- the group's branch): a sync finds a record by updated_at.
CREATE TRIGGER entries_touch AFTER UPDATE ON entries
    WHEN NEW.updated_at IS OLD.updated_at BEGIN
    UPDATE entries SET updated_at = strftime('%Y-%m-%dT%H:%M:%SZ', 'now') WHERE id = NEW.id;
END;
CREATE TRIGGER lesson_reports_touch AFTER UPDATE ON lesson_reports
    WHEN NEW.updated_at IS OLD.updated_at BEGIN
    UPDATE lesson_reports SET updated_at = strftime('%Y-%m-%dT%H:%M:%SZ', 'now')
        WHERE id = NEW.id;
END;

-- A sync walks each list by (updated_at, id).
CREATE INDEX entries_sync ON entries(updated_at, id);
CREATE INDEX lesson_reports_sync ON lesson_reports(updated_at, id);
CREATE INDEX students_sync ON students(updated_at, id);
CREATE INDEX modules_sync ON modules(updated_at, id);
CREATE INDEX study_groups_sync ON study_groups(updated_at, id);
CREATE INDEX branches_sync ON branches(updated_at, id);
