-- Nothing to change on PostgreSQL: SQLite's migration 0016 optimises its full-text indexes once;
-- the pg_trgm indexes of migrations 0012 and 0014 need nothing of the kind. The number is kept
-- in step with sql/sqlite.
SELECT 1;
