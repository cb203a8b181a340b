-- API keys of the integration interface, and IP bans.
-- A key is stored only as its SHA-256 and a short visible prefix. branch_ids is a JSON array
-- of branch ids (NULL: every branch). It is kept as written, so a deleted branch leaves the
-- key restricted to what remains rather than widening it.

CREATE TABLE api_keys (
    id                  INTEGER PRIMARY KEY AUTOINCREMENT,
    name                TEXT NOT NULL,
    prefix              TEXT NOT NULL,
    key_hash            TEXT NOT NULL UNIQUE,
    scopes              TEXT NOT NULL,
    rate_limit_per_min  INTEGER NOT NULL,
    branch_ids          TEXT,
    expires_at          TEXT,
    created_at          TEXT NOT NULL,
    created_by          INTEGER REFERENCES users(id) ON DELETE SET NULL,
    updated_at          TEXT NOT NULL,
    rotated_at          TEXT,
    last_used_at        TEXT,
    last_used_ip        TEXT
);

CREATE TABLE ip_bans (
    ip          TEXT PRIMARY KEY,
    reason      TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    expires_at  TEXT
);
CREATE INDEX ip_bans_expires ON ip_bans(expires_at);

CREATE INDEX audit_log_actor_user ON audit_log(actor_user_id);
CREATE INDEX audit_log_actor_key ON audit_log(actor_key_id);
