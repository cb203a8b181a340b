-- Nothing changes on SQLite: it never had notify triggers (its workers hear every commit
-- through an inotify watch on the database's files). The number is kept in step with
-- sql/pgsql/0015, which drops PostgreSQL's triggers that woke the workers inside the writers'
-- transactions.
SELECT 1;
