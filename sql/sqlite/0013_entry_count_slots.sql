-- The shape of PostgreSQL's entry_counts (a branch's count is the SUM of its slots, see
-- sql/pgsql/0013). SQLite has one writer at a time, so its triggers keep using slot 0 alone.
-- The triggers name the table: they are dropped before it is rebuilt and made again after.
DROP TRIGGER entries_count_insert;
DROP TRIGGER entries_count_delete;
DROP TRIGGER entries_count_update;

CREATE TABLE entry_counts_slots (
    branch_id  INTEGER NOT NULL,
    slot       INTEGER NOT NULL DEFAULT 0,
    live       INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (branch_id, slot)
);
INSERT INTO entry_counts_slots (branch_id, slot, live) SELECT branch_id, 0, live FROM entry_counts;
DROP TABLE entry_counts;
ALTER TABLE entry_counts_slots RENAME TO entry_counts;

CREATE TRIGGER entries_count_insert AFTER INSERT ON entries WHEN NEW.deleted_at IS NULL
BEGIN
    INSERT OR IGNORE INTO entry_counts (branch_id, slot, live) VALUES (NEW.branch_id, 0, 0);
    UPDATE entry_counts SET live = live + 1 WHERE branch_id = NEW.branch_id AND slot = 0;
END;

CREATE TRIGGER entries_count_delete AFTER DELETE ON entries WHEN OLD.deleted_at IS NULL
BEGIN
    INSERT OR IGNORE INTO entry_counts (branch_id, slot, live) VALUES (OLD.branch_id, 0, 0);
    UPDATE entry_counts SET live = live - 1 WHERE branch_id = OLD.branch_id AND slot = 0;
END;

CREATE TRIGGER entries_count_update AFTER UPDATE OF deleted_at, branch_id ON entries
    WHEN OLD.branch_id IS NOT NEW.branch_id
      OR (OLD.deleted_at IS NULL) <> (NEW.deleted_at IS NULL)
BEGIN
    INSERT OR IGNORE INTO entry_counts (branch_id, slot, live)
        SELECT OLD.branch_id, 0, 0 WHERE OLD.deleted_at IS NULL;
    UPDATE entry_counts SET live = live - 1
        WHERE branch_id = OLD.branch_id AND slot = 0 AND OLD.deleted_at IS NULL;
    INSERT OR IGNORE INTO entry_counts (branch_id, slot, live)
        SELECT NEW.branch_id, 0, 0 WHERE NEW.deleted_at IS NULL;
    UPDATE entry_counts SET live = live + 1
        WHERE branch_id = NEW.branch_id AND slot = 0 AND NEW.deleted_at IS NULL;
END;
