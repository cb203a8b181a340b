-- An index filled by 'rebuild' (migration 0012 on an existing journal) made every later insert
-- about five times dearer (FTS5's automatic merges worked through its large segments) until it
-- was optimised (docs/architecture.md §7.20). Done here, once, for the three indexes; on a new
-- journal the indexes are small and this costs nothing.
INSERT INTO entries_fts (entries_fts) VALUES ('optimize');
INSERT INTO students_fts (students_fts) VALUES ('optimize');
INSERT INTO modules_fts (modules_fts) VALUES ('optimize');
