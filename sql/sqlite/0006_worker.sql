-- The worker's side of the AI queue: claims with leases, back-off, the hash of the text a
-- check was sent; the AI fields of entries; and the event outbox.

-- lease_owner/lease_until: who holds a 'processing' job and until when (renewed while it
-- runs; an expired lease returns the job to the queue). run_after: a retried job waits for
-- its back-off. text_hash: SHA-256 of the text sent, so a stale answer is recognised.
ALTER TABLE ai_jobs ADD COLUMN lease_owner TEXT;
ALTER TABLE ai_jobs ADD COLUMN lease_until TEXT;
ALTER TABLE ai_jobs ADD COLUMN run_after TEXT;
ALTER TABLE ai_jobs ADD COLUMN text_hash TEXT;
CREATE INDEX ai_jobs_due ON ai_jobs(status, run_after);
CREATE INDEX ai_jobs_lease ON ai_jobs(status, lease_until);

ALTER TABLE entries ADD COLUMN description_original TEXT;
ALTER TABLE entries ADD COLUMN ai_checked_at TEXT;
ALTER TABLE entries ADD COLUMN ai_error TEXT;

-- The outbox: every row is written in the transaction of the change it reports.
CREATE TABLE events (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    type         TEXT NOT NULL,
    branch_id    INTEGER,
    entity_type  TEXT NOT NULL,
    entity_id    INTEGER,
    payload      TEXT NOT NULL,
    created_at   TEXT NOT NULL
);
CREATE INDEX events_created ON events(created_at);
