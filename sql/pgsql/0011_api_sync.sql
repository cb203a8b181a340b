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
    record_id   BIGINT NOT NULL,
    branch_id   BIGINT,
    deleted_at  TEXT NOT NULL
);
CREATE INDEX deleted_records_sync ON deleted_records(entity, deleted_at, record_id);

-- The time of the statement (not of the transaction's start), as the journal writes times.
CREATE FUNCTION jr_now_text() RETURNS text LANGUAGE sql VOLATILE AS $$
    SELECT to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
$$;

CREATE FUNCTION jr_tombstone() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    branch BIGINT;
BEGIN
    IF TG_ARGV[0] = 'branch' THEN
        branch := OLD.id;
    ELSIF TG_ARGV[0] = 'student' THEN
        SELECT branch_id INTO branch FROM study_groups WHERE id = OLD.group_id;
    ELSIF TG_ARGV[0] = 'module' THEN
        branch := NULL;
    ELSE
        branch := OLD.branch_id;
    END IF;
    INSERT INTO deleted_records VALUES (TG_ARGV[0], OLD.id, branch, jr_now_text());
    RETURN OLD;
END $$;

CREATE TRIGGER branches_tombstone AFTER DELETE ON branches
    FOR EACH ROW EXECUTE FUNCTION jr_tombstone('branch');
CREATE TRIGGER study_groups_tombstone AFTER DELETE ON study_groups
    FOR EACH ROW EXECUTE FUNCTION jr_tombstone('group');
CREATE TRIGGER students_tombstone AFTER DELETE ON students
    FOR EACH ROW EXECUTE FUNCTION jr_tombstone('student');
CREATE TRIGGER modules_tombstone AFTER DELETE ON modules
    FOR EACH ROW EXECUTE FUNCTION jr_tombstone('module');
CREATE TRIGGER entries_tombstone AFTER DELETE ON entries
    FOR EACH ROW EXECUTE FUNCTION jr_tombstone('entry');
CREATE TRIGGER lesson_reports_tombstone AFTER DELETE ON lesson_reports
    FOR EACH ROW EXECUTE FUNCTION jr_tombstone('lesson_report');

-- Every change of an entry or a lesson report moves its updated_at, also the changes that do
-- not set it themselves (the AI checker's status and text, a file or photo count, a move with
-- the group's branch): a sync finds a record by updated_at.
CREATE FUNCTION jr_touch() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.updated_at IS NOT DISTINCT FROM OLD.updated_at THEN
        NEW.updated_at := jr_now_text();
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER entries_touch BEFORE UPDATE ON entries
    FOR EACH ROW EXECUTE FUNCTION jr_touch();
CREATE TRIGGER lesson_reports_touch BEFORE UPDATE ON lesson_reports
    FOR EACH ROW EXECUTE FUNCTION jr_touch();

-- A sync walks each list by (updated_at, id).
CREATE INDEX entries_sync ON entries(updated_at, id);
CREATE INDEX lesson_reports_sync ON lesson_reports(updated_at, id);
CREATE INDEX students_sync ON students(updated_at, id);
CREATE INDEX modules_sync ON modules(updated_at, id);
CREATE INDEX study_groups_sync ON study_groups(updated_at, id);
CREATE INDEX branches_sync ON branches(updated_at, id);
