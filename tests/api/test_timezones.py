"""Day boundaries of the date filters of /api/entries in the configured time zone.

Entries get created_at = now, so every check is relative to the entry's own created_at: its
local date D in the zone (computed here with zoneinfo) must match date_from=date_to=D and not
the days around it. Each test runs on a fresh server, since it changes the time zone. DST day
lengths are unit-tested in C (tests/unit/test_time.c)."""

from datetime import date, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from harness import assert_json, uniq


def set_zone(srv, zone):
    s = assert_json(srv.api("PUT", "/api/settings", token=srv.admin_token,
                            json={"timezone": zone}), 200)
    assert s["timezone"] == zone
    assert assert_json(srv.api("GET", "/api/public-settings"), 200)["timezone"] == zone


def new_entry(srv, group_id):
    r = srv.api("POST", "/api/entries", token=srv.admin_token,
                json={"student_name": uniq("Tz"), "group_id": group_id, "description": "tz"})
    e = assert_json(r, 201)
    created = datetime.strptime(e["created_at"], "%Y-%m-%dT%H:%M:%SZ").replace(
        tzinfo=timezone.utc)
    return e, created


def matches(srv, group_id, entry_id, **params):
    r = srv.api("GET", "/api/entries", token=srv.admin_token,
                params={"group_id": group_id, **params})
    items = assert_json(r, 200)
    total = int(r.headers["X-Total-Count"])
    assert len(items) == total
    assert [e["id"] for e in items] in ([], [entry_id]), items
    return total == 1


def check_day(srv, group_id, entry_id, created, zone):
    """The entry is on its local day D in `zone` and on no other."""
    local = created.astimezone(ZoneInfo(zone)).date()
    d = local.isoformat()
    prev = (local - timedelta(days=1)).isoformat()
    nxt = (local + timedelta(days=1)).isoformat()
    where = f"{zone}: entry created {created.isoformat()} is on local day {d}"

    assert matches(srv, group_id, entry_id, date_from=d, date_to=d), where
    # date_to is inclusive of the whole local day: with and without an upper bound agree
    assert matches(srv, group_id, entry_id, date_from=d), where
    assert matches(srv, group_id, entry_id, date_to=d), where
    assert matches(srv, group_id, entry_id, date_from=prev, date_to=nxt), where
    assert not matches(srv, group_id, entry_id, date_from=prev, date_to=prev), where
    assert not matches(srv, group_id, entry_id, date_from=nxt, date_to=nxt), where
    assert not matches(srv, group_id, entry_id, date_to=prev), where
    assert not matches(srv, group_id, entry_id, date_from=nxt), where

    utc_day = created.date()
    if utc_day != local:
        # The filter uses the zone, not UTC: the UTC date does not find the entry.
        u = utc_day.isoformat()
        assert not matches(srv, group_id, entry_id, date_from=u, date_to=u), where
    return local != utc_day


@pytest.mark.parametrize("zone", ["Europe/Berlin", "America/New_York", "Pacific/Auckland",
                                  "UTC"])
def test_local_day_of_a_new_entry(fresh_server, zone):
    srv = fresh_server()
    set_zone(srv, zone)
    g = srv.create_group(srv.create_branch()["id"])
    e, created = new_entry(srv, g["id"])
    check_day(srv, g["id"], e["id"], created, zone)


def test_zone_where_the_local_date_differs_from_utc(fresh_server):
    """At every moment the local date differs from the UTC date in Pacific/Kiritimati
    (UTC+14; from 10:00 UTC) or in Pacific/Pago_Pago (UTC-11; before 11:00 UTC). The same
    entry is checked in several zones, so the zone alone decides its day."""
    srv = fresh_server()
    g = srv.create_group(srv.create_branch()["id"])
    e, created = new_entry(srv, g["id"])
    differing = []
    for zone in ("Pacific/Kiritimati", "Pacific/Pago_Pago", "Pacific/Auckland",
                 "America/New_York", "Europe/Berlin", "Asia/Kolkata", "UTC"):
        set_zone(srv, zone)
        if check_day(srv, g["id"], e["id"], created, zone):
            differing.append(zone)
    assert set(differing) & {"Pacific/Kiritimati", "Pacific/Pago_Pago"}, \
        f"no zone with a local date other than the UTC date for {created}"
    # Kiritimati and Pago_Pago are 25 hours apart: their local dates always differ, so one
    # of the two days finds the entry and the other does not.
    kir = created.astimezone(ZoneInfo("Pacific/Kiritimati")).date()
    pago = created.astimezone(ZoneInfo("Pacific/Pago_Pago")).date()
    assert kir != pago
    set_zone(srv, "Pacific/Kiritimati")
    assert matches(srv, g["id"], e["id"], date_from=kir.isoformat(), date_to=kir.isoformat())
    assert not matches(srv, g["id"], e["id"], date_from=pago.isoformat(),
                       date_to=pago.isoformat())
    set_zone(srv, "Pacific/Pago_Pago")
    assert matches(srv, g["id"], e["id"], date_from=pago.isoformat(), date_to=pago.isoformat())
    assert not matches(srv, g["id"], e["id"], date_from=kir.isoformat(),
                       date_to=kir.isoformat())


def test_bad_dates_are_400_in_any_zone(fresh_server):
    srv = fresh_server()
    set_zone(srv, "Pacific/Auckland")
    for params in ({"date_from": "2026-02-29"}, {"date_to": "2026-00-10"},
                   {"date_from": "20261101"}, {"date_to": "2026-11-1"}):
        r = srv.api("GET", "/api/entries", token=srv.admin_token, params=params)
        assert r.status_code == 400, r.text
        assert next(iter(params)) in r.json()["error"]
    # a leap day is a date
    r = srv.api("GET", "/api/entries", token=srv.admin_token, params={"date_from": "2028-02-29"})
    assert r.status_code == 200, r.text
    # the zone does not change the stored timestamps
    g = srv.create_group(srv.create_branch()["id"])
    e, created = new_entry(srv, g["id"])
    assert abs((datetime.now(timezone.utc) - created).total_seconds()) < 120
    assert e["created_at"].endswith("Z")
    assert date.fromisoformat(e["created_at"][:10]) == created.date()
