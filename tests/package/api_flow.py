"""The installed journal as its users see it, through the system's apache2 (make check-package).

  api_flow.py BASE_URL STATE_FILE first PASSWORD   log in, make a branch, a group and an API
                                                   key, write and read an entry on /api and
                                                   on /api/v1; keep the ids in STATE_FILE
  api_flow.py BASE_URL STATE_FILE again            after a reload: the session, the key and
                                                   both entries still work

Each check prints one line; the first failure ends the run with status 1.
"""

import json
import sys
import time

import requests

TIMEOUT = 30


def check(what, cond, detail=""):
    if not cond:
        print(f"not ok - {what} {detail}".rstrip())
        sys.exit(1)
    print(f"ok - {what}")


def expect(r, status, what):
    check(what, r.status_code == status, f"(HTTP {r.status_code}: {r.text[:300]})")
    return r.json()


def wait_healthy(base):
    """Health 200 with one running worker: httpd started the installed journal-worker."""
    deadline, last = time.monotonic() + TIMEOUT, None
    while time.monotonic() < deadline:
        try:
            r = requests.get(f"{base}/api/health", timeout=5)
            last = (r.status_code, r.text)
            if r.status_code == 200 and (r.json().get("ai") or {}).get("workers_running") == 1:
                return r.json()
        except requests.RequestException as e:
            last = str(e)
        time.sleep(0.3)
    check("GET /api/health: 200 with one worker running", False, f"(last: {last})")
    return None


def first(base, state_file, password):
    s = requests.Session()
    health = wait_healthy(base)
    check("health: SQLite database, schema migrated",
          health["database"] == "sqlite3" and health["schema_version"] >= 1, str(health))
    token = expect(s.post(f"{base}/api/auth/login", timeout=TIMEOUT,
                          json={"username": "admin", "password": password}),
                   200, "POST /api/auth/login as the admin journal-admin created")["token"]
    auth = {"X-Auth-Token": token}
    branch = expect(s.post(f"{base}/api/branches", headers=auth, json={"name": "North"},
                           timeout=TIMEOUT), 201, "POST /api/branches")
    group = expect(s.post(f"{base}/api/groups", headers=auth, timeout=TIMEOUT,
                          json={"name": "Maths 7A", "branch_id": branch["id"]}),
                   201, "POST /api/groups")
    key = expect(s.post(f"{base}/api/api-keys", headers=auth, timeout=TIMEOUT,
                        json={"name": "Package test", "scopes": ["read", "write"],
                              "branch_ids": [branch["id"]]}), 201, "POST /api/api-keys")["key"]
    entry = expect(s.post(f"{base}/api/entries", headers=auth, timeout=TIMEOUT,
                          json={"student_name": "Ada Admin", "group_id": group["id"],
                                "description": "written on /api"}), 201, "POST /api/entries")
    got = expect(s.get(f"{base}/api/entries/{entry['id']}", headers=auth, timeout=TIMEOUT),
                 200, "GET /api/entries/:id")
    check("the entry read on /api is the one written", got["student_name"] == "Ada Admin")
    v1 = expect(s.post(f"{base}/api/v1/entries", headers={"X-Api-Key": key}, timeout=TIMEOUT,
                       json={"student_name": "Ivo Integrator", "group_id": group["id"],
                             "description": "written on /api/v1"}),
                201, "POST /api/v1/entries with the API key")
    got = expect(s.get(f"{base}/api/v1/entries/{v1['id']}", headers={"X-Api-Key": key},
                       timeout=TIMEOUT), 200, "GET /api/v1/entries/:id")
    check("the entry read on /api/v1 is the one written", got["student_name"] == "Ivo Integrator")
    with open(state_file, "w") as f:
        json.dump({"token": token, "key": key, "entry": entry["id"], "v1": v1["id"]}, f)


def again(base, state_file):
    with open(state_file) as f:
        st = json.load(f)
    wait_healthy(base)
    got = expect(requests.get(f"{base}/api/entries/{st['v1']}", timeout=TIMEOUT,
                              headers={"X-Auth-Token": st["token"]}),
                 200, "after the reload: the session reads the /api/v1 entry on /api")
    check("after the reload: it is the same entry", got["student_name"] == "Ivo Integrator")
    got = expect(requests.get(f"{base}/api/v1/entries/{st['entry']}", timeout=TIMEOUT,
                              headers={"X-Api-Key": st["key"]}),
                 200, "after the reload: the key reads the /api entry on /api/v1")
    check("after the reload: it is the same entry", got["student_name"] == "Ada Admin")


def main():
    base, state_file, phase = sys.argv[1:4]
    if phase == "first":
        first(base, state_file, sys.argv[4])
    else:
        again(base, state_file)


if __name__ == "__main__":
    main()
