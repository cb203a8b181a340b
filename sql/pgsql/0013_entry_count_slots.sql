-- Live entries per branch in up to 16 slots per branch: a branch's count is the SUM of its
-- slots, so readers (SUM(live) ... WHERE branch_id IN ...) are unchanged. With one row per
-- branch every insert of a branch updated that row and held its lock until commit, WAL flush
-- included: the branch's writers ran one at a time. Now each writing transaction takes a slot
-- no other running transaction holds (a transaction-scoped advisory lock, tried without
-- waiting), so concurrent writers of one branch update different rows. A slot may go below
-- zero (an entry counted in one slot, deleted through another); only the sum has a meaning.
-- The rows that were there become slot 0.
ALTER TABLE entry_counts ADD COLUMN slot SMALLINT NOT NULL DEFAULT 0;
ALTER TABLE entry_counts DROP CONSTRAINT entry_counts_pkey;
ALTER TABLE entry_counts ADD PRIMARY KEY (branch_id, slot);

-- The first free slot from one derived from the backend's pid (a pooled connection keeps
-- finding its own); when all 16 are taken, that one, waiting for its row as before. The lock
-- space (7254013, slot) is the two-integer form: it never meets pg_advisory_lock(7254013) of
-- the migrator. A transaction asking again gets a slot it holds (advisory locks are reentrant).
CREATE FUNCTION jr_entry_count_slot() RETURNS smallint LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    first integer := pg_backend_pid() % 16;
BEGIN
    FOR i IN 0..15 LOOP
        IF pg_try_advisory_xact_lock(7254013, (first + i) % 16) THEN
            RETURN (first + i) % 16;
        END IF;
    END LOOP;
    RETURN first;
END
$$;

CREATE OR REPLACE FUNCTION jr_entry_counts() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    s smallint;
BEGIN
    -- An edit that neither moves the entry nor trashes or restores it changes no count.
    IF TG_OP = 'UPDATE' AND OLD.branch_id IS NOT DISTINCT FROM NEW.branch_id
            AND (OLD.deleted_at IS NULL) = (NEW.deleted_at IS NULL) THEN
        RETURN NULL;
    END IF;
    s := jr_entry_count_slot();
    IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.deleted_at IS NULL THEN
        INSERT INTO entry_counts (branch_id, slot, live) VALUES (OLD.branch_id, s, -1)
            ON CONFLICT (branch_id, slot) DO UPDATE SET live = entry_counts.live - 1;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.deleted_at IS NULL THEN
        INSERT INTO entry_counts (branch_id, slot, live) VALUES (NEW.branch_id, s, 1)
            ON CONFLICT (branch_id, slot) DO UPDATE SET live = entry_counts.live + 1;
    END IF;
    RETURN NULL;
END
$$;
