-- Indexed search: trigram GIN indexes serve the ILIKE/LIKE of the searches as they are (the
-- index is lossy; PostgreSQL checks every candidate row against the pattern).
-- pg_trgm is a trusted extension (PostgreSQL 13+): the database's owner may create it. A role
-- that may not, or a server without the contrib files, stops here with the fix in the message.
DO $$
BEGIN
    CREATE EXTENSION IF NOT EXISTS pg_trgm;
EXCEPTION WHEN insufficient_privilege OR undefined_file OR feature_not_supported THEN
    RAISE EXCEPTION 'migration 0012 needs the pg_trgm extension (%): as a superuser, run %',
        SQLERRM, 'CREATE EXTENSION pg_trgm; in database ' || current_database()
        || ', then migrate again';
END
$$;

CREATE INDEX entries_student_name_trgm ON entries USING gin (student_name gin_trgm_ops);
CREATE INDEX entries_description_trgm ON entries USING gin (description gin_trgm_ops);
CREATE INDEX students_name_key_trgm ON students USING gin (name_key gin_trgm_ops);
CREATE INDEX modules_name_trgm ON modules USING gin (name gin_trgm_ops);
CREATE INDEX modules_description_trgm ON modules USING gin (description gin_trgm_ops);
