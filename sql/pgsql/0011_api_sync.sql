-- Idempotency-Key: the first answer to a POST, kept 24 hours per caller ("key:<id>" for an
-- API key, "user:<id>" for a session) so a retried request is answered again instead of run
-- again. status is NULL while the first request still runs.
CREATE TABLE idempotency_keys (
    owner        TEXT NOT NULL,
    idem_key     TEXT NOT NULL,
    fingerprint  TEXT NOT NULL,  -- sha256 of method, path, query and body
    status       INTEGER,
    body         TEXT,
    created_at   TEXT NOT NULL,
    expires_at   TEXT NOT NULL,
    PRIMARY KEY (owner, idem_key)
);
CREATE INDEX idempotency_keys_expiry ON idempotency_keys(expires_at);
