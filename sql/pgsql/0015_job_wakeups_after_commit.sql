-- The workers are woken after the writer's COMMIT, by the module (jr_queue_wake in
-- jr_jobs.c), not by these triggers inside the writer's transaction: a transaction that has
-- sent a NOTIFY takes a database-wide lock at commit and holds it until its commit record is
-- flushed, so every transaction that queued a job committed alone, one WAL flush after another.
-- A writer outside the module that queues a job sends NOTIFY journal_ai (or journal_photo)
-- itself, or the job waits for the workers' safety poll.
DROP TRIGGER ai_jobs_notify ON ai_jobs;
DROP FUNCTION jr_ai_jobs_notify();
DROP TRIGGER photo_jobs_notify ON photo_jobs;
DROP FUNCTION jr_photo_jobs_notify();
