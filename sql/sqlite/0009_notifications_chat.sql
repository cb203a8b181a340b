-- Notifications with per-user read marks, single-use stream tickets, and the tutor/admin chat.

-- One row per thing worth telling; who sees it follows from its branch (admins: all; tutors:
-- rows of their branches; rows without a branch are for admins only).
CREATE TABLE notifications (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    type         TEXT NOT NULL,
    level        TEXT NOT NULL CHECK (level IN ('info', 'warning', 'error')),
    title        TEXT NOT NULL,
    body         TEXT NOT NULL,
    entity_type  TEXT,
    entity_id    INTEGER,
    branch_id    INTEGER,
    created_at   TEXT NOT NULL
);
CREATE INDEX notifications_created ON notifications(created_at);
CREATE INDEX notifications_branch ON notifications(branch_id, id);

-- A user's state of one notification: read, or removed from their list.
CREATE TABLE notification_marks (
    notification_id INTEGER NOT NULL REFERENCES notifications(id) ON DELETE CASCADE,
    user_id         INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    read_at         TEXT,
    deleted_at      TEXT,
    PRIMARY KEY (user_id, notification_id)
);
CREATE INDEX notification_marks_notification ON notification_marks(notification_id);

-- A ticket opens one event stream once (an EventSource cannot send X-Auth-Token); it lives
-- as long as the session it was made from, and at most until expires_at.
CREATE TABLE stream_tickets (
    ticket_hash   TEXT PRIMARY KEY,
    session_hash  TEXT NOT NULL,
    expires_at    TEXT NOT NULL
);
CREATE INDEX stream_tickets_expires ON stream_tickets(expires_at);

-- One thread per tutor, between that tutor and the admins.
CREATE TABLE chat_messages (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    tutor_id    INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    sender_id   INTEGER REFERENCES users(id) ON DELETE SET NULL,
    text        TEXT NOT NULL,
    created_at  TEXT NOT NULL
);
CREATE INDEX chat_messages_thread ON chat_messages(tutor_id, id);
CREATE INDEX chat_messages_created ON chat_messages(created_at);

-- How far each reader has read a thread (the id of the last message read).
CREATE TABLE chat_reads (
    tutor_id      INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    user_id       INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    last_read_id  INTEGER NOT NULL,
    PRIMARY KEY (tutor_id, user_id)
);
