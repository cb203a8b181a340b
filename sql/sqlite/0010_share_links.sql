-- Read-only links for families: one student's journal or one group's lesson reports. Only the
-- SHA-256 of the token is stored; the password, when set, as bcrypt. No branch column: the
-- branch is the target's own, read through its group, so a group that moves takes its links.
CREATE TABLE share_links (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    kind            TEXT NOT NULL CHECK (kind IN ('student', 'group')),
    target_id       INTEGER NOT NULL,
    token_hash      TEXT NOT NULL UNIQUE,
    password_hash   TEXT,
    expires_at      TEXT NOT NULL,
    created_by      INTEGER REFERENCES users(id) ON DELETE SET NULL,
    created_at      TEXT NOT NULL,
    revoked_at      TEXT,
    last_opened_at  TEXT,
    open_count      INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX share_links_target ON share_links(kind, target_id);
