-- Nothing to change on PostgreSQL: SQLite's migration 0018 lets new entries join its
-- full-text index in batches. A pg_trgm GIN index already defers its new entries to a pending
-- list of its own (fastupdate) and merges them in bulk. The number is kept in step with
-- sql/sqlite.
SELECT 1;
