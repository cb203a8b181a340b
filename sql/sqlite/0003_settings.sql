-- Application settings (name -> text value); defaults live in the code (jr_settings.c).
CREATE TABLE settings (
    name        TEXT PRIMARY KEY,
    value       TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    updated_by  INTEGER
);
