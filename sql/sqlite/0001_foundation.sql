-- Accounts, sessions, branches, groups and the audit log.
-- Timestamps are UTC ISO 8601 text ("2026-11-21T10:00:00Z"): they sort as strings and read
-- the same on SQLite and PostgreSQL.

CREATE TABLE branches (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    name        TEXT NOT NULL UNIQUE,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);

CREATE TABLE users (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    username      TEXT NOT NULL UNIQUE,
    password_hash TEXT NOT NULL,
    role          TEXT NOT NULL CHECK (role IN ('admin', 'tutor')),
    active        INTEGER NOT NULL DEFAULT 1 CHECK (active IN (0, 1)),
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL
);

CREATE TABLE user_branches (
    user_id    INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    branch_id  INTEGER NOT NULL REFERENCES branches(id) ON DELETE CASCADE,
    PRIMARY KEY (user_id, branch_id)
);
CREATE INDEX user_branches_branch ON user_branches(branch_id);

CREATE TABLE sessions (
    token_hash  TEXT PRIMARY KEY,
    user_id     INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at  TEXT NOT NULL,
    expires_at  TEXT NOT NULL,
    client_ip   TEXT
);
CREATE INDEX sessions_user ON sessions(user_id);
CREATE INDEX sessions_expires ON sessions(expires_at);

CREATE TABLE study_groups (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    name        TEXT NOT NULL,
    branch_id   INTEGER NOT NULL REFERENCES branches(id),
    tutor_id    INTEGER REFERENCES users(id) ON DELETE SET NULL,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    deleted_at  TEXT,
    deleted_by  INTEGER REFERENCES users(id) ON DELETE SET NULL
);
-- Names are unique within a branch among groups that are not in the trash.
CREATE UNIQUE INDEX study_groups_name ON study_groups(branch_id, name) WHERE deleted_at IS NULL;
CREATE INDEX study_groups_branch ON study_groups(branch_id, id);

-- The actor columns carry no foreign keys: the record outlives users and keys.
CREATE TABLE audit_log (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    created_at     TEXT NOT NULL,
    actor_user_id  INTEGER,
    actor_key_id   INTEGER,
    via_api_key    INTEGER NOT NULL DEFAULT 0,
    client_ip      TEXT,
    action         TEXT NOT NULL,
    entity_type    TEXT NOT NULL,
    entity_id      TEXT,
    changes        TEXT
);
CREATE INDEX audit_log_entity ON audit_log(entity_type, entity_id);
CREATE INDEX audit_log_created ON audit_log(created_at);
