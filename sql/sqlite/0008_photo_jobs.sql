-- Photo jobs run by journal-worker: claims with leases and back-off like ai_jobs, the photo a
-- job was made from, its result (a stored file until applied or rejected), and the history of
-- an entry's photos (role 'previous', several per entry, newest last).

ALTER TABLE photo_jobs ADD COLUMN lease_owner TEXT;
ALTER TABLE photo_jobs ADD COLUMN lease_until TEXT;
ALTER TABLE photo_jobs ADD COLUMN run_after TEXT;
ALTER TABLE photo_jobs ADD COLUMN source_sha256 TEXT;
ALTER TABLE photo_jobs ADD COLUMN result_size INTEGER;
ALTER TABLE photo_jobs ADD COLUMN result_width INTEGER;
ALTER TABLE photo_jobs ADD COLUMN result_height INTEGER;
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
