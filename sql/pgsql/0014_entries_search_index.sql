-- The entries' search asks the trigram index for a few of the term's trigrams (a LIKE pattern
-- such as '%Ama%Oka%' for 'Amara Okafor') in both searched columns at once, then checks each
-- candidate with the ILIKE of the whole term. One index over both columns replaces the two
-- per-column ones of 0012: one index scan instead of two, and no index left that would let
-- the planner look up every trigram of the term for that check (which cost most of the time).
-- The ' ' between the columns is only there to keep the two texts apart; a candidate that
-- matches across it is dropped by the check.
CREATE INDEX entries_search_trgm ON entries
    USING gin ((student_name || ' ' || description) gin_trgm_ops);
DROP INDEX entries_student_name_trgm;
DROP INDEX entries_description_trgm;
