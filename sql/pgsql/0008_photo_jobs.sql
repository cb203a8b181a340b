-- Photo jobs run by journal-worker: claims with leases and back-off like ai_jobs, the photo a
-- job was made from, its result (a stored file until applied or rejected), and the history of
-- an entry's photos (role 'previous', several per entry, newest last).

ALTER TABLE photo_jobs ADD COLUMN lease_owner TEXT;
ALTER TABLE photo_jobs ADD COLUMN lease_until TEXT;
ALTER TABLE photo_jobs ADD COLUMN run_after TEXT;
ALTER TABLE photo_jobs ADD COLUMN source_sha256 TEXT;
ALTER TABLE photo_jobs ADD COLUMN result_size BIGINT;
ALTER TABLE photo_jobs ADD COLUMN result_width BIGINT;
ALTER TABLE photo_jobs ADD COLUMN result_height BIGINT;
ALTER TABLE photo_jobs ADD COLUMN result_type TEXT;
ALTER TABLE photo_jobs ADD COLUMN result_sha256 TEXT;
ALTER TABLE photo_jobs ADD COLUMN started_at TEXT;
ALTER TABLE photo_jobs ADD COLUMN finished_at TEXT;
CREATE INDEX photo_jobs_due ON photo_jobs(status, run_after);
CREATE INDEX photo_jobs_lease ON photo_jobs(status, lease_until);

-- One current, one original, one cover per owner; any number of previous photos.
DROP INDEX photos_owner;
CREATE UNIQUE INDEX photos_owner ON photos(owner_type, owner_id, role) WHERE role <> 'previous';
CREATE INDEX photos_history ON photos(owner_type, owner_id, role, id);

-- Every writer that queues a photo job (a new job, a requeue, a retry, a released lease) wakes
-- the workers that LISTEN on journal_photo, as ai_jobs does for journal_ai.
CREATE FUNCTION jr_photo_jobs_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.status = 'queued' THEN
        PERFORM pg_notify('journal_photo', '');
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER photo_jobs_notify AFTER INSERT OR UPDATE OF status, run_after ON photo_jobs
    FOR EACH ROW EXECUTE FUNCTION jr_photo_jobs_notify();
