-- Nothing to change on PostgreSQL: SQLite's migration 0017 gives the distinct student names a
-- full-text index of their own; PostgreSQL's search uses the trigram index of migration 0014.
-- The number is kept in step with sql/sqlite.
SELECT 1;
