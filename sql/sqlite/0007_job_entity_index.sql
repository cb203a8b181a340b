-- A record's jobs are found by the record (a record moving to another branch takes its jobs
-- along; deleting a lesson report deletes its jobs): without this index each of those scanned
-- the whole job history.
CREATE INDEX ai_jobs_entity ON ai_jobs(entity_type, entity_id);
