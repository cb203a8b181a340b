"""Settings (spec 2.6): GET/PUT /api/settings (admin) and GET /api/public-settings.

Tests that write settings run on a fresh server: the shared one keeps its defaults (its time
zone in particular)."""

from harness import assert_error, assert_json, uniq

SWITCHES = ["notify_enabled", "notify_lesson_report", "notify_lesson_ai_formatted",
            "photo_worker_enabled"]
RETENTION = ["chat_retention_days", "notify_retention_days", "trash_retention_days"]
TF_TEXT = ["lesson_ai_enabled", "entry_ai_enabled"]
STRINGS = ["timezone", "time_format", "lesson_ai_prompt", "photo_ai_face_mode",
           "photo_ai_face_model", "photo_ai_device_pref"]


def get_settings(srv):
    s = assert_json(srv.api("GET", "/api/settings", token=srv.admin_token), 200)
    assert isinstance(s, dict)
    return s


def put_settings(srv, body):
    return srv.api("PUT", "/api/settings", token=srv.admin_token, json=body)


def check_types(s):
    for name in STRINGS:
        assert isinstance(s.get(name), str), f"{name}: {s.get(name)!r}"
    for name in TF_TEXT:
        assert s.get(name) in ("true", "false"), f"{name}: {s.get(name)!r}"
    for name in RETENTION:
        assert type(s.get(name)) is int, f"{name}: {s.get(name)!r}"
    notify = [n for n in s if n.startswith("notify_") and not n.endswith("_days")]
    assert "notify_enabled" in notify and len(notify) > 1
    for name in notify + ["photo_worker_enabled"]:
        assert type(s[name]) is bool, f"{name}: {s[name]!r}"
    assert s["time_format"] in ("24h", "12h")
    assert s["photo_ai_face_mode"] in ("off", "face", "all")
    assert s["photo_ai_face_model"] in ("gfpgan", "codeformer")


def public(srv):
    r = srv.api("GET", "/api/public-settings")
    return assert_json(r, 200)


# ---- access (shared server: nothing is written) ---------------------------------------------
def test_settings_need_an_admin(server):
    before = get_settings(server)
    branch = server.create_branch()
    _, tutor = server.create_tutor(branch_ids=[branch["id"]])
    assert_error(server.api("GET", "/api/settings"), 401)
    assert_error(server.api("PUT", "/api/settings", json={"time_format": "12h"}), 401)
    assert_error(server.api("GET", "/api/settings", token=tutor), 403)
    assert_error(server.api("PUT", "/api/settings", token=tutor, json={"time_format": "12h"}),
                 403)
    assert_error(server.api("PUT", "/api/settings", token=tutor,
                            json={"timezone": "Europe/Berlin"}), 403)
    key = assert_json(server.api("POST", "/api/api-keys", token=server.admin_token,
                                 json={"name": uniq("k"), "scopes": ["read", "write"]}),
                      201)["key"]
    assert_error(server.api("GET", "/api/settings", headers={"X-Api-Key": key}), 401)
    assert get_settings(server) == before


def test_get_settings_typed(server):
    s = get_settings(server)
    check_types(s)
    for name in SWITCHES + RETENTION + TF_TEXT + STRINGS + ["notify_retention_days"]:
        assert name in s, name
    assert s["timezone"] == "UTC"  # the default; the shared server never changes it


def test_public_settings(server):
    p = public(server)
    assert set(p) == {"timezone", "time_format"}, p
    s = get_settings(server)
    assert p["timezone"] == s["timezone"] and p["time_format"] == s["time_format"]
    # a session changes nothing about it
    assert public(server) == assert_json(server.api("GET", "/api/public-settings",
                                                    token=server.admin_token), 200)


# ---- updates (fresh servers) ----------------------------------------------------------------
def test_put_subset_returns_all(fresh_server):
    srv = fresh_server()
    before = get_settings(srv)
    check_types(before)
    body = {"time_format": "12h", "timezone": "Europe/Berlin", "lesson_ai_enabled": "true",
            "chat_retention_days": 7, "notify_enabled": False, "photo_ai_face_mode": "all",
            "photo_ai_face_model": "codeformer", "photo_ai_device_pref": "cpu",
            "trash_retention_days": 3650, "notify_retention_days": 1,
            "photo_worker_enabled": False, "lesson_ai_prompt": "Be brief."}
    after = assert_json(put_settings(srv, body), 200)
    assert set(after) == set(before)
    check_types(after)
    for name, value in body.items():
        assert after[name] == value, name
    for name in set(before) - set(body):
        assert after[name] == before[name], name
    assert get_settings(srv) == after
    assert public(srv) == {"timezone": "Europe/Berlin", "time_format": "12h"}
    # one value at a time, and back
    again = assert_json(put_settings(srv, {"lesson_ai_enabled": "false"}), 200)
    assert again["lesson_ai_enabled"] == "false" and again["time_format"] == "12h"
    again = assert_json(put_settings(srv, {"notify_enabled": True}), 200)
    assert again["notify_enabled"] is True
    # the settings survive a restart
    srv.restart()
    assert get_settings(srv) == again
    # the update is audited
    r = srv.api("GET", "/api/audit", token=srv.admin_token, params={"entity_type": "settings"})
    rows = assert_json(r, 200)["items"]
    assert len(rows) == 3 and {row["action"] for row in rows} == {"update"}


BAD = [
    ("timezone", "Mars/Base"),
    ("timezone", "GMT+5"),
    ("timezone", 5),
    ("timezone", ""),
    ("timezone", None),
    ("time_format", "25h"),
    ("time_format", "24H"),
    ("lesson_ai_enabled", True),
    ("lesson_ai_enabled", "yes"),
    ("lesson_ai_enabled", "TRUE"),
    ("entry_ai_enabled", False),
    ("photo_ai_face_mode", "eyes"),
    ("photo_ai_face_model", "x"),
    ("photo_ai_device_pref", "tpu"),
    ("trash_retention_days", 0),
    ("trash_retention_days", 100000),
    ("trash_retention_days", "30"),
    ("trash_retention_days", 1.5),
    ("chat_retention_days", -1),
    ("notify_retention_days", "7"),
    ("notify_enabled", "maybe"),
    ("photo_worker_enabled", 1),
    ("no_such_setting", "x"),
    ("notify_no.such.type", True),
    ("notify_lesson.report", True),  # the names before the catalogue: dots are underscores
]


def test_validation_is_all_or_nothing(fresh_server):
    srv = fresh_server()
    before = get_settings(srv)
    audit_before = assert_json(srv.api("GET", "/api/audit", token=srv.admin_token,
                                       params={"entity_type": "settings"}), 200)["total"]
    # good values that differ from the current ones
    good = {"time_format": "12h" if before["time_format"] == "24h" else "24h",
            "chat_retention_days": before["chat_retention_days"] + 1,
            "photo_ai_face_mode": "face" if before["photo_ai_face_mode"] != "face" else "all"}
    for name, value in BAD:
        others = {k: v for k, v in good.items() if k != name}
        assert others
        for body in ({**others, name: value}, {name: value, **others}, {name: value}):
            r = put_settings(srv, body)
            assert r.status_code == 400, f"{body}: {r.status_code} {r.text[:200]}"
            assert_error(r, 400, name)
            assert get_settings(srv) == before, f"{body} changed the settings"
    assert public(srv) == {"timezone": before["timezone"], "time_format": before["time_format"]}
    assert_error(put_settings(srv, {}), 400)
    assert_error(put_settings(srv, [{"time_format": "12h"}]), 400)
    assert_error(put_settings(srv, "12h"), 400)
    assert get_settings(srv) == before
    audit_after = assert_json(srv.api("GET", "/api/audit", token=srv.admin_token,
                                      params={"entity_type": "settings"}), 200)["total"]
    assert audit_after == audit_before
    # the good values alone are fine
    after = assert_json(put_settings(srv, good), 200)
    assert after["time_format"] == good["time_format"]


def test_valid_time_zones_are_accepted(fresh_server):
    srv = fresh_server()
    for tz in ("Europe/Berlin", "America/New_York", "Pacific/Auckland", "Asia/Kolkata", "UTC"):
        s = assert_json(put_settings(srv, {"timezone": tz}), 200)
        assert s["timezone"] == tz
        assert public(srv)["timezone"] == tz
