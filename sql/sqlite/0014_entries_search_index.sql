-- Nothing to change on SQLite: PostgreSQL's migration 0014 replaces the entries' trigram
-- indexes; the FTS5 table of 0012 already indexes both columns in one table, and the search
-- asks it for fewer trigrams without a change of schema.
SELECT 1;
